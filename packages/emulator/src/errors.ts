// Errors of the emulator. PtxError (@kernelpack/ptx): the PTX text cannot be loaded (syntax, unsupported
// opcode), always with the PTX line. EmulatorFault: a kernel did something at run time a GPU would fault on
// (out-of-bounds or misaligned access, a trap), naming the kernel, the instruction and the address.
export { PtxError, launchAbortError, timeoutReason } from '@kernelpack/ptx'
import type { SourcePosition } from '@kernelpack/ptx'

/** The `.cu` position of a faulting instruction (the PTX's `.loc`, -lineinfo): in a function inlined into the
 *  kernel, the call site, with the inlined code's own position in `inlined`. */
export type FaultSource = SourcePosition & { inlined?: SourcePosition }

export class EmulatorFault extends Error {
  kernel: string
  instruction: string
  address?: bigint
  /** Where in the CUDA source, when the PTX has line information (nvcc -lineinfo, clang -gline-tables-only). */
  source?: FaultSource
  /** `detail`: what else helps find the bug (for a stray global access, the nearest allocation). */
  constructor(message: string, kernel: string, instruction: string, address?: bigint, detail?: string) {
    super(`${message} in kernel ${kernel}, instruction \`${instruction}\`${address === undefined ? '' : ` (address 0x${address.toString(16)})`}${detail ? `; ${detail}` : ''}`)
    this.name = 'EmulatorFault'
    this.kernel = kernel
    this.instruction = instruction
    this.address = address
  }
}

