// clang's switches on WebGPU: `brx.idx` through a `.branchtargets` list becomes a chain of compares and branches
// before translation (@kernelpack/ptx lowerIndirectBranches; WGSL has no indirect branch), so the kernel runs
// with the emulator's results; an index past the list traps (the emulator's brx.idx faults there too).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { brxSwitchKernel } from '../fixtures/emulator/brx-switch.js'

const PTX = `.version 8.0\n.target sm_80\n.address_size 64\n${brxSwitchKernel}`

const s = await webgpuPageSuite('WebGPU: brx.idx (clang\'s switch) as a compare chain')

s('every thread takes its case, as on the emulator', async (ctx) => {
  const run = async (k: KernelRunner) => {
    const out = await k.alloc(4 * 64)
    await k.launch('k', 1, 64, [out, 3])
    return [...(await k.read(out, Uint32Array))]
  }
  const g = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'brx (WebGPU)'))
  assert.equal(ctx.gpu!.refused.map((r) => r.reason), [], 'the kernel translates')
  const be = createEmulatorBackend({ workers: 0 })
  const e = await run(await KernelRunner.load(be, PTX, 'compute_80', 'brx (emulator)'))
  be.dispose()
  assert.equal(g, e)
  assert.equal(g.slice(0, 6), [100, 200, 300, 100, 200, 300])
})

s('an index past the list traps, at the brx.idx\'s PTX line', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'brx past the end (WebGPU)')
  const out = await k.alloc(4 * 64)
  const err = await k.launch('k', 1, 64, [out, 4]).then(() => k.read(out, Uint32Array)).then(() => undefined, (x: Error) => x)
  const line = PTX.split('\n').findIndex((l) => l.includes('brx.idx')) + 1
  assert.ok(err, 'the launch fails')
  assert.match(err!.message, new RegExp(`trap instruction executed \\(PTX line ${line}\\)`))
})

s.run()
