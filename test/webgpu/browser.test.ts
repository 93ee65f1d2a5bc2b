// @kernelpack/webgpu in headless Debian chromium (issue 15): the flags of test/helpers/webgpu.ts give a
// SwiftShader adapter with compute; requestWebGpuDevice raises the limits kernels need; the plumbing cases
// (hand-written WGSL through the test hook — memory, parameters and dispatch, not translation) pass on it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { build } from 'esbuild'
import { repoRoot } from '../helpers/tools.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { bundleForBrowser, inlineJson, modulePage, runPage } from '../helpers/webgpu.js'
import { caseNames, type CaseResult } from '../fixtures/webgpu/plumbing-cases.js'

const pages = join(repoRoot, 'test', 'fixtures', 'webgpu', 'pages')

interface AdapterReport {
  secure: boolean; crossOriginIsolated: boolean; sharedArrayBuffer: boolean
  info: { vendor: string; architecture: string; isFallbackAdapter: boolean; subgroupMinSize?: number; subgroupMaxSize?: number }
  adapterFeatures: string[]; deviceFeatures: string[]
  adapterLimits: Record<string, number>; deviceLimits: Record<string, number>
}

const Bundle = suite('browser bundle')

Bundle('packages/webgpu/src/index.ts bundles for platform browser from its own sources and @kernelpack/ptx only', async () => {
  const r = await build({
    entryPoints: [join(repoRoot, 'packages', 'webgpu', 'src', 'index.ts')], bundle: true, write: false, metafile: true,
    platform: 'browser', format: 'esm', conditions: ['source'], absWorkingDir: repoRoot, logLevel: 'silent',
  })
  const inputs = Object.keys(r.metafile.inputs)
  // besides its own sources, only @kernelpack/ptx (DESIGN.md, "Packages"), which has no Node APIs either
  assert.ok(inputs.every((p) => p.startsWith('packages/webgpu/src/') || p.startsWith('packages/ptx/src/')), `bundle pulled in ${inputs.join(', ')}`)
  assert.not.match(r.outputFiles[0]!.text, /\brequire\(|from ["']node:/)
})

Bundle.run()

// ---

const Adapter = suite('chromium WebGPU adapter')

Adapter('SwiftShader adapter with compute; the device gets the adapter\'s maxima and its optional features', async () => {
  const js = await bundleForBrowser(join(pages, 'adapter.ts'))
  const r = await runPage<AdapterReport>({ '/': ['text/html', modulePage], '/page.js': ['text/javascript', js] }, { webgpu: true })
  assert.ok(r.secure, 'served from 127.0.0.1, the page is a secure context')
  assert.is(r.crossOriginIsolated, false)
  assert.is(r.info.architecture, 'swiftshader')
  assert.ok(r.info.isFallbackAdapter)
  assert.ok(r.adapterFeatures.includes('subgroups'), `adapter features: ${r.adapterFeatures}`)
  assert.ok(!r.adapterFeatures.includes('shader-f16'), 'SwiftShader has no shader-f16: f16 must be converted')
  // SwiftShader's subgroups are 4 wide: warp collectives must take the workgroup-memory path (README.md)
  assert.ok((r.info.subgroupMaxSize ?? 0) < 32, `subgroup sizes ${r.info.subgroupMinSize}..${r.info.subgroupMaxSize}`)
  for (const k of ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX']) {
    assert.is(r.deviceLimits[k], r.adapterLimits[k], `${k} raised to the adapter's maximum`)
  }
  assert.ok(r.deviceLimits.maxStorageBufferBindingSize! > 128 << 20, 'above the 128 MiB default')
  assert.is(r.deviceLimits.maxComputeWorkgroupStorageSize, 32768)
  assert.is(r.deviceLimits.maxComputeInvocationsPerWorkgroup, 256)
  assert.equal(r.deviceFeatures.filter((f) => ['shader-f16', 'subgroups', 'timestamp-query'].includes(f)), ['subgroups', 'timestamp-query'])
})

Adapter('cross-origin-isolated mode: COOP/COEP headers give the page SharedArrayBuffer (and WebGPU still works)', async () => {
  const js = await bundleForBrowser(join(pages, 'adapter.ts'))
  const r = await runPage<AdapterReport>({ '/': ['text/html', modulePage], '/page.js': ['text/javascript', js] }, { webgpu: true, crossOriginIsolated: true })
  assert.ok(r.crossOriginIsolated)
  assert.ok(r.sharedArrayBuffer)
  assert.is(r.info.architecture, 'swiftshader')
})

Adapter('without the WebGPU flags chromium on Linux answers no adapter, and the backend says so', async () => {
  const js = await bundleForBrowser(join(pages, 'adapter.ts'))
  let message = ''
  try {
    await runPage({ '/': ['text/html', modulePage], '/page.js': ['text/javascript', js] }, { webgpu: false })
  } catch (e) { message = (e as Error).message }
  assert.match(message, /NoAdapterError: WebGPU answered no adapter \(requestAdapter\(\) gave null\); .*--enable-unsafe-webgpu/)
})

Adapter.run()

// ---

const Plumbing = suite('chromium WebGPU backend plumbing (hand-written WGSL, not translation)')

Plumbing('every plumbing case passes on the page\'s adapter', async () => {
  const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
  const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'plumbing.cu'), config })
  const js = await bundleForBrowser(join(pages, 'plumbing.ts'), { define: { KP_DATA: inlineJson({ ptx, arch: config.target }) } })
  const r = await runPage<{ results: CaseResult[]; adapter: string }>({ '/': ['text/html', modulePage], '/page.js': ['text/javascript', js] }, { webgpu: true })
  assert.match(r.adapter, /^WebGPU: .*swiftshader/)
  assert.equal(r.results.map((c) => c.name), caseNames)
  const failed = r.results.filter((c) => c.error)
  assert.is(failed.length, 0, failed.map((c) => `${c.name}: ${c.error}`).join('\n'))
})

Plumbing.run()
