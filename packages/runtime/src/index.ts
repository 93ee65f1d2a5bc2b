// @kernelpack/runtime for Node: loadModule over the cuda backend (koffi → libcuda), the PTX emulator, or (when
// asked) WebGPU on Dawn. koffi, node:fs and the webgpu packages are imported lazily so that importing the
// runtime stays cheap.
import type { KernelManifest } from '@kernelpack/offload'
// readImages reads compressed binaries too in Node (the module reader imports only the core)
import '@kernelpack/offload'
import { resolveCheck, type CheckSetting } from '@kernelpack/ptx'
import type { Backend } from './backend.js'
import { NoDriverError } from './errors.js'
import { createModule, type Module } from './module.js'
import { createKernelModule, type KernelModule, type KernelModuleSpec } from './kernel-module.js'
import { bytesOf, describeSource, fetchBytes, isResponse, readResponse, type ModuleSource } from './source.js'
import { describeWebGpuFallback, hardwareWebGpu, isWebGpuFallback, webgpuBackend, type WebGpuOptions } from './webgpu.js'
import { emulatorBackend, type EmulatorLoadOptions } from './emulator.js'

export * from './exports.js'
export type { WebGpuOptions } from './webgpu.js'

/** A loader stub's `module` (what unplugin-cuda's generated code calls): lazy, shared by the stub's launchers,
 *  reloadable and hot-replaceable; it loads through this entry's loadModule. */
export function defineKernelModule(spec: KernelModuleSpec): KernelModule {
  return createKernelModule(spec, loadModule)
}

export interface LoadModuleOptions extends EmulatorLoadOptions {
  /** `auto`: cuda where a driver answers, else WebGPU on a hardware adapter (Dawn, the optional `webgpu`
   *  package; never a fallback/CPU adapter) when it translates every kernel, else the emulator. @default 'auto' */
  backend?: 'auto' | 'cuda' | 'emulator' | 'webgpu'
  /** CUDA device ordinal. @default 0 */
  device?: number
  /** Path of libcuda. @default `KERNELPACK_LIBCUDA`, else `libcuda.so.1` */
  libcudaPath?: string
  /** cuda: per-thread default stream semantics instead of the legacy default stream. @default false */
  perThreadDefaultStream?: boolean
  /** backend 'webgpu': the GPU object, by default `create([])` of the optional `webgpu` package (Dawn), and
   *  the PTX→WGSL translator. */
  webgpu?: WebGpuOptions
  /**
   * The emulator's sanitizer (issue 19): `true` for racecheck, synccheck, initcheck and memcheck, or
   * `{ race, sync, init, memory, mode }`. A failed check rejects the launch with a SanitizerError
   * (`mode: 'collect'`: read them with `mod.sanitizerReports()`). Checks run on the emulator, on the calling
   * thread: with `'auto'` they select it; `'cuda'` and `'webgpu'` refuse them (on a GPU, run compute-sanitizer).
   * @default `KERNELPACK_CHECK` (`1`, or a list such as `race,sync`; ignored by `'cuda'`/`'webgpu'`), else off
   */
  check?: CheckSetting
}

const backends = new Map<string, Promise<Backend>>()

function cudaBackend(options: LoadModuleOptions): Promise<Backend> {
  const key = `cuda:${options.device ?? 0}:${options.libcudaPath ?? process.env.KERNELPACK_LIBCUDA ?? ''}:${options.perThreadDefaultStream ? 'ptds' : 'legacy'}`
  let b = backends.get(key)
  if (!b) {
    b = import('./cuda/cuda-backend.js').then((m) => m.createCudaBackend({ device: options.device, libcudaPath: options.libcudaPath, perThreadDefaultStream: options.perThreadDefaultStream }))
    backends.set(key, b)
    b.catch(() => backends.delete(key))
  }
  return b
}

/** WebGPU in Node: the caller's GPU object, else Dawn from the optional `webgpu` package. */
async function nodeWebGpuBackend(options: WebGpuOptions = {}): Promise<Backend> {
  if (options.gpu || options.adapter) return webgpuBackend(options)
  const d = await dawn()
  if ('error' in d) {
    throw new Error(d.missing
      ? "loadModule: backend 'webgpu' in Node needs the optional `webgpu` package (Dawn's WebGPU for Node), which is not installed where the app runs: add it to the app's dependencies (`npm install webgpu`), or pass a GPU object ({ webgpu: { gpu } }), or use backend 'auto' or 'emulator'"
      : `loadModule: backend 'webgpu' in Node: the \`webgpu\` package (Dawn) is installed but failed to load: ${d.error.message}`, { cause: d.error })
  }
  return webgpuBackend({ ...options, gpu: d.gpu })
}

/** Dawn's GPU object from the optional `webgpu` package (one per process), or why not: not installed (or not
 *  resolvable from where the runtime runs, e.g. a bundle outside the app), or there but failing to load
 *  (Dawn's native binary): two different fixes. */
let dawnGpu: Promise<{ gpu: GPU } | { error: Error; missing: boolean }> | undefined
function dawn(): Promise<{ gpu: GPU } | { error: Error; missing: boolean }> {
  dawnGpu ??= (async () => {
    // a variable specifier: bundlers must not try to resolve an optional package the app may not have
    const name = 'webgpu'
    try {
      const { create } = (await import(/* webpackIgnore: true */ /* @vite-ignore */ name)) as { create: (flags: string[]) => GPU }
      return { gpu: create([]) }
    } catch (err) {
      const missing = (err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && /['"]webgpu['"]/.test((err as Error).message)
      return { error: err as Error, missing }
    }
  })()
  return dawnGpu
}

/** The backend loadModule would use, and why. */
export async function resolveBackend(options: LoadModuleOptions = {}): Promise<{ backend: Backend; reason: string }> {
  const which = options.backend ?? 'auto'
  const fromEnv = options.check === undefined
  const check = resolveCheck(fromEnv ? process.env.KERNELPACK_CHECK : options.check, fromEnv ? 'KERNELPACK_CHECK' : 'loadModule: check')
  const envNote = fromEnv && check ? ' (KERNELPACK_CHECK is ignored: the sanitizer runs on the emulator)' : ''
  if (check && !fromEnv && (which === 'cuda' || which === 'webgpu')) {
    throw new TypeError(`loadModule: check runs on the PTX emulator, not on backend '${which}'; use backend 'emulator' or 'auto' (on a GPU, run compute-sanitizer)`)
  }
  if (which === 'cuda') return { backend: await cudaBackend(options), reason: `backend 'cuda' was requested${envNote}` }
  if (which === 'emulator') return { backend: await emulatorBackend(options, check), reason: `backend 'emulator' was requested${check ? ', with checks' : ''}` }
  if (which === 'webgpu') return { backend: await nodeWebGpuBackend(options.webgpu), reason: `backend 'webgpu' was requested${envNote}` }
  if (which !== 'auto') throw new TypeError(`loadModule: backend must be 'auto', 'cuda', 'emulator' or 'webgpu', got ${JSON.stringify(which)}`)
  if (check) return { backend: await emulatorBackend(options, check), reason: `auto: checks were requested (${fromEnv ? 'KERNELPACK_CHECK' : 'check'}), which run on the PTX emulator` }
  let noDriver: string
  try {
    const backend = await cudaBackend(options)
    return { backend, reason: `auto: the NVIDIA driver answered (${backend.device().name})` }
  } catch (err) {
    if (!(err instanceof NoDriverError)) throw err
    noDriver = err.summary
  }
  // then the machine's own GPU through WebGPU (Dawn), where it offers a hardware adapter
  const hw = await autoWebGpu(options.webgpu)
  if ('backend' in hw) return { backend: hw.backend, reason: `auto: ${noDriver}, so WebGPU runs on ${hw.adapter} (Dawn)` }
  return { backend: await emulatorBackend(options), reason: `auto: using the PTX emulator because ${noDriver}, and ${hw.why}` }
}

/** Whether Linux has a Vulkan loader for Dawn (without one Dawn prints a warning of its own); asked once. */
let vulkanLoader: Promise<boolean> | undefined
function hasVulkanLoader(): Promise<boolean> {
  vulkanLoader ??= (async () => {
    if (process.platform !== 'linux') return true
    const { existsSync } = await import('node:fs')
    const dirs = [...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean), '/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/lib/aarch64-linux-gnu', '/usr/lib64', '/lib64', '/usr/lib', '/usr/local/lib']
    return dirs.some((d) => existsSync(`${d}/libvulkan.so.1`))
  })()
  return vulkanLoader
}

/** `auto`'s WebGPU step in Node: the caller's GPU object, else Dawn from the optional `webgpu` package where a
 *  Vulkan loader exists, on a hardware adapter only. */
async function autoWebGpu(options: WebGpuOptions = {}): Promise<{ backend: Backend; adapter: string } | { why: string }> {
  if (options.gpu || options.adapter) return hardwareWebGpu(options)
  if (!(await hasVulkanLoader())) return { why: 'WebGPU has no Vulkan loader (libvulkan.so.1) for Dawn here' }
  const d = await dawn()
  if ('gpu' in d) return hardwareWebGpu({ ...options, gpu: d.gpu })
  return { why: d.missing ? 'WebGPU needs the optional `webgpu` package (Dawn), which is not installed' : `the \`webgpu\` package (Dawn) failed to load (${d.error.message.split('\n')[0]})` }
}

async function readSource(source: ModuleSource): Promise<Uint8Array> {
  const bytes = bytesOf(source)
  if (bytes) return bytes
  if (isResponse(source)) return readResponse(source, describeSource(source))
  if (source instanceof URL || (typeof source === 'string' && /^(file|https?|data):/i.test(source))) {
    const url = new URL(source)
    if (url.protocol !== 'file:') return fetchBytes(url)
    const [{ readFile }, { fileURLToPath }] = await Promise.all([import('node:fs/promises'), import('node:url')])
    return readBytes(readFile, fileURLToPath(url))
  }
  if (typeof source === 'string') {
    const { readFile } = await import('node:fs/promises')
    return readBytes(readFile, source)
  }
  throw new TypeError(`loadModule: source must be bytes, a file path, a URL or a Response, got ${typeof source}`)
}

async function readBytes(readFile: typeof import('node:fs/promises').readFile, path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path))
  } catch (err) {
    throw new Error(`${path}: cannot read the module: ${(err as Error).message}`, { cause: err })
  }
}

/**
 * Loads a module (an offload binary, or a raw cubin/PTX) for `manifest` on the chosen backend.
 * `mod.backend.name` says which backend runs and `mod.backend.reason` why.
 */
export async function loadModule(source: ModuleSource, manifest: KernelManifest, options: LoadModuleOptions = {}): Promise<Module> {
  const [bytes, { backend, reason }] = await Promise.all([readSource(source), resolveBackend(options)])
  const sourceName = describeSource(source)
  try {
    return await createModule(backend, bytes, manifest, { sourceName, reason, timeoutMs: options.timeoutMs })
  } catch (err) {
    // auto picked WebGPU, which cannot run every kernel of this module (or failed): the emulator runs it all
    if ((options.backend ?? 'auto') !== 'auto' || backend.name !== 'webgpu' || !isWebGpuFallback(err)) throw err
    const adapter = backend.device().name.replace(/^WebGPU: /, '')
    return createModule(await emulatorBackend(options), bytes, manifest, {
      sourceName, timeoutMs: options.timeoutMs,
      reason: `${reason.replace(/, so WebGPU runs on .*$/, '')}, and ${describeWebGpuFallback(err as Error & { summary?: string }, adapter)}, so the PTX emulator runs`,
    })
  }
}
