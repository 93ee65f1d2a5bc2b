// cg::this_grid().sync() on WebGPU (grid-sync.ts, emit-kernel.ts writePhases): a cooperative kernel runs as
// one dispatch per stretch between its grid syncs, and what lives across a sync is kept in a workspace. The
// kernel below is hand-written in the shape nvcc gives grid.sync() (the workspace check with its trap, a block
// barrier, the block's first thread adding to the workspace counter and spinning on it, a block barrier) and
// keeps across two syncs every kind of state: f32, u64 and predicate registers per thread, a block-uniform
// register, shared memory, local memory, global memory another block wrote, and threads that returned early
// (a branch to the kernel's `ret`, as nvcc writes `if (…) return;`) before the first sync. Its results are checked against the emulator and against what the kernel computes, in blocks of
// 64 threads and of 320 (more than SwiftShader's 256 invocations: two CUDA threads an invocation).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { translateModule } from '../../packages/webgpu/src/index.js'
import { decodeForTranslation } from '../../packages/webgpu/src/from-ptx.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

/** grid.sync() as nvcc writes it, with labels of its own (`k`) and the workspace address in %rd3. */
const gridSync = (k: string) => `
  setp.ne.s64 %p20, %rd3, 0;
  @%p20 bra $HAVE${k};
  trap;
$HAVE${k}:
  barrier.sync 0;
  setp.ne.u32 %p21, %r1, 0;
  @%p21 bra $SYNCED${k};
  add.s64 %rd20, %rd3, 4;
  setp.eq.u32 %p22, %r2, 0;
  sub.u32 %r30, -2147483647, %r4;
  selp.b32 %r31, %r30, 1, %p22;
  atom.add.release.gpu.u32 %r32, [%rd20], %r31;
$SPIN${k}:
  ld.acquire.gpu.u32 %r33, [%rd20];
  xor.b32 %r34, %r33, %r32;
  setp.gt.s32 %p23, %r34, -1;
  @%p23 bra $SPIN${k};
$SYNCED${k}:
  barrier.sync 0;`

// out[5 g + 0]  phase 1: bits of the f32 g / 2 computed in phase 0
// out[5 g + 1]  phase 1: low word of the u64 3 g + the block-uniform 7 × nblocks, both from phase 0
// out[5 g + 2]  phase 1: the shared word of thread (t + 1) % (ntid - 1) + the local word, both written in phase 0
// out[5 g + 3]  phase 1: part[(g + ntid) % total] (another block's phase-0 store) + the phase-0 predicate t < 5
// out[5 g + 4]  phase 2: part2[(g + 3 ntid) % total], written in phase 1
// The last thread of each odd block exits before the first sync: its five words stay 0.
const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry gsync(.param .u64 out, .param .u64 part, .param .u64 part2) {
  .reg .b64 %rd<32>; .reg .b32 %r<48>; .reg .f32 %f<4>; .reg .pred %p<32>;
  .shared .align 4 .b32 sh[512];
  .local .align 4 .b8 loc[16];
  ld.param.u64 %rd10, [out]; ld.param.u64 %rd11, [part]; ld.param.u64 %rd12, [part2];
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %nctaid.x;
  mov.u32 %r5, %envreg2; mov.u32 %r6, %envreg1;
  cvt.u64.u32 %rd1, %r5; cvt.u64.u32 %rd2, %r6; shl.b64 %rd2, %rd2, 32; or.b64 %rd3, %rd2, %rd1;
  mad.lo.u32 %r7, %r2, %r3, %r1;
  mul.lo.u32 %r24, %r3, %r4;
  and.b32 %r8, %r2, 1; sub.u32 %r9, %r3, 1;
  setp.eq.u32 %p1, %r8, 1; setp.eq.u32 %p2, %r1, %r9; and.pred %p3, %p1, %p2;
  @%p3 bra $DONE;
  cvt.rn.f32.u32 %f1, %r7; mul.f32 %f1, %f1, 0f3F000000;
  mul.wide.u32 %rd4, %r7, 3;
  setp.lt.u32 %p4, %r1, 5;
  mul.lo.u32 %r10, %r4, 7;
  shl.b32 %r11, %r7, 1; add.u32 %r11, %r11, 1;
  mov.u32 %r12, sh; shl.b32 %r13, %r1, 2; add.u32 %r14, %r12, %r13; st.shared.u32 [%r14], %r11;
  add.u32 %r15, %r7, 100; st.local.u32 [loc+4], %r15;
  mul.wide.u32 %rd5, %r7, 4; add.s64 %rd6, %rd11, %rd5; st.global.u32 [%rd6], %r7;
${gridSync('1')}
  mul.wide.u32 %rd7, %r7, 20; add.s64 %rd8, %rd10, %rd7;
  mov.b32 %r16, %f1; st.global.u32 [%rd8], %r16;
  cvt.u32.u64 %r17, %rd4; add.u32 %r17, %r17, %r10; st.global.u32 [%rd8+4], %r17;
  add.u32 %r18, %r1, 1; rem.u32 %r18, %r18, %r9; shl.b32 %r18, %r18, 2; add.u32 %r18, %r12, %r18; ld.shared.u32 %r19, [%r18];
  ld.local.u32 %r20, [loc+4]; add.u32 %r19, %r19, %r20; st.global.u32 [%rd8+8], %r19;
  add.u32 %r21, %r7, %r3; rem.u32 %r21, %r21, %r24; mul.wide.u32 %rd9, %r21, 4; add.s64 %rd9, %rd11, %rd9; ld.global.u32 %r22, [%rd9];
  selp.u32 %r23, 1, 0, %p4; add.u32 %r22, %r22, %r23; st.global.u32 [%rd8+12], %r22;
  mul.lo.u32 %r25, %r7, 5; add.s64 %rd13, %rd12, %rd5; st.global.u32 [%rd13], %r25;
${gridSync('2')}
  mul.lo.u32 %r26, %r3, 3; add.u32 %r26, %r26, %r7; rem.u32 %r26, %r26, %r24;
  mul.wide.u32 %rd14, %r26, 4; add.s64 %rd14, %rd12, %rd14; ld.global.u32 %r27, [%rd14];
  st.global.u32 [%rd8+16], %r27;
$DONE:
  ret;
}

// a grid sync inside a loop left by a branch before the sync (not past the branch that ends its body, which
// the launch reads between dispatches: grid-sync-loop.test.ts): refused by name
.visible .entry gsync_loop(.param .u64 out, .param .u32 n) {
  .reg .b64 %rd<32>; .reg .b32 %r<48>; .reg .pred %p<32>;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r4, %nctaid.x;
  mov.u32 %r5, %envreg2; mov.u32 %r6, %envreg1;
  cvt.u64.u32 %rd1, %r5; cvt.u64.u32 %rd2, %r6; shl.b64 %rd2, %rd2, 32; or.b64 %rd3, %rd2, %rd1;
  ld.param.u32 %r40, [n]; mov.u32 %r41, 0;
$LOOP:
  setp.ge.u32 %p31, %r41, %r40;
  @%p31 bra $OUT;
${gridSync('L')}
  add.u32 %r41, %r41, 1;
  bra.uni $LOOP;
$OUT:
  st.global.u32 [%rd3], %r41;
  ret;
}
`

const s = await webgpuPageSuite('WebGPU: grid-wide sync (cg::this_grid().sync()) as phases of a cooperative launch')

const BLOCKS = 6

async function run(k: KernelRunner, threads: number, timeoutMs?: number): Promise<number[]> {
  const total = BLOCKS * threads
  const out = await k.alloc(20 * total)
  const part = await k.alloc(4 * total)
  const part2 = await k.alloc(4 * total)
  await k.launch('gsync', BLOCKS, threads, [out, part, part2], 0, { cooperative: true, ...(timeoutMs ? { timeoutMs } : {}) })
  return [...(await k.read(out, Uint32Array))]
}

/** What the kernel computes (every thread of odd blocks' last exits first, so its partials stay 0 too). */
function expected(threads: number): number[] {
  const total = BLOCKS * threads
  const exited = (g: number) => Math.floor(g / threads) % 2 === 1 && g % threads === threads - 1
  const f32 = new Float32Array(1); const u32 = new Uint32Array(f32.buffer)
  const out: number[] = []
  for (let g = 0; g < total; g++) {
    if (exited(g)) { out.push(0, 0, 0, 0, 0); continue }
    const t = g % threads
    f32[0] = g / 2
    const n = (g - t) + ((t + 1) % (threads - 1))
    const other = (g + threads) % total
    const other2 = (g + 3 * threads) % total
    out.push(u32[0]!, (3 * g + 7 * BLOCKS) >>> 0, (2 * n + 1) + (g + 100), (exited(other) ? 0 : other) + (t < 5 ? 1 : 0), exited(other2) ? 0 : other2 * 5)
  }
  return out
}

for (const threads of [64, 320]) {
  s(`two grid syncs, ${BLOCKS} blocks of ${threads}: every kind of state kept, as on the emulator`, async (ctx) => {
    const g = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', `gsync ${threads} (WebGPU)`), threads)
    assert.equal(ctx.gpu!.refused.map((r) => r.kernel), ['gsync_loop'], 'the kernel translates (the loop is refused)')
    const be = createEmulatorBackend({ workers: 0 })
    const e = await run(await KernelRunner.load(be, PTX, 'compute_80', `gsync ${threads} (emulator)`), threads)
    be.dispose()
    const want = expected(threads)
    assert.equal(e, want, 'the emulator')
    assert.equal(g, want, 'WebGPU')
  })
}

s('with a timeoutMs (the launch runs in slices, phase after phase): the same results', async (ctx) => {
  const g = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'gsync sliced (WebGPU)'), 64, 60_000)
  assert.equal(g, expected(64))
})

s('three phases; a sync in a loop of another shape is refused by name; a launch that is not cooperative fails, saying why', async (ctx) => {
  // (decoded as the backend decodes PTX for translation: grid.sync()'s checks and early returns folded)
  const m = translateModule(decodeForTranslation(PTX, 'gsync').module, { features: new Set<string>(), limits: { maxComputeInvocationsPerWorkgroup: 256 } }, PTX)
  assert.is(m.kernels.get('gsync')!.gridSync?.phases, 3)
  assert.match(m.refused.find((r) => r.kernel === 'gsync_loop')?.reason ?? '', /^a grid-wide sync \(cg::this_grid\(\)\.sync\(\)\) in a branch or loop that is not a loop left only past the branch that ends its body/)
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'gsync (WebGPU, not cooperative)')
  const out = await k.alloc(20 * 64)
  const err = await k.launch('gsync', 1, 64, [out, out, out]).then(() => undefined, (x: Error) => x)
  assert.match(err?.message ?? 'no error', /synchronizes the whole grid \(cg::this_grid\(\)\.sync\(\)\), which only a cooperative launch provides/)
})

s.run()
