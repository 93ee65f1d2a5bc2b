import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { bitsf32, bitsf64, F32, F64, f32bits, f64bits, frac, halfToNum, numToHalf, roundRational, runForm, type Bits, type Mode } from './ptx-harness.js'

const MIN_NORMAL32 = 2 ** -126
const DENORM32 = 2 ** -140
const F32V = [0, -0, 1, -1, 1.5, 3, 0.1, -2.75, 1e-3, 65504, 3.4028234663852886e38, -3.4028234663852886e38, MIN_NORMAL32, DENORM32, -DENORM32, 2 ** -149, Infinity, -Infinity, NaN, 16777217, 1 + 2 ** -23, 7.5e20].map(Math.fround)
const F64V = [0, -0, 1, -1, 0.1, 1 / 3, -2.75, 1e300, -1e300, 2 ** -1022, 2 ** -1074, 5e-324 * 3, Infinity, -Infinity, NaN, 2 ** 53 + 2, 1 + 2 ** -52, 123456.789]

function pairs<T>(vs: T[]): T[][] { const out: T[][] = []; for (const a of vs) for (const b of vs) out.push([a, b]); return out }

function sameF(got: number, want: number): boolean { return (got !== got && want !== want) || Object.is(got, want) }

/** Runs a float form with typed (.f32/.f64) and untyped (.b32/.b64, as clang 22 declares) registers. */
function checkF(form: string, dst: 'f32' | 'f64', srcs: string[], cases: number[][], ref: (...a: number[]) => number): void {
  const enc = (t: string, x: number): Bits => (t === 'f32' ? f32bits(x) : t === 'f64' ? f64bits(x) : BigInt(x))
  for (const untyped of [false, true]) {
    for (let i0 = 0; i0 < cases.length; i0 += 256) {
      const part = cases.slice(i0, i0 + 256)
      const got = runForm({ form, dst, srcs, untyped }, part.map((c) => c.map((x, j) => enc(srcs[j]!, x))))
      part.forEach((c, i) => {
        const g = dst === 'f32' ? bitsf32(got[i]!.d) : bitsf64(got[i]!.d)
        const w = ref(...c)
        if (!sameF(g, w)) assert.unreachable(`${form}${untyped ? ' (untyped registers)' : ''} with ${c.join(', ')}: got ${g}, want ${w}`)
      })
    }
  }
}

/** Exact rational of a finite double; the oracle for rounded results. */
function exact(x: number): [bigint, bigint] { return frac(x) }
function addQ(a: [bigint, bigint], b: [bigint, bigint]): [bigint, bigint] { return [a[0] * b[1] + b[0] * a[1], a[1] * b[1]] }
function mulQ(a: [bigint, bigint], b: [bigint, bigint]): [bigint, bigint] { return [a[0] * b[0], a[1] * b[1]] }
function negQ(a: [bigint, bigint]): [bigint, bigint] { return [-a[0], a[1]] }

/** IEEE result of op on finite inputs via the oracle, special values by IEEE rules (computed by JS doubles,
 *  which get specials right). */
function ieee(op: 'add' | 'sub' | 'mul' | 'div' | 'fma', fmt: typeof F32, mode: Mode, a: number, b: number, c = 0): number {
  const approx = op === 'add' ? a + b : op === 'sub' ? a - b : op === 'mul' ? a * b : op === 'div' ? a / b : a * b + c
  if (![a, b, c].every(Number.isFinite) || (op === 'div' && b === 0)) {
    return fmt === F32 ? Math.fround(approx) : approx
  }
  let q: [bigint, bigint]
  switch (op) {
    case 'add': q = addQ(exact(a), exact(b)); break
    case 'sub': q = addQ(exact(a), negQ(exact(b))); break
    case 'mul': q = mulQ(exact(a), exact(b)); break
    case 'div': { if (b === 0) return approx; const [n1, d1] = exact(a), [n2, d2] = exact(b); q = [n1 * d2 * (n2 < 0n ? -1n : 1n), d1 * (n2 < 0n ? -n2 : n2)]; break }
    default: q = addQ(mulQ(exact(a), exact(b)), exact(c))
  }
  if (q[0] === 0n) {
    // sign of an exact zero: IEEE rules, which JS doubles follow in round-to-nearest
    if (op === 'fma') return Object.is(a * b + c, -0) || (mode === 'rm' && (Object.is(a * b, -0) || a * b !== 0 || Object.is(c, -0))) ? -0 : mode === 'rm' ? -0 : 0
    return mode === 'rm' && op !== 'mul' && op !== 'div' ? -0 : Object.is(approx, -0) ? -0 : 0
  }
  return roundRational(q[0], q[1], fmt, mode)
}

// ---

const arith32 = suite('add / sub / mul / div / fma .f32')
arith32('round to nearest even, NaN and infinities, denormals kept without .ftz', () => {
  checkF('add.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs(F32V), (a, b) => ieee('add', F32, 'rn', a, b))
  checkF('sub.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs(F32V), (a, b) => ieee('sub', F32, 'rn', a, b))
  checkF('mul.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs(F32V), (a, b) => ieee('mul', F32, 'rn', a, b))
  checkF('div.rn.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs(F32V), (a, b) => ieee('div', F32, 'rn', a, b))
})
arith32('directed rounding .rz/.rm/.rp', () => {
  const vs = [1, 3, 0.1, -2.75, 1e-3, 16777217, 1 + 2 ** -23, -7.5e20, 3.4028234663852886e38, 2 ** -149].map(Math.fround)
  for (const m of ['rz', 'rm', 'rp'] as Mode[]) {
    checkF(`add.${m}.f32 $d, $a, $b;`, 'f32', ['f32', 'f32'], pairs(vs), (a, b) => ieee('add', F32, m, a, b))
    checkF(`mul.${m}.f32 $d, $a, $b;`, 'f32', ['f32', 'f32'], pairs(vs), (a, b) => ieee('mul', F32, m, a, b))
    checkF(`div.${m}.f32 $d, $a, $b;`, 'f32', ['f32', 'f32'], pairs(vs), (a, b) => ieee('div', F32, m, a, b))
  }
})
arith32('fma.rn.f32 rounds once', () => {
  // cases where a double-rounded a*b+c differs from the correctly rounded result
  const hard = [[1 + 2 ** -23, 1 - 2 ** -24, -1], [16777215, 16777217, -(2 ** 48)], [1 + 2 ** -12, 1 + 2 ** -12, 2 ** -60], [3, 1 / 3, -1], [0.1, 10, -1]].map((c) => c.map(Math.fround))
  const trip = pairs(F32V.slice(0, 14)).map(([a, b], i) => [a!, b!, F32V[i % 14]!])
  checkF('fma.rn.f32 $d, $a, $b, $c;', 'f32', ['f32', 'f32', 'f32'], [...hard, ...trip], (a, b, c) => ieee('fma', F32, 'rn', a, b, c))
  checkF('fma.rz.f32 $d, $a, $b, $c;', 'f32', ['f32', 'f32', 'f32'], hard, (a, b, c) => ieee('fma', F32, 'rz', a, b, c))
  checkF('mad.rn.f32 $d, $a, $b, $c;', 'f32', ['f32', 'f32', 'f32'], hard, (a, b, c) => ieee('fma', F32, 'rn', a, b, c))
})
arith32('fma.rn.f32 on random operands near cancellation and ties', () => {
  let seed = 12345
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32)
  const cases: number[][] = []
  for (let i = 0; i < 768; i++) {
    const a = Math.fround((rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20))
    const b = Math.fround((rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20))
    const p = a * b
    // c near -a*b (cancellation), or a*b's rounding tail, or random
    const k = i % 3
    const c = Math.fround(k === 0 ? -p * (1 + (rnd() - 0.5) * 2 ** -20) : k === 1 ? p * 2 ** -24 * (rnd() < 0.5 ? 1 : -1) : (rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20))
    cases.push([a, b, c])
  }
  checkF('fma.rn.f32 $d, $a, $b, $c;', 'f32', ['f32', 'f32', 'f32'], cases, (a, b, c) => ieee('fma', F32, 'rn', a, b, c))
})
arith32('.ftz flushes denormal inputs and results, .sat clamps to [0, 1]', () => {
  const ftz = (x: number) => (x !== 0 && Math.abs(x) < MIN_NORMAL32 ? (x < 0 ? -0 : 0) : x)
  checkF('add.ftz.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs([DENORM32, -DENORM32, 0, 1, MIN_NORMAL32, Math.fround(MIN_NORMAL32 * 1.5)]), (a, b) => ftz(Math.fround(ftz(a) + ftz(b))))
  checkF('mul.ftz.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs([Math.fround(2 ** -70), 2 ** -60, DENORM32, 1]), (a, b) => ftz(Math.fround(ftz(a) * ftz(b))))
  const sat = (x: number) => (x !== x ? 0 : x < 0 ? 0 : x > 1 ? 1 : x)
  checkF('add.sat.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs([0.25, 0.5, 0.875, -1, NaN, 2]), (a, b) => sat(Math.fround(a + b)))
})

const arith64 = suite('add / mul / div / fma .f64')
arith64('round to nearest and directed modes', () => {
  checkF('add.f64 $d, $a, $b;', 'f64', ['f64', 'f64'], pairs(F64V), (a, b) => a + b)
  checkF('mul.f64 $d, $a, $b;', 'f64', ['f64', 'f64'], pairs(F64V), (a, b) => a * b)
  checkF('div.rn.f64 $d, $a, $b;', 'f64', ['f64', 'f64'], pairs(F64V), (a, b) => a / b)
  const vs = [1, 3, 0.1, -2.75, 1 / 3, 1e300, 2 ** -1074, 123456.789]
  for (const m of ['rz', 'rm', 'rp'] as Mode[]) {
    checkF(`add.${m}.f64 $d, $a, $b;`, 'f64', ['f64', 'f64'], pairs(vs), (a, b) => ieee('add', F64, m, a, b))
    checkF(`mul.${m}.f64 $d, $a, $b;`, 'f64', ['f64', 'f64'], pairs(vs), (a, b) => ieee('mul', F64, m, a, b))
    checkF(`div.${m}.f64 $d, $a, $b;`, 'f64', ['f64', 'f64'], pairs(vs), (a, b) => ieee('div', F64, m, a, b))
  }
})
arith64('fma.rn.f64 is exact (single rounding), including underflow and cancellation', () => {
  const hard = [
    [1 + 2 ** -52, 1 - 2 ** -53, -1], [0.1, 10, -1], [1 / 3, 3, -1], [2 ** 600, 2 ** 600, -(2 ** 1023)], [2 ** -600, 2 ** -500, 2 ** -1074],
    [1 + 2 ** -30, 1 + 2 ** -30, -(1 + 2 ** -29)], [134217729, 134217729, -18014398777917440], [-0, 5, 0], [1e308, 10, -1e308], [2 ** -1074, 0.5, 0],
    [Math.PI, Math.E, -8.539734222673566], [1 + 2 ** -52, 1 + 2 ** -52, -(1 + 2 ** -51)],
  ]
  const trip = pairs(F64V.slice(0, 12)).map(([a, b], i) => [a!, b!, F64V[(i * 5) % 12]!])
  checkF('fma.rn.f64 $d, $a, $b, $c;', 'f64', ['f64', 'f64', 'f64'], [...hard, ...trip], (a, b, c) => ieee('fma', F64, 'rn', a, b, c))
})

const minmax = suite('min / max / abs / neg / copysign / testp')
minmax('NaN operands are ignored unless both are NaN; -0 < +0', () => {
  const ref = (mx: boolean) => (a: number, b: number) => {
    if (a !== a) return b
    if (b !== b) return a
    if (a === 0 && b === 0) return (mx ? !Object.is(a, -0) : Object.is(a, -0)) ? a : b
    return mx ? Math.max(a, b) : Math.min(a, b)
  }
  checkF('min.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs(F32V), ref(false))
  checkF('max.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs(F32V), ref(true))
  checkF('max.f64 $d, $a, $b;', 'f64', ['f64', 'f64'], pairs(F64V), ref(true))
  checkF('min.NaN.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs(F32V), (a, b) => (a !== a || b !== b ? NaN : ref(false)(a, b)))
  checkF('abs.f32 $d, $a;', 'f32', ['f32'], F32V.map((a) => [a]), Math.abs)
  checkF('neg.f64 $d, $a;', 'f64', ['f64'], F64V.map((a) => [a]), (a) => -a)
  checkF('copysign.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs([1, -2, 0, -0, Infinity]), (a, b) => ((a < 0 || Object.is(a, -0)) ? -Math.abs(b) : Math.abs(b)))
})
minmax('testp classes', () => {
  const cls: Record<string, (x: number) => boolean> = {
    finite: Number.isFinite, infinite: (x) => Math.abs(x) === Infinity, number: (x) => x === x, notanumber: (x) => x !== x,
    normal: (x) => Number.isFinite(x) && Math.abs(x) >= MIN_NORMAL32, subnormal: (x) => x !== 0 && Math.abs(x) < MIN_NORMAL32,
  }
  for (const [name, f] of Object.entries(cls)) {
    const got = runForm({ form: `testp.${name}.f32 $d, $a;`, dst: 'pred', srcs: ['f32'] }, F32V.map((x) => [f32bits(x)]))
    F32V.forEach((x, i) => assert.is(got[i]!.d, f(x) ? 1n : 0n, `testp.${name} ${x}`))
  }
})

const compare = suite('setp / set / selp .f32 .f64')
compare('ordered and unordered comparisons', () => {
  const ord: Record<string, (a: number, b: number) => boolean> = { eq: (a, b) => a === b, ne: (a, b) => a === a && b === b && a !== b, lt: (a, b) => a < b, le: (a, b) => a <= b, gt: (a, b) => a > b, ge: (a, b) => a >= b }
  const vs = [0, -0, 1, -1, Infinity, -Infinity, NaN, DENORM32]
  for (const [name, f] of Object.entries(ord)) {
    for (const t of ['f32', 'f64']) {
      const cases = pairs(vs)
      const enc = t === 'f32' ? f32bits : f64bits
      const got = runForm({ form: `setp.${name}.${t} $d, $a, $b;`, dst: 'pred', srcs: [t, t] }, cases.map(([a, b]) => [enc(a!), enc(b!)]))
      cases.forEach(([a, b], i) => assert.is(got[i]!.d, f(a!, b!) ? 1n : 0n, `setp.${name}.${t} ${a} ${b}`))
      const gotU = runForm({ form: `setp.${name}u.${t} $d, $a, $b;`, dst: 'pred', srcs: [t, t] }, cases.map(([a, b]) => [enc(a!), enc(b!)]))
      cases.forEach(([a, b], i) => assert.is(gotU[i]!.d, a !== a || b !== b || (name === 'ne' ? a !== b : f(a!, b!)) ? 1n : 0n, `setp.${name}u.${t} ${a} ${b}`))
    }
  }
  const cases = pairs(vs)
  const num = runForm({ form: 'setp.num.f32 $d, $a, $b;', dst: 'pred', srcs: ['f32', 'f32'] }, cases.map(([a, b]) => [f32bits(a!), f32bits(b!)]))
  cases.forEach(([a, b], i) => assert.is(num[i]!.d, a === a && b === b ? 1n : 0n))
  const nan = runForm({ form: 'setp.nan.f32 $d, $a, $b;', dst: 'pred', srcs: ['f32', 'f32'] }, cases.map(([a, b]) => [f32bits(a!), f32bits(b!)]))
  cases.forEach(([a, b], i) => assert.is(nan[i]!.d, a !== a || b !== b ? 1n : 0n))
})
compare('set.f32 produces 1.0f, selp.f32 selects', () => {
  checkF('set.gt.f32.f32 $d, $a, $b;', 'f32', ['f32', 'f32'], pairs([1, 2, NaN]), (a, b) => (a > b ? 1 : 0))
  checkF('selp.f32 $d, $a, $b, $c;', 'f32', ['f32', 'f32', 'pred'], [[1.5, 2.5, 0], [1.5, 2.5, 1]], (a, b, c) => (c ? a : b))
})

const approx = suite('rcp / sqrt / rsqrt / sin / cos / lg2 / ex2 / tanh')
approx('correctly rounded forms are exact, approximate forms within the ISA bounds', () => {
  const pos = [1, 2, 3, 0.1, 1e-30, 1e30, 12345.678, 0.75].map(Math.fround)
  checkF('sqrt.rn.f32 $d, $a;', 'f32', ['f32'], pos.map((a) => [a]), (a) => Math.fround(Math.sqrt(a)))
  checkF('rcp.rn.f32 $d, $a;', 'f32', ['f32'], pos.map((a) => [a]), (a) => ieee('div', F32, 'rn', 1, a))
  checkF('sqrt.rn.f64 $d, $a;', 'f64', ['f64'], [[2], [1e-300], [0.1]], Math.sqrt)
  checkF('rcp.rn.f64 $d, $a;', 'f64', ['f64'], [[3], [0.1], [-7]], (a) => 1 / a)
  // approximate: check the error bound rather than a value (PTX ISA: rcp/sqrt.approx max 1 ulp, rsqrt
  // 2 ulp (use 1e-6 relative), ex2 2 ulp, lg2 2^-22 absolute near 1, sin/cos 2^-20.9 absolute in [-pi, pi])
  const within = (form: string, xs: number[], f: (x: number) => number, tol: (x: number, y: number) => number) => {
    const got = runForm({ form, dst: 'f32', srcs: ['f32'] }, xs.map((x) => [f32bits(x)]))
    xs.forEach((x, i) => {
      const g = bitsf32(got[i]!.d), w = f(x)
      assert.ok(Math.abs(g - w) <= tol(x, w), `${form}(${x}) = ${g}, want ${w}`)
    })
  }
  const rel = (r: number) => (_x: number, w: number) => Math.abs(w) * r
  within('rcp.approx.f32 $d, $a;', pos, (x) => 1 / x, rel(2 ** -23))
  within('sqrt.approx.f32 $d, $a;', pos, Math.sqrt, rel(2 ** -23))
  within('rsqrt.approx.f32 $d, $a;', pos, (x) => 1 / Math.sqrt(x), rel(2 ** -22))
  within('ex2.approx.f32 $d, $a;', [-10, -1.5, 0, 0.5, 1, 10, 100].map(Math.fround), (x) => 2 ** x, rel(2 ** -22))
  within('lg2.approx.f32 $d, $a;', pos, Math.log2, (_x, w) => Math.max(2 ** -21, Math.abs(w) * 2 ** -22))
  within('sin.approx.f32 $d, $a;', [-3, -1, 0, 0.5, 1, 3].map(Math.fround), Math.sin, () => 2 ** -20.9)
  within('cos.approx.f32 $d, $a;', [-3, -1, 0, 0.5, 1, 3].map(Math.fround), Math.cos, () => 2 ** -20.9)
  within('tanh.approx.f32 $d, $a;', [-3, -1, 0, 0.5, 1, 3].map(Math.fround), Math.tanh, () => 2 ** -10.987)
  checkF('rcp.approx.f32 $d, $a;', 'f32', ['f32'], [[0], [-0], [Infinity]], (a) => 1 / a)
  checkF('lg2.approx.f32 $d, $a;', 'f32', ['f32'], [[0], [-1], [Infinity]], (a) => Math.log2(a))
  checkF('rsqrt.approx.f32 $d, $a;', 'f32', ['f32'], [[0], [-0], [-1]], (a) => 1 / Math.sqrt(a))
})

const half = suite('f16 / bf16 arithmetic')
half('add/mul/fma on f16 and f16x2 round once to half precision', () => {
  const hv = [0x3c00, 0x3e00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x8001, 0x7c00, 0xfc00, 0x3555, 0x2e66, 0x0400].map((x) => BigInt(x))
  const cases = pairs(hv)
  const run = (form: string, dst: string, srcs: string[], cs: Bits[][], f: (...x: number[]) => number) => {
    const got = runForm({ form, dst, srcs }, cs)
    cs.forEach((c, i) => {
      const want = f(...c.map((x) => halfToNum(Number(x))))
      const g = halfToNum(Number(got[i]!.d))
      if (!sameF(g, want)) assert.unreachable(`${form} with ${c.map((x) => x.toString(16))}: got ${g}, want ${want}`)
    })
  }
  const r16 = (x: number) => halfToNum(numToHalf(x))
  run('add.f16 $d, $a, $b;', 'b16', ['b16', 'b16'], cases, (a, b) => r16(a + b))
  run('mul.f16 $d, $a, $b;', 'b16', ['b16', 'b16'], cases, (a, b) => r16(a * b))
  run('sub.rn.f16 $d, $a, $b;', 'b16', ['b16', 'b16'], cases, (a, b) => r16(a - b))
  const trip = cases.map(([a, b], i) => [a!, b!, hv[i % hv.length]!])
  run('fma.rn.f16 $d, $a, $b, $c;', 'b16', ['b16', 'b16', 'b16'], trip, (a, b, c) => { if (![a, b, c, a * b].every(Number.isFinite)) return r16(a * b + c); const [n1, d1] = frac(a * b), [n2, d2] = frac(c); return Number.isFinite(a * b + c) ? halfToNum(numToHalf(roundRational(n1 * d2 + n2 * d1, d1 * d2, { p: 60, emin: -200, emax: 200 }, 'rn'))) : r16(a * b + c) })
  // packed: each half independently
  const packed = cases.slice(0, 40).map(([a, b]) => [a! | (b! << 16n), b! | (a! << 16n)])
  const got = runForm({ form: 'add.f16x2 $d, $a, $b;', dst: 'b32', srcs: ['b32', 'b32'] }, packed)
  packed.forEach(([x, y], i) => {
    const lo = r16(halfToNum(Number(x! & 0xffffn)) + halfToNum(Number(y! & 0xffffn)))
    const hi = r16(halfToNum(Number(x! >> 16n)) + halfToNum(Number(y! >> 16n)))
    assert.ok(sameF(halfToNum(Number(got[i]!.d & 0xffffn)), lo) && sameF(halfToNum(Number(got[i]!.d >> 16n)), hi), `add.f16x2 ${x!.toString(16)} ${y!.toString(16)}`)
  })
})
half('fma.rn.relu clamps negative results to +0 and NaN to the canonical NaN', () => {
  const hv = [0x3c00, 0xc000, 0x3e00, 0x7e00, 0x0001, 0x8001].map(BigInt)
  const cases = pairs(hv).map(([a, b], i) => [a!, b!, hv[i % hv.length]!])
  const got = runForm({ form: 'fma.rn.relu.f16 $d, $a, $b, $c;', dst: 'b16', srcs: ['b16', 'b16', 'b16'] }, cases)
  cases.forEach(([a, b, c], i) => {
    const x = halfToNum(Number(a)) * halfToNum(Number(b)) + halfToNum(Number(c))
    const r = x !== x ? 0x7fff : numToHalf(x) & 0x8000 ? 0 : numToHalf(x)
    assert.is(Number(got[i]!.d), r, `fma.relu ${a!.toString(16)} ${b!.toString(16)} ${c!.toString(16)}`)
  })
})
half('bf16 arithmetic', () => {
  const bv = [0x3f80, 0x4000, 0xc040, 0x7f7f, 0x0001, 0x3dcc, 0x7f80].map((x) => BigInt(x))
  const cases = pairs(bv)
  const got = runForm({ form: 'mul.rn.bf16 $d, $a, $b;', dst: 'b16', srcs: ['b16', 'b16'] }, cases)
  cases.forEach(([a, b], i) => {
    const want = halfToNum(numToHalf(halfToNum(Number(a), true) * halfToNum(Number(b), true), 'rn', true), true)
    assert.ok(sameF(halfToNum(Number(got[i]!.d), true), want), `mul.bf16 ${a!.toString(16)} ${b!.toString(16)}`)
  })
})

arith32.run()
arith64.run()
minmax.run()
compare.run()
approx.run()
half.run()
