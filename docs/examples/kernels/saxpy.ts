// The saxpy page: out = 2·x + y over 4096 floats, plotted with its inputs.
import type { Example } from '../../.vitepress/theme/example.js'
import { loadsFrom } from '../../.vitepress/theme/example.js'
import { drawLines } from '../../.vitepress/theme/draw.js'
import { firstMismatch, saxpyData, saxpyInput, saxpyReference, saxpyTolerance } from './reference.js'
import { module, saxpy } from './saxpy.cu'

const { n, a } = saxpyInput

export default {
  title: 'saxpy',
  ...loadsFrom(module),
  async prepare() {
    const { x, y } = saxpyData()
    const dx = await module.upload(x), dy = await module.upload(y), dout = await module.alloc(4 * n)
    return {
      launches: 1,
      launch: () => saxpy({ grid: Math.ceil(n / 256), block: 256 }, n, a, dx, dy, dout),
      read: async () => ({ out: await dout.download(new Float32Array(n)) }),
      free: async () => { await Promise.all([dx.free(), dy.free(), dout.free()]) },
    }
  },
  check(output) {
    const { x, y } = saxpyData()
    return firstMismatch(output.out as Float32Array, saxpyReference(a, x, y), saxpyTolerance)
  },
  show(view, output) {
    const { x, y } = saxpyData()
    drawLines(view.canvas, [
      { label: 'x', values: x, colour: '#4a7bd0' },
      { label: 'y', values: y, colour: '#7cb36b' },
      { label: `out = ${a}·x + y`, values: output.out as Float32Array, colour: '#d0603a' },
    ], `i = 0 … ${n - 1}`)
    view.caption(`out[0…3] = ${Array.from((output.out as Float32Array).subarray(0, 4), (v) => v.toFixed(4)).join(', ')} …`)
  },
  // reads x and y, writes out
  work: () => ({ amount: 12 * n, unit: 'byte' }),
} satisfies Example
