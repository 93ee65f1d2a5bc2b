// What a 4-lane turn of the wasm tier knows of its lanes' strides (emit-wasm.ts: vstride, rowAffine), each
// case against the JavaScript tier's bytes:
// 1. a register defined again inside a region the four lanes take together keeps the stride it gets there
//    only until the region ends: after it, the register holds that value or the one from before (a branch may
//    have skipped the region), so a shared load through it must not be read as one v128 of 4 consecutive
//    words where the lanes' words are 8 bytes apart;
// 2. a 2-D block's tile row (`As[ty][k]`: one word for the four lanes of a row) and column (`Bs[k][tx]`),
//    strides from forms with %tid.y as a term of its own, in rows of 16, 6 (a group of four and a cut one)
//    and 4 threads.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, marshal, ptxBytes, upload } from './helpers.js'

const REGION = `.version 8.0
.target sm_80
.address_size 64
.visible .entry region(.param .u64 out)
{
  .reg .b64 %rd<6>; .reg .b32 %r<12>; .reg .pred %p<3>;
  .shared .align 4 .b32 sh[512];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, sh;
  add.s32 %r5, %r4, %r3;
  mul.lo.s32 %r6, %r1, 3;
  add.s32 %r6, %r6, %r2;
  st.shared.u32 [%r5], %r6;
  add.s32 %r7, %r5, 256;
  st.shared.u32 [%r7], %r6;
  bar.sync 0;
  shl.b32 %r8, %r1, 3;
  add.s32 %r8, %r4, %r8;
  setp.ne.s32 %p1, %r2, 1;
  @%p1 bra $skip;
  shl.b32 %r9, %r1, 2;
  add.s32 %r8, %r4, %r9;
$skip:
  ld.shared.u32 %r10, [%r8];
  mul.wide.u32 %rd2, %r1, 4;
  mul.wide.u32 %rd3, %r2, 256;
  add.s64 %rd4, %rd1, %rd2;
  add.s64 %rd5, %rd4, %rd3;
  st.global.u32 [%rd5], %r10;
  ret;
}`

const TILE = `.version 8.0
.target sm_80
.address_size 64
.visible .entry tile(.param .u64 out, .param .u32 w)
{
  .reg .b64 %rd<6>; .reg .b32 %r<16>;
  .shared .align 4 .b32 As[256];
  ld.param.u64 %rd1, [out]; ld.param.u32 %r11, [w];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y;
  mad.lo.s32 %r3, %r2, %r11, %r1;
  shl.b32 %r4, %r3, 2;
  mov.u32 %r5, As;
  add.s32 %r6, %r5, %r4;
  mad.lo.s32 %r7, %r3, 7, 1;
  st.shared.u32 [%r6], %r7;
  bar.sync 0;
  mul.lo.s32 %r8, %r2, %r11;
  shl.b32 %r8, %r8, 2;
  add.s32 %r9, %r5, %r8;
  ld.shared.u32 %r10, [%r9+4];
  shl.b32 %r12, %r1, 2;
  add.s32 %r13, %r5, %r12;
  ld.shared.u32 %r14, [%r13];
  mul.lo.s32 %r15, %r10, 1000;
  add.s32 %r15, %r15, %r14;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r15;
  ret;
}`

function run(ptx: string, entry: string, codegen: 'wasm' | 'js', grid: number, block: [number, number, number], extra: Array<{ u32: number }>, words: number): { out: Uint32Array; inspect: string } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    const dout = upload(be, new Uint32Array(words))
    be.launch(mod.getFunction(entry), { grid: [grid, 1, 1], block, sharedBytes: 0 }, marshal([{ u64: dout }, ...extra]))
    return { out: download(be, dout, new Uint32Array(words)), inspect: mod.inspect(entry) }
  } finally {
    be.dispose()
  }
}

const s = suite('wasm tier: the strides a 4-lane turn knows')

s('a register defined again in a region the lanes take together has no known stride after it', () => {
  const wasm = run(REGION, 'region', 'wasm', 2, [64, 1, 1], [], 128), js = run(REGION, 'region', 'js', 2, [64, 1, 1], [], 128)
  assert.match(wasm.inspect, /4 consecutive threads of a row a step \(f32x4\/i32x4\) in 2 of its thread loops/)
  assert.equal([...wasm.out], [...js.out])
  // block 0 skips the region: thread t reads word 2t (t·8 bytes): 2t·3 + 0 below 32, then the second copy
  assert.equal([...wasm.out.slice(0, 4)], [0, 6, 12, 18])
  // block 1 takes it: word t, t·3 + 1
  assert.equal([...wasm.out.slice(64, 68)], [1, 4, 7, 10])
})

s('a tile\'s row (one word for four lanes) and column (consecutive words), with %tid.y in the address', () => {
  for (const w of [16, 6, 4]) {
    const block: [number, number, number] = [w, 4, 1]
    const wasm = run(TILE, 'tile', 'wasm', 1, block, [{ u32: w }], w * 4), js = run(TILE, 'tile', 'js', 1, block, [{ u32: w }], w * 4)
    assert.match(wasm.inspect, /4 consecutive threads of a row a step/, `rows of ${w}`)
    assert.equal([...wasm.out], [...js.out], `rows of ${w}`)
    // thread (x, y) reads As[y][1] = (y·w + 1)·7 + 1 and As[0][x] = x·7 + 1
    assert.equal([...wasm.out], Array.from({ length: w * 4 }, (_, t) => ((Math.floor(t / w) * w + 1) * 7 + 1) * 1000 + (t % w) * 7 + 1), `rows of ${w}`)
  }
})

s.run()
