// The compare-and-swap idiom (issue 32, part 3): a plain load whose value is the expected value of an
// `atom.cas` on the same address. The CUDA C++ Programming Guide's atomicAdd(double) and the AtomicMax<double>
// of Jacobi solvers read `*address` plainly and retry `atomicCAS(address, assumed, f(assumed))` until it
// succeeds:
//
//   ld.global.u64 %rd11, [%rd1];
//   $L: mov.b64 %fd2, %rd11; add.f64 %fd3, %fd1, %fd2; mov.b64 %rd10, %fd3;
//       atom.global.cas.b64 %rd4, [%rd1], %rd11, %rd10; setp.ne.s64 %p2, %rd11, %rd4; mov.u64 %rd11, %rd4; @%p2 bra $L;
//
// A stale value read there only makes the CAS fail and the loop retry, so what the program computes does not
// depend on the order of that load and the other threads' atomics. The sanitizer's racecheck therefore takes
// such a load as it takes an atomic (a strong operation), while a plain load whose value is used otherwise (a
// counter read before the other threads' atomicAdds are done) stays a racing read.
//
// The value is followed through `mov`s (the loop's `assumed = old`, nvcc's bit moves between .f64 and .b64
// registers); the addresses must be the same: the same offset from the same variable or the same register (a
// register written once by a `mov` stands for what it copies).
import { definedRegisters, type Instruction, type IrFunction, type Operand } from '../ir.js'

/** Indices of the loads (`ld` of one register; `.volatile` or not) whose value reaches the expected-value
 *  operand of an `atom.cas` on the same address in `fn`. */
export function analyzeCasLoads(fn: IrFunction): Set<number> {
  const out = new Set<number>()
  const cas = fn.instructions.filter((ins) => ins.op === 'atom' && ins.atomOp === 'cas')
  if (!cas.length) return out
  // copy edges: register → the registers a `mov` copies it into
  const copies = new Map<number, number[]>()
  const link = (from: number, to: number) => {
    let l = copies.get(from)
    if (!l) copies.set(from, (l = []))
    l.push(to)
  }
  for (const ins of fn.instructions) {
    const [d, s] = ins.operands
    if (ins.op === 'mov' && d?.kind === 'reg' && s?.kind === 'reg') link(s.id, d.id)
  }
  const reach = (r: number): Set<number> => {
    const seen = new Set([r])
    const work = [r]
    while (work.length) for (const x of copies.get(work.pop()!) ?? []) if (!seen.has(x)) { seen.add(x); work.push(x) }
    return seen
  }
  // an address register stands for what its one definition copies (`mov.u32 %r6, partial` of a shared variable)
  const defs = new Map<number, Instruction[]>()
  for (const ins of fn.instructions) for (const r of definedRegisters(ins)) defs.set(r, [...(defs.get(r) ?? []), ins])
  const root = (o: Operand | undefined, depth = 0): string | undefined => {
    if (o?.kind === 'sym') return `sym:${o.name}`
    if (o?.kind !== 'reg') return undefined
    const d = defs.get(o.id)
    if (d?.length === 1 && d[0]!.op === 'mov' && !d[0]!.guard && depth < 16) return root(d[0]!.operands[1], depth + 1) ?? `reg:${o.id}`
    return `reg:${o.id}`
  }
  const sameAddress = (a: Operand | undefined, b: Operand | undefined): boolean =>
    a?.kind === 'addr' && b?.kind === 'addr' && a.offset === b.offset && root(a.base) !== undefined && root(a.base) === root(b.base)
  fn.instructions.forEach((ins, i) => {
    if (ins.op !== 'ld' || ins.vector) return
    const d = ins.operands[0]
    if (d?.kind !== 'reg') return
    const values = reach(d.id)
    for (const c of cas) {
      const expected = c.operands[2]
      if (expected?.kind === 'reg' && values.has(expected.id) && sameAddress(ins.operands[1], c.operands[1])) { out.add(i); return }
    }
  })
  return out
}
