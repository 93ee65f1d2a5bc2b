// examples/vite-browser built and served with its README commands (`pnpm build`, then `pnpm start`, i.e.
// vite preview, on a free port), opened in headless Chromium: the page runs the kernel on the emulator, and
// a screenshot of its canvas matches the reference image computed without the kernel. The page is served
// cross-origin isolated, so the emulator runs the blocks on Web Workers: Vite found and bundled the worker
// script from @kernelpack/emulator's `new Worker(new URL('./web-worker.js', import.meta.url))` (issue 13).
// Then the page's backend switch (issue 15) in chromium with a SwiftShader WebGPU adapter: `auto` and
// `?backend=webgpu` run the kernel on WebGPU, `?backend=emulator` on the emulator, and all three draw exactly
// the reference pixels. Exactly, with no tolerance: mandelbrot.cu computes in 20.12 fixed point with int32
// arithmetic, which WGSL's i32 wraps and shifts as PTX does, so every iteration count is the same integer.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import type { Page } from 'playwright-core'
import { tool } from '../helpers/tools.js'
import { launchChromium } from '../helpers/webgpu.js'
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

/** What the page shows after a run, and the SHA-256 of its canvas pixels (RGBA, read back exactly). */
async function readRun(page: Page): Promise<{ status: string; result: string; backend: string; pixels: string }> {
  await page.waitForFunction(() => document.getElementById('result')?.dataset.status, null, { timeout: 60_000 })
  return page.evaluate(async () => {
    const canvas = document.getElementById('canvas') as HTMLCanvasElement
    const rgba = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', rgba))
    return {
      status: document.getElementById('result')!.dataset.status!,
      result: document.getElementById('result')!.textContent ?? '',
      backend: document.getElementById('backend')!.textContent ?? '',
      pixels: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join(''),
    }
  })
}

const test = suite('examples/vite-browser')
/** The preview server the first page test starts; the switch test uses it too. */
let served: { url: string; stop(): void } | undefined
test.after(() => served?.stop())

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
  served = { url: `http://127.0.0.1:${port}/`, stop: () => { try { process.kill(-server.pid!, 'SIGTERM') } catch { /* already gone */ } } }
  const userDataDir = mkdtempSync(join(tmpdir(), 'kp-examples-chromium-'))
  const { chromium } = await import('playwright-core')
  let context: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined
  try {
    const url = served.url
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
    // no WebGPU in this chromium (--disable-gpu, no --enable-unsafe-webgpu): auto says so and runs the emulator
    assert.match(await page.textContent('#backend') ?? '', /^emulator: auto: browsers have no CUDA driver, and WebGPU (is not available|answered no adapter).*; launches run on \d+ worker threads? \(Web Workers\) sharing device memory$/)
    const shot = PNG.sync.read(await page.locator('#canvas').screenshot())
    assert.is(shot.width, size)
    assert.is(shot.height, size)
    const fraction = differingFraction(new Uint8Array(shot.data), new Uint8Array(ref.data))
    assert.ok(fraction <= maxDiffering, `${(fraction * 100).toFixed(2)}% of the canvas pixels differ from ${referencePng}`)
  } finally {
    await context?.close()
    rmSync(userDataDir, { recursive: true, force: true })
  }
})

test('the backend switch with a WebGPU adapter: webgpu runs on WebGPU, auto (SwiftShader is a CPU adapter) and emulator on the emulator, the same pixels', async () => {
  assert.ok(served, 'the preview server of the previous test runs')
  const ref = mandelbrotRgba()
  const want = createHash('sha256').update(ref).digest('hex')
  // inside the set is black (0 iterations is blue: [0, 0, 204])
  const inside = ref.filter((v, i) => i % 4 === 0 && v === 0 && ref[i + 2] === 0).length
  const browser = await launchChromium({ webgpu: true })
  try {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(served.url)
    const auto = await readRun(page)
    // the switch: choosing in the select reloads the page with ?backend=<choice>
    const chosen: Record<string, Awaited<ReturnType<typeof readRun>>> = {}
    for (const backend of ['webgpu', 'emulator']) {
      await Promise.all([page.waitForURL(`${served.url}?backend=${backend}`), page.selectOption('#backend-select', backend)])
      chosen[backend] = await readRun(page)
      assert.is(await page.inputValue('#backend-select'), backend, 'the select shows the backend that ran')
    }
    assert.equal(errors, [])
    // SwiftShader is a fallback (CPU) adapter: auto leaves it for the emulator and says so; asked, WebGPU runs on it
    assert.match(auto.backend, /^emulator: auto: browsers have no CUDA driver, and WebGPU's only adapter, google swiftshader.*, is a fallback \(CPU\) adapter \(webgpu\.allowFallbackAdapter takes it\), so the PTX emulator runs; launches run on \d+ worker threads? \(Web Workers\)/, JSON.stringify(auto))
    assert.equal({ ...auto, backend: undefined }, { status: 'ok', result: `mandelbrot: 256x256 pixels OK on emulator, ${inside} inside the set`, backend: undefined, pixels: want })
    assert.equal(chosen.webgpu, { status: 'ok', result: `mandelbrot: 256x256 pixels OK on webgpu, ${inside} inside the set`, backend: "webgpu: backend 'webgpu' was requested", pixels: want })
    assert.is(chosen.emulator!.result, `mandelbrot: 256x256 pixels OK on emulator, ${inside} inside the set`)
    assert.match(chosen.emulator!.backend, /^emulator: backend 'emulator' was requested; launches run on \d+ worker threads? \(Web Workers\)/)
    assert.is(chosen.emulator!.pixels, want, 'the emulator draws the same pixels as WebGPU')
  } finally {
    await browser.close()
  }
})

test.run()
