// Vitest tests of stencil.cu's kernels against a JS reference. They run on the emulator where there is no
// GPU; `KERNELPACK_CHECK=1 pnpm test` runs them under the sanitizer, which fails diff_inplace's test with the
// race report (the bug seeded in stencil.cu) and passes diff_synced's.
import { describe, expect, test } from 'vitest'
import { diff_inplace, diff_synced, module } from './stencil.cu'

const n = 1000
// a signal whose differences are exact in float32
const x = Float32Array.from({ length: n }, (_, i) => (i * i) % 97)
const expected = Float32Array.from({ length: n - 1 }, (_, i) => x[i + 1]! - x[i]!)

async function differences(kernel: typeof diff_synced): Promise<Float32Array> {
  const dx = await module.upload(x)
  const dd = await module.alloc(4 * (n - 1))
  await kernel({ grid: Math.ceil(n / 256), block: 256 }, n, dx, dd)
  const out = await dd.download(new Float32Array(n - 1))
  await dx.free()
  await dd.free()
  return out
}

describe('forward differences', () => {
  test('diff_synced matches the JS reference', async () => {
    expect(await differences(diff_synced)).toEqual(expected)
  })

  test('diff_inplace matches the JS reference', async () => {
    expect(await differences(diff_inplace)).toEqual(expected)
  })
})
