// Facts about a manifest's by-value parameter types (the compiler's layouts, `valueType`). Pure: no Node APIs.
import type { KernelManifest, ValueType } from './manifest.js'

/** Whether a manifest's by-value parameters name a struct or union: the C++ types a stub's `module.types`
 *  lists (the runtime's namedValueTypes), which the stub then hands to the runtime. */
export function hasNamedValueTypes(manifest: KernelManifest): boolean {
  const named = (v: ValueType): boolean => v.kind === 'array' ? named(v.elem) : v.kind !== 'scalar' && (!!v.name || v.fields.some((f) => named(f.type)))
  return manifest.kernels.some((k) => k.params.some((p) => p.valueType !== undefined && named(p.valueType)))
}
