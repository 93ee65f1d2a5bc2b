// The matmul page: C = A·B in 16×16 shared-memory tiles, drawn as a heat map, with GFLOP/s.
import type { Example } from '../../.vitepress/theme/example.js'
import { loadsFrom, param } from '../../.vitepress/theme/example.js'
import { drawPixels, heat } from '../../.vitepress/theme/draw.js'
import { firstMismatch, matmulData, matmulDefault, matmulReference, matmulSizes } from './reference.js'
import { matmul, module } from './matmul.cu'

const size = (params: Readonly<Record<string, string>>) => Number(param(params, 'n'))
const sizes = [matmulDefault, ...matmulSizes.filter((s) => s !== matmulDefault)]

export default {
  title: 'tiled matrix multiply',
  controls: [{ name: 'n', label: 'size', options: sizes.map((s) => ({ value: String(s), label: `${s}×${s}` })) }],
  ...loadsFrom(module),
  async prepare(_mod, params) {
    const n = size(params)
    const { a, b } = matmulData(n)
    const da = await module.upload(a), db = await module.upload(b), dc = await module.alloc(4 * n * n)
    return {
      launches: 1,
      launch: () => matmul({ grid: [n / 16, n / 16], block: [16, 16] }, da, db, dc, n),
      read: async () => ({ c: await dc.download(new Float32Array(n * n)), n }),
      free: async () => { await Promise.all([da.free(), db.free(), dc.free()]) },
    }
  },
  check(output, params) {
    const n = size(params)
    const { a, b } = matmulData(n)
    return firstMismatch(output.c as Float32Array, matmulReference(a, b, n))
  },
  show(view, output, params) {
    const n = size(params), c = output.c as Float32Array
    let lo = Infinity, hi = -Infinity
    for (const v of c) { if (v < lo) lo = v; if (v > hi) hi = v }
    drawPixels(view.canvas, c, n, n, (v) => heat((v - lo) / (hi - lo || 1)))
    view.caption(`C = A·B, ${n}×${n}: values from ${lo} to ${hi}`)
  },
  work: (params) => ({ amount: 2 * size(params) ** 3, unit: 'FLOP' }),
} satisfies Example
