// Issue 24 item 5: a browser's main thread refuses to compile a large WebAssembly module synchronously
// (chromium 156: `RangeError: WebAssembly.Compile is disallowed on the main thread, if the buffer size is
// larger than 8MB`). The emulator's modules stay far below that today (test/runtime/browser.test.ts runs them
// in chromium on the wasm tier), so here Node stands in for such a thread: `new WebAssembly.Module` is
// replaced, while a module loads, by one that throws chromium's RangeError for anything over 4 KiB (the limit
// chromium had before it was raised to 8 MB). The emulator then compiles with WebAssembly.compile: kernels
// launched before that is done run on the JavaScript tier, and once it is, the next launch binds the wasm
// kernels (on the calling thread, and in workers, which load the module again with them). Every case of the
// own corpus (nvcc compute_80) runs before and after, against its TypeScript reference.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, type EmulatorModule } from '@kernelpack/emulator'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { ownCases, ownSource } from '../fixtures/emulator/cases-own.js'

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const ptx = await compilePtx({ source: ownSource, config })
const tierOf = (m: EmulatorModule, kernel: string) => m.inspect(kernel).split('\n').pop()!.trim()

/** Loads the own corpus on a backend of `workers` workers while `new WebAssembly.Module` refuses modules over
 *  4 KiB as chromium's main thread refuses large ones; counts the instances made of modules that
 *  WebAssembly.compile gave. */
async function loadRefusingSyncCompile(workers: number) {
  const { Module, Instance, compile } = WebAssembly
  const compiled = new Set<WebAssembly.Module>()
  let asyncInstances = 0
  const W = WebAssembly as { Module: unknown; Instance: unknown; compile: unknown }
  W.Module = function (bytes: Uint8Array<ArrayBuffer>) {
    if (bytes.length > 4096) throw new RangeError('WebAssembly.Compile is disallowed on the main thread, if the buffer size is larger than 4KB. Use WebAssembly.compile, or compile on a worker thread.')
    return new Module(bytes)
  }
  W.compile = async (bytes: Uint8Array<ArrayBuffer>) => { const m = await compile(bytes); compiled.add(m); return m }
  W.Instance = function (m: WebAssembly.Module, imports: WebAssembly.Imports) { if (compiled.has(m)) asyncInstances++; return new Instance(m, imports) }
  const printed: string[] = []
  const be = createEmulatorBackend({ workers, print: (t) => printed.push(t) })
  try {
    const k = await KernelRunner.load(be, ptx, config.target, `corpus-own.cu (${workers} workers, async compile)`, printed)
    return { be, k, mod: k.module as EmulatorModule, compiled, instances: () => asyncInstances, restore: () => { W.Module = Module; W.Instance = Instance; W.compile = compile } }
  } catch (e) {
    W.Module = Module; W.Instance = Instance; W.compile = compile
    be.dispose()
    throw e
  }
}

const test = suite('WebAssembly.compile where a synchronous compile is refused')

for (const workers of [0, 2]) {
  test(`${workers} workers: the JavaScript tier until WebAssembly.compile is done, then the wasm tier; the own corpus right on both`, async () => {
    // the tiers a module gets where synchronous compiles are allowed (Node)
    const plain = createEmulatorBackend({ workers: 0 })
    const plainMod = plain.loadModule({ kind: 'ptx', arch: config.target, bytes: new TextEncoder().encode(ptx) })
    const kernels = [...new KernelRunner(plain, plainMod, ptx, 'plain').entries.keys()]
    const expected = Object.fromEntries(kernels.map((e) => [e, tierOf(plainMod, e)]))
    plain.dispose()
    const lowered = kernels.filter((e) => expected[e] === 'tier: WebAssembly')
    assert.ok(lowered.length >= 10, `${lowered.length} kernels of the own corpus lower to WebAssembly`)

    const r = await loadRefusingSyncCompile(workers)
    try {
      // right after loading: the compile is under way, every kernel on the JavaScript tier
      for (const e of lowered) assert.match(tierOf(r.mod, e), /^tier: JavaScript \(not WebAssembly: the WebAssembly module \(\d+ bytes\) is being compiled asynchronously, as this thread refuses to compile it synchronously \(WebAssembly\.Compile is disallowed on the main thread/)
      // a launch now runs (on the JavaScript tier) and is right
      await ownCases[0]!.run(r.k)
      assert.is(r.instances(), 0)
      // the compile finishes
      const t0 = Date.now()
      while (r.compiled.size === 0 || tierOf(r.mod, lowered[0]!) !== 'tier: WebAssembly') {
        assert.ok(Date.now() - t0 < 20_000, 'WebAssembly.compile did not finish in 20 s')
        await new Promise((ok) => setTimeout(ok, 10))
      }
      assert.equal(Object.fromEntries(kernels.map((e) => [e, tierOf(r.mod, e)])), expected)
      for (const c of ownCases) {
        r.k.printed.length = 0
        try {
          await c.run(r.k)
        } catch (e) {
          throw new Error(`${c.file}: ${c.name}: ${(e as Error).message}`)
        }
      }
      // on the calling thread, its instance is made of the asynchronously compiled module (workers make theirs)
      if (workers === 0) assert.is(r.instances(), 1)
      else assert.is(r.be.describeExecution(), 'launches run on 2 worker threads (worker_threads) sharing device memory')
    } finally {
      r.restore()
      r.be.dispose()
    }
  })
}

test.run()
