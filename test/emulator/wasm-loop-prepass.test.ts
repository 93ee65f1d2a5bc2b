// The wasm tier's pre-pass of a loop with stores in a 4-lane turn (emit-wasm.ts vloopPrecheck): a block-stride
// loop that reads x[c] and writes y[c] (layernorm's last loop, c = tid + k·ntid) runs its address arithmetic,
// branches and lane tests first, then the loop without them. Checked against the JavaScript tier (the same
// bytes, the same fault) and a hand computation, in the cases that tell: every lane in range; a buffer that
// ends inside the loop, so that a lane fails a test in a later trip (the JavaScript tier's thread 0 faults
// first, at its last trip: the group must not have stored anything when it goes back to one thread at a time);
// lanes that part at the loop's branch (a length that is not a multiple of 4).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, EmulatorFault } from '@kernelpack/emulator'
import { download, marshal, ptxBytes, upload } from './helpers.js'

const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry strided(.param .u64 x, .param .u64 y, .param .u32 n)
{
  .reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .f32 %f<4>; .reg .pred %p<4>;
  .shared .align 4 .f32 sh[64];
  ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y]; ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ntid.x;
  shl.b32 %r5, %r2, 2; mov.u32 %r6, sh; add.s32 %r7, %r6, %r5;
  cvt.rn.f32.u32 %f1, %r2;
  st.shared.f32 [%r7], %f1;
  bar.sync 0;
  ld.shared.f32 %f1, [sh+4];
  setp.ge.s32 %p1, %r2, %r1;
  @%p1 bra $done;
  mov.u32 %r4, %r2;
$loop:
  cvt.s64.s32 %rd3, %r4;
  shl.b64 %rd4, %rd3, 2;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.f32 %f2, [%rd5];
  add.rn.f32 %f3, %f2, %f1;
  add.s64 %rd6, %rd2, %rd4;
  st.global.f32 [%rd6], %f3;
  add.s32 %r4, %r4, %r3;
  setp.lt.s32 %p2, %r4, %r1;
  @%p2 bra $loop;
$done:
  ret;
}`

interface Run { y?: Float32Array; fault?: EmulatorFault; inspect: string }

function run(codegen: 'wasm' | 'js', n: number, yLength: number): Run {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(PTX))
    const x = Float32Array.from({ length: n }, (_, i) => i * 0.5)
    const dx = upload(be, x), dy = be.alloc(yLength * 4)
    try {
      be.launch(mod.getFunction('strided'), { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }, { u32: n }]))
    } catch (e) {
      if (!(e instanceof EmulatorFault)) throw e
      return { fault: e, inspect: mod.inspect('strided') }
    }
    return { y: download(be, dy, new Float32Array(yLength)), inspect: mod.inspect('strided') }
  } finally {
    be.dispose()
  }
}

const s = suite('wasm tier: the pre-pass of a loop with stores in a 4-lane turn')

s('the loop runs in 4-lane turns, with the JavaScript tier\'s bytes and the hand computation\'s', () => {
  const n = 1024
  const wasm = run('wasm', n, n), js = run('js', n, n)
  // both thread loops: the one before the barrier and the one with the strided loop
  assert.match(wasm.inspect, /SIMD across threads: 4 consecutive threads of a row a step \(f32x4\/i32x4\) in 2 of its thread loops/)
  assert.match(wasm.inspect, /tier: WebAssembly$/)
  assert.ok(wasm.y && js.y, wasm.fault?.message ?? js.fault?.message)
  // both blocks write every element: x[c] + sh[1] (= 1)
  assert.equal([...wasm.y!], Array.from({ length: n }, (_, c) => c * 0.5 + 1))
  assert.equal([...wasm.y!], [...js.y!])
})

s('a buffer that ends inside the loop: the JavaScript tier\'s fault (thread 0, its last trip), nothing half-stored', () => {
  // y has 900 floats; thread t writes t + 64k: thread 0's element 960 (k = 15) is its first past the end, and
  // thread 0 runs all its trips first on the JavaScript tier; lanes 0–3 pass the test up to k = 14
  for (const yLength of [900, 961, 1000]) {
    const wasm = run('wasm', 1024, yLength), js = run('js', 1024, yLength)
    assert.ok(js.fault, `y of ${yLength}: the JavaScript tier must fault`)
    assert.ok(wasm.fault, `y of ${yLength}: the wasm tier must fault`)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.instruction, js.fault!.instruction)
    assert.is(wasm.fault!.address, js.fault!.address)
    assert.ok(js.fault!.instruction.startsWith('st.global.f32 [%rd6]'), js.fault!.instruction)
  }
})

s('lanes that part at the loop\'s branch (n not a multiple of 4) take their scalar turns: the same bytes', () => {
  for (const n of [1001, 1003, 66, 5]) {
    const wasm = run('wasm', n, n), js = run('js', n, n)
    assert.ok(wasm.y && js.y, `n=${n}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.y!], Array.from({ length: n }, (_, c) => c * 0.5 + 1), `n=${n}`)
    assert.equal([...wasm.y!], [...js.y!])
  }
})

// 64-bit addresses from a 32-bit index whose lanes' values differ by a stride (emit-wasm.ts vwideStrided):
// lane 0's address and the stride, where the four lanes' indices do not cross 2^31; where they do, sign
// extension breaks the progression and the group goes back to one thread at a time. Here the index is
// tid + off with off = 2^31 − 7: thread 7's index wraps to −2^31, its address lands far below y, and the
// JavaScript tier's thread 7 faults; the wasm tier must fault there too (a progression from lane 0 would
// have given thread 7 an address inside y). Threads 0–3 fill the store's allocation cache one at a time, so
// the group of threads 4–7 is the one that tells.
const WRAP = `.version 8.0
.target sm_80
.address_size 64
.visible .entry wrapidx(.param .u64 y, .param .u32 off)
{
  .reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .f32 %f<4>; .reg .pred %p<2>;
  .shared .align 4 .f32 sh[64];
  ld.param.u64 %rd1, [y]; ld.param.u32 %r1, [off];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r2, %tid.x;
  shl.b32 %r5, %r2, 2; mov.u32 %r6, sh; add.s32 %r7, %r6, %r5;
  cvt.rn.f32.u32 %f1, %r2;
  st.shared.f32 [%r7], %f1;
  bar.sync 0;
  ld.shared.f32 %f1, [sh+4];
  add.s32 %r3, %r2, %r1;
  cvt.s64.s32 %rd2, %r3;
  cvt.s64.s32 %rd3, %r1;
  sub.s64 %rd4, %rd2, %rd3;
  shl.b64 %rd5, %rd4, 2;
  add.s64 %rd6, %rd1, %rd5;
  add.f32 %f2, %f1, %f1;
  st.global.f32 [%rd6], %f2;
  ret;
}`

function runWrap(codegen: 'wasm' | 'js', off: number): { y?: Float32Array; fault?: EmulatorFault } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(WRAP))
    const dy = be.alloc(64 * 4)
    try {
      be.launch(mod.getFunction('wrapidx'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: dy }, { u32: off >>> 0 }]))
    } catch (e) {
      if (!(e instanceof EmulatorFault)) throw e
      return { fault: e }
    }
    return { y: download(be, dy, new Float32Array(64)) }
  } finally {
    be.dispose()
  }
}

s('a 32-bit index whose lanes cross 2^31 before widening: the JavaScript tier\'s fault; one that does not: its bytes', () => {
  const wasm = runWrap('wasm', 2 ** 31 - 7), js = runWrap('js', 2 ** 31 - 7)
  assert.ok(js.fault && wasm.fault, `both tiers must fault (${js.fault?.message}, ${wasm.fault?.message})`)
  assert.is(wasm.fault!.message, js.fault!.message)
  assert.is(wasm.fault!.address, js.fault!.address)
  // thread 7's address: y + 4·(−2^31 − (2^31 − 7)) = y + 4·(7 − 2^32)
  assert.is(js.fault!.address! & 0xffffffffn, 0x1000n + 28n)
  for (const off of [0, 1000, -5, 2 ** 31 - 70]) {
    const w = runWrap('wasm', off), j = runWrap('js', off)
    assert.ok(w.y && j.y, `off ${off}: ${w.fault?.message ?? j.fault?.message}`)
    assert.equal([...w.y!], [...j.y!])
    assert.equal([...w.y!], new Array(64).fill(2))
  }
})

// The same loop with a `break` (`if (c >= lim) break;`, arithmetic on values the loop starts with, so the
// pre-pass runs it): the branch out of the loop ends the pre-pass, not the code after it.
const BREAK_PTX = PTX.replace('.param .u32 n)', '.param .u32 n, .param .u32 lim)')
  .replace('.reg .b32 %r<8>;', '.reg .b32 %r<12>;')
  .replace('ld.param.u32 %r1, [n];', 'ld.param.u32 %r1, [n]; ld.param.u32 %r9, [lim];')
  .replace('$loop:\n', '$loop:\n  setp.ge.s32 %p3, %r4, %r9;\n  @%p3 bra $done;\n')

s('a loop that breaks out (a test on values it starts with): the pre-pass ends there, the loop runs after it', () => {
  assert.ok(BREAK_PTX.includes('@%p3 bra $done;') && BREAK_PTX.includes('.param .u32 lim)') && BREAK_PTX.includes('%r<12>'), 'the variant of the kernel was made')
  const n = 1024
  for (const lim of [700, 0, 1021, 4096]) {
    const out: Record<string, Float32Array> = {}
    for (const codegen of ['wasm', 'js'] as const) {
      const be = createEmulatorBackend({ codegen, workers: 0 })
      try {
        const mod = be.loadModule(ptxBytes(BREAK_PTX))
        if (codegen === 'wasm') assert.match(mod.inspect('strided'), /in 2 of its thread loops/)
        const dx = upload(be, Float32Array.from({ length: n }, (_, i) => i * 0.5)), dy = be.alloc(n * 4)
        be.launch(mod.getFunction('strided'), { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }, { u32: n }, { u32: lim }]))
        out[codegen] = download(be, dy, new Float32Array(n))
      } finally {
        be.dispose()
      }
    }
    assert.equal([...out.wasm!], Array.from({ length: n }, (_, c) => (c < lim ? c * 0.5 + 1 : 0)), `lim ${lim}`)
    assert.equal([...out.wasm!], [...out.js!])
  }
})

// A loop tested at its top (`while (i < n) { sh[i] = …; i += 32; }`, as hand-written PTX and some compilers lay
// it out): its body is an `if` whose lanes may run one by one after the loop's first store, and the body ends in
// the loop's `continue`. A lane's scalar body that branched back to the 4-lane loop from there left its
// registers in the lane's scalar locals and the other lanes not run: the 4-lane loop never ended.
const WHILE_PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry fill(.param .u64 y, .param .u32 n)
{
  .reg .b64 %rd<8>; .reg .b32 %r<100>; .reg .pred %p<2>;
  .shared .align 16 .b8 sh[1024];
  ld.param.u64 %rd1, [y]; ld.param.u32 %r1, [n];
  mov.u32 %r80, sh;
  mov.u32 %r90, %tid.x;
$top:
  setp.ge.u32 %p1, %r90, %r1;
  @%p1 bra $end;
  add.u32 %r92, %r80, %r90; mul.lo.u32 %r93, %r90, 7; st.shared.u8 [%r92], %r93;
  add.u32 %r90, %r90, 32;
  bra $top;
$end:
  bar.sync 0;
  mov.u32 %r2, %tid.x;
$copy:
  setp.ge.u32 %p1, %r2, 256;
  @%p1 bra $done;
  shl.b32 %r3, %r2, 2; add.u32 %r4, %r80, %r3; ld.shared.u32 %r5, [%r4];
  cvt.u64.u32 %rd2, %r3; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r5;
  add.u32 %r2, %r2, 32;
  bra $copy;
$done:
  ret;
}`

s('a loop tested at its top, its body ending in the loop\'s continue: the JavaScript tier\'s bytes, and it ends', () => {
  for (const n of [1024, 1000, 3, 0]) {
    const out: Record<string, Uint8Array> = {}
    for (const codegen of ['wasm', 'js'] as const) {
      const be = createEmulatorBackend({ codegen, workers: 0 })
      try {
        const mod = be.loadModule(ptxBytes(WHILE_PTX))
        const dy = upload(be, new Uint8Array(1024).fill(0xee))
        be.launch(mod.getFunction('fill'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: dy }, { u32: n }]))
        out[codegen] = download(be, dy, new Uint8Array(1024))
      } finally {
        be.dispose()
      }
    }
    // (shared memory starts zeroed)
    assert.equal([...out.wasm!], Array.from({ length: 1024 }, (_, i) => (i < n ? (i * 7) & 255 : 0)), `n ${n}`)
    assert.equal([...out.wasm!], [...out.js!], `n ${n}`)
  }
})

s.run()
