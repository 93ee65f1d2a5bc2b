// The public createPacker and packParams (exports.ts): marshal.ts's, with schema.ts's layouts for parameters
// that carry the compiler's layout. Module loading passes those layouts only when a manifest needs them, so a
// page whose kernels take no struct by value does not load schema.ts.
import type { ParamInfo } from '@kernelpack/offload'
import type { KernelParams } from './backend.js'
import { createPacker as createWith, packParams as packWith, type Packer, type PackerOptions } from './marshal.js'
import { valueLayouts } from './schema.js'

/** Builds the packer for one kernel (marshal.ts); parameters with a `valueType` take plain objects. */
export function createPacker(kernel: string, params: readonly ParamInfo[], options: PackerOptions = {}): Packer {
  return createWith(kernel, params, { layouts: valueLayouts, ...options })
}

/** Packs `args` for `params` into a fresh buffer: the KernelParams a Backend.launch receives. */
export function packParams(kernel: string, params: readonly ParamInfo[], args: readonly unknown[]): KernelParams {
  return packWith(kernel, params, args, valueLayouts)
}
