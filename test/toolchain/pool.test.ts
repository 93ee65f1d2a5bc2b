// The compile pool (pool.ts): a bound on processes, where one task may take several slots (an nvcc with
// --threads N runs N of its steps at once); waiting tasks start first come, first served.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Pool } from '@kernelpack/toolchain'
import { nvccThreads } from '../../packages/toolchain/src/compile.js'

const pool = suite('Pool slots')

const tick = () => new Promise<void>((r) => setTimeout(r, 5))

pool('tasks taking several slots: never more than the limit at once, started in the order they came', async () => {
  const p = new Pool(3)
  let busy = 0
  let most = 0
  const started: string[] = []
  const task = (name: string, slots: number) => p.run(async () => {
    busy += slots
    most = Math.max(most, busy)
    started.push(name)
    await tick()
    busy -= slots
  }, slots)
  await Promise.all([task('a', 1), task('b', 2), task('c', 2), task('d', 1), task('e', 3), task('f', 1)])
  assert.is(most, 3)
  assert.equal(started, ['a', 'b', 'c', 'd', 'e', 'f'], 'c waits for its two slots; d, which would fit, does not overtake it')
})

pool('a task asking for more slots than the pool has takes the whole pool', async () => {
  const p = new Pool(2)
  let busy = 0
  let most = 0
  const task = (slots: number) => p.run(async () => { busy++; most = Math.max(most, busy); await tick(); busy-- }, slots)
  await Promise.all([task(8), task(1), task(8)])
  assert.is(most, 1)
})

pool('a task that releases its slot (its process ended, its outputs still being read) lets the next start; releasing twice frees one slot', async () => {
  const p = new Pool(1)
  const order: string[] = []
  let reading!: () => void
  // (a pool that kept a's slot until a settled would start b only after this timeout)
  const stillReading = new Promise<void>((r) => { reading = r; setTimeout(r, 200) })
  const first = p.run(async (release) => {
    order.push('a ran')
    release()
    release()
    await stillReading
    order.push('a read')
  })
  const second = p.run(async () => { order.push('b ran'); reading() })
  const third = p.run(async () => { order.push('c ran') })
  await Promise.all([first, second, third])
  assert.equal(order, ['a ran', 'b ran', 'a read', 'c ran'], 'b starts while a reads; c waits for b, not for a\'s second release')
})

pool('nvccThreads: --threads N / -t N among the user\'s flags, 0 for every core, bounded by the file\'s architectures', () => {
  assert.is(nvccThreads([], 3, 8), 1)
  assert.is(nvccThreads(['-t', '2'], 3, 8), 2)
  assert.is(nvccThreads(['--threads', '4'], 3, 8), 3)
  assert.is(nvccThreads(['--threads=2', '-O3'], 5, 8), 2)
  assert.is(nvccThreads(['-t0'], 5, 4), 4)
  assert.is(nvccThreads(['-t', '2', '-t', '1'], 5, 8), 1, 'the last one wins, as nvcc reads it')
  assert.is(nvccThreads(['-lineinfo', '-Xptxas=-v'], 5, 8), 1)
})

pool.run()
