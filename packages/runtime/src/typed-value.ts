// A value tagged with its schema (`t.f16.of(1.5)`, `Params.of({…})`) as the launch path sees it, without the
// schema constructors and codecs of schema.ts: a page whose kernels take no struct by value never loads
// them. The tag of a typed value is the function that writes it (schema.ts's writeValue), so marshalling
// writes one without importing schema.ts; only schema.ts makes typed values.
import type { DataType } from './schema.js'

/** A JS value tagged with its schema; what `Kernel.launch` accepts for a by-value struct, array, f16… */
export interface TypedValue {
  readonly type: DataType
  readonly value: unknown
}

export type ValueWriter = (dv: DataView, offset: number, type: DataType, value: unknown, path: string) => void

export const typedValueTag = Symbol.for('kernelpack.typedValue')

export function isTypedValue(x: unknown): x is TypedValue {
  return typeof x === 'object' && x !== null && typeof (x as Record<symbol, unknown>)[typedValueTag] === 'function'
}

/** Writes a typed value's bytes at `offset`; `path` names the place for errors. */
export function writeTypedValue(dv: DataView, offset: number, v: TypedValue, path: string): void {
  ;(v as unknown as Record<symbol, ValueWriter>)[typedValueTag]!(dv, offset, v.type, v.value, path)
}

export function showValue(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`
  if (typeof v === 'string') return `${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)} (string)`
  if (v === null || v === undefined || typeof v !== 'object') return String(v)
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${(v as ArrayBufferView).byteLength} bytes)`
  return Array.isArray(v) ? `an array of ${v.length}` : `an object (${Object.keys(v).slice(0, 5).join(', ') || 'no keys'})`
}
