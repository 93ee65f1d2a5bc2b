// Launch overhead of the runtime (Kernel.launch: argument checks + packing into the per-kernel native block +
// cuLaunchKernelEx through koffi) next to a bare koffi call of cuLaunchKernelEx with a block prepared once,
// both against the libcuda test double (test/fixtures/runtime/README.md) with launch logging off, so the
// driver side costs the same in both. Target (issue 5): marshalling adds <= 100 ns per launch.
//
// The module is real: test/fixtures/gpu/launch-bench.cu (the vec6 that gpu.bench.ts launches on a GPU) compiled
// to compute_90 PTX through the suite's PTX cache (nvcc), its manifest read from that PTX, so the runtime's
// manifest-against-PTX check sees the `.entry vec6` the manifest names (a hand-made manifest beside a PTX
// header with no `.entry` is refused since that check landed, issue 34).
import { join } from 'node:path'
import { loadModule } from '@kernelpack/runtime'
import { packImages, readPtxManifest } from '@kernelpack/toolchain'
import { buildTestDouble, koffi } from '../test/runtime/libcuda-double.js'
import { compilePtx } from '../test/helpers/ptx-cache.js'
import { fixturesDir } from '../test/helpers/tools.js'
import { median, smoke, type BenchResult, type KoffiBench } from './lib.js'

const SOURCE = join(fixturesDir, 'gpu', 'launch-bench.cu')

/** The vec6 module: PTX for compute_90 packed as an offload binary, and the manifest read from the PTX. */
async function vec6Module() {
  const ptx = await compilePtx({ source: SOURCE, config: { label: 'nvcc compute_90', compiler: 'nvcc', arch: 'compute_90', target: 'compute_90' } })
  const manifest = await readPtxManifest(ptx)
  const k = manifest.kernels.find((x) => x.name === 'vec6')
  const sizes = k?.params.map((p) => p.size).join(',')
  // the bench's bare call packs three pointers, u32, f32, u64 at offsets 0, 8, 16, 24, 28, 32
  if (!k || sizes !== '8,8,8,4,4,8') throw new Error(`${SOURCE}: expected a kernel vec6(float *, const float *, float *, unsigned, float, unsigned long long) in its PTX, found ${k ? `vec6 with parameter sizes ${sizes}` : `kernels ${manifest.kernels.map((x) => x.name).join(', ') || 'none'}`}; restore the fixture`)
  return { image: packImages([{ arch: 'compute_90', kind: 'ptx', bytes: new TextEncoder().encode(ptx) }], 'kernelpack bench'), manifest, params: k.params }
}

export async function run(): Promise<BenchResult[]> {
  const td = buildTestDouble()
  const k = koffi as unknown as KoffiBench
  // vec6(float *a, const float *b, float *c, unsigned n, float alpha, unsigned long long seed)
  const { image, manifest, params } = await vec6Module()
  td.defineKernel('vec6', params.map((p) => p.size))
  const mod = await loadModule(image, manifest, { backend: 'cuda', libcudaPath: td.path })
  const [a, b, c] = await Promise.all([mod.alloc(4096), mod.alloc(4096), mod.alloc(4096)])
  const kernel = mod.kernel('vec6')
  td.logLaunches(false)
  const opts = { grid: 8, block: 128 }
  await kernel.launch(opts, a, b, c, 1024, 1.5, 42n)

  // The bare call: cuLaunchKernelEx resolved the same way, block filled once, nothing packed per call.
  const lib = k.load(td.path)
  const gpa = lib.func('int cuGetProcAddress_v2(const char *symbol, uint64_t pfn, int cudaVersion, uint64_t flags, uint64_t status)')
  const scratch = k.alloc('uint8_t', 64)
  gpa('cuLaunchKernelEx', scratch, 11060, 1n, scratch + 8n)
  const pfn = new DataView(k.view(scratch, 64)).getBigUint64(0, true)
  const bare = k.decode(pfn, k.proto('int bench_cuLaunchKernelEx(uint64_t config, uint64_t f, uint64_t kernelParams, uint64_t extra)'))
  const block = k.alloc('uint8_t', 256)
  const view = new DataView(k.view(block, 256))
  for (const [i, v] of [8, 1, 1, 128, 1, 1].entries()) view.setUint32(i * 4, v, true)
  const offsets = [0, 8, 16, 24, 28, 32]
  offsets.forEach((o, i) => view.setBigUint64(64 + i * 8, block + 128n + BigInt(o), true))
  // the function handle the runtime got from cuModuleGetFunction: read it back through the module
  const fnHandle = await (async () => {
    const scratch2 = k.alloc('uint8_t', 16)
    const getFunction = (() => {
      gpa('cuModuleGetFunction', scratch2, 2000, 1n, scratch2 + 8n)
      return k.decode(new DataView(k.view(scratch2, 16)).getBigUint64(0, true), k.proto('int bench_cuModuleGetFunction(uint64_t hfunc, uint64_t hmod, const char *name)'))
    })()
    getFunction(scratch2, 0n, 'vec6')
    return new DataView(k.view(scratch2, 16)).getBigUint64(0, true)
  })()

  // computed once like the runtime's: a BigInt add per call (an allocation) would bill the reference ~10 ns
  const kernelParams = block + 64n
  // smoke mode (bench/lib.ts): one round of 1000 launches per side, after the untimed launches above
  const rounds = smoke ? 1 : 9
  const n = smoke ? 1000 : 100_000
  const apiNs: number[] = []
  const awaitedNs: number[] = []
  const bareNs: number[] = []
  // CPU time of this process (user + system), not wall time: the bench machine is shared, and a loaded
  // machine stretches wall time of both loops by whatever else runs. Rounds interleave the loops, in reverse
  // order every other round (ABC CBA, as bench/lib.ts's interleaved() does; written out here because the
  // loops stay inline in this function, where V8 compiles them as it did when these figures were set); medians.
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) * 1000 }
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [0, 1, 2] : [2, 1, 0]
    for (const side of order) {
      const t0 = cpu()
      if (side === 0) {
        for (let i = 0; i < n; i++) bare(block, fnHandle, kernelParams, 0n)
        bareNs.push((cpu() - t0) / n)
      } else if (side === 1) {
        // launch() resolves synchronously on the cuda backend (the promise is already settled): this is its cost
        for (let i = 0; i < n; i++) void kernel.launch(opts, a, b, c, 1024, 1.5, 42n)
        apiNs.push((cpu() - t0) / n)
      } else {
        for (let i = 0; i < n; i++) await kernel.launch(opts, a, b, c, 1024, 1.5, 42n)
        awaitedNs.push((cpu() - t0) / n)
      }
    }
  }
  const launched = td.launchCount()
  if (launched < BigInt(rounds * n * 3)) throw new Error(`expected ${rounds * n * 3} launches, the double saw ${launched}`)
  await mod.unload()
  const api = median(apiNs)
  const awaited = median(awaitedNs)
  const ref = median(bareNs)
  return [
    {
      name: 'runtime: Kernel.launch, 6 args (check + pack + cuLaunchKernelEx), test double (CPU ns/launch)',
      value: api, unit: 'ns', reference: 'bare koffi cuLaunchKernelEx, block prepared once', referenceValue: ref, ratio: api / ref,
      target: `marshalling adds ${Math.round(api - ref)} ns; target <= 100 ns`,
    },
    {
      name: 'runtime: Kernel.launch awaited, 6 args, test double (CPU ns/launch)',
      value: awaited, unit: 'ns', reference: 'bare koffi cuLaunchKernelEx, block prepared once', referenceValue: ref, ratio: awaited / ref,
      target: `adds ${Math.round(awaited - ref)} ns incl. the await; informational`,
    },
    {
      name: 'runtime: launches per second (6 args, test double)',
      value: 1e9 / api, unit: 'launches/s', reference: 'bare koffi cuLaunchKernelEx', referenceValue: 1e9 / ref, ratio: ref / api,
      target: 'ratio >= 0.5',
    },
  ]
}
