// Register classes: which JavaScript (or WGSL) representation each register gets. Typed registers are what
// they say; clang 22 declares every register `.b32`/`.b64`, so an untyped one is a float when the
// instructions that touch it mostly treat it as a float: each use or definition with a float type votes +1,
// one with a 32/64-bit integer type votes -1 (bit-typed and 8/16-bit uses do not vote; cvt votes per side;
// setp/set/slct/testp vote their sources by the compared type; a `mov` of a hex float literal votes float).
// Mismatched uses then bit-cast. Pure function of the IR.
import { PtxError } from '../errors.js'
import type { Instruction, IrFunction, Operand } from '../ir.js'

/** i32: int32 numbers; f32/f64: numbers; i64: 64-bit integers; i16: 8/16-bit integers; pred: booleans. */
export type RegisterClass = 'i32' | 'f32' | 'i64' | 'f64' | 'i16' | 'pred'

/** +1 for a float type, -1 for a 32/64-bit integer type, 0 otherwise. */
function weight(t: string | undefined): number {
  if (t === 'f32' || t === 'f64') return 1
  return t && /^[su](32|64)$/.test(t) ? -1 : 0
}

/** The class of every register of `fn` (by register id). */
export function assignRegisterClasses(fn: IrFunction): RegisterClass[] {
  const votes = new Float64Array(fn.registers.length)
  const vote = (o: Operand | undefined, w: number) => {
    if (!o) return
    if (o.kind === 'reg') votes[o.id]! += w
    else if (o.kind === 'vec') for (const x of o.items) vote(x, w)
    else if (o.kind === 'pair') vote(o.first, w)
  }
  const visit = (ins: Instruction) => {
    const types = ins.types
    const A = ins.operands
    if (ins.op === 'cvt') {
      vote(A[0], weight(types[0]))
      vote(A[1], weight(types[1]))
      return
    }
    if (ins.op === 'setp' || ins.op === 'set' || ins.op === 'slct' || ins.op === 'testp') {
      const w = weight(types[types.length - 1])
      for (let i = 1; i < A.length; i++) vote(A[i], w)
      return
    }
    const t = types[types.length - 1]
    if (!t) return
    let w = weight(t)
    if (w === 0 && ins.op === 'mov' && A[1]?.kind === 'imm' && (A[1].imm.kind === 'f32' || A[1].imm.kind === 'f64')) w = 1
    if (w === 0) return
    if (ins.op === 'ld' || ins.op === 'st' || ins.op === 'atom' || ins.op === 'red' || ins.op === 'ldu') {
      for (const a of A) if (a.kind !== 'addr') vote(a, w)
      return
    }
    if (ins.op === 'mul' && ins.part === 'wide') { vote(A[1], w); vote(A[2], w); return }
    for (const a of A) vote(a, w)
  }
  fn.instructions.forEach(visit)
  return fn.registers.map((r, i) => {
    switch (r.type) {
      case 'pred': return 'pred'
      case 'f32': return 'f32'
      case 'f64': return 'f64'
      case 'b32': case 'u32': case 's32': return votes[i]! > 0 ? 'f32' : 'i32'
      case 'b64': case 'u64': case 's64': return votes[i]! > 0 ? 'f64' : 'i64'
      case 'b16': case 'u16': case 's16': case 'f16': case 'bf16': case 'b8': case 'u8': case 's8': return 'i16'
      case 'f16x2': case 'bf16x2': return 'i32'
      default: throw new PtxError(`unsupported register type .${r.type} for ${r.name}`, fn.line)
    }
  })
}
