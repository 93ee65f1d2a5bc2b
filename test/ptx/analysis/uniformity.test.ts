// analysis/uniformity.ts: grid / block / warp / thread uniformity through operands, loads, definitions on
// both sides of a branch (phis) and control dependence.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeUniformity } from '@kernelpack/ptx'
import { kernel, reg } from '../helpers.js'

const un = suite('analyzeUniformity')

un('sources: %tid.x divergent, %ctaid.x uniform over a block, parameters and %ntid over the grid, %warpid over a warp', () => {
  const { fn, cfg } = kernel(`  ld.param.u64 %rd1, [k_a];
  ld.param.u32 %r1, [k_n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mad.lo.s32 %r5, %r3, %r4, %r2;
  mul.lo.s32 %r6, %r3, %r4;
  add.s32 %r7, %r1, %r4;
  mov.u32 %r8, %warpid;
  shl.b32 %r9, %r8, 5;
  ret;`)
  const u = analyzeUniformity(fn, cfg)
  const of = (n: string) => u.register[reg(fn, n)]
  assert.equal([of('%rd1'), of('%r1'), of('%r4'), of('%r7')], ['grid', 'grid', 'grid', 'grid'])
  assert.equal([of('%r2'), of('%r5')], ['thread', 'thread'])
  assert.equal([of('%r3'), of('%r6')], ['block', 'block'])
  assert.equal([of('%r8'), of('%r9')], ['warp', 'warp'])
})

un('through loads: read-only memory keeps the address\'s level, writable memory and atomics diverge', () => {
  const { fn, cfg } = kernel(`  ld.param.u64 %rd1, [k_a];
  mov.u32 %r1, %ctaid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.nc.u32 %r2, [%rd3];
  ld.global.u32 %r3, [%rd3];
  ld.const.u32 %r4, [%rd1];
  mov.u32 %r5, %tid.x;
  mul.wide.u32 %rd4, %r5, 4;
  add.s64 %rd5, %rd1, %rd4;
  ld.global.nc.u32 %r6, [%rd5];
  atom.global.add.u32 %r7, [%rd1], 1;
  ret;`)
  const u = analyzeUniformity(fn, cfg)
  const of = (n: string) => u.register[reg(fn, n)]
  assert.equal([of('%rd3'), of('%r2'), of('%r3'), of('%r4')], ['block', 'block', 'thread', 'grid'])
  assert.equal([of('%rd5'), of('%r6'), of('%r7')], ['thread', 'thread', 'thread'])
})

un('phis and control dependence: a value set on one side of a divergent branch diverges; of a block-uniform branch it does not', () => {
  const { fn, cfg } = kernel(`  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $a;
  mov.u32 %r3, 1;
$a:
  setp.eq.s32 %p2, %r2, 0;
  @%p2 bra $b;
  mov.u32 %r4, 1;
$b:
  @%p1 mov.u32 %r5, 1;
  ret;`)
  const u = analyzeUniformity(fn, cfg)
  const of = (n: string) => u.register[reg(fn, n)]
  assert.equal([of('%p1'), of('%r3'), of('%p2'), of('%r4'), of('%r5')], ['thread', 'thread', 'block', 'block', 'thread'])
  assert.equal(u.block, ['grid', 'thread', 'grid', 'block', 'grid'])
})

un('a loop whose exit diverges makes its induction variable diverge; warp collectives give warp-uniform results', () => {
  const { fn, cfg } = kernel(`  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
$loop:
  add.s32 %r2, %r2, 1;
  add.s32 %r3, %r3, 1;
  setp.lt.s32 %p1, %r2, %r1;
  @%p1 bra $loop;
  setp.ne.s32 %p2, %r1, 0;
  vote.sync.ballot.b32 %r4, %p2, -1;
  shfl.sync.idx.b32 %r5, %r1, 0, 31, -1;
  shfl.sync.down.b32 %r6, %r1, 1, 31, -1;
  bar.red.popc.u32 %r7, 0, %p2;
  ret;`)
  const u = analyzeUniformity(fn, cfg)
  const of = (n: string) => u.register[reg(fn, n)]
  assert.equal([of('%r2'), of('%r3')], ['thread', 'thread'])
  assert.equal([of('%r4'), of('%r5'), of('%r6'), of('%r7')], ['warp', 'warp', 'thread', 'block'])
})

un.run()
