// The 128-bit integer helpers of the WebGPU translation (wgsl-lib.ts kp_u128_*: software binary64's and the exact
// fma's arithmetic), straight-line code over vec4<u32> words, against BigInt on Dawn (SwiftShader): add and sub
// with carries and borrows rippling through every word (words of all ones and zeros), shifts by every amount
// 0–130 of patterns with bits at the word edges, comparisons of values that differ only in one word, and the
// leading-zero count of values whose first set bit is in each word. The f64 and fma tests reach these helpers
// only through their own arithmetic, where a carry through a whole word of ones is rare.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { create } from 'webgpu'
import { collectLib } from '../../packages/webgpu/src/wgsl-lib.js'
import { runCompute, runUnderDawn } from '../helpers/webgpu.js'
import { rng } from '../emulator/fma-cases.js'

runUnderDawn(import.meta.filename)

// kept referenced for the file's life: Dawn crashes once its GPU object is collected (node.test.ts)
const gpu = create([])
const M = (1n << 128n) - 1n

const words = (x: bigint) => [0, 1, 2, 3].map((i) => Number((x >> BigInt(32 * i)) & 0xffffffffn))
const value = (w: ArrayLike<number>, at: number) => [0, 1, 2, 3].reduce((v, i) => v | (BigInt(w[at + i]! >>> 0) << BigInt(32 * i)), 0n)

/** Values with carries and borrows to ripple, bits at word edges, and random ones. */
function values(): bigint[] {
  const r = rng(128)
  const out = [0n, 1n, M, M - 1n, 1n << 127n, (1n << 96n) - 1n, (1n << 64n) - 1n, (1n << 32n) - 1n, 0xffffffffn << 32n, 0xffffffffn << 64n, 1n << 32n, 1n << 64n, 1n << 96n]
  for (let i = 0; i < 40; i++) out.push(words(0n).reduce((v, _, k) => v | (BigInt((r() * 2 ** 32) >>> 0) << BigInt(32 * k)), 0n))
  // random words, some of them all ones or zeros
  for (let i = 0; i < 40; i++) out.push([0, 1, 2, 3].reduce((v, k) => v | (BigInt([0, 0xffffffff, (r() * 2 ** 32) >>> 0][Math.floor(r() * 3)]!) << BigInt(32 * k)), 0n))
  return out
}

const s = suite('WebGPU: 128-bit helpers (kp_u128_*) against BigInt (Dawn, SwiftShader)')

s('add, sub, shl, shr, lt and clz give BigInt\'s results on carries through whole words, every shift and every word', async () => {
  const adapter = await gpu.requestAdapter()
  assert.ok(adapter, 'no WebGPU adapter (Dawn over SwiftShader)')
  const device = await adapter!.requestDevice()
  const vs = values()
  // each case: a, b, n → add, sub, shl(a, n), shr(a, n), lt(a, b), clz(a)
  const cases: Array<{ a: bigint; b: bigint; n: number }> = []
  for (const a of vs) for (const b of vs.slice(0, 30)) cases.push({ a, b, n: cases.length % 131 })
  const shader = `${collectLib(['kp_u128_add', 'kp_u128_sub', 'kp_u128_shl', 'kp_u128_shr', 'kp_u128_lt', 'kp_u128_clz']).join('\n')}
@group(0) @binding(0) var<storage, read> inp: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> outp: array<vec4<u32>>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x;
  if (i >= arrayLength(&inp) / 3u) { return; }
  let a = inp[3u * i]; let b = inp[3u * i + 1u]; let n = inp[3u * i + 2u].x;
  outp[5u * i] = kp_u128_add(a, b);
  outp[5u * i + 1u] = kp_u128_sub(a, b);
  outp[5u * i + 2u] = kp_u128_shl(a, n);
  outp[5u * i + 3u] = kp_u128_shr(a, n);
  outp[5u * i + 4u] = vec4<u32>(select(0u, 1u, kp_u128_lt(a, b)), kp_u128_clz(a), 0u, 0u);
}`
  const input = Uint32Array.from(cases.flatMap((c) => [...words(c.a), ...words(c.b), c.n, 0, 0, 0]))
  const got = await runCompute(device, shader, input, cases.length * 5 * 16, Math.ceil(cases.length / 64))
  device.destroy()

  const wrong: string[] = []
  const clz = (x: bigint) => (x === 0n ? 128 : 128 - x.toString(2).length)
  cases.forEach(({ a, b, n }, i) => {
    const at = 20 * i
    const want: Array<[string, bigint]> = [['add', (a + b) & M], ['sub', (a - b) & M], [`shl ${n}`, n >= 128 ? 0n : (a << BigInt(n)) & M], [`shr ${n}`, n >= 128 ? 0n : a >> BigInt(n)]]
    want.forEach(([what, v], k) => { if (value(got, at + 4 * k) !== v) wrong.push(`${what}(0x${a.toString(16)}, 0x${b.toString(16)}): 0x${value(got, at + 4 * k).toString(16)}, want 0x${v.toString(16)}`) })
    if (got[at + 16] !== (a < b ? 1 : 0)) wrong.push(`lt(0x${a.toString(16)}, 0x${b.toString(16)}): ${got[at + 16]}`)
    if (got[at + 17] !== clz(a)) wrong.push(`clz(0x${a.toString(16)}): ${got[at + 17]}, want ${clz(a)}`)
  })
  assert.is(wrong.length, 0, `${wrong.length} of ${cases.length * 6} results wrong:\n${wrong.slice(0, 12).join('\n')}`)
})

s.run()
