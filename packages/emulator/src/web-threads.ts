// Web Workers for the emulator's thread pool (pool.ts), in browsers. They share the heap only where the page
// may have a SharedArrayBuffer: a cross-origin-isolated page (served with `Cross-Origin-Opener-Policy:
// same-origin` and `Cross-Origin-Embedder-Policy: require-corp`); anywhere else launches run on the calling
// thread and the backend says why. The worker script is located with the
// `new Worker(new URL('./web-worker.js', import.meta.url), { type: 'module' })` pattern that bundlers
// (Vite, webpack, Parcel, Rollup with a worker plugin) recognize and bundle; where a bundler does not
// (esbuild), serve web-worker.js yourself and pass its address as `workerUrl`.
import { sharedHeapUnavailable } from './heap.js'
import type { ThreadHost } from './pool.js'
import type { FromWorker } from './worker-protocol.js'

export const webThreads: ThreadHost = {
  kind: 'Web Workers',
  script: 'dist/web-worker.js',
  unavailable() {
    if (typeof Worker !== 'function') return 'this environment has no Web Workers'
    if ((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated !== true) {
      return 'the page is not cross-origin isolated, so it has no SharedArrayBuffer (serve it with the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)'
    }
    return sharedHeapUnavailable()
  },
  cores() {
    const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency
    return typeof n === 'number' && n >= 1 ? n : 1
  },
  spawn(events, workerUrl) {
    // the literal pattern, so that bundlers find and bundle the worker script
    const w = workerUrl === undefined
      ? new Worker(new URL('./web-worker.js', import.meta.url), { type: 'module', name: 'kernelpack-emulator' })
      : new Worker(workerUrl, { type: 'module', name: 'kernelpack-emulator' })
    w.onmessage = (e: MessageEvent<FromWorker>) => events.message(e.data)
    // a script that does not load or throws at the top level arrives here (no detail in some browsers)
    w.onerror = (e: ErrorEvent) => { e.preventDefault(); events.error(new Error(e.message || `the worker script ${workerUrl ?? 'web-worker.js'} failed to load`)) }
    w.onmessageerror = () => events.error(new Error('a message from the worker could not be read'))
    return { post: (m) => w.postMessage(m), terminate: () => w.terminate() }
  },
}
