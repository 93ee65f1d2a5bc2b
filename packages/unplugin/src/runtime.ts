// Runtime helper imported by every generated loader stub (`unplugin-cuda/runtime`). A real module, not
// template text, so the stub stays a few lines of data. It must run in Node and in browsers: no Node
// built-ins here; @kernelpack/runtime reads file: URLs with fs in Node and fetches elsewhere (its `browser`
// export condition keeps koffi out of browser bundles).
import { loadModule } from '@kernelpack/runtime'
import type { KernelManifest } from '@kernelpack/offload'

export type BackendName = 'auto' | 'cuda' | 'emulator'
type Dim = number | [number, number, number] | [number, number] | [number]

/** Launch configuration, the first argument of every launcher. */
export interface LaunchOptions {
  grid: Dim
  block: Dim
  /** Dynamic shared memory in bytes. @default 0 */
  sharedBytes?: number
  /** A stream of the same module's backend; the default stream when absent. */
  stream?: unknown
}

/** The runtime's loaded module (from `loadModule`). */
export type RuntimeModule = Awaited<ReturnType<typeof loadModule>>
/** A device buffer from `module.upload` / `module.alloc`. */
export type DeviceBuffer = Awaited<ReturnType<RuntimeModule['upload']>>
/** What a pointer parameter accepts: a device buffer or a raw device address. */
export type DevicePointer = DeviceBuffer | bigint
/** A struct or array passed by value: its exact bytes, or a value of a declared struct schema. */
export type StructArg = Uint8Array | { readonly [field: string]: unknown }

/** One kernel as a function: `await vecAdd({ grid, block }, a, b, c, n)`. */
export type Launcher<Args extends unknown[]> = ((options: LaunchOptions, ...args: Args) => Promise<void>) & {
  /** PTX entry name. */
  readonly entry: string
}

export interface ImageInfo {
  arch: string
  kind: string
  size: number
  triple?: string
}

/** The `module` export of a stub: one `.cu` file's device code. */
export interface KernelModule {
  readonly name: string
  readonly manifest: KernelManifest
  /** The images in the offload binary (target, kind, size). */
  readonly images: readonly ImageInfo[]
  /** Loads the images (once; later calls share it). `backend` overrides the stub's default. */
  load(options?: { backend?: BackendName }): Promise<RuntimeModule>
  /** Frees the loaded module; the next launch or `load()` loads it again. */
  unload(): Promise<void>
  /** `load()` then `upload(data)`. */
  upload(data: ArrayBufferView): Promise<DeviceBuffer>
  /** `load()` then `alloc(byteLength)`. */
  alloc(byteLength: number): Promise<DeviceBuffer>
  launcher<Args extends unknown[] = unknown[]>(entry: string): Launcher<Args>
}

export interface KernelModuleSpec {
  name: string
  manifest: KernelManifest
  images: ImageInfo[]
  backend: BackendName
  /** Returns the offload binary: a URL, URL string, file path or the bytes. */
  source: () => unknown
}

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
function toLoadSource(source: unknown): Parameters<typeof loadModule>[0] {
  if (typeof source === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) return new URL(source)
  return source as Parameters<typeof loadModule>[0]
}

/** Builds a stub's `module`: lazy loading, shared between launchers, reloadable after `unload()`. */
export function defineKernelModule(spec: KernelModuleSpec): KernelModule {
  let loading: Promise<RuntimeModule> | undefined
  const load = (options: { backend?: BackendName } = {}): Promise<RuntimeModule> => {
    if (!loading) {
      const backend = options.backend ?? spec.backend
      loading = Promise.resolve()
        .then(() => loadModule(toLoadSource(spec.source()), spec.manifest, { backend }))
        .catch((err: unknown) => {
          loading = undefined
          const e = err instanceof Error ? err : new Error(String(err))
          e.message = `${spec.name}: cannot load kernels: ${e.message}`
          throw e
        })
    }
    return loading
  }
  const mod: KernelModule = {
    name: spec.name,
    manifest: spec.manifest,
    images: Object.freeze(spec.images.map((i) => Object.freeze({ ...i }))),
    load,
    async unload() {
      const current = loading
      loading = undefined
      if (!current) return
      const m = await current.catch(() => undefined)
      const unloadFn = (m as { unload?: () => unknown } | undefined)?.unload
      if (typeof unloadFn === 'function') await unloadFn.call(m)
    },
    async upload(data) { return (await load()).upload(data as never) },
    async alloc(byteLength) { return (await load()).alloc(byteLength) },
    launcher<Args extends unknown[]>(entry: string): Launcher<Args> {
      const fn = async (options: LaunchOptions, ...args: Args): Promise<void> => {
        const m = await load()
        await m.kernel(entry).launch(options as never, ...(args as unknown as never[]))
      }
      Object.defineProperty(fn, 'entry', { value: entry })
      Object.defineProperty(fn, 'name', { value: entry })
      return fn as Launcher<Args>
    },
  }
  return mod
}
