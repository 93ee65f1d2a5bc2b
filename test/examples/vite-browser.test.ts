// examples/vite-browser built and served with its README commands (`pnpm build`, then `pnpm start`, i.e.
// vite preview, on a free port), opened in headless Chromium: the page runs the kernel on the emulator, and
// a screenshot of its canvas matches the reference image computed without the kernel. The page is served
// cross-origin isolated, so the emulator runs the blocks on Web Workers: Vite found and bundled the worker
// script from @kernelpack/emulator's `new Worker(new URL('./web-worker.js', import.meta.url))` (issue 13).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { tool } from '../helpers/tools.js'
import { mandelbrotRgba, referencePng, size } from './mandelbrot-reference.js'
import { examplesCacheDir, examplesDir, readmeCommand, runShell, checkBuilt } from './run-example.js'

const dir = join(examplesDir, 'vite-browser')
/** A channel off by more than this counts the pixel as different; at most `maxDiffering` of them may be. */
const channelTolerance = 8
const maxDiffering = 0.005

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

async function waitForHttp(url: string, child: { exitCode: number | null }, log: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`pnpm start exited ${child.exitCode}:\n${log()}`)
    try {
      if ((await fetch(url)).ok) return
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${url} did not answer within 30 s:\n${log()}`)
}

/** Fraction of pixels whose largest channel difference exceeds the tolerance. */
function differingFraction(a: Uint8Array, b: Uint8Array): number {
  let differing = 0
  for (let i = 0; i < a.length; i += 4) {
    const d = Math.max(Math.abs(a[i]! - b[i]!), Math.abs(a[i + 1]! - b[i + 1]!), Math.abs(a[i + 2]! - b[i + 2]!))
    if (d > channelTolerance) differing++
  }
  return differing / (a.length / 4)
}

const test = suite('examples/vite-browser')

test('the committed reference image is the independent computation', () => {
  const ref = PNG.sync.read(readFileSync(referencePng))
  assert.is(ref.width, size)
  assert.is(differingFraction(new Uint8Array(ref.data), mandelbrotRgba()), 0)
})

test('built and served with its README commands, the page computes the Mandelbrot set in Chromium and draws it', async () => {
  checkBuilt()
  const chromiumPath = tool('chromium')
  assert.is(readmeCommand('vite-browser'), 'pnpm build && pnpm start')
  const build = await runShell('pnpm build', dir)
  assert.is(build.code, 0, `pnpm build failed:\n${build.stdout}\n${build.stderr}`)
  assert.ok(readdirSync(join(dir, 'dist', 'assets')).some((f) => /^mandelbrot-.+\.offload$/.test(f)), 'the offload binary is a page asset')
  const bundle = readdirSync(join(dir, 'dist', 'assets')).filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(dir, 'dist', 'assets', f), 'utf8')).join('\n')
  assert.not.match(bundle, /\bkoffi\b|node:fs/, 'no Node-only code in the page')
  assert.ok(readdirSync(join(dir, 'dist', 'assets')).some((f) => /^web-worker-.+\.js$/.test(f)), 'Vite bundled the emulator\'s worker script')

  const port = await freePort()
  const server = spawn('sh', ['-c', `exec pnpm start --port ${port} --strictPort`], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '', FORCE_COLOR: '0', KERNELPACK_CACHE_DIR: examplesCacheDir },
  })
  let log = ''
  server.stdout.on('data', (d) => (log += d))
  server.stderr.on('data', (d) => (log += d))
  const userDataDir = mkdtempSync(join(tmpdir(), 'kp-examples-chromium-'))
  const { chromium } = await import('playwright-core')
  let context: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined
  try {
    const url = `http://127.0.0.1:${port}/`
    await waitForHttp(url, server, () => log)
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: chromiumPath,
      headless: true,
      deviceScaleFactor: 1,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    })
    const page = context.pages()[0] ?? (await context.newPage())
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(url)
    await page.waitForFunction(() => document.getElementById('result')?.dataset.status, null, { timeout: 60_000 })
    const text = await page.textContent('#result')
    const ref = PNG.sync.read(readFileSync(referencePng))
    let insideCount = 0
    for (let i = 0; i < ref.data.length; i += 4) if (ref.data[i] === 0 && ref.data[i + 1] === 0 && ref.data[i + 2] === 0) insideCount++
    assert.is(text, `mandelbrot: 256x256 pixels OK on emulator, ${insideCount} inside the set`, errors.join('\n'))
    assert.match(await page.textContent('#backend') ?? '', /; launches run on \d+ worker threads? \(Web Workers\) sharing device memory$/)
    const shot = PNG.sync.read(await page.locator('#canvas').screenshot())
    assert.is(shot.width, size)
    assert.is(shot.height, size)
    const fraction = differingFraction(new Uint8Array(shot.data), new Uint8Array(ref.data))
    assert.ok(fraction <= maxDiffering, `${(fraction * 100).toFixed(2)}% of the canvas pixels differ from ${referencePng}`)
  } finally {
    await context?.close()
    try { process.kill(-server.pid!, 'SIGTERM') } catch { /* already gone */ }
    rmSync(userDataDir, { recursive: true, force: true })
  }
})

test.run()
