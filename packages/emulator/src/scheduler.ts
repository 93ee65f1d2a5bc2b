// The scheduler of suspended threads (emit-js.ts makes a kernel's threads suspend at the collectives of
// @kernelpack/ptx's registry): runs a block's threads until all of them finished, resuming them after each
// barrier, and resolves warp collectives for the lanes of a warp that reached the same one together.
// Separate from the instructions' semantics, so a different schedule (barrier regions as thread loops,
// warp collectives as lane loops) can replace it without touching the code generator's instruction part.
import type { Collective } from '@kernelpack/ptx'
import type { CompiledFunction } from './emit-js.js'

/** One thread's saved state. st: 0 runnable, 1 waiting at a barrier, 2 at a warp collective, 3 done; pc:
 *  where it resumes; r/f: saved registers (i64 values / numbers); c0…: collective inputs; o0…: results. */
export interface ThreadState { st: number; pc: number; r: unknown[]; f: Float64Array; c0: unknown; c1: unknown; c2: unknown; c3: unknown; o0: unknown; o1: unknown }

/** Runs threads [t0, t1) of blocks b0 … b1-1 (linear block index, x fastest). */
export type KernelFn = (T: ThreadState[] | null, t0: number, t1: number, FB: number, b0: number, b1: number) => void

/** State objects for the threads of one block. */
export function newThreadStates(n: number, regCount: number): ThreadState[] {
  return Array.from({ length: n }, () => ({ st: 0, pc: 0, r: new Array(regCount).fill(0), f: new Float64Array(regCount), c0: 0, c1: 0, c2: 0, c3: 0, o0: 0, o1: false }))
}

function resolveCollective(kind: Collective, states: ThreadState[], w: number, group: number[]): void {
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
          case 'up': j = lane - (b >>> 0); pval = j >= maxLane; break
          case 'down': j = lane + (b >>> 0); pval = j <= maxLane; break
          case 'bfly': j = lane ^ (b & 31); pval = j <= maxLane; break
          default: j = minLane | (b & 0x1f & ~segmask); pval = j <= maxLane; break
        }
        if (!pval || j < 0 || j > 31) j = lane
        const src = inGroup.get(j) ?? s
        s.o0 = src.c0
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


export function runBlock(K: KernelFn, cf: CompiledFunction, states: ThreadState[], n: number, FB: number, b: number): void {
  for (let t = 0; t < n; t++) { const s = states[t]!; s.st = 0; s.pc = 0 }
  // without warp collectives, only barriers suspend: run the whole block in one call per phase
  const step = cf.hasWarpCollective ? 32 : n
  for (;;) {
    for (let w = 0; w < n; w += step) {
      const end = Math.min(w + step, n)
      for (;;) {
        K(states, w, end, FB, b, b + 1)
        if (step !== 32) break
        let pcSel = -1
        for (let t = w; t < end; t++) if (states[t]!.st === 2) { pcSel = states[t]!.pc; break }
        if (pcSel < 0) break
        const group: number[] = []
        for (let t = w; t < end; t++) { const s = states[t]!; if (s.st === 2 && s.pc === pcSel) group.push(t) }
        resolveCollective(cf.collectives.get(pcSel)!, states, w, group)
        for (const t of group) states[t]!.st = 0
      }
    }
    let waiting = 0
    let barPc = -1
    for (let t = 0; t < n; t++) if (states[t]!.st === 1) { waiting++; barPc = states[t]!.pc }
    if (waiting === 0) return
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

