// Types of `unplugin-cuda/runtime`, the helper every generated loader stub imports, and of the launchers
// the generated `<file>.cu.d.ts` files declare. Standalone on purpose (no Node or runtime-internal types),
// so a project's `tsc --noEmit` checks only these few declarations. src/runtime.ts implements them.

export type BackendName = 'auto' | 'cuda' | 'emulator'
export type Dim = number | [number, number?, number?] | readonly number[]

/** A device buffer from `module.upload` / `module.alloc` (@kernelpack/runtime's DeviceBuffer). */
export interface DeviceBuffer {
  /** Device address (CUdeviceptr). */
  readonly address: bigint
  readonly byteLength: number
  /** A copy of the contents; or the contents copied into `into`, which is returned. */
  download(): Promise<Uint8Array>
  download<T extends ArrayBufferView>(into: T): Promise<T>
  write(data: ArrayBufferView): Promise<void>
  fill(byte: number): Promise<void>
  free(): Promise<void>
}

/** A `__device__`/`__constant__` variable from `module.global(name)` (@kernelpack/runtime's DeviceGlobal):
 *  `upload` is cudaMemcpyToSymbol, `download` cudaMemcpyFromSymbol; pass it where a kernel takes a pointer. */
export interface DeviceGlobal {
  readonly name: string
  readonly space: 'global' | 'const' | undefined
  readonly address: bigint
  readonly byteLength: number
  readonly size: number
  download(): Promise<Uint8Array>
  download<T extends ArrayBufferView>(into: T): Promise<T>
  upload(data: ArrayBufferView): Promise<void>
  write(data: ArrayBufferView): Promise<void>
  fill(byte: number): Promise<void>
}

/** A stream of the module's backend. */
export interface Stream {
  readonly id: number
  synchronize(): Promise<void>
  destroy(): Promise<void>
}

/** Launch configuration, the first argument of every launcher. */
export interface LaunchOptions {
  grid: Dim
  block: Dim
  /** Dynamic shared memory in bytes. @default 0 */
  sharedBytes?: number
  /** The default stream when absent. */
  stream?: Stream
}

/** What a pointer parameter accepts: a device buffer or a raw device address. */
export type DevicePointer = DeviceBuffer | DeviceGlobal | bigint
/** A struct or array passed by value: its exact bytes, or a value of a declared struct schema (`Mixed.of({…})`). */
export type StructArg = Uint8Array | { readonly type: unknown; readonly value: unknown }

/** One kernel as a function: `await vecAdd({ grid, block }, a, b, c, n)`. */
export type Launcher<Args extends unknown[]> = ((options: LaunchOptions, ...args: Args) => Promise<void>) & {
  /** PTX entry name. */
  readonly entry: string
}

/** The loaded module (@kernelpack/runtime's Module). */
export interface RuntimeModule {
  readonly backend: { readonly name: 'cuda' | 'emulator'; readonly reason: string }
  readonly image: { readonly arch: string; readonly kind: string; readonly reason: string }
  upload(data: ArrayBufferView): Promise<DeviceBuffer>
  alloc(byteLength: number): Promise<DeviceBuffer>
  /** A kernel by PTX name, demangled signature or the stub's export name. `launch` resolves when the launch is
   *  queued; `synchronize()` waits for it. `setAttribute('maxDynamicSharedMemorySize', n)` opts in to more
   *  than 48 KiB of dynamic shared memory. */
  kernel(name: string): {
    launch(opts: LaunchOptions, ...args: unknown[]): Promise<void>
    setAttribute(attr: 'maxDynamicSharedMemorySize', value: number): void
  }
  createStream(): Promise<Stream>
  /** Waits until all work queued so far has finished. */
  synchronize(stream?: Stream): Promise<void>
  global(name: string): Promise<DeviceGlobal>
  unload(): Promise<void>
}

/** Size and target of one image in the offload binary. */
export interface ImageInfo {
  /** The target built: `sm_90` (cubin), `compute_90` (PTX). */
  readonly target: string
  /** The image's `arch` string (`sm_90` for both). */
  readonly arch: string
  readonly kind: string
  readonly size: number
}

/** The kernel manifest (@kernelpack/offload's KernelManifest), as the stub embeds it. */
export interface Manifest {
  kernels: Array<{ name: string; demangled: string; linkage: string; params: Array<{ type: string; size: number; align: number }> }>
  variables: Array<{ name: string; space: string; size: number; linkage: string }>
  [key: string]: unknown
}

/** The `module` export of a stub: one `.cu` file's device code. */
export interface KernelModule {
  readonly name: string
  readonly manifest: Manifest
  /** The images in the offload binary (target, kind, size). */
  readonly images: readonly ImageInfo[]
  /** Loads the images once (later calls share it); `backend` overrides the stub's default. */
  load(options?: { backend?: BackendName }): Promise<RuntimeModule>
  /** Frees the loaded module; the next launch or `load()` loads it again. */
  unload(): Promise<void>
  /** `load()` then `upload(data)`. */
  upload(data: ArrayBufferView): Promise<DeviceBuffer>
  /** `load()` then `alloc(byteLength)`. */
  alloc(byteLength: number): Promise<DeviceBuffer>
  launcher<Args extends unknown[] = unknown[]>(entry: string): Launcher<Args>
  /** Called after a hot update swapped in a new build of the .cu (Vite dev); returns an unsubscribe
   *  function. While a listener is registered, updates swap the kernels in place (launchers and device
   *  buffers stay valid); without one, Vite updates the importers instead. */
  onUpdate(listener: (module: KernelModule) => void): () => void
  /** Takes over the images of `next` (the same .cu's module from a newer build); false when no listener
   *  would notice, so the caller lets the bundler update the importers. */
  hotReplace(next: KernelModule): boolean
}

export interface KernelModuleSpec {
  name: string
  manifest: Manifest
  images: ImageInfo[]
  backend: BackendName
  /** Returns the offload binary: a URL, URL string, file path or the bytes. */
  source: () => unknown
}

/** Builds a stub's `module`: lazy loading, shared between launchers, reloadable after `unload()`. */
export declare function defineKernelModule(spec: KernelModuleSpec): KernelModule
/** Decodes base64 (inlined images, `?raw`) without Node's Buffer. */
export declare function decodeBase64(text: string): Uint8Array
/** A string form of an asset source, for `?url` imports. */
export declare function toAssetHref(source: unknown): string
