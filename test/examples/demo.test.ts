// `pnpm demo` builds and runs examples/webpack-node with that example's own `pnpm build` and `pnpm start`
// (its README command), so this file covers the webpack-node example as well.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../helpers/tools.js'
import { checkBuilt, examplesDir, readmeCommand, runShell } from './run-example.js'

const test = suite('pnpm demo')

test('builds examples/webpack-node with its README commands, runs its kernel and prints a checked result', async () => {
  checkBuilt()
  assert.is(readmeCommand('webpack-node').startsWith('pnpm build && pnpm start'), true)
  const r = await runShell('pnpm demo', repoRoot)
  assert.is(r.code, 0, `pnpm demo exited ${r.code}\n${r.stdout}\n${r.stderr}`)
  assert.match(r.stdout, '$ cd examples/webpack-node && pnpm build')
  assert.match(r.stdout, '$ cd examples/webpack-node && pnpm start')
  assert.ok(readdirSync(join(examplesDir, 'webpack-node', 'dist')).some((f) => f.endsWith('.offload')), 'webpack emitted the offload binary')
  assert.match(r.stdout, /^compiler: (nvcc|clang) \d+\.\d+/m)
  assert.match(r.stdout, /^targets: {2}sm_80, compute_80$/m)
  assert.match(r.stdout, /^backend: {2}(cuda|emulator) \(/m)
  // saxpy with n = 4096, a = 2.5, x[i] = i, y[i] = n - i: the sum of a*x[i] + y[i].
  let sum = 0
  for (let i = 0; i < 4096; i++) sum += 2.5 * i + (4096 - i)
  assert.match(r.stdout, `result:   saxpy: 4096 elements OK, sum = ${sum} (checked against JavaScript)`)
})

test.run()
