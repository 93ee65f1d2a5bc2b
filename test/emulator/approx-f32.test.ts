// lg2.approx.f32 (CUDA's __logf, __log2f, __log10f, __powf) and sin.approx.f32/cos.approx.f32 (__sinf, __cosf,
// __sincosf, __tanf): both tiers compute numeric.ts lg2f and sincosf, the same f64 operations in the same order
// (the WebAssembly tier no longer calls out to JavaScript for each one), so they give the same bits, within 1
// ulp of the function rounded to f32 (the ISA allows more). lg2: every f32 around 1 (where log2 is tiny and only
// a relative-accurate method keeps 1 ulp), both sides of √2 (where the mantissa is halved), subnormals (flushed
// by .ftz), powers of two exact, ±0 → −∞, +∞ → +∞, a negative x → NaN. sin and cos: every f32 around the
// multiples of π/2 up to 64π (the quadrant boundaries, and the zeros where only an exact reduction keeps 1 ulp),
// the ends of the reduced range (2^19, past which both tiers take the engine's Math.sin/Math.cos), ±0, ±∞, NaN.
// lg2 runs four threads a step (two f64x2 halves of lg2f's operations), the others one.
// tanh.approx.f32 (-use_fast_math's tanhf) as numeric.ts tanhf: both sides of 2^-6 (series / exponential), every
// f32 near 0.5, 1 and 9 (where tanh rounds to 1), tanh(±0) = ±0, ±∞ → ±1.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { lg2f, sincosf, tanhf, TANH_SMALL, TRIG_REDUCED } from '../../packages/emulator/src/numeric.js'
import { runUnaryF32, unaryF32Kernel } from './helpers.js'

const N = 1 << 15
const bits = (f: Float32Array) => new Uint32Array(f.buffer, f.byteOffset, f.length)
const f32Bits = (v: number) => bits(new Float32Array([v]))[0]!

/** Pseudo-random f32 bit patterns into x from index i (a fixed seed), masked. */
function randomBits(x: Float32Array, i: number, mask: (i: number) => number): void {
  const u = bits(x)
  let s = 0x2545f491
  for (; i < N; i++) { s = Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) ^ Math.imul(s ^ (s >>> 12), 0x297a2d39); u[i] = (s >>> 0) & mask(i) }
}

function lg2Inputs(): Float32Array {
  const x = new Float32Array(N), u = bits(x)
  const edges = [0, -0, 1, 2, 0.5, 4, 0.25, 3, 10, 2 ** -126, 2 ** -149, 1e-40, 3.4028234e38, Infinity, -Infinity, NaN, -1, -0.5, -1e-40,
    Math.SQRT2, Math.SQRT1_2, 1.4142135, 1.4142137, 0.70710677, 0.7071068]
  x.set(edges.map(Math.fround))
  let i = edges.length
  // every f32 within 4096 ulp of 1 on both sides, and of √2
  for (let d = -4096; d < 4096; d++) { u[i++] = 0x3f800000 + d; u[i++] = f32Bits(Math.SQRT2) + d }
  randomBits(x, i, (j) => (j & 7 ? 0x7fffffff : 0xffffffff))
  return x
}

function trigInputs(): Float32Array {
  const x = new Float32Array(N), u = bits(x)
  const edges = [0, -0, Infinity, -Infinity, NaN, TRIG_REDUCED, -TRIG_REDUCED, Math.fround(TRIG_REDUCED * (1 + 2 ** -23)), 3e38, -3e38, 1e-40, -1e-40, 2 ** -149]
  x.set(edges.map(Math.fround))
  let i = edges.length
  // every f32 within 64 ulp of k·π/2, k = -128 … 127
  for (let k = -128; k < 128; k++) { const c = f32Bits(k * Math.PI / 2); for (let d = -32; d < 32; d++) u[i++] = k ? c + d : (d < 0 ? 0x80000000 - d : d) }
  // random values of every exponent up to 2^20 (exponent field below 147), either sign
  randomBits(x, i, () => 0xffffffff)
  for (let j = i; j < N; j++) if (((u[j]! >>> 23) & 0xff) > 146) u[j] = (u[j]! & 0x807fffff) | (((u[j]! >>> 23) % 147) << 23)
  return x
}

function tanhInputs(): Float32Array {
  const x = new Float32Array(N), u = bits(x)
  const edges = [0, -0, Infinity, -Infinity, NaN, TANH_SMALL, -TANH_SMALL, 1e-40, -1e-40, 2 ** -149, 3e38, -3e38, 9, 10, 20]
  x.set(edges.map(Math.fround))
  let i = edges.length
  for (const c of [TANH_SMALL, 0.5, 1, 9]) for (let d = -512; d < 512; d++) { u[i++] = f32Bits(c) + d; u[i++] = (f32Bits(c) + d) | 0x80000000 }
  // random values of exponents 2^-40 … 2^7, either sign
  randomBits(x, i, () => 0xffffffff)
  for (let j = i; j < N; j++) u[j] = (u[j]! & 0x807fffff) | ((87 + ((u[j]! >>> 23) & 0xff) % 47) << 23)
  return x
}

/** y = op(x) on one tier; `lanes`: whether the WebAssembly tier runs it 4 threads a step (lg2 has a 4-lane form:
 *  numeric.ts lg2f in two f64x2 halves; the others run one thread a step). */
function run(codegen: 'wasm' | 'js', line: string, x: Float32Array, lanes: boolean): Float32Array {
  const { y, inspect } = runUnaryF32(codegen, unaryF32Kernel('k', line), 'k', x)
  assert.match(inspect, codegen === 'wasm' ? /tier: WebAssembly$/ : /tier: JavaScript/)
  if (codegen === 'wasm') assert.is(inspect.includes('SIMD across threads'), lanes, inspect)
  return y
}

/** The distance in ulps between two f32 values (one when they differ only in the sign of zero). */
function ulps(a: number, b: number): number {
  const key = (v: number) => { const i = f32Bits(v) | 0; return i < 0 ? -(i & 0x7fffffff) : i }
  return Math.abs(key(a) - key(b))
}

const SUBNORMAL = 2 ** -126
const s = suite('lg2, sin, cos and tanh .approx.f32 on both tiers')

const ops = [
  { op: 'lg2', inputs: lg2Inputs, ref: Math.log2 },
  { op: 'sin', inputs: trigInputs, ref: Math.sin },
  { op: 'cos', inputs: trigInputs, ref: Math.cos },
  { op: 'tanh', inputs: tanhInputs, ref: Math.tanh },
] as const

for (const { op, inputs, ref } of ops) {
  for (const ftz of [false, true]) {
    const line = `${op}.approx${ftz ? '.ftz' : ''}.f32 %f2, %f1;`
    s(`${line}: the same bits on both tiers, within 1 ulp of ${op}(x) rounded to f32`, () => {
      const x = inputs()
      const wasm = run('wasm', line, x, op === 'lg2'), js = run('js', line, x, false)
      const wb = bits(wasm), jb = bits(js)
      for (let i = 0; i < N; i++) {
        const xi = x[i]!
        assert.is(wb[i], jb[i], `x = ${xi} (0x${bits(x)[i]!.toString(16)}): wasm 0x${wb[i]!.toString(16)}, js 0x${jb[i]!.toString(16)}`)
        // (.ftz: a subnormal input is a zero of its sign, a subnormal result too)
        const xin = ftz && Math.abs(xi) < SUBNORMAL ? (xi < 0 || Object.is(xi, -0) ? -0 : 0) : xi
        const want = Math.fround(ref(xin))
        if (Number.isNaN(want)) { assert.ok(Number.isNaN(js[i]!), `x = ${xi}: NaN expected, got ${js[i]}`); continue }
        const out = ftz && Math.abs(want) < SUBNORMAL ? want * 0 : want
        assert.ok(ulps(js[i]!, out) <= 1 || (ftz && Math.abs(js[i]!) === 0 && Math.abs(out) < SUBNORMAL * 2), `x = ${xi}: ${js[i]} (0x${jb[i]!.toString(16)}), ${op}(x) rounded is ${out}: ${ulps(js[i]!, out)} ulp`)
      }
    })
  }
}

s('lg2f: every power of two exact, ±0, +∞, NaN; tanhf: ±0, ±∞, NaN; sincosf: the signs of zero, exact at 0, the engine past the reduced range', () => {
  for (let k = -149; k <= 127; k++) assert.is(lg2f(2 ** k), k, `log2(2^${k})`)
  assert.ok(Number.isNaN(lg2f(NaN)) && Number.isNaN(lg2f(-2)))
  assert.is(lg2f(0), -Infinity)
  assert.is(lg2f(-0), -Infinity)
  assert.is(lg2f(Infinity), Infinity)
  assert.ok(Object.is(sincosf(-0, false), -0) && Object.is(sincosf(0, false), 0))
  assert.is(sincosf(0, true), 1)
  assert.is(sincosf(-0, true), 1)
  assert.ok(Number.isNaN(sincosf(Infinity, false)) && Number.isNaN(sincosf(NaN, true)))
  assert.ok(Object.is(tanhf(-0), -0) && Object.is(tanhf(0), 0), 'tanh(±0) = ±0')
  assert.is(tanhf(Infinity), 1)
  assert.is(tanhf(-Infinity), -1)
  assert.ok(Number.isNaN(tanhf(NaN)))
  const big = Math.fround(3e6)
  assert.is(sincosf(big, false), Math.sin(big))
  assert.is(sincosf(big, true), Math.cos(big))
})

s.run()
