// Errors of the emulator. PtxError (@kernelpack/ptx): the PTX text cannot be loaded (syntax, unsupported
// opcode), always with the PTX line. EmulatorFault: a kernel did something at run time a GPU would fault on
// (out-of-bounds or misaligned access, a trap), naming the kernel, the instruction and the address.
export { PtxError } from '@kernelpack/ptx'

export class EmulatorFault extends Error {
  kernel: string
  instruction: string
  address?: bigint
  constructor(message: string, kernel: string, instruction: string, address?: bigint) {
    super(`${message} in kernel ${kernel}, instruction \`${instruction}\`${address === undefined ? '' : ` (address 0x${address.toString(16)})`}`)
    this.name = 'EmulatorFault'
    this.kernel = kernel
    this.instruction = instruction
    this.address = address
  }
}
