// The backend's side of its worker threads (issue 13 item 3, issue 17 item 4): a pool of workers that share
// the heap (growable SharedArrayBuffers, heap.ts), each running lanes of a launch: it takes chunks of
// contiguous blocks from a shared counter until none is left (the barrier-free whole-grid fast path runs one
// call per chunk). The calling thread only waits for messages, so a runaway kernel never blocks its event
// loop: an AbortSignal or a timeout terminates the busy workers, which are replaced on the next launch, and
// the module stays usable. Environment-agnostic: a ThreadHost spawns the workers (node/threads.ts for
// worker_threads, web-threads.ts for Web Workers).
import type { Heap } from './heap.js'
import type { WasmCode } from './wasm/tier.js'
import type { KernelInfo, LaneLaunch } from './run-blocks.js'
import { CTRL_NEXT, CTRL_STOP, CTRL_WORDS, type FromWorker, type Printed, type ToWorker } from './worker-protocol.js'

/** One worker thread, as the pool drives it. */
export interface ThreadPort {
  post(m: ToWorker): void
  /** Stops the worker, whatever it is running; resolves once it no longer runs (Node) or at once. */
  terminate(): Promise<void> | void
  /** Node: keep the process alive while a launch runs (ref) and not while the worker idles (unref). */
  ref?(): void
  unref?(): void
}

/** Where worker threads come from: worker_threads in Node, Web Workers in browsers. */
export interface ThreadHost {
  /** How messages name these threads: `worker_threads`, `Web Workers`. */
  readonly kind: string
  /** The package's self-contained worker script for them (`dist/node/worker.js`, `dist/web-worker.js`). */
  readonly script: string
  /** Why workers sharing memory cannot run here (no Worker, a page that is not cross-origin isolated), or
   *  undefined when they can. */
  unavailable(): string | undefined
  /** How many workers `workers` defaults to: the cores available. */
  cores(): number
  /** Starts a worker running the emulator's worker script (or `workerUrl`). `error` reports a worker that
   *  failed to start or died. */
  spawn(events: { message(m: FromWorker): void; error(e: Error): void }, workerUrl?: string | URL): ThreadPort
}

interface Lane {
  port: ThreadPort
  ready: Promise<void>
  started: boolean
  dead: boolean
  heapSent: boolean
  modules: Set<number>
  /** Takes the lane out of its pool (it died or was stopped). */
  detach?: () => void
  /** The launch being run: what to call when it ends or fails. */
  onEnd?: (m: Extract<FromWorker, { t: 'end' }>) => void
  onPrint?: (printed: Printed[]) => void
  onDeath?: (e: Error) => void
}

/** A launch as the pool runs it. */
export interface PoolJob {
  mod: number
  source: string
  /** The module's WebAssembly kernels, bound by each worker to the shared memory. */
  wasm?: WasmCode
  kernel: KernelInfo
  kernelName: string
  /** One entry per participating worker (lane i runs on worker i). */
  lanes: LaneLaunch[]
  nblocks: number
  chunk: number
  ranges: Float64Array
  print(text: string): void
  /** The error for a fault a worker reported (the EmulatorFault, load-module.ts faultOf). */
  fault(i: number, a: number | bigint | undefined, what: string): Error
  /** The error for a block a worker found stalled (a deadlock fault). */
  stalled(e: { block: number; thread: number; pc: number }): Error
  signal?: AbortSignal
  /** Abort the launch once it has run this many milliseconds (counted from when the workers are ready). */
  timeoutMs?: number
  /** The error to reject with when aborted (`timedOut`: by the deadline). */
  abortError(timedOut: boolean): Error
}

/** Thrown by run() when the workers cannot start at all (a worker script that does not load): the backend
 *  then runs on the calling thread and says why. */
export class PoolUnavailable extends Error {}

/** After the first fault, how long the other lanes may take to finish their chunk before they are stopped. */
const FAULT_GRACE_MS = 1000

/** Workers of disposed pools, idle and reset, per host: the next pool starts with them (starting a worker
 *  costs tens of milliseconds, hundreds from the TypeScript sources). */
const idleLanes = new WeakMap<ThreadHost, Map<string, Lane[]>>()
const MAX_IDLE = 16

export class WorkerPool {
  private readonly lanes: Array<Lane | undefined> = []
  private readonly ctrl = new Int32Array(new SharedArrayBuffer(CTRL_WORDS * 4))
  private launchSeq = 0
  /** Why the workers could not start, once that happened. */
  broken: string | undefined

  constructor(readonly host: ThreadHost, readonly size: number, private readonly heap: Heap, private readonly workerUrl?: string | URL) {}

  /** This pool's list of idle workers of its host and script. */
  private idle(): Lane[] {
    let byUrl = idleLanes.get(this.host)
    if (!byUrl) idleLanes.set(this.host, byUrl = new Map())
    const key = String(this.workerUrl ?? '')
    let list = byUrl.get(key)
    if (!list) byUrl.set(key, list = [])
    return list
  }

  private spawn(i: number): Lane {
    const idle = this.idle().pop()
    if (idle) return this.adopt(i, idle)
    let resolve!: () => void, reject!: (e: Error) => void
    const lane: Lane = { port: undefined as unknown as ThreadPort, ready: new Promise<void>((a, b) => { resolve = a; reject = b }), started: false, dead: false, heapSent: false, modules: new Set() }
    lane.ready.catch(() => {})
    const gone = (e: Error) => {
      if (lane.dead) return
      lane.dead = true
      lane.detach?.()
      const list = this.idle()
      if (list.includes(lane)) list.splice(list.indexOf(lane), 1)
      if (!lane.started) reject(e)
      lane.onDeath?.(e)
    }
    try {
      lane.port = this.host.spawn({
        message: (m) => {
          if (m.t === 'ready') { lane.started = true; lane.port.unref?.(); resolve() } else if (m.t === 'print') lane.onPrint?.(m.printed)
          else lane.onEnd?.(m)
        },
        error: gone,
      }, this.workerUrl)
    } catch (e) {
      reject(e instanceof Error ? e : new Error(String(e)))
      return lane
    }
    return this.adopt(i, lane)
  }

  private adopt(i: number, lane: Lane): Lane {
    this.lanes[i] = lane
    lane.detach = () => { if (this.lanes[i] === lane) this.lanes[i] = undefined }
    return lane
  }

  /** Starts the workers (so that the first launch does not wait for them), reporting nothing. */
  warm(): void {
    if (this.broken) return
    for (let i = 0; i < this.size; i++) if (!this.lanes[i]) this.spawn(i).ready.catch(() => {})
  }

  /** The first n workers, started. */
  private async start(n: number): Promise<Lane[]> {
    const lanes: Lane[] = []
    for (let i = 0; i < n; i++) lanes.push(this.lanes[i] ?? this.spawn(i))
    try {
      await Promise.all(lanes.map((l) => l.ready))
    } catch (e) {
      // a worker that never started: the script did not load (a bundle without it), or Worker threw
      this.broken = `the ${this.host.kind} worker script could not be started (${(e as Error).message}); where a bundler left it out, ` +
        `ship @kernelpack/emulator's self-contained ${this.host.script} at that address, or pass its address as workerUrl`
      for (const l of lanes) void l.port?.terminate()
      this.lanes.length = 0
      throw new PoolUnavailable(this.broken)
    }
    return lanes
  }

  /** Runs a launch; resolves when every block ran, rejects with the first fault, an error, or an abort. */
  async run(job: PoolJob): Promise<void> {
    const lanes = await this.start(job.lanes.length)
    const launch = this.launchSeq++
    const ctrl = this.ctrl
    Atomics.store(ctrl, CTRL_NEXT, 0)
    Atomics.store(ctrl, CTRL_STOP, 0)
    const printed: Printed[] = []
    let open = lanes.length
    let failure: Error | undefined
    let settle!: () => void
    const finished = new Promise<void>((r) => { settle = r })
    const ended = new Set<Lane>()
    let graceTimer: ReturnType<typeof setTimeout> | undefined
    let deadlineTimer: ReturnType<typeof setTimeout> | undefined

    /** Stops the lanes that are still running (they are replaced at the next launch). */
    const stopRunning = async () => {
      Atomics.store(ctrl, CTRL_STOP, 1)
      const busy = lanes.filter((l) => !ended.has(l))
      for (const l of busy) {
        l.onEnd = l.onPrint = l.onDeath = undefined
        const i = this.lanes.indexOf(l)
        if (i >= 0) this.lanes[i] = undefined
      }
      await Promise.all(busy.map((l) => l.port.terminate()))
      for (const l of busy) ended.add(l)
      open = 0
      settle()
    }
    const fail = (e: Error) => {
      if (failure) return
      failure = e
      Atomics.store(ctrl, CTRL_STOP, 1)
      graceTimer = setTimeout(() => void stopRunning(), FAULT_GRACE_MS)
    }
    const abort = (timedOut: boolean) => {
      if (failure && !(failure as { aborted?: boolean }).aborted) return
      failure = Object.assign(job.abortError(timedOut), { aborted: true })
      void stopRunning()
    }

    lanes.forEach((lane, i) => {
      const done = () => {
        if (ended.has(lane)) return
        ended.add(lane)
        lane.onEnd = lane.onPrint = lane.onDeath = undefined
        lane.port.unref?.()
        if (--open === 0) settle()
      }
      lane.onPrint = (p) => { for (const [, text] of p) job.print(text) }
      lane.onEnd = (m) => {
        if (m.launch !== launch) return
        printed.push(...m.printed)
        if (m.fault) fail(m.fault.what === 'jsstack' ? job.fault(-1, undefined, 'jsstack') : job.fault(m.fault.i, m.fault.a, m.fault.what))
        else if (m.stalled) fail(job.stalled(m.stalled))
        else if (m.error) fail(Object.assign(new Error(`${job.kernelName}: ${m.error.message}`), { name: m.error.name, stack: m.error.stack }))
        done()
      }
      lane.onDeath = (e) => {
        fail(new Error(`launch of ${job.kernelName}: its ${this.host.kind} worker died (${e.message})`))
        done()
      }
      lane.port.ref?.()
      if (!lane.heapSent) {
        lane.port.post({ t: 'heap', heap: this.heap.buffer as SharedArrayBuffer, memory: this.heap.memory, ok: this.heap.ok.buffer as SharedArrayBuffer, ctrl: ctrl.buffer as SharedArrayBuffer })
        lane.heapSent = true
      }
      if (!lane.modules.has(job.mod)) {
        lane.port.post({ t: 'load', mod: job.mod, source: job.source, wasm: job.wasm })
        lane.modules.add(job.mod)
      }
      const l = job.lanes[i]!
      lane.port.post({ t: 'run', launch, mod: job.mod, kernel: job.kernel, lane: l, nblocks: job.nblocks, chunk: job.chunk, ranges: job.ranges })
    })

    const onAbort = () => abort(false)
    if (job.signal) {
      if (job.signal.aborted) abort(false)
      else job.signal.addEventListener('abort', onAbort, { once: true })
    }
    if (job.timeoutMs !== undefined) deadlineTimer = setTimeout(() => abort(true), job.timeoutMs)
    try {
      await finished
    } finally {
      job.signal?.removeEventListener('abort', onAbort)
      clearTimeout(graceTimer)
      clearTimeout(deadlineTimer)
    }
    // device printf in block order: what one thread running the grid would print
    printed.sort((a, b) => a[0] - b[0])
    for (const [, text] of printed) job.print(text)
    if (failure) throw failure
  }

  /** Tells every worker to forget a module. */
  unload(mod: number): void {
    for (const l of this.lanes) if (l?.modules.delete(mod)) l.port.post({ t: 'unload', mod })
  }

  /** Hands the idle workers to the next pool of this host (reset: no heap, no modules). */
  dispose(): void {
    const list = this.idle()
    for (const l of this.lanes) {
      if (!l) continue
      const busy = l.onEnd !== undefined
      const death = l.onDeath
      l.detach = l.onEnd = l.onPrint = l.onDeath = undefined
      // a launch still running there rejects (its worker is stopped below)
      death?.(new Error('the backend was disposed'))
      if (l.started && !l.dead && !busy && list.length < MAX_IDLE) {
        l.port.post({ t: 'reset' })
        l.heapSent = false
        l.modules.clear()
        list.push(l)
      } else void l.port.terminate()
    }
    this.lanes.length = 0
  }
}
