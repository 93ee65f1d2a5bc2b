// @kernelpack/runtime with the WebGPU backend (issue 15) in headless chromium with a WebGPU adapter: `auto`
// leaves SwiftShader, a fallback (CPU) adapter, for the emulator and says why (issue 25); allowed to take it
// (`webgpu.allowFallbackAdapter`), it picks WebGPU when emit-wgsl translates every kernel of the module, and
// the emulator when one does not (an f64 kernel), naming it, its PTX line and the reason; `backend: 'webgpu'` launches through the runtime API
// with the same marshalled parameter bytes (emit-wgsl, and hand-written WGSL through the test hook).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { repoRoot } from '../helpers/tools.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { bundleForBrowser, inlineJson, modulePage, runPage } from '../helpers/webgpu.js'

interface Run { backend: string; reason: string; image: string; out: number[]; globalSize: number }
interface Report { autoDefault: Run; autoNoFallback: Run; autoRefused: Run; webgpuHand: Run; autoHand: Run; autoPartial: Run; webgpuDefault: Run }

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'plumbing.cu'), config })
const manifest = await readPtxManifest(ptx, { demangle: false })
const refusedPtx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'refused.cu'), config })
const refusedManifest = await readPtxManifest(refusedPtx, { demangle: false })
const js = await bundleForBrowser(join(repoRoot, 'test', 'fixtures', 'webgpu', 'pages', 'runtime.ts'), {
  define: { KP_DATA: inlineJson({ ptx, manifest }), KP_REFUSED: inlineJson({ ptx: refusedPtx, manifest: refusedManifest }) },
})
const r = await runPage<Report>({ '/': ['text/html', modulePage], '/page.js': ['text/javascript', js] }, { webgpu: true })
const f = Math.fround
const want = Array.from({ length: 1000 }, (_, i) => f(f(i * 0.25) + (7 - i)))
const matmulLine = ptx.split('\n').findIndex((l) => /\.entry matmul_tile16\(/.test(l)) + 1

const Auto = suite('runtime auto/webgpu in chromium')
/** The page is not cross-origin isolated: the emulator's launches run on its thread (issue 13), and the reason says why. */
const notIsolated = 'launches run on the calling thread: the page is not cross-origin isolated, so it has no SharedArrayBuffer \\(.*\\)'

Auto('auto with emit-wgsl (the default translator): every kernel of plumbing.cu translates, so WebGPU runs', () => {
  assert.is(r.autoDefault.backend, 'webgpu')
  assert.match(r.autoDefault.reason, /^auto: WebGPU \(google swiftshader .*\) runs every kernel of this module$/)
  assert.equal(r.autoDefault.out, want)
})

Auto('auto never prefers a fallback (CPU) adapter over the emulator: SwiftShader is named, the emulator runs', () => {
  assert.is(r.autoNoFallback.backend, 'emulator')
  assert.match(r.autoNoFallback.reason, new RegExp(`^auto: browsers have no CUDA driver, and WebGPU's only adapter, google swiftshader.*, is a fallback \\(CPU\\) adapter \\(webgpu\\.allowFallbackAdapter takes it\\), so the PTX emulator runs; ${notIsolated}$`))
  assert.equal(r.autoNoFallback.out, want)
})

Auto('auto with a kernel emit-wgsl refuses (f64): the emulator runs, and the reason names the kernel, its PTX line and why', () => {
  const line = refusedPtx.split('\n').findIndex((l) => /\batom\.global\.add\.f64/.test(l)) + 1
  assert.ok(line > 0)
  assert.is(r.autoRefused.backend, 'emulator')
  assert.match(r.autoRefused.reason, new RegExp(`^auto: browsers have no CUDA driver, and WebGPU \\(google swiftshader.*\\(fallback adapter\\)\\) cannot run this module: kernel axpy_f64: PTX line ${line} \\(.*\\): f64 atomics: WGSL has no f64.*, so the PTX emulator runs; ${notIsolated}$`))
  assert.equal(r.autoRefused.out, Array.from({ length: 100 }, (_, i) => 0.5 * (i / 3) + (1 - i)))
})

Auto("backend 'webgpu' with emit-wgsl: vec_add runs through the runtime's marshalled arguments", () => {
  assert.is(r.webgpuDefault.backend, 'webgpu')
  assert.is(r.webgpuDefault.reason, "backend 'webgpu' was requested")
  assert.equal(r.webgpuDefault.out, want)
  assert.is(r.webgpuDefault.globalSize, 4)
})

Auto("backend 'webgpu' (hand-written WGSL hook): the runtime's marshalled arguments launch vec_add; module variables are placed", () => {
  assert.is(r.webgpuHand.backend, 'webgpu')
  assert.is(r.webgpuHand.reason, "backend 'webgpu' was requested")
  assert.is(r.webgpuHand.image, 'compute_80')
  assert.equal(r.webgpuHand.out, want)
  assert.is(r.webgpuHand.globalSize, 4)
})

Auto('auto once every kernel translates: WebGPU runs, saying so', () => {
  assert.is(r.autoHand.backend, 'webgpu')
  assert.match(r.autoHand.reason, /^auto: WebGPU \(google swiftshader .*\) runs every kernel of this module$/)
  assert.equal(r.autoHand.out, want)
})

Auto('auto with one kernel untranslated: the emulator runs, and the reason names the kernel and its PTX line', () => {
  assert.is(r.autoPartial.backend, 'emulator')
  assert.match(r.autoPartial.reason, new RegExp(`cannot run this module: kernel matmul_tile16: PTX line ${matmulLine} \\(.*\\): no hand-written WGSL registered for this entry, so the PTX emulator runs; ${notIsolated}$`))
  assert.equal(r.autoPartial.out, want)
})

Auto.run()
