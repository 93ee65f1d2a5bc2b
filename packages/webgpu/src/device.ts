/// <reference types="@webgpu/types" preserve="true" />
// Adapter and device acquisition. In a browser the GPU object is `navigator.gpu`; in Node it is
// `create([])` of the optional `webgpu` package (Dawn), which the caller passes in (this package has no Node
// APIs and imports no native module). The device is requested with the adapter's own maxima for the limits
// kernels run into (buffer sizes, workgroup size and storage), because WebGPU hands out much smaller
// defaults (128 MiB storage bindings, 16 KiB workgroup storage) unless asked.

/** Limits requested at the adapter's maximum (WebGPU spec, "Limits"). */
export const RAISED_LIMITS = [
  'maxStorageBufferBindingSize', 'maxBufferSize', 'maxUniformBufferBindingSize',
  'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY', 'maxComputeWorkgroupSizeZ', 'maxComputeWorkgroupsPerDimension',
] as const

/** Optional features enabled when the adapter has them: f16 in WGSL, warp collectives, timing. */
export const WANTED_FEATURES = ['shader-f16', 'subgroups', 'timestamp-query'] as const

export interface WebGpuDeviceOptions {
  /** The GPU object: `navigator.gpu` in browsers (the default), `create([])` from the `webgpu` package in Node. */
  gpu?: GPU
  /** Use this adapter instead of requesting one. */
  adapter?: GPUAdapter
  /** @default 'high-performance' */
  powerPreference?: GPUPowerPreference
}

export interface AdapterSummary {
  vendor: string
  architecture: string
  description: string
  /** True for software adapters (SwiftShader) and other fallbacks. */
  isFallbackAdapter: boolean
  /** True where the adapter computes on the CPU: a fallback adapter, or one that names a CPU rasterizer
   *  (SwiftShader, llvmpipe, lavapipe) without saying it is a fallback. `auto` never prefers one over the emulator. */
  cpu: boolean
  subgroupMinSize?: number
  subgroupMaxSize?: number
}

export interface WebGpuDevice {
  /** The GPU object the adapter came from, kept referenced: Dawn in Node tears its instance down (and the
   *  process crashes on the next call) once the GPU object is garbage-collected. */
  gpu?: GPU
  adapter: GPUAdapter
  device: GPUDevice
  info: AdapterSummary
  /** Features enabled on the device. */
  features: ReadonlySet<string>
  /** The device's limits (after raising), as plain numbers. */
  limits: Readonly<Record<string, number>>
}

/** The adapter's information as plain values ("swiftshader", "google"…). */
export function summarizeAdapter(adapter: GPUAdapter): AdapterSummary {
  const i = (adapter as { info?: GPUAdapterInfo & { isFallbackAdapter?: boolean; subgroupMinSize?: number; subgroupMaxSize?: number } }).info
  const isFallbackAdapter = Boolean(i?.isFallbackAdapter ?? (adapter as { isFallbackAdapter?: boolean }).isFallbackAdapter)
  const vendor = i?.vendor ?? '', architecture = i?.architecture ?? '', description = i?.description ?? ''
  return {
    vendor, architecture, description, isFallbackAdapter,
    cpu: isFallbackAdapter || CPU_RASTERIZER.test(`${vendor} ${architecture} ${description}`),
    subgroupMinSize: i?.subgroupMinSize,
    subgroupMaxSize: i?.subgroupMaxSize,
  }
}

/** Adapters that name a CPU implementation. */
const CPU_RASTERIZER = /swiftshader|llvmpipe|lavapipe|software rasterizer/i

/** One line naming the adapter: `google swiftshader (fallback adapter)`. */
export function describeAdapter(info: AdapterSummary): string {
  const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ') || 'unnamed adapter'
  return info.isFallbackAdapter ? `${name} (fallback adapter)` : name
}

/** Copies a GPUSupportedLimits into a plain object (its properties live on the prototype). */
export function readLimits(limits: GPUSupportedLimits): Record<string, number> {
  const out: Record<string, number> = {}
  for (const k in limits) {
    const v = (limits as unknown as Record<string, unknown>)[k]
    if (typeof v === 'number') out[k] = v
  }
  return out
}

/** `navigator.gpu` where there is one. */
export function defaultGpu(): GPU | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator
  return nav?.gpu ?? undefined
}

/** Requests an adapter or throws NoAdapterError saying why. */
export async function requestWebGpuAdapter(options: WebGpuDeviceOptions = {}): Promise<GPUAdapter> {
  if (options.adapter) return options.adapter
  const gpu = options.gpu ?? defaultGpu()
  // (the messages are in launch-checks.ts, loaded then: a page with WebGPU never needs them)
  if (!gpu) throw (await import('./launch-checks.js')).noAdapter(false)
  const adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' })
  if (!adapter) throw (await import('./launch-checks.js')).noAdapter(true)
  return adapter
}

/** Requests an adapter and a device with raised limits and the wanted features the adapter has. */
export async function requestWebGpuDevice(options: WebGpuDeviceOptions = {}): Promise<WebGpuDevice> {
  const gpu = options.gpu ?? defaultGpu()
  const adapter = await requestWebGpuAdapter({ ...options, gpu })
  const requiredLimits: Record<string, number> = {}
  const al = readLimits(adapter.limits)
  for (const k of RAISED_LIMITS) if (al[k] !== undefined) requiredLimits[k] = al[k]!
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f)) as GPUFeatureName[]
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures })
  return {
    gpu,
    adapter,
    device,
    info: summarizeAdapter(adapter),
    features: new Set(device.features as unknown as Iterable<string>),
    limits: readLimits(device.limits),
  }
}
