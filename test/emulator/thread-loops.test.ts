// Issue 13 item 1: the kernel's choice is visible. mod.inspect(kernel) (and KERNELPACK_EMULATOR_DEBUG at
// load) shows the thread loops with their PTX lines and what is kept per thread, or why a kernel falls
// back to the continuation scheme; a kernel that falls back still runs correctly.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '../../packages/emulator/src/index.js'
import { Heap } from '../../packages/emulator/src/heap.js'
import { loadPtxModule } from '../../packages/emulator/src/load-module.js'
import { relaxedMaddFused } from '../../packages/emulator/src/wasm/emit-wasm.js'
import { download, marshal, ptxBytes } from './helpers.js'

const head = '.version 8.0\n.target sm_80\n.address_size 64\n'

// out[tid] = sum of tid·k over a uniform k-loop, through shared memory and two barriers per trip
const formable = `${head}
.visible .entry tiles(.param .u64 out, .param .u32 trips)
{
  .reg .b64 %rd<4>; .reg .b32 %r<12>; .reg .pred %p<2>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [trips];
  mov.u32 %r2, %tid.x; shl.b32 %r3, %r2, 2; mov.u32 %r4, s; add.s32 %r5, %r4, %r3;
  mov.u32 %r6, 0; mov.u32 %r7, 0;
$k:
  mul.lo.s32 %r8, %r2, %r6; st.shared.u32 [%r5], %r8;
  bar.sync 0;
  ld.shared.u32 %r9, [%r5]; add.s32 %r7, %r7, %r9;
  bar.sync 0;
  add.s32 %r6, %r6, 1; setp.lt.u32 %p1, %r6, %r1; @%p1 bra $k;
  mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r7;
  ret;
}`

// the same sum, but threads with tid.x >= 64 skip the loop to a last barrier: a branch around barriers that
// differs per thread (the blocks here have 64 threads, which all take it alike, so the result is defined)
const divergent = formable.replace('.entry tiles', '.entry skip').replace('  mov.u32 %r6, 0; mov.u32 %r7, 0;\n', '  mov.u32 %r6, 0; mov.u32 %r7, 0;\n  setp.lt.u32 %p0, %r2, 64; @!%p0 bra $store;\n').replace('  mul.wide.u32 %rd2', '$store:\n  bar.sync 0;\n  mul.wide.u32 %rd2')

const tl = suite('thread loops: inspect and fallback')

tl('inspect shows the loops, the PTX lines and the values kept per thread; the result is right', () => {
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(formable))
  const text = mod.inspect('tiles')
  const line = (s: string) => formable.split('\n').findIndex((l) => l.includes(s)) + 1
  assert.match(text, /^kernel tiles: thread loops/)
  // %r2 is a copy of %tid.x and %r5 = s + 4·%tid.x: recomputed in each loop, not kept
  assert.match(text, /kept per thread: %r7\n/)
  assert.match(text, /recomputed: %r2 \(%tid.x\)/)
  assert.match(text, /recomputed from %tid.x \(affine\): %r5\n/)
  assert.match(text, /kept per block: .*%r6/)
  assert.match(text, new RegExp(`loop \\$k \\(PTX lines ${line('$k:') + 1}–${line('@%p1 bra $k')}\\), once per block:`))
  assert.match(text, new RegExp(`barrier \`bar.sync 0\` \\(line ${line('bar.sync 0')}\\)`))
  assert.match(text, /branch at line \d+: taken alike by the whole block, decided after the loop/)
  const out = be.alloc(64 * 4)
  be.launch(mod.getFunction('tiles'), { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }, { u32: 5 }]))
  assert.equal(Array.from(download(be, out, new Int32Array(64))), Array.from({ length: 64 }, (_, t) => t * 10))
})

tl('a branch around barriers that differs between threads falls back to the continuation scheme and says why', () => {
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(divergent))
  const at = divergent.split('\n').findIndex((l) => l.includes('@!%p0 bra $store')) + 1
  assert.match(mod.inspect('skip'), new RegExp(`^kernel skip: continuation scheme .*because the branch at PTX line ${at} \\(\`@!%p0 bra \\$store\`\\) goes around a barrier`))
  const out = be.alloc(64 * 4)
  be.launch(mod.getFunction('skip'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }, { u32: 5 }]))
  assert.equal(Array.from(download(be, out, new Int32Array(64))), Array.from({ length: 64 }, (_, t) => t * 10))
  assert.throws(() => mod.inspect('nope'), /kernel nope is not in this PTX module/)
})

tl('KERNELPACK_EMULATOR_DEBUG prints every kernel\'s plan at load', () => {
  const lines: string[] = []
  const error = console.error
  process.env.KERNELPACK_EMULATOR_DEBUG = '1'
  console.error = (s: string) => { lines.push(s) }
  try {
    createEmulatorBackend().loadModule(ptxBytes(formable + divergent.slice(head.length)))
  } finally {
    console.error = error
    delete process.env.KERNELPACK_EMULATOR_DEBUG
  }
  // one line per kernel, then the module's WebAssembly build (issue 24: its size and time)
  assert.is(lines.length, 3)
  assert.match(lines[0]!, /^\[kernelpack emulator\] kernel tiles: thread loops/)
  assert.match(lines[1]!, /^\[kernelpack emulator\] kernel skip: continuation scheme/)
  // the fma line says what the start-up probe found (this file loads the browser entry, which turns no engine
  // flag on: on Node 20 that is the exact paths; the Node entry's case is wasm-exact.test.ts's)
  const fma = relaxedMaddFused().f32 ? "as the CPU's fused multiply-add \\(relaxed SIMD, probed exact\\)" : 'by the exact paths \\(no fused relaxed SIMD multiply-add here, or KERNELPACK_EMULATOR_RELAXED_SIMD=0\\)'
  assert.match(lines[2]!, new RegExp(`^\\[kernelpack emulator\\] WebAssembly module: 1 kernel, \\d+ bytes, written in [\\d.]+ ms, compiled in [\\d.]+ ms; fma\\.rn\\.f32/\\.f64 ${fma}$`))
})

// a shfl.down whose lane offset is the same in every lane (a per-block loop variable) and a shfl.idx whose
// source lane differs per lane: only the per-lane inputs go through per-lane slots
const shuffles = `${head}
.visible .entry shflmix(.param .u64 out)
{
  .reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; mov.u32 %r2, 1; mov.u32 %r3, %r1;
$l:
  shfl.sync.down.b32 %r4|%p1, %r3, %r2, 31, -1;
  add.s32 %r3, %r3, %r4;
  shl.b32 %r2, %r2, 1; setp.lt.u32 %p2, %r2, 32; @%p2 bra $l;
  and.b32 %r5, %r1, 3;
  shfl.sync.idx.b32 %r6|%p1, %r3, %r5, 31, -1;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r6;
  ret;
}`

tl('a collective input kept once per block needs no per-lane slot; per-lane inputs keep theirs; the result is right', () => {
  const lm = loadPtxModule(shuffles, new Heap(), {})
  // slots: the value of each shuffle and the idx source lane, not the down offset %r2
  assert.is(lm.source.match(/=new Int32Array\(32\);/g)?.length, 3)
  assert.match(createEmulatorBackend().loadModule(ptxBytes(shuffles)).inspect('shflmix'), /kept per block: .*%r2/)
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(shuffles))
  const out = be.alloc(64 * 4)
  be.launch(mod.getFunction('shflmix'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }]))
  const want = new Int32Array(64)
  for (let w = 0; w < 64; w += 32) {
    let v = Array.from({ length: 32 }, (_, l) => w + l)
    for (let off = 1; off < 32; off <<= 1) v = v.map((x, l) => x + (l + off <= 31 ? v[l + off]! : x))
    for (let l = 0; l < 32; l++) want[w + l] = v[l & 3]!
  }
  assert.equal(Array.from(download(be, out, new Int32Array(64))), Array.from(want))
})

// s[tid + sh] written, a barrier, read back twice (once through an address the analysis has no form for, so
// checked: it sees where the unchecked store really went) and added to in[gid]: the shared index and the
// global address are affine in %tid.x, so a block tests their ranges once and runs a copy of its loops
// without per-thread checks
const hoisted = `${head}
.visible .entry hoist(.param .u64 out, .param .u64 in, .param .u32 sh)
{
  .reg .b64 %rd<8>; .reg .b32 %r<16>; .reg .f32 %f<8>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in]; ld.param.u32 %r1, [sh];
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mad.lo.s32 %r5, %r3, %r4, %r2;
  add.s32 %r6, %r2, %r1; shl.b32 %r7, %r6, 2; mov.u32 %r8, s; add.s32 %r9, %r8, %r7;
  cvt.rn.f32.u32 %f1, %r5;
  st.shared.f32 [%r9], %f1;
  bar.sync 0;
  ld.shared.f32 %f2, [%r9];
  and.b32 %r10, %r9, -1; ld.shared.f32 %f4, [%r10]; add.f32 %f2, %f2, %f4;
  mul.wide.s32 %rd3, %r5, 4; add.s64 %rd4, %rd2, %rd3; ld.global.f32 %f3, [%rd4];
  add.f32 %f2, %f2, %f3;
  add.s64 %rd5, %rd1, %rd3; st.global.f32 [%rd5], %f2;
  ret;
}`

tl('hoisted range checks: a block whose affine shared and global accesses all stay inside runs unchecked; the rest fault as before', () => {
  const lm = loadPtxModule(hoisted, new Heap(), {})
  // the per-block tests (shared window, global allocation) and the unchecked copy of the loops
  assert.match(lm.source, /if\(.*hs\(.*hz\(.*\)\)\{/)
  assert.match(createEmulatorBackend().loadModule(ptxBytes(hoisted)).inspect('hoist'), /recomputed from %tid.x \(affine\): %r9/)
  const be = createEmulatorBackend({ workers: 0 })
  const mod = be.loadModule(ptxBytes(hoisted))
  const n = 3 * 64
  const input = Float32Array.from({ length: n }, (_, i) => i * 0.5)
  const run = (sh: number, inLength: number) => {
    const out = be.alloc(n * 4), inp = be.alloc(inLength * 4)
    be.copyToDevice(inp, new Uint8Array(input.buffer, 0, inLength * 4))
    be.launch(mod.getFunction('hoist'), { grid: [3, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }, { u64: inp }, { u32: sh }]))
    return Array.from(download(be, out, new Float32Array(n)))
  }
  const want = Array.from({ length: n }, (_, i) => 2 * i + i * 0.5)
  // in range: s[tid + 192] ends at byte 1024 exactly
  assert.equal(run(0, n), want)
  assert.equal(run(192, n), want)
  const line = (s: string) => hoisted.split('\n').findIndex((l) => l.includes(s)) + 1
  // one thread past the window (s[256]): the block's test fails, its checked loop faults at the store
  assert.throws(() => run(193, n), (e: Error) => new RegExp(`st\\.shared\\.f32 \\[%r9\\], %f1.*PTX line ${line('st.shared.f32')}`).test(e.message) && /address 0x400\b/.test(e.message))
  // the input one element short: blocks 0 and 1 pass their test, block 2 faults at its last thread's load
  assert.throws(() => run(0, n - 1), (e: Error) => new RegExp(`ld\\.global\\.f32 %f3.*PTX line ${line('ld.global.f32')}`).test(e.message))
})

// a barrier-free kernel reading and writing 32 bytes per thread in five widths: the unchecked copy indexes the
// heap views from per-block element indices (hx…), which must land on the same bytes as the checked code
const widths = `${head}
.visible .entry widths(.param .u64 out, .param .u64 in)
{
  .reg .b64 %rd<10>; .reg .b32 %r<6>; .reg .b16 %h<4>; .reg .f64 %fd<4>; .reg .f32 %f<4>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x; mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.s32 %rd3, %r4, 32; add.s64 %rd4, %rd2, %rd3; add.s64 %rd5, %rd1, %rd3;
  ld.global.u64 %rd6, [%rd4]; add.s64 %rd7, %rd6, 1; st.global.u64 [%rd5], %rd7;
  ld.global.f64 %fd1, [%rd4+8]; add.f64 %fd2, %fd1, %fd1; st.global.f64 [%rd5+8], %fd2;
  ld.global.v2.f32 {%f1, %f2}, [%rd4+16]; st.global.v2.f32 [%rd5+16], {%f2, %f1};
  ld.global.u16 %h1, [%rd4+24]; st.global.u16 [%rd5+24], %h1;
  ld.global.u8 %h2, [%rd4+26]; st.global.u8 [%rd5+27], %h2;
  ret;
}`

tl('hoisted accesses of 1 to 8 bytes and vectors index the heap views; a block past the end runs checked and faults', () => {
  const lm = loadPtxModule(widths, new Heap(), {})
  assert.match(lm.source, /hx\d+=hv\d+>>>3/)
  assert.match(lm.source, /HF32\[hx\d+\+8\*tx\+1\]/)
  assert.match(lm.source, /HI32\[hx\d+\+8\*tx\+1\]=hi32/)
  const be = createEmulatorBackend({ workers: 0 })
  const mod = be.loadModule(ptxBytes(widths))
  const n = 2 * 64
  const input = new Uint8Array(32 * n)
  const dv = new DataView(input.buffer)
  for (let i = 0; i < n; i++) {
    dv.setBigUint64(32 * i, 0x1_0000_0000n * BigInt(i) + 7n, true)
    dv.setFloat64(32 * i + 8, i / 3, true)
    dv.setFloat32(32 * i + 16, i + 0.25, true); dv.setFloat32(32 * i + 20, -i, true)
    dv.setUint16(32 * i + 24, 40000 + i, true)
    input[32 * i + 26] = 200 + (i & 31)
  }
  const run = (inBytes: number) => {
    const out = be.alloc(32 * n), inp = be.alloc(inBytes)
    be.copyToDevice(inp, input.subarray(0, inBytes))
    be.launch(mod.getFunction('widths'), { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }, { u64: inp }]))
    return new DataView(download(be, out, new Uint8Array(32 * n)).buffer)
  }
  const got = run(32 * n)
  for (let i = 0; i < n; i++) {
    assert.is(got.getBigUint64(32 * i, true), 0x1_0000_0000n * BigInt(i) + 8n)
    assert.is(got.getFloat64(32 * i + 8, true), 2 * (i / 3))
    assert.equal([got.getFloat32(32 * i + 16, true), got.getFloat32(32 * i + 20, true)], [-i, i + 0.25])
    assert.is(got.getUint16(32 * i + 24, true), 40000 + i)
    assert.equal([got.getUint8(32 * i + 26), got.getUint8(32 * i + 27)], [0, 200 + (i & 31)])
  }
  // the input 8 bytes short: block 1's test fails, its checked loop faults at its last thread's u16 load
  const line = widths.split('\n').findIndex((l) => l.includes('ld.global.u16')) + 1
  assert.throws(() => run(32 * n - 8), (e: Error) => new RegExp(`ld\\.global\\.u16 %h1.*PTX line ${line}`).test(e.message))
})

// out[linear thread id] = tid.x + 1000·tid.y + 10^6·tid.z, for any block shape
const shapes = `${head}
.visible .entry shapes(.param .u64 out, .param .u32 n)
{
  .reg .b64 %rd<5>; .reg .b32 %r<12>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x; mov.u32 %r3, %tid.y; mov.u32 %r4, %tid.z;
  mov.u32 %r5, %ntid.x; mov.u32 %r6, %ntid.y; mov.u32 %r10, %ntid.z; mov.u32 %r7, %ctaid.x;
  mad.lo.s32 %r8, %r7, %r10, %r4; mad.lo.s32 %r8, %r8, %r6, %r3; mad.lo.s32 %r8, %r8, %r5, %r2;
  setp.ge.u32 %p1, %r8, %r1; @%p1 bra $done;
  mad.lo.s32 %r9, %r3, 1000, %r2; mad.lo.s32 %r9, %r4, 1000000, %r9;
  cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r8, 4; add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r9;
$done:
  ret;
}`

tl('a kernel made per block shape (the shape as constants of its closure) is right for every shape it meets, in any order', () => {
  // the speculative variant is a factory of the block shape (emit-js.ts, specializeDims)
  assert.match(loadPtxModule(shapes, new Heap(), {}).source, /K\d+f=function\(NTX,NTY,NTZ\)\{const NT=NTX\*NTY\*NTZ,H8c=_H8,[^;]*;return function\(T,t0,t1,FB,b0,b1\)\{const H8=H8c,/)
  const be = createEmulatorBackend({ workers: 0 })
  const mod = be.loadModule(ptxBytes(shapes))
  const n = 1000
  const out = be.alloc(4 * n)
  for (const block of [[256, 1, 1], [128, 1, 1], [16, 4, 2], [7, 3, 5], [256, 1, 1], [1, 1, 64]] as const) {
    const nt = block[0] * block[1] * block[2]
    be.copyToDevice(out, new Uint8Array(4 * n))
    be.launch(mod.getFunction('shapes'), { grid: [Math.ceil(n / nt), 1, 1], block: [...block], sharedBytes: 0 }, marshal([{ u64: out }, { u32: n }]))
    const got = download(be, out, new Int32Array(n))
    const want = Int32Array.from({ length: n }, (_, i) => { const t = i % nt; return (t % block[0]) + 1000 * (((t / block[0]) | 0) % block[1]) + 1000000 * ((t / (block[0] * block[1])) | 0) })
    assert.equal([...got], [...want], `block ${block.join('×')}`)
  }
  // the heap grows (a plain ArrayBuffer is replaced): the kernel made for the old views is not used again
  const far = be.alloc(64 << 20)
  const out2 = be.alloc(4 * n)
  assert.ok(Number(out2) > 16 << 20, 'the new buffer lies past the first heap')
  be.launch(mod.getFunction('shapes'), { grid: [Math.ceil(n / 256), 1, 1], block: [256, 1, 1], sharedBytes: 0 }, marshal([{ u64: out2 }, { u32: n }]))
  assert.equal([...download(be, out2, new Int32Array(n))], Array.from({ length: n }, (_, i) => i % 256))
  be.launch(mod.getFunction('shapes'), { grid: [Math.ceil(n / 256), 1, 1], block: [256, 1, 1], sharedBytes: 0 }, marshal([{ u64: far }, { u32: n }]))
  assert.equal([...download(be, far, new Int32Array(n))], Array.from({ length: n }, (_, i) => i % 256))
})

tl.run()
