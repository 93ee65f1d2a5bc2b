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

/** Builds a stub's `module`: lazy loading, shared between launchers, reloadable after `unload()`. */
export function defineKernelModule(spec: KernelModuleSpec): KernelModule {
  let loading: Promise<RuntimeModule> | undefined
  const load = (options: { backend?: BackendName } = {}): Promise<RuntimeModule> => {
    if (!loading) {
      const backend = options.backend ?? spec.backend
      loading = Promise.resolve()
        .then(() => loadModule(toLoadSource(spec.source()), spec.manifest as unknown as KernelManifest, { backend }))
        .then((m) => m as unknown as RuntimeModule)
        .catch((err: unknown) => {
          loading = undefined
          const e = err instanceof Error ? err : new Error(String(err))
          e.message = `${spec.name}: cannot load kernels: ${e.message}`
          throw e
        })
    }
    return loading
  }
  return {
    name: spec.name,
    manifest: spec.manifest,
    images: Object.freeze(spec.images.map((i) => Object.freeze({ ...i }))),
    load,
    async unload() {
      const current = loading
      loading = undefined
      if (!current) return
      const m = await current.catch(() => undefined)
      if (m) await m.unload()
    },
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
  }
}
