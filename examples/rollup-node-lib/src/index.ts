// The library's API: plain functions over typed arrays; the kernel and its loading stay inside.
import { windowSum as windowSumKernel, module } from './window-sum.cu'

/** Sums of `data` over windows of `2 * radius + 1` elements centred on each index (clamped at the ends). */
export async function windowSum(data: Int32Array, radius: number): Promise<Int32Array> {
  const input = await module.upload(data)
  const output = await module.alloc(data.byteLength)
  try {
    await windowSumKernel({ grid: Math.ceil(data.length / 128), block: 128 }, input, output, data.length, radius)
    return await output.download(new Int32Array(data.length))
  } finally {
    await Promise.all([input.free(), output.free()])
  }
}

/** Which backend runs the kernels ('cuda' or 'emulator') and why. */
export async function backend(): Promise<{ name: string; reason: string }> {
  return (await module.load()).backend
}
