// The exact f32 division and square root of the WebGPU backend (wgsl-lib.ts kp_f32_div, kp_f32_sqrt; issue 26
// item 4) start from WGSL's own `/` and `sqrt` as an estimate and correct it with integer remainders. On
// SwiftShader that estimate is correctly rounded, so the corrections that a GPU's 2.5-ulp division or
// inverse-square-root-based sqrt needs never run in exact-rounding.test.ts. Here the helpers run in Node on
// Dawn (SwiftShader) with the estimate moved by a per-invocation number of units — the whole range each
// helper's comment promises to correct (41 quotient units, 16 root units) — and every result must still be
// the correctly rounded one (the emulator's numeric.ts, itself checked against BigInt references), in
// every rounding mode.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { create } from 'webgpu'
import { collectLib } from '../../packages/webgpu/src/wgsl-lib.js'
import { fop32, type RoundMode } from '../../packages/emulator/src/numeric.js'
import { runCompute, runUnderDawn } from '../helpers/webgpu.js'
import { bitsOf, fromBits, rng } from '../emulator/fma-cases.js'

runUnderDawn(import.meta.filename)

// kept referenced for the file's life: Dawn crashes once its GPU object is collected (node.test.ts)
const gpu = create([])
const MODES: RoundMode[] = ['rn', 'rz', 'rm', 'rp']
const DIV_SKEW = 41, SQRT_SKEW = 16

/** The helpers' WGSL with `kp_skew` (a private per invocation) added to each estimate; fails when an
 *  estimate's line is not found (the helper changed: update the pattern). */
function skewedLib(): string {
  let lib = collectLib(['kp_f32_div', 'kp_f32_sqrt']).join('\n\n')
  const patches: Array<[string, string]> = [
    ['let q0 = u32(f32(ma) / f32(mb) * 67108864.0);', 'let q0 = u32(i32(u32(f32(ma) / f32(mb) * 67108864.0)) + kp_skew);'],
    ['let y0 = u32(sqrt(f32(m) * f32(1u << t)));', 'let y0 = u32(i32(u32(sqrt(f32(m) * f32(1u << t)))) + kp_skew);'],
  ]
  for (const [from, to] of patches) {
    assert.ok(lib.includes(from), `the estimate \`${from}\` is not in wgsl-lib.ts any more: update this test's patch`)
    lib = lib.replace(from, to)
  }
  return lib
}

const SHADER = `
var<private> kp_skew: i32;
@group(0) @binding(0) var<storage, read> cases: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> results: array<vec2<u32>>;
${skewedLib()}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= arrayLength(&cases)) { return; }
  let c = cases[i];
  kp_skew = bitcast<i32>(c.z);
  results[i] = vec2<u32>(kp_f32_div(c.x, c.y, c.w), kp_f32_sqrt(c.x, c.w));
}
`

/** x⁻¹ mod m (x and m coprime), by the extended Euclidean algorithm. */
function modInverse(x: bigint, m: bigint): bigint {
  let [a, b, u, v] = [x, m, 1n, 0n]
  while (b !== 0n) { const q = a / b; [a, b, u, v] = [b, a - q * b, v, u - q * v] }
  return ((u % m) + m) % m
}

/** A y with y² ≡ c (mod 2^k), c ≡ 1 (mod 8), by Hensel lifting (each step fixes one more bit). */
function sqrtMod2k(c: bigint, k: number): bigint {
  let y = 1n
  for (let i = 3; i < k; i++) if ((y * y - c) % (1n << BigInt(i + 1)) !== 0n) y += 1n << BigInt(i - 1)
  return y
}

/** Positive normal operand pairs across a few binades (the estimate's error does not depend on the exponent),
 *  exact quotients and squares; quotients a hair from a whole number of the 2^-26 units kp_f32_div computes
 *  (ma · 2^26 ≡ ±1, ±2 mod mb) and significands a hair from a square (m · 2^t = y² + d, |d| ≤ 15), where
 *  a rounding in the Newton step most easily lands a unit off. */
function operands(): Array<[number, number]> {
  const r = rng(4127)
  const out: Array<[number, number]> = []
  for (let i = 0; i < 40; i++) out.push([Math.fround((1 + r()) * 2 ** (Math.floor(r() * 8) - 4)), Math.fround((1 + r()) * 2 ** (Math.floor(r() * 8) - 4))])
  for (let i = 0; i < 10; i++) {
    const b = Math.fround(1 + Math.floor(r() * 4096) / 4096), q = Math.fround(1 + Math.floor(r() * 4096) / 4096)
    out.push([Math.fround(b * q), b], [Math.fround(q * q), b], [fromBits(bitsOf(Math.fround(q * q)) + 1), b])
  }
  for (let i = 0; out.length < 110; i++) {
    const mb = BigInt(0x800001 + 2 * Math.floor(r() * 0x3fffff)), rem = BigInt([1, 2, -1, -2][i % 4]!)
    const ma = (((rem * modInverse((1n << 26n) % mb, mb)) % mb) + mb) % mb
    if (ma >= 0x800000n) out.push([Number(ma) * 2 ** -23, Number(mb) * 2 ** -23])
  }
  // t = 26 for an even exponent of a's last significand bit (a = m · 2^-24), 27 for an odd one (m · 2^-23)
  for (const t of [26, 27]) {
    const [lo, hi] = t === 26 ? [2 ** 24.5, 2 ** 25] : [2 ** 25, 2 ** 25.5]
    for (const d of [7n, 15n, -1n, -9n]) {
      const y0 = sqrtMod2k((-d % (1n << BigInt(t)) + (1n << BigInt(t))) % (1n << BigInt(t)), t), half = 1n << BigInt(t - 1)
      for (const y of [y0 % half, half - (y0 % half), (y0 % half) + half, half - (y0 % half) + half]) {
        if (Number(y) < lo || Number(y) >= hi) continue
        const M = y * y + d
        out.push([Number(M >> BigInt(t)) * 2 ** (t === 26 ? -24 : -23), 1])
      }
    }
  }
  return out
}

const s = suite('WebGPU: exact f32 division and square root from an inexact estimate (Dawn, SwiftShader)')

s('every result is correctly rounded, in every mode, with the estimate off by up to 41 quotient units and 16 root units', async () => {
  const adapter = await gpu.requestAdapter()
  assert.ok(adapter, 'no WebGPU adapter (Dawn over SwiftShader)')
  const device = await adapter!.requestDevice()

  const cases: number[] = []
  const expected: Array<{ a: number; b: number; skew: number; mode: RoundMode; div: number; sqrt: number }> = []
  for (const [a, b] of operands()) {
    for (let skew = -DIV_SKEW; skew <= DIV_SKEW; skew++) {
      for (let m = 0; m < 4; m++) {
        const mode = MODES[m]!
        cases.push(bitsOf(a), bitsOf(b), skew >>> 0, m)
        const div = mode === 'rn' ? Math.fround(a / b) : fop32('div', mode, a, b)
        const sqrt = mode === 'rn' ? Math.fround(Math.sqrt(a)) : fop32('sqrt', mode, a, 0)
        expected.push({ a, b, skew, mode, div: bitsOf(div), sqrt: bitsOf(sqrt) })
      }
    }
  }
  const got = await runCompute(device, SHADER, Uint32Array.from(cases), expected.length * 8, Math.ceil(expected.length / 64))
  device.destroy()

  const wrong: string[] = []
  let divChecked = 0, sqrtChecked = 0
  expected.forEach((e, i) => {
    if (got[2 * i] !== e.div) wrong.push(`div.${e.mode}(${e.a}, ${e.b}), estimate ${e.skew} units off: 0x${got[2 * i]!.toString(16)}, want 0x${e.div.toString(16)}`)
    divChecked++
    if (Math.abs(e.skew) > SQRT_SKEW) return
    if (got[2 * i + 1] !== e.sqrt) wrong.push(`sqrt.${e.mode}(${e.a}), estimate ${e.skew} units off: 0x${got[2 * i + 1]!.toString(16)}, want 0x${e.sqrt.toString(16)}`)
    sqrtChecked++
  })
  assert.is(wrong.length, 0, `${wrong.length} of ${divChecked + sqrtChecked} results wrong:\n${wrong.slice(0, 16).join('\n')}`)
})

s.run()
