// Launches on worker threads (issue 13 item 3) and runaway launches (issue 17 item 4), on the kernels of
// test/fixtures/emulator/workers.cu (nvcc PTX for compute_80):
// - the issue's repros through the public runtime API: `while (flag[0] == 0) {}` leaves timers firing and an
//   AbortSignal (or timeoutMs, per module and per launch) rejects the launch with an AbortError naming the
//   kernel, after which the module still runs kernels; a grid of 2^31−1 trivial blocks is abortable, on
//   workers and on the calling thread (which yields between slices of blocks);
// - race-free kernels give byte-identical memory for 0 (the calling thread) to 4 workers, in thread loops and
//   in the continuation scheme (a property over random sizes, grids and inputs); atomics under heavy contention stay exact across workers (32-bit
//   histogram; 64-bit add/max/min/CAS loop; f32 and f64 add; unsigned max);
// - device printf arrives in block order, the first fault names the kernel, the PTX line and the address;
// - where the worker script cannot start, launches run on the calling thread and the reason says why.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { join } from 'node:path'
import { createEmulatorBackend, EmulatorFault, type EmulatorBackend, type EmulatorModule } from '@kernelpack/emulator'
import { loadModule, type Module } from '@kernelpack/runtime'
import { readPtxManifest } from '@kernelpack/toolchain'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { createRng, KernelRunner, type DeviceBuffer, type KernelArg } from '../helpers/kernel-runner.js'
import { repoRoot } from '../helpers/tools.js'

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'emulator', 'workers.cu'), config })
const ptxBytes = new TextEncoder().encode(ptx)
const manifest = await readPtxManifest(ptx)

/** A backend with `workers` workers and the module loaded on it (`threadLoops: false`: the continuation
 *  scheme for kernels with barriers and collectives). */
async function runner(workers: number, printed: string[] = [], threadLoops = true): Promise<KernelRunner & { be: EmulatorBackend }> {
  const be = createEmulatorBackend({ workers, print: (t) => printed.push(t), threadLoops })
  return Object.assign(await KernelRunner.load(be, ptx, config.target, `workers.cu (${workers} workers)`, printed), { be })
}

/** Resolves on the next timer tick: proves the event loop is not blocked. */
const tick = () => new Promise<number>((r) => setTimeout(() => r(Date.now()), 5))

async function expectAbort(p: Promise<unknown>, kernel: RegExp, why: RegExp): Promise<Error> {
  try {
    await p
  } catch (e) {
    const err = e as Error
    assert.is(err.name, 'AbortError', err.message)
    assert.match(err.message, kernel)
    assert.match(err.message, why)
    return err
  }
  throw new Error('the launch was expected to be aborted, but it finished')
}

// --- issue 17 item 4: the repros through the runtime API ---

const Runaway = suite<{ mods: Module[] }>('runaway launches (issue 17 item 4)', { mods: [] })

Runaway.after(async (ctx) => { for (const m of ctx.mods) await m.unload() })

for (const workers of [2, 1]) {
  Runaway(`while (flag[0] == 0) {} on ${workers} worker(s): timers fire, the AbortSignal rejects the launch with an AbortError naming the kernel, the module stays usable`, async (ctx) => {
    const mod = await loadModule(ptxBytes, manifest, { backend: 'emulator', workers })
    ctx.mods.push(mod)
    assert.match(mod.backend.reason, new RegExp(`launches run on ${workers} worker threads? \\(worker_threads\\)`))
    const flag = await mod.upload(new Int32Array([0]))
    const ac = new AbortController()
    const launched = mod.kernel('spin').launch({ grid: 4, block: 32, signal: ac.signal }, flag)
    launched.catch(() => {})
    // timers keep firing while the kernel spins
    const t0 = await tick(), t1 = await tick(), t2 = await tick()
    assert.ok(t0 <= t1 && t1 <= t2)
    ac.abort()
    const err = await expectAbort(launched, /launch of _Z4spinPKi aborted/, /signal was aborted/)
    assert.is((err as Error & { kernel: string }).kernel, '_Z4spinPKi')
    // the module still runs kernels, and its memory is intact
    const out = await mod.alloc(64 * 4)
    await mod.kernel('fill').launch({ grid: 2, block: 32 }, out, 7)
    await mod.synchronize()
    assert.equal([...new Int32Array((await out.download()).buffer)], new Array(64).fill(7))
    assert.equal([...new Int32Array((await flag.download()).buffer)], [0])
  })
}

Runaway('timeoutMs (loadModule, and per launch) aborts a runaway launch the same way', async (ctx) => {
  const mod = await loadModule(ptxBytes, manifest, { backend: 'emulator', workers: 2, timeoutMs: 150 })
  ctx.mods.push(mod)
  const flag = await mod.upload(new Int32Array([0]))
  const err = await expectAbort(mod.kernel('spin').launch({ grid: 1, block: 1 }, flag), /_Z4spinPKi/, /ran longer than timeoutMs \(150 ms\)/)
  assert.is((err.cause as Error).name, 'TimeoutError')
  await expectAbort(mod.kernel('spin').launch({ grid: 1, block: 1, timeoutMs: 50 }, flag), /_Z4spinPKi/, /timeoutMs \(50 ms\)/)
  // launches that finish in time are not affected
  const out = await mod.alloc(32 * 4)
  await mod.kernel('fill').launch({ grid: 1, block: 32 }, out, 3)
  assert.equal([...new Int32Array((await out.download()).buffer)], new Array(32).fill(3))
})

Runaway('a signal aborted before the launch: refused (AbortError naming the kernel), nothing runs', async (ctx) => {
  const mod = await loadModule(ptxBytes, manifest, { backend: 'emulator', workers: 1 })
  ctx.mods.push(mod)
  const out = await mod.upload(new Int32Array(32))
  await expectAbort(mod.kernel('fill').launch({ grid: 1, block: 32, signal: AbortSignal.abort() }, out, 9), /_Z4fillPii/, /already aborted/)
  assert.equal([...new Int32Array((await out.download()).buffer)], new Array(32).fill(0))
})

for (const workers of [2, 0]) {
  Runaway(`a grid of 2^31−1 trivial blocks on ${workers ? `${workers} workers` : 'the calling thread'}: timers fire and the signal aborts it`, async (ctx) => {
    const mod = await loadModule(ptxBytes, manifest, { backend: 'emulator', workers })
    ctx.mods.push(mod)
    if (workers === 0) assert.match(mod.backend.reason, /launches run on the calling thread: workers: 0/)
    const out = await mod.alloc(1024 * 4)
    const ac = new AbortController()
    const t0 = Date.now()
    const launched = mod.kernel('trivial').launch({ grid: 2 ** 31 - 1, block: 1, signal: ac.signal }, out)
    launched.catch(() => {})
    await tick()
    await tick()
    setTimeout(() => ac.abort(), 100)
    await expectAbort(launched, /_Z7trivialPi/, /signal was aborted/)
    // stopped within a slice, not after the 2^31 blocks (minutes)
    assert.ok(Date.now() - t0 < 10_000, `aborted after ${Date.now() - t0} ms`)
    await mod.kernel('fill').launch({ grid: 4, block: 256 }, out, 5)
    assert.equal([...new Int32Array((await out.download()).buffer)], new Array(1024).fill(5))
  })
}

Runaway.run()

// --- issue 13 item 3: workers ---

const Workers = suite('worker threads (issue 13 item 3)')

type Kernel = 'saxpyish' | 'blockSum' | 'warpScan'
type Runner = KernelRunner & { be: EmulatorBackend }

/** Runs one race-free kernel on `k`; returns every byte of its output (buffers freed after). */
async function runRaceFree(k: Runner, kernel: Kernel, n: number, block: number, seed: number): Promise<Uint8Array> {
  const rng = createRng(seed)
  const grid = Math.ceil(n / block)
  const bufs: DeviceBuffer[] = []
  const up = async (data: ArrayBufferView) => { const b = await k.upload(data); bufs.push(b); return b }
  const alloc = async (bytes: number) => { const b = await k.alloc(bytes, 0xa5); bufs.push(b); return b }
  try {
    if (kernel === 'warpScan') {
      const inp = await up(new Int32Array(n).map(() => rng.int(-1000, 1000)))
      const out = await alloc(n * 4)
      await k.launch(kernel, grid, block, [inp, out, n])
      return new Uint8Array((await k.read(out, Int32Array)).buffer)
    }
    const x = await up(new Float32Array(n).map(() => rng.int(-1 << 20, 1 << 20) / 1024))
    if (kernel === 'saxpyish') {
      const y = await up(new Float32Array(n).map(() => rng.int(-1 << 20, 1 << 20) / 4096))
      await k.launch(kernel, grid, block, [x, y, 1.5, n])
      return new Uint8Array((await k.read(y, Float32Array)).buffer)
    }
    const out = await alloc(grid * 4)
    await k.launch(kernel, grid, block, [x, out, n], block * 4)
    return new Uint8Array((await k.read(out, Float32Array)).buffer)
  } finally {
    for (const b of bufs) await k.be.free(b.address)
  }
}

Workers('a race-free kernel gives byte-identical memory on the calling thread and on 1–4 workers, in thread loops and in the continuation scheme (property over sizes, grids and inputs)', async () => {
  const runners = await Promise.all([...[0, 1, 2, 3, 4].map((w) => runner(w)), runner(2, [], false)])
  try {
    // the workers run the kernels with barriers and shuffles as thread loops (issue 13 items 1-2), the
    // last runner in the continuation scheme
    for (const name of ['blockSum', 'warpScan']) {
      const inspect = (k: Runner) => (k.module as EmulatorModule).inspect(k.entry(name))
      assert.match(inspect(runners[2]!), /: thread loops\n/)
      assert.match(inspect(runners[5]!), /: continuation scheme .*threadLoops: false/)
    }
    await fc.assert(fc.asyncProperty(
      fc.constantFrom<Kernel>('saxpyish', 'blockSum', 'warpScan'), fc.integer({ min: 1, max: 24_000 }), fc.constantFrom(32, 64, 128, 256), fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      async (kernel, n, block, seed) => {
        const one = await runRaceFree(runners[0]!, kernel, n, block, seed)
        for (const k of runners.slice(1)) {
          const many = await runRaceFree(k, kernel, n, block, seed)
          assert.ok(Buffer.from(many).equals(Buffer.from(one)), `${kernel} n=${n} block=${block} seed=${seed}: ${k.be.workers} workers${k === runners[5] ? ' (continuation scheme)' : ''} differ from the calling thread`)
        }
      },
    ), { numRuns: 5, seed: 13 })
  } finally {
    for (const k of runners) k.be.dispose()
  }
})

Workers('atomics under heavy contention stay exact across 2 workers: a 7-bin histogram of 2^20 values', async () => {
  const k = await runner(2)
  try {
    const n = 1 << 20, nbins = 7
    const rng = createRng(99)
    const data = new Uint32Array(n).map(() => rng.u32())
    const want = new Array(nbins).fill(0)
    for (const v of data) want[v % nbins]++
    const d = await k.upload(data)
    const bins = await k.alloc(nbins * 4)
    await k.launch('histogram', 64, 256, [d, n, bins, nbins])
    assert.equal([...await k.read(bins, Uint32Array)], want)
  } finally {
    k.be.dispose()
  }
})

Workers('64-bit, f32 and f64 atomics (add, max, min, a CAS loop, unsigned max) stay exact across 2 workers', async () => {
  const k = await runner(2)
  try {
    const n = 50_000
    const rng = createRng(7)
    const v = new BigInt64Array(n).map(() => BigInt.asIntN(64, rng.u64()) >> 12n)
    const sumBuf = await k.alloc(8), mxBuf = await k.upload(new BigInt64Array([-(2n ** 63n)])), mnBuf = await k.upload(new BigUint64Array([2n ** 64n - 1n]))
    const casBuf = await k.alloc(8), fBuf = await k.alloc(4), dBuf = await k.alloc(8), umaxBuf = await k.alloc(4)
    const dv = await k.upload(v)
    const args: KernelArg[] = [dv, n, sumBuf, mxBuf, mnBuf, casBuf, fBuf, dBuf, umaxBuf]
    await k.launch('atomics64', Math.ceil(n / 128), 128, args)
    let sum = 0n, mx = -(2n ** 63n), mn = 2n ** 64n - 1n, f = 0, d = 0, umax = 0
    for (const x of v) {
      sum = BigInt.asUintN(64, sum + x)
      if (x > mx) mx = x
      if (BigInt.asUintN(64, x) < mn) mn = BigInt.asUintN(64, x)
      f += Number(x & 255n)
      d += Number(x >> 24n)
      umax = Math.max(umax, Number(x & 0xffffffn))
    }
    assert.is((await k.read(sumBuf, BigUint64Array))[0], sum)
    assert.is((await k.read(mxBuf, BigInt64Array))[0], mx)
    assert.is((await k.read(mnBuf, BigUint64Array))[0], mn)
    assert.is((await k.read(casBuf, BigUint64Array))[0], BigInt(n))
    assert.is((await k.read(fBuf, Float32Array))[0], Math.fround(f))
    assert.ok(f < 2 ** 24, 'the f32 sum stays exact')
    assert.is((await k.read(dBuf, Float64Array))[0], d)
    assert.ok(Math.abs(d) < 2 ** 53, 'the f64 sum stays exact')
    assert.is((await k.read(umaxBuf, Uint32Array))[0], umax)
  } finally {
    k.be.dispose()
  }
})

Workers('scoped atomics (.sys, .cta) stay exact across 2 workers', async () => {
  const k = await runner(2)
  try {
    const c = await k.alloc(3 * 4), c64 = await k.alloc(8)
    await k.launch('scoped', 300, 64, [c, c64])
    assert.equal([...await k.read(c, Uint32Array)], [300 * 64, 2 * 300 * 64, 299])
    assert.is((await k.read(c64, BigUint64Array))[0], BigInt(300 * 64) << 33n)
    assert.match(ptx, /atom\.global\.sys\.add\.u32/)
    assert.match(ptx, /atom\.global\.cta\.add\.u32/)
  } finally {
    k.be.dispose()
  }
})

Workers('device printf from 2 workers arrives in block order (what one thread running the grid prints)', async () => {
  const printed: string[] = []
  const k = await runner(2, printed)
  try {
    await k.launch('hello', 96, 32, [3])
    assert.equal(printed, Array.from({ length: 32 }, (_, i) => `block ${3 * i} of 96\n`))
  } finally {
    k.be.dispose()
  }
})

Workers('a fault on a worker rejects the launch with the EmulatorFault (kernel, PTX line, address); the backend stays usable', async () => {
  const k = await runner(2)
  try {
    const n = 64 * 32
    const out = await k.alloc(n * 4)
    let err: unknown
    try {
      // 256 MiB past the buffer: beyond the heap (launch-internal memory right after the buffer still
      // counts as mapped, issue 17 item 3)
      await k.launch('overrun', 64, 32, [out, 1 << 26, 41])
    } catch (e) {
      err = e
    }
    assert.instance(err, EmulatorFault, String(err))
    const f = err as EmulatorFault
    assert.is(f.kernel, '_Z7overrunPiii')
    assert.match(f.message, /out-of-bounds or misaligned global memory access in kernel _Z7overrunPiii, instruction `st\.global\.u32 \[%rd\d+\], %r\d+ \(PTX line \d+\)` \(address 0x[0-9a-f]+\)/)
    assert.ok(f.address! >= out.address + BigInt(n * 4), `address 0x${f.address!.toString(16)} is past the buffer`)
    await k.launch('fill', 64, 32, [out, 1])
    assert.equal([...await k.read(out, Int32Array)], new Array(n).fill(1))
  } finally {
    k.be.dispose()
  }
})

Workers('dispose() during a running launch rejects it (its workers are stopped)', async () => {
  const k = await runner(2)
  const flag = await k.alloc(4)
  const launched = k.launch('spin', 2, 32, [flag])
  launched.catch(() => {})
  await tick()
  k.be.dispose()
  try {
    await launched
    assert.unreachable('the launch should have been rejected')
  } catch (e) {
    assert.match((e as Error).message, /launch of _Z4spinPKi: its worker_threads worker died \(the backend was disposed\)/)
  }
})

Workers('a worker script that cannot start: launches run on the calling thread and describeExecution() says why', async () => {
  const be = createEmulatorBackend({ workers: 2, workerUrl: new URL('file:///nonexistent/kernelpack-worker.js') })
  try {
    const k = await KernelRunner.load(be, ptx, config.target, 'workers.cu (bad worker script)')
    assert.match(be.describeExecution(), /launches run on 2 worker threads/)
    const out = await k.alloc(256 * 4)
    await k.launch('fill', 8, 32, [out, 4])
    assert.equal([...await k.read(out, Int32Array)], new Array(256).fill(4))
    assert.match(be.describeExecution(), /launches run on the calling thread: the worker_threads worker script could not be started \(.*kernelpack-worker\.js/)
    assert.is(be.workers, 0)
  } finally {
    be.dispose()
  }
})

Workers.run()
