// unplugin-cuda's `backend: 'webgpu'` (issue 15), end to end:
// - a real Vite client build of the fixture app, run in headless Chromium: with a WebGPU adapter (SwiftShader,
//   test/helpers/webgpu.ts) the stubs' kernels run on WebGPU with exact results and the page never fetches
//   the emulator's chunks; without one the load fails naming WebGPU (no silent fallback: `'auto'` falls back);
// - an esbuild bundle for Node: where the optional `webgpu` package (Dawn) resolves, the kernels run on it
//   (over chromium's SwiftShader Vulkan ICD); copied where it does not, the error names the package and the fix.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyFixture, unpluginCacheDir } from '../helpers/bundlers.js'
import { repoRoot } from '../helpers/tools.js'
import { dawnEnvironment, launchChromium, readPageFiles, servePage, type PageFile } from '../helpers/webgpu.js'

const N = 100
const f = Math.fround
// vecAdd then scale<float> by 3, in f32 (main.js): single f32 add and multiply are correctly rounded in
// WGSL as in PTX (add.rn/mul.rn), so the results are exact, as on the emulator
const expected = Array.from({ length: N }, (_, i) => f(f(f(i * 0.5) + f(100 - i)) * 3))

const root = copyFixture('app', 'vite-webgpu')
const outDir = join(root, '..', 'dist')
const { build } = await import('vite')
const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'vite.js'))).default
await build({
  root,
  configFile: false,
  logLevel: 'silent',
  plugins: [cuda({ backend: 'webgpu', cacheDir: unpluginCacheDir, dtsScan: [] })],
  build: { outDir, emptyOutDir: true, target: 'es2022', minify: false },
})
// The Node bundle: every package bundled, as a server bundle ships; the runtime's import of the optional
// `webgpu` package stays dynamic and is resolved at run time from where the bundle lies.
const nodeOut = join(root, '..', 'node')
rmSync(nodeOut, { recursive: true, force: true })
writeFileSync(join(root, 'node-main.js'), "import { run } from './src/main.js'\nrun().then((r) => console.log(JSON.stringify({ backend: r.backend, out: r.out })), (e) => { console.error(e.message); process.exitCode = 1 })\n")
const esbuild = await import('esbuild')
await esbuild.build({
  absWorkingDir: root, entryPoints: { main: join(root, 'node-main.js') }, outdir: nodeOut, outExtension: { '.js': '.mjs' },
  bundle: true, platform: 'node', format: 'esm', logLevel: 'silent',
  plugins: [(await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'esbuild.js'))).default({ backend: 'webgpu', cacheDir: unpluginCacheDir, dtsScan: [] })],
})
const files = readPageFiles(outDir)
const chunks = Object.keys(files).filter((p) => p.endsWith('.js'))
const text = (p: string) => Buffer.from(files[p]![1]).toString('utf8')

/** Opens the built page in chromium (with or without WebGPU); the `#result` text and every URL it fetched. */
async function openPage(pageFiles: Record<string, PageFile>, webgpu: boolean): Promise<{ result: string; fetched: string[]; errors: string[] }> {
  const server = await servePage(pageFiles)
  const browser = await launchChromium({ webgpu })
  try {
    const page = await browser.newPage()
    const errors: string[] = []
    const fetched: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    page.on('request', (r) => fetched.push(new URL(r.url()).pathname))
    await page.goto(server.url)
    await page.waitForFunction(() => document.getElementById('result')?.textContent !== 'running…', undefined, { timeout: 60_000 })
    return { result: (await page.textContent('#result')) ?? '', fetched, errors }
  } finally {
    await browser.close()
    await server.close()
  }
}

const vite = suite("vite build with backend: 'webgpu' in chromium")

vite("the stub asks loadModule for 'webgpu'", () => {
  const stub = chunks.filter((p) => /defineKernelModule\(\{\s*name: "src\/kernels\.cu",\s*backend: "webgpu",/.test(text(p)))
  assert.is(stub.length, 1, `one chunk holds the src/kernels.cu stub with backend "webgpu": ${chunks.join(', ')}`)
})

vite('with a WebGPU adapter the kernels run on webgpu, results exact; the emulator chunks are never fetched', async () => {
  const emulatorChunks = chunks.filter((p) => /createEmulatorBackend|web-worker/.test(p) || text(p).includes('function createEmulatorBackend'))
  const webgpuChunks = chunks.filter((p) => text(p).includes('function createWebGpuBackend'))
  assert.ok(emulatorChunks.length > 0 && webgpuChunks.length > 0, `the runtime loads both backends on demand, so each is a chunk of its own: ${chunks.join(', ')}`)
  assert.not.ok(emulatorChunks.some((p) => webgpuChunks.includes(p)), 'the WebGPU chunk does not carry the emulator')
  const r = await openPage(files, true)
  assert.equal(r.errors, [])
  assert.is(r.result, JSON.stringify({ backend: 'webgpu', out: expected }))
  for (const p of webgpuChunks) assert.ok(r.fetched.includes(p), `${p} fetched`)
  for (const p of emulatorChunks) assert.not.ok(r.fetched.includes(p), `${p} (emulator) not fetched; fetched: ${r.fetched.join(', ')}`)
})

vite("without a WebGPU adapter the load fails naming the .cu and WebGPU (backend 'webgpu' does not fall back)", async () => {
  const r = await openPage(files, false)
  assert.match(r.result, /^error: src\/kernels\.cu: cannot load kernels: WebGPU (is not available \(no navigator\.gpu\)|answered no adapter)/)
})

vite.run()

// ---
const node = suite("esbuild bundle for Node with backend: 'webgpu'")

node('inside the repository `webgpu` resolves: the kernels run on Dawn, results exact', () => {
  const r = spawnSync(process.execPath, [join(nodeOut, 'main.mjs')], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...dawnEnvironment() } })
  assert.is(r.status, 0, r.stderr)
  assert.is(r.stdout.trim(), JSON.stringify({ backend: 'webgpu', out: expected }))
})

node('where `webgpu` is not installed: the error names the .cu, the package and the fix', () => {
  // the same bundle and asset under the system temp folder, where no node_modules holds `webgpu`
  const away = mkdtempSync(join(tmpdir(), 'kp-no-webgpu-'))
  try {
    for (const f of readdirSync(nodeOut)) copyFileSync(join(nodeOut, f), join(away, f))
    const r = spawnSync(process.execPath, [join(away, 'main.mjs')], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
    assert.is(r.status, 1, r.stdout)
    assert.is(r.stderr.trim(), "src/kernels.cu: cannot load kernels: loadModule: backend 'webgpu' in Node needs the optional `webgpu` package (Dawn's WebGPU for Node), which is not installed where the app runs: add it to the app's dependencies (`npm install webgpu`), or pass a GPU object ({ webgpu: { gpu } }), or use backend 'auto' or 'emulator'")
  } finally {
    rmSync(away, { recursive: true, force: true })
  }
})

node.run()
