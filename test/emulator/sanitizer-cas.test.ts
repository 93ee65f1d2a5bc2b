// racecheck and the compare-and-swap idiom (issue 32, part 3): the CUDA Programming Guide's atomicAdd(double)
// and a Jacobi solver's AtomicMax<double> read *address plainly and retry atomicCAS; they must run clean under
// all four checks and give the right values, while a plain store beside the loop and a plain read of the sum
// before the other threads are done are still reported, naming the lines marked `// expect: race` in
// test/fixtures/sanitizer/cas-loop.cu. Built by nvcc and clang with line information.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { fixturesDir } from '../helpers/tools.js'

const source = join(fixturesDir, 'sanitizer', 'cas-loop.cu')
const lines = readFileSync(source, 'utf8').split('\n')
const marked = (kernel: string): number => {
  const start = lines.findIndex((l) => l.includes(`void ${kernel}(`))
  return start + 1 + lines.slice(start).findIndex((l) => l.includes('// expect: race'))
}
const requests = corpusConfigs.map((config) => ({ source, config, extraArgs: [config.compiler === 'nvcc' ? '-lineinfo' : '-gline-tables-only'] }))
const texts = await compilePtxAll(requests)

const n = 200
// quarters sum exactly in any order: the result does not depend on which thread's CAS wins first
const x = Float64Array.from({ length: n }, (_, i) => ((i * 37) % 101) * 0.25 - 9)
const exactSum = x.reduce((s, v) => s + v, 0)
const a = Float64Array.from({ length: n }, (_, i) => Math.sin(i) * 3)
const b = Float64Array.from({ length: n }, (_, i) => Math.cos(i * 0.5))
const maxDiff = a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0)

requests.forEach(({ config }, r) => {
  const s = suite<{ k?: KernelRunner; backend?: ReturnType<typeof createEmulatorBackend> }>(`sanitizer: the compare-and-swap loop (${config.label})`, {})
  s.before(async (ctx) => {
    ctx.backend = createEmulatorBackend({ check: { mode: 'collect' } })
    ctx.k = await KernelRunner.load(ctx.backend, texts[r]!, config.target, `cas-loop.cu (${config.label})`)
  })
  s.after((ctx) => ctx.backend?.dispose())

  // 4 blocks: room for sum_cas_read_early's one value per block
  const sumWith = async (k: KernelRunner, kernel: string) => {
    const out = await k.upload(new Float64Array(4))
    await k.launch(kernel, 4, 64, [await k.upload(x), out, n])
    return (await k.read(out, Float64Array))[0]
  }

  s('atomicAdd(double) as a CAS loop: the right sum, no report', async ({ k, backend }) => {
    assert.is(await sumWith(k!, 'sum_cas'), exactSum)
    assert.equal(backend!.sanitizerReports().map((x) => x.message), [])
  })

  s('the same loop on a __shared__ double, then once per block on global memory: no report', async ({ k, backend }) => {
    assert.is(await sumWith(k!, 'sum_cas_shared'), exactSum)
    assert.equal(backend!.sanitizerReports().map((x) => x.message), [])
  })

  s('AtomicMax<double> as a CAS loop: the right maximum, no report', async ({ k, backend }) => {
    const res = await k!.upload(new Float64Array([0]))
    await k!.launch('max_residual', 4, 64, [await k!.upload(a), await k!.upload(b), res, n])
    assert.is((await k!.read(res, Float64Array))[0], maxDiff)
    assert.equal(backend!.sanitizerReports().map((x) => x.message), [])
  })

  for (const kernel of ['sum_cas_reset', 'sum_cas_read_early']) {
    s(`${kernel}: a plain access racing with the loop is still reported, at its line`, async ({ k, backend }) => {
      await sumWith(k!, kernel)
      const races = backend!.sanitizerReports().filter((x) => x.kind === 'race')
      const line = marked(kernel)
      assert.ok(races.some((x) => x.accesses.some((acc) => acc.source?.line === line)), `a race naming cas-loop.cu:${line}; got:\n${races.map((x) => x.message).join('\n')}`)
    })
  }
  s.run()
})
