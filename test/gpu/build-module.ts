// Builds the small modules the image, API and error checks of `pnpm test:gpu` load (issue 18): PTX for a
// virtual arch through the suite's PTX cache, the cubin ptxas makes of it, and the offload binaries.
import { join } from 'node:path'
import type { KernelManifest } from '@kernelpack/offload'
import { packImages, readPtxManifest } from '@kernelpack/toolchain'
import { compilePtx } from '../helpers/ptx-cache.js'
import { fixturesDir } from '../helpers/tools.js'
import { buildCubin } from './corpus.js'

/** By-value structs and scalars echoed back, plus the error-path kernels (test/fixtures/gpu/abi-echo.cu). */
export const abiSource = join(fixturesDir, 'gpu', 'abi-echo.cu')
/** __constant__ / __device__ variables, templates, dynamic shared memory (test/fixtures/runtime/globals.cu). */
export const globalsSource = join(fixturesDir, 'runtime', 'globals.cu')

export interface BuiltModule {
  ptx: string
  cubin: Uint8Array
  manifest: KernelManifest
  /** cubin + PTX. */
  both: Uint8Array
  /** The PTX alone. */
  ptxOnly: Uint8Array
  arch: string
  virtualArch: string
}

/** `sm_90` → `compute_90`; `sm_90a` → `compute_90a`. */
export const virtualOf = (arch: string) => arch.replace(/^sm_/, 'compute_')

/** PTX for compute_<arch>, its cubin for `arch` (`sm_90`), the manifest and both offload binaries. */
export async function buildModule(source: string, arch: string): Promise<BuiltModule> {
  const virtualArch = virtualOf(arch)
  const ptx = await compilePtx({ source, config: { label: `nvcc ${virtualArch}`, compiler: 'nvcc', arch: virtualArch, target: virtualArch } })
  const cubin = await buildCubin(ptx, arch)
  const bytes = new TextEncoder().encode(ptx)
  const producer = 'kernelpack test:gpu'
  return {
    ptx, cubin, arch, virtualArch,
    manifest: await readPtxManifest(ptx),
    both: packImages([{ arch, kind: 'cubin', bytes: cubin }, { arch: virtualArch, kind: 'ptx', bytes }], producer),
    ptxOnly: packImages([{ arch: virtualArch, kind: 'ptx', bytes }], producer),
  }
}
