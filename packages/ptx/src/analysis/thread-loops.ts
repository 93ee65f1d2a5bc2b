// Thread loops (POCL's "work-item loops", MCUDA's "loop fission", COX's hierarchical collapsing): a plan for
// running a kernel's threads on one CPU thread. The code between two barriers runs as one loop over the
// block's threads; control flow that contains a barrier runs once per block around those loops, its
// decisions taken once (every thread takes them alike); a stretch of code with warp collectives runs warp
// by warp, as loops over the warp's 32 lanes between the collectives, which are computed from the inputs
// the lanes left (collectives.ts). Control flow that contains a collective runs once per warp; where its
// lanes disagree (a divergent `if`, a loop whose trip count differs per lane), a lane that leaves waits
// ("parks") at the point where it rejoins the others, as a GPU's reconvergence does.
//
// Values live from one loop to the next are kept per thread (one slot per thread in an array) only when the
// uniformity analysis says they can differ between threads; values the same for the whole block stay one
// value (CuPBoP's scheme). A thread that returns ends; a thread that jumps past barriers to code that only
// returns (`if (i >= n) return;` before a `__syncthreads()`) runs that code at once and ends, as it would on
// a GPU, where an exited thread does not take part in later barriers. For this the analysis sees the
// control flow of the threads still running (cfgWithoutEdges: the edges into such terminal code dropped),
// so those early exits do not make the rest of the kernel look divergent.
//
// Not formable — the writer falls back to suspending threads one by one — are kernels with unstructured
// control flow and kernels where threads of one block would disagree about a barrier: a branch around a
// barrier (or a loop's trip count around one) that differs between threads, or a barrier only some reach.
import { cfgWithoutEdges, type BasicBlock, type Cfg } from '../cfg.js'
import { collectiveOf, collectiveScope } from '../collectives.js'
import { definedRegisters, usedRegisters, type IrFunction } from '../ir.js'
import type { BranchTarget, StructNode, StructRegion, Structure } from '../structure.js'
import type { Liveness } from './liveness.js'
import { analyzeLockstep, type LockstepPoint } from './lockstep.js'
import { analyzeUniformity, type UniformityFacts } from './uniformity.js'

/** A loop over the block's threads, or (inside a `warps` item) over one warp's lanes. */
export type LoopLevel = 'block' | 'warp'

export interface ThreadLoop {
  kind: 'threads'
  level: LoopLevel
  /** The structure nodes it runs for each thread (instructions [start, end); none for a loop that only
   *  hands out or collects a collective's values). */
  nodes: StructNode[]
  start: number
  end: number
  /** Per-thread registers read from their slots at the start of each thread's turn (or recomputed, see
   *  `recomputed`), written back at its end. */
  loads: number[]
  stores: number[]
  /** Registers with one value per block that the loop reads and also writes: each thread starts from the
   *  value they had before the loop. */
  restores: number[]
  /** The collective (instruction index) whose results each thread takes at its start / whose inputs it
   *  leaves at its end. */
  scatter?: number
  gather?: number
  /** Block level: its code only computes values the same for every thread (no memory writes, no loads but
   *  of parameters and constants, no returns), so it runs once per block instead of once per thread. */
  once?: boolean
}

export type ScheduleItem =
  | ThreadLoop
  /** Code with warp collectives, run warp by warp: `body` is a warp-level schedule. */
  | { kind: 'warps'; start: number; end: number; body: ScheduleItem[]; restores: number[] }
  /** A block barrier (`bar.sync`, `bar.red`): the loops before it end here. */
  | { kind: 'barrier'; index: number }
  /** A warp collective between two lane loops. */
  | { kind: 'collective'; index: number }
  /** A structure node containing barriers (block level) or collectives (warp level), run once per group. */
  | { kind: 'region'; level: LoopLevel; node: StructRegion; body: ScheduleItem[] }

/** How a branch that leaves its thread loop is taken. */
export type Departure =
  /** Every thread of the block takes it alike: decided once, after the loop. */
  | { kind: 'uniform'; target: BranchTarget }
  /** Warp level: the lane waits at the target until the warp gets there. */
  | { kind: 'park'; target: BranchTarget }
  /** The thread runs the barrier-free code from `at` to its return (`tail`) at once, and ends. */
  | { kind: 'exit'; at: number; tail: StructNode[] }

export interface ThreadLoopSchedule {
  kind: 'loops'
  schedule: ScheduleItem[]
  /** Registers kept per thread between loops (ascending). */
  perThread: number[]
  /** Registers kept once per block between loops (ascending). */
  perBlock: number[]
  /** Per-thread registers that are only ever a copy of %tid.x/y/z: recomputed where a loop needs them
   *  instead of kept (register → the special register). */
  recomputed: Map<number, '%tid.x' | '%tid.y' | '%tid.z'>
  /** Branches (instruction index) that leave the loop they are in. */
  departures: Map<number, Departure>
  /** Threads can end before the last loop (a return or an exit departure): loops skip ended threads. */
  threadsEnd: boolean
  /** The schedule has warp-level loops. */
  warps: boolean
  /** Uniformity among the threads still running (what the plan was decided on). */
  uniformity: UniformityFacts
  /** Memory accesses at which lanes of a warp may talk without a barrier or collective (lockstep.ts): each
   *  starts a lane loop of its own, so the warp runs them one instruction at a time for all its lanes. */
  lockstep: LockstepPoint[]
}

export type ThreadLoopPlan =
  | ThreadLoopSchedule
  | { kind: 'fallback'; reason: string; line?: number; lockstep?: LockstepPoint[] }

export interface ThreadLoopFacts {
  cfg: Cfg
  structure: Structure
  liveness: Liveness
  /** Find the lockstep points (lockstep.ts) and run them warp by warp. @default false */
  lockstep?: boolean
  /** Registers an instruction reads beyond its operands, as the writer computes it (the liveness was
   *  computed with the same): a fused multiply-add reads its product's operands (contraction.ts). */
  extraUses?: ReadonlyMap<number, readonly number[]>
}

class NotFormable extends Error {
  constructor(message: string, readonly line?: number) { super(message) }
}

/** Jump nodes come only from structureFunction's re-layout (emit-wgsl asks for it); the planner's callers do not. */
function jumpNotPlanned(): never {
  throw new NotFormable('a re-laid-out structure (jump nodes) is not planned')
}
const nodeStart = (n: StructNode) => (n.kind === 'instr' ? n.index : n.kind === 'jump' ? jumpNotPlanned() : n.start)
const nodeEnd = (n: StructNode) => (n.kind === 'instr' ? n.index + 1 : n.kind === 'jump' ? jumpNotPlanned() : n.end)

/** The thread-loop plan of a kernel with barriers or warp collectives. */
export function planThreadLoops(fn: IrFunction, facts: ThreadLoopFacts): ThreadLoopPlan {
  const found: { points?: LockstepPoint[] } = {}
  try {
    return plan(fn, facts, found)
  } catch (e) {
    if (!(e instanceof NotFormable)) throw e
    const out: Extract<ThreadLoopPlan, { kind: 'fallback' }> = { kind: 'fallback', reason: e.message }
    if (e.line !== undefined) out.line = e.line
    if (found.points?.length) out.lockstep = found.points
    return out
  }
}

function plan(fn: IrFunction, { cfg, structure, liveness, lockstep, extraUses }: ThreadLoopFacts, found: { points?: LockstepPoint[] }): ThreadLoopSchedule {
  if (structure.kind !== 'structured') throw new NotFormable(`control flow does not nest (${structure.reason})`)
  const ins = fn.instructions
  const n = ins.length
  const blockCut = new Uint8Array(n)
  const warpCut = new Uint8Array(n)
  ins.forEach((x, i) => {
    const c = collectiveOf(x)
    if (!c) return
    if (collectiveScope(c) === 'block') blockCut[i] = 1
    else warpCut[i] = 1
  })
  const prefix = (cut: Uint8Array) => {
    const p = new Int32Array(n + 1)
    for (let i = 0; i < n; i++) p[i + 1] = p[i]! + cut[i]!
    return (s: number, e: number) => p[e]! - p[s]! > 0
  }
  const hasBlockCut = prefix(blockCut)
  let hasWarpCut = prefix(warpCut)
  const hasCut = (s: number, e: number) => hasBlockCut(s, e) || hasWarpCut(s, e)

  // terminal blocks: no collective in them, and every way out of them returns without meeting one
  const terminal = new Uint8Array(cfg.blocks.length)
  const findTerminal = () => {
    for (const b of cfg.blocks) terminal[b.id] = hasCut(b.start, b.end) ? 0 : 1
    for (let changed = true; changed;) {
      changed = false
      for (const b of cfg.blocks) if (terminal[b.id] && b.succs.some((s) => !terminal[s])) { terminal[b.id] = 0; changed = true }
    }
    // the threads still running never take an edge into terminal code from outside it (those that do end)
    return cfgWithoutEdges(cfg, (from: BasicBlock, to: BasicBlock | undefined) => !terminal[from.id] && (to === undefined || terminal[to.id] === 1))
  }
  let running = findTerminal()
  let uniformity = analyzeUniformity(fn, running)
  // lockstep points (decided on the uniformity among the threads still running) cut lane loops as collectives
  // do, but run in the lane loop they open
  const lock = new Uint8Array(n)
  const points = lockstep ? analyzeLockstep(fn, cfg, structure, uniformity).points : []
  found.points = points
  if (points.length) {
    for (const p of points) { lock[p.index] = 1; warpCut[p.index] = 1 }
    hasWarpCut = prefix(warpCut)
    running = findTerminal()
    uniformity = analyzeUniformity(fn, running)
  }
  const uniformLevel = (l: string) => l === 'grid' || l === 'block'
  const uniformReg = (r: number) => uniformLevel(uniformity.register[r]!)
  const uniformAt = (i: number) => {
    const x = ins[i]!
    return uniformLevel(uniformity.block[cfg.blockOf[i]!]!) && (!x.guard || uniformReg(x.guard.reg))
  }
  const where = (i: number) => `at PTX line ${ins[i]!.line} (\`${ins[i]!.text}\`)`

  // the kernel's tail: its last top-level nodes without collectives, which only run to the return
  const top = structure.body
  let tailStart = n
  for (let k = top.length - 1; k >= 0 && !hasCut(nodeStart(top[k]!), nodeEnd(top[k]!)); k--) tailStart = nodeStart(top[k]!)
  const tailFrom = (p: number): StructNode[] | undefined => {
    if (p >= tailStart) {
      if (p < n && !top.some((x) => nodeStart(x) === p)) return undefined
      return top.filter((x) => nodeStart(x) >= p)
    }
    // a straight block that returns
    const b = cfg.blocks[cfg.blockOf[p]!]!
    if (!terminal[b.id] || b.start !== p || b.succs.length) return undefined
    const body: StructNode[] = []
    for (let i = b.start; i < b.end; i++) {
      if (ins[i]!.op === 'bra' || ins[i]!.guard) return undefined
      body.push({ kind: 'instr', index: i })
    }
    return body
  }

  const departures = new Map<number, Departure>()
  let threadsEnd = false
  let warps = false
  const targetPosition = (t: BranchTarget) => (t.kind === 'continue' ? structure.regions[t.node]!.start : structure.regions[t.node]!.end)

  /** Classifies the branches and returns of a loop over [s, e): where they go and who takes them. */
  const classify = (s: number, e: number, level: LoopLevel, blockRun: { start: number; end: number }, last: boolean) => {
    for (let i = s; i < e; i++) {
      const x = ins[i]!
      if (x.op === 'ret' || x.op === 'exit') { if (!last) threadsEnd = true; continue }
      if (x.op !== 'bra') continue
      const t = structure.branches.get(i)!
      const r = structure.regions[t.node]!
      // (a region with a barrier, collective or lockstep point inside is not one of the loop's nodes, even
      // where it spans the loop's range: a lane loop that starts at a lockstep point opening a loop's body)
      if (r.start >= s && r.end <= e && !hasCut(r.start, r.end)) continue
      // leaves the loop: within the warp-level code of a block loop, the lane waits for its warp
      if (level === 'warp' && r.start >= blockRun.start && r.end <= blockRun.end) { departures.set(i, { kind: 'park', target: t }); continue }
      const p = targetPosition(t)
      const tail = terminal[cfg.blockOf[i]!] ? tailFrom(p) : undefined
      if (tail) { departures.set(i, { kind: 'exit', at: p, tail }); threadsEnd = true; continue }
      if (uniformAt(i)) { departures.set(i, { kind: 'uniform', target: t }); continue }
      const exit = t.kind === 'break' && p < n && terminal[cfg.blockOf[p]!] ? tailFrom(p) : undefined
      if (exit) { departures.set(i, { kind: 'exit', at: p, tail: exit }); threadsEnd = true; continue }
      throw new NotFormable(`the branch ${where(i)} goes around a barrier and threads of a block can take it differently`, x.line)
    }
  }

  /** The schedule of sibling nodes at a level. */
  /** `last`: these nodes end the kernel (no block-level loop follows them). */
  const schedule = (nodes: StructNode[], level: LoopLevel, blockRun: { start: number; end: number }, last: boolean): ScheduleItem[] => {
    const out: ScheduleItem[] = []
    const cutHere = level === 'block' ? hasBlockCut : hasWarpCut
    let run: StructNode[] = []
    const flush = (final: boolean) => {
      if (!run.length) return
      const s = nodeStart(run[0]!), e = nodeEnd(run[run.length - 1]!)
      if (level === 'block' && hasWarpCut(s, e)) {
        warps = true
        const br = { start: s, end: e }
        out.push({ kind: 'warps', start: s, end: e, body: schedule(run, 'warp', br, final), restores: [] })
      } else {
        // a lane that ends inside warp-level code matters to the block-level loops after it only
        classify(s, e, level, blockRun, level === 'warp' ? last : final)
        out.push(threadLoop(level, run, s, e))
      }
      run = []
    }
    for (const node of nodes) {
      const s = nodeStart(node), e = nodeEnd(node)
      if (!cutHere(s, e)) { run.push(node); continue }
      flush(false)
      if (node.kind === 'instr') {
        // a lockstep point opens the warp's next lane loop
        if (lock[node.index]) { run.push(node); continue }
        const x = ins[node.index]!
        if (level === 'block') {
          if (!uniformAt(node.index)) throw new NotFormable(`the barrier ${where(node.index)} is reached by only some threads of a block`, x.line)
          if (x.guard && collectiveOf(x)!.kind === 'bar' && (collectiveOf(x) as { red?: string }).red) throw new NotFormable(`the guarded barrier reduction ${where(node.index)} is not supported in thread loops`, x.line)
          out.push({ kind: 'barrier', index: node.index })
        } else out.push({ kind: 'collective', index: node.index })
        continue
      }
      if (node.kind === 'jump') jumpNotPlanned()
      out.push({ kind: 'region', level, node, body: schedule(node.body, level, blockRun, level === 'warp' && last) })
    }
    flush(last)
    return out
  }

  const threadLoop = (level: LoopLevel, nodes: StructNode[], start: number, end: number): ThreadLoop =>
    ({ kind: 'threads', level, nodes, start, end, loads: [], stores: [], restores: [] })

  const sched = schedule(top, 'block', { start: 0, end: n }, true)
  // every collective with values gets a loop that collects its inputs before it and one that hands out its
  // results after it (an empty one where the neighbour is not a loop of its level)
  const withData = (i: number) => {
    const c = collectiveOf(ins[i]!)!
    return c.kind === 'bar' ? c.red !== undefined : c.kind !== 'warpsync'
  }
  const attach = (items: ScheduleItem[], level: LoopLevel): ScheduleItem[] => {
    const out: ScheduleItem[] = []
    for (let k = 0; k < items.length; k++) {
      const it = items[k]!
      if (it.kind === 'warps') { out.push({ ...it, body: attach(it.body, 'warp') }); continue }
      if (it.kind === 'region') { out.push({ ...it, body: attach(it.body, it.level) }); continue }
      if (it.kind === 'threads') { out.push(it); continue }
      if (!withData(it.index)) { out.push(it); continue }
      const prev = out[out.length - 1]
      if (prev?.kind === 'threads' && prev.gather === undefined) prev.gather = it.index
      else out.push({ ...threadLoop(level, [], it.index, it.index), gather: it.index })
      out.push(it)
      const next = items[k + 1]
      if (next?.kind === 'threads' && next.scatter === undefined) { next.scatter = it.index; continue }
      out.push({ ...threadLoop(level, [], it.index + 1, it.index + 1), scatter: it.index })
    }
    return out
  }
  const scheduled = attach(sched, 'block')

  // copies of %tid are recomputed, not kept
  const recomputed = new Map<number, '%tid.x' | '%tid.y' | '%tid.z'>()
  const defCount = new Map<number, number>()
  for (const x of ins) for (const r of definedRegisters(x)) defCount.set(r, (defCount.get(r) ?? 0) + 1)
  for (const x of ins) {
    const d = x.operands[0], src = x.operands[1]
    if (x.op !== 'mov' || x.guard || d?.kind !== 'reg' || src?.kind !== 'special' || defCount.get(d.id) !== 1) continue
    if (src.name === '%tid.x' || src.name === '%tid.y' || src.name === '%tid.z') recomputed.set(d.id, src.name)
  }
  // what each loop reads from and writes to the per-thread slots, and which per-block values it restores
  const perThread = new Set<number>()
  const perBlock = new Set<number>()
  const liveAt = (p: number) => (p < n ? liveness.liveIn(p) : [])
  const fill = (items: ScheduleItem[]) => {
    for (const it of items) {
      if (it.kind === 'region') { fill(it.body); continue }
      if (it.kind === 'warps') {
        const defs = new Set<number>()
        for (let i = it.start; i < it.end; i++) for (const r of definedRegisters(ins[i]!)) defs.add(r)
        it.restores = liveAt(it.start).filter((r) => uniformReg(r) && defs.has(r))
        fill(it.body)
        continue
      }
      if (it.kind !== 'threads') continue
      const uses = new Set<number>(), defs = new Set<number>()
      for (let i = it.start; i < it.end; i++) {
        for (const r of usedRegisters(ins[i]!)) uses.add(r)
        for (const r of extraUses?.get(i) ?? []) uses.add(r)
        for (const r of definedRegisters(ins[i]!)) defs.add(r)
        const d = departures.get(i)
        if (d?.kind === 'exit') for (const x of d.tail) for (let j = nodeStart(x); j < nodeEnd(x); j++) for (const r of usedRegisters(ins[j]!)) uses.add(r)
      }
      if (it.gather !== undefined) for (const r of usedRegisters(ins[it.gather]!)) uses.add(r)
      // an unguarded collective gives every lane that reaches it its result before anything else runs; a
      // guarded one leaves the old value where the guard is false, which must then come from the slot
      const scattered = it.scatter === undefined ? [] : definedRegisters(ins[it.scatter]!)
      const keepOld = it.scatter !== undefined && ins[it.scatter]!.guard !== undefined
      const exits = new Set<number>(liveAt(it.end))
      for (let i = it.start; i < it.end; i++) {
        const d = departures.get(i)
        if (d && d.kind !== 'exit') for (const r of liveAt(targetPosition(d.target))) exits.add(r)
      }
      const liveIn = liveAt(it.start)
      it.loads = liveIn.filter((r) => !uniformReg(r) && (scattered.includes(r) ? keepOld : uses.has(r) || defs.has(r)))
      for (const r of scattered) defs.add(r)
      it.stores = [...defs].filter((r) => !uniformReg(r) && exits.has(r) && !recomputed.has(r)).sort((a, b) => a - b)
      it.restores = liveIn.filter((r) => uniformReg(r) && defs.has(r))
      for (const r of liveIn) if (uniformReg(r)) perBlock.add(r)
      for (const r of exits) if (uniformReg(r) && defs.has(r)) perBlock.add(r)
      for (const r of it.loads) if (!recomputed.has(r)) perThread.add(r)
      for (const r of it.stores) perThread.add(r)
    }
  }
  fill(scheduled)
  const onceOps = new Set(['bra', 'mov', 'add', 'sub', 'mul', 'mad', 'div', 'rem', 'min', 'max', 'and', 'or', 'xor', 'not', 'shl', 'shr', 'setp', 'selp', 'cvt', 'neg', 'abs', 'cvta'])
  const runsOnce = (it: ThreadLoop) => {
    if (it.level !== 'block' || it.scatter !== undefined || it.gather !== undefined || it.start === it.end) return false
    for (let i = it.start; i < it.end; i++) {
      const x = ins[i]!
      const load = x.op === 'ld' && (x.space === 'param' || x.space === 'const')
      if (!onceOps.has(x.op) && !load) return false
      if (x.guard && !uniformReg(x.guard.reg)) return false
      if (!definedRegisters(x).every(uniformReg)) return false
      const d = departures.get(i)
      if (x.op === 'bra' && d && d.kind !== 'uniform') return false
    }
    return true
  }
  const mark = (items: ScheduleItem[]) => {
    for (const it of items) {
      if (it.kind === 'threads' && runsOnce(it)) { it.once = true; it.restores = [] } else if (it.kind === 'region' || it.kind === 'warps') mark(it.body)
    }
  }
  mark(scheduled)
  return {
    kind: 'loops', schedule: scheduled, departures, threadsEnd, warps, uniformity, recomputed, lockstep: points,
    perThread: [...perThread].sort((a, b) => a - b), perBlock: [...perBlock].sort((a, b) => a - b),
  }
}
