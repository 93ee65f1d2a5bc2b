// worker_threads for the emulator's thread pool (pool.ts) in Node: the one place the emulator uses Node APIs
// (DESIGN.md, "Packages"), reached only from the Node entry (node/index.ts).
//
// The worker script is node/worker.js beside this file. From the TypeScript sources (the workspace's
// `source` condition, run with tsx) it is node/worker.ts, which a worker can load only once tsx is registered
// in it: Node 20 does not pass the main thread's loader hooks on to workers, so the worker starts with a small
// bootstrap that registers tsx (resolved from the working directory, the repository's) and then imports the
// script. That branch is plain strings, which bundlers do not follow (only the dist branch's
// `new Worker(new URL('./worker.js', import.meta.url))` is for them).
import { availableParallelism } from 'node:os'
// 'worker_threads', not 'node:worker_threads': webpack 5 (5.112) bundles the worker of
// `new Worker(new URL(…))` for a Worker imported from the former, and emits broken code for the latter
import { Worker } from 'worker_threads'
import { sharedHeapUnavailable } from '../heap.js'
import type { ThreadHost } from '../pool.js'
import type { FromWorker } from '../worker-protocol.js'

const fromSource = import.meta.url.endsWith('.ts')

function startWorker(workerUrl: string | URL | undefined): Worker {
  if (workerUrl !== undefined) return new Worker(workerUrl)
  if (!fromSource) return new Worker(new URL('./worker.js', import.meta.url))
  const script = import.meta.url.slice(0, -'threads.ts'.length) + 'worker.ts'
  return new Worker(`import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(script)}) })`, { eval: true })
}

export const nodeThreads: ThreadHost = {
  kind: 'worker_threads',
  script: 'dist/node/worker.js',
  unavailable: () => sharedHeapUnavailable(),
  cores: () => availableParallelism(),
  spawn(events, workerUrl) {
    const w = startWorker(workerUrl)
    w.on('message', (m: FromWorker) => events.message(m))
    w.on('error', (e) => events.error(e))
    w.on('exit', (code) => events.error(new Error(`the worker exited with code ${code}`)))
    return {
      post: (m) => w.postMessage(m),
      terminate: async () => { await w.terminate() },
      ref: () => w.ref(),
      unref: () => w.unref(),
    }
  },
}
