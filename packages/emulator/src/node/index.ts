// @kernelpack/emulator for Node (the `node` export condition): the same API, with launches spread over
// worker_threads (node/threads.ts); the browser entry (../index.ts) uses Web Workers where the page allows.
import { createBackend, type EmulatorBackend, type EmulatorBackendOptions } from '../backend.js'
import { nodeThreads } from './threads.js'

export * from '../index.js'

/** Creates the PTX emulator backend; launches run on `workers` worker threads (default: the cores available). */
export function createEmulatorBackend(options: EmulatorBackendOptions = {}): EmulatorBackend {
  return createBackend(options, nodeThreads)
}
