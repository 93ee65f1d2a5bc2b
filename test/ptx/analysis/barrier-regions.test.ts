// analysis/barrier-regions.ts and collectives.ts: the regions of a kernel with two barriers, one inside a
// loop; warp regions cut at warp collectives too.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeBarrierRegions, collectiveOf, RETURN_EXIT } from '@kernelpack/ptx'
import { at, kernel } from '../helpers.js'

const twoBarriers = `  mov.u32 %r1, %tid.x;
  st.shared.u32 [tile], %r1;
  bar.sync 0;
  mov.u32 %r2, 0;
$loop:
  ld.shared.u32 %r3, [tile];
  bar.sync 0;
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p1, %r2, 4;
  @%p1 bra $loop;
  st.global.u32 [%rd1], %r3;
  ret;`

const br = suite('analyzeBarrierRegions')

br('two barriers, one inside a loop: three regions, the loop\'s head shared through the back edge', () => {
  const { fn, cfg } = kernel(twoBarriers)
  const b1 = at(fn, 'bar.sync'), b2 = at(fn, 'bar.sync', 1)
  const r = analyzeBarrierRegions(fn, cfg)
  assert.equal(r.cuts, [b1, b2])
  assert.equal(r.regions.map((x) => [x.entry, x.after, x.instructions, x.exits, x.singleEntry]), [
    [0, undefined, [0, 1], [b1], true],
    // after the first barrier: into the loop, up to the barrier inside it; the loop's head (4) is also
    // reached from the next region through the back edge, so neither is single-entry
    [b1 + 1, b1, [3, 4], [b2], false],
    // after the loop's barrier: the rest of the iteration, then either around to the barrier again
    // (through the loop's head, which the previous region also runs) or out of the loop to the return
    [b2 + 1, b2, [4, 6, 7, 8, 9, 10], [RETURN_EXIT, b2], false],
  ])
  assert.equal(r.regionsAt(4), [1, 2])
})

br('warp regions are cut at warp collectives as well; bar.arrive is no cut', () => {
  const { fn, cfg } = kernel(`  mov.u32 %r1, %tid.x;
  shfl.sync.down.b32 %r2, %r1, 1, 31, -1;
  bar.arrive 0, 64;
  add.s32 %r3, %r2, 1;
  bar.sync 0;
  vote.sync.all.pred %p1, %p2, -1;
  ret;`)
  assert.equal(fn.instructions.map((x) => collectiveOf(x)?.kind), [undefined, 'shfl', undefined, undefined, 'bar', 'vote', undefined])
  const block = analyzeBarrierRegions(fn, cfg, 'block')
  const warp = analyzeBarrierRegions(fn, cfg, 'warp')
  assert.equal(block.regions.map((x) => [x.entry, x.exits]), [[0, [4]], [5, [RETURN_EXIT]]])
  assert.equal(warp.regions.map((x) => [x.entry, x.exits]), [[0, [1]], [2, [4]], [5, [5]], [6, [RETURN_EXIT]]])
})

br.run()
