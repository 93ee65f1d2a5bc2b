// The scheduler of the continuation scheme: kernels with barriers or warp collectives run as thread loops
// (emit-thread-loops.ts) where their plan forms; the others (emit-js.ts makes their threads suspend at the
// collectives of @kernelpack/ptx's registry, and at yield points) run here block by block, resuming the
// threads after each barrier and resolving warp collectives for the lanes of a warp that reached one.
import type { Collective } from '@kernelpack/ptx'
import type { CompiledFunction } from './js/emit-js.js'
import type { Sanitizer } from './sanitizer/checker.js'

/** One thread's saved state. st: 0 runnable, 1 waiting at a barrier, 2 at a warp collective, 3 done, 4 stepped
 *  aside at a yield point (a spin-wait or an mbarrier wait: emit-js.ts yieldIf); pc: where it resumes; r/f:
 *  saved registers (i64 values / numbers); c0…: collective inputs; o0…: results; sk/sv: the yield site it last
 *  passed and the value it saw there (a spin repeats both). */
export interface ThreadState { st: number; pc: number; r: unknown[]; f: Float64Array; c0: unknown; c1: unknown; c2: unknown; c3: unknown; o0: unknown; o1: unknown; sk: number; sv: unknown }

/** Runs threads [t0, t1) of blocks b0 … b1-1 (linear block index, x fastest). */
export type KernelFn = (T: ThreadState[] | null, t0: number, t1: number, FB: number, b0: number, b1: number) => void

/** State objects for the threads of one block. */
export function newThreadStates(n: number, regCount: number): ThreadState[] {
  return Array.from({ length: n }, () => ({ st: 0, pc: 0, r: new Array(regCount).fill(0), f: new Float64Array(regCount), c0: 0, c1: 0, c2: 0, c3: 0, o0: 0, o1: false, sk: -1, sv: undefined }))
}

/** The member mask a lane gave its collective (PTX ISA: `membermask` of shfl/vote/match/redux/elect/
 *  bar.warp.sync); undefined for activemask, which takes the lanes that are there. */
function memberMask(kind: Collective, s: ThreadState): number | undefined {
  switch (kind.kind) {
    case 'shfl': return s.c3 as number
    case 'vote': case 'match': case 'redux': return s.c1 as number
    case 'elect': case 'warpsync': return s.c0 as number
    // the tensor-core instructions are .aligned: every lane of the warp takes part
    case 'mma': case 'ldmatrix': case 'stmatrix': case 'movmatrix': return -1
    default: return undefined
  }
}

/** The resume pc of the warp collective to resolve next among the lanes [w, end): one whose member mask has
 *  arrived in full (lanes that finished are not waited for), so that lanes split over two collectives (a
 *  binary partition's two reductions) each wait for their own; -1 when none is waiting. An activemask (no
 *  mask: it takes the lanes that are there) resolves at once when every unfinished lane is there, else only
 *  when no group with a mask is complete (binaryPartitionCG: the even lanes' next-trip activemask must not
 *  resolve while the odd lanes are still at their redux.sync). When no group is complete and none of the
 *  missing lanes can still come (they wait at a block barrier or another collective), the first group
 *  resolves with the lanes it has, as before. A group missing a lane that stepped aside at a yield point
 *  waits for it (-1 while no other group is complete). */
function completeGroup(cf: CompiledFunction, states: ThreadState[], w: number, end: number): number {
  let first = -1, maskless = -1
  let pending = false
  const tried = new Set<number>()
  let live = 0
  for (let t = w; t < end; t++) if (states[t]!.st !== 3) live |= 1 << (t - w)
  for (let t = w; t < end; t++) {
    const s = states[t]!
    if (s.st !== 2 || tried.has(s.pc)) continue
    tried.add(s.pc)
    if (first < 0) first = s.pc
    const kind = cf.collectives.get(s.pc)!
    let have = 0
    for (let u = w; u < end; u++) { const o = states[u]!; if (o.st === 2 && o.pc === s.pc) have |= 1 << (u - w) }
    const m = memberMask(kind, s)
    if (m === undefined) {
      if ((have | 0) === (live | 0)) return s.pc
      if (maskless < 0) maskless = s.pc
      continue
    }
    const need = (m & live) | 0
    if ((have & need) === need) return s.pc
    for (let u = w; u < end; u++) if ((need >>> (u - w)) & 1 && states[u]!.st === 4) pending = true
  }
  if (maskless >= 0) return maskless
  return pending ? -1 : first
}

/** Resolves a warp collective for the lanes `group` that met at it. A shfl.sync lane whose source lane (in
 *  range) is not in its member mask or not among them reads 0; with `zeroed`, each such read is listed there
 *  as (thread, source lane, member mask), for the sanitizer. */
function resolveCollective(kind: Collective, states: ThreadState[], w: number, group: number[], zeroed?: number[]): void {
  const inGroup = new Map<number, ThreadState>()
  for (const t of group) inGroup.set(t - w, states[t]!)
  let groupMask = 0
  for (const l of inGroup.keys()) groupMask |= 1 << l
  switch (kind.kind) {
    case 'shfl': {
      for (const [lane, s] of inGroup) {
        const b = s.c1 as number, c = s.c2 as number
        const segmask = (c >>> 8) & 0x1f
        const maxLane = (lane & segmask) | (c & 0x1f & ~segmask)
        const minLane = lane & segmask
        let j: number, pval: boolean
        switch (kind.mode) {
          // (b's low 5 bits: the ISA's bval = b[4:0], so an offset of 33 reads the lane 1 away)
          case 'up': j = lane - (b & 31); pval = j >= maxLane; break
          case 'down': j = lane + (b & 31); pval = j <= maxLane; break
          case 'bfly': j = lane ^ (b & 31); pval = j <= maxLane; break
          default: j = minLane | (b & 0x1f & ~segmask); pval = j <= maxLane; break
        }
        // PTX ISA shfl.sync: out of range, the lane's own value (p false); in range, lane j's value (p true),
        // undefined when lane j is not in membermask or not active: NVIDIA GPUs give 0 there (NVIDIA/cuda-
        // samples#398, reduce7's final warp; PaddlePaddle/CINN#938), and so does the emulator (issue 24)
        const src = pval && ((s.c3 as number) >>> j) & 1 ? inGroup.get(j) : undefined
        if (pval && !src) zeroed?.push(w + lane, j, s.c3 as number)
        s.o0 = !pval ? s.c0 : src ? src.c0 : 0
        s.o1 = pval
      }
      break
    }
    case 'vote': {
      for (const [, s] of inGroup) {
        const mask = (s.c1 as number) & groupMask
        let ballot = 0, all = true, any = false
        for (const [l, o] of inGroup) {
          if (!((mask >>> l) & 1)) continue
          if (o.c0) { ballot |= 1 << l; any = true } else all = false
        }
        s.o0 = kind.mode === 'ballot' ? ballot : kind.mode === 'all' ? all : kind.mode === 'any' ? any : all || !any
      }
      break
    }
    case 'match': {
      for (const [, s] of inGroup) {
        const mask = (s.c1 as number) & groupMask
        let m = 0, allEq = true
        for (const [l, o] of inGroup) {
          if (!((mask >>> l) & 1)) continue
          if (o.c0 === s.c0) m |= 1 << l; else allEq = false
        }
        if (kind.mode === 'any') s.o0 = m
        else { s.o0 = allEq ? mask : 0; s.o1 = allEq }
      }
      break
    }
    case 'elect': {
      for (const [, s] of inGroup) {
        const mask = (s.c0 as number) & groupMask
        const leader = mask === 0 ? -1 : 31 - Math.clz32(mask & -mask)
        s.o0 = leader
        s.o1 = leader >= 0 && inGroup.get(leader) === s
      }
      break
    }
    case 'activemask':
      for (const [, s] of inGroup) s.o0 = groupMask | 0
      break
    case 'mma': case 'ldmatrix': case 'stmatrix': case 'movmatrix': {
      // every lane gets every lane's inputs (fragments, row addresses, elements), indexed by lane; what each
      // lane makes of them is its own code (emit-instruction.ts, tensor-core.ts)
      const all: unknown[] = new Array(32)
      for (const [l, s] of inGroup) all[l] = kind.kind === 'mma' ? [s.c0, s.c1, s.c2] : s.c0
      // (a stmatrix lane's own values come back as its second result: its store reads them there)
      for (const [, s] of inGroup) { s.o0 = all; if (kind.kind === 'stmatrix') s.o1 = s.c1 }
      break
    }
    case 'redux': {
      for (const [, s] of inGroup) {
        const mask = (s.c1 as number) & groupMask
        let acc: number | undefined
        for (const [l, o] of inGroup) {
          if (!((mask >>> l) & 1)) continue
          const v = o.c0 as number
          if (acc === undefined) { acc = v; continue }
          switch (kind.mode) {
            case 'add': acc = (acc + v) | 0; break
            case 'min': acc = kind.signed ? Math.min(acc, v) : Math.min(acc >>> 0, v >>> 0) | 0; break
            case 'max': acc = kind.signed ? Math.max(acc, v) : Math.max(acc >>> 0, v >>> 0) | 0; break
            case 'and': acc &= v; break
            case 'or': acc |= v; break
            case 'xor': acc ^= v; break
          }
        }
        s.o0 = acc ?? 0
      }
      break
    }
    default: break
  }
}


/** Runs one block's threads from the start to the end (stepBlock does it in steps). With a sanitizer
 *  (checked launches), it is told of every resolved warp collective (the lanes that met) and barrier
 *  (synccheck, then a new barrier interval). */
export function runBlock(K: KernelFn, cf: CompiledFunction, states: ThreadState[], n: number, FB: number, b: number, progress: () => number = () => 0, san?: Sanitizer): void {
  resetBlock(states, n)
  // a block whose threads only wait for each other at yield points (nothing else changes what they wait
  // for) cannot finish; a bounded spin (a retry counter) may still leave its loop, so allow some rounds
  let stalls = 0
  for (;;) {
    const r = stepBlock(K, cf, states, n, FB, b, progress, san)
    if (r === Step.Done) return
    stalls = r === Step.Stuck ? stalls + 1 : 0
    if (stalls >= STALL_LIMIT) throw new StalledBlock(b, states, n)
  }
}

/** Consecutive rounds without progress after which a block (or a cooperative grid) is deadlocked. */
export const STALL_LIMIT = 1000

/** What a call of stepBlock did: finished the block, moved it on until it stalled, or found it stalled. */
export const Step = { Done: 0, Moved: 1, Stuck: 2 } as const
export type Step = (typeof Step)[keyof typeof Step]

/** A block whose remaining threads wait at yield points for something no running thread will change. */
export class StalledBlock extends Error {
  /** The resume pc of a waiting thread and that thread's index in the block. */
  readonly pc: number
  readonly thread: number
  constructor(readonly block: number, states: ThreadState[], n: number) {
    super('stalled')
    let t = 0
    while (t < n && states[t]!.st !== 4) t++
    this.thread = t < n ? t : 0
    this.pc = t < n ? states[t]!.pc : -1
  }
}

/** Every thread of a block runnable from its start. */
export function resetBlock(states: ThreadState[] & { seen?: number }, n: number): void {
  for (let t = 0; t < n; t++) { const s = states[t]!; s.st = 0; s.pc = 0; s.sk = -1; s.sv = undefined }
  states.seen = undefined
}

/** Runs a block on until every thread finished (Done), or until a round in which the only threads left to
 *  run stepped aside at yield points again without any progress (`progress`: the yield sites' count of
 *  waits that ended; threads that finished, barriers and collectives resolved count too): Moved when
 *  something happened before that, Stuck when not. The yielded threads wait until the next call. */
export function stepBlock(K: KernelFn, cf: CompiledFunction, states: ThreadState[], n: number, FB: number, b: number, progress: () => number, san?: Sanitizer): Step {
  for (let t = 0; t < n; t++) { const s = states[t]!; if (s.st === 4) s.st = 0 }
  // without warp collectives, only barriers suspend: run the whole block in one call per phase
  const step = cf.hasWarpCollective ? 32 : n
  for (let round = 0; ; round++) {
    const before = progress()
    let resolved = 0
    for (let w = 0; w < n; w += step) {
      const end = Math.min(w + step, n)
      for (;;) {
        K(states, w, end, FB, b, b + 1)
        if (step !== 32) break
        const pcSel = completeGroup(cf, states, w, end)
        if (pcSel < 0) break
        const group: number[] = []
        for (let t = w; t < end; t++) { const s = states[t]!; if (s.st === 2 && s.pc === pcSel) group.push(t) }
        const zeroed: number[] | undefined = san ? [] : undefined
        resolveCollective(cf.collectives.get(pcSel)!, states, w, group, zeroed)
        san?.warp(w, group, states)
        if (zeroed?.length) san!.shuffleSource(w, zeroed, states)
        for (const t of group) states[t]!.st = 0
        resolved++
      }
    }
    let waiting = 0, yielded = 0
    let barPc = -1
    for (let t = 0; t < n; t++) {
      const st = states[t]!.st
      if (st === 1) { waiting++; barPc = states[t]!.pc } else if (st === 4) yielded++
    }
    if (yielded) {
      // the yielded threads run again next round; the block stalls when nothing moved in this one
      if (resolved === 0 && progress() === before && !madeProgress(states, n)) return round === 0 ? Step.Stuck : Step.Moved
      for (let t = 0; t < n; t++) { const s = states[t]!; if (s.st === 4) s.st = 0 }
      continue
    }
    if (waiting === 0) return Step.Done
    san?.barrier(states, n)
    const kind = cf.collectives.get(barPc)
    if (kind?.kind === 'bar' && kind.red) {
      let cnt = 0, all = true, any = false
      for (let t = 0; t < n; t++) { const s = states[t]!; if (s.st !== 1) continue; if (s.c0) { cnt++; any = true } else all = false }
      const out = kind.red === 'popc' ? cnt : kind.red === 'and' ? all : any
      for (let t = 0; t < n; t++) { const s = states[t]!; if (s.st === 1) s.o0 = out }
    }
    for (let t = 0; t < n; t++) { const s = states[t]!; if (s.st === 1) s.st = 0 }
  }
}

/** Whether more threads finished or wait at a barrier than at the last look (the count is kept on the
 *  array; resetBlock clears it). */
function madeProgress(states: ThreadState[] & { seen?: number }, n: number): boolean {
  let k = 0
  for (let t = 0; t < n; t++) { const st = states[t]!.st; if (st === 1 || st === 3) k++ }
  const changed = k !== states.seen
  states.seen = k
  return changed
}
