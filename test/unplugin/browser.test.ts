// A browser bundle made by esbuild (IIFE, `platform: 'browser'`): no koffi or Node built-ins in it, the
// asset found beside the script through `document.currentScript`, the kernels run on the emulator in
// headless Chromium.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { copyFixture, unpluginCacheDir } from '../helpers/bundlers.js'
import { repoRoot, tool } from '../helpers/tools.js'

const N = 100
const f = Math.fround
const expected = Array.from({ length: N }, (_, i) => f(f(f(i * 0.5) + f(100 - i)) * 3))

const iife = suite('esbuild iife in the browser')

iife('the page script runs the kernels on the emulator, loading the asset beside it', async () => {
  const root = copyFixture('app', 'browser-iife')
  const outDir = join(root, '..', 'out')
  const esbuild = await import('esbuild')
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'esbuild.js'))).default
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: { page: join(root, 'src', 'page.js') },
    outdir: outDir,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    logLevel: 'silent',
    plugins: [cuda({ cacheDir: unpluginCacheDir, dtsScan: [] })],
  })
  const js = readFileSync(join(outDir, 'page.js'), 'utf8')
  assert.not.match(js, /koffi/)
  assert.not.match(js, /require\(["'](node:)?(fs|path|url|module)["']\)|from\s*["']node:/)
  // Served from a sub-path, so only a URL relative to the script (not to the page) finds the asset.
  writeFileSync(join(outDir, 'index.html'), '<!doctype html><pre id="result">running</pre><script src="./js/page.js"></script>')
  const server = createServer((req, res) => {
    const url = req.url ?? '/'
    const path = url === '/' ? '/index.html' : url.startsWith('/js/') ? url.slice(3) : undefined
    try {
      if (!path) throw new Error('not under /js/')
      const body = readFileSync(join(outDir, path))
      res.setHeader('content-type', path.endsWith('.js') ? 'text/javascript' : path.endsWith('.html') ? 'text/html' : 'application/octet-stream')
      res.end(body)
    } catch {
      res.statusCode = 404
      res.end()
    }
  }).listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  const port = (server.address() as { port: number }).port
  const { chromium } = await import('playwright-core')
  const userDataDir = mkdtempSync(join(tmpdir(), 'kp-chromium-'))
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: tool('chromium'),
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  try {
    const page = context.pages()[0] ?? (await context.newPage())
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForFunction(() => document.getElementById('result')?.textContent !== 'running', null, { timeout: 60_000 })
    assert.is(await page.textContent('#result'), JSON.stringify({ backend: 'emulator', out: expected }))
  } finally {
    await context.close()
    server.close()
    rmSync(userDataDir, { recursive: true, force: true })
  }
})

iife.run()
