import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { examplesDir, readBackend, runReadme } from './run-example.js'

const test = suite('examples/vite-ssr')

test('README command makes a Vite SSR build whose server code renders the kernel product as HTML', async () => {
  const { stdout } = await runReadme('vite-ssr')
  assert.ok(readdirSync(join(examplesDir, 'vite-ssr', 'dist', 'assets')).some((f) => f.endsWith('.offload')), 'the SSR build ships the offload binary')
  const { backend, images } = readBackend(stdout)
  assert.equal(images, 'sm_80, compute_80')
  // A[i] = i%7 - 3, B[i] = i%5 - 2 (row-major 24x24); the printed first row and the trace of A*B.
  const n = 24
  const a = (r: number, k: number) => ((r * n + k) % 7) - 3
  const b = (k: number, c: number) => ((k * n + c) % 5) - 2
  const cell = (r: number, c: number) => Array.from({ length: n }, (_, k) => a(r, k) * b(k, c)).reduce((s, v) => s + v, 0)
  const trace = Array.from({ length: n }, (_, i) => cell(i, i)).reduce((s, v) => s + v, 0)
  assert.match(stdout, `<table data-backend="${backend}">\n<tr>${Array.from({ length: n }, (_, c) => `<td>${cell(0, c)}</td>`).join('')}</tr>`)
  assert.match(stdout, `matmul: 24x24 product OK, trace = ${trace}`)
})

test.run()
