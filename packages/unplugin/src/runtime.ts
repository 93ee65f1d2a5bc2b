// Runtime helper imported by every generated loader stub (`unplugin-cuda/runtime`); its public types are
// declared in ../runtime.d.ts (standalone, so user projects type-check without Node or runtime internals).
// A real module, not template text, so the stub stays a few lines of data. It runs in Node and in
// browsers: no Node built-ins here; @kernelpack/runtime reads file: URLs with fs in Node and fetches
// elsewhere (its `browser` export condition keeps koffi out of browser bundles).
import { loadModule } from '@kernelpack/runtime'
import type { KernelManifest } from '@kernelpack/offload'
import type { BackendName, DeviceBuffer, KernelModule, KernelModuleSpec, Launcher, LaunchOptions, RuntimeModule } from '../runtime.js'

export type * from '../runtime.js'

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

type LoadSource = Parameters<typeof loadModule>[0]

/** What loadModule gets: a URL object for absolute URL strings (rollup's ROLLUP_FILE_URL gives a string). */
function toLoadSource(source: unknown): LoadSource {
  if (typeof source === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(source) && !/^[a-z]:[\\/]/i.test(source)) return new URL(source)
  return source as LoadSource
}

// The spec behind a module, read by hotReplace on the module a new build of the same .cu created.
const SPEC = Symbol.for('unplugin-cuda.spec')

/** Builds a stub's `module`: lazy loading, shared between launchers, reloadable after `unload()`, and
 *  hot-replaceable (Vite HMR) with its launchers and device buffers kept. */
export function defineKernelModule(spec: KernelModuleSpec): KernelModule {
  let current = spec
  let loading: Promise<RuntimeModule> | undefined
  const listeners = new Set<(m: KernelModule) => void>()
  const load = (options: { backend?: BackendName } = {}): Promise<RuntimeModule> => {
    if (!loading) {
      const s = current
      const backend = options.backend ?? s.backend
      loading = Promise.resolve()
        .then(() => loadModule(toLoadSource(s.source()), s.manifest as unknown as KernelManifest, { backend }))
        .then((m) => m as unknown as RuntimeModule)
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
    load,
    unload,
    async upload(data): Promise<DeviceBuffer> { return (await load()).upload(data) },
    async alloc(byteLength): Promise<DeviceBuffer> { return (await load()).alloc(byteLength) },
    launcher<Args extends unknown[]>(entry: string): Launcher<Args> {
      const fn = async (options: LaunchOptions, ...args: Args): Promise<void> => {
        const m = await load()
        await m.kernel(entry).launch(options, ...args)
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
