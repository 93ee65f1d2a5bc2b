// The runtime API over a Backend (DESIGN.md "Runtime API"): a Module from image bytes and a manifest, device
// buffers, and kernels whose launch checks and packs the arguments (marshal.ts) before anything runs.
// Shared by the Node entry (index.ts) and the browser entry (browser.ts); no Node built-ins here.
import type { KernelInfo, KernelManifest, OffloadEntry, ParamInfo, VariableInfo } from '@kernelpack/offload'
// the core reader: the zlib/zstd codecs of compressed binaries are loaded only when one is read (createModule)
import { exportOf, readOffloadEntries } from '@kernelpack/offload/core'
import { isPtxType, layoutParams, typeSize } from '@kernelpack/ptx'
import type { Backend, BackendFunction, BackendName, BackendModule, BackendStream, DeviceInfo, Dim3, LaunchConfig, PreparedLaunch, SanitizerReport } from './backend.js'
import { checkKernelAttribute, checkLaunchLimits, computeCapabilityOfArch, invalidValue, launchLimitsFor, type KernelAttribute, type LaunchLimits } from './launch-limits.js'
import { createPacker, createPackTarget, type KernelArg, type Packer, type PackTarget, type ValueLayouts } from './marshal.js'
import { entryKind, selectImage, type ImageChoice } from './select-image.js'

/** Device memory the host reads and writes: what DeviceBuffer and DeviceGlobal have in common. */
export interface DeviceMemory {
  /** Device address (CUdeviceptr); pass the handle itself as a pointer argument. */
  readonly address: bigint
  readonly byteLength: number
  /** A copy of the contents; or the contents copied into `into` (its byteLength bytes), which is returned. */
  download(): Promise<Uint8Array>
  download<T extends ArrayBufferView>(into: T): Promise<T>
  /** Copies `data` to the start of the memory. */
  write(data: ArrayBufferView): Promise<void>
  /** Sets every byte to `byte`. */
  fill(byte: number): Promise<void>
}

export interface DeviceBuffer extends DeviceMemory {
  /** Frees the memory; a second free() (or any use after it) is a CudaError CUDA_ERROR_INVALID_VALUE, as
   *  cuMemFree of a freed pointer is. */
  free(): Promise<void>
}

/**
 * A module-scope `__device__` (`.global`) or `__constant__` (`.const`) variable, from `mod.global(name)`:
 * `upload` is cudaMemcpyToSymbol, `download` cudaMemcpyFromSymbol. It lives as long as the module (no free).
 */
export interface DeviceGlobal extends DeviceMemory {
  /** The PTX name of the variable. */
  readonly name: string
  /** `global` (`__device__`) or `const` (`__constant__`), from the manifest; undefined when it lists none. */
  readonly space: 'global' | 'const' | undefined
  /** The same as byteLength (the size cuModuleGetGlobal reports). */
  readonly size: number
  /** Copies `data` to the start of the variable (the same as write). */
  upload(data: ArrayBufferView): Promise<void>
}

export type Dim = number | [number, number?, number?] | readonly number[]

export interface LaunchOptions {
  grid: Dim
  block: Dim
  /** Dynamic shared memory in bytes. @default 0 */
  sharedBytes?: number
  stream?: Stream
  /**
   * cudaLaunchCooperativeKernel: every block of the grid is resident at once, so blocks may wait for each
   * other; a kernel that calls `cg::this_grid().sync()` needs it (without it, the launch is refused). The
   * grid must fit on the device at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor × SMs), or the launch
   * fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. @default false
   */
  cooperative?: boolean
  /**
   * Aborts the launch (issue 17 item 4). A signal that is already aborted: the launch is refused on every
   * backend. On the emulator a running launch stops too: it rejects with an `AbortError` naming the kernel
   * (its worker threads are stopped and replaced; on the calling thread it stops between slices of blocks),
   * and the module stays usable. On WebGPU the grid runs in slices and stops between two of them (the device
   * is kept), or, when one slice runs on, by destroying the device (every module on it loses its memory; the
   * next loadModule opens a new one); the launch then resolves only when the kernel has finished. The cuda
   * backend cannot stop a kernel the driver runs.
   */
  signal?: AbortSignal
  /** The emulator and WebGPU abort the launch the same way once it ran this many milliseconds (default:
   *  loadModule's `timeoutMs`). */
  timeoutMs?: number
}

export interface Event {
  /** Records the event on `stream` (default: the default stream). */
  record(stream?: Stream): Promise<void>
  /** Waits for this event, then the milliseconds since `start` was recorded. */
  elapsedSince(start: Event): Promise<number>
  destroy(): Promise<void>
}

export interface Stream {
  readonly id: number
  synchronize(): Promise<void>
  destroy(): Promise<void>
}

export interface Kernel {
  /** The PTX `.entry` name. */
  readonly name: string
  readonly demangled: string
  /** The name the generated loader stub exports this kernel under (`vecAdd`, `axpby_float`). */
  readonly exportName: string | undefined
  readonly params: ParamInfo[]
  /**
   * Checks the launch configuration against the CUDA limits of the target (a CudaError
   * CUDA_ERROR_INVALID_VALUE, as the driver reports it), checks and packs `args` (in PTX order), then
   * launches. The promise resolves once the launch is queued, not when the kernel has finished: await
   * `mod.synchronize()` for that.
   */
  launch(opts: LaunchOptions, ...args: KernelArg[]): Promise<void>
  /**
   * cudaFuncSetAttribute: `'maxDynamicSharedMemorySize'` lets launches of this kernel use more than the
   * default 48 KiB of dynamic shared memory, up to the architecture's maximum (227 KiB on sm_90, 163 KiB on
   * sm_80/87, 99 KiB on sm_86/89/120, 96 KiB on sm_70, 64 KiB on sm_75). Beyond it: CUDA_ERROR_INVALID_VALUE.
   */
  setAttribute(attr: KernelAttribute, value: number): void
}

export interface BackendInfo {
  name: BackendName
  device: DeviceInfo
  /** Why this backend runs (`'auto'` explains its pick). */
  reason: string
}

export interface Module {
  backend: BackendInfo
  manifest: KernelManifest
  /** The image that was loaded and why. */
  image: { arch: string; kind: string; reason: string }
  upload(data: ArrayBufferView): Promise<DeviceBuffer>
  alloc(byteLength: number): Promise<DeviceBuffer>
  /**
   * A kernel by its PTX `.entry` name (`_Z6vecAddPfS_S_i`), its demangled signature (`vecAdd(float*, float*,
   * float*, int)`, or just `vecAdd` when that names one kernel) or the name the loader stub exports it under
   * (`vecAdd`, `axpby_float`). An unknown name is an Error listing the kernels under all their names.
   */
  kernel(name: string): Kernel
  createStream(): Promise<Stream>
  /** A timing event (cuda backend; the emulator may not have them). */
  createEvent(): Promise<Event>
  /** Waits until all work queued so far (or one stream's) has finished: `launch()` resolves earlier, when
   *  the launch is queued. */
  synchronize(stream?: Stream): Promise<void>
  /**
   * A module-scope `__device__` or `__constant__` variable by its PTX name, as a handle to read and write it
   * (cudaMemcpyToSymbol / cudaMemcpyFromSymbol) or pass as a pointer argument. An unknown name is an Error
   * listing the module's variables.
   */
  global(name: string): Promise<DeviceGlobal>
  /**
   * The sanitizer's reports collected since the last call (loaded with `check: { mode: 'collect' }`), which
   * the call clears: every module loaded with the same checks shares them. Empty without checks.
   */
  sanitizerReports(): SanitizerReport[]
  unload(): Promise<void>
}

export const isOffloadBinary = (bytes: Uint8Array) => bytes.length >= 4 && bytes[0] === 0x10 && bytes[1] === 0xff && bytes[2] === 0x10 && bytes[3] === 0xad

/** An offload binary's entries, or an error naming the source (also readImages's, images.ts). */
export function readOffloadImages(bytes: Uint8Array, sourceName: string): OffloadEntry[] {
  try {
    return readOffloadEntries(bytes)
  } catch (err) {
    throw new Error(`${sourceName}: not a readable offload binary: ${(err as Error).message}`, { cause: err })
  }
}

function checkDim(v: unknown, d: Dim, what: string, kernel: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 0x7fffffff) {
    throw new TypeError(`kernel ${kernel}: ${what} must be a positive integer or [x, y, z] of them, got ${JSON.stringify(d)}`)
  }
  return v
}

/** Writes a grid/block given as a number or [x, y?, z?] into `out` (no allocation on the launch path). */
function dim3(d: Dim, what: string, kernel: string, out: Dim3): Dim3 {
  if (typeof d === 'number' && d >= 1 && d <= 0x7fffffff && (d | 0) === d) {
    out[0] = d; out[1] = 1; out[2] = 1
    return out
  }
  if (typeof d === 'number') checkDim(d, d, what, kernel)
  if (!Array.isArray(d) || d.length < 1 || d.length > 3) throw new TypeError(`kernel ${kernel}: ${what} must be a number or [x, y, z], got ${JSON.stringify(d)}`)
  const x = checkDim(d[0], d, what, kernel)
  const y = checkDim(d[1] ?? 1, d, what, kernel)
  const z = checkDim(d[2] ?? 1, d, what, kernel)
  out[0] = x; out[1] = y; out[2] = z
  return out
}

/** Kernel parameters may take 32764 bytes in all (CUDA 12.1 and later; CUDA C++ Programming Guide,
 *  "Function Parameters"); nothing larger can be a parameter. */
const MAX_PARAM_BYTES = 32764

/** The parts of the manifest the runtime relies on, checked once with a message naming the bad place. */
function checkManifest(manifest: KernelManifest, source: string): void {
  const bad = (where: string, what: string) => {
    throw new TypeError(`${source}: manifest${where ? ` ${where}` : ''}: ${what} (expected the <name>.manifest.json written by kernelpack build)`)
  }
  if (!manifest || typeof manifest !== 'object' || !Array.isArray(manifest.kernels)) bad('', 'no kernels array')
  manifest.kernels.forEach((k, i) => {
    if (!k || typeof k.name !== 'string' || !k.name) bad(`kernels[${i}]`, 'no name')
    if (!Array.isArray(k.params)) bad(`kernels[${i}] (${k.name})`, 'no params array')
    k.params.forEach((p, j) => {
      const where = `kernels[${i}] (${k.name}) params[${j}]`
      const ok = p && typeof p.type === 'string' && Number.isInteger(p.size) && p.size >= 0 && Number.isInteger(p.align) && p.align >= 1 && (p.align & (p.align - 1)) === 0
      if (!ok) bad(where, `needs { type, size, align } with a power-of-two align, got ${JSON.stringify(p)}`)
      // the one PTX type table (@kernelpack/ptx): an own key, so `constructor` or `__proto__` is no type
      if (!isPtxType(p.type)) bad(where, `type ${JSON.stringify(p.type)} is not a PTX type (u32, f32, u64, b8, …)`)
      const elem = typeSize(p.type)
      if (p.size > MAX_PARAM_BYTES) bad(where, `a parameter of ${p.size} bytes is larger than the ${MAX_PARAM_BYTES} bytes a kernel's parameters may take in all`)
      if (p.count !== undefined && (!Number.isInteger(p.count) || p.count < 0)) bad(where, `count ${JSON.stringify(p.count)} is not an element count`)
      // a scalar is one element; an array (`.b8 s[24]`) is count elements
      if (p.size !== elem * (p.count ?? 1)) bad(where, p.count === undefined ? `size ${p.size} is not the ${elem} bytes of a .${p.type}` : `size ${p.size} is not ${p.count} × ${elem} bytes of .${p.type}`)
      // PTX aligns a scalar parameter to its own size; the packers index typed arrays by offset / size.
      const scalar = p.type !== 'b8' && (p.size === 1 || p.size === 2 || p.size === 4 || p.size === 8)
      if (scalar && p.align < p.size) bad(where, `a ${p.size}-byte .${p.type} parameter must be aligned to at least ${p.size}, got align ${p.align}`)
    })
    const end = layoutParams(k.params).end
    if (end > MAX_PARAM_BYTES) bad(`kernels[${i}] (${k.name})`, `the parameters take ${end} bytes, more than the ${MAX_PARAM_BYTES} a kernel may have`)
  })
}

/** Checks the manifest against a PTX image of the binary (ptx-interface.ts, loaded for it: a module whose
 *  chosen image is WGSL translated at build time carries each kernel's parameter offsets, which the webgpu
 *  backend compares with the launch's at every launch, so the PTX front end is not loaded for it; issue 25). */
async function checkManifestAgainstPtx(manifest: KernelManifest, entries: readonly OffloadEntry[], chosen: OffloadEntry, source: string): Promise<void> {
  if (entryKind(chosen) === 'wgsl') return
  const ptx = entryKind(chosen) === 'ptx' ? chosen : entries.find((e) => entryKind(e) === 'ptx')
  if (ptx) (await import('./ptx-interface.js')).checkManifestAgainstPtx(manifest, ptx, source)
}

const resolved = Promise.resolve()

/** A launch refused because its signal was aborted before it was queued: an AbortError naming the kernel
 *  (a DOMException, as fetch() rejects), with the signal's reason as its cause. */
function notLaunched(label: string, signal: AbortSignal): Error {
  const err = new DOMException(`kernel ${label} was not launched: its signal was already aborted`, 'AbortError')
  Object.defineProperty(err, 'cause', { value: signal.reason, writable: true, configurable: true })
  return err
}

/** Per kernel, what its generated launch reads; `prepared` is set once the first launch prepared the block. */
interface FastLaunchState {
  prepared: PreparedLaunch | undefined
  target: PackTarget | undefined
  configure(o: LaunchOptions): LaunchConfig
  general(o: LaunchOptions, args: unknown[]): Promise<void>
}

/**
 * `launch(o, a0, …, aN-1)` for a kernel of N parameters, generated so that the common launch (exactly N
 * arguments, block prepared) takes them as parameters: no rest array, straight into the generated packer,
 * whose checks are the same as `pack`'s. Any other call (another argument count, a slice, a zero-sized value,
 * the first launch, the emulator, after unload) goes to `general` with the arguments in an array. The source
 * holds only the parameter count. Undefined where `new Function` is refused.
 */
function generateFixedLaunch(n: number, state: FastLaunchState, packFixed: (t: PackTarget, ...a: unknown[]) => boolean): Kernel['launch'] | undefined {
  const names = Array.from({ length: n }, (_, i) => `a${i}`)
  const list = names.join(', ')
  const body = `'use strict'
return function launch(o${n ? ', ' + list : ''}) {
  const p = s.prepared
  if (p !== undefined && arguments.length === ${n + 1}) {
    try {
      const c = s.configure(o)
      if (pack(s.target${n ? ', ' + list : ''})) {
        const r = p.launch(c)
        return r ? r : resolved
      }
    } catch (err) {
      return Promise.reject(err)
    }
  }
  const args = [${list}]
  for (let i = ${n + 1}; i < arguments.length; i++) args.push(arguments[i])
  args.length = arguments.length > 0 ? arguments.length - 1 : 0
  return s.general(o, args)
}`
  try {
    return new Function('s', 'pack', 'resolved', body)(state, packFixed, resolved) as Kernel['launch']
  } catch {
    return undefined
  }
}

/** What a module shares with its kernels and variables: the backend and the loaded image, the CUDA limits
 *  launches are checked against, its streams, and whether it was unloaded. */
class ModuleState {
  unloaded = false
  readonly streams = new Map<Stream, BackendStream>()
  // What each kernel's generated launch reads: cleared on unload so launches take the checked general path.
  readonly fastStates: FastLaunchState[] = []

  constructor(
    readonly backend: Backend,
    readonly bmod: BackendModule,
    readonly sourceName: string,
    readonly timeoutMs: number | undefined,
    readonly limits: LaunchLimits,
    readonly layouts: ValueLayouts | undefined,
  ) {}

  alive(what: string): void {
    if (this.unloaded) throw new Error(`${this.sourceName}: ${what} after the module was unloaded`)
  }
}

// The CUDA limits launches are checked against: the device's on cuda (its own opt-in shared memory size
// when the driver reports it); for a backend that runs the image elsewhere (the emulator), those of the
// architecture the image was built for, so what runs there also runs on that GPU.
function limitsOf(backend: Backend, device: DeviceInfo, arch: string): LaunchLimits {
  const limitsCC = backend.name === 'cuda' ? device.computeCapability : computeCapabilityOfArch(arch) ?? device.computeCapability
  return launchLimitsFor(limitsCC, backend.name === 'cuda' ? device.maxSharedMemoryPerBlockOptin : undefined)
}

/** download/write/fill over `byteLength` bytes at `address`; `check` throws when the memory is gone. */
abstract class MemoryImpl implements DeviceMemory {
  readonly address: bigint
  readonly byteLength: number
  readonly #backend: Backend
  // the memory the methods work on, whatever is later assigned to the public properties
  readonly #address: bigint
  readonly #byteLength: number

  constructor(backend: Backend, address: bigint, byteLength: number) {
    this.#backend = backend
    this.address = this.#address = address
    this.byteLength = this.#byteLength = byteLength
  }

  /** Throws when the memory is gone; `what` names the operation. */
  protected abstract check(what: string): void

  readonly download = (async <T extends ArrayBufferView>(into?: T): Promise<T | Uint8Array> => {
    this.check('download')
    const byteLength = this.#byteLength
    if (into === undefined) {
      const out = new Uint8Array(byteLength)
      await this.#backend.copyFromDevice(out, this.#address)
      return out
    }
    if (!ArrayBuffer.isView(into)) throw new TypeError('download(into): into must be a TypedArray, DataView or Buffer')
    if (into.byteLength > byteLength) throw new RangeError(`download(into): into has ${into.byteLength} bytes but the memory holds ${byteLength}`)
    await this.#backend.copyFromDevice(new Uint8Array(into.buffer, into.byteOffset, into.byteLength), this.#address)
    return into
  }) as DeviceMemory['download']

  readonly write = async (data: ArrayBufferView): Promise<void> => {
    this.check('write')
    if (!ArrayBuffer.isView(data)) throw new TypeError('write(data): data must be a TypedArray, DataView or Buffer')
    if (data.byteLength > this.#byteLength) throw new RangeError(`write: ${data.byteLength} bytes do not fit in ${this.#byteLength}`)
    await this.#backend.copyToDevice(this.#address, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  }

  readonly fill = async (byte: number): Promise<void> => {
    this.check('fill')
    await this.#backend.memset(this.#address, byte, this.#byteLength)
  }
}

class DeviceBufferImpl extends MemoryImpl implements DeviceBuffer {
  readonly #backend: Backend
  readonly #address: bigint
  readonly #hex: string
  #freed = false

  constructor(backend: Backend, address: bigint, byteLength: number) {
    super(backend, address, byteLength)
    this.#backend = backend
    this.#address = address
    this.#hex = `0x${address.toString(16)}`
  }

  protected override check(what: string): void {
    // cuMemcpy*/cuMemset* on freed memory: the driver's CUDA_ERROR_INVALID_VALUE (or worse, someone else's data)
    if (this.#freed) throw invalidValue(`DeviceBuffer ${this.#hex} ${what}`, `${what} after free(): the buffer's memory was freed`)
  }

  readonly free = async (): Promise<void> => {
    // a second cuMemFree of the same pointer is CUDA_ERROR_INVALID_VALUE (and, once the address is reused, frees another buffer)
    if (this.#freed) throw invalidValue(`DeviceBuffer ${this.#hex} free`, 'free() after free(): the buffer was already freed')
    this.#freed = true
    await this.#backend.free(this.#address)
  }
}

class DeviceGlobalImpl extends MemoryImpl implements DeviceGlobal {
  readonly name: string
  readonly space: 'global' | 'const' | undefined
  readonly size: number
  readonly upload = this.write
  readonly #module: ModuleState
  readonly #name: string

  constructor(module: ModuleState, name: string, found: { address: bigint; size: number }, info: VariableInfo | undefined) {
    super(module.backend, found.address, found.size)
    this.#module = module
    this.name = this.#name = name
    this.space = info?.space
    this.size = found.size
  }

  protected override check(what: string): void {
    this.#module.alive(`${this.#name}.${what}`)
  }
}

/** Every name a kernel answers to (PTX name, demangled signature, the stub's export name), in a Map. */
class KernelNames {
  readonly #manifest: KernelManifest
  readonly #sourceName: string
  readonly #exportNames: Map<KernelInfo, string | undefined>
  readonly #byName = new Map<string, KernelInfo>()

  readonly #splitSignature: ((demangled: string) => { qualified: string }) | undefined

  /** `names`: nameKernels's answer; `splitSignature` from the same module, for C++ kernels (absent when every
   *  kernel is extern "C": then no name is a signature to split). */
  constructor(manifest: KernelManifest, sourceName: string, kernelNames: LoadedNames['kernelNames'], splitSignature: ((demangled: string) => { qualified: string }) | undefined) {
    this.#manifest = manifest
    this.#sourceName = sourceName
    this.#splitSignature = splitSignature
    this.#exportNames = new Map<KernelInfo, string | undefined>(kernelNames.map((n) => [n.kernel, n.exportName]))
    const byName = this.#byName
    for (const k of manifest.kernels) if (!byName.has(k.name)) byName.set(k.name, k)
    for (const k of manifest.kernels) if (!byName.has(k.demangled)) byName.set(k.demangled, k)
    for (const n of kernelNames) if (n.exportName && !byName.has(n.exportName)) byName.set(n.exportName, n.kernel)
  }

  exportName(k: KernelInfo): string | undefined {
    return this.#exportNames.get(k)
  }

  find(name: string): KernelInfo {
    if (typeof name !== 'string') throw new TypeError(`${this.#sourceName}: kernel(name): name must be a string, got ${typeof name}`)
    const exact = this.#byName.get(name)
    if (exact) return exact
    const kernels = this.#manifest.kernels
    // a function name (`scale`, `ns::k`) or one with template arguments (`scale<float>`): unique or ambiguous
    const byDemangled = kernels.filter((k) => {
      if (k.demangled === k.name || !this.#splitSignature) return false
      const q = this.#splitSignature(k.demangled).qualified
      const lt = q.indexOf('<')
      return q === name || (lt > 0 && q.slice(0, lt) === name)
    })
    if (byDemangled.length === 1) return byDemangled[0]!
    const list = kernels.map((k) => {
      const aka = [k.demangled !== k.name ? k.demangled : '', this.exportName(k) !== k.name ? this.exportName(k) ?? '' : ''].filter(Boolean)
      return aka.length ? `${k.name} (${aka.join('; ')})` : k.name
    }).join(', ')
    throw new Error(
      `${this.#sourceName}: no kernel ${JSON.stringify(name)}` + (byDemangled.length > 1 ? ` (ambiguous: ${byDemangled.length} overloads; use the PTX name, the full signature or the stub's export name)` : '') +
      `; kernels (PTX name (signature; export name)): ${list || 'none'}`,
    )
  }
}

class KernelImpl implements Kernel {
  readonly name: string
  readonly demangled: string
  readonly exportName: string | undefined
  readonly params: ParamInfo[]
  readonly launch: Kernel['launch']

  readonly setAttribute = (attr: KernelAttribute, value: number): void => {
    this.#module.alive(`setAttribute on ${this.#label}`)
    this.#config.maxDynamicSharedBytes = checkKernelAttribute(this.#label, attr, value, this.#module.limits)
  }

  readonly #module: ModuleState
  readonly #info: KernelInfo
  readonly #label: string
  readonly #packer: Packer
  readonly #config: LaunchConfig
  readonly #state: FastLaunchState
  #fn: BackendFunction | undefined
  #prepared: PreparedLaunch | undefined
  #target: PackTarget | undefined
  #init: Promise<void> | undefined

  constructor(module: ModuleState, info: KernelInfo, exportName: string | undefined) {
    this.#module = module
    this.#info = info
    const label = this.#label = info.demangled && info.demangled !== info.name ? `${info.name} (${info.demangled})` : info.name
    const packer = this.#packer = createPacker(label, info.params, { layouts: module.layouts })
    this.#config = { grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0, stream: null, maxDynamicSharedBytes: module.limits.defaultDynamicShared }
    const state = this.#state = { prepared: undefined, target: undefined, configure: this.#configure, general: this.#launchArgs }
    module.fastStates.push(state)
    this.name = info.name
    this.demangled = info.demangled
    this.exportName = exportName
    this.params = info.params
    this.launch = (packer.packFixed && generateFixedLaunch(info.params.length, state, packer.packFixed)) || ((o: LaunchOptions, ...args: KernelArg[]) => this.#launchArgs(o, args))
  }

  /** Checks the launch options and writes them into `config`. */
  readonly #configure = (o: LaunchOptions): LaunchConfig => {
    const config = this.#config
    const label = this.#label
    dim3(o.grid, 'grid', label, config.grid)
    dim3(o.block, 'block', label, config.block)
    const shared = o.sharedBytes ?? 0
    if (!Number.isInteger(shared) || shared < 0) throw new TypeError(`kernel ${label}: sharedBytes must be a non-negative integer, got ${shared}`)
    checkLaunchLimits(label, config.grid, config.block, shared, config.maxDynamicSharedBytes!, this.#module.limits)
    config.sharedBytes = shared
    config.cooperative = o.cooperative === true
    config.stream = o.stream ? this.#module.streams.get(o.stream) ?? null : null
    if (o.stream && !config.stream) throw new TypeError(`kernel ${label}: the stream does not belong to this module`)
    config.signal = o.signal
    if (o.signal?.aborted) throw notLaunched(label, o.signal)
    const timeoutMs = o.timeoutMs ?? this.#module.timeoutMs
    if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0)) throw new TypeError(`kernel ${label}: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`)
    config.timeoutMs = timeoutMs
    return config
  }

  #run(o: LaunchOptions, args: unknown[]): Promise<void> | void {
    const config = this.#configure(o)
    const packer = this.#packer
    packer.pack(args, this.#target!)
    if (this.#prepared) return this.#prepared.launch(config)
    // Backends without a prepared block may run later (the emulator): give them their own copies.
    return this.#module.backend.launch(this.#fn!, { grid: [...config.grid], block: [...config.block], sharedBytes: config.sharedBytes, stream: config.stream, maxDynamicSharedBytes: config.maxDynamicSharedBytes, cooperative: config.cooperative, signal: config.signal, timeoutMs: config.timeoutMs },
      { bytes: this.#target!.bytes.slice(), offsets: packer.layout.offsets, sizes: packer.layout.sizes })
  }

  /** Looks the function up and prepares its block; publishes both to the generated launch unless unloaded. */
  async #prepare(): Promise<void> {
    const f = await this.#module.bmod.getFunction(this.#info.name)
    const layout = this.#packer.layout
    const prepared = this.#prepared = this.#module.bmod.prepareLaunch?.(f, layout)
    const target = this.#target = createPackTarget(prepared ? prepared.bytes : new Uint8Array(layout.size))
    this.#fn = f
    if (!this.#module.unloaded && prepared) {
      this.#state.target = target
      this.#state.prepared = prepared
    }
  }

  async #slowLaunch(o: LaunchOptions, args: unknown[]): Promise<void> {
    this.#module.alive(`launching ${this.#label}`)
    // The first launch looks the function up and prepares its block, once even if launches overlap.
    this.#init ??= this.#prepare()
    try {
      await this.#init
    } catch (err) {
      this.#init = undefined
      throw err
    }
    await this.#run(o, args)
  }

  /** The launch with its arguments in an array: the first launch, slices, other backends, every error. */
  readonly #launchArgs = (o: LaunchOptions, args: unknown[]): Promise<void> => {
    if (!this.#fn) return this.#slowLaunch(o, args)
    try {
      if (this.#module.unloaded) this.#module.alive(`launching ${this.#label}`)
      const r = this.#run(o, args)
      return r ? r : resolved
    } catch (err) {
      return Promise.reject(err)
    }
  }
}

class ModuleImpl implements Module {
  readonly backend: BackendInfo
  readonly manifest: KernelManifest
  readonly image: { arch: string; kind: string; reason: string }

  readonly #shared: ModuleState
  readonly #names: KernelNames
  readonly #kernels = new Map<string, Kernel>()
  // Variables by PTX name; a Map, so that names like `__proto__` or `constructor` find nothing they should not.
  readonly #variables: Map<string, VariableInfo>
  readonly #globals = new Map<string, Promise<DeviceGlobal>>()

  constructor(backend: Backend, device: DeviceInfo, manifest: KernelManifest, choice: ImageChoice, bmod: BackendModule, opts: { sourceName: string; reason: string; timeoutMs?: number }, layouts: ValueLayouts | undefined, names: LoadedNames) {
    // how the backend runs launches (the emulator: worker threads, or the calling thread and why) can change
    // after loading (workers that fail to start), so it is read when asked
    this.backend = { name: backend.name, device, get reason() { const how = backend.describeExecution?.(); return how ? `${opts.reason}; ${how}` : opts.reason } }
    this.manifest = manifest
    this.image = { arch: choice.arch, kind: choice.kind, reason: choice.reason }
    this.#shared = new ModuleState(backend, bmod, opts.sourceName, opts.timeoutMs, limitsOf(backend, device, choice.arch), layouts)
    this.#variables = new Map<string, VariableInfo>((manifest.variables ?? []).map((v) => [v.name, v]))
    this.#names = new KernelNames(manifest, opts.sourceName, names.kernelNames, names.splitSignature)
  }

  readonly upload = async (data: ArrayBufferView): Promise<DeviceBuffer> => {
    const { backend } = this.#shared
    this.#shared.alive('upload')
    if (!ArrayBuffer.isView(data)) throw new TypeError(`upload: expected a TypedArray, DataView or Buffer, got ${typeof data}`)
    const address = await backend.alloc(data.byteLength)
    await backend.copyToDevice(address, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    return new DeviceBufferImpl(backend, address, data.byteLength)
  }

  readonly alloc = async (byteLength: number): Promise<DeviceBuffer> => {
    const { backend } = this.#shared
    this.#shared.alive('alloc')
    if (!Number.isSafeInteger(byteLength) || byteLength < 0) throw new RangeError(`alloc: byteLength must be a non-negative integer, got ${byteLength}`)
    const address = await backend.alloc(byteLength)
    if (!backend.allocZeroFilled) await backend.memset(address, 0, byteLength)
    return new DeviceBufferImpl(backend, address, byteLength)
  }

  readonly kernel = (name: string): Kernel => {
    this.#shared.alive('kernel()')
    const kernels = this.#kernels
    let k = kernels.get(name)
    if (!k) {
      const info = this.#names.find(name)
      // one Kernel per kernel, whichever name it was asked by: its attributes and prepared block are shared
      k = kernels.get(info.name) ?? new KernelImpl(this.#shared, info, this.#names.exportName(info))
      kernels.set(info.name, k)
      kernels.set(name, k)
    }
    return k
  }

  readonly createStream = async (): Promise<Stream> => {
    const { backend, streams } = this.#shared
    this.#shared.alive('createStream')
    const bs = await backend.createStream()
    const s: Stream = {
      id: bs.id,
      synchronize: async () => { await backend.synchronize(bs) },
      destroy: async () => {
        if (streams.delete(s)) await backend.destroyStream(bs)
      },
    }
    streams.set(s, bs)
    return s
  }

  readonly createEvent = async (): Promise<Event> => {
    const { backend, streams } = this.#shared
    this.#shared.alive('createEvent')
    if (!backend.createEvent || !backend.recordEvent || !backend.elapsedMs || !backend.destroyEvent) {
      throw new Error(`the ${backend.name} backend has no events`)
    }
    const be = await backend.createEvent()
    const ev: Event & { be: typeof be } = {
      be,
      record: async (stream?: Stream) => { await backend.recordEvent!(be, stream ? streams.get(stream) ?? null : null) },
      elapsedSince: async (start: Event) => backend.elapsedMs!((start as typeof ev).be, be),
      destroy: async () => { await backend.destroyEvent!(be) },
    }
    return ev
  }

  readonly synchronize = async (stream?: Stream): Promise<void> => {
    const { backend, streams } = this.#shared
    await backend.synchronize(stream ? streams.get(stream) ?? null : null)
  }

  readonly global = async (name: string): Promise<DeviceGlobal> => {
    this.#shared.alive('global')
    if (typeof name !== 'string') throw new TypeError(`${this.#shared.sourceName}: global(name): name must be a string, got ${typeof name}`)
    const globals = this.#globals
    let g = globals.get(name)
    if (!g) {
      g = this.#makeGlobal(name)
      globals.set(name, g)
      g.catch(() => globals.delete(name))
    }
    return g
  }

  readonly sanitizerReports = (): SanitizerReport[] => {
    return this.#shared.backend.sanitizerReports?.() ?? []
  }

  readonly unload = async (): Promise<void> => {
    const m = this.#shared
    if (m.unloaded) return
    m.unloaded = true
    for (const st of m.fastStates) st.prepared = st.target = undefined
    for (const [, bs] of m.streams) await m.backend.destroyStream(bs)
    m.streams.clear()
    await m.bmod.unload()
  }

  async #makeGlobal(name: string): Promise<DeviceGlobal> {
    const { backend, bmod, sourceName } = this.#shared
    if (!bmod.getGlobal) throw new Error(`${sourceName}: the ${backend.name} backend cannot look up variables`)
    let found: { address: bigint; size: number }
    try {
      found = await bmod.getGlobal(name)
    } catch (err) {
      const list = [...this.#variables.keys()].join(', ')
      // a static device variable that only host code writes is not in clang's device code (issue 14)
      const why = (err as Error).message
      const hint = /static/.test(why) ? '' : '; note: clang removes a static __constant__ or __device__ variable that no device code writes: declare it without \'static\''
      throw new Error(`${sourceName}: no variable ${JSON.stringify(name)} in the loaded image (${why}${hint}); variables: ${list || 'none'}`, { cause: err })
    }
    return new DeviceGlobalImpl(this.#shared, name, found, this.#variables.get(name))
  }
}

interface LoadedNames {
  /** Each kernel's export name in the stub (nameKernels); undefined where it has none. */
  kernelNames: ReadonlyArray<{ kernel: KernelInfo; exportName: string | undefined }>
  splitSignature: ((demangled: string) => { qualified: string }) | undefined
}

/** The export names of a manifest's kernels, by @kernelpack/offload's rules (nameKernels, what the stub
 *  exports): the C++ naming rules are loaded only for a manifest with C++ (mangled) kernels. An extern "C"
 *  kernel answers to its own name already, so of nameKernels's answer for it only the one rename (`then` →
 *  `then_`, exportOf) matters here; a name nameKernels refuses as an export (a reserved word) stays its PTX name. */
async function kernelNamesOf(manifest: KernelManifest): Promise<LoadedNames> {
  if (manifest.kernels.every((k) => k.demangled === k.name)) {
    return { kernelNames: manifest.kernels.map((k) => ({ kernel: k, exportName: exportOf(k.name) })), splitSignature: undefined }
  }
  const { nameKernels, splitSignature } = await import('@kernelpack/offload/names')
  return { kernelNames: nameKernels(manifest), splitSignature }
}

/** Builds a Module: picks the image for the backend's device, loads it, and serves buffers and kernels. */
export async function createModule(backend: Backend, bytes: Uint8Array, manifest: KernelManifest, opts: { sourceName: string; reason: string; timeoutMs?: number }): Promise<Module> {
  checkManifest(manifest, opts.sourceName)
  let entries: OffloadEntry[]
  try {
    // a raw cubin, PTX or fatbin (not what the plugin ships): read by images.ts, loaded for it
    entries = isOffloadBinary(bytes) ? readOffloadImages(bytes, opts.sourceName) : (await import('./images.js')).readImages(bytes, opts.sourceName)
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'CODECS_NOT_LOADED') throw err
    // a compressed binary (clang --offload-compress): the package entry registers the codecs
    await import('@kernelpack/offload')
    entries = readOffloadImages(bytes, opts.sourceName)
  }
  const device = backend.device()
  let choice: ImageChoice
  try {
    choice = selectImage(entries, device, backend.imageKinds)
  } catch (err) {
    throw new Error(`${opts.sourceName}: ${(err as Error).message}`, { cause: err })
  }
  await checkManifestAgainstPtx(manifest, entries, choice.entry, opts.sourceName)
  // struct parameters with the compiler's layout, f16/bf16 ones: the schema codecs, loaded only for a manifest that has them
  const layouts = manifest.kernels.some((k) => k.params.some((p) => p.valueType || p.type === 'f16' || p.type === 'bf16')) ? (await import('./schema.js')).valueLayouts : undefined
  const names = await kernelNamesOf(manifest)
  const bmod: BackendModule = await backend.loadModule({ kind: choice.kind, arch: choice.arch, bytes: choice.entry.image }, opts.sourceName)
  return new ModuleImpl(backend, device, manifest, choice, bmod, opts, layouts, names)
}
