// The histogram page: 65536 bytes counted into 256 bins with shared-memory and global atomics.
import type { Example } from '../../.vitepress/theme/example.js'
import { loadsFrom } from '../../.vitepress/theme/example.js'
import { drawBars } from '../../.vitepress/theme/draw.js'
import { firstMismatch, histogramData, histogramReference } from './reference.js'
import { histogram256, module } from './histogram.cu'

const blocks = 32, block = 256

export default {
  title: 'histogram',
  ...loadsFrom(module),
  async prepare() {
    const data = histogramData()
    const input = await module.upload(data), bins = await module.alloc(256 * 4)
    return {
      launches: 1,
      async launch() {
        await bins.fill(0)   // the kernel adds to the bins: each run starts from zero
        await histogram256({ grid: blocks, block }, input, data.length, bins)
      },
      read: async () => ({ bins: await bins.download(new Uint32Array(256)) }),
      free: async () => { await Promise.all([input.free(), bins.free()]) },
    }
  },
  check: (output) => firstMismatch(output.bins as Uint32Array, histogramReference(histogramData())),
  show(view, output) {
    const bins = output.bins as Uint32Array
    drawBars(view.canvas, bins, '#4a7bd0', 'byte value 0 … 255')
    let peak = 0
    bins.forEach((c, i) => { if (c > bins[peak]!) peak = i })
    view.caption(`${histogramData().length} bytes in ${blocks} blocks of ${block} threads; the tallest bin is ${peak} (${bins[peak]} bytes)`)
  },
} satisfies Example
