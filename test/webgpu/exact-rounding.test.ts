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
import { bitsOf, exactFma32, fmaInputs, fromBits, rng } from '../emulator/fma-cases.js'

const OPS = ['fma', 'add', 'sub', 'mul'] as const
const MODES = ['rz', 'rm', 'rp'] as const
const PER = OPS.length * MODES.length

/** Kernel `entry`: thread i reads (a, b, c) at 12·i into %f1–%f3, computes `results` (each writes the register
 *  it is given: %f4, %f5, …) and stores them at 4·results.length·i, in their order. */
function perThreadKernel(entry: string, results: ReadonlyArray<(d: string) => string>): string {
  return `.version 8.0
.target sm_80
.address_size 64
.visible .entry ${entry}(.param .u64 pin, .param .u64 pout, .param .u32 n)
{
  .reg .b64 %rd<8>; .reg .b32 %r<6>; .reg .f32 %f<${4 + results.length}>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mad.lo.s32 %r5, %r3, %r4, %r2;
  setp.ge.u32 %p1, %r5, %r1; @%p1 bra $done;
  mul.wide.u32 %rd3, %r5, 12; add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4]; ld.global.f32 %f3, [%rd4+8];
${results.map((r, k) => `  ${r(`%f${4 + k}`)};`).join('\n')}
  mul.wide.u32 %rd5, %r5, ${4 * results.length}; add.s64 %rd6, %rd2, %rd5;
${results.map((_, k) => `  st.global.f32 [%rd6+${4 * k}], %f${4 + k};`).join('\n')}
$done:
  ret;
}`
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

s.run()
