// Errors of the emulator. PtxError (@kernelpack/ptx): the PTX text cannot be loaded (syntax, unsupported
// opcode), always with the PTX line. EmulatorFault: a kernel did something at run time a GPU would fault on
// (out-of-bounds or misaligned access, a trap), naming the kernel, the instruction and the address.
export { PtxError } from '@kernelpack/ptx'
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

/** The error an aborted launch rejects with (issue 17 item 4): an `AbortError` (a DOMException where the
 *  engine has one, as fetch() rejects) whose message names the kernel and says what stopped it; `kernel`
 *  names it too, and `cause` is the signal's reason (or a TimeoutError for timeoutMs). */
export function launchAbortError(kernel: string, why: string, cause: unknown): Error & { kernel: string } {
  const message = `launch of ${kernel} aborted: ${why}`
  const err: Error = typeof DOMException === 'function' ? new DOMException(message, 'AbortError') : Object.assign(new Error(message), { name: 'AbortError' })
  Object.defineProperty(err, 'cause', { value: cause, writable: true, configurable: true })
  return Object.assign(err, { kernel })
}

/** The reason of a timeoutMs abort: a TimeoutError, as AbortSignal.timeout() gives. */
export function timeoutReason(ms: number): Error {
  const message = `the launch ran longer than timeoutMs (${ms} ms)`
  return typeof DOMException === 'function' ? new DOMException(message, 'TimeoutError') : Object.assign(new Error(message), { name: 'TimeoutError' })
}
