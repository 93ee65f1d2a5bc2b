// lg2.approx.f32 (CUDA's __logf, __log2f, __log10f and __powf go through it): both tiers compute numeric.ts lg2f,
// the same f64 operations in the same order (the WebAssembly tier no longer calls out to JavaScript for each
// one), so they give the same bits; the result is within 1 ulp of log2(x) rounded to f32, powers of two are
// exact, and the special values are CUDA's (±0 → −∞, +∞ → +∞, a negative x → NaN). The inputs cover every f32
// around 1 (where log2 is tiny and only a relative-accurate method keeps 1 ulp), both sides of √2 (where the
// mantissa is halved), subnormals (flushed by .ftz) and random bit patterns.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { lg2f } from '../../packages/emulator/src/numeric.js'
import { download, launchOrFault, marshal, ptxBytes, unaryF32Kernel, upload } from './helpers.js'

const kernel = (ftz: boolean) => unaryF32Kernel('l', `lg2.approx${ftz ? '.ftz' : ''}.f32 %f2, %f1;`)

const N = 1 << 15
const bits = (f: Float32Array) => new Uint32Array(f.buffer, f.byteOffset, f.length)

function inputs(): Float32Array {
  const x = new Float32Array(N)
  const u = bits(x)
  const edges = [0, -0, 1, 2, 0.5, 4, 0.25, 3, 10, 2 ** -126, 2 ** -149, 1e-40, 3.4028234e38, Infinity, -Infinity, NaN, -1, -0.5, -1e-40,
    Math.SQRT2, Math.SQRT1_2, 1.4142135, 1.4142137, 0.70710677, 0.7071068]
  x.set(edges.map(Math.fround))
  let i = edges.length
  // every f32 within 4096 ulp of 1 on both sides, and of √2
  const one = 0x3f800000, root2 = bits(new Float32Array([Math.SQRT2]))[0]!
  for (let d = -4096; d < 4096; d++) { u[i++] = one + d; u[i++] = root2 + d }
  let s = 0x2545f491
  for (; i < N; i++) { s = Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) ^ Math.imul(s ^ (s >>> 12), 0x297a2d39); u[i] = (s >>> 0) & (i & 7 ? 0x7fffffff : 0xffffffff) }
  return x
}

function run(codegen: 'wasm' | 'js', ftz: boolean, x: Float32Array): Float32Array {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(kernel(ftz)))
    assert.match(mod.inspect('l'), codegen === 'wasm' ? /tier: WebAssembly$/ : /tier: JavaScript/)
    const dx = upload(be, x), dy = upload(be, new Float32Array(N))
    const fault = launchOrFault(be, mod, 'l', { grid: [N / 256, 1, 1], block: [256, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }]))
    if (fault) throw fault
    return download(be, dy, new Float32Array(N))
  } finally {
    be.dispose()
  }
}

/** The distance in ulps between two finite f32 values of the same sign (or zero). */
function ulps(a: number, b: number): number {
  const f = new Float32Array([a, b]), i = new Int32Array(f.buffer)
  const key = (v: number) => (v < 0 ? 0x80000000 - v : v)
  return Math.abs(key(i[0]!) - key(i[1]!))
}

const SUBNORMAL = 2 ** -126
const s = suite('lg2.approx.f32 on both tiers')

for (const ftz of [false, true]) {
  s(`lg2.approx${ftz ? '.ftz' : ''}.f32: the same bits on both tiers, within 1 ulp of log2(x), exact powers of two and special values`, () => {
    const x = inputs()
    const wasm = run('wasm', ftz, x), js = run('js', ftz, x)
    const wb = bits(wasm), jb = bits(js)
    let worst = 0
    for (let i = 0; i < N; i++) {
      const xi = x[i]!
      assert.is(wb[i], jb[i], `x = ${xi} (0x${bits(x)[i]!.toString(16)}): wasm 0x${wb[i]!.toString(16)}, js 0x${jb[i]!.toString(16)}`)
      const xin = ftz && Math.abs(xi) < SUBNORMAL ? 0 : xi
      if (!(xin > 0) || xin === Infinity) continue
      const want = Math.fround(Math.log2(xin))
      const d = ulps(js[i]!, want)
      worst = Math.max(worst, d)
      assert.ok(d <= 1, `x = ${xi}: ${js[i]} (0x${jb[i]!.toString(16)}), log2(x) rounded is ${want}: ${d} ulp`)
    }
    assert.ok(worst <= 1)
    const at = (v: number) => js[[...x].findIndex((xi) => Object.is(xi, Math.fround(v)))]!
    assert.is(at(0), -Infinity)
    assert.is(at(-0), -Infinity)
    assert.is(at(Infinity), Infinity)
    assert.ok(Number.isNaN(at(-1)) && Number.isNaN(at(-Infinity)) && Number.isNaN(at(NaN)), 'a negative x or NaN gives NaN')
    assert.is(at(1), 0)
    assert.is(at(2 ** -149), ftz ? -Infinity : -149)
    if (ftz) assert.is(at(-1e-40), -Infinity, 'a negative subnormal is flushed to -0')
    else assert.ok(Number.isNaN(at(-1e-40)), 'a negative subnormal gives NaN')
  })
}

s('lg2f itself: every power of two exact, NaN and the ends', () => {
  for (let k = -149; k <= 127; k++) assert.is(lg2f(2 ** k), k, `log2(2^${k})`)
  assert.ok(Number.isNaN(lg2f(NaN)) && Number.isNaN(lg2f(-2)))
  assert.is(lg2f(0), -Infinity)
  assert.is(lg2f(-0), -Infinity)
  assert.is(lg2f(Infinity), Infinity)
})

s.run()
