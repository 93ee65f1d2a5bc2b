// A WebAssembly module the engine will not compile (here WebAssembly.Module made to throw a CompileError for the
// kernels' module, as it would for a writer's bug): with codegen 'auto' every kernel of it runs on the
// JavaScript tier and mod.inspect says why; with codegen 'wasm' (forced) a launch fails with that reason, so
// that a test which compares the tiers cannot pass on the JavaScript tier twice.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, ptxBytes, unaryF32Kernel, upload } from './helpers.js'

const ptx = unaryF32Kernel('twice', 'add.f32 %f2, %f1, %f1;')

function withUncompilable<T>(run: () => T): T {
  const Original = WebAssembly.Module
  // only the kernels' module (the tier's probes are small, and compiled before)
  const Failing = function (bytes: BufferSource) {
    if ((bytes as Uint8Array).byteLength > 2000) throw new WebAssembly.CompileError('refused by this test')
    return new Original(bytes)
  } as unknown as typeof WebAssembly.Module
  ;(WebAssembly as { Module: typeof WebAssembly.Module }).Module = Failing
  try {
    return run()
  } finally {
    ;(WebAssembly as { Module: typeof WebAssembly.Module }).Module = Original
  }
}

const s = suite('a WebAssembly module that does not compile')

s('auto: the JavaScript tier, and the reason; wasm: the launch fails with it', () => {
  // (the probes and a first module, outside the failing constructor)
  const warm = createEmulatorBackend({ workers: 0 })
  warm.loadModule(ptxBytes(ptx)).inspect('twice')
  warm.dispose()
  const x = Float32Array.from({ length: 64 }, (_, i) => i - 7.5)
  for (const codegen of ['auto', 'wasm'] as const) {
    const be = createEmulatorBackend({ workers: 0, codegen })
    try {
      withUncompilable(() => {
        const mod = be.loadModule(ptxBytes(ptx))
        if (codegen === 'auto') assert.match(mod.inspect('twice'), /tier: JavaScript \(not WebAssembly: the WebAssembly module could not be compiled here \(.*refused by this test\)\)$/)
        const dx = upload(be, x), dy = upload(be, new Float32Array(64))
        const args = marshal([{ u64: dx }, { u64: dy }])
        if (codegen === 'auto') {
          assert.not.ok(launchOrFault(be, mod, 'twice', { grid: [2, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, args))
          assert.equal([...download(be, dy, new Float32Array(64))], [...x].map((v) => v * 2))
        } else {
          assert.throws(() => launchOrFault(be, mod, 'twice', { grid: [2, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, args),
            /kernel twice cannot run on the emulator: it has no WebAssembly lowering \(codegen: 'wasm'\): the WebAssembly module could not be compiled here \(.*refused by this test\)/)
        }
      })
    } finally {
      be.dispose()
    }
  }
})

s.run()
