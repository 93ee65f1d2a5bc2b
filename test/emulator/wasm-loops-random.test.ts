// Random block-stride loops in thread loops on the wasm tier against the JavaScript tier (issue 24): the
// shapes the 4-lane turns' loop machinery handles (vloopPrecheck's pre-pass, vwideStrided's 64-bit addresses
// as lane 0 and a stride, a loop's stepped index, strides inside regions), drawn by fast-check with a fixed
// seed: block widths that are and are not multiples of 4, 1–3 rows, loop bounds from 0 past the block,
// index scales 1–3 (consecutive words or not), an optional `break` on a second bound, an optional store
// skipped on odd indices, and buffers cut short so that some launches fault inside the loop. Each launch must
// give the JavaScript tier's bytes and a hand computation's (both tiers read the same affine facts), or the
// JavaScript tier's fault (message and address).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { createEmulatorBackend, EmulatorFault } from '@kernelpack/emulator'
import { download, marshal, ptxBytes, upload } from './helpers.js'

interface Shape { ntx: number; nty: number; n: number; lim: number; scale: number; brk: boolean; odd: boolean; cutX: number; cutY: number }

function kernelPtx(s: Shape): string {
  return `.version 8.0
.target sm_80
.address_size 64
.visible .entry loop(.param .u64 x, .param .u64 y, .param .u32 n, .param .u32 lim)
{
  .reg .b64 %rd<10>; .reg .b32 %r<20>; .reg .f32 %f<6>; .reg .pred %p<6>;
  .shared .align 4 .f32 sh[1024];
  ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y]; ld.param.u32 %r1, [n]; ld.param.u32 %r9, [lim];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ntid.x; mov.u32 %r12, %tid.y; mov.u32 %r13, %ntid.y;
  mad.lo.s32 %r14, %r12, %r3, %r2;
  mul.lo.s32 %r15, %r3, %r13;
  shl.b32 %r5, %r14, 2; mov.u32 %r6, sh; add.s32 %r7, %r6, %r5;
  cvt.rn.f32.u32 %f1, %r14;
  st.shared.f32 [%r7], %f1;
  bar.sync 0;
  ld.shared.f32 %f1, [sh+4];
  setp.ge.s32 %p1, %r14, %r1;
  @%p1 bra $done;
  mov.u32 %r4, %r14;
$loop:
${s.brk ? '  setp.ge.s32 %p3, %r4, %r9;\n  @%p3 bra $done;\n' : ''}  mul.lo.s32 %r16, %r4, ${s.scale};
  cvt.s64.s32 %rd3, %r16;
  shl.b64 %rd4, %rd3, 2;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.f32 %f2, [%rd5];
  add.rn.f32 %f3, %f2, %f1;
${s.odd ? '  and.b32 %r17, %r4, 1;\n  setp.ne.s32 %p4, %r17, 0;\n  @%p4 bra $skip;\n' : ''}  add.s64 %rd6, %rd2, %rd4;
  st.global.f32 [%rd6], %f3;
${s.odd ? '$skip:\n' : ''}  add.s32 %r4, %r4, %r15;
  setp.lt.s32 %p2, %r4, %r1;
  @%p2 bra $loop;
$done:
  ret;
}`
}

function run(s: Shape, codegen: 'wasm' | 'js'): { y?: Uint32Array; fault?: EmulatorFault; tier: string } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(kernelPtx(s)))
    const words = Math.max(1, s.n * s.scale)
    const dx = upload(be, Float32Array.from({ length: Math.max(1, words - s.cutX) }, (_, i) => i * 0.25 - 3))
    const ylen = Math.max(1, words - s.cutY)
    const dy = upload(be, new Uint32Array(ylen).fill(0xdeadbeef))
    try {
      be.launch(mod.getFunction('loop'), { grid: [1, 1, 1], block: [s.ntx, s.nty, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }, { u32: s.n }, { u32: s.lim }]))
    } catch (e) {
      if (!(e instanceof EmulatorFault)) throw e
      return { fault: e, tier: mod.inspect('loop') }
    }
    return { y: download(be, dy, new Uint32Array(ylen)), tier: mod.inspect('loop') }
  } finally {
    be.dispose()
  }
}

const shape: fc.Arbitrary<Shape> = fc.record({
  ntx: fc.oneof(fc.constantFrom(4, 8, 16, 32, 64), fc.integer({ min: 1, max: 40 })),
  nty: fc.integer({ min: 1, max: 3 }),
  n: fc.integer({ min: 0, max: 300 }),
  lim: fc.integer({ min: 0, max: 320 }),
  scale: fc.integer({ min: 1, max: 3 }),
  brk: fc.boolean(),
  odd: fc.boolean(),
  cutX: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 9 })),
  cutY: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 9 })),
})

const s = suite('wasm tier: random block-stride loops in thread loops, as the JavaScript tier runs them')

s('bytes or the same fault, on every drawn shape', () => {
  let vectorized = 0
  fc.assert(fc.property(shape, (sh) => {
    const wasm = run(sh, 'wasm'), js = run(sh, 'js')
    if (/in 2 of its thread loops/.test(wasm.tier)) vectorized++
    if (js.fault || wasm.fault) {
      assert.ok(js.fault && wasm.fault, `${JSON.stringify(sh)}: ${js.fault?.message ?? 'no fault on JS'} / ${wasm.fault?.message ?? 'no fault on wasm'}`)
      assert.is(wasm.fault!.message, js.fault!.message, JSON.stringify(sh))
      assert.is(wasm.fault!.address, js.fault!.address, JSON.stringify(sh))
      return
    }
    assert.equal([...wasm.y!], [...js.y!], JSON.stringify(sh))
    // and the hand computation's: y[c·scale] = x[c·scale] + sh[1] for every index c the loop reaches (sh[1] is
    // thread 1's, 1, where the block has a thread 1; buffers cut short may be read past their end without a
    // fault, inside the allocation's rounding, which the hand computation does not model)
    if (sh.ntx * sh.nty < 2 || sh.cutX || sh.cutY) return
    const want = new Uint32Array(js.y!.length).fill(0xdeadbeef)
    const f = new Float32Array(1), u = new Uint32Array(f.buffer)
    for (let c = 0; c < sh.n && (!sh.brk || c < sh.lim); c++) {
      if (sh.odd && c % 2 === 1) continue
      f[0] = Math.fround(c * sh.scale * 0.25 - 3 + 1)
      want[c * sh.scale] = u[0]!
    }
    assert.equal([...wasm.y!], [...want], `${JSON.stringify(sh)}: against the hand computation`)
  }), { numRuns: Number(process.env.KP_WASM_LOOP_RUNS ?? 120), seed: Number(process.env.KP_WASM_LOOP_SEED ?? 45), includeErrorInReport: true })
  // the loop's turn takes 4 threads in most shapes (the property would be empty otherwise)
  assert.ok(vectorized > 40, `${vectorized} of the drawn kernels had their loop's thread loop in 4-lane turns`)
})

s.run()
