// rcp and sqrt with .ftz, and copysign, in the wasm tier's 4-lane turns (tanhf's and a sigmoid's rcp.approx.ftz.f32, fast
// math's sqrt.approx.ftz.f32; copysign.f32, tanhf's last step): the operand flushed, the f32x4 operation, the
// result flushed, as the scalar code does each; before, such a kernel ran its float lane by lane and so kept the
// whole-grid loop. The same bits
// as the JavaScript tier on subnormal operands and results, signed zeros, infinities and NaN.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, ptxBytes, unaryF32Kernel, upload } from './helpers.js'

const kernel = (op: string) => unaryF32Kernel('k', `${op} %f2, %f1;`)

const N = 4096
function inputs(): Float32Array {
  const x = new Float32Array(N)
  const edges = [0, -0, 1, -1, 4, 0.25, 1e-40, -1e-40, 1.1754942e-38, -1.1754942e-38, 1.17549435e-38, 1e38, -1e38, 3.4028235e38, 8.5e37, 9e37,
    Infinity, -Infinity, NaN, 2 ** -149, -(2 ** -149)]
  x.set(edges.map(Math.fround))
  const u = new Uint32Array(x.buffer)
  let s = 0x1234567
  for (let i = edges.length; i < N; i++) {
    s = Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) ^ Math.imul(s ^ (s >>> 12), 0x297a2d39)
    // half of them subnormal or near the ends of the range
    u[i] = i % 2 ? (s & 0x80ffffff) >>> 0 : s >>> 0
  }
  return x
}

function run(codegen: 'wasm' | 'js', op: string, x: Float32Array, line?: string): { bits: Uint32Array; inspect: string } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(line ? unaryF32Kernel('k', line) : kernel(op)))
    const dx = upload(be, x), dy = upload(be, new Float32Array(N))
    const fault = launchOrFault(be, mod, 'k', { grid: [N / 128, 1, 1], block: [128, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }]))
    if (fault) throw fault
    const y = download(be, dy, new Float32Array(N))
    return { bits: new Uint32Array(y.buffer), inspect: mod.inspect('k') }
  } finally {
    be.dispose()
  }
}

const s = suite('wasm tier: rcp / sqrt .ftz and copysign four threads a step')

s('copysign.f32, either operand the thread\'s: 4-lane, the JavaScript tier\'s bits', () => {
  const x = inputs()
  // the sign of x on 1's magnitude, and x's magnitude with a minus sign (a NaN's sign counts, so x = NaN is
  // compared too)
  for (const line of ['copysign.f32 %f2, %f1, 0f3F800000;', 'copysign.f32 %f2, 0f80000000, %f1;']) {
    const wasm = run('wasm', line.replace(' %f2, %f1;', ''), x, line), js = run('js', '', x, line)
    assert.match(wasm.inspect, /SIMD across threads: 4 consecutive threads/, line)
    for (let i = 0; i < N; i++) if (!Number.isNaN(x[i]!)) assert.is(wasm.bits[i], js.bits[i], `${line} x[${i}] = ${x[i]}`)
    const f = new Float32Array(js.bits.buffer)
    if (line.includes('0f3F800000')) { assert.is(f[3], -1); assert.is(f[4], 1); assert.is(f[17], -1) }
    else { assert.is(f[4], -4); assert.ok(Object.is(f[0], -0)); assert.is(f[16], -Infinity) }
  }
})

// tanhf's sequence as nvcc writes it (ex2.approx.ftz, rcp.approx.ftz, fma, selp, copysign; its small-x polynomial
// cut short) in one turn: once its
// ex2 .ftz left a value on the stack, and the module did not compile (every kernel of it fell to JavaScript)
const TANH = `mul.f32 %f3, %f1, 0f3DCCCCCD;
  abs.f32 %f4, %f3;
  mul.f32 %f5, %f4, 0f4038AA3B;
  ex2.approx.ftz.f32 %f6, %f5;
  add.f32 %f7, %f6, 0f3F800000;
  rcp.approx.ftz.f32 %f8, %f7;
  fma.rn.f32 %f9, %f8, 0fC0000000, 0f3F800000;
  setp.ge.f32 %p1, %f4, 0f41102CB4;
  selp.f32 %f10, 0f3F800000, %f9, %p1;
  copysign.f32 %f11, %f3, %f10;
  mul.f32 %f12, %f3, %f3;
  fma.rn.f32 %f13, %f12, 0fBEAAA9ED, 0f00000000;
  fma.rn.f32 %f14, %f13, %f3, %f3;
  setp.ge.f32 %p2, %f4, 0f3F19999A;
  selp.f32 %f2, %f11, %f14, %p2;`

s('tanhf\'s sequence in one 4-lane turn: the module compiles, the JavaScript tier\'s bits', () => {
  const x = inputs()
  const wasm = run('wasm', '', x, TANH), js = run('js', '', x, TANH)
  assert.match(wasm.inspect, /SIMD across threads: 4 consecutive threads/)
  assert.match(wasm.inspect, /tier: WebAssembly$/)
  for (let i = 0; i < N; i++) if (!Number.isNaN(x[i]!)) assert.is(wasm.bits[i], js.bits[i], `x[${i}] = ${x[i]}`)
  const f = new Float32Array(js.bits.buffer)
  assert.ok(Math.abs(f[2]! - Math.tanh(0.1)) < 1e-2, `tanh(0.1) ${f[2]}`)
  assert.ok(Math.abs(f[4]! - Math.tanh(0.4)) < 1e-2, `tanh(0.4) ${f[4]}`)
})

for (const op of ['rcp.approx.ftz.f32', 'sqrt.approx.ftz.f32', 'rcp.rn.ftz.f32', 'sqrt.rn.ftz.f32']) {
  s(`${op}: 4-lane, the JavaScript tier's bits`, () => {
    const x = inputs()
    const wasm = run('wasm', op, x), js = run('js', op, x)
    assert.match(wasm.inspect, /SIMD across threads: 4 consecutive threads/)
    const xb = new Uint32Array(x.buffer)
    for (let i = 0; i < N; i++) {
      if (Number.isNaN(x[i]!)) continue
      assert.is(wasm.bits[i], js.bits[i], `${op} of 0x${xb[i]!.toString(16)}: wasm 0x${wasm.bits[i]!.toString(16)}, js 0x${js.bits[i]!.toString(16)}`)
    }
    // a subnormal operand is a zero of its sign: rcp gives ±inf, sqrt ±0; a subnormal result is a zero
    const f = new Float32Array(js.bits.buffer)
    if (op.startsWith('rcp')) {
      assert.is(f[6], Infinity); assert.is(f[7], -Infinity)
      assert.ok(Object.is(f[11], 0), '1/1e38 is subnormal: +0'); assert.ok(Object.is(f[12], -0))
    } else {
      assert.ok(Object.is(f[6], 0)); assert.ok(Object.is(f[7], -0)); assert.is(f[4], 2)
    }
  })
}

s.run()
