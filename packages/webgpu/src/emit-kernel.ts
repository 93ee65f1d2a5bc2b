// emit-wgsl, one kernel: a writer over the @kernelpack/ptx IR (STYLE.md: the IR is data, passes annotate it,
// writers only read it). It reads an `.entry`'s instructions, its structured control flow (structure.ts),
// its register classes (analysis/register-classes.ts) and the collectives registry (collectives.ts), and
// writes one WGSL module following the binding contract of layout.ts. README.md ("Translation plan") is the
// design; the choices that matter most:
//
// Registers are function-scope vars: predicates `bool`, 64-bit values `vec2<u32>` (lo, hi), f32-class
// registers `f32`, every other one `u32` (8/16-bit registers hold their bits zero-extended).
//
// Control flow. Without block barriers or warp collectives, the structure becomes plain WGSL: an `if` for a
// guarded branch around a block, `loop` for a loop, flags for branches that leave several levels (set, then
// the rest of each level is skipped, and `break` leaves the WGSL loops in between). With them ("sync"
// kernels), WGSL requires every workgroupBarrier in uniform control flow, so the regions that contain one
// are executed by every invocation and predicated instead: `kp_on` says whether this thread is active;
// entering an `if` region clears it where the branch is taken, a branch out of a region clears it until the
// region's end, `exit` clears it for good (`kp_exited`; CUDA counts exited threads as arrived at later
// barriers), and a loop repeats while any thread of the block is still in it (a count through a workgroup
// atomic read with workgroupUniformLoad, which WGSL knows to be uniform). Sync-free stretches inside such
// regions are plain code under `if (kp_on)`. This is the CUDA semantics for every program in which a
// barrier's block-wide condition is the same for the threads that reach it, which CUDA requires.
import { arenaSliceStart, sharedToArena } from './emit-arena-shared.js'
import {
  analyzeAffine, analyzeBarrierRegions, analyzeContraction, isGridWorkspaceRegister, RESERVED_SMEM, reservedSmemRead, specialUse, RETURN_EXIT, type Contraction, analyzeUniformity, assignRegisterClasses, buildCfg, collectiveOf, controlDependence, waitOf, definedRegisters, layoutParams, structureFunction, typeSize, usedRegisters,
  type AffineFacts, type Cfg, type InvExpr, type ScalarExpr, type RegisterClass, type Instruction, type IrFunction, type IrModule, type IrOperand as Operand, type PtxType, type PtxVariable, type StructNode, type StructRegion,
} from '@kernelpack/ptx'
import type { AccessSite, SiteExpr, SiteIv, SiteScalar, SiteTrip } from './access-sites.js'
import { FAULT_KIND, LOCAL_WINDOW, SHARED_WINDOW } from './layout.js'
import { subgroupsAre32, type TranslateTarget, type WgslKernel } from './translate.js'
import { f32BitsOf, f32Lit, u32Lit, u64Lit, wgslName } from './wgsl-text.js'
import { collectLib, libCalls, WGSL_LIB } from './wgsl-lib.js'
import { callTarget, emitOp, isDeviceFence } from './emit-ops.js'
import { checksGlobal, emitMemoryOp, loadWord, memoryHelpers, storeWord, type MemoryPlan } from './emit-memory.js'
import { emitSync, scratchBytesPerThread, syncDeclarations } from './emit-collective.js'
import { usesMbarrier } from './emit-mbarrier.js'
import { planGridSyncs, type GridSyncPlan } from './grid-sync.js'
import { batchExactFma } from './fma-batch.js'
import { F64_SERVICES, serviceCalls, splitServiceCalls, type ServiceHost } from './f64-services.js'
import { blockSpinProblem, sharedPointers, waitLoad } from './spin-wait.js'
import { Rounds, ROUNDS_EXCHANGE_BYTES, ROUNDS_WORKGROUP_BYTES, roundsProblem } from './rounds.js'

/** Something the translator cannot express, with the PTX line it is about. */
export class Refusal extends Error {
  constructor(readonly line: number, readonly instruction: string | undefined, readonly reason: string) {
    super(reason)
  }
}

export type Storage = 'bool' | 'u32' | 'f32' | 'u64'

/** What one kernel's writer needs from the module. */
export interface KernelEnv {
  module: IrModule
  fn: IrFunction
  target: TranslateTarget
  /** Index (into WgslModule.variables) of each module .global/.const variable, by name. */
  varIndex: ReadonlyMap<string, number>
  /** Module variables that cannot be placed (by name → reason). */
  badVars: ReadonlyMap<string, string>
  /** Thread coarsening: each invocation runs up to this many CUDA threads in turn (1: one thread each). */
  coarse?: number
  /** The variant whose shared memory is a slice of the arena per workgroup instead of workgroup memory
   *  (arena-shared.ts): for blocks whose shared memory exceeds the adapter's maxComputeWorkgroupStorageSize. */
  sharedInArena?: boolean
  /** Software binary64 through one site per function (f64-services.ts): the kernel is written as a dispatcher
   *  over its basic blocks (in rounds where the kernel has barriers). For a kernel with more than SOFT_F64_LIMIT
   *  software f64 operations. */
  f64Services?: boolean
  /** The kernel's threads as resumable dispatchers run in rounds (rounds.ts): each runs until it waits (a block
   *  barrier, an mbarrier wait, a wait on shared memory, a device-scope fence), then the workgroup meets. For a
   *  kernel whose threads wait for one another in code of their own (cuda::pipeline's producers and consumers)
   *  or one with barriers and shared software binary64 sites (f64-services.ts). */
  rounds?: boolean
}

/** A frame of the structured-control-flow walk. */
interface Frame {
  kind: 'root' | 'block' | 'if' | 'loop' | 'run'
  region?: StructRegion
  /** Emitted predicated (a region containing a barrier or warp collective). */
  uniform: boolean
}

const PLAIN_LOOP = (f: Frame) => f.kind === 'loop' && !f.uniform

/** Past this many warp collectives that exchange values (shfl, vote, match, redux, activemask, elect; not
 *  __syncwarp) inside loops a kernel runs in rounds (rounds.ts), where it can: in predicated code each is an
 *  exchange through workgroup memory between barriers, and SwiftShader's shader compiler (Subzero) takes a time
 *  that grows steeply with them inside a loop. Measured (createComputePipelineAsync, 2026-12-01): the kernel
 *  corpus's integral_cols_u32, 35 shuffles in its tile loop with nvcc 13 (20 with clang 22), did not finish in
 *  120 s predicated (clang's: 65-80 s) and takes 10.6 s in rounds; scan_chunk_totals (22 __syncwarp in a loop,
 *  no exchange) takes 0.34 s predicated and 1.5 s in rounds; no other kernel of the corpus has more than 10. */
const ROUNDS_EXCHANGES_IN_LOOPS = 16

/** Why a special register has no WGSL counterpart (PTX ISA, "Special Registers"; README.md, "Refused at load"). */
function whyNoSpecial(name: string): string {
  if (/^%pm\d/.test(name)) return 'WGSL has no performance-monitoring counters'
  // %envreg1/%envreg2 hold a cooperative launch's grid workspace (cg::this_grid().sync(), the emulator's
  // js-values.ts); the others are the driver's
  if (isGridWorkspaceRegister(name)) return 'the grid workspace of a cooperative launch, outside a cg::this_grid().sync() (grid-sync.ts)'
  if (name.startsWith('%envreg')) return 'a driver-defined environment register: the CUDA driver fills it, WebGPU has nothing to put there'
  if (name === '%current_graph_exec') return 'the CUDA graph a kernel runs in: WebGPU has no CUDA graphs'
  return 'no WGSL counterpart'
}

/** The most f64 operations a kernel may compute in software binary64 (KernelWriter.finish). */
const SOFT_F64_LIMIT = 64

export class KernelWriter {
  readonly fn: IrFunction
  lines: string[] = []
  private depth = 1
  private tmpCount = 0
  /** The instruction being written (refusals name it). */
  ins: Instruction | undefined
  readonly regStore: Storage[] = []
  readonly regName: string[] = []
  /** Declared width in bits of each register (1 for predicates). */
  readonly regBits: number[] = []
  private readonly usedRegs = new Set<number>()
  /** Function-scope declarations besides registers (`var kp_b3: bool;`). */
  private readonly decls = new Map<string, string>()
  /** Per-kernel helper functions (memory, atomics), by name. */
  readonly helpers = new Map<string, string>()
  /** Module-scope declarations (workgroup scratch…), by name. */
  readonly moduleDecls = new Map<string, string>()
  /** Device printf's format strings, by call site (emit-printf.ts). */
  readonly printf: string[] = []
  /** The kernel calls vprintf: its threads count the barriers, collectives and printfs they pass. */
  readonly hasPrintf: boolean
  readonly features = new Set<string>()
  /** Warp collectives may take their subgroup form (emit-collective.ts): the adapter's subgroups are exactly 32
   *  wide, and each invocation runs one CUDA thread (not the coarsened variant). */
  readonly subgroups: boolean
  /** What the kernel's special-register reads ask of its launch (@kernelpack/ptx specialUse). */
  private readonly specials: ReturnType<typeof specialUse>
  /** f64 operations the kernel computes in software binary64 (slow: a build warning says so; past
   *  SOFT_F64_LIMIT the kernel is refused). */
  softF64 = 0
  /** With f64Services: the software binary64 calls left inline (f64-services.ts), which count toward SOFT_F64_LIMIT. */
  inlineSoft = 0
  readonly f64Services: boolean
  /** The threads run in rounds (rounds.ts). */
  readonly rounds: boolean
  /** Set by writeBody when the kernel should be written in rounds instead (writeKernel writes it again): its
   *  threads wait for one another in code of their own (findRoleWaits), or its control flow does not nest around
   *  its barriers. */
  wantsRounds = false
  /** Tensor-core products (emit-tensor.ts) computed in software binary64 (each counts toward SOFT_F64_LIMIT too). */
  softTensor = 0
  /** Words per warp of the tensor cores' scratch (emit-tensor.ts; the largest product's A and B). */
  tcWords = 0
  private fusedF64?: Map<number, Contraction>
  /** The adds and subs ptxas fuses with the product they read (@kernelpack/ptx analyzeContraction): f64 ones
   *  are computed as that fma, as the emulator does; f32 ones use WGSL's own arithmetic. */
  get contraction(): Map<number, Contraction> {
    return (this.fusedF64 ??= analyzeContraction(this.fn))
  }
  /** Kernel has block barriers or warp collectives: control flow is predicated where they are. */
  readonly sync: boolean
  readonly mem: MemoryPlan
  /** Byte offset of each kernel parameter in the .param block. */
  readonly paramOffset = new Map<string, number>()
  readonly paramBytes: number
  readonly paramOffsets: number[]
  /** Module variables this kernel addresses. */
  readonly varsUsed = new Set<number>()
  /** The checked global accesses as affine forms (access-sites.ts); `unsited` once one has none. */
  readonly sites: AccessSite[] = []
  /** The bounds of the loops the sites' iteration terms count (siteTrip). */
  readonly trips = new Map<number, SiteTrip>()
  private unsited = false
  private affine: AffineFacts | undefined
  private readonly classes: RegisterClass[]
  /** 64-bit registers kept as one u32 (narrowRegisters): read as vec2<u32>(lo, 0), written as the low word. */
  private readonly narrow: Set<number>
  /** Each invocation runs up to `coarse` CUDA threads (README.md, "Block sizes above …"): per-thread state
   *  is an array indexed by the sub-thread `kp_c`, and per-thread code runs in a loop over them. */
  readonly coarse: number
  /** Shared memory in the arena (KernelEnv.sharedInArena): kp_smem's accesses become kp_mem's at kp_sb. */
  readonly sharedInArena: boolean
  private inThreadLoop = false
  /** Every thread of the block is active here (kp_on is true for all: no divergent region entered, none left
   *  early): predicated code then needs no `if (kp_on)` (SwiftShader runs such an if under a mask even when it
   *  is always true: 9 % of a tiled matmul). */
  private allOn = false
  /** Set when code is written that may leave some thread inactive for what follows (escape flags). */
  private onChanged = false
  /** Registers whose value is the same for every thread of the block and whose every definition is a pure
   *  instruction at the predicated level (ptx's uniformity analysis, then narrowed): written outside
   *  `if (kp_on)`, once per invocation, so WGSL's own uniformity analysis sees them as uniform too (loop
   *  conditions from them need no block-wide vote). */
  private uniformRegs = new Set<number>()
  /** Instructions written as uniform (all destinations in uniformRegs). */
  private uniformInstrs = new Set<number>()
  /** Loads that wait in a loop for a word of the block's shared memory (spin-wait.ts): each a barrier and one read. */
  private readonly spinWaits = new Set<number>()
  /** Such waits moved to the end of a block (spinLoop), by the block's region id. */
  private readonly deferredWaits = new Map<number, Array<() => void>>()
  private branches: Map<number, { kind: 'break' | 'continue'; node: number }> = new Map()
  private readonly regionById = new Map<number, StructRegion>()
  private syncMemo = new Map<number, boolean>()
  /** The kernel's control-flow graph, for the analyses (uniformity, affine forms, barrier regions). */
  private readonly cfg: Cfg
  /** A cooperative launch's grid syncs (grid-sync.ts): the kernel runs as one dispatch per phase between them. */
  private gridPlan: GridSyncPlan | undefined
  /** Words a grid-sync kernel keeps between phases (writePhases): block-uniform registers, per thread. */
  private gridWords = { uniform: 0, thread: 0 }
  /** The phases of a grid-sync kernel that end with a branch (writePhases): the launch goes on at `to` where
   *  it is taken, else at the next phase. */
  private phaseBranches: Array<{ phase: number; to: number }> = []
  /** Phases of a grid-sync kernel (writePhases), 1 otherwise. */
  private phases = 1

  constructor(readonly env: KernelEnv) {
    this.fn = env.fn
    this.coarse = env.coarse ?? 1
    this.sharedInArena = !!env.sharedInArena
    this.f64Services = !!env.f64Services
    this.rounds = !!env.rounds
    this.subgroups = this.coarse === 1 && subgroupsAre32(env.target)
    const fn = env.fn
    this.cfg = buildCfg(fn)
    // a wait on memory another invocation writes (cooperative groups' large-tile sync spins on ld.acquire): WGSL
    // promises no forward progress between invocations, even of one workgroup, so the wait may never end
    // (a grid sync's wait is refused as the grid sync it is, at its %envreg)
    this.specials = specialUse(fn)
    // (one on the block's own shared memory is written as a barrier and one read: spin-wait.ts)
    if (!this.specials.gridSync) {
      let shared: Set<number> | undefined
      fn.instructions.forEach((x, i) => {
        if (!waitLoad(x) || this.cfg.loopOf[this.cfg.blockOf[i]!]! < 0) return
        const problem = blockSpinProblem(fn, this.cfg, i, shared ??= sharedPointers(fn))
        if (problem) this.refuse(`a thread waits in a loop for memory another thread writes (${x.text.split(/\s+/)[0]} at PTX line ${x.line}; ${problem}): WGSL promises no forward progress between invocations, so the wait may never end`, x)
        this.spinWaits.add(i)
      })
    }
    const layout = layoutParams(fn.params)
    fn.params.forEach((p, i) => this.paramOffset.set(p.name, layout.offsets[i]!))
    this.paramBytes = layout.end
    this.paramOffsets = layout.offsets
    // (a cooperative launch's grid syncs split the kernel into phases at its top level: predicated code, grid-sync.ts)
    this.sync = fn.instructions.some((ins) => this.isSync(ins)) || !!this.specials.gridSync
    this.hasPrintf = fn.instructions.some((ins) => ins.op === 'call' && callTarget(ins) === 'vprintf')
    let classes: RegisterClass[]
    try {
      classes = assignRegisterClasses(fn)
    } catch (e) {
      throw new Refusal(fn.line, undefined, (e as Error).message)
    }
    this.classes = classes
    const taken = new Set<string>()
    fn.registers.forEach((r, i) => {
      const c = classes[i]!
      this.regStore.push(c === 'pred' ? 'bool' : c === 'f32' ? 'f32' : c === 'i64' || c === 'f64' ? 'u64' : 'u32')
      this.regBits.push(r.type === 'pred' ? 1 : typeSize(r.type) * 8)
      this.regName.push(wgslName(r.name, taken, 'r_'))
    })
    // 64-bit registers whose high word nothing reads: one u32 (narrowRegisters)
    this.narrow = narrowRegisters(fn, classes)
    for (const r of this.narrow) this.regStore[r] = 'u32'
    this.mem = this.planMemory()
  }

  // --- checked global accesses as affine forms ---

  /** Records the checked global access of the current instruction at address operand `op` (`size` bytes) as
   *  an affine form, for launches that prove it in range (access-sites.ts); without a form (a predicated
   *  access, a generic or atomic one, an address computed in a loop or from memory) the kernel keeps only
   *  its checked WGSL. The forms are the emulator's per-block range checks (analysis/affine.ts). */
  noteAccess(op: Operand | undefined, size: number): void {
    if (this.unsited) return
    const ins = this.ins
    const index = ins?.index ?? -1
    if (!ins || index < 0 || ins.guard || op?.kind !== 'addr' || op.base?.kind !== 'reg') { this.unsited = true; return }
    // (%tid.y and %tid.z as terms of their own, a 2-D tile's row; an induction variable's iteration term where
    // its loop's trip count has a bound the host can compute)
    this.affine ??= analyzeAffine(this.fn, this.cfg, this.classes, { wideParams: true, rowInvariant: true })
    const f = this.affine.formAt(op.base.id, index)
    const inv = f ? this.siteExpr(f.inv) : undefined
    const iv = (x: { loop: number; step: InvExpr; next: boolean } | undefined): SiteIv | undefined | false => {
      if (!x) return undefined
      const step = this.siteExpr(x.step)
      return step && this.siteTrip(x.loop) ? { loop: x.loop, step, next: x.next } : false
    }
    const fiv = iv(f?.iv)
    const wraps = f?.conds.map((w) => ({ inv: this.siteExpr(w.inv), c: w.c, lo: w.lo, iv: iv(w.iv) }))
    if (!f || !inv || fiv === false || !wraps || wraps.some((w) => !w.inv || w.iv === false)) { this.unsited = true; return }
    this.sites.push({
      line: ins.line, size, inv, c: f.c, offset: op.offset,
      wraps: wraps.map((w) => ({ inv: w.inv!, c: w.c, lo: w.lo, ...(w.iv ? { iv: w.iv } : {}) })),
      ...(fiv ? { iv: fiv } : {}),
    })
  }

  /** A loop's trip bound as site data (recorded in `trips`), or undefined. */
  private siteTrip(loop: number): SiteTrip | undefined {
    const known = this.trips.get(loop)
    if (known) return known
    const t = this.affine?.trips.get(loop)
    if (!t) return undefined
    const init = this.siteExpr(t.init.inv), step = this.siteExpr(t.step), bound = this.siteScalar(t.bound)
    // (the counter's first value has no iteration term, nor have its wrap checks)
    const wraps = t.init.conds.map((w) => ({ inv: this.siteExpr(w.inv), c: w.c, lo: w.lo }))
    if (!init || !step || !bound || wraps.some((w) => !w.inv)) return undefined
    const trip: SiteTrip = { init, c: t.init.c, step, bound, wraps: wraps.map((w) => ({ inv: w.inv!, c: w.c, lo: w.lo })) }
    this.trips.set(loop, trip)
    return trip
  }

  /** A loop bound's computation as site data: parameters by byte offset in the block. */
  private siteScalar(e: ScalarExpr): SiteScalar | undefined {
    switch (e.kind) {
      case 'const': case 'special': return e
      case 'param': {
        const base = this.paramOffset.get(e.name)
        return base === undefined ? undefined : { kind: 'param', at: base + e.offset }
      }
      default: {
        const a = this.siteScalar(e.a), b = this.siteScalar(e.b)
        return a && b ? { kind: 'op', op: e.op, a, b } : undefined
      }
    }
  }

  /** A form's block-uniform term as site data: parameters by byte offset in the block; no variable addresses. */
  private siteExpr(e: InvExpr): SiteExpr | undefined {
    switch (e.kind) {
      case 'const': return e
      case 'special': return /^%(ctaid|ntid|nctaid)\.[xyz]$|^%tid\.[yz]$/.test(e.name) ? { kind: 'special', name: e.name } : undefined
      case 'param': {
        const base = this.paramOffset.get(e.name)
        return base === undefined ? undefined : { kind: 'param', at: base + e.offset, width: e.width }
      }
      case 'symbol': return undefined
      default: {
        const a = this.siteExpr(e.a), b = this.siteExpr(e.b)
        return a && b ? { kind: e.kind, a, b } : undefined
      }
    }
  }

  /** The sites, when every checked global access has one and the kernel has no generic or atomic global
   *  access (those are checked inside helpers): then an unchecked variant can run in-range launches. */
  private provenSites(): AccessSite[] | undefined {
    const generic = [...this.features].some((f) => f.startsWith('kp_gen_'))
    return !this.unsited && !generic && !this.mem.globalAtomic && this.coarse === 1 && this.sites.length > 0 && this.features.has('kp_gchk') ? this.sites : undefined
  }

  // --- refusals and output ---

  refuse(reason: string, ins: Instruction | undefined = this.ins): never {
    throw new Refusal(ins?.line ?? this.fn.line, ins?.text, reason)
  }

  line(s: string): void {
    this.lines.push('  '.repeat(this.depth) + s)
  }

  open(s: string): void {
    this.line(s)
    this.depth++
  }

  close(s = '}'): void {
    this.depth--
    this.line(s)
  }

  /** A fresh `let` holding `expr`; returns its name. */
  tmp(expr: string): string {
    const n = `t${this.tmpCount++}`
    this.line(`let ${n} = ${expr};`)
    return n
  }

  /** A function-scope `var` declared once at the top; per thread (an array over the sub-threads when the
   *  kernel is coarsened) unless `perThread` is false. Returns how to name it. */
  declare(name: string, type: string, perThread = true): string {
    const many = perThread && this.coarse > 1
    if (!this.decls.has(name)) this.decls.set(name, many ? `var ${name}: array<${type}, ${this.coarse}>;` : `var ${name}: ${type};`)
    return many ? `${name}[kp_c]` : name
  }

  /** Whether this thread is active in predicated code. */
  get on(): string {
    return this.declare('kp_on', 'bool')
  }

  /** Runs `body` once per CUDA thread of the invocation: directly, or in the sub-thread loop of a coarsened
   *  kernel (which sets kp_c, the CUDA thread's linear id kp_t and its kp_tid, and skips the ids past the block). */
  perThread(body: () => void): void {
    if (this.coarse === 1 || this.inThreadLoop) { body(); return }
    this.inThreadLoop = true
    this.open('for (var kp_c = 0u; kp_c < kp_k; kp_c = kp_c + 1u) {')
    this.line('let kp_t = kp_c * kp_wg + kp_lidx;')
    if (this.mem.localBytes) this.line(`kp_lc = kp_c * ${this.mem.localBytes / 4}u;`)
    this.line('if (kp_t >= kp_nt) { continue; }')
    this.line('let kp_tid = vec3<u32>(kp_t % kp_ntid_x, (kp_t / kp_ntid_x) % kp_ntid_y, kp_t / (kp_ntid_x * kp_ntid_y));')
    try {
      body()
    } finally {
      this.close()
      this.inThreadLoop = false
    }
  }

  // --- operands ---

  reg(o: Operand | undefined): number | undefined {
    return o?.kind === 'reg' ? o.id : undefined
  }

  private useReg(id: number): string {
    this.usedRegs.add(id)
    return this.coarse > 1 && !this.uniformRegs.has(id) ? `${this.regName[id]!}[kp_c]` : this.regName[id]!
  }

  /** The special registers as WGSL u32 expressions (PTX ISA, "Special Registers"). */
  special(name: string): string {
    // the reserved shared memory (planMemory): at a 16-byte boundary after the dynamic shared memory, read as
    // the emulator reads it (@kernelpack/ptx reservedSmemRead)
    const rs = reservedSmemRead(name)
    if (rs) {
      const start = `((${u32Lit(this.mem.dynBase)} + kp_dyn_shared_bytes + 15u) & ~15u)`
      return 'size' in rs ? `${rs.size}u` : rs.offset ? `(${start} + ${rs.offset}u)` : start
    }
    switch (name) {
      case '%tid.x': return 'kp_tid.x'
      case '%tid.y': return 'kp_tid.y'
      case '%tid.z': return 'kp_tid.z'
      case '%ntid.x': return 'kp_ntid_x'
      case '%ntid.y': return 'kp_ntid_y'
      case '%ntid.z': return 'kp_ntid_z'
      case '%ctaid.x': return 'kp_ctaid.x'
      case '%ctaid.y': return 'kp_ctaid.y'
      case '%ctaid.z': return 'kp_ctaid.z'
      case '%nctaid.x': case '%nclusterid.x': return 'kp_launch.nctaid.x'
      case '%nctaid.y': case '%nclusterid.y': return 'kp_launch.nctaid.y'
      case '%nctaid.z': case '%nclusterid.z': return 'kp_launch.nctaid.z'
      case '%laneid': return '(kp_t & 31u)'
      case '%warpid': return '(kp_t >> 5u)'
      case '%nwarpid': return '((kp_nt + 31u) >> 5u)'
      case '%smid': case '%gridid': return '0u'
      case '%nsmid': return '1u'
      case '%lanemask_eq': return '(1u << (kp_t & 31u))'
      case '%lanemask_lt': return '((1u << (kp_t & 31u)) - 1u)'
      case '%lanemask_le': return '(((1u << (kp_t & 31u)) << 1u) - 1u)'
      case '%lanemask_gt': return '(~(((1u << (kp_t & 31u)) << 1u) - 1u))'
      case '%lanemask_ge': return '(~((1u << (kp_t & 31u)) - 1u))'
      case '%dynamic_smem_size': return 'kp_dyn_shared_bytes'
      case '%total_smem_size': case '%aggr_smem_size': return `(${u32Lit(this.mem.staticShared)} + kp_dyn_shared_bytes)`
      case '%cluster_ctarank': case '%is_explicit_cluster': return '0u'
      case '%cluster_nctarank': return '1u'
      case '%clusterid.x': case '%clusterid.y': case '%clusterid.z': return '0u'
      case '%cluster_ctaid.x': case '%cluster_ctaid.y': case '%cluster_ctaid.z': return '0u'
      case '%cluster_nctaid.x': case '%cluster_nctaid.y': case '%cluster_nctaid.z': return '1u'
      case '%clock': case '%clock64': case '%globaltimer': case '%globaltimer_lo':
        // WGSL has no clock: a count of the thread's own reads, 1000 a read, so that it only grows and a loop
        // that waits for it to pass a bound (libcu++'s back-off in a barrier wait) ends; the emulator's is the
        // host's millisecond clock. Neither measures the kernel's time.
        this.helpers.set('kp_clock', `// %clock, %globaltimer (emit-kernel.ts special): 1000 more at each read of this invocation
var<private> kp_clock_now: u32;
fn kp_clock() -> u32 { kp_clock_now = kp_clock_now + 1000u; return kp_clock_now; }`)
        return 'kp_clock()'
      case '%clock_hi': case '%globaltimer_hi': return '0u'
      case '%envreg1': case '%envreg2':
        // the grid workspace (its high word, its low word): the launch's workspace here, whose address follows
        // the parameters; only the grid syncs use it, and they are phase boundaries here (grid-sync.ts)
        if (this.gridPlan) return name === '%envreg1' ? '0u' : this.workspaceAddress
      // falls through
      default:
        return this.refuse(`the special register ${name}: ${whyNoSpecial(name)}`)
    }
  }

  /** A symbol's address in its own state space (u32), noting module variables the kernel uses. */
  symbolAddress(name: string): { space: 'global' | 'shared' | 'local' | 'param' | 'const'; expr: string } {
    const p = this.paramOffset.get(name)
    if (p !== undefined) return { space: 'param', expr: u32Lit(p) }
    const s = this.mem.sharedOffset.get(name)
    if (s !== undefined) return { space: 'shared', expr: typeof s === 'number' ? u32Lit(s) : s }
    const l = this.mem.localOffset.get(name)
    if (l !== undefined) return { space: 'local', expr: u32Lit(l) }
    const bad = this.env.badVars.get(name)
    if (bad) return this.refuse(bad)
    const v = this.env.varIndex.get(name)
    if (v !== undefined) {
      this.varsUsed.add(v)
      const space = this.env.module.variables.find((x) => x.name === name)!.space
      return { space: space === 'const' ? 'const' : 'global', expr: `kp_var_${v}` }
    }
    if (this.env.module.functions.some((f) => f.name === name)) return this.refuse(`the address of function ${name}: WGSL has no function pointers`)
    return this.refuse(`unknown symbol ${name}`)
  }

  /** The generic address of a symbol (what `mov.u64 %rd, sym` gives before any cvta: the state-space
   *  address, which cvta turns into a generic one; PTX ISA, "Generic Addressing"). */
  private symbolValue(name: string): string {
    return this.symbolAddress(name).expr
  }

  /** u32 bits of operand `o` read as a value of type `t` (≤ 32 bits: narrower types zero- or sign-extended
   *  to 32 bits; 64-bit types give their low word; floats their bits). */
  u32(o: Operand, t: PtxType = 'b32'): string {
    const bits = t === 'pred' ? 32 : Math.min(typeSize(t) * 8, 32)
    const signed = t[0] === 's'
    const narrow = (e: string, known: number) => {
      if (bits >= 32 || (known <= bits && !signed)) return e
      if (signed) {
        this.features.add('kp_sext')
        return `kp_sext(${e}, ${bits}u)`
      }
      return `(${e} & ${u32Lit(2 ** bits - 1)})`
    }
    switch (o.kind) {
      case 'reg': {
        const s = this.regStore[o.id]!
        const n = this.useReg(o.id)
        if (s === 'u32') return narrow(n, this.regBits[o.id]!)
        if (s === 'f32') return narrow(`bitcast<u32>(${n})`, 32)
        if (s === 'u64') return narrow(`${n}.x`, 32)
        return `select(0u, 1u, ${n})`
      }
      case 'imm': {
        const im = o.imm
        let v: bigint
        if (im.kind === 'int') v = im.value
        else if (im.kind === 'f32') v = im.bits
        else if (im.kind === 'f64') v = im.bits
        else v = BigInt(f32BitsOf(im.value))
        v = BigInt.asUintN(bits, v)
        if (signed) v = BigInt.asUintN(32, BigInt.asIntN(bits, v))
        return u32Lit(v)
      }
      case 'special': return narrow(this.special(o.name), 32)
      case 'sym': return narrow(this.symbolValue(o.name), 32)
      case 'neg': return `(0u - ${this.u32(o.operand, t)})`
      case 'not': return `(~${this.u32(o.operand, t)})`
      default: return this.refuse(`a ${o.kind} operand where a ${t} value is expected`)
    }
  }

  i32(o: Operand, t: PtxType = 's32'): string {
    return `bitcast<i32>(${this.u32(o, t)})`
  }

  f32(o: Operand): string {
    switch (o.kind) {
      case 'reg': {
        const s = this.regStore[o.id]!
        const n = this.useReg(o.id)
        if (s === 'f32') return n
        if (s === 'u32') return `bitcast<f32>(${n})`
        if (s === 'u64') return `bitcast<f32>(${n}.x)`
        return this.refuse('a predicate read as a float')
      }
      case 'imm': {
        const im = o.imm
        if (im.kind === 'f32') return f32Lit(im.bits)
        if (im.kind === 'int') return f32Lit(BigInt.asUintN(32, im.value))
        if (im.kind === 'real') return f32Lit(f32BitsOf(im.value))
        // a 0d literal where an f32 is expected: PTX rounds it to f32
        return f32Lit(f32BitsOf(new Float64Array(new BigUint64Array([im.bits]).buffer)[0]!))
      }
      case 'neg': return `(-${this.f32(o.operand)})`
      default: return this.refuse(`a ${o.kind} operand where an f32 value is expected`)
    }
  }

  /** A 64-bit operand as vec2<u32>; narrower registers are zero-extended (sign-extended for signed t). */
  u64(o: Operand, t: PtxType = 'b64'): string {
    switch (o.kind) {
      case 'reg': {
        const s = this.regStore[o.id]!
        const n = this.useReg(o.id)
        if (s === 'u64') return n
        if (this.narrow.has(o.id)) return `vec2<u32>(${n}, 0u)`
        if (s === 'bool') return `vec2<u32>(select(0u, 1u, ${n}), 0u)`
        const lo = s === 'f32' ? `bitcast<u32>(${n})` : n
        if (t[0] === 's') {
          const x = this.tmp(lo)
          return `vec2<u32>(${x}, select(0u, 0xffffffffu, (${x} & 0x80000000u) != 0u))`
        }
        return `vec2<u32>(${lo}, 0u)`
      }
      case 'imm': {
        const im = o.imm
        if (im.kind === 'int' || im.kind === 'f64') return u64Lit(im.kind === 'int' ? im.value : im.bits)
        if (im.kind === 'f32') return this.refuse('an f32 literal where a 64-bit value is expected')
        return u64Lit(new BigUint64Array(new Float64Array([im.value]).buffer)[0]!)
      }
      case 'special': return `vec2<u32>(${this.special(o.name)}, 0u)`
      case 'sym': return `vec2<u32>(${this.symbolValue(o.name)}, 0u)`
      case 'neg': {
        this.features.add('kp_neg64')
        return `kp_neg64(${this.u64(o.operand, t)})`
      }
      default: return this.refuse(`a ${o.kind} operand where a 64-bit value is expected`)
    }
  }

  pred(o: Operand): string {
    switch (o.kind) {
      case 'reg': {
        const s = this.regStore[o.id]!
        const n = this.useReg(o.id)
        if (s === 'bool') return n
        if (s === 'u64') return `any(${n} != vec2<u32>(0u))`
        if (s === 'f32') return `(bitcast<u32>(${n}) != 0u)`
        return `(${n} != 0u)`
      }
      case 'imm': return o.imm.kind === 'int' && o.imm.value !== 0n ? 'true' : 'false'
      case 'not': return `!${this.pred(o.operand)}`
      default: return this.refuse(`a ${o.kind} operand where a predicate is expected`)
    }
  }

  // --- destinations ---

  private dst(o: Operand | undefined): number | undefined {
    if (!o || o.kind === 'sink') return undefined
    if (o.kind !== 'reg') return this.refuse(`a ${o.kind} operand as a destination`)
    return o.id
  }

  /** Writes a ≤ 32-bit integer (or bit pattern) `e` of type `t` to register operand `o`: masked to a narrower
   *  register, zero- or sign-extended (by t) into a 64-bit one (PTX ISA, "Operand Size Exceeding
   *  Instruction-Type Size"). */
  setU32(o: Operand | undefined, e: string, t: PtxType = 'b32'): void {
    const id = this.dst(o)
    if (id === undefined) return
    const n = this.useReg(id)
    const s = this.regStore[id]!
    const tb = Math.min(typeSize(t) * 8, 32)
    if (s === 'u32') {
      const rb = this.regBits[id]!
      // a signed value narrower than its register is sign-extended to the register (PTX ISA, "ld": `ld.s8` into
      // a 16- or 32-bit register), then kept to the register's width
      let v = e
      if (t[0] === 's' && tb < rb) {
        this.features.add('kp_sext')
        v = `kp_sext(${e}, ${tb}u)`
      }
      this.line(`${n} = ${rb < 32 ? `(${v}) & ${u32Lit(2 ** rb - 1)}` : v};`)
    } else if (s === 'f32') this.line(`${n} = bitcast<f32>(${e});`)
    else if (s === 'u64') {
      if (t[0] === 's') {
        this.features.add('kp_sext')
        const x = this.tmp(tb < 32 ? `kp_sext(${e}, ${tb}u)` : e)
        this.line(`${n} = vec2<u32>(${x}, select(0u, 0xffffffffu, (${x} & 0x80000000u) != 0u));`)
      } else this.line(`${n} = vec2<u32>(${tb < 32 ? `(${e}) & ${u32Lit(2 ** tb - 1)}` : e}, 0u);`)
    } else this.line(`${n} = (${e}) != 0u;`)
  }

  setF32(o: Operand | undefined, e: string): void {
    const id = this.dst(o)
    if (id === undefined) return
    const n = this.useReg(id)
    const s = this.regStore[id]!
    if (s === 'f32') this.line(`${n} = ${e};`)
    else if (s === 'u32') this.line(`${n} = bitcast<u32>(${e});`)
    else if (s === 'u64') this.line(`${n} = vec2<u32>(bitcast<u32>(${e}), 0u);`)
    else this.refuse('an f32 result written to a predicate')
  }

  setU64(o: Operand | undefined, e: string): void {
    const id = this.dst(o)
    if (id === undefined) return
    const n = this.useReg(id)
    const s = this.regStore[id]!
    if (s === 'u64') this.line(`${n} = ${e};`)
    else if (s === 'u32') {
      const rb = this.regBits[id]!
      this.line(`${n} = ${rb < 32 ? `(${e}).x & ${u32Lit(2 ** rb - 1)}` : `(${e}).x`};`)
    } else if (s === 'f32') this.line(`${n} = bitcast<f32>((${e}).x);`)
    else this.line(`${n} = any((${e}) != vec2<u32>(0u));`)
  }

  setPred(o: Operand | undefined, e: string): void {
    const id = this.dst(o)
    if (id === undefined) return
    const n = this.useReg(id)
    const s = this.regStore[id]!
    if (s === 'bool') this.line(`${n} = ${e};`)
    else if (s === 'u64') this.line(`${n} = vec2<u32>(select(0u, 1u, ${e}), 0u);`)
    else if (s === 'f32') this.line(`${n} = bitcast<f32>(select(0u, 1u, ${e}));`)
    else this.line(`${n} = select(0u, 1u, ${e});`)
  }

  /** Whether a destination is a 64-bit register kept as its low word (narrowRegisters). */
  narrowed(o: Operand | undefined): boolean {
    return o?.kind === 'reg' && this.narrow.has(o.id)
  }

  /** The storage of a destination register (`undefined` for `_`). */
  storeOf(o: Operand | undefined): Storage | undefined {
    const id = o?.kind === 'reg' ? o.id : undefined
    return id === undefined ? undefined : this.regStore[id]
  }

  /** Number of reads of each register anywhere in the function (a result nobody reads may be dropped). */
  private readCounts?: Uint32Array
  reads(id: number): number {
    if (!this.readCounts) {
      this.readCounts = new Uint32Array(this.fn.registers.length)
      for (const ins of this.fn.instructions) for (const r of usedRegisters(ins)) this.readCounts[r]!++
    }
    return this.readCounts[id]!
  }

  // --- memory plan (state spaces of this kernel) ---

  private planMemory(): MemoryPlan {
    const fn = this.fn
    const mod = this.env.module
    const sharedOffset = new Map<string, number | string>()
    const localOffset = new Map<string, number>()
    let shared = 0
    let dynamicAlign = 16
    const dynamic: PtxVariable[] = []
    const referenced = new Set<string>()
    const visit = (o: Operand | undefined) => {
      if (!o) return
      if (o.kind === 'sym') referenced.add(o.name)
      else if (o.kind === 'addr') visit(o.base)
      else if (o.kind === 'vec' || o.kind === 'list') o.items.forEach(visit)
      else if (o.kind === 'pair') { visit(o.first); visit(o.second) }
      else if (o.kind === 'not' || o.kind === 'neg') visit(o.operand)
    }
    for (const ins of fn.instructions) ins.operands.forEach(visit)
    const sharedVars = [...fn.vars.filter((v) => v.space === 'shared'), ...mod.variables.filter((v) => v.space === 'shared' && referenced.has(v.name))]
    for (const v of sharedVars) {
      if (v.extern || v.count === 0) { dynamic.push(v); dynamicAlign = Math.max(dynamicAlign, v.align); continue }
      shared = Math.ceil(shared / Math.max(1, v.align)) * Math.max(1, v.align)
      sharedOffset.set(v.name, shared)
      shared += v.size
    }
    const staticShared = Math.ceil(shared / 4) * 4
    // extern (dynamic) shared arrays all start where the static ones end, aligned (CUDA's layout)
    const dynBase = Math.ceil(staticShared / dynamicAlign) * dynamicAlign
    for (const v of dynamic) sharedOffset.set(v.name, dynBase)
    let local = 0
    for (const v of fn.vars) {
      if (v.space !== 'local') continue
      local = Math.ceil(local / Math.max(1, v.align)) * Math.max(1, v.align)
      localOffset.set(v.name, local)
      local += v.size
    }
    for (const v of fn.vars) if (v.space === 'const' || v.space === 'global') this.refuse(`a .${v.space} variable (${v.name}) declared inside a function`, undefined)
    const spaceOf = (ins: Instruction) => ins.space ?? 'generic'
    let globalAtomic = false, sharedAtomic = false, globalStores = false
    for (const ins of fn.instructions) {
      const sp = spaceOf(ins)
      // (wmma.store.d and stmatrix write their elements as st would: sub-word ones with atomics)
      const st = ins.op === 'st' || ins.op === 'stmatrix' || (ins.op === 'wmma' && ins.mode === 'store')
      if ((st || ins.op === 'atom' || ins.op === 'red') && (sp === 'global' || sp === 'generic')) globalStores = true
      const size = typeSize(ins.type ?? 'b32')
      // mbarrier objects live in shared memory and are updated with its atomics (emit-mbarrier.ts)
      if (usesMbarrier(ins)) sharedAtomic = true
      // a kernel with a device-scope fence reads and writes global memory only with atomics (emit-collective.ts)
      if (isDeviceFence(ins)) globalAtomic = true
      if (ins.op === 'atom' || ins.op === 'red') {
        if (sp === 'global' || sp === 'generic') globalAtomic = true
        if (sp === 'shared' || sp === 'generic') sharedAtomic = true
      } else if (st && size < 4) {
        if (sp === 'global' || sp === 'generic') globalAtomic = true
        if (sp === 'shared' || sp === 'generic') sharedAtomic = true
      }
    }
    // the block's reserved shared memory (cooperative groups' block_tile_memory scratch): RESERVED_SMEM bytes
    // after the kernel's own, at a 16-byte boundary, as the emulator lays it out (its backend.ts sharedLayout)
    const reserved = this.specials.reservedSmem
    const usesShared = reserved || sharedVars.length > 0 || fn.instructions.some((i) => i.space === 'shared')
    const barriers = globalStores ? globalBarriers(fn, this.cfg) : { at: new Set<Instruction>(), afterLoop: new Set<number>() }
    return {
      sharedOffset, localOffset, staticShared, dynBase, usesShared, hasDynamic: dynamic.length > 0, reserved,
      // (shared memory in the arena is kp_mem itself: one array, atomic where either space needs atomics)
      localBytes: Math.ceil(local / 4) * 4, globalAtomic: globalAtomic || (this.sharedInArena && sharedAtomic && usesShared),
      sharedAtomic: usesShared && (sharedAtomic || (this.sharedInArena && globalAtomic)), globalStores,
      storageBarriers: barriers.at, storageBarrierAfterLoop: barriers.afterLoop,
    }
  }

  // --- control flow ---

  /** A block barrier, a warp collective, an mbarrier wait (a workgroup barrier, then the phase read) or a
   *  device-scope fence (a storage barrier): each written where every invocation of the workgroup runs it
   *  (emit-collective.ts). */
  isSync(ins: Instruction): boolean {
    return collectiveOf(ins) !== undefined || waitOf(ins) === 'mbarrier' || isDeviceFence(ins) || this.spinWaits.has(ins.index)
  }

  private nodeSync(n: StructNode): boolean {
    if (n.kind === 'instr') return this.isSync(this.fn.instructions[n.index]!)
    if (n.kind === 'jump') return false
    let v = this.syncMemo.get(n.id)
    if (v === undefined) {
      v = n.body.some((c) => this.nodeSync(c))
      this.syncMemo.set(n.id, v)
    }
    return v
  }

  /** Writes the kernel body: structured control flow, or a block dispatcher for irreducible flow. */
  writeBody(): void {
    const fn = this.fn
    // every call but __assertfail's and vprintf's is refused (emit-ops.ts): refuse it before writing anything
    const call = fn.instructions.find((i) => i.op === 'call' && callTarget(i) !== '__assertfail' && callTarget(i) !== 'vprintf')
    if (call) {
      // the refusal names the call's own line, not the .entry's
      this.ins = call
      emitOp(this, call)
    }
    if (this.rounds) {
      const problem = this.roundsProblem
      if (problem) this.refuse(`internal: rounds for a kernel with ${problem}`, undefined)
      this.writeDispatcher(true)
      return
    }
    if (this.f64Services) {
      if (this.sync) this.refuse('internal: software binary64 through shared sites in a kernel with barriers, not in rounds', undefined)
      this.perThread(() => this.writeDispatcher(false))
      return
    }
    const s = structureFunction(fn, { relayout: true })
    if (s.kind === 'fallback') {
      if (this.sync) {
        const problem = this.roundsProblem
        if (problem) this.refuse(`control flow that does not nest (${s.reason}) around a barrier, in a kernel with ${problem}: WGSL needs barriers in structured, uniform control flow`, undefined)
        this.wantsRounds = true
        return
      }
      this.perThread(() => this.writeDispatcher(false))
      return
    }
    this.branches = s.branches
    for (const r of s.regions) this.regionById.set(r.id, r)
    if (this.sync && !this.roundsProblem && (this.findRoleWaits() || this.exchangesInLoops() > ROUNDS_EXCHANGES_IN_LOOPS)) {
      this.wantsRounds = true
      return
    }
    if (this.specials.gridSync) {
      const plan = planGridSyncs(fn, this.cfg, s.body, s.branches)
      if ('refuse' in plan) return this.refuse(plan.refuse, plan.at)
      this.gridPlan = plan
    }
    if (this.sync) this.findUniform(s.body)
    const root: Frame = { kind: 'root', uniform: this.sync }
    if (this.gridPlan) return this.writePhases(root, this.gridPlan)
    if (this.sync) {
      this.perThread(() => this.line(`${this.on} = true;`))
      this.allOn = true
      this.uniformSeq(s.body, [root])
    } else this.perThread(() => this.plainSeq(s.body, [root]))
  }

  private roundsWhyNot: string | null | undefined
  /** Why the kernel cannot run in rounds (rounds.ts), or undefined when it can; found once. */
  private get roundsProblem(): string | undefined {
    if (this.roundsWhyNot === undefined) this.roundsWhyNot = roundsProblem(this, !!this.specials.gridSync) ?? null
    return this.roundsWhyNot ?? undefined
  }

  /** The warp collectives that exchange values (not barriers, not __syncwarp) inside loops. */
  private exchangesInLoops(): number {
    const cfg = this.cfg
    return this.fn.instructions.filter((ins, i) => {
      const c = collectiveOf(ins)
      return c && c.kind !== 'bar' && c.kind !== 'warpsync' && cfg.loopOf[cfg.blockOf[i]!]! >= 0
    }).length
  }

  /** Whether an mbarrier wait runs under a branch that tells the block's threads apart (a role: cuda::pipeline's
   *  producers and consumers), other than the branches of waits themselves (libcu++'s retry loop): then threads
   *  wait, in code of their own, for arrivals other threads make in theirs, which predicated code (every
   *  invocation passing each wait in program order) cannot run; the kernel is written in rounds (rounds.ts).
   *  (A wait on shared memory stays predicated, spin-wait.ts: cooperative groups' wide tiles wait under such a
   *  branch, and predicated code runs them where the write comes first or the wait moves past it.) */
  private findRoleWaits(): boolean {
    const fn = this.fn
    const waits = fn.instructions.filter((i) => waitOf(i) === 'mbarrier')
    if (!waits.length) return false
    // registers computed from a wait's result
    const fromWait = new Set<number>()
    for (const i of waits) for (const d of definedRegisters(i)) fromWait.add(d)
    for (let changed = true; changed;) {
      changed = false
      for (const ins of fn.instructions) {
        if (!usedRegisters(ins).some((r) => fromWait.has(r))) continue
        for (const d of definedRegisters(ins)) if (!fromWait.has(d)) { fromWait.add(d); changed = true }
      }
    }
    const levels = analyzeUniformity(fn, this.cfg).register
    const cd = controlDependence(this.cfg)
    for (const wait of waits) {
      const seen = new Set<number>()
      const stack = [this.cfg.blockOf[wait.index]!]
      while (stack.length) {
        for (const a of cd[stack.pop()!]!) {
          if (seen.has(a)) continue
          seen.add(a)
          stack.push(a)
          const last = fn.instructions[this.cfg.blocks[a]!.end - 1]!
          const g = last.guard?.reg
          if (g !== undefined && !fromWait.has(g) && (levels[g] === 'thread' || levels[g] === 'warp')) return true
        }
      }
    }
    return false
  }

  /** Fills uniformRegs/uniformInstrs: block-uniform registers (analyzeUniformity) whose definitions are all
   *  pure, unguarded or guarded by such a register, read only such registers, and sit directly in predicated
   *  code (not inside a plain region, where WGSL would see them under `if (kp_on)`). */
  private findUniform(root: readonly StructNode[]): void {
    const fn = this.fn
    const top = new Set<number>()
    const walk = (nodes: readonly StructNode[]) => {
      for (const n of nodes) {
        if (n.kind === 'instr') top.add(n.index)
        else if (n.kind !== 'jump' && this.nodeSync(n)) walk(n.kind === 'if' ? n.body.slice(1) : n.body)
      }
    }
    walk(root)
    const levels = analyzeUniformity(fn, this.cfg).register
    const W = new Set<number>()
    levels.forEach((l, id) => { if (l === 'grid' || l === 'block') W.add(id) })
    const pure = (ins: Instruction) => {
      if (this.isSync(ins)) return false
      switch (ins.op) {
        case 'ld': return ins.space === 'param' && ins.operands[1]?.kind === 'addr' && ins.operands[1].base?.kind === 'sym' && this.paramOffset.has(ins.operands[1].base.name)
        case 'ldu': case 'st': case 'atom': case 'red': case 'cp': case 'call': case 'bra': case 'brx': case 'ret': case 'exit': case 'trap':
        case 'membar': case 'fence': case 'prefetch': case 'prefetchu': case 'discard': case 'applypriority': case 'createpolicy': return false
        default: return true
      }
    }
    for (let changed = true; changed;) {
      changed = false
      for (const ins of fn.instructions) {
        const defs = definedRegisters(ins)
        if (!defs.some((d) => W.has(d))) continue
        const ok = top.has(ins.index) && pure(ins) && usedRegisters(ins).every((r) => W.has(r)) && defs.every((d) => W.has(d) || this.regStore[d] === undefined)
        if (!ok) for (const d of defs) if (W.delete(d)) changed = true
      }
    }
    this.uniformRegs = W
    for (const ins of fn.instructions) {
      const defs = definedRegisters(ins)
      if (defs.length && defs.every((d) => W.has(d))) this.uniformInstrs.add(ins.index)
    }
  }

  /** `exit` becomes a flag (not a WGSL return) where other threads of the invocation still run. */
  private get exitByFlag(): boolean {
    return this.sync || this.coarse > 1
  }

  private flagName(key: string): string {
    if (key === 'x') return this.declare('kp_exited', 'bool')
    return this.declare(`kp_${key}`, 'bool')
  }

  /** Whether frame `inner` lies inside region `outer` (outer appears before it in the stack). */
  private inside(frames: Frame[], innerIdx: number, target: StructRegion): boolean {
    const t = frames.findIndex((f) => f.region === target)
    return t >= 0 && t < innerIdx
  }

  /** Statements for leaving to `key` from the current point (plain code); returns the flag left set, if any. */
  private escape(key: string, frames: Frame[]): { code: string[]; flag?: string } {
    // the innermost WGSL loop we are in, without crossing a predicated region
    let lp = -1
    for (let i = frames.length - 1; i >= 0; i--) {
      const f = frames[i]!
      if (f.kind === 'run' || f.uniform) break
      if (PLAIN_LOOP(f)) { lp = i; break }
    }
    if (key === 'x') {
      if (!this.exitByFlag) return { code: ['return;'] }
      return { code: [`${this.flagName('x')} = true;`, ...(lp >= 0 ? ['break;'] : [])], flag: 'x' }
    }
    const target = this.regionById.get(Number(key.slice(1)))!
    if (key[0] === 'c' && lp >= 0 && frames[lp]!.region === target) return { code: ['continue;'] }
    const breakOut = lp >= 0 && this.inside(frames, lp, target)
    return { code: [`${this.flagName(key)} = true;`, ...(breakOut ? ['break;'] : [])], flag: key }
  }

  /** The escape an instruction performs, if any: `b<id>`/`c<id>` for a resolved branch, `x` for exit/ret. */
  private escapeOf(ins: Instruction): string | undefined {
    if (ins.op === 'bra') {
      const b = this.branches.get(ins.index)
      if (!b) return this.refuse('a branch the structurizer did not resolve')
      return `${b.kind === 'break' ? 'b' : 'c'}${b.node}`
    }
    if (ins.op === 'ret' || ins.op === 'exit') return 'x'
    if (ins.op === 'brx') return this.refuse('indirect branches (brx.idx)')
    return undefined
  }

  private guardExpr(ins: Instruction): string | undefined {
    if (!ins.guard) return undefined
    const p = this.pred({ kind: 'reg', id: ins.guard.reg })
    return ins.guard.negate ? `!${p}` : p
  }

  /** One instruction in plain code; returns the flag it may leave set. */
  private plainInstr(ins: Instruction, frames: Frame[]): string | undefined {
    this.ins = ins
    const key = this.escapeOf(ins)
    const g = this.guardExpr(ins)
    if (key) {
      const e = this.escape(key, frames)
      if (g) { this.open(`if (${g}) {`); e.code.forEach((c) => this.line(c)); this.close() } else e.code.forEach((c) => this.line(c))
      return e.flag
    }
    if (g) this.open(`if (${g}) {`)
    this.instruction(ins)
    if (g) this.close()
    return undefined
  }

  /** A sequence in plain code; returns the flags left set for enclosing levels. */
  private plainSeq(nodes: readonly StructNode[], frames: Frame[]): Set<string> {
    const frame = frames[frames.length - 1]!
    const out = new Set<string>()
    let guards = 0
    const start = frame.kind === 'if' ? 1 : 0
    let lastContinues = false
    for (let k = start; k < nodes.length; k++) {
      const n = nodes[k]!
      let set: Set<string>
      lastContinues = false
      if (n.kind === 'instr') {
        const f = this.plainInstr(this.fn.instructions[n.index]!, frames)
        set = new Set(f ? [f] : [])
        const ins = this.fn.instructions[n.index]!
        lastContinues = !ins.guard && ins.op === 'bra' && this.branches.get(ins.index)?.kind === 'continue' && !f
      } else if (n.kind === 'jump') {
        // a fall-through edge the structurizer's re-layout turned into a jump
        const e = this.escape(`${n.target.kind === 'break' ? 'b' : 'c'}${n.target.node}`, frames)
        this.line(`// jump ${n.label}`)
        e.code.forEach((c) => this.line(c))
        set = new Set(e.flag ? [e.flag] : [])
        lastContinues = n.target.kind === 'continue' && !e.flag
      } else set = this.plainRegion(n, frames)
      if (set.size === 0) continue
      for (const f of set) out.add(f)
      if (PLAIN_LOOP(frame)) {
        // leave or repeat the WGSL loop now; the loop's parent handles the rest
        const self = `c${frame.region!.id}`
        for (const f of set) this.line(f === self ? `if (${this.flagName(f)}) { continue; }` : `if (${this.flagName(f)}) { break; }`)
      } else if (k < nodes.length - 1) {
        this.open(`if (!(${[...set].map((f) => this.flagName(f)).join(' || ')})) {`)
        guards++
      }
    }
    while (guards-- > 0) this.close()
    if (PLAIN_LOOP(frame) && !lastContinues) this.line('break;')
    return out
  }

  private plainRegion(r: StructRegion, frames: Frame[]): Set<string> {
    const fr: Frame = { kind: r.kind, region: r, uniform: false }
    const inner = [...frames, fr]
    let set: Set<string>
    if (r.kind === 'if') {
      const br = this.fn.instructions[r.branch!]!
      this.ins = br
      const g = this.guardExpr(br)!
      this.open(`if (!(${g})) {`)
      set = this.plainSeq(r.body, inner)
      this.close()
    } else if (r.kind === 'block') {
      this.line(`${this.flagName(`b${r.id}`)} = false;`)
      set = this.plainSeq(r.body, inner)
      set.delete(`b${r.id}`)
    } else {
      this.open('loop {')
      const at = this.lines.length
      set = this.plainSeq(r.body, inner)
      if (set.has(`c${r.id}`)) this.lines.splice(at, 0, '  '.repeat(this.depth) + `${this.flagName(`c${r.id}`)} = false;`)
      set.delete(`c${r.id}`)
      // a loop with no way out (dead code a compiler left: nvcc's unrolled copy of a loop whose trip count it
      // knows is below the unrolling) is an error in WGSL ("loop does not exit"): a break that never runs
      // (first in the body: WGSL's behavior analysis ignores what follows the body's closing `continue`)
      if (!this.lines.slice(at).some((l) => /\b(break|return)\b/.test(l))) this.lines.splice(at, 0, '  '.repeat(this.depth) + 'if (false) { break; }')
      this.close()
    }
    return set
  }

  /** A sequence in predicated code (all invocations run it); returns the flags left set. */
  private uniformSeq(nodes: readonly StructNode[], frames: Frame[]): Set<string> {
    const frame = frames[frames.length - 1]!
    const out = new Set<string>()
    const start = frame.kind === 'if' ? 1 : 0
    let run: StructNode[] = []
    const flush = () => {
      if (!run.length) return
      const nodesOfRun = run
      run = []
      let set = new Set<string>()
      this.perThread(() => {
        const guard = !this.allOn
        if (guard) this.open(`if (${this.on}) {`)
        set = this.plainSeq(nodesOfRun, [...frames, { kind: 'run', uniform: false }])
        if (guard) this.close()
        if (set.size) this.line(`${this.on} = ${this.on} && !(${[...set].map((f) => this.flagName(f)).join(' || ')});`)
      })
      if (set.size) this.markOff()
      for (const f of set) out.add(f)
    }
    for (let k = start; k < nodes.length; k++) {
      const n = nodes[k]!
      if (n.kind === 'instr' && this.uniformInstrs.has(n.index)) {
        // the same for every thread: written once, outside `if (kp_on)`, so WGSL knows it is uniform
        flush()
        const ins = this.fn.instructions[n.index]!
        const g = this.guardExpr(ins)
        if (g) this.open(`if (${g}) {`)
        this.instruction(ins)
        if (g) this.close()
        continue
      }
      if (!this.nodeSync(n)) { run.push(n); continue }
      flush()
      if (n.kind === 'instr') {
        const ins = this.fn.instructions[n.index]!
        this.ins = ins
        // the guard is read inside emitSync's per-thread loops
        emitSync(this, ins, () => {
          const g = this.guardExpr(ins)
          return g ? `(${this.on} && ${g})` : this.on
        })
        // (device printf orders a thread's records by the barriers and warp collectives it passed: emit-printf.ts)
        if (this.hasPrintf && collectiveOf(ins)) this.line(collectiveOf(ins)?.kind === 'bar' ? 'kp_pbar += 1u;' : 'kp_pcol += 1u;')
      } else if (n.kind === 'loop' && this.ownInstructions(n).some((i) => this.spinWaits.has(i))) {
        for (const f of this.spinLoop(n, frames)) out.add(f)
      } else if (n.kind !== 'jump') {
        for (const f of this.uniformRegion(n, frames)) out.add(f)
        // after a loop with barriers (uniform here): the storageBarrier its barriers left to its exit
        if (n.kind === 'loop' && this.ownInstructions(n).some((i) => this.mem.storageBarrierAfterLoop.has(i))) this.line('storageBarrier();')
      }
    }
    flush()
    return out
  }

  /** A loop that waits for a word of the block's shared memory (spin-wait.ts), in predicated code: the workgroup
   *  meets at a barrier, then each thread in it runs the loop's body once; one that would go round again records
   *  the fault that says the wait cannot complete, and leaves the loop with the others. A branch out of the loop
   *  to the end of an enclosing block skips what follows the loop there (its flag, as a break in predicated code);
   *  returns the flags left set. */
  private spinLoop(r: StructRegion, frames: Frame[]): Set<string> {
    const fn = this.fn
    const wait = this.ownInstructions(r).find((i) => this.spinWaits.has(i))!
    const refuse = (why: string) => this.refuse(`a thread waits in a loop for memory another thread writes (${fn.instructions[wait]!.text.split(/\s+/)[0]} at PTX line ${fn.instructions[wait]!.line}; ${why}): WGSL promises no forward progress between invocations, so the wait may never end`, fn.instructions[wait])
    // the regions the loop ends, innermost first: it is the last node of each
    const ends = new Set<number>([r.id])
    let child: StructNode = r
    for (let k = frames.length - 1; k >= 0; k--) {
      const f = frames[k]!
      // (a loop's end goes round again)
      if (!f.region || f.kind === 'loop') break
      if (f.region.body[f.region.body.length - 1] !== child) break
      ends.add(f.region.id)
      child = f.region
    }
    const body: Instruction[] = []
    for (const n of r.body) {
      if (n.kind !== 'instr') return refuse('the loop\'s body branches inside')
      body.push(fn.instructions[n.index]!)
    }
    // every branch goes round again or leaves the loop (to its end or an enclosing block's); falling out of the
    // body leaves it too
    for (const ins of body) {
      if (ins.op !== 'bra') continue
      const b = this.branches.get(ins.index)
      if (!b) return refuse('a branch the structurizer did not resolve')
      if (!(b.kind === 'continue' && b.node === r.id) && !(b.kind === 'break' && (ends.has(b.node) || frames.some((f) => f.region?.id === b.node && f.kind === 'block')))) return refuse('the loop leaves to somewhere other than its end or an enclosing block\'s')
    }
    const set = new Set<string>()
    /** The loop's body once for the thread, under `cond`: the fault where it would go round again; a break to a
     *  block other than the loop's end sets that block's flag (`flags`). */
    const once = (cond: string, flags: boolean) => {
      this.open(`if (${cond}) {`)
      // (a thread goes round again where a continue is taken before any break: the branches in program order)
      const round = this.declare('kp_round', 'bool')
      this.line(`${round} = false;`)
      let decided = ''
      for (const ins of body) {
        this.ins = ins
        if (ins.op !== 'bra') { this.instruction(ins); continue }
        const b = this.branches.get(ins.index)!
        const g = this.guardExpr(ins) ?? 'true'
        const taken = `${decided ? `!(${decided}) && ` : ''}${g}`
        if (b.kind === 'continue') this.line(`${round} = ${round} || (${taken});`)
        else if (flags && !ends.has(b.node)) {
          const flag = this.flagName(`b${b.node}`)
          this.line(`${flag} = ${flag} || (${taken});`)
          set.add(`b${b.node}`)
        }
        decided = decided ? `${decided} || ${g}` : g
      }
      this.features.add('kp_trap')
      this.line(`if (${round}) { kp_fault_at(${fn.instructions[wait]!.line}u, 0u, ${FAULT_KIND.spin}u); }`)
      this.close()
    }
    const meet = () => {
      if (this.mem.globalStores) this.line('storageBarrier();')
      this.line('workgroupBarrier();')
    }
    // Where every way out of the loop leads to the end of one enclosing block (a break to it, or leaving the loop
    // and then a jump to it), the thread does nothing before that end: the wait moves there (spin-wait.ts), after
    // what the other threads run on the way (the write it waits for, where the compiler laid the loop out first).
    const parent = frames[frames.length - 1]?.region?.body
    const next = parent?.[parent.indexOf(r) + 1]
    // (a jump the structurizer's re-layout made, or an unguarded branch)
    const nextIns = next?.kind === 'instr' ? fn.instructions[next.index]! : undefined
    const leap = next?.kind === 'jump' ? next.target : nextIns?.op === 'bra' && !nextIns.guard ? this.branches.get(nextIns.index) : undefined
    const blockOf = (id: number | undefined) => frames.find((f) => f.kind === 'block' && f.region?.id === id)?.region
    const afterLoop = leap?.kind === 'break' ? blockOf(leap.node) : undefined
    const last = body[body.length - 1]!
    const fallsOut = !(last.op === 'bra' && !last.guard)
    const dests = new Set<StructRegion | undefined>(body.filter((ins) => ins.op === 'bra' && this.branches.get(ins.index)!.kind === 'break')
      .map((ins) => { const t = this.branches.get(ins.index)!.node; return t === r.id ? afterLoop : blockOf(t) }))
    if (fallsOut) dests.add(afterLoop)
    const to = dests.size === 1 ? [...dests][0] : undefined
    if (to) {
      const waiting = this.declare(`kp_wait${r.id}`, 'bool')
      const flag = this.flagName(`b${to.id}`)
      this.perThread(() => {
        this.line(`${waiting} = ${this.on};`)
        this.line(`${flag} = ${flag} || ${this.on};`)
        this.line(`${this.on} = false;`)
      })
      this.markOff()
      set.add(`b${to.id}`)
      const later = this.deferredWaits.get(to.id) ?? []
      later.push(() => {
        meet()
        this.perThread(() => {
          once(waiting, false)
          this.line(`${waiting} = false;`)
        })
      })
      this.deferredWaits.set(to.id, later)
      return set
    }
    meet()
    this.perThread(() => {
      once(this.on, true)
      if (set.size) this.line(`${this.on} = ${this.on} && !(${[...set].map((f) => this.flagName(f)).join(' || ')});`)
    })
    if (set.size) this.markOff()
    return set
  }

  /** Whether every active thread runs the same iterations of loop r: each branch that leaves or repeats it
   *  sits directly in its body (or in an `if` on a uniform predicate there) on a uniform predicate (or
   *  none), every other branch inside stays inside, and nothing exits. Such a loop is a plain WGSL loop
   *  whose breaks WGSL knows to be uniform. */
  private uniformLoop(r: StructRegion): boolean {
    const ok = (nodes: readonly StructNode[], top: boolean): boolean => nodes.every((n) => {
      if (n.kind === 'jump') return this.regionInside(n.target.node, r) || top
      if (n.kind !== 'instr') return this.uniformIf(n) ? ok(n.body.slice(1), top) : ok((n as StructRegion).body, false)
      const ins = this.fn.instructions[n.index]!
      if (ins.op === 'ret' || ins.op === 'exit' || ins.op === 'brx') return false
      if (ins.op !== 'bra') return true
      const b = this.branches.get(ins.index)
      if (b && this.regionInside(b.node, r)) return true
      return top && (!ins.guard || this.uniformRegs.has(ins.guard.reg))
    })
    return ok(r.body, true)
  }

  /** An `if` region whose branch predicate is uniform: every active thread takes the same side. */
  private uniformIf(n: StructNode): n is StructRegion {
    if (n.kind !== 'if') return false
    const br = this.fn.instructions[n.branch!]!
    return br.guard !== undefined && this.uniformRegs.has(br.guard.reg)
  }

  /** The body of a uniform loop (uniformLoop): escapes become WGSL continue/break; returns whether it ends
   *  with an unconditional continue. */
  private uniformLoopBody(nodes: readonly StructNode[], r: StructRegion, frames: Frame[], out: Set<string>): boolean {
    let segment: StructNode[] = []
    let endsWithContinue = false
    const flushSegment = () => {
      if (segment.length) for (const f of this.uniformSeq(segment, frames)) out.add(f)
      segment = []
    }
    const hasEscape = (x: StructNode): boolean => x.kind === 'jump' || (x.kind === 'instr' ? this.loopEscape(x, r) !== undefined : x.body.some(hasEscape))
    for (const n of nodes) {
      endsWithContinue = false
      if (this.uniformIf(n) && n.body.slice(1).some(hasEscape)) {
        flushSegment()
        this.ins = this.fn.instructions[n.branch!]!
        this.open(`if (!(${this.guardExpr(this.ins)!})) {`)
        this.uniformLoopBody(n.body.slice(1), r, [...frames, { kind: 'block', region: n, uniform: true }], out)
        this.close()
        continue
      }
      const e = this.loopEscape(n, r)
      if (!e) { segment.push(n); continue }
      flushSegment()
      if (e.guard) this.open(`if (${e.guard}) {`)
      if (e.target.kind === 'continue') this.line('continue;')
      else {
        // a block outside the loop: its flag, for the threads that are active, then leave the loop
        const flag = this.flagName(`b${e.target.node}`)
        out.add(`b${e.target.node}`)
        this.perThread(() => this.line(`if (${this.on}) { ${flag} = true; ${this.on} = false; }`))
        this.markOff()
        this.line('break;')
      }
      if (e.guard) this.close()
      endsWithContinue = !e.guard && e.target.kind === 'continue'
    }
    flushSegment()
    return endsWithContinue
  }

  /** The escape of a node directly in a uniform loop's body (see uniformLoop), if it is one. */
  private loopEscape(n: StructNode, r: StructRegion): { target: { kind: 'break' | 'continue'; node: number }; guard?: string } | undefined {
    if (n.kind === 'jump') return n.target.node === r.id || !this.regionInside(n.target.node, r) ? { target: n.target } : undefined
    if (n.kind !== 'instr') return undefined
    const ins = this.fn.instructions[n.index]!
    if (ins.op !== 'bra') return undefined
    const b = this.branches.get(ins.index)!
    if (b.node !== r.id && this.regionInside(b.node, r)) return undefined
    this.ins = ins
    const g = this.guardExpr(ins)
    return g ? { target: b, guard: g } : { target: b }
  }

  /** The instructions of a region that no loop inside it holds. */
  private ownInstructions(r: StructRegion): number[] {
    const out: number[] = []
    const walk = (nodes: readonly StructNode[]) => {
      for (const n of nodes) {
        if (n.kind === 'instr') out.push(n.index)
        else if (n.kind !== 'jump' && n.kind !== 'loop') walk(n.body)
      }
    }
    walk(r.body)
    return out
  }

  private regionInside(id: number, r: StructRegion): boolean {
    const t = this.regionById.get(id)!
    return t !== r && t.start >= r.start && t.end <= r.end
  }

  private markOff(): void {
    this.allOn = false
    this.onChanged = true
  }

  private uniformRegion(r: StructRegion, frames: Frame[]): Set<string> {
    const prevAll = this.allOn
    if (r.kind === 'if' && prevAll && this.uniformIf(r)) {
      // every thread active and the predicate uniform: a WGSL if (uniform to WGSL too), kp_on left as it is
      const inner = [...frames, { kind: r.kind, region: r, uniform: true } as Frame]
      const br = this.fn.instructions[r.branch!]!
      this.ins = br
      this.line(`// if ${r.label} (uniform: the whole block takes the same side)`)
      this.open(`if (!(${this.guardExpr(br)!})) {`)
      const set = this.uniformSeq(r.body, inner)
      this.close()
      if (set.size) {
        this.perThread(() => this.line(`${this.on} = ${this.on} && !(${[...set].map((f) => this.flagName(f)).join(' || ')});`))
        this.markOff()
      } else this.allOn = prevAll
      return set
    }
    if (r.kind === 'loop' && this.uniformLoop(r) && prevAll) {
      // written as if every thread stays active; written again with `if (kp_on)` where the body turns out to
      // leave some inactive (an escape), since the next iteration would then start with them off
      const mark = this.lines.length, sites = this.sites.length, depth = this.depth, changed = this.onChanged
      this.onChanged = false
      const set = this.uniformRegionAs(r, frames)
      if (!this.onChanged) { this.onChanged = changed; this.allOn = true; return set }
      this.lines.length = mark
      this.sites.length = sites
      this.depth = depth
      this.allOn = false
      this.onChanged = true
      return this.uniformRegionAs(r, frames)
    }
    const set = this.uniformRegionAs(r, frames)
    if (set.size) this.markOff()
    return set
  }

  private uniformRegionAs(r: StructRegion, frames: Frame[]): Set<string> {
    const inner = [...frames, { kind: r.kind, region: r, uniform: true } as Frame]
    if (r.kind === 'loop' && this.uniformLoop(r)) {
      // every active thread runs the same iterations: a plain WGSL loop, its breaks uniform to WGSL
      this.line(`// loop ${r.label} (it continues or ends alike for the whole block)`)
      // Its condition reads uniform registers, which predicated code writes in every invocation, active or
      // not. Where no thread of the block may reach the loop (a branch around it, an exit before it), it is
      // entered only if one does: otherwise it runs on values the skipped guard excluded, e.g. nvcc's
      // unrolled prologue counting a trip count rounded down to 0 past zero, 2^30 iterations of barriers.
      const guarded = !this.allOn && (frames.length > 1 || this.decls.has('kp_exited'))
      if (guarded) {
        this.features.add('kp_block_count')
        const n = this.declare('kp_n', 'u32', false)
        const base = this.declare('kp_rbase', 'u32', false)
        this.line(`${n} = 0u;`)
        this.perThread(() => this.line(`${n} = ${n} + select(0u, 1u, ${this.on});`))
        this.open(`if (kp_block_count(${n}, &${base}) != 0u) {`)
      }
      const out = new Set<string>()
      this.open('loop {')
      const endsWithContinue = this.uniformLoopBody(r.body, r, inner, out)
      if (!endsWithContinue) this.line('break;')
      this.close()
      if (guarded) this.close()
      return out
    }
    const save = this.declare(`kp_s${r.id}`, 'bool')
    const on = this.on
    let set: Set<string>
    const wasAll = this.allOn
    this.line(`// ${r.kind} ${r.label} (predicated: it contains a barrier or warp collective)`)
    // inside, some threads may be inactive; after it, kp_on is restored (less the escapes)
    if (r.kind !== 'block') this.allOn = false
    if (r.kind === 'if') {
      const br = this.fn.instructions[r.branch!]!
      this.ins = br
      this.perThread(() => {
        this.line(`${save} = ${on};`)
        this.line(`${on} = ${on} && !(${this.guardExpr(br)!});`)
      })
      set = this.uniformSeq(r.body, inner)
    } else if (r.kind === 'block') {
      this.perThread(() => {
        this.line(`${save} = ${on};`)
        this.line(`${this.flagName(`b${r.id}`)} = false;`)
      })
      set = this.uniformSeq(r.body, inner)
      set.delete(`b${r.id}`)
    } else {
      const inLoop = this.declare(`kp_l${r.id}`, 'bool')
      const cont = this.flagName(`c${r.id}`)
      this.perThread(() => {
        this.line(`${save} = ${on};`)
        this.line(`${inLoop} = ${on};`)
      })
      this.open('loop {')
      this.perThread(() => {
        this.line(`${on} = ${inLoop};`)
        this.line(`${cont} = false;`)
      })
      set = this.uniformSeq(r.body, inner)
      set.delete(`c${r.id}`)
      // a thread stays in the loop only if it branched back; the loop goes on while any thread does
      const n = this.declare('kp_n', 'u32', false)
      this.line(`${n} = 0u;`)
      this.perThread(() => {
        this.line(`${inLoop} = ${cont};`)
        this.line(`${n} = ${n} + select(0u, 1u, ${inLoop});`)
      })
      const base = this.declare('kp_rbase', 'u32', false)
      this.line(`if (kp_block_count(${n}, &${base}) == 0u) { break; }`)
      this.features.add('kp_block_count')
      this.close()
    }
    this.perThread(() => this.line(`${on} = ${save}${set.size ? ` && !(${[...set].map((f) => this.flagName(f)).join(' || ')})` : ''};`))
    this.allOn = wasAll && !set.size
    // the waits moved to this block's end (spinLoop)
    for (const wait of this.deferredWaits.get(r.id) ?? []) wait()
    this.deferredWaits.delete(r.id)
    return set
  }

  /** kp_smem's words, or undefined without shared memory: `words` before the dynamic ones, `reserved` after them
   *  (the reserved region and up to 3 of alignment), `dynamic` when kp_dyn_shared_words is counted in. */
  private sharedWords(): { words: number; reserved: number; dynamic: boolean } | undefined {
    const mem = this.mem
    if (!mem.usesShared) return undefined
    const dynamic = mem.hasDynamic || mem.reserved
    return { words: dynamic ? mem.dynBase / 4 : Math.max(1, mem.dynBase / 4), reserved: mem.reserved ? RESERVED_SMEM / 4 + 3 : 0, dynamic }
  }

  /** kp_smem's length as its declaration writes it (finish), or undefined without shared memory. */
  private sharedWordsExpr(): string | undefined {
    const sw = this.sharedWords()
    if (!sw) return undefined
    return sw.dynamic ? `${sw.words}u + kp_dyn_shared_words${sw.reserved ? ` + ${sw.reserved}u` : ''}` : `${sw.words}u`
  }

  /** Where the variant with shared memory in the arena finds its slices (emit-arena-shared.ts), and a slice's
   *  words; undefined for a kernel without shared memory, or one that has no such variant: a coarsened one
   *  (its invocations run several CUDA threads) or one split at grid syncs (which keeps shared memory in a
   *  workspace of its own between phases). */
  arenaLayout(): { workspaceAt: number; words: { fixed: number; dynamic: boolean } } | undefined {
    const sw = this.sharedWords()
    if (!sw || this.coarse > 1 || this.phases > 1) return undefined
    return { workspaceAt: this.workspaceVec * 16, words: { fixed: sw.words + sw.reserved, dynamic: sw.dynamic } }
  }

  /** Where a grid-sync kernel reads its workspace's byte address: the vec4 after its parameters (writePhases). */
  private get workspaceVec(): number {
    return Math.ceil(this.paramBytes / 16)
  }

  private get workspaceAddress(): string {
    return `kp_params[${this.workspaceVec}u].x`
  }

  /** The 32-bit words of a register's value, and how to set it from them. */
  private regWords(id: number): { read: string[]; write: (words: string[]) => string } {
    const e = this.useReg(id)
    switch (this.regStore[id]) {
      case 'bool': return { read: [`select(0u, 1u, ${e})`], write: ([a]) => `${e} = ${a} != 0u;` }
      case 'f32': return { read: [`bitcast<u32>(${e})`], write: ([a]) => `${e} = bitcast<f32>(${a});` }
      case 'u64': return { read: [`${e}.x`, `${e}.y`], write: ([a, b]) => `${e} = vec2<u32>(${a}, ${b});` }
      default: return { read: [e], write: ([a]) => `${e} = ${a};` }
    }
  }

  /**
   * The kernel in phases, one per stretch between its grid syncs (grid-sync.ts): phase k runs when the
   * pipeline's kp_phase is k. At the end of a phase the block's state goes to the launch's workspace (its
   * address after the parameters), at the start of the next it comes back: per block, the block-uniform
   * registers live there (restored through workgroup memory with workgroupUniformLoad, so that WGSL still
   * knows them uniform), then per thread whether it is active and has exited, its other live registers and its
   * local memory, then the block's shared memory.
   */
  private writePhases(root: Frame, plan: GridSyncPlan): void {
    const segments = plan.phases
    const kept = plan.live
    const size = (r: number) => (this.regStore[r] === 'u64' ? 2 : 1)
    const uniformAt = new Map<number, number>()
    const threadAt = new Map<number, number>()
    let u = 0
    let t = 2 // [0] active, [1] exited
    for (const r of kept) {
      if (this.uniformRegs.has(r)) { uniformAt.set(r, u); u += size(r) } else { threadAt.set(r, t); t += size(r) }
    }
    const local = this.mem.localBytes / 4
    this.gridWords = { uniform: u, thread: t + local }
    const T = t + local
    const smem = this.sharedWordsExpr()
    // the workspace is global memory, read and written as the kernel's own accesses are (emit-memory.ts)
    const memAt = (i: string) => loadWord(this, 'global', i)
    const memSet = (i: string, v: string) => storeWord(this, 'global', i, v)
    const invocations = this.coarse > 1 ? 'kp_wg' : 'kp_nt'
    const base = () => {
      this.line(`let kp_gs_stride = ${u}u + kp_nt * ${T}u${smem ? ` + ${smem}` : ''};`)
      this.line(`let kp_gs = (${this.workspaceAddress} >> 2u) + (kp_ctaid.x + kp_launch.nctaid.x * (kp_ctaid.y + kp_launch.nctaid.y * kp_ctaid.z)) * kp_gs_stride;`)
    }
    const perThreadState = (save: boolean) => this.perThread(() => {
      this.open('{')
      this.line(`let kp_gt = kp_gs + ${u}u + kp_t * ${T}u;`)
      const exited = this.flagName('x')
      if (save) {
        memSet('kp_gt', `select(0u, 1u, ${this.on})`)
        memSet('kp_gt + 1u', `select(0u, 1u, ${exited})`)
      } else {
        this.line(`${this.on} = ${memAt('kp_gt')} != 0u;`)
        this.line(`${exited} = ${memAt('kp_gt + 1u')} != 0u;`)
      }
      for (const [r, at] of threadAt) {
        const w = this.regWords(r)
        if (save) w.read.forEach((v, i) => memSet(`kp_gt + ${at + i}u`, v))
        else this.line(w.write(w.read.map((_, i) => memAt(`kp_gt + ${at + i}u`))))
      }
      if (local) {
        this.open(`for (var kp_i = 0u; kp_i < ${local}u; kp_i = kp_i + 1u) {`)
        if (save) memSet(`kp_gt + ${t}u + kp_i`, loadWord(this, 'local', 'kp_i'))
        else storeWord(this, 'local', 'kp_i', memAt(`kp_gt + ${t}u + kp_i`))
        this.close()
      }
      this.close()
    })
    const sharedCopy = (save: boolean) => {
      if (!smem) return
      this.open(`for (var kp_i = kp_lidx; kp_i < ${smem}; kp_i = kp_i + ${invocations}) {`)
      const at = `kp_gs + ${u}u + kp_nt * ${T}u + kp_i`
      if (save) memSet(at, loadWord(this, 'shared', 'kp_i'))
      else storeWord(this, 'shared', 'kp_i', memAt(at))
      this.close()
    }
    if (u) this.moduleDecls.set('kp_gsu', `var<workgroup> kp_gsu: array<u32, ${u}u>;`)
    this.perThread(() => this.line(`${this.on} = true;`))
    this.allOn = true
    segments.forEach((seg, k) => {
      this.line(`// phase ${k} of ${segments.length}${k ? ' (after a grid-wide sync)' : ''}`)
      this.open(`if (kp_phase == ${k}u) {`)
      base()
      if (k > 0) {
        // block-uniform registers: read once by the block's first invocation, handed to all as uniform values
        if (u) {
          this.open('if (kp_lidx == 0u) {')
          for (let i = 0; i < u; i++) this.line(`kp_gsu[${i}] = ${memAt(`kp_gs + ${i}u`)};`)
          this.close()
          for (const [r, at] of uniformAt) {
            const w = this.regWords(r)
            this.line(w.write(w.read.map((_, i) => `workgroupUniformLoad(&kp_gsu[${at + i}])`)))
          }
        }
        perThreadState(false)
        sharedCopy(false)
        this.line('workgroupBarrier();')
        this.allOn = false
      }
      this.uniformSeq(seg.nodes, [root])
      if (seg.branch) {
        // the branch that ends the phase (a loop's back edge, an `if`'s skip test): whether it is taken, for the
        // launch to read (grid-launch.ts): a word after the blocks' state, cleared by the launch before this
        // phase, set by every thread that takes it (around grid.sync(), all of the grid's threads or none do)
        const br = this.fn.instructions[seg.branch.at]!
        this.ins = br
        this.perThread(() => {
          this.open(`if (${this.on} && ${this.guardExpr(br)!}) {`)
          memSet(`(${this.workspaceAddress} >> 2u) + kp_launch.nctaid.x * kp_launch.nctaid.y * kp_launch.nctaid.z * kp_gs_stride`, '1u')
          this.close()
        })
      }
      if (k < segments.length - 1) {
        // the block's shared memory once every thread is done with it
        this.line('workgroupBarrier();')
        if (u) {
          this.open('if (kp_lidx == 0u) {')
          for (const [r, at] of uniformAt) this.regWords(r).read.forEach((v, i) => memSet(`kp_gs + ${at + i}u`, v))
          this.close()
        }
        perThreadState(true)
        sharedCopy(true)
      }
      this.close()
    })
    this.phases = segments.length
    this.phaseBranches = segments.flatMap((seg, k) => (seg.branch ? [{ phase: k, to: seg.branch.to }] : []))
  }

  /** Irreducible control flow, or software binary64 through shared sites (no barriers): a dispatcher over the
   *  basic blocks. With `f64Services` each call of a software binary64 function ends its case and jumps to the
   *  function's own case (f64-services.ts). */
  private writeDispatcher(inRounds: boolean): void {
    const fn = this.fn
    const n = fn.instructions.length
    const starts = new Set<number>([0])
    for (const at of fn.labels.values()) if (at < n) starts.add(at)
    fn.instructions.forEach((ins, i) => { if ((ins.op === 'bra' || ins.op === 'ret' || ins.op === 'exit') && i + 1 < n) starts.add(i + 1) })
    // (in rounds a guarded wait is a block of its own; an unguarded one ends its case, and the case it resumes in
    // goes on with the block: rounds.ts)
    if (inRounds) fn.instructions.forEach((ins, i) => { if (this.isSync(ins) && ins.guard) { starts.add(i); if (i + 1 < n) starts.add(i + 1) } })
    const sorted = [...starts].sort((a, b) => a - b)
    const blockAt = new Map(sorted.map((s, i) => [s, i]))
    const done = sorted.length
    // (cases past `done`: the parts of a block after a shared call, and the shared calls' own cases)
    let cases = done
    const services = new Map<string, number>()
    const host: ServiceHost = {
      newCase: () => ++cases,
      serviceCase: (name) => {
        let c = services.get(name)
        if (c === undefined) services.set(name, c = ++cases)
        return c
      },
      serviceVar: (name, k) => this.declare(`${name.replace(/^kp_/, 'kp_s_')}_${k < 0 ? 'r' : k}`, k < 0 ? F64_SERVICES[name]!.result : F64_SERVICES[name]!.args[k]!, false),
      pc: '',
    }
    if (this.f64Services) this.declare('kp_ret', 'u32', false)
    // (in rounds a thread's program counter lives across rounds, one per CUDA thread)
    const pc = inRounds ? this.declare('kp_pc', 'u32') : 'kp_pc'
    host.pc = pc
    const rounds = inRounds ? new Rounds(this, pc) : undefined
    const dispatch = () => this.dispatchCases(sorted, blockAt, done, host, services, rounds)
    if (rounds) {
      rounds.loop(done, dispatch)
      return
    }
    this.line('var kp_pc = 0u;')
    this.open('loop {')
    dispatch()
    this.line(`if (kp_pc == ${done}u) { break; }`)
    this.close()
  }

  /** The dispatcher's `switch` over the blocks starting at `sorted` (writeDispatcher). */
  private dispatchCases(sorted: number[], blockAt: Map<number, number>, done: number, host: ServiceHost, services: Map<string, number>, rounds: Rounds | undefined): void {
    const fn = this.fn
    const n = fn.instructions.length
    const pc = host.pc
    this.open(`switch ${pc} {`)
    sorted.forEach((s, b) => {
      const end = sorted[b + 1] ?? n
      const first = fn.instructions[s]!
      if (rounds && this.isSync(first) && first.guard) {
        this.ins = first
        rounds.waitCases(first, b, b + 1 < done ? b + 1 : done, host.newCase(), this.guardExpr(first)!)
        return
      }
      this.open(`case ${b}u: {`)
      const lets = new Set<string>()
      let fell = true
      for (let i = s; i < end; i++) {
        const ins = fn.instructions[i]!
        this.ins = ins
        const g = this.guardExpr(ins)
        if (ins.op === 'bra') {
          const t = ins.operands[0]
          const to = t?.kind === 'label' ? fn.labels.get(t.name) : undefined
          if (to === undefined) this.refuse('a branch without a label target')
          const tb = to >= n ? done : blockAt.get(to)!
          if (g) { this.line(`${pc} = select(${b + 1 < done ? b + 1 : done}u, ${tb}u, ${g});`) } else this.line(`${pc} = ${tb}u;`)
          fell = false
        } else if (ins.op === 'ret' || ins.op === 'exit') {
          this.line(g ? `${pc} = select(${b + 1}u, ${done}u, ${g});` : `${pc} = ${done}u;`)
          fell = false
        } else if (ins.op === 'brx') this.refuse('indirect branches (brx.idx)')
        else if (rounds && this.isSync(ins)) {
          // the run ends at the wait; the case it resumes in goes on with the block
          const resume = host.newCase()
          rounds.arrive(ins, resume)
          this.close()
          this.open(`case ${resume}u: {`)
          lets.clear()
          rounds.resume(ins, resume)
        } else if (!this.f64Services) {
          if (g) this.open(`if (${g}) {`)
          this.instruction(ins)
          if (g) this.close()
        } else {
          const at = this.lines.length
          this.instruction(ins)
          const written = this.lines.splice(at)
          const indent = '  '.repeat(this.depth)
          if (!serviceCalls(written.join('\n'))) {
            if (g) this.lines.push(`${indent}if (${g}) {`, ...written.map((l) => `  ${l}`), `${indent}}`)
            else this.lines.push(...written)
            continue
          }
          // a guarded instruction with a shared call runs in a case of its own
          const after = g ? host.newCase() : 0
          if (g) {
            const own = host.newCase()
            this.line(`${pc} = select(${after}u, ${own}u, ${g});`)
            this.close()
            this.open(`case ${own}u: {`)
            lets.clear()
          }
          const split = splitServiceCalls(written, indent, host, lets)
          this.lines.push(...split.lines)
          this.inlineSoft += split.inline
          if (g) {
            this.line(`${pc} = ${after}u;`)
            this.close()
            this.open(`case ${after}u: {`)
            lets.clear()
          }
        }
      }
      if (fell) this.line(`${pc} = ${b + 1}u;`)
      this.close()
    })
    for (const [name, c] of services) {
      this.open(`case ${c}u: {`)
      this.line(`${host.serviceVar(name, -1)} = ${name}(${F64_SERVICES[name]!.args.map((_, k) => host.serviceVar(name, k)).join(', ')});`)
      this.line(`${pc} = kp_ret;`)
      this.close()
    }
    this.open('default: {')
    this.line(`${pc} = ${done}u;`)
    this.close()
    this.close()
  }

  /** Any instruction that is not control flow. */
  instruction(ins: Instruction): void {
    this.ins = ins
    this.line(`// ${ins.text.replace(/\s+/g, ' ').replace(/\*\//g, '* /')}`)
    if (emitMemoryOp(this, ins)) return
    if (this.isSync(ins)) return this.refuse('internal: a barrier or collective outside predicated code')
    emitOp(this, ins)
  }

  // --- the module ---

  /** More software binary64 operations than SOFT_F64_LIMIT at sites of their own. */
  get softOverLimit(): boolean {
    return (this.f64Services ? this.inlineSoft : this.softF64) + this.softTensor > SOFT_F64_LIMIT
  }

  /** Whether the kernel, written with each software f64 operation at a site of its own, should be written with
   *  shared sites instead (f64-services.ts): too many of them, and no barrier or collective (the dispatcher's
   *  control flow is not uniform) or only waits the rounds hold (rounds.ts). */
  get wantsF64Services(): boolean {
    return !this.f64Services && this.softOverLimit && this.softF64 > 0 && (!this.sync || !this.roundsProblem)
  }

  /** The complete WGSL module of the kernel. */
  finish(): WgslKernel {
    // each software f64 operation is a few hundred lines of WGSL once the shader compiler inlines it: past this
    // many the pipeline compile takes minutes (SwiftShader: a libdevice double-precision math kernel, ~140 of
    // them, did not finish in 120 s), so such a kernel is refused, with the count
    if (this.deferredWaits.size) throw new Error(`internal: a wait moved to the end of block ${[...this.deferredWaits.keys()].join(', ')}, which was not written`)
    // (with f64Services only the calls left inline count: f64-services.ts)
    if (this.softOverLimit) {
      const soft = this.softF64 + this.softTensor
      this.refuse(`${soft} f64 operations in software binary64 (WGSL has no f64)${this.softTensor ? `, ${this.softTensor} of them tensor-core products` : ''}${this.f64Services ? `, ${this.inlineSoft + this.softTensor} of them inline` : ''}: more than ${SOFT_F64_LIMIT} ${this.sync ? 'in a kernel with barriers or warp collectives ' : ''}make a shader too large to compile in reasonable time`, undefined)
    }
    const fn = this.fn
    const mem = this.mem
    const head: string[] = []
    // (a grid-sync kernel finds its workspace's address in the vec4 after its parameters: writePhases)
    const arena = this.sharedInArena && mem.usesShared
    const paramVecs = Math.max(1, this.workspaceVec + (this.phases > 1 || arena ? 1 : 0))
    const sg = this.features.has('kp_sg')
    // (WGSL's enable directives come before every declaration)
    if (sg) head.push('enable subgroups;')
    head.push(`// ${fn.name}: translated from PTX by emit-wgsl (@kernelpack/webgpu)`)
    // whether every warp is one subgroup, found at the kernel's start (emit-collective.ts)
    if (sg) head.push('var<workgroup> kp_sg_bad: atomic<u32>;')
    head.push(`@group(0) @binding(0) var<storage, read_write> kp_mem: array<${mem.globalAtomic ? 'atomic<u32>' : 'u32'}>;`)
    head.push(`@group(0) @binding(1) var<uniform> kp_params: array<vec4<u32>, ${paramVecs}>;`)
    head.push('struct KpLaunch { nctaid: vec3<u32>, kernel_id: u32, ctaid_base: vec3<u32>, pad: u32 }')
    head.push('@group(0) @binding(2) var<uniform> kp_launch: KpLaunch;')
    // (a kernel with device printf sees the buffer's printf area after the record: layout.ts PRINTF_BYTES)
    head.push(`@group(0) @binding(3) var<storage, read_write> kp_fault: array<atomic<u32>${this.printf.length ? '' : ', 4'}>;`)
    if (this.printf.length) head.push('var<private> kp_pbar: u32;', 'var<private> kp_pcol: u32;', 'var<private> kp_pseq: u32;')
    head.push('override kp_ntid_x: u32 = 1u;', 'override kp_ntid_y: u32 = 1u;', 'override kp_ntid_z: u32 = 1u;')
    head.push('override kp_split: bool = true;')
    if (this.phases > 1) head.push('override kp_phase: u32 = 0u;')
    // runs of exact fma sites through one loop each (fma-batch.ts)
    this.lines = batchExactFma(this.lines)
    const body0 = this.lines.join('\n')
    if (mem.usesShared && (mem.hasDynamic || mem.reserved)) head.push('override kp_dyn_shared_words: u32 = 1u;')
    if (/\bkp_dyn_shared_bytes\b/.test(body0)) head.push('override kp_dyn_shared_bytes: u32 = 0u;')
    // (the exact fma.rn.f32 where the adapter's fma() may round twice: backend.ts sets it per adapter)
    if (/\bkp_fma_(rn|batch)\(/.test(body0)) head.push('override kp_fma_exact: bool = true;')
    head.push('override kp_nt: u32 = kp_ntid_x * kp_ntid_y * kp_ntid_z;')
    if (this.coarse > 1) {
      // a coarsened kernel runs kp_k ≤ ${this.coarse} CUDA threads in each of kp_wg invocations (README.md)
      head.push(`override kp_k: u32 = ${this.coarse}u;`, 'override kp_wg: u32 = (kp_nt + kp_k - 1u) / kp_k;')
    }
    for (const v of [...this.varsUsed].sort((a, b) => a - b)) head.push(`override kp_var_${v}: u32;`)
    let workgroupBytes = sg ? 4 : 0
    // (shared memory in the arena: the workgroup's slice starts at word kp_sb, set at the kernel's start)
    if (arena) head.push('var<private> kp_sb: u32;')
    else if (mem.usesShared) {
      // (the reserved region: its words and up to 3 of alignment after the dynamic ones)
      head.push(`var<workgroup> kp_smem: array<${mem.sharedAtomic ? 'atomic<u32>' : 'u32'}, ${this.sharedWordsExpr()!}>;`)
      workgroupBytes += mem.dynBase + (mem.reserved ? RESERVED_SMEM + 12 : 0)
    }
    // (a coarsened kernel's invocation keeps each of its CUDA threads' local memory, the current one's from kp_lc)
    if (mem.localBytes) head.push(`var<private> kp_lmem: array<u32, ${(mem.localBytes / 4) * this.coarse}u>;`, ...(this.coarse > 1 ? ['var<private> kp_lc: u32;'] : []))
    for (const [, d] of syncDeclarations(this)) { head.push(d.code); workgroupBytes += d.bytes }
    if (this.rounds) workgroupBytes += ROUNDS_WORKGROUP_BYTES
    for (const [, d] of this.moduleDecls) head.push(d)
    // (a grid-sync kernel's block-uniform registers pass through workgroup memory: writePhases)
    workgroupBytes += this.gridWords.uniform * 4
    let body = this.lines.join('\n')
    let regDecls = [...this.usedRegs].sort((a, b) => a - b).map((id) => {
      const s = this.regStore[id]!
      const t = s === 'u64' ? 'vec2<u32>' : s
      return `  var ${this.regName[id]}: ${this.coarse > 1 && !this.uniformRegs.has(id) ? `array<${t}, ${this.coarse}>` : t};`
    })
    let otherDecls = [...this.decls.values()].map((d) => `  ${d}`)
    if (this.f64Services || this.rounds) {
      const vars = [...this.usedRegs].sort((a, b) => a - b).map((id) => ({ name: this.regName[id]!, type: this.regStore[id] === 'u64' ? 'vec2<u32>' : this.regStore[id]!, perThread: true }))
      for (const d of this.decls.values()) {
        const m = /^var (\w+): (?:array<(.+), \d+>|(.+));$/.exec(d)
        if (!m) throw new Error(`internal: a declaration ${d}`)
        vars.push({ name: m[1]!, type: m[2] ?? m[3]!, perThread: m[2] !== undefined })
      }
      ;({ body, decls: regDecls } = variablesInArrays(body, vars, this.coarse))
      otherDecls = []
    }
    const builtins = this.coarse > 1
      ? [['workgroup_id', 'kp_wid', 'vec3<u32>'], ['local_invocation_index', 'kp_lidx', 'u32']]
      : [['local_invocation_id', 'kp_tid', 'vec3<u32>'], ['workgroup_id', 'kp_wid', 'vec3<u32>'], ['local_invocation_index', 'kp_lidx', 'u32'],
          ...(sg ? [['subgroup_invocation_id', 'kp_sg_id', 'u32'], ['subgroup_size', 'kp_sg_size', 'u32']] : []),
          ...(arena ? [['num_workgroups', 'kp_nwg', 'vec3<u32>']] : [])]
    const entry = [this.coarse > 1 ? '@compute @workgroup_size(kp_wg)' : '@compute @workgroup_size(kp_ntid_x, kp_ntid_y, kp_ntid_z)',
      `fn kp_main(${builtins.map(([b, n, t]) => `@builtin(${b}) ${n}: ${t}`).join(', ')}) {`]
    /** The module, with its global accesses checked (the thread's first fault recorded when it returns) or,
     *  for launches that access.ts proves in range, unchecked. */
    const assemble = (unchecked: boolean): string => {
      const helpers = [...memoryHelpers(this, unchecked), ...this.helpers.values()]
      const libNames = new Set([...this.features].filter((f) => f in WGSL_LIB))
      for (const h of [body, ...helpers]) for (const c of libCalls(h)) libNames.add(c)
      const lib = collectLib(libNames)
      // with checked global accesses the kernel is a function of its own, and its entry records the thread's
      // first fault when the kernel returns (wherever it returns), outside the kernel's control flow
      const checked = checksGlobal(this) && !unchecked
      const main = [
        ...(checked ? [`fn kp_kernel(${builtins.map(([, n, t]) => `${n}: ${t}`).join(', ')}) {`] : entry),
        ...(this.coarse > 1 ? [] : ['  let kp_t = kp_lidx;']),
        ...(arena ? arenaSliceStart(this.workspaceAddress, this.sharedWordsExpr()!, mem.sharedAtomic) : []),
        ...(sg ? [
          '  atomicOr(&kp_sg_bad, select(1u, 0u, kp_sg_size == 32u && kp_sg_id == (kp_lidx & 31u)));',
          '  let kp_sg_ok = workgroupUniformLoad(&kp_sg_bad) == 0u;',
        ] : []),
        '  let kp_ctaid = select(kp_wid, kp_wid + kp_launch.ctaid_base, kp_split);',
        ...regDecls,
        ...otherDecls,
        body,
        '}',
        ...(checked ? ['', ...entry, `  kp_kernel(${builtins.map(([, n]) => n).join(', ')});`, '  kp_fault_flush();', '}'] : []),
      ]
      const text = [...head, '', ...lib, ...helpers, '', ...main, ''].join('\n')
      return arena ? sharedToArena(text, this.sharedWordsExpr()!) : text
    }
    const wgsl = assemble(false)
    const sites = this.provenSites()
    const features: string[] = sg ? ['subgroups'] : []
    const out: WgslKernel = {
      name: fn.name, wgsl, entryPoint: 'kp_main', paramBytes: this.paramBytes, paramOffsets: this.paramOffsets,
      workgroupBytes, memory: mem.globalAtomic ? 'atomic-u32' : 'u32', features, variables: [...this.varsUsed].sort((a, b) => a - b),
    }
    if (this.printf.length) out.printf = [...this.printf]
    if (this.phases > 1) {
      const sw = this.sharedWords()
      const shared = { fixed: sw ? sw.words + sw.reserved : 0, dynamic: !!sw?.dynamic }
      out.gridSync = { phases: this.phases, workspaceAt: this.workspaceVec * 16, uniformWords: this.gridWords.uniform, threadWords: this.gridWords.thread, sharedWords: shared, ...(this.phaseBranches.length ? { branches: this.phaseBranches } : {}) }
    }
    if (this.softF64) out.softF64 = true
    if (this.softTensor) out.softTensor = true
    if (sites && !arena) out.unchecked = { wgsl: assemble(true), sites, ...(this.trips.size ? { trips: [...this.trips].sort((a, b) => a[0] - b[0]) } : {}) }
    // (the lanes' exchange of warp collectives in rounds: rounds.ts)
    const perThread = scratchBytesPerThread(this) + (this.moduleDecls.has('kp_xpc') ? ROUNDS_EXCHANGE_BYTES : 0)
    if (perThread) out.workgroupBytesPerThread = perThread
    const req = fn.directives.reqntid
    if (req?.length) out.requiredBlock = [req[0]!, req[1] ?? 1, req[2] ?? 1]
    const max = fn.directives.maxntid
    if (max?.length) out.maxThreads = max[0]! * (max[1] ?? 1) * (max[2] ?? 1)
    return out
  }
}

/**
 * A dispatcher's variables (registers and the writer's own) as elements of one function-scope array per type,
 * indexed through a zero the shader compiler cannot see (f64-services.ts): a loop over a switch of hundreds of
 * cases with every variable promoted to SSA values compiles on SwiftShader in a time that grows with cases ×
 * variables, or not at all (libdevice's double-precision math: the GPU process gone after two minutes); an
 * array indexed at run time is not split into variables (spirv-opt's scalar replacement needs constant
 * indices), so each access is a load or a store. A variable of each CUDA thread of a coarsened kernel
 * (`name[kp_c]`) gets `coarse` elements.
 */
export function variablesInArrays(body: string, vars: ReadonlyArray<{ name: string; type: string; perThread: boolean }>, coarse = 1): { body: string; decls: string[] } {
  if (!vars.length) return { body, decls: [] }
  const size = new Map<string, number>()
  const at = new Map<string, { ref: string; perThread: boolean }>()
  const arrays = new Map<string, string>()
  for (const v of vars) {
    if (!arrays.has(v.type)) arrays.set(v.type, `kp_vars${arrays.size}`)
    const k = size.get(v.type) ?? 0
    const many = v.perThread && coarse > 1
    size.set(v.type, k + (many ? coarse : 1))
    at.set(v.name, { ref: `${arrays.get(v.type)!}[${k}u${many ? ' + kp_c' : ''} + kp_z]`, perThread: many })
  }
  const names = new RegExp(`(?<![\\w.])(${[...at.keys()].join('|')})\\b(\\[kp_c\\])?`, 'g')
  return {
    body: body.replace(names, (_, n: string, c: string | undefined) => {
      const v = at.get(n)!
      if (!!c !== v.perThread) throw new Error(`internal: ${n} read ${c ? 'with' : 'without'} [kp_c]`)
      return v.ref
    }),
    decls: [
      // (the launch's grid width is at most 65535: the shift is 0)
      '  let kp_z = kp_launch.nctaid.x >> 31u;',
      ...[...arrays].map(([t, a]) => `  var ${a}: array<${t}, ${size.get(t)!}>;`),
    ],
  }
}

/**
 * The 64-bit registers computed in u32 (README.md, "Narrowing to u32"): every definition a ring operation
 * (`add`/`sub`, `mul.lo`/`mul.wide`, `mad.lo`/`mad.wide`, `shl` by an immediate below 32, `and/or/xor/not`,
 * `mov`, `selp`, `cvt` from ≤ 32 bits, `cvta`, a load) and every use an address, a ring operation into
 * another such register, or a conversion to ≤ 32 bits: the low word of the result depends only on the low
 * words of the operands (arithmetic modulo 2^32), and the high word is never read. Addresses are below 2^32
 * (the arena), so a pointer's arithmetic runs on one word instead of carries across two (vector add: about
 * 8 % of its time on SwiftShader).
 */
export function narrowRegisters(fn: IrFunction, classes: readonly RegisterClass[]): Set<number> {
  const ins = fn.instructions
  const int = (t: string | undefined) => !!t && /^[bsu](8|16|32|64)$/.test(t)
  const ring = (x: Instruction): boolean => {
    const t = x.type ?? ''
    switch (x.op) {
      case 'add': case 'sub': return int(t) && !x.flags.sat && !x.flags.cc
      case 'mul': case 'mad': return int(t) && (x.part === 'lo' || x.part === 'wide') && !x.flags.cc
      case 'shl': { const k = x.operands[2]; return k?.kind === 'imm' && k.imm.kind === 'int' && k.imm.value < 32n }
      case 'and': case 'or': case 'xor': case 'not': case 'mov': case 'selp': case 'cvta': case 'ld': return true
      case 'cvt': { const [, src] = (x.types ?? []) as string[]; return int(src) && /(8|16|32)$/.test(src!) }
      default: return false
    }
  }
  const candidates = new Set<number>()
  const defsOf = new Map<number, Instruction[]>()
  for (const x of ins) for (const r of definedRegisters(x)) (defsOf.get(r) ?? defsOf.set(r, []).get(r)!).push(x)
  for (const [r, defs] of defsOf) if (classes[r] === 'i64' && defs.every(ring)) candidates.add(r)
  // drop a candidate with a use that needs its high word, until none is left
  const addressBases = (x: Instruction) => x.operands.flatMap((o) => (o.kind === 'addr' && o.base?.kind === 'reg' ? [o.base.id] : []))
  for (let changed = true; changed;) {
    changed = false
    for (const x of ins) {
      const used = usedRegisters(x).filter((r) => candidates.has(r))
      if (!used.length) continue
      const bases = new Set(addressBases(x))
      const dsts = definedRegisters(x)
      // an integer conversion to 32 bits or fewer reads only the low word (not one to a float: that reads all 64)
      const truncates = x.op === 'cvt' && /^[bsu](8|16|32)$/.test(((x.types ?? []) as string[])[0] ?? '')
      const intoNarrow = ring(x) && x.op !== 'ld' && dsts.length > 0 && dsts.every((d) => candidates.has(d))
      for (const r of used) {
        // a use as an address, as the guard of the instruction (never a 64-bit register), or into a narrowed result
        const asValue = x.operands.some((o) => o.kind === 'reg' && o.id === r) || x.operands.some((o) => o.kind === 'vec' && o.items.some((i) => i.kind === 'reg' && i.id === r))
        if (!asValue && bases.has(r)) continue
        if (truncates || intoNarrow) continue
        candidates.delete(r)
        changed = true
      }
    }
  }
  return candidates
}

/**
 * The block barriers at which WGSL needs `storageBarrier()` beside `workgroupBarrier()` (which orders only
 * workgroup memory), where CUDA's `__syncthreads()` orders the block's global accesses too: a barrier
 * before which a thread may have written global memory that no storageBarrier has ordered yet, while global
 * memory is touched after it (RAW, WAW), or before which it may have read global memory not yet ordered,
 * while global memory is written right after it (WAR). What is not ordered at one barrier is carried to the
 * next (barrier regions, @kernelpack/ptx), so a read before one barrier and a write two barriers later still
 * get one between them. A tiled matmul then orders global memory once per tile (the barrier before the
 * regions whose exit path stores the result) instead of at both barriers: storageBarrier made its loop 40 %
 * slower on SwiftShader. Global or generic `st`/`atom`/`red` write, `ld`/`ldu`/`atom`/`red` read, `cp` both.
 */
export function globalBarriers(fn: IrFunction, cfg: Cfg = buildCfg(fn)): { at: Set<Instruction>; afterLoop: Set<number> } {
  const ins = fn.instructions
  const regions = analyzeBarrierRegions(fn, cfg)
  const isCut = new Set(regions.cuts)
  const global = (x: Instruction) => x.space === undefined || x.space === 'global' || x.space === 'generic'
  const writes = (x: Instruction) => x.op === 'cp' || ((x.op === 'st' || x.op === 'atom' || x.op === 'red') && global(x))
  const reads = (x: Instruction) => x.op === 'cp' || ((x.op === 'ld' || x.op === 'ldu' || x.op === 'atom' || x.op === 'red') && global(x))
  type Access = { r: boolean; w: boolean }
  const accessOf = (list: Iterable<number>): Access => {
    const a = { r: false, w: false }
    for (const i of list) { a.r ||= reads(ins[i]!); a.w ||= writes(ins[i]!) }
    return a
  }
  /** The instructions of a region from which its exit `cut` is reached (not those only on other paths, such
   *  as a store after the loop whose barrier `cut` is). */
  const leadingTo = (inRegion: Set<number>, cut: number): number[] => {
    const out: number[] = []
    const seen = new Set<number>()
    const walk = (block: number, from: number) => {
      const b = cfg.blocks[block]!
      for (let i = from - 1; i >= b.start; i--) {
        if (isCut.has(i) || !inRegion.has(i)) return
        out.push(i)
      }
      for (const p of b.preds) if (!seen.has(p)) { seen.add(p); walk(p, cfg.blocks[p]!.end) }
    }
    walk(cfg.blockOf[cut]!, cut)
    return out
  }
  const inRegion = regions.regions.map((r) => new Set(r.instructions))
  // a region's accesses up to each of its exit cuts, and right after each cut (up to anywhere)
  const upTo = regions.regions.map((r, k) => new Map(r.exits.filter((c) => c !== RETURN_EXIT).map((c) => [c, accessOf(leadingTo(inRegion[k]!, c))])))
  const own = regions.regions.map((r) => accessOf(r.instructions))
  const afterCut = new Map(regions.regions.map((r, k) => [r.after, k]))
  const ordered = new Set<number>()
  // what reaches each region's entry unordered (carried over barriers without storageBarrier), for the
  // barriers chosen so far
  let carried: Access[] = []
  const arriving = (c: number): Access => {
    const a = { r: false, w: false }
    regions.regions.forEach((_, k) => {
      const up = upTo[k]!.get(c)
      if (!up) return
      a.r ||= up.r || carried[k]!.r
      a.w ||= up.w || carried[k]!.w
    })
    return a
  }
  const carry = () => {
    carried = regions.regions.map(() => ({ r: false, w: false }))
    for (let again = true; again;) {
      again = false
      regions.regions.forEach((r, k) => {
        if (r.after === undefined || ordered.has(r.after)) return
        const a = arriving(r.after)
        if ((a.r && !carried[k]!.r) || (a.w && !carried[k]!.w)) { carried[k] = { r: carried[k]!.r || a.r, w: carried[k]!.w || a.w }; again = true }
      })
    }
  }
  // the innermost loop around each barrier: where the accesses that need ordering come only after that loop
  // (a tile loop's result stored after it), one storageBarrier on the loop's exit replaces one per iteration
  const loopOf = (i: number) => {
    let best: number[] | undefined
    for (const l of cfg.loops) if (l.blocks.includes(cfg.blockOf[i]!) && (!best || l.blocks.length < best.length)) best = l.blocks
    return best ? new Set(best) : undefined
  }
  const afterLoop = new Set<number>()
  const needs = (before: Access, next: Access) => (before.w && (next.r || next.w)) || (before.r && next.w)
  // barriers in program order, each decided with what the earlier choices leave unordered; again until no
  // barrier is added (a loop's back edge carries accesses to the barriers before it)
  carry()
  for (let changed = true; changed;) {
    changed = false
    for (const c of regions.cuts) {
      if (ordered.has(c) || afterLoop.has(c)) continue
      const before = arriving(c)
      const region = regions.regions[afterCut.get(c)!]!
      if (!needs(before, own[region.id]!)) continue
      const loop = loopOf(c)
      const inLoop = loop ? accessOf(region.instructions.filter((i) => loop.has(cfg.blockOf[i]!))) : undefined
      if (inLoop && !needs(before, inLoop)) { afterLoop.add(c); continue }
      ordered.add(c); changed = true; carry()
    }
  }
  return { at: new Set([...ordered].map((c) => ins[c]!)), afterLoop }
}

/** Translates one `.entry`; throws Refusal. When a CUDA block may hold more threads than the adapter allows
 *  invocations in a workgroup (1024 in CUDA; WebGPU guarantees 256), a coarsened variant comes with it. */
export function writeKernel(env0: KernelEnv): WgslKernel {
  let env = env0
  let w = new KernelWriter(env)
  w.writeBody()
  if (w.wantsRounds) {
    env = { ...env0, rounds: true }
    w = new KernelWriter(env)
    w.writeBody()
  }
  if (w.wantsF64Services) {
    // (a kernel with barriers: its shared sites in rounds, rounds.ts)
    env = { ...env, f64Services: true, ...(w.sync ? { rounds: true } : {}) }
    w = new KernelWriter(env)
    w.writeBody()
  }
  const k = w.finish()
  const limit = env.target.limits.maxComputeInvocationsPerWorkgroup ?? 256
  const most = k.requiredBlock ? k.requiredBlock[0] * k.requiredBlock[1] * k.requiredBlock[2] : k.maxThreads ?? 1024
  // (device printf records a CUDA thread's own counts: no coarsened variant, whose invocations run several)
  if (most > limit && !k.printf) {
    const factor = Math.ceil(Math.min(most, 1024) / limit)
    const c = new KernelWriter({ ...env, coarse: factor })
    c.writeBody()
    const ck = c.finish()
    // (one workspace layout for both variants: the same registers are kept, by the same analyses)
    if (JSON.stringify(ck.gridSync) !== JSON.stringify(k.gridSync)) throw new Error(`internal: the coarsened ${k.name} keeps other state across its grid syncs`)
    k.coarse = { wgsl: ck.wgsl, entryPoint: ck.entryPoint, factor }
  }
  // shared memory that may exceed the adapter's workgroup storage (dynamic, whose size comes with the launch, or
  // static above what this target gives a workgroup): the variant with it in the arena (emit-arena-shared.ts)
  const layout = w.arenaLayout()
  const room = env.target.limits.maxComputeWorkgroupStorageSize ?? 16384
  if (layout && (layout.words.dynamic || k.workgroupBytes > room)) {
    const a = new KernelWriter({ ...env, sharedInArena: true })
    a.writeBody()
    const ak = a.finish()
    k.sharedInArena = { wgsl: ak.wgsl, entryPoint: ak.entryPoint, workgroupBytes: ak.workgroupBytes, ...layout }
  }
  return k
}

export { LOCAL_WINDOW, SHARED_WINDOW }
