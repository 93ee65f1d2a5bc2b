// Whether a manifest's parameters carry the compiler's layouts (`valueType`): what decides that a loader stub
// hands the runtime its struct codecs (`namedValueTypes`, @kernelpack/codegen) and that the runtime's
// `module.types` needs them — one function, so that the two never disagree. Pure: no Node APIs.
import type { KernelManifest } from './manifest.js'

export function hasValueTypes(manifest: KernelManifest): boolean {
  return manifest.kernels.some((k) => k.params.some((p) => p.valueType !== undefined))
}
