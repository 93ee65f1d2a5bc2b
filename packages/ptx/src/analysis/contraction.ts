// Multiply-add contraction as ptxas does it (issue 32, part 1). The PTX ISA lets `mul`/`add`/`sub` without a
// rounding modifier be optimized, "typically into fma" ("Floating Point Instructions": "mul/add/sub ... with
// no rounding modifier may be optimized aggressively"), and `ptxas --fmad=true`, the default, does; nvcc and
// clang write `.rn` on every operation they must not contract (`--fmad=false`, `-ffp-contract=off`), so PTX
// built that way has nothing to fuse here. The rule, found by compiling small PTX with ptxas 13 for sm_80
// with --fmad=true and --fmad=false and decoding FFMA/FMUL/FADD (DFMA/DMUL/DADD) in the cubins (the
// emulator README, "Multiply-add contraction", lists the cases):
//
// - a product `mul.f32`/`mul.f64` (no rounding modifier, no `.sat`, unguarded) fuses into an `add`/`sub` of
//   its type (no rounding modifier, the same `.ftz`; `.sat` allowed) that reads it, as either operand, in
//   the same straight-line code of the cubin: no branch, call or branch target between, nor an instruction
//   ptxas computes in a subroutine (IEEE-rounded div/rcp/sqrt of f32 and f64, rsqrt.approx.f64, 64-bit
//   div/rem); barriers, shuffles, stores, approximate math and labels nothing jumps to do not separate them.
//   add(p, c) → fma(a, b, c), sub(p, c) → fma(a, b, -c), sub(c, p) → fma(-a, b, c);
// - only when every use of the product fuses, so the `mul` goes away: a product that is also stored, used
//   by a `mul`, a `setp`, in other straight-line code, or added to itself is not fused anywhere;
// - a product used once fuses first: an add of two such products fuses its first operand's; then a product
//   used by several adds fuses into all of them (the multiply is repeated), when none of those adds has
//   fused another product.
//
// What the rule does not model: ptxas also looks through `mov`, `neg` and `cvt.f32.f32` between the two (not
// seen in compiler output), and fuses f16/bf16 products (HFMA2); a product whose operand registers are
// written again before the add is left unfused here (the writers read them at the add).
import { definedRegisters, usedRegisters, type Instruction, type IrFunction } from '../ir.js'

/** An `add`/`sub` that ptxas computes as one fused multiply-add: `mul` is the index of the product's
 *  instruction, `operand` the add's operand (1 or 2) it feeds. */
export interface Contraction {
  mul: number
  operand: 1 | 2
}

const BRANCHES = new Set(['bra', 'brx', 'ret', 'exit', 'call'])

/** An instruction ptxas computes in a subroutine (a CALL in the cubin, so a branch): IEEE-rounded division,
 *  reciprocal and square root of f32 and f64, rsqrt.approx.f64, 64-bit integer division and remainder. */
function callsSubroutine(x: Instruction): boolean {
  if ((x.op === 'div' || x.op === 'rem') && (x.type === 's64' || x.type === 'u64')) return true
  if (x.op === 'rsqrt' && x.type === 'f64') return true
  return (x.op === 'div' || x.op === 'rcp' || x.op === 'sqrt') && (x.type === 'f32' || x.type === 'f64') && x.rounding !== undefined
}

function isProduct(ins: Instruction): boolean {
  return ins.op === 'mul' && (ins.type === 'f32' || ins.type === 'f64') && ins.rounding === undefined && !ins.flags.sat && !ins.guard && ins.operands[0]?.kind === 'reg'
}

/** The adds of `fn` that ptxas fuses with a product, by instruction index. */
export function analyzeContraction(fn: IrFunction): Map<number, Contraction> {
  const out = new Map<number, Contraction>()
  const ins = fn.instructions
  if (!ins.some(isProduct)) return out
  // straight-line regions: a branch ends one, a label a branch names starts one
  const targets = new Set<string>()
  for (const x of ins) for (const o of x.operands) {
    if (o.kind === 'label') targets.add(o.name)
    if (o.kind === 'list') for (const t of o.items) if (t.kind === 'label') targets.add(t.name)
  }
  const startsRegion = new Set<number>()
  for (const [name, at] of fn.labels) if (targets.has(name)) startsRegion.add(at)
  const n = ins.length
  // readers and writers of each register, in instruction order (a reader once per operand that reads it)
  const readers = new Map<number, number[]>()
  const writers = new Map<number, number[]>()
  const add = (m: Map<number, number[]>, r: number, i: number) => {
    const l = m.get(r)
    if (l) l.push(i)
    else m.set(r, [i])
  }
  ins.forEach((x, i) => {
    for (const r of usedRegisters(x)) add(readers, r, i)
    for (const r of definedRegisters(x)) add(writers, r, i)
  })
  // where the straight-line code a scan starting at j is in ends (exclusive): a branch target starts new
  // code, a branch or an instruction ptxas computes in a subroutine ends it
  const endFrom = new Int32Array(n + 1)
  endFrom[n] = n
  for (let j = n - 1; j >= 0; j--) endFrom[j] = startsRegion.has(j) ? j : BRANCHES.has(ins[j]!.op) || callsSubroutine(ins[j]!) ? j + 1 : endFrom[j + 1]!
  // per product: the adds that read its value (each once), or undefined when a read cannot fuse
  const usesOf = new Map<number, number[] | undefined>()
  ins.forEach((m, i) => {
    if (!isProduct(m)) return
    const r = (m.operands[0] as { id: number }).id
    const srcs = [m.operands[1], m.operands[2]].flatMap((o) => (o?.kind === 'reg' ? [o.id] : []))
    const end = endFrom[i + 1]!
    const redefined = firstAfter(writers.get(r), i)
    const rs = readers.get(r) ?? []
    // `mul %f1, %f1, %f2` leaves nothing to read the factor from at the add
    let ok = !srcs.includes(r)
    // a guarded redefinition may leave the product in place
    if (redefined < end && ins[redefined]!.guard) ok = false
    // the value leaves the straight-line code: a read anywhere else may see it
    if (redefined >= end && rs.some((k) => k <= i || k >= end)) ok = false
    const last = Math.min(redefined, end - 1)
    const uses: number[] = []
    for (let k = 0; k < rs.length && ok; k++) {
      const j = rs[k]!
      if (j <= i || j > last) continue
      // read twice by one instruction (p + p), not an add it can fuse into, or a factor written since the mul
      if (rs[k + 1] === j || uses.includes(j) || !fusesInto(m, ins[j]!, r) || srcs.some((f) => firstAfter(writers.get(f), i) < j)) ok = false
      else uses.push(j)
    }
    usesOf.set(i, ok && uses.length ? uses : undefined)
  })
  // the products each add could fuse, by the register they write
  const productsOf = new Map<number, Map<number, number>>()
  for (const [m, uses] of usesOf) {
    for (const a of uses ?? []) {
      let l = productsOf.get(a)
      if (!l) productsOf.set(a, (l = new Map()))
      l.set((ins[m]!.operands[0] as { id: number }).id, m)
    }
  }
  const productAt = (a: number, operand: 1 | 2): number | undefined => {
    const o = ins[a]!.operands[operand]
    return o?.kind === 'reg' ? productsOf.get(a)?.get(o.id) : undefined
  }
  const adds = [...productsOf.keys()].sort((a, b) => a - b)
  // products used once, the first operand's first
  for (const a of adds) {
    for (const operand of [1, 2] as const) {
      const m = productAt(a, operand)
      if (m !== undefined && usesOf.get(m)!.length === 1) { out.set(a, { mul: m, operand }); break }
    }
  }
  // then products used by several adds, into all of them or none
  for (const a of adds) {
    if (out.has(a)) continue
    for (const operand of [1, 2] as const) {
      const m = productAt(a, operand)
      const uses = m === undefined ? undefined : usesOf.get(m)!
      if (m === undefined || uses!.length < 2 || uses!.some((u) => out.has(u))) continue
      for (const u of uses!) out.set(u, { mul: m, operand: productOperand(ins[u]!, ins[m]!) })
      break
    }
  }
  return out
}

/** The first entry of ascending `list` after i, or Infinity. */
function firstAfter(list: number[] | undefined, i: number): number {
  if (!list) return Infinity
  let lo = 0, hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (list[mid]! <= i) lo = mid + 1
    else hi = mid
  }
  return lo < list.length ? list[lo]! : Infinity
}

/** `x` reads product `m` (register r) as an operand of an add/sub it can fuse into. */
function fusesInto(m: Instruction, x: Instruction, r: number): boolean {
  if ((x.op !== 'add' && x.op !== 'sub') || x.type !== m.type || x.rounding !== undefined || x.flags.cc || !x.flags.ftz !== !m.flags.ftz) return false
  const [, p, q] = x.operands
  const isR = (o: typeof p) => o?.kind === 'reg' && o.id === r
  // a guard or an operand that is the product twice does not fuse
  return isR(p) !== isR(q) && x.guard?.reg !== r
}

function productOperand(add: Instruction, m: Instruction): 1 | 2 {
  const r = (m.operands[0] as { id: number }).id
  const p = add.operands[1]
  return p?.kind === 'reg' && p.id === r ? 1 : 2
}
