// Exact arithmetic helpers the compiled kernels call. Representations (see compile.ts):
//   32-bit integers: int32 numbers (`x | 0`); 16/8-bit: unsigned numbers of that width;
//   64-bit integers: "i64" = a JS number when the signed value lies in [-(2^53 - 1), 2^53 - 1], else a BigInt
//   (always canonical: BigInt.asIntN(64, v) outside that range), so address arithmetic stays on numbers;
//   f32: numbers already rounded by Math.fround; f64: numbers; predicates: booleans.

const TWO32 = 4294967296
const MAXN = 9007199254740991
// Symmetric range: a rounded sum/product lands outside it whenever the exact one does.
const MINN = -9007199254740991
const BMAXN = 9007199254740991n
const BMINN = -9007199254740991n

const scratch = new ArrayBuffer(8)
const sF32 = new Float32Array(scratch)
const sI32 = new Int32Array(scratch)
const sU32 = new Uint32Array(scratch)
const sF64 = new Float64Array(scratch)
// Little-endian hosts only (every browser and Node platform we target); checked once.
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const LO = littleEndian ? 0 : 1
const HI = littleEndian ? 1 : 0

// --- 64-bit integers ---

export function n64(b: bigint): number | bigint {
  b = BigInt.asIntN(64, b)
  return b >= BMINN && b <= BMAXN ? Number(b) : b
}
export function big(a: number | bigint): bigint {
  return typeof a === 'bigint' ? a : BigInt(a)
}
/** i64 from unsigned low and signed high 32-bit halves. */
export function mk64(lo: number, hi: number): number | bigint {
  if (hi > -0x200000 && hi < 0x200000) return hi * TWO32 + (lo >>> 0)
  return (BigInt(hi | 0) << 32n) | BigInt(lo >>> 0)
}
export function lo32(a: number | bigint): number {
  return typeof a === 'number' ? a | 0 : Number(BigInt.asIntN(32, a))
}
export function hi32(a: number | bigint): number {
  return typeof a === 'number' ? Math.floor(a / TWO32) | 0 : Number(BigInt.asIntN(32, a >> 32n))
}
export function add64(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b
    if (r >= MINN && r <= MAXN) return r
  }
  return n64(big(a) + big(b))
}
export function sub64(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a - b
    if (r >= MINN && r <= MAXN) return r
  }
  return n64(big(a) - big(b))
}
export function mul64(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a * b
    if (r >= MINN && r <= MAXN) return r + 0
  }
  return n64(big(a) * big(b))
}
export function u64b(a: number | bigint): bigint {
  return BigInt.asUintN(64, big(a))
}
export function mulhi64(a: number | bigint, b: number | bigint, signed: boolean): number | bigint {
  const r = signed ? big(a) * big(b) : u64b(a) * u64b(b)
  return n64(r >> 64n)
}
export function neg64(a: number | bigint): number | bigint {
  return typeof a === 'number' ? 0 - a : n64(-big(a))
}
export function and64(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number' && (a | 0) === a && (b | 0) === b) return a & b
  return mk64(lo32(a) & lo32(b), hi32(a) & hi32(b))
}
export function or64(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number' && (a | 0) === a && (b | 0) === b) return a | b
  return mk64(lo32(a) | lo32(b), hi32(a) | hi32(b))
}
export function xor64(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number' && (a | 0) === a && (b | 0) === b) return a ^ b
  return mk64(lo32(a) ^ lo32(b), hi32(a) ^ hi32(b))
}
export function not64(a: number | bigint): number | bigint {
  return typeof a === 'number' ? -1 - a : n64(~a)
}
export function shl64(a: number | bigint, n: number): number | bigint {
  n = n >>> 0
  if (n >= 64) return 0
  if (typeof a === 'number' && n < 53) {
    const r = a * 2 ** n
    if (r >= MINN && r <= MAXN) return r
  }
  return n64(big(a) << BigInt(n))
}
export function shrs64(a: number | bigint, n: number): number | bigint {
  n = n >>> 0
  if (n > 63) n = 63
  if (typeof a === 'number') return Math.floor(a / 2 ** n)
  return n64(a >> BigInt(n))
}
export function shru64(a: number | bigint, n: number): number | bigint {
  n = n >>> 0
  if (n >= 64) return 0
  if (typeof a === 'number' && a >= 0) return Math.floor(a / 2 ** n)
  return n64(u64b(a) >> BigInt(n))
}
/** Unsigned comparison: -1, 0, 1. */
export function ucmp64(a: number | bigint, b: number | bigint): number {
  const na = a < 0
  const nb = b < 0
  if (na !== nb) return na ? 1 : -1
  return a < b ? -1 : a > b ? 1 : 0
}
export function scmp64(a: number | bigint, b: number | bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}
export function divs64(a: number | bigint, b: number | bigint): number | bigint {
  if (b == 0) return -1
  // |a| < 2^52: a non-integer quotient is at least 1/|b| away from an integer, more than its rounding error
  if (typeof a === 'number' && typeof b === 'number' && Math.abs(a) < 2 ** 52) return Math.trunc(a / b) + 0
  return n64(big(a) / big(b))
}
export function divu64(a: number | bigint, b: number | bigint): number | bigint {
  if (b == 0) return -1
  if (typeof a === 'number' && typeof b === 'number' && a >= 0 && b > 0 && a < 2 ** 52) return Math.floor(a / b)
  return n64(u64b(a) / u64b(b))
}
export function rems64(a: number | bigint, b: number | bigint): number | bigint {
  if (b == 0) return a
  if (typeof a === 'number' && typeof b === 'number') return (a % b) + 0
  return n64(big(a) % big(b))
}
export function remu64(a: number | bigint, b: number | bigint): number | bigint {
  if (b == 0) return a
  if (typeof a === 'number' && typeof b === 'number' && a >= 0 && b > 0) return a % b
  return n64(u64b(a) % u64b(b))
}
export function popc64(a: number | bigint): number {
  return popc32(lo32(a)) + popc32(hi32(a))
}
export function clz64(a: number | bigint): number {
  const h = hi32(a)
  return h !== 0 ? Math.clz32(h) : 32 + Math.clz32(lo32(a))
}
export function brev64(a: number | bigint): number | bigint {
  return mk64(brev32(hi32(a)), brev32(lo32(a)))
}

// --- 32-bit integers ---

export function popc32(x: number): number {
  x = x - ((x >>> 1) & 0x55555555)
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333)
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}
export function brev32(x: number): number {
  x = ((x >>> 1) & 0x55555555) | ((x & 0x55555555) << 1)
  x = ((x >>> 2) & 0x33333333) | ((x & 0x33333333) << 2)
  x = ((x >>> 4) & 0x0f0f0f0f) | ((x & 0x0f0f0f0f) << 4)
  x = ((x >>> 8) & 0x00ff00ff) | ((x & 0x00ff00ff) << 8)
  return ((x >>> 16) | (x << 16)) | 0
}
/** High 32 bits of the 64-bit product (signed or unsigned), exact. */
export function mulhi32(a: number, b: number, signed: boolean): number {
  const p = signed ? (a | 0) * (b | 0) : (a >>> 0) * (b >>> 0)
  if (p >= MINN && p <= MAXN) return Math.floor(p / TWO32) | 0
  const r = signed ? BigInt(a | 0) * BigInt(b | 0) : BigInt(a >>> 0) * BigInt(b >>> 0)
  return Number(BigInt.asIntN(32, r >> 32n))
}
/** Full 64-bit product of two 32-bit values as i64. */
export function mulwide32(a: number, b: number, signed: boolean): number | bigint {
  const p = signed ? (a | 0) * (b | 0) : (a >>> 0) * (b >>> 0)
  if (p >= MINN && p <= MAXN) return p + 0
  return n64(signed ? BigInt(a | 0) * BigInt(b | 0) : BigInt(a >>> 0) * BigInt(b >>> 0))
}
export function divs32(a: number, b: number): number {
  if (b === 0) return -1
  return (a / b) | 0
}
export function divu32(a: number, b: number): number {
  if (b === 0) return -1
  return ((a >>> 0) / (b >>> 0)) | 0
}
export function rems32(a: number, b: number): number {
  if (b === 0) return a
  return (a % b) | 0
}
export function remu32(a: number, b: number): number {
  if (b === 0) return a
  return ((a >>> 0) % (b >>> 0)) | 0
}
/** bfe: extract `len` bits at `pos` (PTX ISA "bfe"), sign-extending for signed types. */
export function bfe32(a: number, pos: number, len: number, signed: boolean): number {
  pos &= 0xff
  len &= 0xff
  const msb = signed ? (len === 0 ? false : pos + len - 1 >= 32 ? a < 0 : ((a >>> (pos + len - 1)) & 1) === 1) : false
  let d = 0
  for (let i = 0; i < 32; i++) {
    const bit = i < len && pos + i <= 31 ? (a >>> (pos + i)) & 1 : msb ? 1 : 0
    d |= bit << i
  }
  return d | 0
}
export function bfe64(a: number | bigint, pos: number, len: number, signed: boolean): number | bigint {
  pos &= 0xff
  len &= 0xff
  const u = u64b(a)
  let msb = false
  if (signed && len !== 0) msb = pos + len - 1 >= 64 ? big(a) < 0n : ((u >> BigInt(pos + len - 1)) & 1n) === 1n
  let d = 0n
  for (let i = 0; i < 64; i++) {
    const bit = i < len && pos + i <= 63 ? (u >> BigInt(pos + i)) & 1n : msb ? 1n : 0n
    d |= bit << BigInt(i)
  }
  return n64(d)
}
export function bfi32(a: number, b: number, pos: number, len: number): number {
  pos &= 0xff
  len &= 0xff
  let f = b
  for (let i = 0; i < len && pos + i <= 31; i++) {
    const bit = (a >>> i) & 1
    f = (f & ~(1 << (pos + i))) | (bit << (pos + i))
  }
  return f | 0
}
export function bfi64(a: number | bigint, b: number | bigint, pos: number, len: number): number | bigint {
  pos &= 0xff
  len &= 0xff
  const ua = u64b(a)
  let f = u64b(b)
  for (let i = 0; i < len && pos + i <= 63; i++) {
    const bit = (ua >> BigInt(i)) & 1n
    const m = 1n << BigInt(pos + i)
    f = (f & ~m) | (bit << BigInt(pos + i))
  }
  return n64(f)
}
/** bfind: position of the most significant non-sign bit, 0xffffffff when none. */
export function bfind32(a: number, signed: boolean, shiftamt: boolean): number {
  let x = a >>> 0
  if (signed && a < 0) x = ~a >>> 0
  if (x === 0) return -1
  const pos = 31 - Math.clz32(x)
  return shiftamt ? 31 - pos : pos
}
export function bfind64(a: number | bigint, signed: boolean, shiftamt: boolean): number {
  let x = u64b(a)
  if (signed && big(a) < 0n) x = BigInt.asUintN(64, ~big(a))
  if (x === 0n) return -1
  const pos = x.toString(2).length - 1
  return shiftamt ? 63 - pos : pos
}
/** prmt: byte permute (PTX ISA "prmt"), default and .f4e/.b4e/.rc8/.ecl/.ecr/.rc16 modes. */
export function prmt(a: number, b: number, c: number, mode: string): number {
  const bytes = [a & 0xff, (a >>> 8) & 0xff, (a >>> 16) & 0xff, (a >>> 24) & 0xff, b & 0xff, (b >>> 8) & 0xff, (b >>> 16) & 0xff, (b >>> 24) & 0xff]
  let sel: number[]
  if (mode === '') {
    let d = 0
    for (let i = 0; i < 4; i++) {
      const s = (c >>> (4 * i)) & 0xf
      let v = bytes[s & 7]!
      if (s & 8) v = v & 0x80 ? 0xff : 0
      d |= v << (8 * i)
    }
    return d | 0
  }
  const n = c & 3
  switch (mode) {
    case 'f4e': sel = [n, n + 1, n + 2, n + 3].map((x) => x & 7); break
    case 'b4e': sel = [8 - n, 7 - n, 6 - n, 5 - n].map((x) => x & 7); break
    case 'rc8': sel = [n, n, n, n]; break
    case 'ecl': sel = [0, 1, 2, 3].map((i) => (i <= n ? n : i)); break
    case 'ecr': sel = [0, 1, 2, 3].map((i) => (i >= n ? n : i)); break
    case 'rc16': sel = n & 1 ? [2, 3, 2, 3] : [0, 1, 0, 1]; break
    default: throw new Error(`prmt mode ${mode}`)
  }
  let d = 0
  for (let i = 0; i < 4; i++) d |= bytes[sel[i]!]! << (8 * i)
  return d | 0
}
export function lop3(a: number, b: number, c: number, lut: number): number {
  let d = 0
  if (lut & 0x01) d |= ~a & ~b & ~c
  if (lut & 0x02) d |= ~a & ~b & c
  if (lut & 0x04) d |= ~a & b & ~c
  if (lut & 0x08) d |= ~a & b & c
  if (lut & 0x10) d |= a & ~b & ~c
  if (lut & 0x20) d |= a & ~b & c
  if (lut & 0x40) d |= a & b & ~c
  if (lut & 0x80) d |= a & b & c
  return d | 0
}
/** Funnel shift (shf.l / shf.r, .clamp or .wrap). Returns 32 bits. */
export function shf(a: number, b: number, n: number, left: boolean, clamp: boolean): number {
  n = clamp ? Math.min(n >>> 0, 32) : n & 31
  const v = (BigInt(b >>> 0) << 32n) | BigInt(a >>> 0)
  if (left) return Number(BigInt.asIntN(32, (v << BigInt(n)) >> 32n))
  return Number(BigInt.asIntN(32, v >> BigInt(n)))
}
/** dp4a / dp2a. */
export function dp4a(a: number, b: number, c: number, as: boolean, bs: boolean): number {
  let s = c | 0
  for (let i = 0; i < 4; i++) {
    let x = (a >>> (8 * i)) & 0xff
    let y = (b >>> (8 * i)) & 0xff
    if (as && x & 0x80) x -= 256
    if (bs && y & 0x80) y -= 256
    s = (s + x * y) | 0
  }
  return s
}
export function dp2a(a: number, b: number, c: number, as: boolean, bs: boolean, hi: boolean): number {
  let s = c | 0
  for (let i = 0; i < 2; i++) {
    let x = (a >>> (16 * i)) & 0xffff
    let y = (b >>> (8 * (i + (hi ? 2 : 0)))) & 0xff
    if (as && x & 0x8000) x -= 65536
    if (bs && y & 0x80) y -= 256
    s = (s + x * y) | 0
  }
  return s
}

// --- bit casts ---

export function f32FromBits(x: number): number { sI32[0] = x; return sF32[0]! }
export function bitsFromF32(x: number): number {
  if (x !== x) return 0x7fffffff
  sF32[0] = x
  return sI32[0]!
}
export function f64FromBits(x: number | bigint): number {
  sI32[LO] = lo32(x); sI32[HI] = hi32(x)
  return sF64[0]!
}
export function bitsFromF64(x: number): number | bigint {
  if (x !== x) return mk64(-1, 0x7fffffff)
  sF64[0] = x
  return mk64(sU32[LO]!, sI32[HI]!)
}

// --- floating point ---

export const fround = Math.fround
const F32_MIN_NORMAL = 1.1754943508222875e-38
export function ftz(x: number): number {
  return x !== 0 && x > -F32_MIN_NORMAL && x < F32_MIN_NORMAL ? (x < 0 ? -0 : 0) : x
}
export function sat(x: number): number {
  return x !== x ? 0 : x < 0 ? 0 : x > 1 ? 1 : x
}
/** PTX min/max: NaN inputs are ignored unless both are NaN; -0 < +0. */
export function fmin(a: number, b: number): number {
  if (a !== a) return b
  if (b !== b) return a
  if (a === 0 && b === 0) return Object.is(a, -0) ? a : b
  return a < b ? a : b
}
export function fmax(a: number, b: number): number {
  if (a !== a) return b
  if (b !== b) return a
  if (a === 0 && b === 0) return Object.is(a, -0) ? b : a
  return a > b ? a : b
}
export function fminNaN(a: number, b: number): number { return a !== a || b !== b ? NaN : fmin(a, b) }
export function fmaxNaN(a: number, b: number): number { return a !== a || b !== b ? NaN : fmax(a, b) }

function nextUp64(x: number): number {
  if (x !== x || x === Infinity) return x
  if (x === 0) return 5e-324
  sF64[0] = x
  let lo = sU32[LO]!, hi = sU32[HI]!
  if (x > 0) { lo = (lo + 1) >>> 0; if (lo === 0) hi = (hi + 1) >>> 0 } else { if (lo === 0) hi = (hi - 1) >>> 0; lo = (lo - 1) >>> 0 }
  sU32[LO] = lo; sU32[HI] = hi
  return sF64[0]!
}
function nextDown64(x: number): number { return -nextUp64(-x) }
function isOdd64(x: number): boolean { sF64[0] = x; return (sU32[LO]! & 1) === 1 }

/** Exact error of a + b (TwoSum). */
function twoSumErr(a: number, b: number, s: number): number {
  const bb = s - a
  return (a - (s - bb)) + (b - bb)
}
const SPLIT = 134217729 // 2^27 + 1
function twoProdErr(a: number, b: number, p: number): number {
  let t = SPLIT * a
  const ah = t - (t - a), al = a - ah
  t = SPLIT * b
  const bh = t - (t - b), bl = b - bh
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl
}

/** Decomposes a finite double into m * 2^e with integer m (BigInt). */
function decompose(x: number): [bigint, number] {
  sF64[0] = x
  const hi = sU32[HI]!, lo = sU32[LO]!
  const exp = (hi >>> 20) & 0x7ff
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo)
  let e: number
  if (exp === 0) e = -1074
  else { m |= 1n << 52n; e = exp - 1075 }
  if (hi >>> 31) m = -m
  return [m, e]
}
/** Rounds m * 2^e (exact rational with integer m) to the nearest double, ties to even. */
function roundBigToDouble(m: bigint, e: number, negZero: boolean): number {
  if (m === 0n) return negZero ? -0 : 0
  const neg = m < 0n
  if (neg) m = -m
  const bits = m.toString(2).length
  // target: 53 significant bits, exponent of the lsb at least -1074
  let shift = bits - 53
  if (e + shift < -1074) shift = -1074 - e
  let q: bigint
  if (shift > 0) {
    const sb = BigInt(shift)
    q = m >> sb
    const rem = m - (q << sb)
    const half = 1n << (sb - 1n)
    if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n
    e += shift
  } else q = m
  let r = Number(q) * 2 ** e
  if (!Number.isFinite(r)) {
    // 2**e may overflow while the product does not
    r = Number(q) * 2 ** (e - 64) * 2 ** 64
  }
  if (r === 0 || e < -1074 + 60) {
    // scale in two steps to avoid losing subnormal bits
    r = Number(q) * 2 ** (e + 600) * 2 ** -600
  }
  return neg ? -r : r
}
/** Correctly rounded fused multiply-add in binary64 (round to nearest even). */
export function fma64(a: number, b: number, c: number): number {
  const p = a * b
  // the exact product of finite a, b is finite even where p overflows: an infinite (or NaN) c is the result
  if (!Number.isFinite(c) && Number.isFinite(a) && Number.isFinite(b)) return c
  if (!Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c)) return p + c
  if (a === 0 || b === 0) return p + c
  const ap = Math.abs(p)
  if (ap < 1e300 && ap > 1e-290 && Math.abs(c) < 1e300) {
    const e = twoProdErr(a, b, p)
    const s = p + c
    const t = twoSumErr(p, c, s)
    const u = t + e
    const v = twoSumErr(t, e, u)
    if (v === 0) {
      const r = s + u
      if (r !== 0) return r
    }
  }
  const [ma, ea] = decompose(a)
  const [mb, eb] = decompose(b)
  // c = ±0 adds nothing to the nonzero product: its rounding, with the product's sign where it underflows
  // to zero (−tiny + 0 rounds to −0, which p + c would give as +0)
  if (c === 0) return roundBigToDouble(ma * mb, ea + eb, false)
  const [mc, ec] = decompose(c)
  const ep = ea + eb
  const e = Math.min(ep, ec)
  const sum = ((ma * mb) << BigInt(ep - e)) + (mc << BigInt(ec - e))
  if (sum === 0n) return p + c // sign of zero per IEEE: +0 in RN unless both negative
  return roundBigToDouble(sum, e, false)
}
/** fma.rn.f32 on f32 inputs. The product is exact in binary64, so s = RN64(a*b + c) can only round wrongly
 *  to f32 when s lies exactly on a midpoint between two f32 values (an f32 midpoint is a double, so no
 *  midpoint lies strictly between s and the exact sum); then the sign of the exact error decides. */
export function fma32(a: number, b: number, c: number): number {
  const p = a * b
  const s = p + c
  const f = fround(s)
  const g = 2 * s - f
  if (g === f || fround(g) !== g || f - f !== 0) {
    if (f - f === 0 || s !== s || s - s !== 0) return f
    return fma32Slow(p, c, s)
  }
  const err = twoSumErr(p, c, s)
  return err === 0 ? f : err > 0 ? Math.max(f, g) : Math.min(f, g)
}
/** Results past the f32 range: round-to-odd in binary64, then to f32. */
function fma32Slow(p: number, c: number, s: number): number {
  const err = twoSumErr(p, c, s)
  if (err === 0 || isOdd64(s)) return fround(s)
  return fround(err > 0 ? nextUp64(s) : nextDown64(s))
}

export type RoundMode = 'rn' | 'rz' | 'rm' | 'rp'

/** Rounds an exact value given as s (nearest double) + err (exact remainder) to f32 in mode. */
function dirRound32(s: number, err: number, mode: RoundMode): number {
  if (mode === 'rn') return fround(s)
  if (s !== s) return s
  let f = fround(s)
  // f32 neighbours of the exact value
  let lo: number, hi: number
  if (f === s) {
    if (err === 0) return f
    if (err > 0) { lo = f; hi = nextUp32(f) } else { hi = f; lo = nextDown32(f) }
  } else if (f < s) { lo = f; hi = nextUp32(f) } else { hi = f; lo = nextDown32(f) }
  if (!Number.isFinite(s)) { lo = hi = s }
  switch (mode) {
    case 'rz': f = (s !== 0 ? s > 0 : err > 0) ? lo : hi; break
    case 'rm': f = lo; break
    case 'rp': f = hi; break
  }
  if (f === Infinity && mode !== 'rp' && (mode === 'rz' || mode === 'rm') && Number.isFinite(s)) f = 3.4028234663852886e38
  if (f === -Infinity && (mode === 'rz' || mode === 'rp') && Number.isFinite(s)) f = -3.4028234663852886e38
  return f
}
export function nextUp32(x: number): number {
  if (x !== x || x === Infinity) return x
  if (x === 0) return 1.401298464324817e-45
  sF32[0] = x
  if (x > 0) sI32[0] = sI32[0]! + 1; else sI32[0] = sI32[0]! - 1
  return sF32[0]!
}
export function nextDown32(x: number): number { return -nextUp32(-x) }

/** IEEE 754 §6.3: an exact zero sum x + y of addends of opposite signs is +0 in every rounding direction but
 *  roundTowardNegative, where it is −0 (JavaScript's + rounds to nearest, so it says +0). */
function zeroSum(s: number, x: number, y: number, mode: RoundMode): number {
  if (s !== 0 || mode !== 'rm' || (Object.is(x, 0) && Object.is(y, 0))) return s
  return -0
}

/** Directed-rounding f32 arithmetic (add/sub/mul/div/sqrt/fma with .rz/.rm/.rp). */
export function fop32(op: string, mode: RoundMode, a: number, b: number, c = 0): number {
  let s: number, err = 0
  switch (op) {
    case 'add': s = zeroSum(a + b, a, b, mode); err = Number.isFinite(s) ? twoSumErr(a, b, s) : 0; break
    case 'sub': s = zeroSum(a - b, a, -b, mode); err = Number.isFinite(s) ? twoSumErr(a, -b, s) : 0; break
    case 'mul': s = a * b; break
    // signs of the exact remainders via BigInt (an fma-computed remainder can underflow to zero)
    case 'div': s = a / b; err = Number.isFinite(s) && Number.isFinite(a) && b !== 0 && Number.isFinite(b) ? exactSign(-s, b, a, 0) * Math.sign(b) : 0; break
    case 'sqrt': s = Math.sqrt(a); err = Number.isFinite(s) && s > 0 ? exactSign(-s, s, a, 0) : 0; break
    // a·b of two f32 values is exact in binary64
    case 'fma': { const p = a * b; s = zeroSum(p + c, p, c, mode); err = Number.isFinite(s) ? twoSumErr(p, c, s) : 0; break }
    default: throw new Error(op)
  }
  return dirRound32(s, err, mode)
}
/** Directed-rounding f64 arithmetic. */
export function fop64(op: string, mode: RoundMode, a: number, b: number, c = 0): number {
  let s: number, err = 0
  switch (op) {
    case 'add': s = zeroSum(a + b, a, b, mode); err = Number.isFinite(s) ? twoSumErr(a, b, s) : 0; break
    case 'sub': s = zeroSum(a - b, a, -b, mode); err = Number.isFinite(s) ? twoSumErr(a, -b, s) : 0; break
    case 'mul': s = a * b; err = Number.isFinite(s) && Number.isFinite(a) && Number.isFinite(b) ? exactSign(a, b, 0, s) : 0; break
    case 'div': s = a / b; err = Number.isFinite(s) && Number.isFinite(a) && b !== 0 && Number.isFinite(b) ? exactSign(-s, b, a, 0) * Math.sign(b) : 0; break
    case 'sqrt': s = Math.sqrt(a); err = Number.isFinite(s) && s > 0 ? exactSign(-s, s, a, 0) : 0; break
    case 'fma': s = fma64(a, b, c); { const sb = a * b; err = 0; if (Number.isFinite(s) && Number.isFinite(sb)) { /* sign of exact - s */ err = exactSign(a, b, c, s) } if (err === 0) s = zeroSum(s, sb, c, mode) } break
    default: throw new Error(op)
  }
  if (mode === 'rn') return s
  if (!Number.isFinite(s)) {
    // overflow of finite operands: directed modes stop at the largest finite value
    if (s !== s || !Number.isFinite(a) || !Number.isFinite(b) || !Number.isFinite(c) || (op === 'div' && b === 0)) return s
    const pos = s > 0
    if (mode === 'rz' || (mode === 'rm' && pos) || (mode === 'rp' && !pos)) return pos ? Number.MAX_VALUE : -Number.MAX_VALUE
    return s
  }
  if (err === 0) return s
  if (mode === 'rz') return (s > 0 && err < 0) || (s < 0 && err > 0) ? (err < 0 ? nextDown64(s) : nextUp64(s)) : s
  if (mode === 'rm') return err < 0 ? nextDown64(s) : s
  return err > 0 ? nextUp64(s) : s
}
function exactSign(a: number, b: number, c: number, s: number): number {
  const [ma, ea] = decompose(a), [mb, eb] = decompose(b), [mc, ec] = decompose(c), [ms, es] = decompose(s)
  const ep = ea + eb
  const e = Math.min(ep, ec, es)
  const d = ((ma * mb) << BigInt(ep - e)) + (mc << BigInt(ec - e)) - (ms << BigInt(es - e))
  return d > 0n ? 1 : d < 0n ? -1 : 0
}
/** f64 → f32 with a rounding mode (cvt.rn/rz/rm/rp.f32.f64). */
export function cvt32(x: number, mode: RoundMode): number {
  return dirRound32(x, 0, mode)
}

// --- half precision ---

/** Rounds a double to a binary format with `mant` fraction bits and exponent range, returns the bits. */
function toSmallFloat(x: number, mant: number, ebits: number, mode: RoundMode, satfinite = false): number {
  const bias = (1 << (ebits - 1)) - 1
  const expMax = (1 << ebits) - 1
  const signBit = 1 << (mant + ebits)
  if (x !== x) return (expMax << mant) | (1 << (mant - 1)) | ((1 << (mant - 1)) - 1) // canonical NaN 0x7fff / 0x7fff
  const neg = x < 0 || Object.is(x, -0)
  let a = Math.abs(x)
  const sign = neg ? signBit : 0
  const maxFinite = (expMax - 1) << mant | ((1 << mant) - 1)
  if (a === Infinity) return satfinite ? sign | maxFinite : sign | (expMax << mant)
  if (a === 0) return sign
  // exponent of a
  let e = Math.floor(Math.log2(a))
  if (2 ** e > a) e--
  if (2 ** (e + 1) <= a) e++
  const minExp = 1 - bias
  const ee = Math.max(e, minExp)
  // scale so the lsb of the target is 1
  const scaled = a * 2 ** (mant - ee) // exact (power of two scaling within range)
  let q = Math.floor(scaled)
  const rem = scaled - q
  const up = mode === 'rn' ? rem > 0.5 || (rem === 0.5 && (q & 1) === 1) : mode === 'rz' ? false : mode === 'rp' ? rem > 0 && !neg : rem > 0 && neg
  if (up) q += 1
  // q in [0, 2^(mant+1)]; reassemble
  let bits: number
  if (q === 0) return sign
  if (ee === minExp && q < 1 << mant) bits = q // subnormal
  else {
    let E = ee + bias
    if (q >= 1 << (mant + 1)) { q >>= 1; E++ }
    if (E >= expMax) {
      const toInf = mode === 'rn' || (mode === 'rp' && !neg) || (mode === 'rm' && neg)
      return sign | (toInf && !satfinite ? expMax << mant : maxFinite)
    }
    bits = (E << mant) | (q & ((1 << mant) - 1))
  }
  return sign | bits
}
const nanBits = new Float64Array(1)
const nanWords = new Uint32Array(nanBits.buffer)
/** A widening conversion's NaN: the sign and the `bits`-bit payload kept at the top of the fraction, the quiet bit
 *  set (IEEE 754's conversion of a signaling NaN; the f32 a register holds keeps the payload's top 23 bits). */
function quietNaN(negative: boolean, payload: number, bits: number): number {
  nanWords[0] = 0
  nanWords[1] = (negative ? 0x80000000 : 0) | 0x7ff80000 | (payload << (20 - bits))
  return nanBits[0]!
}
function fromSmallFloat(h: number, mant: number, ebits: number): number {
  const bias = (1 << (ebits - 1)) - 1
  const expMax = (1 << ebits) - 1
  const s = (h >>> (mant + ebits)) & 1 ? -1 : 1
  const E = (h >>> mant) & expMax
  const M = h & ((1 << mant) - 1)
  if (E === expMax) return M ? quietNaN(s < 0, M, mant) : s * Infinity
  if (E === 0) return s * M * 2 ** (1 - bias - mant)
  return s * (M + (1 << mant)) * 2 ** (E - bias - mant)
}
export function f16ToNum(h: number): number { return fromSmallFloat(h & 0xffff, 10, 5) }
export function numToF16(x: number, mode: RoundMode = 'rn', satfinite = false): number { return toSmallFloat(x, 10, 5, mode, satfinite) }
export function bf16ToNum(h: number): number { return fromSmallFloat(h & 0xffff, 7, 8) }
export function numToBf16(x: number, mode: RoundMode = 'rn', satfinite = false): number {
  if (x !== x) return 0x7fff
  return toSmallFloat(x, 7, 8, mode, satfinite)
}

/** .relu on a half-precision result: negative values become +0, NaN becomes the canonical NaN 0x7fff. */
export function relu16(h: number, bf: boolean): number {
  const nan = bf ? (h & 0x7f80) === 0x7f80 && (h & 0x7f) !== 0 : (h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0
  if (nan) return 0x7fff
  return h & 0x8000 ? 0 : h
}

// --- 8-bit floats (PTX .e4m3x2 / .e5m2x2, OCP FP8): e4m3 has no infinities, S.1111.111 is NaN, max 448;
// e5m2 is IEEE-like (max 57344). Conversions to them are .rn.satfinite: overflow and ±Inf give ±max.

/** Rounds |x| (finite, > 0) to `mant` fraction bits with smallest normal exponent `emin`, ties to even. */
function roundMag(a: number, mant: number, emin: number): [number, number] {
  let e = Math.floor(Math.log2(a))
  if (2 ** e > a) e--
  if (2 ** (e + 1) <= a) e++
  if (e < emin) e = emin
  const scaled = a * 2 ** (mant - e)
  let q = Math.floor(scaled)
  const rem = scaled - q
  if (rem > 0.5 || (rem === 0.5 && (q & 1) === 1)) q++
  if (q >= 2 ** (mant + 1)) { q /= 2; e++ }
  return [q, e]
}
export function numToE4m3(x: number): number {
  if (x !== x) return 0x7f
  const sign = x < 0 || Object.is(x, -0) ? 0x80 : 0
  const a = Math.abs(x)
  if (a >= 448) return sign | 0x7e
  if (a === 0) return sign
  const [q, e] = roundMag(a, 3, -6)
  if (q < 8) return sign | q // subnormal (e === -6)
  if (e > 8 || (e === 8 && q > 14)) return sign | 0x7e
  return sign | ((e + 7) << 3) | (q & 7)
}
export function numToE5m2(x: number): number {
  if (x !== x) return 0x7f
  const sign = x < 0 || Object.is(x, -0) ? 0x80 : 0
  const a = Math.abs(x)
  if (a === 0) return sign
  if (a >= 57344) return sign | 0x7b
  const [q, e] = roundMag(a, 2, -14)
  if (q < 4) return sign | q
  if (e > 15) return sign | 0x7b
  return sign | ((e + 15) << 2) | (q & 3)
}
export function e4m3ToNum(b: number): number {
  const s = b & 0x80 ? -1 : 1
  const E = (b >>> 3) & 15, M = b & 7
  if (E === 15 && M === 7) return NaN
  return E === 0 ? s * M * 2 ** -9 : s * (8 + M) * 2 ** (E - 10)
}
export function e5m2ToNum(b: number): number { return fromSmallFloat(b & 0xff, 2, 5) }
/** fma.rn.f16: a*b exact in double, + c exact in double for halves (exponent range small). */
export function fmaH(a: number, b: number, c: number): number { return numToF16(a * b + c) }
export function fmaB(a: number, b: number, c: number): number { return numToBf16(fma32exact(a, b, c)) }
function fma32exact(a: number, b: number, c: number): number {
  // a, b, c are bf16 values; a*b has ≤16 significant bits, sum exact in double unless exponents are far apart
  const p = a * b
  const s = p + c
  const err = Number.isFinite(s) ? twoSumErr(p, c, s) : 0
  if (err === 0 || isOdd64(s)) return s
  return err > 0 ? nextUp64(s) : nextDown64(s)
}

// --- conversions float → int (cvt.rni/rzi/rmi/rpi with saturation as PTX defines: NaN → 0) ---

export function roundInt(x: number, mode: string): number {
  switch (mode) {
    case 'rni': {
      const r = Math.round(x)
      return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r
    }
    case 'rzi': return Math.trunc(x)
    case 'rmi': return Math.floor(x)
    case 'rpi': return Math.ceil(x)
    default: return x
  }
}
export function f2i32(x: number, mode: string, signed: boolean): number {
  if (x !== x) return 0
  const r = roundInt(x, mode)
  if (signed) return r <= -2147483648 ? -2147483648 : r >= 2147483647 ? 2147483647 : r | 0
  return r <= 0 ? 0 : r >= 4294967295 ? -1 : r | 0
}
export function f2iN(x: number, mode: string, signed: boolean, bits: number): number {
  if (x !== x) return 0
  const r = roundInt(x, mode)
  const lo = signed ? -(2 ** (bits - 1)) : 0
  const hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1
  const v = r < lo ? lo : r > hi ? hi : r
  return v & (2 ** bits - 1)
}
export function f2i64(x: number, mode: string, signed: boolean): number | bigint {
  if (x !== x) return 0
  const r = roundInt(x, mode)
  if (signed) {
    if (r <= -9223372036854775808) return -9223372036854775808n
    if (r >= 9223372036854775807) return 9223372036854775807n
    return Number.isSafeInteger(r) ? r + 0 : n64(BigInt(r))
  }
  if (r <= 0) return 0
  if (r >= 18446744073709551615) return -1
  return Number.isSafeInteger(r) ? r : n64(BigInt(r))
}
/** Integer (i64, unsigned or signed) → double/float with a rounding mode, exactly. */
export function i64ToF(a: number | bigint, unsigned: boolean, f32: boolean, mode: RoundMode): number {
  const v = unsigned ? u64b(a) : big(a)
  if (typeof a === 'number' && (!unsigned || a >= 0)) return f32 ? (mode === 'rn' ? fround(a) : dirRound32(a, 0, mode)) : a
  // exact rational with integer m: round via decomposition
  const neg = v < 0n
  let m = neg ? -v : v
  const target = f32 ? 24 : 53
  const len = m.toString(2).length
  if (len <= target) { const x = Number(neg ? -m : m); return f32 ? fround(x) : x }
  const sh = BigInt(len - target)
  let q = m >> sh
  const rem = m - (q << sh)
  const half = 1n << (sh - 1n)
  let up: boolean
  if (mode === 'rn') up = rem > half || (rem === half && (q & 1n) === 1n)
  else if (mode === 'rz') up = false
  else if (mode === 'rp') up = rem > 0n && !neg
  else up = rem > 0n && neg
  if (up) q += 1n
  m = q << sh
  const x = Number(neg ? -m : m)
  return f32 ? fround(x) : x
}
/** int32 → f32 with a rounding mode. */
export function i32ToF32(x: number, mode: RoundMode): number {
  return mode === 'rn' ? fround(x) : dirRound32(x, 0, mode)
}

// --- atomics helpers ---
export function incWrap(old: number, b: number): number { return (old >>> 0) >= (b >>> 0) ? 0 : (old + 1) | 0 }
export function decWrap(old: number, b: number): number { return old === 0 || (old >>> 0) > (b >>> 0) ? b | 0 : (old - 1) | 0 }

export function copysign(x: number, s: number): number {
  const neg = s < 0 || Object.is(s, -0) || (s !== s && bitsFromF64Sign(s))
  return neg ? -Math.abs(x) : Math.abs(x)
}
function bitsFromF64Sign(x: number): boolean { sF64[0] = x; return sI32[HI]! < 0 }
export function satS32(x: number): number {
  return x > 2147483647 ? 2147483647 : x < -2147483648 ? -2147483648 : x | 0
}

/** cvt.{rna,rn,rz}{.satfinite}.tf32.f32 (PTX ISA, "cvt"): the f32 rounded to tf32's 10 fraction bits (its low 13
 *  bits zero), ties away from zero (rna) or to even (rn), or truncated (rz); NaN and infinities pass, and
 *  .satfinite turns an overflow into the largest finite tf32 of its sign. */
export function numToTf32(x: number, mode: string, satfinite: boolean): number {
  if (x !== x || x === Infinity || x === -Infinity) return x
  const bits = bitsFromF32(x) >>> 0
  const low = bits & 0x1fff
  let u = bits - low
  if (mode === 'rna' ? low >= 0x1000 : mode === 'rn' ? low > 0x1000 || (low === 0x1000 && (u & 0x2000) !== 0) : false) u += 0x2000
  const r = f32FromBits(u | 0)
  if (satfinite && (r === Infinity || r === -Infinity)) return f32FromBits((bits & 0x80000000) | 0x7f7fe000)
  return r
}

/** Taylor coefficients of 2^f = Σ (f·ln 2)^k / k!, k = 9 … 0, as f64 constants (ex2f; the WebAssembly tier's
 *  helper writes the same constants). */
export const EX2_COEFFS: readonly number[] = (() => {
  const c: number[] = []
  let term = 1
  for (let k = 0; k <= 9; k++) { c.push(term); term = term * Math.LN2 / (k + 1) }
  return c.reverse()
})()

const EX2_SCALE = (() => {
  // 2^n for n = -151 … 128 (the nearest integers to x in [-151, 128)), exactly, from the bits of each
  const t = new Float64Array(280)
  const dv = new DataView(new ArrayBuffer(8))
  for (let n = -151; n <= 128; n++) { dv.setUint32(0, (n + 1023) << 20); dv.setUint32(4, 0); t[n + 151] = dv.getFloat64(0) }
  return t
})()

/**
 * 2^x for `ex2.approx.f32` (x an f32 value, the caller rounds the result to f32): x = n + f with n the nearest
 * integer (floor(x + 0.5), exact for an f32 x) and |f| ≤ 1/2, 2^f by its Taylor polynomial of degree 9 in
 * Horner's form (relative error below 7e-12), times 2^n exactly. Every step is one f64 operation, in the same
 * order in the WebAssembly tier's helper (emit-wasm.ts defineHelpers), so both tiers give the same bits; the
 * f32 result is within 1 ulp of 2^x, inside the ISA's bound (2 ulp). Where `2 ** x` went through the engine's
 * pow, the WebAssembly tier paid a call out to JavaScript for each one (47 ns a thread here; 3 ns now).
 * NaN gives NaN, x ≥ 128 +∞, x < −151 +0 (−∞ included).
 */
export function ex2f(x: number): number {
  if (!(x < 128)) return x !== x ? x : Infinity
  if (x < -151) return 0
  const n = Math.floor(x + 0.5)
  const f = x - n
  const c = EX2_COEFFS
  let p = c[0]!
  for (let k = 1; k < c.length; k++) p = p * f + c[k]!
  return p * EX2_SCALE[n + 151]!
}

/** 2/ln 2 = 2·log2(e): e^(2a) = 2^(a·TWO_OVER_LN2) (tanhf), log2(m) = 2·atanh(s)/ln 2 (lg2f). */
export const TWO_OVER_LN2 = 2 / Math.LN2
/** Below this |x|, tanhf takes the series x − x³/3 + 2x⁵/15 − 17x⁷/315 (the rest below 1e-16 of x). */
export const TANH_SMALL = 2 ** -6

/**
 * tanh(x) for `tanh.approx.f32` (x an f32 value, the caller rounds the result to f32; -use_fast_math's tanhf on
 * sm_75 and later): for |x| < 2^-6 the series x − x³/3 + 2x⁵/15 − 17x⁷/315, else the sign of x times
 * 1 − 2/(e^(2|x|) + 1) with e^(2|x|) = ex2f(|x|·2·log2 e) (relative error below 1e-11, which the subtraction
 * multiplies by at most 65 here); every step one f64 operation, in the same order in the WebAssembly tier's
 * helper, so both tiers give the same bits, within 1 ulp of tanh x rounded to f32 (the ISA allows 2^-11
 * relative). tanh(±0) is ±0, ±∞ gives ±1, NaN NaN.
 */
export function tanhf(x: number): number {
  const a = Math.abs(x)
  if (!(a >= TANH_SMALL)) {
    // (±0 and NaN are their own tanh; the series would give +0 for −0)
    if (!(a > 0)) return x
    const z = x * x
    return x + x * (z * (-1 / 3 + z * (2 / 15 + z * (-17 / 315))))
  }
  const t = 1 - 2 / (ex2f(a * TWO_OVER_LN2) + 1)
  return x < 0 ? -t : t
}

/** π/2 in two parts (fdlibm's pio2_1 and pio2_1t): its first 33 bits, so that k·PIO2_HI is exact for |k| < 2^20,
 *  and the rest; and 2/π. */
export const PIO2_HI = 1.57079632673412561417e+00
export const PIO2_LO = 6.07710050650619224932e-11
export const TWO_OVER_PI = 6.36619772367581382433e-01
/** Taylor coefficients in z = r² of sin r / r = Σ (−1)^k z^k/(2k+1)!, k = 6 … 0, and of cos r = Σ (−1)^k z^k/(2k)!,
 *  k = 7 … 0, as f64 constants (sincosf; the WebAssembly tier's helper writes the same ones). */
export const SIN_COEFFS: readonly number[] = (() => { const c: number[] = []; let f = 1; for (let k = 0; k <= 6; k++) { c.push((k & 1 ? -1 : 1) / f); f *= (2 * k + 2) * (2 * k + 3) } return c.reverse() })()
export const COS_COEFFS: readonly number[] = (() => { const c: number[] = []; let f = 1; for (let k = 0; k <= 7; k++) { c.push((k & 1 ? -1 : 1) / f); f *= (2 * k + 1) * (2 * k + 2) } return c.reverse() })()
/** The largest |x| sincosf reduces itself (then k < 2^20); beyond it, and for NaN and ±∞, both tiers take the
 *  engine's Math.sin/Math.cos (the WebAssembly tier calls out for those). */
export const TRIG_REDUCED = 2 ** 19

/**
 * sin(x) (`cos` false) or cos(x) for `sin.approx.f32`/`cos.approx.f32` (x an f32 value, the caller rounds the
 * result to f32; CUDA's __sinf, __cosf, __sincosf and __tanf): k = floor(x·2/π + 1/2), r = (x − k·PIO2_HI) −
 * k·PIO2_LO (|r| ≤ π/4, absolute error below 1e-20), then sin r or cos r by its Taylor polynomial in Horner's
 * form (relative error below 3e-14) and the sign of the quadrant (k, plus one for cos). Every step is one f64
 * operation, in the same order in the WebAssembly tier's helper, so both tiers give the same bits, within 1 ulp
 * of sin x rounded to f32 (the ISA allows 2^-20.9 absolute in [−π, π]); sin(±0) is ±0.
 */
export function sincosf(x: number, cos: boolean): number {
  if (!(Math.abs(x) <= TRIG_REDUCED)) return cos ? Math.cos(x) : Math.sin(x)
  const k = Math.floor(x * TWO_OVER_PI + 0.5)
  const r = (x - k * PIO2_HI) - k * PIO2_LO
  const z = r * r
  const q = (k + (cos ? 1 : 0)) & 3
  let p: number
  if ((q & 1) === 0) {
    p = SIN_COEFFS[0]!
    for (let i = 1; i < SIN_COEFFS.length; i++) p = p * z + SIN_COEFFS[i]!
    p = r * p
  } else {
    p = COS_COEFFS[0]!
    for (let i = 1; i < COS_COEFFS.length; i++) p = p * z + COS_COEFFS[i]!
  }
  return q & 2 ? -p : p
}

/** Coefficients 1/(2k+1), k = 8 … 0, of atanh's series Σ s^(2k+1)/(2k+1) in z = s² (lg2f; the WebAssembly tier's
 *  helper writes the same f64 constants). */
export const LG2_COEFFS: readonly number[] = Array.from({ length: 9 }, (_, i) => 1 / (2 * (8 - i) + 1))

/**
 * log2(x) for `lg2.approx.f32` (x an f32 value, the caller rounds the result to f32; CUDA's __logf, __log2f,
 * __log10f and __powf go through it): x = m·2^e exactly, with m in (√2/2, √2] (from x's f32 bits; the
 * WebAssembly helper takes its binary64 bits, the same exact m and e), s = (m − 1)/(m + 1) (|s| ≤ 0.172, m ± 1
 * exact), log2(m) = 2·atanh(s)/ln 2 by the series' first nine terms in Horner's form in z = s² (relative error below 1e-14), plus e. Every step is one f64
 * operation, in the same order in the WebAssembly tier's helper (emit-wasm.ts defineHelpers), so both tiers give
 * the same bits, within 1 ulp of log2(x) rounded to f32 (the ISA allows 2^-22 absolute near 1, 2 ulp elsewhere).
 * Where `Math.log2` went through the engine, the WebAssembly tier called out to JavaScript for each one.
 * ±0 gives −∞, +∞ +∞, a negative x or NaN gives NaN; powers of two are exact.
 */
export function lg2f(x: number): number {
  if (!(x > 0)) return x === 0 ? -Infinity : NaN
  if (x === Infinity) return Infinity
  // (an f32 subnormal scaled by 2^64, exactly, into the normal range)
  let e = 0
  if (x < F32_MIN_NORMAL) { x = x * 18446744073709551616; e = -64 }
  const bits = bitsFromF32(x)
  e += ((bits >>> 23) & 0xff) - 127
  let m = f32FromBits((bits & 0x007fffff) | 0x3f800000)
  if (m > Math.SQRT2) { m = m * 0.5; e = e + 1 }
  const s = (m - 1) / (m + 1)
  const z = s * s
  const c = LG2_COEFFS
  let p = c[0]!
  for (let k = 1; k < c.length; k++) p = p * z + c[k]!
  return e + s * (p * TWO_OVER_LN2)
}
