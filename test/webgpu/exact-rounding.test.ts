// add, sub, mul and fma with a directed rounding (.rz/.rm/.rp) on WebGPU (issue 26 item 4): exact integer
// routines (wgsl-lib.ts kp_fma_bits), since WGSL rounds to nearest only and leaves its own fma unfused where the
// device likes (SwiftShader's is); and fma.rn.f32 as Boldo and Melquiond's emulated fma (kp_fma_rn), exact over
// the range its comment states. Every result is compared bit for bit with the emulator's (numeric.ts fop32,
// checked there against BigInt references) on the inputs that tell: products that are binary32 midpoints with
// tiny addends of either sign, cancellation, results around and below the smallest normal, signed zeros,
// infinities, NaN, overflow (test/emulator/fma-cases.ts), libdevice expf's `fma.rm x, log2e, 12582913` on
// arguments around its rounding steps, and random bit patterns; in headless chromium (SwiftShader).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { threadKernel } from '../helpers/thread-kernel.js'
import { bitsOf, exactFma32, fmaInputs, fromBits, rng } from '../emulator/fma-cases.js'
import { decodeForTranslation, SHIPPING_TARGET } from '../../packages/webgpu/src/from-ptx.js'
import { translateModule } from '../../packages/webgpu/src/emit-wgsl.js'

const OPS = ['fma', 'add', 'sub', 'mul'] as const
const MODES = ['rz', 'rm', 'rp'] as const
const PER = OPS.length * MODES.length

/** Kernel `entry`: thread i reads (a, b, c) at 12·i into %f1–%f3, computes `results` (each writes the register
 *  it is given: %f4, %f5, …) and stores them at 4·results.length·i, in their order. `bf16`: (a, b) at 4·i into
 *  %h1, %h2 (b16), the results %h3, %h4, … stored at 2·results.length·i, for sm_90. */
function perThreadKernel(entry: string, results: ReadonlyArray<(d: string) => string>, bf16 = false): string {
  const e = bf16
    ? { r: '%h', regs: `.reg .b16 %h<${3 + results.length}>`, ld: 'ld.global.u16', st: 'st.global.u16', size: 2, inputs: 2 }
    : { r: '%f', regs: `.reg .f32 %f<${4 + results.length}>`, ld: 'ld.global.f32', st: 'st.global.f32', size: 4, inputs: 3 }
  const reg = (k: number) => `${e.r}${e.inputs + 1 + k}`
  return threadKernel(entry, {
    target: bf16 ? 'sm_90' : 'sm_80',
    regs: `.reg .b64 %rd<8>; .reg .b32 %r<6>; ${e.regs}; .reg .pred %p<2>; .reg .b32 %x<3>; .reg .b64 %xd<2>;`,
    body: `  mul.wide.u32 %rd3, %r5, ${e.inputs * e.size}; add.s64 %rd4, %rd1, %rd3;
  ${Array.from({ length: e.inputs }, (_, k) => `${e.ld} ${e.r}${k + 1}, [%rd4${k ? `+${e.size * k}` : ''}];`).join(' ')}
${results.map((r, k) => `  ${r(reg(k))};`).join('\n')}
  mul.wide.u32 %rd5, %r5, ${e.size * results.length}; add.s64 %rd6, %rd2, %rd5;
${results.map((_, k) => `  ${e.st} [%rd6+${e.size * k}], ${reg(k)};`).join('\n')}`,
  })
}

/** Thread i writes op × mode at 4·PER·i, in the order of OPS × MODES. */
const PTX = perThreadKernel('dir', OPS.flatMap((op) => MODES.map((m) => (d: string) => `${op}.${m}.f32 ${d}, %f1, %f2${op === 'fma' ? ', %f3' : ''}`)))

function inputs(): Float32Array {
  const out: number[] = []
  for (const t of fmaInputs()) out.push(...t)
  // libdevice expf: j = fma.rm(x, log2(e), 12582913) (2^23 + 2^22 + 1, where one f32 ulp is 1) is
  // floor(x·log2(e)) + 12582913; arguments on and around the steps, where the rounding decides
  const l2e = Math.fround(Math.LOG2E), magic = 12582913
  for (let k = -150; k <= 150; k += 7) {
    const x = Math.fround(k / Math.LOG2E)
    for (const u of [-2, -1, 0, 1, 2]) out.push(fromBits(bitsOf(x) + u), l2e, magic)
  }
  const r = rng(2611)
  for (let i = 0; i < 300; i++) out.push(fromBits((r() * 2 ** 32) >>> 0), fromBits((r() * 2 ** 32) >>> 0), fromBits((r() * 2 ** 32) >>> 0))
  // full 24-bit significands, the addend of the other sign and up to 40 binades above or below the product (the
  // smaller one's low bits shifted out of the 64 bits kp_fma_bits aligns them in), and within a few ulps of −a·b
  // (cancellation)
  const mant = () => (r() * 0x800000) >>> 0
  for (let i = 0; i < 200; i++) {
    const a = fromBits(0x3f800000 | mant()), b = fromBits(((127 + Math.floor(r() * 41) - 20) << 23) | mant())
    const p = Math.fround(a * b)
    const scaled = bitsOf(Math.fround(-p * 2 ** (Math.floor(r() * 81) - 40)))
    out.push(a, b, fromBits((scaled & 0xff800000) | mant()), a, b, fromBits(bitsOf(-p) + Math.floor(r() * 5) - 2))
  }
  return new Float32Array(out)
}

/** Runs `entry` (perThreadKernel, `per` results a thread) over the triples of xs; its results' bits. */
async function run(k: KernelRunner, xs: Float32Array, entry = 'dir', per = PER): Promise<Uint32Array> {
  const n = xs.length / 3
  const din = await k.upload(xs), dout = await k.alloc(4 * per * n)
  await k.launch(entry, Math.ceil(n / 64), 64, [din, dout, n])
  return k.read(dout, Uint32Array)
}

const s = await webgpuPageSuite('WebGPU: add/sub/mul/fma with .rz/.rm/.rp, exact')

s('every form translates to WGSL', async (ctx) => {
  await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'directed rounding (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
})

s('every result is the emulator\'s, bit for bit (NaN for NaN)', async (ctx) => {
  const xs = inputs()
  const gpu = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'directed rounding (WebGPU)'), xs)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, PTX, 'compute_80', 'directed rounding (emulator)'), xs)
  be.dispose()
  const nan = (u: number) => (u & 0x7fffffff) > 0x7f800000
  const wrong: string[] = []
  for (let i = 0; i < gpu.length; i++) {
    if (gpu[i] === emu[i] || (nan(gpu[i]!) && nan(emu[i]!))) continue
    const t = Math.floor(i / PER), k = i % PER
    const op = OPS[Math.floor(k / MODES.length)]!, m = MODES[k % MODES.length]!
    wrong.push(`${op}.${m}(${xs[3 * t]}, ${xs[3 * t + 1]}${op === 'fma' ? `, ${xs[3 * t + 2]}` : ''}): WebGPU 0x${gpu[i]!.toString(16)}, emulator 0x${emu[i]!.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} of ${gpu.length} results differ:\n${wrong.slice(0, 12).join('\n')}`)
  // the inputs reach every mode's distinctions: results that differ between the modes
  let differ = 0
  for (let t = 0; t < gpu.length / PER; t++) if (gpu[t * PER] !== gpu[t * PER + 1] || gpu[t * PER + 1] !== gpu[t * PER + 2]) differ++
  assert.ok(differ > 200, `only ${differ} fma results depend on the rounding mode`)
})

/** fma.rn.f32 of thread i's (a, b, c), to 4·i. */
const RN_PTX = perThreadKernel('rn', [(d) => `fma.rn.f32 ${d}, %f1, %f2, %f3`])

/** Whether kp_fma_rn's exact path takes (a, b, c) (its comment's range; the same test on the bits). */
function inExactRange(a: number, b: number, c: number): boolean {
  const e = (x: number) => (bitsOf(x) >>> 23) & 0xff
  const ea = e(a), eb = e(b), ep = e(Math.fround(a * b)), ec = e(c)
  const cz = (bitsOf(c) & 0x7fffffff) === 0
  return ea >= 24 && ea <= 239 && eb >= 24 && eb <= 239 && ea + eb >= 176 && ep <= 251 && (cz || (ec >= 24 && ec <= 251))
}

function rnInputs(): Float32Array {
  const out: number[] = []
  for (const t of fmaInputs()) out.push(...t)
  const r = rng(1709)
  // products that are binary32 midpoints or near them, with addends that cancel most of them or nudge them,
  // at exponents across the exact range (its ends included)
  for (let i = 0; i < 1500; i++) {
    const ex = Math.floor(r() * 200) - 90
    const a = Math.fround((1 + r()) * 2 ** Math.max(-76, Math.min(110, ex))), b = Math.fround(1 + Math.floor(r() * 4096) * 2 ** -12)
    const p = a * b
    const kind = i % 3
    const c = kind === 0 ? Math.fround(-p * (1 + (r() - 0.5) * 2 ** -20)) : kind === 1 ? Math.fround((r() < 0.5 ? -1 : 1) * Math.abs(p) * 2 ** -(20 + Math.floor(r() * 20))) : Math.fround((r() - 0.5) * p * 8)
    out.push(a, r() < 0.5 ? b : -b, c)
  }
  return new Float32Array(out)
}

s('fma.rn.f32 is the emulator\'s, bit for bit, wherever kp_fma_rn is exact; rounding twice would differ on many of them', async (ctx) => {
  const xs = rnInputs()
  const n = xs.length / 3
  const runRn = (k: KernelRunner) => run(k, xs, 'rn', 1)
  const gpuK = await KernelRunner.load(ctx.gpu!, RN_PTX, 'compute_80', 'fma.rn (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  const gpu = await runRn(gpuK)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await runRn(await KernelRunner.load(be, RN_PTX, 'compute_80', 'fma.rn (emulator)'))
  be.dispose()
  const wrong: string[] = []
  let inRange = 0, twice = 0
  for (let t = 0; t < n; t++) {
    const [a, b, c] = [xs[3 * t]!, xs[3 * t + 1]!, xs[3 * t + 2]!]
    if (!inExactRange(a, b, c)) continue
    inRange++
    // (the emulator's fma is checked against a BigInt reference in test/emulator; here it is the reference)
    if (bitsOf(exactFma32(a, b, c)) !== emu[t]) throw new Error(`emulator fma.rn(${a}, ${b}, ${c}) disagrees with exactFma32`)
    if (bitsOf(Math.fround(Math.fround(a * b) + c)) !== emu[t]) twice++
    if (gpu[t] !== emu[t]) wrong.push(`fma.rn(${a}, ${b}, ${c}): WebGPU 0x${gpu[t]!.toString(16)}, emulator 0x${emu[t]!.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} of ${inRange} results in the exact range differ:\n${wrong.slice(0, 12).join('\n')}`)
  assert.ok(inRange > 1800, `only ${inRange} inputs in the exact range`)
  // the inputs tell a fused fma from rounding twice (SwiftShader's own fma())
  assert.ok(twice > 300, `only ${twice} of ${inRange} results differ when the product is rounded first`)
})

/** Eight independent fma.rn.f32 of thread i's (a, b, c) and (b, a, c) in a row, to 32·i: one run through
 *  kp_fma_batch (fma-batch.ts), as a GEMM's unrolled inner product is. */
const RUN = 8
const RUN_PTX = perThreadKernel('rnrun', Array.from({ length: RUN }, (_, k) => (d: string) => `fma.rn.f32 ${d}, ${k % 2 ? '%f2, %f1' : '%f1, %f2'}, %f3`))

s('a run of independent fma.rn.f32 goes through one loop (kp_fma_batch) and gives the emulator\'s bits', async (ctx) => {
  const { module } = decodeForTranslation(RUN_PTX, 'rnrun.ptx')
  assert.match(translateModule(module, SHIPPING_TARGET, RUN_PTX).kernels.get('rnrun')!.wgsl, /kp_fma_batch\(8u\);/)
  const xs = rnInputs()
  const n = xs.length / 3
  const gpu = await run(await KernelRunner.load(ctx.gpu!, RUN_PTX, 'compute_80', 'fma.rn run (WebGPU)'), xs, 'rnrun', RUN)
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, RUN_PTX, 'compute_80', 'fma.rn run (emulator)'), xs, 'rnrun', RUN)
  be.dispose()
  const wrong: string[] = []
  let inRange = 0
  for (let t = 0; t < n; t++) {
    const [a, b, c] = [xs[3 * t]!, xs[3 * t + 1]!, xs[3 * t + 2]!]
    if (!inExactRange(a, b, c)) continue
    inRange++
    for (let k = 0; k < RUN; k++) {
      const i = RUN * t + k
      if (emu[i] !== bitsOf(exactFma32(a, b, c))) throw new Error(`emulator fma.rn(${a}, ${b}, ${c}) disagrees with exactFma32`)
      if (gpu[i] !== emu[i]) wrong.push(`site ${k}: fma.rn(${a}, ${b}, ${c}): WebGPU 0x${gpu[i]!.toString(16)}, emulator 0x${emu[i]!.toString(16)}`)
    }
  }
  assert.is(wrong.length, 0, `${wrong.length} of ${RUN * inRange} results in the exact range differ:\n${wrong.slice(0, 12).join('\n')}`)
  assert.ok(inRange > 1800, `only ${inRange} inputs in the exact range`)
})

/** ptxas fuses a plain mul.f32 and the add.f32 (or sub) that reads it into one fma; mul.rn/add.rn never fuse.
 *  Thread i's results: the plain pair (an fma), a plain sub of the product from c (an fma of −a·b), and the
 *  .rn pair (rounded twice). */
const CONTRACT_PTX = perThreadKernel('contract', [
  (d) => `mul.f32 %x1, %f1, %f2; add.f32 ${d}, %x1, %f3`.replace(/%x1/g, '%f20'),
  (d) => `mul.f32 %f21, %f1, %f2; sub.f32 ${d}, %f3, %f21`,
  (d) => `mul.rn.f32 %f22, %f1, %f2; add.rn.f32 ${d}, %f22, %f3`,
]).replace('.reg .f32 %f<7>;', '.reg .f32 %f<23>;')

s('a plain mul.f32 and the add or sub that reads it are the fma ptxas makes of them (as in the emulator); the .rn pair is rounded twice', async (ctx) => {
  const xs = rnInputs()
  const n = xs.length / 3
  const gpuK = await KernelRunner.load(ctx.gpu!, CONTRACT_PTX, 'compute_80', 'contraction (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  const gpu = await run(gpuK, xs, 'contract', 3)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, CONTRACT_PTX, 'compute_80', 'contraction (emulator)'), xs, 'contract', 3)
  be.dispose()
  const wrong: string[] = []
  let inRange = 0, fusedDiffers = 0
  for (let t = 0; t < n; t++) {
    const [a, b, c] = [xs[3 * t]!, xs[3 * t + 1]!, xs[3 * t + 2]!]
    // the fused forms through kp_fma_rn, exact in its range; the .rn pair there too (WebGPU devices may flush
    // subnormal results of plain f32 arithmetic, SwiftShader does: README "Floats")
    if (!inExactRange(a, b, c) || !inExactRange(-a, b, c)) continue
    inRange++
    if (gpu[3 * t + 2] !== emu[3 * t + 2] && (emu[3 * t + 2]! & 0x7f800000) !== 0) wrong.push(`mul.rn+add.rn(${a}, ${b}, ${c}): WebGPU 0x${gpu[3 * t + 2]!.toString(16)}, emulator 0x${emu[3 * t + 2]!.toString(16)}`)
    if (emu[3 * t] !== emu[3 * t + 2]) fusedDiffers++
    for (const k of [0, 1]) if (gpu[3 * t + k] !== emu[3 * t + k]) wrong.push(`${k ? 'c - a·b' : 'a·b + c'}(${a}, ${b}, ${c}): WebGPU 0x${gpu[3 * t + k]!.toString(16)}, emulator 0x${emu[3 * t + k]!.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} results differ:\n${wrong.slice(0, 12).join('\n')}`)
  assert.ok(inRange > 1800 && fusedDiffers > 300, `${inRange} inputs in range, ${fusedDiffers} where fusing changes the result`)
})

const ALL_MODES = ['rn', 'rz', 'rm', 'rp'] as const
/** div, rcp and sqrt in every rounding, and the integer-to-f32 conversions from a's bits (s32, u32) and from
 *  a's and b's bits as the low and high words (s64, u64): the names of thread i's results, in order. */
const DIV_FORMS = [
  ...ALL_MODES.flatMap((m) => [`div.${m}`, `rcp.${m}`, `sqrt.${m}`]),
  'div.rn.ftz', 'sqrt.rn.ftz',
  ...ALL_MODES.flatMap((m) => ['s32', 'u32', 's64', 'u64'].map((t) => `cvt.${m}.f32.${t}`)),
]
const DIV_PTX = perThreadKernel('divsqrt', DIV_FORMS.map((f) => (d: string) => {
  const [op, m, x] = f.split('.')
  if (op === 'div') return `div.${m}${x === 'ftz' ? '.ftz' : ''}.f32 ${d}, %f1, %f2`
  if (op === 'rcp') return `rcp.${m}.f32 ${d}, %f1`
  if (op === 'sqrt') return `sqrt.${m}${x === 'ftz' ? '.ftz' : ''}.f32 ${d}, %f1`
  const t = f.split('.')[3]!
  // the integers loaded as such (an f32 register need not keep a NaN's payload)
  return t.endsWith('64') ? `ld.global.u32 %x1, [%rd4]; ld.global.u32 %x2, [%rd4+4]; mov.b64 %xd1, {%x1, %x2}; cvt.${m}.f32.${t} ${d}, %xd1` : `ld.global.u32 %x1, [%rd4]; cvt.${m}.f32.${t} ${d}, %x1`
}))

/** x⁻¹ mod m (x and m coprime), by the extended Euclidean algorithm. */
function modInverse(x: bigint, m: bigint): bigint {
  let [a, b, u, v] = [x, m, 1n, 0n]
  while (b !== 0n) { const q = a / b; [a, b, u, v] = [b, a - q * b, v, u - q * v] }
  return ((u % m) + m) % m
}

function divInputs(): Float32Array {
  const out: number[] = []
  for (const t of fmaInputs()) out.push(...t)
  const r = rng(3301)
  const bits = () => (r() * 2 ** 32) >>> 0
  const near = (x: number, k: number) => fromBits((bitsOf(x) + k) >>> 0)
  for (let i = 0; i < 600; i++) out.push(fromBits(bits()), fromBits(bits()), 0)
  for (let i = 0; i < 900; i++) {
    // quotients and roots across the exponent range, subnormal and overflowing ones included, with
    // significands from every part of [1, 2)
    const ea = Math.floor(r() * 300) - 150, eb = Math.floor(r() * 300) - 150
    const a = Math.fround((1 + r()) * 2 ** Math.max(-149, Math.min(127, ea))), b = Math.fround((1 + r()) * 2 ** Math.max(-149, Math.min(127, eb)))
    out.push(r() < 0.5 ? a : -a, r() < 0.5 ? b : -b, 0)
  }
  for (let i = 0; i < 300; i++) {
    // exact quotients and squares and their neighbours (the remainder zero or one unit away)
    const b = Math.fround(1 + Math.floor(r() * 4096) / 4096), q = Math.fround(1 + Math.floor(r() * 4096) / 4096)
    const k = Math.floor(r() * 3) - 1
    out.push(near(Math.fround(b * q), k), b, 0, near(Math.fround(q * q), k), b, 0)
  }
  // quotients a hair above or below an integer number of units of 2^-26: a's significand ma with
  // ma · 2^26 ≡ ±1, ±2 (mod mb), where an estimate of the quotient is most easily a unit off
  for (let i = 0; i < 400; i++) {
    const mb = BigInt(0x800001 + 2 * Math.floor(r() * 0x3fffff)), rem = BigInt([1, 2, -1, -2][i % 4]!)
    const inv = modInverse(2n ** 26n % mb, mb)
    const ma = (((rem * inv) % mb) + mb) % mb
    if (ma < 0x800000n) continue
    const ex = Math.floor(r() * 40) - 20
    out.push(Math.fround(Number(ma) * 2 ** (ex - 23)), Math.fround(Number(mb) * 2 ** (Math.floor(r() * 40) - 43)), 0)
  }
  // integers that need rounding (more than 24 significant bits), around the powers of two and the ends
  for (const v of [0, 1, -1, 2 ** 24 + 1, 2 ** 24 + 3, 2 ** 25 + 6, 0x7fffffff, -0x80000000, 0x7fffff80, 0x7fffffc0, -0x7fffffc1, 0xffffff7f | 0]) {
    out.push(fromBits(v >>> 0), fromBits(0), 0, fromBits(v >>> 0), fromBits(0xffffffff), 0, fromBits(v >>> 0), fromBits(0x80000000), 0, fromBits(v >>> 0), fromBits(0x7fffffff), 0)
  }
  return new Float32Array(out)
}

s('div, rcp and sqrt in every rounding and integer-to-f32 conversions are the emulator\'s, bit for bit (NaN for NaN)', async (ctx) => {
  const xs = divInputs()
  const n = xs.length / 3, per = DIV_FORMS.length
  const gpuK = await KernelRunner.load(ctx.gpu!, DIV_PTX, 'compute_80', 'div/rcp/sqrt/cvt (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  const gpu = await run(gpuK, xs, 'divsqrt', per)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, DIV_PTX, 'compute_80', 'div/rcp/sqrt/cvt (emulator)'), xs, 'divsqrt', per)
  be.dispose()
  const nan = (u: number) => (u & 0x7fffffff) > 0x7f800000
  const wrong: string[] = []
  for (let i = 0; i < gpu.length; i++) {
    if (gpu[i] === emu[i] || (nan(gpu[i]!) && nan(emu[i]!))) continue
    const t = Math.floor(i / per)
    wrong.push(`${DIV_FORMS[i % per]}(${xs[3 * t]} [0x${bitsOf(xs[3 * t]!).toString(16)}], ${xs[3 * t + 1]} [0x${bitsOf(xs[3 * t + 1]!).toString(16)}]): WebGPU 0x${gpu[i]!.toString(16)}, emulator 0x${emu[i]!.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} of ${gpu.length} results differ:\n${wrong.slice(0, 16).join('\n')}`)
  // the inputs reach the distinctions: the subnormal results and the results the rounding mode decides
  const form = (f: string) => DIV_FORMS.indexOf(f)
  let subnormal = 0, dependsOnMode = 0
  for (let t = 0; t < n; t++) {
    const q = gpu[t * per + form('div.rn')]!
    if ((q & 0x7f800000) === 0 && (q & 0x7fffff) !== 0) subnormal++
    for (const op of ['div', 'sqrt', 'cvt']) {
      const at = (m: string) => gpu[t * per + form(op === 'cvt' ? `cvt.${m}.f32.u32` : `${op}.${m}`)]!
      if (at('rn') !== at('rz') || at('rm') !== at('rp')) dependsOnMode++
    }
  }
  assert.ok(subnormal > 30, `only ${subnormal} subnormal quotients`)
  assert.ok(dependsOnMode > 2000, `only ${dependsOnMode} results depend on the rounding mode`)
})

/** libdevice's scaling of a subnormal argument (logf, log2f: x · 2^23; 2^24 elsewhere), which a device that flushes
 *  subnormal operands (SwiftShader, NVIDIA's Vulkan driver) would compute as 0 · 2^23: kp_mul_up takes the
 *  factor from its bits. Exact, so bit for bit with the emulator. */
const SCALE_PTX = perThreadKernel('scale', [
  (d) => `mul.f32 ${d}, %f1, 0f4B000000`,
  (d) => `mul.rn.f32 ${d}, %f1, 0f4B800000`,
])

s('a subnormal times 2^23 or 2^24 is exact on a device that flushes subnormal operands (as in the emulator)', async (ctx) => {
  const xs: number[] = []
  for (const b of [1, 2, 3, 0x1234, 0x3fffff, 0x400000, 0x7fffff, 0x800000, 0x800001, 0x3f800000, 0]) for (const sgn of [0, 0x80000000]) xs.push(fromBits((b | sgn) >>> 0), 0, 0)
  const r = rng(77)
  for (let i = 0; i < 64; i++) xs.push(fromBits(((r() * 0x800000) | (r() < 0.5 ? 0x80000000 : 0)) >>> 0), 0, 0)
  const input = new Float32Array(xs)
  const gpu = await run(await KernelRunner.load(ctx.gpu!, SCALE_PTX, 'compute_80', 'scale (WebGPU)'), input, 'scale', 2)
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, SCALE_PTX, 'compute_80', 'scale (emulator)'), input, 'scale', 2)
  be.dispose()
  assert.equal([...gpu], [...emu])
  // 2^-149 · 2^23 = 2^-126, the smallest normal
  assert.is(emu[0], 0x00800000)
})

/** bf16 add/sub/mul (sm_90) and fma (nvcc's add, sub and mul on sm_80) with subnormal operands and results: bf16 shares f32's exponent range, so its
 *  subnormals are f32 subnormals, which SwiftShader (and NVIDIA's Vulkan driver) flush; kp_bf16_addsub and
 *  kp_bf16_mul, kp_bf16_fma compute those cases scaled by 2^64 from the bits. Bit for bit with the emulator. */
const BF16_PTX = perThreadKernel('bf', [
  (d) => `add.rn.bf16 ${d}, %h1, %h2`, (d) => `sub.rn.bf16 ${d}, %h1, %h2`, (d) => `mul.rn.bf16 ${d}, %h1, %h2`,
  (d) => `fma.rn.bf16 ${d}, %h1, 0xBF80, %h2`, (d) => `fma.rn.bf16 ${d}, %h1, %h2, %h1`,
], true)

s('bf16 add, sub, mul and fma with subnormal operands and results are the emulator\'s bits on a device that flushes', async (ctx) => {
  const vals = [0x0000, 0x8000, 0x0001, 0x0002, 0x007f, 0x0080, 0x0081, 0x00ff, 0x0100, 0x3f80, 0x1f80, 0x2000, 0x8001, 0x807f, 0x0180, 0x6000, 0x7f7f, 0x7f80, 0x1234, 0x5f00, 0x4000]
  const pairs: number[] = []
  for (const a of vals) for (const b of vals) pairs.push(a, b)
  const r = rng(4242)
  // small exponents (the subnormal range and just above it), both signs
  for (let i = 0; i < 2000; i++) pairs.push(((r() * 0x200) | (r() < 0.5 ? 0x8000 : 0)) >>> 0, ((r() * 0x200) | (r() < 0.5 ? 0x8000 : 0)) >>> 0)
  const n = pairs.length / 2, input = Uint16Array.from(pairs)
  const go = async (k: KernelRunner) => {
    const din = await k.upload(input), dout = await k.alloc(10 * n)
    await k.launch('bf', Math.ceil(n / 64), 64, [din, dout, n])
    return k.read(dout, Uint16Array)
  }
  const gpu = await go(await KernelRunner.load(ctx.gpu!, BF16_PTX, 'compute_90', 'bf16 (WebGPU)'))
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await go(await KernelRunner.load(be, BF16_PTX, 'compute_90', 'bf16 (emulator)'))
  be.dispose()
  const wrong: string[] = []
  for (let i = 0; i < 5 * n; i++) if (gpu[i] !== emu[i]) wrong.push(`${['add', 'sub', 'mul', 'fma(x, -1, y)', 'fma(x, y, x)'][i % 5]}(0x${pairs[2 * Math.floor(i / 5)]!.toString(16)}, 0x${pairs[2 * Math.floor(i / 5) + 1]!.toString(16)}): 0x${gpu[i]!.toString(16)}, want 0x${emu[i]!.toString(16)}`)
  assert.equal(wrong.slice(0, 10), [], `${wrong.length} of ${5 * n} differ`)
  // 2^-133 + 2^-133 (bits 1 + 1): a subnormal sum
  assert.is(emu[5 * vals.indexOf(1) * vals.length + 5 * vals.indexOf(1)], 2)
})

s.run()
