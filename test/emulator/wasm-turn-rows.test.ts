// The wasm tier's block-level thread loops (emit-wasm.ts threads, vectorTurn, uniformPrefix): a row's 4-lane
// turns follow one another without going round the thread loop (tx stays a multiple of 4; the last lanes of a
// row that is not a multiple of 4 take their scalar turns), and the loop's arithmetic that gives every thread
// the same value (`pin * nt`, `1 - pout` of a double-buffered Hillis-Steele scan) is computed once before it.
// Checked against the JavaScript tier and a hand computation for block shapes that end rows at every
// remainder, 2-D blocks, and a block whose shared buffer ends inside a row: the fault is the JavaScript tier's
// (its thread 212, the first past the end), after the turns before it ran as 4 lanes.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, type EmulatorFault } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, ptxBytes, upload } from './helpers.js'

// nvcc's shape of the scan (test/fixtures/emulator/kernels/shared.cu scan_block), written here over a block of
// any shape: t = (tid.z * ntid.y + tid.y) * ntid.x + tid.x, nt = ntid.x * ntid.y * ntid.z; the last thread writes the block's total
const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry scan(.param .u64 in, .param .u64 out, .param .u64 sums)
{
  .reg .b64 %rd<10>; .reg .b32 %r<40>; .reg .pred %p<8>;
  .shared .align 4 .b8 buf[2048];
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.param.u64 %rd3, [sums];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r30, %ntid.x; mov.u32 %r31, %ntid.y; mul.lo.s32 %r1, %r30, %r31;
  mov.u32 %r34, %ntid.z; mul.lo.s32 %r1, %r1, %r34;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r35, %tid.z; mov.u32 %r32, %tid.y; mad.lo.s32 %r32, %r35, %r31, %r32;
  mov.u32 %r33, %tid.x; mad.lo.s32 %r3, %r32, %r30, %r33;
  mad.lo.s32 %r4, %r2, %r1, %r3;
  mul.wide.s32 %rd4, %r4, 4;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.u32 %r5, [%rd5];
  shl.b32 %r6, %r3, 2;
  mov.u32 %r7, buf;
  add.s32 %r8, %r7, %r6;
  st.shared.u32 [%r8], %r5;
  bar.sync 0;
  mov.u32 %r10, 0;
  mov.u32 %r11, 1;
  mov.u32 %r9, 1;
  setp.lt.s32 %p1, %r1, 2;
  @%p1 bra $end;
$loop:
  sub.s32 %r12, %r9, %r10;
  mul.lo.s32 %r13, %r10, %r1;
  shl.b32 %r14, %r13, 2;
  add.s32 %r15, %r8, %r14;
  ld.shared.u32 %r16, [%r15];
  setp.lt.s32 %p2, %r3, %r11;
  @%p2 bra $skip;
  add.s32 %r17, %r13, %r3;
  sub.s32 %r18, %r17, %r11;
  shl.b32 %r19, %r18, 2;
  add.s32 %r20, %r7, %r19;
  ld.shared.u32 %r21, [%r20];
  add.s32 %r16, %r21, %r16;
$skip:
  mul.lo.s32 %r22, %r12, %r1;
  shl.b32 %r23, %r22, 2;
  add.s32 %r24, %r8, %r23;
  st.shared.u32 [%r24], %r16;
  bar.sync 0;
  shl.b32 %r11, %r11, 1;
  setp.lt.s32 %p3, %r11, %r1;
  mov.u32 %r10, %r12;
  @%p3 bra $loop;
$end:
  mul.lo.s32 %r25, %r10, %r1;
  shl.b32 %r26, %r25, 2;
  add.s32 %r27, %r8, %r26;
  ld.shared.u32 %r28, [%r27];
  add.s64 %rd6, %rd2, %rd4;
  st.global.u32 [%rd6], %r28;
  add.s32 %r29, %r1, -1;
  setp.ne.s32 %p4, %r3, %r29;
  @%p4 bra $ret;
  mul.wide.u32 %rd7, %r2, 4;
  add.s64 %rd8, %rd3, %rd7;
  st.global.u32 [%rd8], %r28;
$ret:
  ret;
}`

const GRID = 3

interface Run { out?: Int32Array; sums?: Int32Array; fault?: EmulatorFault; inspect: string }

function run(codegen: 'wasm' | 'js', block: [number, number, number]): Run {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(PTX))
    const nt = block[0] * block[1] * block[2], n = GRID * nt
    const input = Int32Array.from({ length: n }, (_, i) => ((i * 2654435761) >>> 20) - 2048)
    const din = upload(be, input), dout = be.alloc(n * 4), dsums = be.alloc(GRID * 4)
    const fault = launchOrFault(be, mod, 'scan', { grid: [GRID, 1, 1], block, sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { u64: dsums }]))
    if (fault) return { fault, inspect: mod.inspect('scan') }
    return { out: download(be, dout, new Int32Array(n)), sums: download(be, dsums, new Int32Array(GRID)), inspect: mod.inspect('scan') }
  } finally {
    be.dispose()
  }
}

/** The inclusive scan of each block's elements, by hand (32-bit wrap-around sums). */
function expected(nt: number): { out: number[]; sums: number[] } {
  const input = Array.from({ length: GRID * nt }, (_, i) => ((i * 2654435761) >>> 20) - 2048)
  const out: number[] = [], sums: number[] = []
  for (let b = 0; b < GRID; b++) {
    let acc = 0
    for (let t = 0; t < nt; t++) { acc = (acc + input[b * nt + t]!) | 0; out.push(acc) }
    sums.push(acc)
  }
  return { out, sums }
}

const s = suite('wasm tier: a row\'s 4-lane turns one after another, block values computed once')

s('every row length: the hand computation\'s bytes, and the JavaScript tier\'s', () => {
  for (const block of [[1, 1, 1], [2, 1, 1], [3, 1, 1], [4, 1, 1], [5, 1, 1], [7, 1, 1], [8, 1, 1], [13, 1, 1], [33, 1, 1], [64, 1, 1], [101, 1, 1], [256, 1, 1], [6, 5, 1], [12, 3, 2], [9, 7, 1]] as Array<[number, number, number]>) {
    const nt = block[0] * block[1] * block[2]
    const wasm = run('wasm', block), js = run('js', block)
    const label = `block ${block.join('x')}`
    assert.ok(wasm.out && js.out, `${label}: ${wasm.fault?.message ?? js.fault?.message}`)
    const want = expected(nt)
    assert.equal([...wasm.out!], want.out, label)
    assert.equal([...wasm.sums!], want.sums, label)
    assert.equal([...wasm.out!], [...js.out!], label)
    assert.match(wasm.inspect, /tier: WebAssembly$/, label)
    // rows of 4 threads or more run as 4 lanes (the loop's three thread loops)
    if (block[0] >= 4) assert.match(wasm.inspect, /SIMD across threads: 4 consecutive threads of a row a step \(f32x4\/i32x4\) in 3 of its thread loops/, label)
  }
})

s('a shared buffer that ends inside a row: the JavaScript tier\'s fault, at its thread 212', () => {
  // 300 threads: buf[t] fits, buf[300 + t] (the first round's pout = 1) does not from t = 212 on; the turns of
  // threads 0–211 run as 4 lanes one after another, the turn at 212 goes back to one thread at a time
  const wasm = run('wasm', [300, 1, 1]), js = run('js', [300, 1, 1])
  assert.ok(js.fault && wasm.fault, 'both tiers must fault')
  assert.is(wasm.fault!.message, js.fault!.message)
  assert.is(wasm.fault!.instruction, js.fault!.instruction)
  assert.is(wasm.fault!.address, js.fault!.address)
  assert.ok(js.fault!.instruction.startsWith('st.shared.u32 [%r24]'), js.fault!.instruction)
  // thread 212's word: buf + 4 * (300 + 212), the buffer's end (buf is the block's first shared byte)
  assert.is(js.fault!.address, 0x800n)
})

s.run()
