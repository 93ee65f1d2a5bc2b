import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { examplesDir, readBackend, readmeCommand, runReadme } from './run-example.js'

const test = suite('examples/esbuild-cli')

/** Collatz steps from n down to 1. */
function steps(n: number): number {
  let s = 0
  for (; n !== 1; s++) n = n % 2 ? 3 * n + 1 : n / 2
  return s
}

test('README command builds the CLI with esbuild and prints the longest Collatz chain below 3000', async () => {
  assert.is(readmeCommand('esbuild-cli').startsWith('pnpm build && pnpm start'), true)
  const { stdout } = await runReadme('esbuild-cli')
  const dist = join(examplesDir, 'esbuild-cli', 'dist')
  assert.ok(existsSync(join(dist, 'cli.mjs')))
  assert.ok(readdirSync(dist).some((f) => f.endsWith('.offload')), 'the offload binary beside the bundle')
  assert.equal(readBackend(stdout).images, 'sm_80, compute_80')
  let best = 1
  for (let n = 2; n <= 3000; n++) if (steps(n) > steps(best)) best = n
  assert.match(stdout, `collatz: 3000 start values OK, longest chain starts at ${best} (${steps(best)} steps)`)
})

test.run()
