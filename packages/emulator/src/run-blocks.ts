// The per-launch contract every thread of execution follows, the calling thread and each worker alike
// (issue 13 item 3): "run blocks b0 … b1-1 of kernel K with this launch state". The backend (backend.ts)
// lays a launch out once: the parameter block, and for each lane (a thread of execution that runs blocks)
// its own shared-memory window, local memory and parameter stack, since lanes run different blocks at the
// same time. A lane binds its instance to that state, then runs ranges of blocks.
import type { CompiledFunction } from './js/emit-js.js'
import type { LaunchState, ModuleInstance } from './instance.js'
import { runCooperative } from './cooperative.js'
import { RESERVED_SMEM } from '@kernelpack/ptx'
import { newThreadStates, runBlock, type KernelFn, type ThreadState } from './scheduler.js'
import type { Sanitizer } from './sanitizer/checker.js'

/** What a lane needs of a kernel to run its blocks: its CompiledFunction without its source (structured-
 *  cloneable, so a worker receives it as it is). */
export type KernelInfo = CompiledFunction

export function kernelInfo(cf: CompiledFunction): KernelInfo {
  // the thread-loop plan (functions, maps of IR facts) stays with the module; the code has it built in
  const { plan: _plan, ...rest } = cf
  return { ...rest, js: '' }
}

/** One lane's part of a launch: its launch state (setLaunch), where its parameter block is (FB), the block
 *  shape and how many blocks the grid has; where each block's shared and local memory is (a cooperative
 *  launch keeps every block's, `stride` apart; others reuse the lane's one window), and whether blocks start
 *  with zeroed reserved shared memory (%reserved_smem_offset_*, at RSV in the window). */
export interface LaneLaunch {
  state: LaunchState
  fb: number
  nthreads: number
  nblocks: number
  cooperative: boolean
  reserved: boolean
  shStride: number
  lnStride: number
}

/** Runs ranges of blocks of one launch on one lane (its instance already bound to the heap `h8`). Throws
 *  scheduler.ts's StalledBlock for a block (or cooperative grid) whose threads wait forever. */
export class BlockRunner {
  private readonly K: KernelFn
  private readonly states: ThreadState[] = []
  private readonly progress: () => number

  /** `san`: a checked launch's sanitizer (on the calling thread only), told of each block's windows, barriers
   *  and warp collectives. */
  constructor(private readonly inst: ModuleInstance, readonly kernel: KernelInfo, readonly lane: LaneLaunch, ranges: Float64Array, private readonly h8: () => Uint8Array, private readonly san?: Sanitizer) {
    inst.setLaunch(lane.state)
    inst.setRanges(ranges)
    this.K = inst.FN[kernel.index] as unknown as KernelFn
    this.progress = () => inst.progress()
    if (kernel.hasSuspend && !lane.cooperative) this.states = newThreadStates(lane.nthreads, kernel.regCount)
  }

  /** Points the windows at block b's and zeroes its reserved shared memory (cg's scratch barriers count
   *  from 0). */
  private enter(b: number): void {
    const { lane, inst } = this
    const at = lane.state.SB + (lane.cooperative ? b * lane.shStride : 0)
    inst.setBlock(at, lane.state.LB0 + (lane.cooperative ? b * lane.lnStride : 0))
    if (lane.reserved) this.h8().fill(0, at + lane.state.RSV, at + lane.state.RSV + RESERVED_SMEM)
    this.san?.enter(b, at, lane.reserved ? lane.state.RSV : -1)
  }

  /** Runs blocks [b0, b1) (linear block index, x fastest); a cooperative launch runs as one range, all its
   *  blocks resident and taking turns (cooperative.ts). Kernels without suspension points take the range in
   *  one call (the whole-grid fast path, per range). */
  run(b0: number, b1: number): void {
    const { K, kernel, lane } = this
    if (lane.cooperative) {
      for (let b = 0; b < lane.nblocks; b++) this.enter(b)
      runCooperative(K, kernel, lane.nblocks, lane.nthreads, lane.fb, (b) => this.enter(b), this.progress, this.san)
    } else if (!kernel.hasSuspend && !lane.reserved) K(null, 0, lane.nthreads, lane.fb, b0, b1)
    else {
      for (let b = b0; b < b1; b++) {
        this.enter(b)
        if (kernel.hasSuspend) runBlock(K, kernel, this.states, lane.nthreads, lane.fb, b, this.progress, this.san)
        else K(null, 0, lane.nthreads, lane.fb, b, b + 1)
      }
    }
  }
}

/** A JavaScript stack overflow from deep device recursion (it exhausts the JS stack before the emulated
 *  call stack) is the same fault as an emulated call-stack overflow. */
export function isJsStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message)
}
