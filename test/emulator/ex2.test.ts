// ex2.approx.f32 (CUDA's __expf, expf and tanhf go through it): both tiers compute numeric.ts ex2f, the same
// f64 operations in the same order (the WebAssembly tier no longer calls out to JavaScript for each one), so
// they give the same bits; the result is within 1 ulp of 2^x rounded to f32 (the ISA allows 2), and the
// special values are exact. The inputs cover the ends of the range, where the nearest integer n of x reaches
// 128 ([127.5, 128): once a table lookup past its end gave NaN) and the results go subnormal ([-151, -126]).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ex2f } from '../../packages/emulator/src/numeric.js'
import { runUnaryF32, unaryF32Kernel } from './helpers.js'

// (with `scalar`, an atomic after the ex2, in a kernel without the bound's if, keeps every thread's code scalar:
// the scalar helper, where without it four threads a step take the 4-lane form)
const kernel = (ftz: boolean, scalar = false) => unaryF32Kernel('e', `ex2.approx${ftz ? '.ftz' : ''}.f32 %f2, %f1;`, scalar ? `
  atom.global.add.u32 %r2, [%rd2], 0;` : '', !scalar)

const N = 1 << 15
/** A deterministic spread: the edges, then every 1/64 from -160 to 130, then pseudo-random f32 bit patterns. */
function inputs(): Float32Array {
  const x = new Float32Array(N)
  const edges = [0, -0, 1, -1, 0.5, -0.5, 127.5, 127.75, 127.99999, 128, 128.5, 200, -126, -127, -149, -149.5, -150, -150.5, -151, -151.0001, -152,
    Infinity, -Infinity, NaN, 1e-40, -1e-40, 1.17549435e-38, 3e38, -3e38]
  x.set(edges.map(Math.fround))
  let i = edges.length
  for (let v = -160; v < 130 && i < N / 2; v += 1 / 64) x[i++] = v
  const u = new Uint32Array(x.buffer)
  let s = 0x9e3779b9
  for (; i < N; i++) { s = Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) ^ Math.imul(s ^ (s >>> 12), 0x297a2d39); u[i] = s >>> 0 }
  return x
}

function run(codegen: 'wasm' | 'js', ftz: boolean, x: Float32Array, scalar = false): Float32Array {
  const { y, inspect } = runUnaryF32(codegen, kernel(ftz, scalar), 'e', x)
  assert.match(inspect, codegen === 'wasm' ? /tier: WebAssembly$/ : /tier: JavaScript/)
  if (codegen === 'wasm') assert.is(inspect.includes('SIMD across threads'), !scalar, inspect)
  return y
}

const bits = (f: Float32Array) => new Uint32Array(f.buffer, f.byteOffset, f.length)
const SUBNORMAL = 2 ** -126

const s = suite('ex2.approx.f32 on both tiers')

for (const [ftz, scalar] of [[false, false], [true, false], [false, true], [true, true]] as const) {
  s(`ex2.approx${ftz ? '.ftz' : ''}.f32${scalar ? ', scalar' : ', 4 threads a step'}: the same bits on both tiers, within 1 ulp of 2^x, exact special values`, () => {
    const x = inputs()
    const wasm = run('wasm', ftz, x, scalar), js = run('js', ftz, x, scalar)
    const wb = bits(wasm), jb = bits(js)
    const ref = new Float32Array(1), rb = bits(ref)
    for (let i = 0; i < N; i++) {
      const xi = x[i]!
      if (Number.isNaN(xi)) { assert.ok(Number.isNaN(wasm[i]!) && Number.isNaN(js[i]!), 'NaN gives NaN'); continue }
      assert.is(wb[i], jb[i], `x = ${xi} (0x${bits(x)[i]!.toString(16)}): wasm 0x${wb[i]!.toString(16)}, js 0x${jb[i]!.toString(16)}`)
      // the reference: 2^x of the input as the instruction reads it (.ftz: a subnormal input is 0), then the
      // result flushed where .ftz flushes it
      const xin = ftz && Math.abs(xi) < SUBNORMAL ? 0 : xi
      ref[0] = 2 ** xin
      if (ftz && Math.abs(ref[0]) < SUBNORMAL) ref[0] = 0
      assert.ok(Math.abs(rb[0]! - jb[i]!) <= 1, `x = ${xi}: 0x${jb[i]!.toString(16)}, 2^x is 0x${rb[0]!.toString(16)}`)
      assert.not.ok(Number.isNaN(js[i]!), `x = ${xi} gives NaN`)
    }
    // the special values, exactly
    const at = (v: number) => js[[...x].findIndex((xi) => Object.is(xi, Math.fround(v)))]!
    assert.is(at(Infinity), Infinity)
    assert.is(at(-Infinity), 0)
    assert.is(at(128), Infinity)
    assert.is(at(0), 1)
    assert.is(at(-0), 1)
    assert.is(at(1), 2)
    assert.is(at(-1), 0.5)
    assert.is(at(-150), 0, '2^-150, a tie, rounds to even: 0')
    assert.is(at(-149), ftz ? 0 : 2 ** -149)
    assert.is(at(127.99999), Math.fround(2 ** Math.fround(127.99999)))
  })
}

s('ex2f itself: NaN, the ends, and its integer points exact', () => {
  assert.ok(Number.isNaN(ex2f(NaN)))
  assert.is(ex2f(Infinity), Infinity)
  assert.is(ex2f(-Infinity), 0)
  for (let n = -149; n <= 127; n++) assert.is(Math.fround(ex2f(n)), 2 ** n, `2^${n}`)
})

s.run()
