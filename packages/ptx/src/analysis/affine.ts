// Affine address forms: integer registers whose value is `inv + c·%tid.x` with `inv` the same for every
// thread of a block (kernel parameters, %ctaid, %ntid, %nctaid, immediates; sums and products of them) and
// c a constant, e.g. nvcc's `mad.lo.s32 %r1, %ctaid.x, %ntid.x, %tid.x; mul.wide.s32 %rd5, %r1, 4;
// add.s64 %rd6, %rd4, %rd5` (base + 4·ctaid·ntid + 4·tid.x). With it a code generator checks the range of
// every thread's access once per block. Forms are data (InvExpr trees), rendered by the writer.
//
// A register gets a form when it has one unguarded definition whose operands have forms, or when it is a
// loop's induction variable: one definition before the loop and one `add r, r, step` inside it with a
// loop-invariant step; then its value in iteration k is `init + k·step` (`iv`; `next` when read after the
// increment, in the same iteration: init + (k+1)·step), and registers computed from it inside the loop carry
// that term along (a grid-stride loop's address: base + c·tid.x + k·stride).
//
// 32-bit arithmetic is exact only while nothing wraps: such a form carries WrapChecks (both ends of the
// block's range of `inv + c·tid.x` within [lo, 2^31−1]), which the writer evaluates once per block; the
// iteration term of an induction variable is not covered by them. 64-bit kernel parameters take part only
// when the caller says they are exact numbers (`wideParams`, the emulator's speculative variant), and
// `mag` bounds |inv| + |c|·1024 so that everything stays exact in doubles (forms beyond 2^52 are dropped).
import type { Cfg } from '../cfg.js'
import { dominates } from '../cfg.js'
import { definedRegisters, type Instruction, type IrFunction, type Operand, type SpecialRegister } from '../ir.js'
import type { PtxType } from '../types.js'
import type { RegisterClass } from './register-classes.js'

export type InvExpr =
  | { kind: 'const'; value: number }
  /** A kernel parameter as loaded (`ld.param.<type>`), read as a 32- or 64-bit integer register. */
  | { kind: 'param'; name: string; offset: number; type: PtxType; width: 32 | 64 }
  | { kind: 'special'; name: SpecialRegister }
  /** The address of a module or kernel variable in its own state space (`mov.u32 %r, smem;`: a shared
   *  array's offset in the block's window), which the code generator's memory layout fixes. */
  | { kind: 'symbol'; name: string }
  | { kind: 'add'; a: InvExpr; b: InvExpr }
  | { kind: 'mul'; a: InvExpr; b: InvExpr }

/** `inv + c·(%ntid.x − 1)` and `inv` both lie in [lo, 2^31 − 1]: a 32-bit value did not wrap. With `iv`,
 *  the value of an induction variable's form: the same in every iteration the loop runs (the iteration term
 *  added, TripBound). */
export interface WrapCheck { inv: InvExpr; c: number; lo: number; iv?: { loop: number; step: InvExpr; next: boolean } }

/** A block-invariant 32-bit value computed from kernel parameters, launch dimensions and constants with the
 *  kernel's own wrapping integer arithmetic (a loop bound such as nvcc's `(K + 15) / 16` in shifts), for a host
 *  that knows the launch to compute exactly. */
export type ScalarExpr =
  | { kind: 'const'; value: number }
  | { kind: 'param'; name: string; offset: number; type: PtxType }
  | { kind: 'special'; name: SpecialRegister }
  | { kind: 'op'; op: 'add' | 'sub' | 'mul' | 'shl' | 'shr_s' | 'shr_u' | 'and' | 'or' | 'xor'; a: ScalarExpr; b: ScalarExpr }

type ScalarOp = Extract<ScalarExpr, { kind: 'op' }>['op']
/** The PTX operations a ScalarExpr computes as they are named (mul.lo and shr by their types apart). */
const SCALAR_OPS: Record<string, ScalarOp> = { add: 'add', sub: 'sub', shl: 'shl', and: 'and', or: 'or', xor: 'xor' }

/** How many times a loop runs, at most: its one back edge is `@p bra` with `p = (iv < bound)` (signed) read
 *  after iv's increment, iv an induction variable of the loop with a step the same in every thread. Iteration
 *  k (from 0) runs only where k = 0 or init + k·step < bound, so k ≤ max(0, ⌈(bound − init)/step⌉ − 1) for
 *  a positive step, while init + (k + 1)·step does not wrap (the caller checks both against the launch). */
export interface TripBound { init: AffineForm; step: InvExpr; bound: ScalarExpr }

export interface AffineForm {
  inv: InvExpr
  c: number
  conds: WrapCheck[]
  /** |inv| + |c|·1024 bound. */
  mag: number
  /** Induction term: + (k + (next ? 1 : 0))·step in iteration k of loop `loop` (cfg.loops index). */
  iv?: { loop: number; step: InvExpr; next: boolean }
}

export interface AffineFacts {
  /** Forms of registers with one definition (by register id). */
  register: Map<number, AffineForm>
  /** Where each register with a form is defined (instruction index). */
  definedAt: Map<number, number>
  /** Induction variables: register → its form at the top of an iteration. */
  inductions: Map<number, AffineForm>
  /** Instructions before this index are the kernel's straight-line prefix (no label, branch or return yet):
   *  every thread runs them once, in order. 0 for a device function. */
  prefixEnd: number
  /** The form of the address of memory access `index` (its address operand `[reg+offset]`), as read there. */
  address(index: number): AffineForm | undefined
  /** The form of register `reg` as instruction `index` reads it: its one definition dominates that
   *  instruction (so every thread that gets there has computed it), an induction variable inside its loop. */
  formAt(reg: number, index: number): AffineForm | undefined
  /** Loops (cfg.loops index) whose iteration count has a bound (TripBound). */
  trips: Map<number, TripBound>
}

export interface AffineOptions {
  /** 64-bit kernel parameters are exact numbers (within ±2^40) and may take part. @default false */
  wideParams?: boolean
  /** `%tid.y` and `%tid.z` count as invariant terms (`special`), as for a writer that runs consecutive threads
   *  of one row together: `inv` is then the same along a row of the block, not across it. Such forms' wrap
   *  checks name a thread index, so they are for strides along tid.x (a 32-bit form's value is exact modulo
   *  2^32 whatever they say), not for a once-per-block range test. @default false */
  rowInvariant?: boolean
  /** The caller evaluates forms in 64-bit integers, wrapping as the kernel's 64-bit arithmetic does (a
   *  WebAssembly writer), not in doubles: a product of two block-invariant values takes part in 64-bit
   *  arithmetic too (`mul.lo.s64`, and `mul.wide` of two 32-bit values: nvcc's `row · cols` of a row's base),
   *  and a 64-bit form has no magnitude limit (its value is the kernel's modulo 2^64, and a range test of
   *  both ends inside one allocation holds every value between them); 32-bit forms stay below 2^62, exact in
   *  64 bits for their wrap checks, and tid.x coefficients below 2^31. @default false */
  exact64?: boolean
}

const MAG_LIMIT = 2 ** 52

function literal(f: AffineForm): number | undefined {
  return f.inv.kind === 'const' && f.c === 0 && !f.iv ? f.inv.value : undefined
}

const wrap = (f: AffineForm, lo = -2147483648): AffineForm => ({ ...f, conds: [...f.conds, { inv: f.inv, c: f.c, lo, ...(f.iv ? { iv: f.iv } : {}) }], mag: 2 ** 31 + Math.abs(f.c) * 1024 })

function sum(x: AffineForm, y: AffineForm): AffineForm | undefined {
  if (x.iv && y.iv) return undefined
  const out: AffineForm = { inv: { kind: 'add', a: x.inv, b: y.inv }, c: x.c + y.c, conds: [...x.conds, ...y.conds], mag: x.mag + y.mag }
  const iv = x.iv ?? y.iv
  if (iv) out.iv = iv
  return out
}

/** x·y when one side is a literal (≤ 65536 in magnitude), or two block-invariant factors (exact only while
 *  small, which the caller's wrap check establishes) unless `needLiteral`; with `exact64` (AffineOptions)
 *  such a product's magnitude is the product of theirs, else unbounded. */
function product(x: AffineForm, y: AffineForm, needLiteral: boolean, exact64 = false): AffineForm | undefined {
  const k = literal(x) ?? literal(y)
  if (k === undefined || Math.abs(k) > 65536) {
    if (needLiteral || x.c !== 0 || y.c !== 0 || x.iv || y.iv) return undefined
    return { inv: { kind: 'mul', a: x.inv, b: y.inv }, c: 0, conds: [...x.conds, ...y.conds], mag: exact64 ? x.mag * y.mag : Infinity }
  }
  const f = literal(x) !== undefined ? y : x
  const out: AffineForm = { inv: { kind: 'mul', a: f.inv, b: { kind: 'const', value: k } }, c: f.c * k, conds: f.conds, mag: f.mag * Math.abs(k) }
  if (f.iv) out.iv = { ...f.iv, step: { kind: 'mul', a: f.iv.step, b: { kind: 'const', value: k } } }
  return out
}

export function analyzeAffine(fn: IrFunction, cfg: Cfg, classes: readonly RegisterClass[], options: AffineOptions = {}): AffineFacts {
  const ins = fn.instructions
  const exact64 = !!options.exact64
  /** A form kept for register class `cls` (MAG_LIMIT; with exact64 a 64-bit form's value is the kernel's
   *  modulo 2^64 whatever its size, a 32-bit form's below 2^62). */
  const keep = (f: AffineForm, cls: RegisterClass): boolean => !exact64 ? f.mag <= MAG_LIMIT : Math.abs(f.c) < 2 ** 31 && (cls === 'i64' || f.mag <= 2 ** 62)
  const n = ins.length
  const defs = new Map<number, number[]>()
  ins.forEach((x, i) => { for (const r of definedRegisters(x)) (defs.get(r) ?? defs.set(r, []).get(r)!).push(i) })
  const params = new Set(fn.params.map((p) => p.name))
  let prefixEnd = 0
  if (fn.kind === 'entry') {
    const firstLabel = Math.min(n, ...fn.labels.values())
    prefixEnd = firstLabel
    for (let i = 0; i < firstLabel; i++) {
      const x = ins[i]!
      if ((x.op === 'bra' || x.op === 'ret' || x.op === 'exit') && !x.guard) { prefixEnd = i + 1; break }
    }
  }
  const register = new Map<number, AffineForm>()
  const definedAt = new Map<number, number>()
  const inductions = new Map<number, AffineForm>()

  // induction variables: a definition outside a loop and `add r, r, step` inside it
  const ivUpdate = new Map<number, number>() // register → instruction index of its increment
  for (const [r, at] of defs) {
    if (at.length !== 2 || classes[r] !== 'i32' && classes[r] !== 'i64') continue
    for (const [init, upd] of [[at[0]!, at[1]!], [at[1]!, at[0]!]] as const) {
      const u = ins[upd]!
      const loop = cfg.loopOf[cfg.blockOf[upd]!]!
      if (loop < 0 || u.op !== 'add' || u.guard || u.flags.cc || u.flags.sat || ins[init]!.guard) continue
      if (cfg.loops[loop]!.blocks.includes(cfg.blockOf[init]!)) continue
      const [a, b] = [u.operands[1], u.operands[2]]
      const self = (o: Operand | undefined) => o?.kind === 'reg' && o.id === r
      if (!self(a) && !self(b)) continue
      ivUpdate.set(r, upd)
      break
    }
  }

  /** Initial values of induction variables (set where their definition before the loop is evaluated). */
  const ivInit = new Map<number, AffineForm>()
  /** The same, kept (with where they are defined) for reads before the loop. */
  const ivStart = new Map<number, { form: AffineForm; at: number }>()
  /** Blocks reachable from block `b` (b itself when it is in a cycle). */
  const reached = new Map<number, Set<number>>()
  const reachableFrom = (b: number): Set<number> => {
    let out = reached.get(b)
    if (out) return out
    out = new Set<number>()
    const work = [...cfg.blocks[b]!.succs]
    while (work.length) { const x = work.pop()!; if (!out.has(x)) { out.add(x); work.push(...cfg.blocks[x]!.succs) } }
    reached.set(b, out)
    return out
  }
  const induction = (r: number): AffineForm | undefined => {
    const known = inductions.get(r)
    if (known || !ivUpdate.has(r) || !ivInit.has(r)) return known
    const upd = ivUpdate.get(r)!
    const u = ins[upd]!
    const init = ivInit.get(r)!
    // (a step whose definition comes later in reverse post-order has no form yet: asked again after the walk)
    const step = formOf(u.operands[1]?.kind === 'reg' && u.operands[1].id === r ? u.operands[2] : u.operands[1], classes[r]!, upd)
    if (!step) return undefined
    ivInit.delete(r)
    if (step.c !== 0 || step.iv || init.iv) return undefined
    const f: AffineForm = { ...init, iv: { loop: cfg.loopOf[cfg.blockOf[upd]!]!, step: step.inv, next: false } }
    inductions.set(r, f)
    return f
  }

  /** Instruction `def` runs before `at` on every path to it (same basic block and earlier, or a dominating
   *  block): a register with one definition there holds that definition's value at `at`. */
  const reaches = (def: number, at: number): boolean => {
    const d = cfg.blockOf[def]!, u = cfg.blockOf[at]!
    return d === u ? def < at : dominates(cfg, d, u)
  }

  /** The form of operand `o` read by instruction `at` as a register of class `cls`. */
  const formOf = (o: Operand | undefined, cls: RegisterClass, at: number): AffineForm | undefined => {
    if (!o) return undefined
    if (o.kind === 'imm') {
      if (o.imm.kind !== 'int') return undefined
      const v = cls === 'i32' ? Number(BigInt.asIntN(32, o.imm.value)) : Number(BigInt.asIntN(64, o.imm.value))
      return Math.abs(v) <= 2 ** 40 ? { inv: { kind: 'const', value: v }, c: 0, conds: [], mag: Math.abs(v) } : undefined
    }
    if (o.kind === 'sym') {
      // a variable's address: below 2^32 in any layout (shared windows are at most 228 KiB)
      return (cls === 'i32' || cls === 'i64') && !params.has(o.name) ? { inv: { kind: 'symbol', name: o.name }, c: 0, conds: [], mag: 2 ** 32 } : undefined
    }
    if (o.kind !== 'reg' || classes[o.id] !== cls) return undefined
    const ivf = induction(o.id)
    if (ivf) {
      // inside the loop only; after the increment (same iteration) it reads init + (k+1)·step
      const loop = ivf.iv!.loop
      if (!cfg.loops[loop]!.blocks.includes(cfg.blockOf[at]!)) {
        // before the loop: where the initial definition reaches and the increment cannot (nvcc's `shl.b32
        // %r27, %r41, 6` of a tile row's base from tid.y, which the loop then steps), its initial value
        const start = ivStart.get(o.id)
        return start && reaches(start.at, at) && !reachableFrom(cfg.blockOf[ivUpdate.get(o.id)!]!).has(cfg.blockOf[at]!) ? start.form : undefined
      }
      const upd = ivUpdate.get(o.id)!
      const after = cfg.blockOf[upd] === cfg.blockOf[at] ? upd < at : dominates(cfg, cfg.blockOf[upd]!, cfg.blockOf[at]!)
      return { ...ivf, iv: { ...ivf.iv!, next: after } }
    }
    const f = register.get(o.id)
    if (!f) return multiDef(o.id, at)
    if (!reaches(definedAt.get(o.id)!, at)) return undefined
    return f
  }

  /** The form of a register with several definitions as instruction `at` reads it, where one of them, d,
   *  dominates `at` and no other can reach it (nvcc's `mov.u32 %r45, %ntid.x` read by `shl.b32 %r15, %r45, 1`
   *  before a loop that reuses %r45 as its counter): every thread that gets to `at` reads what d wrote. */
  const defForms = new Map<number, AffineForm | null>()
  const multiDef = (r: number, at: number): AffineForm | undefined => {
    const ds = defs.get(r)
    if (!ds || ds.length < 2 || ivUpdate.has(r)) return undefined
    const dom = ds.filter((d) => reaches(d, at))
    if (dom.length !== 1) return undefined
    const d = dom[0]!
    const bu = cfg.blockOf[at]!
    for (const other of ds) {
      if (other === d) continue
      const bo = cfg.blockOf[other]!
      if (bo === bu || reachableFrom(bo).has(bu)) return undefined
    }
    const x = ins[d]!
    if (x.guard || x.operands[0]?.kind !== 'reg' || x.operands[0].id !== r) return undefined
    if (!defForms.has(d)) {
      // (in progress: a definition that reads itself has no form)
      defForms.set(d, null)
      const f = evaluate(x, d, classes[r]!)
      defForms.set(d, f && !f.iv && keep(f, classes[r]!) ? f : null)
    }
    return defForms.get(d) ?? undefined
  }

  /** The form of what `x` (at index i) writes into its destination register d of class cls. */
  const evaluate = (x: Instruction, i: number, cls: RegisterClass): AffineForm | undefined => {
    const A = x.operands
    const t = x.types
    const s32 = t[0] === 's32' || t[0] === 'u32' || t[0] === 'b32'
    switch (x.op) {
      case 'ld': {
        const a = A[1]
        if (x.space !== 'param' || x.vector || a?.kind !== 'addr' || a.base?.kind !== 'sym' || !params.has(a.base.name) || !x.type) return undefined
        const size = x.type === 'b8' || x.type === 'u8' || x.type === 's8' ? 1 : x.type.endsWith('16') ? 2 : x.type === 'f64' || x.type.endsWith('64') ? 8 : 4
        if (cls === 'i64' && size === 8 && options.wideParams) return { inv: { kind: 'param', name: a.base.name, offset: a.offset, type: x.type, width: 64 }, c: 0, conds: [], mag: 2 ** 40 }
        if (cls === 'i32' && size === 4) return { inv: { kind: 'param', name: a.base.name, offset: a.offset, type: x.type, width: 32 }, c: 0, conds: [], mag: 2 ** 31 }
        return undefined
      }
      case 'mov': {
        const src = A[1]
        if (src?.kind === 'special') {
          if (cls !== 'i32') return undefined
          if (src.name === '%tid.x') return { inv: { kind: 'const', value: 0 }, c: 1, conds: [], mag: 1024 }
          if (/^%(ctaid|ntid|nctaid)\.[xyz]$/.test(src.name) || (options.rowInvariant && (src.name === '%tid.y' || src.name === '%tid.z'))) return { inv: { kind: 'special', name: src.name }, c: 0, conds: [], mag: 2 ** 31 }
          return undefined
        }
        return formOf(src, cls, i)
      }
      case 'shl': {
        // a left shift by an immediate is a product with 2^k (nvcc's `shl.b32 %r, %tid, 2` for a float index)
        const k = A[2]?.kind === 'imm' && A[2].imm.kind === 'int' ? Number(A[2].imm.value) : -1
        if (k < 0 || k > 16 || (cls === 'i32' ? !s32 : t[0] !== 'b64' && t[0] !== 's64' && t[0] !== 'u64')) return undefined
        const a = formOf(A[1], cls, i)
        const p = a ? product(a, { inv: { kind: 'const', value: 2 ** k }, c: 0, conds: [], mag: 2 ** k }, true) : undefined
        return p && cls === 'i32' ? wrap(p) : p
      }
      case 'cvta':
        return x.flags.to && x.space === 'global' && cls === 'i64' ? formOf(A[1], 'i64', i) : undefined
      case 'cvt': {
        if (cls !== 'i64' || (t[0] !== 's64' && t[0] !== 'u64') || (t[1] !== 's32' && t[1] !== 'u32')) return undefined
        const f = formOf(A[1], 'i32', i)
        // (an induction variable's 32-bit value must not wrap in any iteration: a check with its iteration term)
        return f && t[1] === 'u32' ? wrap(f, 0) : f?.iv ? wrap(f) : f
      }
      case 'add': {
        if (x.flags.cc || x.flags.sat || !(s32 || t[0] === 's64' || t[0] === 'u64' || t[0] === 'b64')) return undefined
        const a = formOf(A[1], cls, i), b = formOf(A[2], cls, i)
        if (!a || !b) return undefined
        const f = sum(a, b)
        if (!f) return undefined
        return cls === 'i32' ? (s32 ? wrap(f) : undefined) : f
      }
      case 'mad': case 'mul': {
        if (cls === 'i32' && x.part === 'lo' && s32) {
          const a = formOf(A[1], 'i32', i), b = formOf(A[2], 'i32', i)
          const p = a && b ? product(a, b, false, exact64) : undefined
          if (!p) return undefined
          if (x.op === 'mul') return wrap(p)
          const z = formOf(A[3], 'i32', i)
          const f = z ? sum(p, z) : undefined
          return f ? wrap(f) : undefined
        }
        if (x.op === 'mul' && cls === 'i64' && x.part === 'wide' && (t[0] === 's32' || t[0] === 'u32')) {
          const a = formOf(A[1], 'i32', i), b = formOf(A[2], 'i32', i)
          // the 64-bit product of two block-invariant values may exceed 2^53: only literal factors
          const ext = (f: AffineForm) => (t[0] === 'u32' ? wrap(f, 0) : f.iv ? wrap(f) : f)
          if (a && b) return product(ext(a), ext(b), !exact64, exact64)
        }
        // a 64-bit product (exact64: the kernel's value modulo 2^64, as the caller computes it)
        if (exact64 && cls === 'i64' && x.part === 'lo' && (t[0] === 's64' || t[0] === 'u64' || t[0] === 'b64')) {
          const a = formOf(A[1], 'i64', i), b = formOf(A[2], 'i64', i)
          const p = a && b ? product(a, b, false, true) : undefined
          if (!p || x.op === 'mul') return p
          const z = formOf(A[3], 'i64', i)
          return z ? sum(p, z) : undefined
        }
        return undefined
      }
      default: return undefined
    }
  }

  // definitions in reverse post-order, so operands' definitions come first; induction variables' initial
  // values before the loops that update them (first walk). A loop's body may read an induction variable whose
  // step is computed later in the loop (nvcc's `shl.b32 %r38, %r21, 4` before `add.s32 %r42, %r42, %r38` at the
  // bottom): its form comes after the first walk, and the registers computed from it get theirs in another
  // (forms only ever get added). Returns whether a walk added a form.
  const walk = (first: boolean): boolean => {
    let added = false
    for (const b of cfg.rpo) {
      const blk = cfg.blocks[b]!
      for (let i = blk.start; i < blk.end; i++) {
        const x = ins[i]!
        const d = x.operands[0]
        if (x.guard || d?.kind !== 'reg') continue
        const cls = classes[d.id]!
        if (cls !== 'i32' && cls !== 'i64') continue
        const upd = ivUpdate.get(d.id)
        if (upd !== undefined) {
          // (an initial value read from another loop's counter whose step comes later: asked again in the
          // next walk, as long as it has none)
          if (i === upd || (!first && (ivInit.has(d.id) || inductions.has(d.id) || ivStart.has(d.id)))) continue
          const init = evaluate(x, i, cls)
          if (init) { ivInit.set(d.id, init); if (!init.iv && keep(init, cls)) ivStart.set(d.id, { form: init, at: i }) }
          continue
        }
        if (defs.get(d.id)!.length !== 1 || register.has(d.id)) continue
        const f = evaluate(x, i, cls)
        if (f && keep(f, cls)) { register.set(d.id, f); definedAt.set(d.id, i); added = true }
      }
    }
    return added
  }
  walk(true)
  for (const r of ivUpdate.keys()) induction(r)
  for (let pass = 0; pass < 4 && walk(false); pass++) { /* until no form is added */ }

  // loop trip bounds: the one back edge `@p bra header` with p = setp.lt.s32 (iv after its increment, bound)
  const defsOf = (r: number) => defs.get(r) ?? []
  const scalar = (o: Operand | undefined, depth = 0): ScalarExpr | undefined => {
    if (!o || depth > 24) return undefined
    if (o.kind === 'imm') return o.imm.kind === 'int' ? { kind: 'const', value: Number(BigInt.asIntN(32, o.imm.value)) } : undefined
    if (o.kind === 'special') return /^%(ntid|nctaid)\.[xyz]$/.test(o.name) ? { kind: 'special', name: o.name } : undefined
    if (o.kind !== 'reg' || classes[o.id] !== 'i32') return undefined
    const d = defsOf(o.id)
    if (d.length !== 1) return undefined
    const x = ins[d[0]!]!
    const t = x.type ?? ''
    if (x.guard || x.flags.cc || x.flags.sat || !['s32', 'u32', 'b32'].includes(t)) return undefined
    const A = x.operands
    if (x.op === 'ld') {
      const a = A[1]
      return x.space === 'param' && !x.vector && a?.kind === 'addr' && a.base?.kind === 'sym' && params.has(a.base.name) ? { kind: 'param', name: a.base.name, offset: a.offset, type: t as PtxType } : undefined
    }
    if (x.op === 'mov') return scalar(A[1], depth + 1)
    let op: ScalarOp | undefined = SCALAR_OPS[x.op]
    if (x.op === 'mul' && x.part === 'lo') op = 'mul'
    if (x.op === 'shr') op = t === 's32' ? 'shr_s' : 'shr_u'
    if (!op) return undefined
    const a = scalar(A[1], depth + 1), b = scalar(A[2], depth + 1)
    return a && b ? { kind: 'op', op, a, b } : undefined
  }
  const trips = new Map<number, TripBound>()
  cfg.loops.forEach((loop, li) => {
    const header = loop.header
    const backs = loop.latches
    if (backs.length !== 1) return
    const blk = cfg.blocks[backs[0]!]!
    const br = ins[blk.end - 1]
    if (br?.op !== 'bra' || !br.guard || br.guard.negate) return
    // the branch itself goes to the header (the loop goes on where p holds), not its fall-through
    const t = br.operands[0]
    if (t?.kind !== 'label' || !cfg.blocks[header]!.labels.includes(t.name)) return
    const p = br.guard.reg
    const pd = defsOf(p)
    if (pd.length !== 1 || cfg.blockOf[pd[0]!] !== backs[0]) return
    const cmp = ins[pd[0]!]!
    if (cmp.op !== 'setp' || cmp.guard || cmp.cmp !== 'lt' || cmp.type !== 's32' || cmp.operands.length !== 3) return
    const a = cmp.operands[1], b = cmp.operands[2]
    if (a?.kind !== 'reg' || !ivUpdate.has(a.id)) return
    const iv = inductions.get(a.id)
    const upd = ivUpdate.get(a.id)!
    if (!iv || iv.iv!.loop !== li || cfg.blockOf[upd] !== backs[0] || upd > pd[0]!) return
    const bound = scalar(b)
    if (!bound) return
    // every entry into the loop starts from the counter's first value: its definition before the loop
    // dominates the header, and no way out of the loop leads back to the header without running it again (a
    // loop inside another whose counter is set before both would go on where its last run stopped)
    const initAt = defs.get(a.id)!.find((d) => d !== upd)!
    const ib = cfg.blockOf[initAt]!
    if (!dominates(cfg, ib, header)) return
    const inLoop = new Set(loop.blocks)
    const work = loop.blocks.flatMap((x) => cfg.blocks[x]!.succs.filter((y) => !inLoop.has(y)))
    const seen = new Set<number>()
    while (work.length) {
      const x = work.pop()!
      if (x === ib || seen.has(x)) continue
      if (x === header) return
      seen.add(x)
      work.push(...cfg.blocks[x]!.succs)
    }
    const { iv: _iv, ...init } = iv
    trips.set(li, { init, step: iv.iv!.step, bound })
  })
  return {
    register, definedAt, inductions, prefixEnd, trips,
    address(index: number) {
      const x = ins[index]
      if (!x) return undefined
      const a = x.op === 'st' || x.op === 'red' || x.op === 'cp' ? x.operands[0] : x.operands[1]
      if (a?.kind !== 'addr' || a.base?.kind !== 'reg') return undefined
      const f = formOf(a.base, classes[a.base.id]!, index)
      if (!f) return undefined
      return a.offset ? sum(f, { inv: { kind: 'const', value: a.offset }, c: 0, conds: [], mag: Math.abs(a.offset) }) : f
    },
    formAt(reg: number, index: number) {
      return formOf({ kind: 'reg', id: reg }, classes[reg]!, index)
    },
  }
}
