// The scan page: inclusive prefix sums of 50000 small integers with warp shuffles, plotted.
import type { Example } from '../../.vitepress/theme/example.js'
import { loadsFrom } from '../../.vitepress/theme/example.js'
import { drawLines } from '../../.vitepress/theme/draw.js'
import { firstMismatch, scanData, scanInput, scanReference } from './reference.js'
import { addOffsets, module, scanBlocks } from './scan.cu'

const { n, block } = scanInput
const blocks = Math.ceil(n / block)

export default {
  title: 'warp-shuffle scan',
  ...loadsFrom(module),
  async prepare() {
    const input = await module.upload(scanData())
    const out = await module.alloc(4 * n), totals = await module.alloc(4 * blocks), scanned = await module.alloc(4 * blocks), grand = await module.alloc(4)
    return {
      launches: 3,
      async launch() {
        await scanBlocks({ grid: blocks, block }, input, out, totals, n)
        // blocks ≤ 256: one block scans the totals
        await scanBlocks({ grid: 1, block }, totals, scanned, grand, blocks)
        await addOffsets({ grid: blocks, block }, out, scanned, n)
      },
      read: async () => ({ sums: await out.download(new Int32Array(n)) }),
      free: async () => { await Promise.all([input, out, totals, scanned, grand].map((b) => b.free())) },
    }
  },
  check: (output) => firstMismatch(output.sums as Int32Array, scanReference(scanData())),
  show(view, output) {
    const sums = output.sums as Int32Array
    drawLines(view.canvas, [{ label: 'running sum', values: sums, colour: '#d0603a' }], `i = 0 … ${n - 1} (inputs 0…9)`)
    view.caption(`${n} integers in ${blocks} blocks of ${block}: the last sum is ${sums[n - 1]}`)
  },
} satisfies Example
