// What the loader stubs of unplugin-cuda are built from (issue 16: an app's one run-time dependency is this
// package; the plugin is a devDependency). A stub is a few lines of data: `defineKernelModule(spec)` and one
// `module.launcher(entry)` per kernel. The types here are also what the generated `<file>.cu.d.ts` files
// import. No Node built-ins: the Node and browser entries pass their own loadModule.
import type { KernelManifest } from '@kernelpack/offload'
import { hasValueTypes } from '@kernelpack/offload/core'
import type { CheckOptions } from '@kernelpack/ptx'
import type { KernelArg } from './marshal.js'
import type { DeviceBuffer, DeviceGlobal, LaunchOptions, Module } from './module.js'
import type { namedValueTypes, ValueCodec } from './schema.js'
import type { TypedValue } from './typed-value.js'
import type { ModuleSource } from './source.js'

/** The backend a stub's module asks for when `load()` names none (loadModule's `backend`). */
export type BackendName = 'auto' | 'cuda' | 'emulator' | 'webgpu'

/** What a pointer parameter accepts: a device buffer, a `__device__` variable from `module.global(name)` (or
 *  anything with its `address`), or a raw device address. */
export type DevicePointer = DeviceBuffer | DeviceGlobal | { readonly address: bigint } | bigint
/** A struct or array passed by value: its exact bytes, or a value of a declared struct schema (`t.struct({…})`). */
export type StructArg = Uint8Array | TypedValue

/** One kernel as a function: `await saxpy({ grid, block }, n, a, x, y)`. */
export type Launcher<Args extends unknown[]> = ((options: LaunchOptions, ...args: Args) => Promise<void>) & {
  /** PTX entry name. */
  readonly entry: string
}

/** Size and target of one image in the offload binary. */
export interface ImageInfo {
  /** The target built: `sm_90` (cubin), `compute_90` (PTX). */
  readonly target: string
  /** The image's `arch` string in the offload binary (`sm_90` for both). */
  readonly arch: string
  readonly kind: string
  readonly size: number
}

/** The `module` export of a stub: one `.cu` file's device code. */
export interface KernelModule {
  readonly name: string
  readonly manifest: KernelManifest
  /** The images in the offload binary (target, kind, size). */
  readonly images: readonly ImageInfo[]
  /** The structs and unions the kernels take by value, by C++ name, with the compiler's layout: host code
   *  fills device buffers of them with `types.Params.encodeArray([...])` (`.cu.d.ts` types each one). */
  readonly types: Readonly<Record<string, ValueCodec>>
  /** Loads the images once (later calls share it); `backend` overrides the stub's default. */
  load(options?: { backend?: BackendName }): Promise<Module>
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
  manifest: KernelManifest
  images: ImageInfo[]
  backend: BackendName
  /** The emulator's sanitizer (unplugin-cuda's `check` option); absent: `KERNELPACK_CHECK` decides (Node). */
  check?: boolean | CheckOptions
  /** Returns the offload binary: a URL, URL string, file path or the bytes. */
  source: () => unknown
  /** The runtime's `namedValueTypes`, for `module.types`: the stub passes it when a parameter has the
   *  compiler's layout (`valueType`), so a page whose kernels take no struct never loads the schema codecs. */
  valueTypes?: typeof namedValueTypes
}

const noTypes: Readonly<Record<string, ValueCodec>> = Object.freeze(Object.create(null) as Record<string, ValueCodec>)

/** The loadModule of the entry in use (Node or browser). */
export type LoadModuleFn = (source: ModuleSource, manifest: KernelManifest, options: { backend?: BackendName; check?: boolean | CheckOptions }) => Promise<Module>

/** Decodes base64 (inlined images, `?raw`) without Node's Buffer. */
export function decodeBase64(text: string): Uint8Array {
  const bin = atob(text)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

/** A string form of an asset source, for `?url` imports. */
export function toAssetHref(source: unknown): string {
  if (source instanceof Uint8Array) {
    let s = ''
    for (let i = 0; i < source.length; i += 0x8000) s += String.fromCharCode(...source.subarray(i, i + 0x8000))
    return `data:application/octet-stream;base64,${btoa(s)}`
  }
  return String(source instanceof URL ? source.href : source)
}

/** What loadModule gets: a URL object for absolute URL strings (rollup's ROLLUP_FILE_URL gives a string). */
function toLoadSource(source: unknown): ModuleSource {
  if (typeof source === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) return new URL(source)
  return source as ModuleSource
}

// The spec behind a module, read by hotReplace on the module a new build of the same .cu created. The key
// predates the move from unplugin-cuda/runtime: modules of old and new stubs still recognise each other.
const SPEC = Symbol.for('unplugin-cuda.spec')

/** A stub's `module` over `loadModule`: lazy loading, shared between launchers, reloadable after
 *  `unload()`, and hot-replaceable (Vite HMR) with its launchers and device buffers kept. */
export function createKernelModule(spec: KernelModuleSpec, loadModule: LoadModuleFn): KernelModule {
  let current = spec
  let loading: Promise<Module> | undefined
  const listeners = new Set<(m: KernelModule) => void>()
  let typesFor: KernelModuleSpec | undefined
  let types: Readonly<Record<string, ValueCodec>> | undefined
  const load = (options: { backend?: BackendName } = {}): Promise<Module> => {
    if (!loading) {
      const s = current
      const backend = options.backend ?? s.backend
      loading = Promise.resolve()
        .then(() => loadModule(toLoadSource(s.source()), s.manifest, s.check === undefined ? { backend } : { backend, check: s.check }))
        .catch((err: unknown) => {
          loading = undefined
          const e = err instanceof Error ? err : new Error(String(err))
          e.message = `${s.name}: cannot load kernels: ${e.message}`
          throw e
        })
    }
    return loading
  }
  const unload = async (): Promise<void> => {
    const before = loading
    loading = undefined
    if (!before) return
    const m = await before.catch(() => undefined)
    if (m) await m.unload()
  }
  const mod: KernelModule & { [SPEC]: KernelModuleSpec } = {
    [SPEC]: spec,
    get name() { return current.name },
    get manifest() { return current.manifest },
    get images() { return Object.freeze(current.images.map((i) => Object.freeze({ ...i }))) },
    get types() {
      if (typesFor !== current) {
        if (current.valueTypes) types = current.valueTypes(current.manifest)
        else if (!hasValueTypes(current.manifest)) types = noTypes
        else throw new Error(`${current.name}: module.types needs valueTypes, which older stubs lack: rebuild the app`)
        typesFor = current
      }
      return types!
    },
    load,
    unload,
    async upload(data): Promise<DeviceBuffer> { return (await load()).upload(data) },
    async alloc(byteLength): Promise<DeviceBuffer> { return (await load()).alloc(byteLength) },
    launcher<Args extends unknown[]>(entry: string): Launcher<Args> {
      const fn = async (options: LaunchOptions, ...args: Args): Promise<void> => {
        const m = await load()
        await m.kernel(entry).launch(options, ...(args as unknown as KernelArg[]))
      }
      Object.defineProperty(fn, 'entry', { value: entry })
      Object.defineProperty(fn, 'name', { value: entry })
      return fn as Launcher<Args>
    },
    onUpdate(listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    hotReplace(next) {
      const nextSpec = (next as Partial<Record<typeof SPEC, KernelModuleSpec>>)[SPEC]
      if (!nextSpec || listeners.size === 0) return false
      current = nextSpec
      // Buffers belong to the backend, not to the loaded module: they stay valid across the swap.
      void unload().then(() => { for (const l of listeners) l(mod) })
      return true
    },
  }
  return mod
}
