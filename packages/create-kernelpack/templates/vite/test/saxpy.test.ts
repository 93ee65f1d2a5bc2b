// The kernel against a JS reference in Vitest (which runs the Vite plugin, so the .cu import works here too).
import { expect, test } from 'vitest'
import { module, saxpy } from '../src/saxpy.cu'

test('saxpy computes a*x + y', async () => {
  const n = 1000
  const x = Float32Array.from({ length: n }, (_, i) => i % 17)
  const y = Float32Array.from({ length: n }, (_, i) => n - i)
  const dx = await module.upload(x)
  const dy = await module.upload(y)
  await saxpy({ grid: Math.ceil(n / 256), block: 256 }, n, 0.5, dx, dy)
  expect([...await dy.download(new Float32Array(n))]).toEqual([...y].map((v, i) => Math.fround(Math.fround(0.5 * x[i]!) + v)))
})
