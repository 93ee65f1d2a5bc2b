// Structured control flow as data: the function's branches as a tree of labelled blocks (a forward branch
// leaves the block that ends at its target: `break`), loops (a backward branch repeats the loop that starts
// at its target: `continue`; falling off a loop's end leaves it) and ifs (a block entered past a single
// guarded branch to its end), with every branch instruction resolved to the node it leaves or repeats.
// Compiler output (nvcc, clang) nearly always nests this way; when branch ranges cross — irreducible flow, a
// jump into a loop, exits that do not nest — the result is an explicit `fallback`, and a writer uses a
// dispatcher over the basic blocks (cfg.ts) instead.
//
// Ranges are in positions of a sequence: a forward branch at i to a label at t opens a block [i, t) (widened
// to start where it must to enclose what it would otherwise cross); a backward branch at i to a label at t
// opens a loop [t, i + 1). Nodes open outermost first and close innermost first.
//
// The sequence is the instruction list as written. When that does not nest, but the flow is reducible, the
// basic blocks are laid out again so that every natural loop is contiguous and starts at its header (clang
// rotates loops: the header sits after the latch, and the loop is entered by a jump into its middle), with
// an unconditional `jump` node wherever a block's fall-through successor no longer follows it; `order` then
// lists the sequence (on request: `relayout`, which emit-wgsl uses). Irreducible flow still falls back.
import { buildCfg, type Cfg } from './cfg.js'
import type { Instruction, IrFunction } from './ir.js'

export type StructNode =
  | { kind: 'instr'; index: number }
  /** An unconditional branch the re-layout added where a fall-through edge no longer falls through. */
  | { kind: 'jump'; label: string; target: BranchTarget }
  | StructRegion

export interface StructRegion {
  kind: 'block' | 'loop' | 'if'
  /** Numbered in opening order; unique in the function. */
  id: number
  /** The label whose branches this node resolves. */
  label: string
  /** Positions [start, end) the node spans: instruction indices, or positions in `order` after a re-layout. */
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
  | {
    kind: 'structured'; body: StructNode[]; branches: Map<number, BranchTarget>; regions: StructRegion[]
    /** The re-laid-out sequence (instruction indices, and jumps by label) when the written order did not nest. */
    order?: SequenceItem[]
  }
  | { kind: 'fallback'; reason: string }

/** One position of the sequence being structured: an instruction, or an added jump to a label. */
export type SequenceItem = { index: number } | { jump: string }

interface Interval { kind: 'B' | 'L'; name: string; s: number; e: number }

export interface StructureOptions {
  /** When the written order does not nest, try the loop-nested re-layout (its `jump` nodes and positions
   *  in `order` are then the writer's to follow). @default false */
  relayout?: boolean
}

export function structureFunction(fn: IrFunction, options: StructureOptions = {}): Structure {
  const written = structureSequence(fn, fn.instructions.map((_, index) => ({ index })), fn.labels)
  if (written.kind === 'structured' || !options.relayout || fn.instructions.some((i) => i.op === 'brx')) return written
  const laid = relayout(fn, buildCfg(fn))
  if (!laid) return written
  const again = structureSequence(fn, laid.items, laid.labels)
  if (again.kind !== 'structured') return written
  return { ...again, order: laid.items }
}

/** The function with its basic blocks in the re-layout's order (structureFunction, `relayout`) as plain IR:
 *  an unconditional `bra.uni` (its line that of the instruction before it) wherever a block's fall-through
 *  successor moved away, labels moved with their blocks (blocks without one get `$kp.block<n>`), every
 *  instruction renumbered. Undefined when the written order nests already, or the flow cannot be re-laid
 *  (irreducible, indirect branches). A code generator that only handles nesting flow runs this instead:
 *  the same instructions, branching the same way. */
export function relayoutFunction(fn: IrFunction): IrFunction | undefined {
  if (!fn.defined || !fn.instructions.length || fn.refused) return undefined
  if (structureSequence(fn, fn.instructions.map((_, index) => ({ index })), fn.labels).kind === 'structured') return undefined
  if (fn.instructions.some((i) => i.op === 'brx')) return undefined
  const laid = relayout(fn, buildCfg(fn))
  if (!laid || structureSequence(fn, laid.items, laid.labels).kind !== 'structured') return undefined
  const instructions: Instruction[] = laid.items.map((it, index) => {
    if ('index' in it) return { ...fn.instructions[it.index]!, index }
    const prev = laid.items[index - 1]
    const line = prev && 'index' in prev ? fn.instructions[prev.index]!.line : fn.line
    return { index, op: 'bra', qualifiers: ['uni'], types: [], flags: { uni: true }, operands: [{ kind: 'label', name: it.jump }], line, text: `bra.uni ${it.jump}` } as Instruction
  })
  return { ...fn, instructions, labels: new Map(laid.labels) }
}

/** The function with each `brx.idx i, (L0, …, Ln−1)` (clang's switch through a `.branchtargets` list) as a chain
 *  of compares and branches — `setp.eq.u32 p, i, k; @p bra Lk` for every k — followed by `trap; exit;` for an
 *  index past the list (the PTX ISA leaves it undefined; the emulator's brx.idx faults). A code generator that
 *  only handles nesting flow (WGSL) runs this before structuring: the same targets, reached by compares. The
 *  function itself when it has no `brx.idx` (or only guarded ones, left as they are). */
export function lowerIndirectBranches(fn: IrFunction): IrFunction {
  if (!fn.instructions.some((i) => i.op === 'brx' && !i.guard)) return fn
  const registers = [...fn.registers]
  const out: Instruction[] = []
  const newIndex: number[] = []
  for (const ins of fn.instructions) {
    newIndex.push(out.length)
    const list = ins.operands[1]
    const index = ins.operands[0]
    if (ins.op !== 'brx' || ins.guard || list?.kind !== 'list' || !index) { out.push(ins); continue }
    const p = registers.length
    registers.push({ name: `%kp_brx${p}`, type: 'pred' })
    const at = { line: ins.line, ...(ins.loc ? { loc: ins.loc } : {}) }
    list.items.forEach((label, k) => {
      out.push({ index: 0, op: 'setp', qualifiers: ['eq', 'u32'], types: ['u32'], type: 'u32', cmp: 'eq', flags: {}, operands: [{ kind: 'reg', id: p }, index, { kind: 'imm', imm: { kind: 'int', value: BigInt(k) } }], ...at, text: `setp.eq.u32 %kp_brx${p}, (${ins.text}: case ${k})` } as Instruction)
      out.push({ index: 0, op: 'bra', qualifiers: [], types: [], flags: {}, operands: [label], guard: { reg: p, negate: false }, ...at, text: `@%kp_brx${p} bra (${ins.text}: case ${k})` } as Instruction)
    })
    out.push({ index: 0, op: 'trap', qualifiers: [], types: [], flags: {}, operands: [], ...at, text: `trap (${ins.text}: index past the list)` } as Instruction)
    out.push({ index: 0, op: 'exit', qualifiers: [], types: [], flags: {}, operands: [], ...at, text: `exit (${ins.text})` } as Instruction)
  }
  const labels = new Map([...fn.labels].map(([l, i]) => [l, i < fn.instructions.length ? newIndex[i]! : out.length] as [string, number]))
  return { ...fn, registers, instructions: out.map((ins, index) => ({ ...ins, index })), labels }
}

/** The basic blocks in an order where each natural loop is contiguous and starts at its header: a reverse
 *  post-order of the loop tree, each loop collapsed to one node in its parent and expanded in place. */
function loopNestedOrder(cfg: Cfg): number[] {
  const { blocks, loops, loopOf } = cfg
  const inLoop = (b: number, L: number) => L === -1 || loops[L]!.blocks.includes(b)
  /** The node of region L that holds block b: b itself, or the outermost loop inside L containing it. */
  const nodeOf = (b: number, L: number): number => {
    let l = loopOf[b]!
    if (l === -1 || l === L) return b
    while (loops[l]!.parent !== L) {
      l = loops[l]!.parent
      if (l === -1) return b
    }
    return -2 - l
  }
  const out: number[] = []
  const placed = new Set<number>()
  const expand = (L: number, entry: number) => {
    const header = L === -1 ? -1 : loops[L]!.header
    const succsOf = (node: number): number[] => {
      const members = node >= 0 ? [node] : loops[-2 - node]!.blocks
      const res: number[] = []
      for (const x of members) {
        for (const s of blocks[x]!.succs) {
          if (!inLoop(s, L) || s === header) continue
          if (node < 0 && loops[-2 - node]!.blocks.includes(s)) continue
          const n = nodeOf(s, L)
          if (n !== node) res.push(n)
        }
      }
      return res
    }
    // iterative depth-first post-order from the region's entry
    const seen = new Set<number>([entry])
    const post: number[] = []
    const stack: Array<[number, number[], number]> = [[entry, succsOf(entry), 0]]
    while (stack.length) {
      const top = stack[stack.length - 1]!
      if (top[2] < top[1].length) {
        const nx = top[1][top[2]++]!
        if (!seen.has(nx)) { seen.add(nx); stack.push([nx, succsOf(nx), 0]) }
      } else {
        post.push(top[0])
        stack.pop()
      }
    }
    for (const node of post.reverse()) {
      if (node >= 0) { if (!placed.has(node)) { placed.add(node); out.push(node) } } else expand(-2 - node, loops[-2 - node]!.header)
    }
  }
  if (blocks.length) expand(-1, nodeOf(0, -1) >= 0 ? 0 : nodeOf(0, -1))
  for (const b of blocks) if (!placed.has(b.id)) out.push(b.id)
  return out
}

/** The blocks laid out by loopNestedOrder, with jumps where a fall-through successor moved away. */
function relayout(fn: IrFunction, cfg: Cfg): { items: SequenceItem[]; labels: Map<string, number> } | undefined {
  if (!cfg.blocks.length) return undefined
  const order = loopNestedOrder(cfg)
  const n = fn.instructions.length
  const endLabel = [...fn.labels].find(([, at]) => at === n)?.[0] ?? '$kp.end'
  const labelOf = (b: number) => cfg.blocks[b]!.labels[0] ?? `$kp.block${b}`
  const items: SequenceItem[] = []
  const labels = new Map<string, number>()
  order.forEach((b, k) => {
    const blk = cfg.blocks[b]!
    for (const l of blk.labels) labels.set(l, items.length)
    if (!blk.labels.length) labels.set(labelOf(b), items.length)
    for (let i = blk.start; i < blk.end; i++) items.push({ index: i })
    const last = blk.end > blk.start ? fn.instructions[blk.end - 1]! : undefined
    const ends = last && !last.guard && (last.op === 'bra' || last.op === 'ret' || last.op === 'exit' || last.op === 'brx')
    if (ends) return
    const next = order[k + 1]
    if (b + 1 < cfg.blocks.length) {
      if (next !== b + 1) items.push({ jump: labelOf(b + 1) })
    } else if (next !== undefined) items.push({ jump: endLabel })
  })
  if (!labels.has(endLabel)) labels.set(endLabel, items.length)
  return { items, labels }
}

/** Structures one sequence (the written one, or a re-layout). */
function structureSequence(fn: IrFunction, items: SequenceItem[], labelAt: ReadonlyMap<string, number>): Structure {
  const ins = fn.instructions
  const n = items.length
  /** The branch at position i: its target label and PTX line (0 for an added jump); undefined when none. */
  const branchAt = (i: number): { label: string | undefined; line: number } | undefined => {
    const it = items[i]!
    if ('jump' in it) return { label: it.jump, line: 0 }
    const st = ins[it.index]!
    if (st.op !== 'bra') return undefined
    const t0 = st.operands[0]
    return { label: t0?.kind === 'label' ? t0.name : undefined, line: st.line }
  }
  const fwd = new Map<string, [number, number]>() // label → [first source, target)
  const back = new Map<string, [number, number]>() // label → [header, last back edge + 1)
  for (let i = 0; i < n; i++) {
    const it = items[i]!
    if ('index' in it && ins[it.index]!.op === 'brx') return { kind: 'fallback', reason: `indirect branch at PTX line ${ins[it.index]!.line}` }
    const br = branchAt(i)
    if (!br) continue
    const t = br.label !== undefined ? labelAt.get(br.label) : undefined
    if (t === undefined || br.label === undefined) return { kind: 'fallback', reason: `branch without a label target at PTX line ${br.line}` }
    const name = br.label
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
    const it = items[i]!
    top().push('index' in it ? { kind: 'instr', index: it.index } : { kind: 'jump', label: it.jump, target: { kind: 'break', node: -1 } })
  }
  if (open.length) return { kind: 'fallback', reason: 'a branch range reaches past the end of the function' }

  // resolve every branch: to the enclosing loop of its label when it goes backwards, else out of its block
  const branches = new Map<number, BranchTarget>()
  const targets = new Map<number, BranchTarget>() // by position
  const enclosing = (i: number, r: StructRegion) => r.start <= i && i < r.end
  for (let i = 0; i < n; i++) {
    const br = branchAt(i)
    if (!br) continue
    const name = br.label!
    const t = labelAt.get(name)!
    const loop = ivs.find((iv) => iv.kind === 'L' && iv.name === name)
    let target: BranchTarget
    if (loop && t <= i && enclosing(i, regionOf.get(loop)!)) target = { kind: 'continue', node: regionOf.get(loop)!.id }
    else target = { kind: 'break', node: regionOf.get(ivs.find((iv) => iv.kind === 'B' && iv.name === name)!)!.id }
    targets.set(i, target)
    const it = items[i]!
    if ('index' in it) branches.set(it.index, target)
  }
  // added jumps carry their target in the node
  const fill = (nodes: StructNode[], from: number): number => {
    let pos = from
    for (const x of nodes) {
      if (x.kind === 'instr') pos++
      else if (x.kind === 'jump') { x.target = targets.get(pos)!; pos++ } else pos = fill(x.body, pos)
    }
    return pos
  }
  fill(root, 0)
  // a block entered past one guarded branch to its end, which nothing else leaves, is an `if`
  for (const r of regions) {
    if (r.kind !== 'block') continue
    const first = r.body[0]
    if (first?.kind !== 'instr' || !ins[first.index]!.guard || ins[first.index]!.op !== 'bra') continue
    const target = branches.get(first.index)
    if (target?.kind !== 'break' || target.node !== r.id) continue
    let others = 0
    for (const [i, b] of targets) if (b.node === r.id && !('index' in items[i]! && items[i]!.index === first.index)) others++
    if (others) continue
    r.kind = 'if'
    r.branch = first.index
  }
  return { kind: 'structured', body: root, branches, regions }
}
