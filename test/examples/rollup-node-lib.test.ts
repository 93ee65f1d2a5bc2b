import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { examplesDir, runReadme } from './run-example.js'

const test = suite('examples/rollup-node-lib')

test('README command builds the library with Rollup; a consumer imports it by name and gets checked window sums', async () => {
  const dir = join(examplesDir, 'rollup-node-lib')
  const { stdout } = await runReadme('rollup-node-lib')
  // What the package ships (`files`): the library entry, its kernels and its types.
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { files: string[]; exports: Record<string, Record<string, string>> }
  assert.equal(pkg.files, ['dist', 'index.d.ts'])
  assert.is(pkg.exports['.']!.default, './dist/index.js')
  assert.ok(readdirSync(join(dir, 'dist', 'assets')).some((f) => /^window-sum-.+\.offload$/.test(f)))
  assert.match(readFileSync(join(dir, 'dist', 'main.js'), 'utf8'), /from ['"]@kernelpack-example\/rollup-node-lib['"]/, 'main imports the built package')
  assert.match(stdout, /^backend: (cuda|emulator) /m)
  const n = 5000
  const data = Array.from({ length: n }, (_, i) => ((i * 37) % 101) - 50)
  let checksum = 0
  for (let i = 0; i < n; i++) {
    let sum = 0
    for (let j = Math.max(i - 3, 0); j <= Math.min(i + 3, n - 1); j++) sum += data[j]!
    checksum += sum * (i % 13)
  }
  assert.match(stdout, `windowSum: 5000 sums OK, checksum = ${checksum}`)
})

test.run()
