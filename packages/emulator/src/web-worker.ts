// The emulator's worker script for browsers (a module Web Worker; web-threads.ts starts it).
import { serveWorker } from './worker.js'
import type { ToWorker } from './worker-protocol.js'

const scope = globalThis as unknown as { postMessage(m: unknown): void; onmessage: ((e: MessageEvent<ToWorker>) => void) | null }
const handle = serveWorker((m) => scope.postMessage(m))
scope.onmessage = (e) => handle(e.data)
