// @kernelpack/emulator: run PTX on the CPU, in Node and in browsers (no Node APIs, no native code here; the
// Node entry, node/index.ts, adds worker_threads).
import { createBackend, type EmulatorBackend, type EmulatorBackendOptions } from './backend.js'
import type { Evaluate } from './instance.js'
import { webThreads } from './web-threads.js'

export type {
  EmulatorBackend, EmulatorBackendOptions, EmulatorDeviceInfo, EmulatorFunction, EmulatorKernelParams, EmulatorLaunchConfig, EmulatorModule, Dim3,
} from './backend.js'
export { parsePtx } from '@kernelpack/ptx'
export type { PtxModule, PtxFunction, PtxInstruction, PtxLabel, PtxStatement, PtxVariable, PtxRegister, Operand } from '@kernelpack/ptx'
export { PtxError, EmulatorFault } from './errors.js'
export { codeGenerationRefusal, type Evaluate } from './instance.js'

/** The interpreter that runs the emulator's generated code where `new Function` is refused (a page's
 *  Content-Security-Policy without 'unsafe-eval'): pass it as createEmulatorBackend's `evaluate`. Loaded
 *  on demand, so pages that can compile never download it. */
export function loadInterpreter(): Promise<Evaluate> {
  return import('./js/interpret.js').then((m) => m.interpretFactory)
}

/** Creates the PTX emulator backend; launches run on `workers` Web Workers where the page is cross-origin
 *  isolated (default: navigator.hardwareConcurrency), else on the calling thread. */
export function createEmulatorBackend(options: EmulatorBackendOptions = {}): EmulatorBackend {
  return createBackend(options, webThreads)
}
