// WGSL helper functions that emit-wgsl puts into a kernel's module on demand (only those the kernel calls,
// with what they call, in dependency order), so a small kernel stays a small shader: SwiftShader compiles
// every function of a module, and shader compile time is part of load time.
//
// Conventions (README.md, "Translation plan"): integers of ≤ 32 bits are u32 bit patterns (signed values
// bitcast where the sign matters), 64-bit integers and f64 bit patterns are vec2<u32> (lo, hi), f16/bf16 are
// their 16 bits in a u32. Float classification is done on the bits: WGSL lets an implementation assume that
// no NaN or infinity occurs, so `x != x` may be folded away (WGSL spec, "Floating Point Evaluation").
//
// Each PTX semantic cited is from PTX ISA 9.x; the emulator's numeric.ts computes the same functions in
// JavaScript, and the corpus tests compare the two.
import { FMA_BATCH_MAX } from './fma-batch.js'

interface LibFunction {
  code: string
  deps?: readonly string[]
}

const F = (code: string, deps?: readonly string[]): LibFunction => ({ code, deps })

/** Bodies keyed by function name. Memory and atomic helpers are made per kernel (emit-memory.ts). */
export const WGSL_LIB: Readonly<Record<string, LibFunction>> = {
  kp_nc: F(`// an f32 product kept apart from the add that reads it: its bits through an xor with a word of the launch
// record that is always 0 (ctaid_base.y: grids are split in x only), which a shader compiler cannot see
// through, so it cannot contract the two into an fma (NVIDIA's Vulkan driver does where the product has no other use);
// and a constant operand of an add, product or fma made opaque the same way, so that the compiler cannot fold x * 0
fn kp_nc(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ kp_launch.ctaid_base.y); }`),
  kp_f32_bits: F(`// an f32 from its bits at run time (constant expressions may not produce infinities or NaNs)
fn kp_f32_bits(b: u32) -> f32 { return bitcast<f32>(b); }`),
  // --- float classification on bits ---
  kp_isnan: F(`fn kp_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }`),
  kp_isinf: F(`fn kp_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }`),
  kp_ftz: F(`// .ftz: subnormal inputs and results become zero of the same sign
fn kp_ftz(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  return select(x, bitcast<f32>(b & 0x80000000u), (b & 0x7f800000u) == 0u);
}`),
  kp_sat: F(`// .sat: clamp to [0, 1], NaN becomes +0
fn kp_sat(x: f32) -> f32 {
  return select(clamp(x, 0.0, 1.0), 0.0, kp_isnan(x));
}`, ['kp_isnan']),
  kp_fkey: F(`// an f32's bits as a u32 in the floats' order (−0 just below +0; NaN not ordered): min/max compare these, as a
// device may flush subnormal operands in a float comparison (SwiftShader does: min(0, 2^-149) came out 2^-149)
fn kp_fkey(x: f32) -> u32 { let u = bitcast<u32>(x); return select(u | 0x80000000u, ~u, (u & 0x80000000u) != 0u); }`),
  kp_fmin: F(`// min.f32: a NaN operand is ignored; -0 is less than +0
fn kp_fmin(a: f32, b: f32) -> f32 {
  return select(select(select(b, a, kp_fkey(a) < kp_fkey(b)), a, kp_isnan(b)), b, kp_isnan(a));
}`, ['kp_isnan', 'kp_fkey']),
  kp_fmax: F(`// max.f32: a NaN operand is ignored; +0 is greater than -0
fn kp_fmax(a: f32, b: f32) -> f32 {
  return select(select(select(b, a, kp_fkey(a) > kp_fkey(b)), a, kp_isnan(b)), b, kp_isnan(a));
}`, ['kp_isnan', 'kp_fkey']),
  kp_fmin_nan: F(`fn kp_fmin_nan(a: f32, b: f32) -> f32 {
  return select(kp_fmin(a, b), bitcast<f32>(0x7fffffffu), kp_isnan(a) | kp_isnan(b));
}`, ['kp_isnan', 'kp_fmin']),
  kp_fmax_nan: F(`fn kp_fmax_nan(a: f32, b: f32) -> f32 {
  return select(kp_fmax(a, b), bitcast<f32>(0x7fffffffu), kp_isnan(a) | kp_isnan(b));
}`, ['kp_isnan', 'kp_fmax']),
  kp_fcmp: F(`// setp/set on floats: op 0 eq 1 ne 2 lt 3 le 4 gt 5 ge; +8: the unordered variant (true when either is NaN);
// 16 num, 17 nan. Ordered comparisons with a NaN operand are false.
fn kp_fcmp(a: f32, b: f32, op: u32) -> bool {
  let un = kp_isnan(a) || kp_isnan(b);
  if (op == 16u) { return !un; }
  if (op == 17u) { return un; }
  if (un) { return op >= 8u; }
  switch (op & 7u) {
    case 0u: { return a == b; }
    case 1u: { return a != b; }
    case 2u: { return a < b; }
    case 3u: { return a <= b; }
    case 4u: { return a > b; }
    default: { return a >= b; }
  }
}`, ['kp_isnan']),
  kp_lg2: F(`// lg2.approx.f32 (PTX ISA: −Inf at ±0, NaN below 0, +Inf at +Inf; subnormals supported): log2 where WGSL
// defines it, subnormals scaled into the normal range first
fn kp_lg2(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let v = select(log2(x), log2(kp_up64(x)) - 64.0, b < 0x00800000u);
  return select(select(select(v, x, b == 0x7f800000u), kp_f32_bits(0x7fffffffu), b > 0x7f800000u), kp_f32_bits(0xff800000u), (b & 0x7fffffffu) == 0u);
}`, ['kp_f32_bits', 'kp_up64']),
  kp_sin_approx: F(`// sin.approx.f32 within the PTX ISA's bound (absolute error 2^-20.9 over -100π..100π; the Programming Guide's
// 2^-21.41 for __sinf over -π..π), where WGSL's sin may be off by 2^-11 (SwiftShader's by ~2^-13 near 0): x less
// q·π/2 in three parts (q·1.5703125 and q·4.837512969970703125e-4 exact for |q| < 2^13), then sine or cosine
// polynomials on [-π/4, π/4] (Cephes' sinf/cosf coefficients) by the quadrant; NaN at ±Inf and NaN, ±0 kept.
// On SwiftShader: at most 8e-8 from sin over ±100π (test/webgpu/approx-trig.test.ts)
fn kp_sin_approx(x: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) == 0u) { return x; }
  return kp_sincos_q(x, 0.0);
}`, ['kp_sincos_q']),
  kp_cos_approx: F(`// cos.approx.f32 within the PTX ISA's bound: kp_sin_approx's reduction a quadrant on
fn kp_cos_approx(x: f32) -> f32 { return kp_sincos_q(x, 1.0); }`, ['kp_sincos_q']),
  kp_sincos_q: F(`// sine of x plus k quarter turns (k = 0: sin, 1: cos), for kp_sin_approx and kp_cos_approx
fn kp_sincos_q(x: f32, k: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u) { return kp_f32_bits(0x7fffffffu); }
  let q = round(x * 0.636619772367581343);
  // (|r| ≤ π/4 plus the rounding of x·2/π wherever the bound applies; past ±2^24 or so the reduction is no
  // reduction, and the clamp keeps the result a number in [-1, 1] there, where the PTX ISA states no bound)
  let r = clamp(((x - q * 1.5703125) - q * 4.837512969970703125e-4) - q * 7.549790126404332e-8, -1.0, 1.0);
  let z = r * r;
  let s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
  let c = (1.0 - 0.5 * z) + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
  let n = q + k;
  let m = n - 4.0 * floor(n * 0.25);
  if (m == 0.0) { return s; }
  if (m == 1.0) { return c; }
  if (m == 2.0) { return -s; }
  return -c;
}`, ['kp_f32_bits']),
  kp_up64: F(`// a subnormal f32 times 2^64, from its bits (m·2^-149·2^64 = f32(m)·2^-85, both factors normal): exact on devices
// that flush subnormal operands of arithmetic (NVIDIA's Vulkan driver, SwiftShader), where x·2^64 would be 0
fn kp_up64(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  return bitcast<f32>(bitcast<u32>(f32(b & 0x7fffffu) * 2.5849394142282115e-26) | (b & 0x80000000u));
}`),
  kp_bf16_addsub: F(`// a bf16 add (neg = 0) or sub (neg = 0x8000) of bits x and y, subnormal operands and results included, on
// devices that flush them (NVIDIA's Vulkan driver, SwiftShader: WGSL allows it). Where an operand is subnormal or
// the sum's f32 is 0 or subnormal, and neither operand is above 2^63, the sum of both operands times 2^64 (each
// from its bits, exact, normal; the sum as exact as unscaled), brought back by kp_bf16_down; else the sum as is.
fn kp_bf16_addsub(x: u32, y0: u32, neg: u32) -> u32 {
  let y = y0 ^ neg;
  let r = kp_bf2f(x) + kp_bf2f(y);
  let ex = (x >> 7u) & 0xffu; let ey = (y >> 7u) & 0xffu;
  let tiny = kp_bf16_sub(x) | kp_bf16_sub(y) | ((bitcast<u32>(r) & 0x7f800000u) == 0u);
  let slow = tiny & (max(ex, ey) <= 190u);
  return select(kp_f2bf(r), kp_bf16_down(kp_bf16_up(x) + kp_bf16_up(y)), slow);
}`, ['kp_bf2f', 'kp_f2bf', 'kp_bf16_sub', 'kp_bf16_up', 'kp_bf16_down']),
  kp_bf16_mul: F(`// a bf16 product of bits x and y with subnormal factors and results (kp_bf16_addsub): where a factor is
// subnormal or the product's f32 is 0 or subnormal, the factor with the smaller exponent times 2^64 from its bits,
// times the other, brought back by kp_bf16_down (no overflow: the scaled factor is below 2^-62 where it was
// subnormal, and where the product is tiny the scaled product is below 2^-62 too)
fn kp_bf16_mul(x: u32, y: u32) -> u32 {
  let r = kp_bf2f(x) * kp_bf2f(y);
  let ex = (x >> 7u) & 0xffu; let ey = (y >> 7u) & 0xffu;
  let tiny = kp_bf16_sub(x) | kp_bf16_sub(y) | ((bitcast<u32>(r) & 0x7f800000u) == 0u);
  let small = select(y, x, ex <= ey); let big = select(x, y, ex <= ey);
  let slow = tiny & (min(ex, ey) <= 190u);
  return select(kp_f2bf(r), kp_bf16_down(kp_bf16_up(small) * kp_bf2f(big)), slow);
}`, ['kp_bf2f', 'kp_f2bf', 'kp_bf16_sub', 'kp_bf16_up', 'kp_bf16_down']),
  kp_bf16_fma: F(`// a bf16 fma of bits x, y, z (nvcc's bf16 add, sub and mul on sm_80 are fma.rn.bf16 with 1, -1 or -0) with
// subnormal operands and results (kp_bf16_addsub): where one is subnormal or the f32 result is 0 or subnormal, and
// the factor with the smaller exponent and z are at most 2^63 and x·y below 2^64, (x·y + z)·2^64 from the bits
// (that factor and z scaled, exact, normal; a product of 2^64 or more leaves a subnormal z no weight), rounded to
// odd in f32 (kp_fma_odd), brought back by kp_bf16_down (a rounding at least 2 bits narrower: the fma correctly
// rounded)
fn kp_bf16_fma(x: u32, y: u32, z: u32) -> u32 {
  let r = kp_fma_odd(kp_bf2f(x), kp_bf2f(y), kp_bf2f(z));
  let ex = (x >> 7u) & 0xffu; let ey = (y >> 7u) & 0xffu; let ez = (z >> 7u) & 0xffu;
  let tiny = kp_bf16_sub(x) | kp_bf16_sub(y) | kp_bf16_sub(z) | ((bitcast<u32>(r) & 0x7f800000u) == 0u);
  let small = select(y, x, ex <= ey); let big = select(x, y, ex <= ey);
  let slow = tiny & (min(ex, ey) <= 190u) & ((ez <= 190u) | (ez == 255u)) & (ex + ey < 318u);
  return select(kp_f2bf(r), kp_bf16_down(kp_fma_odd(kp_bf16_up(small), kp_bf2f(big), kp_bf16_up(z))), slow);
}`, ['kp_bf2f', 'kp_f2bf', 'kp_fma_odd', 'kp_bf16_sub', 'kp_bf16_up', 'kp_bf16_down']),
  kp_bf16_sub: F(`// bf16 bits h are a subnormal (not zero)
fn kp_bf16_sub(h: u32) -> bool { return ((h & 0x7f80u) == 0u) & ((h & 0x7fu) != 0u); }`),
  kp_bf16_up: F(`// a bf16 (bits h, exponent at most 190, or ±Inf or NaN: itself) times 2^64 as an f32, from its bits: a
// subnormal one f32(m)·2^-69
fn kp_bf16_up(h: u32) -> f32 {
  let e = (h >> 7u) & 0xffu;
  let v = select(select(bitcast<f32>(((h & 0x7fffu) << 16u) + 0x20000000u), kp_bf2f(h & 0x7fffu), e == 255u), f32(h & 0x7fu) * 1.6940658945086007e-21, e == 0u);
  return bitcast<f32>(bitcast<u32>(v) | ((h & 0x8000u) << 16u));
}`, ['kp_bf2f']),
  kp_bf16_down: F(`// the bf16 bits of r where rs = r·2^64 (rounded to nearest even): below 2^-126 a subnormal bf16, its mantissa
// |rs|·2^69 rounded (128 is the smallest normal's bits), else rs·2^-64, normal, rounded as kp_f2bf rounds
fn kp_bf16_down(rs: f32) -> u32 {
  let s = (bitcast<u32>(rs) >> 16u) & 0x8000u;
  let a = abs(rs);
  return select(kp_f2bf(rs * 5.421010862427522e-20), s | u32(round(a * 5.902958103587057e20)), a < 2.168404344971009e-19);
}`, ['kp_f2bf']),
  kp_sub: F(`// x is subnormal (not zero)
fn kp_sub(x: f32) -> bool { let b = bitcast<u32>(x); return ((b & 0x7f800000u) == 0u) & ((b & 0x7fffffu) != 0u); }`),
  kp_rsqrt_a: F(`// rsqrt.approx.f32 with subnormal inputs supported (WGSL's inverseSqrt may read them as 0): 1/√(x·2^64) · 2^32
fn kp_rsqrt_a(x: f32) -> f32 { return select(inverseSqrt(x), inverseSqrt(kp_up64(x)) * 4294967296.0, kp_sub(x)); }`, ['kp_up64', 'kp_sub']),
  kp_sqrt_a: F(`// sqrt.approx.f32 with subnormal inputs supported: √(x·2^64) · 2^-32
fn kp_sqrt_a(x: f32) -> f32 { return select(sqrt(x), sqrt(kp_up64(x)) * 2.3283064365386963e-10, kp_sub(x)); }`, ['kp_up64', 'kp_sub']),
  kp_rcp_a: F(`// rcp.approx.f32 with subnormal inputs supported: 1/(x·2^64) · 2^64 (+-Inf where it overflows, as 1/x does)
fn kp_rcp_a(x: f32) -> f32 { return select(1.0f / x, (1.0f / kp_up64(x)) * 18446744073709551616.0, kp_sub(x)); }`, ['kp_up64', 'kp_sub']),
  kp_mul_up: F(`// x·c for c a power of two of at least 2^23, cs = c·2^-149: a subnormal x from its bits (f32(m)·cs, exact and
// normal), as libdevice scales a subnormal argument (logf, log2f: x·2^23) on devices that would read it as 0
fn kp_mul_up(x: f32, c: f32, cs: f32) -> f32 {
  let b = bitcast<u32>(x);
  return select(kp_nc(x * kp_nc(c)), bitcast<f32>(bitcast<u32>(f32(b & 0x7fffffu) * cs) | (b & 0x80000000u)), kp_sub(x));
}`, ['kp_nc', 'kp_sub']),
  kp_ex2: F(`// ex2.approx.f32 (PTX ISA: +0 at −Inf, +Inf at +Inf): 2^x as 2^frac scaled by 2^(integer part), so that no
// implementation's exp2 range limits matter; NaN stays NaN
fn kp_ex2(x: f32) -> f32 {
  let b = bitcast<u32>(x) & 0x7fffffffu;
  let fl = floor(x);
  // (clamped: a value outside is replaced below, and converting it to i32 is the implementation's choice)
  let n = i32(clamp(fl, -300.0, 300.0));
  let f = exp2(x - fl);
  // 2^n from its bits (SwiftShader's ldexp overflows past 2^63), in two steps below the smallest normal
  let v = select((f * bitcast<f32>(u32(n + 191) << 23u)) * 5.421010862427522e-20, f * bitcast<f32>(u32(n + 127) << 23u), n >= -126);
  return select(select(select(v, 0.0, x < -150.0), kp_f32_bits(0x7f800000u), x >= 128.0), kp_f32_bits(0x7fffffffu), b > 0x7f800000u);
}`, ['kp_f32_bits']),
  kp_copysign: F(`fn kp_copysign(x: f32, s: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}`),
  kp_testp: F(`// testp.{finite,infinite,number,notanumber,normal,subnormal}.f32 (mode 0..5)
fn kp_testp(x: f32, mode: u32) -> bool {
  let e = bitcast<u32>(x) & 0x7f800000u;
  let m = bitcast<u32>(x) & 0x007fffffu;
  switch (mode) {
    case 0u: { return e != 0x7f800000u; }
    case 1u: { return e == 0x7f800000u && m == 0u; }
    case 2u: { return !(e == 0x7f800000u && m != 0u); }
    case 3u: { return e == 0x7f800000u && m != 0u; }
    case 4u: { return e != 0u && e != 0x7f800000u; }
    default: { return e == 0u && m != 0u; }
  }
}`),

  // --- float → integer (cvt.{rni,rzi,rmi,rpi}.{s,u}{8,16,32,64}.f32: saturating, NaN → 0) ---
  kp_round: F(`// the integer rounding of cvt: 0 rni (nearest even), 1 rzi, 2 rmi, 3 rpi
fn kp_round(x: f32, mode: u32) -> f32 {
  switch (mode) {
    case 0u: { return round(x); }
    case 2u: { return floor(x); }
    case 3u: { return ceil(x); }
    default: { return trunc(x); }
  }
}`),
  kp_f2s32: F(`fn kp_f2s32(x: f32, mode: u32) -> u32 {
  if (kp_isnan(x)) { return 0u; }
  let r = kp_round(x, mode);
  if (r <= -2147483648.0) { return 0x80000000u; }
  if (r >= 2147483648.0) { return 0x7fffffffu; }
  return bitcast<u32>(i32(r));
}`, ['kp_isnan', 'kp_round']),
  kp_f2u32: F(`fn kp_f2u32(x: f32, mode: u32) -> u32 {
  if (kp_isnan(x)) { return 0u; }
  let r = kp_round(x, mode);
  if (r <= 0.0) { return 0u; }
  if (r >= 4294967296.0) { return 0xffffffffu; }
  return u32(r);
}`, ['kp_isnan', 'kp_round']),
  kp_f2sN: F(`// to a signed integer of 8 or 16 bits: saturated, as its low bits
fn kp_f2sN(x: f32, mode: u32, bits: u32) -> u32 {
  if (kp_isnan(x)) { return 0u; }
  let hi = f32((1u << (bits - 1u)) - 1u);
  let r = clamp(kp_round(x, mode), -hi - 1.0, hi);
  return bitcast<u32>(i32(r)) & ((1u << bits) - 1u);
}`, ['kp_isnan', 'kp_round']),
  kp_f2uN: F(`fn kp_f2uN(x: f32, mode: u32, bits: u32) -> u32 {
  if (kp_isnan(x)) { return 0u; }
  let r = clamp(kp_round(x, mode), 0.0, f32((1u << bits) - 1u));
  return u32(r);
}`, ['kp_isnan', 'kp_round']),
  kp_f2u64: F(`fn kp_f2u64(x: f32, mode: u32) -> vec2<u32> {
  if (kp_isnan(x)) { return vec2<u32>(0u, 0u); }
  let r = kp_round(x, mode);
  if (r <= 0.0) { return vec2<u32>(0u, 0u); }
  if (r >= 18446744073709551616.0) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  // r is an integer below 2^64 with 24 significant bits: both parts are exact
  let hi = floor(r / 4294967296.0);
  return vec2<u32>(u32(r - hi * 4294967296.0), u32(hi));
}`, ['kp_isnan', 'kp_round']),
  kp_f2s64: F(`fn kp_f2s64(x: f32, mode: u32) -> vec2<u32> {
  if (kp_isnan(x)) { return vec2<u32>(0u, 0u); }
  let r = kp_round(x, mode);
  if (r <= -9223372036854775808.0) { return vec2<u32>(0u, 0x80000000u); }
  if (r >= 9223372036854775808.0) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  let a = abs(r);
  let hi = floor(a / 4294967296.0);
  let m = vec2<u32>(u32(a - hi * 4294967296.0), u32(hi));
  if (r < 0.0) { return kp_neg64(m); }
  return m;
}`, ['kp_isnan', 'kp_round', 'kp_neg64']),
  kp_u32_to_f32: F(`// cvt.rn.f32.u32 in integer arithmetic: WGSL leaves the rounding of an inexact f32(u32) to the
// implementation, and SwiftShader rounds u32 values from 2^31 up to the wrong neighbour
fn kp_u32_to_f32(x: u32) -> f32 {
  if (x < 0x1000000u) { return f32(x); }
  let n = countLeadingZeros(x);
  let sh = 8u - n;
  let m = x >> sh;
  let rem = x & ((1u << sh) - 1u);
  let half = 1u << (sh - 1u);
  let up = select(0u, 1u, rem > half || (rem == half && (m & 1u) == 1u));
  // a carry out of the mantissa field moves into the exponent: the next power of two
  return bitcast<f32>(((158u - n) << 23u) + (m & 0x7fffffu) + up);
}`),
  kp_round_up: F(`// whether a value cut after its last kept digit rounds up in magnitude (mode 0 rn, 1 rz, 2 rm, 3 rp): half is the
// first bit cut, below any bit after it, odd the last kept bit, neg the sign; the one rounding decision of the
// exact routines (kp_f32_pack, kp_fpack, kp_f64_add, kp_f64_to_small)
fn kp_round_up(mode: u32, half: bool, below: bool, odd: bool, neg: bool) -> bool {
  let inexact = half | below;
  return ((mode == 0u) & half & (below | odd)) | ((mode == 2u) & inexact & neg) | ((mode == 3u) & inexact & !neg);
}`),
  kp_rounds_to_inf: F(`// whether an overflow rounds to infinity (else to the largest finite value) in mode 0 rn, 1 rz, 2 rm, 3 rp
fn kp_rounds_to_inf(mode: u32, neg: bool) -> bool { return (mode == 0u) | ((mode == 2u) & neg) | ((mode == 3u) & !neg); }`),
  kp_f32_pack: F(`// sign · s · 2^(e − 31) (s with its top bit set; sticky: nonzero bits below s) rounded (mode 0 rn, 1 rz, 2 rm,
// 3 rp) to binary32 bits: subnormals, and overflow to infinity or the largest finite value as the mode rounds,
// as IEEE 754 gives them. Selects only, no branch: SwiftShader's pipeline compile time grows steeply with the
// branches of inlined sites (README.md, "Floats"); & and | on bool evaluate both sides
fn kp_f32_pack(sign: u32, s: u32, e: i32, sticky: bool, mode: u32) -> u32 {
  let be = e + 127;
  // the bits of s below the kept ones: 8 for a normal, one more per step below the smallest normal
  let sh = u32(select(8, 9 - be, be <= 0));
  let sh1 = min(sh, 32u) - 1u;
  let keep = select(s >> min(sh, 31u), 0u, sh >= 32u);
  let r = select((s >> sh1) & 1u, 0u, sh > 32u) != 0u;
  let lower = sticky | (sh > 32u) | ((s & ((1u << sh1) - 1u)) != 0u);
  let neg = sign != 0u;
  let up = kp_round_up(mode, r, lower, (keep & 1u) != 0u, neg);
  // a normal's hidden bit carries into its exponent field; a subnormal's rounding into the smallest normal
  let bits = select((u32(be - 1) << 23u) + keep, keep, be <= 0) + select(0u, 1u, up);
  return sign | select(bits, select(0x7f7fffffu, 0x7f800000u, kp_rounds_to_inf(mode, neg)), (be >= 255) | (bits >= 0x7f800000u));
}`, ['kp_round_up', 'kp_rounds_to_inf']),
  kp_f32_div: F(`// div.{rn,rz,rm,rp}.f32 and rcp (mode 0–3) of f32 bits, exact (WGSL's x / y may be 2.5 ulp off): the
// significands' quotient q = floor(ma · 2^26 / mb) and whether it leaves a remainder, rounded once (kp_f32_pack).
// WGSL's division of the significands (both exact in f32) gives q within 41 units; the remainder
// ma · 2^26 − q · mb is then below 2^31 in magnitude, so its low 32 bits (u32 products, wrapping) are exact:
// one Newton step on it, then one unit either way where its sign or size says so. IEEE 754's special cases,
// NaN results 0x7fffffff. Selects only, no integer division (SwiftShader has no vector one)
fn kp_f32_div(a: u32, b: u32, mode: u32) -> u32 {
  let sign = (a ^ b) & 0x80000000u;
  let aa = a & 0x7fffffffu; let ab = b & 0x7fffffffu;
  let nan = (aa > 0x7f800000u) | (ab > 0x7f800000u) | ((aa == 0u) & (ab == 0u)) | ((aa == 0x7f800000u) & (ab == 0x7f800000u));
  let inf = (aa == 0x7f800000u) | (ab == 0u);
  let zero = (aa == 0u) | (ab == 0x7f800000u);
  // the significands with their top bit at bit 23 (subnormals normalized); a = ma · 2^(xa − 150)
  let ea = aa >> 23u; let eb = ab >> 23u;
  let fa = (aa & 0x7fffffu) | select(0u, 0x800000u, ea != 0u);
  let fb = (ab & 0x7fffffu) | select(0u, 0x800000u, eb != 0u);
  // the shifts from f32(f)'s exponent, exact below 2^24 (countLeadingZeros is many times dearer on SwiftShader)
  let la = 150u - (bitcast<u32>(f32(fa)) >> 23u); let lb = 150u - (bitcast<u32>(f32(fb)) >> 23u);
  let ma = max(fa << la, 0x800000u); let mb = max(fb << lb, 0x800000u);
  let xa = i32(max(ea, 1u)) - i32(la); let xb = i32(max(eb, 1u)) - i32(lb);
  let n = ma << 26u;
  let q0 = u32(f32(ma) / f32(mb) * 67108864.0);
  let q1 = u32(i32(q0) + i32(floor(f32(bitcast<i32>(n - q0 * mb)) / f32(mb))));
  let r1 = bitcast<i32>(n - q1 * mb);
  let q2 = select(q1, q1 - 1u, r1 < 0);
  let r2 = select(r1, r1 + i32(mb), r1 < 0);
  let q = select(q2, q2 + 1u, r2 >= i32(mb));
  let r = select(r2, r2 - i32(mb), r2 >= i32(mb));
  // q is in [2^25, 2^27)
  let lz = select(6u, 5u, q >= 0x4000000u);
  let v = kp_f32_pack(sign, q << lz, 5 - i32(lz) + xa - xb, r != 0, mode);
  return select(select(select(v, sign, zero), sign | 0x7f800000u, inf), 0x7fffffffu, nan);
}`, ['kp_f32_pack']),
  kp_f32_sqrt: F(`// sqrt.{rn,rz,rm,rp}.f32 (mode 0–3) of f32 bits, exact (WGSL's sqrt need not be correctly rounded):
// y = floor(√M) for M = m · 2^t (t 26 or 27, so that a's exponent minus t is even, y in [2^24.5, 2^25.5)): WGSL's
// sqrt of M (exact in f32) as the estimate, within 16 units (4 to 8 ulp of f32 there; the remainder M − y², about
// 2·y·16, then stays below 2^31), one Newton step on that remainder, then y moved by one where the remainder
// says so; the remainder's sticky bit,
// rounded once (kp_f32_pack); √±0 = ±0, √+∞ = +∞, NaN below zero and for NaN (0x7fffffff). Selects only
fn kp_f32_sqrt(a: u32, mode: u32) -> u32 {
  let ea = (a >> 23u) & 0xffu;
  let f = (a & 0x7fffffu) | select(0u, 0x800000u, ea != 0u);
  let l = 150u - (bitcast<u32>(f32(f)) >> 23u);
  let m = f << l;
  let x = i32(max(ea, 1u)) - i32(l) - 150;
  let t = select(26u, 27u, (x & 1) != 0);
  // M's low 32 bits: every remainder M − y² below is under 2^31 in magnitude, so its low 32 bits (u32 products,
  // wrapping) are exact
  let lo = m << t;
  let y0 = u32(sqrt(f32(m) * f32(1u << t)));
  let y1 = u32(i32(y0) + i32(floor(f32(bitcast<i32>(lo - y0 * y0)) / f32(2u * y0))));
  let r1 = bitcast<i32>(lo - y1 * y1);
  // one too big: (y1 − 1)² = y1² − 2·y1 + 1
  let y2 = select(y1, y1 - 1u, r1 < 0);
  let r2 = select(r1, r1 + i32(2u * y1 - 1u), r1 < 0);
  // one too small: the remainder reaches 2·y2 + 1
  let small = r2 > i32(2u * y2);
  let y = select(y2, y2 + 1u, small);
  let r = select(r2, r2 - i32(2u * y2 + 1u), small);
  // y is in [2^24, 2^26)
  let lz = select(7u, 6u, y >= 0x2000000u);
  let v = kp_f32_pack(0u, y << lz, 31 - i32(lz) + (x - i32(t)) / 2, r != 0, mode);
  let nan = ((a & 0x7fffffffu) > 0x7f800000u) | (a > 0x80000000u);
  return select(select(v, a, ((a & 0x7fffffffu) == 0u) | (a == 0x7f800000u)), 0x7fffffffu, nan);
}`, ['kp_f32_pack']),
  kp_u32_to_f32_mode: F(`// cvt.{rz,rm,rp}.f32.u32 (mode 1–3; 0 is kp_u32_to_f32) of the magnitude m with the sign bit sign
fn kp_u32_to_f32_mode(sign: u32, m: u32, mode: u32) -> u32 {
  let lz = countLeadingZeros(m);
  return select(kp_f32_pack(sign, m << min(lz, 31u), 31 - i32(lz), false, mode), 0u, m == 0u);
}`, ['kp_f32_pack']),
  kp_u64_to_f32_mode: F(`// cvt.{rz,rm,rp}.f32.u64 (mode 1–3) of the magnitude a with the sign bit sign: the top 32 bits from the first
// set one, the rest as a sticky bit
fn kp_u64_to_f32_mode(sign: u32, a: vec2<u32>, mode: u32) -> u32 {
  let n = countLeadingZeros(a.y);
  let top = select((a.y << n) | (a.x >> (32u - n)), a.y, n == 0u);
  let hi = kp_f32_pack(sign, top, 63 - i32(n), (a.x << n) != 0u, mode);
  return select(kp_u32_to_f32_mode(sign, a.x, mode), hi, a.y != 0u);
}`, ['kp_f32_pack', 'kp_u32_to_f32_mode']),
  kp_s32_to_f32: F(`fn kp_s32_to_f32(x: i32) -> f32 {
  let m = kp_u32_to_f32(select(bitcast<u32>(x), 0u - bitcast<u32>(x), x < 0));
  return select(m, -m, x < 0);
}`, ['kp_u32_to_f32']),
  kp_u64_to_f32: F(`// cvt.rn.f32.u64: one rounding (the bits below the 32 kept ones only decide ties, as a sticky bit)
fn kp_u64_to_f32(a: vec2<u32>) -> f32 {
  if (a.y == 0u) { return kp_u32_to_f32(a.x); }
  let n = countLeadingZeros(a.y);
  let top = select((a.y << n) | (a.x >> (32u - n)), a.y, n == 0u);
  let rest = a.x << n;
  let t = top | select(0u, 1u, rest != 0u);
  return ldexp(kp_u32_to_f32(t), i32(32u - n));
}`, ['kp_u32_to_f32']),
  kp_s64_to_f32: F(`fn kp_s64_to_f32(a: vec2<u32>) -> f32 {
  if ((a.y & 0x80000000u) != 0u) { return -kp_u64_to_f32(kp_neg64(a)); }
  return kp_u64_to_f32(a);
}`, ['kp_u64_to_f32', 'kp_neg64']),

  // --- 64-bit integers as vec2<u32> (lo, hi) ---
  kp_add64: F(`fn kp_add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}`),
  kp_sub64: F(`fn kp_sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}`),
  kp_neg64: F(`fn kp_neg64(a: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(0u - a.x, 0u - a.y - select(0u, 1u, a.x != 0u));
}`),
  kp_mulwide_u32: F(`// full 64-bit product of two u32, by 16-bit limbs
fn kp_mulwide_u32(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u;
  let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  let lo = (p00 & 0xffffu) | (mid << 16u);
  let hi = p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
  return vec2<u32>(lo, hi);
}`),
  kp_mulwide_s32: F(`fn kp_mulwide_s32(a: u32, b: u32) -> vec2<u32> {
  var p = kp_mulwide_u32(a, b);
  // (a - 2^32·sa)(b - 2^32·sb) = ab - 2^32(sa·b + sb·a) mod 2^64
  if ((a & 0x80000000u) != 0u) { p.y = p.y - b; }
  if ((b & 0x80000000u) != 0u) { p.y = p.y - a; }
  return p;
}`, ['kp_mulwide_u32']),
  kp_mul64: F(`fn kp_mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  var p = kp_mulwide_u32(a.x, b.x);
  p.y = p.y + a.x * b.y + a.y * b.x;
  return p;
}`, ['kp_mulwide_u32']),
  kp_mulhi_u64: F(`// high 64 bits of the 128-bit unsigned product
fn kp_mulhi_u64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let ll = kp_mulwide_u32(a.x, b.x);
  let lh = kp_mulwide_u32(a.x, b.y);
  let hl = kp_mulwide_u32(a.y, b.x);
  let hh = kp_mulwide_u32(a.y, b.y);
  // column 1 (bits 32..63): ll.y + lh.x + hl.x, carries into column 2
  let c1a = ll.y + lh.x;
  var carry = select(0u, 1u, c1a < ll.y);
  let c1 = c1a + hl.x;
  carry = carry + select(0u, 1u, c1 < c1a);
  var r = kp_add64(hh, vec2<u32>(lh.y, 0u));
  r = kp_add64(r, vec2<u32>(hl.y, 0u));
  r = kp_add64(r, vec2<u32>(carry, 0u));
  return r;
}`, ['kp_mulwide_u32', 'kp_add64']),
  kp_mulhi_s64: F(`fn kp_mulhi_s64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  var r = kp_mulhi_u64(a, b);
  if ((a.y & 0x80000000u) != 0u) { r = kp_sub64(r, b); }
  if ((b.y & 0x80000000u) != 0u) { r = kp_sub64(r, a); }
  return r;
}`, ['kp_mulhi_u64', 'kp_sub64']),
  kp_mulhi_u32: F(`fn kp_mulhi_u32(a: u32, b: u32) -> u32 { return kp_mulwide_u32(a, b).y; }`, ['kp_mulwide_u32']),
  kp_mulhi_s32: F(`fn kp_mulhi_s32(a: u32, b: u32) -> u32 { return kp_mulwide_s32(a, b).y; }`, ['kp_mulwide_s32']),
  // 64-bit shifts by any amount (0 from 64 on), selects only: SwiftShader's pipeline compile grows steeply with the
  // branches of inlined sites
  kp_shl64: F(`fn kp_shl64(a: vec2<u32>, n: u32) -> vec2<u32> {
  let b = n & 31u;
  let v = select(a, vec2<u32>(0u, a.x), n >= 32u);
  return select(vec2<u32>(v.x << b, (v.y << b) | select(v.x >> (32u - b), 0u, b == 0u)), vec2<u32>(0u), n >= 64u);
}`),
  kp_shr_u64: F(`fn kp_shr_u64(a: vec2<u32>, n: u32) -> vec2<u32> {
  let b = n & 31u;
  let v = select(a, vec2<u32>(a.y, 0u), n >= 32u);
  return select(vec2<u32>((v.x >> b) | select(v.y << (32u - b), 0u, b == 0u), v.y >> b), vec2<u32>(0u), n >= 64u);
}`),
  kp_shr_s64: F(`fn kp_shr_s64(a: vec2<u32>, n0: u32) -> vec2<u32> {
  let n = min(n0, 63u);
  let sign = select(0u, 0xffffffffu, (a.y & 0x80000000u) != 0u);
  if (n >= 32u) { return vec2<u32>(bitcast<u32>(bitcast<i32>(a.y) >> (n - 32u)), sign); }
  if (n == 0u) { return a; }
  return vec2<u32>((a.x >> n) | (a.y << (32u - n)), bitcast<u32>(bitcast<i32>(a.y) >> n));
}`),
  kp_ult64: F(`fn kp_ult64(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }`),
  kp_slt64: F(`fn kp_slt64(a: vec2<u32>, b: vec2<u32>) -> bool {
  let sa = bitcast<i32>(a.y); let sb = bitcast<i32>(b.y);
  return sa < sb || (sa == sb && a.x < b.x);
}`),
  kp_divrem_u64: F(`// unsigned 64-bit division by shift and subtract: (quotient, remainder); b = 0 gives (all ones, a)
fn kp_divrem_u64(a: vec2<u32>, b: vec2<u32>) -> array<vec2<u32>, 2> {
  if (b.x == 0u && b.y == 0u) { return array<vec2<u32>, 2>(vec2<u32>(0xffffffffu, 0xffffffffu), a); }
  if (a.y == 0u && b.y == 0u) { return array<vec2<u32>, 2>(vec2<u32>(a.x / b.x, 0u), vec2<u32>(a.x % b.x, 0u)); }
  var q = vec2<u32>(0u, 0u);
  var r = vec2<u32>(0u, 0u);
  for (var i = 63i; i >= 0i; i = i - 1i) {
    r = kp_shl64(r, 1u);
    let bit = select((a.x >> u32(i)) & 1u, (a.y >> u32(i - 32i)) & 1u, i >= 32i);
    r.x = r.x | bit;
    if (!kp_ult64(r, b)) {
      r = kp_sub64(r, b);
      if (i >= 32i) { q.y = q.y | (1u << u32(i - 32i)); } else { q.x = q.x | (1u << u32(i)); }
    }
  }
  return array<vec2<u32>, 2>(q, r);
}`, ['kp_shl64', 'kp_ult64', 'kp_sub64']),
  kp_divrem_s64: F(`// signed: quotient truncates toward zero, the remainder has the dividend's sign; b = 0 gives (-1, a)
fn kp_divrem_s64(a: vec2<u32>, b: vec2<u32>) -> array<vec2<u32>, 2> {
  if (b.x == 0u && b.y == 0u) { return array<vec2<u32>, 2>(vec2<u32>(0xffffffffu, 0xffffffffu), a); }
  let na = (a.y & 0x80000000u) != 0u;
  let nb = (b.y & 0x80000000u) != 0u;
  let ua = select(a, kp_neg64(a), na);
  let ub = select(b, kp_neg64(b), nb);
  let qr = kp_divrem_u64(ua, ub);
  return array<vec2<u32>, 2>(select(qr[0], kp_neg64(qr[0]), na != nb), select(qr[1], kp_neg64(qr[1]), na));
}`, ['kp_neg64', 'kp_divrem_u64']),
  kp_div_u32: F(`// div.u32 by zero gives all ones (as the emulator)
fn kp_div_u32(a: u32, b: u32) -> u32 { return select(a / b, 0xffffffffu, b == 0u); }`),
  kp_rem_u32: F(`fn kp_rem_u32(a: u32, b: u32) -> u32 { return select(a % b, a, b == 0u); }`),
  kp_div_s32: F(`fn kp_div_s32(a: u32, b: u32) -> u32 {
  let q = select(bitcast<u32>(bitcast<i32>(a) / bitcast<i32>(b)), a, (a == 0x80000000u) & (b == 0xffffffffu));
  return select(q, 0xffffffffu, b == 0u);
}`),
  kp_rem_s32: F(`fn kp_rem_s32(a: u32, b: u32) -> u32 {
  let r = select(bitcast<u32>(bitcast<i32>(a) % bitcast<i32>(b)), 0u, (a == 0x80000000u) & (b == 0xffffffffu));
  return select(r, a, b == 0u);
}`),
  kp_popc64: F(`fn kp_popc64(a: vec2<u32>) -> u32 { return countOneBits(a.x) + countOneBits(a.y); }`),
  kp_clz64: F(`fn kp_clz64(a: vec2<u32>) -> u32 { return select(32u + countLeadingZeros(a.x), countLeadingZeros(a.y), a.y != 0u); }`),
  kp_brev64: F(`fn kp_brev64(a: vec2<u32>) -> vec2<u32> { return vec2<u32>(reverseBits(a.y), reverseBits(a.x)); }`),
  kp_bfind32: F(`// bfind: bit position of the most significant non-sign bit, 0xffffffff when there is none
fn kp_bfind32(a: u32, signed: bool, shiftamt: bool) -> u32 {
  var x = a;
  if (signed && (a & 0x80000000u) != 0u) { x = ~a; }
  if (x == 0u) { return 0xffffffffu; }
  let pos = 31u - countLeadingZeros(x);
  return select(pos, 31u - pos, shiftamt);
}`),
  kp_bfind64: F(`fn kp_bfind64(a: vec2<u32>, signed: bool, shiftamt: bool) -> u32 {
  var x = a;
  if (signed && (a.y & 0x80000000u) != 0u) { x = ~a; }
  if (x.x == 0u && x.y == 0u) { return 0xffffffffu; }
  let pos = select(31u - countLeadingZeros(x.x), 63u - countLeadingZeros(x.y), x.y != 0u);
  return select(pos, 63u - pos, shiftamt);
}`),
  kp_bfe32: F(`// bfe.{u32,s32}: len bits at pos (each taken mod 256); the bits past the field (or past bit 31) are
// the field's sign for .s32, zero for .u32 (PTX ISA "bfe")
fn kp_bfe32(a: u32, pos0: u32, len0: u32, signed: bool) -> u32 {
  let pos = pos0 & 0xffu; let len = len0 & 0xffu;
  var msb = false;
  if (signed && len != 0u) { msb = select(((a >> (pos + len - 1u)) & 1u) == 1u, (a & 0x80000000u) != 0u, pos + len - 1u >= 32u); }
  let n = select(0u, min(len, 32u - pos), pos < 32u);
  let mask = select((1u << n) - 1u, 0xffffffffu, n >= 32u);
  let ex = select(0u, a >> pos, pos < 32u);
  return (ex & mask) | select(0u, ~mask, msb);
}`),
  kp_bfe64: F(`fn kp_bfe64(a: vec2<u32>, pos0: u32, len0: u32, signed: bool) -> vec2<u32> {
  let pos = pos0 & 0xffu; let len = len0 & 0xffu;
  var msb = false;
  if (signed && len != 0u) { msb = select((kp_shr_u64(a, pos + len - 1u).x & 1u) == 1u, (a.y & 0x80000000u) != 0u, pos + len - 1u >= 64u); }
  let n = select(0u, min(len, 64u - pos), pos < 64u);
  let mask = select(kp_sub64(kp_shl64(vec2<u32>(1u, 0u), n), vec2<u32>(1u, 0u)), vec2<u32>(0xffffffffu), n >= 64u);
  let ex = kp_shr_u64(a, pos);
  return (ex & mask) | select(vec2<u32>(0u), ~mask, msb);
}`, ['kp_shr_u64', 'kp_shl64', 'kp_sub64']),
  kp_bfi32: F(`// bfi.b32: insert the low len bits of a into b at pos (bits past 31 dropped)
fn kp_bfi32(a: u32, b: u32, pos0: u32, len0: u32) -> u32 {
  let pos = pos0 & 0xffu; let len = len0 & 0xffu;
  if (pos >= 32u || len == 0u) { return b; }
  let n = min(len, 32u - pos);
  let m = select((1u << n) - 1u, 0xffffffffu, n >= 32u) << pos;
  return (b & ~m) | ((a << pos) & m);
}`),
  kp_bfi64: F(`fn kp_bfi64(a: vec2<u32>, b: vec2<u32>, pos0: u32, len0: u32) -> vec2<u32> {
  let pos = pos0 & 0xffu; let len = len0 & 0xffu;
  if (pos >= 64u || len == 0u) { return b; }
  let n = min(len, 64u - pos);
  let ones = select(kp_sub64(kp_shl64(vec2<u32>(1u, 0u), n), vec2<u32>(1u, 0u)), vec2<u32>(0xffffffffu, 0xffffffffu), n >= 64u);
  let m = kp_shl64(ones, pos);
  return (b & ~m) | (kp_shl64(a, pos) & m);
}`, ['kp_shl64', 'kp_sub64']),
  kp_prmt: F(`// prmt.b32 (default mode): each selector nibble picks a byte of {b, a}; bit 3 replicates its sign
fn kp_prmt(a: u32, b: u32, c: u32) -> u32 {
  var d = 0u;
  for (var i = 0u; i < 4u; i = i + 1u) {
    let s = (c >> (4u * i)) & 0xfu;
    let k = s & 7u;
    var v = select((a >> (8u * k)) & 0xffu, (b >> (8u * (k - 4u))) & 0xffu, k >= 4u);
    if ((s & 8u) != 0u) { v = select(0u, 0xffu, (v & 0x80u) != 0u); }
    d = d | (v << (8u * i));
  }
  return d;
}`),
  kp_prmt_mode: F(`// prmt.b32.{f4e,b4e,rc8,ecl,ecr,rc16} (mode 0..5)
fn kp_prmt_mode(a: u32, b: u32, c: u32, mode: u32) -> u32 {
  let n = c & 3u;
  var sel: vec4<u32>;
  switch (mode) {
    case 0u: { sel = vec4<u32>(n, n + 1u, n + 2u, n + 3u) & vec4<u32>(7u); }
    case 1u: { sel = vec4<u32>(8u - n, 7u - n, 6u - n, 5u - n) & vec4<u32>(7u); }
    case 2u: { sel = vec4<u32>(n); }
    case 3u: { sel = select(vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(n), vec4<u32>(0u, 1u, 2u, 3u) <= vec4<u32>(n)); }
    case 4u: { sel = select(vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(n), vec4<u32>(0u, 1u, 2u, 3u) >= vec4<u32>(n)); }
    default: { sel = select(vec4<u32>(0u, 1u, 0u, 1u), vec4<u32>(2u, 3u, 2u, 3u), vec4<bool>((n & 1u) != 0u)); }
  }
  var d = 0u;
  for (var i = 0u; i < 4u; i = i + 1u) {
    let k = sel[i];
    let v = select((a >> (8u * k)) & 0xffu, (b >> (8u * (k - 4u))) & 0xffu, k >= 4u);
    d = d | (v << (8u * i));
  }
  return d;
}`),
  kp_lop3: F(`// lop3.b32: each of the eight minterms of (a, b, c) kept where its bit of the table is set (selects only)
fn kp_lop3(a: u32, b: u32, c: u32, lut: u32) -> u32 {
  let m = vec4<u32>(1u, 2u, 4u, 8u);
  let lo = select(vec4<u32>(0u), vec4<u32>(0xffffffffu), (vec4<u32>(lut) & m) != vec4<u32>(0u));
  let hi = select(vec4<u32>(0u), vec4<u32>(0xffffffffu), (vec4<u32>(lut >> 4u) & m) != vec4<u32>(0u));
  let nb = ~b; let nc = ~c;
  let t = vec4<u32>(nb & nc, nb & c, b & nc, b & c);
  let v = (vec4<u32>(~a) & t & lo) | (vec4<u32>(a) & t & hi);
  return v.x | v.y | v.z | v.w;
}`),
  kp_shf: F(`// shf.{l,r}.{clamp,wrap}.b32: funnel shift of the 64-bit value {b, a}
fn kp_shf(a: u32, b: u32, n0: u32, left: bool, clampn: bool) -> u32 {
  let n = select(n0 & 31u, min(n0, 32u), clampn);
  if (left) {
    if (n == 0u) { return b; }
    if (n >= 32u) { return a; }
    return (b << n) | (a >> (32u - n));
  }
  if (n == 0u) { return a; }
  if (n >= 32u) { return b; }
  return (a >> n) | (b << (32u - n));
}`),
  kp_dp4a: F(`fn kp_dp4a(a: u32, b: u32, c: u32, as_: bool, bs: bool) -> u32 {
  var s = bitcast<i32>(c);
  for (var i = 0u; i < 4u; i = i + 1u) {
    var x = i32((a >> (8u * i)) & 0xffu);
    var y = i32((b >> (8u * i)) & 0xffu);
    if (as_ && x >= 128i) { x = x - 256i; }
    if (bs && y >= 128i) { y = y - 256i; }
    s = s + x * y;
  }
  return bitcast<u32>(s);
}`),
  kp_dp2a: F(`fn kp_dp2a(a: u32, b: u32, c: u32, as_: bool, bs: bool, hi: bool) -> u32 {
  var s = bitcast<i32>(c);
  for (var i = 0u; i < 2u; i = i + 1u) {
    var x = i32((a >> (16u * i)) & 0xffffu);
    var y = i32((b >> (8u * (i + select(0u, 2u, hi)))) & 0xffu);
    if (as_ && x >= 32768i) { x = x - 65536i; }
    if (bs && y >= 128i) { y = y - 256i; }
    s = s + x * y;
  }
  return bitcast<u32>(s);
}`),
  kp_add_sat_s32: F(`fn kp_add_sat_s32(a: u32, b: u32) -> u32 {
  let s = a + b;
  // overflow when both operands have the same sign and the sum's sign differs
  if (((a ^ s) & (b ^ s) & 0x80000000u) != 0u) { return select(0x7fffffffu, 0x80000000u, (a & 0x80000000u) != 0u); }
  return s;
}`),
  kp_sub_sat_s32: F(`fn kp_sub_sat_s32(a: u32, b: u32) -> u32 {
  let s = a - b;
  if (((a ^ b) & (a ^ s) & 0x80000000u) != 0u) { return select(0x7fffffffu, 0x80000000u, (a & 0x80000000u) != 0u); }
  return s;
}`),
  kp_sext: F(`// the low bits of a as a signed value of that width, extended to 32 bits
fn kp_sext(a: u32, bits: u32) -> u32 { return bitcast<u32>(bitcast<i32>(a << (32u - bits)) >> (32u - bits)); }`),

  // --- half precision (f16 and bf16 as their bits in a u32) ---
  kp_h2f: F(`// f16 bits → f32 (exact); a NaN keeps its sign and payload, quieted (numeric.ts fromSmallFloat)
fn kp_h2f(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  // infinity or NaN; a subnormal: m · 2^-24, exact in f32; a normal
  let sub = s | bitcast<u32>(f32(m) * 5.9604644775390625e-8);
  return bitcast<f32>(select(select(s | ((e + 112u) << 23u) | (m << 13u), sub, e == 0u), s | 0x7f800000u | (m << 13u) | select(0u, 0x400000u, m != 0u), e == 0x1fu));
}`),
  kp_f2h: F(`// f32 → f16 bits, rounding to nearest even; overflow gives infinity, NaN the canonical 0x7fff
fn kp_f2h(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let s = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  // a normal f16 (≥ 2^-14): the bits rounded to even at bit 13
  let r = a + 0x0fffu + ((a >> 13u) & 1u);
  let nrm = s | ((r - 0x38000000u) >> 13u);
  // a subnormal f16: the significand with its hidden bit, shifted to units of 2^-24 (14..24 bits dropped), rounded
  // to even
  let sh = clamp(126u - min(a >> 23u, 126u), 1u, 31u);
  let m = (a & 0x7fffffu) | 0x800000u;
  let q = m >> sh;
  let rem = m & ((1u << sh) - 1u);
  let half = 1u << (sh - 1u);
  let sub = s | (q + select(0u, 1u, (rem > half) | ((rem == half) & ((q & 1u) == 1u))));
  // below half the smallest subnormal: zero; from 65520 on: infinity; NaN. Selects only, no branch
  return select(select(select(select(sub, s, a < 0x33000000u), nrm, a >= 0x38800000u), s | 0x7c00u, a >= 0x477ff000u), 0x7fffu, a > 0x7f800000u);
}`),
  kp_f2h_mode: F(`// f32 → f16 with rounding mode 0 rn, 1 rz, 2 rm, 3 rp (cvt.{rn,rz,rm,rp}.f16.f32), satfinite on request
fn kp_f2h_mode(x: f32, mode: u32, satfinite: bool) -> u32 {
  let b = bitcast<u32>(x);
  let neg = (b & 0x80000000u) != 0u;
  let s = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return 0x7fffu; }
  if (mode == 0u) {
    let h = kp_f2h(x);
    if (satfinite && (h & 0x7fffu) == 0x7c00u) { return s | 0x7bffu; }
    return h;
  }
  if (a == 0x7f800000u) { return select(s | 0x7c00u, s | 0x7bffu, satfinite); }
  // truncation toward zero, then one step away from zero when the mode asks and bits were dropped
  var h: u32; var exact: bool;
  if (a >= 0x38800000u) {
    let t = (a - 0x38000000u) >> 13u;
    h = min(t, 0x7c00u); exact = (a & 0x1fffu) == 0u && t < 0x7c00u;
  } else if (a < 0x33000000u) {
    h = 0u; exact = a == 0u;
  } else {
    let e = a >> 23u; let m = (a & 0x7fffffu) | 0x800000u; let sh = 126u - e;
    h = m >> sh; exact = (m & ((1u << sh) - 1u)) == 0u;
  }
  let away = !exact && ((mode == 3u && !neg) || (mode == 2u && neg));
  if (away) { h = h + 1u; }
  if (h >= 0x7c00u) { h = select(0x7bffu, 0x7c00u, away && !satfinite); }
  return s | h;
}`, ['kp_f2h']),
  kp_bf2f: F(`// bf16 bits → f32 (exact); a NaN keeps its sign and payload, quieted (numeric.ts fromSmallFloat)
fn kp_bf2f(h: u32) -> f32 { let u = (h & 0xffffu) << 16u; return bitcast<f32>(select(u, u | 0x400000u, (u & 0x7fffffffu) > 0x7f800000u)); }`),
  kp_f2bf: F(`// f32 → bf16 bits, rounding to nearest even; NaN gives 0x7fff
fn kp_f2bf(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return 0x7fffu; }
  return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}`),
  kp_f2bf_mode: F(`fn kp_f2bf_mode(x: f32, mode: u32, satfinite: bool) -> u32 {
  let b = bitcast<u32>(x);
  let a = b & 0x7fffffffu;
  let neg = (b & 0x80000000u) != 0u;
  if (a > 0x7f800000u) { return 0x7fffu; }
  var h: u32;
  if (mode == 0u) { h = kp_f2bf(x); }
  else {
    h = b >> 16u;
    let exact = (b & 0xffffu) == 0u;
    if (!exact && a != 0x7f800000u && ((mode == 3u && !neg) || (mode == 2u && neg))) { h = h + 1u; }
  }
  if (satfinite && (h & 0x7fffu) == 0x7f80u) { h = (h & 0x8000u) | 0x7f7fu; }
  return h;
}`, ['kp_f2bf']),
  kp_relu16: F(`// .relu on a half result: negative values become +0, NaN the canonical NaN
fn kp_relu16(h: u32, bf: bool) -> u32 {
  let nan = select((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0u, (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0u, bf);
  if (nan) { return 0x7fffu; }
  if ((h & 0x8000u) != 0u) { return 0u; }
  return h;
}`),
  kp_fma_rn: F(`// fma.rn.f32: a·b + c rounded once, as PTX's fma.rn.f32. WGSL's fma() may round the product first, and
// SwiftShader's does: where the device's fma() is not fused (override kp_fma_exact, from fma-probe.ts), Boldo and
// Melquiond's emulated fma ("Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
// odd"): the product's exact error by Veltkamp's split and Dekker's product, the sum's by TwoSum, the two errors
// added with rounding to odd, then one rounding to nearest. No branch: SwiftShader compiles a pipeline with
// branchy inlined sites in time that grows with their number (minutes at 12). Every step is exact when a and b
// lie between 2^-103 and 2^113 in magnitude with a·b ≥ 2^-78 (ea + eb ≥ 176) and below 2^125, and c is 0 or
// between 2^-103 and 2^125 (every value, the halves of a and b included, a multiple of 2^-126: none subnormal,
// so flushing cannot change one); c = 0 is the product rounded once. Elsewhere (zeros, infinities, NaN,
// subnormals, extreme exponents), and on GPUs, whose fma is fused, WGSL's fma().
fn kp_fma_rn(a: f32, b: f32, c: f32) -> f32 {
  if (!kp_fma_exact) { return fma(a, b, c); }
  let p = a * b;
  let ea = (bitcast<u32>(a) >> 23u) & 0xffu; let eb = (bitcast<u32>(b) >> 23u) & 0xffu;
  let ep = (bitcast<u32>(p) >> 23u) & 0xffu; let ec = (bitcast<u32>(c) >> 23u) & 0xffu;
  let cz = (bitcast<u32>(c) & 0x7fffffffu) == 0u;
  let exact = (ea - 24u <= 215u) & (eb - 24u <= 215u) & (ea + eb >= 176u) & (ep <= 251u) & (cz | ((ec >= 24u) & (ec <= 251u)));
  let ca = 4097.0 * a; let ah = ca - (ca - a); let al = a - ah;
  let cb = 4097.0 * b; let bh = cb - (cb - b); let bl = b - bh;
  let ul = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  let th = c + p; let z = th - c; let tl = (c - (th - z)) + (p - z);
  let s = tl + ul; let sz = s - tl; let err = (tl - (s - sz)) + (ul - sz);
  // s rounded to odd: one ulp toward the exact sum where s is inexact and its last bit even
  let sb = bitcast<u32>(s);
  let v = select(s, bitcast<f32>(select(sb - 1u, sb + 1u, (err > 0.0) == (s > 0.0))), (err != 0.0) & ((sb & 1u) == 0u) & ((sb & 0x7fffffffu) != 0u));
  return select(fma(a, b, c), select(th + v, p + c, cz), exact);
}`),
  kp_fma_batch: F(`// a run of independent fma.rn.f32 sites through one loop (fma-batch.ts): the sites' operands in kp_fma_a, kp_fma_b and
// kp_fma_c, each result back in kp_fma_c; the loop's body (kp_fma_rn) is compiled once for the whole run
var<private> kp_fma_a: array<f32, ${FMA_BATCH_MAX}>;
var<private> kp_fma_b: array<f32, ${FMA_BATCH_MAX}>;
var<private> kp_fma_c: array<f32, ${FMA_BATCH_MAX}>;
fn kp_fma_batch(n: u32) {
  for (var i = 0u; i < n; i++) { kp_fma_c[i] = kp_fma_rn(kp_fma_a[i], kp_fma_b[i], kp_fma_c[i]); }
}`, ['kp_fma_rn']),
  kp_fma_odd: F(`// a·b + c rounded to f32 by round-to-odd, for half-precision a, b, c (a·b is exact in f32): rounding that
// to f16 or bf16 (≥ 2 bits narrower) is then the correctly rounded fma (Boldo and Melquiond, "Emulation of
// FMA and correctly rounded sums: proved algorithms using rounding to odd"). The error of the f32 sum is
// exact by TwoSum.
fn kp_fma_odd(a: f32, b: f32, c: f32) -> f32 {
  let p = a * b;
  let s = p + c;
  let bb = s - p;
  let err = (p - (s - bb)) + (c - bb);
  let sb = bitcast<u32>(s);
  if (err == 0.0 || (sb & 1u) == 1u || (sb & 0x7fffffffu) >= 0x7f800000u) { return s; }
  // one f32 ulp toward the exact sum (sign-magnitude bits: +1 grows the magnitude)
  return bitcast<f32>(select(sb - 1u, sb + 1u, (err > 0.0) == (s > 0.0)));
}`),
  // --- binary64 in software (issue 26 item 3): f64 values are their bits, vec2<u32>(lo, hi); 128-bit
  // integers vec4<u32>, x the lowest word. Exact, and slow: each operation is integer arithmetic ---
  // 128-bit integers as vec4<u32> (word 0 lowest), written without loops or dynamic indexing: SwiftShader turns
  // a loop over a vector's components into per-lane scalar code, which made software f64 several times slower
  kp_u128_shl: F(`fn kp_u128_shl(a: vec4<u32>, n: u32) -> vec4<u32> {
  let w = n >> 5u; let b = n & 31u;
  // whole words first, then the bits, each word taking the top bits of the one below
  let v = select(select(select(vec4<u32>(0u, 0u, 0u, a.x), vec4<u32>(0u, 0u, a.x, a.y), w == 2u), vec4<u32>(0u, a.x, a.y, a.z), w == 1u), a, w == 0u);
  let below = vec4<u32>(0u, v.x, v.y, v.z);
  let r = (v << vec4<u32>(b)) | select(below >> vec4<u32>(32u - b), vec4<u32>(0u), b == 0u);
  return select(r, vec4<u32>(0u), n >= 128u);
}`),
  kp_u128_shr: F(`fn kp_u128_shr(a: vec4<u32>, n: u32) -> vec4<u32> {
  let w = n >> 5u; let b = n & 31u;
  let v = select(select(select(vec4<u32>(a.w, 0u, 0u, 0u), vec4<u32>(a.z, a.w, 0u, 0u), w == 2u), vec4<u32>(a.y, a.z, a.w, 0u), w == 1u), a, w == 0u);
  let above = vec4<u32>(v.y, v.z, v.w, 0u);
  let r = (v >> vec4<u32>(b)) | select(above << vec4<u32>(32u - b), vec4<u32>(0u), b == 0u);
  return select(r, vec4<u32>(0u), n >= 128u);
}`),
  kp_u128_add: F(`fn kp_u128_add(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let s = a + b;
  // each word's carry out of the plain sum, then the carries rippled up
  let c = select(vec4<u32>(0u), vec4<u32>(1u), s < a);
  let r1 = s.y + c.x; let c1 = c.y + select(0u, 1u, r1 < s.y);
  let r2 = s.z + c1; let c2 = c.z + select(0u, 1u, r2 < s.z);
  return vec4<u32>(s.x, r1, r2, s.w + c2);
}`),
  kp_u128_sub: F(`fn kp_u128_sub(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let d = a - b;
  let c = select(vec4<u32>(0u), vec4<u32>(1u), a < b);
  let r1 = d.y - c.x; let c1 = c.y + select(0u, 1u, d.y < c.x);
  let r2 = d.z - c1; let c2 = c.z + select(0u, 1u, d.z < c1);
  return vec4<u32>(d.x, r1, r2, d.w - c2);
}`),
  kp_u128_lt: F(`fn kp_u128_lt(a: vec4<u32>, b: vec4<u32>) -> bool {
  // the highest word that differs decides
  return select(select(select(a.x < b.x, a.y < b.y, a.y != b.y), a.z < b.z, a.z != b.z), a.w < b.w, a.w != b.w);
}`),
  kp_u128_clz: F(`fn kp_u128_clz(a: vec4<u32>) -> u32 {
  let z = countLeadingZeros(a);
  return select(select(select(select(128u, 96u + z.x, a.x != 0u), 64u + z.y, a.y != 0u), 32u + z.z, a.z != 0u), z.w, a.w != 0u);
}`),
  kp_fpack: F(`// sign · s · 2^(e − 127) (s with its top bit at bit 127, sticky: nonzero bits below s) rounded (mode 0 rn, 1 rz,
// 2 rm, 3 rp) to binary64 (f64) or binary32 bits: subnormals, overflow to infinity or the largest finite value
// as the mode rounds, as IEEE 754 gives them; binary32 in .x. Selects only (kp_u128_shr and kp_u128_shl give 0
// for shifts of 128 and more): SwiftShader's pipeline compile grows steeply with the branches of inlined sites
fn kp_fpack(sign: u32, s: vec4<u32>, e: i32, sticky: bool, mode: u32, f64: bool) -> vec2<u32> {
  let bias = select(127, 1023, f64);
  let top = select(255, 2047, f64);
  let p = select(24u, 53u, f64);
  let be = e + bias;
  let inf = select(vec2<u32>(sign | 0x7f800000u, 0u), vec2<u32>(0u, sign | 0x7ff00000u), f64);
  let maxf = select(vec2<u32>(sign | 0x7f7fffffu, 0u), vec2<u32>(0xffffffffu, sign | 0x7fefffffu), f64);
  let neg = sign != 0u;
  let over = select(maxf, inf, kp_rounds_to_inf(mode, neg));
  // the bits below the kept ones: 128 − p for a normal, one more per step below the smallest normal
  let shift = 128u - p + select(0u, u32(1 - be), be <= 0);
  let kept = kp_u128_shr(s, shift).xy;
  let r = (kp_u128_shr(s, shift - 1u).x & 1u) != 0u;
  let lower = sticky | select(any(kp_u128_shl(s, 129u - shift) != vec4<u32>(0u)), any(s != vec4<u32>(0u)), shift > 128u);
  let up = kp_round_up(mode, r, lower, (kept.x & 1u) != 0u, neg);
  let keep = vec2<u32>(kept.x + select(0u, 1u, up), kept.y + select(0u, 1u, up & (kept.x == 0xffffffffu)));
  // a normal's hidden bit carries into its exponent field; a subnormal's rounding into the smallest normal
  let bits = select(vec2<u32>(keep.x, keep.y + (u32(be - 1) << 20u)), keep, be <= 0);
  let b32 = select((u32(be - 1) << 23u) + keep.x, keep.x, be <= 0);
  let overflow = (be >= top) | select(b32 >= 0x7f800000u, bits.y >= 0x7ff00000u, f64);
  return select(select(vec2<u32>(sign | b32, 0u), vec2<u32>(bits.x, sign | bits.y), f64), over, overflow);
}`, ['kp_u128_shr', 'kp_u128_shl', 'kp_round_up', 'kp_rounds_to_inf']),
  kp_f64_isnan: F(`fn kp_f64_isnan(a: vec2<u32>) -> bool { let h = a.y & 0x7fffffffu; return h > 0x7ff00000u || (h == 0x7ff00000u && a.x != 0u); }`),
  kp_fma_core: F(`// a·b + c exactly, rounded once to binary64 (f64) or binary32 (kp_fpack, mode 0 rn, 1 rz, 2 rm, 3 rp): a = ma · 2^xa,
// b = mb · 2^xb (nonzero, ma and mb below 2^53), c = mc · 2^xc (zero when mc is); sp the product's sign, sc c's.
// The product from 32-bit limbs and the addend, each with its top bit at bit 126 of a 128-bit integer, the
// smaller shifted right with a sticky bit, added or subtracted; an exact zero sum is +0 (−0 rounding down).
// Selects only, every outcome computed (SwiftShader's pipeline compile grows steeply with the branches of
// inlined sites: three f64 fma sites were 45 % of a tensor-core GEMM's compile with the branches)
fn kp_fma_core(ma: vec2<u32>, xa: i32, mb: vec2<u32>, xb: i32, mc: vec2<u32>, xc: i32, sp: u32, sc: u32, mode: u32, f64: bool) -> vec2<u32> {
  let p00 = kp_mulwide_u32(ma.x, mb.x); let p01 = kp_mulwide_u32(ma.x, mb.y); let p10 = kp_mulwide_u32(ma.y, mb.x); let p11 = kp_mulwide_u32(ma.y, mb.y);
  let prod = kp_u128_add(kp_u128_add(vec4<u32>(p00, 0u, 0u), vec4<u32>(0u, p01, 0u)), kp_u128_add(vec4<u32>(0u, p10, 0u), vec4<u32>(0u, 0u, p11)));
  let lp = kp_u128_clz(prod) - 1u;
  let pm = kp_u128_shl(prod, lp); let pe = xa + xb - i32(lp);
  let cz = all(mc == vec2<u32>(0u));
  let lc = kp_u128_clz(vec4<u32>(mc, 0u, 0u)) - 1u;
  let cm = kp_u128_shl(vec4<u32>(mc, 0u, 0u), lc); let ce = xc - i32(lc);
  // the one of larger exponent first (a zero addend second, with the product's exponent)
  let swap = !cz & (ce > pe);
  let big = select(pm, cm, swap); let ebig = select(pe, ce, swap); let sbig = select(sp, sc, swap);
  let s0 = select(cm, pm, swap); let esmall = select(select(ce, pe, swap), ebig, cz); let ssmall = select(sc, sp, swap);
  // the smaller aligned to the larger: the bits shifted out make the sticky bit
  let d = u32(ebig - esmall);
  let sticky = select(any(kp_u128_shl(s0, 128u - d) != vec4<u32>(0u)), any(s0 != vec4<u32>(0u)), d >= 128u);
  let small = kp_u128_shr(s0, d);
  let same = sbig == ssmall;
  let lt = kp_u128_lt(big, small);
  // big − (small + a fraction of one unit): one unit less, the fraction's complement still sticky
  let diff = kp_u128_sub(big, small);
  let s = select(select(select(diff, kp_u128_sub(diff, vec4<u32>(1u, 0u, 0u, 0u)), sticky), kp_u128_sub(small, big), lt), kp_u128_add(big, small), same);
  let ss = select(select(sbig, ssmall, lt), sbig, same);
  let lz = kp_u128_clz(s);
  let packed = kp_fpack(ss, kp_u128_shl(s, lz), ebig - i32(lz) + 127, sticky, mode, f64);
  let z = select(0u, 0x80000000u, mode == 2u);
  return select(packed, select(vec2<u32>(z, 0u), vec2<u32>(0u, z), f64), !sticky & all(s == vec4<u32>(0u)));
}`, ['kp_mulwide_u32', 'kp_u128_add', 'kp_u128_sub', 'kp_u128_shl', 'kp_u128_shr', 'kp_u128_lt', 'kp_u128_clz', 'kp_fpack']),
  kp_f64_fma: F(`// fma.{rn,rz,rm,rp}.f64 (mode 0–3) of f64 bits, exact: IEEE 754's special cases here, the rest kp_fma_core's. add is
// a·1 + b, mul a·b + a zero of the product's sign. NaN results are 0x7fffffffffffffff. Selects only (kp_fma_core)
fn kp_f64_fma(a: vec2<u32>, b: vec2<u32>, c: vec2<u32>, mode: u32) -> vec2<u32> {
  let ea = (a.y >> 20u) & 0x7ffu; let eb = (b.y >> 20u) & 0x7ffu; let ec = (c.y >> 20u) & 0x7ffu;
  let fa = vec2<u32>(a.x, a.y & 0xfffffu); let fb = vec2<u32>(b.x, b.y & 0xfffffu); let fc = vec2<u32>(c.x, c.y & 0xfffffu);
  let sp = (a.y ^ b.y) & 0x80000000u; let sc = c.y & 0x80000000u;
  let za = (ea == 0u) & all(fa == vec2<u32>(0u)); let zb = (eb == 0u) & all(fb == vec2<u32>(0u)); let zc = (ec == 0u) & all(fc == vec2<u32>(0u));
  let ia = ea == 0x7ffu; let ib = eb == 0x7ffu; let ic = ec == 0x7ffu;
  let nan = kp_f64_isnan(a) | kp_f64_isnan(b) | kp_f64_isnan(c) | ((ia | ib) & (za | zb)) | ((ia | ib) & ic & (sc != sp));
  // m · 2^(max(e, 1) − 1075) with the hidden bit of normals
  let h = 0x100000u;
  let v = kp_fma_core(vec2<u32>(fa.x, fa.y | select(0u, h, ea != 0u)), i32(max(ea, 1u)) - 1075, vec2<u32>(fb.x, fb.y | select(0u, h, eb != 0u)), i32(max(eb, 1u)) - 1075,
    vec2<u32>(fc.x, fc.y | select(0u, h, ec != 0u)), i32(max(ec, 1u)) - 1075, sp, sc, mode, true);
  // a zero product: c, or the sum of two zeros; an infinite addend; an infinite product; NaN
  let zero = vec2<u32>(0u, select(0u, 0x80000000u, mode == 2u));
  let r = select(select(v, select(c, zero, zc & (sp != sc)), za | zb), c, ic);
  return select(select(r, vec2<u32>(0u, sp | 0x7ff00000u), ia | ib), vec2<u32>(0xffffffffu, 0x7fffffffu), nan);
}`, ['kp_fma_core', 'kp_f64_isnan']),
  kp_f64_add: F(`// add.{rn,rz,rm,rp}.f64 (mode 0–3) of f64 bits, exact, in 64-bit arithmetic on vec2<u32> (kp_f64_fma's 128 bits
// cost SwiftShader several times as much): the significands with 10 bits below them (the hidden bit at bit 62),
// the smaller shifted right with the bits shifted out kept as a sticky bit, added or subtracted, normalized (not
// below the smallest exponent: a subnormal sum is exact), rounded once, overflow as the mode rounds; IEEE 754's
// special cases, an exact zero sum +0 (−0 rounding down), NaN 0x7fffffffffffffff. Selects only, both the sum and
// the difference computed (SwiftShader's pipeline compile grows steeply with the branches of inlined sites)
fn kp_f64_add(a: vec2<u32>, b: vec2<u32>, mode: u32) -> vec2<u32> {
  let ea = (a.y >> 20u) & 0x7ffu; let eb = (b.y >> 20u) & 0x7ffu;
  let sa = a.y & 0x80000000u; let sb = b.y & 0x80000000u;
  let ia = ea == 0x7ffu; let ib = eb == 0x7ffu;
  let nan = kp_f64_isnan(a) | kp_f64_isnan(b) | (ia & ib & (sa != sb));
  let za = ((a.y & 0x7fffffffu) == 0u) & (a.x == 0u); let zb = ((b.y & 0x7fffffffu) == 0u) & (b.x == 0u);
  let ma = kp_shl64(vec2<u32>(a.x, (a.y & 0xfffffu) | select(0u, 0x100000u, ea != 0u)), 10u);
  let mb = kp_shl64(vec2<u32>(b.x, (b.y & 0xfffffu) | select(0u, 0x100000u, eb != 0u)), 10u);
  let xa = i32(max(ea, 1u)); let xb = i32(max(eb, 1u));
  // the larger magnitude first
  let swap = (xb > xa) | ((xb == xa) & kp_ult64(ma, mb));
  let big = select(ma, mb, swap); let small = select(mb, ma, swap);
  let e0 = select(xa, xb, swap);
  let sign = select(sa, sb, swap);
  let d = u32(e0 - select(xb, xa, swap));
  let shifted = kp_shr_u64(small, d);
  let sticky = select(0u, 1u, (d > 0u) & any(kp_shl64(shifted, d) != small));
  let al = vec2<u32>(shifted.x | sticky, shifted.y);
  // the sum, one bit right where it carried into bit 63 (the bit shifted out kept sticky)
  let m1 = kp_add64(big, al);
  let carry = (m1.y & 0x80000000u) != 0u;
  let s1 = select(m1, vec2<u32>((m1.x >> 1u) | (m1.y << 31u) | (m1.x & 1u), m1.y >> 1u), carry);
  // the difference, normalized down to the smallest exponent
  let m2 = kp_sub64(big, al);
  let lz = min(kp_clz64(m2) - 1u, u32(e0 - 1));
  let subtract = sa != sb;
  let m = select(s1, kp_shl64(m2, lz), subtract);
  let e = select(e0 + select(0, 1, carry), e0 - i32(lz), subtract);
  let keep = kp_shr_u64(m, 10u);
  let rest = m.x & 0x3ffu;
  let neg = sign != 0u;
  let up = kp_round_up(mode, (rest & 0x200u) != 0u, (rest & 0x1ffu) != 0u, (keep.x & 1u) != 0u, neg);
  // a normal's hidden bit (bit 52 of keep) carries into its exponent field; a subnormal's (e 1, no hidden bit)
  // rounding into the smallest normal
  let bits = kp_add64(kp_add64(keep, vec2<u32>(0u, u32(e - 1) << 20u)), vec2<u32>(select(0u, 1u, up), 0u));
  let over = select(vec2<u32>(0xffffffffu, sign | 0x7fefffffu), vec2<u32>(0u, sign | 0x7ff00000u), kp_rounds_to_inf(mode, neg));
  let v = select(vec2<u32>(bits.x, sign | bits.y), over, (e >= 2047) | (bits.y >= 0x7ff00000u));
  // an exact zero difference, zero operands (an exact zero sum of two zeros), infinities, NaN
  let zero = vec2<u32>(0u, select(0u, 0x80000000u, mode == 2u));
  let r0 = select(v, zero, subtract & all(m2 == vec2<u32>(0u)));
  let r1 = select(select(select(r0, a, zb), b, za), vec2<u32>(0u, select(zero.y, sa, sa == sb)), za & zb);
  return select(select(select(r1, b, ib), a, ia), vec2<u32>(0xffffffffu, 0x7fffffffu), nan);
}`, ['kp_f64_isnan', 'kp_shl64', 'kp_shr_u64', 'kp_ult64', 'kp_add64', 'kp_sub64', 'kp_clz64', 'kp_round_up', 'kp_rounds_to_inf']),
  kp_f64_unpack: F(`// a finite nonzero f64's significand (53 bits, its top bit at bit 52, subnormals normalized) and the exponent of
// that top bit
struct KpF64Parts { m: vec2<u32>, e: i32 }
fn kp_f64_unpack(a: vec2<u32>) -> KpF64Parts {
  let ef = (a.y >> 20u) & 0x7ffu;
  var m = vec2<u32>(a.x, (a.y & 0xfffffu) | select(0u, 0x100000u, ef != 0u));
  var e = i32(max(ef, 1u)) - 1023;
  if (ef == 0u) {
    let lz = select(countLeadingZeros(m.x) + 32u, countLeadingZeros(m.y), m.y != 0u) - 11u;
    m = kp_u128_shl(vec4<u32>(m, 0u, 0u), lz).xy;
    e = e - i32(lz);
  }
  return KpF64Parts(m, e);
}`, ['kp_u128_shl']),
  kp_f64_div: F(`// div.{rn,rz,rm,rp}.f64 (mode 0–3) of f64 bits, exact: the significands' quotient by long division, 117 quotient
// bits and the remainder's sticky bit, rounded once (kp_fpack); IEEE 754's special cases
fn kp_f64_div(a: vec2<u32>, b: vec2<u32>, mode: u32) -> vec2<u32> {
  let nan = vec2<u32>(0xffffffffu, 0x7fffffffu);
  let s = (a.y ^ b.y) & 0x80000000u;
  if (kp_f64_isnan(a) || kp_f64_isnan(b)) { return nan; }
  let ia = (a.y & 0x7fffffffu) == 0x7ff00000u; let ib = (b.y & 0x7fffffffu) == 0x7ff00000u;
  let za = (a.y & 0x7fffffffu) == 0u && a.x == 0u; let zb = (b.y & 0x7fffffffu) == 0u && b.x == 0u;
  if ((ia && ib) || (za && zb)) { return nan; }
  if (ia || zb) { return vec2<u32>(0u, s | 0x7ff00000u); }
  if (za || ib) { return vec2<u32>(0u, s); }
  let pa = kp_f64_unpack(a); let pb = kp_f64_unpack(b);
  // (pa.m · 2^64) / pb.m: the remainder stays below 2^54
  var r = vec2<u32>(0u);
  var q = vec4<u32>(0u);
  for (var i = 116; i >= 0; i = i - 1) {
    var bit = 0u;
    if (i >= 64) { let k = u32(i - 64); bit = select(pa.m.x >> k, pa.m.y >> (k - 32u), k >= 32u) & 1u; }
    r = vec2<u32>((r.x << 1u) | bit, (r.y << 1u) | (r.x >> 31u));
    if (r.y > pb.m.y || (r.y == pb.m.y && r.x >= pb.m.x)) {
      r = vec2<u32>(r.x - pb.m.x, r.y - pb.m.y - select(0u, 1u, r.x < pb.m.x));
      let w = u32(i) >> 5u;
      q[w] = q[w] | (1u << (u32(i) & 31u));
    }
  }
  let lz = kp_u128_clz(q);
  return kp_fpack(s, kp_u128_shl(q, lz), pa.e - 52 - (pb.e - 52) - 64 + 127 - i32(lz), any(r != vec2<u32>(0u)), mode, true);
}`, ['kp_f64_isnan', 'kp_f64_unpack', 'kp_u128_clz', 'kp_u128_shl', 'kp_fpack']),
  kp_f64_sqrt: F(`// sqrt.{rn,rz,rm,rp}.f64 (mode 0–3) of f64 bits, exact: the integer square root of the significand scaled by
// 2^64 or 2^65 (an even exponent), the remainder's sticky bit, rounded once; √−0 = −0, NaN below zero
fn kp_f64_sqrt(a: vec2<u32>, mode: u32) -> vec2<u32> {
  if (kp_f64_isnan(a)) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  if ((a.y & 0x7fffffffu) == 0u && a.x == 0u) { return a; }
  if ((a.y & 0x80000000u) != 0u) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  if (a.y == 0x7ff00000u && a.x == 0u) { return a; }
  let p = kp_f64_unpack(a);
  let e0 = p.e - 52;
  let sh = select(64u, 65u, (e0 & 1) != 0);
  var m = kp_u128_shl(vec4<u32>(p.m, 0u, 0u), sh);
  var res = vec4<u32>(0u);
  var bit = vec4<u32>(0u, 0u, 0u, 0x40000000u);
  while (kp_u128_lt(m, bit)) { bit = kp_u128_shr(bit, 2u); }
  while (any(bit != vec4<u32>(0u))) {
    let t = kp_u128_add(res, bit);
    if (!kp_u128_lt(m, t)) { m = kp_u128_sub(m, t); res = kp_u128_add(kp_u128_shr(res, 1u), bit); }
    else { res = kp_u128_shr(res, 1u); }
    bit = kp_u128_shr(bit, 2u);
  }
  let lz = kp_u128_clz(res);
  return kp_fpack(0u, kp_u128_shl(res, lz), (e0 - i32(sh)) / 2 + 127 - i32(lz), any(m != vec4<u32>(0u)), mode, true);
}`, ['kp_f64_isnan', 'kp_f64_unpack', 'kp_u128_shl', 'kp_u128_shr', 'kp_u128_lt', 'kp_u128_add', 'kp_u128_sub', 'kp_u128_clz', 'kp_fpack']),
  kp_f64_minmax: F(`// min/max.f64 (the emulator's fmin/fmax, numeric.ts): a NaN operand gives the other, −0 is below +0; with
// .NaN a NaN operand gives NaN
fn kp_f64_minmax(a: vec2<u32>, b: vec2<u32>, isMax: bool, nanOut: bool) -> vec2<u32> {
  let na = kp_f64_isnan(a); let nb = kp_f64_isnan(b);
  if (na || nb) {
    if (nanOut || (na && nb)) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
    return select(a, b, na);
  }
  if (((a.y | b.y) & 0x7fffffffu) == 0u && (a.x | b.x) == 0u) {
    let neg = ((a.y | b.y) & 0x80000000u) != 0u;
    let both = ((a.y & b.y) & 0x80000000u) != 0u;
    return vec2<u32>(0u, select(select(0u, 0x80000000u, both), select(0u, 0x80000000u, neg), !isMax));
  }
  let aLt = kp_f64_cmp(a, b, 2u);
  return select(select(b, a, aLt), select(a, b, aLt), isMax);
}`, ['kp_f64_isnan', 'kp_f64_cmp']),
  kp_f64_to_int: F(`// cvt.{rni,rzi,rmi,rpi}.{s,u}{32,64}.f64 (mode 0–3; the emulator's f2i32/f2i64): NaN is 0, the value rounded
// to an integer then clamped to the destination's range (negative to unsigned is 0); 32-bit results in .x
fn kp_f64_to_int(a: vec2<u32>, mode: u32, signed: bool, wide: bool) -> vec2<u32> {
  if (kp_f64_isnan(a)) { return vec2<u32>(0u); }
  let neg = (a.y & 0x80000000u) != 0u;
  var m = vec2<u32>(0u);
  var big = false;
  if ((a.y & 0x7fffffffu) != 0u || a.x != 0u) {
    if ((a.y & 0x7fffffffu) >= 0x7ff00000u) { big = true; }
    else {
      let p = kp_f64_unpack(a);
      if (p.e >= 64) { big = true; }
      else {
        // m · 2^(e − 52): the integer part and what rounding reads below it
        let v = vec4<u32>(0u, 0u, p.m);
        let k = u32(52 - p.e + 64);
        let sh = select(kp_u128_shl(v, u32(p.e - 52 - 64)), kp_u128_shr(v, k - 64u), p.e < 116);
        m = sh.zw;
        let exact = all(kp_u128_shl(kp_u128_shr(v, k - 64u), k - 64u) == v);
        let r = p.e < 52 && (sh.y >> 31u) != 0u;
        let st = p.e < 52 && (!exact || (sh.y & 0x7fffffffu) != 0u || sh.x != 0u) && !(r && exact && (sh.y & 0x7fffffffu) == 0u && sh.x == 0u);
        var up = false;
        switch (mode) {
          case 0u: { up = r && (st || (m.x & 1u) != 0u); }
          case 2u: { up = neg && (r || st); }
          case 3u: { up = !neg && (r || st); }
          default: { up = false; }
        }
        if (up) { m = vec2<u32>(m.x + 1u, m.y + select(0u, 1u, m.x == 0xffffffffu)); }
        if (p.e >= 52) { m = kp_u128_shl(vec4<u32>(p.m, 0u, 0u), u32(p.e - 52)).xy; }
      }
    }
  }
  let zero = !big && all(m == vec2<u32>(0u));
  if (!wide) {
    if (!signed) { return vec2<u32>(select(select(select(m.x, 0xffffffffu, m.y != 0u), 0xffffffffu, big), 0u, neg || zero), 0u); }
    if (neg) { return vec2<u32>(select(0u - m.x, 0x80000000u, big || m.y != 0u || m.x >= 0x80000000u), 0u); }
    return vec2<u32>(select(m.x, 0x7fffffffu, big || m.y != 0u || m.x >= 0x7fffffffu), 0u);
  }
  if (!signed) { return select(select(m, vec2<u32>(0xffffffffu), big), vec2<u32>(0u), neg || zero); }
  if (neg) { return select(kp_neg64(m), vec2<u32>(0u, 0x80000000u), big || m.y >= 0x80000000u); }
  return select(m, vec2<u32>(0xffffffffu, 0x7fffffffu), big || m.y >= 0x80000000u);
}`, ['kp_f64_isnan', 'kp_f64_unpack', 'kp_u128_shl', 'kp_u128_shr', 'kp_neg64']),
  kp_f64_roundint: F(`// cvt.{rni,rzi,rmi,rpi}.f64.f64 (mode 0–3): the integral value the mode rounds to, a zero keeping the sign
fn kp_f64_roundint(a: vec2<u32>, mode: u32) -> vec2<u32> {
  if (kp_f64_isnan(a)) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  // 2^52 and beyond (and infinities) are integral already
  if ((a.y & 0x7ff00000u) >= 0x43300000u) { return a; }
  let r = kp_f64_to_int(a, mode, true, true);
  if (all(r == vec2<u32>(0u))) { return vec2<u32>(0u, a.y & 0x80000000u); }
  let neg = (r.y & 0x80000000u) != 0u;
  return kp_int_to_f64(neg, select(r, kp_neg64(r), neg), 0u);
}`, ['kp_f64_isnan', 'kp_f64_to_int', 'kp_int_to_f64', 'kp_neg64']),
  kp_f64_to_f32: F(`// cvt.{rn,rz,rm,rp}.f32.f64 of f64 bits (mode 0–3), rounded once
fn kp_f64_to_f32(a: vec2<u32>, mode: u32) -> u32 {
  let s = a.y & 0x80000000u;
  let e = (a.y >> 20u) & 0x7ffu;
  let f = vec2<u32>(a.x, a.y & 0xfffffu);
  if (e == 0x7ffu) { return select(s | 0x7f800000u, 0x7fffffffu, any(f != vec2<u32>(0u))); }
  if (e == 0u && all(f == vec2<u32>(0u))) { return s; }
  let m = vec4<u32>(f.x, f.y | select(0u, 0x100000u, e != 0u), 0u, 0u);
  let lz = kp_u128_clz(m);
  return kp_fpack(s, kp_u128_shl(m, lz), i32(max(e, 1u)) - 1075 + 127 - i32(lz), false, mode, false).x;
}`, ['kp_u128_clz', 'kp_u128_shl', 'kp_fpack']),
  kp_int_to_f64: F(`// cvt.{rn,rz,rm,rp}.f64 of an integer given as sign and 64-bit magnitude (lo, hi), rounded once (exact up to 2^53)
fn kp_int_to_f64(neg: bool, m: vec2<u32>, mode: u32) -> vec2<u32> {
  if (all(m == vec2<u32>(0u))) { return vec2<u32>(0u); }
  let v = vec4<u32>(m, 0u, 0u);
  let lz = kp_u128_clz(v);
  return kp_fpack(select(0u, 0x80000000u, neg), kp_u128_shl(v, lz), 127 - i32(lz), false, mode, true);
}`, ['kp_u128_clz', 'kp_u128_shl', 'kp_fpack']),
  kp_f64_cmp: F(`// setp on f64 bits: op 0 eq 1 ne 2 lt 3 le 4 gt 5 ge; +8 the unordered variant; 16 num, 17 nan (kp_fcmp's codes)
fn kp_f64_cmp(a: vec2<u32>, b: vec2<u32>, op: u32) -> bool {
  let un = kp_f64_isnan(a) || kp_f64_isnan(b);
  if (op == 16u) { return !un; }
  if (op == 17u) { return un; }
  if (un) { return op >= 8u; }
  let zero = ((a.y | b.y) & 0x7fffffffu) == 0u && (a.x | b.x) == 0u;
  let eq = zero || all(a == b);
  let na = (a.y & 0x80000000u) != 0u; let nb = (b.y & 0x80000000u) != 0u;
  let ma = vec2<u32>(a.x, a.y & 0x7fffffffu); let mb = vec2<u32>(b.x, b.y & 0x7fffffffu);
  let magLt = ma.y < mb.y || (ma.y == mb.y && ma.x < mb.x);
  let magGt = ma.y > mb.y || (ma.y == mb.y && ma.x > mb.x);
  let lt = !zero && select(select(false, true, na), select(magLt, magGt, na), na == nb);
  switch (op & 7u) {
    case 0u: { return eq; }
    case 1u: { return !eq; }
    case 2u: { return lt; }
    case 3u: { return lt || eq; }
    case 4u: { return !lt && !eq; }
    default: { return !lt; }
  }
}`, ['kp_f64_isnan']),
  kp_f64_to_small: F(`// cvt{.rn,.rz,.rm,.rp}{.satfinite}.{f16,bf16}.f64 of f64 bits (lo, hi), rounded once from the binary64 value
// (numeric.ts toSmallFloat): \`mant\` fraction bits, \`ebits\` exponent bits; NaN gives the canonical 0x7fff
fn kp_f64_to_small(x: vec2<u32>, mant: u32, ebits: u32, mode: u32, satfinite: bool) -> u32 {
  let neg = (x.y & 0x80000000u) != 0u;
  let sign = select(0u, 1u << (mant + ebits), neg);
  let expMax = (1u << ebits) - 1u;
  let maxFinite = ((expMax - 1u) << mant) | ((1u << mant) - 1u);
  let e64 = (x.y >> 20u) & 0x7ffu;
  let mhi = x.y & 0xfffffu;
  let frac = (mhi != 0u) | (x.x != 0u);
  let bias = i32((1u << (ebits - 1u)) - 1u);
  let minExp = 1 - bias;
  // q: the value in units of the result's last place, truncated; half: the bit below; sticky: any bit below that
  // (a binary64 subnormal lies far below the smallest half: q = 0, sticky). Selects only, no branch
  let e = i32(e64) - 1023;
  let sub64 = e64 == 0u;
  let ee = select(max(e, minExp), minExp, sub64);
  // q = (2^52 + fraction) >> (52 - mant + ee - e): at least 32, so from the high word and its 21 bits
  let sig = mhi | 0x100000u;
  let t = u32(20 - i32(mant) + (ee - e));
  let rb = t - 1u;
  let q0 = select(select(0u, sig >> min(t, 31u), t < 21u), 0u, sub64);
  let half = !sub64 & (rb < 21u) & (((sig >> min(rb, 31u)) & 1u) != 0u);
  let sticky = sub64 | (select(sig, sig & ((1u << min(rb, 31u)) - 1u), rb < 21u) != 0u) | (x.x != 0u);
  let up = kp_round_up(mode, half, sticky, (q0 & 1u) != 0u, neg);
  let q = q0 + select(0u, 1u, up);
  let carry = q >= (1u << (mant + 1u));
  let E = ee + bias + select(0, 1, carry);
  let normal = select(sign | (u32(E) << mant) | (select(q, q >> 1u, carry) & ((1u << mant) - 1u)), sign | select(maxFinite, expMax << mant, kp_rounds_to_inf(mode, neg) & !satfinite), E >= i32(expMax));
  // a subnormal result, zero, a zero operand, infinity, NaN
  let r = select(select(select(normal, sign | q, (ee == minExp) & (q < (1u << mant))), sign, q == 0u), sign, sub64 & !frac);
  return select(select(r, sign | select(expMax << mant, maxFinite, satfinite), e64 == 0x7ffu), (expMax << mant) | ((1u << mant) - 1u), (e64 == 0x7ffu) & frac);
}`, ['kp_round_up', 'kp_rounds_to_inf']),
  kp_f32_to_f64: F(`// cvt.f64.f32 of f32 bits, exactly: the f64 bit pattern (lo, hi); a subnormal is normalized, NaN quieted
// as a binary64 NaN with the f32 payload (what a widening conversion gives on x86 and NVIDIA GPUs)
fn kp_f32_to_f64(x: u32) -> vec2<u32> {
  let s = x & 0x80000000u;
  let e = (x >> 23u) & 0xffu;
  let f = x & 0x7fffffu;
  // a subnormal, 2^-149 · f: the leading bit to the hidden bit's place (selects only, no branch)
  let lz = countLeadingZeros(f) - 8u;
  let fs = (f << lz) & 0x7fffffu;
  let sub = select(vec2<u32>(fs << 29u, s | ((897u - lz) << 20u) | (fs >> 3u)), vec2<u32>(0u, s), f == 0u);
  let special = vec2<u32>(f << 29u, s | 0x7ff00000u | select(0u, 0x80000u, f != 0u) | (f >> 3u));
  return select(select(vec2<u32>(f << 29u, s | ((e + 896u) << 20u) | (f >> 3u)), sub, e == 0u), special, e == 255u);
}`),
  kp_fma_bits: F(`// fma.{rn,rz,rm,rp}.f32 (mode 0, 1, 2, 3) of f32 bit patterns, exact in integer arithmetic (PTX ISA: the
// product to infinite precision, one rounding of the sum). NaN results are the canonical 0x7fffffff; an exact zero
// sum is +0 (−0 rounding down), overflow the largest finite value where the mode rounds toward it (kp_f32_pack).
// In 64 bits, selects only (no branch: SwiftShader's pipeline compile grows steeply with the branches of inlined
// sites, and the 128-bit kp_fma_core it used was four fifths of an expf-heavy softmax's compile): the product of
// the 24-bit significands (2^46 ≤ ma·mb < 2^48) and the addend, each with its top bit at bit 62, the one of
// smaller magnitude shifted right with the bits shifted out kept as a sticky bit 0 (the larger's low 15 bits
// are 0, so that bit stands for them in every rounding: the exact sum and the computed one lie between the same
// two multiples of 2), added or subtracted, normalized, rounded once by kp_f32_pack.
fn kp_fma_bits(a: u32, b: u32, c: u32, mode: u32) -> u32 {
  let ea = (a >> 23u) & 0xffu; let eb = (b >> 23u) & 0xffu; let ec = (c >> 23u) & 0xffu;
  let fa = a & 0x7fffffu; let fb = b & 0x7fffffu; let fc = c & 0x7fffffu;
  let sp = (a ^ b) & 0x80000000u; let sc = c & 0x80000000u;
  let za = (a & 0x7fffffffu) == 0u; let zb = (b & 0x7fffffffu) == 0u; let zc = (c & 0x7fffffffu) == 0u;
  let ia = ea == 255u; let ib = eb == 255u; let ic = ec == 255u;
  let nan = (ia & (fa != 0u)) | (ib & (fb != 0u)) | (ic & (fc != 0u)) | ((ia | ib) & (za | zb)) | ((ia | ib) & ic & (sc != sp));
  // the significands with their top bit at bit 23 (subnormals normalized: the shift from the exponent of f32(h),
  // exact below 2^24); x = m · 2^(xe − 150)
  let ha = fa | select(0u, 0x800000u, ea != 0u); let hb = fb | select(0u, 0x800000u, eb != 0u); let hc = fc | select(0u, 0x800000u, ec != 0u);
  let la = 150u - (bitcast<u32>(f32(ha)) >> 23u); let lb = 150u - (bitcast<u32>(f32(hb)) >> 23u); let lc = 150u - (bitcast<u32>(f32(hc)) >> 23u);
  let ma = max(ha << la, 0x800000u); let mb = max(hb << lb, 0x800000u); let mc = max(hc << lc, 0x800000u);
  let xa = i32(max(ea, 1u)) - i32(la); let xb = i32(max(eb, 1u)) - i32(lb); let xc = i32(max(ec, 1u)) - i32(lc);
  // product and addend as M · 2^E with M's top bit at bit 62; a zero addend the smaller by any measure
  let p = kp_mulwide_u32(ma, mb);
  let lp = select(16u, 15u, p.y >= 0x8000u);
  let pm = vec2<u32>(p.x << lp, (p.y << lp) | (p.x >> (32u - lp)));
  let pe = xa + xb - 300 - i32(lp);
  let cm = select(vec2<u32>(0u, mc << 7u), vec2<u32>(0u), zc);
  let ce = select(xc - 189, -100000, zc);
  let swap = (ce > pe) | ((ce == pe) & ((cm.y > pm.y) | ((cm.y == pm.y) & (cm.x > pm.x))));
  let big = select(pm, cm, swap); let small = select(cm, pm, swap);
  let d = min(u32(select(pe - ce, ce - pe, swap)), 64u);
  // small >> d, and whether it shifted out a 1
  let w = d >= 32u; let bs = d & 31u;
  let v = select(small, vec2<u32>(small.y, 0u), w);
  let sh = select(vec2<u32>((v.x >> bs) | select(v.y << (32u - bs), 0u, bs == 0u), v.y >> bs), vec2<u32>(0u), d >= 64u);
  let low = (1u << bs) - 1u;
  let mask = vec2<u32>(select(low, 0xffffffffu, w), select(0u, select(low, 0xffffffffu, d >= 64u), w));
  let al = vec2<u32>(sh.x | select(0u, 1u, any((small & mask) != vec2<u32>(0u))), sh.y);
  let sub = (sp != sc) & !zc;
  let lo = select(big.x + al.x, big.x - al.x, sub);
  let hi = select(big.y + al.y + select(0u, 1u, big.x + al.x < big.x), big.y - al.y - select(0u, 1u, big.x < al.x), sub);
  // normalized: the top 32 bits and whether any bit below them is set
  let lz = select(32u + countLeadingZeros(lo), countLeadingZeros(hi), hi != 0u);
  let n = min(lz, 63u); let nb = n & 31u;
  let u = select(vec2<u32>(lo, hi), vec2<u32>(0u, lo), n >= 32u);
  let top = (u.y << nb) | select(u.x >> (32u - nb), 0u, nb == 0u);
  let packed = kp_f32_pack(select(sp, sc, swap), top, 63 + select(pe, ce, swap) - i32(lz), (u.x << nb) != 0u, mode);
  let zero = select(0u, 0x80000000u, mode == 2u);
  // IEEE 754's special cases: an exact zero sum, a zero product (c, or the sum of two zeros), an infinite addend,
  // an infinite product, NaN
  let r = select(select(select(packed, zero, (lo == 0u) & (hi == 0u)), select(c, zero, zc & (sp != sc)), za | zb), c, ic);
  return select(select(r, sp | 0x7f800000u, ia | ib), 0x7fffffffu, nan);
}`, ['kp_mulwide_u32', 'kp_f32_pack']),
  // --- atomics that are read-modify-write in PTX but need a loop here ---
  kp_inc_wrap: F(`fn kp_inc_wrap(old: u32, b: u32) -> u32 { return select(old + 1u, 0u, old >= b); }`),
  kp_dec_wrap: F(`fn kp_dec_wrap(old: u32, b: u32) -> u32 { return select(old - 1u, b, old == 0u || old > b); }`),
}

/** The named functions and everything they call, callees first, each once. */
export function collectLib(names: Iterable<string>): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  const visit = (n: string) => {
    if (seen.has(n)) return
    seen.add(n)
    const f = WGSL_LIB[n]
    if (!f) throw new Error(`internal: no WGSL helper ${n}`)
    for (const d of f.deps ?? []) visit(d)
    out.push(f.code)
  }
  for (const n of [...names].sort()) visit(n)
  return out
}

/** Names of library functions a piece of WGSL calls. */
export function libCalls(code: string): string[] {
  return [...new Set([...code.matchAll(/\b(kp_[a-z0-9_]+)\(/g)].map((m) => m[1]!).filter((n) => n in WGSL_LIB))]
}
