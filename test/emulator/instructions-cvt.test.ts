import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { bitsf32, bitsf64, F32, F64, f32bits, f64bits, frac, halfToNum, numToHalf, roundRational, runForm, s, u, type Bits, type Mode } from './ptx-harness.js'

function check(form: string, dst: string, src: string, inputs: Bits[], ref: (x: Bits) => Bits): void {
  const got = runForm({ form, dst, srcs: [src] }, inputs.map((x) => [x]))
  inputs.forEach((x, i) => {
    const w = ref(x)
    if (got[i]!.d !== w) assert.unreachable(`${form} of 0x${x.toString(16)}: got 0x${got[i]!.d.toString(16)}, want 0x${w.toString(16)}`)
  })
}

const I32 = [0n, 1n, 127n, 128n, 255n, 256n, 0x7fffn, 0x8000n, 0xffffn, 0x10000n, 0x7fffffffn, 0x80000000n, 0xffffffffn, u(-129, 32), u(-32769, 32)]
const I64 = [0n, 1n, 0xffffffffn, 0x100000000n, (1n << 63n) - 1n, 1n << 63n, u(-1, 64), u(-5000000000n, 64), (1n << 53n) + 1n, (1n << 24n) + 1n]

// ---

const intInt = suite('cvt between integer types')
intInt('widening sign- or zero-extends, narrowing truncates', () => {
  check('cvt.s32.s16 $d, $a;', 's32', 's16', [0n, 1n, 0x7fffn, 0x8000n, 0xffffn], (x) => u(s(x, 16), 32))
  check('cvt.u32.u16 $d, $a;', 'u32', 'u16', [0n, 1n, 0x7fffn, 0x8000n, 0xffffn], (x) => x)
  check('cvt.u16.u32 $d, $a;', 'u16', 'u32', I32, (x) => x & 0xffffn)
  check('cvt.s8.s32 $d, $a;', 's8', 's32', I32, (x) => x & 0xffn)
  check('cvt.s64.s32 $d, $a;', 's64', 's32', I32, (x) => u(s(x, 32), 64))
  check('cvt.u64.u32 $d, $a;', 'u64', 'u32', I32, (x) => x)
  check('cvt.u32.u64 $d, $a;', 'u32', 'u64', I64, (x) => x & 0xffffffffn)
  check('cvt.s32.s8 $d, $a;', 's32', 's16', [0n, 0x7fn, 0x80n, 0xffn, 0x1ffn], (x) => u(s(x & 0xffn, 8), 32))
})
intInt('.sat clamps to the destination range', () => {
  const clamp = (v: bigint, lo: bigint, hi: bigint) => (v < lo ? lo : v > hi ? hi : v)
  check('cvt.sat.s8.s32 $d, $a;', 's8', 's32', I32, (x) => u(clamp(s(x, 32), -128n, 127n), 8))
  check('cvt.sat.u16.s32 $d, $a;', 'u16', 's32', I32, (x) => clamp(s(x, 32), 0n, 65535n))
  check('cvt.sat.s32.s64 $d, $a;', 's32', 's64', I64, (x) => u(clamp(s(x, 64), -(1n << 31n), (1n << 31n) - 1n), 32))
  check('cvt.sat.u32.s64 $d, $a;', 'u32', 's64', I64, (x) => clamp(s(x, 64), 0n, 0xffffffffn))
  check('cvt.sat.s32.u32 $d, $a;', 's32', 'u32', I32, (x) => clamp(x, 0n, 0x7fffffffn))
})

const floatInt = suite('cvt float → integer')
floatInt('rounding modes, saturation and NaN → 0', () => {
  const xs = [0, -0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e10, -1e10, 3e9, 4.5e9, 2147483520, NaN, Infinity, -Infinity, 1e-40, 7.9999].map(Math.fround)
  const r: Record<string, (x: number) => number> = {
    rni: (x) => { const f = Math.floor(x), d = x - f; return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f },
    rzi: Math.trunc, rmi: Math.floor, rpi: Math.ceil,
  }
  const sat = (v: number, lo: number, hi: number) => (v !== v ? 0 : v < lo ? lo : v > hi ? hi : v)
  for (const [m, f] of Object.entries(r)) {
    check(`cvt.${m}.s32.f32 $d, $a;`, 's32', 'f32', xs.map(f32bits), (b) => u(BigInt(sat(f(bitsf32(b)), -(2 ** 31), 2 ** 31 - 1)), 32))
    check(`cvt.${m}.u32.f32 $d, $a;`, 'u32', 'f32', xs.map(f32bits), (b) => BigInt(sat(f(bitsf32(b)), 0, 2 ** 32 - 1)))
    check(`cvt.${m}.s64.f64 $d, $a;`, 's64', 'f64', [...xs, 1e19, -1e19, 2 ** 62 + 2 ** 12].map(f64bits), (b) => {
      const v = f(bitsf64(b))
      return u(v !== v ? 0n : v >= 2 ** 63 ? (1n << 63n) - 1n : v <= -(2 ** 63) ? -(1n << 63n) : BigInt(v), 64)
    })
    check(`cvt.${m}.u64.f32 $d, $a;`, 'u64', 'f32', xs.map(f32bits), (b) => { const v = f(bitsf32(b)); return v !== v || v <= 0 ? 0n : v >= 2 ** 64 ? (1n << 64n) - 1n : BigInt(v) })
  }
  check('cvt.rzi.s16.f32 $d, $a;', 's16', 'f32', xs.map(f32bits), (b) => u(BigInt(sat(Math.trunc(bitsf32(b)), -32768, 32767)), 16))
})

const intFloat = suite('cvt integer → float')
intFloat('every rounding mode, values beyond the significand', () => {
  const toF = (v: bigint, fmt: typeof F32, m: Mode) => roundRational(v, 1n, fmt, m)
  for (const m of ['rn', 'rz', 'rm', 'rp'] as Mode[]) {
    check(`cvt.${m}.f32.s32 $d, $a;`, 'f32', 's32', [...I32, 16777217n, 16777219n, u(-16777219, 32)], (x) => f32bits(toF(s(x, 32), F32, m)))
    check(`cvt.${m}.f32.u32 $d, $a;`, 'f32', 'u32', [...I32, 16777217n], (x) => f32bits(toF(x, F32, m)))
    check(`cvt.${m}.f32.s64 $d, $a;`, 'f32', 's64', I64, (x) => f32bits(toF(s(x, 64), F32, m)))
    check(`cvt.${m}.f64.s64 $d, $a;`, 'f64', 's64', I64, (x) => f64bits(toF(s(x, 64), F64, m)))
    check(`cvt.${m}.f64.u64 $d, $a;`, 'f64', 'u64', I64, (x) => f64bits(toF(x, F64, m)))
  }
  check('cvt.rn.f64.s32 $d, $a;', 'f64', 's32', I32, (x) => f64bits(Number(s(x, 32))))
})

const floatFloat = suite('cvt between float types')
floatFloat('f64 → f32 with every rounding mode, f32 → f64 exact', () => {
  const xs = [0.1, 1 / 3, -1 / 3, 1e39, -1e39, 1e-46, 2 ** -149 * 1.5, 3.4028235677973366e38, Infinity, NaN, -0, 16777217]
  for (const m of ['rn', 'rz', 'rm', 'rp'] as Mode[]) {
    check(`cvt.${m}.f32.f64 $d, $a;`, 'f32', 'f64', xs.map(f64bits), (b) => {
      const x = bitsf64(b)
      if (!Number.isFinite(x) || x === 0) return f32bits(Math.fround(x))
      const [n, d] = frac(x)
      return f32bits(roundRational(n, d, F32, m))
    })
  }
  check('cvt.f64.f32 $d, $a;', 'f64', 'f32', [0.1, -2.5, 1e-45, Infinity].map((x) => f32bits(Math.fround(x))), (b) => f64bits(bitsf32(b)))
  const ri = [0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e20, NaN].map(Math.fround)
  check('cvt.rni.f32.f32 $d, $a;', 'f32', 'f32', ri.map(f32bits), (b) => { const x = bitsf32(b); if (x !== x) return f32bits(x); const f = Math.floor(x), d = x - f; return f32bits(d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f) })
  check('cvt.rzi.f64.f64 $d, $a;', 'f64', 'f64', [2.5, -2.5, 1e300].map(f64bits), (b) => f64bits(Math.trunc(bitsf64(b))))
  check('cvt.sat.f32.f32 $d, $a;', 'f32', 'f32', [-1, 0.5, 2, NaN].map(f32bits), (b) => { const x = bitsf32(b); return f32bits(x !== x ? 0 : Math.min(Math.max(x, 0), 1)) })
  check('cvt.ftz.f32.f32 $d, $a;', 'f32', 'f32', [2 ** -130, -(2 ** -140), 1].map((x) => f32bits(Math.fround(x))), (b) => { const x = bitsf32(b); return f32bits(Math.abs(x) < 2 ** -126 ? (x < 0 ? -0 : 0) : x) })
})
floatFloat('f16 and bf16 conversions: ties, subnormals, overflow', () => {
  const xs = [0, -0, 1, 65504, 65519.99, 65520, 1e6, -1e6, 2 ** -24, 2 ** -25, 2 ** -25 * 1.5, 2 ** -14, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 0.1, -0.3, Infinity, -Infinity, 5.960464477539063e-8].map(Math.fround)
  for (const m of ['rn', 'rz', 'rm', 'rp'] as Mode[]) {
    check(`cvt.${m}.f16.f32 $d, $a;`, 'b16', 'f32', xs.map(f32bits), (b) => BigInt(numToHalf(bitsf32(b), m)))
    check(`cvt.${m}.bf16.f32 $d, $a;`, 'b16', 'f32', xs.map(f32bits), (b) => BigInt(numToHalf(bitsf32(b), m, true)))
  }
  check('cvt.rn.f16.f64 $d, $a;', 'b16', 'f64', [0.1, 1 + 2 ** -11 + 2 ** -40, 65520].map(f64bits), (b) => BigInt(numToHalf(bitsf64(b))))
  const halves = [0x0000, 0x8000, 0x3c00, 0x0001, 0x03ff, 0x7bff, 0x7c00, 0xfc00, 0xc3ff, 0x3555].map(BigInt)
  check('cvt.f32.f16 $d, $a;', 'f32', 'b16', halves, (h) => f32bits(halfToNum(Number(h))))
  check('cvt.f32.bf16 $d, $a;', 'f32', 'b16', [0x3f80n, 0x0001n, 0xff80n, 0x7f7fn], (h) => f32bits(halfToNum(Number(h), true)))
  check('cvt.f64.f16 $d, $a;', 'f64', 'b16', halves, (h) => f64bits(halfToNum(Number(h))))
  const pair = runForm({ form: 'cvt.rn.f16x2.f32 $d, $a, $b;', dst: 'b32', srcs: ['f32', 'f32'] }, [[f32bits(1), f32bits(-2)], [f32bits(0.1), f32bits(65520)]])
  assert.is(pair[0]!.d, BigInt(numToHalf(1) << 16 | numToHalf(-2)))
  assert.is(pair[1]!.d, BigInt(numToHalf(Math.fround(0.1)) << 16 | numToHalf(65520)))
  const relu = runForm({ form: 'cvt.rn.relu.bf16x2.f32 $d, $a, $b;', dst: 'b32', srcs: ['f32', 'f32'] }, [[f32bits(-1.5), f32bits(2.5)], [f32bits(NaN), f32bits(-0.001)]])
  assert.is(relu[0]!.d, BigInt(numToHalf(2.5, 'rn', true)))
  assert.is(relu[1]!.d, 0x7fff0000n)
  check('cvt.rzi.s32.f16 $d, $a;', 's32', 'b16', [0x3e00n, 0xc100n], (h) => u(BigInt(Math.trunc(halfToNum(Number(h)))), 32))
  check('cvt.rn.f16.s32 $d, $a;', 'b16', 's32', [1n, 2049n, 70000n, u(-3, 32)], (x) => BigInt(numToHalf(Number(s(x, 32)))))
})

floatFloat('cvt.{rna,rn,rz}{.satfinite}.tf32.f32: 10 fraction bits, the low 13 zero (wmma::__float_to_tf32)', () => {
  // (NaN payloads are not kept: the emulator's f32 NaN is the canonical 0x7fffffff)
  // the f32 bits with the low 13 cleared, one tf32 ulp (2^13) added when the mode rounds up: rna on a
  // remainder ≥ half, rn above half or at half with an odd kept part; rz never
  const tf32 = (mode: string, sat: boolean) => (b: Bits) => {
    const exp = (b >> 23n) & 0xffn
    if (exp === 0xffn) return b
    const low = b & 0x1fffn, kept = b - low
    const up = mode === 'rna' ? low >= 0x1000n : mode === 'rn' ? low > 0x1000n || (low === 0x1000n && (kept & 0x2000n) !== 0n) : false
    const r = up ? kept + 0x2000n : kept
    return sat && ((r >> 23n) & 0xffn) === 0xffn ? (b & 0x80000000n) | 0x7f7fe000n : r
  }
  const xs = [0x3f800000n, 0x3f801000n, 0x3f803000n, 0x3f801001n, 0x3f800fffn, 0xbf801000n, 0x7f7fffffn, 0xff7ff000n, 0x00001000n, 0x7f800000n, f32bits(0.1), f32bits(-1 / 3)]
  for (const mode of ['rna', 'rn', 'rz']) for (const sat of [false, true]) {
    if (mode === 'rna' && sat) continue
    check(`cvt.${mode}${sat ? '.satfinite' : ''}.tf32.f32 $d, $a;`, 'b32', 'f32', xs, tf32(mode, sat))
  }
})

const fp8 = suite('cvt to and from 8-bit floats (e4m3x2 / e5m2x2)')
/** All finite values of an FP8 format, decoded from the OCP FP8 definition. */
function fp8Values(e4: boolean): Array<[number, number]> {
  const out: Array<[number, number]> = []
  for (let b = 0; b < 256; b++) {
    const sgn = b & 0x80 ? -1 : 1
    const E = e4 ? (b >> 3) & 15 : (b >> 2) & 31
    const M = e4 ? b & 7 : b & 3
    const mb = e4 ? 3 : 2, bias = e4 ? 7 : 15
    if (e4 && E === 15 && M === 7) continue
    if (!e4 && E === 31) continue
    out.push([b, E === 0 ? sgn * M * 2 ** (1 - bias - mb) : sgn * (1 + M / 2 ** mb) * 2 ** (E - bias)])
  }
  return out
}
/** Nearest finite FP8 code by exhaustive search (ties to the even code), clamped to ±max as .satfinite does. */
function nearestFp8(x: number, e4: boolean): number {
  if (x !== x) return 0x7f
  const vals = fp8Values(e4).filter(([b]) => b !== 0x80)
  const max = Math.max(...vals.map(([, v]) => v))
  const c = Math.max(-max, Math.min(max, x))
  let best = -1, bd = Infinity
  for (const [b, v] of vals) {
    const d = Math.abs(v - c)
    if (d < bd || (d === bd && (b & 1) === 0)) { bd = d; best = b }
  }
  if (best === 0) return x < 0 || Object.is(x, -0) ? 0x80 : 0
  return best
}
fp8('f32 → e4m3x2/e5m2x2 rounds to nearest even and saturates; back to f16x2 exactly', () => {
  const xs = [0, -0, 1, -1, 0.3, 448, 449, 460, 470, 1000, -1e6, 57344, 60000, 1e9, Infinity, -Infinity, 2 ** -9, 2 ** -10, 3 * 2 ** -10, 2 ** -16, 2 ** -17, 1.0625, 1.1875, 3.14159, -0.0078125, 240, 248, 232]
  for (const e4 of [true, false]) {
    const t = e4 ? 'e4m3x2' : 'e5m2x2'
    const cases = xs.map((x, i) => [f32bits(Math.fround(x)), f32bits(Math.fround(xs[(i + 3) % xs.length]!))])
    const got = runForm({ form: `cvt.rn.satfinite.${t}.f32 $d, $a, $b;`, dst: 'b16', srcs: ['f32', 'f32'] }, cases)
    cases.forEach(([a, b], i) => {
      const want = (nearestFp8(bitsf32(a!), e4) << 8) | nearestFp8(bitsf32(b!), e4)
      assert.is(Number(got[i]!.d), want, `${t} of ${bitsf32(a!)}, ${bitsf32(b!)}`)
    })
    const codes = Array.from({ length: 128 }, (_, i) => BigInt((2 * i) | ((2 * i + 1) << 8)))
    const back = runForm({ form: `cvt.rn.f16x2.${t} $d, $a;`, dst: 'b32', srcs: ['b16'] }, codes.map((c) => [c]))
    const dec = new Map(fp8Values(e4))
    codes.forEach((c, i) => {
      const lo = Number(c & 0xffn), hi = Number(c >> 8n)
      const f = (b: number) => (dec.has(b) ? numToHalf(dec.get(b)!) : e4 ? 0x7fff : (b & 0x7f) === 0x7c ? (b & 0x80 ? 0xfc00 : 0x7c00) : 0x7fff)
      assert.is(Number(back[i]!.d), ((f(hi) << 16) | f(lo)) >>> 0, `${t} code ${lo.toString(16)} ${hi.toString(16)}`)
    })
  }
  check('cvt.rn.satfinite.f16.f32 $d, $a;', 'b16', 'f32', [1e6, -Infinity, NaN, 1].map((x) => f32bits(Math.fround(x))), (b) => { const x = bitsf32(b); return BigInt(x !== x ? 0x7fff : Math.abs(x) > 65504 ? (x < 0 ? 0xfbff : 0x7bff) : numToHalf(x)) })
})

intInt.run()
floatInt.run()
intFloat.run()
floatFloat.run()
fp8.run()
