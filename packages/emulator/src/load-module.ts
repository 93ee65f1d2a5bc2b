// Loads a PTX module onto the emulated device: reads it through @kernelpack/ptx (parse, decode to the typed
// IR), inlines the device functions that suspend (inline.ts), places its .global/.const variables in device
// memory (with initializers), lays out static shared memory, and emits every function as JavaScript once
// (emit-js.ts), compiled with `new Function`.
import { EmulatorFault, PtxError, type FaultSource } from './errors.js'
import { ModuleEmitter, type CompiledFunction, type InstrInfo, type ModuleLayout } from './js/emit-js.js'
import type { Heap } from './heap.js'
import { decodeModule, formatSourcePosition, parsePtx, relayoutFunction, sourcePosition, typeSize, type Contraction, type IrFunction, type IrModule, type PtxVariable } from '@kernelpack/ptx'
import { inlineSuspendingCalls } from './inline.js'
import { instantiate, type Evaluate, type ModuleInstance } from './instance.js'
import { defaultPrint, PrintfOrder } from './printf.js'
import type { Sanitizer } from './sanitizer/checker.js'
import { writeWasmModule, type WasmKernelInput, type WasmRefusal } from './wasm/emit-wasm.js'
import { withWasmKernels, type Codegen, type WasmCode } from './wasm/tier.js'

export type { ModuleInstance }

export interface LoadedModule {
  ir: IrModule
  /** The generated JavaScript (what `inst` was compiled from; worker threads compile it too). */
  source: string
  functions: Map<string, CompiledFunction>
  instrs: InstrInfo[]
  layout: ModuleLayout
  inst: ModuleInstance
  generation: number
  /** Allocations owned by the module (variables), freed on unload. */
  owned: number[]
  globals: Map<string, { address: number; size: number }>
  /** Static `.shared` variables: offset in the shared window and size (sanitizer reports name them). */
  sharedVars: Array<{ name: string; offset: number; size: number }>
  /** Kernel being launched (for fault messages). */
  running?: string
  /** Functions the emulator cannot run, with the reason (the PTX line of what it refuses). */
  refused: Map<string, PtxError>
  /** The device memory the module lives in (fault messages name its nearest allocation). */
  heap: Heap
  /** The module's WebAssembly kernels (issue 24), bound in `inst`; workers bind them too. */
  wasm?: WasmCode
  /** Which tier runs each kernel, with why a kernel is not on the wasm tier. */
  tiers: Map<string, { tier: 'wasm' | 'js'; why?: string; simd?: string; readAhead?: number[]; loopTested?: number[]; hullTested?: number[]; narrowed?: number }>
  /** What writing the wasm module cost (KERNELPACK_EMULATOR_DEBUG prints it; issue 24 item 6). */
  wasmBuild?: { kernels: number; bytes: number; writeMs: number; compileMs?: number; fusedFma?: boolean }
  /** Set once a WebAssembly module compiled asynchronously (a browser's main thread refuses the synchronous
   *  compile of a large one) is ready: binds it. The backend calls it before a launch of the module, when
   *  none runs, and then has the workers load the module again (with its wasm). */
  upgrade?: () => void
  /** Device printf on the calling thread, in a GPU's order (printf.ts); the backend flushes it after each
   *  stretch of blocks. */
  printf: PrintfOrder
}

export interface LoadOptions {
  /** Device printf's text as printed (printf.ts defaultPrint() unless given). */
  print?: (text: string) => void
  /** Run kernels with barriers or warp collectives as thread loops where they form (default), else always in
   *  the continuation scheme. */
  threadLoops?: boolean
  /** Contract multiply-adds as ptxas does (default), or keep every mul and add rounded (`false`). */
  fmad?: boolean
  /** How the module's source becomes functions (instance.ts): `new Function` unless given. */
  evaluate?: Evaluate
  /** The backend's sanitizer: the module is emitted with its hooks (emit-js.ts, checked variant). */
  sanitizer?: Sanitizer
  /** Which writer's code runs the kernels (issue 24): `auto` (default) WebAssembly for every kernel that
   *  lowers and JavaScript for the rest, `wasm` the same but a kernel without a lowering is refused, `js`
   *  JavaScript only. Checked (sanitizer) modules always run JavaScript. */
  codegen?: Codegen
}

function align(n: number, a: number): number { return Math.ceil(n / a) * a }

function writeInit(heap: Heap, at: number, v: PtxVariable, addrOf: (s: string) => number): void {
  if (!v.init) return
  const dv = new DataView(heap.buffer)
  const es = typeSize(v.type)
  const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer)
  v.init.forEach((item, i) => {
    const off = at + i * es
    if (off + es > at + v.size) throw new PtxError(`initializer of ${v.name} has more elements than the variable`, v.line)
    let bits: bigint
    if (item.sym !== undefined) bits = BigInt(addrOf(item.sym))
    else if (item.fbits !== undefined) {
      if (item.fwidth === 32 && (v.type === 'f64')) { u32[0] = Number(item.fbits); bits = BigInt.asUintN(64, BigInt(0)); dv.setFloat64(off, f32[0]!, true); return }
      bits = item.fbits
    } else if (item.dvalue !== undefined) {
      if (v.type === 'f32') { dv.setFloat32(off, item.dvalue, true); return }
      if (v.type === 'f64') { dv.setFloat64(off, item.dvalue, true); return }
      bits = BigInt(Math.trunc(item.dvalue))
    } else bits = item.value ?? 0n
    if (v.type === 'f32' && item.value !== undefined) { dv.setFloat32(off, Number(item.value), true); return }
    if (v.type === 'f64' && item.value !== undefined) { dv.setFloat64(off, Number(item.value), true); return }
    switch (es) {
      case 1: dv.setUint8(off, Number(BigInt.asUintN(8, bits))); break
      case 2: dv.setUint16(off, Number(BigInt.asUintN(16, bits)), true); break
      case 4: dv.setUint32(off, Number(BigInt.asUintN(32, bits)), true); break
      case 8: dv.setBigUint64(off, BigInt.asUintN(64, bits), true); break
      default: throw new PtxError(`cannot initialize ${v.name} of type .${v.type}`, v.line)
    }
  })
}

export function loadPtxModule(text: string, heap: Heap, options: LoadOptions = {}): LoadedModule {
  // every opcode, qualifier and operand name checked against the PTX front end's rules; a function that
  // fails them is refused alone (ModuleEmitter.refused), when it is looked up
  const inlined = inlineSuspendingCalls(decodeModule(parsePtx(text), { perFunction: true }))
  // branches whose ranges cross as written (clang rotates loops and places exits inside them) are laid out
  // again so that they nest, when the flow is reducible: thread loops and the wasm tier then take them
  const ptx = { ...inlined, functions: inlined.functions.map((f) => relayoutFunction(f) ?? f) }
  if (ptx.addressSize !== undefined && ptx.addressSize !== 64) throw new PtxError(`.address_size ${ptx.addressSize} is not supported (64-bit only)`)
  const globals = new Map<string, number>()
  const globalInfo = new Map<string, { address: number; size: number }>()
  const owned: number[] = []
  const shared = new Map<string, number>()
  const sharedVars: LoadedModule['sharedVars'] = []
  let sharedOff = 0
  const externShared: string[] = []
  let externAlign = 16
  const sharedVar = (v: PtxVariable) => {
    if (v.extern || v.count === 0) { externShared.push(v.name); externAlign = Math.max(externAlign, v.align); return }
    sharedOff = align(sharedOff, Math.max(1, v.align))
    shared.set(v.name, sharedOff)
    sharedVars.push({ name: v.name, offset: sharedOff, size: v.size })
    sharedOff += v.size
  }
  const pendingInit: Array<[number, PtxVariable]> = []
  for (const v of ptx.variables) {
    if (v.opaque) throw new PtxError(`.${v.opaque} ${v.name}: textures, surfaces and samplers are not supported by the emulator`, v.line)
    if (v.space === 'shared') { sharedVar(v); continue }
    if (v.space === 'global' || v.space === 'const') {
      if (v.extern && !v.init) {
        // an .extern variable defined in another module; give it storage so loads do not fault
      }
      const at = heap.alloc(Math.max(v.size, 1))
      owned.push(at)
      globals.set(v.name, at)
      globalInfo.set(v.name, { address: at, size: v.size })
      pendingInit.push([at, v])
      continue
    }
    throw new PtxError(`module-level .${v.space} variables are not supported`, v.line)
  }
  for (const f of ptx.functions) for (const v of f.vars) {
    if (v.space === 'shared') sharedVar(v)
    else if (v.space === 'global' || v.space === 'const') {
      const at = heap.alloc(Math.max(v.size, 1))
      owned.push(at)
      globals.set(v.name, at)
      pendingInit.push([at, v])
    }
  }
  const sharedStatic = align(sharedOff, externAlign)
  for (const n of externShared) shared.set(n, sharedStatic)
  const addrOf = (s: string): number => {
    const g = globals.get(s)
    if (g === undefined) throw new PtxError(`initializer refers to ${s}, which is not a variable of this module`)
    return g
  }
  for (const [at, v] of pendingInit) {
    writeInit(heap, at, v, addrOf)
    // static storage: zero unless initialized, written either way (initcheck)
    heap.markWritten(at, Math.max(v.size, 1))
  }

  const layout: ModuleLayout = { globals, shared, sharedStatic }
  const san = options.sanitizer
  const mc = new ModuleEmitter(ptx, layout, options.threadLoops ?? true, san !== undefined, options.fmad ?? true)
  const { source, functions } = mc.compile()
  const print = options.print ?? defaultPrint()
  const printf = new PrintfOrder((text) => print(text))
  const lm: LoadedModule = { ir: ptx, source, functions, instrs: mc.instrs, layout, inst: undefined as unknown as ModuleInstance, generation: -1, owned, globals: globalInfo, refused: mc.refused, heap, sharedVars, tiers: new Map(), printf }
  try {
    lm.inst = instantiate(source, {
      fault: (i, a, what, t, rw, n) => {
        // the checked variant's memory faults are memcheck reports (the thread, access kind and size come along)
        if (san?.check.memory && t !== undefined && a !== undefined && rw !== undefined && n !== undefined) san.fault(i, a, what, t, rw, n)
        throw faultOf(lm, i, a, what)
      },
      print: (text, t, b, site) => printf.add(text, t, b, site),
      sanitizer: san,
    }, options.evaluate)
  } catch (e) {
    throw new PtxError(`internal error: generated code does not compile (${(e as Error).message})`)
  }
  addWasmTier(lm, mc.frames, options.codegen ?? 'auto', san !== undefined, (fn) => mc.facts(fn).contraction, options.threadLoops ?? true)
  return lm
}

/** Writes and compiles the module's WebAssembly kernels (issue 24) and binds them into `lm.inst`; records
 *  each kernel's tier. A kernel that does not lower keeps its JavaScript code (`codegen: 'wasm'` refuses it
 *  instead, in `lm.refused`). */
function addWasmTier(lm: LoadedModule, frames: readonly import('./frame.js').Frame[], codegen: Codegen, checked: boolean, contraction: (fn: IrFunction) => ReadonlyMap<number, Contraction> | undefined, threadLoops: boolean): void {
  const kernels = [...lm.functions.values()].filter((cf) => cf.kind === 'entry')
  const jsOnly = (why: string) => { for (const cf of kernels) lm.tiers.set(cf.name, { tier: 'js', why }) }
  if (codegen === 'js') return jsOnly('codegen: \'js\' was asked for')
  if (checked) return jsOnly('checked launches (the sanitizer) run the JavaScript tier')
  if (!lm.heap.memory) return jsOnly('this engine has no WebAssembly memory for the heap')
  const t0 = performance.now()
  const rowBase = new Map<string, number>()
  lm.instrs.forEach((r, i) => { if (!rowBase.has(r.fn)) rowBase.set(r.fn, i) })
  // kernels and the device functions they may call (each gets a wasm function of its own)
  const inputs: WasmKernelInput[] = [...lm.functions.values()].filter((cf) => cf.kind === 'entry' || lm.ir.functions[cf.index]?.defined).map((cf) => {
    const fn = lm.ir.functions[cf.index]!
    const c = contraction(fn)
    return { fn, frame: frames[cf.index]!, rowBase: rowBase.get(cf.name) ?? 0, suspends: cf.hasSuspend, allFunctions: lm.ir.functions, ...(cf.plan ? { plan: cf.plan } : {}), ...(c?.size ? { contraction: c } : {}) }
  })
  // (a kernel without barriers or collectives may still run its threads in 4-lane turns: its own plan)
  // (lanes that talk through memory without thread loops that form keep one thread at a time: lockstepNotRun)
  if (threadLoops) for (const k of inputs) if (!k.plan && k.fn.kind === 'entry' && !lm.functions.get(k.fn.name)?.lockstepNotRun) k.planLoops = true
  const code = writeWasmModule(inputs, lm.layout, lm.heap.shared)
  lm.wasmBuild = { kernels: code.kernels.size, bytes: code.bytes.length, writeMs: code.ms, fusedFma: code.fusedFma }
  const refusedWhy = (r: WasmRefusal) => r.message
  for (const [name, r] of code.refused) {
    if (lm.functions.get(name)?.kind !== 'entry') continue
    lm.tiers.set(name, { tier: 'js', why: refusedWhy(r) })
    if (codegen === 'wasm') lm.refused.set(name, new PtxError(`it has no WebAssembly lowering (codegen: 'wasm'): ${r.message}`, r.line))
  }
  if (code.kernels.size === 0) return
  const bytes = code.bytes as Uint8Array<ArrayBuffer>
  const failed = (e: unknown) => {
    const why = `the WebAssembly module could not be compiled here (${(e as Error).message})`
    for (const name of code.kernels.keys()) {
      lm.tiers.set(name, { tier: 'js', why })
      // (forced, a module that does not compile is an error, not a quiet fall to the JavaScript tier: a writer's
      // bug shows where the tiers are compared)
      if (codegen === 'wasm') lm.refused.set(name, new PtxError(`it has no WebAssembly lowering (codegen: 'wasm'): ${why}`))
    }
  }
  let module: WebAssembly.Module
  try {
    module = new WebAssembly.Module(bytes)
  } catch (e) {
    // a browser's main thread refuses a synchronous compile over its limit with a RangeError (chromium: 8 MB):
    // WebAssembly.compile there, the kernels on the JavaScript tier until it is done (issue 24 item 5)
    if (!(e instanceof RangeError) || typeof WebAssembly.compile !== 'function') return failed(e)
    for (const name of code.kernels.keys()) lm.tiers.set(name, { tier: 'js', why: `the WebAssembly module (${bytes.length} bytes) is being compiled asynchronously, as this thread refuses to compile it synchronously (${e.message}); its launches run on the WebAssembly tier once that is done` })
    WebAssembly.compile(bytes).then((m) => {
      for (const name of code.kernels.keys()) lm.tiers.set(name, wasmTier(code, name))
      lm.upgrade = () => { bindWasm(lm, code, m); lm.generation = -1 }
    }, failed)
    return
  }
  lm.wasmBuild.compileMs = performance.now() - t0 - code.ms
  bindWasm(lm, code, module)
}

/** What `inspect` says of a kernel on the wasm tier: its SIMD, read-ahead, loop-range and thread-loop hull reports. */
function wasmTier(code: ReturnType<typeof writeWasmModule>, name: string): { tier: 'wasm'; simd?: string; readAhead?: number[]; loopTested?: number[]; hullTested?: number[]; narrowed?: number } {
  const simd = code.simd.get(name), readAhead = code.readAhead.get(name), loopTested = code.loopTested.get(name), hullTested = code.hullTested.get(name), narrowed = code.narrowed.get(name)
  return { tier: 'wasm', ...(simd ? { simd } : {}), ...(readAhead ? { readAhead } : {}), ...(loopTested ? { loopTested } : {}), ...(hullTested ? { hullTested } : {}), ...(narrowed !== undefined ? { narrowed } : {}) }
}

/** Binds the compiled wasm kernels of `code` into `lm.inst` (a new instance object; setHeap binds them). */
function bindWasm(lm: LoadedModule, code: ReturnType<typeof writeWasmModule>, module: WebAssembly.Module): void {
  lm.wasm = { module, kernels: [...code.kernels].map(([name, exp]) => [lm.functions.get(name)!.index, exp]), ...(code.tensor.length ? { tensor: code.tensor } : {}) }
  for (const name of code.kernels.keys()) lm.tiers.set(name, wasmTier(code, name))
  // the wasm thread loops keep per-thread registers after each thread's local memory
  for (const [name, n] of code.slotBytes) lm.functions.get(name)!.slotBytes = n
  const heap = lm.heap
  lm.inst = withWasmKernels(lm.inst, lm.wasm, () => heap.memory, (i, a, what) => { throw faultOf(lm, i, a, what) }, (text, t, b, site) => lm.printf.add(text, t, b, site))
}

/** The EmulatorFault for a kernel's `fault(i, a, what)` call: the instruction i of the module's table, the
 *  address a, the kind of fault (what a worker thread reports back is turned into the same error). */
export function faultOf(lm: LoadedModule, i: number, a: number | bigint | undefined, what: string): EmulatorFault {
  const ins = lm.instrs[i]
  const { text, source } = ins ? describeRow(lm, ins) : { text: '?', source: undefined }
  const msgs: Record<string, string> = {
    trap: 'trap instruction executed', assert: 'device-side assertion failed', callstack: 'call stack overflow',
    shared: 'out-of-bounds or misaligned shared memory access', local: 'out-of-bounds or misaligned local memory access',
    global: 'out-of-bounds or misaligned global memory access', generic: 'out-of-bounds or misaligned memory access',
    const: 'out-of-bounds or misaligned constant memory access', param: 'out-of-bounds or misaligned parameter access',
    brx: 'brx.idx index past the end of its .branchtargets list',
    internal: `internal error: ${ins?.text ?? 'a collective'} reached in a called function (functions with barriers or warp collectives are inlined)`,
  }
  const addr = a === undefined ? undefined : typeof a === 'bigint' ? BigInt.asUintN(64, a) : BigInt.asUintN(64, BigInt(Math.trunc(a)))
  const stray = what === 'global' || what === 'generic' || what === 'const'
  return Object.assign(new EmulatorFault(msgs[what] ?? what, lm.running ?? '?', text, addr, stray && addr !== undefined ? nearestAllocation(lm, addr) : undefined), { source })
}

/** Where a stray global address lies relative to the nearest user allocation or module variable (issue 17
 *  item 3: the fault names it with its bounds). */
function nearestAllocation(lm: LoadedModule, addr: bigint): string {
  const hex = (x: number) => `0x${x.toString(16)}`
  const at = addr < BigInt(Number.MAX_SAFE_INTEGER) ? Number(addr) : Number.MAX_SAFE_INTEGER
  const near = lm.heap.nearest(at)
  if (!near) return 'no allocation is live'
  const variable = [...lm.globals].find(([, g]) => g.address === near.start)?.[0]
  const what = `${variable ? `variable ${variable}` : 'allocation'} ${hex(near.start)}–${hex(near.end - 1)} (${near.end - near.start} bytes)`
  if (at >= near.start && at < near.end) return `inside ${what} (at offset ${at - near.start})`
  return `nearest: ${what}; the address is at offset ${at - near.start} from its start`
}

/** An instruction as fault messages name it: its text, PTX line, the function when it is not the kernel, and
 *  the `.cu` file:line of the PTX's `.loc` line information (-lineinfo; issue 14 item 4), with the line of
 *  the inlined function's own code where the access sits in one. */
export function describeRow(lm: LoadedModule, ins: InstrInfo, kernel = lm.running): { text: string; source: FaultSource | undefined } {
  const source = sourcePosition(lm.ir.files, ins.loc)
  // addr2line -i's order: the inlined code's own line, then where it was inlined into the caller
  const at = !source ? '' : source.inlined ? `, at ${formatSourcePosition(source.inlined)} inlined at ${formatSourcePosition(source)}` : `, at ${formatSourcePosition(source)}`
  return { text: `${ins.text} (PTX line ${ins.line}${ins.fn !== kernel ? `, function ${ins.fn}` : ''}${at})`, source }
}
