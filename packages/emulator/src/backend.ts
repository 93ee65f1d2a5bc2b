// The `emulator` execution backend: implements the Backend contract of @kernelpack/ptx (backend.ts; the
// runtime re-exports it) over the emulated heap, type-checked against it.
//
// Where launches run (issue 13 item 3, issue 17 item 4): on `workers` worker threads (pool.ts) that share
// the heap through growable SharedArrayBuffers, each taking chunks of blocks, so the calling thread's event
// loop stays free and a runaway launch can be aborted (its workers are terminated and replaced); or, with
// `workers: 0` or where workers cannot share memory (a page that is not cross-origin isolated, no Worker),
// on the calling thread, in slices of blocks with a turn of the event loop between slices, so timers run
// and `signal`/`timeoutMs` take effect between slices (a single block that never ends cannot be stopped
// there). Operations are queued behind a running launch in order (one stream, as the legacy default
// stream): a copy, memset or free waits for the launches before it, and returns a Promise then; with
// nothing running they answer at once. See emit-js.ts for how a block's threads run and scheduler.ts for
// how barriers and warp collectives are resolved. Checked launches (`check`, issue 19: sanitizer/) run on the
// calling thread, whatever `workers` says: the sanitizer's shadow state lives there.
import { ptxText, RESERVED_SMEM, resolveCheck, type Backend, type BackendEvent, type BackendFunction, type BackendModule, type BackendStream, type CheckSetting, type DeviceInfo, type Dim3, type ImageToLoad, type KernelParams, type LaunchConfig, type MaybePromise, type SanitizerReport } from '@kernelpack/ptx'
import { EmulatorFault, PtxError, launchAbortError, timeoutReason } from './errors.js'
import type { CompiledFunction } from './js/emit-js.js'
import { describeThreadLoops } from './js/emit-thread-loops.js'
import { Heap, wasmMemoryUnavailable } from './heap.js'
import { codeGenerationRefusal, wasmCompileRefusal, type Evaluate } from './instance.js'
import { describeRow, faultOf, loadPtxModule, type LoadedModule } from './load-module.js'
import type { Codegen } from './wasm/tier.js'
import { defaultPrint } from './printf.js'
import { PoolUnavailable, WorkerPool, type ThreadHost } from './pool.js'
import { BlockRunner, isJsStackOverflow, kernelInfo, type KernelInfo, type LaneLaunch } from './run-blocks.js'
import { StalledBlock } from './scheduler.js'
import { coResidentBlocks } from './cooperative.js'
import { Sanitizer } from './sanitizer/checker.js'
import { sharedVariablesOf } from './sanitizer/shared-use.js'
import { envVar } from './env.js'

export type { Dim3 }

export interface EmulatorBackendOptions {
  /**
   * Worker threads that run a launch's blocks, sharing device memory (worker_threads in Node, Web Workers in
   * cross-origin-isolated pages). `0` runs launches on the calling thread. Where workers cannot share
   * memory, launches run on the calling thread whatever this says, and describeExecution() says why.
   * @default the cores available (os.availableParallelism(), navigator.hardwareConcurrency)
   */
  workers?: number
  /** Abort every launch that runs longer than this many milliseconds (a launch's own `timeoutMs` wins). */
  timeoutMs?: number
  /**
   * On the calling thread: give the event loop a turn after about this many milliseconds of running blocks
   * (timers, I/O and the page run; a launch's `signal` and `timeoutMs` take effect then), and return a
   * Promise from such a launch. Without it a launch on the calling thread runs to its end synchronously,
   * unless it has a `signal` or `timeoutMs` (then every 20 ms). @kernelpack/runtime sets 20.
   */
  yieldMs?: number
  /** Where the worker script is, for bundles that do not bundle it themselves (esbuild): the address of
   *  @kernelpack/emulator's `dist/web-worker.js` (browsers) or `dist/node/worker.js` (Node). */
  workerUrl?: string | URL
  /** Initial size of the emulated device memory in bytes (it grows on demand). @default 16 MiB */
  initialMemory?: number
  /** Upper limit of emulated device memory in bytes (with workers, this much address space is reserved
   *  up front; memory is committed as it grows). @default 2 GiB */
  memoryLimit?: number
  /** Receives device printf's text exactly as printed (no newline added), in a GPU's order: blocks one after
   *  another; within a warp statement by statement, lanes in order (each lane's k-th call of the block forms
   *  a group, placed where the warp made the first of them). Issue 32.
   *  @default Node: `process.stdout.write`; browsers: `console.log` per completed line */
  print?: (text: string) => void
  /**
   * Contract multiply-adds as `ptxas` does by default (`--fmad=true`): a `mul.f32`/`mul.f64` without a rounding
   * modifier and an `add`/`sub` of it in the same straight-line code become one fma, rounded once, where
   * ptxas fuses them (@kernelpack/ptx `analyzeContraction`; the README lists the rule). `false` rounds every
   * mul and add on its own, as `ptxas --fmad=false` does. PTX built with `nvcc --fmad=false` (or clang's
   * `-ffp-contract=off`) writes `.rn` on them, which never fuses: it needs no option. Issue 32.
   * @default true
   */
  fmad?: boolean
  /**
   * Run the threads of kernels with barriers or warp collectives as loops between them (POCL's work-item
   * loops; see the README). `false` makes every such kernel suspend its threads one by one at each barrier
   * and collective, the scheme kernels fall back to when their barriers are not region-formable (to compare
   * the two, or to rule the loops out while debugging). @default true
   */
  threadLoops?: boolean
  /**
   * How the modules' generated code becomes functions: `new Function` unless given. `await
   * loadInterpreter()` gives the interpreter (interpret.ts), for contexts that refuse code generation from
   * strings (a page's Content-Security-Policy without 'unsafe-eval'; codeGenerationRefusal() says whether this
   * is one): the same code with the same results, slower, on the calling thread.
   */
  evaluate?: Evaluate
  /**
   * The sanitizer (issue 19): `true` for all four checks (racecheck, synccheck, initcheck, memcheck), or
   * `{ race, sync, init, memory, mode }`, or the `KERNELPACK_CHECK` text (`1`, `race,sync`, …). Checked
   * launches run on the calling thread, in the continuation scheme (as with `threadLoops: false`). A failed check throws a SanitizerError (`mode: 'collect'`: collects
   * it, see `sanitizerReports()`). Off, nothing of it runs or is emitted. @default false
   */
  check?: CheckSetting
  /**
   * Which code runs the kernels (issue 24): `'auto'` WebAssembly for every kernel that has a lowering
   * (`mod.inspect(kernel)` says which tier a kernel got, and for JavaScript the first instruction that kept
   * it out) and JavaScript for the others; `'wasm'` the same, but a kernel without a lowering is refused
   * when it is looked up; `'js'` JavaScript only (to compare the tiers or rule one out). Checked launches
   * always run JavaScript. @default 'auto'
   */
  codegen?: Codegen
}

export type EmulatorFunction = BackendFunction
export type EmulatorLaunchConfig = LaunchConfig
export type EmulatorKernelParams = KernelParams
export type EmulatorDeviceInfo = DeviceInfo

/** A loaded PTX module; its methods answer synchronously. */
export interface EmulatorModule extends BackendModule {
  getFunction(name: string): EmulatorFunction
  getGlobal(name: string): { address: bigint; size: number }
  /** How a kernel runs its threads, as text: its thread loops between barriers and collectives with their
   *  PTX lines, the values kept per thread and per block, or why it falls back to the continuation scheme.
   *  (`KERNELPACK_EMULATOR_DEBUG=1` prints this for every kernel at load.) */
  inspect(kernel: string): string
  unload(): MaybePromise<void>
}

/** The emulator's implementation of the Backend contract (@kernelpack/ptx, backend.ts). loadModule, alloc,
 *  createStream and device answer synchronously; launch, the copies, memset, free and synchronize answer
 *  synchronously while nothing runs, and with a Promise once a launch is running (always await them). */
export interface EmulatorBackend extends Backend {
  readonly name: 'emulator'
  readonly imageKinds: ReadonlyArray<'ptx'>
  /** Worker threads launches run on; 0: the calling thread. */
  readonly workers: number
  device(): EmulatorDeviceInfo
  loadModule(image: ImageToLoad): EmulatorModule
  alloc(byteLength: number): bigint
  free(address: bigint): MaybePromise<void>
  copyToDevice(dst: bigint, src: Uint8Array, stream?: BackendStream | null): MaybePromise<void>
  copyFromDevice(dst: Uint8Array, src: bigint, stream?: BackendStream | null): MaybePromise<void>
  memset(dst: bigint, byte: number, byteLength: number, stream?: BackendStream | null): MaybePromise<void>
  createStream(): BackendStream
  destroyStream(stream: BackendStream): void
  synchronize(stream?: BackendStream | null): MaybePromise<void>
  launch(fn: EmulatorFunction, config: EmulatorLaunchConfig, params: EmulatorKernelParams): MaybePromise<void>
  /** Events (cudaEventRecord's model): a recorded event completes when everything queued before it has run,
   *  and takes the host clock then, so elapsedMs times the launches and copies between two events. */
  createEvent(): BackendEvent
  recordEvent(event: BackendEvent, stream?: BackendStream | null): MaybePromise<void>
  elapsedMs(start: BackendEvent, end: BackendEvent): Promise<number>
  destroyEvent(event: BackendEvent): void
  /** `launches run on 2 worker threads (worker_threads) …` or `launches run on the calling thread: why`. */
  describeExecution(): string
  /** The sanitizer's reports collected since the last call (`check: { mode: 'collect' }`), then cleared;
   *  always empty without `check`. */
  sanitizerReports(): SanitizerReport[]
  dispose(): void
}

/** Whether a kernel or a function it calls reads the reserved shared memory. */
function usesReservedSmem(mod: LoadedModule, cf: CompiledFunction, seen = new Set<string>()): boolean {
  if (cf.reservedSmem) return true
  seen.add(cf.name)
  for (const c of cf.calls) {
    const g = mod.functions.get(c)
    if (g && !seen.has(c) && usesReservedSmem(mod, g, seen)) return true
  }
  return false
}

/** A block's shared memory: the module's and the launch's dynamic bytes, then, when the kernel reads it,
 *  the reserved shared memory (%reserved_smem_offset_*) at `rsv`; `shn` bytes in all. */
function sharedLayout(mod: LoadedModule, cf: CompiledFunction, dyn: number): { reserved: boolean; rsv: number; shn: number } {
  const reserved = usesReservedSmem(mod, cf)
  const own = mod.layout.sharedStatic + dyn
  const rsv = reserved ? Math.ceil(own / 16) * 16 : 0
  return { reserved, rsv, shn: reserved ? rsv + RESERVED_SMEM : own }
}

/** Where a block stalled (scheduler.ts StalledBlock; a worker reports the same fields). */
export type Stall = Pick<StalledBlock, 'block' | 'thread' | 'pc'>

/** The fault of a launch whose threads wait for each other forever (scheduler.ts StalledBlock). */
function deadlock(mod: LoadedModule, cf: CompiledFunction, kernel: string, e: Stall, grid: Dim3, block: Dim3, cooperative: boolean): EmulatorFault {
  const row = cf.suspendAt.get(e.pc)
  const info = row === undefined ? undefined : mod.instrs[row]
  const at = (i: number, d: Dim3) => [i % d[0], Math.floor(i / d[0]) % d[1], Math.floor(i / (d[0] * d[1]))].join(', ')
  const why = cooperative
    ? 'no thread of any block changes what it waits for'
    : 'no thread of its block changes what it waits for; blocks run one after another, so a kernel whose blocks wait for each other needs a cooperative launch ({ cooperative: true })'
  const where = info ? describeRow(mod, info, kernel) : undefined
  return Object.assign(new EmulatorFault(`deadlock: thread (${at(e.thread, block)}) of block (${at(e.block, grid)}) keeps waiting and ${why}`, kernel, where?.text ?? 'a wait'), { source: where?.source })
}

class KernelHandle implements EmulatorFunction {
  readonly info: KernelInfo
  constructor(readonly name: string, readonly mod: LoadedModule, readonly cf: CompiledFunction, readonly modId: number) {
    this.info = kernelInfo(cf)
  }
}

const CALL_STACK = 1 << 16

/** KERNELPACK_EMULATOR_DEBUG set (Node; browsers have no environment): print each kernel's plan at load. */
function debugEnabled(): boolean {
  const v = envVar('KERNELPACK_EMULATOR_DEBUG')
  return v !== undefined && v !== '' && v !== '0'
}
/** On the calling thread, a launch with a signal or timeout runs in slices of about this many milliseconds
 *  (unless yieldMs says otherwise), with a turn of the event loop between them; a chunk of blocks grows
 *  while it takes less than CHUNK_MS. */
const SLICE_MS = 20
const CHUNK_MS = 2
/** Chunks per worker a launch's blocks are cut into (dynamic balancing between workers). */
const CHUNKS_PER_WORKER = 8

function callStackFault(kernel: string): EmulatorFault {
  return new EmulatorFault('call stack overflow (device recursion too deep)', kernel, 'call')
}

function addr(a: bigint, what: string): number {
  if (typeof a !== 'bigint') throw new TypeError(`${what}: device address must be a bigint`)
  if (a < 0n || a > 0xffffffffn) throw new RangeError(`${what}: 0x${a.toString(16)} is not an emulated device address`)
  return Number(a)
}

function dim(d: unknown, what: string): Dim3 {
  if (!Array.isArray(d) || d.length !== 3 || !d.every((x) => Number.isInteger(x) && x >= 1)) throw new TypeError(`launch: ${what} must be [x, y, z] of positive integers, got ${JSON.stringify(d)}`)
  return d as Dim3
}

function checkTimeout(ms: unknown, what: string): number | undefined {
  if (ms === undefined) return undefined
  if (typeof ms !== 'number' || !(ms > 0)) throw new TypeError(`${what}: timeoutMs must be a positive number of milliseconds, got ${String(ms)}`)
  return ms
}

/** A launch checked and laid out, before it runs. */
interface Plan {
  fn: KernelHandle
  grid: Dim3
  block: Dim3
  nthreads: number
  nblocks: number
  dyn: number
  params: Uint8Array
  signal: AbortSignal | undefined
  timeoutMs: number | undefined
  cooperative: boolean
}

/** With the interpreter, whether the kernels that have a WebAssembly lowering run on the WebAssembly tier
 *  (a page whose CSP allows 'wasm-unsafe-eval' but not 'unsafe-eval'; issue 24 item 5), for
 *  describeExecution(); empty where no kernel would (a checked backend, `codegen: 'js'`). */
function wasmBesideInterpreter(options: EmulatorBackendOptions, checked: boolean): string {
  if (checked || options.codegen === 'js') return ''
  const compile = wasmCompileRefusal()
  const refused = compile ?? wasmMemoryUnavailable(false)
  if (refused === undefined) return '; kernels with a WebAssembly lowering run on the emulator\'s WebAssembly tier instead, which this context compiles'
  // a browser's CSP refusal names 'unsafe-eval' only; 'wasm-unsafe-eval' is the source that allows WebAssembly alone
  const hint = compile?.startsWith('CompileError') ? '; \'wasm-unsafe-eval\' in the Content-Security-Policy allows it' : ''
  return `; no kernel runs on the emulator's WebAssembly tier: this context refuses WebAssembly too (${refused})${hint}`
}

/** Creates the PTX emulator backend over `threads` (the entries pass worker_threads or Web Workers). */
export function createBackend(options: EmulatorBackendOptions, threads: ThreadHost): EmulatorBackend {
  return new EmulatorBackendImpl(options, threads)
}

/** The backend's one stream: operations run in order behind a running launch, and at once when nothing runs. */
class OpQueue {
  /** Settles once everything queued so far has run; undefined while nothing runs. */
  pending: Promise<void> | undefined

  private track(p: Promise<unknown>): void {
    const t = p.then(() => {}, () => {})
    this.pending = t
    void t.then(() => { if (this.pending === t) this.pending = undefined })
  }

  /** Runs `op` now when nothing is running, else after what is queued. */
  schedule<T>(op: () => T | Promise<T>): T | Promise<T> {
    if (!this.pending) {
      const r = op()
      if (r instanceof Promise) this.track(r)
      return r
    }
    const p = this.pending.then(op)
    this.track(p)
    return p
  }
}

/** A launch's memory on the heap: per lane, its shared, local and parameter memory (LaneLaunch), and the
 *  grid workspace of a cooperative launch; `release` frees it all. */
interface LaidOut { lanes: LaneLaunch[]; nlanes: number; onWorkers: boolean; release: () => void }

/** A module loaded on the backend. Its methods are bound (callers may take `inspect` off the module). */
class EmulatorModuleImpl implements EmulatorModule {
  constructor(private readonly lm: LoadedModule, private readonly modId: number, private readonly unloadFrom: (lm: LoadedModule, modId: number) => MaybePromise<void>) {}

  /** The compiled kernel `name`, or an error naming why the emulator refused it or which kernels there are. */
  private entry(name: string): CompiledFunction {
    const lm = this.lm
    const cf = lm.functions.get(name)
    const why = lm.refused.get(name)
    if (why && lm.ir.functions.some((f) => f.name === name && f.kind === 'entry')) {
      // one kernel the emulator cannot run leaves its neighbours usable (issue 14)
      const reason = why.line === undefined ? why.message : why.message.slice(`PTX line ${why.line}: `.length)
      throw new PtxError(`kernel ${name} cannot run on the emulator: ${reason}`, why.line)
    }
    if (!cf || cf.kind !== 'entry') {
      const names = [...lm.functions.values()].filter((f) => f.kind === 'entry').map((f) => f.name)
      throw new Error(`kernel ${name} is not in this PTX module (kernels: ${names.join(', ') || 'none'})`)
    }
    return cf
  }

  readonly getFunction = (name: string): EmulatorFunction => new KernelHandle(name, this.lm, this.entry(name), this.modId)

  readonly inspect = (name: string): string => {
    const cf = this.entry(name)
    const tier = this.lm.tiers.get(name)
    const tierLine = tier?.tier === 'wasm' ? 'tier: WebAssembly' : `tier: JavaScript${tier?.why ? ` (not WebAssembly: ${tier.why})` : ''}`
    const simd = tier?.simd ? `\n  SIMD across threads: ${tier.simd}` : ''
    const ahead = tier?.readAhead ? `\n  read-ahead: each block first reads a word of the first cache lines the next block loads at ${tier.readAhead.length === 1 ? 'PTX line' : 'PTX lines'} ${tier.readAhead.join(', ')} (the hardware prefetcher then streams the rest while the block computes)` : ''
    const loops = tier?.loopTested ? `\n  loop ranges: each block tests once every address its threads can reach in the loops at ${tier.loopTested.length === 1 ? 'PTX line' : 'PTX lines'} ${tier.loopTested.join(', ')} (the loops' bounds give their iterations); 4 threads a step then run those loops without a test of their own` : ''
    const hull = tier?.hullTested ? `\n  thread-loop ranges: before each run of a thread loop, the first and the last of its threads' offsets are tested for the shared accesses at ${tier.hullTested.length === 1 ? 'PTX line' : 'PTX lines'} ${tier.hullTested.join(', ')}; 4 threads a step then make them without a test of their own` : ''
    const narrowed = tier?.narrowed !== undefined ? `\n  thread range: on WebAssembly each block runs only the threads its branch at PTX line ${tier.narrowed} keeps (an interval of %tid.x), in one thread loop a block instead of the whole-grid loop` : ''
    return `${describeThreadLoops(this.lm.ir.functions[cf.index]!, cf.plan, cf.rematerialized, cf.lockstepNotRun)}${simd}${narrowed}${ahead}${loops}${hull}\n  ${tierLine}`
  }

  readonly getGlobal = (name: string): { address: bigint; size: number } => {
    const g = this.lm.globals.get(name)
    // clang removes a `static __constant__`/`static __device__` variable that only host code writes
    // (issue 14); the build warns, and so does this
    if (!g) throw new Error(`variable ${name} is not a .global/.const variable of this PTX module (clang removes a static __constant__ or __device__ variable that no device code writes: declare it without 'static')`)
    return { address: BigInt(g.address), size: g.size }
  }

  readonly unload = (): MaybePromise<void> => this.unloadFrom(this.lm, this.modId)

  /** KERNELPACK_EMULATOR_DEBUG: each kernel's plan and the module's WebAssembly build, on stderr. */
  printDebug(): void {
    for (const cf of this.lm.functions.values()) if (cf.kind === 'entry') console.error(`[kernelpack emulator] ${this.inspect(cf.name)}`)
    const w = this.lm.wasmBuild
    if (w) console.error(`[kernelpack emulator] WebAssembly module: ${w.kernels} kernel${w.kernels === 1 ? '' : 's'}, ${w.bytes} bytes, written in ${w.writeMs.toFixed(1)} ms${w.compileMs === undefined ? '' : `, compiled in ${w.compileMs.toFixed(1)} ms`}; fma.rn.f32/.f64 ${w.fusedFma ? "as the CPU's fused multiply-add (relaxed SIMD, probed exact)" : 'by the exact paths (no fused relaxed SIMD multiply-add here, or KERNELPACK_EMULATOR_RELAXED_SIMD=0)'}`)
  }
}

/** The emulator backend (EmulatorBackend). Its public members are bound functions, as the object literal it
 *  replaced had them: callers may pass `backend.launch` around. */
class EmulatorBackendImpl implements EmulatorBackend {
  readonly name = 'emulator'
  readonly imageKinds: ReadonlyArray<'ptx'> = ['ptx']
  readonly allocZeroFilled = true
  private readonly wanted: number
  private readonly defaultTimeout: number | undefined
  /** Why this context cannot compile generated code (then kernels go through `evaluate`, the interpreter). */
  private readonly refusal: string | undefined
  private readonly evaluate: Evaluate | undefined
  /** Why launches cannot run on workers here, if they cannot. */
  private calling: string | undefined
  private readonly heap: Heap
  private readonly pool: WorkerPool | undefined
  private readonly print: (text: string) => void
  private readonly san: Sanitizer | undefined
  private readonly modules = new Set<LoadedModule>()
  private readonly queue = new OpQueue()
  private nextModule = 1
  private nextStream = 1
  private disposed = false

  constructor(private readonly options: EmulatorBackendOptions, private readonly threads: ThreadHost) {
    const wanted = options.workers ?? threads.cores()
    if (!Number.isInteger(wanted) || wanted < 0) throw new TypeError(`createEmulatorBackend: workers must be a non-negative integer, got ${String(options.workers)}`)
    this.wanted = wanted
    this.defaultTimeout = checkTimeout(options.timeoutMs, 'createEmulatorBackend')
    if (options.yieldMs !== undefined && !(typeof options.yieldMs === 'number' && options.yieldMs > 0)) throw new TypeError(`createEmulatorBackend: yieldMs must be a positive number of milliseconds, got ${String(options.yieldMs)}`)
    const check = resolveCheck(options.check, 'createEmulatorBackend: check')
    // a context that refuses code generation from strings (a page's Content-Security-Policy without
    // 'unsafe-eval') runs the modules' code through the interpreter (interpret.ts), on the calling thread
    this.refusal = codeGenerationRefusal()
    this.evaluate = options.evaluate
    this.calling = this.evaluate
      ? `kernels run through the emulator's interpreter (same results, slower)${this.refusal !== undefined ? ` because this context refuses to compile generated code (${this.refusal})` : ''}${wasmBesideInterpreter(options, check !== undefined)}`
      : check ? 'checks (the sanitizer) run there' : wanted === 0 ? 'workers: 0 was asked for' : threads.unavailable()
    this.heap = new Heap(options.initialMemory ?? 1 << 24, options.memoryLimit ?? 2 ** 31, { shared: this.calling === undefined })
    this.pool = this.calling === undefined ? new WorkerPool(threads, wanted, this.heap, options.workerUrl) : undefined
    this.print = options.print ?? defaultPrint()
    this.san = check ? new Sanitizer(check, this.heap) : undefined
  }

  private live(): void {
    if (this.disposed) throw new Error('the emulator backend was disposed')
  }

  get workers(): number {
    return this.pool && !this.pool.broken ? this.wanted : 0
  }

  readonly device = (): EmulatorDeviceInfo => ({
    name: 'kernelpack PTX emulator', computeCapability: [12, 0], totalMemory: this.options.memoryLimit ?? 2 ** 31,
    ptxVersion: [9, 1], multiProcessorCount: 1, warpSize: 32,
  })

  readonly describeExecution = (): string => {
    const pool = this.pool
    if (pool && !pool.broken) return `launches run on ${this.wanted} worker thread${this.wanted === 1 ? '' : 's'} (${this.threads.kind}) sharing device memory`
    return `launches run on the calling thread: ${pool?.broken ?? this.calling}`
  }

  readonly loadModule = (image: ImageToLoad): EmulatorModule => {
    this.live()
    if (image.kind !== 'ptx') throw new PtxError(`the emulator runs PTX only; got a ${image.kind} image for ${image.arch}`)
    if (this.refusal !== undefined && !this.evaluate) {
      throw new Error(`the emulator cannot compile kernels in this context: ${this.refusal}. Create the backend with { evaluate: await loadInterpreter() } (@kernelpack/runtime does where it has to) to run them through the interpreter, or allow 'unsafe-eval' in the page's Content-Security-Policy`)
    }
    const text = ptxText(image.bytes)
    const o = this.options
    const lm = loadPtxModule(text, this.heap, { print: this.print, threadLoops: o.threadLoops, fmad: o.fmad, evaluate: this.evaluate, sanitizer: this.san, codegen: o.codegen })
    this.modules.add(lm)
    // start the workers now, so that the first launch does not wait for them
    this.pool?.warm()
    const mod = new EmulatorModuleImpl(lm, this.nextModule++, (m, id) => this.unloadModule(m, id))
    if (debugEnabled()) mod.printDebug()
    return mod
  }

  private unloadModule(lm: LoadedModule, modId: number): MaybePromise<void> {
    if (!this.modules.has(lm)) return
    return this.queue.schedule(() => {
      if (!this.modules.delete(lm)) return
      for (const at of lm.owned) this.heap.free(at)
      this.pool?.unload(modId)
    })
  }

  readonly alloc = (byteLength: number): bigint => {
    this.live()
    // at once, even while a launch runs: a new allocation is memory no kernel can be using
    return BigInt(this.heap.alloc(byteLength))
  }

  readonly free = (address: bigint): MaybePromise<void> => {
    this.live()
    const at = addr(address, 'free')
    return this.queue.schedule(() => this.heap.free(at))
  }

  readonly copyToDevice = (dst: bigint, src: Uint8Array): MaybePromise<void> => {
    this.live()
    const at = addr(dst, 'copyToDevice')
    const data = this.queue.pending ? src.slice() : src
    return this.queue.schedule(() => {
      this.heap.check(at, data.length, 'copyToDevice')
      new Uint8Array(this.heap.buffer, at, data.length).set(data)
      this.heap.markWritten(at, data.length)
    })
  }

  readonly copyFromDevice = (dst: Uint8Array, src: bigint): MaybePromise<void> => {
    this.live()
    const at = addr(src, 'copyFromDevice')
    return this.queue.schedule(() => {
      this.heap.check(at, dst.length, 'copyFromDevice')
      dst.set(new Uint8Array(this.heap.buffer, at, dst.length))
    })
  }

  readonly memset = (dst: bigint, byte: number, byteLength: number): MaybePromise<void> => {
    this.live()
    const at = addr(dst, 'memset')
    return this.queue.schedule(() => {
      this.heap.check(at, byteLength, 'memset')
      new Uint8Array(this.heap.buffer, at, byteLength).fill(byte & 0xff)
      this.heap.markWritten(at, byteLength)
    })
  }

  readonly createStream = (): BackendStream => ({ id: this.nextStream++ })
  readonly destroyStream = (): void => {}
  readonly synchronize = (): MaybePromise<void> => this.queue.pending

  // Events: the one queue orders everything, so an event's time is when the work queued before it is done.
  private nextEvent = 1
  private readonly events = new Map<number, { done?: Promise<number> }>()
  readonly createEvent = (): BackendEvent => {
    this.live()
    const id = this.nextEvent++
    this.events.set(id, {})
    return { id }
  }
  readonly recordEvent = (event: BackendEvent): MaybePromise<void> => {
    this.live()
    const ev = this.events.get(event.id)
    if (!ev) throw new Error('recordEvent: not an event of this backend (or destroyed)')
    const before = this.queue.pending
    ev.done = before ? before.then(() => performance.now()) : Promise.resolve(performance.now())
  }
  readonly elapsedMs = async (start: BackendEvent, end: BackendEvent): Promise<number> => {
    const a = this.events.get(start.id)?.done, b = this.events.get(end.id)?.done
    if (!a || !b) throw new Error('elapsedMs: both events must have been recorded')
    const [ta, tb] = await Promise.all([a, b])
    return tb - ta
  }
  readonly destroyEvent = (event: BackendEvent): void => { this.events.delete(event.id) }

  readonly launch = (fn: EmulatorFunction, config: EmulatorLaunchConfig, params: EmulatorKernelParams): MaybePromise<void> => {
    this.live()
    const plan = this.planOf(fn, config, params)
    return this.queue.schedule(() => this.run(plan))
  }

  readonly sanitizerReports = (): SanitizerReport[] => (this.san ? this.san.take() : [])

  readonly dispose = (): void => {
    this.disposed = true
    this.modules.clear()
    this.pool?.dispose()
  }

  /** A launch checked against the kernel and the device, with its parameter bytes copied (the caller may
   *  reuse its buffer before the launch runs). */
  private planOf(fn: EmulatorFunction, config: EmulatorLaunchConfig, params: EmulatorKernelParams): Plan {
    if (!(fn instanceof KernelHandle)) throw new TypeError('launch: not a function of an emulator module')
    const { mod, cf } = fn
    if (!this.modules.has(mod)) throw new Error(`launch: the module of ${fn.name} was unloaded`)
    const grid = dim(config.grid, 'grid')
    const block = dim(config.block, 'block')
    const nthreads = block[0] * block[1] * block[2]
    if (nthreads > 1024) throw new RangeError(`launch ${fn.name}: ${nthreads} threads per block exceed the limit of 1024`)
    const dyn = config.sharedBytes ?? 0
    if (!Number.isInteger(dyn) || dyn < 0) throw new RangeError(`launch ${fn.name}: sharedBytes must be a non-negative integer`)
    if (params.bytes.length < cf.paramEnd) throw new TypeError(`launch ${fn.name}: the parameter block has ${params.bytes.length} bytes, the kernel's .param space needs ${cf.paramEnd}`)
    const nblocks = grid[0] * grid[1] * grid[2]
    const cooperative = config.cooperative === true
    if (cf.gridSync && !cooperative) {
      throw new Error(`launch ${fn.name}: the kernel synchronizes the whole grid (cg::this_grid().sync(): PTX line ${cf.gridSync.line} reads the grid workspace, \`${cf.gridSync.text}\`), which only a cooperative launch provides: launch it with { cooperative: true } (cudaLaunchCooperativeKernel)`)
    }
    if (cooperative) {
      const { shn } = sharedLayout(mod, cf, dyn)
      const fit = coResidentBlocks(nthreads, shn, this.device().multiProcessorCount ?? 1)
      if (nblocks > fit) throw new RangeError(`launch ${fn.name}: a cooperative launch of ${nblocks} blocks of ${nthreads} threads${shn ? ` and ${shn} bytes of shared memory` : ''} does not fit on the emulated device at once (at most ${fit} blocks; CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)`)
    }
    const timeoutMs = checkTimeout(config.timeoutMs, `launch ${fn.name}`) ?? this.defaultTimeout
    const signal = config.signal ?? undefined
    if (signal !== undefined && !(typeof signal === 'object' && 'aborted' in signal)) throw new TypeError(`launch ${fn.name}: signal must be an AbortSignal`)
    return { fn, grid, block, nthreads, nblocks, dyn, params: params.bytes.slice(), signal, timeoutMs, cooperative }
  }

  private rebind(lm: LoadedModule): void {
    if (lm.generation !== this.heap.generation) { lm.inst.setHeap(this.heap.buffer, this.heap.ok); lm.generation = this.heap.generation }
  }

  /** Lays the launch out (per-lane shared, local and parameter memory) and runs it. */
  private run(plan: Plan): void | Promise<void> {
    this.live()
    const { fn } = plan
    const { mod, cf } = fn
    if (!this.modules.has(mod)) throw new Error(`launch: the module of ${fn.name} was unloaded`)
    if (mod.upgrade) {
      // its WebAssembly, compiled asynchronously (load-module.ts), is ready: bind it, and have the workers
      // load the module again with it
      mod.upgrade()
      mod.upgrade = undefined
      this.pool?.unload(fn.modId)
    }
    if (plan.signal?.aborted) throw launchAbortError(fn.name, 'the signal was aborted before it ran', plan.signal.reason)
    const { lanes, nlanes, onWorkers, release } = this.layOut(plan)
    const ranges = this.heap.ranges()
    const deadline = () => (plan.timeoutMs === undefined ? undefined : performance.now() + plan.timeoutMs)
    let r: void | Promise<void>
    try {
      if (!onWorkers) r = this.runHere(plan, lanes[0]!, ranges, deadline())
      else {
        mod.running = fn.name
        r = this.pool!.run({
          mod: fn.modId, source: mod.source, wasm: mod.wasm, kernel: fn.info, kernelName: fn.name, lanes, nblocks: plan.nblocks,
          chunk: plan.cooperative ? plan.nblocks : Math.max(1, Math.floor(plan.nblocks / (nlanes * CHUNKS_PER_WORKER))), ranges, print: this.print,
          fault: (i, a, what) => (what === 'jsstack' ? callStackFault(fn.name) : faultOf(mod, i, a, what)),
          stalled: (e) => deadlock(mod, cf, fn.name, e, plan.grid, plan.block, plan.cooperative),
          signal: plan.signal, timeoutMs: plan.timeoutMs,
          abortError: (timedOut) => timedOut
            ? launchAbortError(fn.name, `it ran longer than timeoutMs (${plan.timeoutMs} ms); its worker threads were stopped and are replaced`, timeoutReason(plan.timeoutMs!))
            : launchAbortError(fn.name, 'the signal was aborted; its worker threads were stopped and are replaced', plan.signal?.reason),
        }).catch((e: unknown) => {
          if (!(e instanceof PoolUnavailable)) throw e
          // the workers could not start (a worker script the bundle left out): this thread runs it
          this.calling = e.message
          return this.runHere(plan, lanes[0]!, ranges, deadline())
        }).finally(() => { mod.running = undefined })
      }
    } catch (e) {
      release()
      throw e
    }
    if (r instanceof Promise) return r.finally(release)
    release()
  }

  /** The launch's memory: one lane per worker that takes part (one on the calling thread, one for a
   *  cooperative launch, which keeps every block resident on it), each with its shared, local and parameter
   *  memory, and a cooperative launch's grid workspace. */
  private layOut(plan: Plan): LaidOut {
    const heap = this.heap
    const { mod, cf } = plan.fn
    const onWorkers = this.pool !== undefined && !this.pool.broken
    // a cooperative launch keeps every block resident on one lane; others spread blocks over the workers
    const nlanes = onWorkers && !plan.cooperative ? Math.min(this.wanted, plan.nblocks) : 1
    const { reserved, rsv, shn } = sharedLayout(mod, cf, plan.dyn)
    // each thread's local memory, then (WebAssembly thread loops) the registers it keeps between loops
    const ln = Math.ceil(cf.stackNeed / 16) * 16 + (cf.slotBytes ?? 0)
    const frame = Math.max(cf.frameSize, plan.params.length)
    // the frames of device-function calls (PSP … PSEND): only a kernel that calls one has them (zeroing the
    // 64 KiB was about a tenth of a one-block launch on the calling thread: 18.5 against 16.3 µs here)
    const callStack = cf.calls.size ? CALL_STACK : 0
    // a cooperative launch keeps every block's shared and local memory; other lanes reuse one block's
    const resident = plan.cooperative ? plan.nblocks : 1
    const shStride = Math.ceil(Math.max(shn, 4) / 16) * 16
    const lnStride = Math.ceil(Math.max(ln * plan.nthreads, 4) / 16) * 16
    const regions: number[] = []
    const lanes: LaneLaunch[] = []
    let workspace = 0
    const release = () => {
      for (const r of regions) heap.free(r, true)
      if (workspace) heap.free(workspace)
    }
    try {
      // the grid workspace of cg::this_grid().sync() (%envreg1:%envreg2): a zeroed barrier counter, which the
      // kernel reaches through a global pointer
      const gws = plan.cooperative ? heap.alloc(16) : 0
      workspace = gws
      if (gws) heap.markWritten(gws, 16)
      for (let i = 0; i < nlanes; i++) {
        // the lane's own memory: never reachable as global memory (heap.ts, issue 17 item 3)
        const sb = heap.allocInternal(shStride * resident); regions.push(sb)
        const lb0 = heap.allocInternal(lnStride * resident); regions.push(lb0)
        const fb = heap.allocInternal(frame + callStack); regions.push(fb)
        new Uint8Array(heap.buffer, fb, plan.params.length).set(plan.params)
        lanes.push({
          fb, nthreads: plan.nthreads, nblocks: plan.nblocks, cooperative: plan.cooperative, reserved, shStride, lnStride,
          state: {
            SB: sb, SHN: shn, DYN: plan.dyn, LB0: lb0, LN: ln, LSZ: cf.stackNeed, PSP: fb + Math.ceil(frame / 16) * 16, PSEND: fb + frame + callStack, PB: fb, PE: fb + frame + callStack,
            NTX: plan.block[0], NTY: plan.block[1], NTZ: plan.block[2], NCX: plan.grid[0], NCY: plan.grid[1], NCZ: plan.grid[2], RSV: rsv, GWS: gws,
          },
        })
      }
    } catch (e) {
      release()
      throw e
    }
    return { lanes, nlanes, onWorkers, release }
  }

  /** Runs blocks on the calling thread, in slices (see the top of this file). */
  private runHere(plan: Plan, lane: LaneLaunch, ranges: Float64Array, deadline: number | undefined): void | Promise<void> {
    const { fn } = plan
    const lm = fn.mod
    const san = this.san
    let runner: BlockRunner | undefined
    let b = 0
    // without slices, the whole grid in one chunk (the barrier-free fast path in one call); a cooperative
    // launch's blocks take turns until all finished, so it is one chunk too
    const sliceMs = plan.cooperative ? undefined : this.options.yieldMs ?? (plan.signal || deadline !== undefined ? SLICE_MS : undefined)
    let chunk = sliceMs === undefined ? plan.nblocks : 1
    const aborted = (): Error | undefined => {
      if (plan.signal?.aborted) return launchAbortError(fn.name, 'the signal was aborted', plan.signal.reason)
      if (deadline !== undefined && performance.now() > deadline) return launchAbortError(fn.name, `it ran longer than timeoutMs (${plan.timeoutMs} ms)`, timeoutReason(plan.timeoutMs!))
      return undefined
    }
    /** One slice; true once every block ran. */
    const slice = (): boolean => {
      this.rebind(lm)
      lm.running = fn.name
      try {
        // a new runner after the first slice: other launches cannot run in between (the queue), but
        // the heap may have grown, and the kernel reads its views at each call
        if (!runner && san) {
          san.begin({
            kernel: fn.name, instrs: lm.instrs, files: lm.ir.files, sharedVars: sharedVariablesOf(lm.ir, fn.name, lm.sharedVars), globalVars: lm.globals,
            grid: plan.grid, block: plan.block, sb: lane.state.SB, shn: lane.state.SHN, dynamicStart: lm.layout.sharedStatic,
            lb0: lane.state.LB0, localBytes: lane.lnStride * (plan.cooperative ? plan.nblocks : 1), cooperative: plan.cooperative,
          })
        }
        runner ??= new BlockRunner(lm.inst, fn.info, lane, ranges, () => new Uint8Array(this.heap.buffer), san)
        const end = performance.now() + (sliceMs ?? Infinity)
        while (b < plan.nblocks) {
          const e = Math.min(b + chunk, plan.nblocks)
          const t0 = performance.now()
          runner.run(b, e)
          const t1 = performance.now()
          b = e
          if (t1 - t0 < CHUNK_MS && chunk < 1 << 30) chunk *= 2
          if (t1 >= end) break
        }
        if (b < plan.nblocks) return false
        san?.finish()
        san?.end()
        return true
      } catch (e) {
        san?.end()
        if (isJsStackOverflow(e)) throw callStackFault(fn.name)
        if (e instanceof StalledBlock) throw deadlock(lm, fn.cf, fn.name, e, plan.grid, plan.block, plan.cooperative)
        throw e
      } finally {
        lm.running = undefined
        // a slice runs whole blocks: their printf records are complete
        lm.printf.flush()
      }
    }
    const stop = aborted()
    if (stop) throw stop
    if (slice()) return
    return (async () => {
      for (;;) {
        await new Promise((r) => setTimeout(r, 0))
        const err = aborted()
        if (err) throw err
        if (slice()) return
      }
    })()
  }
}
