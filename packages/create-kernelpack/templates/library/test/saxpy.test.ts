// The built package (dist/, as its users get it; `npm run build` first) against a JS reference, in node --test.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { saxpy } from '../dist/index.js'

test('saxpy computes a*x + y', async () => {
  const x = Float32Array.from({ length: 1000 }, (_, i) => i % 17)
  const y = Float32Array.from({ length: 1000 }, (_, i) => 1000 - i)
  const out = await saxpy(0.5, x, y)
  assert.deepEqual([...out], [...y].map((v, i) => Math.fround(Math.fround(0.5 * x[i]!) + v)))
})
