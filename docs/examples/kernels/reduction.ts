// The reduction page: 262144 integers summed by two launches of one kernel, the per-block partial sums
// plotted, with the memory bandwidth the first launch reaches.
import type { Example } from '../../.vitepress/theme/example.js'
import { loadsFrom } from '../../.vitepress/theme/example.js'
import { drawBars } from '../../.vitepress/theme/draw.js'
import { firstMismatch, reductionData, reductionInput, reductionReference } from './reference.js'
import { blockSum, module } from './reduction.cu'

const { n, blocks, block } = reductionInput

export default {
  title: 'shared-memory reduction',
  ...loadsFrom(module),
  async prepare() {
    const input = await module.upload(reductionData()), partials = await module.alloc(4 * blocks), total = await module.alloc(4)
    return {
      launches: 2,
      async launch() {
        await blockSum({ grid: blocks, block }, input, n, partials)
        await blockSum({ grid: 1, block }, partials, blocks, total)
      },
      read: async () => ({ partials: await partials.download(new Int32Array(blocks)), total: (await total.download(new Int32Array(1)))[0]! }),
      free: async () => { await Promise.all([input.free(), partials.free(), total.free()]) },
    }
  },
  check(output) {
    const want = reductionReference(reductionData())
    return firstMismatch(output.partials as Int32Array, want.partials) ?? (output.total === want.total ? null : `total ${output.total}, expected ${want.total}`)
  },
  show(view, output) {
    drawBars(view.canvas, output.partials as Int32Array, '#7cb36b', `partial sums of blocks 0 … ${blocks - 1}`)
    view.caption(`sum of ${n} integers in −1000…1000 = ${output.total}`)
  },
  // what bounds a sum: reading every element once
  work: () => ({ amount: 4 * n, unit: 'byte' }),
} satisfies Example
