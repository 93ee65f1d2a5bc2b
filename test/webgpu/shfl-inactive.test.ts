// shfl.sync from a source lane that is not in the member mask or not active reads 0 on WebGPU too, as on
// NVIDIA GPUs and in the emulator (issue 24 item 8): test/fixtures/emulator/shfl-inactive.cu built by nvcc
// (compute_80, compute_90) and clang 22 (sm_80), translated by emit-wgsl and run in headless chromium
// (SwiftShader), against the same references as test/emulator/shfl-inactive.test.ts.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { basename } from 'node:path'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { startWebGpuPages, type PageBackend } from '../helpers/webgpu-page.js'
import { shflInactiveCases, shflInactiveSource } from '../fixtures/emulator/shfl-inactive.js'

const texts = await compilePtxAll(corpusConfigs.map((config) => ({ source: shflInactiveSource, config })))
const pages = await startWebGpuPages()

corpusConfigs.forEach((config, r) => {
  const s = suite<{ k?: KernelRunner; gpu?: PageBackend }>(`WebGPU: shfl.sync from inactive lanes (${config.label})`, {})
  s.before(async (ctx) => {
    ctx.gpu = await pages.open({ partial: true })
    ctx.k = await KernelRunner.load(ctx.gpu, texts[r]!, config.target, `${basename(shflInactiveSource)} (${config.label}, WebGPU)`)
  })
  s.after(async (ctx) => {
    await ctx.gpu?.page.close()
    if (r === corpusConfigs.length - 1) await pages.close()
  })
  s('every kernel translates to WGSL', (ctx) => {
    assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
  })
  for (const c of shflInactiveCases) s(c.name, (ctx) => c.run(ctx.k!))
  s.run()
})
