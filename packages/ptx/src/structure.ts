// Structured control flow as data: the function's branches as a tree of labelled blocks (a forward branch
// leaves the block that ends at its target: `break`), loops (a backward branch repeats the loop that starts
// at its target: `continue`; falling off a loop's end leaves it) and ifs (a block entered past a single
// guarded branch to its end), with every branch instruction resolved to the node it leaves or repeats.
// Compiler output (nvcc, clang) nearly always nests this way; when branch ranges cross — irreducible flow, a
// jump into a loop, exits that do not nest — the result is an explicit `fallback`, and a writer uses a
// dispatcher over the basic blocks (cfg.ts) instead.
//
// Ranges are in instruction positions: a forward branch at i to a label at t opens a block [i, t) (widened
// to start where it must to enclose what it would otherwise cross); a backward branch at i to a label at t
// opens a loop [t, i + 1). Nodes open outermost first and close innermost first.
import type { IrFunction } from './ir.js'

export type StructNode =
  | { kind: 'instr'; index: number }
  | StructRegion

export interface StructRegion {
  kind: 'block' | 'loop' | 'if'
  /** Numbered in opening order; unique in the function. */
  id: number
  /** The label whose branches this node resolves. */
  label: string
  /** Instructions [start, end) the node spans. */
  start: number
  end: number
  body: StructNode[]
  /** `if` only: the guarded `bra` that skips the rest of the body (it is the body's first node); the rest
   *  runs when its guard is false. A writer without labelled blocks (WGSL) writes `if (!guard) { rest }`. */
  branch?: number
}

export interface BranchTarget {
  /** break: leave the node (block or if); continue: start the loop again. */
  kind: 'break' | 'continue'
  node: number
}

export type Structure =
  | { kind: 'structured'; body: StructNode[]; branches: Map<number, BranchTarget>; regions: StructRegion[] }
  | { kind: 'fallback'; reason: string }

interface Interval { kind: 'B' | 'L'; name: string; s: number; e: number }

export function structureFunction(fn: IrFunction): Structure {
  const ins = fn.instructions
  const n = ins.length
  const fwd = new Map<string, [number, number]>() // label → [first source, target)
  const back = new Map<string, [number, number]>() // label → [header, last back edge + 1)
  for (let i = 0; i < n; i++) {
    const st = ins[i]!
    if (st.op === 'brx') return { kind: 'fallback', reason: `indirect branch at PTX line ${st.line}` }
    if (st.op !== 'bra') continue
    const t0 = st.operands[0]
    const t = t0?.kind === 'label' ? fn.labels.get(t0.name) : undefined
    if (t === undefined || t0?.kind !== 'label') return { kind: 'fallback', reason: `branch without a label target at PTX line ${st.line}` }
    const name = t0.name
    if (t > i) { const f = fwd.get(name); fwd.set(name, [f ? Math.min(f[0], i) : i, t]) } else { const l = back.get(name); back.set(name, [t, Math.max(l ? l[1] : 0, i + 1)]) }
  }
  const ivs: Interval[] = [
    ...[...fwd].map(([name, [s, e]]) => ({ kind: 'B' as const, name, s, e })),
    ...[...back].map(([name, [s, e]]) => ({ kind: 'L' as const, name, s, e })),
  ]
  // a forward block may start earlier so that it encloses what it would cross (a `break` out of a loop
  // becomes a block around the loop); a jump into a loop from before it cannot be structured
  for (let changed = true; changed;) {
    changed = false
    for (const a of ivs) for (const b of ivs) {
      if (a === b || a.kind !== 'B') continue
      if (b.s < a.s && a.s < b.e && b.e < a.e) { a.s = b.s; changed = true }
    }
  }
  for (const a of ivs) for (const b of ivs) if (a !== b && a.s < b.s && b.s < a.e && a.e < b.e) return { kind: 'fallback', reason: `branch ranges of ${a.name} and ${b.name} cross` }

  const regions: StructRegion[] = []
  const regionOf = new Map<Interval, StructRegion>()
  const root: StructNode[] = []
  const open: Array<{ iv: Interval; r: StructRegion }> = []
  const top = () => (open.length ? open[open.length - 1]!.r.body : root)
  for (let i = 0; i <= n; i++) {
    while (open.length && open[open.length - 1]!.iv.e === i) open.pop()
    if (open.some((o) => o.iv.e === i)) return { kind: 'fallback', reason: `branch ranges do not nest at instruction ${i}` }
    const starting = ivs.filter((iv) => iv.s === i).sort((x, y) => y.e - x.e || (x.kind === 'B' ? -1 : 1))
    for (const iv of starting) {
      const r: StructRegion = { kind: iv.kind === 'L' ? 'loop' : 'block', id: regions.length, label: iv.name, start: iv.s, end: iv.e, body: [] }
      regions.push(r)
      regionOf.set(iv, r)
      top().push(r)
      open.push({ iv, r })
    }
    if (i === n) break
    top().push({ kind: 'instr', index: i })
  }
  if (open.length) return { kind: 'fallback', reason: 'a branch range reaches past the end of the function' }

  // resolve every branch: to the enclosing loop of its label when it goes backwards, else out of its block
  const branches = new Map<number, BranchTarget>()
  const enclosing = (i: number, r: StructRegion) => r.start <= i && i < r.end
  for (let i = 0; i < n; i++) {
    const st = ins[i]!
    if (st.op !== 'bra') continue
    const name = (st.operands[0] as { name: string }).name
    const t = fn.labels.get(name)!
    const loop = ivs.find((iv) => iv.kind === 'L' && iv.name === name)
    if (loop && t <= i && enclosing(i, regionOf.get(loop)!)) { branches.set(i, { kind: 'continue', node: regionOf.get(loop)!.id }); continue }
    const blk = ivs.find((iv) => iv.kind === 'B' && iv.name === name)!
    branches.set(i, { kind: 'break', node: regionOf.get(blk)!.id })
  }
  // a block entered past one guarded branch to its end, which nothing else leaves, is an `if`
  for (const r of regions) {
    if (r.kind !== 'block') continue
    const first = r.body[0]
    if (first?.kind !== 'instr' || !ins[first.index]!.guard || ins[first.index]!.op !== 'bra') continue
    const target = branches.get(first.index)
    if (target?.kind !== 'break' || target.node !== r.id) continue
    let others = 0
    for (const [i, b] of branches) if (b.node === r.id && i !== first.index) others++
    if (others) continue
    r.kind = 'if'
    r.branch = first.index
  }
  return { kind: 'structured', body: root, branches, regions }
}
