import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { examplesDir, readBackend, runReadme } from './run-example.js'

const test = suite('examples/rspack-node')

test('README command builds with Rspack and prints the histogram counts of the kernel', async () => {
  const { stdout } = await runReadme('rspack-node')
  assert.ok(readdirSync(join(examplesDir, 'rspack-node', 'dist')).some((f) => f.endsWith('.offload')), 'Rspack emitted the offload binary')
  assert.equal(readBackend(stdout).images, 'sm_80, compute_80')
  // The example's input: 10000 values of a 32-bit LCG (seed 12345), high 24 bits, into 16 bins.
  const counts = new Array<number>(16).fill(0)
  for (let i = 0, s = 12345; i < 10_000; i++) {
    s = Number((BigInt(s) * 1664525n + 1013904223n) % 4294967296n)
    counts[Math.floor(s / 256) % 16]!++
  }
  assert.match(stdout, `histogram: 10000 values in 16 bins OK, counts = ${counts.join(' ')}`)
})

test.run()
