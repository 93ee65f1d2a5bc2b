// The emulator package built for browsers (issue 6, "Must show"): esbuild bundles packages/emulator/src/index.ts
// with platform "browser" (a Node built-in anywhere in the graph is a build error there), a page served from
// 127.0.0.1 runs the tiled matmul of test/fixtures/emulator/kernels/shared.cu (nvcc PTX embedded in the page) in
// headless Debian chromium, and the product read back from the page is compared with the TypeScript reference.
// Then the whole emulator corpus (nvcc compute_80) on 2 Web Workers in a cross-origin-isolated page (issue 13
// item 3): the worker script is the one `new Worker(new URL('./web-worker.js', import.meta.url))` finds beside
// the page's bundle (esbuild leaves that pattern alone, so the test serves the bundled src/web-worker.ts there,
// as an esbuild user ships dist/web-worker.js). There the kernels must run on the WebAssembly tier wherever the
// emulator in Node puts them (issue 24 item 5), as each module's inspect() says, with fma.rn as relaxed SIMD's
// fused multiply-add (Chromium has relaxed SIMD; the start-up probe must find it fused).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { build, type BuildOptions, type Plugin } from 'esbuild'
import { createServer, type Server } from 'node:http'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import type { AddressInfo } from 'node:net'
import { repoRoot, tool } from '../helpers/tools.js'
import { compilePtx, compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { inlineJson, modulePage, runPage } from '../helpers/webgpu.js'
import { createRng, expectEqualArrays, readPtxEntries } from '../helpers/kernel-runner.js'
import { createEmulatorBackend, type EmulatorModule } from '@kernelpack/emulator'
import { ownSource } from '../fixtures/emulator/cases-own.js'
import { referenceSource } from '../fixtures/emulator/cases-reference.js'
import { refMatmul } from '../fixtures/emulator/reference.js'

const pageDir = join(repoRoot, 'test', 'fixtures', 'emulator', 'browser')
const outDir = join(repoRoot, 'test', '.out', 'emulator-browser')

const bundle = suite('browser bundle')

bundle('packages/emulator/src/index.ts bundles for platform browser with no Node built-ins', async () => {
  rmSync(outDir, { recursive: true, force: true })
  mkdirSync(outDir, { recursive: true })
  const result = await build({
    entryPoints: [join(repoRoot, 'packages', 'emulator', 'src', 'index.ts')],
    outfile: join(outDir, 'emulator.js'),
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    conditions: ['source'],
    absWorkingDir: repoRoot,
    metafile: true,
    logLevel: 'silent',
  })
  assert.is(result.errors.length, 0)
  const inputs = Object.keys(result.metafile.inputs)
  // the emulator imports only @kernelpack/ptx (DESIGN.md, "Packages"), which has no Node APIs either
  assert.ok(inputs.every((p) => p.startsWith('packages/emulator/src/') || p.startsWith('packages/ptx/src/')), `bundle pulled in ${inputs.join(', ')}`)
  const js = readFileSync(join(outDir, 'emulator.js'), 'utf8')
  assert.not.match(js, /\brequire\(|from ["']node:/)
  assert.match(js, /export\s*\{[^}]*createEmulatorBackend/)
})

bundle.run()

// ---

const page = suite('browser run')

page('tiled matmul (shared memory, barriers, 2-D grid) runs in headless chromium and matches the reference', async () => {
  const chromiumPath = tool('chromium')
  const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
  const ptx = await compilePtx({ source: ownSource, config })
  const entry = 'matmul_tile16'
  const params = readPtxEntries(ptx).get(entry)!
  const rng = createRng(4242)
  const M = 29, N = 19, K = 35
  const A = Array.from({ length: M * K }, () => rng.int(-4, 4))
  const B = Array.from({ length: K * N }, () => rng.int(-4, 4))
  const data = {
    ptx, arch: config.target, entry, params,
    buffers: [{ f32: A }, { f32: B }, { length: M * N }],
    args: [{ buffer: 0 }, { buffer: 1 }, { buffer: 2 }, M, N, K],
    output: 2, grid: [Math.ceil(N / 16), Math.ceil(M / 16), 1], block: [16, 16, 1],
  }
  // JSON inside <script>: escape '<' so neither `</script>` nor `<!--` in the PTX can end the element.
  const html = readFileSync(join(pageDir, 'index.html'), 'utf8').replace('__DATA__', () => JSON.stringify(data).replace(/</g, '\\u003c'))
  writeFileSync(join(outDir, 'index.html'), html)
  copyFileSync(join(pageDir, 'page.js'), join(outDir, 'page.js'))

  const types: Record<string, string> = { html: 'text/html', js: 'text/javascript' }
  const server: Server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0] === '/' ? 'index.html' : (req.url ?? '').slice(1).split('?')[0]!
    if (!/^[\w.-]+$/.test(name)) return void res.writeHead(404).end()
    try {
      const body = readFileSync(join(outDir, name))
      res.writeHead(200, { 'content-type': types[name.split('.').pop()!] ?? 'application/octet-stream' }).end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`

  const { chromium } = await import('playwright-core')
  const userDataDir = mkdtempSync(join(tmpdir(), 'kp-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  try {
    const tab = await context.newPage()
    const errors: string[] = []
    tab.on('pageerror', (e) => errors.push(String(e)))
    await tab.goto(url)
    await tab.waitForFunction(() => (window as unknown as { __kpResult?: unknown }).__kpResult !== undefined, undefined, { timeout: 30_000 })
    const result = await tab.evaluate(() => (window as unknown as { __kpResult: { values?: number[]; device?: string; nodeGlobals?: boolean; error?: string } }).__kpResult)
    assert.equal(errors, [])
    assert.is(result.error, undefined, result.error)
    assert.is(result.nodeGlobals, false)
    assert.match(result.device ?? '', /emulator/i)
    expectEqualArrays('C from chromium', result.values!, refMatmul(A, B, M, N, K))
  } finally {
    await context.close()
    server.close()
    rmSync(userDataDir, { recursive: true, force: true })
  }
})

page.run()

// ---

const corpus = suite('browser corpus on Web Workers')

/** The page and the worker script bundled for browsers from the sources; the corpus fixtures name their .cu
 *  file with node:path, which the page gets as a stub (the page embeds the PTX instead). */
async function bundlePage(define: Record<string, string>): Promise<{ page: string; worker: string }> {
  const stubPath: Plugin = { name: 'stub-node-path', setup(b) {
    b.onResolve({ filter: /^node:path$/ }, () => ({ path: 'node:path', namespace: 'stub' }))
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export const join = (...p) => p.join("/")', loader: 'js' }))
  } }
  const common: BuildOptions = { bundle: true, write: false, platform: 'browser', format: 'esm', target: 'es2022', conditions: ['source', 'browser'], absWorkingDir: repoRoot, logLevel: 'silent' }
  const [page, worker] = await Promise.all([
    build({ ...common, entryPoints: [join(pageDir, 'corpus-page.ts')], define, plugins: [stubPath] }),
    build({ ...common, entryPoints: [join(repoRoot, 'packages', 'emulator', 'src', 'web-worker.ts')] }),
  ])
  return { page: page.outputFiles![0]!.text, worker: worker.outputFiles![0]!.text }
}

corpus('the whole emulator corpus (nvcc compute_80) passes on 2 Web Workers in a cross-origin-isolated page, on the wasm tier where Node puts it', async () => {
  const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
  const [own, reference] = await compilePtxAll([{ source: ownSource, config }, { source: referenceSource, config }])
  // issue 24 item 5: each kernel's tier (the last line of inspect()) as the emulator in Node gives it, on 2
  // workers as in the page; chromium must put the same kernels on WebAssembly
  const node = createEmulatorBackend({ workers: 2 })
  const tierLine = (m: EmulatorModule, e: string) => m.inspect(e).split('\n').pop()!.trim()
  const nodeTiers = Object.fromEntries(Object.entries({ own, reference }).map(([g, ptx]) => {
    const m = node.loadModule({ kind: 'ptx', arch: config.target, bytes: new TextEncoder().encode(ptx) })
    return [g, Object.fromEntries([...readPtxEntries(ptx).keys()].map((e) => [e, tierLine(m, e)]))]
  }))
  node.dispose()
  const { page, worker } = await bundlePage({ KP_DATA: inlineJson({ groups: [{ name: 'own', ptx: own }, { name: 'reference', ptx: reference }], arch: config.target, workers: 2 }) })
  const r = await runPage<{ results: Array<{ name: string; error?: string }>; executions: string[]; isolated: boolean; tiers: Record<string, Record<string, string>>; fusedFma: { f32: boolean; f64: boolean } }>({
    '/': ['text/html', modulePage], '/page.js': ['text/javascript', page], '/web-worker.js': ['text/javascript', worker],
  }, { crossOriginIsolated: true, timeoutMs: 240_000 })
  assert.is(r.isolated, true)
  // Chromium has relaxed SIMD and this machine's CPU an FMA: the corpus below ran fma.rn.f32/.f64 as the fused
  // multiply-add the probe checked bit for bit (issue 24 item 3), and its results are still the references'
  assert.equal(r.fusedFma, { f32: true, f64: true }, 'the relaxed-SIMD probe must find relaxed_madd fused in Chromium on this x86-64 machine')
  assert.equal(r.executions, new Array(2).fill('launches run on 2 worker threads (Web Workers) sharing device memory'))
  const failed = r.results.filter((x) => x.error)
  assert.equal(failed, [], failed.map((f) => `${f.name}: ${f.error}`).join('\n'))
  assert.ok(r.results.length >= 50, `${r.results.length} cases ran`)
  // the kernels ran on the wasm tier in the workers (each worker binds the module's WebAssembly to the shared
  // memory), the same kernels as in Node; most of the corpus lowers
  assert.equal(r.tiers, nodeTiers)
  const lines = Object.values(r.tiers).flatMap((g) => Object.values(g))
  const onWasm = lines.filter((l) => l === 'tier: WebAssembly').length
  assert.ok(onWasm >= lines.length / 2, `${onWasm} of ${lines.length} kernels on the wasm tier:\n${lines.join('\n')}`)
})

corpus.run()
