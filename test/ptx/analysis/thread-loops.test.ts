// analysis/thread-loops.ts: region formation — loops over a block's threads between barriers, values kept
// per thread only when they differ between threads, control flow around barriers run once per block, warp
// collectives as lane loops where divergent lanes wait, and the fallback (with its reason) where threads of
// a block could disagree about a barrier.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeLiveness, planThreadLoops, structureFunction, type IrFunction, type ScheduleItem, type ThreadLoopPlan, type ThreadLoopSchedule } from '@kernelpack/ptx'
import { at, kernel } from '../helpers.js'

function plan(body: string): { fn: IrFunction; p: ThreadLoopPlan } {
  const { fn, cfg } = kernel(body)
  return { fn, p: planThreadLoops(fn, { cfg, structure: structureFunction(fn), liveness: analyzeLiveness(fn, cfg) }) }
}

function loops(body: string): { fn: IrFunction; p: ThreadLoopSchedule } {
  const { fn, p } = plan(body)
  if (p.kind !== 'loops') throw new Error(`expected thread loops, got a fallback: ${p.reason}`)
  return { fn, p }
}

/** The schedule as a compact outline: T (block thread loop), O (once per block), L (lane loop), | (barrier),
 *  c (collective), W[…] (warp by warp), loop/if/block[…] (regions). */
function outline(items: ScheduleItem[]): string {
  return items.map((it) => {
    switch (it.kind) {
      case 'threads': return it.once ? 'O' : it.level === 'block' ? 'T' : 'L'
      case 'barrier': return '|'
      case 'collective': return 'c'
      case 'warps': return `W[${outline(it.body)}]`
      case 'region': return `${it.node.kind}[${outline(it.body)}]`
    }
  }).join(' ')
}

const names = (fn: IrFunction, rs: number[]) => rs.map((r) => fn.registers[r]!.name)

const tl = suite('planThreadLoops')

tl('values live across a barrier are kept per thread only when they differ between threads', () => {
  const { fn, p } = loops(`  ld.param.u64 %rd1, [k_a];
  ld.param.u32 %r1, [k_n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ctaid.x;
  mul.lo.s32 %r4, %r3, %r1;
  shl.b32 %r5, %r2, 2;
  add.s32 %r6, %r2, %r4;
  mov.u32 %r7, tile;
  add.s32 %r8, %r7, %r5;
  st.shared.u32 [%r8], %r6;
  bar.sync 0;
  ld.shared.u32 %r9, [%r8+4];
  add.s32 %r10, %r9, %r4;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r10;
  ret;`)
  assert.is(outline(p.schedule), 'T | T')
  // the thread's index and its shared address differ per thread; the block's offset and the pointer do not
  assert.equal(names(fn, p.perThread), ['%r6', '%r8'])
  assert.ok(names(fn, p.perBlock).includes('%r4') && names(fn, p.perBlock).includes('%rd1'))
  const [first, , second] = p.schedule as [Extract<ScheduleItem, { kind: 'threads' }>, ScheduleItem, Extract<ScheduleItem, { kind: 'threads' }>]
  assert.equal(names(fn, first.stores), ['%r6', '%r8'])
  assert.equal(names(fn, second.loads), ['%r6', '%r8'])
})

tl('a barrier in a loop with a uniform trip count: the loop runs once per block around thread loops, its back edge decided once', () => {
  const { fn, p } = loops(`  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [k_n];
  shl.b32 %r4, %r1, 2;
  mov.u32 %r3, 0;
$loop:
  st.shared.u32 [%r4], %r3;
  bar.sync 0;
  ld.shared.u32 %r5, [%r4+4];
  add.s32 %r3, %r3, 1;
  setp.lt.s32 %p1, %r3, %r2;
  @%p1 bra $loop;
  ret;`)
  assert.is(outline(p.schedule), 'T loop[T | T] T')
  assert.equal(p.departures.get(at(fn, '@%p1 bra')), { kind: 'uniform', target: { kind: 'continue', node: 0 } })
  // the trip counter is one value per block; each thread restarts from its value at the loop's top
  assert.ok(names(fn, p.perBlock).includes('%r3'))
  const body = (p.schedule[1] as Extract<ScheduleItem, { kind: 'region' }>).body
  assert.equal(names(fn, (body[2] as Extract<ScheduleItem, { kind: 'threads' }>).restores), ['%r3'])
  assert.equal(names(fn, p.perThread), ['%r4'])
})

tl('a barrier under a branch that differs between threads falls back, naming the branch', () => {
  const { fn, p } = plan(`  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra $skip;
  bar.sync 0;
$skip:
  st.shared.u32 [tile], %r1;
  bar.sync 0;
  ret;`)
  assert.is(p.kind, 'fallback')
  if (p.kind !== 'fallback') return
  assert.is(p.line, fn.instructions[at(fn, '@%p1 bra')]!.line)
  assert.match(p.reason, /branch at PTX line \d+ \(`@%p1 bra \$skip`\) goes around a barrier/)
  // so does a loop around a barrier whose trip count differs per thread
  const { p: q } = plan(`  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
$loop:
  bar.sync 0;
  add.s32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra $loop;
  ret;`)
  assert.is(q.kind, 'fallback')
})

tl('threads that return before a barrier (if (i >= n) return;) end there; the rest stays uniform', () => {
  const { fn, p } = loops(`  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [k_n];
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra $done;
  st.shared.u32 [tile], %r1;
  bar.sync 0;
  ld.shared.u32 %r3, [tile];
$done:
  ret;`)
  assert.equal(p.departures.get(at(fn, '@%p1 bra'))?.kind, 'exit')
  assert.ok(p.threadsEnd)
})

tl('warp collectives under divergent control: lane loops, lanes that branch wait at the end of the if', () => {
  const { fn, p } = loops(`  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra $skip;
  shfl.sync.down.b32 %r2, %r1, 1, 31, -65536;
  add.s32 %r1, %r1, %r2;
$skip:
  st.shared.u32 [tile], %r1;
  ret;`)
  assert.is(outline(p.schedule), 'W[L if[L c L] L]')
  assert.equal(p.departures.get(at(fn, '@%p1 bra'))?.kind, 'park')
  assert.ok(p.warps)
})

tl('code the same for every thread between barriers runs once per block', () => {
  const { p } = loops(`  mov.u32 %r1, %tid.x;
  st.shared.u32 [tile], %r1;
  bar.sync 0;
  ld.param.u32 %r2, [k_n];
  shr.u32 %r3, %r2, 1;
  bar.sync 0;
  st.shared.u32 [tile], %r3;
  ret;`)
  assert.is(outline(p.schedule), 'T | O | T')
})

tl.run()
