// NaN payloads on WebGPU (issue 26, "edge values … NaN payloads"): the instructions whose result on a NaN is a
// matter of bits, not of arithmetic — moves, selects, the sign operations (neg, abs, copysign), min/max with one
// NaN operand (the other operand, exactly), the conversions that keep a payload (f32 → f64, bf16 → f32, f16 → f32)
// or give the canonical NaN (f32 → f16, f32 → bf16), testp.nan, and the f64 sign operations in software binary64 —
// each compared bit for bit with the emulator's on signaling and quiet NaNs of both signs and several payloads, in
// headless chromium (SwiftShader). A tier that let a NaN pass through a WGSL f32 value (which an implementation may
// quiet or canonicalize) would change these bits. Arithmetic on NaN (add, mul, fma, div …) is not here: its payload
// is the host's (x86 quiets the first NaN operand) on the emulator and the canonical NaN in the exact sequences,
// and the other WebGPU tests compare those results as NaN for NaN.
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { threadKernel } from '../helpers/thread-kernel.js'
import { rng } from '../emulator/fma-cases.js'

const TESTS = ['finite', 'infinite', 'number', 'notanumber', 'normal', 'subnormal'] as const

/** Thread i reads the words (a, b) at 8·i; %f1 = a, %f2 = b, %h1 = a's low half, %fd1 = the binary64 (hi a, lo b).
 *  Each op writes one result word (32-bit ops) or two (64-bit, low word first), in this order. */
const OPS: ReadonlyArray<{ name: string; ptx: string; words: 1 | 2 }> = [
  { name: 'mov.b32', ptx: 'mov.f32 %f3, %f1', words: 1 },
  { name: 'neg.f32', ptx: 'neg.f32 %f3, %f1', words: 1 },
  { name: 'abs.f32', ptx: 'abs.f32 %f3, %f1', words: 1 },
  { name: 'copysign.f32', ptx: 'copysign.f32 %f3, %f2, %f1', words: 1 },
  { name: 'selp.f32', ptx: 'and.b32 %r9, %r7, 1; setp.ne.u32 %p2, %r9, 0; selp.f32 %f3, %f1, %f2, %p2', words: 1 },
  { name: 'min.f32', ptx: 'min.f32 %f3, %f1, %f2', words: 1 },
  { name: 'max.f32', ptx: 'max.f32 %f3, %f1, %f2', words: 1 },
  { name: 'cvt.rn.f16.f32', ptx: 'cvt.rn.f16.f32 %h2, %f1; cvt.u32.u16 %r10, %h2', words: 1 },
  { name: 'cvt.f32.f16', ptx: 'cvt.f32.f16 %f3, %h1', words: 1 },
  { name: 'cvt.rn.bf16.f32', ptx: 'cvt.rn.bf16.f32 %h2, %f1; cvt.u32.u16 %r10, %h2', words: 1 },
  { name: 'cvt.f32.bf16', ptx: 'cvt.f32.bf16 %f3, %h1', words: 1 },
  // the six tests on a (f32, bits 0-5) and on the binary64 (bits 8-13), one word
  { name: 'testp', ptx: ['mov.u32 %r10, 0', ...TESTS.flatMap((m, k) => [
    `testp.${m}.f32 %p2, %f1`, `selp.u32 %r9, ${1 << k}, 0, %p2`, 'or.b32 %r10, %r10, %r9',
    `testp.${m}.f64 %p2, %fd1`, `selp.u32 %r9, ${1 << (8 + k)}, 0, %p2`, 'or.b32 %r10, %r10, %r9'])].join('; '), words: 1 },
  { name: 'cvt.f64.f32', ptx: 'cvt.f64.f32 %fd3, %f1', words: 2 },
  { name: 'mov.b64', ptx: 'mov.f64 %fd3, %fd1', words: 2 },
  { name: 'neg.f64', ptx: 'neg.f64 %fd3, %fd1', words: 2 },
  { name: 'abs.f64', ptx: 'abs.f64 %fd3, %fd1', words: 2 },
]
const WORDS = OPS.reduce((n, op) => n + op.words, 0)

function body(): string {
  let at = 0
  return OPS.map((op) => {
    const off = 4 * at
    at += op.words
    if (op.words === 2) return `  ${op.ptx}; st.global.f64 [%rd6+${off}], %fd3;`
    return op.ptx.includes('%r10') ? `  ${op.ptx}; st.global.u32 [%rd6+${off}], %r10;` : `  ${op.ptx}; st.global.f32 [%rd6+${off}], %f3;`
  }).join('\n')
}

const PTX = threadKernel('nans', {
  regs: `.reg .b64 %rd<8>; .reg .b32 %r<12>; .reg .f32 %f<4>; .reg .f64 %fd<4>; .reg .b16 %h<3>; .reg .pred %p<3>;`,
  body: `  mul.wide.u32 %rd3, %r5, 8; add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4]; ld.global.u32 %r7, [%rd4+4];
  ld.global.u16 %h1, [%rd4];
  ld.global.u32 %r8, [%rd4]; mov.b64 %fd1, {%r7, %r8};
  mul.wide.u32 %rd5, %r5, ${4 * WORDS}; add.s64 %rd6, %rd2, %rd5;
${body()}`,
})

/** f32 NaNs: quiet and signaling, both signs, payloads in the top, middle and lowest bits; f16/bf16 NaNs in the
 *  low half (0x7c01 signaling f16, 0xfe00 quiet negative, 0x7f81 signaling bf16, 0xffc1); a few numbers. */
const NANS = [
  0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fc00001, 0x7fd55555, 0xffaaaaaa, 0x7fffffff, 0xffffffff,
  0x7f817c01, 0xffc0fe00, 0x7fa07f81, 0xff80ffc1, 0x7e00_7dff, 0x7fc07e55, 0x7ff00000, 0xfff80000,
]
const NUMBERS = [0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x00000001, 0x7c01, 0x7f81]

function inputs(): Uint32Array {
  const words = [...NANS, ...NUMBERS]
  const out: number[] = []
  for (const a of words) for (const b of words) out.push(a, b)
  // random payloads: an all-ones exponent (f32, and in the high word of the binary64) with random other bits
  const r = rng(2026)
  for (let i = 0; i < 400; i++) {
    const nanOf = () => (((r() < 0.5 ? 0x7f800000 : 0xff800000) | ((r() * 0x800000) >>> 0 || 1)) >>> 0)
    out.push(nanOf(), r() < 0.5 ? nanOf() : (r() * 2 ** 32) >>> 0)
  }
  return new Uint32Array(out)
}

async function run(k: KernelRunner, xs: Uint32Array): Promise<Uint32Array> {
  const n = xs.length / 2
  const din = await k.upload(xs), dout = await k.alloc(4 * WORDS * n)
  await k.launch('nans', Math.ceil(n / 64), 64, [din, dout, n])
  return k.read(dout, Uint32Array)
}

/** The op each result word belongs to. */
const opOfWord = OPS.flatMap((op) => Array.from({ length: op.words }, () => op.name))

/** The emulator's results with the tier given. */
async function emulator(xs: Uint32Array, codegen: 'wasm' | 'js'): Promise<Uint32Array> {
  const be = createEmulatorBackend({ workers: 0, codegen })
  try {
    return await run(await KernelRunner.load(be, PTX, 'compute_80', `NaN payloads (emulator, ${codegen})`), xs)
  } finally {
    be.dispose()
  }
}

const describe = (xs: Uint32Array, i: number, g: number, e: number) => {
  const t = Math.floor(i / WORDS), w = i % WORDS
  return `${opOfWord[w]}(0x${xs[2 * t]!.toString(16)}, 0x${xs[2 * t + 1]!.toString(16)}) word ${w}: WebGPU 0x${g.toString(16)}, emulator 0x${e.toString(16)}`
}

const s = await webgpuPageSuite('WebGPU: NaN payloads through moves, sign operations, min/max and conversions')

s('every result word is the WebAssembly tier\'s, bit for bit, on NaNs of every kind', async (ctx) => {
  const xs = inputs()
  const gpuK = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'NaN payloads (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  const gpu = await run(gpuK, xs)
  const emu = await emulator(xs, 'wasm')
  const wrong: string[] = []
  for (let i = 0; i < gpu.length; i++) if (gpu[i] !== emu[i]) wrong.push(describe(xs, i, gpu[i]!, emu[i]!))
  assert.equal(wrong.slice(0, 16), [], `${wrong.length} of ${gpu.length} result words differ`)
  // the cases are reached, and are what the instructions promise (these hold on both tiers, being equal)
  const at = (a: number, b: number, name: string, word = 0) => {
    for (let t = 0; t < xs.length / 2; t++) if (xs[2 * t] === a && xs[2 * t + 1] === b) return gpu[t * WORDS + opOfWord.indexOf(name) + word]!
    throw new Error('no such pair')
  }
  assert.is(at(0x7f800001, 0, 'mov.b32'), 0x7f800001, 'a signaling NaN moves unchanged')
  assert.is(at(0x7fd55555, 0, 'neg.f32'), 0xffd55555, 'neg flips the sign of a NaN only')
  assert.is(at(0xffaaaaaa, 0, 'abs.f32'), 0x7faaaaaa, 'abs clears the sign of a NaN only')
  assert.is(at(0x7fd55555, 0x80000000, 'copysign.f32'), 0xffd55555, 'copysign takes the sign, keeps the payload')
  assert.is(at(0x7f800001, 0x3f800000, 'min.f32'), 0x3f800000, 'min(NaN, 1) is 1')
  assert.is(at(0x3f800000, 0xffaaaaaa, 'max.f32'), 0x3f800000, 'max(1, NaN) is 1')
  assert.is(at(0x7f817c01, 0, 'cvt.rn.f16.f32'), 0x7fff, 'cvt.rn.f16.f32 of a NaN is the canonical half NaN')
  assert.is(at(0x7f817c01, 0, 'cvt.rn.bf16.f32'), 0x7fff, 'cvt.rn.bf16.f32 of a NaN is the canonical bf16 NaN')
  assert.is(at(0x7f817c01, 0, 'cvt.f32.f16'), 0x7fc02000, 'cvt.f32.f16 of a signaling half NaN: its payload, quieted')
  assert.is(at(0xffc0fe00, 0, 'cvt.f32.f16'), 0xffc00000, 'cvt.f32.f16 keeps a NaN\'s sign')
  assert.is(at(0x7fa07f81, 0, 'cvt.f32.bf16'), 0x7fc10000, 'cvt.f32.bf16 of a signaling bf16 NaN: its payload, quieted')
  assert.is(at(0x7fd55555, 0, 'cvt.f64.f32', 1), 0x7ffaaaaa, 'cvt.f64.f32 keeps the payload (high word)')
  assert.is(at(0x7fd55555, 0, 'cvt.f64.f32', 0), 0xa0000000, 'cvt.f64.f32 keeps the payload (low word)')
  assert.is(at(0x7ff00000, 1, 'mov.b64', 1), 0x7ff00000, 'a signaling binary64 NaN moves unchanged')
  assert.is(at(0x7ff00000, 1, 'neg.f64', 1), 0xfff00000, 'neg.f64 of a signaling NaN flips the sign only')
  // testp: a signaling NaN is a NaN (bit 3) and nothing else; the smallest subnormal is finite, a number, subnormal
  assert.is(at(0x7f800001, 0x7f800001, 'testp') & 0xff, 0b001000, 'testp of a signaling f32 NaN')
  assert.is(at(0x00000001, 0, 'testp') & 0xff, 0b100101, 'testp of 2^-149')
  assert.is(at(0x3f800000, 0, 'testp') >>> 8, 0b010101, 'testp of the binary64 0x3f800000_00000000 (a normal)')
})

// The JavaScript tier holds an f32 register in a JavaScript number, and widening a signaling NaN to binary64 quiets
// it (x86's cvtss2sd, like any IEEE conversion): there, and only there, its bits differ from WebGPU's and the
// WebAssembly tier's, which move the register's bits.
s('the JavaScript tier differs only by quieting a signaling f32 NaN it holds in a register', async (ctx) => {
  const xs = inputs()
  const gpu = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'NaN payloads (WebGPU)'), xs)
  const emu = await emulator(xs, 'js')
  const signaling = (u: number) => (u & 0x7fc00000) === 0x7f800000 && (u & 0x3fffff) !== 0
  const wrong: string[] = []
  let quieted = 0
  for (let i = 0; i < gpu.length; i++) {
    const g = gpu[i]!, e = emu[i]!
    if (g === e) continue
    if (signaling(g) && e === (g | 0x400000) >>> 0) quieted++
    else wrong.push(describe(xs, i, g, e))
  }
  assert.equal(wrong.slice(0, 16), [], `${wrong.length} of ${gpu.length} result words differ otherwise`)
  assert.ok(quieted > 0, 'the inputs carry signaling NaNs through f32 registers')
})

s.run()
