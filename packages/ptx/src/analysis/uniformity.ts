// Uniformity (divergence) analysis: for every register, the widest group of threads over which its value is
// the same. `grid`: every thread of the launch (kernel parameters, immediates, %ntid, %nctaid); `block`:
// the threads of one block (%ctaid, a barrier reduction's result); `warp`: the lanes of one warp (%warpid,
// vote, redux, an indexed shuffle from one lane); `thread`: may differ per thread (%tid, %laneid, loads
// from writable memory, atomics). A value is as divergent as the most divergent of its operands, of the
// guard of an instruction that writes it (where the guard is false the old value stays), and of the
// branches its definition is control dependent on (a register written on one side of a divergent branch,
// or in a loop whose exit diverges, differs between threads after the merge). Registers are analysed
// flow-insensitively (one level for all definitions), iterated to a fixpoint. naga's uniformity analysis
// and POCL's VariableUniformityAnalysis serve the same purpose: which values a code generator may keep
// per block or per warp instead of per thread.
import { controlDependence, type Cfg } from '../cfg.js'
import { collectiveOf } from '../collectives.js'
import { definedRegisters, type Instruction, type IrFunction, type Operand } from '../ir.js'

export type Uniformity = 'grid' | 'block' | 'warp' | 'thread'
const ORDER: readonly Uniformity[] = ['grid', 'block', 'warp', 'thread']
const GRID = 0, BLOCK = 1, WARP = 2, THREAD = 3

export interface UniformityFacts {
  /** Level of each register (by id). */
  register: Uniformity[]
  /** Level of each block's execution: whether all threads of a group reach it together. */
  block: Uniformity[]
  /** Level of the value an instruction computes (its result), by instruction index. */
  instruction: Uniformity[]
  /** Level of an operand's value as read anywhere in the function. */
  operand(o: Operand): Uniformity
}

function special(name: string): number {
  if (/^%(tid|laneid|lanemask_|clock|globaltimer)/.test(name)) return THREAD
  if (name === '%warpid') return WARP
  if (/^%(ctaid|smid|cluster_ctaid|cluster_ctarank)/.test(name)) return BLOCK
  return GRID
}

export function analyzeUniformity(fn: IrFunction, cfg: Cfg): UniformityFacts {
  const reg = new Uint8Array(fn.registers.length)
  const blockLevel = new Uint8Array(cfg.blocks.length)
  const insLevel = new Uint8Array(fn.instructions.length)
  const cd = controlDependence(cfg)
  const level = (o: Operand | undefined): number => {
    if (!o) return GRID
    switch (o.kind) {
      case 'reg': return reg[o.id]!
      case 'special': return special(o.name)
      case 'imm': case 'sym': case 'label': case 'sink': return GRID
      case 'addr': return level(o.base)
      case 'not': case 'neg': return level(o.operand)
      case 'vec': case 'list': return o.items.reduce((m, x) => Math.max(m, level(x)), GRID)
      case 'pair': return Math.max(level(o.first), level(o.second))
    }
  }
  const params = new Set(fn.kind === 'entry' ? fn.params.map((p) => p.name) : [])
  const kernelParam = (o: Operand | undefined) => o?.kind === 'addr' && o.base?.kind === 'sym' && params.has(o.base.name)
  const sources = (ins: Instruction) => ins.operands.slice(definedRegisters(ins).length ? 1 : 0).reduce((m, o) => Math.max(m, level(o)), GRID)
  /** Level of the value `ins` computes, before control dependence. */
  const result = (ins: Instruction): number => {
    const src = sources(ins)
    const c = collectiveOf(ins)
    if (c) {
      switch (c.kind) {
        case 'bar': return Math.min(src, BLOCK)
        case 'vote': case 'redux': case 'activemask': return Math.min(src, WARP)
        case 'match': return c.mode === 'all' ? Math.min(src, WARP) : THREAD
        case 'elect': return THREAD
        // each lane gets its own part of a matrix
        case 'mma': case 'ldmatrix': case 'movmatrix': return THREAD
        // an indexed shuffle from a lane chosen uniformly gives every lane that lane's value
        case 'shfl': return c.mode === 'idx' && level(ins.operands[2]) <= WARP ? Math.min(level(ins.operands[1]), WARP) : src
        default: return src
      }
    }
    switch (ins.op) {
      case 'ld': case 'ldu': {
        // read-only memory gives every thread that reads one address the same value; other memory may be
        // written between two threads' reads. Of `.param` space only a kernel's own parameters are
        // read-only: a call sequence's `.param` variables and a device function's parameters hold what
        // each thread passed.
        const readOnly = ins.op === 'ldu' || ins.space === 'const' || ins.flags.nc === true || (ins.space === 'param' && kernelParam(ins.operands[1]))
        return readOnly ? src : THREAD
      }
      case 'atom': return THREAD
      // the carry flag an earlier add.cc / sub.cc / mad.cc of the thread set is an operand too (its level is
      // not tracked: taken as the thread's own, so that `addc.u32 d, 0, 0` is not a value of the grid)
      case 'addc': case 'subc': case 'madc': return THREAD
      // a wmma.load fragment is the lane's own part of the matrix; an mbarrier's state and waits change
      case 'wmma': case 'mbarrier': return THREAD
      // a generic address of local memory is per thread
      case 'cvta': return !ins.flags.to && ins.space === 'local' ? THREAD : src
      default: return src
    }
  }
  for (let changed = true; changed;) {
    changed = false
    // a block runs under the branches it is control dependent on
    for (const b of cfg.blocks) {
      let l = GRID
      for (const a of cd[b.id]!) {
        const blk = cfg.blocks[a]!
        const last = fn.instructions[blk.end - 1]
        l = Math.max(l, blockLevel[a]!, last?.guard ? reg[last.guard.reg]! : GRID)
      }
      if (l > blockLevel[b.id]!) { blockLevel[b.id] = l; changed = true }
    }
    for (const b of cfg.blocks) {
      for (let i = b.start; i < b.end; i++) {
        const ins = fn.instructions[i]!
        const v = result(ins)
        if (v > insLevel[i]!) insLevel[i] = v
        let l = Math.max(v, blockLevel[b.id]!)
        if (ins.guard) l = Math.max(l, reg[ins.guard.reg]!)
        for (const d of definedRegisters(ins)) if (l > reg[d]!) { reg[d] = l; changed = true }
      }
    }
  }
  return {
    register: [...reg].map((l) => ORDER[l]!),
    block: [...blockLevel].map((l) => ORDER[l]!),
    instruction: [...insLevel].map((l) => ORDER[l]!),
    operand: (o) => ORDER[level(o)]!,
  }
}
