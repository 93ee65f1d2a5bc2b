// examples/vitest (issue 28): Vitest tests that import a .cu pass on the emulator; under KERNELPACK_CHECK=1
// the sanitizer fails the seeded race's test with its report and passes the fixed kernel's; the same
// kernels in `node --test` through the Node hook, with and without the sanitizer.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { tool } from '../helpers/tools.js'
import { checkBuilt, examplesDir, runReadme, runShell, type CommandResult } from './run-example.js'

tool('nvcc')
const dir = join(examplesDir, 'vitest')
// no driver on any machine, GPU or not: the emulator runs the kernels, as on a CI runner
const env = { KERNELPACK_LIBCUDA: join(dir, 'no-libcuda.so.1') }
// eslint-disable-next-line no-control-regex
const plain = (r: CommandResult) => (r.stdout + '\n' + r.stderr).replace(/\x1b\[[0-9;]*m/g, '')

const test = suite('examples/vitest')

test('README command: both Vitest tests pass on the emulator', async () => {
  const r = await runReadme('vitest')
  const out = plain(r)
  assert.match(out, /Tests\s+2 passed \(2\)/, out)
})

test('pnpm test:check: the sanitizer fails diff_inplace with the race report and passes diff_synced', async () => {
  checkBuilt()
  const r = await runShell('pnpm test:check', dir, env)
  const out = plain(r)
  assert.is(r.code, 1, out)
  assert.match(out, /Tests\s+1 failed \| 1 passed \(2\)/, out)
  assert.match(out, /FAIL\s+stencil\.test\.ts > forward differences > diff_inplace matches the JS reference/, out)
  assert.match(out, /SanitizerError: =+ Warning: \(Warp Level Programming\) Potential WAR hazard detected at __shared__ 0x[0-9a-f]+ in block \(0,0,0\)/, out)
  // the report names both accesses at their .cu lines (lineinfo from kernelpack.config.json)
  assert.match(out, /Read Thread \(\d+,0,0\) at PTX line \d+ `ld\.shared\.f32[^`]*` in \S*stencil\.cu:\d+/, out)
  assert.match(out, /Write Thread \(\d+,0,0\) at PTX line \d+ `st\.shared\.f32[^`]*` in \S*stencil\.cu:\d+/, out)
  assert.not.match(out, /diff_synced matches the JS reference[^\n]*\n[^\n]*SanitizerError/)
})

test('pnpm test:node: the same kernels in node --test through the Node hook, under the sanitizer: it fails diff_inplace there too', async () => {
  checkBuilt()
  const c = await runShell('pnpm test:node', dir, { ...env, KERNELPACK_CHECK: '1' })
  assert.is.not(c.code, 0, plain(c))
  assert.match(c.stdout, /^ok \d+ - diff_synced matches the JS reference$/m, c.stdout)
  assert.match(c.stdout, /^not ok \d+ - diff_inplace matches the JS reference$/m, c.stdout)
  assert.match(c.stdout, /Potential WAR hazard detected at __shared__/, c.stdout)
})

test.run()
