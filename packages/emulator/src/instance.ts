// A compiled module's run-time instance: the generated source (emit-js.ts) turned into functions with `new
// Function`, bound to the helpers it calls (`E`). Shared by the calling thread (load-module.ts) and the
// worker threads (worker.ts), which compile the very same source once each: nothing here reaches the PTX
// front end, so a worker loads only this, the numeric helpers, printf and the scheduler.
import * as numeric from './numeric.js'
import * as mbarrier from './mbarrier.js'
import { mmaLane, movmatrixLane, tcLayout } from './tensor-core.js'
import { formatPrintf, printfResult } from './printf.js'

export interface ModuleInstance {
  /** Functions by their index in the module (CompiledFunction.index); undefined for prototypes. */
  FN: Array<((...args: never[]) => void) | undefined>
  setHeap(buf: ArrayBufferLike, ok: Uint8Array): void
  setLaunch(o: LaunchState): void
  /** The launch's allocation ranges (Heap.ranges()), for the kernels' access-site range caches. */
  setRanges(ranges: Float64Array): void
  /** How many waits at yield points have ended so far (scheduler.ts: a block without it is stalled). */
  progress(): number
  /** Points the shared and local windows at one block's (a cooperative launch keeps every block's). */
  setBlock(sb: number, lb0: number): void
  /** Where a generic address lies in device memory (the shared, local and parameter windows mapped). */
  heapAt(a: number): number
}

/** What a kernel reads about its launch (setLaunch): where this thread of execution's shared memory (SB,
 *  SHN bytes, DYN of them dynamic), local memory (LB0, LN bytes per thread, LSZ usable) and parameter
 *  stack (PSP … PSEND) are, and the block and grid shape. */
export interface LaunchState {
  SB: number; SHN: number; DYN: number; LB0: number; LN: number; LSZ: number; PSP: number; PSEND: number
  /** The parameter frame and call stack [PB, PE) (PSP … PSEND lies in it). */
  PB: number; PE: number
  NTX: number; NTY: number; NTZ: number; NCX: number; NCY: number; NCZ: number
  /** Where the reserved shared memory (%reserved_smem_offset_*) starts in the window; the grid workspace of
   *  a cooperative launch (cg::this_grid().sync()), 0 for others. */
  RSV: number; GWS: number
}

/** What a kernel calls when it faults or prints; `fault` must throw (the checked variant passes the thread,
 *  the access kind and its size too). `sanitizer`: the checked variant's `CK` (sanitizer/checker.ts). */
export interface InstanceHooks {
  fault(i: number, a: number | bigint | undefined, what: string, t?: number, rw?: string, n?: number): never
  /** Device printf's text, by thread t (block-linear id) of block b (linear index), at the call of vprintf in
   *  row `site` of the module's instruction table. */
  print(text: string, t: number, b: number, site: number): void
  sanitizer?: unknown
}

/** Turns a module's source, the body of a function of one parameter named `param`, into that function:
 *  `new Function` (compileFactory), or, where the page forbids code generation from strings, an interpreter
 *  of the same source (interpret.ts). */
export type Evaluate = (param: string, body: string) => (arg: unknown) => unknown

// eslint-disable-next-line @typescript-eslint/no-implied-eval
export const compileFactory: Evaluate = (param, body) => new Function(param, body) as (arg: unknown) => unknown

/** Why this context cannot turn strings into code, or undefined when it can: a page whose
 *  Content-Security-Policy has no 'unsafe-eval' (the browser throws an EvalError), Node with
 *  --disallow-code-generation-from-strings. Issue 14 item 3. */
export function codeGenerationRefusal(): string | undefined {
  try {
    compileFactory('E', '')
    return undefined
  } catch (e) {
    if (!(e instanceof EvalError)) throw e
    return e.message.split(/\s+/).filter(Boolean).join(' ')
  }
}

/** The smallest WebAssembly module (header only), for wasmCompileRefusal(). */
const EMPTY_WASM = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])

/** Why this context cannot compile WebAssembly, or undefined when it can: a page whose
 *  Content-Security-Policy allows neither 'wasm-unsafe-eval' nor 'unsafe-eval' (the browser throws a
 *  CompileError), an engine without WebAssembly. Node's --disallow-code-generation-from-strings does not
 *  refuse it (V8 checks WebAssembly through its own callback, which Node leaves allowing). Issue 24 item 5. */
export function wasmCompileRefusal(): string | undefined {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.Module !== 'function') return 'this engine has no WebAssembly'
  try {
    new WebAssembly.Module(EMPTY_WASM)
    return undefined
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`.split(/\s+/).filter(Boolean).join(' ')
  }
}

/** Compiles `source` (ModuleEmitter.compile()) and binds it to the helpers. Throws the engine's SyntaxError
 *  when the source does not compile. */
export function instantiate(source: string, hooks: InstanceHooks, evaluate: Evaluate = compileFactory): ModuleInstance {
  let inst: ModuleInstance | undefined
  const env = {
    h: { ...numeric, ...mbarrier, mmaLane, movmatrixLane, tcLayout },
    fault: hooks.fault,
    ck: hooks.sanitizer,
    clock: () => Date.now(),
    vprintf(h8: Uint8Array, _hu32: Uint32Array, _hi32: Int32Array, fmt: number | bigint, args: number | bigint, t: number, b: number, site: number): number {
      // the argument buffer is a generic address of local memory (emit-js.ts addr())
      const heapAt = (x: number) => inst!.heapAt(x)
      hooks.print(formatPrintf(h8, Number(fmt), Number(args), heapAt), t, b, site)
      return printfResult(h8, Number(fmt), heapAt)
    },
  }
  inst = evaluate('E', source)(env) as ModuleInstance
  return inst
}
