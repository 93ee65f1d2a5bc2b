// @kernelpack/webgpu: run PTX kernels on WebGPU (the page's GPU, or Dawn in Node). No Node APIs.
export { createWebGpuBackend } from './backend.js'
export type {
  WebGpuBackend, WebGpuBackendOptions, WebGpuDeviceInfo, WebGpuFunction, WebGpuKernelParams, WebGpuLaunchConfig, WebGpuModule,
} from './backend.js'
export { requestWebGpuAdapter, requestWebGpuDevice, describeAdapter, summarizeAdapter, readLimits, RAISED_LIMITS, WANTED_FEATURES } from './device.js'
export type { AdapterSummary, WebGpuDevice, WebGpuDeviceOptions } from './device.js'
export { CannotTranslateError, NoAdapterError, WebGpuError, WebGpuFault, WebGpuLimitError, type Untranslatable } from './errors.js'
export { createFixedTranslator, subgroupsAre32 } from './translate.js'
export { emitWgsl } from './translator.js'
export { translateModule } from './emit-wgsl.js'
export { translatePtxForShipping, compactWgsl, SHIPPING_TARGET, SUBGROUPS_32_TARGET } from './from-ptx.js'
export { encodeWgslImage, decodeWgslImage } from './wgsl-image.js'
export type { Dim3, TranslateInput, TranslateTarget, WgslKernel, WgslModule, WgslTranslator, WgslVariable } from './translate.js'
export { ArenaAllocator } from './arena.js'
export * as layout from './layout.js'
