// The images of a module file that is not an offload binary (a raw cubin, PTX or fatbin, read with its arch),
// and of one that is: the public readImages. The runtime loads this file only for a raw image.
import type { OffloadEntry } from '@kernelpack/offload'
import { ImageKind } from '@kernelpack/offload/core'
import { isOffloadBinary, readOffloadImages } from './module.js'
import { sniffKind } from './select-image.js'

/** The images of a module file: offload binary entries, or one raw cubin/PTX/fatbin (arch from its text). */
export function readImages(bytes: Uint8Array, sourceName: string): OffloadEntry[] {
  if (isOffloadBinary(bytes)) return readOffloadImages(bytes, sourceName)
  const kind = sniffKind(bytes)
  if (!kind) {
    throw new Error(`${sourceName}: neither an offload binary (magic 10 ff 10 ad) nor a cubin (ELF) or PTX text; build it with \`kernelpack build\``)
  }
  let arch = ''
  if (kind === 'ptx') {
    const m = /^\s*\.target\s+(sm_\d+[af]?)/m.exec(new TextDecoder().decode(bytes.subarray(0, 65536)))
    arch = m ? m[1]!.replace('sm_', 'compute_') : ''
  } else if (kind === 'cubin' && bytes.length >= 52) {
    // CUDA ELF e_flags (offset 48 in ELF64): the SM number in bits 0-7 (ABI < 8) or 8-15 (newer ABI).
    const flags = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(48, true)
    const abi = bytes[8]!
    const sm = abi >= 8 ? (flags >> 8) & 0xff : flags & 0xff
    if (sm) arch = `sm_${sm}`
  }
  const imageKind = kind === 'ptx' ? ImageKind.PTX : kind === 'cubin' ? ImageKind.Cubin : kind === 'fatbin' ? ImageKind.Fatbinary : ImageKind.Object
  return [{ imageKind, offloadKind: 2, flags: 0, strings: new Map([['arch', arch]]), image: bytes }]
}
