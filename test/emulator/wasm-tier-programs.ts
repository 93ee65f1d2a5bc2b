// Random straight-line PTX programs for the WebAssembly tier's property test (wasm-tier.test.ts, issue 24
// item 3): every register is loaded from global memory (each thread its own inputs), a random sequence of
// the instructions the wasm tier lowers runs on them (some under a guard predicate), and every register is
// stored at the end. The same kernel runs on a backend with codegen 'js' and one with codegen 'wasm'; the
// test compares every output byte. Nothing here knows what a result should be: the JavaScript tier, an
// independent writer of the same IR, is the reference.
import fc from 'fast-check'
import { createRng } from '../helpers/kernel-runner.js'

/** Register files: b16, b32, b64, f32, f64, predicates (`p`). */
export type Cls = 'h' | 'r' | 'd' | 'f' | 'g' | 'p'
export const CLASSES: readonly Cls[] = ['h', 'r', 'd', 'f', 'g', 'p']
/** Registers per file. */
const COUNT: Record<Cls, number> = { h: 4, r: 6, d: 5, f: 5, g: 4, p: 4 }
const BYTES: Record<Cls, number> = { h: 2, r: 4, d: 8, f: 4, g: 8, p: 4 }

// --- the instruction forms ---
// A form is `opcode dst src…`: each operand a register file (h r d f g p), `{x y}` a vector, `p|p` setp's two
// destinations, `!p` a predicate source that may be negated, and a trailing `?` a source that may be an
// immediate. Families group the variants of one operation, so that setp's many comparisons do not crowd out
// the rest: a family is picked uniformly, then one of its variants.
const families: string[][] = []
const fam = (...forms: string[]) => { families.push(forms) }
const each = <T>(xs: readonly T[], f: (x: T) => string): string[] => xs.map(f)
const opt = (flag: string) => ['', flag]
/** Every combination of optional modifiers, in order: `combos(['', '.rn'], ['', '.ftz'])`. */
const combos = (...parts: string[][]): string[] => parts.reduce<string[]>((acc, p) => acc.flatMap((a) => p.map((x) => a + x)), [''])

// integer arithmetic, 32 bits (mul/mad .lo .hi .wide, division and remainder including by zero)
for (const t of ['s32', 'u32']) {
  fam(`add.${t} r r r?`, `sub.${t} r r r?`)
  fam(`mul.lo.${t} r r r?`, `mul.hi.${t} r r r?`, `mul.wide.${t} d r r?`)
  fam(`mad.lo.${t} r r r r?`, `mad.hi.${t} r r r r?`, `mad.wide.${t} d r r d`)
  fam(`div.${t} r r r?`, `rem.${t} r r r?`)
  fam(`min.${t} r r r?`, `max.${t} r r r?`)
}
fam('add.sat.s32 r r r?', 'sub.sat.s32 r r r?')
// carry chains (the flag starts at 0 in every call and passes from one instruction to the next)
fam('add.cc.u32 r r r?', 'addc.u32 r r r?', 'addc.cc.u32 r r r?', 'sub.cc.u32 r r r?', 'subc.u32 r r r?', 'subc.cc.s32 r r r?',
  'mad.lo.cc.u32 r r r r?', 'madc.lo.u32 r r r r?', 'madc.hi.cc.u32 r r r r?', 'madc.hi.cc.s32 r r r r?', 'mad.hi.cc.u32 r r r r?')
fam('add.cc.u64 d d d?', 'addc.cc.u64 d d d?', 'sub.cc.u64 d d d?', 'subc.cc.s64 d d d?', 'mad.lo.cc.u64 d d d d?', 'madc.hi.cc.u64 d d d d?', 'madc.lo.u64 d d d d?')
fam('abs.s32 r r', 'neg.s32 r r', 'abs.s64 d d', 'neg.s64 d d')
// 64 bits
for (const t of ['s64', 'u64']) {
  fam(`add.${t} d d d?`, `sub.${t} d d d?`, `mul.lo.${t} d d d?`, `mad.lo.${t} d d d d?`)
  fam(`div.${t} d d d?`, `rem.${t} d d d?`)
  fam(`min.${t} d d d?`, `max.${t} d d d?`)
}
// 16 bits
for (const t of ['s16', 'u16']) {
  fam(`add.${t} h h h?`, `sub.${t} h h h?`, `mul.lo.${t} h h h?`, `mul.wide.${t} r h h?`)
  fam(`min.${t} h h h?`, `max.${t} h h h?`)
}
// logic and shifts (counts past the width come from the registers' inputs and the immediates)
for (const [b, c] of [['b16', 'h'], ['b32', 'r'], ['b64', 'd']] as const) {
  fam(`and.${b} ${c} ${c} ${c}?`, `or.${b} ${c} ${c} ${c}?`, `xor.${b} ${c} ${c} ${c}?`, `not.${b} ${c} ${c}`, `cnot.${b} ${c} ${c}`)
  const u = b.replace('b', 'u'), s = b.replace('b', 's')
  fam(`shl.${b} ${c} ${c} r?`, `shr.${b} ${c} ${c} r?`, `shr.${u} ${c} ${c} r?`, `shr.${s} ${c} ${c} r?`)
}
fam('and.pred p p p', 'or.pred p p p', 'xor.pred p p p', 'not.pred p p')
fam('popc.b32 r r', 'popc.b64 r d', 'clz.b32 r r', 'clz.b64 r d')
fam('bfe.u32 r r r r?', 'bfe.s32 r r r r?', 'bfe.u64 d d r r?', 'bfe.s64 d d r r?', 'bfi.b32 r r r r r?', 'bfi.b64 d d d r r?')
// comparisons: every comparison of every type, one and two destinations, with a boolean operation
const INT_CMP = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'lo', 'ls', 'hi', 'hs']
const FLOAT_CMP = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'equ', 'neu', 'ltu', 'leu', 'gtu', 'geu', 'num', 'nan']
const BOOL = ['and', 'or', 'xor']
for (const [t, c] of [['s32', 'r'], ['u32', 'r'], ['s64', 'd'], ['u64', 'd'], ['s16', 'h'], ['u16', 'h']] as const) {
  const cmps = t.startsWith('s') ? INT_CMP.slice(0, 6) : INT_CMP
  fam(...each(cmps, (k) => `setp.${k}.${t} p ${c} ${c}?`))
  fam(...cmps.flatMap((k) => [`setp.${k}.${t} p|p ${c} ${c}`, ...each(BOOL, (o) => `setp.${k}.${o}.${t} p|p ${c} ${c} !p`)]))
}
for (const [b, c] of [['b16', 'h'], ['b32', 'r'], ['b64', 'd']] as const) fam(`setp.eq.${b} p ${c} ${c}?`, `setp.ne.${b} p ${c} ${c}?`)
fam(...FLOAT_CMP.flatMap((k) => [`setp.${k}.f32 p f f?`, `setp.${k}.ftz.f32 p f f?`]))
fam(...FLOAT_CMP.flatMap((k) => [`setp.${k}.f32 p|p f f`, ...each(BOOL, (o) => `setp.${k}.${o}.ftz.f32 p|p f f !p`)]))
fam(...FLOAT_CMP.map((k) => `setp.${k}.f64 p g g?`))
fam(...FLOAT_CMP.flatMap((k) => [`setp.${k}.f64 p|p g g`, ...each(BOOL, (o) => `setp.${k}.${o}.f64 p|p g g !p`)]))
// selects
fam('selp.b32 r r r? !p', 'selp.s32 r r r? !p', 'selp.u32 r r r? !p', 'selp.b64 d d d? !p', 'selp.b16 h h h? !p', 'selp.f32 f f f? !p', 'selp.f64 g g g? !p')
// conversions between integer widths
const INTS = ['u8', 's8', 'u16', 's16', 'u32', 's32', 'u64', 's64']
const intReg = (t: string) => (t.endsWith('64') ? 'd' : t.endsWith('32') ? 'r' : 'h')
fam(...INTS.flatMap((dt) => INTS.filter((st) => st !== dt).map((st) => `cvt.${dt}.${st} ${intReg(dt)} ${intReg(st)}`)))
// float → integer with the four integer roundings (saturating; NaN → 0)
for (const st of ['f32', 'f64']) {
  const ftz = st === 'f32' ? ['', '.ftz'] : ['']
  fam(...['rni', 'rzi', 'rmi', 'rpi'].flatMap((m) => ftz.flatMap((z) => ['s32', 'u32', 's64', 'u64'].map((dt) => `cvt.${m}${z}.${dt}.${st} ${intReg(dt)} ${st === 'f32' ? 'f' : 'g'}`))))
}
// integer → float, with saturation
fam(...['f32', 'f64'].flatMap((dt) => combos(['.rn'], ['', '.sat']).flatMap((m) => INTS.map((st) => `cvt${m}.${dt}.${st} ${dt === 'f32' ? 'f' : 'g'} ${intReg(st)}`))))
// float ↔ float: narrowing, widening, rounding to an integral value, ftz and sat
fam(...combos(['cvt.rn'], opt('.ftz'), opt('.sat')).map((m) => `${m}.f32.f64 f g`), ...combos(['cvt'], opt('.ftz'), opt('.sat')).map((m) => `${m}.f64.f32 g f`))
fam(...combos(['cvt'], ['.rni', '.rzi', '.rmi', '.rpi'], opt('.ftz'), opt('.sat')).map((m) => `${m}.f32.f32 f f`), ...combos(['cvt'], ['.rni', '.rzi', '.rmi', '.rpi'], opt('.sat')).map((m) => `${m}.f64.f64 g g`))
// f32 arithmetic with .ftz and .sat
fam(...['add', 'sub', 'mul'].flatMap((o) => combos([o], opt('.rn'), opt('.ftz'), opt('.sat')).map((m) => `${m}.f32 f f f?`)))
fam(...combos(['fma.rn', 'mad.rn'], opt('.ftz'), opt('.sat')).map((m) => `${m}.f32 f f f? f`))
fam(...combos(['div.rn', 'div.full', 'div.approx'], opt('.ftz')).map((m) => `${m}.f32 f f f?`))
fam(...combos(['sqrt.rn', 'sqrt.approx', 'rcp.rn', 'rcp.approx', 'rsqrt.approx'], opt('.ftz')).map((m) => `${m}.f32 f f`))
fam(...combos(['ex2.approx', 'lg2.approx', 'sin.approx', 'cos.approx'], opt('.ftz')).map((m) => `${m}.f32 f f`))
fam(...combos(['min', 'max'], opt('.ftz'), opt('.NaN')).map((m) => `${m}.f32 f f f?`))
fam('abs.f32 f f', 'abs.ftz.f32 f f', 'neg.f32 f f', 'neg.ftz.f32 f f')
// f64 arithmetic
fam(...['add', 'sub', 'mul'].flatMap((o) => [`${o}.f64 g g g?`, `${o}.rn.f64 g g g?`]), 'fma.rn.f64 g g g? g', 'div.rn.f64 g g g?')
fam('sqrt.rn.f64 g g', 'rcp.rn.f64 g g', 'min.f64 g g g?', 'max.f64 g g g?', 'abs.f64 g g', 'neg.f64 g g')
// half-precision arithmetic, single and packed (each half in binary64, rounded once; .sat)
fam(...['add', 'sub', 'mul'].flatMap((o) => combos([o], opt('.rn'), opt('.sat')).flatMap((m) => [`${m}.f16 h h h`, `${m}.f16x2 r r r`])))
fam(...combos(['fma.rn'], opt('.sat')).flatMap((m) => [`${m}.f16 h h h h`, `${m}.f16x2 r r r r`]), 'fma.rn.bf16 h h h h', 'fma.rn.bf16x2 r r r r')
fam(...FLOAT_CMP.flatMap((k) => [`setp.${k}.f16 p h h`, `setp.${k}.bf16 p h h`]))
fam('cvt.rn.f16x2.f32 r f f', 'cvt.rn.bf16x2.f32 r f f', 'abs.f16 h h', 'neg.f16 h h', 'abs.bf16 h h', 'neg.bf16 h h', 'abs.f16x2 r r', 'neg.f16x2 r r')
fam('rcp.approx.f64 g g', 'rcp.approx.ftz.f64 g g')
fam(...combos(['shf.l', 'shf.r'], ['.wrap', '.clamp']).map((m) => `${m}.b32 r r r r?`))
// moves: packing and unpacking, bits between the integer and float files, immediates
fam('mov.b64 d {r r}', 'mov.b64 {r r} d', 'mov.b32 r {h h}', 'mov.b32 {h h} r')
fam('mov.b32 r f', 'mov.b32 f r', 'mov.b64 d g', 'mov.b64 g d', 'mov.f32 f f?', 'mov.f64 g g?', 'mov.u32 r r?', 'mov.u64 d d?', 'mov.u16 h h?')

export const FAMILIES: readonly (readonly string[])[] = families

// --- values: inputs and immediates ---
const f32b = new Float32Array(1), u32b = new Uint32Array(f32b.buffer)
const f64b = new Float64Array(1), u64b = new BigUint64Array(f64b.buffer)
const bitsOf32 = (x: number) => { f32b[0] = x; return u32b[0]! }
const bitsOf64 = (x: number) => { f64b[0] = x; return u64b[0]! }

/** Bit patterns that sit on the edges of what the instructions do. */
const H_SPECIAL = [0, 1, 0xffff, 0x8000, 0x7fff, 0xff, 0x80, 15, 16, 17, 0xfffe]
const F32_SPECIAL = [
  0, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000, 0x40200000, 0xc0200000, // 0 −0 1 −1 .5 1.5 2.5 −2.5
  0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc12345, 0x7f800001, 0xff812345, // ±inf, NaNs (quiet, signalling, payloads)
  0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, // subnormals, min normal, max
  0x4f000000, 0xcf000000, 0x4f800000, 0xcf000001, 0x4f7fffff, 0x5f000000, 0xdf000000, 0x5f800000, // 2^31 −2^31 2^32 … 2^63 2^64
  0x3effffff, 0x4b000001, 0x3eaaaaab, 0x501502f9, 0x3f7fffff, // 0.49999997, 8388609, 1/3, 1e10, 1−ulp
]
const F64_SPECIAL = [
  0n, 0x8000000000000000n, 0x3ff0000000000000n, 0xbff0000000000000n, 0x3fe0000000000000n, 0x4004000000000000n, 0xc004000000000000n,
  0x7ff0000000000000n, 0xfff0000000000000n, 0x7ff8000000000000n, 0xfff8000000000000n, 0x7ff0000000000001n, 0x7ff8000012345678n,
  0x0000000000000001n, 0x8000000000000001n, 0x000fffffffffffffn, 0x0010000000000000n, 0x7fefffffffffffffn,
  0x41e0000000000000n, 0xc1e0000000000000n, 0x41f0000000000000n, 0x43e0000000000000n, 0xc3e0000000000000n, 0x43f0000000000000n,
  bitsOf64(1 + 2 ** -24), bitsOf64(1 + 2 ** -24 + 2 ** -50), bitsOf64(1 + 3 * 2 ** -24), bitsOf64(3.4028235677973366e38), bitsOf64(1e39), // f32 ties, overflow
  bitsOf64(1e-40), bitsOf64(1e-46), bitsOf64(2 ** -149 * 1.5), bitsOf64(2 ** -126 * (1 - 2 ** -24)), bitsOf64(-1e-45), // f32 subnormal range
  bitsOf64(0.49999999999999994), bitsOf64(4503599627370497), bitsOf64(-2147483648.5), bitsOf64(4294967295.5), bitsOf64(1 / 3),
]
const R_SPECIAL = [0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 2, 0xfffffffe, 31, 32, 33, 63, 64, ...F32_SPECIAL]
const D_SPECIAL = [0n, 1n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 63n - 1n, 2n ** 32n, 2n ** 32n - 1n, 0xffffffff80000000n, 0x7fffffffn, 63n, 64n, 65n, ...F64_SPECIAL]

type Rng = ReturnType<typeof createRng>
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.u32() % xs.length]!
/** Floats that are small multiples of 1/8 (ties of the integer roundings, exact sums). */
const eighths = (rng: Rng) => (rng.int(0, 1024) - 512) / 8

/** One input value (as the bits of a `BYTES[c]`-byte slot) for a register of file c. */
function inputValue(rng: Rng, c: Cls): bigint {
  const r = rng.u32() % 10
  switch (c) {
    case 'p': return BigInt(rng.u32() & 1)
    case 'h': return BigInt(r < 4 ? pick(rng, H_SPECIAL) : r < 6 ? rng.int(0, 40) : rng.u32() & 0xffff)
    case 'r': return BigInt(r < 4 ? pick(rng, R_SPECIAL) : r < 6 ? rng.int(0, 70) : r < 8 ? bitsOf32(eighths(rng)) : rng.u32())
    case 'f': return BigInt(r < 5 ? pick(rng, F32_SPECIAL) : r < 8 ? bitsOf32(eighths(rng)) : rng.u32())
    case 'd': return r < 4 ? pick(rng, D_SPECIAL) : r < 6 ? BigInt(rng.int(0, 70)) : r < 7 ? BigInt.asUintN(64, BigInt(rng.int(-1000, 1000))) : rng.u64()
    case 'g': return r < 5 ? pick(rng, F64_SPECIAL) : r < 8 ? bitsOf64(eighths(rng)) : rng.u64()
  }
}

/** Immediates as PTX writes them, per register file (integers in decimal, with their sign; floats 0f/0d). */
const IMM: Record<Exclude<Cls, 'p'>, string[]> = {
  h: ['0', '1', '-1', '15', '16', '17', '255', '32767', '-32768', '65535'],
  r: ['0', '1', '-1', '3', '31', '32', '33', '-7', '2147483647', '-2147483648', '0xFFFFFFFF', '4294967289'],
  d: ['0', '1', '-1', '63', '64', '65', '4294967296', '9223372036854775807', '-9223372036854775808', '0xFFFFFFFFFFFFFFFF'],
  f: ['0f00000000', '0f80000000', '0f3F800000', '0fBF000000', '0f7F800000', '0fFF800000', '0f7FC00000', '0f00000001', '0f4F000000', '0f3EAAAAAB'],
  g: ['0d0000000000000000', '0d8000000000000000', '0d3FF0000000000000', '0dBFE0000000000000', '0d7FF0000000000000', '0dFFF0000000000000', '0d7FF8000000000000', '0d0000000000000001', '0d41E0000000000000', '0d3FF0000010000000'],
}

// --- programs ---

/** One instruction of a program, as fast-check generates it (numbers picking the family, the variant, each
 *  operand's register, whether a source is an immediate and which, and an optional guard). */
export interface GenInstr { family: number; variant: number; ops: number[]; imm: number; guard: number }
export interface GenProgram {
  /** Floats in `.b32`/`.b64` registers shared with the integer instructions (clang's style), so that one
   *  register is read and written as integer and as float; else `.f32`/`.f64` registers of their own. */
  untyped: boolean
  /** Seed of the per-thread inputs. */
  seed: number
  body: GenInstr[]
}

const genInstr: fc.Arbitrary<GenInstr> = fc.record({
  family: fc.nat({ max: FAMILIES.length - 1 }),
  variant: fc.nat({ max: 1 << 16 }),
  ops: fc.array(fc.nat({ max: 1 << 16 }), { minLength: 6, maxLength: 6 }),
  imm: fc.nat({ max: 99 }),
  guard: fc.nat({ max: 99 }),
})
export const genProgram: fc.Arbitrary<GenProgram> = fc.record({
  untyped: fc.boolean(),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  body: fc.array(genInstr, { minLength: 1, maxLength: 40, size: 'max' }),
})

/** The names of file c's registers (untyped: floats share the integer files of their size). */
function names(c: Cls, untyped: boolean): string[] {
  const own = Array.from({ length: COUNT[c] }, (_, i) => `%${c}${i}`)
  if (!untyped) return own
  const other: Partial<Record<Cls, Cls>> = { r: 'f', f: 'r', d: 'g', g: 'd' }
  const o = other[c]
  return o ? [...own, ...Array.from({ length: COUNT[o] }, (_, i) => `%${o}${i}`)] : own
}

/** The PTX text of one generated instruction. */
export function instructionText(g: GenInstr, untyped: boolean): string {
  const forms = FAMILIES[g.family]!
  const [op, ...operands] = forms[g.variant % forms.length]!.split(/ (?![^{]*\})/)
  let k = 0
  const reg = (c: Cls) => { const ns = names(c, untyped); return ns[g.ops[k++ % g.ops.length]! % ns.length]! }
  const sources = operands.length - 1
  const text = operands.map((o, i) => {
    if (o.startsWith('{')) return `{${o.slice(1, -1).split(' ').map((c) => reg(c as Cls)).join(', ')}}`
    if (o === 'p|p') return `${reg('p')}|${reg('p')}`
    if (o === '!p') return `${g.ops[5]! & 1 ? '!' : ''}${reg('p')}`
    const c = o.replace('?', '') as Cls
    // an immediate in the last source, a quarter of the time
    if (o.endsWith('?') && i === sources && g.imm < 25) { const xs = IMM[c as Exclude<Cls, 'p'>]; return xs[g.imm % xs.length]! }
    return reg(c)
  })
  const guard = g.guard < 15 ? `@${g.guard & 1 ? '!' : ''}${names('p', untyped)[g.guard % COUNT.p]!} ` : ''
  return `${guard}${op} ${text.join(', ')};`
}

/** Every register a program has, in slot order: [name, file]. */
const REGISTERS: Array<[string, Cls]> = CLASSES.flatMap((c) => Array.from({ length: COUNT[c] }, (_, i): [string, Cls] => [`%${c}${i}`, c]))

/** Bytes of one thread's inputs: one 8-byte slot per register. */
export const THREAD_BYTES = 8 * REGISTERS.length
/** Bytes of one thread's outputs: every register stored twice, as its own type (`st.global.f32` for a float
 *  register) and then as integer bits (`mov.b32` to an integer register first). */
export const OUT_BYTES = 2 * THREAD_BYTES

/** The kernel `prop(in, out)`: each thread loads every register from its slots of `in`, runs `body`, and
 *  stores every register to its slots of `out`, twice. The first store writes what a float register holds
 *  through the float path (HF32/f32.store); the second reads the register as bits, which both tiers define
 *  alike for a NaN (0x7fffffff, as js-values.ts bitsOfF32 and emit-wasm.ts f32Bits say), so that a NaN's
 *  sign and payload, which neither tier fixes (V8 picks which operand's NaN an f32/f64 operation returns
 *  and, in JavaScript, whether a signalling NaN is quieted), are compared as "a NaN" in the first copy and
 *  exactly in the second. */
export function kernelText(p: GenProgram): string {
  const decl = (c: Cls) => (c === 'h' ? '.b16' : c === 'r' ? '.b32' : c === 'd' ? '.b64' : c === 'p' ? '.pred' : c === 'f' ? (p.untyped ? '.b32' : '.f32') : p.untyped ? '.b64' : '.f64')
  const mem = (c: Cls) => (c === 'h' ? 'b16' : c === 'r' ? 'b32' : c === 'd' ? 'b64' : c === 'f' ? (p.untyped ? 'b32' : 'f32') : c === 'g' ? (p.untyped ? 'b64' : 'f64') : 'u32')
  const lines: string[] = []
  for (const c of CLASSES) lines.push(`.reg ${decl(c)} %${c}<${COUNT[c]}>;`)
  lines.push('.reg .b64 %a<3>;', '.reg .b32 %i<4>;', '.reg .b64 %o;')
  lines.push('ld.param.u64 %a0, [prop_in];', 'ld.param.u64 %a1, [prop_out];')
  lines.push('mov.u32 %i0, %tid.x;', 'mov.u32 %i1, %ctaid.x;', 'mov.u32 %i2, %ntid.x;', 'mad.lo.s32 %i3, %i1, %i2, %i0;')
  lines.push(`mul.wide.u32 %a2, %i3, ${THREAD_BYTES};`, 'add.s64 %a0, %a0, %a2;', `mul.wide.u32 %a2, %i3, ${OUT_BYTES};`, 'add.s64 %a1, %a1, %a2;')
  REGISTERS.forEach(([n, c], s) => {
    if (c === 'p') lines.push(`ld.global.u32 %i0, [%a0+${8 * s}];`, `setp.ne.u32 ${n}, %i0, 0;`)
    else lines.push(`ld.global.${mem(c)} ${n}, [%a0+${8 * s}];`)
  })
  for (const g of p.body) lines.push(instructionText(g, p.untyped))
  REGISTERS.forEach(([n, c], s) => {
    const bits = THREAD_BYTES + 8 * s
    if (c === 'p') lines.push(`selp.u32 %i0, 1, 0, ${n};`, `st.global.u32 [%a1+${8 * s}], %i0;`, `st.global.u32 [%a1+${bits}], %i0;`)
    else {
      lines.push(`st.global.${mem(c)} [%a1+${8 * s}], ${n};`)
      if (BYTES[c] === 2) lines.push(`st.global.b16 [%a1+${bits}], ${n};`)
      else if (BYTES[c] === 4) lines.push(`mov.b32 %i0, ${n};`, `st.global.b32 [%a1+${bits}], %i0;`)
      else lines.push(`mov.b64 %o, ${n};`, `st.global.b64 [%a1+${bits}], %o;`)
    }
  })
  lines.push('ret;')
  return `.version 8.0\n.target sm_80\n.address_size 64\n\n.visible .entry prop(.param .u64 prop_in, .param .u64 prop_out)\n{\n  ${lines.join('\n  ')}\n}\n`
}

/** Every thread's inputs: `threads` × THREAD_BYTES bytes. */
export function inputs(p: GenProgram, threads: number): Uint8Array {
  const rng = createRng(p.seed)
  const bytes = new Uint8Array(threads * THREAD_BYTES)
  const dv = new DataView(bytes.buffer)
  for (let t = 0; t < threads; t++) {
    REGISTERS.forEach(([, c], s) => {
      const v = inputValue(rng, c)
      const at = t * THREAD_BYTES + 8 * s
      // the slot's other bytes too, so that a load that read too much would show
      dv.setBigUint64(at, rng.u64(), true)
      if (BYTES[c] === 2) dv.setUint16(at, Number(v), true)
      else if (BYTES[c] === 4) dv.setUint32(at, Number(v), true)
      else dv.setBigUint64(at, v, true)
    })
  }
  return bytes
}

/** A difference between the tiers' outputs: the thread, the register, how it was stored, both values. */
export interface Difference { thread: number; reg: string; stored: 'as its type' | 'as bits'; js: bigint; wasm: bigint; input: bigint }

const isNaN32 = (w: bigint) => (w & 0x7f800000n) === 0x7f800000n && (w & 0x007fffffn) !== 0n
const isNaN64 = (w: bigint) => (w & 0x7ff0000000000000n) === 0x7ff0000000000000n && (w & 0x000fffffffffffffn) !== 0n

/** The first output where the tiers differ, or undefined: every byte of the bits copy exactly, and every
 *  byte of the as-its-type copy exactly unless the register holds a NaN (its bits copy is then the NaN of
 *  its width in both tiers, checked exactly) and both tiers stored a NaN there. */
export function firstDifference(input: Uint8Array, js: Uint8Array, wasm: Uint8Array): Difference | undefined {
  const dj = new DataView(js.buffer, js.byteOffset, js.byteLength), dw = new DataView(wasm.buffer, wasm.byteOffset, wasm.byteLength)
  const din = new DataView(input.buffer, input.byteOffset, input.byteLength)
  const threads = js.length / OUT_BYTES
  for (let t = 0; t < threads; t++) {
    for (const half of [1, 0]) {
      for (let s = 0; s < REGISTERS.length; s++) {
        const at = t * OUT_BYTES + half * THREAD_BYTES + 8 * s
        const a = dj.getBigUint64(at, true), b = dw.getBigUint64(at, true)
        if (a === b) continue
        const [reg, c] = REGISTERS[s]!
        if (half === 0 && (c === 'r' || c === 'f' || c === 'd' || c === 'g')) {
          const bits = dj.getBigUint64(t * OUT_BYTES + THREAD_BYTES + 8 * s, true)
          const wide = BYTES[c] === 8
          const nan = wide ? isNaN64 : (w: bigint) => isNaN32(w & 0xffffffffn) && w >> 32n === 0n
          if (bits === (wide ? 0x7fffffffffffffffn : 0x7fffffffn) && nan(a) && nan(b)) continue
        }
        return { thread: t, reg, stored: half ? 'as bits' : 'as its type', js: a, wasm: b, input: din.getBigUint64(t * THREAD_BYTES + 8 * s, true) }
      }
    }
  }
  return undefined
}
