// Software binary64 through one call site per function (issue 26 item 3, packages/webgpu/src/f64-services.ts): a
// kernel with more f64 operations than emit-kernel.ts's SOFT_F64_LIMIT (64) and no barrier is written as a
// dispatcher whose cases jump to each function's own case, instead of being refused; with a block barrier, the
// same dispatcher runs in rounds (rounds.ts). The kernel below has 74
// (every arithmetic op in every mode, a fused mul+add, divisions, square roots, rcp/rsqrt with a call inside a
// call, min/max, conversions to and from integers, f32 and f64, comparisons), one of them predicated and four in a
// loop; its results are compared bit for bit with the emulator's, in headless chromium (SwiftShader).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { threadKernel } from '../helpers/thread-kernel.js'
import { rng } from '../emulator/fma-cases.js'
import { decodeForTranslation } from '../../packages/webgpu/src/from-ptx.js'
import { translateModule } from '../../packages/webgpu/src/emit-wgsl.js'
import { F64_SERVICES, innermostCall, splitServiceCalls, type ServiceHost } from '../../packages/webgpu/src/f64-services.js'

const MODES = ['rn', 'rz', 'rm', 'rp'] as const
/** The 64-bit results each thread stores, in order (the PTX below writes them). */
const RESULTS = [
  ...['fma', 'add', 'sub', 'mul', 'div', 'sqrt'].flatMap((op) => MODES.map((m) => `${op}.${m}`)),
  ...['fma', 'add', 'mul', 'div'].flatMap((op) => MODES.map((m) => `${op}.${m} (b, c)`)),
  'mul+add (fused)', 'rcp.rn', 'rcp.approx.ftz', 'rsqrt.approx', 'min', 'max',
  ...MODES.map((m) => `cvt.${m}.f32 and back`), 'cvt.rni.s32', 'cvt.rzi.u32', 'cvt.rmi.s64', 'cvt.rpi.u64', 'cvt.rni.f64',
  'cvt.rn.f64.s32', 'cvt.rn.f64.u64', '@p fma (predicated)', 'loop of fma.rm', 'setp mask',
] as const
const INTEGERS = new Set<string>(['cvt.rni.s32', 'cvt.rzi.u32', 'cvt.rmi.s64', 'cvt.rpi.u64', 'setp mask'])
const CMPS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'equ', 'neu', 'ltu', 'leu', 'gtu', 'geu', 'num', 'nan'] as const
const R = RESULTS.length

function body(): string {
  const out: string[] = []
  let k = 0
  const st = (reg: string) => out.push(`  st.global.${reg.startsWith('%fd') ? 'f64' : 'u64'} [%rd6+${8 * k++}], ${reg};`)
  let fd = 10
  const f = () => `%fd${fd++}`
  for (const op of ['fma', 'add', 'sub', 'mul', 'div', 'sqrt']) {
    for (const m of MODES) {
      const d = f()
      out.push(`  ${op}.${m}.f64 ${d}, %fd1${op === 'sqrt' ? '' : ', %fd2'}${op === 'fma' ? ', %fd3' : ''};`)
      st(d)
    }
  }
  for (const op of ['fma', 'add', 'mul', 'div']) {
    for (const m of MODES) {
      const d = f()
      out.push(`  ${op}.${m}.f64 ${d}, %fd2, %fd3${op === 'fma' ? ', %fd1' : ''};`)
      st(d)
    }
  }
  const p = f(), s = f()
  out.push(`  mul.f64 ${p}, %fd1, %fd2; add.f64 ${s}, ${p}, %fd3;`); st(s)
  for (const op of ['rcp.rn', 'rcp.approx.ftz', 'rsqrt.approx']) { const d = f(); out.push(`  ${op}.f64 ${d}, %fd1;`); st(d) }
  for (const op of ['min', 'max']) { const d = f(); out.push(`  ${op}.f64 ${d}, %fd1, %fd2;`); st(d) }
  MODES.forEach((m, j) => { const d = f(); out.push(`  cvt.${m}.f32.f64 %f${1 + j}, %fd1; cvt.f64.f32 ${d}, %f${1 + j};`); st(d) })
  out.push('  cvt.rni.s32.f64 %r10, %fd1; cvt.s64.s32 %rd10, %r10;'); st('%rd10')
  out.push('  cvt.rzi.u32.f64 %r11, %fd2; cvt.u64.u32 %rd11, %r11;'); st('%rd11')
  out.push('  cvt.rmi.s64.f64 %rd12, %fd1;'); st('%rd12')
  out.push('  cvt.rpi.u64.f64 %rd13, %fd2;'); st('%rd13')
  { const d = f(); out.push(`  cvt.rni.f64.f64 ${d}, %fd1;`); st(d) }
  { const d = f(); out.push(`  ld.global.u32 %r12, [%rd4]; cvt.rn.f64.s32 ${d}, %r12;`); st(d) }
  { const d = f(); out.push(`  ld.global.u64 %rd14, [%rd4+8]; cvt.rn.f64.u64 ${d}, %rd14;`); st(d) }
  // predicated: fma where a < b, else c
  { const d = f(); out.push(`  mov.f64 ${d}, %fd3; setp.lt.f64 %p2, %fd1, %fd2; @%p2 fma.rn.f64 ${d}, %fd1, %fd2, %fd3;`); st(d) }
  // a loop of (thread % 4) + 1 steps of acc = fma.rm(acc, a, b)
  {
    const d = f()
    out.push(`  and.b32 %r13, %r5, 3; add.s32 %r13, %r13, 1; mov.f64 ${d}, %fd3;`, '$loop:', `  fma.rm.f64 ${d}, ${d}, %fd1, %fd2;`, '  sub.s32 %r13, %r13, 1; setp.ne.s32 %p3, %r13, 0; @%p3 bra $loop;')
    st(d)
  }
  // the comparisons as a mask
  out.push('  mov.u32 %r20, 0;')
  CMPS.forEach((c, j) => out.push(`  setp.${c}.f64 %p4, %fd1, %fd2; selp.u32 %r21, ${1 << j}, 0, %p4; or.b32 %r20, %r20, %r21;`))
  out.push('  cvt.u64.u32 %rd15, %r20;'); st('%rd15')
  if (k !== R) throw new Error(`the kernel stores ${k} results, RESULTS names ${R}`)
  return out.join('\n')
}

const PTX = threadKernel('f64many', {
  regs: '.reg .b64 %rd<20>; .reg .b32 %r<24>; .reg .f64 %fd<80>; .reg .f32 %f<8>; .reg .pred %p<6>;',
  body: `  mul.wide.u32 %rd3, %r5, 24; add.s64 %rd4, %rd1, %rd3;
  ld.global.f64 %fd1, [%rd4]; ld.global.f64 %fd2, [%rd4+8]; ld.global.f64 %fd3, [%rd4+16];
  mul.wide.u32 %rd5, %r5, ${8 * R}; add.s64 %rd6, %rd2, %rd5;
${body()}`,
})

function f64(bits: bigint): number { const dv = new DataView(new ArrayBuffer(8)); dv.setBigUint64(0, bits); return dv.getFloat64(0) }

function inputs(): Float64Array {
  const edge = [0, -0, 1, -1, 1.5, 2 ** -1074, -(2 ** -1074), 2 ** -1022, Number.MAX_VALUE, Infinity, -Infinity, NaN, 1 + 2 ** -52, 3, 0.1, 1e300, 1e-300, 2 ** 53 + 2, -(2 ** 63), 2.5]
  const out: number[] = []
  for (const a of edge) for (const b of edge) out.push(a, b, edge[(out.length / 3) % edge.length]!)
  const r = rng(8123)
  for (let i = 0; i < 200; i++) out.push(...[0, 1, 2].map(() => f64((BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32)))))
  for (let i = 0; i < 100; i++) out.push((r() - 0.5) * 2 ** (Math.floor(r() * 80) - 40), (r() - 0.5) * 2 ** (Math.floor(r() * 80) - 40), r())
  return new Float64Array(out)
}

const translate = (ptx: string) => {
  const { module } = decodeForTranslation(ptx, 'f64many.cu')
  return translateModule(module, { features: new Set(), limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 16384 } }, ptx)
}

const s = await webgpuPageSuite('WebGPU: software binary64 through shared sites')

s('a kernel with 74 f64 operations and no barrier: one site per function, the variables in arrays', () => {
  const t = translate(PTX)
  assert.equal(t.refused, [])
  const k = t.kernels.get('f64many')!
  assert.ok(k.softF64, 'it computes f64 in software')
  const main = k.wgsl.slice(k.wgsl.indexOf('fn kp_kernel'))
  assert.match(main, /switch kp_pc \{/)
  // each function the kernel uses is called once, in its own case, which returns to kp_ret
  const used = Object.keys(F64_SERVICES).filter((name) => main.includes(`${name}(`))
  assert.ok(used.length >= 8, `functions used: ${used.join(', ')}`)
  for (const name of used) {
    const calls = main.split(`${name}(`).length - 1
    assert.is(calls, 1, `${name} is called ${calls} times in the kernel`)
  }
  // (kp_ret, like every variable, is an element of an array: the last test)
  assert.is((main.match(/kp_pc = kp_vars\d\[\d+u \+ kp_z\];/g) ?? []).length, used.length)
  // no variable of its own besides the dispatcher's state: the registers are elements of arrays
  assert.equal([...main.matchAll(/^\s+var (\w+)/gm)].map((m) => m[1]).filter((v) => !/^kp_vars\d$/.test(v)), ['kp_pc'])
  // the coarsened variant (blocks past 256 threads) is written the same way
  assert.ok(k.coarse && /switch kp_pc/.test(k.coarse.wgsl) && /kp_vars\d\[\d+u \+ kp_c \+ kp_z\]/.test(k.coarse.wgsl))
})

// the same after a block barrier (which the threads past n, gone before it, do not hold up): the dispatcher in
// rounds (packages/webgpu/src/rounds.ts); after a movmatrix (a tensor-core operation, which rounds do not hold):
// refused
const WITH_BARRIER = PTX.replace('  mul.wide.u32 %rd3, %r5, 24;', '  bar.sync 0;\n  mul.wide.u32 %rd3, %r5, 24;')

s('the same f64 operations after a barrier: shared sites in rounds; after a movmatrix: refused with the count', () => {
  const t = translate(WITH_BARRIER)
  assert.equal(t.refused, [])
  const wgsl = t.kernels.get('f64many')!.wgsl
  assert.match(wgsl, /var<workgroup> kp_sched/)
  const main = wgsl.slice(wgsl.indexOf('fn kp_kernel'))
  for (const name of Object.keys(F64_SERVICES).filter((x) => main.includes(`${x}(`))) assert.is(main.split(`${name}(`).length - 1, 1, `${name} once`)
  const withMovmatrix = PTX.replace('  mul.wide.u32 %rd3, %r5, 24;', '  movmatrix.sync.aligned.m8n8.trans.b16 %r22, %r5;\n  mul.wide.u32 %rd3, %r5, 24;')
  const u = translate(withMovmatrix)
  assert.is(u.refused.length, 1)
  assert.match(u.refused[0]!.reason, /^\d+ f64 operations in software binary64 \(WGSL has no f64\): more than 64 in a kernel with barriers or warp collectives make a shader too large/)
})

s('a call inside a call is taken out innermost first; a let read after the split keeps its call inline', () => {
  assert.equal(innermostCall('x = kp_f64_div(vec2<u32>(0u, 1u), kp_f64_sqrt(a, 0u), 0u);')?.name, 'kp_f64_sqrt')
  let n = 10
  const host: ServiceHost = { newCase: () => ++n, serviceCase: (name) => (name === 'kp_f64_sqrt' ? 1 : 2), serviceVar: (name, k) => `${name}_${k}`, pc: 'kp_pc' }
  const split = splitServiceCalls(['    // rsqrt', '    x = kp_f64_div(vec2<u32>(0u, 1u), kp_f64_sqrt(a, 0u), 0u);'], '    ', host, new Set())
  assert.is(split.inline, 0)
  assert.equal(split.lines, [
    '    // rsqrt',
    '    kp_f64_sqrt_0 = a;', '    kp_f64_sqrt_1 = 0u;', '    kp_ret = 11u;', '    kp_pc = 1u;', '  }', '  case 11u: {',
    '    kp_f64_div_0 = vec2<u32>(0u, 1u);', '    kp_f64_div_1 = kp_f64_sqrt_-1;', '    kp_f64_div_2 = 0u;', '    kp_ret = 12u;', '    kp_pc = 2u;', '  }', '  case 12u: {',
    '    x = kp_f64_div_-1;',
  ])
  const kept = splitServiceCalls(['    let t1 = y;', '    x = kp_f64_add(a, b, 0u) + t1;'], '    ', host, new Set())
  assert.is(kept.inline, 1)
  assert.equal(kept.lines, ['    let t1 = y;', '    x = kp_f64_add(a, b, 0u) + t1;'])
})

for (const [what, ptx] of [['', PTX], [', after a barrier (rounds)', WITH_BARRIER]] as const) s(`the results equal the emulator's bit for bit (NaN for NaN)${what}`, async (ctx) => {
  const PTX = ptx
  const xs = inputs()
  const n = xs.length / 3
  const run = async (k: KernelRunner) => {
    const din = await k.upload(xs), dout = await k.alloc(8 * R * n)
    await k.launch('f64many', Math.ceil(n / 64), 64, [din, dout, n])
    return k.read(dout, BigUint64Array)
  }
  const gk = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'f64 services (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((r) => r.reason), [], 'the kernel translates')
  const gpu = await run(gk)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, PTX, 'compute_80', 'f64 services (emulator)'))
  be.dispose()
  const nan = (u: bigint) => (u & 0x7fffffffffffffffn) > 0x7ff0000000000000n
  const wrong: string[] = []
  for (let i = 0; i < gpu.length; i++) {
    const g = gpu[i]!, e = emu[i]!
    // (a NaN's payload is the emulator's JavaScript NaN there, as in soft-f64.test.ts; integers and the mask exact)
    if (g === e || (!INTEGERS.has(RESULTS[i % R]!) && nan(g) && nan(e))) continue
    const t = Math.floor(i / R)
    wrong.push(`${RESULTS[i % R]}(${xs[3 * t]}, ${xs[3 * t + 1]}, ${xs[3 * t + 2]}): WebGPU 0x${g.toString(16)}, emulator 0x${e.toString(16)}`)
  }
  assert.is(wrong.length, 0, `${wrong.length} of ${gpu.length} results differ:\n${wrong.slice(0, 12).join('\n')}`)
  // the predicated fma and the loop did run: their results differ from the addend on most threads
  const moved = (name: string) => { let c = 0; for (let t = 0; t < n; t++) if (gpu[t * R + RESULTS.indexOf(name as never)] !== new BigUint64Array(xs.buffer)[3 * t + 2]) c++; return c }
  assert.ok(moved('@p fma (predicated)') > n / 4 && moved('@p fma (predicated)') < n, 'the predicated fma runs on some threads, not all')
  assert.ok(moved('loop of fma.rm') > n / 2)
})

s.run()
