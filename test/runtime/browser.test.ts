// The browser entry in a real browser: esbuild bundles packages/runtime/src/browser.ts for platform "browser",
// a page served from 127.0.0.1 fetches an offload binary (llvm-offload-binary output with cubins and PTX of
// extern_c.cu) by URL, loadModule picks the PTX for the emulator, saxpy runs in headless chromium, and the
// result read back from the page is compared with the same computation in JS (float32 rounding).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { build } from 'esbuild'
import { createServer } from 'node:http'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import { readPtxManifest } from '@kernelpack/toolchain'
import { referenceDir, repoRoot, tempDir, tool } from '../helpers/tools.js'

const Browser = suite('browser entry in chromium')

Browser('loadModule(URL) fetches the offload binary, runs saxpy on the emulator and reports why', async () => {
  const out = tempDir('kp-runtime-browser-')
  const r = await build({
    entryPoints: [join(repoRoot, 'packages', 'runtime', 'src', 'browser.ts')], outfile: join(out, 'runtime.js'),
    bundle: true, platform: 'browser', format: 'esm', target: 'es2022', conditions: ['source', 'browser'], logLevel: 'silent',
  })
  assert.is(r.errors.length, 0)
  const manifest = await readPtxManifest(readFileSync(join(referenceDir, 'nvcc', 'extern_c.sm_90.ptx'), 'utf8'), { demangle: false })
  const n = 1000
  const page = `<!doctype html><meta charset="utf-8"><script type="module">
import { loadModule } from './runtime.js'
const manifest = ${JSON.stringify(manifest).replace(/</g, '\\u003c')}
try {
  const mod = await loadModule(new URL('./k.offload', location.href), manifest)
  const n = ${n}
  const x = Float32Array.from({ length: n }, (_, i) => i * 0.25)
  const y = Float32Array.from({ length: n }, (_, i) => 7 - i)
  const [dx, dy] = await Promise.all([mod.upload(x), mod.upload(y)])
  await mod.kernel('saxpy').launch({ grid: Math.ceil(n / 256), block: 256 }, n, 2.5, dx, dy)
  const out = await dy.download(new Float32Array(n))
  window.__result = { backend: mod.backend.name, reason: mod.backend.reason, image: mod.image, out: Array.from(out) }
} catch (e) { window.__result = { error: String(e && e.stack || e) } }
</script>`
  const files: Record<string, [string, Buffer | string]> = {
    '/': ['text/html', page],
    '/runtime.js': ['text/javascript', readFileSync(join(out, 'runtime.js'))],
    '/k.offload': ['application/octet-stream', readFileSync(join(referenceDir, 'offload', 'b_cubin_ptx_2arch.bin'))],
  }
  const server = createServer((req, res) => {
    const f = files[(req.url ?? '/').split('?')[0]!]
    if (!f) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': f[0] }).end(f[1])
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const browser = await chromium.launch({
    executablePath: tool('chromium'), headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  try {
    const p = await browser.newPage()
    await p.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
    await p.waitForFunction(() => (window as unknown as { __result?: unknown }).__result !== undefined, undefined, { timeout: 60_000 })
    const res = await p.evaluate(() => (window as unknown as { __result: { error?: string; backend: string; reason: string; image: { kind: string }; out: number[] } }).__result)
    assert.is(res.error, undefined, res.error)
    assert.is(res.backend, 'emulator')
    assert.is(res.reason, 'auto: browsers have no CUDA driver, and WebGPU answered no adapter (requestAdapter() gave null), so the PTX emulator runs')
    assert.is(res.image.kind, 'ptx')
    const f = Math.fround
    assert.equal(res.out, Array.from({ length: n }, (_, i) => f(f(2.5 * f(i * 0.25)) + (7 - i))))
  } finally {
    await browser.close()
    server.close()
  }
})

Browser.run()
