// The `cuda` backend: the CUDA driver API through koffi. libcuda is dlopen'ed once; only cuGetProcAddress_v2
// is looked up by name, every other entry point is resolved through it at the ABI version its declaration
// was written for (driver-api.ts) with the default-stream flag, as cudaGetDriverEntryPoint does. Each device
// uses its primary context, made current on the calling (JS) thread. All calls are synchronous koffi calls.
import type {
  Backend, BackendEvent, BackendFunction, BackendModule, BackendStream, DeviceInfo, ImageToLoad, KernelParams, LaunchConfig,
  PreparedLaunch, ParamBlockLayout,
} from '../backend.js'
import { CudaError, NoDriverError, fallbackErrorName } from '../errors.js'
import {
  Attr, DEFAULT_MAX_DYNAMIC_SHARED, FuncAttr, JitOption, LaunchAttribute, LaunchAttributeLayout, LaunchConfigLayout, ProcAddressFlags, ProcAddressStatus, Result, cudaVersionText, entryPoints,
  ptxVersionForDriver, type EntryName,
} from './driver-api.js'

type Koffi = typeof import('koffi')
type Fn = (...args: unknown[]) => number

export interface CudaBackendOptions {
  /** Device ordinal. @default 0 */
  device?: number
  /** Path of the driver library. @default `KERNELPACK_LIBCUDA`, else `libcuda.so.1` (`nvcuda.dll` on Windows) */
  libcudaPath?: string
  /** Resolve entry points with per-thread default-stream semantics (`CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`)
   * instead of the legacy default stream. @default false */
  perThreadDefaultStream?: boolean
}

interface CudaFunction extends BackendFunction {
  readonly handle: bigint
}

interface CudaStream extends BackendStream {
  readonly handle: bigint
}

interface CudaEvent extends BackendEvent {
  readonly handle: bigint
}

let koffiPromise: Promise<Koffi> | undefined
// The context current on the JS thread, as this module last set it: several backends (devices) may share the
// thread, so each makes its primary context current before it calls the driver (one comparison when it is).
// Contexts are compared by a small number given to each handle: a number comparison on the launch path, where
// comparing two bigints is a runtime call.
let currentContext = 0
const contextIds = new Map<bigint, number>()

// koffi registers prototypes by name, once per process.
const protos = new Map<string, unknown>()
const entryFunctions = new Map<string, Fn>()
// The loaded driver libraries, for the life of the process. koffi unloads a library (dlclose) once its object
// is garbage-collected, but the entry points come from cuGetProcAddress as raw addresses that do not keep it:
// without this, the first GC after createCudaBackend unmapped libcuda and the next driver call crashed
// (found by `pnpm test:gpu --self-test`, issue 18; test/runtime/cuda-lifetime.test.ts).
const loadedLibraries = new Set<unknown>()
// koffi is an optional dependency (issue 16): browser-only apps never need it, and a native module cannot be
// bundled. Its name goes through a variable and the bundlers' ignore comments, so webpack, Rspack, esbuild,
// Rollup and Vite leave the import to Node at run time instead of bundling koffi's loader (which then dies
// with "Cannot find the native Koffi module"). Whatever stops it loading is a NoDriverError: `auto` runs the
// emulator and says why; `cuda` says what to install.
const KOFFI = 'koffi'

function loadKoffi(): Promise<Koffi> {
  koffiPromise ??= import(/* webpackIgnore: true */ /* @vite-ignore */ KOFFI).then(
    (m) => ((m as { default?: Koffi }).default ?? m) as Koffi,
    (err: unknown) => { throw koffiError(err) },
  )
  return koffiPromise
}

/** Why koffi did not load, as a NoDriverError naming what to install. */
export function koffiError(err: unknown): NoDriverError {
  const text = err instanceof Error ? err.message : String(err)
  const first = text.split('\n')[0]!.trim()
  const missing = (err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' || (err as { code?: string }).code === 'MODULE_NOT_FOUND' || /Cannot find (module|package) ['"]koffi['"]/.test(text)
  const summary = missing
    ? 'koffi, the optional dependency the cuda backend calls the driver through, was not found'
    : `koffi, the native module the cuda backend calls the driver through, could not be loaded (${first})`
  const fix = missing
    ? 'Install it in the app that runs (`npm install koffi` or `pnpm add koffi`): npm and pnpm install it with @kernelpack/runtime unless optional dependencies are omitted, but a bundled app finds it only in its own dependencies'
    : 'Reinstall it (`npm install koffi`); in a bundled app keep koffi out of the bundle (an external) and in the app\'s own dependencies, so Node loads it from node_modules'
  return new NoDriverError(`${summary}. ${fix}, or load with { backend: 'emulator' } (or 'auto') to run the PTX on the CPU emulator.`, summary)
}

function defaultLibraryNames(): string[] {
  if (process.platform === 'win32') return ['nvcuda.dll']
  return ['libcuda.so.1', 'libcuda.so']
}

const noDriverHelp =
  'Install the NVIDIA driver (it provides libcuda.so.1; check with `nvidia-smi`), point KERNELPACK_LIBCUDA or the ' +
  "libcudaPath option at libcuda, or load with { backend: 'emulator' } (or 'auto') to run the PTX on the CPU emulator."

/** Opens libcuda, resolves the entry points, initialises the driver and retains the device's primary context. */
export async function createCudaBackend(options: CudaBackendOptions = {}): Promise<Backend & CudaBackendExtras> {
  const koffi = await loadKoffi()
  const driver = openDriver(koffi, options)
  return new CudaBackendImpl(driver, openDevice(driver, options.device))
}

type Library = ReturnType<Koffi['load']>

/** Loads the first driver library of `options` (or the defaults) that loads, kept for the life of the process. */
function loadLibrary(koffi: Koffi, options: CudaBackendOptions): { lib: Library; names: string[] } {
  const names = options.libcudaPath ? [options.libcudaPath] : process.env.KERNELPACK_LIBCUDA ? [process.env.KERNELPACK_LIBCUDA] : defaultLibraryNames()
  let lib: Library | undefined
  const failures: string[] = []
  for (const name of names) {
    try {
      lib = koffi.load(name)
      break
    } catch (err) {
      failures.push(`${name}: ${(err as Error).message}`)
    }
  }
  if (!lib) throw new NoDriverError(`no NVIDIA driver was found: could not load ${failures.join('; ')}. ${noDriverHelp}`, `no NVIDIA driver was found (could not load ${names.join(' or ')})`)
  loadedLibraries.add(lib)
  return { lib, names }
}

/** cuGetProcAddress_v2, the one entry point looked up by name; `path` names the library in the error. */
function procAddressLookup(lib: Library, path: string): Fn {
  try {
    return lib.func('int cuGetProcAddress_v2(const char *symbol, uint64_t pfn, int cudaVersion, uint64_t flags, uint64_t symbolStatus)') as Fn
  } catch {
    throw new NoDriverError(`the NVIDIA driver at ${path} has no cuGetProcAddress_v2 (it predates CUDA 12.0); update the NVIDIA driver to one that supports CUDA 12.0 or newer.`)
  }
}

/** Opens libcuda and resolves every entry point of driver-api.ts through cuGetProcAddress_v2. */
function openDriver(koffi: Koffi, options: CudaBackendOptions): Driver {
  const { lib, names } = loadLibrary(koffi, options)
  const getProcAddress = procAddressLookup(lib, names[0]!)

  // One scratch block for out-parameters: [0,8) and [8,16) outs, [64,320) a name buffer.
  const scratch = koffi.alloc('uint8_t', 1024) as bigint
  const scratchView = new DataView(koffi.view(scratch, 1024))
  const flags = options.perThreadDefaultStream ? ProcAddressFlags.perThreadDefaultStream : ProcAddressFlags.legacyStream

  const cu = {} as Record<EntryName, Fn>
  for (const ep of entryPoints) {
    scratchView.setBigUint64(0, 0n, true)
    scratchView.setInt32(8, -1, true)
    const r = getProcAddress(ep.name, scratch, ep.version, BigInt(flags), scratch + 8n)
    const status = scratchView.getInt32(8, true)
    const pfn = scratchView.getBigUint64(0, true)
    if (status === ProcAddressStatus.symbolNotFound) {
      throw new NoDriverError(`the NVIDIA driver has no ${ep.name} (cuGetProcAddress: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND); update the NVIDIA driver.`)
    }
    if (status === ProcAddressStatus.versionNotSufficient) {
      throw new NoDriverError(
        `the NVIDIA driver is too old for ${ep.name} as declared for CUDA ${cudaVersionText(ep.version)} (cuGetProcAddress: CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT); update the NVIDIA driver.`,
      )
    }
    if (r !== 0 || status !== ProcAddressStatus.success || pfn === 0n) {
      throw new NoDriverError(`cuGetProcAddress_v2(${JSON.stringify(ep.name)}, version ${ep.version}) failed: ${fallbackErrorName(r)} (${r}), status ${status}`)
    }
    cu[ep.name] = entryFunction(koffi, ep.proto, pfn)
  }
  return new Driver(koffi, cu, scratch, scratchView)
}

/** The JS function that calls the entry point at `pfn` with the koffi prototype `proto`. */
function entryFunction(koffi: Koffi, proto: string, pfn: bigint): Fn {
  let type = protos.get(proto)
  if (!type) protos.set(proto, (type = koffi.proto(proto)))
  // One JS function per entry point and address in the process: every backend (module) calls the same
  // function object, so the launch call site stays monomorphic and V8 calls the native function directly
  // (a second function object at that site makes it polymorphic: about 40 ns more per launch).
  const key = `${pfn}:${proto}`
  let f = entryFunctions.get(key)
  if (!f) entryFunctions.set(key, (f = (koffi.decode as (ptr: unknown, type: unknown) => unknown)(pfn, type) as Fn))
  return f
}

/** libcuda as one backend calls it: the resolved entry points, the scratch block their out-parameters land
 *  in, and result codes turned into CudaErrors. */
class Driver {
  constructor(readonly koffi: Koffi, readonly cu: Record<EntryName, Fn>, readonly scratch: bigint, readonly scratchView: DataView) {}

  readCString(ptr: bigint): string {
    return ptr === 0n ? '' : String(this.koffi.decode(ptr, 'char', -1))
  }

  errorText(code: number): { name: string; text: string } {
    let name = fallbackErrorName(code)
    let text = 'unknown error'
    if (this.cu.cuGetErrorName(code, this.scratch + 16n) === 0) name = this.readCString(this.scratchView.getBigUint64(16, true)) || name
    if (this.cu.cuGetErrorString(code, this.scratch + 16n) === 0) text = this.readCString(this.scratchView.getBigUint64(16, true)) || text
    return { name, text }
  }

  check(call: string, code: number, more?: string): void {
    if (code === 0) return
    const { name, text } = this.errorText(code)
    throw new CudaError(call, code, name, text, more)
  }

  outU64(): bigint {
    return this.scratchView.getBigUint64(0, true)
  }

  outI32(): number {
    return this.scratchView.getInt32(0, true)
  }
}

/** A device's primary context, and the number it is compared by (see currentContext). */
class PrimaryContext {
  readonly id: number

  constructor(private readonly driver: Driver, readonly handle: bigint) {
    if (!contextIds.has(handle)) contextIds.set(handle, contextIds.size + 1)
    this.id = contextIds.get(handle)!
  }

  /** Makes the context current on the JS thread unless this module made it current last. */
  makeCurrent(): void {
    if (currentContext !== this.id) {
      this.driver.check('cuCtxSetCurrent', this.driver.cu.cuCtxSetCurrent(this.handle))
      currentContext = this.id
    }
  }
}

/** The device a backend runs on, as the driver described it, and its primary context (current once opened). */
interface CudaDevice {
  /** The CUdevice. */
  readonly dev: number
  readonly driverVersion: number
  readonly name: string
  readonly cc: [number, number]
  readonly info: DeviceInfo
  readonly context: PrimaryContext
}

/** Initialises the driver, picks device `device` (0 unless given) and retains its primary context. */
function openDevice(driver: Driver, device: number | undefined): CudaDevice {
  const { cu, scratch } = driver
  driver.check('cuInit', cu.cuInit(0))
  driver.check('cuDriverGetVersion', cu.cuDriverGetVersion(scratch))
  const driverVersion = driver.outI32()
  driver.check('cuDeviceGetCount', cu.cuDeviceGetCount(scratch))
  const count = driver.outI32()
  if (count === 0) throw new NoDriverError(`the NVIDIA driver (CUDA ${cudaVersionText(driverVersion)}) reports no CUDA device. ${noDriverHelp}`, 'the NVIDIA driver reports no CUDA device')
  const ordinal = device ?? 0
  if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= count) {
    throw new RangeError(`device ${ordinal} does not exist: the driver reports ${count} device(s) (0…${count - 1})`)
  }
  driver.check('cuDeviceGet', cu.cuDeviceGet(scratch, ordinal))
  const dev = driver.outI32()
  const { name, cc, info } = describeDevice(driver, dev, driverVersion)
  driver.check('cuDevicePrimaryCtxRetain', cu.cuDevicePrimaryCtxRetain(scratch, dev))
  const ctx = driver.outU64()
  driver.check('cuCtxSetCurrent', cu.cuCtxSetCurrent(ctx))
  const context = new PrimaryContext(driver, ctx)
  currentContext = context.id
  return { dev, driverVersion, name, cc, info, context }
}

/** The device's name, compute capability and the DeviceInfo the backend reports. */
function describeDevice(driver: Driver, dev: number, driverVersion: number): { name: string; cc: [number, number]; info: DeviceInfo } {
  const { cu, scratch } = driver
  const attr = (a: number, what: string) => {
    driver.check(`cuDeviceGetAttribute(${what})`, cu.cuDeviceGetAttribute(scratch, a, dev))
    return driver.outI32()
  }
  const cc: [number, number] = [attr(Attr.computeCapabilityMajor, 'COMPUTE_CAPABILITY_MAJOR'), attr(Attr.computeCapabilityMinor, 'COMPUTE_CAPABILITY_MINOR')]
  const sms = attr(Attr.multiProcessorCount, 'MULTIPROCESSOR_COUNT')
  const warp = attr(Attr.warpSize, 'WARP_SIZE')
  // The launch limits' opt-in shared memory size; a driver that does not answer leaves it to the runtime's table.
  const optin = cu.cuDeviceGetAttribute(scratch, Attr.maxSharedMemoryPerBlockOptin, dev) === 0 ? driver.outI32() : undefined
  driver.check('cuDeviceGetName', cu.cuDeviceGetName(scratch + 64n, 256, dev))
  const nameBytes = new Uint8Array(driver.scratchView.buffer, 64, 256)
  const name = new TextDecoder().decode(nameBytes.subarray(0, Math.max(0, nameBytes.indexOf(0))))
  driver.check('cuDeviceTotalMem', cu.cuDeviceTotalMem(scratch, dev))
  const totalMemory = Number(driver.outU64())

  const info: DeviceInfo = { name, computeCapability: cc, totalMemory, ptxVersion: ptxVersionForDriver(driverVersion), multiProcessorCount: sms, warpSize: warp }
  if (optin !== undefined && optin > 0) info.maxSharedMemoryPerBlockOptin = optin
  return { name, cc, info }
}

const streamHandle = (s?: BackendStream | null): bigint => (s ? (s as CudaStream).handle : 0n)
const eventHandle = (e: BackendEvent): bigint => (e as CudaEvent).handle

/** The native blocks of a backend's prepared launches: freed when a launch is disposed (once), and whatever
 *  is left when the backend is. */
class NativeBlocks {
  private readonly live = new Set<bigint>()

  constructor(private readonly koffi: Koffi) {}

  alloc(bytes: number): bigint {
    const base = this.koffi.alloc('uint8_t', bytes) as bigint
    this.live.add(base)
    return base
  }

  free(base: bigint): void {
    if (this.live.delete(base)) this.koffi.free(base)
  }

  freeAll(): void {
    for (const b of this.live) this.koffi.free(b)
    this.live.clear()
  }
}

/** A kernel's launch marshalled once into native memory: each launch writes the grid, block, shared bytes and
 *  stream into the CUlaunchConfig and calls cuLaunchKernelEx with the parameter block the runtime packed into
 *  `bytes`. Its members are bound. */
class CudaPreparedLaunch implements PreparedLaunch {
  readonly bytes: Uint8Array
  private readonly base: bigint
  private readonly cfg32: Uint32Array
  private readonly cfg64: BigUint64Array
  private readonly handle: bigint
  private readonly ptrsAddr: bigint
  private readonly launchEx: Fn
  private readonly ctxId: number
  private maxShared = DEFAULT_MAX_DYNAMIC_SHARED
  private lastStream: BackendStream | null = null

  constructor(private readonly driver: Driver, private readonly context: PrimaryContext, private readonly blocks: NativeBlocks, private readonly fn: BackendFunction, layout: ParamBlockLayout) {
    // [CUlaunchConfig 64][CUlaunchAttribute 72][void* kernelParams[n]][param block, 16-aligned]
    const n = layout.offsets.length
    const attrOff = 64
    const ptrOff = attrOff + LaunchAttributeLayout.size
    const paramOff = Math.ceil((ptrOff + 8 * n) / 16) * 16
    const total = paramOff + Math.max(16, layout.size)
    const base = blocks.alloc(total)
    const ab = driver.koffi.view(base, total)
    new Uint8Array(ab).fill(0)
    this.cfg32 = new Uint32Array(ab, 0, 16)
    this.cfg64 = new BigUint64Array(ab, 0, 8)
    const ptrs = new BigUint64Array(ab, ptrOff, n)
    for (let i = 0; i < n; i++) ptrs[i] = base + BigInt(paramOff + layout.offsets[i]!)
    // the one launch attribute, CU_LAUNCH_ATTRIBUTE_COOPERATIVE with value 1 (cudaLaunchCooperativeKernel), counted only
    // in cooperative launches
    this.cfg64[LaunchConfigLayout.attrs / 8] = base + BigInt(attrOff)
    const attr = new Int32Array(ab, attrOff, LaunchAttributeLayout.size / 4)
    attr[LaunchAttributeLayout.id / 4] = LaunchAttribute.cooperative
    attr[LaunchAttributeLayout.value / 4] = 1
    this.bytes = new Uint8Array(ab, paramOff, layout.size)
    this.base = base
    this.handle = (fn as CudaFunction).handle
    this.ptrsAddr = base + BigInt(ptrOff)
    this.launchEx = driver.cu.cuLaunchKernelEx
    this.ctxId = context.id
  }

  readonly launch = (config: LaunchConfig): void => {
    const g = config.grid
    const b = config.block
    const cfg32 = this.cfg32
    cfg32[0] = g[0]; cfg32[1] = g[1]; cfg32[2] = g[2]
    cfg32[3] = b[0]; cfg32[4] = b[1]; cfg32[5] = b[2]
    cfg32[LaunchConfigLayout.sharedMemBytes / 4] = config.sharedBytes
    cfg32[LaunchConfigLayout.numAttrs / 4] = config.cooperative ? 1 : 0
    const stream = config.stream ?? null
    if (stream !== this.lastStream) {
      // a BigInt store costs a conversion: write the stream handle only when it changes
      this.cfg64[LaunchConfigLayout.hStream / 8] = stream ? (stream as CudaStream).handle : 0n
      this.lastStream = stream
    }
    if (currentContext !== this.ctxId) this.context.makeCurrent()
    if (config.sharedBytes > this.maxShared) this.raiseMaxShared(config)
    const launchEx = this.launchEx
    const r = launchEx(this.base, this.handle, this.ptrsAddr, 0n)
    if (r !== 0) this.driver.check(`cuLaunchKernelEx(${this.fn.name}, grid [${g.join(', ')}], block [${b.join(', ')}], ${config.sharedBytes} B shared${config.cooperative ? ', cooperative' : ''})`, r)
  }

  readonly dispose = (): void => {
    this.blocks.free(this.base)
  }

  private raiseMaxShared(config: LaunchConfig): void {
    // the kernel opted in to more than 48 KiB of dynamic shared memory (kernel.setAttribute, which the
    // runtime checked): cudaFuncSetAttribute's cuFuncSetAttribute, once per new value
    const value = Math.max(config.maxDynamicSharedBytes ?? 0, config.sharedBytes)
    this.driver.check(`cuFuncSetAttribute(${this.fn.name}, MAX_DYNAMIC_SHARED_SIZE_BYTES, ${value})`,
      this.driver.cu.cuFuncSetAttribute(this.handle, FuncAttr.maxDynamicSharedSizeBytes, value))
    this.maxShared = value
  }
}

/** A module loaded with cuModuleLoadDataEx. Its members are bound; unload disposes its prepared launches. */
class CudaModuleImpl implements BackendModule {
  private readonly launches: PreparedLaunch[] = []
  private readonly functions = new Map<string, CudaFunction>()

  constructor(
    private readonly driver: Driver,
    private readonly context: PrimaryContext,
    private readonly hmod: bigint,
    private readonly prepare: (fn: BackendFunction, layout: ParamBlockLayout) => PreparedLaunch,
  ) {}

  readonly getFunction = (fname: string): CudaFunction => {
    this.context.makeCurrent()
    let f = this.functions.get(fname)
    if (f) return f
    this.driver.check(`cuModuleGetFunction(${JSON.stringify(fname)})`, this.driver.cu.cuModuleGetFunction(this.driver.scratch, this.hmod, fname))
    f = { name: fname, handle: this.driver.outU64() }
    this.functions.set(fname, f)
    return f
  }

  readonly getGlobal = (gname: string): { address: bigint; size: number } => {
    const { driver } = this
    this.context.makeCurrent()
    driver.check(`cuModuleGetGlobal(${JSON.stringify(gname)})`, driver.cu.cuModuleGetGlobal(driver.scratch, driver.scratch + 8n, this.hmod, gname))
    return { address: driver.outU64(), size: Number(driver.scratchView.getBigUint64(8, true)) }
  }

  readonly prepareLaunch = (fn: BackendFunction, layout: ParamBlockLayout): PreparedLaunch => {
    const p = this.prepare(fn, layout)
    this.launches.push(p)
    return p
  }

  readonly unload = (): void => {
    this.context.makeCurrent()
    for (const p of this.launches) p.dispose?.()
    this.driver.check('cuModuleUnload', this.driver.cu.cuModuleUnload(this.hmod))
  }
}

/** The cuda backend over one device. Its public members are bound: callers may pass `backend.launch` around. */
class CudaBackendImpl implements Backend, CudaBackendExtras {
  readonly name = 'cuda'
  readonly imageKinds: ReadonlyArray<ImageToLoad['kind']> = ['cubin', 'ptx', 'fatbin']
  readonly driverVersion: number
  private readonly cu: Record<EntryName, Fn>
  private readonly context: PrimaryContext
  private readonly blocks: NativeBlocks
  private readonly generic = new WeakMap<BackendFunction, PreparedLaunch>()
  private disposed = false
  private nextStreamId = 1
  private nextEventId = 1

  constructor(private readonly driver: Driver, private readonly gpu: CudaDevice) {
    this.driverVersion = gpu.driverVersion
    this.cu = driver.cu
    this.context = gpu.context
    this.blocks = new NativeBlocks(driver.koffi)
  }

  private cur(): void {
    this.context.makeCurrent()
  }

  private check(call: string, code: number, more?: string): void {
    this.driver.check(call, code, more)
  }

  private prepare(fn: BackendFunction, layout: ParamBlockLayout): PreparedLaunch {
    return new CudaPreparedLaunch(this.driver, this.context, this.blocks, fn, layout)
  }

  readonly device = (): DeviceInfo => this.gpu.info

  readonly loadModule = (image: ImageToLoad): BackendModule => {
    this.cur()
    const hmod = this.loadImage(image)
    return new CudaModuleImpl(this.driver, this.context, hmod, (fn, layout) => this.prepare(fn, layout))
  }

  /** cuModuleLoadDataEx of the image, with the JIT's error and info logs; the module handle. */
  private loadImage(image: ImageToLoad): bigint {
    const { koffi } = this.driver
    // PTX must be NUL-terminated text; cubin/fatbin are passed as they are.
    const size = image.bytes.byteLength + 1
    const img = koffi.alloc('uint8_t', size) as bigint
    const logSize = 16384
    const logs = koffi.alloc('uint8_t', 2 * logSize + 64) as bigint
    try {
      const imgView = new Uint8Array(koffi.view(img, size))
      imgView.set(image.bytes)
      imgView[size - 1] = 0
      const lv = new DataView(koffi.view(logs, 2 * logSize + 64))
      // options (int[4]) at 0, values (void*[4]) at 16, error log at 64, info log at 64+logSize
      const opts = [JitOption.errorLogBuffer, JitOption.errorLogBufferSizeBytes, JitOption.infoLogBuffer, JitOption.infoLogBufferSizeBytes]
      opts.forEach((o, i) => lv.setInt32(i * 4, o, true))
      lv.setBigUint64(16, logs + 64n, true)
      lv.setBigUint64(24, BigInt(logSize), true)
      lv.setBigUint64(32, logs + 64n + BigInt(logSize), true)
      lv.setBigUint64(40, BigInt(logSize), true)
      const r = this.cu.cuModuleLoadDataEx(this.driver.scratch, img, 4, logs, logs + 16n)
      if (r !== 0) {
        this.check(`cuModuleLoadDataEx(${image.kind} ${image.arch}, ${image.bytes.byteLength} bytes)`, r, this.loadFailure(image, r, this.driver.readCString(logs + 64n).trim()))
      }
      return this.driver.outU64()
    } finally {
      koffi.free(img)
      koffi.free(logs)
    }
  }

  /** What a failed cuModuleLoadDataEx adds to its CudaError: why the image does not fit this driver or GPU,
   *  and the JIT's error log. */
  private loadFailure(image: ImageToLoad, r: number, errLog: string): string {
    const { name, cc, info, driverVersion } = this.gpu
    let more = errLog ? `JIT error log:\n${errLog}` : ''
    if (r === Result.unsupportedPtxVersion) {
      more = `The ${image.kind} ${image.arch} image was built by a newer CUDA toolkit than this driver supports (driver: CUDA ${cudaVersionText(driverVersion)}, PTX ISA up to ${info.ptxVersion![0]}.${info.ptxVersion![1]}). Update the NVIDIA driver, or build a cubin for this GPU (--arch sm_${cc[0]}${cc[1]}) or PTX with an older toolkit.${more ? '\n' + more : ''}`
    } else if (r === Result.noBinaryForGpu) {
      more = `The ${image.kind} ${image.arch} image does not run on ${name} (compute capability ${cc[0]}.${cc[1]}).${more ? '\n' + more : ''}`
    }
    return more
  }

  readonly alloc = (byteLength: number): bigint => {
    this.cur()
    if (byteLength === 0) return 0n
    this.check(`cuMemAlloc(${byteLength} bytes)`, this.cu.cuMemAlloc(this.driver.scratch, byteLength))
    return this.driver.outU64()
  }

  readonly free = (address: bigint): void => {
    this.cur()
    if (address !== 0n) this.check('cuMemFree', this.cu.cuMemFree(address))
  }

  readonly copyToDevice = (dst: bigint, src: Uint8Array, stream?: BackendStream | null): void => {
    this.cur()
    if (src.byteLength === 0) return
    if (stream) {
      // The host memory is a JS buffer that may move once we return: wait for the copy.
      this.check('cuMemcpyHtoDAsync', this.cu.cuMemcpyHtoDAsync(dst, src, src.byteLength, streamHandle(stream)))
      this.check('cuStreamSynchronize', this.cu.cuStreamSynchronize(streamHandle(stream)))
    } else this.check('cuMemcpyHtoD', this.cu.cuMemcpyHtoD(dst, src, src.byteLength))
  }

  readonly copyFromDevice = (dst: Uint8Array, src: bigint, stream?: BackendStream | null): void => {
    this.cur()
    if (dst.byteLength === 0) return
    if (stream) {
      this.check('cuMemcpyDtoHAsync', this.cu.cuMemcpyDtoHAsync(dst, src, dst.byteLength, streamHandle(stream)))
      this.check('cuStreamSynchronize', this.cu.cuStreamSynchronize(streamHandle(stream)))
    } else this.check('cuMemcpyDtoH', this.cu.cuMemcpyDtoH(dst, src, dst.byteLength))
  }

  readonly memset = (dst: bigint, byte: number, byteLength: number, stream?: BackendStream | null): void => {
    this.cur()
    if (byteLength === 0) return
    if (stream) this.check('cuMemsetD8Async', this.cu.cuMemsetD8Async(dst, byte & 0xff, byteLength, streamHandle(stream)))
    else this.check('cuMemsetD8', this.cu.cuMemsetD8(dst, byte & 0xff, byteLength))
  }

  readonly createStream = (): CudaStream => {
    this.cur()
    this.check('cuStreamCreate', this.cu.cuStreamCreate(this.driver.scratch, 0))
    return { id: this.nextStreamId++, handle: this.driver.outU64() }
  }

  readonly destroyStream = (stream: BackendStream): void => {
    this.cur()
    this.check('cuStreamDestroy', this.cu.cuStreamDestroy(streamHandle(stream)))
  }

  readonly synchronize = (stream?: BackendStream | null): void => {
    this.cur()
    if (stream) this.check('cuStreamSynchronize', this.cu.cuStreamSynchronize(streamHandle(stream)))
    else this.check('cuCtxSynchronize', this.cu.cuCtxSynchronize())
  }

  readonly launch = (fn: BackendFunction, config: LaunchConfig, params: KernelParams): void => {
    let p = this.generic.get(fn)
    if (!p || p.bytes.byteLength < params.bytes.byteLength) {
      p?.dispose?.()
      p = this.prepare(fn, { size: params.bytes.byteLength, offsets: params.offsets, sizes: params.sizes })
      this.generic.set(fn, p)
    }
    p.bytes.set(params.bytes)
    return p.launch(config) as void
  }

  readonly createEvent = (): CudaEvent => {
    this.cur()
    this.check('cuEventCreate', this.cu.cuEventCreate(this.driver.scratch, 0))
    return { id: this.nextEventId++, handle: this.driver.outU64() }
  }

  readonly recordEvent = (event: BackendEvent, stream?: BackendStream | null): void => {
    this.cur()
    this.check('cuEventRecord', this.cu.cuEventRecord(eventHandle(event), streamHandle(stream)))
  }

  readonly elapsedMs = (start: BackendEvent, end: BackendEvent): number => {
    this.cur()
    this.check('cuEventSynchronize', this.cu.cuEventSynchronize(eventHandle(end)))
    this.check('cuEventElapsedTime', this.cu.cuEventElapsedTime(this.driver.scratch, eventHandle(start), eventHandle(end)))
    return this.driver.scratchView.getFloat32(0, true)
  }

  readonly destroyEvent = (event: BackendEvent): void => {
    this.cur()
    this.check('cuEventDestroy', this.cu.cuEventDestroy(eventHandle(event)))
  }

  readonly dispose = (): void => {
    if (this.disposed) return
    this.disposed = true
    this.cur()
    this.blocks.freeAll()
    this.check('cuDevicePrimaryCtxRelease', this.cu.cuDevicePrimaryCtxRelease(this.gpu.dev))
  }
}

/** What the cuda backend offers beyond the Backend interface. */
export interface CudaBackendExtras {
  /** `cuDriverGetVersion` (CUDA x.y → x*1000 + y*10). */
  readonly driverVersion: number
}
