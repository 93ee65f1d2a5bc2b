/// <reference types="@webgpu/types" preserve="true" />
// The `webgpu` execution backend: implements the Backend contract of @kernelpack/ptx (backend.ts; the runtime
// re-exports it) over one WebGPU device, type-checked against it.
//
// Memory: one arena storage buffer, device addresses = byte offsets (README.md, "Pointer model"; layout.ts).
// Order: WebGPU has one queue per device, so every stream maps onto it; the backend also runs its own host
// steps (pipeline creation, arena growth, writes, submits) one after another in call order (`serial`), so a
// launch that awaits a pipeline is never overtaken by a later copy. Errors of the WebGPU implementation are
// caught with error scopes around each submit and reported at the next synchronize or download, like CUDA's
// sticky launch errors; a kernel that checks its accesses reports a fault through the fault record.
import type { Backend, BackendEvent, BackendFunction, BackendModule, BackendStream, DeviceInfo, ImageToLoad, KernelParams, LaunchConfig } from '@kernelpack/ptx'
import { ArenaAllocator } from './arena.js'
import { describeAdapter, requestWebGpuDevice, type WebGpuDevice, type WebGpuDeviceOptions } from './device.js'
import { CannotTranslateError, WebGpuError, WebGpuFault, WEBGPU_FAULT_KINDS, type Untranslatable } from './errors.js'
import {
  ARENA_ADDRESS_LIMIT, OVERRIDE_PHASE, BINDING_FAULT, BINDING_LAUNCH, BINDING_MEMORY, BINDING_PARAMS, FAULT_BUFFER_BYTES, FAULT_RECORD_BYTES, LAUNCH_RECORD_BYTES,
  LAUNCH_RECORD_STRIDE, MAP_READ, OVERRIDE_COARSE_K, OVERRIDE_COARSE_WG, OVERRIDE_DYN_SHARED_BYTES, OVERRIDE_DYN_SHARED_WORDS, OVERRIDE_FMA_EXACT, OVERRIDE_NTID, OVERRIDE_SPLIT, RESERVED_BYTES, STAGE_COMPUTE, USAGE_COPY_DST, USAGE_COPY_SRC,
  USAGE_MAP_READ, USAGE_STORAGE, USAGE_UNIFORM, overrideVariable,
} from './layout.js'
import { PATCH_BINDING, PATCH_BYTES, patchWgsl, splitUnaligned, type WordPatch } from './memops.js'
import { type Dim3, type TranslateTarget, type WgslKernel, type WgslModule, type WgslTranslator } from './translate.js'
import { emitWgsl } from './translator.js'
import type { accessesInside, SiteTrip } from './access-sites.js'
import type { SliceContext } from './stoppable.js'
import { decodeWgslImage } from './wgsl-image.js'

export interface WebGpuBackendOptions extends WebGpuDeviceOptions {
  /** A device acquired with requestWebGpuDevice (shared between backends; not destroyed by dispose). */
  webgpu?: WebGpuDevice
  /** Turns PTX into WGSL. @default emitWgsl */
  translator?: WgslTranslator
  /** Load the kernels that translate and list the others in `module.refused` (launching one throws), instead
   *  of refusing the whole module — what `auto` needs, since it must pick one backend for every kernel.
   *  @default false */
  partial?: boolean
  /** Initial arena size in bytes (it doubles on demand). @default 1 MiB */
  initialMemory?: number
  /** Arena limit in bytes. @default the device's maxStorageBufferBindingSize and maxBufferSize, at most 3.75 GiB */
  memoryLimit?: number
  /** Receives device printf's text exactly as printed (no newline added), at each synchronize and download, in
   *  the emulator's order: launches one after the other, blocks in order, within a block a GPU's warp order
   *  (@kernelpack/ptx PrintfOrder). @default in Node `process.stdout.write`, in browsers one `console.log`
   *  per completed line */
  print?: (text: string) => void
}

export type WebGpuFunction = BackendFunction
export type WebGpuLaunchConfig = LaunchConfig
export type WebGpuKernelParams = KernelParams
export type WebGpuDeviceInfo = DeviceInfo

/** A loaded module; its methods answer synchronously. */
export interface WebGpuModule extends BackendModule {
  /** The kernels that did not translate (only with the `partial` option; otherwise loadModule throws). */
  readonly refused: readonly Untranslatable[]
  getFunction(name: string): WebGpuFunction
  getGlobal(name: string): { address: bigint; size: number }
  unload(): void
}

interface WebGpuEvent extends BackendEvent { done?: Promise<number> }

/** The WebGPU implementation of the Backend contract (@kernelpack/ptx, backend.ts). */
export interface WebGpuBackend extends Backend {
  readonly name: 'webgpu'
  readonly imageKinds: ReadonlyArray<'wgsl' | 'ptx'>
  /** The adapter, device, features and limits in use. */
  readonly gpu: WebGpuDevice
  /** The translator that loadModule uses. */
  readonly translator: WgslTranslator
  /** Why the device is gone (lost, or destroyed to stop a running launch), after which every call fails;
   *  undefined while it is usable. */
  readonly lost: string | undefined
  device(): WebGpuDeviceInfo
  loadModule(image: ImageToLoad, sourceName?: string): Promise<WebGpuModule>
  alloc(byteLength: number): Promise<bigint>
  free(address: bigint): void
  copyToDevice(dst: bigint, src: Uint8Array, stream?: BackendStream | null): Promise<void>
  copyFromDevice(dst: Uint8Array, src: bigint, stream?: BackendStream | null): Promise<void>
  memset(dst: bigint, byte: number, byteLength: number, stream?: BackendStream | null): Promise<void>
  createStream(): BackendStream
  destroyStream(stream: BackendStream): void
  synchronize(stream?: BackendStream | null): Promise<void>
  launch(fn: WebGpuFunction, config: WebGpuLaunchConfig, params: WebGpuKernelParams): Promise<void>
  createEvent(): BackendEvent
  recordEvent(event: BackendEvent, stream?: BackendStream | null): Promise<void>
  elapsedMs(start: BackendEvent, end: BackendEvent): Promise<number>
  destroyEvent(event: BackendEvent): void
  dispose(): Promise<void>
}

interface LoadedModule {
  source: string
  translated: WgslModule
  /** Address of each module variable, by index. */
  variableAt: number[]
  unloaded: boolean
}

class KernelHandle implements WebGpuFunction {
  readonly pipelines = new Map<string, Promise<GPUComputePipeline>>()
  /** The override constants the WGSL declares (only those may be given to the pipeline). */
  readonly overrides: ReadonlySet<string>
  readonly coarseOverrides: ReadonlySet<string>
  /** The modules of its variants (coarsened, unchecked, shared memory in the arena), each compiled on first use. */
  readonly variants = new Map<object, GPUShaderModule>()
  /** The loop bounds its sites' iteration terms count (access-sites.ts). */
  readonly trips: ReadonlyMap<number, SiteTrip>
  paramBuffer: GPUBuffer | undefined
  launchBuffer: GPUBuffer | undefined
  bindGroup: GPUBindGroup | undefined
  bindGeneration = -1
  constructor(readonly name: string, readonly id: number, readonly mod: LoadedModule, readonly kernel: WgslKernel, readonly shader: GPUShaderModule) {
    this.trips = new Map(kernel.unchecked?.trips ?? [])
    const names = (wgsl: string) => new Set([...wgsl.matchAll(/\boverride\s+(kp_\w+)/g)].map((m) => m[1]!))
    this.overrides = names(kernel.wgsl)
    this.coarseOverrides = kernel.coarse ? names(kernel.coarse.wgsl) : new Set()
  }
}

function toAddress(a: bigint, what: string): number {
  if (typeof a !== 'bigint') throw new TypeError(`${what}: device address must be a bigint`)
  if (a < 0n || a >= BigInt(ARENA_ADDRESS_LIMIT)) throw new RangeError(`${what}: 0x${a.toString(16)} is not a WebGPU device address`)
  return Number(a)
}

function dim(d: unknown, what: string): Dim3 {
  if (!Array.isArray(d) || d.length !== 3 || !d.every((x) => Number.isInteger(x) && x >= 1)) throw new TypeError(`launch: ${what} must be [x, y, z] of positive integers, got ${JSON.stringify(d)}`)
  return d as Dim3
}

const align4 = (n: number) => Math.ceil(n / 4) * 4
const align16 = (n: number) => Math.ceil(n / 16) * 16

/** A bigger arena the device refused (caught where it is created; alloc turns it into a RangeError). */
class ArenaGrowthError extends Error {
  constructor(readonly size: number, readonly deviceMessage: string) {
    super(deviceMessage)
  }
}

/** Creates the WebGPU backend on `options.webgpu`, or on a device requested from `options.gpu` / navigator.gpu. */
export async function createWebGpuBackend(options: WebGpuBackendOptions = {}): Promise<WebGpuBackend> {
  const ownsDevice = !options.webgpu
  const gpu = options.webgpu ?? (await requestWebGpuDevice(options))
  const { device, limits } = gpu
  const translator = options.translator ?? emitWgsl
  const limit = (name: string) => limits[name] ?? 0
  const deviceLimit = Math.min(limit('maxStorageBufferBindingSize'), limit('maxBufferSize'), ARENA_ADDRESS_LIMIT)
  const memoryLimit = Math.floor(Math.min(options.memoryLimit ?? deviceLimit, deviceLimit) / 4) * 4
  const arena = new ArenaAllocator(memoryLimit)
  let capacity = Math.min(Math.max(align4(options.initialMemory ?? 1 << 20), RESERVED_BYTES), memoryLimit)
  let memory = device.createBuffer({ label: 'kernelpack arena', size: capacity, usage: USAGE_STORAGE | USAGE_COPY_SRC | USAGE_COPY_DST })
  /** Bumped when `memory` is replaced; bind groups made for an older buffer are rebuilt. */
  let generation = 0
  // the fault record and device printf's counter and records (layout.ts FAULT_BUFFER_BYTES)
  const faultRecord = device.createBuffer({ label: 'kernelpack fault record', size: FAULT_BUFFER_BYTES, usage: USAGE_STORAGE | USAGE_COPY_SRC | USAGE_COPY_DST })
  // (the formatter is loaded with the first printf records: printf-records.ts)
  let print = options.print
  /** Launches so far (KpLaunch.pad), and the printf formats of those whose kernel prints, by launch. */
  let launches = 0
  const printfLaunches = new Map<number, readonly string[]>()

  let lost: string | undefined
  /** access-sites.ts's accessesInside, loaded with the first module whose kernels have an unchecked variant. */
  let accessCheck: typeof accessesInside | undefined
  let disposed = false
  void device.lost.then((info) => { if (!disposed) lost ??= `the WebGPU device was lost (${info.reason}): ${info.message}` })
  const uncaptured: string[] = []
  device.addEventListener?.('uncapturederror', (e) => uncaptured.push((e as GPUUncapturedErrorEvent).error.message))
  const live = () => {
    if (disposed) throw new Error('the webgpu backend was disposed')
    if (lost) throw new WebGpuError(lost)
  }

  // Host steps in call order (see the header).
  let chain: Promise<unknown> = Promise.resolve()
  function serial<T>(step: () => T | Promise<T>): Promise<T> {
    const p = chain.then(step)
    chain = p.catch(() => undefined)
    return p
  }

  // Errors of submitted work, collected by error scopes and thrown at the next synchronize/download.
  let pendingErrors: Array<Promise<string | undefined>> = []
  function submitChecked(what: string, encode: (enc: GPUCommandEncoder) => void): void {
    device.pushErrorScope('validation')
    device.pushErrorScope('out-of-memory')
    const enc = device.createCommandEncoder()
    encode(enc)
    device.queue.submit([enc.finish()])
    const oom = device.popErrorScope()
    const validation = device.popErrorScope()
    pendingErrors.push(Promise.all([oom, validation]).then(([a, b]) => (a ?? b ? `${what}: ${(a ?? b)!.message}` : undefined)))
  }
  async function throwPendingErrors(): Promise<void> {
    const all = pendingErrors
    pendingErrors = []
    const messages = (await Promise.all(all)).filter((m): m is string => m !== undefined)
    messages.push(...uncaptured.splice(0))
    if (messages.length) throw new WebGpuError(`WebGPU reported ${messages.length === 1 ? 'an error' : `${messages.length} errors`}: ${messages.join('; ')}`)
    if (lost) throw new WebGpuError(lost)
  }

  // Arena growth: a bigger buffer, the old contents copied in queue order, the old one released. A buffer the
  // device cannot allocate (a maxBufferSize above what its memory can hold, as on SwiftShader) is caught by
  // error scopes around its creation: the doubling falls back to the size needed, and where even that fails
  // growth throws a RangeError and the arena stays as it was.
  /** The size the device refused last (growth never asks for that much again). */
  let refusedSize = Infinity
  async function tryBuffer(size: number): Promise<GPUBuffer | string> {
    device.pushErrorScope('out-of-memory')
    device.pushErrorScope('validation')
    const b = device.createBuffer({ label: 'kernelpack arena', size, usage: USAGE_STORAGE | USAGE_COPY_SRC | USAGE_COPY_DST })
    const validation = await device.popErrorScope()
    const oom = await device.popErrorScope()
    const err = oom ?? validation
    if (!err) return b
    b.destroy()
    return err.message
  }
  async function ensureCapacity(end: number): Promise<void> {
    if (end <= capacity) return
    let next = capacity
    while (next < end) next *= 2
    next = Math.min(align4(next), memoryLimit)
    const needed = align4(end)
    if (next >= refusedSize) next = needed
    let bigger = await tryBuffer(next)
    if (typeof bigger === 'string' && next > needed) {
      refusedSize = Math.min(refusedSize, next)
      bigger = await tryBuffer(needed)
      next = needed
    }
    if (typeof bigger === 'string') {
      refusedSize = Math.min(refusedSize, next)
      throw new ArenaGrowthError(next, bigger)
    }
    const old = memory
    const grown = bigger
    submitChecked('growing the arena', (enc) => enc.copyBufferToBuffer(old, 0, grown, 0, capacity))
    old.destroy()
    memory = grown
    capacity = next
    generation++
  }

  const patchLayout = device.createBindGroupLayout({
    label: 'kernelpack patch',
    entries: [
      { binding: BINDING_MEMORY, visibility: STAGE_COMPUTE, buffer: { type: 'storage' } },
      { binding: PATCH_BINDING, visibility: STAGE_COMPUTE, buffer: { type: 'uniform' } },
    ],
  })
  // created on the first unaligned write: a module that never needs it costs no shader compile
  let patchPipeline: GPUComputePipeline | undefined
  const patchBuffer = device.createBuffer({ label: 'kernelpack patch', size: PATCH_BYTES, usage: USAGE_UNIFORM | USAGE_COPY_DST })
  let patchGroup: GPUBindGroup | undefined
  let patchGeneration = -1
  function applyPatches(patches: WordPatch[]): void {
    if (patches.length === 0) return
    const words = new Uint32Array(PATCH_BYTES / 4)
    patches.forEach((p, i) => { words[i * 4] = p.index; words[i * 4 + 1] = p.mask; words[i * 4 + 2] = p.value })
    device.queue.writeBuffer(patchBuffer, 0, words)
    if (patchGeneration !== generation) {
      patchGroup = device.createBindGroup({
        layout: patchLayout,
        entries: [{ binding: BINDING_MEMORY, resource: { buffer: memory } }, { binding: PATCH_BINDING, resource: { buffer: patchBuffer } }],
      })
      patchGeneration = generation
    }
    patchPipeline ??= device.createComputePipeline({
      label: 'kernelpack patch',
      layout: device.createPipelineLayout({ bindGroupLayouts: [patchLayout] }),
      compute: { module: device.createShaderModule({ label: 'kernelpack patch', code: patchWgsl }), entryPoint: 'patch_words' },
    })
    submitChecked('writing unaligned bytes', (enc) => {
      const pass = enc.beginComputePass()
      pass.setPipeline(patchPipeline!)
      pass.setBindGroup(0, patchGroup!)
      pass.dispatchWorkgroups(1)
      pass.end()
    })
  }

  function checkRange(at: number, n: number, what: string): void {
    if (n === 0) return
    if (!arena.contains(at, n)) throw new RangeError(`${what}: range 0x${at.toString(16)}+${n} is not inside one allocation of the WebGPU device`)
  }

  /** Reads [at, at + n) (any alignment) and the fault record in one copy; throws a recorded fault. */
  async function readBack(at: number, n: number, into: Uint8Array | undefined): Promise<void> {
    const start = at & ~3
    const len = align4(at + n) - start
    const staging = await serial(() => {
      live()
      const buf = device.createBuffer({ label: 'kernelpack readback', size: len + FAULT_RECORD_BYTES + 4, usage: USAGE_MAP_READ | USAGE_COPY_DST })
      submitChecked('reading device memory', (enc) => {
        if (len) enc.copyBufferToBuffer(memory, start, buf, 0, len)
        enc.copyBufferToBuffer(faultRecord, 0, buf, len, FAULT_RECORD_BYTES + 4)
      })
      return buf
    })
    try {
      await staging.mapAsync(MAP_READ)
      const bytes = new Uint8Array(staging.getMappedRange())
      if (into) into.set(bytes.subarray(at - start, at - start + n))
      const fault = new Uint32Array(bytes.buffer, bytes.byteOffset + len, FAULT_RECORD_BYTES / 4 + 1).slice()
      staging.unmap()
      // device printf's records, printed before a fault is thrown (as CUDA flushes the printf FIFO at the
      // synchronization that reports the error)
      if (fault[4] !== 0) await flushPrintf(fault[4]!)
      await throwPendingErrors()
      if (fault[0] !== 0) {
        await serial(() => device.queue.writeBuffer(faultRecord, 0, new Uint32Array(FAULT_RECORD_BYTES / 4)))
        const name = kernelNames[fault[0]! - 1] ?? `#${fault[0]! - 1}`
        // (layout.ts FAULT_KIND's order)
        const kind = WEBGPU_FAULT_KINDS[fault[3]!] ?? 'access'
        throw new WebGpuFault(name, fault[1]!, BigInt(fault[2]!), kind)
      }
    } finally {
      staging.destroy()
    }
  }

  /** Prints device printf's records (`words` asked for since the last read): printf-records.ts, loaded with
   *  the first records a synchronization finds. */
  async function flushPrintf(words: number): Promise<void> {
    print = await (await import('./printf-records.js')).flushPrintf({ device, faultRecord, serial, submitChecked }, words, printfLaunches, print)
  }

  const bindLayout = device.createBindGroupLayout({
    label: 'kernelpack kernel',
    entries: [
      { binding: BINDING_MEMORY, visibility: STAGE_COMPUTE, buffer: { type: 'storage' } },
      { binding: BINDING_PARAMS, visibility: STAGE_COMPUTE, buffer: { type: 'uniform' } },
      { binding: BINDING_LAUNCH, visibility: STAGE_COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true, minBindingSize: LAUNCH_RECORD_BYTES } },
      { binding: BINDING_FAULT, visibility: STAGE_COMPUTE, buffer: { type: 'storage' } },
    ],
  })
  const pipelineLayout = device.createPipelineLayout({ label: 'kernelpack kernel', bindGroupLayouts: [bindLayout] })

  /** Names of loaded kernels by kernel_id (the fault record names a kernel by it). */
  const kernelNames: string[] = []
  let nextStream = 1
  let nextEvent = 1
  const events = new Map<number, WebGpuEvent>()
  const info = describeAdapter(gpu.info)
  /** What this device offers translation (at load) and the choice among WGSL translated at build time. */
  const target: TranslateTarget = { features: gpu.features, limits, subgroupMinSize: gpu.info.subgroupMinSize, subgroupMaxSize: gpu.info.subgroupMaxSize }

  async function loadModule(image: ImageToLoad, sourceName = `PTX module (${image.arch})`): Promise<WebGpuModule> {
    live()
    if (image.kind !== 'ptx' && image.kind !== 'wgsl') throw (await import('./launch-checks.js')).badImage(image.kind, image.arch)
    let translated: WgslModule
    const undecodable: Untranslatable[] = []
    // (WGSL translated at build time: a kernel's subgroups32 variant where this device's subgroups are 32 wide)
    if (image.kind === 'wgsl') translated = decodeWgslImage(image.bytes, sourceName, target)
    else {
      // PTX: parsed and decoded once, by the one PTX front end (loaded now, with the translator: a bundle
      // that runs WGSL translated at build time never loads either); a translator reads the IR, never the text
      const { decodeForTranslation, ptxText } = await import('./from-ptx.js')
      const ptx = ptxText(image.bytes)
      const decoded = decodeForTranslation(ptx, sourceName)
      undecodable.push(...decoded.undecodable)
      translated = await translator.translate({ ptx, module: decoded.module, arch: image.arch, source: sourceName }, target)
    }
    // the host side of unchecked variants, loaded here (not at a launch, which must not wait before queueing)
    for (const k of translated.kernels.values()) if (k.unchecked) accessCheck ??= (await import('./access-sites.js')).accessesInside
    const refused: Untranslatable[] = [...undecodable, ...translated.refused]
    // What the translator produced must fit this device; a kernel that does not is refused like an
    // untranslatable one, so `auto` falls back instead of failing at the first launch (device-fit.ts says why)
    const fits = (k: WgslKernel) => k.features.every((f) => gpu.features.has(f)) && align16(k.paramBytes) <= limit('maxUniformBufferBindingSize') && (k.sharedInArena ?? k).workgroupBytes <= limit('maxComputeWorkgroupStorageSize')
      && (!k.requiredBlock || k.requiredBlock[0] * k.requiredBlock[1] * k.requiredBlock[2] <= limit('maxComputeInvocationsPerWorkgroup'))
    if (![...translated.kernels.values()].every(fits)) refused.push(...(await import('./device-fit.js')).misfits(translated.kernels.values(), gpu.features, limit, info))
    // kernels named demangled in the errors: the demangler is loaded only for a module that has such kernels
    const readable = refused.length ? (await import('@kernelpack/ptx/demangle')).readableName : undefined
    if (refused.length && !options.partial) throw new CannotTranslateError(sourceName, refused, readable)
    const refusedNames = new Set(refused.map((r) => r.kernel))

    const mod: LoadedModule = { source: sourceName, translated, variableAt: [], unloaded: false }
    const handles = new Map<string, KernelHandle>()
    device.pushErrorScope('validation')
    for (const k of translated.kernels.values()) {
      if (refusedNames.has(k.name)) continue
      const shader = device.createShaderModule({ label: k.name, code: k.wgsl })
      const compiled = await shader.getCompilationInfo()
      const errors = compiled.messages.filter((m) => m.type === 'error')
      if (errors.length) {
        await device.popErrorScope()
        // WGSL that does not compile is a translator bug, not a property of the user's kernel.
        throw new WebGpuError(`${sourceName}: the WGSL of kernel ${k.name} (from ${translator.name}) does not compile: ${errors.map((m) => `line ${m.lineNum}:${m.linePos}: ${m.message}`).join('; ')}`)
      }
      kernelNames.push(k.name)
      handles.set(k.name, new KernelHandle(k.name, kernelNames.length - 1, mod, k, shader))
    }
    const shaderError = await device.popErrorScope()
    if (shaderError) throw new WebGpuError(`${sourceName}: ${shaderError.message}`)
    for (const v of translated.variables) {
      const at = await alloc(Math.max(v.size, 1))
      mod.variableAt.push(Number(at))
      const bytes = new Uint8Array(align4(Math.max(v.size, 1)))
      if (v.init) bytes.set(v.init.subarray(0, v.size))
      await serial(() => device.queue.writeBuffer(memory, Number(at), bytes))
    }
    return {
      refused,
      getFunction(name: string) {
        const h = handles.get(name)
        const r = refused.filter((x) => x.kernel === name)
        if (!h && r.length) throw new CannotTranslateError(sourceName, r, readable)
        if (!h) throw new Error(`kernel ${name} is not in this module (kernels: ${[...handles.keys()].join(', ') || 'none'})`)
        return h
      },
      getGlobal(name: string) {
        const i = translated.variables.findIndex((v) => v.name === name)
        if (i < 0) throw new Error(`variable ${name} is not a .global/.const variable of this module`)
        return { address: BigInt(mod.variableAt[i]!), size: translated.variables[i]!.size }
      },
      unload() {
        if (mod.unloaded) return
        mod.unloaded = true
        for (const at of mod.variableAt) arena.free(at)
        for (const h of handles.values()) { h.paramBuffer?.destroy(); h.launchBuffer?.destroy() }
      },
    }
  }

  async function alloc(byteLength: number): Promise<bigint> {
    live()
    // one allocation larger than the arena may ever be: the adapter's limit, named, before anything is queued
    if (Number.isSafeInteger(byteLength) && byteLength > memoryLimit - RESERVED_BYTES) {
      const bound = memoryLimit === deviceLimit ? (limit('maxBufferSize') <= limit('maxStorageBufferBindingSize') ? 'maxBufferSize' : 'maxStorageBufferBindingSize') : 'the memoryLimit option'
      throw (await import('./launch-checks.js')).allocTooBig(byteLength, bound, memoryLimit - RESERVED_BYTES)
    }
    return serial(async () => {
      const at = arena.alloc(byteLength)
      try {
        await ensureCapacity(arena.top)
      } catch (err) {
        arena.free(at)
        if (!(err instanceof ArenaGrowthError)) throw err
        throw (await import('./launch-checks.js')).allocGrowthFailed(byteLength, err.size, capacity, arena.top - RESERVED_BYTES, memoryLimit, err.deviceMessage)
      }
      return BigInt(at)
    })
  }

  /** The pipeline for a block shape and dynamic shared size; `coarse` > 0: the coarsened variant with that
   *  many CUDA threads per invocation; `unchecked`: the variant without access checks (access-sites.ts);
   *  `split`: the grid runs as several dispatches, each with its ctaid_base (override kp_split). */
  /** Whether fma.rn.f32 needs the exact sequence on this device (fma-probe.ts), once asked. */
  let exactFma: Promise<boolean> | undefined

  function pipelineFor(h: KernelHandle, block: Dim3, sharedBytes: number, coarse: number, unchecked: boolean, split: boolean, phase = 0, inArena = false): Promise<GPUComputePipeline> {
    const dynWords = Math.max(1, Math.ceil(sharedBytes / 4))
    const exact = h.overrides.has(OVERRIDE_DYN_SHARED_BYTES)
    const key = `${block.join(',')}/${h.overrides.has(OVERRIDE_DYN_SHARED_WORDS) || exact ? (exact ? sharedBytes : dynWords) : 0}/${coarse}${unchecked ? '/unchecked' : ''}${split ? '/split' : ''}${phase ? `/phase${phase}` : ''}${inArena ? '/arena' : ''}`
    let p = h.pipelines.get(key)
    if (!p) {
      const overrides = coarse ? h.coarseOverrides : h.overrides
      const constants: Record<string, number> = {}
      OVERRIDE_NTID.forEach((name, i) => { if (overrides.has(name)) constants[name] = block[i]! })
      if (overrides.has(OVERRIDE_SPLIT)) constants[OVERRIDE_SPLIT] = split ? 1 : 0
      if (overrides.has(OVERRIDE_PHASE)) constants[OVERRIDE_PHASE] = phase
      if (overrides.has(OVERRIDE_DYN_SHARED_WORDS)) constants[OVERRIDE_DYN_SHARED_WORDS] = dynWords
      if (overrides.has(OVERRIDE_DYN_SHARED_BYTES)) constants[OVERRIDE_DYN_SHARED_BYTES] = sharedBytes
      if (coarse) {
        const threads = block[0] * block[1] * block[2]
        constants[OVERRIDE_COARSE_K] = coarse
        constants[OVERRIDE_COARSE_WG] = Math.ceil(threads / coarse)
      }
      h.mod.variableAt.forEach((at, i) => { if (overrides.has(overrideVariable(i))) constants[overrideVariable(i)] = at })
      const k = h.kernel
      const v: { wgsl: string; entryPoint?: string } | undefined = coarse ? k.coarse : inArena ? k.sharedInArena : unchecked ? k.unchecked : undefined
      let module = h.shader
      if (v) h.variants.set(v, module = h.variants.get(v) ?? device.createShaderModule({ label: `${h.name} ${key}`, code: v.wgsl }))
      const create = () => device.createComputePipelineAsync({ label: `${h.name} ${key}`, layout: pipelineLayout, compute: { module, entryPoint: v?.entryPoint ?? k.entryPoint, constants } })
      // fma.rn.f32: WGSL's fma() where this device's is fused, else the exact sequence (fma-probe.ts, once per device)
      p = overrides.has(OVERRIDE_FMA_EXACT)
        ? (exactFma ??= import('./fma-probe.js').then((m) => m.needsExactFma(device))).then((exact) => { constants[OVERRIDE_FMA_EXACT] = exact ? 1 : 0; return create() })
        : create()
      h.pipelines.set(key, p)
      p.catch(() => h.pipelines.delete(key))
    }
    return p
  }

  /** Destroys the device on purpose (to stop a running dispatch): every later call fails with `why`. Dawn in
   *  Node waits there for the dispatch to end on the calling thread, so the destroy runs after the launch's
   *  rejection has been delivered. */
  function killDevice(why: string): void {
    lost = `the WebGPU device is gone: ${why}`
    setTimeout(() => {
      memory.destroy()
      device.destroy()
    }, 0)
  }

  // what a launch with a signal or timeoutMs needs (stoppable.ts, loaded for the first such launch)
  const sliceContext: SliceContext = { device, limit, submitChecked, live, killDevice }

  const backend: WebGpuBackend = {
    name: 'webgpu',
    imageKinds: ['wgsl', 'ptx'],
    gpu,
    translator,
    get lost() { return lost },
    device() {
      // What selectImage needs: any PTX image is a candidate (the translator refuses what it cannot read).
      return { name: `WebGPU: ${info}`, computeCapability: [12, 0], totalMemory: memoryLimit, ptxVersion: [9, 1], warpSize: 32 }
    },
    loadModule,
    alloc,
    free(address) {
      live()
      arena.free(toAddress(address, 'free'))
    },
    async copyToDevice(dst, src) {
      live()
      const at = toAddress(dst, 'copyToDevice')
      checkRange(at, src.length, 'copyToDevice')
      if (src.length === 0) return
      const { mid, midBytes, patches } = splitUnaligned(at, src.length, (k) => src[k]!)
      await serial(() => {
        if (midBytes) device.queue.writeBuffer(memory, mid, src as Uint8Array<ArrayBuffer>, mid - at, midBytes)
        applyPatches(patches)
      })
    },
    async copyFromDevice(dst, src) {
      live()
      const at = toAddress(src, 'copyFromDevice')
      checkRange(at, dst.length, 'copyFromDevice')
      await readBack(at, dst.length, dst)
    },
    async memset(dst, byte, byteLength) {
      live()
      const at = toAddress(dst, 'memset')
      checkRange(at, byteLength, 'memset')
      if (byteLength === 0) return
      const b = byte & 0xff
      const { mid, midBytes, patches } = splitUnaligned(at, byteLength, () => b)
      await serial(() => {
        if (midBytes && b === 0) submitChecked('memset', (enc) => enc.clearBuffer(memory, mid, midBytes))
        else if (midBytes) {
          const chunk = new Uint32Array(Math.min(midBytes, 1 << 22) / 4).fill(b * 0x01010101)
          for (let off = 0; off < midBytes; off += chunk.byteLength) {
            device.queue.writeBuffer(memory, mid + off, chunk, 0, Math.min(chunk.byteLength, midBytes - off) / 4)
          }
        }
        applyPatches(patches)
      })
    },
    createStream() { return { id: nextStream++ } },
    destroyStream() {},
    async synchronize() {
      live()
      await readBack(0, 0, undefined)
    },
    async launch(fn, config, params) {
      live()
      if (!(fn instanceof KernelHandle)) throw new TypeError('launch: not a function of a webgpu module')
      const h = fn
      if (h.mod.unloaded) throw new Error(`launch: the module of ${h.name} was unloaded`)
      const k = h.kernel
      const grid = dim(config.grid, 'grid')
      const block = dim(config.block, 'block')
      const what = `launch ${h.name}`
      const threads = block[0] * block[1] * block[2]
      const maxInvocations = limit('maxComputeInvocationsPerWorkgroup')
      // a block the adapter cannot hold as one workgroup runs coarsened, when the translation has that variant
      const fitsAxes = (['X', 'Y', 'Z'] as const).every((axis, i) => block[i]! <= limit(`maxComputeWorkgroupSize${axis}`))
      const coarse = (!fitsAxes || threads > maxInvocations) && k.coarse && threads <= k.coarse.factor * maxInvocations ? k.coarse : undefined
      const shared = config.sharedBytes ?? 0
      const perDim = limit('maxComputeWorkgroupsPerDimension')
      // shared memory beyond the adapter's workgroup storage: the variant with it in the arena (arena-shared.ts)
      const room = limit('maxComputeWorkgroupStorageSize'), scratch = (k.workgroupBytesPerThread ?? 0) * threads
      const inArena = k.workgroupBytes + scratch + align4(shared) > room && !coarse ? k.sharedInArena : undefined
      // a launch the adapter or the kernel cannot take: launch-checks.ts (loaded then) says which limit or
      // directive, and what to do
      if ((!coarse && (!fitsAxes || threads > maxInvocations)) || k.requiredBlock?.some((v, i) => v !== block[i]) || (k.maxThreads ?? threads) < threads
        || !(Number.isInteger(shared) && shared >= 0) || (inArena ?? k).workgroupBytes + scratch + (inArena ? 0 : align4(shared)) > room
        || grid[1] > perDim || grid[2] > perDim || params.bytes.length < k.paramBytes
        || (k.paramOffsets && params.offsets && (params.offsets.length !== k.paramOffsets.length || params.offsets.some((o, i) => o !== k.paramOffsets![i])))) {
        throw (await import('./launch-checks.js')).launchProblem(what, k, block, grid, threads, shared, params, !!coarse, limit, inArena)
      }
      const gs = k.gridSync
      // The arguments are copied now: the caller may reuse its block as soon as launch() resolves.
      // (a grid-sync kernel's workspace, or the slices of shared memory in the arena: their address after the parameters)
      const ws = gs ?? inArena
      const paramSize = Math.max(16, align16(Math.max(k.paramBytes, params.bytes.length)), ws ? ws.workspaceAt + 16 : 0)
      const paramBytes = new Uint8Array(paramSize)
      paramBytes.set(params.bytes)
      const signal = config.signal ?? undefined
      const timeoutMs = config.timeoutMs
      if ((signal !== undefined && !(typeof signal === 'object' && 'aborted' in signal)) || (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0))) {
        throw (await import('./launch-checks.js')).badStop(what, signal, timeoutMs)
      }
      // (the AbortError comes from stoppable.ts, loaded for it: launches with a signal are rare)
      if (signal?.aborted) throw (await import('./stoppable.js')).notRun(h.name, signal)
      const stoppable = signal !== undefined || timeoutMs !== undefined
      // Without a signal or timeout, the grid is one submit (grid.x split into dispatches of at most perDim
      // workgroups, one launch record each); with one, it runs in slices (runStoppable).
      const slices = inArena && await (await import('./arena-shared.js')).arenaSlices(backend, inArena, grid, perDim, shared, stoppable, paramBytes)
      const columns = slices ? slices.columns : perDim
      const chunks = stoppable ? 1 : Math.ceil(grid[0] / columns)
      // the launch's number, in its launch records: device printf's records say which launch made them
      const launch = launches = (launches + 1) >>> 0
      if (k.printf?.length) printfLaunches.set(launch, k.printf)
      const records = new Uint32Array((chunks * LAUNCH_RECORD_STRIDE) / 4)
      for (let c = 0; c < chunks; c++) {
        const r = (c * LAUNCH_RECORD_STRIDE) / 4
        records.set([grid[0], grid[1], grid[2], h.id, c * columns, 0, 0, launch], r)
      }
      // every access of every thread proven inside the arena (access-sites.ts): the variant without checks
      const unchecked = !coarse && !inArena && !!k.unchecked && accessCheck!(k.unchecked.sites, paramBytes, grid, block, RESERVED_BYTES, memory.size, h.trips)
      const phases = gs?.phases ?? 1
      const pipelines = Array.from({ length: phases }, (_, phase) => pipelineFor(h, block, shared, coarse ? Math.ceil(threads / maxInvocations) : 0, unchecked, chunks > 1 || stoppable, phase, !!inArena))
      // a kernel split at its grid syncs (emit-kernel.ts writePhases): a cooperative launch only, with a workspace
      // for what lives across a sync (grid-launch.ts, loaded for the first such launch)
      const grids = gs && await import('./grid-launch.js')
      const workspace = grids && await grids.gridWorkspace(backend, gs, what, config.cooperative, grid[0] * grid[1] * grid[2], threads, shared, paramBytes)
      try {
      await serial(async () => {
        const ps = await Promise.all(pipelines)
        live()
        if (!h.paramBuffer || h.paramBuffer.size < paramSize) {
          h.paramBuffer?.destroy()
          h.paramBuffer = device.createBuffer({ label: `${h.name} params`, size: paramSize, usage: USAGE_UNIFORM | USAGE_COPY_DST })
          h.bindGeneration = -1
        }
        if (!h.launchBuffer || h.launchBuffer.size < records.byteLength) {
          h.launchBuffer?.destroy()
          h.launchBuffer = device.createBuffer({ label: `${h.name} launch`, size: records.byteLength, usage: USAGE_UNIFORM | USAGE_COPY_DST })
          h.bindGeneration = -1
        }
        device.queue.writeBuffer(h.paramBuffer, 0, paramBytes)
        device.queue.writeBuffer(h.launchBuffer, 0, records)
        if (h.bindGeneration !== generation) {
          h.bindGroup = device.createBindGroup({
            label: h.name,
            layout: bindLayout,
            entries: [
              { binding: BINDING_MEMORY, resource: { buffer: memory } },
              { binding: BINDING_PARAMS, resource: { buffer: h.paramBuffer } },
              { binding: BINDING_LAUNCH, resource: { buffer: h.launchBuffer, size: LAUNCH_RECORD_BYTES } },
              { binding: BINDING_FAULT, resource: { buffer: faultRecord } },
            ],
          })
          h.bindGeneration = generation
        }
        const startedAt = performance.now()
        // phases from..to in order (a grid-sync kernel's: each dispatch starts after the previous one's workgroups
        // have all finished, which is the grid-wide sync between them), then `after` on the queue
        const run = async (from: number, to: number, after?: (enc: GPUCommandEncoder) => void) => {
          if (stoppable) {
            // (a phase's slices all run before the next phase's first; the timeout counts from the launch's start)
            const m = await import('./stoppable.js')
            for (const q of ps.slice(from, to + 1)) await m.runStoppable(sliceContext, h, q, grid, { signal, timeoutMs, launch, startedAt })
            if (after) submitChecked(what, after)
            return
          }
          submitChecked(what, (enc) => {
            const pass = enc.beginComputePass({ label: h.name })
            for (const q of ps.slice(from, to + 1)) {
              pass.setPipeline(q)
              for (let c = 0; c < chunks; c++) {
                pass.setBindGroup(0, h.bindGroup!, [c * LAUNCH_RECORD_STRIDE])
                pass.dispatchWorkgroups(Math.min(columns, grid[0] - c * columns), grid[1], grid[2])
              }
            }
            pass.end()
            after?.(enc)
          })
        }
        // (a grid-sync kernel's branches between phases: grid-launch.ts)
        await (grids ? grids.runPhases(device, gs!, workspace!.decision, memory, faultRecord, h.name, run) : run(0, 0))
      })
      } finally {
        workspace?.release()
        slices?.release()
      }
    },
    createEvent() {
      const ev: WebGpuEvent = { id: nextEvent++ }
      events.set(ev.id, ev)
      return ev
    },
    async recordEvent(event) {
      live()
      const ev = events.get(event.id)
      if (!ev) throw new Error('recordEvent: not an event of this backend (or destroyed)')
      // WebGPU has no in-queue host-visible events: the time at which the queue reports the work submitted
      // so far as done stands for it (host clock, so it includes the completion callback's latency).
      await serial(() => { ev.done = device.queue.onSubmittedWorkDone().then(() => performance.now()) })
    },
    async elapsedMs(start, end) {
      const a = events.get(start.id)?.done, b = events.get(end.id)?.done
      if (!a || !b) throw new Error('elapsedMs: both events must have been recorded')
      const [ta, tb] = await Promise.all([a, b])
      return tb - ta
    },
    destroyEvent(event) { events.delete(event.id) },
    async dispose() {
      if (disposed) return
      await chain
      disposed = true
      memory.destroy()
      patchBuffer.destroy()
      faultRecord.destroy()
      if (ownsDevice) device.destroy()
    },
  }
  return backend
}
