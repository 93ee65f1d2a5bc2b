// The kernel manifest: the JSON that travels beside an offload binary (`<name>.manifest.json`, the
// loader stub, `?manifest`). Written by @kernelpack/toolchain from the PTX, read by the runtime, codegen
// and the plugin. Shape fixed by DESIGN.md ("Contracts"); fields may be added, never renamed.

/** One kernel parameter as the PTX declares it (`.param .u32 x`, `.param .align 8 .b8 s[24]`). */
export interface ParamInfo {
  /** PTX type of the parameter: `u32`, `f32`, `u64`, … or `b8` for a byte array (struct/array by value). */
  type: string
  /** Size in bytes (element size × count for `.b8 name[N]`). */
  size: number
  /** Alignment in bytes (`.align A`, else the element size). */
  align: number
  /** PTX parameter name (e.g. `_Z6vecAddPfS_S_i_param_0`). */
  name?: string
  /** The parameter's name in the CUDA source (`n`, `x`), where the kernel's declaration there settles it;
   *  PTX keeps no names. Launcher types (`.cu.d.ts`) use it. */
  sourceName?: string
  /** True when the PTX marks it `.ptr` or the C++ signature says it is a pointer (from the demangled name). */
  pointer?: boolean
  /** Element count for `.b8 name[N]`-style arrays. */
  count?: number
  /** For a struct, class, union, array or vector type passed by value (`.b8 name[N]`): its C++ layout as the
   *  compiler laid it out (read from debugging information: of the C nvcc's device front end writes, or of a
   *  host compile), checked against the PTX size and alignment. Launchers then take an object with the C++
   *  field names. */
  valueType?: ValueType
  /** Why a by-value aggregate has no `valueType` (it still takes its bytes). */
  valueTypeNote?: string
}

/** Scalar types of a `ValueType`: `i*` signed, `u*` unsigned, `ptr` a 64-bit device address. */
export type ValueScalar =
  | 'bool' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64'
  | 'f16' | 'bf16' | 'f32' | 'f64' | 'i128' | 'u128' | 'ptr'

/** The layout of a value passed by value, in the terms of @kernelpack/runtime's schemas (`t.struct`, …). */
export type ValueType =
  | { kind: 'scalar'; name: ValueScalar }
  | { kind: 'array'; elem: ValueType; length: number }
  | { kind: 'struct' | 'union'; /** The C++ name (`Params`, `Pair<float>`, a typedef's name for an unnamed struct). */ name?: string; size: number; align: number; fields: FieldInfo[] }

export interface FieldInfo {
  name: string
  /** Byte offset in the aggregate. */
  offset: number
  type: ValueType
}

export type Linkage = 'visible' | 'weak' | 'extern' | 'internal' | 'common'

export interface KernelInfo {
  /** The PTX `.entry` name (mangled for C++ kernels). */
  name: string
  /** Demangled C++ name (`vecAdd(float*, float const*, int)`), or the same as `name` for extern "C". */
  demangled: string
  linkage: Linkage
  params: ParamInfo[]
  maxntid?: [number, number, number]
  reqntid?: [number, number, number]
  minnctapersm?: number
  maxnreg?: number
}

export interface VariableInfo {
  name: string
  /** `global` or `const`. */
  space: 'global' | 'const'
  size: number
  linkage: Linkage
  align?: number
}

export interface TargetInfo {
  /** `sm_90`, `sm_90a`, `compute_90`, … */
  arch: string
  /** `cubin` for real targets, `ptx` for virtual ones. */
  kind: 'cubin' | 'ptx' | 'object' | 'bitcode' | 'fatbin'
  size?: number
}

export interface KernelManifest {
  /** Manifest format version. */
  version?: number
  /** Source file name (basename), for messages. */
  source?: string
  kernels: KernelInfo[]
  variables: VariableInfo[]
  targets?: TargetInfo[]
  /** Compiler that produced the images (`nvcc 13.0.88`, `clang 22.1.8`). */
  producer?: string
}
