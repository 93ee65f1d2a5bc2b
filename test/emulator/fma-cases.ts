// Inputs and exact references for fma.rn (issue 24: the WebAssembly tier's fast paths must stay exact):
// fma(x, y, z) rounded once, computed from exact integers with BigInt (no floating point in the reference),
// for binary32 and binary64, and the inputs where rounding twice goes wrong. Shared by wasm-exact.test.ts
// and the relaxed-SIMD run (relaxed-madd-run.ts).
const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)
export const bitsOf = (x: number) => { f32[0] = x; return u32[0]! }
export const fromBits = (b: number) => { u32[0] = b >>> 0; return f32[0]! }

/** x = (−1)^neg · m · 2^e with m an integer (x a finite binary32 value). */
function parts(x: number): { neg: boolean; m: bigint; e: number } {
  const b = bitsOf(x)
  const neg = b >>> 31 === 1
  const be = (b >>> 23) & 0xff
  const frac = b & 0x7fffff
  return be === 0 ? { neg, m: BigInt(frac), e: -149 } : { neg, m: BigInt(frac | 0x800000), e: be - 150 }
}

/** A binary format: significand bits, the exponent of its least subnormal, its parts. */
interface Format { precision: number; emin: number; parts(x: number): { neg: boolean; m: bigint; e: number }; round(x: number): number }

/** fma(x, y, z) rounded once to `f`, nearest-even (x, y, z values of f), from exact integers. */
function exactFma(x: number, y: number, z: number, f: Format): number {
  // finite x, y have a finite exact product (x·y may overflow binary64, the fma's product does not)
  if (Number.isFinite(x) && Number.isFinite(y) && !Number.isFinite(z)) return z
  if (!Number.isFinite(x) || !Number.isFinite(y)) return f.round(x * y + z)
  const a = f.parts(x), b = f.parts(y), c = f.parts(z)
  const pe = a.e + b.e
  const E = Math.min(pe, c.e)
  const p = (a.m * b.m) << BigInt(pe - E)
  const q = c.m << BigInt(c.e - E)
  const t = (a.neg !== b.neg ? -p : p) + (c.neg ? -q : q)
  if (t === 0n) {
    // an exact zero: −0 only when both addends are −0 (or −0 + −0), else +0 under round-to-nearest
    return (p === 0n && q === 0n && a.neg !== b.neg && c.neg) ? -0 : 0
  }
  const neg = t < 0n
  const mag = neg ? -t : t
  const len = mag.toString(2).length
  const ulpExp = Math.max(E + len - f.precision, f.emin)
  let mant: bigint
  if (ulpExp <= E) mant = mag << BigInt(E - ulpExp)
  else {
    const s = BigInt(ulpExp - E)
    mant = mag >> s
    const rem = mag & ((1n << s) - 1n)
    const half = 1n << (s - 1n)
    if (rem > half || (rem === half && (mant & 1n) === 1n)) mant += 1n
  }
  // mant · 2^ulpExp is exact in binary64 for both formats; past the format's range, f.round gives ±∞
  const r = f.round(Number(mant) * 2 ** ulpExp)
  return neg ? -r : r
}

const F32: Format = { precision: 24, emin: -149, parts, round: Math.fround }

/** fma(x, y, z) rounded once to binary32 (x, y, z binary32 values). */
export function exactFma32(x: number, y: number, z: number): number { return exactFma(x, y, z, F32) }

// --- inputs ---

export function rng(seed: number) {
  let s = seed >>> 0
  return () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32 }
}

export function fmaInputs(): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = []
  const r = rng(24)
  // (1 + 2^-12)² = 1 + 2^-11 + 2^-24: a binary32 midpoint; ±2^-80 decides the rounding, which rounding twice loses
  const m = Math.fround(1 + 2 ** -12)
  for (const scale of [1, 2 ** 20, 2 ** -60, 2 ** -63, 2 ** 63]) for (const tiny of [2 ** -80, -(2 ** -80), 0, 2 ** -100, -(2 ** -149)]) {
    const x = Math.fround(m * scale)
    out.push([x, m, Math.fround(tiny * scale * scale)], [-x, m, Math.fround(-tiny * scale * scale)])
  }
  // random products that are binary32 midpoints (13-bit significands), with tiny addends of either sign
  for (let n = 0; out.length < 400 && n < 200000; n++) {
    const ma = 4096 + Math.floor(r() * 4096), mb = 4096 + Math.floor(r() * 4096)
    const prod = ma * mb // 25 or 26 bits
    const bits = prod.toString(2).length
    if (bits < 25 || (prod >> (bits - 25)) * 2 ** (bits - 25) !== prod || ((prod >> (bits - 25)) & 1) === 0) continue
    const ea = Math.floor(r() * 40) - 20
    const x = Math.fround(ma * 2 ** ea), y = Math.fround(mb * 2 ** -12)
    const p = x * y
    const k = 30 + Math.floor(r() * 40)
    out.push([x, y, Math.fround((r() < 0.5 ? -1 : 1) * Math.abs(p) * 2 ** -k)], [x, y, 0])
  }
  // results around and below the smallest normal (2^-126) and subnormal ties
  for (let i = 0; i < 60; i++) {
    const x = Math.fround((1 + r()) * 2 ** (-60 - Math.floor(r() * 20)))
    const y = Math.fround((1 + r()) * 2 ** (-60 - Math.floor(r() * 20)))
    const z = Math.fround((r() - 0.5) * 2 ** (-120 - Math.floor(r() * 30)))
    out.push([x, y, z], [x, -y, z], [fromBits(1 + Math.floor(r() * 1000)), Math.fround(0.5 + r()), 0])
  }
  out.push([fromBits(3), 0.5, 0], [fromBits(1), 0.5, 0], [fromBits(1), -0.5, fromBits(1)], [fromBits(0x7fffff), 1, fromBits(1)])
  // signed zeros, infinities, NaN, overflow
  for (const [x, y, z] of [[0, 5, -0], [-0, 5, -0], [-0, -5, -0], [0, -5, 0], [3, 0, -0], [Infinity, 0, 1], [Infinity, 2, -Infinity], [Infinity, 2, 1], [NaN, 1, 2], [2, 3, NaN],
    [3.4e38, 2, 0], [3.4e38, 1, 3.4e38], [-3.4e38, 2, 3.4e38], [Math.fround(2 ** 64), Math.fround(2 ** 64), -1], [1.5, 2 ** -24, 1], [1, 1 + 2 ** -23, 2 ** -24]] as const) out.push([Math.fround(x), Math.fround(y), Math.fround(z)])
  // random triples of every magnitude
  for (let i = 0; i < 400; i++) {
    const v = () => fromBits(Math.floor(r() * 2 ** 32) & 0xf7ffffff) // exponents below 0x7f: finite
    out.push([v(), v(), v()])
  }
  return out
}



const f64 = new Float64Array(1)
const u64 = new BigUint64Array(f64.buffer)
export const bits64 = (x: number): bigint => { f64[0] = x; return u64[0]! }

/** x = (−1)^neg · m · 2^e with m an integer (x a finite binary64 value). */
function parts64(x: number): { neg: boolean; m: bigint; e: number } {
  const b = bits64(x)
  const neg = b >> 63n === 1n
  const be = Number((b >> 52n) & 0x7ffn)
  const frac = b & ((1n << 52n) - 1n)
  return be === 0 ? { neg, m: frac, e: -1074 } : { neg, m: frac | (1n << 52n), e: be - 1075 }
}

const F64: Format = { precision: 53, emin: -1074, parts: parts64, round: (v) => v }

/** fma(x, y, z) rounded once to binary64 (x, y, z binary64 values). */
export function exactFma64(x: number, y: number, z: number): number { return exactFma(x, y, z, F64) }

/** binary64 triples where rounding x·y + z twice goes wrong, near the subnormal range, and random ones. */
export function fma64Inputs(): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = []
  const r = rng(64)
  // (1 + 2^-26)(1 + 2^-27) = 1 + 2^-26 + 2^-27 + 2^-53: a binary64 midpoint; ±2^-120 decides
  const m = 1 + 2 ** -26, n = 1 + 2 ** -27
  for (const scale of [1, 2 ** 300, 2 ** -400, 2 ** -500]) for (const tiny of [2 ** -120, -(2 ** -120), 0, -(2 ** -1074)]) out.push([m * scale, n, tiny * scale * scale], [-m * scale, n, -tiny * scale * scale])
  for (let i = 0; i < 60; i++) {
    const x = (1 + r()) * 2 ** (-500 - Math.floor(r() * 40)), y = (1 + r()) * 2 ** (-500 - Math.floor(r() * 40))
    out.push([x, y, (r() - 0.5) * 2 ** (-1000 - Math.floor(r() * 60))], [x, -y, 0])
  }
  for (let i = 0; i < 300; i++) {
    const v = () => (r() - 0.5) * 2 ** (Math.floor(r() * 120) - 60)
    out.push([v(), v(), v()])
  }
  out.push([0, 5, -0], [-0, 5, -0], [1e308, 10, -Infinity], [1e308, -10, Infinity], [1e308, 10, 0], [1e308, 10, -1e308], [5e-324, 0.5, 0], [5e-324, -0.5, 5e-324], [5e-324, -0.5, 0])
  return out
}

/** One thread a triple: out[i] = fma.rn.f32(in[3i], in[3i+1], in[3i+2]) (kernel `fma32`). */
export const FMA_PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry fma32(.param .u64 p_in, .param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %a<5>;
  ld.param.u64 %a0, [p_in];
  ld.param.u64 %a1, [p_out];
  ld.param.u32 %r3, [p_n];
  mov.u32 %r0, %tid.x;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mad.lo.s32 %r0, %r1, %r2, %r0;
  setp.ge.u32 %p, %r0, %r3;
  @%p bra DONE;
  mul.wide.u32 %a2, %r0, 12;
  add.s64 %a3, %a0, %a2;
  ld.global.f32 %f0, [%a3];
  ld.global.f32 %f1, [%a3+4];
  ld.global.f32 %f2, [%a3+8];
  fma.rn.f32 %f3, %f0, %f1, %f2;
  mul.wide.u32 %a2, %r0, 4;
  add.s64 %a4, %a1, %a2;
  st.global.f32 [%a4], %f3;
DONE:
  ret;
}
`
