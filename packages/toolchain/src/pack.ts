// Packs device images as an LLVM offload binary the way `llvm-offload-binary` does for
// `--image=file=X.cubin|X.s,triple=nvptx64-nvidia-cuda,arch=sm_XY,kind=cuda,producer=…[,feature=+ptxNN]`:
// image kind Cubin (3) or PTX (5), offload kind CUDA (2), one version-1 binary per image, concatenated.
// `feature=+ptxNN` on PTX images is the PTX ISA version of its `.version` line, as clang names it.
import { ImageKind, OffloadKind, WGSL_TRIPLE, writeOffloadBinary, type OffloadEntryInput } from '@kernelpack/offload'

export interface PackableImage {
  arch: string
  kind: 'cubin' | 'ptx'
  bytes: Uint8Array
}

/** WGSL translated at build time (@kernelpack/webgpu's wgsl-image.ts), packed after the device images. */
export interface WgslPackable {
  bytes: Uint8Array
  /** The PTX target it was translated from (`compute_80`). */
  from: string
}

export const CUDA_TRIPLE = 'nvptx64-nvidia-cuda'

/** `+ptx90` for a PTX text starting with `.version 9.0`, or undefined. */
export function ptxFeature(ptx: Uint8Array): string | undefined {
  const head = new TextDecoder().decode(ptx.subarray(0, 4096))
  const m = /^\s*\.version\s+(\d+)\.(\d+)/m.exec(head)
  return m ? `+ptx${m[1]}${m[2]}` : undefined
}

/** The strings of one image, in the order given to llvm-offload-binary. */
export function imageStrings(image: PackableImage, producer: string): Record<string, string> {
  const strings: Record<string, string> = { triple: CUDA_TRIPLE, arch: image.arch, producer }
  const feature = image.kind === 'ptx' ? ptxFeature(image.bytes) : undefined
  if (feature) strings.feature = feature
  return strings
}

export function packImages(images: PackableImage[], producer: string, wgsl?: WgslPackable): Uint8Array {
  const entries: OffloadEntryInput[] = images.map((image) => ({
    imageKind: image.kind === 'cubin' ? ImageKind.Cubin : ImageKind.PTX,
    offloadKind: OffloadKind.CUDA,
    strings: imageStrings(image, producer),
    image: image.bytes,
  }))
  // the WGSL image: kind None (no LLVM kind fits; llvm-offload-binary lists and extracts it like any other),
  // triple and arch `wgsl`, the PTX target it came from
  if (wgsl) entries.push({ imageKind: ImageKind.None, offloadKind: OffloadKind.None, strings: { triple: WGSL_TRIPLE, arch: WGSL_TRIPLE, producer: `${producer}, kernelpack emit-wgsl`, 'kernelpack-from': wgsl.from }, image: wgsl.bytes })
  return writeOffloadBinary(entries)
}
