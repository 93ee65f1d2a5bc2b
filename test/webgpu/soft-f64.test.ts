// f64 on WebGPU in software binary64 (issue 26 item 3, wgsl-lib.ts kp_f64_fma, kp_f64_add, kp_fpack): add, sub, mul, fma
// with every rounding mode, a mul and add that ptxas fuses, comparisons, conversions to f32 and from integers;
// conversions to and from f16/bf16; every result compared bit for bit with the emulator's (JavaScript's binary64, numeric.ts fma64/fop64, checked
// there against BigInt references) on the inputs that tell: midpoint products with tiny addends, cancellation,
// subnormal results, signed zeros, infinities, NaN, overflow, and random bits; in headless chromium (SwiftShader).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { threadKernel } from '../helpers/thread-kernel.js'
import { rng } from '../emulator/fma-cases.js'
import { translatePtxForShipping } from '../../packages/webgpu/src/index.js'

const MODES = ['rn', 'rz', 'rm', 'rp'] as const
const OPS = ['fma', 'add', 'sub', 'mul'] as const
const CMPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'equ', 'neu', 'ltu', 'leu', 'gtu', 'geu', 'num', 'nan'] as const
/** 64-bit results per thread: op × mode, the fused mul+add, f32 conversions (4 modes, as 64-bit words), int conversions (4). */
const N64 = OPS.length * MODES.length + 1 + MODES.length + 4

const PTX = threadKernel('f64ops', {
  regs: `.reg .b64 %rd<12>; .reg .b32 %r<40>; .reg .f64 %fd<${8 + N64}>; .reg .f32 %f<8>; .reg .pred %p<20>;`,
  pointers: [['pcmp', '%rd7']],
  body: `  mul.wide.u32 %rd3, %r5, 24; add.s64 %rd4, %rd1, %rd3;
  ld.global.f64 %fd1, [%rd4]; ld.global.f64 %fd2, [%rd4+8]; ld.global.f64 %fd3, [%rd4+16];
${OPS.flatMap((op, i) => MODES.map((m, j) => `  ${op}.${m}.f64 %fd${8 + i * 4 + j}, %fd1, %fd2${op === 'fma' ? ', %fd3' : ''};`)).join('\n')}
  mul.f64 %fd4, %fd1, %fd2; add.f64 %fd${8 + 16}, %fd4, %fd3;
${MODES.map((m, j) => `  cvt.${m}.f32.f64 %f${1 + j}, %fd1; cvt.f64.f32 %fd${8 + 17 + j}, %f${1 + j};`).join('\n')}
  ld.global.u32 %r11, [%rd4]; ld.global.u64 %rd8, [%rd4+8];
  cvt.rn.f64.s32 %fd${8 + 21}, %r11; cvt.rn.f64.u32 %fd${8 + 22}, %r11; cvt.rn.f64.s64 %fd${8 + 23}, %rd8; cvt.rz.f64.u64 %fd${8 + 24}, %rd8;
  mul.wide.u32 %rd5, %r5, ${8 * N64}; add.s64 %rd6, %rd2, %rd5;
${Array.from({ length: N64 }, (_, k) => `  st.global.f64 [%rd6+${8 * k}], %fd${8 + k};`).join('\n')}
${CMPS.map((c, k) => `  setp.${c}.f64 %p${2 + k}, %fd1, %fd2; selp.u32 %r${12 + k}, 1, 0, %p${2 + k};`).join('\n')}
  mul.wide.u32 %rd9, %r5, ${4 * CMPS.length}; add.s64 %rd10, %rd7, %rd9;
${CMPS.map((_, k) => `  st.global.u32 [%rd10+${4 * k}], %r${12 + k};`).join('\n')}`,
})

/** A second kernel: div and sqrt in every mode, rcp/rsqrt, min/max, testp, conversions to integers. */
const DIVS = ['div.rn', 'div.rz', 'div.rm', 'div.rp', 'sqrt.rn', 'sqrt.rz', 'sqrt.rm', 'sqrt.rp', 'rcp.rn', 'rcp.approx.ftz', 'rsqrt.approx', 'min', 'max', 'copysign'] as const
const INTS = ['rni.s32', 'rzi.s32', 'rmi.s32', 'rpi.s32', 'rni.u32', 'rzi.u32', 'rni.s64', 'rmi.s64', 'rpi.u64', 'rzi.u64', 'rni.f64', 'rzi.f64', 'rmi.f64', 'rpi.f64'] as const
const TESTS = ['finite', 'infinite', 'number', 'notanumber', 'normal', 'subnormal'] as const
const M64 = DIVS.length + INTS.length + TESTS.length
const MORE_PTX = threadKernel('f64more', {
  regs: `.reg .b64 %rd<${12 + INTS.length}>; .reg .b32 %r<${20 + INTS.length + TESTS.length}>; .reg .f64 %fd<${8 + DIVS.length + INTS.length}>; .reg .pred %p<${4 + TESTS.length}>;`,
  body: `  mul.wide.u32 %rd3, %r5, 24; add.s64 %rd4, %rd1, %rd3;
  ld.global.f64 %fd1, [%rd4]; ld.global.f64 %fd2, [%rd4+8];
  mul.wide.u32 %rd5, %r5, ${8 * M64}; add.s64 %rd6, %rd2, %rd5;
${DIVS.map((op, k) => `  ${op}.f64 %fd${8 + k}, %fd1${op.startsWith('div') || op === 'min' || op === 'max' || op === 'copysign' ? ', %fd2' : ''}; st.global.f64 [%rd6+${8 * k}], %fd${8 + k};`).join('\n')}
${INTS.map((c, k) => {
  const [rnd, ty] = c.split('.') as [string, string]
  const at = 8 * (DIVS.length + k)
  if (ty === 'f64') return `  cvt.${rnd}.f64.f64 %fd${8 + DIVS.length + k}, %fd1; st.global.f64 [%rd6+${at}], %fd${8 + DIVS.length + k};`
  return ty.endsWith('64') ? `  cvt.${rnd}.${ty}.f64 %rd${12 + k}, %fd1; st.global.u64 [%rd6+${at}], %rd${12 + k};` : `  cvt.${rnd}.${ty}.f64 %r${20 + k}, %fd1; cvt.u64.u32 %rd${12 + k}, %r${20 + k}; st.global.u64 [%rd6+${at}], %rd${12 + k};`
}).join('\n')}
${TESTS.map((m, k) => `  testp.${m}.f64 %p${2 + k}, %fd1; selp.u32 %r${20 + INTS.length + k}, 1, 0, %p${2 + k}; cvt.u64.u32 %rd11, %r${20 + INTS.length + k}; st.global.u64 [%rd6+${8 * (DIVS.length + INTS.length + k)}], %rd11;`).join('\n')}`,
})

function f64(bits: bigint): number { const dv = new DataView(new ArrayBuffer(8)); dv.setBigUint64(0, bits); return dv.getFloat64(0) }

function inputs(): Float64Array {
  const out: number[] = []
  const edge = [0, -0, 1, -1, 1.5, 2 ** -1074, -(2 ** -1074), 2 ** -1022, 2 ** -1022 - 2 ** -1074, Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, -Infinity, NaN, 1 + 2 ** -52, 3, 0.1, 1e300, 1e-300, 2 ** 53 + 2, -(2 ** 63)]
  for (const a of edge) for (const b of edge) out.push(a, b, edge[(out.length / 3) % edge.length]!)
  const r = rng(6401)
  // products that are binary64 midpoints (27-bit significands), with tiny addends of either sign
  for (let i = 0; i < 200; i++) {
    const ma = 2 ** 26 + Math.floor(r() * 2 ** 26), mb = 2 ** 26 + Math.floor(r() * 2 ** 26)
    const x = ma * 2 ** (Math.floor(r() * 40) - 20), y = mb * 2 ** -26
    const p = x * y
    out.push(x, y, (r() < 0.5 ? -1 : 1) * Math.abs(p) * 2 ** -(60 + Math.floor(r() * 40)))
    out.push(x, -y, x * y)
  }
  // results near and below the smallest normal
  for (let i = 0; i < 100; i++) out.push((1 + r()) * 2 ** (-520 - Math.floor(r() * 20)), (1 + r()) * 2 ** (-520 - Math.floor(r() * 20)), (r() - 0.5) * 2 ** (-1030 - Math.floor(r() * 30)))
  for (let i = 0; i < 400; i++) out.push(...[0, 1, 2].map(() => f64((BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32)))))
  // sums that carry into the next binade with only a sticky bit below the rounding point ((2 − 2^-52) + 2^-52 ·
  // (1 + 2^-52): 2 + 2^-104, which .rp rounds up): the bit a carry shifts out must stay sticky
  for (const k of [0, 1, 2, 5]) for (const sg of [1, -1]) out.push(sg * (2 - 2 ** -52) * 2 ** k, sg * 2 ** -52 * (1 + 2 ** -52) * 2 ** k, 1)
  return new Float64Array(out)
}

async function run(k: KernelRunner, xs: Float64Array): Promise<{ v: BigUint64Array; c: Uint32Array }> {
  const n = xs.length / 3
  const din = await k.upload(xs), dout = await k.alloc(8 * N64 * n), dc = await k.alloc(4 * CMPS.length * n)
  await k.launch('f64ops', Math.ceil(n / 64), 64, [din, dout, dc, n])
  return { v: await k.read(dout, BigUint64Array), c: await k.read(dc, Uint32Array) }
}

const s = await webgpuPageSuite('WebGPU: f64 in software binary64, bit for bit')

s('add/sub/mul/fma (every mode), a fused mul+add, setp, conversions: the emulator\'s bits (NaN for NaN)', async (ctx) => {
  const xs = inputs()
  const gk = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'soft f64 (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((r) => r.reason), [], 'the kernel translates')
  const gpu = await run(gk, xs)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, PTX, 'compute_80', 'soft f64 (emulator)'), xs)
  be.dispose()
  const nan = (u: bigint) => (u & 0x7fffffffffffffffn) > 0x7ff0000000000000n
  const wrong: string[] = []
  const n = xs.length / 3
  for (let i = 0; i < gpu.v.length; i++) {
    const g = gpu.v[i]!, e = emu.v[i]!
    if (g === e || (nan(g) && nan(e))) continue
    const t = Math.floor(i / N64), k = i % N64
    wrong.push(`thread ${t} result ${k} (${xs[3 * t]}, ${xs[3 * t + 1]}, ${xs[3 * t + 2]}): WebGPU 0x${g.toString(16)}, emulator 0x${e.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} of ${gpu.v.length} results differ:\n${wrong.slice(0, 10).join('\n')}`)
  for (let i = 0; i < gpu.c.length; i++) assert.is(gpu.c[i], emu.c[i], `setp.${CMPS[i % CMPS.length]} thread ${Math.floor(i / CMPS.length)} (${xs[3 * Math.floor(i / CMPS.length)]}, ${xs[3 * Math.floor(i / CMPS.length) + 1]})`)
  // the inputs reach the modes' distinctions
  let differ = 0
  for (let t = 0; t < n; t++) if (gpu.v[t * N64] !== gpu.v[t * N64 + 2] || gpu.v[t * N64 + 2] !== gpu.v[t * N64 + 3]) differ++
  assert.ok(differ > 300, `only ${differ} fma results depend on the rounding mode`)
})

s('div and sqrt (every mode), rcp, rsqrt, min/max, testp, conversions to integers: the emulator\'s bits', async (ctx) => {
  const xs = inputs()
  // integers and their halves, for the conversions' roundings and ranges
  const extra: number[] = []
  for (const v of [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2147483647.5, 2147483648, -2147483648.5, -2147483649, 4294967295.5, 4294967296, 9.3e18, -9.3e18, 1.8e19, 2 ** 63, -(2 ** 63), 123456789.75, -0.9999]) extra.push(v, 3, 0)
  const all = new Float64Array([...xs, ...extra])
  const n = all.length / 3
  const runMore = async (k: KernelRunner) => {
    const din = await k.upload(all), dout = await k.alloc(8 * M64 * n)
    await k.launch('f64more', Math.ceil(n / 64), 64, [din, dout, n])
    return k.read(dout, BigUint64Array)
  }
  const gk = await KernelRunner.load(ctx.gpu!, MORE_PTX, 'compute_80', 'soft f64 more (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((r) => r.reason), [], 'the kernel translates')
  const gpu = await runMore(gk)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await runMore(await KernelRunner.load(be, MORE_PTX, 'compute_80', 'soft f64 more (emulator)'))
  be.dispose()
  const nan = (u: bigint) => (u & 0x7fffffffffffffffn) > 0x7ff0000000000000n
  const names = [...DIVS, ...INTS.map((c) => `cvt.${c}`), ...TESTS.map((m) => `testp.${m}`)]
  const wrong: string[] = []
  for (let i = 0; i < gpu.length; i++) {
    const g = gpu[i]!, e = emu[i]!
    if (g === e || ((i % M64 < DIVS.length || names[i % M64]!.endsWith('.f64')) && nan(g) && nan(e))) continue
    const t = Math.floor(i / M64)
    wrong.push(`${names[i % M64]}(${all[3 * t]}, ${all[3 * t + 1]}): WebGPU 0x${g.toString(16)}, emulator 0x${e.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} of ${gpu.length} results differ:\n${wrong.slice(0, 12).join('\n')}`)
})

/** A third kernel: f64 to half precision in every mode (rounded once from the binary64 value), .satfinite and
 *  .relu, and back to f64 (exact). */
const HALVES = ['rn.f16', 'rz.f16', 'rm.f16', 'rp.f16', 'rn.bf16', 'rz.bf16', 'rm.bf16', 'rp.bf16', 'rn.satfinite.f16', 'rn.relu.bf16'] as const
const HALF_PTX = threadKernel('f64half', {
  target: 'sm_90',
  regs: `.reg .b64 %rd<12>; .reg .b32 %r<${20 + HALVES.length}>; .reg .b16 %h<${4 + HALVES.length}>; .reg .f64 %fd<4>; .reg .pred %p<2>;`,
  pointers: [['pback', '%rd7']],
  body: `  mul.wide.u32 %rd3, %r5, 8; add.s64 %rd4, %rd1, %rd3;
  ld.global.f64 %fd1, [%rd4];
  mul.wide.u32 %rd5, %r5, ${4 * HALVES.length}; add.s64 %rd6, %rd2, %rd5;
${HALVES.map((c, k) => `  cvt.${c}.f64 %h${4 + k}, %fd1; cvt.u32.u16 %r${20 + k}, %h${4 + k}; st.global.u32 [%rd6+${4 * k}], %r${20 + k};`).join('\n')}
  mul.wide.u32 %rd8, %r5, 16; add.s64 %rd9, %rd7, %rd8;
  cvt.f64.f16 %fd2, %h4; cvt.f64.bf16 %fd3, %h8; st.global.f64 [%rd9], %fd2; st.global.f64 [%rd9+8], %fd3;`,
})

s('f64 to f16 and bf16 in every mode (rounded once, not through f32), .satfinite, .relu, and back: the emulator\'s bits', async (ctx) => {
  const r = rng(977)
  const xs: number[] = [0, -0, 1, -1, Infinity, -Infinity, NaN, 65504, 65519.99, 65520, -65520, 65536, 2 ** -24, 2 ** -25, 2 ** -25 + 2 ** -60, -(2 ** -25), 2 ** -14, 2 ** -14 - 2 ** -30,
    3.3895313892515355e38, 3.4e38, 1e300, -1e300, 2 ** -1074, 2 ** -1022, 2 ** -133, 2 ** -134, 2 ** -126, 1e-40]
  // ties of the half-precision result, and ties nudged by bits a float32 could not hold (rounding through f32 would
  // make them ties again): 1 + 2^-11 (+ 2^-40), 1 + 2^-8 (+ 2^-40) for bf16
  for (const e of [-20, -14, -3, 0, 7, 15]) for (const [ulp, nudge] of [[2 ** -11, 0], [2 ** -11, 2 ** -40], [3 * 2 ** -11, -(2 ** -41)], [2 ** -8, 0], [2 ** -8, 2 ** -40], [3 * 2 ** -8, -(2 ** -41)]] as const) {
    xs.push((1 + ulp + nudge) * 2 ** e, -(1 + ulp + nudge) * 2 ** e)
  }
  for (let i = 0; i < 300; i++) xs.push((r() - 0.5) * 2 ** (Math.floor(r() * 50) - 30))
  for (let i = 0; i < 300; i++) xs.push(f64((BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32))))
  const input = new Float64Array(xs)
  const n = input.length
  const runHalf = async (k: KernelRunner) => {
    const din = await k.upload(input), dout = await k.alloc(4 * HALVES.length * n), dback = await k.alloc(16 * n)
    await k.launch('f64half', Math.ceil(n / 64), 64, [din, dout, dback, n])
    return { h: await k.read(dout, Uint32Array), back: await k.read(dback, BigUint64Array) }
  }
  const gk = await KernelRunner.load(ctx.gpu!, HALF_PTX, 'compute_90', 'f64 to half (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((x) => x.reason), [], 'the kernel translates')
  const gpu = await runHalf(gk)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await runHalf(await KernelRunner.load(be, HALF_PTX, 'compute_90', 'f64 to half (emulator)'))
  be.dispose()
  const wrong: string[] = []
  for (let i = 0; i < gpu.h.length; i++) {
    if (gpu.h[i] !== emu.h[i]) wrong.push(`cvt.${HALVES[i % HALVES.length]}.f64(${input[Math.floor(i / HALVES.length)]}): WebGPU 0x${gpu.h[i]!.toString(16)}, emulator 0x${emu.h[i]!.toString(16)}`)
  }
  // a NaN stays a NaN (its payload is the emulator's JavaScript NaN there, as in the tests above)
  const nan = (u: bigint) => (u & 0x7fffffffffffffffn) > 0x7ff0000000000000n
  for (let i = 0; i < gpu.back.length; i++) {
    if (gpu.back[i] !== emu.back[i] && !(nan(gpu.back[i]!) && nan(emu.back[i]!))) wrong.push(`cvt.f64.${i % 2 ? 'bf16' : 'f16'} of input ${input[i >> 1]}: WebGPU 0x${gpu.back[i]!.toString(16)}, emulator 0x${emu.back[i]!.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} results differ:\n${wrong.slice(0, 12).join('\n')}`)
  // the nudged ties tell a single rounding from one through f32: 1 + 2^-11 + 2^-40 rounds up to 1 + 2^-10 in f16
  const at = xs.indexOf((1 + 2 ** -11 + 2 ** -40) * 2 ** 0)
  assert.is(emu.h[at * HALVES.length], 0x3c01)
})

s('the build-time translation names each kernel that uses software f64 (the toolchain\'s warning)', () => {
  assert.equal(translatePtxForShipping(PTX, 'f64.cu').softF64, ['f64ops'])
  const f32Only = PTX.replace(/\.visible \.entry f64ops[\s\S]*$/, '.visible .entry f32only(.param .u64 p) { .reg .f32 %f<3>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.f32 %f1, [%rd1]; add.f32 %f2, %f1, %f1; st.global.f32 [%rd1], %f2; ret; }\n')
  assert.equal(translatePtxForShipping(f32Only, 'f32.cu').softF64, [])
})

s.run()
