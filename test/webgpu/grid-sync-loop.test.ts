// Loops around cg::this_grid().sync() on WebGPU (issue 26 item 6; grid-sync.ts, emit-kernel.ts writePhases,
// backend.ts): the body of a loop around grid syncs, and an `if` that skips it, run as phases of their own; the
// phase that ends the body (or precedes the `if`) decides its branch, and the launch reads that decision
// between dispatches. The kernels (test/fixtures/webgpu/grid-loop.cu, nvcc's PTX): a fixed number of sweeps
// (none, one, several: the `if` nvcc puts around a `for` loop), a loop whose exit is a value the grid computed
// (as a solver's residual), a conjugate-gradient solve in one launch, and a loop that only a fault ends. Each is compared with the emulator and with what
// it computes, in blocks of 64 threads and of 320 (two CUDA threads an invocation on SwiftShader), with and
// without a timeoutMs (the sliced launch path).
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { translateModule } from '../../packages/webgpu/src/index.js'
import { decodeForTranslation } from '../../packages/webgpu/src/from-ptx.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { repoRoot } from '../helpers/tools.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const PTX = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'grid-loop.cu'), config })
const BLOCKS = 4

/** sweeps(x, y, n, iters) as the kernel computes it, in f32. */
function sweepsExpected(x0: Float32Array, iters: number): { x: Float32Array; y: Float32Array } {
  const n = x0.length
  let x = Float32Array.from(x0)
  let own = 0
  for (let it = 0; it < iters; it++) {
    const y = new Float32Array(n)
    for (let i = 0; i < n; i++) y[i] = Math.fround(Math.fround(0.5 * Math.fround(x[i > 0 ? i - 1 : i]! + x[i < n - 1 ? i + 1 : i]!)) + own)
    x = y
    own = Math.fround(own + 0.25)
  }
  return { x, y: new Float32Array(n).fill(own) }
}

async function runSweeps(k: KernelRunner, threads: number, iters: number, timeoutMs?: number): Promise<{ x: Float32Array; y: Float32Array }> {
  const n = BLOCKS * threads - 3
  const x0 = Float32Array.from({ length: n }, (_, i) => (i % 17) * 0.5 - 3)
  const x = await k.upload(x0), y = await k.alloc(4 * n)
  await k.launch('sweeps', BLOCKS, threads, [x, y, n, iters], 0, { cooperative: true, ...(timeoutMs ? { timeoutMs } : {}) })
  return { x: await k.read(x, Float32Array), y: await k.read(y, Float32Array) }
}

async function runRounds(k: KernelRunner, threads: number, target: number, timeoutMs?: number): Promise<number[]> {
  const counter = await k.upload(new Int32Array([0])), out = await k.alloc(4 * BLOCKS * threads)
  await k.launch('rounds_until', BLOCKS, threads, [counter, out, target], 0, { cooperative: true, ...(timeoutMs ? { timeoutMs } : {}) })
  return [...(await k.read(out, Int32Array))]
}

const s = await webgpuPageSuite('WebGPU: loops around grid-wide syncs (cg::this_grid().sync())')

s('the kernels translate, into phases that end in the loops\' back edges and the skip test', () => {
  const m = translateModule(decodeForTranslation(PTX, 'grid-loop').module, { features: new Set<string>(), limits: { maxComputeInvocationsPerWorkgroup: 256 } }, PTX)
  assert.equal(m.refused.map((r) => `${r.kernel}: ${r.reason}`), [])
  // sweeps: the prologue (deciding whether the loop runs at all), the loop's three stretches (the last
  // deciding whether to go round again), the rest of the `if`, the kernel's end
  const gs = m.kernels.get('sweeps')!.gridSync!
  assert.ok(gs.branches!.length === 2, JSON.stringify(gs))
  const back = gs.branches!.find((l) => l.to <= l.phase)!, skip = gs.branches!.find((l) => l.to > l.phase)!
  assert.ok(back && skip, JSON.stringify(gs.branches))
  assert.is(skip.phase, 0)
  assert.ok(skip.to > back.phase, 'the skip test goes past the loop')
  // rounds_until: a do-while, entered unconditionally: one back edge
  assert.equal(m.kernels.get('rounds_until')!.gridSync!.branches!.map((l) => l.to < l.phase || l.to === l.phase), [true])
})

for (const threads of [64, 320]) {
  for (const iters of [0, 1, 6]) {
    s(`sweeps, ${iters} iteration(s), ${BLOCKS} blocks of ${threads}: as the emulator and the reference compute it`, async (ctx) => {
      const g = await runSweeps(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', `sweeps ${threads} (WebGPU)`), threads, iters)
      const be = createEmulatorBackend({ workers: 0 })
      const e = await runSweeps(await KernelRunner.load(be, PTX, 'compute_80', `sweeps ${threads} (emulator)`), threads, iters)
      be.dispose()
      const want = sweepsExpected(Float32Array.from({ length: BLOCKS * threads - 3 }, (_, i) => (i % 17) * 0.5 - 3), iters)
      assert.equal([...e.x], [...want.x], 'the emulator: x')
      assert.equal([...e.y], [...want.y], 'the emulator: y')
      assert.equal([...g.x], [...want.x], 'WebGPU: x')
      assert.equal([...g.y], [...want.y], 'WebGPU: y')
    })
  }
  s(`rounds_until (the exit read from memory the grid wrote), ${BLOCKS} blocks of ${threads}`, async (ctx) => {
    const target = 20
    const g = await runRounds(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', `rounds ${threads} (WebGPU)`), threads, target)
    const be = createEmulatorBackend({ workers: 0 })
    const e = await runRounds(await KernelRunner.load(be, PTX, 'compute_80', `rounds ${threads} (emulator)`), threads, target)
    be.dispose()
    // 3 a round until at least 20: 7 rounds, the counter at 21, read by every thread of the grid
    const want = new Array(BLOCKS * threads).fill(7 * 1000 + 21)
    assert.equal(e, want, 'the emulator')
    assert.equal(g, want, 'WebGPU')
  })
}

/** cg_diag on diag(d) x = b, d with 5 distinct values (CG converges in 5 steps in exact arithmetic): x and the
 *  iteration count. */
async function runCg(k: KernelRunner, threads: number): Promise<{ x: Float32Array; iters: number }> {
  const n = 1000
  const d = Float32Array.from({ length: n }, (_, i) => 1 + (i % 5)), b = Float32Array.from({ length: n }, (_, i) => ((i * 7) % 13) - 6)
  const [dd, db] = [await k.upload(d), await k.upload(b)]
  const [x, r, p, ap, scratch] = [await k.alloc(4 * n), await k.alloc(4 * n), await k.alloc(4 * n), await k.alloc(4 * n), await k.alloc(16)]
  await k.launch('cg_diag', BLOCKS, threads, [dd, db, x, r, p, ap, scratch, n, 50, 1e-3], 0, { cooperative: true })
  return { x: await k.read(x, Float32Array), iters: (await k.read(scratch, Float32Array))[3]! }
}

s('cg_diag (a conjugate-gradient solve in one launch, its exit read from dot products): the solution, on both backends', async (ctx) => {
  const g = await runCg(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'cg (WebGPU)'), 64)
  const be = createEmulatorBackend({ workers: 0 })
  const e = await runCg(await KernelRunner.load(be, PTX, 'compute_80', 'cg (emulator)'), 64)
  be.dispose()
  // the dot products' atomic sums run in another order on each backend: the same solution, not the same bits
  for (const [what, r] of [['the emulator', e], ['WebGPU', g]] as const) {
    assert.ok(r.iters >= 4 && r.iters <= 8, `${what}: ${r.iters} iterations`)
    r.x.forEach((v, i) => {
      const want = (((i * 7) % 13) - 6) / (1 + (i % 5))
      if (Math.abs(v - want) > 1e-3 * Math.max(1, Math.abs(want))) throw new Error(`${what}: x[${i}] = ${v}, want ${want} (after ${r.iters} iterations)`)
    })
  }
})

s('with a timeoutMs (each phase in slices): the same results', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'grid loops sliced (WebGPU)')
  const want = sweepsExpected(Float32Array.from({ length: BLOCKS * 64 - 3 }, (_, i) => (i % 17) * 0.5 - 3), 6)
  const g = await runSweeps(k, 64, 6, 60_000)
  assert.equal([...g.x], [...want.x])
  assert.equal(await runRounds(k, 64, 20, 60_000), new Array(BLOCKS * 64).fill(7021))
})

s('a fault inside the loop ends the launch with the fault, at its PTX line, as on the emulator', async (ctx) => {
  const launch = async (k: KernelRunner) => {
    const p = await k.alloc(64)
    return k.launch('fault_in_loop', BLOCKS, 64, [p, 3, 1 << 30], 0, { cooperative: true }).then(() => k.read(p, Int32Array)).then(() => undefined, (x: Error) => x)
  }
  const g = await launch(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'fault_in_loop (WebGPU)'))
  const be = createEmulatorBackend({ workers: 0 })
  const e = await launch(await KernelRunner.load(be, PTX, 'compute_80', 'fault_in_loop (emulator)'))
  be.dispose()
  assert.ok(e, 'the emulator faults')
  assert.ok(g, 'WebGPU faults (and the loop ends)')
  const line = (m: string) => /PTX line (\d+)/.exec(m)?.[1]
  assert.ok(line(g!.message), g!.message)
  assert.is(line(g!.message), line(e!.message), `${g!.message}\n${e!.message}`)
})

s.run()
