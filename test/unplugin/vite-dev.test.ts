// Vite dev server + headless Chromium: the page shows the kernel's result; editing the .cu and then an
// included header hot-swaps the kernels (the page listens with module.onUpdate and never reloads) with no
// server restart; a syntax error shows in Vite's overlay with the file, line and code frame; fixing it
// recovers. A page without a listener gets the update through its importers (a reload).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { copyFixture, unpluginCacheDir } from '../helpers/bundlers.js'
import { repoRoot, tool } from '../helpers/tools.js'

const N = 100
const f = Math.fround
/** The fixture's result in JS: c = (a + B*b) + extra, then c *= 3, in float32. */
const expected = (B: number, extra = 0) => Array.from({ length: N }, (_, i) => f(f(f(f(i * 0.5) + f(f(B) * f(100 - i))) + f(extra)) * 3))

const dev = suite('vite dev server')

dev('page result, .cu edit, header edit, overlay on a syntax error, recovery', async () => {
  const chromiumPath = tool('chromium')
  const root = copyFixture('app', 'vite-dev')
  const { createServer } = await import('vite')
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'vite.js'))).default
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [cuda({ cacheDir: unpluginCacheDir })],
    server: { host: '127.0.0.1', port: 0, strictPort: false },
    optimizeDeps: { noDiscovery: true, include: [] },
  })
  await server.listen()
  const address = server.httpServer!.address() as { port: number }
  const url = `http://127.0.0.1:${address.port}/`
  const { chromium } = await import('playwright-core')
  const userDataDir = mkdtempSync(join(tmpdir(), 'kp-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  const httpServer = server.httpServer
  try {
    const page = context.pages()[0] ?? (await context.newPage())
    const result = async (want: number[]) => {
      const text = JSON.stringify({ backend: 'emulator', out: want })
      await page.waitForFunction((t) => document.getElementById('result')?.textContent === t, text, { timeout: 60_000 })
    }
    await page.goto(url)
    await result(expected(1))

    const cu = join(root, 'src', 'kernels.cu')
    const good = readFileSync(cu, 'utf8')
    writeFileSync(cu, good.replace('c[i] = combine(a[i], b[i]);', 'c[i] = combine(a[i], b[i]) + 1.0f;'))
    await result(expected(1, 1))

    const h = join(root, 'src', 'common.h')
    writeFileSync(h, readFileSync(h, 'utf8').replace('#define COMBINE_B 1.0f', '#define COMBINE_B 2.0f'))
    await result(expected(2, 1))
    assert.is(await page.evaluate(() => (window as unknown as { __kpLoads: number }).__kpLoads), 1, 'kernels swapped in place: the page never reloaded')

    // Line 7 loses its `;`: nvcc reports the next token, line 8 column 5.
    const broken = good.replace('int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n)\n        c[i]', 'int i = blockIdx.x * blockDim.x + threadIdx.x\n    if (i < n)\n        c[i]')
    assert.is.not(broken, good)
    writeFileSync(cu, broken)
    const overlay = page.locator('vite-error-overlay')
    await overlay.waitFor({ state: 'attached', timeout: 60_000 })
    const overlayText = await overlay.evaluate((el) => el.shadowRoot?.textContent ?? '')
    assert.match(overlayText, /kernels\.cu:8:5/)
    const frame = await overlay.evaluate((el) => el.shadowRoot?.querySelector('.frame')?.textContent ?? '')
    assert.match(frame, />\s*8 \|     if \(i < n\)\n\s*\|     \^/, `the code frame marks line 8 column 5: ${frame}`)
    assert.match(overlayText, 'expected a ";"')
    // The stale module is not served as current: the stub URL now answers with the error.
    const stub = await fetch(`${url}src/kernels.cu?import`)
    assert.is.not(stub.status, 200)

    writeFileSync(cu, good)
    await result(expected(2))
    assert.is(await page.locator('vite-error-overlay').count(), 0, 'the overlay is gone')

    // Without an onUpdate listener the stub declines the update and Vite updates the importers: the page
    // reloads (the marker set on the old page is gone) and shows the new result.
    await page.goto(`${url}plain.html`)
    await result(expected(2))
    await page.evaluate(() => { (window as unknown as { __kpMarker: number }).__kpMarker = 1 })
    writeFileSync(cu, good.replace('c[i] = combine(a[i], b[i]);', 'c[i] = combine(a[i], b[i]) + 1.0f;'))
    await result(expected(2, 1))
    assert.is(await page.evaluate(() => (window as unknown as { __kpMarker?: number }).__kpMarker), undefined, 'the page reloaded')
    assert.is(server.httpServer, httpServer, 'same server, never restarted')
  } finally {
    await context.close()
    await server.close()
    rmSync(userDataDir, { recursive: true, force: true })
  }
})

dev.run()

// ---
const ssr = suite('vite dev ssrLoadModule')

ssr('the SSR module graph loads the stub and runs the kernels in Node', async () => {
  const root = copyFixture('app', 'vite-dev-ssr')
  const { createServer } = await import('vite')
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'vite.js'))).default
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [cuda({ cacheDir: unpluginCacheDir })],
    server: { middlewareMode: true, hmr: false, ws: false },
    ssr: { external: true },
    optimizeDeps: { noDiscovery: true, include: [] },
  })
  try {
    const mod = await server.ssrLoadModule('/src/main.js') as { run(): Promise<{ backend: string; out: number[] }> }
    const r = await mod.run()
    assert.is(r.backend, 'emulator')
    assert.equal(r.out, expected(1))
  } finally {
    await server.close()
  }
})

ssr.run()
