// @kernelpack/runtime for browsers: the same API with the emulator backend only (no koffi, no Node
// built-ins). A string or URL source is fetched.
import type { KernelManifest } from '@kernelpack/offload'
import type { Backend } from './backend.js'
import { createModule, type Module } from './module.js'
import { bytesOf, describeSource, fetchBytes, isResponse, readResponse, type ModuleSource } from './source.js'

export * from './exports.js'

export interface LoadModuleOptions {
  /** Browsers have no CUDA driver: 'auto' and 'emulator' both run the PTX emulator. @default 'auto' */
  backend?: 'auto' | 'cuda' | 'emulator'
  device?: number
  libcudaPath?: string
}

let emulator: Promise<Backend> | undefined

export async function loadModule(source: ModuleSource, manifest: KernelManifest, options: LoadModuleOptions = {}): Promise<Module> {
  const which = options.backend ?? 'auto'
  if (which === 'cuda') {
    throw new Error("loadModule: backend 'cuda' needs Node and the NVIDIA driver; in a browser use 'auto' or 'emulator' (the PTX emulator)")
  }
  if (which !== 'auto' && which !== 'emulator') throw new TypeError(`loadModule: backend must be 'auto', 'cuda' or 'emulator', got ${JSON.stringify(which)}`)
  emulator ??= import('@kernelpack/emulator').then((m) => {
    const create = (m as { createEmulatorBackend?: () => Backend }).createEmulatorBackend
    if (typeof create !== 'function') throw new Error('@kernelpack/emulator does not export createEmulatorBackend()')
    return create()
  })
  emulator.catch(() => (emulator = undefined))
  let bytes = bytesOf(source)
  if (!bytes) {
    if (isResponse(source)) bytes = await readResponse(source, describeSource(source))
    else if (typeof source === 'string' || source instanceof URL) bytes = await fetchBytes(source)
    else throw new TypeError(`loadModule: source must be bytes, a URL or a Response, got ${typeof source}`)
  }
  const backend = await emulator
  return createModule(backend, bytes, manifest, {
    sourceName: describeSource(source),
    reason: which === 'auto' ? 'auto: browsers have no CUDA driver, so the PTX emulator runs' : "backend 'emulator' was requested",
  })
}
