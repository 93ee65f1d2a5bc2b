// analysis/tx-range.ts: the tx interval of a block-level thread loop whose first act is `@p bra` past its code,
// p = `%tid.x cmp y`. A tree reduction's step as nvcc rotates `for (half = n / 2; half > 32; half >>= 1) if (t <
// half) …`: every thread computes half = h >> 1 in the loop, then compares. Without knowing that a writer
// computes that shift once before the loop, the bound is set in the loop and there is no interval; with it
// (`computedBefore`), [0, half) and the branch no thread of it takes.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeAffine, analyzeLiveness, assignRegisterClasses, planThreadLoops, structureFunction, threadLoopTxRange, type ScheduleItem, type ThreadLoop } from '@kernelpack/ptx'
import { at, kernel } from '../helpers.js'

const BODY = `  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, tile;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
  bar.sync 0;
  mov.u32 %r5, %ntid.x;
$L_step:
  shr.u32 %r6, %r5, 1;
  setp.ge.u32 %p1, %r1, %r6;
  @%p1 bra $L_skip;
  shl.b32 %r7, %r6, 2;
  add.s32 %r8, %r4, %r7;
  ld.shared.u32 %r9, [%r4];
  ld.shared.u32 %r10, [%r8];
  add.s32 %r11, %r9, %r10;
  st.shared.u32 [%r4], %r11;
$L_skip:
  bar.sync 0;
  setp.gt.u32 %p2, %r5, 131;
  mov.u32 %r5, %r6;
  @%p2 bra $L_step;
  ret;`

/** The block-level thread loops of the schedule, in order. */
function threadLoops(items: readonly ScheduleItem[]): ThreadLoop[] {
  return items.flatMap((it) => (it.kind === 'threads' ? (it.level === 'block' && !it.once ? [it] : []) : it.kind === 'region' || it.kind === 'warps' ? threadLoops(it.body) : []))
}

/** The kernel's analyses and the block-level thread loop holding the instruction `at` finds for `marker`;
 *  `range(computedBefore)` is its interval. */
function loopAround(body: string, marker: string) {
  const { fn, cfg } = kernel(body)
  const structure = structureFunction(fn)
  const p = planThreadLoops(fn, { cfg, structure, liveness: analyzeLiveness(fn, cfg) })
  if (p.kind !== 'loops') throw new Error(`expected thread loops: ${p.reason}`)
  const affine = analyzeAffine(fn, cfg, assignRegisterClasses(fn), { wideParams: true })
  const loop = threadLoops(p.schedule).find((it) => it.start <= at(fn, marker) && at(fn, marker) < it.end)
  assert.ok(loop, `the thread loop of ${marker}`)
  return { fn, range: (computedBefore?: ReadonlySet<number>) => threadLoopTxRange(fn, loop!, p, structure, affine, cfg, computedBefore) }
}

const s = suite('threadLoopTxRange')

s('a bound the loop computes before its branch: an interval only where a writer computes it before the loop', () => {
  const { fn, range } = loopAround(BODY, 'shr.u32')
  assert.is(range(), undefined)
  assert.is(range(new Set([at(fn, 'shl.b32', 1)])), undefined, 'another instruction computed before')
  const r = range(new Set([at(fn, 'shr.u32')]))
  assert.ok(r)
  assert.equal([r!.lo, r!.hi], ['0', 'Y'])
  assert.is(r!.signed, false)
  assert.equal(r!.y, { kind: 'reg', id: fn.registers.findIndex((x) => x.name === '%r6') })
  assert.is(r!.branch, at(fn, '@%p1 bra'))
})

/** nvcc's `if (t == 0) out[…] = s[0]` after a barrier: the test computed before the barrier, kept per thread. */
const AFTER = `  bar.sync 0;
  @%p1 bra $L_done;
  ld.shared.u32 %r9, [tile];
  st.shared.u32 [tile+4], %r9;
$L_done:
  ret;`
const HOISTED = (pre: string, test: string) => `  mov.u32 %r1, %tid.x;
${pre}  ${test}
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, tile;
  add.s32 %r4, %r3, %r2;
  st.shared.u32 [%r4], %r1;
${AFTER}`

/** The interval of the thread loop after the barrier, or undefined. */
const afterBarrier = (body: string) => loopAround(body, '@%p1 bra').range()

s('a predicate computed once before the loop (its one definition, outside loops, on every path): its interval', () => {
  const r = afterBarrier(HOISTED('', 'setp.ne.s32 %p1, %r1, 0;'))
  assert.ok(r)
  assert.equal([r!.lo, r!.hi], ['Y', 'Y1'])
  assert.equal(r!.y.kind, 'imm')
  // a block-uniform bound defined once before it
  const b = afterBarrier(HOISTED('  mov.u32 %r20, %ntid.x;\n  shr.u32 %r21, %r20, 1;\n', 'setp.ge.u32 %p1, %r1, %r21;'))
  assert.ok(b)
  assert.equal([b!.lo, b!.hi], ['0', 'Y'])
})

s('not where the predicate may differ from %tid.x cmp y: two definitions, one in a loop, one not on every path', () => {
  // defined twice
  assert.is(afterBarrier(HOISTED('  setp.lt.u32 %p1, %r1, 3;\n', 'setp.ne.s32 %p1, %r1, 0;')), undefined)
  // defined on one path only (a thread with tid.x >= 64 never computes it)
  assert.is(afterBarrier(`  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p2, %r1, 64;
  @%p2 bra $L_join;
  setp.ne.s32 %p1, %r1, 0;
$L_join:
${AFTER}`), undefined)
  // computed in a loop (its bound changes from trip to trip)
  assert.is(afterBarrier(`  mov.u32 %r1, %tid.x;
  mov.u32 %r5, 8;
$L_again:
  setp.lt.u32 %p1, %r1, %r5;
  shr.u32 %r5, %r5, 1;
  setp.ne.s32 %p3, %r5, 0;
  @%p3 bra $L_again;
${AFTER}`), undefined)
  // a bound that is not the same for the whole block
  assert.is(afterBarrier(HOISTED('  mov.u32 %r20, %tid.y;\n', 'setp.ge.u32 %p1, %r1, %r20;')), undefined)
})

s.run()
