// clang's switches on WebGPU: `brx.idx` through a `.branchtargets` list becomes a chain of compares and branches
// before translation (@kernelpack/ptx lowerIndirectBranches; WGSL has no indirect branch), so the kernel runs
// with the emulator's results; an index past the list traps (the emulator's brx.idx faults there too).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 o, .param .u32 n) {
  .reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [o]; ld.param.u32 %r7, [n]; mov.u32 %r1, %tid.x; rem.u32 %r2, %r1, %r7;
  $L_brx_0: .branchtargets $C0, $C1, $C2;
  brx.idx %r2, $L_brx_0;
$C0: mov.u32 %r3, 100; bra.uni $END;
$C2: mov.u32 %r3, 300; bra.uni $END;
$C1: mov.u32 %r3, 200;
$END: mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r3; ret; }`

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
