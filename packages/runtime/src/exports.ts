// What both entries of @kernelpack/runtime export besides loadModule: index.ts (Node) and browser.ts
// (no koffi, no Node built-ins) differ only in how loadModule finds a backend and reads its source.
export type * from './backend.js'
export type { DeviceBuffer, DeviceGlobal, DeviceMemory, Kernel, LaunchOptions, Module, Stream, Event, BackendInfo, Dim } from './module.js'
export { createModule } from './module.js'
export { readImages } from './images.js'
export { CudaError, NoDriverError } from './errors.js'
export { SanitizerError } from '@kernelpack/ptx'
export { launchLimitsFor, maxSharedOptInFor, computeCapabilityOfArch, type LaunchLimits, type KernelAttribute } from './launch-limits.js'
export { selectImage, parseArch, NoImageError, type ImageChoice, type SelectDevice } from './select-image.js'
export { layoutParams, createPackTarget, slice, type KernelArg, type Slice, type ParamLayout } from './marshal.js'
export { createPacker, packParams } from './pack.js'
export {
  t, array, struct, union, sizeof, alignof, offsetof, layout, encode, toHalfBits, toBfloat16Bits, fromValueType, valueCodec, namedValueTypes,
  type ValueCodec, type DataType, type ScalarType, type ArrayType, type StructType, type TypedValue, type ScalarName,
} from './schema.js'
export type { ModuleSource } from './source.js'
export {
  decodeBase64, toAssetHref,
  type BackendName, type DevicePointer, type StructArg, type Launcher, type ImageInfo, type KernelModule, type KernelModuleSpec,
} from './kernel-module.js'
export type { KernelManifest, KernelInfo, ParamInfo, VariableInfo, ValueType, FieldInfo, ValueScalar } from '@kernelpack/offload'
