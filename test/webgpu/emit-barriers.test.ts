// Which of a kernel's __syncthreads() also order global memory on WebGPU (emit-wgsl's globalBarriers): WGSL's
// workgroupBarrier orders workgroup memory only, so a barrier where a global write (before it) meets any
// global access after it, or a global read meets a write, gets storageBarrier; one where neither side needs
// it does not (storageBarrier made a tiled matmul's loop 40 % slower on SwiftShader). The translations are
// compared by the kernel corpus on Dawn; this checks the placement, barrier by barrier.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { decodeModule, parsePtx } from '@kernelpack/ptx'
import { globalBarriers } from '../../packages/webgpu/src/emit-kernel.js'
import { translateModule } from '../../packages/webgpu/src/index.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { repoRoot } from '../helpers/tools.js'

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const fixture = (name: string) => compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', name), config })
const [barriers, plumbing] = await Promise.all([fixture('barriers.cu'), fixture('plumbing.cu')])
const target = { features: new Set<string>(), limits: { maxComputeInvocationsPerWorkgroup: 256 } }

/** Per block barrier of the kernel, in program order: whether it orders global memory, `exit` where its
 *  loop's exit does instead. */
function placement(ptx: string, kernel: string): Array<boolean | 'exit'> {
  const fn = decodeModule(parsePtx(ptx), { perFunction: true }).functions.find((f) => f.name === kernel)!
  const { at, afterLoop } = globalBarriers(fn)
  return fn.instructions.flatMap((i, k) => (i.op === 'bar' || i.op === 'barrier' ? [afterLoop.has(k) ? 'exit' as const : at.has(i)] : []))
}

/** The same from the WGSL: storageBarrier() before each workgroupBarrier(), and those on their own (a loop's exit). */
function wgslPlacement(ptx: string, kernel: string): { before: boolean[]; alone: number } {
  const m = translateModule(decodeModule(parsePtx(ptx), { perFunction: true }), target, ptx)
  const wgsl = m.kernels.get(kernel)!.wgsl
  const before = [...wgsl.matchAll(/(storageBarrier\(\);\s*)?workgroupBarrier\(\);/g)].map((x) => x[1] !== undefined)
  return { before, alone: (wgsl.match(/storageBarrier\(\);/g) ?? []).length - before.filter(Boolean).length }
}

const s = suite('storageBarrier where a barrier orders global memory')

s('a global write before the barrier and a read after it (neighbours through global memory)', () => {
  assert.equal(placement(barriers, 'raw_neighbour'), [true])
})

s('a global read before the barrier and a write after it', () => {
  assert.equal(placement(barriers, 'war_neighbour'), [true])
})

s('a read carried over a barrier with shared memory only after it, to a write after the next: the second orders them', () => {
  assert.equal(placement(barriers, 'war_two_barriers'), [false, true])
})

s('a tile loop whose global write comes after the loop: one storageBarrier on the loop\'s exit, none in the loop', () => {
  assert.equal(placement(barriers, 'tile_sum'), [false, 'exit'])
  assert.equal(placement(plumbing, 'matmul_tile16'), [false, 'exit'])
  for (const [ptx, k] of [[barriers, 'tile_sum'], [plumbing, 'matmul_tile16']] as const) assert.equal(wgslPlacement(ptx, k), { before: [false, false], alone: 1 }, k)
})

s('a reduction: global reads, then a tree in shared memory, a store at the end: only the first barrier', () => {
  assert.equal(placement(plumbing, 'reduce_sum_shared'), [true, false])
})

s('only shared memory before the barrier: no storageBarrier; and the WGSL says what globalBarriers says', () => {
  assert.equal(placement(barriers, 'scale_by_first'), [false])
  for (const [ptx, k] of [[barriers, 'raw_neighbour'], [barriers, 'war_two_barriers'], [plumbing, 'reduce_sum_shared'], [barriers, 'scale_by_first']] as const) {
    assert.equal(wgslPlacement(ptx, k), { before: placement(ptx, k), alone: 0 }, k)
  }
})

s('predication only where threads can be inactive: a tile loop under a uniform branch has no kp_on tests; an early return before a barrier keeps them', () => {
  const wgsl = (ptx: string, k: string) => translateModule(decodeModule(parsePtx(ptx), { perFunction: true }), target, ptx).kernels.get(k)!.wgsl
  const mm = wgsl(plumbing, 'matmul_tile16')
  assert.not.match(mm, /if \(kp_on\)/)
  assert.not.match(mm, /kp_block_count\(/, 'no vote before the loop: every thread reaches it')
  assert.match(mm, /if \(!\(r_p\d+\)\) \{/, 'the K < 1 test is a WGSL if')
  assert.match(wgsl(barriers, 'partial_exit'), /if \(kp_on\) \{/)
})

s.run()
