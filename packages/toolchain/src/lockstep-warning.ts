// Kernels whose lanes talk through memory without __syncwarp() (issue 33 item 4): implicit warp-synchronous
// code (the shared-memory reduction's last warp over volatile memory, a lane reading its neighbour's element)
// gives a GPU's answer on NVIDIA hardware and on the emulator, which run a converged warp's lanes in lockstep,
// but WGSL promises no lockstep between the invocations of a subgroup, so on WebGPU it may not. A build that
// may run on WebGPU says so, per kernel, at the .cu line of the first access (@kernelpack/ptx's
// warpTalkSites, the emulator's lockstep analysis).
import { decodeModule, formatSourcePosition, parsePtx, warpTalkSites, type SourcePosition, type WarpTalkSite } from '@kernelpack/ptx'
import type { KernelManifest } from '@kernelpack/offload'

export interface WarpTalkWarning extends WarpTalkSite {
  /** The kernel's C++ name where the manifest has it. */
  demangled: string
  /** One line: where, what, and the fix. */
  message: string
}

/** The warnings for the kernels of one PTX image (`file`: the .cu, for messages without line information;
 *  `show`: how a source path is shown, e.g. relative to the project root). */
export function webgpuLockstepWarnings(ptx: string, manifest: KernelManifest, file: string, show: (path: string) => string = (p) => p): WarpTalkWarning[] {
  const sites = warpTalkSites(decodeModule(parsePtx(ptx), { perFunction: true }))
  const at = (p: SourcePosition) => formatSourcePosition({ ...p, file: show(p.file) })
  return sites.map((s) => {
    const demangled = manifest.kernels.find((k) => k.name === s.kernel)?.demangled ?? s.kernel
    const where = s.source
      ? `${s.source.inlined ? `${at(s.source.inlined)} (inlined at ${at(s.source)})` : at(s.source)}, PTX line ${s.line}`
      : `${file}, PTX line ${s.line} (build with lineinfo for the .cu line)`
    const message = `${where}: kernel ${demangled}: lanes of a warp talk through memory with no __syncwarp() between (${s.reason}). ` +
      'NVIDIA GPUs and the emulator run a converged warp\'s lanes in lockstep, so this gives their answer there; WGSL promises no lockstep, ' +
      'so on WebGPU it may not: put __syncwarp() between the store and the load that reads another lane\'s element.'
    return { ...s, demangled, message }
  })
}
