// add, sub, mul and fma with a directed rounding (.rz/.rm/.rp) on WebGPU (issue 26 item 4): exact integer
// routines (wgsl-lib.ts kp_fma_bits), since WGSL rounds to nearest only and leaves its own fma unfused where the
// device likes (SwiftShader's is). Every result is compared bit for bit with the emulator's (numeric.ts fop32,
// checked there against BigInt references) on the inputs that tell: products that are binary32 midpoints with
// tiny addends of either sign, cancellation, results around and below the smallest normal, signed zeros,
// infinities, NaN, overflow (test/emulator/fma-cases.ts), libdevice expf's `fma.rm x, log2e, 12582913` on
// arguments around its rounding steps, and random bit patterns; in headless chromium (SwiftShader).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { bitsOf, fmaInputs, fromBits, rng } from '../emulator/fma-cases.js'

const OPS = ['fma', 'add', 'sub', 'mul'] as const
const MODES = ['rz', 'rm', 'rp'] as const
const PER = OPS.length * MODES.length

/** Thread i reads (a, b, c) at 12·i and writes op × mode at 4·PER·i, in the order of OPS × MODES. */
const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry dir(.param .u64 pin, .param .u64 pout, .param .u32 n)
{
  .reg .b64 %rd<8>; .reg .b32 %r<6>; .reg .f32 %f<${4 + PER}>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mad.lo.s32 %r5, %r3, %r4, %r2;
  setp.ge.u32 %p1, %r5, %r1; @%p1 bra $done;
  mul.wide.u32 %rd3, %r5, 12; add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4]; ld.global.f32 %f3, [%rd4+8];
${OPS.flatMap((op, i) => MODES.map((m, j) => {
  const d = `%f${4 + i * MODES.length + j}`
  return `  ${op}.${m}.f32 ${d}, %f1, %f2${op === 'fma' ? ', %f3' : ''};`
})).join('\n')}
  mul.wide.u32 %rd5, %r5, ${4 * PER}; add.s64 %rd6, %rd2, %rd5;
${Array.from({ length: PER }, (_, k) => `  st.global.f32 [%rd6+${4 * k}], %f${4 + k};`).join('\n')}
$done:
  ret;
}`

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

async function run(k: KernelRunner, xs: Float32Array): Promise<Uint32Array> {
  const n = xs.length / 3
  const din = await k.upload(xs), dout = await k.alloc(4 * PER * n)
  await k.launch('dir', Math.ceil(n / 64), 64, [din, dout, n])
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

s.run()
