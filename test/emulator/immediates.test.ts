// Issue 17 item 11: immediates of any sign and size in arithmetic. The exact repros (what nvcc -G writes for
// `y[i] - (-1.0f)` and `z[i] - (-7)`, `neg.s32 %r3, -5`, literals that wrap negative), a kernel built with
// nvcc -G, and a fast-check property over the arithmetic opcodes: random immediates (negative, zero,
// extreme; decimal and hex) in every source position, each result checked against an independent
// evaluation (BigInt for integers, the exact rational rounding of ptx-harness.ts for floats).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { createEmulatorBackend, download, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'
import { bitsf32, bitsf64, f32bits, f64bits, frac, roundRational, F32, F64, type Mode } from './ptx-harness.js'

const be = createEmulatorBackend()

/** One instruction under test: `form` with $d (destination) and $a (the loaded source), types of both. */
interface Case { form: string; dst: string; src: string; a: bigint }

const regType = (t: string) => (t === 'f32' ? 'f32' : t === 'f64' ? 'f64' : t === 'pred' ? 'pred' : t.endsWith('64') ? 'b64' : t.endsWith('16') ? 'b16' : 'b32')
const memType = (t: string) => (t === 'f32' || t === 'f64' ? t : t.endsWith('64') ? 'b64' : t.endsWith('16') ? 'b16' : 'b32')
const width = (t: string) => (t === 'pred' ? 32 : Number(t.replace(/^[a-z]+/, '')))

/** Runs every case in one kernel (one thread, one instruction per case) and returns each destination's bits. */
function runCases(cases: Case[]): bigint[] {
  const decls: string[] = []
  const body: string[] = []
  cases.forEach((c, i) => {
    const a = `%a${i}`, d = `%d${i}`
    decls.push(`.reg .${regType(c.src)} ${a};`, `.reg .${regType(c.dst)} ${d};`)
    body.push(`ld.global.${memType(c.src)} ${a}, [%rd0+${8 * i}];`, c.form.replaceAll('$d', d).replaceAll('$a', a))
    if (c.dst === 'pred') body.push(`selp.u32 %r0, 1, 0, ${d};`, `st.global.u32 [%rd1+${8 * i}], %r0;`)
    else body.push(`st.global.${memType(c.dst)} [%rd1+${8 * i}], ${d};`)
  })
  const ptx = `.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry t(.param .u64 t_in, .param .u64 t_out)\n{\n  .reg .b64 %rd<2>;\n  .reg .b32 %r0;\n  ${decls.join('\n  ')}\n  ld.param.u64 %rd0, [t_in];\n  ld.param.u64 %rd1, [t_out];\n  ${body.join('\n  ')}\n  ret;\n}\n`
  const mod = be.loadModule(ptxBytes(ptx))
  const input = BigUint64Array.from(cases, (c) => BigInt.asUintN(64, c.a))
  const din = upload(be, input)
  const dout = be.alloc(8 * cases.length)
  be.launch(mod.getFunction('t'), { grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }]))
  const out = download(be, dout, new BigUint64Array(cases.length))
  be.free(din); be.free(dout); mod.unload()
  return cases.map((c, i) => out[i]! & ((1n << BigInt(width(c.dst))) - 1n))
}

// ---
const repro = suite('negative immediates: the repros of issue 17 item 11')

repro('sub.f32 with 0fBF800000, sub.s32 with -7, neg.s32 of -5, literals that wrap negative', () => {
  const got = runCases([
    { form: 'sub.f32 $d, $a, 0fBF800000;', dst: 'f32', src: 'f32', a: f32bits(2.5) },
    { form: 'sub.s32 $d, $a, -7;', dst: 's32', src: 's32', a: 10n },
    { form: 'neg.s32 $d, -5;', dst: 's32', src: 's32', a: 0n },
    { form: 'sub.s32 $d, $a, 4294967289;', dst: 's32', src: 's32', a: 10n },
    { form: 'sub.s64 $d, $a, -9223372036854775808;', dst: 's64', src: 's64', a: 1n },
    { form: 'sub.f64 $d, $a, 0dBFF0000000000000;', dst: 'f64', src: 'f64', a: f64bits(0.25) },
    { form: 'mul.lo.s32 $d, $a, -3;', dst: 's32', src: 's32', a: BigInt.asUintN(32, -4n) },
  ])
  assert.is(bitsf32(got[0]!), 3.5)
  assert.is(BigInt.asIntN(32, got[1]!), 17n)
  assert.is(BigInt.asIntN(32, got[2]!), 5n)
  assert.is(BigInt.asIntN(32, got[3]!), 17n) // 4294967289 is -7 as a 32-bit value
  assert.is(got[4]!, BigInt.asUintN(64, 1n + 2n ** 63n))
  assert.is(bitsf64(got[5]!), 1.25)
  assert.is(BigInt.asIntN(32, got[6]!), 12n)
})

repro('a kernel built with nvcc -G (device debug) that subtracts negative constants runs', () => {
  const ptx = nvccPtx(`extern "C" __global__ void negimm(const float* y, const int* z, float* fo, int* io, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { fo[i] = y[i] - (-1.0f); io[i] = z[i] - (-7); }
}`, 'compute_80', ['-G'])
  // what nvcc -G writes for the two subtractions (the forms that made loadModule fail)
  assert.match(ptx, /sub\.f32\s+%f\d+, %f\d+, 0fBF800000;/)
  assert.match(ptx, /sub\.s32\s+%r\d+, %r\d+, -7;/)
  const mod = be.loadModule(ptxBytes(ptx))
  const n = 100
  const y = Float32Array.from({ length: n }, (_, i) => i * 0.5 - 20)
  const z = Int32Array.from({ length: n }, (_, i) => i * 3 - 150)
  const dy = upload(be, y), dz = upload(be, z), dfo = be.alloc(4 * n), dio = be.alloc(4 * n)
  be.launch(mod.getFunction('negimm'), { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: dy }, { u64: dz }, { u64: dfo }, { u64: dio }, { s32: n }]))
  assert.equal(Array.from(download(be, dfo, new Float32Array(n))), Array.from(y, (v) => Math.fround(v + 1)))
  assert.equal(Array.from(download(be, dio, new Int32Array(n))), Array.from(z, (v) => v + 7))
  mod.unload()
})

repro.run()

// ---
// The oracles: integer results from BigInt arithmetic on the operands' values at the instruction's width;
// float results from exact rational arithmetic rounded once (ptx-harness.ts), special values by IEEE rules.

/** An integer literal as PTX writes it: decimal (with its sign) or, for non-negative values, hex. */
const intLiteral = (v: bigint, hex: boolean) => (hex && v >= 0n ? `0x${v.toString(16)}` : String(v))

type IntOp = { name: string; types: string[]; arity: 1 | 2 | 3; ref: (x: bigint[], bits: number, signed: boolean) => bigint | undefined; dstWide?: boolean }
const sx = (v: bigint, bits: number, signed: boolean) => (signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v))
const INT_OPS: IntOp[] = [
  { name: 'add', types: ['s32', 'u32', 's64', 'u64', 's16', 'u16'], arity: 2, ref: ([a, b]) => a! + b! },
  { name: 'sub', types: ['s32', 'u32', 's64', 'u64', 's16', 'u16'], arity: 2, ref: ([a, b]) => a! - b! },
  { name: 'mul.lo', types: ['s32', 'u32', 's64', 'u64', 's16', 'u16'], arity: 2, ref: ([a, b]) => a! * b! },
  { name: 'mul.hi', types: ['s32', 'u32', 's64', 'u64'], arity: 2, ref: ([a, b], bits) => (a! * b!) >> BigInt(bits) },
  { name: 'mul.wide', types: ['s32', 'u32', 's16', 'u16'], arity: 2, ref: ([a, b]) => a! * b!, dstWide: true },
  { name: 'mad.lo', types: ['s32', 'u32', 's64', 'u64'], arity: 3, ref: ([a, b, c]) => a! * b! + c! },
  { name: 'div', types: ['s32', 'u32', 's64', 'u64'], arity: 2, ref: ([a, b]) => (b === 0n ? undefined : a! / b!) },
  { name: 'rem', types: ['s32', 'u32', 's64', 'u64'], arity: 2, ref: ([a, b]) => (b === 0n ? undefined : a! % b!) },
  { name: 'min', types: ['s32', 'u32', 's64', 'u64', 's16', 'u16'], arity: 2, ref: ([a, b]) => (a! < b! ? a! : b!) },
  { name: 'max', types: ['s32', 'u32', 's64', 'u64', 's16', 'u16'], arity: 2, ref: ([a, b]) => (a! > b! ? a! : b!) },
  { name: 'neg', types: ['s32', 's64', 's16'], arity: 1, ref: ([a]) => -a! },
  { name: 'abs', types: ['s32', 's64', 's16'], arity: 1, ref: ([a]) => (a! < 0n ? -a! : a!) },
  { name: 'and', types: ['b32', 'b64', 'b16'], arity: 2, ref: ([a, b]) => a! & b! },
  { name: 'or', types: ['b32', 'b64', 'b16'], arity: 2, ref: ([a, b]) => a! | b! },
  { name: 'xor', types: ['b32', 'b64', 'b16'], arity: 2, ref: ([a, b]) => a! ^ b! },
]

const EXTREMES = [0n, 1n, -1n, 2n, -2n, 7n, -7n, 127n, -128n, 32767n, -32768n, 65535n, 2n ** 31n - 1n, -(2n ** 31n), 2n ** 32n - 1n, 2n ** 32n - 7n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n]
const intValue = fc.oneof(fc.constantFrom(...EXTREMES), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }), fc.bigInt({ min: -1000n, max: 1000n }))
const intCase = fc.record({ op: fc.constantFrom(...INT_OPS), t: fc.nat(), imm: intValue, hex: fc.boolean(), pos: fc.nat(), a: intValue, c: intValue })

const prop = suite('immediates: fast-check over the arithmetic opcodes')

prop('integer opcodes with an immediate in any source position match BigInt arithmetic', () => {
  fc.assert(fc.property(fc.array(intCase, { minLength: 48, maxLength: 48 }), (raw) => {
    const cases = raw.map((r) => {
      const t = r.op.types[r.t % r.op.types.length]!
      const bits = width(t)
      const signed = t.startsWith('s')
      const pos = r.pos % r.op.arity
      // sources: the loaded register $a, the immediate, and (mad) another immediate c
      const srcs = Array.from({ length: r.op.arity }, (_, i) => (i === pos ? intLiteral(r.imm, r.hex) : i === (pos + 1) % r.op.arity ? '$a' : intLiteral(r.c, false)))
      if (r.op.arity === 1) srcs[0] = intLiteral(r.imm, r.hex)
      const dst = r.op.dstWide ? `${t[0]}${2 * bits}` : t
      const vals = srcs.map((s) => sx(s === '$a' ? r.a : BigInt(s), bits, signed))
      const want = r.op.ref(vals, bits, signed)
      return { c: { form: `${r.op.name}.${t} $d, ${srcs.join(', ')};`, dst, src: t.startsWith('b') ? t : t, a: BigInt.asUintN(64, r.a) }, want: want === undefined ? undefined : BigInt.asUintN(width(dst), want) }
    })
    const got = runCases(cases.map((x) => x.c))
    cases.forEach((x, i) => {
      if (x.want === undefined) return // division by zero: unspecified in PTX
      if (got[i] !== x.want) throw new Error(`${x.c.form} with $a = ${BigInt.asIntN(64, x.c.a)}: got 0x${got[i]!.toString(16)}, want 0x${x.want.toString(16)}`)
    })
  }), { numRuns: 24, seed: 12 })
})

/** IEEE result of a float operation, exactly rounded once to the format (rn, rz, rm, rp). */
function floatRef(op: string, xs: number[], fmt: typeof F32, mode: Mode): number {
  const [a, b, c] = xs as [number, number, number]
  const special = xs.some((x) => !Number.isFinite(x)) || (op === 'div' && b === 0)
  const js = (): number => {
    switch (op) {
      case 'add': return a + b
      case 'sub': return a - b
      case 'mul': return a * b
      case 'div': return a / b
      case 'fma': return a * b + c
      default: return NaN
    }
  }
  if (op === 'neg') return -a
  if (op === 'abs') return Math.abs(a)
  if (op === 'min' || op === 'max') {
    // PTX min/max: a NaN operand yields the other one; -0 < +0
    if (a !== a) return b
    if (b !== b) return a
    if (a === 0 && b === 0) return op === 'min' ? (Object.is(a, -0) || Object.is(b, -0) ? -0 : 0) : (Object.is(a, 0) || Object.is(b, 0) ? 0 : -0)
    return op === 'min' ? Math.min(a, b) : Math.max(a, b)
  }
  if (special) return fmt === F32 ? Math.fround(js()) : js()
  const [an, ad] = frac(a), [bn, bd] = frac(b)
  let num: bigint, den: bigint
  switch (op) {
    case 'add': num = an * bd + bn * ad; den = ad * bd; break
    case 'sub': num = an * bd - bn * ad; den = ad * bd; break
    case 'mul': num = an * bn; den = ad * bd; break
    case 'div': num = an * bd; den = ad * bn; break
    default: { const [cn, cd] = frac(c); num = an * bn * cd + cn * ad * bd; den = ad * bd * cd }
  }
  if (den < 0n) { num = -num; den = -den }
  if (num === 0n) {
    // an exact zero: the sign of a product or quotient is the xor of the signs; a sum is +0 unless both
    // addends are -0 (or, rounding down, -0)
    if (op === 'mul' || op === 'div') return (Object.is(a, -0) || a < 0) !== (Object.is(b, -0) || b < 0) ? -0 : 0
    const p = op === 'fma' ? ((a < 0 || Object.is(a, -0)) !== (b < 0 || Object.is(b, -0)) && (a * b === 0) ? -0 : a * b) : a
    const q = op === 'sub' ? -b : op === 'fma' ? c : b
    if (Object.is(p, -0) && Object.is(q, -0)) return -0
    return mode === 'rm' ? -0 : 0
  }
  return roundRational(num, den, fmt, mode)
}

const FLOAT_OPS = [
  { name: 'add', arity: 2, rnd: true }, { name: 'sub', arity: 2, rnd: true }, { name: 'mul', arity: 2, rnd: true },
  { name: 'div', arity: 2, rnd: true }, { name: 'fma', arity: 3, rnd: true }, { name: 'min', arity: 2, rnd: false },
  { name: 'max', arity: 2, rnd: false }, { name: 'neg', arity: 1, rnd: false }, { name: 'abs', arity: 1, rnd: false },
] as const
const F32_EXTREMES = [0, -0, 1, -1, 0.5, -2.5, 3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45, -1.401298464324817e-45, 1.1754943508222875e-38, Infinity, -Infinity, 1e-30, -123456.78125]
const f32Value = fc.oneof(fc.constantFrom(...F32_EXTREMES), fc.float({ noNaN: true }), fc.float({ noNaN: true, min: -1000, max: 1000 }))
const f64Value = fc.oneof(fc.constantFrom(...F32_EXTREMES, 1.7976931348623157e308, -5e-324, 2 ** -1022), fc.double({ noNaN: true }), fc.double({ noNaN: true, min: -1000, max: 1000 }))
const floatCase = fc.record({ op: fc.constantFrom(...FLOAT_OPS), wide: fc.boolean(), mode: fc.constantFrom<Mode>('rn', 'rz', 'rm', 'rp'), pos: fc.nat(), f: fc.tuple(f32Value, f32Value, f32Value), d: fc.tuple(f64Value, f64Value, f64Value) })

prop('f32 and f64 opcodes with 0f/0d immediates (negative, zero, extreme) match exact rational rounding', () => {
  fc.assert(fc.property(fc.array(floatCase, { minLength: 48, maxLength: 48 }), (raw) => {
    const cases = raw.map((r) => {
      const t = r.wide ? 'f64' : 'f32'
      const [v0, v1, v2] = r.wide ? r.d : r.f
      const lit = (x: number) => (r.wide ? `0d${f64bits(x).toString(16).padStart(16, '0').toUpperCase()}` : `0f${f32bits(x).toString(16).padStart(8, '0').toUpperCase()}`)
      const pos = r.pos % r.op.arity
      const srcVals = [v0, v1, v2].slice(0, r.op.arity) as number[]
      const srcs = srcVals.map((x, i) => (i === (pos + 1) % r.op.arity && r.op.arity > 1 ? '$a' : lit(x)))
      // div and fma of f32 need an explicit rounding (PTX ISA); min/max/neg/abs take none
      const mode = r.op.rnd ? r.mode : 'rn'
      const q = r.op.rnd ? `.${mode}` : ''
      const xs = srcVals.map((x) => (r.wide ? x : Math.fround(x)))
      const want = floatRef(r.op.name, xs, r.wide ? F64 : F32, mode)
      const aval = r.op.arity > 1 ? xs[(pos + 1) % r.op.arity]! : 0
      return { c: { form: `${r.op.name}${q}.${t} $d, ${srcs.join(', ')};`, dst: t, src: t, a: r.wide ? f64bits(aval) : f32bits(aval) }, want, wide: r.wide }
    })
    const got = runCases(cases.map((x) => x.c))
    cases.forEach((x, i) => {
      const v = x.wide ? bitsf64(got[i]!) : bitsf32(got[i]!)
      const ok = x.want !== x.want ? v !== v : Object.is(v, x.want)
      if (!ok) throw new Error(`${x.c.form} with $a = ${x.wide ? bitsf64(x.c.a) : bitsf32(x.c.a)}: got ${Object.is(v, -0) ? '-0' : v}, want ${Object.is(x.want, -0) ? '-0' : x.want}`)
    })
  }), { numRuns: 24, seed: 34 })
})

prop.run()
