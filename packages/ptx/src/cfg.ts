// The control-flow graph of a function: basic blocks over the IR's instruction list, their edges, and the
// graph facts the analyses share (reverse post-order, dominators, post-dominators, natural loops). A block
// starts at instruction 0, at every label and after every branch, return or exit; a label at the very end
// of the body starts an empty block (falling into it returns). `brx.idx` goes to every label of its
// `.branchtargets` list.
import type { IrFunction } from './ir.js'

export interface BasicBlock {
  id: number
  /** Instructions [start, end) of IrFunction.instructions. */
  start: number
  end: number
  /** Labels naming the block's first instruction. */
  labels: string[]
  succs: number[]
  preds: number[]
  /** The block may leave the function: it ends in ret/exit (guarded or not) or has no successor. */
  exits: boolean
}

export interface Loop {
  /** The block every back edge goes to. */
  header: number
  /** Blocks of the loop (header included), ascending. */
  blocks: number[]
  /** Blocks with a back edge to the header. */
  latches: number[]
  /** The innermost loop enclosing this one, or -1. */
  parent: number
}

export interface Cfg {
  blocks: BasicBlock[]
  /** Block of each instruction. */
  blockOf: Int32Array
  /** Blocks in reverse post-order from block 0 (unreachable blocks are left out). */
  rpo: number[]
  /** Immediate dominator of each block (-1 for block 0 and unreachable blocks). */
  idom: Int32Array
  /** Immediate post-dominator of each block; -1 for the virtual exit (blocks that leave the function). */
  ipdom: Int32Array
  loops: Loop[]
  /** Innermost loop of each block, or -1. */
  loopOf: Int32Array
}

const TERMINATORS = new Set(['bra', 'brx', 'ret', 'exit'])

export function buildCfg(fn: IrFunction): Cfg {
  const n = fn.instructions.length
  const starts = new Set<number>([0])
  for (const at of fn.labels.values()) starts.add(at)
  fn.instructions.forEach((ins, i) => { if (TERMINATORS.has(ins.op) && i + 1 <= n) starts.add(i + 1) })
  // a label-less position right after the last instruction needs no block unless a label names it
  if (![...fn.labels.values()].includes(n)) starts.delete(n)
  const sorted = [...starts].sort((a, b) => a - b)
  if (sorted.length === 0) return { blocks: [], blockOf: new Int32Array(0), rpo: [], idom: new Int32Array(0), ipdom: new Int32Array(0), loops: [], loopOf: new Int32Array(0) }
  const blocks: BasicBlock[] = sorted.map((start, id) => ({ id, start, end: sorted[id + 1] ?? n, labels: [], succs: [], preds: [], exits: false }))
  const blockOf = new Int32Array(n)
  const blockAt = new Map<number, number>()
  for (const b of blocks) { blockAt.set(b.start, b.id); for (let i = b.start; i < b.end; i++) blockOf[i] = b.id }
  for (const [name, at] of fn.labels) blocks[blockAt.get(at)!]!.labels.push(name)
  for (const b of blocks) {
    const last = b.end > b.start ? fn.instructions[b.end - 1]! : undefined
    const next = b.id + 1 < blocks.length ? [b.id + 1] : []
    let succs: number[]
    if (last?.op === 'bra') {
      const t = last.operands[0]
      const target = t?.kind === 'label' ? blockAt.get(fn.labels.get(t.name)!) : undefined
      succs = [...(target !== undefined ? [target] : []), ...(last.guard ? next : [])]
    } else if (last?.op === 'brx') {
      const list = last.operands[1]
      const targets = list?.kind === 'list' ? list.items.flatMap((t) => (t.kind === 'label' && fn.labels.has(t.name) ? [blockAt.get(fn.labels.get(t.name)!)!] : [])) : []
      succs = [...targets, ...(last.guard ? next : [])]
    } else if (last && (last.op === 'ret' || last.op === 'exit')) succs = last.guard ? next : []
    else succs = next
    b.succs = [...new Set(succs)]
    b.exits = b.succs.length === 0 || last?.op === 'ret' || last?.op === 'exit'
  }
  for (const b of blocks) for (const s of b.succs) blocks[s]!.preds.push(b.id)
  return completeCfg(blocks, blockOf)
}

/** The graph facts (orders, dominators, post-dominators, loops) of blocks whose edges are set;
 *  `leaves(b)`: block b has a way out of the function (post-dominators), by default `exits`. */
function completeCfg(blocks: BasicBlock[], blockOf: Int32Array, leaves: (b: BasicBlock) => boolean = (b) => b.exits): Cfg {
  const rpo = reversePostOrder(blocks.length, (b) => blocks[b]!.succs, [0])
  const idom = dominators(blocks.length, rpo, (b) => blocks[b]!.preds)
  // post-dominators: dominators of the reversed graph from a virtual exit (index blocks.length)
  const exitId = blocks.length
  const exits = blocks.filter(leaves).map((b) => b.id)
  const rsuccs = (b: number) => (b === exitId ? exits : blocks[b]!.preds)
  const rpreds = (b: number) => (b === exitId ? [] : leaves(blocks[b]!) ? [...blocks[b]!.succs, exitId] : blocks[b]!.succs)
  const prpo = reversePostOrder(blocks.length + 1, rsuccs, [exitId])
  const pdom = dominators(blocks.length + 1, prpo, rpreds)
  const ipdom = new Int32Array(blocks.length)
  for (let b = 0; b < blocks.length; b++) ipdom[b] = pdom[b] === exitId ? -1 : pdom[b]!
  const { loops, loopOf } = naturalLoops(blocks, idom)
  return { blocks, blockOf, rpo, idom, ipdom, loops, loopOf }
}

/** The CFG of the threads that do not take the edges `drop` names (`to` undefined: a guarded ret/exit's
 *  way out of the function) — of the threads still running once others returned. A dropped edge leaves
 *  its block's successors (it decides nothing among the threads that stay: control dependence ignores
 *  it) but still counts as a way out of the function for post-dominance, so every block keeps reaching
 *  the exit. A block left without successors exits. */
export function cfgWithoutEdges(cfg: Cfg, drop: (from: BasicBlock, to: BasicBlock | undefined) => boolean): Cfg {
  if (cfg.blocks.length === 0) return cfg
  const leaves = new Uint8Array(cfg.blocks.length)
  const blocks: BasicBlock[] = cfg.blocks.map((b) => {
    const succs = b.succs.filter((s) => !drop(b, cfg.blocks[s]!))
    const dropsExit = b.exits && b.succs.length > 0 && drop(b, undefined)
    const exits = succs.length === 0 || (b.exits && !dropsExit)
    if (exits || dropsExit || succs.length < b.succs.length) leaves[b.id] = 1
    return { ...b, labels: [...b.labels], succs, preds: [], exits }
  })
  for (const b of blocks) for (const s of b.succs) blocks[s]!.preds.push(b.id)
  return completeCfg(blocks, cfg.blockOf, (b) => leaves[b.id] === 1)
}

function reversePostOrder(count: number, succs: (b: number) => readonly number[], roots: number[]): number[] {
  const seen = new Uint8Array(count)
  const post: number[] = []
  for (const root of roots) {
    if (seen[root]) continue
    // iterative DFS: [block, next successor index]
    const stack: Array<[number, number]> = [[root, 0]]
    seen[root] = 1
    while (stack.length) {
      const top = stack[stack.length - 1]!
      const ss = succs(top[0])
      if (top[1] < ss.length) {
        const s = ss[top[1]++]!
        if (!seen[s]) { seen[s] = 1; stack.push([s, 0]) }
      } else {
        post.push(top[0])
        stack.pop()
      }
    }
  }
  return post.reverse()
}

/** Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm": immediate dominators (the root's is
 *  itself while iterating, -1 in the result; unreachable nodes -1). */
function dominators(count: number, rpo: readonly number[], preds: (b: number) => readonly number[]): Int32Array {
  const order = new Int32Array(count).fill(-1)
  rpo.forEach((b, i) => { order[b] = i })
  const idom = new Int32Array(count).fill(-1)
  const root = rpo[0]!
  idom[root] = root
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (order[a]! > order[b]!) a = idom[a]!
      while (order[b]! > order[a]!) b = idom[b]!
    }
    return a
  }
  for (let changed = true; changed;) {
    changed = false
    for (const b of rpo) {
      if (b === root) continue
      let d = -1
      for (const p of preds(b)) {
        if (idom[p] === -1) continue
        d = d === -1 ? p : intersect(p, d)
      }
      if (d !== -1 && idom[b] !== d) { idom[b] = d; changed = true }
    }
  }
  idom[root] = -1
  return idom
}

/** True when block a dominates block b. */
export function dominates(cfg: Cfg, a: number, b: number): boolean {
  for (let x = b; x !== -1; x = cfg.idom[x]!) if (x === a) return true
  return false
}

function naturalLoops(blocks: BasicBlock[], idom: Int32Array): { loops: Loop[]; loopOf: Int32Array } {
  const doms = (a: number, b: number) => { for (let x = b; x !== -1; x = idom[x]!) if (x === a) return true; return false }
  const byHeader = new Map<number, { blocks: Set<number>; latches: number[] }>()
  for (const b of blocks) {
    for (const s of b.succs) {
      if (!doms(s, b.id)) continue
      let l = byHeader.get(s)
      if (!l) { l = { blocks: new Set([s]), latches: [] }; byHeader.set(s, l) }
      l.latches.push(b.id)
      const work = [b.id]
      while (work.length) {
        const x = work.pop()!
        if (l.blocks.has(x)) continue
        l.blocks.add(x)
        work.push(...blocks[x]!.preds)
      }
    }
  }
  const loops: Loop[] = [...byHeader].map(([header, l]) => ({ header, blocks: [...l.blocks].sort((a, b) => a - b), latches: l.latches, parent: -1 }))
  // innermost first: fewer blocks
  loops.sort((a, b) => a.blocks.length - b.blocks.length || a.header - b.header)
  const loopOf = new Int32Array(blocks.length).fill(-1)
  loops.forEach((l, i) => { for (const b of l.blocks) if (loopOf[b] === -1) loopOf[b] = i })
  loops.forEach((l, i) => {
    const outer = loops.findIndex((o, j) => j > i && o.blocks.includes(l.header))
    l.parent = outer
  })
  return { loops, loopOf }
}

/** Control dependence (Ferrante, Ottenstein and Warren): for each block, the blocks whose last instruction
 *  decides whether it runs (a conditional branch, a guarded ret/exit). */
export function controlDependence(cfg: Cfg): number[][] {
  const cd: Array<Set<number>> = cfg.blocks.map(() => new Set())
  for (const a of cfg.blocks) {
    if (a.succs.length + (a.exits ? 1 : 0) < 2) continue
    const stop = cfg.ipdom[a.id]!
    for (const s of a.succs) {
      for (let r = s; r !== -1 && r !== stop; r = cfg.ipdom[r]!) {
        if (cd[r]!.has(a.id)) break
        cd[r]!.add(a.id)
      }
    }
  }
  return cd.map((s) => [...s].sort((x, y) => x - y))
}
