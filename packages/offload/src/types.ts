// Public data types of the codec. Numeric values as LLVM defines them (llvm/Object/OffloadBinary.h).

/** `ImageKind` in OffloadBinary.h. */
export const ImageKind = {
  None: 0,
  Object: 1,
  Bitcode: 2,
  Cubin: 3,
  Fatbinary: 4,
  PTX: 5,
  SPIRV: 6,
} as const
export type ImageKind = (typeof ImageKind)[keyof typeof ImageKind]

/** `OffloadKind` in OffloadBinary.h (a bit set). */
export const OffloadKind = {
  None: 0,
  OpenMP: 1,
  CUDA: 2,
  HIP: 4,
  SYCL: 8,
} as const
export type OffloadKind = (typeof OffloadKind)[keyof typeof OffloadKind]

/** One image with its metadata, as read from or written to a binary. */
export interface OffloadEntry {
  imageKind: number
  offloadKind: number
  flags: number
  /** Key/value strings (`triple`, `arch`, `producer`, …) in the order the binary lists them. */
  strings: Map<string, string>
  /** The image bytes: a view into the input buffer when read (no copy). */
  image: Uint8Array
}

/** What writers accept: strings as a Map (order kept) or a plain object. */
export interface OffloadEntryInput {
  imageKind: number
  offloadKind: number
  flags?: number
  strings: Map<string, string> | Record<string, string>
  image: Uint8Array
}

/** One binary (one header) found in a buffer; a version-1 binary holds exactly one entry. */
export interface OffloadBinary {
  /** Byte offset of this binary's header in the buffer that was read. */
  offset: number
  /** Total size in bytes (the header's `size` field). */
  size: number
  version: number
  entries: OffloadEntry[]
}

/** The `triple` (and `arch`) string of kernelpack's WGSL image (@kernelpack/webgpu's wgsl-image.ts): image kind
 *  None, as no LLVM kind fits it. Written by @kernelpack/toolchain, chosen by @kernelpack/runtime. */
export const WGSL_TRIPLE = 'wgsl'
