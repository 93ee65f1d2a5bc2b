// @kernelpack/runtime for browsers: the same API over the WebGPU backend or the PTX emulator (no koffi, no
// Node built-ins). A string or URL source is fetched. `auto` runs WebGPU when the page has an adapter and
// every kernel translates, else the emulator, and says why in `mod.backend.reason` (issue 15).
import type { KernelManifest } from '@kernelpack/offload'
import type { CheckSetting } from '@kernelpack/ptx'
import type { EmulatorLoadOptions } from './emulator.js'
import { createModule, type Module } from './module.js'
import { createKernelModule, type KernelModule, type KernelModuleSpec } from './kernel-module.js'
import { bytesOf, describeSource, fetchBytes, isResponse, readResponse, type ModuleSource } from './source.js'
import { describeWebGpuFallback, hardwareWebGpu, isWebGpuFallback, webgpuBackend, type WebGpuOptions } from './webgpu.js'

export * from './exports.js'
export type { WebGpuOptions } from './webgpu.js'

/** A loader stub's `module` (what unplugin-cuda's generated code calls): lazy, shared by the stub's launchers,
 *  reloadable and hot-replaceable; it loads through this entry's loadModule. */
export function defineKernelModule(spec: KernelModuleSpec): KernelModule {
  return createKernelModule(spec, loadModule)
}

export interface LoadModuleOptions extends EmulatorLoadOptions {
  /** `auto`: WebGPU when the page has a hardware adapter (never a fallback/CPU one) and every kernel translates, else the PTX emulator.
   *  Browsers have no CUDA driver. @default 'auto' */
  backend?: 'auto' | 'cuda' | 'emulator' | 'webgpu'
  device?: number
  libcudaPath?: string
  /** The WebGPU backend's GPU (default `navigator.gpu`) and translator. */
  webgpu?: WebGpuOptions
  /** The emulator's sanitizer (issue 19): `true` or `{ race, sync, init, memory, mode }`; selects the emulator
   *  under `'auto'`. See the Node entry's option. @default off */
  check?: CheckSetting
}

/** The emulator's adapter, loaded when a module runs there (a page that runs its kernels on WebGPU never
 *  loads it; the emulator itself is loaded by it). */
const emulator = () => import('./emulator.js')

export async function loadModule(source: ModuleSource, manifest: KernelManifest, options: LoadModuleOptions = {}): Promise<Module> {
  const which = options.backend ?? 'auto'
  if (which === 'cuda') {
    throw new Error("loadModule: backend 'cuda' needs Node and the NVIDIA driver; in a browser use 'auto', 'webgpu' or 'emulator'")
  }
  if (which !== 'auto' && which !== 'emulator' && which !== 'webgpu') throw new TypeError(`loadModule: backend must be 'auto', 'cuda', 'emulator' or 'webgpu', got ${JSON.stringify(which)}`)
  // the sanitizer's settings are read only when some are given (a page without them does not load the code)
  const check = options.check === undefined || options.check === false ? undefined : (await import('@kernelpack/ptx/sanitizer')).resolveCheck(options.check, 'loadModule: check')
  if (check && which === 'webgpu') throw new TypeError("loadModule: check runs on the PTX emulator, not on backend 'webgpu'; use backend 'emulator' or 'auto'")
  let bytes = bytesOf(source)
  if (!bytes) {
    if (isResponse(source)) bytes = await readResponse(source, describeSource(source))
    else if (typeof source === 'string' || source instanceof URL) bytes = await fetchBytes(source)
    else throw new TypeError(`loadModule: source must be bytes, a URL or a Response, got ${typeof source}`)
  }
  const sourceName = describeSource(source)
  if (which === 'emulator' || check) {
    const reason = which === 'emulator' ? `backend 'emulator' was requested${check ? ', with checks' : ''}` : 'auto: checks were requested, which run on the PTX emulator'
    return createModule(await (await emulator()).emulatorBackend(options, check), bytes, manifest, { sourceName, reason, timeoutMs: options.timeoutMs })
  }
  // timeoutMs: WebGPU stops a launch that runs longer too (in slices, or by destroying the device)
  if (which === 'webgpu') return createModule(await webgpuBackend(options.webgpu), bytes, manifest, { sourceName, reason: "backend 'webgpu' was requested", timeoutMs: options.timeoutMs })
  // a hardware adapter that translates every kernel, else the emulator (never a fallback/CPU adapter)
  const hw = await hardwareWebGpu(options.webgpu)
  let why: string
  if ('backend' in hw) {
    try {
      return await createModule(hw.backend, bytes, manifest, { sourceName, reason: `auto: WebGPU (${hw.adapter}) runs every kernel of this module`, timeoutMs: options.timeoutMs })
    } catch (err) {
      if (!isWebGpuFallback(err)) throw err
      why = describeWebGpuFallback(err, hw.adapter)
    }
  } else why = hw.why
  return createModule(await (await emulator()).emulatorBackend(options), bytes, manifest, {
    sourceName,
    timeoutMs: options.timeoutMs,
    reason: `auto: browsers have no CUDA driver, and ${why}, so the PTX emulator runs`,
  })
}
