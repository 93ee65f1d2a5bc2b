// The one error of the PTX front end: the text cannot be read (syntax), decoded (an unknown opcode or a
// qualifier the opcode does not take) or analysed. Always names the PTX line when there is one.

export class PtxError extends Error {
  line?: number
  constructor(message: string, line?: number) {
    super(line === undefined ? message : `PTX line ${line}: ${message}`)
    this.name = 'PtxError'
    this.line = line
  }
}

/** The error an aborted launch rejects with (issue 17 item 4; the emulator and the webgpu backend): an
 *  `AbortError` (a DOMException where the engine has one, as fetch() rejects) whose message names the kernel
 *  and says what stopped it; `kernel` names it too, and `cause` is the signal's reason (or a TimeoutError for
 *  timeoutMs). */
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
