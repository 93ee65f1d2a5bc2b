// The `webgpu` backend, loaded on demand (@kernelpack/webgpu is imported only when a module asks for it), and
// `auto`'s use of it in browsers (issue 15): WebGPU runs a module when the page has an adapter and the
// translator translates every kernel; otherwise the emulator runs and the reason says why. No Node built-ins.
import type { WebGpuBackendOptions } from '@kernelpack/webgpu'
import type { Backend } from './backend.js'

/** `loadModule(…, { webgpu })`: where the GPU comes from and what translates PTX to WGSL. */
export type WebGpuOptions = Pick<WebGpuBackendOptions, 'gpu' | 'adapter' | 'powerPreference' | 'translator' | 'initialMemory' | 'memoryLimit'>

/** One backend (one device) per GPU object and translator, for the life of the page or process. */
const backends = new Map<unknown, Map<unknown, Promise<Backend>>>()

export function webgpuBackend(options: WebGpuOptions = {}): Promise<Backend> {
  let byTranslator = backends.get(options.adapter ?? options.gpu)
  if (!byTranslator) backends.set(options.adapter ?? options.gpu, (byTranslator = new Map()))
  let b = byTranslator.get(options.translator)
  if (!b) {
    b = import('@kernelpack/webgpu').then((m) => m.createWebGpuBackend(options))
    byTranslator.set(options.translator, b)
    b.catch(() => byTranslator.delete(options.translator))
  }
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
