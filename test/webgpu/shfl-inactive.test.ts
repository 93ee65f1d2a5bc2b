// shfl.sync from a source lane that is not in the member mask or not active reads 0 on WebGPU too, as on
// NVIDIA GPUs and in the emulator (issue 24 item 8): test/fixtures/emulator/shfl-inactive.cu (reduce7's shape,
// written here), built by nvcc (compute_80, compute_90) and clang 22 (sm_80),
// translated by emit-wgsl and run in headless chromium (SwiftShader), against the same references as
// test/emulator/shfl-inactive.test.ts.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { basename } from 'node:path'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { startWebGpuPages, type PageBackend } from '../helpers/webgpu-page.js'
import { shflInactiveCases, shflInactiveSource, type ShflCase } from '../fixtures/emulator/shfl-inactive.js'

const groups: Array<{ source: string; cases: ShflCase[] }> = [{ source: shflInactiveSource, cases: shflInactiveCases }]
// clang needs the toolkit's CCCL headers for cooperative_groups.h (nvcc adds them itself)
const flags = (compiler: string) => (compiler === 'nvcc' ? [] : ['-isystem', '/usr/local/cuda/include/cccl'])
const requests = corpusConfigs.flatMap((config) => groups.map((g) => ({ source: g.source, config, extraArgs: flags(config.compiler) })))
const texts = await compilePtxAll(requests)
const pages = await startWebGpuPages()

requests.forEach(({ source, config }, r) => {
  const cases = groups.find((g) => g.source === source)!.cases
  const s = suite<{ k?: KernelRunner; gpu?: PageBackend }>(`WebGPU: shfl.sync from inactive lanes, ${basename(source)} (${config.label})`, {})
  s.before(async (ctx) => {
    ctx.gpu = await pages.open({ partial: true })
    ctx.k = await KernelRunner.load(ctx.gpu, texts[r]!, config.target, `${basename(source)} (${config.label}, WebGPU)`)
  })
  s.after(async (ctx) => {
    await ctx.gpu?.page.close()
    if (r === requests.length - 1) await pages.close()
  })
  s('the kernels the cases launch translate to WGSL', (ctx) => {
    const launched = cases.flatMap((c) => c.kernels.map((name) => ctx.k!.entry(name)))
    assert.equal(ctx.gpu!.refused.filter((x) => launched.includes(x.kernel ?? '')).map((x) => `${x.kernel}: ${x.reason}`), [])
  })
  for (const c of cases) s(c.name, (ctx) => c.run(ctx.k!))
  s.run()
})
