// Value bounds of 64-bit integer registers: the largest magnitude each can hold when every 64-bit kernel
// parameter is a number within ±2^40 (the emulator checks that at launch and otherwise runs the generic
// code). A monotone fixpoint over all definitions; anything unbounded, beyond 2^53 − 1 or still growing
// after 8 passes (a loop-carried increment) is Infinity. With it the emulator turns bounded 64-bit adds
// into plain `+` on doubles.
import type { IrFunction, Instruction, Operand } from '../ir.js'
import type { RegisterClass } from './register-classes.js'

/** Magnitude bound of the 64-bit kernel parameters the bounds assume. */
export const PARAM_BOUND = 2 ** 40

/** The bound of every i64-class register (by id); other registers are absent. */
export function analyzeBounds(fn: IrFunction, classes: readonly RegisterClass[]): Map<number, number> {
  const MAX = 2 ** 53 - 1
  const b = new Map<number, number>()
  const params = new Set(fn.params.map((p) => p.name))
  classes.forEach((c, r) => { if (c === 'i64') b.set(r, 0) })
  const val = (o: Operand | undefined): number => {
    if (!o) return Infinity
    if (o.kind === 'imm') return o.imm.kind === 'int' ? Math.abs(Number(BigInt.asIntN(64, o.imm.value))) : Infinity
    if (o.kind === 'reg') {
      const c = classes[o.id]
      return c === 'i64' ? b.get(o.id)! : c === 'i32' || c === 'i16' ? 2 ** 32 : Infinity
    }
    // special registers and variable addresses are 32-bit
    if (o.kind === 'special' || (o.kind === 'sym' && o.target === 'variable')) return 2 ** 32
    return Infinity
  }
  const transfer = (ins: Instruction): number => {
    const A = ins.operands
    const t = ins.types
    switch (ins.op) {
      case 'ld': {
        const a = A[1]
        return ins.space === 'param' && a?.kind === 'addr' && a.base?.kind === 'sym' && params.has(a.base.name) ? PARAM_BOUND : Infinity
      }
      case 'mov': return A[1]?.kind === 'vec' ? Infinity : val(A[1])
      case 'cvt': return t[1] && /^[us](8|16|32)$/.test(t[1]) ? 2 ** 32 : Infinity
      // a generic address of shared, local or parameter memory: the emulator places those windows below 2^37
      case 'cvta': return ins.space === 'shared' || ins.space === 'local' || ins.space === 'param' ? val(A[1]) + 2 ** 37 : val(A[1])
      case 'mul': {
        if (ins.part !== 'wide' || (t[0] !== 's32' && t[0] !== 'u32')) return Infinity
        const k = A[2]?.kind === 'imm' && A[2].imm.kind === 'int' ? Math.abs(Number(BigInt.asIntN(32, A[2].imm.value))) : 2 ** 32
        return 2 ** 32 * k
      }
      case 'add': case 'sub': return ins.flags.cc ? Infinity : val(A[1]) + val(A[2])
      case 'shl': {
        const s = A[2]
        return s?.kind === 'imm' && s.imm.kind === 'int' && s.imm.value < 32n ? val(A[1]) * 2 ** Number(s.imm.value) : Infinity
      }
      case 'selp': return Math.max(val(A[1]), val(A[2]))
      default: return Infinity
    }
  }
  const defs: Array<[number, Instruction]> = []
  const unbounded = new Set<number>()
  for (const ins of fn.instructions) {
    // registers written through vector or pair destinations are not tracked
    const d0 = ins.operands[0]
    if (d0 && (d0.kind === 'vec' || d0.kind === 'pair')) for (const x of d0.kind === 'vec' ? d0.items : [d0.first, d0.second]) if (x.kind === 'reg' && b.has(x.id)) unbounded.add(x.id)
    if (d0?.kind !== 'reg') continue
    if (b.has(d0.id) && !['st', 'red', 'bra', 'call'].includes(ins.op)) defs.push([d0.id, ins])
  }
  for (const r of unbounded) b.set(r, Infinity)
  for (let pass = 0; ; pass++) {
    let changed = false
    for (const [r, ins] of defs) {
      let v = transfer(ins)
      if (!(v <= MAX)) v = Infinity
      if (v > b.get(r)!) {
        // growth after many passes means a loop-carried increment: give up on that register
        b.set(r, pass > 8 ? Infinity : v)
        changed = true
      }
    }
    if (!changed) break
  }
  return b
}
