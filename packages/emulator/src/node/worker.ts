// The emulator's worker script for Node (worker_threads; node/threads.ts starts it).
import { parentPort } from 'node:worker_threads'
import { serveWorker } from '../worker.js'
import type { ToWorker } from '../worker-protocol.js'

const port = parentPort!
const handle = serveWorker((m) => port.postMessage(m))
port.on('message', (m: ToWorker) => handle(m))
