// Barrier regions: the code between two points where threads wait for each other. A region starts at the
// function's entry or right after a cut (a block barrier; for warp regions also every warp collective, from
// collectives.ts) and holds every instruction reachable from there without passing another cut; it ends at
// the cuts it reaches (its exits) or where the function returns. Every thread of a block (or warp) runs a
// region from its entry to one of its exits before any of them goes on, which is what lets a code generator
// run a region as a loop over the threads (POCL's WorkitemLoops) and the sanitizer check that all threads
// meet at the same barrier.
//
// Regions are defined by their entries, so they may share instructions: with a barrier inside a loop, the
// loop's code before the barrier is reached both from the kernel's entry and, through the back edge, from
// after the barrier. Such a region is not single-entry (`singleEntry` false); a writer emits the shared
// code once per region that reaches it (POCL's tail replication).
import type { Cfg } from '../cfg.js'
import { collectiveOf, collectiveScope } from '../collectives.js'
import type { IrFunction } from '../ir.js'

/** The exit of a region that leaves the function (ret, exit, or falling off the end). */
export const RETURN_EXIT = -1

export interface BarrierRegion {
  id: number
  /** First instruction: 0 (the function's entry) or the one after a cut. */
  entry: number
  /** The cut it starts after (undefined for the entry region). */
  after?: number
  /** Instructions of the region, ascending. */
  instructions: number[]
  /** Cut instructions that end it (ascending), and RETURN_EXIT when it can leave the function. */
  exits: number[]
  /** No instruction of the region but its entry is reached from outside the region. */
  singleEntry: boolean
}

export interface BarrierRegions {
  /** Instructions where threads wait for each other, ascending. */
  cuts: number[]
  regions: BarrierRegion[]
  /** Regions containing instruction i. */
  regionsAt(i: number): number[]
}

export function analyzeBarrierRegions(fn: IrFunction, cfg: Cfg, scope: 'block' | 'warp' = 'block'): BarrierRegions {
  const ins = fn.instructions
  const n = ins.length
  const isCut = new Uint8Array(n)
  const cuts: number[] = []
  ins.forEach((x, i) => {
    const c = collectiveOf(x)
    if (c && (scope === 'warp' || collectiveScope(c) === 'block')) { isCut[i] = 1; cuts.push(i) }
  })
  const entries = [0, ...cuts.map((c) => c + 1)]
  const regions: BarrierRegion[] = []
  for (const entry of entries) {
    const inRegion = new Uint8Array(n)
    const exits = new Set<number>()
    const seenBlocks = new Uint8Array(cfg.blocks.length)
    // [instruction to start at] work list; blocks are entered at their start except the entry's own
    const work: number[] = [entry]
    while (work.length) {
      let i = work.pop()!
      if (i >= n) { exits.add(RETURN_EXIT); continue }
      const b = cfg.blocks[cfg.blockOf[i]!]!
      let stopped = false
      for (; i < b.end; i++) {
        if (isCut[i]) { exits.add(i); stopped = true; break }
        inRegion[i] = 1
      }
      if (stopped) continue
      if (b.exits) exits.add(RETURN_EXIT)
      for (const s of b.succs) {
        if (seenBlocks[s]) continue
        seenBlocks[s] = 1
        const sb = cfg.blocks[s]!
        if (sb.start === sb.end) { if (sb.exits) exits.add(RETURN_EXIT); continue }
        work.push(sb.start)
      }
    }
    const list: number[] = []
    for (let i = 0; i < n; i++) if (inRegion[i]) list.push(i)
    // single entry: every instruction but the entry is reached only from inside the region
    let singleEntry = true
    for (const i of list) {
      if (i === entry) continue
      const b = cfg.blocks[cfg.blockOf[i]!]!
      const preds = i > b.start ? [i - 1] : b.preds.map((p) => cfg.blocks[p]!.end - 1)
      if (preds.some((p) => p < 0 || (!inRegion[p] && !(isCut[p] && p + 1 === entry)))) { singleEntry = false; break }
    }
    const r: BarrierRegion = { id: regions.length, entry, instructions: list, exits: [...exits].sort((a, b) => a - b), singleEntry }
    if (entry > 0) r.after = entry - 1
    regions.push(r)
  }
  const at: number[][] = Array.from({ length: n }, () => [])
  for (const r of regions) for (const i of r.instructions) at[i]!.push(r.id)
  return { cuts, regions, regionsAt: (i) => at[i] ?? [] }
}
