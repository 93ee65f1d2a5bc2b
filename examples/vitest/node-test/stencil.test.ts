// The same kernels in Node's own test runner, without Vite: `pnpm test:node` imports stencil.cu through the
// Node hook (`node --import tsx --import unplugin-cuda/register --test`), with kernelpack.config.json's options.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { diff_inplace, diff_synced, module } from '../stencil.cu'

const n = 600
const x = Float32Array.from({ length: n }, (_, i) => (i * 7) % 31)
const expected = Array.from({ length: n - 1 }, (_, i) => x[i + 1]! - x[i]!)

for (const [name, kernel] of [['diff_synced', diff_synced], ['diff_inplace', diff_inplace]] as const) {
  test(`${name} matches the JS reference`, async () => {
    const dx = await module.upload(x)
    const dd = await module.alloc(4 * (n - 1))
    await kernel({ grid: Math.ceil(n / 256), block: 256 }, n, dx, dd)
    assert.deepEqual([...await dd.download(new Float32Array(n - 1))], expected)
  })
}
