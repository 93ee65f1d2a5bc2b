// Names of image and offload kinds as LLVM 22 spells them (llvm/lib/Object/OffloadBinary.cpp:
// getImageKind, getImageKindName, getOffloadKind, getOffloadKindName). LLVM main also maps "spv" to
// IMG_SPIRV; LLVM 22, the version kernelpack matches byte for byte, does not (checked with the tool:
// a .spv file gets kind None and an IMG_SPIRV image unpacks with an empty extension).
import { ImageKind, OffloadKind } from './types.js'

const imageKindByExtension: Record<string, number> = {
  o: ImageKind.Object,
  bc: ImageKind.Bitcode,
  cubin: ImageKind.Cubin,
  fatbin: ImageKind.Fatbinary,
  s: ImageKind.PTX,
}

/**
 * The image kind llvm-offload-binary infers from a file extension (without or with its dot): `o`,
 * `bc`, `cubin`, `fatbin`, `s`; anything else (`ptx` included) is None. Case-sensitive, as in LLVM.
 * (The tool also picks Bitcode for any file that starts with the bitcode magic; see `imageKindOfFile`.)
 */
export function imageKindFromExtension(ext: string): number {
  const e = ext.startsWith('.') ? ext.slice(1) : ext
  return Object.hasOwn(imageKindByExtension, e) ? imageKindByExtension[e]! : ImageKind.None
}

/** LLVM's `identify_magic(...) == file_magic::bitcode`: raw bitcode `BC C0 DE` or the wrapper `DE C0 17 0B`. */
export function isBitcode(bytes: Uint8Array): boolean {
  if (bytes.length < 4) return false
  const [a, b, c, d] = bytes
  return (a === 0x42 && b === 0x43 && c === 0xc0 && d === 0xde) || (a === 0xde && b === 0xc0 && c === 0x17 && d === 0x0b)
}

/**
 * The image kind llvm-offload-binary stores for a file: Bitcode when the bytes start with the bitcode
 * magic, else from the extension of the path (the text after the last dot of the last path component).
 */
export function imageKindOfFile(path: string, head: Uint8Array): number {
  if (isBitcode(head)) return ImageKind.Bitcode
  return imageKindFromExtension(extensionOf(path))
}

/** `llvm::sys::path::extension` without the dot: "" for no extension, for "." and "..", and for ".bashrc"-style names keeps LLVM's rule. */
export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1)
  if (name === '.' || name === '..') return ''
  const dot = name.lastIndexOf('.')
  if (dot === -1) return ''
  return name.slice(dot + 1)
}

/** `sys::path::stem`: the file name without its extension. */
export function stemOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1)
  if (name === '.' || name === '..') return name
  const dot = name.lastIndexOf('.')
  return dot === -1 ? name : name.slice(0, dot)
}

const imageKindNames: Record<number, string> = {
  [ImageKind.Object]: 'o',
  [ImageKind.Bitcode]: 'bc',
  [ImageKind.Cubin]: 'cubin',
  [ImageKind.Fatbinary]: 'fatbin',
  [ImageKind.PTX]: 's',
}

/** LLVM's `getImageKindName`: the extension llvm-offload-binary gives an extracted image ("" for None and unknown kinds). */
export function imageKindName(kind: number): string {
  return imageKindNames[kind] ?? ''
}

const offloadKindNames: Record<number, string> = {
  [OffloadKind.OpenMP]: 'openmp',
  [OffloadKind.CUDA]: 'cuda',
  [OffloadKind.HIP]: 'hip',
  [OffloadKind.SYCL]: 'sycl',
}

/** LLVM's `getOffloadKindName`: `openmp`, `cuda`, `hip`, `sycl`, else `none`. */
export function offloadKindName(kind: number): string {
  return offloadKindNames[kind] ?? 'none'
}

/** LLVM's `getOffloadKind`: the `kind=` value of an image argument; anything unknown is None (0). */
export function offloadKindFromName(name: string): number {
  for (const [k, v] of Object.entries(offloadKindNames)) if (v === name) return Number(k)
  return OffloadKind.None
}
