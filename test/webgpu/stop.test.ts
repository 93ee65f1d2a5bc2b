// Stopping WebGPU launches (issue 25, the adversarial pass's item 2), through the runtime on Dawn in Node over
// SwiftShader: a launch with a signal or timeoutMs runs its grid in slices and looks at both between them; one
// still running at the deadline ends with the device destroyed on purpose, and the next loadModule gets a new
// device. test/fixtures/webgpu/stop.cu has the kernels.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule } from '../../packages/runtime/src/index.js'
import { repoRoot } from '../helpers/tools.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { runUnderDawn } from '../helpers/webgpu.js'

// Dawn finds Vulkan at create(): re-run this file under chromium's loader + SwiftShader ICD first.
runUnderDawn(import.meta.filename)

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'stop.cu'), config })
const manifest = await readPtxManifest(ptx, { demangle: false })
const load = () => loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'webgpu' })
/** spin's rounds: about 3.7 s for its 16 × 256 threads on SwiftShader alone on a 2-core machine, far past the
 *  400 ms timeout below and its 1 s of grace (600 000 rounds took 0.75-1.25 s there: under the suite's load
 *  the slice once ended within the grace, a launch "stopped between slices after 16 of 16 blocks"). */
const SPIN_ROUNDS = 2_400_000

async function caught(f: () => Promise<unknown>): Promise<Error> {
  try { await f() } catch (e) { return e as Error }
  throw new Error('expected an error')
}

/** Which of the first `n` marks are set: every block below `ran` wrote b + 1, none at or past it. */
function checkMarks(got: Uint32Array, ran: number): void {
  for (let b = 0; b < got.length; b++) {
    const want = b < ran ? b + 1 : 0
    if (got[b] !== want) assert.unreachable(`block ${b}: mark ${got[b]}, expected ${want} (${ran} blocks ran)`)
  }
}

const Stop = suite('stopping a WebGPU launch (Dawn, SwiftShader)')

Stop('a launch with a timeout runs its grid in slices and, not stopped, finishes every block (2-D grid)', async () => {
  const mod = await load()
  const n = 3000 * 3
  const out = await mod.upload(new Uint32Array(n))
  await mod.kernel('mark').launch({ grid: [3000, 3, 1], block: 32, timeoutMs: 120_000 }, out, n)
  checkMarks(await out.download(new Uint32Array(n)), n)
  await mod.unload()
})

Stop('a signal aborted during a long grid stops it between two slices: AbortError, the blocks that ran are done, the device and its memory are kept', async () => {
  const mod = await load()
  const n = 1 << 21
  const out = await mod.upload(new Uint32Array(n))
  const ac = new AbortController()
  const reason = new Error('user pressed stop')
  setTimeout(() => ac.abort(reason), 300)
  const t0 = performance.now()
  const err = await caught(() => mod.kernel('mark').launch({ grid: 2 ** 31 - 1, block: 32, signal: ac.signal }, out, n))
  const ms = performance.now() - t0
  assert.is(err.name, 'AbortError')
  assert.is(err.cause, reason)
  const m = /^launch of mark aborted: the signal was aborted; stopped between slices of the grid after (\d+) of 2147483647 blocks; the device and its memory are kept$/.exec(err.message)
  assert.ok(m, err.message)
  const ran = Number(m![1])
  assert.ok(ran > 0 && ran < n, `${ran} blocks ran`)
  assert.ok(ms < 10_000, `stopped after ${ms.toFixed(0)} ms`)
  checkMarks(await out.download(new Uint32Array(n)), ran)
  // the module goes on: the whole grid of n blocks now
  await mod.kernel('mark').launch({ grid: n, block: 32 }, out, n)
  checkMarks(await out.download(new Uint32Array(n)), n)
  await mod.unload()
})

Stop('a launch still running at its timeoutMs ends with the device destroyed: AbortError saying the memory is gone, later calls fail naming why, loading again gives a new device', async () => {
  const mod = await load()
  const threads = 16 * 256
  const out = await mod.alloc(threads * 4)
  const t0 = performance.now()
  const err = await caught(() => mod.kernel('spin').launch({ grid: 16, block: 256, timeoutMs: 400 }, out, SPIN_ROUNDS))
  const ms = performance.now() - t0
  assert.is(err.name, 'AbortError')
  assert.is((err.cause as Error).name, 'TimeoutError')
  assert.is(err.message, 'launch of spin aborted: it ran longer than timeoutMs (400 ms); WebGPU cannot stop a running dispatch, so the device was destroyed: the device memory of every module on it is gone; load the module again (a new device)')
  assert.ok(ms < 5_000, `rejected after ${ms.toFixed(0)} ms`)
  const later = await caught(() => out.download(new Uint32Array(threads)))
  assert.is(later.name, 'WebGpuError')
  assert.match(later.message, /the WebGPU device is gone: kernel spin was stopped while it ran \(past timeoutMs, 400 ms\) by destroying the device/)
  const again = await load()
  assert.is(again.backend.name, 'webgpu')
  const n = 4096
  const marks = await again.upload(new Uint32Array(n))
  await again.kernel('mark').launch({ grid: n, block: 32 }, marks, n)
  checkMarks(await marks.download(new Uint32Array(n)), n)
  // and spin itself runs to the end when it has the time (few rounds)
  await again.kernel('spin').launch({ grid: 16, block: 256, timeoutMs: 60_000 }, marks, 3)
  const got = await marks.download(new Uint32Array(threads))
  const lcg = (x: number) => (Math.imul(x, 1664525) + 1013904223) >>> 0
  for (let i = 0; i < threads; i++) if (got[i] !== lcg(lcg(lcg(i)))) assert.unreachable(`spin thread ${i}: ${got[i]}`)
  await again.unload()
})

Stop.run()
