// The small WGSL helpers behind integer division and remainder (div/rem .u32/.s32: by zero, INT_MIN / -1), min/max.f32
// (NaN operands, signed zeros), cvt.f32.f16 (subnormal, infinite and NaN halves), cvt.rn.f16.f32 (overflow, subnormal ties), ex2.approx and lg2.approx (their
// special values), lop3, on the operands where each one's cases part (wgsl-lib.ts writes them as selects, no branch:
// SwiftShader's pipeline compile grows steeply with the branches of inlined sites): every result compared with the
// emulator's, bit for bit where the instruction is exact, in headless chromium (SwiftShader).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { threadKernel } from '../helpers/thread-kernel.js'
import { rng } from '../emulator/fma-cases.js'

/** Thread i reads the words (a, b) at 8·i and writes these results, in order, at 4·OPS.length·i. */
const OPS = [
  'div.u32 %r10, %r6, %r7', 'rem.u32 %r10, %r6, %r7', 'div.s32 %r10, %r6, %r7', 'rem.s32 %r10, %r6, %r7',
  'min.f32 %f3, %f1, %f2', 'max.f32 %f3, %f1, %f2', 'cvt.f32.f16 %f3, %h1', 'cvt.rn.f16.f32 %h2, %f1; cvt.u32.u16 %r10, %h2',
  'ex2.approx.f32 %f3, %f1', 'lg2.approx.f32 %f3, %f1',
  // lop3 with a few truth tables (xor of three, majority, select, none, all) of a, b and a third word 3a + b
  ...[0x96, 0xe8, 0xca, 0x00, 0xff, 0x1b].map((lut) => `mad.lo.u32 %r8, %r6, 3, %r7; lop3.b32 %r10, %r6, %r7, %r8, 0x${lut.toString(16)}`),
]
const EXACT = 8 // the first eight are exact: bit for bit (NaN for NaN)
const LG2 = OPS.indexOf('lg2.approx.f32 %f3, %f1')
const LOP3 = LG2 + 1

const PTX = threadKernel('edges', {
  regs: `.reg .b64 %rd<8>; .reg .b32 %r<12>; .reg .f32 %f<4>; .reg .b16 %h<3>; .reg .pred %p<2>;`,
  body: `  mul.wide.u32 %rd3, %r5, 8; add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r6, [%rd4]; ld.global.u32 %r7, [%rd4+4];
  mov.b32 %f1, %r6; mov.b32 %f2, %r7; cvt.u16.u32 %h1, %r6;
  mul.wide.u32 %rd5, %r5, ${4 * OPS.length}; add.s64 %rd6, %rd2, %rd5;
${OPS.map((op, k) => op.includes('%r10') ? `  ${op}; st.global.u32 [%rd6+${4 * k}], %r10;` : `  ${op}; st.global.f32 [%rd6+${4 * k}], %f3;`).join('\n')}`,
})

function inputs(): Uint32Array {
  const edge = [
    0, 1, 2, 3, 7, 100, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0xfffffffe, 0xffffff9c,
    0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x00000001, 0x00400000, 0x807fffff, 0x3f800000, 0xbf800000,
    0x43000000, 0x42fe0000, 0xc3160000, 0xc3170000, 0xc2fc0000, 0xc2fe0000,
    0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x03ff, 0x0400, 0x8001, 0x3c00,
    // cvt.rn.f16.f32: around the largest f16 (65504; 65520 rounds to infinity), subnormal f16 results and their
    // ties (2^-25 to 0, 1.5·2^-24 to 2·2^-24), the smallest normal, ties at a normal's last place
    0x477fe000, 0x477fefff, 0x477ff000, 0xc77ff000, 0x33000000, 0x33000001, 0x33c00000, 0x33a00000, 0x34200000,
    0x387fc000, 0x387ff000, 0x38800000, 0x3f801000, 0x3f803000, 0x3f801001, 0xb3c00000,
  ]
  const out: number[] = []
  for (const a of edge) for (const b of edge) out.push(a, b)
  const r = rng(4711)
  for (let i = 0; i < 500; i++) out.push((r() * 2 ** 32) >>> 0, (r() * 2 ** (1 + Math.floor(r() * 32))) >>> 0)
  return new Uint32Array(out)
}

async function run(k: KernelRunner, xs: Uint32Array): Promise<Uint32Array> {
  const n = xs.length / 2
  const din = await k.upload(xs), dout = await k.alloc(4 * OPS.length * n)
  await k.launch('edges', Math.ceil(n / 64), 64, [din, dout, n])
  return k.read(dout, Uint32Array)
}

const f32 = (u: number) => new Float32Array(new Uint32Array([u]).buffer)[0]!
const nan = (u: number) => (u & 0x7fffffff) > 0x7f800000
/** ±0, ±∞ and NaN: what ex2/lg2.approx must give exactly (PTX ISA's special values). */
const special = (u: number) => (u & 0x7fffffff) === 0 || (u & 0x7fffffff) >= 0x7f800000

const s = await webgpuPageSuite('WebGPU: the helpers of integer division, min/max, cvt.f32.f16, ex2/lg2.approx on their edge operands')

s('every result is the emulator\'s: bit for bit where exact, the same special values and within 2^-20 for ex2/lg2.approx (subnormal results flushed or not)', async (ctx) => {
  const xs = inputs()
  const gpu = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'helper edges (WebGPU)'), xs)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, PTX, 'compute_80', 'helper edges (emulator)'), xs)
  be.dispose()
  const wrong: string[] = []
  for (let i = 0; i < gpu.length; i++) {
    const k = i % OPS.length, t = Math.floor(i / OPS.length)
    const g = gpu[i]!, e = emu[i]!
    const op = OPS[k]!
    let ok: boolean
    if (k < 4 || k >= LOP3) ok = g === e
    else if (k === 7) ok = g === e || ((g & 0x7fff) > 0x7c00 && (e & 0x7fff) > 0x7c00)
    else if (k < EXACT) ok = g === e || (nan(g) && nan(e))
    // a subnormal result the device may flush (WGSL allows it; SwiftShader does: ex2.approx(-127) is 0 there)
    else if ((e & 0x7f800000) === 0 && (e & 0x7fffff) !== 0) ok = g === e || g === (e & 0x80000000)
    else if (special(e) || special(g)) ok = g === e || (nan(g) && nan(e))
    else ok = Math.abs(f32(g) - f32(e)) <= 2 ** -20 * Math.max(Math.abs(f32(e)), k === LG2 ? 1 : 0)
    if (!ok) wrong.push(`${op.split(' ')[0]}(0x${xs[2 * t]!.toString(16)}, 0x${xs[2 * t + 1]!.toString(16)}): WebGPU 0x${g.toString(16)}, emulator 0x${e.toString(16)}`)
  }
  assert.equal(wrong.slice(0, 12), [], `${wrong.length} results differ`)
  // the edges reach every case: division by zero, INT_MIN / -1, a NaN operand of min, a NaN half, ex2 below -150
  const at = (a: number, b: number, k: number) => { for (let t = 0; t < xs.length / 2; t++) if (xs[2 * t] === a && xs[2 * t + 1] === b) return gpu[t * OPS.length + k]!; throw new Error('no such pair') }
  assert.is(at(7, 0, 0), 0xffffffff, 'div.u32 by zero')
  assert.is(at(7, 0, 1), 7, 'rem.u32 by zero')
  assert.is(at(0x80000000, 0xffffffff, 2), 0x80000000, 'div.s32 INT_MIN / -1')
  assert.is(at(0x80000000, 0xffffffff, 3), 0, 'rem.s32 INT_MIN % -1')
  assert.is(at(0x7fc00000, 0x3f800000, 4), 0x3f800000, 'min.f32(NaN, 1)')
  assert.is(at(0x80000000, 0, 5), 0, 'max.f32(-0, +0)')
  assert.is(at(0x477ff000, 0, 7), 0x7c00, 'cvt.rn.f16.f32(65520)')
  assert.is(at(0x33c00000, 0, 7), 2, 'cvt.rn.f16.f32(1.5 * 2^-24)')
  assert.is(at(0xc3170000, 0, 8), 0, 'ex2.approx(-151)')
  assert.is(at(0x80000000, 0, LG2), 0xff800000, 'lg2.approx(-0)')
})

s.run()
