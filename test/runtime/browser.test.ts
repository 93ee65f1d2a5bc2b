// The browser entry in a real browser: esbuild bundles packages/runtime/src/browser.ts for platform "browser",
// a page served from 127.0.0.1 fetches an offload binary (llvm-offload-binary output with cubins and PTX of
// extern_c.cu) by URL, loadModule picks the PTX for the emulator, saxpy runs in headless chromium, and the
// result read back from the page is compared with the same computation in JS (float32 rounding).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { fixturesDir, referencePtxDir, repoRoot } from '../helpers/tools.js'
import { bundleForBrowser, inlineJson, runPage } from '../helpers/webgpu.js'

const Browser = suite('browser entry in chromium')

/** Page code that runs saxpy (y = 2.5·x + y over n elements) on `mod` in blocks of `block` threads and leaves
 *  y in `out`; `expectedSaxpy(n)` is what it must give. */
const saxpy = (n: number, block: number) => `const x = Float32Array.from({ length: ${n} }, (_, i) => i * 0.25)
  const y = Float32Array.from({ length: ${n} }, (_, i) => 7 - i)
  const [dx, dy] = await Promise.all([mod.upload(x), mod.upload(y)])
  await mod.kernel('saxpy').launch({ grid: Math.ceil(${n} / ${block}), block: ${block} }, ${n}, 2.5, dx, dy)
  const out = await dy.download(new Float32Array(${n}))`
const expectedSaxpy = (n: number) => Array.from({ length: n }, (_, i) => Math.fround(Math.fround(2.5 * Math.fround(i * 0.25)) + (7 - i)))

Browser('loadModule(URL) fetches the offload binary, runs saxpy on the emulator and reports why', async () => {
  const runtime = await bundleForBrowser(join(repoRoot, 'packages', 'runtime', 'src', 'browser.ts'))
  const manifest = await readPtxManifest(readFileSync(join(referencePtxDir, 'extern_c.sm_90.ptx'), 'utf8'), { demangle: false })
  const n = 1000
  const page = `<!doctype html><meta charset="utf-8"><script type="module">
import { loadModule } from './runtime.js'
const manifest = ${inlineJson(manifest)}
try {
  const mod = await loadModule(new URL('./k.offload', location.href), manifest)
  ${saxpy(n, 256)}
  window.__kpResult = { backend: mod.backend.name, reason: mod.backend.reason, image: mod.image, out: Array.from(out) }
} catch (e) { window.__kpResult = { error: String(e && e.stack || e) } }
</script>`
  const res = await runPage<{ backend: string; reason: string; image: { kind: string }; out: number[] }>({
    '/': ['text/html', page],
    '/runtime.js': ['text/javascript', runtime],
    '/k.offload': ['application/octet-stream', readFileSync(join(fixturesDir, 'offload', 'b_cubin_ptx_2arch.bin'))],
  })
  assert.is(res.backend, 'emulator')
  // the page is not cross-origin isolated: no SharedArrayBuffer, so the emulator's launches run on the page's thread, and it says so
  assert.is(res.reason, 'auto: browsers have no CUDA driver, and WebGPU answered no adapter (requestAdapter() gave null), so the PTX emulator runs; ' +
    'launches run on the calling thread: the page is not cross-origin isolated, so it has no SharedArrayBuffer (serve it with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)')
  assert.is(res.image.kind, 'ptx')
  assert.equal(res.out, expectedSaxpy(n))
})

Browser("under Content-Security-Policy script-src 'self' (no eval) the kernels run through the emulator's interpreter", async () => {
  // issue 14 item 3: the page's CSP refuses `new Function`; the emulator runs the same generated code on its
  // interpreter, and mod.backend.reason says so. The page has no inline script (the CSP forbids it too).
  const runtime = await bundleForBrowser(join(repoRoot, 'packages', 'runtime', 'src', 'browser.ts'))
  const manifest = await readPtxManifest(readFileSync(join(referencePtxDir, 'extern_c.sm_90.ptx'), 'utf8'), { demangle: false })
  const n = 300
  const script = `import { loadModule } from './runtime.js'
let compiles
try { new Function('return 1'); compiles = 'yes' } catch (e) { compiles = e.name + ': ' + e.message }
try {
  const mod = await loadModule(new URL('./k.offload', location.href), ${inlineJson(manifest)}, { backend: 'emulator' })
  ${saxpy(n, 128)}
  window.__kpResult = { compiles, backend: mod.backend.name, reason: mod.backend.reason, out: Array.from(out) }
} catch (e) { window.__kpResult = { compiles, error: String(e && e.stack || e) } }
`
  const res = await runPage<{ compiles: string; backend: string; reason: string; out: number[] }>({
    '/': ['text/html', '<!doctype html><meta charset="utf-8"><script type="module" src="./page.js"></script>'],
    '/page.js': ['text/javascript', script],
    '/runtime.js': ['text/javascript', runtime],
    '/k.offload': ['application/octet-stream', readFileSync(join(fixturesDir, 'offload', 'b_cubin_ptx_2arch.bin'))],
  }, { csp: "script-src 'self'" })
  // the policy is in force: the page itself cannot compile a string
  assert.match(res.compiles, /^EvalError: .*unsafe-eval/)
  assert.is(res.backend, 'emulator')
  assert.match(res.reason, /^backend 'emulator' was requested; launches run on the calling thread: kernels run through the emulator's interpreter \(same results, slower\) because this context refuses to compile generated code \(.*unsafe-eval.*\)$/, res.reason)
  assert.equal(res.out, expectedSaxpy(n))
})

Browser.run()
