// cfg.ts: basic blocks, edges, dominators, post-dominators, natural loops, control dependence.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { controlDependence, dominates } from '@kernelpack/ptx'
import { kernel } from './helpers.js'

const cfg = suite('buildCfg')

// blocks: 0 [mov, setp, @p bra $skip] 1 [add] 2 $loop [add, setp, @p bra $loop] 3 [@p ret] 4 $skip [ret] 5 $end []
const body = `  mov.u32 %r1, %tid.x;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $skip;
  add.s32 %r2, %r1, 1;
$loop:
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p2, %r2, 10;
  @%p2 bra $loop;
  @%p1 ret;
$skip:
  ret;
$end:`

cfg('blocks start at labels and after branches; edges follow guards', () => {
  const { cfg: g } = kernel(body)
  assert.equal(g.blocks.map((b) => [b.start, b.end, b.labels, b.succs, b.exits]), [
    [0, 3, [], [4, 1], false],
    [3, 4, [], [2], false],
    [4, 7, ['$loop'], [2, 3], false],
    [7, 8, [], [4], true],
    [8, 9, ['$skip'], [], true],
    [9, 9, ['$end'], [], true],
  ])
  assert.equal([...g.blockOf], [0, 0, 0, 1, 2, 2, 2, 3, 4])
  assert.equal(g.blocks[4]!.preds, [0, 3])
})

cfg('dominators, post-dominators, loops and control dependence', () => {
  const { cfg: g } = kernel(body)
  assert.equal([...g.idom], [-1, 0, 1, 2, 0, -1])
  assert.ok(dominates(g, 0, 3) && dominates(g, 2, 3) && !dominates(g, 1, 4))
  // block 3 (`@p ret`) may leave the function: only the virtual exit post-dominates it
  // both paths from block 0 may leave the function (the guarded ret in block 3): no block post-dominates it
  assert.equal([...g.ipdom], [-1, 2, 3, -1, -1, -1])
  assert.equal(g.loops.map((l) => [l.header, l.blocks, l.latches, l.parent]), [[2, [2], [2], -1]])
  assert.equal([...g.loopOf], [-1, -1, 0, -1, -1, -1])
  // the loop body runs under its own back edge; the code after the guarded ret under it
  assert.equal(controlDependence(g), [[], [0], [0, 2], [0], [0, 3], []])
})

cfg('brx.idx goes to every label of its .branchtargets list (clang\'s switch jump tables)', () => {
  const { cfg: g } = kernel(`  mov.u32 %r1, %tid.x;
  $L_brx_0: .branchtargets $c0, $c1;
  brx.idx %r1, $L_brx_0;
$c0:
  ret;
$c1:
  ret;`)
  assert.equal(g.blocks.map((b) => [b.start, b.end, b.succs]), [[0, 2, [1, 2]], [2, 3, []], [3, 4, []]])
})

cfg.run()
