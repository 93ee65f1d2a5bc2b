// The worker side of the emulator's thread pool (pool.ts), for both Node's worker_threads (node/worker.ts)
// and browsers' Web Workers (web-worker.ts): compiles each module's generated JavaScript once (the same
// source the calling thread compiled, with `new Function`), binds it to the shared heap, and runs chunks of
// blocks of a launch until none is left, reporting device printf output, the first fault, or an error.
import { instantiate, type ModuleInstance } from './instance.js'
import { withWasmKernels } from './wasm/tier.js'
import { PrintfOrder } from './printf.js'
import { BlockRunner, isJsStackOverflow } from './run-blocks.js'
import { StalledBlock } from './scheduler.js'
import { CTRL_NEXT, CTRL_STOP, type FromWorker, type Printed, type ToWorker } from './worker-protocol.js'

/** Thrown by a kernel's fault() in a worker; the backend turns it into the EmulatorFault (load-module.ts). */
class WorkerFault {
  constructor(readonly i: number, readonly a: number | bigint | undefined, readonly what: string) {}
}

interface WorkerModule { inst?: ModuleInstance; error?: string; boundHeap: number; boundOk: number }

const FLUSH_CHARS = 1 << 20

/** The message handler of one worker; `post` sends to the backend. Posts `ready` at once. */
export function serveWorker(post: (m: FromWorker) => void): (m: ToWorker) => void {
  let heap: SharedArrayBuffer | undefined
  let memory: WebAssembly.Memory | undefined
  let ok: SharedArrayBuffer | undefined
  let ctrl: Int32Array<ArrayBufferLike> = new Int32Array(4)
  const modules = new Map<number, WorkerModule>()
  // where a kernel's printf goes: each block's text in a GPU's order (printf.ts), tagged with the block, flushed
  // early when large
  let printed: Printed[] = []
  let printedChars = 0
  let launch = -1
  const order = new PrintfOrder((text, block) => {
    printed.push([block, text])
    printedChars += text.length
    if (printedChars > FLUSH_CHARS) {
      post({ t: 'print', launch, printed })
      printed = []
      printedChars = 0
    }
  })

  const hooks = {
    fault(i: number, a: number | bigint | undefined, what: string): never { throw new WorkerFault(i, a, what) },
    print(text: string, t: number, b: number, site: number) { order.add(text, t, b, site) },
  }

  function run(m: Extract<ToWorker, { t: 'run' }>): void {
    launch = m.launch
    printed = []
    printedChars = 0
    const end = (extra: Partial<Extract<FromWorker, { t: 'end' }>> = {}) => {
      order.flush()
      post({ t: 'end', launch: m.launch, printed, ...extra })
    }
    try {
      const wm = modules.get(m.mod)
      if (memory) heap = memory.buffer as unknown as SharedArrayBuffer
      if (!wm || !heap || !ok) throw new Error(`internal error: module ${m.mod} or the heap was not sent to this worker`)
      if (!wm.inst) throw new Error(`the worker thread cannot compile the module's generated code: ${wm.error}`)
      // fixed-length views of the buffers' current length (they only grow; see heap.ts)
      if (wm.boundHeap !== heap.byteLength || wm.boundOk !== ok.byteLength) {
        wm.inst.setHeap(heap, new Uint8Array(ok, 0, ok.byteLength))
        wm.boundHeap = heap.byteLength
        wm.boundOk = ok.byteLength
      }
      const h8 = new Uint8Array(heap, 0, wm.boundHeap)
      const runner = new BlockRunner(wm.inst, m.kernel, m.lane, m.ranges, () => h8)
      for (;;) {
        if (Atomics.load(ctrl, CTRL_STOP) !== 0) break
        const b0 = Atomics.add(ctrl, CTRL_NEXT, 1) * m.chunk
        if (b0 >= m.nblocks) break
        runner.run(b0, Math.min(b0 + m.chunk, m.nblocks))
        order.flush()
      }
      end()
    } catch (e) {
      Atomics.store(ctrl, CTRL_STOP, 1)
      if (e instanceof WorkerFault) return end({ fault: { i: e.i, a: e.a, what: e.what } })
      if (isJsStackOverflow(e)) return end({ fault: { i: -1, a: undefined, what: 'jsstack' } })
      if (e instanceof StalledBlock) return end({ stalled: { block: e.block, thread: e.thread, pc: e.pc } })
      const err = e instanceof Error ? e : new Error(String(e))
      end({ error: { name: err.name, message: err.message, stack: err.stack } })
    }
  }

  post({ t: 'ready' })
  return (m: ToWorker) => {
    switch (m.t) {
      case 'heap':
        heap = m.heap
        memory = m.memory
        ok = m.ok
        ctrl = new Int32Array(m.ctrl)
        for (const wm of modules.values()) wm.boundHeap = wm.boundOk = -1
        break
      case 'load':
        try {
          let inst = instantiate(m.source, hooks)
          if (m.wasm) inst = withWasmKernels(inst, m.wasm, () => memory, (i, a, what) => hooks.fault(i, a, what), (text, t, b, site) => hooks.print(text, t, b, site))
          modules.set(m.mod, { inst, boundHeap: -1, boundOk: -1 })
        } catch (e) {
          // e.g. a worker script served with a Content Security Policy without 'unsafe-eval'
          modules.set(m.mod, { error: String(e), boundHeap: -1, boundOk: -1 })
        }
        break
      case 'unload':
        modules.delete(m.mod)
        break
      case 'reset':
        modules.clear()
        heap = ok = memory = undefined
        break
      case 'run':
        run(m)
        break
    }
  }
}
