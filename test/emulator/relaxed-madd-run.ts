// Run by wasm-exact.test.ts in a Node started with or without --experimental-wasm-relaxed-simd (Node 20's V8 has
// relaxed SIMD behind that flag, which the emulator turns on itself unless KERNELPACK_EMULATOR_RELAXED_SIMD=0;
// Chromium and later Node have it on): the start-up probe's answer, then fma.rn.f32
// one thread at a time and 4 threads a step, and fma.rn.f64, on the WebAssembly tier (where the probe lets
// them use the CPU's fused multiply-add) and on the JavaScript tier, each result against the exact BigInt
// fma. Prints one JSON line.
import { createEmulatorBackend } from '@kernelpack/emulator'
import { relaxedMaddFused, relaxedSimdCompiles } from '../../packages/emulator/src/wasm/emit-wasm.js'
import { download, marshal, ptxBytes, upload } from './helpers.js'
import { FMA_PTX, bits64, bitsOf, exactFma32, exactFma64, fma64Inputs, fmaInputs } from './fma-cases.js'

const PTX = `.version 8.0
.target sm_80
.address_size 64

.visible .entry fma_soa(.param .u64 p_x, .param .u64 p_y, .param .u64 p_z, .param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p;
  .reg .b32 %r<6>;
  .reg .f32 %f<5>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  ld.param.u64 %rd3, [p_z];
  ld.param.u64 %rd4, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p, %r5, %r1;
  @%p bra DONE;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd1, %rd5;
  add.s64 %rd7, %rd2, %rd5;
  add.s64 %rd8, %rd3, %rd5;
  add.s64 %rd9, %rd4, %rd5;
  ld.global.f32 %f1, [%rd6];
  ld.global.f32 %f2, [%rd7];
  ld.global.f32 %f3, [%rd8];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd9], %f4;
DONE:
  ret;
}

.visible .entry fma64_aos(.param .u64 p_in, .param .u64 p_out, .param .u32 p_n)
{
  .reg .pred %p;
  .reg .b32 %r<6>;
  .reg .f64 %d<5>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p_in];
  ld.param.u64 %rd2, [p_out];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p, %r5, %r1;
  @%p bra DONE;
  mul.wide.u32 %rd3, %r5, 24;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f64 %d1, [%rd4];
  ld.global.f64 %d2, [%rd4+8];
  ld.global.f64 %d3, [%rd4+16];
  fma.rn.f64 %d4, %d1, %d2, %d3;
  mul.wide.u32 %rd3, %r5, 8;
  add.s64 %rd5, %rd2, %rd3;
  st.global.f64 [%rd5], %d4;
DONE:
  ret;
}
`

const c32 = fmaInputs(), c64 = fma64Inputs()
const report: Record<string, unknown> = {}
for (const codegen of ['wasm', 'js'] as const) {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  const mod = be.loadModule(ptxBytes(PTX)), aos = be.loadModule(ptxBytes(FMA_PTX))
  const launch = (k: string, n: number, args: object[]) => be.launch((k === 'fma32' ? aos : mod).getFunction(k), { grid: [Math.ceil(n / 128), 1, 1], block: [128, 1, 1], sharedBytes: 0 }, marshal(args as never))
  const wrong32 = (got: Float32Array) => c32.filter(([x, y, z], i) => { const w = exactFma32(x, y, z); return Number.isNaN(w) ? !Number.isNaN(got[i]!) : bitsOf(got[i]!) !== bitsOf(w) }).length
  const n = c32.length
  const col = (j: number) => upload(be, Float32Array.from(c32, (t) => t[j]!))
  const soaOut = be.alloc(n * 4)
  await launch('fma_soa', n, [{ u64: col(0) }, { u64: col(1) }, { u64: col(2) }, { u64: soaOut }, { u32: n }])
  const aosOut = be.alloc(n * 4)
  await launch('fma32', n, [{ u64: upload(be, new Float32Array(c32.flat())) }, { u64: aosOut }, { u32: n }])
  const m = c64.length, out64 = be.alloc(m * 8)
  await launch('fma64_aos', m, [{ u64: upload(be, new Float64Array(c64.flat())) }, { u64: out64 }, { u32: m }])
  const got64 = download(be, out64, new Float64Array(m))
  report[codegen] = {
    simd: mod.inspect('fma_soa').includes('SIMD across threads'),
    tiers: ['fma_soa', 'fma32', 'fma64_aos'].map((k) => (k === 'fma32' ? aos : mod).inspect(k).split('\n').pop()!.trim()),
    cases32: n,
    wrong32x4: wrong32(download(be, soaOut, new Float32Array(n))),
    wrong32: wrong32(download(be, aosOut, new Float32Array(n))),
    cases64: m,
    wrong64: c64.filter(([x, y, z], i) => { const w = exactFma64(x, y, z); return Number.isNaN(w) ? !Number.isNaN(got64[i]!) : bits64(got64[i]!) !== bits64(w) }).length,
  }
  mod.unload()
  aos.unload()
  be.dispose()
}
// asked after the backends ran (the probe is taken once, at the first module's load, after
// createEmulatorBackend registered how relaxed SIMD is turned on in this Node)
report.probe = relaxedMaddFused()
report.compiles = relaxedSimdCompiles()
console.log(JSON.stringify(report))
