// @kernelpack/emulator: run PTX on the CPU, in Node and in browsers (no Node APIs, no native code).
export { createEmulatorBackend } from './backend.js'
export type {
  EmulatorBackend, EmulatorBackendOptions, EmulatorDeviceInfo, EmulatorFunction, EmulatorKernelParams, EmulatorLaunchConfig, EmulatorModule, Dim3,
} from './backend.js'
export { parsePtx } from '@kernelpack/ptx'
export type { PtxModule, PtxFunction, PtxInstruction, PtxLabel, PtxStatement, PtxVariable, PtxRegister, Operand } from '@kernelpack/ptx'
export { PtxError, EmulatorFault } from './errors.js'
