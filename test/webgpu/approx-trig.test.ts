// sin.approx.f32 and cos.approx.f32 on WebGPU (wgsl-lib.ts kp_sin_approx, kp_cos_approx; issue 26 item 4: "the
// .approx forms within the ISA's bounds"). WGSL's own sin and cos may be off by 2^-11 inside [-π, π] (WGSL spec,
// "Floating Point Accuracy"); SwiftShader's were off by up to ~2^-13 near 0 — a thousand times the PTX ISA's
// bound (absolute error 2^-20.9 over -100π..100π) and the CUDA Programming Guide's for __sinf/__cosf (2^-21.41
// over -π..π): the corpus's math_f32 had 122 __sinf results out of bounds on WebGPU. Here the helpers run in Node
// on Dawn (SwiftShader) over a sweep of each range, the quarter-turn points and their neighbours, and the special
// values; every result is checked against Math.sin/Math.cos of the f32 input with those bounds, ±0, NaN and ±Inf
// as the PTX ISA gives them, and every finite input's result inside [-1, 1].
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { create } from 'webgpu'
import { collectLib } from '../../packages/webgpu/src/wgsl-lib.js'
import { runCompute, runUnderDawn } from '../helpers/webgpu.js'
import { bitsOf, fromBits } from '../emulator/fma-cases.js'

runUnderDawn(import.meta.filename)

// kept referenced for the file's life: Dawn crashes once its GPU object is collected (node.test.ts)
const gpu = create([])

const SHADER = `
@group(0) @binding(0) var<storage, read> cases: array<u32>;
@group(0) @binding(1) var<storage, read_write> results: array<vec2<u32>>;
${collectLib(['kp_sin_approx', 'kp_cos_approx']).join('\n\n')}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= arrayLength(&cases)) { return; }
  let x = bitcast<f32>(cases[i]);
  results[i] = vec2<u32>(bitcast<u32>(kp_sin_approx(x)), bitcast<u32>(kp_cos_approx(x)));
}
`

/** The inputs: a sweep of ±100π, a finer one of ±π, k·π/4 for |k| ≤ 400 and the f32 values beside each, tiny
 *  and subnormal values, and huge finite ones (no bound there: only the range). */
function inputs(): number[] {
  const xs: number[] = []
  for (let i = -20000; i <= 20000; i++) xs.push(Math.fround((i / 20000) * 100 * Math.PI))
  for (let i = -5000; i <= 5000; i++) xs.push(Math.fround((i / 5000) * Math.PI))
  for (let k = -400; k <= 400; k++) {
    const b = bitsOf(Math.fround((k * Math.PI) / 4))
    for (const d of [-2, -1, 0, 1, 2]) if (k !== 0) xs.push(fromBits((b + d) >>> 0))
  }
  for (const e of [-149, -140, -127, -126, -100, -60, -30, -12, -5]) xs.push(2 ** e, -(2 ** e))
  xs.push(1e5, -3e7, 1.2e20, -3.4e38, Math.fround(100 * Math.PI) * 1.001)
  return xs
}

const s = suite('WebGPU: sin.approx.f32 and cos.approx.f32 within the PTX ISA\'s bounds (Dawn, SwiftShader)')

s('every result within 2^-20.9 of sin/cos over ±100π and 2^-21.41 over ±π; ±0, NaN, ±Inf as PTX gives them; finite inputs in [-1, 1]', async () => {
  const adapter = await gpu.requestAdapter()
  assert.ok(adapter, 'no WebGPU adapter (Dawn over SwiftShader)')
  const device = await adapter!.requestDevice()
  const xs = inputs()
  const specials = [0, -0, Infinity, -Infinity, NaN]
  const all = [...xs, ...specials]
  const got = await runCompute(device, SHADER, Uint32Array.from(all, (x) => (Number.isNaN(x) ? 0x7fc00000 : bitsOf(x))), all.length * 8, Math.ceil(all.length / 64))
  device.destroy()

  const wrong: string[] = []
  let worstPi = 0, worst100 = 0
  xs.forEach((x, i) => {
    const sin = fromBits(got[2 * i]!), cos = fromBits(got[2 * i + 1]!)
    if (!(Math.abs(sin) <= 1 && Math.abs(cos) <= 1)) wrong.push(`x = ${x}: sin ${sin}, cos ${cos} outside [-1, 1]`)
    const a = Math.abs(x)
    if (a > 100 * Math.PI) return
    const err = Math.max(Math.abs(sin - Math.sin(x)), Math.abs(cos - Math.cos(x)))
    worst100 = Math.max(worst100, err)
    if (a <= Math.PI) worstPi = Math.max(worstPi, err)
    const bound = a <= Math.PI ? 2 ** -21.41 : 2 ** -20.9
    if (!(err <= bound)) wrong.push(`x = ${x}: sin ${sin} (exact ${Math.sin(x)}), cos ${cos} (exact ${Math.cos(x)}): error ${err.toExponential(3)} past ${bound.toExponential(3)}`)
  })
  const at = (x: number) => all.findIndex((y) => Object.is(y, x))
  const bitsAt = (x: number) => [got[2 * at(x)]!, got[2 * at(x) + 1]!]
  assert.equal(bitsAt(0), [0, bitsOf(1)], 'sin(+0) = +0, cos(+0) = 1')
  assert.equal(bitsAt(-0), [0x80000000, bitsOf(1)], 'sin(-0) = -0, cos(-0) = 1')
  for (const x of [Infinity, -Infinity, NaN]) assert.equal(bitsAt(x), [0x7fffffff, 0x7fffffff], `sin and cos of ${x}: the canonical NaN`)
  assert.equal(wrong.slice(0, 10), [], `${wrong.length} of ${xs.length} inputs (worst error over ±π ${worstPi.toExponential(3)}, over ±100π ${worst100.toExponential(3)})`)
  assert.ok(worstPi > 0 && worst100 > 0, 'the sweep measured an error (results are not exact everywhere)')
})

s.run()
