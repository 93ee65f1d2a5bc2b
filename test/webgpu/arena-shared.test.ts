// Shared memory beyond the adapter's workgroup storage (packages/webgpu/src/emit-arena-shared.ts, arena-shared.ts):
// a block whose shared memory exceeds maxComputeWorkgroupStorageSize (32 KiB on SwiftShader, where CUDA gives
// up to 227 KiB) runs the kernel's variant with its shared memory in a slice of the arena per workgroup. Checked
// against the emulator and the kernels' own arithmetic on hand-written kernels: 40 KiB of static shared memory
// filled, read back reversed after a barrier and summed with a shared atomic; 40 KiB of dynamic shared memory
// read at its far end around `bar.red.popc` (__syncthreads_count), in a grid of 2 × 1000 blocks that runs as
// two dispatches reusing the slices. The translation: the variant comes with dynamic shared memory or static
// shared memory over the target's limit, and not otherwise; a WGSL image (build time) carries it.
import * as assert from 'uvu/assert'
import { decodeModule, parsePtx } from '@kernelpack/ptx'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { translateModule } from '../../packages/webgpu/src/index.js'
import { decodeWgslImage, encodeWgslImage } from '../../packages/webgpu/src/wgsl-image.js'
import { arenaColumns, ARENA_SHARED_BYTES, sliceWords } from '../../packages/webgpu/src/arena-shared.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

const WORDS = 10240

const PTX = `.version 8.0
.target sm_80
.address_size 64
// s[i] = in[i] * (ctaid + 1) + i for i strided over the block; after a barrier each thread sums s[WORDS-1-j] over
// its j; the partial sums go to out[ctaid * ntid + tid], their total (a shared atomic) to out[nctaid * ntid + ctaid]
.visible .entry big_static(.param .u64 out, .param .u64 in) {
  .reg .b64 %rd<10>; .reg .b32 %r<24>; .reg .pred %p<4>;
  .shared .align 4 .b32 s[${WORDS}];
  .shared .align 4 .b32 total;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r20, %nctaid.x;
  mov.u32 %r9, s;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $FILL0;
  st.shared.u32 [total], 0;
$FILL0:
  mov.u32 %r4, %r1;
$FILL:
  setp.ge.u32 %p2, %r4, ${WORDS};
  @%p2 bra $FILLED;
  mul.wide.u32 %rd3, %r4, 4; add.s64 %rd4, %rd2, %rd3; ld.global.u32 %r5, [%rd4];
  add.u32 %r6, %r3, 1; mad.lo.u32 %r7, %r5, %r6, %r4;
  shl.b32 %r8, %r4, 2; add.u32 %r10, %r9, %r8; st.shared.u32 [%r10], %r7;
  add.u32 %r4, %r4, %r2;
  bra.uni $FILL;
$FILLED:
  bar.sync 0;
  mov.u32 %r11, 0; mov.u32 %r4, %r1; mov.u32 %r12, ${WORDS - 1};
$SUM:
  setp.ge.u32 %p2, %r4, ${WORDS};
  @%p2 bra $SUMMED;
  sub.u32 %r13, %r12, %r4; shl.b32 %r13, %r13, 2; add.u32 %r13, %r9, %r13;
  ld.shared.u32 %r14, [%r13]; add.u32 %r11, %r11, %r14;
  add.u32 %r4, %r4, %r2;
  bra.uni $SUM;
$SUMMED:
  atom.shared.add.u32 %r15, [total], %r11;
  mad.lo.u32 %r16, %r3, %r2, %r1; mul.wide.u32 %rd5, %r16, 4; add.s64 %rd6, %rd1, %rd5; st.global.u32 [%rd6], %r11;
  bar.sync 0;
  @%p1 bra $END;
  ld.shared.u32 %r17, [total];
  mad.lo.u32 %r18, %r20, %r2, %r3; mul.wide.u32 %rd7, %r18, 4; add.s64 %rd8, %rd1, %rd7; st.global.u32 [%rd8], %r17;
$END:
  ret;
}

// v = ctaid.x * 1000 + ctaid.y * 7 + tid stored at dyn[nw - 1 - tid]; n = __syncthreads_count(v odd); out[(ctaid.y *
// nctaid.x + ctaid.x) * ntid + tid] = dyn[nw - 1 - (tid + 1) % ntid] + n
.visible .entry big_dynamic(.param .u64 out, .param .u32 nw) {
  .reg .b64 %rd<6>; .reg .b32 %r<24>; .reg .pred %p<4>;
  .extern .shared .align 4 .b32 dyn[];
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [nw];
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %ctaid.x; mov.u32 %r5, %ctaid.y; mov.u32 %r6, %nctaid.x;
  mad.lo.u32 %r7, %r4, 1000, %r2; mad.lo.u32 %r7, %r5, 7, %r7;
  sub.u32 %r8, %r1, 1; sub.u32 %r8, %r8, %r2; shl.b32 %r8, %r8, 2; mov.u32 %r9, dyn; add.u32 %r10, %r9, %r8;
  st.shared.u32 [%r10], %r7;
  and.b32 %r11, %r7, 1; setp.ne.u32 %p1, %r11, 0;
  bar.red.popc.u32 %r12, 0, %p1;
  add.u32 %r13, %r2, 1; rem.u32 %r13, %r13, %r3; sub.u32 %r14, %r1, 1; sub.u32 %r14, %r14, %r13; shl.b32 %r14, %r14, 2; add.u32 %r14, %r9, %r14;
  ld.shared.u32 %r15, [%r14];
  add.u32 %r15, %r15, %r12;
  mad.lo.u32 %r16, %r5, %r6, %r4; mad.lo.u32 %r16, %r16, %r3, %r2;
  mul.wide.u32 %rd2, %r16, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r15;
  ret;
}

// 1 KiB of static shared memory: no variant
.visible .entry small_static(.param .u64 out) {
  .reg .b64 %rd<4>; .reg .b32 %r<8>;
  .shared .align 4 .b32 t[256];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2; mov.u32 %r3, t; add.u32 %r3, %r3, %r2;
  st.shared.u32 [%r3], %r1;
  bar.sync 0;
  ld.shared.u32 %r4, [%r3];
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r4;
  ret;
}
`

const s = await webgpuPageSuite('WebGPU: shared memory beyond the workgroup storage, in the arena')

const translated = (limit: number) => translateModule(decodeModule(parsePtx(PTX), { perFunction: true }),
  { features: new Set(), limits: { maxComputeWorkgroupStorageSize: limit, maxComputeInvocationsPerWorkgroup: 256 } }, PTX)

s('the variant comes with dynamic shared memory and with static shared memory over the target\'s limit', () => {
  const m = translated(32768)
  const dyn = m.kernels.get('big_dynamic')!.sharedInArena
  assert.ok(dyn, 'dynamic shared memory: a variant')
  assert.equal(dyn.words, { fixed: 0, dynamic: true })
  assert.ok(m.kernels.get('big_static')!.sharedInArena, 'static 40 KiB over 32 KiB: a variant')
  assert.is(m.kernels.get('small_static')!.sharedInArena, undefined, '1 KiB: none')
  assert.is(translated(65536).kernels.get('big_static')!.sharedInArena, undefined, 'static 40 KiB within 64 KiB: none')
  const v = m.kernels.get('big_static')!.sharedInArena!
  // (s and total, the dynamic window's start rounded up to 16 bytes, as the emulator lays shared memory out)
  assert.equal(v.words, { fixed: Math.ceil((WORDS + 1) / 4) * 4, dynamic: false })
  assert.not.match(v.wgsl, /var<workgroup> kp_smem/, 'no workgroup array')
  assert.not.match(v.wgsl, /kp_smem/, 'every access rewritten')
  assert.match(m.kernels.get('big_static')!.wgsl, /var<workgroup> kp_smem/, 'the plain kernel keeps workgroup memory')
  // every workgroup barrier of the variant orders storage memory too; bar.red's count has one before it
  assert.is([...v.wgsl.matchAll(/workgroupBarrier\(\);/g)].length, [...v.wgsl.matchAll(/storageBarrier\(\); workgroupBarrier\(\);/g)].length)
  assert.match(m.kernels.get('big_dynamic')!.sharedInArena!.wgsl, /storageBarrier\(\);[^]*kp_block_count/)
})

s('WGSL translated at build time carries the variant: the image gives it back as it was written', () => {
  const m = translated(16384)
  const back = decodeWgslImage(encodeWgslImage(m), 'arena image')
  for (const name of ['big_static', 'big_dynamic']) {
    const v = m.kernels.get(name)!.sharedInArena!
    assert.ok(v, name)
    assert.equal(back.kernels.get(name)!.sharedInArena, v, name)
  }
  assert.is(back.kernels.get('small_static')!.sharedInArena, undefined)
  assert.equal(encodeWgslImage(back), encodeWgslImage(m), 'the same bytes again')
})

s('dispatch widths: as many columns as the slices\' bytes allow, at least one', () => {
  const v = { wgsl: '', entryPoint: 'kp_main', workgroupBytes: 0, workspaceAt: 16, words: { fixed: 4, dynamic: true } }
  assert.is(sliceWords(v, 40960), 4 + 10240)
  const per = (ARENA_SHARED_BYTES / 4) / (4 + 10240)
  assert.is(arenaColumns(v, [2, 1000, 1], 65535, 40960, false), Math.max(1, Math.floor(Math.floor(per) / 1000)))
  assert.is(arenaColumns(v, [5000, 1, 1], 65535, 40960, false), Math.floor(per))
  assert.is(arenaColumns(v, [5, 1, 1], 65535, 40960, false), 5)
  assert.is(arenaColumns(v, [70000, 1, 1], 65535, 40960, true), 65535, 'a launch in slices sizes them for its widest slice')
})

const N_STATIC = 64, B_STATIC = 5
const input = Uint32Array.from({ length: WORDS }, (_, i) => (Math.imul(i + 1, 2654435761) >>> 0) % 100003)

async function runStatic(k: KernelRunner): Promise<number[]> {
  const out = await k.alloc(4 * (B_STATIC * N_STATIC + B_STATIC))
  await k.launch('big_static', B_STATIC, N_STATIC, [out, await k.upload(input)])
  return [...(await k.read(out, Uint32Array))]
}

s(`40 KiB of static shared memory, ${B_STATIC} blocks: the emulator's results and the kernel's arithmetic`, async (ctx) => {
  const g = await runStatic(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'arena static (WebGPU)'))
  assert.equal(ctx.gpu!.refused, [], 'nothing refused')
  const be = createEmulatorBackend({ workers: 0 })
  const e = await runStatic(await KernelRunner.load(be, PTX, 'compute_80', 'arena static (emulator)'))
  be.dispose()
  const want: number[] = []
  const totals: number[] = []
  for (let b = 0; b < B_STATIC; b++) {
    let total = 0
    for (let t = 0; t < N_STATIC; t++) {
      let sum = 0
      for (let j = t; j < WORDS; j += N_STATIC) { const i = WORDS - 1 - j; sum = (sum + Math.imul(input[i]!, b + 1) + i) >>> 0 }
      want.push(sum)
      total = (total + sum) >>> 0
    }
    totals.push(total)
  }
  assert.equal(g, [...want, ...totals])
  assert.equal(e, g)
})

const GRID: [number, number, number] = [2, 1000, 1], N_DYN = 64, DYN_BYTES = 40960

async function runDynamic(k: KernelRunner): Promise<number[]> {
  const out = await k.alloc(4 * GRID[0] * GRID[1] * N_DYN)
  await k.launch('big_dynamic', GRID, N_DYN, [out, DYN_BYTES / 4], DYN_BYTES)
  return [...(await k.read(out, Uint32Array))]
}

s(`40 KiB of dynamic shared memory in ${GRID[0]}×${GRID[1]} blocks (two dispatches): the emulator's results and the kernel's arithmetic`, async (ctx) => {
  const g = await runDynamic(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'arena dynamic (WebGPU)'))
  const be = createEmulatorBackend({ workers: 0 })
  const e = await runDynamic(await KernelRunner.load(be, PTX, 'compute_80', 'arena dynamic (emulator)'))
  be.dispose()
  const want: number[] = []
  for (let by = 0; by < GRID[1]; by++) {
    for (let bx = 0; bx < GRID[0]; bx++) {
      const v = (t: number) => bx * 1000 + by * 7 + t
      let odd = 0
      for (let t = 0; t < N_DYN; t++) odd += v(t) & 1
      for (let t = 0; t < N_DYN; t++) want.push(v((t + 1) % N_DYN) + odd)
    }
  }
  assert.equal(g, want)
  assert.equal(e, g)
})

s('the same kernel with 8 KiB of dynamic shared memory stays in workgroup memory and agrees', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'arena dynamic small (WebGPU)')
  const out = await k.alloc(4 * 3 * N_DYN)
  await k.launch('big_dynamic', 3, N_DYN, [out, 2048], 8192)
  const got = [...(await k.read(out, Uint32Array))]
  const want = [0, 1, 2].flatMap((bx) => { const v = (t: number) => bx * 1000 + t; return Array.from({ length: N_DYN }, (_, t) => v((t + 1) % N_DYN) + N_DYN / 2) })
  assert.equal(got, want)
})

s.run()
