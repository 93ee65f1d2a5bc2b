// The cuda backend on a real GPU (issue 18), beside its references in the same run:
//   - Kernel.launch CPU time over a bare koffi cuLaunchKernelEx of the same function on the real driver (the
//     measurement of runtime.bench.ts, which runs against the libcuda test double, here with libcuda itself;
//     target: the runtime adds <= 100 ns). Launches go in batches of 256 with a synchronize between batches,
//     outside the timed region, so the driver's launch queue never fills and blocks;
//   - launches per second including execution (a burst of launches, then one synchronize);
//   - kernel time of vector add (2^22) and the 16x16-tiled matmul (192^3) measured with CUDA events, beside
//     the emulator's wall time for the same PTX and launch (the kernels and sizes of emulator.bench.ts);
//   - the same two kernels on the emulator's two tiers (wasm, the default, against codegen 'js'), and on WebGPU
//     through Dawn (the optional `webgpu` package) where it offers a hardware adapter, beside CUDA's kernel time
//     and beside hand-written WGSL of the same kernels on that device (bench/webgpu-hand.ts).
// Where no NVIDIA driver answers, every figure is NaN (null in results.json) and its name says "no GPU".
// Smoke mode (KP_BENCH_SMOKE=1, bench/lib.ts): one round of one batch, bursts of 1000 launches, vector add on
// 2^12 floats and a 32³ matmul, one untimed and one timed run per side. test/bench/smoke.test.ts cannot run
// this file (CI has no GPU, and run() refuses the libcuda test double); `KP_BENCH_SMOKE=1 pnpm bench gpu` on
// a GPU machine does.
import { join } from 'node:path'
import { createModule, loadModule, NoDriverError, resolveBackend, type Module } from '@kernelpack/runtime'
import { NVCC_13_ARCHS, packImages, readPtxManifest } from '@kernelpack/toolchain'
import { createWebGpuBackend, describeAdapter, summarizeAdapter } from '@kernelpack/webgpu'
import { compilePtx, corpusConfigs } from '../test/helpers/ptx-cache.js'
import { fixturesDir } from '../test/helpers/tools.js'
import { ownSource } from '../test/fixtures/emulator/cases-own.js'
import { buildModule } from '../test/gpu/build-module.js'
import { buildCubin } from '../test/gpu/corpus.js'
import { openDawn, requireKoffi } from '../test/gpu/session.js'
import { interleaved, median, smoke, type BenchResult, type KoffiBench } from './lib.js'
import { setupHand } from './webgpu-hand.js'

const N_ADD = smoke ? 1 << 12 : 1 << 22
const MM = smoke ? 32 : 192
/** Timed rounds of each side of the launch figures (bursts, kernel times); the batched loop has its own. */
const ROUNDS = smoke ? 1 : 5
const figures = [
  { name: 'gpu: Kernel.launch, 6 args, real driver (CPU ns/launch)', unit: 'ns', reference: 'bare koffi cuLaunchKernelEx, block prepared once' },
  { name: 'gpu: Kernel.launch awaited, 6 args, real driver (CPU ns/launch)', unit: 'ns', reference: 'bare koffi cuLaunchKernelEx, block prepared once' },
  { name: 'gpu: launches per second including execution (6 args, burst then synchronize)', unit: 'launches/s', reference: 'bare koffi cuLaunchKernelEx, same burst' },
  { name: `gpu: vecAdd 2^${Math.log2(N_ADD)} kernel time (CUDA events)`, unit: 'ms', reference: 'emulator, same PTX and launch (wall time)' },
  { name: `gpu: tiled matmul ${MM}x${MM}x${MM} (16x16 tiles) kernel time (CUDA events)`, unit: 'ms', reference: 'emulator, same PTX and launch (wall time)' },
]

function noGpu(why: string): BenchResult[] {
  return figures.map((f) => ({ ...f, name: `${f.name} — no GPU`, value: NaN, referenceValue: NaN, ratio: NaN, target: `no GPU: ${why}` }))
}

export async function run(): Promise<BenchResult[]> {
  let backend
  try {
    backend = (await resolveBackend({ backend: 'cuda' })).backend
  } catch (err) {
    if (err instanceof NoDriverError) return noGpu(err.summary)
    throw err
  }
  const device = backend.device()
  if (/kernelpack libcuda test double/.test(device.name)) return noGpu('KERNELPACK_LIBCUDA points at the libcuda test double (runtime.bench.ts measures that)')
  const cc = device.computeCapability[0] * 10 + device.computeCapability[1]
  const arch = `sm_${NVCC_13_ARCHS.includes(cc) ? cc : Math.max(...NVCC_13_ARCHS.filter((a) => Math.floor(a / 10) === device.computeCapability[0] && a <= cc))}`
  const gpu = `${device.name}, ${arch}`
  return [...(await measureLaunches(arch, gpu)), ...(await measureKernels(arch, gpu))]
}

/** The launch figures on the driver KERNELPACK_LIBCUDA names (libcuda.so.1 by default); exported for
 *  test/bench/gpu-bench.test.ts, which runs the loops against the libcuda test double. */
export async function measureLaunches(arch: string, gpu: string): Promise<BenchResult[]> {
  const built = await buildModule(join(fixturesDir, 'gpu', 'launch-bench.cu'), arch)
  const mod = await loadModule(built.both, built.manifest, { backend: 'cuda' })
  const [a, b, c] = [await mod.alloc(4096), await mod.alloc(4096), await mod.alloc(4096)]
  const kernel = mod.kernel('vec6')
  const opts = { grid: 8, block: 128 }
  await kernel.launch(opts, a, b, c, 1024, 1.5, 42n)
  await mod.synchronize()

  // The bare call: the same cubin loaded by hand in the same (primary) context, cuLaunchKernelEx resolved the
  // same way, its launch block filled once.
  const k = requireKoffi<KoffiBench>()
  const lib = k.load(process.env.KERNELPACK_LIBCUDA ?? 'libcuda.so.1')
  const gpa = lib.func('int cuGetProcAddress_v2(const char *symbol, uint64_t pfn, int cudaVersion, uint64_t flags, uint64_t status)')
  const scratch = k.alloc('uint8_t', 64)
  const sv = new DataView(k.view(scratch, 64))
  const resolve = (name: string, version: number, proto: string) => {
    if (gpa(name, scratch, version, 1n, scratch + 8n) !== 0) throw new Error(`cuGetProcAddress_v2(${name}) failed`)
    return k.decode(sv.getBigUint64(0, true), k.proto(proto))
  }
  const loadData = resolve('cuModuleLoadData', 2000, 'int bench_cuModuleLoadData(uint64_t module, uint64_t image)')
  const getFunction = resolve('cuModuleGetFunction', 2000, 'int bench_cuModuleGetFunction2(uint64_t hfunc, uint64_t hmod, const char *name)')
  const launchEx = resolve('cuLaunchKernelEx', 11060, 'int bench_cuLaunchKernelEx2(uint64_t config, uint64_t f, uint64_t kernelParams, uint64_t extra)')
  const ctxSync = resolve('cuCtxSynchronize', 2000, 'int bench_cuCtxSynchronize()')
  const image = k.alloc('uint8_t', built.cubin.length)
  new Uint8Array(k.view(image, built.cubin.length)).set(built.cubin)
  if (loadData(scratch, image) !== 0) throw new Error('cuModuleLoadData of the bench cubin failed')
  const hmod = sv.getBigUint64(0, true)
  if (getFunction(scratch, hmod, 'vec6') !== 0) throw new Error('cuModuleGetFunction(vec6) failed')
  const fn = sv.getBigUint64(0, true)
  const block = k.alloc('uint8_t', 256)
  const view = new DataView(k.view(block, 256))
  for (const [i, v] of [8, 1, 1, 128, 1, 1].entries()) view.setUint32(i * 4, v, true)
  const offsets = [0, 8, 16, 24, 28, 32]
  offsets.forEach((o, i) => view.setBigUint64(64 + i * 8, block + 128n + BigInt(o), true))
  view.setBigUint64(128, a.address, true)
  view.setBigUint64(136, b.address, true)
  view.setBigUint64(144, c.address, true)
  view.setUint32(152, 1024, true)
  view.setFloat32(156, 1.5, true)
  view.setBigUint64(160, 42n, true)
  const kernelParams = block + 64n
  if (launchEx(block, fn, kernelParams, 0n) !== 0 || ctxSync() !== 0) throw new Error('the bare cuLaunchKernelEx of vec6 failed')

  // CPU time of the launch loops only (process.cpuUsage, as runtime.bench.ts): batches of 256 launches, each
  // followed by an untimed synchronize; sides interleaved (bare, api, awaited; then reversed), medians.
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) * 1000 }
  const batch = 256
  const batches = smoke ? 1 : 80
  const rounds = smoke ? 1 : 9
  const bareNs: number[] = []
  const apiNs: number[] = []
  const awaitedNs: number[] = []
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? [0, 1, 2] : [2, 1, 0]) {
      let spent = 0
      for (let j = 0; j < batches; j++) {
        const t0 = cpu()
        if (side === 0) for (let i = 0; i < batch; i++) launchEx(block, fn, kernelParams, 0n)
        else if (side === 1) for (let i = 0; i < batch; i++) void kernel.launch(opts, a, b, c, 1024, 1.5, 42n)
        else for (let i = 0; i < batch; i++) await kernel.launch(opts, a, b, c, 1024, 1.5, 42n)
        spent += cpu() - t0
        if (ctxSync() !== 0) throw new Error('cuCtxSynchronize failed during the bench')
      }
      ;(side === 0 ? bareNs : side === 1 ? apiNs : awaitedNs).push(spent / (batch * batches))
    }
  }
  // launches per second including execution: a burst of launches, then one synchronize (wall time)
  const burst = smoke ? 1000 : 20_000
  const rates = await interleaved(ROUNDS, ['bare', 'api'] as const, async (side) => {
    const t0 = process.hrtime.bigint()
    if (side === 'bare') for (let i = 0; i < burst; i++) launchEx(block, fn, kernelParams, 0n)
    else for (let i = 0; i < burst; i++) void kernel.launch(opts, a, b, c, 1024, 1.5, 42n)
    if (ctxSync() !== 0) throw new Error('cuCtxSynchronize failed')
    return burst / (Number(process.hrtime.bigint() - t0) / 1e9)
  })
  await mod.unload()
  const api = median(apiNs)
  const awaited = median(awaitedNs)
  const ref = median(bareNs)
  const [fLaunch, fAwaited, fRate] = figures
  return [
    { ...fLaunch!, name: `${fLaunch!.name}, ${gpu}`, value: api, referenceValue: ref, ratio: api / ref, target: `marshalling adds ${Math.round(api - ref)} ns; target <= 100 ns` },
    { ...fAwaited!, name: `${fAwaited!.name}, ${gpu}`, value: awaited, referenceValue: ref, ratio: awaited / ref, target: `adds ${Math.round(awaited - ref)} ns incl. the await; informational` },
    { ...fRate!, name: `${fRate!.name}, ${gpu}`, value: median(rates.api), referenceValue: median(rates.bare), ratio: median(rates.api) / median(rates.bare), target: 'ratio >= 0.5' },
  ]
}

export async function measureKernels(arch: string, gpu: string): Promise<BenchResult[]> {
  const config = corpusConfigs.find((c) => c.compiler === 'nvcc' && c.arch === 'compute_80')!
  const ptx = await compilePtx({ source: ownSource, config })
  const cubin = await buildCubin(ptx, arch)
  const manifest = await readPtxManifest(ptx)
  const both = packImages([{ arch, kind: 'cubin', bytes: cubin }, { arch: config.arch, kind: 'ptx', bytes: new TextEncoder().encode(ptx) }], 'kernelpack bench')
  const dev = await loadModule(both, manifest, { backend: 'cuda' })
  const emu = await loadModule(both, manifest, { backend: 'emulator' })
  const emuJs = await loadModule(both, manifest, { backend: 'emulator', codegen: 'js' })
  const webgpu = await openHardwareWebGpu()
  // partial: the module has kernels WebGPU refuses (f64, device calls); the two measured here translate
  const wgBackend = typeof webgpu === 'string' ? undefined : await createWebGpuBackend({ gpu: webgpu.gpu, partial: true })
  const wgMod = wgBackend ? await createModule(wgBackend, both, manifest, { sourceName: 'corpus-own.cu', reason: 'gpu bench' }) : undefined
  const addA = Float32Array.from({ length: N_ADD }, (_, i) => (i % 1000) * 0.5)
  const addB = Float32Array.from({ length: N_ADD }, (_, i) => (i % 777) * 0.25)
  const mmA = Float32Array.from({ length: MM * MM }, (_, i) => (i % 7) - 3)
  const mmB = Float32Array.from({ length: MM * MM }, (_, i) => (i % 5) - 2)
  const workloads = [
    { figure: figures[3]!, entry: 'vec_add', grid: N_ADD / 256, block: 256, inputs: [addA, addB], out: N_ADD * 4, scalars: [N_ADD] },
    { figure: figures[4]!, entry: 'matmul_tile16', grid: [MM / 16, MM / 16] as [number, number], block: [16, 16] as [number, number], inputs: [mmA, mmB], out: MM * MM * 4, scalars: [MM, MM, MM] },
  ]
  const results: BenchResult[] = []
  for (const w of workloads) {
    const setup = async (m: Module) => {
      const ins = await Promise.all(w.inputs.map((x) => m.upload(x)))
      const out = await m.alloc(w.out)
      return { args: [...ins, out, ...w.scalars], out }
    }
    const [d, e, j] = [await setup(dev), await setup(emu), await setup(emuJs)]
    const g = wgMod ? await setup(wgMod) : undefined
    // hand-written WGSL of the same kernel on the same WebGPU device (bench/webgpu-hand.ts)
    const hand = wgBackend ? await setupHand((wgBackend as unknown as { gpu: { device: GPUDevice } }).gpu.device, w.entry === 'vec_add' ? 'vecAdd' : 'matmul', {
      a: w.inputs[0]!, b: w.inputs[1]!, outLength: w.out / 4, sizes: w.scalars, groups: typeof w.grid === 'number' ? [w.grid, 1, 1] : [w.grid[0], w.grid[1], 1],
    }) : undefined
    const [e0, e1] = [await dev.createEvent(), await dev.createEvent()]
    const launch = (m: Module, args: unknown[]) => m.kernel(w.entry).launch({ grid: w.grid, block: w.block }, ...(args as never[]))
    // a side's wall time: launch, then synchronize (the emulator's tiers, WebGPU through Dawn)
    const wall = async (m: Module, args: unknown[]) => {
      const t0 = process.hrtime.bigint()
      await launch(m, args)
      await m.synchronize()
      return Number(process.hrtime.bigint() - t0) / 1e6
    }
    await launch(dev, d.args)
    await launch(emu, e.args)
    await launch(emuJs, j.args)
    if (wgMod && g) await launch(wgMod, g.args)
    await hand?.run()
    await Promise.all([dev.synchronize(), emu.synchronize(), emuJs.synchronize(), wgMod?.synchronize()])
    const sides = wgMod ? (['gpu', 'emulator', 'emulator-js', 'webgpu', 'hand'] as const) : (['gpu', 'emulator', 'emulator-js'] as const)
    const times = await interleaved(ROUNDS, sides, async (side) => {
      if (side === 'gpu') {
        await e0.record()
        await launch(dev, d.args)
        await e1.record()
        return e1.elapsedSince(e0)
      }
      if (side === 'webgpu') return wall(wgMod!, g!.args)
      if (side === 'hand') { const t0 = process.hrtime.bigint(); await hand!.run(); return Number(process.hrtime.bigint() - t0) / 1e6 }
      return side === 'emulator' ? wall(emu, e.args) : wall(emuJs, j.args)
    }) as Record<'gpu' | 'emulator' | 'emulator-js' | 'webgpu' | 'hand', number[]>
    const gOut = await d.out.download(new Float32Array(w.out / 4))
    for (const [what, o] of [['the emulator', e.out], ['the emulator (JS tier)', j.out], ...(g ? [['WebGPU', g.out] as const] : [])] as const) {
      const other = await o.download(new Float32Array(w.out / 4))
      const bad = gOut.findIndex((v, i) => v !== other[i] && !(what === 'WebGPU' && Math.abs(v - other[i]!) <= 1e-5 * Math.max(1, Math.abs(v))))
      if (bad >= 0) throw new Error(`${w.entry}: the GPU and ${what} differ at [${bad}]: ${gOut[bad]} vs ${other[bad]}`)
    }
    if (hand) {
      const h = await hand.read()
      const bad = gOut.findIndex((v, i) => Math.abs(v - h[i]!) > 1e-5 * Math.max(1, Math.abs(v)))
      if (bad >= 0) throw new Error(`${w.entry}: the GPU and the hand-written WGSL differ at [${bad}]: ${gOut[bad]} vs ${h[bad]}`)
      hand.destroy()
    }
    const gpuMs = median(times.gpu)
    const em = median(times.emulator)
    const js = median(times['emulator-js'])
    results.push({ ...w.figure, name: `${w.figure.name}, ${gpu}`, value: gpuMs, referenceValue: em, ratio: em / gpuMs, target: 'report: ratio = emulator time / GPU time (results equal)' })
    results.push({
      name: `${w.figure.name.replace(/ kernel time \(CUDA events\)$/, '')}: emulator wasm tier (wall time), ${gpu} host`, value: em, unit: 'ms',
      reference: 'emulator JS tier (codegen: js), same PTX and launch', referenceValue: js, ratio: em / js, target: 'report: ratio < 1 means the wasm tier is faster',
    })
    if (typeof webgpu !== 'string') {
      const wgMs = median(times.webgpu)
      results.push({
        name: `${w.figure.name.replace(/ kernel time \(CUDA events\)$/, '')}: WebGPU through Dawn on ${webgpu.adapter} (launch + synchronize, wall time)`, value: wgMs, unit: 'ms',
        reference: 'CUDA events around the same launch (kernel time only)', referenceValue: gpuMs, ratio: wgMs / gpuMs, target: 'report: WebGPU wall time / CUDA kernel time',
      })
      const handMs = median(times.hand)
      results.push({
        name: `${w.figure.name.replace(/ kernel time \(CUDA events\)$/, '')}: WebGPU translated vs hand-written WGSL (Dawn on ${webgpu.adapter})`, value: wgMs, unit: 'ms',
        reference: 'hand-written WGSL of the same kernel (bench/webgpu-hand.ts), same device, launch + queue done', referenceValue: handMs, ratio: handMs / wgMs, target: '>= 0.8 (issue 25: hand-written time / translated time; here the translated side also synchronizes)',
      })
    } else if (w === workloads[0]) {
      results.push({ name: `${w.figure.name.replace(/ kernel time \(CUDA events\)$/, '')}: WebGPU — not run`, value: NaN, unit: 'ms', reference: 'CUDA events', referenceValue: gpuMs, ratio: NaN, target: `not run: ${webgpu}` })
    }
    await e0.destroy()
    await e1.destroy()
  }
  await dev.unload()
  await emu.unload()
  await emuJs.unload()
  await wgMod?.unload()
  await wgBackend?.dispose()
  return results
}

/** Dawn (the optional `webgpu` package) with a hardware adapter, or why not (a CPU adapter is no GPU figure). */
async function openHardwareWebGpu(): Promise<{ gpu: GPU; adapter: string } | string> {
  const gpu = await openDawn()
  if (typeof gpu === 'string') return gpu
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' })
  if (!adapter) return 'Dawn found no adapter (no Vulkan driver?)'
  const info = summarizeAdapter(adapter)
  const text = describeAdapter(info).replace(/ \(fallback adapter\)$/, '')
  // KP_GPU_WEBGPU_ANY_ADAPTER=1 (as in test:gpu's webgpu section) lets a CPU adapter run, to check this code
  if (info.cpu && process.env.KP_GPU_WEBGPU_ANY_ADAPTER !== '1') return `Dawn offers only a CPU adapter (${text})`
  return { gpu, adapter: text }
}
