// The messages between the backend (pool.ts) and its worker threads (worker.ts), the same for Node's
// worker_threads and browsers' Web Workers. Everything is structured-cloneable; the heap, its validity map
// and the control words are SharedArrayBuffers, so they are shared, not copied.
import type { KernelInfo, LaneLaunch } from './run-blocks.js'
import type { WasmCode } from './wasm/tier.js'

/** Int32 slots of the pool's control words (a SharedArrayBuffer): the next chunk of blocks to take, and
 *  the stop flag a fault (or the backend, on abort) raises so that the other lanes take no further chunk. */
export const CTRL_NEXT = 0
export const CTRL_STOP = 1
export const CTRL_WORDS = 4

export type ToWorker =
  /** The heap: its shared WebAssembly.Memory where it has one (its `buffer` is read again at every run, as
   *  the memory grows), else the growable SharedArrayBuffer `heap`. */
  | { t: 'heap'; heap: SharedArrayBuffer; memory?: WebAssembly.Memory; ok: SharedArrayBuffer; ctrl: SharedArrayBuffer }
  | { t: 'load'; mod: number; source: string; wasm?: WasmCode }
  | { t: 'unload'; mod: number }
  /** The worker goes back to an idle pool: it forgets the heap and every module. */
  | { t: 'reset' }
  | {
    t: 'run'; launch: number; mod: number; kernel: KernelInfo; lane: LaneLaunch; nblocks: number
    /** Blocks per chunk: lanes take chunks [c·chunk, (c+1)·chunk) in turn (CTRL_NEXT) until none is left. */
    chunk: number
    ranges: Float64Array
  }

/** Device printf output of a chunk, tagged with its block, so the backend prints it in block
 *  order whichever lane ran which chunk (the order of one thread running the grid). */
export type Printed = [block: number, text: string]

export type FromWorker =
  | { t: 'ready' }
  /** Output flushed early (a lane holds at most ~1 MiB of it until the end of the launch). */
  | { t: 'print'; launch: number; printed: Printed[] }
  | {
    t: 'end'; launch: number; printed: Printed[]
    /** A kernel fault: the instruction's row in the module's table, the address, the kind. */
    fault?: { i: number; a: number | bigint | undefined; what: string }
    /** A block (or cooperative grid) whose threads wait forever (scheduler.ts StalledBlock). */
    stalled?: { block: number; thread: number; pc: number }
    /** Anything else thrown (JS stack overflow, an internal error). */
    error?: { name: string; message: string; stack?: string }
  }
