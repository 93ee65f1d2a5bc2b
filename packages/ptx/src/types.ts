// PTX fundamental types and state spaces (PTX ISA 9.x, "Fundamental Types", "State Spaces"). THE one table
// of type sizes: the parser, the parameter layout, the manifest, the runtime's checks and the emulator all
// read it from here.

/** A PTX fundamental type without its dot (`u32`, `f16x2`, `pred`). */
export type PtxType =
  | 'b8' | 'b16' | 'b32' | 'b64' | 'b128'
  | 'u8' | 'u16' | 'u32' | 'u64'
  | 's8' | 's16' | 's32' | 's64'
  | 'f16' | 'f16x2' | 'bf16' | 'bf16x2' | 'f32' | 'f64' | 'tf32'
  | 'e4m3x2' | 'e5m2x2'
  | 'pred'

/** Byte size of each type. `.pred` has no memory size; 1 as ptxas counts it. */
const TYPE_SIZE: Readonly<Record<PtxType, number>> = {
  b8: 1, u8: 1, s8: 1,
  b16: 2, u16: 2, s16: 2, f16: 2, bf16: 2, e4m3x2: 2, e5m2x2: 2,
  b32: 4, u32: 4, s32: 4, f32: 4, f16x2: 4, bf16x2: 4, tf32: 4,
  b64: 8, u64: 8, s64: 8, f64: 8,
  b128: 16,
  pred: 1,
}

/** Every PTX type, in table order. */
export const PTX_TYPES: readonly PtxType[] = Object.keys(TYPE_SIZE) as PtxType[]

/** True for a PTX fundamental type name (an own key of the table: `constructor` is not a type). */
export function isPtxType(name: string): name is PtxType {
  return Object.prototype.hasOwnProperty.call(TYPE_SIZE, name)
}

/** Byte size of a PTX type (`u32` → 4); 0 for a name that is not a type. */
export function typeSize(type: string): number {
  return isPtxType(type) ? TYPE_SIZE[type] : 0
}

export function isFloatType(t: PtxType): boolean {
  return t === 'f32' || t === 'f64' || t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2' || t === 'tf32'
}

export function isSignedType(t: PtxType): boolean {
  return t === 's8' || t === 's16' || t === 's32' || t === 's64'
}

/** `.b`, `.u` and `.s` types of 8 to 64 bits. */
export function isIntegerType(t: PtxType): boolean {
  return /^[bus](8|16|32|64)$/.test(t)
}

export type StateSpace = 'global' | 'shared' | 'local' | 'const' | 'param' | 'generic'

/** The spaces a variable can be declared in. */
export type VariableSpace = 'global' | 'const' | 'shared' | 'local' | 'param'
