// @kernelpack/ptx IR → JavaScript: one function per .entry/.func, compiled once per module with `new
// Function`. A writer in naga's sense: it reads the IR and the facts the analyses attach (register classes,
// liveness, structure, affine address forms, bounds, the collectives registry) and never rewrites text it
// has written; each piece of code is produced once, where everything it depends on is already known.
//
// Execution model (see backend.ts and scheduler.ts): a kernel function runs the threads [t0, t1) of blocks
// b0 … b1-1 in a loop (the whole grid in one call when it has no suspension points); each thread runs its
// control flow as structured JavaScript (structure.ts: labelled blocks and loops, `break`/`continue`), or,
// where branches do not nest, as a `switch (pc)` state machine over its labels. PTX registers are JS locals.
// Instructions that need other threads (collectives.ts: bar.sync, shfl/vote/match/redux/activemask/elect)
// are suspension points: the thread saves the registers live across it (liveness.ts) and its resume pc into
// its state object and the scheduler moves on; when the whole block (barrier) or the warp's group
// (collective) has arrived, the scheduler computes the result and resumes the threads. Kernels without
// suspension points skip all that.
//
// The code of a function is emitted per instruction (emit-instruction.ts holds what each opcode does) and
// assembled per structure node, so scheduling (thread loops, suspension, resume) stays apart from the
// instructions' semantics. Variants are emitted from the IR, not derived from emitted text: a kernel whose
// 64-bit parameters are small numbers at launch runs a speculative variant (bounds.ts makes bounded 64-bit
// adds plain `+`), and a whole block whose tid.x-affine accesses (affine.ts) stay inside one allocation
// each runs a copy of its thread loop emitted without those accesses' per-thread checks.
//
// Memory: one heap (ArrayBuffer) holds global allocations, .global/.const variables, the shared memory of
// the running block, per-thread local memory and the parameter stack. Global/generic/const/param accesses
// are checked against a 4-byte-granule validity map (OK), shared and local accesses against their window
// sizes; a failed check calls fault(), which throws EmulatorFault.
//
// Checked variant (issue 19, `check`): the module is emitted once more with the sanitizer's hooks
// (sanitizer/checker.ts, `CK` in the generated code): every global/shared/generic access reports itself after
// its address check (`CK.ld/st/at(row, a, bytes, t)`, a store's value-dependent hazard decided after it by
// `CK.fin()`), barriers and warp collectives report their arrival with id/count or member mask, kernels with
// suspension points report thread exits, every block start calls `CK.blk(b)`, and faults carry the thread,
// the access kind and size. It runs every kernel on the suspending scheduler (barrier epochs and collective
// groups come from scheduler.ts), without the speculative variant and the unchecked thread-loop copy. None of
// this is emitted when checks are off: the unchecked module's source is what it was before the sanitizer.
import {
  calleeOf, specialUse, PtxError, usedRegisters, analyzeAffine, analyzeLockstep, analyzeUniformity, analyzeBounds, analyzeCasLoads, analyzeContraction, analyzeLiveness, assignRegisterClasses, buildCfg, collectiveOf, waitOf, layoutParams, planThreadLoops, structureFunction, alignTo,
  type AffineFacts, type Cfg, type Collective, type Contraction, type InvExpr, type Instruction, type IrFunction, type IrModule, type IrOperand, type PtxVariable,
  type RegisterClass, type SourceLoc, type StructNode, type StructRegion, type Structure, type ThreadLoopPlan, type ThreadLoopSchedule,
} from '@kernelpack/ptx'
import { emitInstruction } from './emit-instruction.js'
import { ThreadLoopWriter, regionLabel } from './emit-thread-loops.js'
import type { AccessKind, CollectiveUse, Hoisted, InstructionEmitter, Suspension } from './emitter.js'
import { layoutFrame, type Frame } from '../frame.js'
import { jsNumber, memTypeFor, readAs, specialRegister, immediateAs, usesName, writeAs, type Kind } from '../js-values.js'

/** Warp collectives whose lanes exchange matrix fragments (tensor-core.ts): kernels with them run in the
 *  continuation scheme, where the scheduler resolves them. */

/** How an access uses memory, for the checked variant: a read, a write, or an atomic read-modify-write. */
export type { AccessKind } from './emitter.js'
export { layoutFrame, type Frame } from '../frame.js'

/** What fault messages say about an instruction (the table index is what the generated code passes). */
export interface InstrInfo { fn: string; text: string; line: number; loc?: SourceLoc }

export interface CompiledFunction {
  name: string
  kind: 'entry' | 'func'
  /** Position in the module's function table (FN[index] in the instance). */
  index: number
  js: string
  /** Suspension points: resume pc → what the scheduler must do. */
  collectives: Map<number, Collective>
  /** Every suspension point's resume pc → its row in the module's instruction table (for messages). */
  suspendAt: Map<number, number>
  hasSuspend: boolean
  /** How a kernel with barriers or warp collectives runs its threads: thread loops, or (`fallback`) the
   *  continuation scheme, with the reason. Undefined for kernels without them and for device functions. */
  plan?: ThreadLoopPlan
  /** A kernel without collectives whose lanes may talk through memory (lockstep points) but whose thread
   *  loops do not form: why, and where (it runs one thread at a time, as a barrier-free kernel). */
  lockstepNotRun?: Extract<ThreadLoopPlan, { kind: 'fallback' }>
  /** Per-thread registers of the plan that the thread loops recompute from %tid.x (their affine forms)
   *  instead of keeping them in slots. */
  rematerialized?: number[]
  /** Has shfl/vote/match/activemask/redux (suspends at warp granularity). */
  hasWarpCollective: boolean
  /** Bytes of kernel params (entry) / frame (func) in param memory. */
  frameSize: number
  paramOffsets: number[]
  /** End of the last kernel parameter (the bytes a launch must pass). */
  paramEnd: number
  localSize: number
  /** Local memory needed by this function and everything it calls (per thread). */
  stackNeed: number
  /** Bytes per thread that the WebAssembly tier's thread loops keep after the local memory (wasm/emit-wasm.ts). */
  slotBytes?: number
  calls: Set<string>
  regCount: number
  /** Reads %reserved_smem_offset_*: the block gets RESERVED_SMEM bytes of reserved shared memory. */
  reservedSmem: boolean
  /** Where it reads the grid workspace (%envreg1/%envreg2: cg::this_grid().sync()), which only a
   *  cooperative launch provides. */
  gridSync?: { line: number; text: string }
}

export interface ModuleLayout {
  /** Absolute heap addresses of module .global/.const variables. */
  globals: Map<string, number>
  /** Offsets of static .shared variables in the shared window; dynamic (.extern) ones at `sharedStatic`. */
  shared: Map<string, number>
  sharedStatic: number
}

/** Where a function keeps its parameters, return values, call-site `.param` variables and locals: laid out
 *  once per function before any code is emitted (the kernel parameters by @kernelpack/ptx's layout). */


/** A kernel parameter read once per block, before the thread loop (kernel parameters are read-only). */
/** A kernel parameter loaded once per call: `check` (the parameter window check), then `name` = `e`. */

/** One function's code generator; `speculative` emits the variant that assumes small 64-bit parameters
 *  (`slowName` is the generic variant it falls back to). */
export class FunctionEmitter implements InstructionEmitter {
  readonly classes: RegisterClass[]
  readonly regJs: string[]
  readonly frame: Frame
  readonly cfg: Cfg
  readonly structure: Structure
  readonly affine?: AffineFacts
  readonly bounds?: Map<number, number>
  /** Checked variant: the loads of the compare-and-swap idiom, which racecheck takes as atomics (issue 32). */
  private readonly casLoads?: Set<number>
  /** The adds ptxas fuses with a product into one fma (@kernelpack/ptx analyzeContraction), unless the module
   *  was loaded with `fmad: false` (issue 32). */
  private readonly contraction?: Map<number, Contraction>
  /** Dispatcher pcs of labels (1…), then of suspension points and the skips around guarded ones. */
  readonly labelPc = new Map<string, number>()
  readonly suspensionPc = new Map<number, { pc: number; skip?: number }>()
  /** Yield points (suspension points too): waits for other threads that are not collectives (waitOf), in
   *  a loop of a kernel. The thread steps aside after the instruction when it is still waiting. */
  readonly yieldAt = new Set<number>()
  readonly hasSuspend: boolean
  readonly collectives = new Map<number, Collective>()
  /** The kernel's thread-loop plan (kernels with barriers or warp collectives). */
  readonly plan?: ThreadLoopPlan
  /** Its writer, when the plan is formable. */
  readonly loops?: ThreadLoopWriter
  /** Lockstep points that do not run in lockstep (a kernel without collectives whose loops do not form). */
  readonly lockstepNotRun?: Extract<ThreadLoopPlan, { kind: 'fallback' }>
  /** Collectives of a thread-loop kernel, by instruction index (the writer places their code). */
  readonly collectiveUses = new Map<number, CollectiveUse>()
  /** The code of every instruction, once emitBody ran (the thread-loop writer places it). */
  bodyCode: string[] = []
  readonly hoisted = new Map<string, Hoisted>()
  readonly calls = new Set<string>()
  /** Module-wide ids of this function's access sites with an allocation-range cache, in first-use order. */
  readonly siteIds: number[] = []
  private readonly siteOf = new Map<string, number>()
  /** Conditions, evaluated once per block, under which the hoisted sites' per-thread checks can be left out. */
  readonly hoistConds = new Set<string>()
  /** The lowest address (inv + offset) of each hoisted access, evaluated once per block, by expression: its
   *  name (hv<k>). The unchecked copy addresses with `hv<k>+c*tx`, integer arithmetic V8 keeps in registers,
   *  where the register chain it replaces (mul.wide, add.s64) computes in doubles. */
  readonly hoistVals = new Map<string, string>()
  /** Per-block element indices of hoisted lowest addresses (`hv<k> >>> shift`, exact: the range test
   *  checked the alignment), by `name:shift`: their names (hx<k>). */
  private readonly hoistIdx = new Map<string, { name: string; lo: string; shift: number }>()
  /** The current instruction's global access is hoisted and unchecked: its lowest address and stride, so
   *  load() and store() index the heap views directly (`HF32[hx0+tx]` instead of `HF32[a>>>2]`). */
  private accessIndex: { lo: string; c: number } | undefined
  /** Emitting the copy of a whole block's thread loop that leaves out the hoisted sites' checks. */
  unchecked = false
  /** Hoisted sites met in the current emission (the size limit counts them as the old markers did). */
  hoistedSites = 0
  /** The instruction being emitted and its row in the module's fault table. */
  cur!: Instruction
  curIdx = 0
  private readonly idxBase: number

  /** The kernel's block shape and heap views come from its factory (speculative variant only: specializeDims). */
  get specializesDims(): boolean { return this.slowName !== undefined && this.fn.kind === 'entry' }

  constructor(readonly fn: IrFunction, readonly index: number, readonly mc: ModuleEmitter, readonly slowName?: string) {
    const shared = mc.facts(fn)
    this.classes = shared.classes
    this.regJs = fn.registers.map((_, i) => `r${i}`)
    this.frame = mc.frames[index]!
    this.cfg = shared.cfg
    this.structure = shared.structure
    if (slowName !== undefined) this.bounds = analyzeBounds(fn, this.classes)
    if (fn.kind === 'entry') this.affine = analyzeAffine(fn, this.cfg, this.classes, { wideParams: slowName !== undefined })
    if (mc.check) this.casLoads = analyzeCasLoads(fn)
    if (mc.fmad) this.contraction = mc.facts(fn).contraction
    let pc = 1
    for (const name of fn.labels.keys()) this.labelPc.set(name, pc++)
    let suspends = false
    const synchronizes = fn.kind === 'entry' && fn.instructions.some((ins, i) => collectiveOf(ins) || (waitOf(ins) && this.cfg.loopOf[this.cfg.blockOf[i]!]! >= 0))
    if (fn.kind === 'entry' && (synchronizes || mc.mayTalk(fn))) {
      const plan = mc.plan(fn)
      // a kernel planned only for its lockstep points that cannot form thread loops runs as before, one
      // thread at a time (inspect says so)
      if (plan.kind === 'fallback' && !synchronizes) this.lockstepNotRun = plan
      else this.plan = plan
      if (plan.kind === 'loops') this.loops = new ThreadLoopWriter(this, plan)
    }
    fn.instructions.forEach((ins, i) => {
      if (fn.kind !== 'entry' || this.loops) return
      if (!collectiveOf(ins)) {
        if (!waitOf(ins) || this.cfg.loopOf[this.cfg.blockOf[i]!]! < 0) return
        this.yieldAt.add(i)
      }
      suspends = true
      const s: { pc: number; skip?: number } = { pc: pc++ }
      if (ins.guard) s.skip = pc++
      this.suspensionPc.set(i, s)
    })
    this.hasSuspend = suspends
    this.idxBase = mc.instrs.length
    for (const ins of fn.instructions) {
      const info: InstrInfo = { fn: fn.name, text: ins.text, line: ins.line }
      if (ins.loc) info.loc = ins.loc
      mc.instrs.push(info)
    }
  }

  /** The row of instruction i in the module's instruction table (InstrInfo, fault messages). */
  rowOf(i: number): number { return this.idxBase + i }
  /** The structure's regions by id (structured functions). */
  get structureRegions(): StructRegion[] {
    return this.structure.kind === 'structured' ? this.structure.regions : []
  }

  fail(msg: string, ins: Instruction = this.cur): never {
    throw new PtxError(`${msg} in \`${ins.text}\` (function ${this.fn.name})`, ins.line)
  }

  // The helpers emit-instruction.ts calls for every instruction, bound once here.
  readonly failOp = (msg: string): never => this.fail(msg)
  /** rd() of an operand that must be present. */
  readonly rdOp = (o: IrOperand | undefined, k: Kind): string => this.rd(o ?? this.fail('missing operand'), k)
  /** wr() into a destination that must be present. */
  readonly wrOp = (o: IrOperand | undefined, k: Kind, e: string): string => this.wr(o ?? this.fail('missing destination'), k, e)

  // --- registers and operands ---

  cls(o: IrOperand | undefined): RegisterClass | undefined {
    return o?.kind === 'reg' ? this.classes[o.id] : undefined
  }

  /** JS expression for operand `o` read as kind k. */
  rd(o: IrOperand, k: Kind): string {
    const fail = this.failOp
    switch (o.kind) {
      case 'reg': return readAs(this.regJs[o.id]!, this.classes[o.id]!, k, fail)
      case 'special': {
        const sp = specialRegister(o.name)
        if (k === 'i64' || k === 'u32') return `(${sp}>>>0)`
        return readAs(sp, 'i32', k, fail)
      }
      case 'sym': {
        const addr = this.symAddr(o.name)
        if (addr === undefined) return this.fail(`unknown register or symbol ${o.name}`)
        return k === 'i32' ? `((${addr})|0)` : addr
      }
      case 'imm': return immediateAs(o.imm, k, fail)
      case 'neg': return `(-${this.rd(o.operand, k)})`
      case 'not':
        if (k === 'pred') return `!${this.rd(o.operand, 'pred')}`
        break
      default: break
    }
    return this.fail(`operand of kind ${o.kind} cannot be read as ${k}`)
  }

  /** Statement writing expression e (of kind k) into register operand o. */
  wr(o: IrOperand, k: Kind, e: string): string {
    if (o.kind === 'sink') return `${e};`
    if (o.kind !== 'reg') return this.fail('destination is not a register')
    return `${this.regJs[o.id]}=${writeAs(e, k, this.classes[o.id]!, this.failOp)};`
  }

  /** Address of a symbol in its own state space, as a JS expression (number). */
  symAddr(name: string): string | undefined {
    const v = this.frame.vars.get(name)
    if (v) {
      if (v.v.space === 'param') return this.frame.localParams.has(name) ? `(LB+${v.off})` : `(FB+${v.off})`
      if (v.v.space === 'local') return this.fn.kind === 'entry' ? `${v.off}` : `(LF+${v.off})`
      if (v.v.space === 'shared') return String(this.mc.layout.shared.get(name) ?? 0)
      if (v.v.space === 'const' || v.v.space === 'global') return String(this.mc.layout.globals.get(name))
    }
    const g = this.mc.layout.globals.get(name)
    if (g !== undefined) return String(g)
    const s = this.mc.layout.shared.get(name)
    if (s !== undefined) return String(s)
    return undefined
  }

  // --- memory ---

  /** The instruction being emitted has a store hook (checked variant): its code ends with `CK.fin()`. */
  private storeHooked = false

  /** Checked variant (issue 19): emit the sanitizer's hooks. */
  get checked(): boolean { return this.mc.check }

  /** The module-wide id of an access site of the current instruction (slot: which address operand). */
  private site(slot: number): number {
    const key = `${this.cur.index}:${slot}`
    let k = this.siteOf.get(key)
    if (k === undefined) {
      k = this.mc.sites++
      this.siteOf.set(key, k)
      this.siteIds.push(k)
    }
    return k
  }

  /** The address `[base+offset]` in its own state space, as a JS expression (a number; BigInt for a 64-bit
   *  register that holds one). */
  addrExpr(o: IrOperand): string {
    if (o.kind !== 'addr') return this.fail('expected an address operand')
    let base: string
    const b = o.base
    const bc = this.cls(b)
    if (!b) base = '0'
    else if (b.kind === 'reg') base = bc === 'i64' ? this.regJs[b.id]! : bc === 'i32' || bc === 'i16' ? `(${this.regJs[b.id]}>>>0)` : this.fail('address register must be an integer')
    else if (b.kind === 'sym') {
      const s = this.symAddr(b.name)
      if (s === undefined) return this.fail(`unknown symbol ${b.name}`)
      base = s
    } else return this.fail('bad address')
    const off = o.offset
    const r32 = b?.kind === 'reg' && bc !== 'i64'
    // 32-bit address registers wrap modulo 2^32 (PTX .u32 addressing of shared/local windows)
    return off === 0 ? base : /^\d+$/.test(base) ? String(Number(base) + off) : r32 ? `((${base}+${off})>>>0)` : `${base}+${off}`
  }

  /** Code that puts the address `w` (a JS expression in `space`) for an access of n bytes into the local `a`
   *  as an absolute heap address, checked: shared and local against their windows, others against the
   *  granule map. No access-site cache (addr() has one for a kernel's own address operands). */
  checkAt(w: string, space: string, n: number, rw: AccessKind = 'r'): string {
    this.accessIndex = undefined
    const idx = this.curIdx
    const al = n >= 16 ? 15 : n - 1
    const alc = al > 0 ? `||(a&${al})!==0` : ''
    const ft = this.faultTail(space, n, rw)
    switch (space) {
      case 'shared': return `a=${w};if(!(a>=0&&a<=SHN-${n})${alc})fault(${idx},a,'shared'${ft});a+=SB;`
      case 'local': return `a=${w};if(!(a>=0&&a<=LSZ-${n})${alc})fault(${idx},a,'local'${ft});a+=LB;`
      // the launch's parameter frame and call stack (never global memory: Heap.allocInternal)
      case 'param': return `a=${w};if(!(a>=PB&&a<=PE-${n})${alc})fault(${idx},a,'param');`
      default: return `a=${w};${this.globalCheck(space, n, rw)}`
    }
  }

  checkedAccess(w: string, space: string, n: number, rw: 'r' | 'w'): string {
    return this.checkAt(w, space, n, rw) + this.hook(space, n, rw, 0)
  }

  /** The checked variant's report of the access at `a` to the sanitizer (shared, global and generic memory;
   *  f: accessFlags); nothing in the unchecked variant. */
  private hook(space: string, n: number, rw: AccessKind, f: number): string {
    if (!this.checked || (space !== 'shared' && space !== 'global' && space !== 'generic')) return ''
    return `CK.${rw === 'r' ? 'ld' : rw === 'w' ? 'st' : 'at'}(${this.curIdx},a,${n},t${f ? `,${f}` : ''});`
  }

  stored(): string {
    return this.checked ? 'if(CK.p)CK.fin();' : ''
  }

  /** The granule check of an n-byte global/generic/const access at `a` (issue 17 item 3: only user allocations
   *  and module variables are global memory); a generic address may also name the block's shared window,
   *  the thread's local memory or the parameter frame, which lie at GSH, GLO, GPA (2^34, 2^35, 2^36, cvta),
   *  beyond the reach of a device pointer gone astray, and are mapped to where the launch keeps them. A
   *  negative address is no address (a >>> 2 would read it modulo 2^32, where an address 2^34 below an
   *  allocation lands inside it); a < HN rules out wrap-around the other way. */
  private globalCheck(space: string, n: number, rw: AccessKind = 'r'): string {
    const idx = this.curIdx
    const ft = this.faultTail(space, n, rw)
    const al = n >= 16 ? 15 : n - 1
    const alc = al > 0 ? `||(a&${al})!==0` : ''
    const last = n > 4 ? `||OK[(a+${n - 4})>>>2]!==1` : ''
    const windows = `if(a>=GSH&&a<=GSH+SHN-${n})a=a-GSH+SB;else if(a>=GLO&&a<=GLO+LBE-LB0-${n})a=a-GLO+LB0;else if(a>=GPA&&a<=GPA+PE-PB-${n})a=a-GPA+PB;else fault(${idx},a,"${space}"${ft});`
    return space === 'generic'
      ? `if(!(a>=0&&a<HN&&OK[a>>>2]===1)${last}${alc}){${windows}${alc ? `if(${alc.slice(2)})fault(${idx},a,"${space}"${ft});` : ''}}`
      : `if(!(a>=0&&a<HN&&OK[a>>>2]===1)${last}${alc})fault(${idx},a,"${space}"${ft});`
  }

  /** The checked variant's faults say which thread, what kind of access and how many bytes (param-space
   *  accesses run before the thread loop too, where there is no thread). */
  private faultTail(space: string, n: number, rw: AccessKind): string {
    return this.checked && space !== 'param' ? `,t,'${rw}',${n}` : ''
  }

  /** Code that computes the absolute address of operand `o` for an access of n bytes in `space` into the
   *  local `a`, checked (slot numbers the address operands of one instruction; rw, whether the access reads,
   *  writes or is an atomic, matters to the checked variant only, which reports the access to the sanitizer).
   *  `indexed`: the caller accesses memory only through load()/store() (ld, st), which may then index the
   *  heap views without `a`. */
  addr(o: IrOperand, space: string, n: number, slot = 0, rw: AccessKind = 'r', indexed = false): string {
    const code = this.addrChecked(o, space, n, slot, rw, indexed)
    const hook = this.hook(space, n, rw, this.checked ? this.accessFlags(rw) : 0)
    if (hook && rw === 'w') this.storeHooked = true
    return code + hook
  }

  /** The product the current add/sub fuses with, and which of its operands that product is. */
  contracted(): { mul: Instruction; operand: 1 | 2 } | undefined {
    const c = this.contraction?.get(this.curIdx - this.idxBase)
    return c && { mul: this.fn.instructions[c.mul]!, operand: c.operand }
  }

  /** What the sanitizer must know of the current access beyond read/write (sanitizer/checker.ts): 1, a
   *  morally strong operation (atomics, mbarrier operations, .relaxed/.acquire/.release loads and stores;
   *  PTX ISA "Memory Consistency Model"), 2 an acquire (ld/atom .acquire/.acq_rel, a completed mbarrier
   *  wait), 4 a release (st/red/atom .release/.acq_rel, mbarrier arrive, cp.async.mbarrier.arrive). The load of
   *  a compare-and-swap loop counts as strong (analysis/cas-loads.ts in @kernelpack/ptx). */
  private accessFlags(rw: AccessKind): number {
    const ins = this.cur
    const sem = ins.sem
    let f = rw === 'a' || sem === 'relaxed' || sem === 'acquire' || sem === 'release' || sem === 'acq_rel' ? 1 : 0
    if (rw === 'r' && this.casLoads?.has(this.curIdx - this.idxBase)) f |= 1
    if (ins.op === 'mbarrier') f |= ins.mode === 'test_wait' || ins.mode === 'try_wait' ? 2 : ins.mode === 'arrive' || ins.mode === 'arrive_drop' ? 4 : 0
    else if (ins.op === 'cp' && ins.hints?.includes('mbarrier')) f |= 4
    else f |= (sem === 'acquire' || sem === 'acq_rel' ? 2 : 0) | (sem === 'release' || sem === 'acq_rel' ? 4 : 0)
    return f
  }

  private addrChecked(o: IrOperand, space: string, n: number, slot: number, rw: AccessKind, indexed: boolean): string {
    this.accessIndex = undefined
    if (o.kind !== 'addr') return this.fail('expected an address operand')
    const idx = this.curIdx
    const w = this.addrExpr(o)
    const b = o.base
    const off = o.offset
    const al = n >= 16 ? 15 : n - 1
    const alc = al > 0 ? `||(a&${al})!==0` : ''
    switch (space) {
      case 'shared': {
        // every thread of the block accesses inv+off+c·tx: one test of both ends against the window per
        // block, then the copy of the block's code without per-thread window checks (emit) leaves it out
        const f = this.hoistable(o, ['i32', 'i64'])
        if (f && f.c % (al + 1) === 0) {
          for (const c of f.conds) this.hoistConds.add(c)
          const lo = this.hoistVal(`${f.inv}+${off}`)
          this.hoistConds.add(`hs(${lo},${f.c},${n},${al + 1})`)
          this.hoistedSites++
          if (this.unchecked && !indexed) return `a=${hoistedAddress(lo, f.c)};a+=SB;`
          // the window starts at SB, 256-aligned (Heap.allocInternal): lo+SB keeps lo's alignment
          if (this.unchecked) { this.accessIndex = { lo: `${lo}+SB`, c: f.c }; return '' }
        }
        return this.checkAt(w, space, n, rw)
      }
      case 'local':
        return this.checkAt(w, space, n, rw)
      case 'param':
        // a call sequence's variable in the thread's local memory (Frame.localParams)
        if (b?.kind === 'sym' && this.frame.localParams.has(b.name)) return `a=${w};if(!(a>=LB&&a<=LB+LSZ-${n})${alc})fault(${idx},a,'param');`
        return this.checkAt(w, space, n)
      default: {
        const check = this.globalCheck(space, n, rw)
        if (this.fn.kind !== 'entry') return `a=${w};${check}`
        // Kernels cache, per access site k, the allocation an earlier address of that site fell in:
        // GR[2k], GR[2k+1] bound the addresses at which an n-byte access stays inside it (empty at the
        // start of a launch). The full granule check runs only on a miss, which then looks up the
        // allocation (rng: binary search over the launch's allocation ranges, Heap.ranges()) for the next
        // block. A hit implies the full check would pass, since every granule of an allocation is mapped
        // and allocations do not change during a launch; a BigInt address fails the range test before
        // `a&al` could see it. The bounds are constants within a block (gLk/gHk, read at block start):
        // V8 keeps loop-invariant bounds in registers, where bounds updated inside the thread loop cost
        // as much as the granule check they replace.
        const k = this.site(slot)
        const site = `if(!(a>=gL${k}&&a<=gH${k})${alc}){${check}rng(a);GR[${2 * k}]=RL;GR[${2 * k + 1}]=RH-${n};}`
        const f = this.hoistable(o)
        if (!f || f.c % (al + 1) !== 0) return `a=${w};${site}`
        // every thread of the block accesses inv+off+c·tx, tx in [0, NTX): one range test of both ends,
        // against the site's cached allocation (GR) first, so consecutive blocks skip the lookup
        for (const c of f.conds) this.hoistConds.add(c)
        const lo = this.hoistVal(`${f.inv}+${o.offset}`)
        this.hoistConds.add(`hz(${lo},${f.c},${n},${al + 1},${2 * k})`)
        this.hoistedSites++
        if (!this.unchecked) return `a=${w};${site}`
        // a plain load or store (`indexed`) reads and writes only through load()/store(): no `a` at all
        // (V8 keeps a dead store to it, a tenth of a vector add's time)
        if (!indexed) return `a=${hoistedAddress(lo, f.c)};`
        this.accessIndex = { lo, c: f.c }
        return ''
      }
    }
  }

  /** The name of a hoisted access's lowest address `e` (an expression of block-invariant values). */
  private hoistVal(e: string): string {
    let v = this.hoistVals.get(e)
    if (v === undefined) { v = `hv${this.hoistVals.size}`; this.hoistVals.set(e, v) }
    return v
  }

  /** Declarations of the hoisted accesses' lowest addresses, at the start of each block. */
  hoistDecl(): string {
    const decls = [...[...this.hoistVals].map(([e, v]) => `${v}=${e}`), ...[...this.hoistIdx.values()].map((x) => `${x.name}=${x.lo}>>>${x.shift}`)]
    return decls.length ? `const ${decls.join(',')};` : ''
  }

  /** The heap-view index of byte `k` of the current access in a view of 2^shift-byte elements: `a>>>shift`
   *  (+ k), or for a hoisted unchecked access its per-block element index plus c/2^shift per thread. `next`:
   *  the following element's (the high word of a 64-bit integer). */
  private heapIndex(shift: number, k: number, next = false): string {
    const h = this.accessIndex
    if (!h) {
      const ad = k ? `(a+${k})` : 'a'
      const x = shift === 0 ? ad : `${ad}>>>${shift}`
      return next ? `(${x})+1` : x
    }
    if (next) return `${this.heapIndex(shift, k)}+1`
    const key = `${h.lo}:${shift}`
    let v = this.hoistIdx.get(key)?.name
    if (v === undefined) { v = `hx${this.hoistIdx.size}`; this.hoistIdx.set(key, { name: v, lo: h.lo, shift }) }
    const step = h.c / 2 ** shift
    return `${v}${step === 0 ? '' : step === 1 ? '+tx' : step < 0 ? `+(${step})*tx` : `+${step}*tx`}${k ? `+${k / 2 ** shift}` : ''}`
  }

  /** The affine form (rendered) of an access's base register when the access is unguarded and the base
   *  register's one definition, with a form, runs before it on every path (analysis/affine.ts formAt): then
   *  every thread that makes the access uses inv + c·tx, wherever the access is (after branches, in a loop,
   *  in a later thread loop), so a per-block test of the whole range [inv, inv + c·(NTX−1)] covers it.
   *  `cls`: the base register's class (64-bit for global addresses, 32- or 64-bit for shared ones). */
  private hoistable(o: Extract<IrOperand, { kind: 'addr' }>, cls: readonly RegisterClass[] = ['i64']): { inv: string; c: number; conds: string[] } | undefined {
    const facts = this.affine
    if (!facts || this.checked || this.cur.guard || o.base?.kind !== 'reg' || !cls.includes(this.classes[o.base.id]!)) return undefined
    const f = facts.formAt(o.base.id, this.cur.index)
    if (!f || f.iv) return undefined
    const inv = this.renderInv(f.inv)
    if (inv === undefined) return undefined
    const conds: string[] = []
    for (const w of f.conds) {
      const x = this.renderInv(w.inv)
      if (x === undefined) return undefined
      conds.push(`wr(${x},${w.c},${w.lo})`)
    }
    return { inv, c: f.c, conds }
  }

  /** A 32-bit register the thread loops would keep per thread, as an expression of tx that recomputes it
   *  (`(inv+c*tx)|0`), when it has an affine form: its 32-bit operations (add, mul.lo, mad.lo, shl, moves)
   *  wrap modulo 2^32, so the register holds ToInt32 of the form's exact value whatever the wrap checks say,
   *  and that value is exact in doubles when |inv| + |c|·1024 stays below 2^53 (bounded from the terms'
   *  ranges, not from the analysis's `mag`, which assumes the wrap checks hold). */
  rematerialize(r: number): string | undefined {
    const f = this.affine?.register.get(r)
    if (!f || f.iv || this.classes[r] !== 'i32' || exactBound(f.inv) + Math.abs(f.c) * 1024 > 2 ** 53) return undefined
    const inv = this.renderInv(f.inv)
    return inv === undefined ? undefined : `(${inv}+${jsNumber(f.c)}*tx)|0`
  }

  /** A block-invariant affine term as JS: kernel parameters by their hoisted names. */
  private renderInv(e: InvExpr): string | undefined {
    switch (e.kind) {
      case 'const': return jsNumber(e.value)
      case 'special': return specialRegister(e.name)
      case 'symbol': return this.symAddr(e.name)
      case 'param': {
        const tt = e.type === 'f32' ? 'b32' : e.type === 'f64' ? 'b64' : e.type
        const h = this.hoisted.get(`${e.name}+${e.offset}:${tt}`)
        if (!h) return undefined
        return e.width === 32 ? `(${h.name}|0)` : h.name
      }
      case 'add': {
        const a = this.renderInv(e.a), b = this.renderInv(e.b)
        return a === undefined || b === undefined ? undefined : `(${a}+${b})`
      }
      case 'mul': {
        const a = this.renderInv(e.a), b = this.renderInv(e.b)
        return a === undefined || b === undefined ? undefined : `(${a}*${b})`
      }
    }
  }

  /** Load expression of type t from absolute address in `a` (+ byte offset k). */
  load(t: string, k = 0): { e: string; kind: Kind } {
    const x = (shift: number) => this.heapIndex(shift, k)
    switch (t) {
      case 'u8': case 'b8': return { e: `H8[${x(0)}]`, kind: 'u8' }
      case 's8': return { e: `HI8[${x(0)}]`, kind: 's8' }
      case 'u16': case 'b16': case 'f16': case 'bf16': return { e: `HU16[${x(1)}]`, kind: 'u16' }
      case 's16': return { e: `HI16[${x(1)}]`, kind: 's16' }
      // PTX ISA "Operand Size Exceeding Instruction-Type Size": a load into a wider register sign-extends
      // only signed types; .b32 zero-extends like .u32 (clang loads `unsigned` params with ld.param.b32 into %rd)
      case 'u32': case 'b32': return { e: `HU32[${x(2)}]`, kind: 'u32' }
      case 's32': case 'f16x2': case 'bf16x2': return { e: `HI32[${x(2)}]`, kind: 'i32' }
      case 'f32': return { e: `HF32[${x(2)}]`, kind: 'f32' }
      case 'f64': return { e: `HF64[${x(3)}]`, kind: 'f64' }
      case 'u64': case 's64': case 'b64': return { e: `mk64(HU32[${x(2)}],HI32[${this.heapIndex(2, k, true)}])`, kind: 'i64' }
    }
    return this.fail(`unsupported load type .${t}`)
  }

  /** Store statement of value expression v at a(+k). */
  store(t: string, v: string, k = 0): string {
    const x = (shift: number) => this.heapIndex(shift, k)
    switch (t) {
      case 'u8': case 'b8': case 's8': return `H8[${x(0)}]=${v};`
      case 'u16': case 'b16': case 's16': case 'f16': case 'bf16': return `HU16[${x(1)}]=${v};`
      case 'u32': case 's32': case 'b32': case 'f16x2': case 'bf16x2': return `HI32[${x(2)}]=${v};`
      case 'f32': return `HF32[${x(2)}]=${v};`
      case 'f64': return `HF64[${x(3)}]=${v};`
      case 'u64': case 's64': case 'b64': return `x64=${v};HI32[${x(2)}]=lo32(x64);HI32[${this.heapIndex(2, k, true)}]=hi32(x64);`
    }
    return this.fail(`unsupported store type .${t}`)
  }

  /** The memory type a load/store of type t uses for register operand o: a float-class register moves its
   *  float, an integer-class one its bits. */
  memType(t: string, o: IrOperand): string {
    return memTypeFor(t, this.cls(o))
  }


  /** A kernel parameter load hoisted before the thread loop: the variable's name. */
  hoistParam(am: Extract<IrOperand, { kind: 'addr' }>, tt: string, size: number): Hoisted {
    const key = `${(am.base as { name: string }).name}+${am.offset}:${tt}`
    let h = this.hoisted.get(key)
    if (!h) {
      const l = this.load(tt)
      h = { name: `P${this.hoisted.size}`, check: this.addr(am, 'param', size), e: l.e, kind: l.kind }
      this.hoisted.set(key, h)
    }
    return h
  }

  // --- control ---

  /** The statement that ends the thread (kernels) or returns (device functions). */
  ret(): string {
    if (this.fn.kind === 'entry') return this.loops ? this.loops.end() : this.hasSuspend ? `${this.checked ? `CK.ex(${this.curIdx},t);` : ''}S.st=3;continue TH;` : 'continue TH;'
    return 'return;'
  }

  /** A jump to `label` from the current instruction, per the function's control flow. */
  branch(label: string): string {
    const s = this.structure
    if (s.kind === 'fallback') return `pc=${this.labelPc.get(label)};continue L;`
    const d = this.loops?.plan.departures.get(this.cur.index)
    // an exit's code is the kernel's tail, placed once every instruction has its code (emitBody)
    if (d) return d.kind === 'exit' ? '' : this.loops!.departure(d, this.cur.index)
    const t = s.branches.get(this.cur.index)!
    const r = s.regions[t.node]!
    return t.kind === 'continue' ? `continue ${regionLabel(r.kind, r.id)};` : `break ${regionLabel(r.kind, r.id)};`
  }

  /** The suspension of the current instruction: the scheduler resolves `kind` once its group arrived;
   *  inputs go to S.c0…, results come back in S.o0… (see scheduler.ts). */
  suspend(kind: Collective, inputs: string[], outputs: string[]): Suspension | string {
    // calls to functions with suspension points are inlined (inline.ts); the function itself is unreachable
    if (this.fn.kind !== 'entry') return `fault(${this.curIdx},undefined,'internal');`
    // thread loops: the writer collects the inputs before and hands out the results after
    if (this.loops) { this.collectiveUses.set(this.cur.index, { c: kind, inputs, outputs }); return '' }
    const { pc } = this.suspensionPc.get(this.cur.index)!
    this.collectives.set(pc, kind)
    const ins = inputs.map((e, i) => `S.c${i}=${e};`).join('')
    const saves = this.savedAt(this.cur.index).map((r) => this.save(r)).join('')
    const arrive = this.checked ? this.arrival(kind) : ''
    return { pc, pre: `${arrive}${ins}S.pc=${pc};S.st=${kind.kind === 'bar' ? 1 : 2};${saves}continue TH;`, post: outputs.length ? `q0=S.o0;q1=S.o1;${outputs.join('')}` : '' }
  }

  /** The JS expression of a collective's result `slot` in its output statements (suspend()). */
  result(slot: 0 | 1): string {
    return `q${slot}`
  }

  /** The checked variant's arrival hook of the current collective: a barrier's id and thread count, a warp
   *  collective's member mask (operand positions per PTX ISA: `bar.sync a{, b}`, `bar.red.op d, a{, b}, c`,
   *  `bar.warp.sync m`, `shfl.sync d, a, b, c, m`, `vote.sync d, p, m`, `match.sync d, a, m`,
   *  `redux.sync d, a, m`, `elect.sync d, m`). */
  private arrival(kind: Collective): string {
    const A = this.cur.operands
    const at = `${this.curIdx},t`
    const val = (o: IrOperand | undefined) => (o ? this.rd(o, 'i32') : '-1')
    switch (kind.kind) {
      case 'bar': {
        const ops = kind.red ? A.slice(1, -1) : A
        return `CK.bar(${at},${val(ops[0])},${val(ops[1])});`
      }
      case 'warpsync': return `CK.col(${at},${val(A[0])});`
      case 'shfl': return A.length > 4 ? `CK.col(${at},${val(A[4])});` : `CK.arrive(${at});`
      case 'vote': case 'match': case 'redux': return A.length > 2 ? `CK.col(${at},${val(A[2])});` : `CK.arrive(${at});`
      case 'elect': return `CK.col(${at},${val(A[1])});`
      case 'activemask': return `CK.arrive(${at});`
      // tensor cores (mma, wmma, ldmatrix, stmatrix, movmatrix): .aligned warp-wide operations with no member
      // mask; each lane's element accesses report themselves (checkedAccess)
      default: return `CK.arrive(${at});`
    }
  }

  /** The current instruction's code followed, at a yield point, by a yield: while `waiting` holds, the thread
   *  steps aside (S.st=4) with the registers live after the instruction and resumes after it once the
   *  scheduler ran the others (scheduler.ts stepBlock); `passed` runs when it does not wait. Elsewhere (not in
   *  a loop, or in a device function) the code alone: nothing to wait for, or nowhere to step aside. */
  yieldIf(code: string, waiting: string, passed: string): Suspension | string {
    if (!this.yieldAt.has(this.cur.index)) return code
    const { pc } = this.suspensionPc.get(this.cur.index)!
    const saves = this.savedAt(this.cur.index).map((r) => this.save(r)).join('')
    return { pc, pre: `${code}if(${waiting}){S.pc=${pc};S.st=4;${saves}continue TH;}${passed}`, post: '' }
  }

  /** The registers a thread suspended at instruction i keeps: those live across a collective (its results
   *  come back from the scheduler), those live after a yield point (it ran already). */
  savedAt(i: number): number[] {
    const live = this.mc.live(this)
    return this.yieldAt.has(i) ? live.liveOut(i) : live.liveAcross(i)
  }

  /** Numbers go to a Float64Array (no boxing), i64 values (number or BigInt) to a plain array. */
  save(r: number): string {
    const c = this.classes[r], js = this.regJs[r]
    return c === 'i64' ? `R[${r}]=${js};` : c === 'pred' ? `RF[${r}]=${js}?1:0;` : `RF[${r}]=${js};`
  }

  restore(r: number): string {
    const c = this.classes[r], js = this.regJs[r]
    return c === 'i64' ? `${js}=R[${r}];` : c === 'pred' ? `${js}=RF[${r}]!==0;` : `${js}=RF[${r}];`
  }

  // --- assembly ---

  /** The code of every instruction (with its guard), in order; suspension points separately. */
  private emitBody(): { code: string[]; susp: Map<number, Suspension & { guard?: string }> } {
    this.hoistedSites = 0
    const code: string[] = []
    const susp = new Map<number, Suspension & { guard?: string }>()
    this.fn.instructions.forEach((ins, i) => {
      this.cur = ins
      this.curIdx = this.idxBase + i
      this.storeHooked = false
      this.accessIndex = undefined
      let c = emitInstruction(this, ins)
      // the checked variant decides a store's value-dependent hazard once the bytes are written
      if (this.storeHooked && typeof c === 'string') c += 'if(CK.p)CK.fin();'
      const g = ins.guard ? `${ins.guard.negate ? '!' : ''}${this.regJs[ins.guard.reg]}` : undefined
      if (ins.guard && this.classes[ins.guard.reg] !== 'pred') this.fail(`guard ${this.fn.registers[ins.guard.reg]!.name} is not a predicate register`)
      if (typeof c === 'string') { code.push(g ? `if(${g}){${c}}` : c); return }
      susp.set(i, g ? { ...c, guard: g } : c)
      code.push('')
    })
    this.bodyCode = code
    if (this.loops) {
      // exits run the kernel's tail, which is code of other instructions
      for (const [i, d] of this.loops.plan.departures) {
        if (d.kind !== 'exit') continue
        const ins = this.fn.instructions[i]!
        const c = this.loops.departure(d, i)
        code[i] = ins.guard ? `if(${ins.guard.negate ? '!' : ''}${this.regJs[ins.guard.reg]}){${c}}` : c
      }
    }
    return { code, susp }
  }

  /** The dispatcher form: `case pc:` at labels and resume points, branches set pc. */
  private dispatcher(code: string[], susp: Map<number, Suspension & { guard?: string }>): string {
    const byPos = new Map<number, string[]>()
    for (const [name, at] of this.fn.labels) (byPos.get(at) ?? byPos.set(at, []).get(at)!).push(name)
    const out: string[] = []
    const n = this.fn.instructions.length
    for (let i = 0; i <= n; i++) {
      for (const name of byPos.get(i) ?? []) out.push(`case ${this.labelPc.get(name)}:`)
      if (i === n) break
      const s = susp.get(i)
      if (!s) { out.push(code[i]!); continue }
      const ins = this.fn.instructions[i]!
      if (ins.guard) {
        const skip = this.suspensionPc.get(i)!.skip!
        out.push(`if(${ins.guard.negate ? '' : '!'}${this.regJs[ins.guard.reg]}){pc=${skip};continue L;}`, s.pre, `case ${s.pc}:`, s.post, `case ${skip}:`)
      } else out.push(s.pre, `case ${s.pc}:`, s.post)
    }
    return out.join('\n')
  }

  /** The structured form: the structure tree as labelled blocks and loops. A thread resumed at a
   *  suspension point enters the blocks and loops that contain it and skips everything else, which is
   *  wrapped in `if(pc===0){…}`; at the resume point pc returns to 0 and execution continues normally. */
  private structured(nodes: StructNode[], code: string[], susp: Map<number, Suspension & { guard?: string }>): string {
    const out: string[] = []
    let guarded = false
    const guard = (on: boolean) => {
      if (susp.size === 0 || on === guarded) return
      out.push(on ? 'if(pc===0){' : '}')
      guarded = on
    }
    const points = [...susp.keys()]
    const hot = (s: number, e: number) => points.some((k) => s <= k && k < e)
    const walk = (list: StructNode[]) => {
      for (const node of list) {
        if (node.kind === 'instr') {
          const s = susp.get(node.index)
          if (s) {
            guard(false)
            const restores = this.savedAt(node.index).map((r) => this.restore(r)).join('')
            out.push(`if(pc===0${s.guard ? `&&${s.guard}` : ''}){${s.pre}}`, `if(pc===${s.pc}){pc=0;${restores}${s.post}}`)
            continue
          }
          guard(true)
          out.push(code[node.index]!)
          continue
        }
        // jump nodes come only from structureFunction's re-layout, which this writer does not ask for
        if (node.kind === 'jump') throw new Error('internal: a jump node without relayout')
        const isHot = hot(node.start, node.end)
        guard(!isHot)
        out.push(node.kind === 'loop' ? `${regionLabel(node.kind, node.id)}:for(;;){` : `${regionLabel(node.kind, node.id)}:{`)
        walk(node.body)
        if (isHot) guard(false)
        out.push(node.kind === 'loop' ? 'break;}' : '}')
      }
    }
    walk(nodes)
    guard(false)
    out.push(this.ret())
    return out.join('\n')
  }

  private assemble(code: string[], susp: Map<number, Suspension & { guard?: string }>): string {
    return this.structure.kind === 'structured' ? this.structured(this.structure.body, code, susp) : this.dispatcher(code, susp)
  }

  /** The function's source: `function(…){…}`. */
  emit(): string {
    const fn = this.fn
    const { code, susp } = this.emitBody()
    const body = this.assemble(code, susp)
    const markedLength = body.length + 12 * this.hoistedSites
    const structured = this.structure.kind === 'structured'
    const regDecl = fn.registers.map((_, i) => `${this.regJs[i]}=${this.classes[i] === 'pred' ? 'false' : '0'}`).join(',')
    const regs = regDecl ? ',' + regDecl : ''
    // launch state as function-local constants (V8 keeps them in registers; the module-level ones are
    // mutable and would be reloaded after every helper call); kernels read the block index per block
    // (the speculative variant of a kernel is made per block shape by a factory whose parameters are NTX, NTY,
    // NTZ: see specializeDims)
    // (the speculative variant reads the heap views from its factory's constants, a local copy each: V8 then
    // folds the view's base and length, and it does neither for a view read from module state or straight
    // from the closure)
    const views = HEAP_VIEWS.map((h) => `${h}=${this.specializesDims ? `${h}c` : `_${h}`},`).join('')
    const dims = this.specializesDims ? '' : 'NTX=_NTX,NTY=_NTY,NTZ=_NTZ,NT=_NT,'
    const snap = `const ${views}SB=_SB,SHN=_SHN,DYN=_DYN,LB0=_LB0,LN=_LN,LSZ=_LSZ,LBE=_LBE,PB=_PB,PE=_PE,${dims}NCX=_NCX,NCY=_NCY,NCZ=_NCZ,RSV=_RSV,GWS=_GWS`
    const vars = `let a=0,x64=0,CF=0,u=0,v=0,fs=0,fg=0,q0=0,q1=false${regs};`
    if (fn.kind !== 'entry') {
      const locals = `${snap},CX=_CX,CY=_CY,CZ=_CZ;${vars}`
      if (structured) return `function(FB,LB,LF,t){${locals}const tx=t%NTX,ty=((t/NTX)|0)%NTY,tz=(t/(NTX*NTY))|0;\n${body}\n}`
      return `function(FB,LB,LF,t){${locals}const tx=t%NTX,ty=((t/NTX)|0)%NTY,tz=(t/(NTX*NTY))|0;let pc=0;\nL:for(;;)switch(pc){case 0:\n${body}\nreturn;default:throw new Error('bad pc '+pc)}}`
    }
    // A kernel call runs threads [t0, t1) of each block b0 … b1-1 (linear block index, x fastest, as the
    // backend orders them); kernels without suspension points get the whole grid in one call, so the
    // parameter loads, the i64 guard and the access-site range caches are set up once per launch.
    // Thread ids advance incrementally (no division per thread); LB = this thread's local window.
    const hoisted = [...this.hoisted.values()]
    // The speculative variant takes 64-bit parameters (pointers) that are int32 numbers, and rebinds them
    // with `|0`: V8 then keeps the address arithmetic in 32-bit registers (about twice as fast as the
    // float64 it uses for a number that came out of mk64) and the bound analysis's ±2^40 premise holds. The
    // emulated heap is below 2^31 unless `memoryLimit` raises it; larger values run the generic variant.
    const speculated = (h: Hoisted) => this.slowName !== undefined && h.kind === 'i64'
    const guard = hoisted.filter(speculated).map((h) => `if(typeof ${h.name}!=='number'||${h.name}>2147483647||${h.name}<-2147483648)return ${this.slowName}(T,t0,t1,FB,b0,b1);${h.name}=${h.name}|0;`).join('')
    const params = hoisted.map((h) => `${h.check}${speculated(h) ? 'let' : 'const'} ${h.name}=${h.e};`).join('')
    const pre = `${snap},GR=_GR;${vars}const LF=0;${params}${guard}`
    const siteDecl = this.siteIds.length ? `const ${this.siteIds.map((k) => `gL${k}=GR[${2 * k}],gH${k}=GR[${2 * k + 1}]`).join(',')};` : ''
    // the block index advances incrementally, as the thread index does (no division per block: a vector add
    // has 16384 blocks of 256 threads); device functions read it from the module-level _CX/_CY/_CZ
    const blockLoop = 'for(let b=b0,CX=b0%NCX,CY=((b0/NCX)|0)%NCY,CZ=(b0/(NCX*NCY))|0;b<b1;b++,(++CX===NCX&&(CX=0,++CY===NCY&&(CY=0,CZ++)))){'
    const blockIndex = `_CX=CX;_CY=CY;_CZ=CZ;${this.checked ? 'CK.blk(b);' : ''}${siteDecl}`
    if (this.loops) {
      // thread loops: each call runs whole blocks b0 … b1-1 (t0, t1 are always 0, NT)
      let perBlock = this.loops.render()
      // a block whose hoisted accesses all stay inside one allocation (global) or the window (shared) runs
      // a copy of its loops without their per-thread checks, as the barrier-free path below does
      if (this.hoistConds.size && perBlock.length + 12 * this.hoistedSites <= 20000 && !this.checked) {
        const conds = [...this.hoistConds].join('&&')
        this.unchecked = true
        this.emitBody()
        const fast = this.loops.render()
        this.unchecked = false
        perBlock = `${this.hoistDecl()}if(${conds}){\n${fast}\n}else{\n${perBlock}\n}`
      }
      return `function(T,t0,t1,FB,b0,b1){${pre}${this.loops.prologue()}${blockLoop}${blockIndex}${this.loops.blockStart()}\n${perBlock}\n}}`
    }
    const blk = `${blockLoop}${blockIndex}`
    // the first thread's index, for loops that start at t0 (the unchecked whole-block copy counts its own)
    const tid0 = 'let tx=t0%NTX,ty=((t0/NTX)|0)%NTY,tz=(t0/(NTX*NTY))|0;'
    const step = `t++,(++tx===NTX&&(tx=0,++ty===NTY&&(ty=0,tz++)))`
    if (this.hasSuspend && structured) {
      return `function(T,t0,t1,FB,b0,b1){${pre}${blk}${tid0}\nTH:for(let t=t0;t<t1;${step}){const S=T[t];if(S.st!==0)continue;const LB=LB0+t*LN;let pc=S.pc;const R=S.r,RF=S.f;\n${body}\n}}}`
    }
    if (this.hasSuspend) {
      const cases = [...this.suspensionPc].map(([i, { pc }]) => `case ${pc}:${this.savedAt(i).map((r) => this.restore(r)).join('')}break;`)
      const restore = `switch(pc){${cases.join('')}}`
      return `function(T,t0,t1,FB,b0,b1){${pre}${blk}${tid0}\nTH:for(let t=t0;t<t1;${step}){const S=T[t];if(S.st!==0)continue;const LB=LB0+t*LN;let pc=S.pc;const R=S.r,RF=S.f;if(pc!==0){${restore}}\nL:for(;;)switch(pc){case 0:\n${body}\n${this.ret()}default:throw new Error('bad pc '+pc)}}}}`
    }
    const loop = (c: string, whole = false) => {
      // a whole block as three nested counting loops (cheaper than the incremental tx/ty/tz step), counting
      // the linear thread index and the local window only when the code uses them (a loop-carried counter V8
      // cannot drop costs a vector add a fifth of its time)
      const lb = !whole || usesName(c, 'LB')
      const count = lb || usesName(c, 't')
      const head = whole ? `${count ? 'let t=0;' : ''}for(let tz=0;tz<NTZ;tz++)for(let ty=0;ty<NTY;ty++)TH:for(let tx=0;tx<NTX;tx++${count ? ',t++' : ''})` : `TH:for(let t=t0;t<t1;${step})`
      const local = lb ? 'const LB=LB0+t*LN;' : ''
      return structured
        ? `${head}{${local}\n${c}\n}`
        : `${head}{${local}let pc=0;\nL:for(;;)switch(pc){case 0:\n${c}\ncontinue TH;default:throw new Error('bad pc '+pc)}}`
    }
    const checked = loop(body)
    // a whole block (t0 = 0, t1 = NTX·NTY·NTZ) whose hoisted accesses all stay inside one allocation
    // each runs a copy of the thread loop without their per-thread checks
    // (only for small bodies: the copy doubles the function, and V8 does not optimize very large ones)
    if (!this.hoistConds.size || markedLength > 20000 || this.checked) return `function(T,t0,t1,FB,b0,b1){${pre}${blk}${tid0}\n${checked}}}`
    this.unchecked = true
    const un = this.emitBody()
    this.unchecked = false
    const unchecked = loop(this.assemble(un.code, un.susp), true)
    return `function(T,t0,t1,FB,b0,b1){${pre}${blk}\n${this.hoistDecl()}if(t0===0&&t1===NT&&${[...this.hoistConds].join('&&')}){${unchecked}}else{${tid0}${checked}}}}`
  }
}

/** The address a hoisted access makes in thread tx: its lowest address (named) plus c·tx. */
/**
 * The speculative variant of kernel `name` made per block shape: `${name}f(NTX,NTY,NTZ)` returns the kernel
 * with the block shape as constants of its closure, and `${name}` picks (and keeps, per shape) the one for
 * the launch's shape. V8 specializes a function on its closure's constants while it has a single closure, so
 * the thread loops get constant trip counts and the index arithmetic constant strides: a vector add of
 * 256-thread blocks runs in about 3/4 of the time of the same code reading the shape from launch state
 * (issue 13). The factory also reads the heap views once (`HF32c` …; the kernel copies each to a local): V8
 * then folds a view's base and length as it does for a module-level constant array, which it does neither
 * for a view read from module state nor for one used straight from the closure (together: vector add
 * 0.29 → 0.53-0.62 of the JS loop). A heap rebind (setHeap bumps `_HG`) drops the kernels made so far. A
 * kernel launched with a second shape, or after a rebind, gets another closure, and from then on runs as
 * generic code (the speed of before), with the same results.
 */
function specializeDims(name: string, fn: string): string {
  const views = HEAP_VIEWS.map((h) => `${h}c=_${h}`).join(',')
  return `const ${name}f=function(NTX,NTY,NTZ){const NT=NTX*NTY*NTZ,${views};return ${fn}};\n` +
    `const ${name}m=new Map();let ${name}g=-1;\n` +
    `const ${name}=function(T,t0,t1,FB,b0,b1){if(${name}g!==_HG){${name}m.clear();${name}g=_HG}const d=(_NTX*1025+_NTY)*65+_NTZ;let k=${name}m.get(d);if(k===undefined){k=${name}f(_NTX,_NTY,_NTZ);${name}m.set(d,k)}return k(T,t0,t1,FB,b0,b1)};`
}

/** The heap views and bounds a kernel reads (module state `_H8` …, set by setHeap). */
const HEAP_VIEWS = ['H8', 'HI8', 'HU16', 'HI16', 'HI32', 'HU32', 'HF32', 'HF64', 'HB64', 'OK', 'HN']

function hoistedAddress(lo: string, c: number): string {
  return c === 0 ? lo : `${lo}+${c < 0 ? `(${c})` : c}*tx`
}

/** A bound of |e| over every launch: special registers and 32-bit parameters below 2^31, variable addresses
 *  below 2^32, a 64-bit parameter unbounded. */
function exactBound(e: InvExpr): number {
  switch (e.kind) {
    case 'const': return Math.abs(e.value)
    case 'special': return 2 ** 31
    case 'symbol': return 2 ** 32
    case 'param': return e.width === 32 ? 2 ** 31 : Infinity
    case 'add': return exactBound(e.a) + exactBound(e.b)
    case 'mul': return exactBound(e.a) * exactBound(e.b)
  }
}


export { calleeOf }

export class ModuleEmitter {
  instrs: InstrInfo[] = []
  fnIndex = new Map<string, number>()
  fnNames = new Set<string>()
  /** Frames of all functions, laid out before any code is emitted (callers read their callees'). */
  frames: Frame[]
  /** Access sites with an allocation-range cache, over all functions (FunctionEmitter.siteIds). */
  sites = 0
  private liveness = new Map<IrFunction, ReturnType<typeof analyzeLiveness>>()
  private plans = new Map<IrFunction, ThreadLoopPlan>()
  private shared = new Map<IrFunction, { classes: RegisterClass[]; cfg: Cfg; structure: Structure; contraction?: Map<number, Contraction> }>()
  /** `threadLoops: false` runs every kernel with barriers or collectives in the continuation scheme; `check`
   *  emits the sanitizer's checked variant (see the file comment), which always runs in that scheme. */
  readonly threadLoops: boolean
  /** `fmad`: contract multiply-adds as ptxas does by default (issue 32); false keeps every mul and add
   *  rounded on its own (nvcc's and ptxas's `--fmad=false`). */
  constructor(public mod: IrModule, public layout: ModuleLayout, threadLoops = true, readonly check = false, readonly fmad = true) {
    this.threadLoops = threadLoops && !check
    mod.functions.forEach((f, i) => { if (f.defined) this.fnIndex.set(f.name, i); this.fnNames.add(f.name) })
    // kernels with barriers or collectives may run their threads in loops: their call sequences' .param
    // variables are kept per thread
    this.frames = mod.functions.map((f) => layoutFrame(f, f.kind === 'entry' && f.instructions.some((x) => collectiveOf(x) !== undefined)))
  }

  /** The facts both variants of a function read, computed once per function. */
  facts(fn: IrFunction): { classes: RegisterClass[]; cfg: Cfg; structure: Structure; contraction?: Map<number, Contraction> } {
    let f = this.shared.get(fn)
    if (!f) {
      f = { classes: assignRegisterClasses(fn), cfg: buildCfg(fn), structure: structureFunction(fn) }
      if (this.fmad) f.contraction = analyzeContraction(fn)
      this.shared.set(fn, f)
    }
    return f
  }

  /** The thread-loop plan of a kernel with collectives, computed once for both variants. */
  plan(fn: IrFunction): ThreadLoopPlan {
    let p = this.plans.get(fn)
    if (!p) {
      const f = this.facts(fn)
      // a thread waiting in a loop for others without a collective (a spin-wait, an mbarrier wait) steps
      // aside at a yield point, which only the continuation scheme can do
      const wait = fn.instructions.find((x, i) => waitOf(x) && f.cfg.loopOf[f.cfg.blockOf[i]!]! >= 0)
      if (!this.threadLoops) p = { kind: 'fallback', reason: 'thread loops are turned off (threadLoops: false)' }
      else if (wait) p = { kind: 'fallback', reason: `a thread waits for others in a loop at PTX line ${wait.line} (\`${wait.text}\`), and only the continuation scheme lets it step aside there`, line: wait.line }
      else p = planThreadLoops(fn, { cfg: f.cfg, structure: f.structure, liveness: this.liveOf(fn, f.cfg), lockstep: !this.check, ...(f.contraction?.size ? { extraUses: this.fusedUses(fn) } : {}) })
      this.plans.set(fn, p)
    }
    return p
  }

  /** Lanes of a warp may talk through memory without a barrier or collective (lockstep.ts, over the whole
   *  control flow: a superset of what the plan finds among the threads still running), so a kernel without
   *  collectives needs a plan too. Checked code runs in the continuation scheme and takes no lockstep. */
  mayTalk(fn: IrFunction): boolean {
    if (this.check || !this.threadLoops) return false
    // (asked by both variants of a kernel: once)
    let t = this.talks.get(fn)
    if (t === undefined) {
      const f = this.facts(fn)
      t = analyzeLockstep(fn, f.cfg, f.structure, analyzeUniformity(fn, f.cfg)).points.length > 0
      this.talks.set(fn, t)
    }
    return t
  }
  private talks = new Map<IrFunction, boolean>()

  private liveOf(fn: IrFunction, cfg: Cfg): ReturnType<typeof analyzeLiveness> {
    let l = this.liveness.get(fn)
    if (!l) { l = analyzeLiveness(fn, cfg, this.facts(fn).contraction?.size ? this.fusedUses(fn) : undefined); this.liveness.set(fn, l) }
    return l
  }

  /** What each fused add reads besides its operands: its product's operands (it computes fma(a, b, c) where
   *  the PTX reads the product), so that they stay live up to it, across a suspension point or from one
   *  thread loop to the next. */
  private fusedUses(fn: IrFunction): Map<number, number[]> {
    const out = new Map<number, number[]>()
    for (const [i, c] of this.facts(fn).contraction ?? []) out.set(i, usedRegisters(fn.instructions[c.mul]!))
    return out
  }

  /** Liveness of an emitter's function, computed once when a suspension point needs it. */
  live(fe: FunctionEmitter): ReturnType<typeof analyzeLiveness> {
    return this.liveOf(fe.fn, fe.cfg)
  }

  paramSize(f: IrFunction, j: number): number { return f.params[j]?.size ?? this.bad(f, 'argument count') }
  retSize(f: IrFunction, j: number): number { return f.returns[j]?.size ?? this.bad(f, 'return count') }
  bad(f: IrFunction, what: string): never { throw new PtxError(`call to ${f.name} does not match its ${what}`, f.line) }

  /** Functions that cannot run, with why: refused by the decoder (IrFunction.refused), by their own code
   *  generation, or because they call such a function. Their neighbours run (issue 14). */
  readonly refused = new Map<string, PtxError>()

  /** Adds to `refused` every function that calls a refused one, directly or not. */
  private propagateRefusals(): void {
    for (let changed = true; changed;) {
      changed = false
      for (const f of this.mod.functions) {
        if (!f.defined || this.refused.has(f.name)) continue
        for (const ins of f.instructions) {
          const c = calleeOf(ins)
          const why = c === undefined ? undefined : this.refused.get(c)
          if (!why) continue
          this.refused.set(f.name, new PtxError(`calls ${c}, which the emulator cannot run (${why.message})`, ins.line))
          changed = true
          break
        }
      }
    }
  }

  compile(): { source: string; functions: Map<string, CompiledFunction> } {
    for (const f of this.mod.functions) if (f.refused) this.refused.set(f.name, f.refused)
    this.propagateRefusals()
    // a function whose code cannot be generated is refused with its callers, and the rest is generated again
    // (the instruction table and access sites are numbered per generation)
    for (;;) {
      const before = this.refused.size
      const r = this.compileOnce()
      if (this.refused.size === before) return r
      this.propagateRefusals()
      this.instrs = []
      this.sites = 0
      this.liveness.clear()
    }
  }

  private compileOnce(): { source: string; functions: Map<string, CompiledFunction> } {
    const parts: string[] = []
    const out = new Map<string, CompiledFunction>()
    const emitters: FunctionEmitter[] = []
    const fastJs = new Map<string, string | undefined>()
    this.mod.functions.forEach((f, i) => {
      if (!f.defined || this.refused.has(f.name)) return
      let fe: FunctionEmitter, js: string
      try {
        fe = new FunctionEmitter(f, i, this)
        js = fe.emit()
      } catch (err) {
        if (!(err instanceof PtxError)) throw err
        this.refused.set(f.name, err)
        return
      }
      emitters[i] = fe
      let fast: string | undefined
      if (f.kind === 'entry' && !this.check && [...fe.hoisted.values()].some((h) => h.kind === 'i64')) {
        const ff = new FunctionEmitter(f, i, this, `K${i}s`)
        const fjs = ff.emit()
        // worth it only when some 64-bit add became plain arithmetic
        if (fjs !== js && ff.bounds && [...ff.bounds.values()].some((x) => x < Infinity)) fast = fjs
      }
      fastJs.set(f.name, fast)
      const frame = this.frames[i]!
      out.set(f.name, {
        name: f.name, kind: f.kind, index: i, js, collectives: fe.collectives, hasSuspend: fe.hasSuspend, ...(fe.plan ? { plan: fe.plan } : {}),
        ...(fe.lockstepNotRun ? { lockstepNotRun: fe.lockstepNotRun } : {}),
        ...(fe.loops ? { rematerialized: fe.loops.plan.perThread.filter((r) => fe.loops!.rematerialized(r) !== undefined) } : {}),
        suspendAt: new Map([...fe.suspensionPc].map(([at, { pc }]) => [pc, fe.rowOf(at)])),
        hasWarpCollective: [...fe.collectives.values()].some((c) => c.kind !== 'bar'),
        frameSize: frame.frameSize, paramOffsets: frame.paramOffsets, paramEnd: frame.paramEnd, localSize: frame.localSize, stackNeed: frame.localSize,
        calls: fe.calls, regCount: f.registers.length, ...specialUse(f),
      })
    })
    // stack needs (recursion: a fixed allowance, overflow is caught by the local window check)
    const need = (name: string, seen: Set<string>): number => {
      const cf = out.get(name)
      if (!cf) return 0 // refused in this pass: the module is generated again without its callers
      if (seen.has(name)) return 1 << 16
      seen.add(name)
      let m = 0
      for (const c of cf.calls) m = Math.max(m, need(c, seen))
      seen.delete(name)
      return Math.min(cf.localSize + m, 1 << 20)
    }
    for (const cf of out.values()) cf.stackNeed = need(cf.name, new Set())
    // a kernel without calls gets a window of exactly its declared local bytes, so overruns fault
    this.mod.functions.forEach((f, i) => { const fe = emitters[i]; if (fe && fe.calls.size === 0) out.get(f.name)!.stackNeed = this.frames[i]!.localExact })
    const foff: string[] = [], roff: string[] = [], fsize: string[] = [], table: string[] = []
    this.mod.functions.forEach((f, i) => {
      const fe = emitters[i]
      const frame = this.frames[i]!
      foff.push(fe ? `[${frame.paramOffsets.join(',')}]` : '[]')
      roff.push(fe ? `[${frame.retOffsets.join(',')}]` : '[]')
      fsize.push(fe ? String(frame.frameSize) : '0')
      if (!fe) { table.push('undefined'); return }
      const cf = out.get(f.name)!
      const fast = fastJs.get(f.name)
      // the thread-loop writer's module-level state (the same for both variants)
      if (fe.loops) parts.push(...fe.loops.decls)
      if (fast) {
        parts.push(`const K${i}s=${cf.js};`)
        parts.push(specializeDims(`K${i}`, fast))
      } else parts.push(`const ${f.kind === 'entry' ? 'K' : 'F'}${i}=${cf.js};`)
      table.push(`${f.kind === 'entry' ? 'K' : 'F'}${i}`)
    })
    const helpers = ['add64', 'sub64', 'mul64', 'mulhi64', 'neg64', 'and64', 'or64', 'xor64', 'not64', 'shl64', 'shrs64', 'shru64', 'ucmp64', 'scmp64', 'divs64', 'divu64', 'rems64', 'remu64', 'popc64', 'clz64', 'brev64', 'mk64', 'lo32', 'hi32', 'n64', 'big', 'u64b',
      'popc32', 'brev32', 'mulhi32', 'mulwide32', 'divs32', 'divu32', 'rems32', 'remu32', 'bfe32', 'bfe64', 'bfi32', 'bfi64', 'bfind32', 'bfind64', 'prmt', 'lop3', 'shf', 'dp4a', 'dp2a',
      'fround', 'ftz', 'sat', 'ex2f', 'lg2f', 'sincosf', 'tanhf', 'fmin', 'fmax', 'fminNaN', 'fmaxNaN', 'fma64', 'fma32', 'fop32', 'fop64', 'cvt32', 'f16ToNum', 'numToF16', 'bf16ToNum', 'numToBf16', 'fmaH', 'fmaB',
      'roundInt', 'f2i32', 'f2iN', 'f2i64', 'i64ToF', 'i32ToF32', 'incWrap', 'decWrap', 'copysign', 'satS32', 'numToE4m3', 'numToE5m2', 'e4m3ToNum', 'e5m2ToNum', 'relu16',
      'mbarInit', 'mbarArrive', 'mbarTestWait', 'mbarTestParity', 'mbarPending', 'tcLayout', 'mmaLane', 'movmatrixLane', 'numToTf32']
    // No text of the PTX reaches this source: functions are numbered (FN[i]), messages are looked up from
    // the instruction table by index (fault()), so nothing from a user file needs escaping here.
    const source = `"use strict";
const {${helpers.join(',')}}=E.h;
const FB32=E.h.f32FromBits,BF32=E.h.bitsFromF32,FB64=E.h.f64FromBits,BF64=E.h.bitsFromF64;
const _SF=new Float32Array(1),_SI=new Int32Array(_SF.buffer);
let _H8,_HI8,_HU16,_HI16,_HI32,_HU32,_HF32,_HF64,_HB64,_OK,_HN=0,_HG=0;
let _SB=0,_SHN=0,_DYN=0,_LB0=0,_LN=0,_LSZ=0,_LBE=0,_PB=0,_PE=0,PSP=0,PSEND=0,_NTX=1,_NTY=1,_NTZ=1,_NT=1,_NCX=1,_NCY=1,_NCZ=1,_CX=0,_CY=0,_CZ=0,_RSV=0,_GWS=0;
function mcp(d,s,n){_H8.copyWithin(d,s,s+n)}
const GSH=17179869184,GLO=34359738368,GPA=68719476736;
const FOFF=[${foff.join(',')}],ROFF=[${roff.join(',')}],FSIZE=[${fsize.join(',')}];
${this.check ? 'const CK=E.ck;\nfunction fault(i,a,what,t,rw,n){E.fault(i,a,what,t,rw,n)}' : 'function fault(i,a,what){E.fault(i,a,what)}'}
let _AR=new Float64Array(0),RL=1,RH=0,_PROG=0;const _GR=new Float64Array(${2 * Math.max(this.sites, 1)});
function wr(x,c,lo){const y=x+c*(_NTX-1);return x>=lo&&x<=2147483647&&y>=lo&&y<=2147483647}
function hs(lo,c,n,al){const hi=lo+c*(_NTX-1);return lo%al===0&&(lo<hi?lo:hi)>=0&&(lo<hi?hi:lo)<=_SHN-n}
function hz(lo,c,n,al,k){const hi=lo+c*(_NTX-1),mn=lo<hi?lo:hi,mx=lo<hi?hi:lo;if(lo%al!==0)return false;if(mn>=_GR[k]&&mx<=_GR[k+1])return true;rng(mn);_GR[k]=RL;_GR[k+1]=RH-n;return mn>=RL&&mx+n<=RH}
function rng(a){let lo=0,hi=(_AR.length>>>1)-1;while(lo<=hi){const m=(lo+hi)>>>1;if(a<_AR[2*m])hi=m-1;else if(a>=_AR[2*m+1])lo=m+1;else{RL=_AR[2*m];RH=_AR[2*m+1];return}}RL=1;RH=0}
${parts.join('\n')}
const FN=[${table.join(',')}];
return {
  FN,
  setHeap(buf,ok){const n=buf.byteLength;_H8=new Uint8Array(buf,0,n);_HI8=new Int8Array(buf,0,n);_HU16=new Uint16Array(buf,0,n>>>1);_HI16=new Int16Array(buf,0,n>>>1);_HI32=new Int32Array(buf,0,n>>>2);_HU32=new Uint32Array(buf,0,n>>>2);_HF32=new Float32Array(buf,0,n>>>2);_HF64=new Float64Array(buf,0,n>>>3);_HB64=new BigInt64Array(buf,0,n>>>3);_OK=ok;_HN=n;_HG++;},
  setLaunch(o){_SB=o.SB;_SHN=o.SHN;_DYN=o.DYN;_LB0=o.LB0;_LN=o.LN;_LSZ=o.LSZ;PSP=o.PSP;PSEND=o.PSEND;_PB=o.PB;_PE=o.PE;_NTX=o.NTX;_NTY=o.NTY;_NTZ=o.NTZ;_NT=_NTX*_NTY*_NTZ;_LBE=_LB0+_LN*_NT;_NCX=o.NCX;_NCY=o.NCY;_NCZ=o.NCZ;_RSV=o.RSV;_GWS=o.GWS;},
  progress(){return _PROG},
  setBlock(sb,lb0){_SB=sb;_LB0=lb0;_LBE=_LB0+_LN*_NT;},
  setRanges(ar){_AR=ar;for(let i=0;i<_GR.length;i+=2){_GR[i]=1;_GR[i+1]=0;}},
  heapAt(a){if(a>=GSH&&a<GSH+_SHN)return a-GSH+_SB;if(a>=GLO&&a<GLO+_LBE-_LB0)return a-GLO+_LB0;if(a>=GPA&&a<GPA+_PE-_PB)return a-GPA+_PB;return a},
};`
    return { source, functions: out }
  }
}
