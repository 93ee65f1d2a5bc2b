// Runs one PTX instruction form over many inputs through the emulator backend: each thread loads its
// operands (8-byte slots) from global memory, executes the form, stores the destination's bits. The
// expected values in the tests come from independent references (BigInt integer math and the exact
// rational rounding below), never from the emulator's own helpers.
import { createEmulatorBackend, type EmulatorBackend } from '../../packages/emulator/src/index.js'

export type Bits = bigint

const be: EmulatorBackend = createEmulatorBackend()
export function backend(): EmulatorBackend { return be }

export function sizeOf(t: string): number {
  if (t === 'pred') return 1
  const n = Number(t.replace(/^[a-z]+/, '').replace('x2', ''))
  return t.endsWith('x2') ? 4 : n / 8
}

/** Register name prefix and declaration for a type; `untyped` declares floats as .b32/.b64 like clang 22. */
function regFor(t: string, i: number, untyped: boolean): { name: string; decl: string } {
  const sz = sizeOf(t)
  if (t === 'pred') return { name: `%p${i}`, decl: `.reg .pred %p${i};` }
  if (t === 'f32' && !untyped) return { name: `%f${i}`, decl: `.reg .f32 %f${i};` }
  if (t === 'f64' && !untyped) return { name: `%fd${i}`, decl: `.reg .f64 %fd${i};` }
  if (sz === 8) return { name: `%rd${i}`, decl: `.reg .b64 %rd${i};` }
  if (sz === 4) return { name: `%r${i}`, decl: `.reg .b32 %r${i};` }
  if (sz === 2 || sz === 1) return { name: `%h${i}`, decl: `.reg .b16 %h${i};` }
  throw new Error(t)
}

function ldType(t: string): string {
  const sz = sizeOf(t)
  return sz === 8 ? 'b64' : sz === 4 ? 'b32' : sz === 2 ? 'b16' : 'u8'
}

export interface FormSpec {
  /** Instruction text with $d (destination), $q (second predicate destination), $a $b $c $e (sources). */
  form: string
  dst: string
  srcs: string[]
  /** Second destination (`$q`), a predicate. */
  q?: boolean
  untyped?: boolean
}

/** Runs the form once per case; returns the destination bits (and $q as 0/1 when present). */
export function runForm(spec: FormSpec, cases: Bits[][]): Array<{ d: Bits; q?: Bits }> {
  const names = ['a', 'b', 'c', 'e']
  const decls: string[] = []
  const body: string[] = []
  const srcRegs = spec.srcs.map((t, i) => regFor(t, 10 + i, !!spec.untyped))
  const dst = regFor(spec.dst, 1, !!spec.untyped)
  decls.push(dst.decl, ...srcRegs.map((r) => r.decl))
  spec.srcs.forEach((t, i) => {
    if (t === 'pred') {
      body.push(`ld.global.u32 %r${30 + i}, [%rd3+${8 * i}];`, `setp.ne.u32 ${srcRegs[i]!.name}, %r${30 + i}, 0;`)
      decls.push(`.reg .b32 %r${30 + i};`)
    } else body.push(`ld.global.${ldType(t)} ${srcRegs[i]!.name}, [%rd3+${8 * i}];`)
  })
  let form = spec.form.replaceAll('$d', dst.name).replaceAll('$q', '%p9')
  names.forEach((n, i) => { if (srcRegs[i]) form = form.replaceAll('$' + n, srcRegs[i]!.name) })
  body.push(form)
  if (spec.dst === 'pred') body.push(`selp.u32 %r40, 1, 0, ${dst.name};`, 'st.global.u32 [%rd5], %r40;')
  else body.push(`st.global.${ldType(spec.dst)} [%rd5], ${dst.name};`)
  if (spec.q) body.push('selp.u32 %r41, 1, 0, %p9;', 'st.global.u32 [%rd5+8], %r41;')
  const ptx = `.version 8.0
.target sm_80
.address_size 64
.visible .entry t(.param .u64 t_in, .param .u64 t_out)
{
  .reg .b64 %rd<8>;
  .reg .b32 %r0;
  .reg .pred %p9;
  .reg .b32 %r40, %r41, %r20;
  .reg .b16 %h20;
  ${decls.join('\n  ')}
  ld.param.u64 %rd0, [t_in];
  ld.param.u64 %rd1, [t_out];
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, ${8 * Math.max(1, spec.srcs.length)};
  add.s64 %rd3, %rd0, %rd2;
  mul.wide.u32 %rd4, %r0, 16;
  add.s64 %rd5, %rd1, %rd4;
  ${body.join('\n  ')}
  ret;
}
`
  const n = cases.length
  const input = new BigUint64Array(n * Math.max(1, spec.srcs.length))
  cases.forEach((c, i) => c.forEach((v, j) => { input[i * spec.srcs.length + j] = BigInt.asUintN(64, v) }))
  const mod = be.loadModule({ kind: 'ptx', arch: 'compute_80', bytes: new TextEncoder().encode(ptx) })
  const din = be.alloc(input.byteLength || 8)
  if (input.byteLength) be.copyToDevice(din, new Uint8Array(input.buffer))
  const dout = be.alloc(n * 16)
  const params = new Uint8Array(16)
  new DataView(params.buffer).setBigUint64(0, din, true)
  new DataView(params.buffer).setBigUint64(8, dout, true)
  be.launch(mod.getFunction('t'), { grid: [1, 1, 1], block: [n, 1, 1], sharedBytes: 0 }, { bytes: params, offsets: [0, 8], sizes: [8, 8] })
  const out = new BigUint64Array(n * 2)
  be.copyFromDevice(new Uint8Array(out.buffer), dout)
  be.free(din); be.free(dout); mod.unload()
  const mask = (1n << BigInt(8 * (spec.dst === 'pred' ? 4 : sizeOf(spec.dst)))) - 1n
  return cases.map((_, i) => ({ d: out[2 * i]! & mask, q: spec.q ? out[2 * i + 1]! & 0xffffffffn : undefined }))
}

// --- bit conversions ---
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer)
const f64 = new Float64Array(1), u64 = new BigUint64Array(f64.buffer)
export function f32bits(x: number): Bits { f32[0] = x; return BigInt(u32[0]!) }
export function bitsf32(b: Bits): number { u32[0] = Number(b & 0xffffffffn); return f32[0]! }
export function f64bits(x: number): Bits { f64[0] = x; return u64[0]! }
export function bitsf64(b: Bits): number { u64[0] = BigInt.asUintN(64, b); return f64[0]! }
export function u(x: number | bigint, bits: number): Bits { return BigInt.asUintN(bits, BigInt(x)) }
export function s(b: Bits, bits: number): bigint { return BigInt.asIntN(bits, b) }

// --- exact rational rounding oracle (independent of the emulator's numeric.ts) ---

export type Mode = 'rn' | 'rz' | 'rm' | 'rp'

/** Format: p significand bits (incl. hidden), emin (exponent of the smallest normal), emax. */
export const F32 = { p: 24, emin: -126, emax: 127 }
export const F64 = { p: 53, emin: -1022, emax: 1023 }
export const F16 = { p: 11, emin: -14, emax: 15 }
export const BF16 = { p: 8, emin: -126, emax: 127 }

/** An exact value num/den (den > 0) as sign and magnitude; rounds to the format, returns [sign, sig, exp]
 *  with value = sig * 2^exp, or 'inf'. */
export function roundRational(num: bigint, den: bigint, fmt: { p: number; emin: number; emax: number }, mode: Mode): number {
  if (num === 0n) return 0
  const neg = num < 0n
  let n = neg ? -num : num
  // find e with 2^(p-1) <= n/den * 2^-e < 2^p, clamped at the subnormal exponent
  const bl = (x: bigint) => x.toString(2).length
  let e = bl(n) - bl(den) - (fmt.p - 1)
  const scaled = (ee: number) => (ee >= 0 ? [n, den << BigInt(ee)] : [n << BigInt(-ee), den]) as [bigint, bigint]
  for (;;) {
    const [a, b] = scaled(e)
    const q = a / b
    if (q >= 1n << BigInt(fmt.p)) { e++; continue }
    if (q < 1n << BigInt(fmt.p - 1)) { e--; continue }
    break
  }
  const minE = fmt.emin - (fmt.p - 1)
  if (e < minE) e = minE
  const [a, b] = scaled(e)
  let q = a / b
  const r = a - q * b
  let up = false
  if (r !== 0n) {
    if (mode === 'rn') up = 2n * r > b || (2n * r === b && (q & 1n) === 1n)
    else if (mode === 'rp') up = !neg
    else if (mode === 'rm') up = neg
  }
  if (up) q += 1n
  if (q >= 1n << BigInt(fmt.p)) { q >>= 1n; e++ }
  const maxE = fmt.emax - (fmt.p - 1)
  if (e > maxE) {
    const toInf = mode === 'rn' || (mode === 'rp' && !neg) || (mode === 'rm' && neg)
    if (toInf) return neg ? -Infinity : Infinity
    const mx = Number((1n << BigInt(fmt.p)) - 1n) * 2 ** maxE
    return neg ? -mx : mx
  }
  const v = Number(q) * 2 ** e
  return neg ? -v : v
}

/** A finite double as an exact fraction [num, den]. */
export function frac(x: number): [bigint, bigint] {
  if (!Number.isFinite(x)) throw new Error('not finite')
  let e = 0
  let m = x
  while (!Number.isInteger(m)) { m *= 2; e++ }
  return [BigInt(m), 1n << BigInt(e)]
}

/** Half-precision bits → number, independent decoder. */
export function halfToNum(h: number, bf = false): number {
  const mant = bf ? 7 : 10
  const eb = bf ? 8 : 5
  const bias = (1 << (eb - 1)) - 1
  const sign = h >> (mant + eb) & 1 ? -1 : 1
  const E = (h >> mant) & ((1 << eb) - 1)
  const M = h & ((1 << mant) - 1)
  if (E === (1 << eb) - 1) return M ? NaN : sign * Infinity
  return E === 0 ? sign * M * 2 ** (1 - bias - mant) : sign * (1 + M / 2 ** mant) * 2 ** (E - bias)
}

/** number → half-precision bits via the rational oracle. */
export function numToHalf(x: number, mode: Mode = 'rn', bf = false): number {
  const fmt = bf ? BF16 : F16
  const mant = bf ? 7 : 10
  const eb = bf ? 8 : 5
  const bias = (1 << (eb - 1)) - 1
  if (x !== x) return bf ? 0x7fff : 0x7fff
  const sign = x < 0 || Object.is(x, -0) ? 1 << (mant + eb) : 0
  let v: number
  if (!Number.isFinite(x)) v = x
  else { const [n, d] = frac(x); v = roundRational(n, d, fmt, mode) }
  if (v === 0) return sign
  const a = Math.abs(v)
  if (a === Infinity) return sign | (((1 << eb) - 1) << mant)
  let e = Math.floor(Math.log2(a))
  if (2 ** e > a) e--
  if (2 ** (e + 1) <= a) e++
  if (e < 1 - bias) return sign | Math.round(a / 2 ** (1 - bias - mant))
  return sign | ((e + bias) << mant) | Math.round((a / 2 ** e - 1) * 2 ** mant)
}
