// bench/gpu.bench.ts without a GPU (issue 18): with no driver every figure says "no GPU" and carries no
// number; the launch loops (runtime Kernel.launch against a bare koffi cuLaunchKernelEx in batches, then
// bursts) run end to end against the libcuda test double, so the code a GPU session runs is exercised here.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { buildTestDouble } from '../runtime/libcuda-double.js'

const GpuBench = suite('bench/gpu.bench.ts')

GpuBench('without a driver every figure is "no GPU" with no number', async () => {
  process.env.KERNELPACK_LIBCUDA = '/nonexistent/libcuda.so.1'
  const { run } = await import('../../bench/gpu.bench.js')
  const rs = await run()
  assert.is(rs.length, 5)
  for (const r of rs) {
    assert.match(r.name, / — no GPU$/)
    assert.ok(Number.isNaN(r.value) && Number.isNaN(r.referenceValue) && Number.isNaN(r.ratio))
    assert.match(r.target, /^no GPU: no NVIDIA driver was found/)
  }
  assert.match(JSON.stringify(rs[0]), /"value":null/)
})

GpuBench('the launch loops run against the test double: every launch reaches the driver, the figures are finite', async () => {
  const td = buildTestDouble()
  td.defineKernel('vec6', [8, 8, 8, 4, 4, 8])
  td.logLaunches(false)
  process.env.KERNELPACK_LIBCUDA = td.path
  const { measureLaunches } = await import('../../bench/gpu.bench.js')
  const before = td.launchCount()
  const rs = await measureLaunches('sm_90', 'test double')
  // 9 rounds x 3 sides x 80 batches x 256, 2 bursts x 5 rounds x 20000, and the three warm-up launches
  assert.is(td.launchCount() - before, BigInt(9 * 3 * 80 * 256 + 2 * 5 * 20_000 + 2))
  assert.equal(rs.map((r) => r.unit), ['ns', 'ns', 'launches/s'])
  for (const r of rs) assert.ok(Number.isFinite(r.value) && r.value > 0 && Number.isFinite(r.referenceValue) && r.referenceValue > 0, r.name)
  assert.match(rs[0]!.target, /^marshalling adds -?\d+ ns; target <= 100 ns$/)
})

GpuBench.run()
