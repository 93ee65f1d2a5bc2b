// Two shortcuts of the emulator's WebAssembly tier (issue 24) where being fast must not cost exactness, checked
// against references computed here, not taken from either tier:
// 1. fma.rn.f32 is x·y + z in binary64 rounded once more to binary32, with the exact helper only where that
//    second rounding can go wrong (the binary64 sum lies on a binary32 midpoint, or the result is below the
//    normal range). The inputs are the cases that tell: products that are exact binary32 midpoints with a
//    tiny addend of either sign (rounding twice would land on the tie), ties that are real (addend 0),
//    results near and below the subnormal boundary, signed zeros, infinities and NaN, and random triples.
//    Each result is compared bit for bit with an exact BigInt evaluation, on both tiers.
// 2. The shared-memory loads of a straight-line run through one register at constant offsets are checked
//    once, as a hull; when the hull does not fit, the loads are checked one by one, so the fault names the
//    first load that is outside the window, with its address, as the JavaScript tier does.
// 3. cp.async (zero-filling past src-size) and match.any/.all in a thread loop: the JavaScript tier's bytes,
//    and the copies and masks checked by hand.
// 4. A rotated loop with barriers (branch ranges that cross as written) runs, laid out again, as thread loops
//    on the wasm tier, with the bytes of the continuation scheme and of a hand computation.
// 5. A recursive device function with a .local frame, called from a kernel on the wasm tier: the JS tier's
//    results (and a hand computation's), and the same call-stack overflow fault past the stack's end.
// 6. SIMD across threads in a barrier-free kernel (4 threads a step), against the JavaScript tier.
// 7. SIMD across threads in thread loops (the code between barriers, 4 threads a step): the exact fma (the
//    inputs of 1.) and the JavaScript tier's bytes over consecutive, shared, every-other-word and
//    parted-lane accesses in full and cut rows; a lane outside the shared window before and after the
//    loop's first store faults as the JavaScript tier's thread does.
// 9. div, rcp, sqrt (.rn, .approx, .full) and rsqrt.approx in 4-lane turns (f32x4.div/sqrt, rsqrt in f64x2):
//    the JavaScript tier's bits and the correctly rounded results, over zeros, subnormals, infinities, NaN,
//    negatives and random values.
// 8. fma.rn.f32/.f64 through relaxed SIMD's multiply-add where the start-up probe finds it fused (in a Node
//    started with relaxed SIMD on): every result the exact BigInt fma's, on both tiers.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, EmulatorFault, type EmulatorBackend } from '@kernelpack/emulator'
import { decodeModule, parsePtx, structureFunction } from '@kernelpack/ptx'
import { download, marshal, ptxBytes, upload } from './helpers.js'
import { FMA_PTX, bitsOf, exactFma32, fmaInputs, fromBits, rng } from './fma-cases.js'
import { relaxedMaddFused } from '../../packages/emulator/src/wasm/emit-wasm.js'

// Items 1-7 and 9 check the exact fma paths (binary64 rounded again, the exact helper where that can go wrong);
// the emulator would take relaxed SIMD's fused multiply-add where the probe finds it exact (item 8, in child
// processes), so this process keeps the exact paths
process.env.KERNELPACK_EMULATOR_RELAXED_SIMD = '0'


function tierLine(be: EmulatorBackend, ptx: string, kernel: string): string {
  const mod = be.loadModule(ptxBytes(ptx))
  try { return mod.inspect(kernel).split('\n').pop()! } finally { mod.unload() }
}

const fma = suite('wasm tier: fma.rn.f32 rounded once, on the inputs where rounding twice goes wrong')

fma('every result equals the exact BigInt fma, bit for bit, on the wasm tier and the JavaScript tier', () => {
  const cases = fmaInputs()
  assert.ok(cases.length > 900, `${cases.length} cases`)
  assert.equal(relaxedMaddFused(), { f32: false, f64: false }, 'this process runs the exact fma paths')
  // the reference itself: the midpoint case rounds up with +2^-80 and down with −2^-80; two-step rounding ties
  const mid = Math.fround(1 + 2 ** -12)
  assert.is(exactFma32(mid, mid, 2 ** -80), Math.fround(1 + 2 ** -11 + 2 ** -23))
  assert.is(exactFma32(mid, mid, -(2 ** -80)), Math.fround(1 + 2 ** -11))
  assert.is(Math.fround(mid * mid + 2 ** -80), Math.fround(1 + 2 ** -11), 'rounding twice loses the addend (the case the test needs)')
  const input = new Float32Array(cases.flat())
  for (const codegen of ['wasm', 'js'] as const) {
    const be = createEmulatorBackend({ codegen, workers: 0 })
    try {
      assert.is(tierLine(be, FMA_PTX, 'fma32'), codegen === 'wasm' ? '  tier: WebAssembly' : "  tier: JavaScript (not WebAssembly: codegen: 'js' was asked for)")
      const mod = be.loadModule(ptxBytes(FMA_PTX))
      const din = upload(be, input), dout = be.alloc(cases.length * 4)
      be.launch(mod.getFunction('fma32'), { grid: [Math.ceil(cases.length / 128), 1, 1], block: [128, 1, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { u32: cases.length }]))
      const got = download(be, dout, new Float32Array(cases.length))
      let wrong = 0
      const first: string[] = []
      cases.forEach(([x, y, z], i) => {
        const want = exactFma32(x, y, z)
        const ok = Number.isNaN(want) ? Number.isNaN(got[i]!) : bitsOf(got[i]!) === bitsOf(want)
        if (!ok && first.length < 5) first.push(`fma(${x}, ${y}, ${z}) = ${got[i]} (0x${bitsOf(got[i]!).toString(16)}), exact ${want} (0x${bitsOf(want).toString(16)})`)
        if (!ok) wrong++
      })
      assert.is(wrong, 0, `${codegen} tier: ${wrong} of ${cases.length} wrong:\n${first.join('\n')}`)
      mod.unload()
    } finally {
      be.dispose()
    }
  }
})

fma.run()

// --- 2. grouped shared-memory checks ---

// Each thread reads sm[k/4 + 0], [+2], [+4] and [+6] (words) through one register at offsets 0, 8, 16 and 24
// (a group of four checked once), and stores their sum; k (bytes) comes from the parameter.
const WINDOW_PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry window_run(.param .u64 p_out, .param .u32 p_k)
{
  .reg .b32 %r<12>;
  .reg .b64 %a<3>;
  .shared .align 4 .b8 sm[64];
  ld.param.u64 %a0, [p_out];
  ld.param.u32 %r1, [p_k];
  mov.u32 %r0, %tid.x;
  shl.b32 %r2, %r0, 2;
  mov.u32 %r3, sm;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r0;
  bar.sync 0;
  add.s32 %r5, %r3, %r1;
  ld.shared.u32 %r6, [%r5];
  ld.shared.u32 %r7, [%r5+8];
  add.s32 %r10, %r6, %r7;
  ld.shared.u32 %r8, [%r5+16];
  ld.shared.u32 %r9, [%r5+24];
  add.s32 %r10, %r10, %r8;
  add.s32 %r10, %r10, %r9;
  mul.wide.u32 %a1, %r0, 4;
  add.s64 %a2, %a0, %a1;
  st.global.u32 [%a2], %r10;
  ret;
}
`

type WindowRun = { sums?: Uint32Array; fault?: EmulatorFault }

async function runWindow(codegen: 'wasm' | 'js', k: number): Promise<WindowRun> {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    if (codegen === 'wasm') assert.is(tierLine(be, WINDOW_PTX, 'window_run'), '  tier: WebAssembly')
    const mod = be.loadModule(ptxBytes(WINDOW_PTX))
    const dout = be.alloc(16 * 4)
    try {
      await be.launch(mod.getFunction('window_run'), { grid: [1, 1, 1], block: [16, 1, 1], sharedBytes: 0 }, marshal([{ u64: dout }, { u32: k >>> 0 }]))
    } catch (e) {
      if (e instanceof EmulatorFault) return { fault: e }
      throw e
    }
    return { sums: download(be, dout, new Uint32Array(16)) }
  } finally {
    be.dispose()
  }
}

const win = suite('wasm tier: shared loads checked as a group fault where the JavaScript tier does')

win('in the window: the loads read what the threads stored', async () => {
  for (const k of [0, 4, 20]) {
    const wasm = await runWindow('wasm', k), js = await runWindow('js', k)
    assert.ok(wasm.sums && js.sums, `k=${k}: ${wasm.fault?.message ?? js.fault?.message}`)
    const w = k / 4
    assert.equal([...wasm.sums!], Array.from({ length: 16 }, () => 4 * w + 12), `k=${k}`)
    assert.equal(wasm.sums, js.sums)
  }
})

win('the first load outside the window faults, with its own instruction and address, on both tiers', async () => {
  // k = 36: [+0] and [+8] fit (36, 44 < 64), [+16] at 52 fits, [+24] at 60 fits: no fault; k = 44: [+24] at
  // 68 is the first outside; k = 52: [+16] at 68; k = 60: [+8] at 68; k = -4: [+0] wraps to 0xfffffffc;
  // k = 2: [+0] misaligned
  const cases: Array<{ k: number; offset: number | null }> = [{ k: 36, offset: null }, { k: 44, offset: 24 }, { k: 52, offset: 16 }, { k: 60, offset: 8 }, { k: -4, offset: 0 }, { k: 2, offset: 0 }]
  for (const { k, offset } of cases) {
    const wasm = await runWindow('wasm', k), js = await runWindow('js', k)
    if (offset === null) { assert.ok(wasm.sums && js.sums, `k=${k}`); assert.equal(wasm.sums, js.sums); continue }
    assert.ok(js.fault, `k=${k}: the JavaScript tier must fault`)
    assert.ok(wasm.fault, `k=${k}: the wasm tier must fault`)
    const want = offset === 0 ? '[%r5]' : `[%r5 + ${offset}]`
    assert.ok(js.fault!.instruction.includes(want), `k=${k}: ${js.fault!.instruction}`)
    assert.match(js.fault!.message, /^out-of-bounds or misaligned shared memory access in kernel window_run/)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.instruction, js.fault!.instruction)
    assert.is(wasm.fault!.address, js.fault!.address)
  }
})

win.run()

// --- 3. cp.async and match.sync on the wasm tier, against the JavaScript tier and by hand ---

// Each block copies 32 words from `in` to shared memory with cp.async (4 bytes a thread; threads with tid.x % 4
// == 3 give src-size 0, which zero-fills, and tid.x % 4 == 2 a 16-byte copy of which only the first 8 come
// from the source), then every lane asks match.any and match.all about in[tid] % 5 and stores the masks.
const ASYNC_MATCH_PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry async_match(.param .u64 p_in, .param .u64 p_out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<20>;
  .reg .b64 %a<6>;
  .shared .align 16 .b8 tile[512];
  ld.param.u64 %a0, [p_in];
  ld.param.u64 %a1, [p_out];
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %ctaid.x;
  shl.b32 %r2, %r1, 5;
  add.s32 %r3, %r2, %r0;
  mul.wide.u32 %a2, %r3, 4;
  add.s64 %a3, %a0, %a2;
  mov.u32 %r4, tile;
  shl.b32 %r5, %r0, 4;
  add.s32 %r6, %r4, %r5;
  and.b32 %r7, %r0, 3;
  setp.eq.u32 %p0, %r7, 3;
  selp.u32 %r8, 0, 4, %p0;
  setp.eq.u32 %p1, %r7, 2;
  @%p1 bra WIDE;
  cp.async.ca.shared.global [%r6], [%a3], 4, %r8;
  bra.uni DONE;
WIDE:
  and.b64 %a4, %a3, -16;
  cp.async.cg.shared.global [%r6], [%a4], 16, 8;
DONE:
  cp.async.commit_group;
  cp.async.wait_all;
  bar.sync 0;
  ld.shared.u32 %r9, [%r6];
  ld.shared.u32 %r10, [%r6+4];
  ld.shared.u32 %r11, [%r6+8];
  ld.shared.u32 %r12, [%r6+12];
  rem.u32 %r13, %r9, 5;
  match.any.sync.b32 %r14, %r13, -1;
  and.b32 %r15, %r9, 0;
  match.all.sync.b32 %r16|%p2, %r15, -1;
  match.all.sync.b32 %r17|%p3, %r13, -1;
  selp.u32 %r18, 1, 0, %p3;
  mul.wide.u32 %a5, %r3, 32;
  add.s64 %a5, %a1, %a5;
  st.global.v4.u32 [%a5], {%r9, %r10, %r11, %r12};
  st.global.v4.u32 [%a5+16], {%r14, %r16, %r17, %r18};
  ret;
}
`

const am = suite('wasm tier: cp.async and match.sync')

am('cp.async copies (zero-filling past src-size) and match.any/all give the JavaScript tier\'s bytes, on the wasm tier', async () => {
  const BLOCKS = 3
  const input = Uint32Array.from({ length: 32 * BLOCKS + 8 }, (_, i) => (i * 2654435761) >>> 7)
  const outs: Record<string, Uint32Array> = {}
  for (const codegen of ['wasm', 'js'] as const) {
    const be = createEmulatorBackend({ codegen, workers: 0 })
    try {
      if (codegen === 'wasm') assert.is(tierLine(be, ASYNC_MATCH_PTX, 'async_match'), '  tier: WebAssembly')
      const mod = be.loadModule(ptxBytes(ASYNC_MATCH_PTX))
      const din = upload(be, input), dout = be.alloc(32 * BLOCKS * 32)
      await be.launch(mod.getFunction('async_match'), { grid: [BLOCKS, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }]))
      outs[codegen] = download(be, dout, new Uint32Array(32 * BLOCKS * 8))
    } finally {
      be.dispose()
    }
  }
  assert.equal(outs.wasm, outs.js)
  // by hand, for block 1: the copied words and the match masks
  const o = outs.wasm!
  for (let t = 0; t < 32; t++) {
    const g = 32 + t, row = o.subarray(g * 8, g * 8 + 8)
    const m = t & 3
    const src = m === 2 ? ((g * 4) & ~15) / 4 : g
    // a 4-byte copy writes word 0 only (the rest of its 16 bytes of the tile is not compared)
    if (m === 3) assert.equal([...row.subarray(0, 4)], [0, 0, 0, 0], `thread ${t}: src-size 0 zero-fills`)
    else if (m === 2) assert.equal([...row.subarray(0, 4)], [input[src]!, input[src + 1]!, 0, 0], `thread ${t}: 8 of 16 bytes from the source`)
    else assert.is(row[0], input[g], `thread ${t}`)
    const mine = row[0]! % 5
    let any = 0
    for (let u = 0; u < 32; u++) {
      const r = o.subarray((32 + u) * 8, (32 + u) * 8 + 8)
      if (r[0]! % 5 === mine) any |= 1 << u
    }
    assert.is(row[4]! | 0, any, `match.any of thread ${t}`)
    assert.is(row[5]! | 0, -1, 'match.all of a value every lane shares: the member mask')
    const allSame = any === -1
    assert.is(row[6]! | 0, allSame ? -1 : 0, `match.all of thread ${t}`)
    assert.is(row[7], allSame ? 1 : 0)
  }
})

am.run()

// --- 4. control flow that nests only when laid out again ---

// clang's rotated loop: entered by a jump to its test in the middle, a barrier in the body. As written the
// branch ranges cross (the thread loops and the wasm tier need nesting flow); the emulator lays the blocks
// out again (@kernelpack/ptx relayoutFunction), so the kernel runs as thread loops on the wasm tier, with
// the bytes the continuation scheme gives for the written order.
const ROTATED_PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry rotated(.param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %a<3>;
  .shared .align 4 .b8 acc[128];
  ld.param.u64 %a0, [p_out];
  ld.param.u32 %r9, [p_n];
  mov.u32 %r0, %tid.x;
  mov.u32 %r3, acc;
  shl.b32 %r4, %r0, 2;
  add.s32 %r5, %r3, %r4;
  st.shared.u32 [%r5], %r0;
  mov.u32 %r1, 0;
  bra.uni HEAD;
LATCH:
  bar.sync 0;
  xor.b32 %r6, %r0, %r1;
  and.b32 %r6, %r6, 31;
  shl.b32 %r7, %r6, 2;
  add.s32 %r8, %r3, %r7;
  ld.shared.u32 %r10, [%r8];
  bar.sync 0;
  add.s32 %r10, %r10, %r1;
  st.shared.u32 [%r5], %r10;
  add.s32 %r1, %r1, 1;
HEAD:
  setp.lt.u32 %p0, %r1, %r9;
  @%p0 bra LATCH;
  bar.sync 0;
  ld.shared.u32 %r11, [%r5];
  mul.wide.u32 %a1, %r0, 4;
  add.s64 %a2, %a0, %a1;
  st.global.u32 [%a2], %r11;
  ret;
}
`

const rl = suite('relaid-out control flow')

rl('a rotated loop with barriers runs as thread loops on the wasm tier, with the continuation scheme\'s bytes', async () => {
  const run = async (opts: Parameters<typeof createEmulatorBackend>[0]) => {
    const be = createEmulatorBackend({ workers: 0, ...opts })
    try {
      const mod = be.loadModule(ptxBytes(ROTATED_PTX))
      const inspect = mod.inspect('rotated')
      const dout = be.alloc(32 * 4)
      await be.launch(mod.getFunction('rotated'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: dout }, { u32: 7 }]))
      return { out: download(be, dout, new Uint32Array(32)), inspect }
    } finally {
      be.dispose()
    }
  }
  const written = decodeModule(parsePtx(ROTATED_PTX)).functions[0]!
  assert.is(structureFunction(written).kind, 'fallback', 'the written order must not nest for this test to mean anything')
  const wasm = await run({ codegen: 'auto' })
  const cont = await run({ codegen: 'js', threadLoops: false })
  assert.ok(wasm.inspect.endsWith('  tier: WebAssembly'), wasm.inspect)
  assert.equal(wasm.out, cont.out)
  // by hand: each trip every lane reads the value of lane (tid ^ trip) & 31 and adds the trip
  let v = Array.from({ length: 32 }, (_, i) => i)
  for (let t = 0; t < 7; t++) v = v.map((_, i) => (v[(i ^ t) & 31]! + t) >>> 0)
  assert.equal([...wasm.out], v)
})

rl.run()

// --- 5. device-function calls ---

const CALLS_PTX = `.version 8.0
.target sm_80
.address_size 64

.func (.param .b32 ret) tri(.param .b32 n)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .local .align 4 .b8 depot[8];
  ld.param.u32 %r1, [n];
  st.local.u32 [depot], %r1;
  setp.eq.u32 %p, %r1, 0;
  @%p bra DONE;
  sub.s32 %r2, %r1, 1;
  { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0], %r2; call.uni (retval0), tri, (param0); ld.param.b32 %r3, [retval0]; }
  ld.local.u32 %r1, [depot];
  add.s32 %r1, %r1, %r3;
DONE:
  st.param.b32 [ret], %r1;
  ret;
}

.visible .entry calls(.param .u64 p_out, .param .u32 p_depth, .param .u32 p_base)
{
  .reg .b32 %r<6>;
  .reg .b64 %a<3>;
  ld.param.u64 %a0, [p_out];
  ld.param.u32 %r3, [p_depth];
  mov.u32 %r0, %tid.x;
  rem.u32 %r1, %r0, %r3;
  ld.param.u32 %r4, [p_base];
  add.s32 %r1, %r1, %r4;
  { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0], %r1; call.uni (retval0), tri, (param0); ld.param.b32 %r2, [retval0]; }
  mul.wide.u32 %a1, %r0, 4;
  add.s64 %a2, %a0, %a1;
  st.global.u32 [%a2], %r2;
  ret;
}
`

const dc = suite('wasm tier: device-function calls')

dc('a recursive device function with its own .local frame: the JS tier\'s results, and the same call-stack fault', async () => {
  const run = async (codegen: 'wasm' | 'js', depth: number, base = 0) => {
    const be = createEmulatorBackend({ codegen, workers: 0 })
    try {
      if (codegen === 'wasm') assert.is(tierLine(be, CALLS_PTX, 'calls'), '  tier: WebAssembly')
      const mod = be.loadModule(ptxBytes(CALLS_PTX))
      const dout = be.alloc(64 * 4)
      try {
        await be.launch(mod.getFunction('calls'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: dout }, { u32: depth }, { u32: base }]))
      } catch (e) { return { fault: e as Error } }
      return { out: download(be, dout, new Uint32Array(64)) }
    } finally {
      be.dispose()
    }
  }
  const wasm = await run('wasm', 20), js = await run('js', 20)
  assert.ok(wasm.out && js.out, `${wasm.fault?.message ?? wasm.fault} / ${js.fault?.message ?? js.fault}`)
  assert.equal([...wasm.out!], Array.from({ length: 64 }, (_, t) => ((t % 20) * ((t % 20) + 1)) / 2), 'each thread gets tri(tid % 20), through its own frames')
  assert.equal(wasm.out, js.out)
  // past the call stack: the same fault on both tiers
  const deepW = await run('wasm', 20, 1 << 20), deepJ = await run('js', 20, 1 << 20)
  assert.ok(deepJ.fault instanceof EmulatorFault, String(deepJ.fault))
  assert.match(deepJ.fault!.message, /call stack overflow/)
  assert.ok(deepW.fault instanceof EmulatorFault, String(deepW.fault))
  assert.is(deepW.fault!.message, deepJ.fault!.message)
})

dc.run()

// --- 6. SIMD across threads ---

// Barrier-free kernels whose threads run 4 at a time as f32x4/i32x4 (emit-wasm.ts vectorGroup): each the
// JavaScript tier's bytes on launches whose groups all agree, whose last group is cut by n, whose rows end
// inside a group (ntid.x not a multiple of 4), and whose lanes part at a per-thread branch before any store
// (the group runs again one thread at a time). mod.inspect says when a kernel has the 4-lane path.
const SIMD_PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry saxpyish(.param .u64 p_x, .param .u64 p_y, .param .u64 p_out, .param .f32 p_a, .param .u32 p_n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .f32 %f<12>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  ld.param.u64 %rd3, [p_out];
  ld.param.f32 %f1, [p_a];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.s32 %rd5, %r5, 4;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  cvta.to.global.u64 %rd7, %rd2;
  add.s64 %rd8, %rd7, %rd5;
  ld.global.u32 %r6, [%rd8];
  fma.rn.f32 %f3, %f1, %f2, 0f3F000000;
  cvt.rn.f32.s32 %f4, %r6;
  mul.f32 %f5, %f3, %f4;
  sub.f32 %f6, %f5, %f2;
  setp.lt.f32 %p2, %f6, 0f00000000;
  neg.f32 %f7, %f6;
  selp.f32 %f8, %f7, %f6, %p2;
  setp.ne.f32 %p3, %f2, %f2;
  @%p3 mov.f32 %f8, 0f7FC00000;
  shl.b32 %r7, %r6, 3;
  shr.s32 %r8, %r7, 1;
  xor.b32 %r9, %r8, %r5;
  cvt.rzi.s32.f32 %r10, %f8;
  add.s32 %r11, %r9, %r10;
  cvta.to.global.u64 %rd9, %rd3;
  add.s64 %rd10, %rd9, %rd5;
  st.global.f32 [%rd10], %f8;
  add.s64 %rd11, %rd10, 16384;
  st.global.u32 [%rd11], %r11;
DONE:
  ret;
}

.visible .entry parted(.param .u64 p_x, .param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  mul.wide.u32 %rd4, %r5, 4;
  add.s64 %rd5, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  setp.gt.f32 %p2, %f1, 0f41200000;
  @%p2 bra BIG;
  mul.f32 %f2, %f1, 0f40000000;
  bra.uni OUT;
BIG:
  add.f32 %f2, %f1, 0f3F800000;
OUT:
  cvta.to.global.u64 %rd6, %rd2;
  add.s64 %rd7, %rd6, %rd4;
  st.global.f32 [%rd7], %f2;
DONE:
  ret;
}
`

const simd = suite('wasm tier: SIMD across threads')

simd('4-lane kernels give the JavaScript tier\'s bytes: whole groups, a cut last group, rows that end inside a group, lanes that part', async () => {
  const r = rng(7)
  const N = 4096
  const x = Float32Array.from({ length: N }, (_, i) => (i % 97 === 5 ? NaN : (r() - 0.4) * 30))
  const y = Int32Array.from({ length: N }, () => Math.floor((r() - 0.5) * 2e6))
  const runs: Array<{ kernel: string; block: number; n: number }> = [
    { kernel: 'saxpyish', block: 256, n: N }, { kernel: 'saxpyish', block: 256, n: N - 3 }, { kernel: 'saxpyish', block: 30, n: 3001 },
    { kernel: 'parted', block: 128, n: N }, { kernel: 'parted', block: 36, n: N - 1 },
  ]
  for (const run of runs) {
    const outs: Record<string, Uint8Array> = {}
    for (const codegen of ['wasm', 'js'] as const) {
      const be = createEmulatorBackend({ codegen, workers: 0 })
      try {
        const mod = be.loadModule(ptxBytes(SIMD_PTX))
        if (codegen === 'wasm') assert.ok(mod.inspect(run.kernel).includes('\n  SIMD across threads: 4 consecutive threads'), `${run.kernel} must get the 4-lane path:\n${mod.inspect(run.kernel)}`)
        const dx = upload(be, x), dy = upload(be, y), dout = be.alloc(2 * 16384 + 16)
        be.memset(dout, 0, 2 * 16384 + 16)
        const grid: [number, number, number] = [Math.ceil(run.n / run.block), 1, 1]
        const args = run.kernel === 'saxpyish' ? [{ u64: dx }, { u64: dy }, { u64: dout }, { f32: 1.75 }, { u32: run.n }] : [{ u64: dx }, { u64: dout }, { u32: run.n }]
        await be.launch(mod.getFunction(run.kernel), { grid, block: [run.block, 1, 1], sharedBytes: 0 }, marshal(args as never))
        outs[codegen] = download(be, dout, new Uint8Array(2 * 16384 + 16))
      } finally {
        be.dispose()
      }
    }
    // NaNs may differ in payload only (the JS tier's numbers drop it); every other byte the same
    const w = new Float32Array(outs.wasm!.buffer), j = new Float32Array(outs.js!.buffer)
    const wi = new Uint32Array(outs.wasm!.buffer), ji = new Uint32Array(outs.js!.buffer)
    let diff = -1
    for (let i = 0; i < wi.length; i++) if (wi[i] !== ji[i] && !(i < 4096 && Number.isNaN(w[i]!) && Number.isNaN(j[i]!))) { diff = i; break }
    assert.is(diff, -1, `${run.kernel} block ${run.block} n ${run.n}: word ${diff} is 0x${wi[diff]?.toString(16)} on wasm, 0x${ji[diff]?.toString(16)} on JS`)
    assert.ok(ji.some((v) => v !== 0), 'the kernel wrote something')
  }
})

simd('a kernel with an instruction without a 4-lane form keeps its scalar loop (and says nothing of SIMD)', async () => {
  const mul = 'mul.f32 %f2, %f1, 0f40000000;'
  assert.ok(SIMD_PTX.includes(mul))
  // div.rz.f32 (a directed rounding) has no 4-lane form
  for (const [what, line, first] of [['div.rz.f32', 'div.rz.f32 %f2, %f1, 0f40000000;', -2.25]] as const) {
    const ptx = SIMD_PTX.replace(mul, line)
    const outs: Float32Array[] = []
    for (const codegen of ['wasm', 'js'] as const) {
      const be = createEmulatorBackend({ codegen, workers: 0 })
      try {
        const mod = be.loadModule(ptxBytes(ptx))
        if (codegen === 'wasm') {
          assert.ok(!mod.inspect('parted').includes('SIMD'), `${what}: ${mod.inspect('parted')}`)
          assert.ok(mod.inspect('parted').endsWith('  tier: WebAssembly'))
          assert.ok(mod.inspect('saxpyish').includes('SIMD across threads'), 'the module\'s other kernel keeps its 4-lane path')
        }
        const x = Float32Array.from({ length: 256 }, (_, i) => (i % 23) - 4.5)
        const dx = upload(be, x), dout = be.alloc(256 * 4)
        await be.launch(mod.getFunction('parted'), { grid: [2, 1, 1], block: [128, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dout }, { u32: 256 }]))
        outs.push(download(be, dout, new Float32Array(256)))
      } finally {
        be.dispose()
      }
    }
    assert.equal(outs[0], outs[1], what)
    assert.is(outs[1]![0], first, `${what}: x = -4.5`)
  }
})

simd('where the engine has no SIMD the module has no 4-lane path and still validates; here it has SIMD', async () => {
  const { writeWasmModule, wasmSimdSupported } = await import('../../packages/emulator/src/wasm/emit-wasm.js')
  const { layoutFrame } = await import('../../packages/emulator/src/frame.js')
  assert.is(wasmSimdSupported(), true, 'Node 20 compiles 128-bit SIMD')
  const fns = decodeModule(parsePtx(SIMD_PTX)).functions
  const inputs = fns.map((fn) => ({ fn, frame: layoutFrame(fn), rowBase: 0, suspends: false }))
  const layout = { globals: new Map<string, number>(), shared: new Map<string, number>(), sharedStatic: 0 }
  const withSimd = writeWasmModule(inputs, layout as never, false, true)
  const without = writeWasmModule(inputs, layout as never, false, false)
  assert.equal([...withSimd.simd.keys()].sort(), ['parted', 'saxpyish'])
  assert.is(without.simd.size, 0)
  assert.equal([...without.kernels.keys()].sort(), ['parted', 'saxpyish'], 'both kernels still lower, one thread at a time')
  assert.ok(WebAssembly.validate(without.bytes as Uint8Array<ArrayBuffer>))
  assert.ok(WebAssembly.validate(withSimd.bytes as Uint8Array<ArrayBuffer>))
  assert.ok(without.bytes.length < withSimd.bytes.length)
})

simd.run()

// --- 7. SIMD across threads in thread loops ---

// Each thread of a block (t = tid.y·ntid.x + tid.x) puts the triple in[3g … 3g+2] (g = ctaid.x·NT + t) into
// shared xs[t], ys[t], zs[t]; after the barrier (the loop that runs 4 threads a step) it computes
// r = fma(xs[t + k], ys[t], zs[t]) (consecutive words), and, unless tid.x < skip (lanes that part), then
// r = fma(xs[0], ys[2·tid.x], r) (one word for all lanes, and every other word); it stores r to os[t]
// (consecutive); then, unless tid.x < skip2 (lanes that part after a store: each such lane runs the body on
// its own), r += ys[t + k2]; it stores r to ws[2t + w] (every other word); after a second barrier each thread
// copies os[t] and ws[2t + w] out. k ≠ 0 moves the first load, past the window (1536 bytes, the five arrays) for the threads
// whose t + k ≥ 384; w ≠ 0 moves the second store (after the first), past it where 2t + w ≥ 128. Five arrays, not one: accesses to one object at distances that differ from lane to lane
// would be lockstep points (@kernelpack/ptx lockstep.ts), run a warp at a time, not in 4-lane turns.
const LOOP_SIMD_PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry tile_fma(.param .u64 p_in, .param .u64 p_out, .param .u32 p_k, .param .u32 p_skip, .param .u32 p_w, .param .u32 p_skip2, .param .u32 p_k2)
{
  .reg .pred %p<4>;
  .reg .b32 %r<40>;
  .reg .f32 %f<16>;
  .reg .b64 %rd<10>;
  .shared .align 16 .b8 xs[256];
  .shared .align 16 .b8 ys[256];
  .shared .align 16 .b8 zs[256];
  .shared .align 16 .b8 os[256];
  .shared .align 16 .b8 ws[512];
  ld.param.u64 %rd1, [p_in];
  ld.param.u64 %rd2, [p_out];
  ld.param.u32 %r1, [p_k];
  ld.param.u32 %r2, [p_skip];
  ld.param.u32 %r30, [p_w];
  ld.param.u32 %r32, [p_skip2];
  ld.param.u32 %r33, [p_k2];
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %tid.y;
  mov.u32 %r5, %ntid.x;
  mad.lo.s32 %r6, %r4, %r5, %r3;
  mov.u32 %r7, %ntid.y;
  mul.lo.s32 %r8, %r5, %r7;
  mov.u32 %r9, %ctaid.x;
  mad.lo.s32 %r10, %r9, %r8, %r6;
  mul.wide.u32 %rd3, %r10, 12;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  ld.global.f32 %f2, [%rd4+4];
  ld.global.f32 %f3, [%rd4+8];
  shl.b32 %r12, %r6, 2;
  mov.u32 %r20, xs;
  add.s32 %r13, %r20, %r12;
  mov.u32 %r21, ys;
  add.s32 %r22, %r21, %r12;
  mov.u32 %r23, zs;
  add.s32 %r24, %r23, %r12;
  st.shared.f32 [%r13], %f1;
  st.shared.f32 [%r22], %f2;
  st.shared.f32 [%r24], %f3;
  bar.sync 0;
  shl.b32 %r14, %r1, 2;
  add.s32 %r15, %r13, %r14;
  ld.shared.f32 %f4, [%r15];
  ld.shared.f32 %f5, [%r22];
  ld.shared.f32 %f6, [%r24];
  fma.rn.f32 %f7, %f4, %f5, %f6;
  setp.lt.u32 %p1, %r3, %r2;
  @%p1 bra SKIP;
  ld.shared.f32 %f8, [xs];
  shl.b32 %r16, %r3, 3;
  add.s32 %r17, %r21, %r16;
  ld.shared.f32 %f9, [%r17];
  fma.rn.f32 %f7, %f8, %f9, %f7;
SKIP:
  mov.u32 %r25, os;
  add.s32 %r26, %r25, %r12;
  st.shared.f32 [%r26], %f7;
  setp.lt.u32 %p2, %r3, %r32;
  @%p2 bra SKIP2;
  shl.b32 %r34, %r33, 2;
  add.s32 %r35, %r22, %r34;
  ld.shared.f32 %f12, [%r35];
  add.f32 %f7, %f7, %f12;
SKIP2:
  shl.b32 %r18, %r6, 3;
  shl.b32 %r31, %r30, 2;
  add.s32 %r28, %r18, %r31;
  mov.u32 %r27, ws;
  add.s32 %r19, %r27, %r28;
  st.shared.f32 [%r19], %f7;
  bar.sync 0;
  ld.shared.f32 %f10, [%r26];
  ld.shared.f32 %f11, [%r19];
  mul.wide.u32 %rd5, %r10, 8;
  add.s64 %rd6, %rd2, %rd5;
  st.global.f32 [%rd6], %f10;
  st.global.f32 [%rd6+4], %f11;
  ret;
}
`

type LoopRun = { out?: Float32Array; fault?: EmulatorFault; inspect: string }

async function runLoopSimd(codegen: 'wasm' | 'js', input: Float32Array, block: [number, number, number], blocks: number, k: number, skip: number, w = 0, skip2 = 0, k2 = 0): Promise<LoopRun> {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(LOOP_SIMD_PTX))
    const inspect = mod.inspect('tile_fma')
    const n = blocks * block[0] * block[1]
    const din = upload(be, input), dout = be.alloc(n * 8)
    try {
      await be.launch(mod.getFunction('tile_fma'), { grid: [blocks, 1, 1], block, sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { u32: k >>> 0 }, { u32: skip }, { u32: w }, { u32: skip2 }, { u32: k2 }]))
    } catch (e) {
      if (e instanceof EmulatorFault) return { fault: e, inspect }
      throw e
    }
    return { out: download(be, dout, new Float32Array(n * 2)), inspect }
  } finally {
    be.dispose()
  }
}

const loops = suite('wasm tier: SIMD across threads in thread loops')

loops('4-lane turns give the exact fma and the JavaScript tier\'s bytes: full and cut rows, lanes that part, every access shape', async () => {
  const triples = fmaInputs()
  const same = (a: number, b: number) => (Number.isNaN(a) ? Number.isNaN(b) : bitsOf(a) === bitsOf(b))
  for (const [block, skip, skip2] of [[[16, 2, 1], 0, 0], [[16, 2, 1], 3, 6], [[10, 3, 1], 5, 2], [[6, 2, 1], 0, 5], [[32, 2, 1], 16, 16]] as Array<[[number, number, number], number, number]>) {
    const NT = block[0] * block[1]
    const blocks = Math.floor(Math.min(triples.length, 960) / NT)
    const n = blocks * NT
    const input = new Float32Array(triples.slice(0, n).flat())
    const wasm = await runLoopSimd('wasm', input, block, blocks, 0, skip, 0, skip2), js = await runLoopSimd('js', input, block, blocks, 0, skip, 0, skip2)
    assert.match(wasm.inspect, /\n {2}SIMD across threads: 4 consecutive threads of a row a step \(f32x4\/i32x4\) in (one|\d+) of its thread loops/)
    assert.ok(wasm.out && js.out, `block ${block}: ${wasm.fault?.message ?? js.fault?.message}`)
    // the exact reference, thread by thread
    let wrong = 0
    const first: string[] = []
    for (let g = 0; g < n; g++) {
      const b = Math.floor(g / NT), t = g % NT, tx = t % block[0]
      const [x, y, z] = triples[g]!
      let r = exactFma32(x, y, z)
      // xs[0] and ys[2·tid.x] (2·tid.x < NT in every shape here)
      if (tx >= skip) r = exactFma32(triples[b * NT]![0], triples[b * NT + 2 * tx]![1], r)
      const r2 = tx >= skip2 ? Math.fround(r + triples[g]![1]) : r
      for (const [side, got, want] of [['os', wasm.out![2 * g]!, r], ['ws', wasm.out![2 * g + 1]!, r2]] as const) {
        if (!same(got, want)) { wrong++; if (first.length < 4) first.push(`block ${block} skip ${skip} skip2 ${skip2}, thread ${g} ${side}: ${got}, exact ${want}`) }
      }
    }
    const wi = new Uint32Array(wasm.out!.buffer), ji = new Uint32Array(js.out!.buffer)
    let diff = -1
    for (let i = 0; i < wi.length; i++) if (wi[i] !== ji[i] && !(Number.isNaN(wasm.out![i]!) && Number.isNaN(js.out![i]!))) { diff = i; break }
    assert.is(diff, -1, `block ${block} skip ${skip}: word ${diff} is 0x${wi[diff]?.toString(16)} on wasm, 0x${ji[diff]?.toString(16)} on JS`)
    assert.is(wrong, 0, `${wrong} results differ from the exact fma:\n${first.join('\n')}`)
  }
})

const DIVSQRT_PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry dq(.param .u64 px, .param .u64 py, .param .u64 po)
{
  .reg .b64 %rd<10>; .reg .b32 %r<8>; .reg .f32 %f<12>;
  .shared .align 4 .f32 sh[256];
  ld.param.u64 %rd1, [px]; ld.param.u64 %rd2, [py]; ld.param.u64 %rd3, [po];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mad.lo.s32 %r4, %r2, %r3, %r1;
  mul.wide.s32 %rd4, %r4, 4; add.s64 %rd5, %rd1, %rd4; ld.global.f32 %f1, [%rd5];
  add.s64 %rd6, %rd2, %rd4; ld.global.f32 %f2, [%rd6];
  shl.b32 %r5, %r1, 2; mov.u32 %r6, sh; add.s32 %r7, %r6, %r5; st.shared.f32 [%r7], %f1;
  bar.sync 0;
  ld.shared.f32 %f3, [%r7];
  div.rn.f32 %f4, %f3, %f2; div.approx.f32 %f5, %f3, %f2; div.full.f32 %f6, %f3, %f2;
  rcp.rn.f32 %f7, %f3; rcp.approx.f32 %f8, %f3; sqrt.rn.f32 %f9, %f3; sqrt.approx.f32 %f10, %f3; rsqrt.approx.f32 %f11, %f3;
  mul.wide.s32 %rd7, %r4, 32; add.s64 %rd8, %rd3, %rd7;
  st.global.f32 [%rd8], %f4; st.global.f32 [%rd8+4], %f5; st.global.f32 [%rd8+8], %f6; st.global.f32 [%rd8+12], %f7;
  st.global.f32 [%rd8+16], %f8; st.global.f32 [%rd8+20], %f9; st.global.f32 [%rd8+24], %f10; st.global.f32 [%rd8+28], %f11;
  ret;
}`

loops('div, rcp, sqrt and rsqrt in 4-lane turns: the JavaScript tier\'s bits, correctly rounded', async () => {
  const edge = [0, -0, 1, -1, 2, 3, 0.1, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 3.4028235e38, -3.4028235e38, Infinity, -Infinity, NaN, 4, 0.25, 7, 1e30, 1e-30]
  const r = rng(77)
  const xs = new Float32Array(512), ys = new Float32Array(512)
  for (let i = 0; i < 512; i++) {
    xs[i] = i < edge.length * edge.length ? edge[i % edge.length]! : fromBits((r() * 2 ** 32) >>> 0)
    ys[i] = i < edge.length * edge.length ? edge[Math.floor(i / edge.length)]! : fromBits((r() * 2 ** 32) >>> 0)
  }
  const outs: Record<string, Float32Array> = {}
  for (const codegen of ['wasm', 'js'] as const) {
    const be = createEmulatorBackend({ codegen, workers: 0 })
    try {
      const mod = be.loadModule(ptxBytes(DIVSQRT_PTX))
      if (codegen === 'wasm') assert.match(mod.inspect('dq'), /SIMD across threads: 4 consecutive threads of a row a step/)
      const dx = upload(be, xs), dy = upload(be, ys), dout = be.alloc(512 * 32)
      be.launch(mod.getFunction('dq'), { grid: [8, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }, { u64: dout }]))
      outs[codegen] = download(be, dout, new Float32Array(512 * 8))
    } finally {
      be.dispose()
    }
  }
  const same = (a: number, b: number) => (Number.isNaN(a) ? Number.isNaN(b) : bitsOf(a) === bitsOf(b))
  for (let i = 0; i < 512; i++) {
    const x = xs[i]!, y = ys[i]!
    // .rn, and the .approx/.full forms the emulator computes the same way (within the ISA's bounds)
    const want = [x / y, x / y, x / y, 1 / x, 1 / x, Math.sqrt(x), Math.sqrt(x), 1 / Math.sqrt(x)].map(Math.fround)
    for (let k = 0; k < 8; k++) {
      const w = outs.wasm![8 * i + k]!, j = outs.js![8 * i + k]!
      assert.ok(same(w, j), `thread ${i} result ${k} (x ${x}, y ${y}): wasm ${w}, JS ${j}`)
      assert.ok(same(w, want[k]!), `thread ${i} result ${k} (x ${x}, y ${y}): ${w}, correctly rounded ${want[k]}`)
    }
  }
})

loops('a lane whose shared load is outside the window faults as the JavaScript tier\'s thread does (same thread, instruction, address)', async () => {
  const triples = fmaInputs()
  const block: [number, number, number] = [16, 2, 1]
  const input = new Float32Array(triples.slice(0, 64).flat())
  // t + k ≥ 384 (1536 bytes / 4) from thread t = 384 − k on: thread 6 (inside the group 4 … 7), thread 3 (the
  // last lane of the first group), thread 16 (the first of the second row); the address tells the thread
  for (const k of [378, 381, 368]) {
    const wasm = await runLoopSimd('wasm', input, block, 2, k, 0), js = await runLoopSimd('js', input, block, 2, k, 0)
    assert.ok(js.fault, `k=${k}: the JavaScript tier must fault`)
    assert.ok(wasm.fault, `k=${k}: the wasm tier must fault`)
    assert.ok(js.fault!.instruction.includes('[%r15]'), js.fault!.instruction)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.instruction, js.fault!.instruction)
    assert.is(wasm.fault!.address, js.fault!.address)
    assert.is(js.fault!.address, BigInt(4 * 384))
  }
})

loops('a lane whose shared store after the loop\'s first store is outside the window: tested at the turn\'s start, the same fault', async () => {
  const triples = fmaInputs()
  const block: [number, number, number] = [16, 2, 1]
  const input = new Float32Array(triples.slice(0, 64).flat())
  // 2t + w ≥ 128 from thread t = (128 − w) / 2 on: threads 6, 3 and 16; the store at ws + 4·(2t + w)
  for (const w of [116, 122, 96]) {
    const wasm = await runLoopSimd('wasm', input, block, 2, 0, 0, w), js = await runLoopSimd('js', input, block, 2, 0, 0, w)
    assert.ok(wasm.inspect.includes('SIMD across threads'), wasm.inspect)
    assert.ok(js.fault, `w=${w}: the JavaScript tier must fault`)
    assert.ok(wasm.fault, `w=${w}: the wasm tier must fault`)
    assert.ok(js.fault!.instruction.startsWith('st.shared.f32 [%r19]'), js.fault!.instruction)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.address, js.fault!.address)
    assert.is(js.fault!.address, BigInt(1024 + 4 * 128))
  }
})

loops('a lane whose shared load in a body it runs alone (lanes parted after a store) is outside the window: the same fault', async () => {
  const triples = fmaInputs()
  const block: [number, number, number] = [16, 2, 1]
  const input = new Float32Array(triples.slice(0, 64).flat())
  // ys + 4·(t + k2) ≥ 1536 (the window's end, ys at 256) from t + k2 ≥ 320; the lanes with tid.x < 2 skip
  for (const k2 of [314, 317, 304]) {
    const wasm = await runLoopSimd('wasm', input, block, 2, 0, 0, 0, 2, k2), js = await runLoopSimd('js', input, block, 2, 0, 0, 0, 2, k2)
    assert.ok(wasm.inspect.includes('SIMD across threads'), wasm.inspect)
    assert.ok(js.fault && wasm.fault, `k2=${k2}: both tiers must fault (${js.fault?.message}, ${wasm.fault?.message})`)
    assert.ok(js.fault!.instruction.startsWith('ld.shared.f32 %f12, [%r35]'), js.fault!.instruction)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.address, js.fault!.address)
    // the first thread past the end that does not skip (tid.x ≥ 2): 314 → t = 6, 317 → t = 3, 304 → t = 18
    let t = 320 - k2
    while (t % 16 < 2) t++
    assert.is(js.fault!.address, BigInt(256 + 4 * (t + k2)))
  }
})

// Instructions without a 4-lane form inside a 4-lane turn, each lane's scalar code: rem and div (by a
// parameter, 0 included), 64-bit address arithmetic, global loads and stores at addresses no block test
// covers (a permutation of the threads), beside 4-lane shared loads. in[(5g) % 61 + bad] past the buffer's
// end faults for some threads, the first of them inside a group of four.
const LANES_PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry lanes(.param .u64 p_in, .param .u64 p_out, .param .u32 p_div, .param .u32 p_bad)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<10>;
  .shared .align 4 .b8 sm[256];
  mov.u32 %r1, %tid.x;
  mov.u32 %r20, sm;
  shl.b32 %r2, %r1, 2;
  add.s32 %r3, %r20, %r2;
  mul.lo.s32 %r21, %r1, 3;
  st.shared.u32 [%r3], %r21;
  bar.sync 0;
  ld.param.u64 %rd1, [p_in];
  ld.param.u64 %rd2, [p_out];
  ld.param.u32 %r4, [p_div];
  ld.param.u32 %r5, [p_bad];
  cvta.to.global.u64 %rd7, %rd1;
  cvta.to.global.u64 %rd8, %rd2;
  mov.u32 %r6, %ctaid.x;
  mov.u32 %r7, %ntid.x;
  mad.lo.s32 %r8, %r6, %r7, %r1;
  mul.lo.s32 %r9, %r8, 5;
  rem.u32 %r10, %r9, 61;
  add.s32 %r11, %r10, %r5;
  mul.wide.u32 %rd3, %r11, 4;
  add.s64 %rd4, %rd7, %rd3;
  ld.global.u32 %r12, [%rd4];
  div.u32 %r13, %r12, %r4;
  ld.shared.u32 %r14, [%r3];
  add.s32 %r15, %r13, %r14;
  mul.lo.s32 %r16, %r8, 3;
  and.b32 %r17, %r16, 255;
  mul.wide.u32 %rd5, %r17, 4;
  add.s64 %rd6, %rd8, %rd5;
  st.global.u32 [%rd6], %r15;
  ret;
}
`

async function runLanes(codegen: 'wasm' | 'js', div: number, bad: number): Promise<{ out?: Uint32Array; fault?: EmulatorFault; inspect: string }> {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(LANES_PTX))
    const inspect = mod.inspect('lanes')
    const input = Uint32Array.from({ length: 61 }, (_, i) => (i * 2654435761) >>> 0)
    const din = upload(be, input), dout = be.alloc(256 * 4)
    try {
      await be.launch(mod.getFunction('lanes'), { grid: [4, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { u32: div }, { u32: bad }]))
    } catch (e) {
      if (e instanceof EmulatorFault) return { fault: e, inspect }
      throw e
    }
    return { out: download(be, dout, new Uint32Array(256)), inspect }
  } finally {
    be.dispose()
  }
}

loops('lane by lane inside a 4-lane turn: rem, div (by 0 too), 64-bit addresses, global loads and stores no block test covers', async () => {
  const input = Uint32Array.from({ length: 61 }, (_, i) => (i * 2654435761) >>> 0)
  for (const div of [3, 0, 1000003]) {
    const wasm = await runLanes('wasm', div, 0), js = await runLanes('js', div, 0)
    assert.ok(wasm.inspect.includes('SIMD across threads'), wasm.inspect)
    assert.ok(wasm.out && js.out, `div=${div}: ${wasm.fault?.message ?? js.fault?.message}`)
    const want = new Uint32Array(256)
    for (let g = 0; g < 256; g++) want[(3 * g) & 255] = ((div === 0 ? 0xffffffff : Math.floor(input[(5 * g) % 61]! / div)) + 3 * (g % 64)) >>> 0
    assert.equal([...wasm.out!], [...want], `div=${div}`)
    assert.equal(wasm.out, js.out)
  }
})

loops('a lane whose global load (lane by lane) is outside its buffer faults as the JavaScript tier\'s thread does', async () => {
  // (5g) % 61 + bad ≥ 61 first for g = 6 (30 + 31) with bad = 31, inside the group 4 … 7; g = 13 (4 + 57) is
  // the first with bad = 57… g = 1 (5 + 56) with bad = 56
  for (const bad of [31, 56, 57]) {
    const wasm = await runLanes('wasm', 3, bad), js = await runLanes('js', 3, bad)
    assert.ok(js.fault && wasm.fault, `bad=${bad}: both tiers must fault (${js.fault?.message}, ${wasm.fault?.message})`)
    assert.ok(js.fault!.instruction.startsWith('ld.global.u32 %r12, [%rd4]'), js.fault!.instruction)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.address, js.fault!.address)
  }
})

loops.run()

// --- 8. fma.rn through relaxed SIMD's fused multiply-add ---

const relaxed = suite('wasm tier: fma.rn as relaxed SIMD\'s multiply-add where the start-up probe finds it fused')

/** relaxed-madd-run.ts's report, in a Node started with `flags`, with KERNELPACK_EMULATOR_RELAXED_SIMD as `env`
 *  says (unset unless given). */
function relaxedRun(flags: string[], relaxedEnv?: string): { probe: { f32: boolean; f64: boolean }; compiles: boolean; wasm: Record<string, number | boolean | string[]>; js: Record<string, number | boolean | string[]> } {
  const script = fileURLToPath(new URL('./relaxed-madd-run.ts', import.meta.url))
  const env = { ...process.env }
  delete env.KERNELPACK_EMULATOR_RELAXED_SIMD
  if (relaxedEnv !== undefined) env.KERNELPACK_EMULATOR_RELAXED_SIMD = relaxedEnv
  const out = execFileSync(process.execPath, [...flags, '--conditions=source', '--import', 'tsx', script], { encoding: 'utf8', env, cwd: fileURLToPath(new URL('../..', import.meta.url)) })
  return JSON.parse(out.trim().split('\n').pop()!)
}

function assertExact(r: ReturnType<typeof relaxedRun>): void {
  for (const tier of ['wasm', 'js'] as const) {
    assert.ok((r[tier].cases32 as number) > 900 && (r[tier].cases64 as number) > 400, JSON.stringify(r[tier]))
    assert.is(r[tier].wrong32, 0, `${tier}: fma.rn.f32, one thread at a time`)
    assert.is(r[tier].wrong32x4, 0, `${tier}: fma.rn.f32, 4 lanes`)
    assert.is(r[tier].wrong64, 0, `${tier}: fma.rn.f64`)
  }
  assert.is(r.wasm.simd, true, 'fma_soa runs 4 threads a step')
  assert.equal(r.wasm.tiers, ['tier: WebAssembly', 'tier: WebAssembly', 'tier: WebAssembly'])
}

relaxed('with relaxed SIMD on (Node 20: --experimental-wasm-relaxed-simd; Chromium: always) the probe finds this CPU\'s fma fused, and every fma.rn.f32 (one thread, 4 lanes) and fma.rn.f64 is the exact one, as on the JavaScript tier', () => {
  const r = relaxedRun(['--experimental-wasm-relaxed-simd'])
  assert.equal(r.probe, { f32: true, f64: true }, 'this machine\'s CPU has a fused multiply-add (x86-64 FMA3): the probe must find f32x4/f64x2.relaxed_madd fused')
  assertExact(r)
})

relaxed('without the flag the emulator turns relaxed SIMD on itself (Node 20; later Node has it on) and the probe finds the fma fused: the same exact results', () => {
  const r = relaxedRun([])
  assert.is(r.compiles, true, 'relaxed SIMD compiles after the emulator ran (on Node 20, only if the emulator turned V8\'s flag on)')
  assert.equal(r.probe, { f32: true, f64: true }, 'the probe finds relaxed_madd fused without any flag on the command line')
  assertExact(r)
})

relaxed('KERNELPACK_EMULATOR_RELAXED_SIMD=0 keeps the exact fma paths (and turns no engine flag on): the same exact results', () => {
  const r = relaxedRun([], '0')
  assert.equal(r.probe, { f32: false, f64: false }, 'the probe is not taken: relaxed_madd is not used')
  if (/^11\./.test(process.versions.v8)) assert.is(r.compiles, false, 'Node 20: V8\'s relaxed SIMD flag stays off')
  assertExact(r)
})

relaxed.run()
