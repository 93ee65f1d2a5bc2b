/** Malformed offload binary: the message says what is wrong, `offset` is the byte offset in the input. */
export class DecodeError extends Error {
  override name = 'DecodeError'
  readonly offset: number
  constructor(message: string, offset: number) {
    super(`${message} (at byte offset ${offset})`)
    this.offset = offset
  }
}

/** Truncated input: a field or range runs past the end. A RangeError, as STYLE.md asks, with `offset`. */
export class TruncatedError extends RangeError {
  readonly offset: number
  constructor(message: string, offset: number) {
    super(`${message} (at byte offset ${offset})`)
    this.offset = offset
  }
}
