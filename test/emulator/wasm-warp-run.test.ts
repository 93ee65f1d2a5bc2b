// The wasm tier's warp runs (emit-wasm.ts warpRun): lane loops of 32-bit arithmetic between shuffles whose
// lane, clamp and mask are constants run a whole warp at once, each register as eight 4-lane values and each
// shuffle as a permutation fixed when the code is written. Checked against the JavaScript tier (lane loops,
// scatter/gather through slots) bit for bit, with the predicates, on every mode (bfly by 16, 2 and 1, down,
// up with clamp 0, idx), back-to-back shuffles, f32 and integer arithmetic, a predicate read after the run;
// and where the run must not be taken: a warp cut short by the block's size, a block whose rows are 16
// threads (a warp in two rows), a warp one of whose lanes left before the shuffles (it reads 0 there).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, marshal, ptxBytes, upload } from './helpers.js'

const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry chain(.param .u64 in, .param .u64 out, .param .u32 quit)
{
  .reg .b64 %rd<8>; .reg .b32 %r<32>; .reg .f32 %f<8>; .reg .pred %p<8>;
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.param.u32 %r30, [quit];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  setp.eq.s32 %p7, %r4, %r30;
  @%p7 bra $end;
  mul.wide.u32 %rd3, %r4, 4; add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r5, [%rd4];
  cvt.rn.f32.s32 %f1, %r5;
  mov.b32 %r6, %f1;
  shfl.sync.bfly.b32 %r7|%p1, %r6, 16, 31, -1;
  mov.b32 %f2, %r7; add.f32 %f3, %f1, %f2; mov.b32 %r8, %f3;
  shfl.sync.down.b32 %r9|%p2, %r8, 3, 31, -1;
  mov.b32 %f4, %r9; mul.f32 %f5, %f4, 0f3F400000; add.f32 %f6, %f5, %f3; mov.b32 %r10, %f6;
  shfl.sync.up.b32 %r11|%p3, %r10, 5, 0, -1;
  xor.b32 %r12, %r11, %r5; add.s32 %r13, %r12, %r4;
  shfl.sync.idx.b32 %r14|%p4, %r13, 7, 31, -1;
  add.s32 %r15, %r14, %r13;
  shfl.sync.bfly.b32 %r16|%p5, %r15, 1, 31, -1;
  shfl.sync.bfly.b32 %r17|%p6, %r16, 2, 31, -1;
  selp.u32 %r18, 1, 0, %p1; selp.u32 %r19, 2, 0, %p2; selp.u32 %r20, 4, 0, %p3;
  selp.u32 %r21, 8, 0, %p4; selp.u32 %r22, 16, 0, %p5; selp.u32 %r23, 32, 0, %p6;
  or.b32 %r24, %r18, %r19; or.b32 %r24, %r24, %r20; or.b32 %r24, %r24, %r21; or.b32 %r24, %r24, %r22; or.b32 %r25, %r24, %r23;
  mul.wide.u32 %rd5, %r4, 12; add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r17; st.global.f32 [%rd6+4], %f6; st.global.u32 [%rd6+8], %r25;
$end:
  ret;
}`

function run(codegen: 'wasm' | 'js', block: [number, number, number], quit: number): { out: Uint32Array; inspect: string } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(PTX))
    const n = block[0] * block[1] * block[2]
    const din = upload(be, Int32Array.from({ length: n }, (_, t) => ((t * 37) % 101) - 50))
    const dout = be.alloc(n * 12)
    be.launch(mod.getFunction('chain'), { grid: [1, 1, 1], block, sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { u32: quit }]))
    return { out: download(be, dout, new Uint32Array(n * 3)), inspect: mod.inspect('chain') }
  } finally {
    be.dispose()
  }
}

const s = suite('wasm tier: a whole warp at once between constant shuffles')

s('mod.inspect names the run', () => {
  const { inspect } = run('wasm', [64, 1, 1], 1 << 20)
  assert.match(inspect, /SIMD across threads: .*a whole warp at once \(eight 4-lane values a register\) in the run of shuffles and arithmetic from PTX line \d+, where its 32 lanes all run/)
  assert.match(inspect, /tier: WebAssembly$/)
})

s('the JavaScript tier\'s values and predicates, bit for bit, in whole warps and where the run is not taken', () => {
  const cases: Array<[string, [number, number, number], number]> = [
    ['two whole warps', [64, 1, 1], 1 << 20],
    ['four whole warps', [128, 1, 1], 1 << 20],
    ['a warp cut short by the block (48 threads)', [48, 1, 1], 1 << 20],
    ['rows of 16 threads (a warp in two rows)', [16, 4, 1], 1 << 20],
    ['a lane of the second warp left before the shuffles', [64, 1, 1], 40],
    ['the first lane of the first warp left', [64, 1, 1], 0],
  ]
  for (const [name, block, quit] of cases) {
    const wasm = run('wasm', block, quit), js = run('js', block, quit)
    let diff = -1
    for (let i = 0; i < js.out.length; i++) if (wasm.out[i] !== js.out[i]) { diff = i; break }
    assert.is(diff, -1, `${name}: word ${diff} (thread ${Math.floor(diff / 3)}) is 0x${wasm.out[diff]?.toString(16)} on wasm, 0x${js.out[diff]?.toString(16)} on JS`)
    // the predicates tell the modes apart: bfly always in range, down 3 out of range for lanes 29–31, up 5
    // for lanes 0–4, idx 7 always
    if (quit >= 1 << 20) {
      const p = (t: number) => js.out[3 * t + 2]!
      assert.is(p(0), 1 | 2 | 8 | 16 | 32, `${name}: lane 0's predicates`)
      assert.is(p(30), 1 | 4 | 8 | 16 | 32, `${name}: lane 30's predicates`)
      assert.is(p(10), 63, `${name}: lane 10's predicates`)
    }
  }
})

// A lane loop with a loop in it before the shuffles (layernorm's strided partial sums): 4 lanes a turn, which
// leave the butterfly's inputs (their bits in the arrival mask, their values in the input slots) for the
// warp run after it.
const PSUM = `.version 8.0
.target sm_80
.address_size 64
.visible .entry psum(.param .u64 in, .param .u64 out, .param .u32 n)
{
  .reg .b64 %rd<8>; .reg .b32 %r<16>; .reg .f32 %f<8>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ntid.x;
  mov.f32 %f1, 0f00000000;
  setp.ge.s32 %p1, %r2, %r1;
  @%p1 bra $sum;
  mov.u32 %r4, %r2;
$loop:
  mul.wide.s32 %rd3, %r4, 4; add.s64 %rd4, %rd1, %rd3; ld.global.f32 %f2, [%rd4];
  add.f32 %f1, %f1, %f2;
  add.s32 %r4, %r4, %r3;
  setp.lt.s32 %p2, %r4, %r1;
  @%p2 bra $loop;
$sum:
  mov.b32 %r5, %f1; shfl.sync.bfly.b32 %r6, %r5, 16, 31, -1; mov.b32 %f3, %r6; add.f32 %f1, %f1, %f3;
  mov.b32 %r5, %f1; shfl.sync.bfly.b32 %r6, %r5, 8, 31, -1; mov.b32 %f3, %r6; add.f32 %f1, %f1, %f3;
  mov.b32 %r5, %f1; shfl.sync.bfly.b32 %r6, %r5, 4, 31, -1; mov.b32 %f3, %r6; add.f32 %f1, %f1, %f3;
  mov.b32 %r5, %f1; shfl.sync.bfly.b32 %r6, %r5, 2, 31, -1; mov.b32 %f3, %r6; add.f32 %f1, %f1, %f3;
  mov.b32 %r5, %f1; shfl.sync.bfly.b32 %r6, %r5, 1, 31, -1; mov.b32 %f3, %r6; add.f32 %f1, %f1, %f3;
  mul.wide.u32 %rd5, %r2, 4; add.s64 %rd6, %rd2, %rd5; st.global.f32 [%rd6], %f1;
  ret;
}`

function runPsum(codegen: 'wasm' | 'js', threads: number, n: number): { out: Uint32Array; inspect: string } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(PSUM))
    const din = upload(be, Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 211) / 8 - 13))
    const dout = be.alloc(threads * 4)
    be.launch(mod.getFunction('psum'), { grid: [1, 1, 1], block: [threads, 1, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { u32: n }]))
    return { out: download(be, dout, new Uint32Array(threads)), inspect: mod.inspect('psum') }
  } finally {
    be.dispose()
  }
}

s('a lane loop with a loop in it, 4 lanes a turn, leaves the butterfly\'s inputs: the JavaScript tier\'s sums', () => {
  assert.match(runPsum('wasm', 64, 1000).inspect, /4 consecutive threads of a row a step \(f32x4\/i32x4\) in one of its thread loops.*; a whole warp at once/)
  for (const [threads, n] of [[64, 1000], [64, 37], [96, 300], [48, 1000], [64, 61]] as const) {
    const wasm = runPsum('wasm', threads, n), js = runPsum('js', threads, n)
    assert.equal([...wasm.out], [...js.out], `${threads} threads, n = ${n}`)
  }
})

s.run()
