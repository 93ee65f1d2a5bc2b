// Liveness of registers (backward dataflow over the CFG): which registers hold a value some later
// instruction may read. A guarded instruction does not kill what it writes (the old value survives where
// the guard is false). The emulator saves exactly the registers live across a suspension point; the coming
// barrier-region thread loops keep exactly those alive between regions.
import type { Cfg } from '../cfg.js'
import { definedRegisters, usedRegisters, type IrFunction } from '../ir.js'

export interface Liveness {
  /** Registers live right before instruction i (ascending ids). */
  liveIn(i: number): number[]
  /** Registers live right after instruction i. */
  liveOut(i: number): number[]
  /** Registers live after i that i does not write: what must survive while i waits for other threads. */
  liveAcross(i: number): number[]
}

/** Bit sets of W 32-bit words. */
type Bits = Uint32Array

/** `extraUses`: registers an instruction reads beyond its operands, as a writer computes it (an add that a
 *  writer fuses with the product before it reads the product's operands: contraction.ts). */
export function analyzeLiveness(fn: IrFunction, cfg: Cfg, extraUses?: ReadonlyMap<number, readonly number[]>): Liveness {
  const R = fn.registers.length
  const W = Math.max(1, Math.ceil(R / 32))
  const n = fn.instructions.length
  const defs = fn.instructions.map(definedRegisters)
  const uses = fn.instructions.map((x, i) => { const u = usedRegisters(x); const e = extraUses?.get(i); return e ? [...u, ...e] : u })
  const step = (ins: number, out: Bits): Bits => {
    const inn = new Uint32Array(out)
    if (!fn.instructions[ins]!.guard) for (const d of defs[ins]!) inn[d >>> 5]! &= ~(1 << (d & 31))
    for (const u of uses[ins]!) inn[u >>> 5]! |= 1 << (u & 31)
    return inn
  }
  // block-level fixpoint, then each block's instructions backwards
  const B = cfg.blocks.length
  const blockIn: Bits[] = Array.from({ length: B }, () => new Uint32Array(W))
  const blockOut: Bits[] = Array.from({ length: B }, () => new Uint32Array(W))
  // post-order converges fastest; unreachable blocks are analysed too (their instructions still get facts)
  const reached = new Set(cfg.rpo)
  const order = [...[...cfg.rpo].reverse(), ...cfg.blocks.map((b) => b.id).filter((b) => !reached.has(b))]
  for (let changed = true; changed;) {
    changed = false
    for (const b of order) {
      const blk = cfg.blocks[b]!
      const out = blockOut[b]!
      for (const s of blk.succs) { const si = blockIn[s]!; for (let w = 0; w < W; w++) out[w]! |= si[w]! }
      let cur: Bits = new Uint32Array(out)
      for (let i = blk.end - 1; i >= blk.start; i--) cur = step(i, cur)
      const prev = blockIn[b]!
      for (let w = 0; w < W; w++) if (prev[w] !== cur[w]) { prev[w] = cur[w]!; changed = true }
    }
  }
  const liveOut: Bits[] = new Array(n)
  const liveIn: Bits[] = new Array(n)
  for (const blk of cfg.blocks) {
    let cur: Bits = new Uint32Array(blockOut[blk.id]!)
    for (let i = blk.end - 1; i >= blk.start; i--) {
      liveOut[i] = cur
      cur = step(i, cur)
      liveIn[i] = cur
    }
  }
  const list = (s: Bits | undefined) => {
    const out: number[] = []
    if (!s) return out
    for (let r = 0; r < R; r++) if ((s[r >>> 5]! >>> (r & 31)) & 1) out.push(r)
    return out
  }
  return {
    liveIn: (i) => list(liveIn[i]),
    liveOut: (i) => list(liveOut[i]),
    liveAcross: (i) => {
      const set = new Uint32Array(liveOut[i] ?? new Uint32Array(W))
      for (const d of defs[i]!) set[d >>> 5]! &= ~(1 << (d & 31))
      return list(set)
    },
  }
}
