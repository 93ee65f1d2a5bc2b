// Cooperative launches (cudaLaunchCooperativeKernel; issue 14): every block of the grid is resident at once,
// so a block may wait for the others (cg::this_grid().sync(): one thread per block adds to a counter in the
// grid workspace, then spins on it). The emulator keeps every block's threads, shared memory and local memory,
// and runs the blocks in turns: each until it finished or stalled (its threads wait at yield points: the spin
// of the grid barrier, an mbarrier, a flag), then the next; a pass in which no block moved is a deadlock.
// Blocks run in index order each pass, which is one of the orders a GPU may give.
import { StalledBlock, STALL_LIMIT, Step, newThreadStates, resetBlock, stepBlock, type KernelFn, type ThreadState } from './scheduler.js'
import type { CompiledFunction } from './js/emit-js.js'
import type { Sanitizer } from './sanitizer/checker.js'

/** Runs the blocks 0 … nblocks-1 of a cooperative launch; `enter(b)` points the module's shared and local
 *  windows at block b's before each of its turns. */
export function runCooperative(K: KernelFn, cf: CompiledFunction, nblocks: number, nthreads: number, FB: number, enter: (b: number) => void, progress: () => number, san?: Sanitizer): void {
  const blocks: ThreadState[][] = []
  for (let b = 0; b < nblocks; b++) {
    const states = newThreadStates(nthreads, cf.regCount)
    resetBlock(states, nthreads)
    blocks.push(states)
  }
  const done = new Uint8Array(nblocks)
  let left = nblocks
  let stalls = 0
  while (left > 0) {
    let moved = false
    for (let b = 0; b < nblocks; b++) {
      if (done[b]) continue
      enter(b)
      const r = stepBlock(K, cf, blocks[b]!, nthreads, FB, b, progress, san)
      if (r === Step.Done) { done[b] = 1; left-- }
      if (r !== Step.Stuck) moved = true
    }
    stalls = moved ? 0 : stalls + 1
    if (stalls >= STALL_LIMIT) {
      const b = done.indexOf(0)
      throw new StalledBlock(b, blocks[b]!, nthreads)
    }
  }
}

/** Blocks of `nthreads` threads and `sharedBytes` of shared memory that fit on the emulated device at once,
 *  as cuOccupancyMaxActiveBlocksPerMultiprocessor × SMs counts them (the driver refuses a larger cooperative
 *  grid: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE). The emulated device has one SM of compute capability
 *  9.0's size: 2048 threads, 32 blocks, 228 KiB of shared memory (CUDA C++ Programming Guide, "Technical
 *  Specifications per Compute Capability"). */
export function coResidentBlocks(nthreads: number, sharedBytes: number, sms: number): number {
  const byThreads = Math.floor(2048 / nthreads)
  const byShared = sharedBytes > 0 ? Math.floor((228 * 1024) / sharedBytes) : 32
  return Math.min(32, byThreads, byShared) * sms
}
