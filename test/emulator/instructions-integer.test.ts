import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { runForm, s, u, type Bits } from './ptx-harness.js'

const V32 = [0n, 1n, 2n, 3n, 7n, 31n, 32n, 33n, 0x7fffffffn, 0x80000000n, 0xffffffffn, 0xfffffffen, 12345n, u(-777, 32), 0x55555555n, 0x12345678n]
const V64 = [0n, 1n, 5n, 63n, 64n, 0x7fffffffn, 0x80000000n, 0xffffffffn, 0x100000000n, (1n << 53n) - 1n, 1n << 53n, (1n << 53n) + 1n, (1n << 63n) - 1n, 1n << 63n, u(-1, 64), u(-12345678901n, 64), 0x9e3779b97f4a7c15n]
const V16 = [0n, 1n, 2n, 15n, 16n, 0x7fffn, 0x8000n, 0xffffn, 1234n, u(-5, 16)]

function pairs(vs: Bits[]): Bits[][] { const out: Bits[][] = []; for (const a of vs) for (const b of vs) out.push([a, b]); return out }
function chunks<T>(xs: T[], n = 256): T[][] { const out: T[][] = []; for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n)); return out }

/** Runs `form` over every case and compares with `ref` (given unsigned operand bits, returns result bits). */
function check(form: string, dst: string, srcs: string[], cases: Bits[][], ref: (...a: Bits[]) => Bits): void {
  const bits = dst === 'pred' ? 32 : Number(dst.replace(/^[a-z]+/, ''))
  for (const part of chunks(cases)) {
    const got = runForm({ form, dst, srcs }, part)
    part.forEach((c, i) => {
      const want = u(ref(...c), bits)
      if (got[i]!.d !== want) assert.unreachable(`${form} with ${c.map((x) => '0x' + x.toString(16)).join(', ')}: got 0x${got[i]!.d.toString(16)}, want 0x${want.toString(16)}`)
    })
  }
}

// ---

const addSub = suite('add / sub')
addSub('32-bit wraps, .sat clamps', () => {
  check('add.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => a + b)
  check('add.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], pairs(V32), (a, b) => a + b)
  check('sub.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => a - b)
  const clamp = (x: bigint) => (x > 0x7fffffffn ? 0x7fffffffn : x < -0x80000000n ? -0x80000000n : x)
  check('add.sat.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => clamp(s(a, 32) + s(b, 32)))
  check('sub.sat.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => clamp(s(a, 32) - s(b, 32)))
})
addSub('64-bit is exact beyond 2^53', () => {
  check('add.s64 $d, $a, $b;', 's64', ['s64', 's64'], pairs(V64), (a, b) => a + b)
  check('sub.u64 $d, $a, $b;', 'u64', ['u64', 'u64'], pairs(V64), (a, b) => a - b)
  check('add.s64 $d, $a, -1;', 's64', ['s64'], V64.map((a) => [a]), (a) => a - 1n)
})
addSub('16-bit', () => {
  check('add.u16 $d, $a, $b;', 'u16', ['u16', 'u16'], pairs(V16), (a, b) => a + b)
  check('sub.s16 $d, $a, $b;', 's16', ['s16', 's16'], pairs(V16), (a, b) => a - b)
})
addSub('carry chains (add.cc/addc, sub.cc/subc) make 64-bit arithmetic from 32-bit halves', () => {
  const form = 'add.cc.u32 $d, $a, $b;\n  addc.u32 %r50, $a, $b;\n  addc.u32 %r51, 0, 0;\n  add.u32 $d, $d, %r51;'
  // d = lo(a+b) + carry-out of (a+b+carry(a+b))
  const ptxForm = form.replace('%r50', '%r12').replace('%r51', '%r13')
  void ptxForm
  check('add.cc.u32 $d, $a, $b;\n  addc.u32 $d, 0, 0;', 'u32', ['u32', 'u32'], pairs(V32), (a, b) => ((a + b) >> 32n))
  check('sub.cc.u32 $d, $a, $b;\n  subc.u32 $d, 0, 0;', 'u32', ['u32', 'u32'], pairs(V32), (a, b) => (a < b ? -1n : 0n))
  check('add.cc.u64 $d, $a, $b;\n  addc.u64 $d, 0, 0;', 'u64', ['u64', 'u64'], pairs(V64), (a, b) => ((a + b) >> 64n))
})

const mul = suite('mul / mad')
mul('lo, hi and wide forms', () => {
  check('mul.lo.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => a * b)
  check('mul.hi.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => (s(a, 32) * s(b, 32)) >> 32n)
  check('mul.hi.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], pairs(V32), (a, b) => (a * b) >> 32n)
  check('mul.wide.s32 $d, $a, $b;', 's64', ['s32', 's32'], pairs(V32), (a, b) => s(a, 32) * s(b, 32))
  check('mul.wide.u32 $d, $a, $b;', 'u64', ['u32', 'u32'], pairs(V32), (a, b) => a * b)
  check('mul.lo.u64 $d, $a, $b;', 'u64', ['u64', 'u64'], pairs(V64), (a, b) => a * b)
  check('mul.hi.u64 $d, $a, $b;', 'u64', ['u64', 'u64'], pairs(V64), (a, b) => (a * b) >> 64n)
  check('mul.hi.s64 $d, $a, $b;', 's64', ['s64', 's64'], pairs(V64), (a, b) => (s(a, 64) * s(b, 64)) >> 64n)
  check('mul.lo.s16 $d, $a, $b;', 's16', ['s16', 's16'], pairs(V16), (a, b) => a * b)
  check('mul.wide.u16 $d, $a, $b;', 'u32', ['u16', 'u16'], pairs(V16), (a, b) => a * b)
  check('mul24.lo.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], pairs(V32), (a, b) => (a & 0xffffffn) * (b & 0xffffffn))
})
mul('mad forms', () => {
  const trip = pairs(V32).map(([a, b], i) => [a!, b!, V32[i % V32.length]!])
  check('mad.lo.s32 $d, $a, $b, $c;', 's32', ['s32', 's32', 's32'], trip, (a, b, c) => a * b + c)
  check('mad.hi.u32 $d, $a, $b, $c;', 'u32', ['u32', 'u32', 'u32'], trip, (a, b, c) => ((a * b) >> 32n) + c)
  check('mad.wide.s32 $d, $a, $b, $c;', 's64', ['s32', 's32', 's64'], trip.map(([a, b, c]) => [a!, b!, u(s(c!, 32) * 99991n, 64)]), (a, b, c) => s(a, 32) * s(b, 32) + s(c, 64))
  const trip64 = pairs(V64).map(([a, b], i) => [a!, b!, V64[i % V64.length]!])
  check('mad.lo.u64 $d, $a, $b, $c;', 'u64', ['u64', 'u64', 'u64'], trip64, (a, b, c) => a * b + c)
})

const divRem = suite('div / rem')
// PTX leaves integer division by zero unspecified; the emulator does what NVIDIA GPUs do:
// the quotient is all ones and the remainder is the dividend.
const sdiv = (a: bigint, b: bigint, w: number) => (b === 0n ? -1n : s(a, w) / s(b, w))
const srem = (a: bigint, b: bigint, w: number) => (b === 0n ? a : s(a, w) % s(b, w))
divRem('32-bit, including division by zero and INT_MIN / -1', () => {
  check('div.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => sdiv(a, b, 32))
  check('div.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], pairs(V32), (a, b) => (b === 0n ? -1n : a / b))
  check('rem.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => srem(a, b, 32))
  check('rem.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], pairs(V32), (a, b) => (b === 0n ? a : a % b))
})
divRem('64-bit', () => {
  check('div.s64 $d, $a, $b;', 's64', ['s64', 's64'], pairs(V64), (a, b) => sdiv(a, b, 64))
  check('div.u64 $d, $a, $b;', 'u64', ['u64', 'u64'], pairs(V64), (a, b) => (b === 0n ? -1n : a / b))
  check('rem.s64 $d, $a, $b;', 's64', ['s64', 's64'], pairs(V64), (a, b) => srem(a, b, 64))
  check('rem.u64 $d, $a, $b;', 'u64', ['u64', 'u64'], pairs(V64), (a, b) => (b === 0n ? a : a % b))
})
divRem('16-bit', () => {
  check('div.s16 $d, $a, $b;', 's16', ['s16', 's16'], pairs(V16), (a, b) => sdiv(a, b, 16))
  check('rem.u16 $d, $a, $b;', 'u16', ['u16', 'u16'], pairs(V16), (a, b) => (b === 0n ? a : a % b))
})

const minMax = suite('min / max / abs / neg')
minMax('signed and unsigned, 16/32/64-bit', () => {
  const mn = (a: bigint, b: bigint) => (a < b ? a : b)
  const mx = (a: bigint, b: bigint) => (a > b ? a : b)
  check('min.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => mn(s(a, 32), s(b, 32)))
  check('max.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], pairs(V32), mx)
  check('min.u64 $d, $a, $b;', 'u64', ['u64', 'u64'], pairs(V64), mn)
  check('max.s64 $d, $a, $b;', 's64', ['s64', 's64'], pairs(V64), (a, b) => mx(s(a, 64), s(b, 64)))
  check('min.s16 $d, $a, $b;', 's16', ['s16', 's16'], pairs(V16), (a, b) => mn(s(a, 16), s(b, 16)))
  check('max.u16 $d, $a, $b;', 'u16', ['u16', 'u16'], pairs(V16), mx)
  check('abs.s32 $d, $a;', 's32', ['s32'], V32.map((a) => [a]), (a) => (s(a, 32) < 0n ? -s(a, 32) : a))
  check('neg.s32 $d, $a;', 's32', ['s32'], V32.map((a) => [a]), (a) => -a)
  check('abs.s64 $d, $a;', 's64', ['s64'], V64.map((a) => [a]), (a) => (s(a, 64) < 0n ? -s(a, 64) : a))
  check('neg.s64 $d, $a;', 's64', ['s64'], V64.map((a) => [a]), (a) => -a)
})

const logic = suite('and / or / xor / not / cnot / lop3')
logic('bitwise on 16/32/64 bits', () => {
  check('and.b32 $d, $a, $b;', 'b32', ['b32', 'b32'], pairs(V32), (a, b) => a & b)
  check('or.b32 $d, $a, $b;', 'b32', ['b32', 'b32'], pairs(V32), (a, b) => a | b)
  check('xor.b32 $d, $a, $b;', 'b32', ['b32', 'b32'], pairs(V32), (a, b) => a ^ b)
  check('not.b32 $d, $a;', 'b32', ['b32'], V32.map((a) => [a]), (a) => ~a)
  check('and.b64 $d, $a, $b;', 'b64', ['b64', 'b64'], pairs(V64), (a, b) => a & b)
  check('or.b64 $d, $a, $b;', 'b64', ['b64', 'b64'], pairs(V64), (a, b) => a | b)
  check('xor.b64 $d, $a, $b;', 'b64', ['b64', 'b64'], pairs(V64), (a, b) => a ^ b)
  check('not.b64 $d, $a;', 'b64', ['b64'], V64.map((a) => [a]), (a) => ~a)
  check('xor.b16 $d, $a, $b;', 'b16', ['b16', 'b16'], pairs(V16), (a, b) => a ^ b)
  check('cnot.b32 $d, $a;', 'b32', ['b32'], V32.map((a) => [a]), (a) => (a === 0n ? 1n : 0n))
  check('and.pred $d, $a, $b;', 'pred', ['pred', 'pred'], [[0n, 0n], [0n, 1n], [1n, 0n], [1n, 1n]], (a, b) => a & b)
  check('xor.pred $d, $a, $b;', 'pred', ['pred', 'pred'], [[0n, 0n], [0n, 1n], [1n, 0n], [1n, 1n]], (a, b) => a ^ b)
  check('not.pred $d, $a;', 'pred', ['pred'], [[0n], [1n]], (a) => 1n - a)
})
logic('lop3 evaluates the truth table', () => {
  const trip = pairs(V32).map(([a, b], i) => [a!, b!, V32[(i * 7) % V32.length]!])
  for (const lut of [0x00, 0x96, 0xe8, 0xca, 0xff, 0x3c, 0x80]) {
    check(`lop3.b32 $d, $a, $b, $c, ${lut};`, 'b32', ['b32', 'b32', 'b32'], trip, (a, b, c) => {
      let d = 0n
      for (let i = 0n; i < 32n; i++) {
        const idx = (((a >> i) & 1n) << 2n) | (((b >> i) & 1n) << 1n) | ((c >> i) & 1n)
        d |= BigInt((lut >> Number(idx)) & 1) << i
      }
      return d
    })
  }
})

const shifts = suite('shl / shr / shf')
shifts('amounts at and beyond the register width clamp', () => {
  const amounts = [0n, 1n, 5n, 15n, 16n, 17n, 31n, 32n, 33n, 63n, 64n, 65n, 200n, 0xffffffffn]
  const c32 = V32.flatMap((a) => amounts.map((n) => [a, n]))
  const c64 = V64.flatMap((a) => amounts.map((n) => [a, n]))
  const c16 = V16.flatMap((a) => amounts.map((n) => [a, n]))
  const cl = (n: bigint, w: bigint) => (n > w ? w : n)
  check('shl.b32 $d, $a, $b;', 'b32', ['b32', 'u32'], c32, (a, n) => (n >= 32n ? 0n : a << n))
  check('shr.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], c32, (a, n) => (n >= 32n ? 0n : a >> n))
  check('shr.s32 $d, $a, $b;', 's32', ['s32', 'u32'], c32, (a, n) => s(a, 32) >> cl(n, 32n))
  check('shl.b64 $d, $a, $b;', 'b64', ['b64', 'u32'], c64, (a, n) => (n >= 64n ? 0n : a << n))
  check('shr.u64 $d, $a, $b;', 'u64', ['u64', 'u32'], c64, (a, n) => (n >= 64n ? 0n : a >> n))
  check('shr.s64 $d, $a, $b;', 's64', ['s64', 'u32'], c64, (a, n) => s(a, 64) >> cl(n, 64n))
  check('shl.b16 $d, $a, $b;', 'b16', ['b16', 'u32'], c16, (a, n) => (n >= 16n ? 0n : a << n))
  check('shr.s16 $d, $a, $b;', 's16', ['s16', 'u32'], c16, (a, n) => s(a, 16) >> cl(n, 16n))
  check('shl.b32 $d, $a, 33;', 'b32', ['b32'], V32.map((a) => [a]), () => 0n)
  check('shr.s32 $d, $a, 40;', 's32', ['s32'], V32.map((a) => [a]), (a) => s(a, 32) >> 32n)
})
shifts('funnel shifts', () => {
  const amounts = [0n, 1n, 8n, 31n, 32n, 33n, 40n]
  const cases = pairs(V32.slice(0, 12)).flatMap(([a, b]) => amounts.map((n) => [a!, b!, n]))
  check('shf.l.clamp.b32 $d, $a, $b, $c;', 'b32', ['b32', 'b32', 'u32'], cases, (a, b, n) => (((b << 32n) | a) << (n > 32n ? 32n : n)) >> 32n)
  check('shf.r.wrap.b32 $d, $a, $b, $c;', 'b32', ['b32', 'b32', 'u32'], cases, (a, b, n) => ((b << 32n) | a) >> (n & 31n))
})

const bits = suite('popc / clz / brev / bfind / bfe / bfi / prmt')
function brevN(a: bigint, w: number): bigint { let d = 0n; for (let i = 0; i < w; i++) if ((a >> BigInt(i)) & 1n) d |= 1n << BigInt(w - 1 - i); return d }
function msb(a: bigint): bigint { return a === 0n ? 0xffffffffn : BigInt(a.toString(2).length - 1) }
bits('counting and reversing', () => {
  const pc = (a: bigint) => BigInt([...a.toString(2)].filter((c) => c === '1').length)
  check('popc.b32 $d, $a;', 'u32', ['b32'], V32.map((a) => [a]), pc)
  check('popc.b64 $d, $a;', 'u32', ['b64'], V64.map((a) => [a]), pc)
  check('clz.b32 $d, $a;', 'u32', ['b32'], V32.map((a) => [a]), (a) => 32n - BigInt(a === 0n ? 0 : a.toString(2).length))
  check('clz.b64 $d, $a;', 'u32', ['b64'], V64.map((a) => [a]), (a) => 64n - BigInt(a === 0n ? 0 : a.toString(2).length))
  check('brev.b32 $d, $a;', 'b32', ['b32'], V32.map((a) => [a]), (a) => brevN(a, 32))
  check('brev.b64 $d, $a;', 'b64', ['b64'], V64.map((a) => [a]), (a) => brevN(a, 64))
  check('bfind.u32 $d, $a;', 'u32', ['u32'], V32.map((a) => [a]), msb)
  check('bfind.s32 $d, $a;', 'u32', ['s32'], V32.map((a) => [a]), (a) => msb(s(a, 32) < 0n ? u(~s(a, 32), 32) : a))
  check('bfind.shiftamt.u32 $d, $a;', 'u32', ['u32'], V32.map((a) => [a]), (a) => (a === 0n ? 0xffffffffn : 31n - msb(a)))
  check('bfind.u64 $d, $a;', 'u32', ['u64'], V64.map((a) => [a]), msb)
})
bits('bit fields', () => {
  const fields = [[0n, 8n], [4n, 4n], [28n, 8n], [0n, 32n], [31n, 1n], [5n, 0n], [40n, 4n], [3n, 255n]]
  const cases = V32.flatMap((a) => fields.map(([p, l]) => [a, p!, l!]))
  const bfe = (a: bigint, p: bigint, l: bigint, w: number, signed: boolean) => {
    let d = 0n
    const sbit = signed && l > 0n ? (p + l - 1n >= BigInt(w) ? (a >> BigInt(w - 1)) & 1n : (a >> (p + l - 1n)) & 1n) : 0n
    for (let i = 0n; i < BigInt(w); i++) {
      const bit = i < l && p + i < BigInt(w) ? (a >> (p + i)) & 1n : sbit
      d |= bit << i
    }
    return d
  }
  check('bfe.u32 $d, $a, $b, $c;', 'u32', ['u32', 'u32', 'u32'], cases, (a, p, l) => bfe(a, p, l, 32, false))
  check('bfe.s32 $d, $a, $b, $c;', 's32', ['s32', 'u32', 'u32'], cases, (a, p, l) => bfe(a, p, l, 32, true))
  const c64 = V64.flatMap((a) => [[0n, 8n], [30n, 10n], [60n, 8n], [63n, 1n], [0n, 64n]].map(([p, l]) => [a, p!, l!]))
  check('bfe.s64 $d, $a, $b, $c;', 's64', ['s64', 'u32', 'u32'], c64, (a, p, l) => bfe(a, p, l, 64, true))
  check('bfe.u64 $d, $a, $b, $c;', 'u64', ['u64', 'u32', 'u32'], c64, (a, p, l) => bfe(a, p, l, 64, false))
  const bfi = (a: bigint, b: bigint, p: bigint, l: bigint, w: number) => {
    let f = b
    for (let i = 0n; i < l && p + i < BigInt(w); i++) f = (f & ~(1n << (p + i))) | (((a >> i) & 1n) << (p + i))
    return f
  }
  const ci = pairs(V32.slice(0, 8)).flatMap(([a, b]) => fields.map(([p, l]) => [a!, b!, p!, l!]))
  check('bfi.b32 $d, $a, $b, $c, $e;', 'b32', ['b32', 'b32', 'u32', 'u32'], ci, (a, b, p, l) => bfi(a, b, p, l, 32))
})
bits('bmsk builds masks, clamping or wrapping position and width', () => {
  const cases = [0n, 1n, 4n, 31n, 32n, 33n, 40n].flatMap((a) => [0n, 1n, 8n, 31n, 32n, 36n].map((b) => [a, b]))
  const mask = (a: bigint, b: bigint) => { let d = 0n; for (let i = a; i < a + b && i < 32n; i++) d |= 1n << i; return d }
  check('bmsk.clamp.b32 $d, $a, $b;', 'b32', ['u32', 'u32'], cases, (a, b) => mask(a > 32n ? 32n : a, b > 32n ? 32n : b))
  check('bmsk.wrap.b32 $d, $a, $b;', 'b32', ['u32', 'u32'], cases, (a, b) => mask(a & 31n, b & 31n))
})
bits('prmt selects and sign-replicates bytes', () => {
  const sels = [0x3210n, 0x7654n, 0x0123n, 0x4444n, 0x8888n, 0xba98n, 0x1032n]
  const cases = pairs([0x80ff7f01n, 0x12345678n, 0xdeadbeefn]).flatMap(([a, b]) => sels.map((c) => [a!, b!, c]))
  check('prmt.b32 $d, $a, $b, $c;', 'b32', ['b32', 'b32', 'b32'], cases, (a, b, c) => {
    const bytes = [0, 1, 2, 3].map((i) => (a >> BigInt(8 * i)) & 0xffn).concat([0, 1, 2, 3].map((i) => (b >> BigInt(8 * i)) & 0xffn))
    let d = 0n
    for (let i = 0; i < 4; i++) {
      const sel = Number((c >> BigInt(4 * i)) & 0xfn)
      let v = bytes[sel & 7]!
      if (sel & 8) v = v & 0x80n ? 0xffn : 0n
      d |= v << BigInt(8 * i)
    }
    return d
  })
})

const compare = suite('setp / selp / slct / set')
compare('every integer comparison, signed and unsigned, 32/64-bit', () => {
  const ops: Record<string, (a: bigint, b: bigint) => boolean> = { eq: (a, b) => a === b, ne: (a, b) => a !== b, lt: (a, b) => a < b, le: (a, b) => a <= b, gt: (a, b) => a > b, ge: (a, b) => a >= b }
  const uops: Record<string, string> = { lo: 'lt', ls: 'le', hi: 'gt', hs: 'ge' }
  for (const [name, f] of Object.entries(ops)) {
    check(`setp.${name}.s32 $d, $a, $b;`, 'pred', ['s32', 's32'], pairs(V32), (a, b) => (f(s(a, 32), s(b, 32)) ? 1n : 0n))
    check(`setp.${name}.u32 $d, $a, $b;`, 'pred', ['u32', 'u32'], pairs(V32), (a, b) => (f(a, b) ? 1n : 0n))
    check(`setp.${name}.s64 $d, $a, $b;`, 'pred', ['s64', 's64'], pairs(V64), (a, b) => (f(s(a, 64), s(b, 64)) ? 1n : 0n))
    check(`setp.${name}.u64 $d, $a, $b;`, 'pred', ['u64', 'u64'], pairs(V64), (a, b) => (f(a, b) ? 1n : 0n))
  }
  for (const [name, base] of Object.entries(uops)) {
    check(`setp.${name}.u32 $d, $a, $b;`, 'pred', ['u32', 'u32'], pairs(V32), (a, b) => (ops[base]!(a, b) ? 1n : 0n))
  }
  check('setp.lt.s16 $d, $a, $b;', 'pred', ['s16', 's16'], pairs(V16), (a, b) => (s(a, 16) < s(b, 16) ? 1n : 0n))
})
compare('predicate combination and the pair destination', () => {
  const cases = pairs(V32.slice(0, 6)).flatMap(([a, b]) => [[a!, b!, 0n], [a!, b!, 1n]])
  check('setp.lt.u32.and $d, $a, $b, $c;', 'pred', ['u32', 'u32', 'pred'], cases, (a, b, c) => (a < b && c === 1n ? 1n : 0n))
  check('setp.lt.u32.or $d, $a, $b, !$c;', 'pred', ['u32', 'u32', 'pred'], cases, (a, b, c) => (a < b || c === 0n ? 1n : 0n))
  const got = runForm({ form: 'setp.gt.s32 $d|$q, $a, $b;', dst: 'pred', srcs: ['s32', 's32'], q: true }, pairs(V32))
  pairs(V32).forEach(([a, b], i) => {
    const want = s(a!, 32) > s(b!, 32) ? 1n : 0n
    assert.is(got[i]!.d, want)
    assert.is(got[i]!.q, 1n - want)
  })
})
compare('selp, slct and set', () => {
  check('selp.b32 $d, $a, $b, $c;', 'b32', ['b32', 'b32', 'pred'], [[1n, 2n, 0n], [1n, 2n, 1n], [0xffffffffn, 0n, 1n]], (a, b, c) => (c ? a : b))
  check('selp.b64 $d, $a, $b, $c;', 'b64', ['b64', 'b64', 'pred'], [[1n << 60n, 2n, 0n], [1n << 60n, 2n, 1n]], (a, b, c) => (c ? a : b))
  check('slct.b32.s32 $d, $a, $b, $c;', 'b32', ['b32', 'b32', 's32'], [[1n, 2n, 0n], [1n, 2n, u(-1, 32)], [1n, 2n, 5n]], (a, b, c) => (s(c, 32) >= 0n ? a : b))
  check('set.lt.u32.s32 $d, $a, $b;', 'u32', ['s32', 's32'], pairs(V32), (a, b) => (s(a, 32) < s(b, 32) ? 0xffffffffn : 0n))
})

const misc = suite('dp4a / sad / mov')
misc('dot products and absolute differences', () => {
  const cases = pairs([0x01020304n, 0x80ff7f01n, 0xffffffffn, 0n]).map(([a, b]) => [a!, b!, 1000n])
  const byte = (x: bigint, i: number, sg: boolean) => { const v = (x >> BigInt(8 * i)) & 0xffn; return sg && v & 0x80n ? v - 256n : v }
  check('dp4a.s32.s32 $d, $a, $b, $c;', 's32', ['s32', 's32', 's32'], cases, (a, b, c) => [0, 1, 2, 3].reduce((acc, i) => acc + byte(a, i, true) * byte(b, i, true), c))
  check('dp4a.u32.u32 $d, $a, $b, $c;', 'u32', ['u32', 'u32', 'u32'], cases, (a, b, c) => [0, 1, 2, 3].reduce((acc, i) => acc + byte(a, i, false) * byte(b, i, false), c))
  check('sad.s32 $d, $a, $b, $c;', 's32', ['s32', 's32', 's32'], pairs(V32.slice(0, 10)).map(([a, b]) => [a!, b!, 3n]), (a, b, c) => { const d = s(a, 32) - s(b, 32); return (d < 0n ? -d : d) + c })
})
misc('mul24/mad24, mad.hi.sat, szext, dp2a', () => {
  const s24 = (x: bigint) => s(x & 0xffffffn, 24)
  check('mul24.hi.s32 $d, $a, $b;', 's32', ['s32', 's32'], pairs(V32), (a, b) => (s24(a) * s24(b)) >> 16n)
  check('mad24.lo.u32 $d, $a, $b, $c;', 'u32', ['u32', 'u32', 'u32'], pairs(V32).map(([a, b]) => [a!, b!, 5n]), (a, b, c) => (a & 0xffffffn) * (b & 0xffffffn) + c)
  const clamp = (x: bigint) => (x > 0x7fffffffn ? 0x7fffffffn : x < -0x80000000n ? -0x80000000n : x)
  check('mad.hi.sat.s32 $d, $a, $b, $c;', 's32', ['s32', 's32', 's32'], pairs(V32).map(([a, b]) => [a!, b!, 0x7fffff00n]), (a, b, c) => clamp(((s(a, 32) * s(b, 32)) >> 32n) + s(c, 32)))
  const ext = V32.flatMap((a) => [0n, 1n, 8n, 31n, 32n, 40n].map((n) => [a, n]))
  check('szext.clamp.s32 $d, $a, $b;', 's32', ['u32', 'u32'], ext, (a, n) => { const w = n > 32n ? 32n : n; return w === 0n ? 0n : s(a & ((1n << w) - 1n), Number(w)) })
  check('szext.clamp.u32 $d, $a, $b;', 'u32', ['u32', 'u32'], ext, (a, n) => { const w = n > 32n ? 32n : n; return a & ((1n << w) - 1n) })
  check('szext.wrap.s32 $d, $a, $b;', 's32', ['u32', 'u32'], ext, (a, n) => { const w = n & 31n; return w === 0n ? 0n : s(a & ((1n << w) - 1n), Number(w)) })
  const cases = pairs([0x01020304n, 0x80ff7f01n, 0xffffffffn]).map(([a, b]) => [a!, b!, 7n])
  const half = (x: bigint, i: number, sg: boolean) => { const v = (x >> BigInt(16 * i)) & 0xffffn; return sg && v & 0x8000n ? v - 65536n : v }
  const byte = (x: bigint, i: number, sg: boolean) => { const v = (x >> BigInt(8 * i)) & 0xffn; return sg && v & 0x80n ? v - 256n : v }
  check('dp2a.lo.s32.s32 $d, $a, $b, $c;', 's32', ['s32', 's32', 's32'], cases, (a, b, c) => c + half(a, 0, true) * byte(b, 0, true) + half(a, 1, true) * byte(b, 1, true))
  check('dp2a.hi.u32.u32 $d, $a, $b, $c;', 'u32', ['u32', 'u32', 'u32'], cases, (a, b, c) => c + half(a, 0, false) * byte(b, 2, false) + half(a, 1, false) * byte(b, 3, false))
})
misc('mov packs and unpacks vectors', () => {
  check('mov.b64 $d, {$a, $b};', 'b64', ['b32', 'b32'], pairs(V32.slice(0, 8)), (a, b) => (b << 32n) | a)
  check('mov.b64 {$d, %r20}, $a;', 'b32', ['b64'], V64.map((a) => [a]), (a) => a & 0xffffffffn)
  check('mov.b32 $d, {$a, $b};', 'b32', ['b16', 'b16'], pairs(V16), (a, b) => (b << 16n) | a)
  check('mov.b32 {%h20, $d}, $a;', 'b16', ['b32'], V32.map((a) => [a]), (a) => a >> 16n)
  check('mov.u64 $d, 0x9e3779b97f4a7c15;', 'u64', [], [[]], () => 0x9e3779b97f4a7c15n)
  check('mov.u32 $d, -1;', 'u32', [], [[]], () => 0xffffffffn)
})

addSub.run()
mul.run()
divRem.run()
minMax.run()
logic.run()
shifts.run()
bits.run()
compare.run()
misc.run()
