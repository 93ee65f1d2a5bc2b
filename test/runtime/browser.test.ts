// The browser entry in a real browser: esbuild bundles packages/runtime/src/browser.ts for platform "browser",
// a page served from 127.0.0.1 fetches an offload binary (llvm-offload-binary output with cubins and PTX of
// extern_c.cu) by URL, loadModule picks the PTX for the emulator, saxpy runs in headless chromium, and the
// result read back from the page is compared with the same computation in JS (float32 rounding). Then pages
// whose Content-Security-Policy refuses `new Function`: the interpreter runs the kernels, beside the emulator's
// WebAssembly tier where the policy has 'wasm-unsafe-eval' (issue 24 item 5), and mod.backend.reason says which.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { fixturesDir, referencePtxDir, repoRoot } from '../helpers/tools.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { bundleForBrowser, inlineJson, modulePage, runPage } from '../helpers/webgpu.js'

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
  // the policy refuses WebAssembly too (no 'wasm-unsafe-eval'), and the reason says so after the interpreter's
  assert.match(res.reason, /^backend 'emulator' was requested; launches run on the calling thread: kernels run through the emulator's interpreter \(same results, slower\) because this context refuses to compile generated code \([^()]*unsafe-eval[^()]*\); no kernel runs on the emulator's WebAssembly tier: this context refuses WebAssembly too \(CompileError: .*unsafe-eval.*\); 'wasm-unsafe-eval' in the Content-Security-Policy allows it$/, res.reason)
  assert.equal(res.out, expectedSaxpy(n))
})

// Issue 24 item 5: where the CSP refuses `new Function` but allows WebAssembly ('wasm-unsafe-eval'), kernels
// with a WebAssembly lowering run on the emulator's wasm tier and only the others through the interpreter;
// without 'wasm-unsafe-eval' every kernel runs through the interpreter. The page runs saxpy (lowers) and
// claim_slots (does not) through the runtime, for their results and mod.backend.reason, and loads the same
// PTX on the emulator as the runtime creates it there (the interpreter as `evaluate`), for inspect()'s tier
// line of each kernel. Which kernel lowers is checked in Node first, so the page's tiers mean something.
const tierPtx = await compilePtx({ source: join(fixturesDir, 'runtime', 'wasm-tiers.cu'), config: corpusConfigs.find((c) => c.label === 'nvcc compute_80')! })
const tierOf = (inspect: string) => inspect.split('\n').pop()!.trim()
const wasmLine = 'tier: WebAssembly'
const notWasm = /^tier: JavaScript \(not WebAssembly: /

async function runCspTiers(csp: string) {
  const [runtime, emulator] = await Promise.all([
    bundleForBrowser(join(repoRoot, 'packages', 'runtime', 'src', 'browser.ts')),
    bundleForBrowser(join(repoRoot, 'packages', 'emulator', 'src', 'index.ts')),
  ])
  const manifest = await readPtxManifest(tierPtx, { demangle: false })
  const n = 300, slots = 200, claimers = 150
  const script = `import { loadModule } from './runtime.js'
import { createEmulatorBackend, loadInterpreter } from './emulator.js'
const ptx = new TextEncoder().encode(${inlineJson(tierPtx)})
let compiles, wasm
try { new Function('return 1'); compiles = 'yes' } catch (e) { compiles = e.name + ': ' + e.message }
try { new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); wasm = 'yes' } catch (e) { wasm = e.name + ': ' + e.message }
try {
  const mod = await loadModule(ptx, ${inlineJson(manifest)}, { backend: 'emulator' })
  ${saxpy(n, 128)}
  const owner = await mod.upload(new Int32Array(${slots}).fill(-1))
  await mod.kernel('claim_slots').launch({ grid: Math.ceil(${claimers} / 64), block: 64 }, owner, ${slots}, ${claimers})
  const owners = await owner.download(new Int32Array(${slots}))
  const em = createEmulatorBackend({ workers: 0, evaluate: await loadInterpreter() }).loadModule({ kind: 'ptx', arch: 'compute_80', bytes: ptx })
  const tiers = { saxpy: em.inspect('saxpy'), claim_slots: em.inspect('claim_slots') }
  window.__kpResult = { compiles, wasm, backend: mod.backend.name, reason: mod.backend.reason, out: Array.from(out), owners: Array.from(owners), tiers }
} catch (e) { window.__kpResult = { compiles, wasm, error: String(e && e.stack || e) } }
`
  const res = await runPage<{ compiles: string; wasm: string; backend: string; reason: string; out: number[]; owners: number[]; tiers: Record<string, string> }>({
    '/': ['text/html', modulePage], '/page.js': ['text/javascript', script],
    '/runtime.js': ['text/javascript', runtime], '/emulator.js': ['text/javascript', emulator],
  }, { csp })
  assert.match(res.compiles, /^EvalError: .*unsafe-eval/)
  assert.is(res.backend, 'emulator')
  assert.equal(res.out, expectedSaxpy(n))
  // each of the 150 threads claimed exactly one of the 200 slots
  assert.equal([...res.owners].sort((a, b) => a - b), [...new Array(slots - claimers).fill(-1), ...Array.from({ length: claimers }, (_, i) => i)])
  return res
}

Browser("under CSP script-src 'self' 'wasm-unsafe-eval' kernels with a WebAssembly lowering run on the wasm tier, the others through the interpreter", async () => {
  // in Node (new Function allowed) saxpy lowers and claim_slots does not: the fixture still splits the tiers
  const node = createEmulatorBackend({ workers: 0 })
  const m = node.loadModule({ kind: 'ptx', arch: 'compute_80', bytes: new TextEncoder().encode(tierPtx) })
  assert.is(tierOf(m.inspect('saxpy')), wasmLine)
  assert.match(tierOf(m.inspect('claim_slots')), notWasm, 'wasm-tiers.cu: claim_slots lowers to WebAssembly now; give the fixture a kernel that does not')
  node.dispose()

  const res = await runCspTiers("script-src 'self' 'wasm-unsafe-eval'")
  assert.is(res.wasm, 'yes')
  assert.is(tierOf(res.tiers.saxpy!), wasmLine, res.tiers.saxpy)
  assert.match(tierOf(res.tiers.claim_slots!), notWasm, res.tiers.claim_slots)
  assert.match(res.reason, /^backend 'emulator' was requested; launches run on the calling thread: kernels run through the emulator's interpreter \(same results, slower\) because this context refuses to compile generated code \([^()]*unsafe-eval[^()]*\); kernels with a WebAssembly lowering run on the emulator's WebAssembly tier instead, which this context compiles$/, res.reason)
})

Browser("under CSP script-src 'self' (no 'wasm-unsafe-eval') WebAssembly is refused too: every kernel runs through the interpreter, and the reason says why", async () => {
  const res = await runCspTiers("script-src 'self'")
  // (chromium's message names 'unsafe-eval' only)
  assert.match(res.wasm, /^CompileError: .*unsafe-eval/)
  for (const k of ['saxpy', 'claim_slots']) assert.match(tierOf(res.tiers[k]!), notWasm, res.tiers[k])
  // saxpy lowers: what kept it off the wasm tier is the refused compile
  assert.match(tierOf(res.tiers.saxpy!), /^tier: JavaScript \(not WebAssembly: the WebAssembly module could not be compiled here \(.*'unsafe-eval'.*\)\)$/, res.tiers.saxpy)
  assert.match(res.reason, /; no kernel runs on the emulator's WebAssembly tier: this context refuses WebAssembly too \(CompileError: .*unsafe-eval.*\); 'wasm-unsafe-eval' in the Content-Security-Policy allows it$/, res.reason)
})

Browser.run()
