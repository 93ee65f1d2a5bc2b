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
