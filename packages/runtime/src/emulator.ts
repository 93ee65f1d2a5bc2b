// The PTX emulator backend, loaded on demand (both entries): one per worker count and worker script, shared by
// the modules loaded with the same options (they share its device memory).
import type { ResolvedCheck } from '@kernelpack/ptx'
import type { Backend } from './backend.js'

/** loadModule's options for the emulator. */
export interface EmulatorLoadOptions {
  /** Worker threads that run a launch's blocks, sharing device memory (Node: worker_threads; browsers: Web
   *  Workers, in cross-origin-isolated pages); `0` runs launches on the calling thread. `mod.backend.reason`
   *  says where launches run and, on the calling thread, why. @default the cores available */
  workers?: number
  /** Where @kernelpack/emulator's worker script is, for bundlers that do not bundle it (esbuild): the
   *  address of its `dist/web-worker.js` (browsers) or `dist/node/worker.js` (Node). */
  workerUrl?: string | URL
  /** Abort every launch of the module that runs longer than this many milliseconds (a launch's own
   *  `timeoutMs` wins): it rejects with an AbortError naming the kernel. */
  timeoutMs?: number
  /** Receives device printf's text exactly as printed (no newline added), in a GPU's order: blocks one after
   *  another; within a warp statement by statement, lanes in order. Modules loaded with the same function share
   *  an emulator. @default Node: `process.stdout.write`; browsers: `console.log` per completed line */
  print?: (text: string) => void
  /** `false`: the emulator rounds every `mul` and `add` on its own, as `ptxas --fmad=false` does, instead of
   *  contracting them into fma where ptxas would (PTX from `nvcc --fmad=false` carries `.rn`, which never
   *  contracts, so it needs no option). @default true */
  fmad?: boolean
  /** Which of the emulator's writers runs the kernels (issue 24): `'auto'` WebAssembly for every kernel with a
   *  lowering and JavaScript for the rest, `'wasm'` the same but a kernel without a lowering is refused, `'js'`
   *  JavaScript only. @default 'auto' */
  codegen?: 'auto' | 'wasm' | 'js'
}

const backends = new Map<string, Promise<Backend>>()
/** Functions given as options, numbered for the backend's key (the same function, the same emulator). */
const functionIds = new WeakMap<object, number>()
let nextFunctionId = 1
function idOf(f: object | undefined): string {
  if (!f) return ''
  let id = functionIds.get(f)
  if (id === undefined) functionIds.set(f, (id = nextFunctionId++))
  return String(id)
}

/** The emulator for these options; with `check` (resolved by the entry: the option, or KERNELPACK_CHECK in
 *  Node) one of its own, since a checked backend tracks its heap from the first allocation on (issue 19). */
export function emulatorBackend(options: EmulatorLoadOptions, check?: ResolvedCheck): Promise<Backend> {
  const { workers, workerUrl, timeoutMs, print, fmad, codegen } = options
  if (workers !== undefined && !(Number.isInteger(workers) && workers >= 0)) throw new TypeError(`loadModule: workers must be a non-negative integer, got ${String(workers)}`)
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0)) throw new TypeError(`loadModule: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`)
  if (print !== undefined && typeof print !== 'function') throw new TypeError(`loadModule: print must be a function, got ${typeof print}`)
  if (fmad !== undefined && typeof fmad !== 'boolean') throw new TypeError(`loadModule: fmad must be a boolean, got ${String(fmad)}`)
  if (codegen !== undefined && codegen !== 'auto' && codegen !== 'wasm' && codegen !== 'js') throw new TypeError(`loadModule: codegen must be 'auto', 'wasm' or 'js', got ${JSON.stringify(codegen)}`)
  const key = `${workers ?? ''}|${String(workerUrl ?? '')}|${check ? JSON.stringify(check) : ''}|${idOf(print)}|${fmad === false ? 'nofmad' : ''}|${codegen ?? 'auto'}`
  let b = backends.get(key)
  if (!b) {
    // EmulatorBackend extends Backend (@kernelpack/ptx): type-checked here, no cast
    b = import('@kernelpack/emulator').then(async (m): Promise<Backend> => {
      if (typeof m.createEmulatorBackend !== 'function') throw new Error('@kernelpack/emulator does not export createEmulatorBackend()')
      // a page whose Content-Security-Policy refuses `new Function` runs the kernels through the emulator's
      // interpreter, and mod.backend.reason says so (issue 14 item 3); those with a WebAssembly lowering run
      // on its WebAssembly tier where the policy allows 'wasm-unsafe-eval', and the reason says that too
      // (the emulator's describeExecution(), issue 24 item 5)
      const evaluate = m.codeGenerationRefusal() !== undefined ? await m.loadInterpreter() : undefined
      // on the calling thread, launches give the event loop a turn every 20 ms (the page stays responsive)
      return m.createEmulatorBackend({ workers, workerUrl, yieldMs: 20, evaluate, check, print, fmad, codegen })
    })
    backends.set(key, b)
    b.catch(() => backends.delete(key))
  }
  return b
}
