// shfl.sync's modes with register operands (kernel parameters, so the WebAssembly tier's general shuffle,
// not the one it folds for constants) on both emulator tiers, in thread loops and in the continuation scheme,
// against the PTX ISA's pseudo-code (test/fixtures/emulator/shfl-modes.ts; WebGPU runs the same cases).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { checkShflModes, shflModesPtx, SHFL_MODES } from '../fixtures/emulator/shfl-modes.js'

const s = suite('emulator: shfl.sync up/down/bfly/idx with register operands')
for (const [codegen, threadLoops] of [['wasm', true], ['js', true], ['js', false]] as const) {
  s(`${codegen} tier${threadLoops ? '' : ', continuation scheme'}`, async () => {
    const be = createEmulatorBackend({ codegen, threadLoops, workers: 0 })
    try {
      const k = await KernelRunner.load(be, shflModesPtx, 'compute_80', `shfl modes (${codegen}${threadLoops ? '' : ', continuation'})`)
      if (codegen === 'wasm') for (const m of SHFL_MODES) assert.is(k.tier(`shfl_${m}`), 'tier: WebAssembly')
      await checkShflModes(k)
    } finally {
      be.dispose()
    }
  })
}
s.run()
