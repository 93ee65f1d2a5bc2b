// @kernelpack/emulator for Node (the `node` export condition): the same API, with launches spread over
// worker_threads (node/threads.ts); the browser entry (../index.ts) uses Web Workers where the page allows.
import { createBackend, type EmulatorBackend, type EmulatorBackendOptions } from '../backend.js'
import { nodeThreads } from './threads.js'
import * as v8 from 'node:v8'
import { setRelaxedSimdEnabler } from '../wasm/emit-wasm.js'

// Node 20's V8 (11.3) has WebAssembly's relaxed SIMD whole but behind --experimental-wasm-relaxed-simd (on from
// V8 11.4: Node 22, Chromium); the flag is read when a module compiles, so it can be turned on here, once,
// the first time the emulator asks whether relaxed_madd is fused (the start-up probe still decides, bit for
// bit against the exact fma). The flag adds instructions a module may use and changes nothing else.
// KERNELPACK_EMULATOR_RELAXED_SIMD=0 turns nothing on and keeps the exact fma paths. (Registered by
// createEmulatorBackend, not at import: the package is free of import side effects.)
// (A namespace import and a guarded call: a runtime that answers the `node` condition without V8's flags, such as
// Bun or Deno, has a newer engine or none to turn on, and must still load this entry.)
function enableRelaxedSimd(): void {
  if (!/^11\./.test(process.versions.v8 ?? '')) return
  try {
    v8.setFlagsFromString?.('--experimental-wasm-relaxed-simd')
  } catch {
    // the probe then finds relaxed SIMD still not compiling, and the exact paths run
  }
}

export * from '../index.js'

/** Creates the PTX emulator backend; launches run on `workers` worker threads (default: the cores available). */
export function createEmulatorBackend(options: EmulatorBackendOptions = {}): EmulatorBackend {
  setRelaxedSimdEnabler(enableRelaxedSimd)
  return createBackend(options, nodeThreads)
}
