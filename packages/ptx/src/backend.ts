// The execution contract every backend implements (types only): `cuda` (the CUDA driver API through koffi,
// @kernelpack/runtime), `emulator` (@kernelpack/emulator, PTX on the CPU) and `webgpu` (@kernelpack/webgpu,
// PTX translated to WGSL). It lives
// in @kernelpack/ptx because that is the one package all of them may import (DESIGN.md, "Packages"); the
// runtime re-exports it and writes its API (loadModule/upload/launch) once over it, and the emulator is
// type-checked against it. Methods may return a value or a Promise; the runtime awaits both.
//
// Device memory is addressed by 64-bit device addresses (bigint), as CUdeviceptr is. Kernel parameters
// reach `launch` as one buffer laid out like PTX `.param` space: each parameter at its offset (layout.ts),
// so the cuda backend passes `base + offsets[i]` pointers and the emulator reads the very same bytes.
import type { SanitizerReport } from './sanitizer.js'

export type MaybePromise<T> = T | Promise<T>
export type Dim3 = [number, number, number]
export type BackendName = 'cuda' | 'emulator' | 'webgpu'

export interface DeviceInfo {
  /** Device name (`NVIDIA H100 80GB HBM3`, `kernelpack PTX emulator`). */
  name: string
  /** Compute capability [major, minor]. */
  computeCapability: [number, number]
  totalMemory: number
  /** Highest PTX ISA version the backend can load (e.g. 9.0 → [9, 0]); for image selection. */
  ptxVersion?: [number, number]
  multiProcessorCount?: number
  warpSize?: number
  /** Shared memory one block may have with the opt-in attribute (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN). */
  maxSharedMemoryPerBlockOptin?: number
}

/** The image the runtime chose for this backend (@kernelpack/runtime, select-image.ts). */
export interface ImageToLoad {
  /** `cubin`, `ptx`, `fatbin`…; `wgsl`: WGSL translated from the PTX at build time (@kernelpack/webgpu's
   *  wgsl-image.ts), which only the webgpu backend loads. */
  kind: 'cubin' | 'ptx' | 'fatbin' | 'object' | 'wgsl'
  /** `sm_90`, `compute_80`, … */
  arch: string
  bytes: Uint8Array
}

export interface BackendFunction {
  readonly name: string
}

export interface BackendModule {
  getFunction(name: string): MaybePromise<BackendFunction>
  /** Address and size of a `.global`/`.const` variable. */
  getGlobal?(name: string): MaybePromise<{ address: bigint; size: number }>
  unload(): MaybePromise<void>
  /**
   * Optional fast path: a parameter block for `fn` allocated once (native memory for cuda). The runtime packs
   * each launch's arguments straight into `bytes` and calls `launch(config)`; backends without it get
   * Backend.launch with a KernelParams.
   */
  prepareLaunch?(fn: BackendFunction, layout: ParamBlockLayout): PreparedLaunch
}

/** Where each parameter lives in the `.param` block (layout.ts `layoutParams`). */
export interface ParamBlockLayout {
  /** Total bytes of the block. */
  size: number
  offsets: readonly number[]
  sizes: readonly number[]
}

export interface PreparedLaunch {
  /** The parameter block (`layout.size` bytes) the next launch reads. */
  readonly bytes: Uint8Array
  launch(config: LaunchConfig): MaybePromise<void>
  /** Frees the block; the module's unload does it too. */
  dispose?(): void
}

export interface BackendStream {
  readonly id: number
}

export interface BackendEvent {
  readonly id: number
}

export interface LaunchConfig {
  grid: Dim3
  block: Dim3
  sharedBytes: number
  stream?: BackendStream | null
  /** The kernel's maxDynamicSharedMemorySize attribute (48 KiB unless raised with kernel.setAttribute); the
   *  runtime has checked `sharedBytes` against it, the cuda backend sets it on the function before such a launch. */
  maxDynamicSharedBytes?: number
  /** A cooperative launch (cudaLaunchCooperativeKernel): every block resident at once, so blocks may wait
   *  for each other (cg::this_grid().sync()). The grid must fit on the device at once. */
  cooperative?: boolean
  /** Aborts the launch (issue 17 item 4): a backend that can stop a running kernel (the emulator, WebGPU) rejects
   *  the launch with an AbortError naming the kernel; every backend refuses a launch whose signal is
   *  already aborted. */
  signal?: AbortSignal
  /** Aborts the launch the same way once it has run this many milliseconds (the emulator, WebGPU). */
  timeoutMs?: number
}

export interface KernelParams {
  /** Parameter bytes in PTX `.param` layout (each parameter at `offsets[i]`). */
  bytes: Uint8Array
  offsets: readonly number[]
  sizes: readonly number[]
}

export interface Backend {
  readonly name: BackendName
  /** Which image kinds this backend can load; the emulator loads only `ptx`. */
  readonly imageKinds: ReadonlyArray<ImageToLoad['kind']>
  device(): DeviceInfo
  /** `sourceName` names the module in messages (the webgpu backend's CannotTranslateError). */
  loadModule(image: ImageToLoad, sourceName?: string): MaybePromise<BackendModule>
  alloc(byteLength: number): MaybePromise<bigint>
  /** `alloc` returns zero-filled memory, so the runtime's `alloc()` needs no memset after it (the emulator's
   *  initcheck then still treats the bytes as unwritten, as compute-sanitizer treats `cudaMalloc`'s). */
  readonly allocZeroFilled?: boolean
  free(address: bigint): MaybePromise<void>
  copyToDevice(dst: bigint, src: Uint8Array, stream?: BackendStream | null): MaybePromise<void>
  copyFromDevice(dst: Uint8Array, src: bigint, stream?: BackendStream | null): MaybePromise<void>
  memset(dst: bigint, byte: number, byteLength: number, stream?: BackendStream | null): MaybePromise<void>
  createStream(): MaybePromise<BackendStream>
  destroyStream(stream: BackendStream): MaybePromise<void>
  synchronize(stream?: BackendStream | null): MaybePromise<void>
  launch(fn: BackendFunction, config: LaunchConfig, params: KernelParams): MaybePromise<void>
  /** Events for timing (optional; the cuda backend has them). */
  createEvent?(): MaybePromise<BackendEvent>
  recordEvent?(event: BackendEvent, stream?: BackendStream | null): MaybePromise<void>
  /** Waits for `end`, then the milliseconds between the two recorded events. */
  elapsedMs?(start: BackendEvent, end: BackendEvent): MaybePromise<number>
  destroyEvent?(event: BackendEvent): MaybePromise<void>
  /** How launches are run, when the backend has a choice (the emulator: on how many worker threads, or on the
   *  calling thread and why); the runtime adds it to `mod.backend.reason`. */
  describeExecution?(): string
  /** The sanitizer's reports collected since the last call (a backend running checks in `collect` mode,
   *  sanitizer.ts), which the call clears. */
  sanitizerReports?(): SanitizerReport[]
  /** Release everything (contexts, memory, workers). */
  dispose(): MaybePromise<void>
}
