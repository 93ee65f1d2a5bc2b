// The `webgpu` backend, loaded on demand (@kernelpack/webgpu is imported only when a module asks for it), and
// `auto`'s use of it in browsers (issue 15): WebGPU runs a module when the page has an adapter and the
// translator translates every kernel; otherwise the emulator runs and the reason says why. No Node built-ins.
import type { WebGpuBackendOptions } from '@kernelpack/webgpu'
import type { Backend } from './backend.js'

/** `loadModule(…, { webgpu })`: where the GPU comes from and what translates PTX to WGSL. */
export type WebGpuOptions = Pick<WebGpuBackendOptions, 'gpu' | 'adapter' | 'powerPreference' | 'translator' | 'initialMemory' | 'memoryLimit' | 'print'> & {
  /** `auto` takes a fallback (CPU) adapter such as SwiftShader or llvmpipe too, instead of the emulator: for
   *  testing the WebGPU path on a machine without a GPU. @default false */
  allowFallbackAdapter?: boolean
}

/** One backend (one device) per GPU object (or printf destination, for a print of its own) and translator, for
 *  the life of the page or process. */
const backends = new Map<unknown, Map<unknown, Promise<Backend>>>()

export function webgpuBackend(options: WebGpuOptions = {}): Promise<Backend> {
  // (allowFallbackAdapter is auto's choice, not the backend's: one backend per GPU object and translator; a
  // print of its own keys its own backends instead, on the GPU the first module with it asks for)
  const key = options.print ?? options.adapter ?? options.gpu
  let byTranslator = backends.get(key)
  if (!byTranslator) backends.set(key, (byTranslator = new Map()))
  const cached = byTranslator.get(options.translator)
  if (!cached) return openWebGpu(byTranslator, options)
  // a device that is gone (destroyed to stop a running launch, or lost) is not used again: a new one
  return cached.then((b) => ((b as { lost?: string }).lost === undefined ? b : openWebGpu(byTranslator, options)))
}

function openWebGpu(byTranslator: Map<unknown, Promise<Backend>>, options: WebGpuOptions): Promise<Backend> {
  const b = import('@kernelpack/webgpu/backend').then((m) => m.createWebGpuBackend(options))
  byTranslator.set(options.translator, b)
  b.catch(() => { if (byTranslator.get(options.translator) === b) byTranslator.delete(options.translator) })
  return b
}

/** Errors after which `auto` runs the emulator instead: no adapter, a kernel that does not translate or does
 *  not fit the device, a WebGPU failure. Anything else (a bad manifest, a corrupt file) would fail there too. */
export function isWebGpuFallback(err: unknown): err is Error & { summary?: string } {
  const name = (err as Error | undefined)?.name
  return name === 'NoAdapterError' || name === 'CannotTranslateError' || name === 'WebGpuError'
}

/** Why WebGPU did not run, in one line for `auto`'s reason. */
export function describeWebGpuFallback(err: Error & { summary?: string }, adapter?: string): string {
  if (err.name === 'NoAdapterError') return err.summary ?? err.message
  // CannotTranslateError: "<source>: cannot run on WebGPU: <reasons>"
  const why = err.message.replace(/^.*?: cannot run on WebGPU: /s, '')
  return `WebGPU${adapter ? ` (${adapter})` : ''} cannot run this module: ${why}`
}

/**
 * `auto`'s WebGPU step: the backend on a hardware adapter, or why there is none. An adapter that computes on
 * the CPU (@kernelpack/webgpu's `info.cpu`: a fallback adapter, or one that names a CPU rasterizer) is refused:
 * the emulator is the CPU path.
 */
export async function hardwareWebGpu(options: WebGpuOptions = {}, open: (o: WebGpuOptions) => Promise<Backend> = webgpuBackend): Promise<{ backend: Backend; adapter: string } | { why: string }> {
  let backend: Backend
  try {
    backend = await open(options)
  } catch (err) {
    if (isWebGpuFallback(err)) return { why: describeWebGpuFallback(err as Error & { summary?: string }) }
    throw err
  }
  const adapter = backend.device().name.replace(/^WebGPU: /, '')
  const cpu = (backend as { gpu?: { info?: { cpu?: boolean } } }).gpu?.info?.cpu
  if (!options.allowFallbackAdapter && cpu) {
    return { why: `WebGPU's only adapter, ${adapter.replace(/ \(fallback adapter\)$/, '')}, is a fallback (CPU) adapter (webgpu.allowFallbackAdapter takes it)` }
  }
  return { backend, adapter }
}
