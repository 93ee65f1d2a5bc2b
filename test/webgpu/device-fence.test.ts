// __threadfence() on WebGPU (emit-collective.ts): a device-scope fence is a storageBarrier() where every
// invocation reaches it (the `if (tid == 0)` around it predicated, as around a barrier), in a kernel whose global
// accesses are all atomics. Checked on a hand-written single-pass reduction in the threadfence shape: each block
// stores its partial, fences, draws a ticket with atom.inc; the block with the last ticket fences again and
// sums the partials. The WGSL must pass WGSL's uniformity analysis (Dawn compiles it) and give the emulator's
// results, over several launches (the counter wraps back to 0 each time).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { decodeModule, parsePtx } from '@kernelpack/ptx'
import { translateModule } from '../../packages/webgpu/src/index.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

// partials[b] = sum of block b's 64 inputs (a shared-memory tree); total[0] = sum of the partials, written by
// the last block; total[1 + b] = the ticket block b drew
const PTX = `.version 8.0
.target sm_80
.address_size 64
.global .align 4 .u32 retired;
.visible .entry fence_sum(.param .u64 in, .param .u64 partials, .param .u64 total) {
  .reg .b64 %rd<16>; .reg .b32 %r<24>; .reg .pred %p<6>;
  .shared .align 4 .b32 sdata[64];
  .shared .align 4 .b32 amLast;
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [partials]; ld.param.u64 %rd3, [total];
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %nctaid.x;
  shl.b32 %r4, %r2, 6; add.u32 %r4, %r4, %r1;
  mul.wide.u32 %rd4, %r4, 4; add.s64 %rd5, %rd1, %rd4; ld.global.u32 %r5, [%rd5];
  mov.u32 %r6, sdata; shl.b32 %r7, %r1, 2; add.u32 %r8, %r6, %r7;
  st.shared.u32 [%r8], %r5;
  bar.sync 0;
  mov.u32 %r9, 32;
$TREE:
  setp.ge.u32 %p1, %r1, %r9;
  @%p1 bra $TREE_NEXT;
  shl.b32 %r10, %r9, 2; add.u32 %r11, %r8, %r10;
  ld.shared.u32 %r12, [%r11]; ld.shared.u32 %r13, [%r8]; add.u32 %r13, %r13, %r12; st.shared.u32 [%r8], %r13;
$TREE_NEXT:
  bar.sync 0;
  shr.u32 %r9, %r9, 1;
  setp.ne.u32 %p2, %r9, 0;
  @%p2 bra $TREE;
  setp.ne.u32 %p3, %r1, 0;
  @%p3 bra $JOIN;
  ld.shared.u32 %r14, [sdata];
  mul.wide.u32 %rd6, %r2, 4; add.s64 %rd7, %rd2, %rd6; st.global.u32 [%rd7], %r14;
  membar.gl;
  sub.u32 %r15, %r3, 1;
  atom.global.inc.u32 %r16, [retired], %r15;
  add.s64 %rd8, %rd3, %rd6; st.global.u32 [%rd8+4], %r16;
  setp.eq.u32 %p4, %r16, %r15; selp.u32 %r17, 1, 0, %p4; st.shared.u32 [amLast], %r17;
$JOIN:
  bar.sync 0;
  ld.shared.u32 %r18, [amLast];
  setp.eq.u32 %p5, %r18, 0;
  @%p5 bra $END;
  fence.acq_rel.gpu;
  @%p3 bra $END;
  mov.u32 %r19, 0; mov.u32 %r20, 0;
$SUM:
  mul.wide.u32 %rd9, %r20, 4; add.s64 %rd10, %rd2, %rd9; ld.global.cg.u32 %r21, [%rd10]; add.u32 %r19, %r19, %r21;
  add.u32 %r20, %r20, 1;
  setp.lt.u32 %p5, %r20, %r3;
  @%p5 bra $SUM;
  st.global.u32 [%rd3], %r19;
$END:
  ret;
}
`

const BLOCKS = 16

async function run(k: KernelRunner, input: Uint32Array): Promise<number[][]> {
  const inp = await k.upload(input)
  const partials = await k.alloc(4 * BLOCKS)
  const total = await k.alloc(4 * (BLOCKS + 1))
  const out: number[][] = []
  for (let launch = 0; launch < 3; launch++) {
    await k.launch('fence_sum', BLOCKS, 64, [inp, partials, total])
    out.push([...(await k.read(total, Uint32Array))])
  }
  return out
}

const s = await webgpuPageSuite('WebGPU: __threadfence() (membar.gl, fence.acq_rel.gpu) as a storage barrier')

s('the fences translate to storageBarrier, and the global accesses to atomics', () => {
  const m = translateModule(decodeModule(parsePtx(PTX)), { features: new Set<string>(), limits: { maxComputeInvocationsPerWorkgroup: 256 } }, PTX)
  assert.equal(m.refused.map((r) => r.reason), [])
  const wgsl = m.kernels.get('fence_sum')!.wgsl
  // two fences, and the barrier before amLast's read (whose sides both touch global memory)
  assert.ok((wgsl.match(/storageBarrier\(\);/g) ?? []).length >= 2, 'a storageBarrier for each fence')
  assert.match(wgsl, /var<storage, read_write> kp_mem: array<atomic<u32>>/)
})

s('a single-pass reduction: the last block sums every partial, launch after launch, as on the emulator', async (ctx) => {
  const input = Uint32Array.from({ length: 64 * BLOCKS }, (_, i) => (i * 2654435761) >>> 20)
  const want = input.reduce((a, b) => (a + b) >>> 0, 0)
  const g = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'fence (WebGPU)'), input)
  assert.equal(ctx.gpu!.refused.map((r) => r.reason), [], 'the kernel translates')
  const be = createEmulatorBackend({ workers: 0 })
  const e = await run(await KernelRunner.load(be, PTX, 'compute_80', 'fence (emulator)'), input)
  be.dispose()
  for (const [launch, r] of g.entries()) {
    assert.is(r[0], want, `launch ${launch}: the total`)
    assert.equal([...r.slice(1)].sort((a, b) => a - b), Array.from({ length: BLOCKS }, (_, i) => i), `launch ${launch}: every ticket drawn once`)
    assert.is(r[0], e[launch]![0], `launch ${launch}: the emulator's total`)
  }
})

s.run()
