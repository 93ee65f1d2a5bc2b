// Coalesced window checks: the shared- and local-memory accesses of a straight-line run that go through one
// 32-bit base register at constant offsets (a tiled matmul's `ld.shared.f32 [%r9+64]`, `[%r9+128]`, … sixteen
// times over) are checked once, at the run's first such access, for the hull of their offsets, instead of
// once each. Exactness is kept: a run holds no other instruction that can fault, and no member's base register
// is written between the check and the member, so every member's address is known at the check; when the
// hull does not fit, the members are checked one by one in program order there (cold code), which faults at
// the first one that would have faulted, with its own PTX line and address, before any of them ran.
import { definedRegisters, typeSize, type Instruction, type IrFunction, type RegisterClass } from '@kernelpack/ptx'
import type { Cfg } from '@kernelpack/ptx'

/** One access of a group: instruction, its offset and size. */
export interface WindowMember { index: number; offset: number; n: number }

/** Accesses of `space` through register `reg` with alignment `al` (bytes − 1), checked together. */
export interface WindowGroup {
  space: 'shared' | 'local'
  reg: number
  al: number
  members: WindowMember[]
}

export interface WindowGroups {
  /** Checks to make before the instruction at this index (the run's first access). */
  at: Map<number, WindowGroup[]>
  /** Accesses whose address a group check has already covered. */
  covered: Set<number>
}

/** Instructions the wasm writer lowers without a check that can fault (pure arithmetic and moves). */
const PURE = new Set([
  'add', 'sub', 'mul', 'mad', 'mul24', 'mad24', 'sad', 'fma', 'abs', 'neg', 'min', 'max', 'popc', 'clz', 'bfind',
  'brev', 'bfe', 'bfi', 'prmt', 'lop3', 'and', 'or', 'xor', 'not', 'cnot', 'shl', 'shr', 'shf', 'setp', 'selp',
  'set', 'slct', 'mov', 'cvt', 'copysign', 'rcp', 'sqrt', 'rsqrt', 'sin', 'cos', 'lg2', 'ex2', 'tanh', 'testp',
  'div', 'rem', 'cvta', 'addc', 'subc', 'madc',
])

/** The window access an instruction makes through a 32-bit register, if it is one a group can hold. */
function windowAccess(ins: Instruction, classes: readonly RegisterClass[]): { space: 'shared' | 'local'; reg: number; offset: number; n: number; al: number } | undefined {
  if (ins.guard || (ins.op !== 'ld' && ins.op !== 'st')) return undefined
  if (ins.space !== 'shared' && ins.space !== 'local') return undefined
  if (ins.qualifiers.some((q) => q === 'volatile' || q === 'relaxed' || q === 'acquire' || q === 'release')) return undefined
  const t = ins.type ?? ''
  const sz = typeSize(t)
  if (!sz || t === 'b128' || sz > 8) return undefined
  const o = ins.operands[ins.op === 'ld' ? 1 : 0]
  if (o?.kind !== 'addr' || o.base?.kind !== 'reg') return undefined
  const c = classes[o.base.id]
  if (c !== 'i32' && c !== 'i16') return undefined
  const n = sz * (ins.vector ?? 1)
  return { space: ins.space, reg: o.base.id, offset: o.offset, n, al: n >= 16 ? 15 : n - 1 }
}

/** The groups of a function (basic blocks from its CFG); a run whose groups all hold one access is left to
 *  the accesses' own checks. */
export function planWindowGroups(fn: IrFunction, cfg: Cfg, classes: readonly RegisterClass[]): WindowGroups {
  const out: WindowGroups = { at: new Map(), covered: new Set() }
  const ins = fn.instructions
  for (const bb of cfg.blocks) {
    let i = bb.start
    while (i < bb.end) {
      const first = windowAccess(ins[i]!, classes)
      if (!first) { i++; continue }
      // a run from this access: members, then pure instructions, until anything else
      const groups = new Map<string, WindowGroup>()
      const written = new Set<number>()
      let j = i
      for (; j < bb.end; j++) {
        const x = ins[j]!
        const a = windowAccess(x, classes)
        if (a) {
          if (written.has(a.reg)) break
          const key = `${a.space}:${a.reg}:${a.al}`
          let g = groups.get(key)
          if (!g) { g = { space: a.space, reg: a.reg, al: a.al, members: [] }; groups.set(key, g) }
          // every member's offset keeps the first member's alignment, and the offsets span less than 64 KiB
          // (so that no member's address wraps past a window: emit-wasm.ts windowRun relies on it)
          if (g.members.length && ((a.offset - g.members[0]!.offset) & a.al) !== 0) break
          if (g.members.some((m) => Math.abs(m.offset - a.offset) >= 0x10000)) break
          g.members.push({ index: j, offset: a.offset, n: a.n })
        } else if (!PURE.has(x.op)) break
        for (const r of definedRegisters(x)) written.add(r)
      }
      // every window access of the run is checked at its start (a group of one as a hull of one), so that
      // the cold path can check them all in program order
      const all = [...groups.values()]
      if (all.some((g) => g.members.length > 1)) {
        out.at.set(i, all)
        for (const g of all) for (const m of g.members) out.covered.add(m.index)
      }
      i = Math.max(j, i + 1)
    }
  }
  return out
}
