// Arithmetic, logic, comparison, selection and conversion instructions (PTX ISA 9.x, "Instruction Set"),
// each as WGSL over the register representation of emit-kernel.ts. f32 maps to WGSL f32; add, sub, mul and
// fma with a directed rounding (.rz/.rm/.rp: libdevice's expf has fma.rm), div, rcp and sqrt with any rounding,
// and integer-to-f32 conversions are exact integer routines (WGSL rounds to nearest only, and its division
// and square root need not be correctly rounded); f64 is software binary64;
// 64-bit integers use the vec2<u32> helpers of wgsl-lib.ts; f16 and bf16 are computed in f32 and rounded back
// by integer routines (exact for add/sub/mul, round-to-odd for fma; README.md, "Floats").
import { definedRegisters, readableName, typeSize, type Instruction, type IrOperand as Operand, type PtxType } from '@kernelpack/ptx'
import type { KernelWriter } from './emit-kernel.js'
import { FAULT_KIND } from './layout.js'
import { emitCpAsyncArrive, emitMbarrier } from './emit-mbarrier.js'
import { emitPrintf } from './emit-printf.js'
import { emitWmmaMemory } from './emit-tensor.js'
import { F64_ONE, u32Lit } from './wgsl-text.js'

const isHalf = (t: PtxType | undefined) => t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2'
const bitsOf = (t: PtxType) => typeSize(t) * 8

/** An instruction's IEEE rounding as the WGSL helpers number it: 0 .rn (and none), 1 .rz, 2 .rm, 3 .rp; -1 for
 *  another (an integer rounding). */
const roundingCode = (ins: Instruction) => ['rn', 'rz', 'rm', 'rp'].indexOf(ins.rounding ?? 'rn')

/** binary64 1.0 and a binary64 value's sign bit, as the vec2<u32> words of software binary64 (wgsl-lib.ts). */
const negF64 = (x: string) => `(${x} ^ vec2<u32>(0u, 0x80000000u))`

/** f64 arithmetic without a software form here (div, sqrt, rcp, the transcendental approximations). */
function noF64(w: KernelWriter, ins: Instruction): void {
  if (ins.types.includes('f64')) w.refuse('f64 arithmetic: WGSL has no f64 (a GPU with WebGPU computes in f32)')
}

/** add, sub, mul, fma and mad on f64 in exact software binary64 (wgsl-lib.ts kp_f64_fma, issue 26 item 3):
 *  add is kp_f64_add (64-bit arithmetic), sub a + (−b), mul a·b + a zero of the product's sign; an add or sub that ptxas fuses with
 *  the product it reads (analyzeContraction, as the emulator computes it) is that fma. Marks the kernel as
 *  using software f64 (a build warning). */
function f64Arith(w: KernelWriter, ins: Instruction, what: 'add' | 'sub' | 'mul' | 'fma'): void {
  if (ins.flags.sat) return w.refuse(`${ins.op}.sat.f64`)
  const mode = roundingCode(ins)
  if (mode < 0) return w.refuse(`${ins.op}.${ins.rounding}.f64`)
  w.softF64++
  const A = ins.operands
  const fused = what === 'add' || what === 'sub' ? fusedOperands(w, ins, (o) => w.tmp(w.u64(o)), negF64) : undefined
  if (fused) return w.setU64(A[0], `kp_f64_fma(${fused.join(', ')}, 0u)`)
  const x = w.tmp(w.u64(A[1]!)), y = w.tmp(w.u64(A[2]!))
  let e: string
  if (what === 'fma') e = `kp_f64_fma(${x}, ${y}, ${w.u64(A[3]!)}, ${mode}u)`
  else if (what === 'mul') e = `kp_f64_fma(${x}, ${y}, vec2<u32>(0u, (${x}.y ^ ${y}.y) & 0x80000000u), ${mode}u)`
  else e = `kp_f64_add(${x}, ${what === 'sub' ? negF64(y) : y}, ${mode}u)`
  w.setU64(A[0], e)
}

/** An add or sub that ptxas fuses with the product it reads (@kernelpack/ptx analyzeContraction, as the emulator
 *  computes it): the operands of that fma (the product's two, then the other addend; the product or the addend
 *  negated, `neg`, for a sub that subtracts it), each read with `read`; undefined where there is no such pair. */
function fusedOperands(w: KernelWriter, ins: Instruction, read: (o: Operand) => string, neg: (x: string) => string): [string, string, string] | undefined {
  const fused = w.contraction.get(ins.index)
  if (!fused) return undefined
  const m = w.fn.instructions[fused.mul]!
  const sub = ins.op === 'sub'
  const px = read(m.operands[1]!), py = read(m.operands[2]!), o = read(ins.operands[fused.operand === 1 ? 2 : 1]!)
  return [sub && fused.operand === 2 ? neg(px) : px, py, sub && fused.operand === 1 ? neg(o) : o]
}

/** Refuses directed rounding (.rz/.rm/.rp) of f32 arithmetic. */
function roundNearest(w: KernelWriter, ins: Instruction): void {
  if (ins.rounding && ins.rounding !== 'rn') w.refuse(`.${ins.rounding} rounding: WGSL rounds f32 arithmetic to nearest only`)
}

/** An f32 add, sub, mul or fma with a directed rounding (.rz/.rm/.rp), exact in integer arithmetic
 *  (wgsl-lib.ts kp_fma_bits: add is a·1 + b, sub a·1 + (−b), mul a·b + a zero of the product's sign);
 *  undefined for .rn, which WGSL's own operators compute. */
function directed(w: KernelWriter, ins: Instruction, what: 'add' | 'sub' | 'mul' | 'fma'): string | undefined {
  const mode = roundingCode(ins)
  if (mode <= 0) return undefined
  const A = ins.operands
  const x = w.tmp(`bitcast<u32>(${fin(w, ins, A[1]!)})`), y = w.tmp(`bitcast<u32>(${fin(w, ins, A[2]!)})`)
  const [a, b, c] = what === 'fma' ? [x, y, `bitcast<u32>(${fin(w, ins, A[3]!)})`] : what === 'mul' ? [x, y, `((${x} ^ ${y}) & 0x80000000u)`] : [x, '0x3f800000u', what === 'sub' ? `(${y} ^ 0x80000000u)` : y]
  return fout(ins, `bitcast<f32>(kp_fma_bits(${a}, ${b}, ${c}, ${mode}u))`)
}

/** f32 operand with .ftz applied when the instruction asks. */
function fin(w: KernelWriter, ins: Instruction, o: Operand): string {
  const x = w.f32(o)
  return ins.flags.ftz ? `kp_ftz(${x})` : x
}

/** An f32 operand of an add, product or fma that the device's compiler could know the value of (an
 *  immediate, or a register a mov sets to one): kept opaque (kp_nc), so that the driver cannot simplify the
 *  arithmetic by algebra that IEEE 754 does not allow. NVIDIA's Vulkan driver folds x · 0 to 0, and libdevice's
 *  sinf/cosf make their NaN for ±∞ as x · 0 (`mov.f32 %f36, 0f00000000; mul.rn.f32 %f69, %f1, %f36`): sinf(∞)
 *  came out 0 and cosf(∞) 1 on the H200. */
function fk(w: KernelWriter, ins: Instruction, o: Operand): string {
  const x = fin(w, ins, o)
  return knownF32(w, o) ? `kp_nc(${x})` : x
}

/** The function's registers some mov sets to an immediate (`moved`), and, of those defined by that mov alone,
 *  the f32 bits (`value`); once per function. */
function movedImmediates(w: KernelWriter): { moved: Set<number>; value: Map<number, number> } {
  let m = movedCache.get(w.fn)
  if (!m) {
    const defs = new Map<number, number>()
    for (const x of w.fn.instructions) for (const r of definedRegisters(x)) defs.set(r, (defs.get(r) ?? 0) + 1)
    m = { moved: new Set(), value: new Map() }
    for (const x of w.fn.instructions) {
      const d = x.operands[0], v = x.operands[1]
      if (x.op !== 'mov' || d?.kind !== 'reg' || v?.kind !== 'imm') continue
      m.moved.add(d.id)
      if (!x.guard && defs.get(d.id) === 1 && v.imm.kind === 'f32') m.value.set(d.id, Number(v.imm.bits) >>> 0)
    }
    movedCache.set(w.fn, m)
  }
  return m
}
const movedCache = new WeakMap<object, { moved: Set<number>; value: Map<number, number> }>()

/** Whether operand o is an immediate or a register some mov sets to an immediate. */
function knownF32(w: KernelWriter, o: Operand): boolean {
  return o.kind === 'imm' || (o.kind === 'reg' && movedImmediates(w).moved.has(o.id))
}

/** The bits of an f32 operand known when the code is written: an immediate, or a register whose one
 *  definition is a mov of an immediate. */
function constF32(w: KernelWriter, o: Operand): number | undefined {
  if (o.kind === 'imm') return o.imm.kind === 'f32' ? Number(o.imm.bits) >>> 0 : undefined
  return o.kind === 'reg' ? movedImmediates(w).value.get(o.id) : undefined
}

const f32View = new Float32Array(1), u32View = new Uint32Array(f32View.buffer)
const fromF32Bits = (b: number) => { u32View[0] = b >>> 0; return f32View[0]! }
/** A finite f32 as a WGSL literal (exact: JavaScript's shortest round-trip form of the value). */
const wgslF32 = (x: number) => `${Number.isInteger(x) ? x.toFixed(1) : String(x)}f`

/** The bits of an f32 operand with .ftz applied when the instruction asks. */
function finBits(w: KernelWriter, ins: Instruction, o: Operand): string {
  return ins.flags.ftz ? `bitcast<u32>(kp_ftz(${w.f32(o)}))` : w.u32(o, 'b32')
}

/** f32 result with .ftz and .sat applied. */
function fout(ins: Instruction, e: string): string {
  let r = e
  if (ins.flags.ftz) r = `kp_ftz(${r})`
  if (ins.flags.sat) r = `kp_sat(${r})`
  return r
}

/** Writes an integer result of type t (≤ 32 bits) masked to its width. */
function setInt(w: KernelWriter, ins: Instruction, e: string, t: PtxType = ins.type!): void {
  const b = bitsOf(t)
  w.setU32(ins.operands[0], b < 32 ? `(${e}) & ${u32Lit(2 ** b - 1)}` : e, t)
}

// --- half precision ---

function toF32(t: PtxType): (h: string) => string {
  return t.startsWith('bf') ? (h) => `kp_bf2f(${h})` : (h) => `kp_h2f(${h})`
}
function fromF32(t: PtxType): (x: string) => string {
  return t.startsWith('bf') ? (x) => `kp_f2bf(${x})` : (x) => `kp_f2h(${x})`
}

/** A half-precision op on f16/bf16 (one half) or f16x2/bf16x2 (both halves). */
function half(w: KernelWriter, ins: Instruction, what: string): void {
  const t = ins.type!
  roundNearest(w, ins)
  const to = toF32(t)
  const from = fromF32(t)
  const bf = t.startsWith('bf')
  const n = what === 'fma' ? 3 : ['add', 'sub', 'mul', 'min', 'max'].includes(what) ? 2 : 1
  const srcs = ins.operands.slice(1, 1 + n).map((o) => w.tmp(w.u32(o, 'b32')))
  const one = (xs: string[], hs: string[]): string => {
    let e: string
    switch (what) {
      // (bf16 shares f32's exponent range: its subnormals are f32 subnormals, which a device may flush)
      case 'add': e = bf ? `kp_bf16_addsub(${hs[0]}, ${hs[1]}, 0u)` : from(`${xs[0]} + ${xs[1]}`); break
      case 'sub': e = bf ? `kp_bf16_addsub(${hs[0]}, ${hs[1]}, 0x8000u)` : from(`${xs[0]} - ${xs[1]}`); break
      case 'mul': e = bf ? `kp_bf16_mul(${hs[0]}, ${hs[1]})` : from(`${xs[0]} * ${xs[1]}`); break
      case 'fma': e = bf ? `kp_bf16_fma(${hs[0]}, ${hs[1]}, ${hs[2]})` : from(`kp_fma_odd(${xs[0]}, ${xs[1]}, ${xs[2]})`); break
      case 'min': e = from(ins.flags.nan ? `kp_fmin_nan(${xs[0]}, ${xs[1]})` : `kp_fmin(${xs[0]}, ${xs[1]})`); break
      case 'max': e = from(ins.flags.nan ? `kp_fmax_nan(${xs[0]}, ${xs[1]})` : `kp_fmax(${xs[0]}, ${xs[1]})`); break
      case 'neg': e = `(${hs[0]} ^ 0x8000u)`; break
      case 'abs': e = `(${hs[0]} & 0x7fffu)`; break
      case 'ex2': e = from(`exp2(${xs[0]})`); break
      case 'tanh': e = from(`tanh(${xs[0]})`); break
      case 'rcp': e = from(`1.0f / ${xs[0]}`); break
      case 'sqrt': e = from(`sqrt(${xs[0]})`); break
      case 'rsqrt': e = from(`inverseSqrt(${xs[0]})`); break
      case 'sin': e = from(`sin(${xs[0]})`); break
      case 'cos': e = from(`cos(${xs[0]})`); break
      case 'lg2': e = from(`log2(${xs[0]})`); break
      default: return w.refuse(`half-precision ${what}`)
    }
    if (ins.flags.sat) e = from(`kp_sat(${to(e)})`)
    if (ins.flags.relu) e = `kp_relu16(${e}, ${bf})`
    return e
  }
  if (t === 'f16' || t === 'bf16') {
    const hs = srcs.map((s) => `(${s} & 0xffffu)`)
    w.setU32(ins.operands[0], one(hs.map(to), hs), 'b16')
    return
  }
  const lo = srcs.map((s) => `(${s} & 0xffffu)`)
  const hi = srcs.map((s) => `(${s} >> 16u)`)
  w.setU32(ins.operands[0], `${one(lo.map(to), lo)} | (${one(hi.map(to), hi)} << 16u)`, 'b32')
}

// --- integers ---

/** Operands of an integer op of ≤ 32 bits as u32, extended per the type's signedness. */
function ints(w: KernelWriter, ins: Instruction, from: number, count: number, t: PtxType = ins.type!): string[] {
  return ins.operands.slice(from, from + count).map((o) => w.u32(o, t))
}

/** Carry arithmetic: add.cc, addc, sub.cc, subc, mad.lo.cc, madc (the carry flag is kp_cc). */
function carry(w: KernelWriter, ins: Instruction): void {
  const t = ins.type!
  const cc = w.declare('kp_cc', 'u32')
  const useC = ins.op === 'addc' || ins.op === 'subc' || ins.op === 'madc'
  const sub = ins.op === 'sub' || ins.op === 'subc'
  const A = ins.operands
  if (bitsOf(t) === 64) {
    let x: string, y: string
    if (ins.op === 'mad' || ins.op === 'madc') {
      x = w.tmp(ins.part === 'hi' ? (t === 's64' ? `kp_mulhi_s64(${w.u64(A[1]!)}, ${w.u64(A[2]!)})` : `kp_mulhi_u64(${w.u64(A[1]!)}, ${w.u64(A[2]!)})`) : `kp_mul64(${w.u64(A[1]!)}, ${w.u64(A[2]!)})`)
      y = w.tmp(w.u64(A[3]!))
    } else {
      x = w.tmp(w.u64(A[1]!))
      y = w.tmp(w.u64(A[2]!))
    }
    const c = useC ? cc : '0u'
    let r: string, out: string
    if (sub) {
      const d1 = w.tmp(`kp_sub64(${x}, ${y})`)
      r = w.tmp(`kp_sub64(${d1}, vec2<u32>(${c}, 0u))`)
      out = `select(0u, 1u, kp_ult64(${x}, ${y}) || kp_ult64(${d1}, vec2<u32>(${c}, 0u)))`
    } else {
      const s1 = w.tmp(`kp_add64(${x}, ${y})`)
      r = w.tmp(`kp_add64(${s1}, vec2<u32>(${c}, 0u))`)
      out = `select(0u, 1u, kp_ult64(${s1}, ${x}) || kp_ult64(${r}, ${s1}))`
    }
    if (ins.flags.cc) w.line(`${cc} = ${out};`)
    w.setU64(A[0], r)
    return
  }
  if (bitsOf(t) !== 32) return w.refuse(`carry arithmetic on .${t}`)
  let x: string, y: string
  if (ins.op === 'mad' || ins.op === 'madc') {
    x = w.tmp(ins.part === 'hi' ? `kp_mulhi_${t === 's32' ? 's' : 'u'}32(${w.u32(A[1]!)}, ${w.u32(A[2]!)})` : `${w.u32(A[1]!)} * ${w.u32(A[2]!)}`)
    y = w.tmp(w.u32(A[3]!))
  } else {
    x = w.tmp(w.u32(A[1]!))
    y = w.tmp(w.u32(A[2]!))
  }
  const c = useC ? cc : '0u'
  let r: string, out: string
  if (sub) {
    const d1 = w.tmp(`${x} - ${y}`)
    r = w.tmp(`${d1} - ${c}`)
    out = `select(0u, 1u, ${x} < ${y} || ${d1} < ${c})`
  } else {
    const s1 = w.tmp(`${x} + ${y}`)
    r = w.tmp(`${s1} + ${c}`)
    out = `select(0u, 1u, ${s1} < ${x} || ${r} < ${s1})`
  }
  if (ins.flags.cc) w.line(`${cc} = ${out};`)
  w.setU32(A[0], r)
}

/** The product of two ≤ 32-bit integer operands (`lo`, `hi` or `wide`) as WGSL. */
function intProduct(w: KernelWriter, ins: Instruction, a: Operand, b: Operand): { e: string; wide: boolean } {
  const t = ins.type!
  const bits = bitsOf(t)
  const signed = t[0] === 's'
  const part = ins.part ?? 'lo'
  // a result kept as its low word (narrowRegisters): the low word of the product is the product mod 2^32
  const narrow = w.narrowed(ins.operands[0])
  if (bits === 64) {
    if (part === 'wide') return w.refuse('mul.wide on 64-bit operands')
    if (narrow && part === 'lo') return { e: `vec2<u32>(${w.u32(a)} * ${w.u32(b)}, 0u)`, wide: true }
    if (part === 'hi') return { e: `kp_mulhi_${signed ? 's' : 'u'}64(${w.u64(a)}, ${w.u64(b)})`, wide: true }
    return { e: `kp_mul64(${w.u64(a)}, ${w.u64(b)})`, wide: true }
  }
  const x = w.u32(a, t), y = w.u32(b, t)
  if (bits === 32) {
    if (part === 'wide') return { e: narrow ? `vec2<u32>(${x} * ${y}, 0u)` : `kp_mulwide_${signed ? 's' : 'u'}32(${x}, ${y})`, wide: true }
    if (part === 'hi') return { e: `kp_mulhi_${signed ? 's' : 'u'}32(${x}, ${y})`, wide: false }
    return { e: `(${x} * ${y})`, wide: false }
  }
  // 16-bit: the 32-bit product of the extended values holds it all
  const p = `(${x} * ${y})`
  if (part === 'wide') return { e: p, wide: false }
  if (part === 'hi') return { e: `((${signed ? `bitcast<u32>(bitcast<i32>(${p}) >> 16u)` : `(${p} >> 16u)`}) & 0xffffu)`, wide: false }
  return { e: `(${p} & 0xffffu)`, wide: false }
}

function cmpInt(w: KernelWriter, cmp: string, t: PtxType, a: Operand, b: Operand): string {
  const signed = t[0] === 's' && !['lo', 'ls', 'hi', 'hs'].includes(cmp)
  if (bitsOf(t) === 64) {
    const x = w.tmp(w.u64(a, t)), y = w.tmp(w.u64(b, t))
    const lt = (p: string, q: string) => `${signed ? 'kp_slt64' : 'kp_ult64'}(${p}, ${q})`
    switch (cmp) {
      case 'eq': return `all(${x} == ${y})`
      case 'ne': return `any(${x} != ${y})`
      case 'lt': case 'lo': return lt(x, y)
      case 'le': case 'ls': return `!${lt(y, x)}`
      case 'gt': case 'hi': return lt(y, x)
      case 'ge': case 'hs': return `!${lt(x, y)}`
      default: return w.refuse(`integer comparison .${cmp}`)
    }
  }
  let x = w.u32(a, t), y = w.u32(b, t)
  if (signed) { x = `bitcast<i32>(${x})`; y = `bitcast<i32>(${y})` }
  const op: Record<string, string> = { eq: '==', ne: '!=', lt: '<', le: '<=', gt: '>', ge: '>=', lo: '<', ls: '<=', hi: '>', hs: '>=' }
  if (!op[cmp]) return w.refuse(`integer comparison .${cmp}`)
  return `(${x} ${op[cmp]} ${y})`
}

function cmpFloat(w: KernelWriter, ins: Instruction, cmp: string, t: PtxType, a: Operand, b: Operand): string {
  let x: string, y: string
  if (t === 'f32') { x = fin(w, ins, a); y = fin(w, ins, b) } else if (t === 'f16' || t === 'bf16') {
    const to = toF32(t)
    x = to(w.u32(a, 'b16')); y = to(w.u32(b, 'b16'))
  } else return w.refuse(`comparison of .${t}`)
  x = w.tmp(x); y = w.tmp(y)
  // ordered eq/lt/le/gt/ge are false on NaN in IEEE arithmetic; the others need the NaN test on the bits
  const plain: Record<string, string> = { eq: '==', lt: '<', le: '<=', gt: '>', ge: '>=' }
  if (plain[cmp]) return `(${x} ${plain[cmp]} ${y})`
  const code: Record<string, number> = { ne: 1, equ: 8, neu: 9, ltu: 10, leu: 11, gtu: 12, geu: 13, num: 16, nan: 17 }
  if (code[cmp] === undefined) return w.refuse(`float comparison .${cmp}`)
  return `kp_fcmp(${x}, ${y}, ${code[cmp]}u)`
}

function compare(w: KernelWriter, ins: Instruction, t: PtxType): string {
  const cmp = ins.cmp!
  if (t === 'f64') {
    const code: Record<string, number> = { eq: 0, ne: 1, lt: 2, le: 3, gt: 4, ge: 5, equ: 8, neu: 9, ltu: 10, leu: 11, gtu: 12, geu: 13, num: 16, nan: 17 }
    if (code[cmp] === undefined) return w.refuse(`float comparison .${cmp}`)
    w.softF64++
    return w.tmp(`kp_f64_cmp(${w.u64(ins.operands[1]!)}, ${w.u64(ins.operands[2]!)}, ${code[cmp]}u)`)
  }
  const isF = t === 'f32' || t === 'f16' || t === 'bf16'
  if (t === 'f16x2' || t === 'bf16x2') return w.refuse(`setp on packed halves (.${t})`)
  return w.tmp(isF ? cmpFloat(w, ins, cmp, t, ins.operands[1]!, ins.operands[2]!) : cmpInt(w, cmp, t, ins.operands[1]!, ins.operands[2]!))
}

// --- conversions ---

function cvt(w: KernelWriter, ins: Instruction): void {
  const [dt, st] = ins.types as [PtxType, PtxType]
  const A = ins.operands
  if (!dt || !st) return w.refuse('cvt needs two types')
  // f32 → f64 is exact: the bits widened (printf's float arguments, promoted to double, need nothing more)
  if (dt === 'f64' && st === 'f32' && !ins.flags.ftz && !ins.flags.sat && !ins.intRounding) return w.setU64(A[0], `kp_f32_to_f64(bitcast<u32>(${w.f32(A[1]!)}))`)
  const mode = roundingCode(ins)
  // f64 → f32, rounded once (software binary64)
  if (dt === 'f32' && st === 'f64' && mode >= 0 && !ins.flags.sat && !ins.intRounding) {
    w.softF64++
    const f = `bitcast<f32>(kp_f64_to_f32(${w.u64(A[1]!)}, ${mode}u))`
    return w.setF32(A[0], ins.flags.ftz ? `kp_ftz(${f})` : f)
  }
  // integers → f64: exact below 2^53, 64-bit ones rounded once
  if (dt === 'f64' && /^[su](8|16|32|64)$/.test(st) && mode >= 0 && !ins.flags.sat && !ins.intRounding) {
    w.softF64++
    const sb = bitsOf(st)
    if (sb === 64) {
      const v = w.tmp(w.u64(A[1]!))
      if (st[0] === 'u') return w.setU64(A[0], `kp_int_to_f64(false, ${v}, ${mode}u)`)
      const neg = `(${v}.y & 0x80000000u) != 0u`
      return w.setU64(A[0], `kp_int_to_f64(${neg}, select(${v}, kp_neg64(${v}), ${neg}), ${mode}u)`)
    }
    const v = w.tmp(w.u32(A[1]!, st))
    if (st[0] === 'u') return w.setU64(A[0], `kp_int_to_f64(false, vec2<u32>(${v}, 0u), 0u)`)
    const x = w.tmp(sb < 32 ? `kp_sext(${v}, ${sb}u)` : v)
    return w.setU64(A[0], `kp_int_to_f64((${x} & 0x80000000u) != 0u, vec2<u32>(select(${x}, 0u - ${x}, (${x} & 0x80000000u) != 0u), 0u), 0u)`)
  }
  // f64 → f64 integral values (cvt.{rni,rzi,rmi,rpi}.f64.f64), the sign of a zero kept
  if (st === 'f64' && dt === 'f64' && ins.intRounding && !ins.flags.sat) {
    w.softF64++
    return w.setU64(A[0], `kp_f64_roundint(${w.u64(A[1]!)}, ${['rni', 'rzi', 'rmi', 'rpi'].indexOf(ins.intRounding)}u)`)
  }
  // f64 → integers: rounded, clamped to the destination (NaN is 0)
  if (st === 'f64' && /^[su](8|16|32|64)$/.test(dt) && !ins.flags.sat) {
    const m = ['rni', 'rzi', 'rmi', 'rpi'].indexOf(ins.intRounding ?? 'rzi')
    if (m < 0) return w.refuse(`cvt.${ins.intRounding}.${dt}.f64`)
    w.softF64++
    const db = bitsOf(dt), sg = dt[0] === 's'
    if (db === 64) return w.setU64(A[0], `kp_f64_to_int(${w.u64(A[1]!)}, ${m}u, ${sg}, true)`)
    if (db === 32) return w.setU32(A[0], `kp_f64_to_int(${w.u64(A[1]!)}, ${m}u, ${sg}, false).x`, dt)
    return w.refuse(`cvt.${dt}.f64 (a ${db}-bit destination)`)
  }
  // f16/bf16 → f64 is exact: through f32, which holds every half-precision value
  if (dt === 'f64' && (st === 'f16' || st === 'bf16') && !ins.flags.ftz && !ins.flags.sat && !ins.intRounding) {
    return w.setU64(A[0], `kp_f32_to_f64(bitcast<u32>(${toF32(st)(w.u32(A[1]!, 'b16'))}))`)
  }
  // f64 → f16/bf16, rounded once from the binary64 value (not through f32: that would round twice)
  if ((dt === 'f16' || dt === 'bf16') && st === 'f64' && mode >= 0 && !ins.flags.ftz && !ins.flags.sat && !ins.intRounding) {
    w.softF64++
    const h = `kp_f64_to_small(${w.u64(A[1]!)}, ${dt === 'f16' ? '10u, 5u' : '7u, 8u'}, ${mode}u, ${ins.flags.satfinite ? 'true' : 'false'})`
    return w.setU32(A[0], ins.flags.relu ? `kp_relu16(${h}, ${dt === 'bf16'})` : h, 'b16')
  }
  if (dt === 'f64' || st === 'f64') return w.refuse(`cvt${ins.intRounding ? `.${ins.intRounding}` : ''}${ins.flags.sat ? '.sat' : ''}.${dt}.${st}: WGSL has no f64 (the software binary64 converts f32, half precision, integers and f64 among themselves)`)
  const isF = (x: PtxType) => x === 'f32' || x === 'f16' || x === 'bf16' || x === 'tf32'
  const isI = (x: PtxType) => /^[sub](8|16|32|64)$/.test(x)
  if ((dt === 'f16x2' || dt === 'bf16x2') && st === 'f32') {
    // cvt.rn{.relu}{.satfinite}.f16x2.f32 d, a, b: a to the upper half, b to the lower
    if (mode < 0) return w.refuse(`cvt.${ins.rounding}.${dt}`)
    const bf = dt === 'bf16x2'
    const f = (o: Operand) => {
      const h = bf ? `kp_f2bf_mode(${w.f32(o)}, ${mode}u, ${ins.flags.satfinite ? 'true' : 'false'})` : `kp_f2h_mode(${w.f32(o)}, ${mode}u, ${ins.flags.satfinite ? 'true' : 'false'})`
      return ins.flags.relu ? `kp_relu16(${h}, ${bf})` : h
    }
    w.setU32(A[0], `${f(A[2]!)} | (${f(A[1]!)} << 16u)`)
    return
  }
  if (['e4m3x2', 'e5m2x2'].includes(dt) || ['e4m3x2', 'e5m2x2'].includes(st)) return w.refuse('8-bit float conversions (.e4m3x2/.e5m2x2)')
  if (isF(dt) && isF(st)) {
    let x = st === 'f32' ? w.f32(A[1]!) : toF32(st)(w.u32(A[1]!, 'b16'))
    if (ins.flags.ftz && st === 'f32') x = `kp_ftz(${x})`
    if (ins.intRounding) x = `kp_round(${x}, ${['rni', 'rzi', 'rmi', 'rpi'].indexOf(ins.intRounding)}u)`
    if (ins.flags.sat) x = `kp_sat(${x})`
    if (dt === 'f32') {
      if (ins.flags.ftz) x = `kp_ftz(${x})`
      return w.setF32(A[0], x)
    }
    if (dt === 'tf32') {
      // cvt.rna.tf32.f32: keep 10 fraction bits, ties away from zero (NaN and infinities unchanged)
      const b = w.tmp(`bitcast<u32>(${x})`)
      w.setU32(A[0], `select((${b} + 0x1000u) & 0xffffe000u, ${b}, (${b} & 0x7f800000u) == 0x7f800000u)`)
      return
    }
    if (mode < 0) return w.refuse(`cvt.${ins.rounding}.${dt}`)
    const sf = ins.flags.satfinite ? 'true' : 'false'
    let h = dt === 'f16' ? `kp_f2h_mode(${x}, ${mode}u, ${sf})` : `kp_f2bf_mode(${x}, ${mode}u, ${sf})`
    if (ins.flags.relu) h = `kp_relu16(${h}, ${dt === 'bf16'})`
    return w.setU32(A[0], h, 'b16')
  }
  if (isI(dt) && isF(st)) {
    let x = st === 'f32' ? w.f32(A[1]!) : toF32(st)(w.u32(A[1]!, 'b16'))
    if (ins.flags.ftz && st === 'f32') x = `kp_ftz(${x})`
    const m = ['rni', 'rzi', 'rmi', 'rpi'].indexOf(ins.intRounding ?? 'rzi')
    const db = bitsOf(dt)
    const sg = dt[0] === 's'
    if (db === 64) return w.setU64(A[0], `kp_f2${sg ? 's' : 'u'}64(${x}, ${m}u)`)
    if (db === 32) return w.setU32(A[0], `kp_f2${sg ? 's' : 'u'}32(${x}, ${m}u)`, dt)
    return w.setU32(A[0], `kp_f2${sg ? 's' : 'u'}N(${x}, ${m}u, ${db}u)`, dt)
  }
  if (isF(dt) && isI(st)) {
    const sb = bitsOf(st)
    const sg = st[0] === 's'
    if (mode > 0 && dt !== 'f32') return w.refuse(`cvt.${ins.rounding}.${dt}.${st}: a directed rounding to half precision from an integer`)
    if (mode > 0 && sb >= 32) {
      // .rz/.rm/.rp from 32- and 64-bit integers to f32, rounded once from the magnitude (narrower ones are exact)
      let f: string
      if (sb === 64) {
        const v = w.tmp(w.u64(A[1]!))
        const neg = sg ? `(${v}.y & 0x80000000u)` : '0u'
        f = `bitcast<f32>(kp_u64_to_f32_mode(${neg}, ${sg ? `select(${v}, kp_neg64(${v}), ${neg} != 0u)` : v}, ${mode}u))`
      } else {
        const v = w.tmp(w.u32(A[1]!, st))
        const neg = sg ? `(${v} & 0x80000000u)` : '0u'
        f = `bitcast<f32>(kp_u32_to_f32_mode(${neg}, ${sg ? `select(${v}, 0u - ${v}, ${neg} != 0u)` : v}, ${mode}u))`
      }
      return w.setF32(A[0], ins.flags.sat ? `kp_sat(${f})` : f)
    }
    if (mode < 0) return w.refuse(`cvt.${ins.rounding}.${dt}.${st}`)
    let f: string
    if (sb === 64) f = `${sg ? 'kp_s64_to_f32' : 'kp_u64_to_f32'}(${w.u64(A[1]!)})`
    // 32-bit sources in integer arithmetic (kp_u32_to_f32: f32(u32) rounds as the implementation likes);
    // narrower ones convert exactly
    else if (sb === 32) f = sg ? `kp_s32_to_f32(bitcast<i32>(${w.u32(A[1]!, st)}))` : `kp_u32_to_f32(${w.u32(A[1]!, st)})`
    else f = sg ? `f32(bitcast<i32>(${w.u32(A[1]!, st)}))` : `f32(${w.u32(A[1]!, st)})`
    if (ins.flags.sat) f = `kp_sat(${f})`
    if (dt === 'f32') return w.setF32(A[0], f)
    if (dt === 'f16') return w.setU32(A[0], `kp_f2h(${f})`, 'b16')
    if (dt === 'bf16') return w.setU32(A[0], `kp_f2bf(${f})`, 'b16')
    return w.refuse(`cvt.${dt}.${st}`)
  }
  if (isI(dt) && isI(st)) {
    const sb = bitsOf(st), db = bitsOf(dt)
    const ss = st[0] === 's', ds = dt[0] === 's'
    if (ins.flags.sat) {
      if (sb === 64 || db === 64) return w.refuse(`cvt.sat.${dt}.${st}`)
      const lo = ds ? -(2 ** (db - 1)) : 0
      const hi = ds ? 2 ** (db - 1) - 1 : 2 ** db - 1
      const v = w.tmp(w.u32(A[1]!, st))
      const e = ss
        ? `bitcast<u32>(clamp(bitcast<i32>(${v}), bitcast<i32>(${u32Lit(Math.max(lo, -(2 ** 31)))}), bitcast<i32>(${u32Lit(Math.min(hi, 2 ** 31 - 1))})))`
        : `min(${v}, ${u32Lit(Math.min(hi, 2 ** 32 - 1))})`
      return w.setU32(A[0], db < 32 ? `(${e}) & ${u32Lit(2 ** db - 1)}` : e, dt)
    }
    if (db === 64) {
      if (sb === 64) return w.setU64(A[0], w.u64(A[1]!))
      const v = w.tmp(w.u32(A[1]!, st))
      return w.setU64(A[0], ss ? `vec2<u32>(${v}, select(0u, 0xffffffffu, (${v} & 0x80000000u) != 0u))` : `vec2<u32>(${v}, 0u)`)
    }
    const v = sb === 64 ? `${w.u64(A[1]!)}.x` : w.u32(A[1]!, st)
    if (db === 32) return w.setU32(A[0], v, dt)
    // an 8-bit signed result is sign-extended in a wider register, 16-bit results are their bits (as the emulator)
    if (db === 8 && ds) return w.setU32(A[0], `kp_sext(${v}, 8u)`, 's32')
    return w.setU32(A[0], `(${v}) & ${u32Lit(2 ** db - 1)}`, dt)
  }
  return w.refuse(`cvt.${dt}.${st}`)
}

/** Writes the (non-memory, non-control, non-collective) instruction `ins`. */

/** The function a `call` names ('' for an indirect call). */
export function callTarget(ins: Instruction): string {
  const target = ins.operands.find((o) => o.kind === 'sym' && o.target === 'function')
  return target?.kind === 'sym' ? target.name : ''
}

/** A fence beyond the block (`membar.gl/sys`, `fence.*.gpu/sys/cluster`, __threadfence()): written as a storage
 *  barrier in predicated code (emit-collective.ts), the strongest ordering WGSL has. */
export function isDeviceFence(ins: Instruction): boolean {
  if (ins.op !== 'membar' && ins.op !== 'fence') return false
  const scope = ins.op === 'membar' ? ins.scope : ins.scope ?? 'gpu'
  return scope === 'gl' || scope === 'gpu' || scope === 'sys' || scope === 'cluster'
}

export function emitOp(w: KernelWriter, ins: Instruction): void {
  const A = ins.operands
  const t = ins.type
  switch (ins.op) {
    case 'mov': {
      if (!t) return w.refuse('mov without a type')
      const src = A[1]!, dst = A[0]!
      if (src.kind === 'vec') {
        // pack: mov.b64 %rd, {%r1, %r2}; mov.b32 %r, {%h1, %h2}; mov.b64 %rd, {4 halves}; mov.b32 %r, {4 bytes}
        const items = src.items
        if (bitsOf(t) === 64 && items.length === 2) return w.setU64(dst, `vec2<u32>(${w.u32(items[0]!)}, ${w.u32(items[1]!)})`)
        if (bitsOf(t) === 32 && items.length === 2) return w.setU32(dst, `${w.u32(items[0]!, 'b16')} | (${w.u32(items[1]!, 'b16')} << 16u)`)
        if (bitsOf(t) === 64 && items.length === 4) return w.setU64(dst, `vec2<u32>(${w.u32(items[0]!, 'b16')} | (${w.u32(items[1]!, 'b16')} << 16u), ${w.u32(items[2]!, 'b16')} | (${w.u32(items[3]!, 'b16')} << 16u))`)
        if (bitsOf(t) === 32 && items.length === 4) return w.setU32(dst, items.map((it, i) => `(${w.u32(it, 'b8')} << ${8 * i}u)`).join(' | '))
        if (bitsOf(t) === 16 && items.length === 2) return w.setU32(dst, `${w.u32(items[0]!, 'b8')} | (${w.u32(items[1]!, 'b8')} << 8u)`, 'b16')
        return w.refuse('this vector mov')
      }
      if (dst.kind === 'vec') {
        const items = dst.items
        if (bitsOf(t) === 64 && items.length === 2) {
          const v = w.tmp(w.u64(src))
          w.setU32(items[0], `${v}.x`)
          w.setU32(items[1], `${v}.y`)
          return
        }
        if (bitsOf(t) === 32 && items.length === 2) {
          const v = w.tmp(w.u32(src))
          w.setU32(items[0], `${v} & 0xffffu`, 'b16')
          w.setU32(items[1], `${v} >> 16u`, 'b16')
          return
        }
        if (bitsOf(t) === 64 && items.length === 4) {
          const v = w.tmp(w.u64(src))
          items.forEach((it, i) => w.setU32(it, `(${i < 2 ? `${v}.x` : `${v}.y`} >> ${16 * (i & 1)}u) & 0xffffu`, 'b16'))
          return
        }
        if (bitsOf(t) === 32 && items.length === 4) {
          const v = w.tmp(w.u32(src))
          items.forEach((it, i) => w.setU32(it, `(${v} >> ${8 * i}u) & 0xffu`, 'b8'))
          return
        }
        if (bitsOf(t) === 16 && items.length === 2) {
          const v = w.tmp(w.u32(src, 'b16'))
          w.setU32(items[0], `${v} & 0xffu`, 'b8')
          w.setU32(items[1], `${v} >> 8u`, 'b8')
          return
        }
        return w.refuse('this vector mov')
      }
      if (t === 'pred') return w.setPred(dst, w.pred(src))
      if (bitsOf(t) === 64) return w.setU64(dst, w.u64(src))
      if (bitsOf(t) === 128) return w.refuse('128-bit registers')
      if (w.storeOf(dst) === 'f32' && (t === 'f32' || t === 'b32' || t === 'u32' || t === 's32')) return w.setF32(dst, w.f32(src))
      return w.setU32(dst, w.u32(src, t), t)
    }
    case 'add': case 'sub': {
      if (t === 'f64') return f64Arith(w, ins, ins.op as 'add' | 'sub')
      if (ins.flags.cc) return carry(w, ins)
      const sub = ins.op === 'sub'
      if (t === 'f32') {
        const d = directed(w, ins, sub ? 'sub' : 'add')
        if (d) return w.setF32(A[0], d)
        roundNearest(w, ins)
        // an add or sub that ptxas fuses with the product it reads is that fma, as on the GPU and in the emulator
        const m = w.contraction.get(ins.index)
        const fused = m && ![ins, w.fn.instructions[m.mul]!].some((x) => x.flags.ftz || x.flags.sat) ? fusedOperands(w, ins, (o) => fk(w, ins, o), (x) => `(-${x})`) : undefined
        if (fused) return w.setF32(A[0], `kp_fma_rn(${fused.join(', ')})`)
        return w.setF32(A[0], fout(ins, `${fk(w, ins, A[1]!)} ${sub ? '-' : '+'} ${fk(w, ins, A[2]!)}`))
      }
      if (isHalf(t)) return half(w, ins, ins.op)
      // a result kept as its low word (narrowRegisters): the low words' sum or difference
      if (bitsOf(t!) === 64 && w.narrowed(A[0])) return w.setU64(A[0], `vec2<u32>(${w.u32(A[1]!)} ${sub ? '-' : '+'} ${w.u32(A[2]!)}, 0u)`)
      if (bitsOf(t!) === 64) return w.setU64(A[0], `kp_${sub ? 'sub' : 'add'}64(${w.u64(A[1]!)}, ${w.u64(A[2]!)})`)
      const [x, y] = ints(w, ins, 1, 2)
      if (ins.flags.sat) {
        if (t !== 's32') return w.refuse(`${ins.op}.sat.${t}`)
        return setInt(w, ins, `kp_${sub ? 'sub' : 'add'}_sat_s32(${x}, ${y})`)
      }
      return setInt(w, ins, `${x} ${sub ? '-' : '+'} ${y}`)
    }
    case 'addc': case 'subc': case 'madc':
      return carry(w, ins)
    case 'mul': {
      if (t === 'f64') return f64Arith(w, ins, 'mul')
      if (t === 'f32') {
        const d = directed(w, ins, 'mul')
        if (d) return w.setF32(A[0], d)
        roundNearest(w, ins)
        // a product by a power of two of at least 2^23 (libdevice's scaling of a subnormal argument): a subnormal
        // factor from its bits (kp_mul_up), where .ftz does not flush it
        for (const [xi, ci] of [[1, 2], [2, 1]] as const) {
          const c = ins.flags.ftz ? undefined : constF32(w, A[ci]!)
          if (c === undefined) continue
          const e = ((c >>> 23) & 0xff) - 127
          if ((c & 0x807fffff) !== 0 || e < 23 || e > 127) continue
          const cs = fromF32Bits(((e - 149) + 127) << 23)
          return w.setF32(A[0], fout(ins, `kp_mul_up(${fin(w, ins, A[xi]!)}, ${fk(w, ins, A[ci]!)}, ${wgslF32(cs)})`))
        }
        // rounded here, never fused by the device's compiler into an add that reads it (NVIDIA's Vulkan driver
        // fuses a product and the add that alone reads it; PTX fuses only what ptxas fuses, above): kp_nc
        return w.setF32(A[0], fout(ins, `kp_nc(${fk(w, ins, A[1]!)} * ${fk(w, ins, A[2]!)})`))
      }
      if (isHalf(t)) return half(w, ins, 'mul')
      const p = intProduct(w, ins, A[1]!, A[2]!)
      if (p.wide && (ins.part === 'wide' || bitsOf(t!) === 64)) return w.setU64(A[0], p.e)
      return setInt(w, ins, p.e, ins.part === 'wide' ? (t![0] === 's' ? 's32' : 'u32') : t)
    }
    case 'mad': {
      if (t === 'f64') return f64Arith(w, ins, 'fma')
      if (ins.flags.cc) return carry(w, ins)
      if (t === 'f32') {
        // mad.f32 is fma (PTX ISA: mad.rn.f32 computes the product to infinite precision)
        const d = directed(w, ins, 'fma')
        if (d) return w.setF32(A[0], d)
        roundNearest(w, ins)
        return w.setF32(A[0], fout(ins, `kp_fma_rn(${fk(w, ins, A[1]!)}, ${fk(w, ins, A[2]!)}, ${fk(w, ins, A[3]!)})`))
      }
      if (isHalf(t)) return half(w, ins, 'fma')
      if (ins.flags.sat) return w.refuse('mad.hi.sat')
      const p = intProduct(w, ins, A[1]!, A[2]!)
      if (p.wide && w.narrowed(A[0])) return w.setU64(A[0], `vec2<u32>((${p.e}).x + ${w.u32(A[3]!)}, 0u)`)
      if (p.wide) return w.setU64(A[0], `kp_add64(${p.e}, ${w.u64(A[3]!)})`)
      if (ins.part === 'wide') return setInt(w, ins, `${p.e} + ${w.u32(A[3]!)}`, 'b32')
      return setInt(w, ins, `${p.e} + ${w.u32(A[3]!, t)}`)
    }
    case 'mul24': case 'mad24': {
      const signed = t === 's32'
      const s24 = (o: Operand) => signed ? `kp_sext(${w.u32(o)} & 0xffffffu, 24u)` : `(${w.u32(o)} & 0xffffffu)`
      const a = w.tmp(s24(A[1]!)), b = w.tmp(s24(A[2]!))
      let p: string
      if (ins.part === 'hi') {
        const wide = w.tmp(`kp_mulwide_${signed ? 's' : 'u'}32(${a}, ${b})`)
        p = `((${wide}.x >> 16u) | (${wide}.y << 16u))`
      } else p = `(${a} * ${b})`
      if (ins.op === 'mad24') {
        if (ins.flags.sat) return w.refuse('mad24.sat')
        p = `${p} + ${w.u32(A[3]!)}`
      }
      return w.setU32(A[0], p)
    }
    case 'fma': {
      if (t === 'f64') return f64Arith(w, ins, 'fma')
      if (isHalf(t)) return half(w, ins, 'fma')
      if (t !== 'f32') return w.refuse(`fma.${t}`)
      const d = directed(w, ins, 'fma')
      if (d) return w.setF32(A[0], d)
      roundNearest(w, ins)
      return w.setF32(A[0], fout(ins, `kp_fma_rn(${fk(w, ins, A[1]!)}, ${fk(w, ins, A[2]!)}, ${fk(w, ins, A[3]!)})`))
    }
    case 'div': case 'rem': {
      if (t === 'f64' && ins.op === 'div') {
        // div.{rn,rz,rm,rp}.f64 exact; .approx/.full are the emulator's correctly rounded quotient too
        const mode = roundingCode(ins)
        if (mode < 0) return w.refuse(`div.${ins.rounding}.f64`)
        w.softF64++
        return w.setU64(A[0], `kp_f64_div(${w.u64(A[1]!)}, ${w.u64(A[2]!)}, ${mode}u)`)
      }
      noF64(w, ins)
      if (t === 'f32') {
        if (ins.op === 'rem') return w.refuse('rem.f32')
        // .approx/.full: WGSL's division (within 2.5 ulp, the ISA allows 2); .rn and the directed roundings exact
        if (ins.flags.approx || ins.flags.full) return w.setF32(A[0], fout(ins, `${fin(w, ins, A[1]!)} / ${fin(w, ins, A[2]!)}`))
        return w.setF32(A[0], fout(ins, `bitcast<f32>(kp_f32_div(${finBits(w, ins, A[1]!)}, ${finBits(w, ins, A[2]!)}, ${roundingCode(ins)}u))`))
      }
      const div = ins.op === 'div'
      const sg = t![0] === 's'
      if (bitsOf(t!) === 64) return w.setU64(A[0], `kp_divrem_${sg ? 's' : 'u'}64(${w.u64(A[1]!)}, ${w.u64(A[2]!)})[${div ? 0 : 1}]`)
      const [x, y] = ints(w, ins, 1, 2)
      return setInt(w, ins, `kp_${div ? 'div' : 'rem'}_${sg ? 's' : 'u'}32(${x}, ${y})`)
    }
    case 'min': case 'max': {
      if (t === 'f64') { w.softF64++; return w.setU64(A[0], `kp_f64_minmax(${w.u64(A[1]!)}, ${w.u64(A[2]!)}, ${ins.op === 'max'}, ${ins.flags.nan === true})`) }
      noF64(w, ins)
      const mx = ins.op === 'max'
      if (t === 'f32') {
        const f = ins.flags.nan ? `kp_f${ins.op}_nan` : `kp_f${ins.op}`
        return w.setF32(A[0], fout(ins, `${f}(${fin(w, ins, A[1]!)}, ${fin(w, ins, A[2]!)})`))
      }
      if (isHalf(t)) return half(w, ins, ins.op)
      if (ins.flags.relu) return w.refuse(`${ins.op}.relu`)
      if (bitsOf(t!) === 64) {
        const x = w.tmp(w.u64(A[1]!)), y = w.tmp(w.u64(A[2]!))
        const lt = `${t === 's64' ? 'kp_slt64' : 'kp_ult64'}(${x}, ${y})`
        return w.setU64(A[0], mx ? `select(${x}, ${y}, ${lt})` : `select(${y}, ${x}, ${lt})`)
      }
      const [x, y] = ints(w, ins, 1, 2)
      if (t![0] === 's') return setInt(w, ins, `bitcast<u32>(${ins.op}(bitcast<i32>(${x}), bitcast<i32>(${y})))`)
      return setInt(w, ins, `${ins.op}(${x}, ${y})`)
    }
    case 'abs': case 'neg': {
      // f64: the sign bit (PTX ISA: neg/abs of a NaN keep or clear its sign too)
      if (t === 'f64') return w.setU64(A[0], ins.op === 'neg' ? negF64(w.u64(A[1]!)) : `(${w.u64(A[1]!)} & vec2<u32>(0xffffffffu, 0x7fffffffu))`)
      const neg = ins.op === 'neg'
      if (t === 'f32') {
        const x = fin(w, ins, A[1]!)
        return w.setF32(A[0], fout({ ...ins, flags: { ...ins.flags, sat: undefined } }, neg ? `bitcast<f32>(bitcast<u32>(${x}) ^ 0x80000000u)` : `bitcast<f32>(bitcast<u32>(${x}) & 0x7fffffffu)`))
      }
      if (isHalf(t)) return half(w, ins, ins.op)
      if (bitsOf(t!) === 64) {
        const x = w.tmp(w.u64(A[1]!))
        return w.setU64(A[0], neg ? `kp_neg64(${x})` : `select(${x}, kp_neg64(${x}), (${x}.y & 0x80000000u) != 0u)`)
      }
      const x = w.u32(A[1]!, t)
      if (neg) return setInt(w, ins, `0u - ${x}`)
      return setInt(w, ins, `bitcast<u32>(abs(bitcast<i32>(${x})))`)
    }
    case 'and': case 'or': case 'xor': {
      const o = ins.op === 'and' ? '&' : ins.op === 'or' ? '|' : '^'
      if (t === 'pred') return w.setPred(A[0], ins.op === 'xor' ? `(${w.pred(A[1]!)} != ${w.pred(A[2]!)})` : `(${w.pred(A[1]!)} ${o}${o} ${w.pred(A[2]!)})`)
      if (bitsOf(t!) === 64) return w.setU64(A[0], `(${w.u64(A[1]!)} ${o} ${w.u64(A[2]!)})`)
      return setInt(w, ins, `${w.u32(A[1]!, t)} ${o} ${w.u32(A[2]!, t)}`)
    }
    case 'not': {
      if (t === 'pred') return w.setPred(A[0], `!${w.pred(A[1]!)}`)
      if (bitsOf(t!) === 64) return w.setU64(A[0], `~${w.u64(A[1]!)}`)
      return setInt(w, ins, `~${w.u32(A[1]!, t)}`)
    }
    case 'cnot': {
      if (bitsOf(t!) === 64) return w.setU64(A[0], `vec2<u32>(select(0u, 1u, all(${w.u64(A[1]!)} == vec2<u32>(0u))), 0u)`)
      return setInt(w, ins, `select(0u, 1u, ${w.u32(A[1]!, t)} == 0u)`)
    }
    case 'shl': case 'shr': {
      const n = A[2]!
      const imm = n.kind === 'imm' && n.imm.kind === 'int' ? BigInt.asUintN(32, n.imm.value) : undefined
      const amount = w.tmp(w.u32(n))
      const left = ins.op === 'shl'
      const sg = t![0] === 's'
      if (bitsOf(t!) === 64) return w.setU64(A[0], `${left ? 'kp_shl64' : sg ? 'kp_shr_s64' : 'kp_shr_u64'}(${w.u64(A[1]!)}, ${amount})`)
      const x = w.u32(A[1]!, t)
      if (imm !== undefined) {
        const k = Number(imm)
        if (left) return setInt(w, ins, k >= 32 ? '0u' : `${x} << ${k}u`)
        if (sg) return setInt(w, ins, `bitcast<u32>(bitcast<i32>(${x}) >> ${Math.min(k, 31)}u)`)
        return setInt(w, ins, k >= 32 ? '0u' : `${x} >> ${k}u`)
      }
      if (left) return setInt(w, ins, `select(${x} << (${amount} & 31u), 0u, ${amount} >= 32u)`)
      if (sg) return setInt(w, ins, `bitcast<u32>(bitcast<i32>(${x}) >> min(${amount}, 31u))`)
      return setInt(w, ins, `select(${x} >> (${amount} & 31u), 0u, ${amount} >= 32u)`)
    }
    case 'shf':
      return w.setU32(A[0], `kp_shf(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${ins.mode === 'l'}, ${ins.flags.clamp === true})`)
    case 'popc':
      return w.setU32(A[0], bitsOf(t!) === 64 ? `kp_popc64(${w.u64(A[1]!)})` : `countOneBits(${w.u32(A[1]!)})`)
    case 'clz':
      return w.setU32(A[0], bitsOf(t!) === 64 ? `kp_clz64(${w.u64(A[1]!)})` : `countLeadingZeros(${w.u32(A[1]!)})`)
    case 'brev':
      return bitsOf(t!) === 64 ? w.setU64(A[0], `kp_brev64(${w.u64(A[1]!)})`) : w.setU32(A[0], `reverseBits(${w.u32(A[1]!)})`)
    case 'bfind': {
      const sg = t![0] === 's'
      return w.setU32(A[0], bitsOf(t!) === 64 ? `kp_bfind64(${w.u64(A[1]!)}, ${sg}, ${ins.flags.shiftamt === true})` : `kp_bfind32(${w.u32(A[1]!)}, ${sg}, ${ins.flags.shiftamt === true})`)
    }
    case 'bfe': {
      const sg = t![0] === 's'
      if (bitsOf(t!) === 64) return w.setU64(A[0], `kp_bfe64(${w.u64(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${sg})`)
      return w.setU32(A[0], `kp_bfe32(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${sg})`)
    }
    case 'bfi':
      if (bitsOf(t!) === 64) return w.setU64(A[0], `kp_bfi64(${w.u64(A[1]!)}, ${w.u64(A[2]!)}, ${w.u32(A[3]!)}, ${w.u32(A[4]!)})`)
      return w.setU32(A[0], `kp_bfi32(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${w.u32(A[4]!)})`)
    case 'prmt': {
      const modes = ['f4e', 'b4e', 'rc8', 'ecl', 'ecr', 'rc16']
      if (ins.mode) return w.setU32(A[0], `kp_prmt_mode(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${modes.indexOf(ins.mode)}u)`)
      return w.setU32(A[0], `kp_prmt(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)})`)
    }
    case 'lop3':
      if (A[0]?.kind === 'pair') return w.refuse('lop3 with a predicate result')
      return w.setU32(A[0], `kp_lop3(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${w.u32(A[4]!)})`)
    case 'dp4a': case 'dp2a': {
      const [ta, tb] = ins.types
      const sa = ta === 's32', sb = tb === 's32'
      if (ins.op === 'dp4a') return w.setU32(A[0], `kp_dp4a(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${sa}, ${sb})`)
      return w.setU32(A[0], `kp_dp2a(${w.u32(A[1]!)}, ${w.u32(A[2]!)}, ${w.u32(A[3]!)}, ${sa}, ${sb}, ${ins.part === 'hi'})`)
    }
    case 'sad': {
      const x = w.tmp(w.u32(A[1]!, t)), y = w.tmp(w.u32(A[2]!, t))
      const lt = t![0] === 's' ? `bitcast<i32>(${x}) < bitcast<i32>(${y})` : `${x} < ${y}`
      return setInt(w, ins, `select(${x} - ${y}, ${y} - ${x}, ${lt}) + ${w.u32(A[3]!, t)}`)
    }
    case 'szext': {
      const a = w.tmp(w.u32(A[1]!))
      const b = w.tmp(w.u32(A[2]!))
      const u = w.tmp(ins.mode === 'wrap' ? `${b} & 31u` : `min(${b}, 32u)`)
      if (t === 's32') return w.setU32(A[0], `select(select(bitcast<u32>(bitcast<i32>(${a} << (32u - ${u})) >> (32u - ${u})), ${a}, ${u} == 32u), 0u, ${u} == 0u)`)
      return w.setU32(A[0], `select(select(${a} & ((1u << ${u}) - 1u), ${a}, ${u} == 32u), 0u, ${u} == 0u)`)
    }
    case 'bmsk': {
      const a = w.tmp(ins.mode === 'wrap' ? `${w.u32(A[1]!)} & 31u` : `min(${w.u32(A[1]!)}, 32u)`)
      const b = w.tmp(ins.mode === 'wrap' ? `${w.u32(A[2]!)} & 31u` : `min(${w.u32(A[2]!)}, 32u)`)
      return w.setU32(A[0], `select(select(1u << (${a} + ${b}), 0u, ${a} + ${b} >= 32u) - (1u << ${a}), 0u, ${a} >= 32u)`)
    }
    case 'setp': {
      const c = compare(w, ins, t!)
      const pair = A[0]?.kind === 'pair' ? A[0] : undefined
      const p = pair ? pair.first : A[0]
      const q = pair?.second
      if (ins.boolOp) {
        const r = w.tmp(w.pred(A[3]!))
        const j = ins.boolOp === 'and' ? '&&' : ins.boolOp === 'or' ? '||' : '!='
        w.setPred(p, `(${c} ${j} ${r})`)
        if (q) w.setPred(q, `(!${c} ${j} ${r})`)
        return
      }
      w.setPred(p, c)
      if (q) w.setPred(q, `!${c}`)
      return
    }
    case 'set': {
      const [dt, st] = ins.types as [PtxType, PtxType]
      let c = compare(w, ins, st)
      if (ins.boolOp) c = `(${c} ${ins.boolOp === 'and' ? '&&' : ins.boolOp === 'or' ? '||' : '!='} ${w.pred(A[3]!)})`
      if (dt === 'f32') return w.setF32(A[0], `select(0.0f, 1.0f, ${c})`)
      return w.setU32(A[0], `select(0u, 0xffffffffu, ${c})`)
    }
    case 'selp': {
      const p = w.pred(A[3]!)
      if (t === 'f64' || bitsOf(t!) === 64) return w.setU64(A[0], `select(${w.u64(A[2]!)}, ${w.u64(A[1]!)}, ${p})`)
      if (w.storeOf(A[0]) === 'f32') return w.setF32(A[0], `select(${w.f32(A[2]!)}, ${w.f32(A[1]!)}, ${p})`)
      return w.setU32(A[0], `select(${w.u32(A[2]!, t)}, ${w.u32(A[1]!, t)}, ${p})`, t)
    }
    case 'slct': {
      const [dt, ct] = ins.types as [PtxType, PtxType]
      if (dt === 'f64' || bitsOf(dt) === 64) return w.refuse(`slct.${dt}`)
      const c = ct === 'f32' ? `${fin(w, ins, A[3]!)} >= 0.0f` : `bitcast<i32>(${w.u32(A[3]!)}) >= 0i`
      if (w.storeOf(A[0]) === 'f32') return w.setF32(A[0], `select(${w.f32(A[2]!)}, ${w.f32(A[1]!)}, ${c})`)
      return w.setU32(A[0], `select(${w.u32(A[2]!, dt)}, ${w.u32(A[1]!, dt)}, ${c})`, dt)
    }
    case 'cvt':
      return cvt(w, ins)
    case 'copysign':
      // d = b with a's sign (on the bits for f64)
      if (t === 'f64') return w.setU64(A[0], `vec2<u32>(${w.u64(A[2]!)}.x, (${w.u64(A[2]!)}.y & 0x7fffffffu) | (${w.u64(A[1]!)}.y & 0x80000000u))`)
      if (t !== 'f32') return w.refuse(`copysign.${t}`)
      return w.setF32(A[0], `kp_copysign(${w.f32(A[2]!)}, ${w.f32(A[1]!)})`)
    case 'testp': {
      if (t === 'f64') {
        // on the bits: finite, infinite, number, notanumber, normal, subnormal
        const x = w.tmp(w.u64(A[1]!))
        const e = `(${x}.y & 0x7ff00000u)`, mag0 = `((${x}.y & 0x7fffffffu) == 0u && ${x}.x == 0u)`
        const tests: Record<string, string> = {
          finite: `${e} != 0x7ff00000u`, infinite: `((${x}.y & 0x7fffffffu) == 0x7ff00000u && ${x}.x == 0u)`, number: `!kp_f64_isnan(${x})`, notanumber: `kp_f64_isnan(${x})`,
          normal: `(${e} != 0u && ${e} != 0x7ff00000u)`, subnormal: `(${e} == 0u && !${mag0})`,
        }
        const test = tests[ins.mode ?? '']
        if (!test) return w.refuse(`testp.${ins.mode}.f64`)
        return w.setPred(A[0], test)
      }
      if (t !== 'f32') return w.refuse(`testp.${t}`)
      const m = ['finite', 'infinite', 'number', 'notanumber', 'normal', 'subnormal'].indexOf(ins.mode ?? '')
      return w.setPred(A[0], `kp_testp(${w.f32(A[1]!)}, ${m}u)`)
    }
    case 'rcp': case 'sqrt': case 'rsqrt': case 'sin': case 'cos': case 'lg2': case 'ex2': case 'tanh': {
      if (t === 'f64' && (ins.op === 'rcp' || ins.op === 'sqrt' || ins.op === 'rsqrt')) {
        // exact in software binary64 (.approx as the emulator computes it: rcp 1/x, rsqrt 1/√x, each rounded)
        const mode = ins.flags.approx ? 0 : roundingCode(ins)
        if (mode < 0 || ins.flags.ftz && !ins.flags.approx) return w.refuse(`${ins.op}.${ins.rounding}.f64`)
        w.softF64++
        const x = w.u64(A[1]!)
        const e = ins.op === 'rcp' ? `kp_f64_div(${F64_ONE}, ${x}, ${mode}u)` : ins.op === 'sqrt' ? `kp_f64_sqrt(${x}, ${mode}u)` : `kp_f64_div(${F64_ONE}, kp_f64_sqrt(${x}, 0u), 0u)`
        return w.setU64(A[0], e)
      }
      noF64(w, ins)
      if (isHalf(t)) return half(w, ins, ins.op)
      if (t !== 'f32') return w.refuse(`${ins.op}.${t}`)
      // rcp and sqrt with a rounding (.rn, .rz, .rm, .rp) are exact; the .approx forms WGSL's own
      if (!ins.flags.approx && (ins.op === 'rcp' || ins.op === 'sqrt')) {
        const x = finBits(w, ins, A[1]!), mode = roundingCode(ins)
        return w.setF32(A[0], fout(ins, `bitcast<f32>(${ins.op === 'rcp' ? `kp_f32_div(0x3f800000u, ${x}, ${mode}u)` : `kp_f32_sqrt(${x}, ${mode}u)`})`))
      }
      if (!ins.flags.approx) roundNearest(w, ins)
      const x = fin(w, ins, A[1]!)
      // lg2 and ex2 through their special cases and the whole range (kp_lg2, kp_ex2: WGSL leaves log2 of 0 or a
      // subnormal and exp2 far from 0 to the implementation; SwiftShader's log2(0) is -127); sin and cos within
      // the PTX ISA's bound by a reduction and polynomials of our own (kp_sin_approx: WGSL's may be off by 2^-11)
      // (rcp, sqrt and rsqrt of a subnormal scaled from its bits where .ftz does not flush it: kp_up64)
      const sub = !ins.flags.ftz
      const f: Record<string, string> = { rcp: sub ? `kp_rcp_a(${x})` : `1.0f / ${x}`, sqrt: sub ? `kp_sqrt_a(${x})` : `sqrt(${x})`, rsqrt: sub ? `kp_rsqrt_a(${x})` : `inverseSqrt(${x})`, sin: `kp_sin_approx(${x})`, cos: `kp_cos_approx(${x})`, lg2: `kp_lg2(${x})`, ex2: `kp_ex2(${x})`, tanh: `tanh(${x})` }
      return w.setF32(A[0], fout(ins, f[ins.op]!))
    }
    case 'membar': case 'fence':
      // (device-scope fences are storage barriers: emit-collective.ts)
      if (isDeviceFence(ins)) return w.refuse('internal: a device-scope fence outside predicated code')
      w.line('// (a block-scope fence: WGSL orders this invocation\'s accesses already)')
      return
    case 'nanosleep': case 'prefetch': case 'prefetchu': case 'discard': case 'applypriority': case 'pmevent': case 'griddepcontrol': case 'setmaxnreg': case 'brkpt':
      w.line('// (no effect here)')
      return
    case 'createpolicy':
      return w.setU64(A[0], 'vec2<u32>(0u, 0u)')
    case 'trap':
      w.features.add('kp_trap')
      w.line(`kp_fault_flush(); kp_fault_at(${ins.line}u, 0u, ${FAULT_KIND.trap}u);`)
      return
    case 'call': {
      const name = callTarget(ins)
      if (name === 'vprintf') return emitPrintf(w, ins)
      if (name === '__assertfail') {
        // a failed assert(): the fault record says so and the launch throws WebGpuFault, as CUDA's launch fails
        // with cudaErrorAssert (the message, file and line arguments stay unread)
        w.features.add('kp_trap')
        w.line(`kp_fault_flush(); kp_fault_at(${ins.line}u, 0u, ${FAULT_KIND.assert}u);`)
        return
      }
      if (name === 'malloc' || name === 'free') return w.refuse(`device ${name}`)
      return w.refuse(`a call to ${name ? readableName(name) : 'a function pointer'}: device function calls are not translated yet (inline them with __forceinline__)`)
    }
    case 'mbarrier':
      // (test_wait/try_wait are barriers: emit-collective.ts)
      return emitMbarrier(w, ins)
    case 'cp':
      // (the copies themselves are memory operations: emit-memory.ts)
      if ((ins.hints ?? []).includes('mbarrier')) return emitCpAsyncArrive(w, ins)
      return w.refuse(`the ${[ins.op, ...ins.qualifiers].join('.')} instruction`)
    case 'wmma':
      // wmma.load / wmma.store (wmma.mma is a collective: emit-collective.ts)
      return emitWmmaMemory(w, ins)
    case 'mma': case 'ldmatrix': case 'stmatrix': case 'movmatrix':
      return w.refuse(`internal: ${ins.op} is a warp collective (emit-collective.ts)`)
    default:
      return w.refuse(`the ${ins.op} instruction`)
  }
}
