// Small pieces of WGSL text shared by the writers: literals and identifiers. Every value from the PTX that
// reaches the WGSL goes through these (numbers as exact literals, names sanitized), so a PTX identifier can
// never inject WGSL.

const f32buf = new Float32Array(1)
const u32buf = new Uint32Array(f32buf.buffer)

/** 1.0 as binary64 bits (lo, hi): software f64's one (wgsl-lib.ts kp_f64_fma as an add, a reciprocal). */
export const F64_ONE = 'vec2<u32>(0u, 0x3ff00000u)'

/** A u32 literal. */
export function u32Lit(v: number | bigint): string {
  const x = BigInt.asUintN(32, BigInt(v))
  return x < 65536n ? `${x}u` : `0x${x.toString(16)}u`
}

/** An i32 value as u32 bits (signed literals overflow in WGSL constant expressions; bits never do). */
export function i32Bits(v: number | bigint): string {
  return u32Lit(BigInt.asUintN(32, BigInt(v)))
}

/** An f32 literal from its IEEE bits: a short decimal where it is exact and normal, else a bitcast. */
export function f32Lit(bits: number | bigint): string {
  const b = Number(BigInt.asUintN(32, BigInt(bits)))
  u32buf[0] = b
  const x = f32buf[0]!
  const exp = (b >>> 23) & 0xff
  if (b === 0) return '0.0f'
  // a decimal only where it is exact (multiples of 2^-8 below 2^24 print exactly): WGSL may round an inexact
  // literal to either neighbour
  if (exp !== 0 && exp !== 0xff && Number.isInteger(x * 256) && Math.abs(x) < 2 ** 24) {
    const s = String(x)
    return s.includes('.') ? `${s}f` : `${s}.0f`
  }
  // infinities and NaNs are not f32 values to WGSL's constant evaluation: through a function, at run time
  if (exp === 0xff) return `kp_f32_bits(${u32Lit(b)})`
  return `bitcast<f32>(${u32Lit(b)})`
}

/** The f32 bits of a number (rounded to nearest f32). */
export function f32BitsOf(x: number): number {
  f32buf[0] = x
  return u32buf[0]!
}

/** A vec2<u32> literal of a 64-bit value. */
export function u64Lit(v: bigint): string {
  const x = BigInt.asUintN(64, v)
  return `vec2<u32>(${u32Lit(x & 0xffffffffn)}, ${u32Lit(x >> 32n)})`
}

const RESERVED = new Set([
  'alias', 'break', 'case', 'const', 'const_assert', 'continue', 'continuing', 'default', 'diagnostic', 'discard', 'else', 'enable',
  'false', 'fn', 'for', 'if', 'let', 'loop', 'override', 'requires', 'return', 'struct', 'switch', 'true', 'var', 'while',
])

/** A WGSL identifier for a PTX name (`%rd12` → `rd12`), unique among `taken`, never starting with `kp_`. */
export function wgslName(ptxName: string, taken: Set<string>, prefix = ''): string {
  let base = prefix + ptxName.replace(/^%/, '').replace(/[^A-Za-z0-9_]/g, '_')
  if (!/^[A-Za-z]/.test(base)) base = `v${base}`
  base = base.replace(/__+/g, '_')
  if (base.startsWith('kp_') || RESERVED.has(base)) base = `v_${base}`
  let name = base
  for (let i = 2; taken.has(name); i++) name = `${base}_${i}`
  taken.add(name)
  return name
}
