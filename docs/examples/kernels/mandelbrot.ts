// The Mandelbrot page: one thread per pixel, the escape counts coloured on the canvas.
import type { Example } from '../../.vitepress/theme/example.js'
import { loadsFrom, param } from '../../.vitepress/theme/example.js'
import { drawPixels, heat } from '../../.vitepress/theme/draw.js'
import { firstMismatch, mandelbrotReference, mandelbrotSize, mandelbrotViews } from './reference.js'
import { mandelbrot, module } from './mandelbrot.cu'

const { width, height, maxIter } = mandelbrotSize
const view = (params: Readonly<Record<string, string>>) => mandelbrotViews[Number(param(params, 'view'))]!

export default {
  title: 'Mandelbrot',
  controls: [{ name: 'view', label: 'view', options: mandelbrotViews.map((v, i) => ({ value: String(i), label: v.label })) }],
  ...loadsFrom(module),
  async prepare(_mod, params) {
    const v = view(params)
    const counts = await module.alloc(4 * width * height)
    return {
      launches: 1,
      launch: () => mandelbrot({ grid: [width / 16, height / 16], block: [16, 16] }, counts, width, height, v.x0, v.y0, v.step, maxIter),
      read: async () => ({ counts: await counts.download(new Uint32Array(width * height)) }),
      free: () => counts.free(),
    }
  },
  check: (output, params) => firstMismatch(output.counts as Uint32Array, mandelbrotReference(view(params))),
  show(v, output) {
    const counts = output.counts as Uint32Array
    drawPixels(v.canvas, counts, width, height, (k) => (k >= maxIter ? [0, 0, 0] : heat(Math.log2(k + 1) / Math.log2(maxIter))))
    let inside = 0
    for (const k of counts) if (k >= maxIter) inside++
    v.caption(`${width}×${height} pixels, at most ${maxIter} steps; ${inside} pixels never escape (black)`)
  },
} satisfies Example
