// SIMD across threads (issue 24 item 2), the first shape: a barrier-free kernel whose threads, four at a time
// (consecutive tid.x in one row of the block), run the same instructions as one f32x4/i32x4 operation each.
// This module decides whether a kernel has that shape; emit-wasm.ts writes the 4-lane code (KernelWriter
// vectorGroup) and falls back to one thread at a time for a group whose lanes part ways.
//
// The shape: no loops (every branch goes forward, so the instruction order is an order of execution), every
// conditional branch before the first store (a group whose lanes disagree at a branch has written nothing yet,
// and its four threads start again one at a time), 32-bit values only (i32, f32, predicates), except 64-bit
// registers that only compute addresses of accesses the per-block test already covers (nvcc's
// `mul.wide.s32 %rd5, %r1, 4; add.s64 %rd6, %rd4, %rd5`): those the 4-lane code does not compute at all, as it
// addresses memory from the block's tested base plus 4·tid.x. Which instructions have a 4-lane form is the
// writer's to say: one without makes the whole kernel keep its scalar loop.
import { definedRegisters, operandRegisters, type Instruction, type IrFunction, type RegisterClass, type Structure } from '@kernelpack/ptx'

export interface SimdPlan {
  /** 64-bit registers the 4-lane code leaves out: every use is an address of a tested access, or feeds one. */
  addressOnly: ReadonlySet<number>
  /** Instructions whose result is the same in every lane of every group of a block (pure arithmetic on
   *  kernel parameters, immediates, %ctaid, %ntid, %nctaid and such results, each register defined once): the
   *  writer computes them once per block, before the groups. */
  uniform: ReadonlySet<number>
}

const PURE = new Set(['mov', 'add', 'sub', 'mul', 'mad', 'and', 'or', 'xor', 'not', 'shl', 'shr', 'cvt', 'setp', 'selp', 'neg', 'abs'])
const BLOCK_UNIFORM = new Set(['%ntid.x', '%ntid.y', '%ntid.z', '%ctaid.x', '%ctaid.y', '%ctaid.z', '%nctaid.x', '%nctaid.y', '%nctaid.z'])

/** The registers an instruction reads, with those read as an address operand's base apart. */
export function reads(ins: Instruction): { plain: number[]; bases: number[] } {
  const plain: number[] = [], bases: number[] = []
  if (ins.guard) plain.push(ins.guard.reg)
  const writes = definedRegisters(ins).length > 0
  ins.operands.forEach((o, i) => {
    if (i === 0 && writes) { if (o.kind === 'addr' && o.base?.kind === 'reg') bases.push(o.base.id); return }
    if (o.kind === 'addr') { if (o.base?.kind === 'reg') bases.push(o.base.id) } else operandRegisters(o, plain)
  })
  return { plain, bases }
}

/** The plan for `fn`, or undefined when its shape is not the one above. `tested(i)`: access i has a tested
 *  address whose stride in tid.x is 0 or 4 bytes (the writer's hoisted sites). */
export function planSimd(fn: IrFunction, classes: readonly RegisterClass[], structure: Structure, tested: (index: number) => boolean): SimdPlan | undefined {
  if (structure.kind !== 'structured' || structure.regions.some((r) => r.kind === 'loop')) return undefined
  const ins = fn.instructions
  const firstStore = ins.findIndex((x) => x.op === 'st' || x.op === 'atom' || x.op === 'red' || x.op === 'call')
  if (firstStore >= 0 && ins.some((x, i) => i > firstStore && ((x.op === 'bra' && x.guard) || ((x.op === 'ret' || x.op === 'exit') && x.guard)))) return undefined
  const addressOnly = new Set<number>()
  classes.forEach((c, r) => { if (c === 'i64') addressOnly.add(r) })
  const skipped = (x: Instruction) => { const d = definedRegisters(x); return d.length > 0 && d.every((r) => addressOnly.has(r)) }
  for (let changed = true; changed;) {
    changed = false
    for (const x of ins) {
      if (skipped(x)) continue
      const { plain, bases } = reads(x)
      const memory = (x.op === 'ld' || x.op === 'st') && x.space === 'global'
      for (const r of [...plain, ...(memory && tested(x.index) ? [] : bases)]) if (addressOnly.delete(r)) changed = true
    }
  }
  // every other register the code touches holds a 32-bit value or a predicate
  for (const x of ins) {
    if (skipped(x)) continue
    const { plain, bases } = reads(x)
    for (const r of [...plain, ...definedRegisters(x), ...bases]) {
      if (addressOnly.has(r)) continue
      const c = classes[r]
      if (c !== 'i32' && c !== 'f32' && c !== 'pred') return undefined
    }
  }
  // block-uniform instructions, in order (a register read before its one definition is not uniform)
  const defs = new Map<number, number>()
  for (const x of ins) for (const r of definedRegisters(x)) defs.set(r, (defs.get(r) ?? 0) + 1)
  const uniformReg = new Set<number>()
  const uniform = new Set<number>()
  for (const x of ins) {
    const d = definedRegisters(x)
    if (x.guard || d.length !== 1 || defs.get(d[0]!) !== 1 || addressOnly.has(d[0]!)) continue
    const param = x.op === 'ld' && x.space === 'param' && x.operands[1]?.kind === 'addr' && x.operands[1].base?.kind === 'sym'
    if (!param && !PURE.has(x.op)) continue
    const ok = param || x.operands.slice(1).every((o) => o.kind === 'imm' || (o.kind === 'special' && BLOCK_UNIFORM.has(o.name)) || (o.kind === 'reg' && uniformReg.has(o.id)))
    if (!ok) continue
    uniformReg.add(d[0]!)
    uniform.add(x.index)
  }
  return { addressOnly, uniform }
}
