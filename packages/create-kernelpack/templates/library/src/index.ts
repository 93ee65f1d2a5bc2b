// The library's API: y = a*x + y on the GPU (or kernelpack's emulator where there is none).
import { module, saxpy as saxpyKernel } from './saxpy.cu'

/** Returns a*x + y, computed by the CUDA kernel in saxpy.cu. */
export async function saxpy(a: number, x: Float32Array, y: Float32Array): Promise<Float32Array> {
  if (x.length !== y.length) throw new RangeError(`saxpy: x has ${x.length} elements, y ${y.length}`)
  const dx = await module.upload(x)
  const dy = await module.upload(y)
  try {
    await saxpyKernel({ grid: Math.ceil(x.length / 256), block: 256 }, x.length, a, dx, dy)
    return await dy.download(new Float32Array(y.length))
  } finally {
    await dx.free()
    await dy.free()
  }
}
