// @kernelpack/ptx IR → WebAssembly (issue 24): the emulator's second writer, beside emit-js.ts, reading the
// same IR and analyses (register classes, structure) — naga's model of one IR and one writer per target.
// A kernel whose every instruction has a lowering here gets one wasm function that runs a range of threads
// of a range of blocks over the heap, which is the module's imported WebAssembly.Memory (heap.ts); any other
// kernel keeps its JavaScript code, per kernel: `refusal` says which instruction kept it out.
//
// What runs here today: kernels without barriers, warp collectives, calls or suspension points (the
// whole-grid loop of emit-js.ts), with integer arithmetic on 8–64 bits, f32/f64 arithmetic with
// round-to-nearest (fma exact), conversions, comparisons and selects, loads and stores in every state space,
// global atomics on 32- and 64-bit integers and f32 adds. Results are bit-for-bit those of the JS tier: the
// same IEEE operations (JS computes f32 in double and rounds once, which for + − × ÷ √ equals the f32
// operation), the same exact fma, the same PTX integer rules (division by zero, shift counts past the
// width), the same bit patterns where an f32 register is read as an integer (a NaN reads as 0x7fffffff),
// and the same fault: each access tests its address against the allocation its site last hit (a per-site
// range cached in locals, as emit-js.ts caches it in GR), and a miss calls the instance's `miss`, which runs
// the JS tier's granule check and generic-window mapping and throws the same EmulatorFault.
import {
  analyzeAffine, analyzeLiveness, planThreadLoops, stayEnds, SWAPPED_CMP, threadLoopTxRange, assignRegisterClasses, buildCfg, dominates, reservedSmemRead, structureFunction, typeSize,
  collectiveOf, definedRegisters, usedRegisters,
  type AffineFacts, type Cfg, type Contraction, type InvExpr, type Immediate, type ScalarExpr, type ScheduleItem, type ThreadLoop, type ThreadLoopPlan, type ThreadLoopSchedule, type TxEnd, type Instruction, type IrFunction, type IrOperand, type RegisterClass, type StructNode, type StructRegion, type Structure,
} from '@kernelpack/ptx'
import { AtomicOp, FunctionBody, ModuleBuilder, Op, SatOp, SimdOp, type ValType } from './encoder.js'
import type { ModuleLayout } from '../js/emit-js.js'
import type { Frame } from '../frame.js'
import { memTypeFor } from '../js-values.js'
import { planWindowGroups, type WindowGroup, type WindowGroups } from './window-groups.js'
import { planSimd, reads, type SimdPlan } from './simd-plan.js'
import { COS_COEFFS, EX2_COEFFS, LG2_COEFFS, PIO2_HI, PIO2_LO, SIN_COEFFS, TANH_SMALL, TRIG_REDUCED, TWO_OVER_LN2, TWO_OVER_PI, fma32 as exactFma32, fma64 as exactFma64 } from '../numeric.js'
import { fragKind, laneAffine, matrixOperands, mmaOperands, wmmaOperands } from '../tensor-core.js'
import { envVar } from '../env.js'

/** Why a kernel has no wasm lowering: the first instruction that kept it out, or a property of the kernel. */
/** An instruction without a 4-lane form: the kernel keeps its one-thread-at-a-time loop. */
class NotVectorizable extends Error {}

/** Slot load, store and alignment (log2 bytes) of a register's wasm type (slots are 8 bytes a register). */
const SLOT_OPS: Record<Exclude<ValType, 'v128'>, [number, number, number]> = {
  i32: [Op.i32_load, Op.i32_store, 2], i64: [Op.i64_load, Op.i64_store, 3], f32: [Op.f32_load, Op.f32_store, 2], f64: [Op.f64_load, Op.f64_store, 3],
}

/** The tx of threads in a row that run some code, [lo, hi) (hi 'NTX': to the row's end). */
type TxInterval = [number, number | 'NTX']

/** Integer comparisons of setp: the scalar op (signed, unsigned) and the i32x4 one (signed, unsigned). */
const CMP_I32: Record<string, [number, number, number, number]> = {
  eq: [Op.i32_eq, Op.i32_eq, SimdOp.i32x4_eq, SimdOp.i32x4_eq],
  ne: [Op.i32_ne, Op.i32_ne, SimdOp.i32x4_ne, SimdOp.i32x4_ne],
  lt: [Op.i32_lt_s, Op.i32_lt_u, SimdOp.i32x4_lt_s, SimdOp.i32x4_lt_u],
  le: [Op.i32_le_s, Op.i32_le_u, SimdOp.i32x4_le_s, SimdOp.i32x4_le_u],
  gt: [Op.i32_gt_s, Op.i32_gt_u, SimdOp.i32x4_gt_s, SimdOp.i32x4_gt_u],
  ge: [Op.i32_ge_s, Op.i32_ge_u, SimdOp.i32x4_ge_s, SimdOp.i32x4_ge_u],
  lo: [Op.i32_lt_u, Op.i32_lt_u, SimdOp.i32x4_lt_u, SimdOp.i32x4_lt_u],
  ls: [Op.i32_le_u, Op.i32_le_u, SimdOp.i32x4_le_u, SimdOp.i32x4_le_u],
  hi: [Op.i32_gt_u, Op.i32_gt_u, SimdOp.i32x4_gt_u, SimdOp.i32x4_gt_u],
  hs: [Op.i32_ge_u, Op.i32_ge_u, SimdOp.i32x4_ge_u, SimdOp.i32x4_ge_u],
}

/** SLOT_OPS of register class c. */
const slotOps = (c: RegisterClass) => SLOT_OPS[classType(c) as Exclude<ValType, 'v128'>]

/** Instructions a 4-lane turn never runs lane by lane (vperLane): memory, control flow, calls, barriers. */
const PER_LANE_NOT = new Set(['wmma', 'mma', 'ldmatrix', 'stmatrix', 'movmatrix', 'ld', 'st', 'atom', 'red', 'bra', 'brx', 'ret', 'exit', 'bar', 'barrier', 'call', 'cp', 'prefetch', 'prefetchu', 'trap', 'brkpt', 'tex', 'tld4', 'suld', 'sust', 'sured', 'ldu', 'isspacep', 'mbarrier'])

/** The sign bit of four f32 lanes. */
const SIGN32X4 = [0x80000000 | 0, 0x80000000 | 0, 0x80000000 | 0, 0x80000000 | 0] as const
/** Shuffles of a 4-lane f32 value computed in two f64x2 halves: its high two lanes to the low ones (for
 *  f64x2.promote_low_f32x4), and the low two lanes of two f32x4.demote_f64x2_zero results joined. */
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]
const JOIN_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]

/** Whether the thread loop `it` (a barrier-free kernel's only one) runs only some of a row's threads: its first
 *  act branches the others past all of its code (threadLoopTxRange) and its interval is not the whole row. The
 *  branch's instruction index where it does. */
function narrowsAll(fn: IrFunction, it: ThreadLoop, plan: ThreadLoopSchedule, structure: Structure, affine: AffineFacts, cfg: Cfg, prefix: ReadonlySet<number>): number | undefined {
  const r = threadLoopTxRange(fn, it, plan, structure, affine, cfg, prefix)
  return r !== undefined && (r.lo !== '0' || r.hi !== 'NTX') ? r.branch : undefined
}

export class WasmRefusal extends Error {
  constructor(message: string, readonly line?: number, readonly text?: string) { super(message) }
}

/** Launch values the kernels read, as imported mutable i32 globals (set per launch and per block by the
 *  instance, wasm/tier.ts), in this order. */
export const LAUNCH_GLOBALS = ['NTX', 'NTY', 'NTZ', 'NCX', 'NCY', 'NCZ', 'SB', 'SHN', 'DYN', 'LB0', 'LN', 'LSZ', 'PB', 'PE', 'RSV', 'GWS', 'PSP', 'PSEND'] as const
/** What `miss` leaves for the access site: the lowest and highest address (f64) at which an access of its
 *  size stays inside the range it found, and the distance from the address to the heap byte (i32). */
export const MISS_GLOBALS = ['RL', 'RH', 'RD'] as const

/** Memory spaces as the imported `fault` and `miss` functions receive them. */
export const SPACES = ['global', 'shared', 'local', 'param', 'generic', 'const', 'trap', 'callstack', 'assert'] as const
/** Fault kinds without an address. */
export const NO_ADDRESS: ReadonlySet<string> = new Set(['trap', 'callstack', 'assert'])
type Space = (typeof SPACES)[number]

/** prmt's modes (PTX ISA "prmt"; '' is the default byte selection). */
export const PRMT_MODES = ['', 'f4e', 'b4e', 'rc8', 'ecl', 'ecr', 'rc16'] as const
/** Operations with a directed rounding mode, run by numeric.ts fop32/fop64 (exact). */
export const ROUND_OPS = ['add', 'sub', 'mul', 'div', 'fma', 'sqrt'] as const
export const DIRECTED = ['rz', 'rm', 'rp'] as const

/** JavaScript helpers the module imports, by name: [params, results]. f64 stands for a JS number. */
export const IMPORTED_FUNCS = {
  fault: [['i32', 'f64', 'i32'], []],
  miss: [['i32', 'f64', 'i32', 'i32'], ['i32']],
  probe: [['f64'], ['i32']],
  fma32: [['f64', 'f64', 'f64'], ['f64']],
  fma64: [['f64', 'f64', 'f64'], ['f64']],
  sin: [['f64'], ['f64']],
  cos: [['f64'], ['f64']],
  brev32: [['i32'], ['i32']],
  bfe32u: [['i32', 'i32', 'i32'], ['i32']],
  bfe32s: [['i32', 'i32', 'i32'], ['i32']],
  bfi32: [['i32', 'i32', 'i32', 'i32'], ['i32']],
  lop3: [['i32', 'i32', 'i32', 'i32'], ['i32']],
  f16ToNum: [['i32'], ['f64']],
  bf16ToNum: [['i32'], ['f64']],
  numToF16: [['f64'], ['i32']],
  numToBf16: [['f64'], ['i32']],
  fmaH: [['f64', 'f64', 'f64'], ['i32']],
  vprintf: [['i32', 'f64', 'f64', 'i32', 'i32'], ['i32']],
  bfe64u: [['i64', 'i32', 'i32'], ['i64']],
  bfe64s: [['i64', 'i32', 'i32'], ['i64']],
  bfi64: [['i64', 'i64', 'i32', 'i32'], ['i64']],
  fmaB: [['f64', 'f64', 'f64'], ['i32']],
  // a warp's tensor-core collective (TensorOp by index): base of lane 0's slots, bytes between lanes, lanes there
  tc: [['i32', 'i32', 'i32', 'i32'], []],
  ...Object.fromEntries(PRMT_MODES.map((m) => [`prmt${m}`, [['i32', 'i32', 'i32'], ['i32']]])),
  ...Object.fromEntries(ROUND_OPS.flatMap((op) => DIRECTED.flatMap((m) => [[`fop32${op}${m}`, [['f64', 'f64', 'f64'], ['f64']]], [`fop64${op}${m}`, [['f64', 'f64', 'f64'], ['f64']]]]))),
  ...Object.fromEntries(DIRECTED.map((m) => [`cvt32${m}`, [['f64'], ['f64']]])),
} as Record<string, [readonly ValType[], readonly ValType[]]>
type Imported = string

/** How a value on the wasm stack is to be read (emit-js.ts's kinds): i32-like kinds are an i32 whose value
 *  is already that kind's (u16 zero-extended, s8 sign-extended…); `u32` widens with zeros, `i32` with its
 *  sign; `pred` is 0 or 1. */
type WKind = 'i32' | 'u32' | 'u16' | 's16' | 'u8' | 's8' | 'pred' | 'i64' | 'f32' | 'f64'

/** An integer immediate operand as a signed 32-bit number (else undefined). */
const immI32 = (o: IrOperand | undefined): number | undefined => (o?.kind === 'imm' && o.imm.kind === 'int' ? Number(BigInt.asIntN(32, o.imm.value)) : undefined)

const wasmType = (k: WKind): ValType => (k === 'i64' || k === 'f32' || k === 'f64' ? k : 'i32')
const classType = (c: RegisterClass): ValType => (c === 'i64' || c === 'f32' || c === 'f64' ? c : 'i32')

/** The wasm kind an operation of PTX type t reads and writes. */
function kindOfType(t: string): WKind | undefined {
  switch (t) {
    case 'f32': return 'f32'
    case 'f64': return 'f64'
    case 's32': return 'i32'
    case 'u32': case 'b32': return 'i32'
    case 's64': case 'u64': case 'b64': return 'i64'
    case 's16': return 's16'
    case 'u16': case 'b16': return 'u16'
    case 's8': return 's8'
    case 'u8': case 'b8': return 'u8'
    case 'pred': return 'pred'
    default: return undefined
  }
}

/** The global accesses a kernel makes: the base of the generic windows (emit-js.ts: GSH, GLO, GPA). */
const GSH = 2n ** 34n, GLO = 2n ** 35n, GPA = 2n ** 36n
/** A thread's state in the thread loops (emit-thread-loops.ts ST): 0 running, −1 ended, LEFT gone by a
 *  block-wide decision, 2 + 2k / 3 + 2k waiting at the end / for the next trip of warp-level region k. */
const LEFT = 1
/** touchNextBlock: the cache lines one site touches at the start of the next block's range (enough to start the
 *  hardware prefetcher's stream there, which brings the rest), and the xor of the touched words that sends a
 *  block to its checked copy (any constant does: the copies compute the same). */
const MAX_TOUCHES = 4
/** The most lane tests one 4-lane turn branches from (vbail). */
const MAX_TURN_BAILS = 256
const TOUCH_MAGIC = 0x5a5a5a5b
/** Whether an address form reads `name` (a special register such as %ctaid.x). */
/** A per-thread 32-bit value as the lane loops recompute it (KernelWriter.rematOf): an affine form
 *  inv + c·tid.x, a copy of %tid, an immediate, or a 32-bit integer operation on such values (a lane's
 *  `tid & 31`, a warp's `tid >> 5`, a shared address `smem + (lane << 2)`). */
type RematNode =
  | { kind: 'affine'; inv: InvExpr; c: number }
  | { kind: 'tid'; name: '%tid.x' | '%tid.y' | '%tid.z' }
  | { kind: 'imm'; value: number }
  | { kind: 'op'; op: 'and' | 'or' | 'xor' | 'add' | 'sub' | 'mul' | 'shl' | 'shr_s' | 'shr_u'; a: RematNode; b: RematNode }

/** A thread loop's block-uniform term (hullTest): a value the same for every thread of the loop, evaluated in
 *  64-bit integers once before it (congruent modulo 2^32 to what the kernel's 32-bit arithmetic computes). */
type LoopU =
  | { kind: 'const'; value: number }
  | { kind: 'inv'; e: InvExpr }
  | { kind: 'reg'; r: number }
  | { kind: 'add' | 'sub' | 'mul'; a: LoopU; b: LoopU }
/** A 32-bit register's value in a thread loop as U + c·tid.x, U the same for the whole loop (loopForm). */
interface LoopForm { u: LoopU; c: number }
/** The threads that run an `if`'s body (hullTest, ifPart): code pushing its first tx and one past its last, as i64. */
interface TxPart { id: number; lo: () => void; hi: () => void }
/** p + q (p − q where `sub`), as LoopForms. */
function formSum(p: LoopForm | undefined, q: LoopForm | undefined, sub: boolean): LoopForm | undefined {
  return p && q ? { u: { kind: sub ? 'sub' : 'add', a: p.u, b: q.u }, c: sub ? p.c - q.c : p.c + q.c } : undefined
}

/** p · q as a LoopForm where both are the same for the whole loop, or one is an immediate (the tid.x
 *  coefficient kept within 2^24). */
function formProduct(p: LoopForm | undefined, q: LoopForm | undefined): LoopForm | undefined {
  if (!p || !q) return undefined
  const k = (f: LoopForm) => (f.c === 0 && f.u.kind === 'const' ? f.u.value : undefined)
  if (p.c === 0 && q.c === 0) return { u: { kind: 'mul', a: p.u, b: q.u }, c: 0 }
  const kp = k(p), kq = k(q)
  const [f, m] = kq !== undefined ? [p, kq] : kp !== undefined ? [q, kp] : [undefined, 0]
  if (!f || Math.abs(f.c * m) > 2 ** 24) return undefined
  return { u: { kind: 'mul', a: f.u, b: { kind: 'const', value: m } }, c: f.c * m }
}

/** The most shared accesses of one thread loop that hullTest tests before it (each group of them costs two ends). */
const MAX_HULL_SITES = 16
/** Threads a thread loop's interval must have for hullTest to test it (a shorter loop runs one thread at a time). */
const MIN_HULL_THREADS = 8

/** A 4-lane turn's strides (KernelWriter.vstride), with the registers whose lane 0 a scalar local also holds
 *  (`lane0`: i32 arithmetic written twice, once on the four lanes and once on lane 0, where every operand has
 *  such a local): a stride set or dropped anywhere (every write of a register's four lanes sets or drops its
 *  stride) drops that local's claim, so a claim lasts only while the register's v128 local has not been
 *  written since the scalar one was. A shared access through such a register
 *  takes lane 0's address from the scalar local, and the engine drops the lanes' address arithmetic no one
 *  reads (splat, add, shift, extract) instead of running it every turn. */
class StrideMap extends Map<number, number> {
  readonly lane0 = new Map<number, number>()
  override set(k: number, v: number): this { this.lane0.delete(k); return super.set(k, v) }
  override delete(k: number): boolean { this.lane0.delete(k); return super.delete(k) }
  override clear(): void { this.lane0.clear(); super.clear() }
}

/** An induction variable's term in an address or a wrap check (@kernelpack/ptx AffineForm.iv):
 *  + (k + (next ? 1 : 0))·step in iteration k of loop `loop` (a cfg.loops index with a TripBound). */
interface SiteIv { loop: number; step: InvExpr; next: boolean }
/** A 32-bit term of an address that must not wrap: inv + c·tid.x (+ its iteration term) within [lo, 2^31 − 1]. */
interface SiteCond { inv: InvExpr; c: number; lo: number; iv?: SiteIv }

function invMentions(e: InvExpr, name: string): boolean {
  return e.kind === 'special' ? e.name === name : e.kind === 'add' || e.kind === 'mul' ? invMentions(e.a, name) || invMentions(e.b, name) : false
}

/** A slot of a lane's collective inputs or results (offset from the lane's local base) and its value kind. */
export interface TcSlot { off: number; kind: 'i32' | 'f32' | 'f64' }

/** What the `tc` import computes for a warp (tier.ts): the product of wmma.mma/mma.sync (tensor-core.ts
 *  mmaLane, key `key`) from every lane's A, B, C slots into each lane's D slots, or movmatrix's transpose. */
export type TensorOp =
  | { kind: 'mma'; key: string; a: TcSlot[]; b: TcSlot[]; c: TcSlot[]; d: TcSlot[] }
  | { kind: 'movmatrix'; x: TcSlot; d: TcSlot }

/** The module's helpers defined in wasm (after the imports): ftz and sat. */
interface Helpers { /** The module's tensor-core collectives, by id (the `tc` import's first argument). */ tensor: TensorOp[]; ftz: number; sat: number; /** ex2(x): numeric.ts ex2f. */ ex2: number; /** lg2(x): numeric.ts lg2f. */ lg2: number; /** trig(x, cos): numeric.ts sincosf. */ trig: number; /** tanh(x): numeric.ts tanhf. */ tanh: number; /** vfma(x, y, z): the 4-lane fma lane by lane (with SIMD). */ vfma?: number; simd?: boolean; /** relaxed_madd is fused here (relaxedMaddFused). */ fused32?: boolean; fused64?: boolean }

/** One module of wasm kernels for a PTX module: which kernels it has and which it refused. */
export interface WasmModuleCode {
  bytes: Uint8Array
  /** Kernel name → export name. */
  kernels: Map<string, string>
  /** Bytes per thread the wasm thread loops keep after the kernel's local memory (per-thread registers and
   *  the thread's state), by kernel: the launch makes each thread's local window that much larger. */
  slotBytes: Map<string, number>
  refused: Map<string, WasmRefusal>
  /** Kernels that run 4 threads a step as f32x4/i32x4, with where they do: the whole kernel in its unchecked
   *  loop (simd-plan.ts), or some of its thread loops (vectorTurn). */
  simd: Map<string, string>
  /** PTX lines of each kernel's load sites whose next block's cache lines a block reads first (touchNextBlock). */
  readAhead: Map<string, number[]>
  /** PTX lines of the loop accesses whose ranges each block tests once (loopTest), by kernel. */
  loopTested: Map<string, number[]>
  /** Barrier-free kernels run as one thread loop a block over the threads their first branch keeps
   *  (narrowsAll): the PTX line of that branch. */
  narrowed: Map<string, number>
  /** PTX lines of the shared accesses whose thread-loop range is tested before the loop (hullTest), by kernel. */
  hullTested: Map<string, number[]>
  /** fma.rn.f32/.f64 use relaxed SIMD's multiply-add (relaxedMaddFused). */
  fusedFma: boolean
  /** The tensor-core collectives the `tc` import computes, by id. */
  tensor: TensorOp[]
  /** Milliseconds spent writing the module (issue 24 item 6). */
  ms: number
}

export interface WasmKernelInput {
  fn: IrFunction
  frame: Frame
  /** Row of the function's first instruction in the module's fault table (emit-js.ts InstrInfo). */
  rowBase: number
  /** The kernel suspends in the JS tier's continuation scheme (barriers or collectives without a plan). */
  suspends: boolean
  /** The JS tier's thread-loop plan (kernels with barriers or warp collectives), if it has one. */
  plan?: ThreadLoopPlan
  /** The adds ptxas fuses with a product (@kernelpack/ptx analyzeContraction), as the JS tier computes them;
   *  absent with `fmad: false` (issue 32). */
  contraction?: ReadonlyMap<number, Contraction>
  /** The module's functions (a call's callee: its parameters and returns). */
  allFunctions?: readonly IrFunction[]
  /** A kernel without a plan (no barrier, collective or lanes that talk through memory) whose loops may run
   *  its threads in 4-lane turns: the writer plans one thread loop for it (thread loops on, `threadLoops`). */
  planLoops?: boolean
}

/** Writes one wasm module holding a function for every kernel that lowers. `shared`: the heap's memory is
 *  a shared one (workers). */
let simdProbe: boolean | undefined

/** Whether this engine compiles 128-bit SIMD (every current one does; a module with it would not compile
 *  at all where it does not, so the writer leaves the 4-lane paths out there). */
export function wasmSimdSupported(): boolean {
  if (simdProbe === undefined) {
    const mb = new ModuleBuilder()
    mb.addFunc(new FunctionBody([]).i32x4([0, 0, 0, 0]), ['v128'])
    try { simdProbe = WebAssembly.validate(mb.encode() as Uint8Array<ArrayBuffer>) } catch { simdProbe = false }
  }
  return simdProbe
}

let maddProbe: { f32: boolean; f64: boolean } | undefined
/** How this engine's relaxed SIMD is reached where it compiles only behind a flag (setRelaxedSimdEnabler). */
let relaxedEnabler: (() => void) | undefined

/** Registers the step that turns relaxed SIMD on where the engine has it behind a flag: the Node entry's
 *  (node/index.ts: V8's `--experimental-wasm-relaxed-simd` on Node 20, whose V8 has relaxed SIMD whole but off;
 *  Node 22 and Chromium have it on). relaxedMaddFused takes it only when the probe module does not compile
 *  and the environment does not say KERNELPACK_EMULATOR_RELAXED_SIMD=0. */
export function setRelaxedSimdEnabler(enable: () => void): void {
  relaxedEnabler = enable
}

/** KERNELPACK_EMULATOR_RELAXED_SIMD=0 (Node; browsers have no environment): fma.rn keeps the exact paths,
 *  and the emulator turns no engine flag on. */
function relaxedSimdRefused(): boolean {
  return envVar('KERNELPACK_EMULATOR_RELAXED_SIMD') === '0'
}

/** Whether relaxed SIMD's multiply-add (f32x4.relaxed_madd, f64x2.relaxed_madd) is fused on this engine
 *  and machine, per width. The proposal lets an engine give x·y + z rounded once (the CPU's fma
 *  instruction) or twice; where it compiles at all (Chromium; a Node whose V8 has it on), a start-up probe runs it
 *  on inputs where the two differ (a product that is a binary32/binary64 midpoint with a tiny addend, a
 *  cancellation, subnormal results, signed zeros) and on random triples, against the JavaScript tier's
 *  exact fma (numeric.ts), bit for bit: only if every one matches does fma.rn use it. Where the module does
 *  not compile, the registered enabler (setRelaxedSimdEnabler) turns relaxed SIMD on first, unless
 *  KERNELPACK_EMULATOR_RELAXED_SIMD=0, which keeps the exact paths. */
export function relaxedMaddFused(): { f32: boolean; f64: boolean } {
  if (maddProbe !== undefined) return maddProbe
  maddProbe = { f32: false, f64: false }
  if (!wasmSimdSupported() || relaxedSimdRefused()) return maddProbe
  try {
    const bytes = maddProbeModule()
    if (!WebAssembly.validate(bytes)) {
      if (!relaxedEnabler) return maddProbe
      relaxedEnabler()
      if (!WebAssembly.validate(bytes)) return maddProbe
    }
    const ex = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports as Record<'f32' | 'f64', (x: number, y: number, z: number) => number>
    const same = (a: number, b: number) => Object.is(a, b) || (a !== a && b !== b)
    const f32 = Math.fround
    const m32 = f32(1 + 2 ** -12), m64 = 1 + 2 ** -27
    const triples: Array<[number, number, number]> = [
      [m32, m32, f32(-(1 + 2 ** -11))], [m32, m32, f32(2 ** -80)], [m32, m32, f32(-(2 ** -80))], [f32(2 ** -100), f32(2 ** -40), 0],
      [f32(1.5 * 2 ** -75), f32(2 ** -74), 0], [f32(3 * 2 ** -76), f32(2 ** -74), f32(-(2 ** -149))], [-0, 5, -0], [0, -5, 0], [f32(3.4e38), 2, f32(-3.4e38)],
    ]
    let s = 0x9e3779b9
    const rnd = () => { s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0; return s }
    const bits = new Uint32Array(1), fl = new Float32Array(bits.buffer)
    for (let i = 0; i < 64; i++) { const v = () => { bits[0] = rnd() & 0xbfffffff; return fl[0]! }; triples.push([v(), v(), v()]) }
    maddProbe.f32 = triples.every(([x, y, z]) => same(ex.f32(x, y, z), exactFma32(x, y, z)))
    const t64: Array<[number, number, number]> = [[m64, m64, -(1 + 2 ** -26)], [m64, m64, 2 ** -200], [m64, m64, -(2 ** -200)], [2 ** -600, 2 ** -460, 0], [1.5 * 2 ** -537, 2 ** -537, 0], [-0, 5, -0]]
    for (let i = 0; i < 64; i++) t64.push([(rnd() - 2 ** 31) / 977 * 2 ** ((rnd() % 200) - 100), (rnd() - 2 ** 31) / 131 * 2 ** ((rnd() % 200) - 100), (rnd() - 2 ** 31) * 2 ** ((rnd() % 260) - 130)])
    maddProbe.f64 = t64.every(([x, y, z]) => same(ex.f64(x, y, z), exactFma64(x, y, z)))
  } catch { maddProbe = { f32: false, f64: false } }
  return maddProbe
}

/** The probe's module: `f32(x, y, z)` and `f64(x, y, z)`, lane 0 of relaxed_madd on splat operands. */
function maddProbeModule(): Uint8Array<ArrayBuffer> {
  const mb = new ModuleBuilder()
  for (const [t, splat, extract, madd] of [['f32', SimdOp.f32x4_splat, SimdOp.f32x4_extract_lane, SimdOp.f32x4_relaxed_madd], ['f64', SimdOp.f64x2_splat, SimdOp.f64x2_extract_lane, SimdOp.f64x2_relaxed_madd]] as const) {
    const f = new FunctionBody([t, t, t])
    f.get(0).simd(splat).get(1).simd(splat).get(2).simd(splat).simd(madd).simdLane(extract, 0)
    mb.exportFunc(t, mb.addFunc(f, [t]))
  }
  return mb.encode() as Uint8Array<ArrayBuffer>
}

/** Whether this engine compiles relaxed SIMD's multiply-add at all (fused or not: relaxedMaddFused). */
export function relaxedSimdCompiles(): boolean {
  return wasmSimdSupported() && WebAssembly.validate(maddProbeModule())
}

export function writeWasmModule(kernels: readonly WasmKernelInput[], layout: ModuleLayout, shared: boolean, simd = wasmSimdSupported()): WasmModuleCode {
  const t0 = performance.now()
  const mb = new ModuleBuilder()
  const funcs = {} as Record<Imported, number>
  for (const [n, [p, r]] of Object.entries(IMPORTED_FUNCS)) funcs[n as Imported] = mb.importFunc('e', n, p, r)
  mb.importMemory('e', 'mem', 65536, shared)
  const globals: Record<string, number> = {}
  for (const g of LAUNCH_GLOBALS) globals[g] = mb.importGlobal('e', g, 'i32')
  globals.RL = mb.importGlobal('e', 'RL', 'f64')
  globals.RH = mb.importGlobal('e', 'RH', 'f64')
  globals.RD = mb.importGlobal('e', 'RD', 'i32')
  const fused = simd ? relaxedMaddFused() : { f32: false, f64: false }
  const helpers: Helpers = { ...defineHelpers(mb, funcs, simd), tensor: [], simd, fused32: fused.f32, fused64: fused.f64 }
  const out = new Map<string, string>()
  const refused = new Map<string, WasmRefusal>()
  const slotBytes = new Map<string, number>()
  const vectorized = new Map<string, string>()
  const readAhead = new Map<string, number[]>()
  const loopTested = new Map<string, number[]>()
  const narrowed = new Map<string, number>()
  const hullTested = new Map<string, number[]>()
  // device functions (.func) a kernel calls become wasm functions of their own, after the helpers: first the
  // set that lowers (a function that calls one that does not, does not), then their bodies with final indices
  const devices = kernels.filter((k) => k.fn.kind === 'func')
  const frames = new Map(kernels.map((k) => [k.fn.name, k.frame]))
  const base = mb.functionCount()
  let ok = new Set(devices.map((k) => k.fn.name))
  for (let changed = true; changed;) {
    changed = false
    const order = [...ok]
    const calls: Callees = { index: (n) => (ok.has(n) ? base + order.indexOf(n) : undefined), frames, why: refused }
    for (const k of devices) {
      if (!ok.has(k.fn.name)) continue
      try { new KernelWriter(k, layout, funcs, globals, helpers, calls).write() } catch (e) {
        if (!(e instanceof WasmRefusal)) throw e
        refused.set(k.fn.name, e)
        ok.delete(k.fn.name)
        changed = true
      }
    }
  }
  const order = [...ok]
  const calls: Callees = { index: (n) => (ok.has(n) ? base + order.indexOf(n) : undefined), frames, why: refused }
  for (const name of order) {
    const k = devices.find((d) => d.fn.name === name)!
    const idx = mb.addFunc(new KernelWriter(k, layout, funcs, globals, helpers, calls).write())
    if (idx !== calls.index(name)) throw new Error('internal: device function index')
  }
  ok = new Set(order)
  kernels.forEach((k, i) => {
    if (k.fn.kind !== 'entry') return
    try {
      // A kernel without barriers takes the writer's own thread loop where its 4-lane turns are written (a
      // loop a block over its rows, 4 threads a turn), else the whole-grid loop: written again without it
      let w: KernelWriter | undefined, body: FunctionBody | undefined
      try {
        w = new KernelWriter(k, layout, funcs, globals, helpers, calls, true)
        body = w.write()
        // (floating-point arithmetic lane by lane costs as much as the whole-grid loop's scalar code, or more:
        // 2^21 threads of a cvt, an f64 fma and a cvt back 3.8 ms against 2.9 ms, where 64-bit address
        // arithmetic lane by lane still halves the time)
        if (w.ownByChoice && (!w.vectorized || w.vLaneFloat)) w = undefined
      } catch (e) {
        if (!(e instanceof WasmRefusal) || !w?.ownByChoice) throw e
        w = undefined
      }
      if (!w || !body) {
        w = new KernelWriter(k, layout, funcs, globals, helpers, calls, false)
        body = w.write()
      }
      const idx = mb.addFunc(body)
      const name = `k${i}`
      mb.exportFunc(name, idx)
      out.set(k.fn.name, name)
      if (w.slotBytes) slotBytes.set(k.fn.name, w.slotBytes)
      const simd: string[] = []
      if (w.vectorized) simd.push(`4 consecutive threads of a row a step (f32x4/i32x4) ${w.ownPlan ? `${w.narrowedAt !== undefined || w.ownByChoice ? 'in its thread loop (the kernel, without barriers, as one loop a block over its threads)' : 'through its loops (the kernel, without barriers, as one thread loop)'}, where the 4 lanes agree at its branches` : w.vectorLoops.size ? `in ${w.vectorLoops.size === 1 ? 'one of its thread loops' : `${w.vectorLoops.size} of its thread loops`} (the code between barriers), where the 4 lanes agree at its branches` : 'in blocks whose accesses pass the block test'}`)
      const runs = [...w.warpRuns].sort((x, y) => x - y)
      const edged = runs.filter((l) => w.warpRunEdges.has(l))
      if (runs.length) simd.push(`a whole warp at once (eight 4-lane values a register) in ${runs.length === 1 ? 'the run of shuffles and arithmetic from PTX line' : `${runs.length} runs of shuffles and arithmetic, from PTX lines`} ${runs.join(', ')}, where its 32 lanes all run${edged.length ? ` (${edged.length === runs.length ? (runs.length === 1 ? 'with' : 'each with') : `from ${edged.join(', ')} with`} the lane loops that feed or read it)` : ''}`)
      const steps = [...w.laneRuns].sort((x, y) => x - y)
      const skips = [...w.warpSkips].sort((x, y) => x - y)
      if (skips.length) {
        const byRange = skips.filter((l) => w.skipsByRange.has(l))
        simd.push(`a warp whose running lanes all branch past ${skips.length === 1 ? 'the if at PTX line' : 'the ifs at PTX lines'} ${skips.join(', ')} skips ${skips.length === 1 ? 'it' : 'each'} at once${byRange.length ? ` (${byRange.length === skips.length ? (skips.length === 1 ? 'tested' : 'each tested') : `at ${byRange.join(', ')} tested`} on the warp's %tid.x range)` : ''}`)
      }
      if (steps.length) simd.push(`a whole warp at once (eight 4-lane values a register) in ${steps.length === 1 ? 'the run of lane loops without shuffles (lockstep steps, or code between them) from PTX line' : `${steps.length} runs of lane loops without shuffles (lockstep steps, or code between them), from PTX lines`} ${steps.join(', ')}, where its 32 lanes all run`)
      if (simd.length) vectorized.set(k.fn.name, simd.join('; '))
      if (w.readAhead.size) readAhead.set(k.fn.name, [...w.readAhead].sort((x, y) => x - y))
      if (w.hullLines.size) hullTested.set(k.fn.name, [...w.hullLines].sort((x, y) => x - y))
      if (w.narrowedAt !== undefined) narrowed.set(k.fn.name, w.narrowedAt)
      if (w.loopSites.size) loopTested.set(k.fn.name, [...new Set([...w.loopSites.values()].map((x) => k.fn.instructions[x.index]!.line))].sort((x, y) => x - y))
    } catch (e) {
      if (!(e instanceof WasmRefusal)) throw e
      refused.set(k.fn.name, e)
    }
  })
  const bytes = mb.encode()
  return { bytes, kernels: out, refused, slotBytes, simd: vectorized, readAhead, loopTested, hullTested, narrowed, fusedFma: fused.f32 && fused.f64, tensor: helpers.tensor, ms: performance.now() - t0 }
}

function defineHelpers(mb: ModuleBuilder, funcs: Record<Imported, number>, simd: boolean): Omit<Helpers, 'tensor'> {
  // ftz(x): a subnormal f32 becomes a zero of its sign (numeric.ts ftz)
  const ftz = new FunctionBody(['f32'])
  ftz.get(0).op(Op.f32_abs).f32bits(0x00800000).op(Op.f32_lt)
  ftz.get(0).f32bits(0).op(Op.f32_ne).op(Op.i32_and)
  ftz.open('if', 'f32')
  ftz.get(0).f32bits(0).op(Op.f32_lt).begin('if', 'f32').f32bits(0x80000000).else().f32bits(0).end()
  ftz.else().get(0).end()
  // sat(x): NaN → 0, clamp to [0, 1] (numeric.ts sat), on the f64 value of an f32 or f64
  const sat = new FunctionBody(['f64'])
  sat.get(0).get(0).op(Op.f64_ne).begin('if', 'f64').f64(0).else()
  sat.get(0).f64(0).op(Op.f64_lt).begin('if', 'f64').f64(0).else()
  sat.get(0).f64(1).op(Op.f64_gt).begin('if', 'f64').f64(1).else().get(0).end().end().end()
  // ex2(x): numeric.ts ex2f, the same f64 operations in the same order (x an f32 value, the result rounded
  // to f32 by the caller)
  const ex2 = new FunctionBody(['f64'])
  const n = ex2.local('f64'), f = ex2.local('f64'), p = ex2.local('f64')
  ex2.get(0).f64(128).op(Op.f64_lt).op(Op.i32_eqz).begin('if')
  ex2.get(0).get(0).op(Op.f64_ne).begin('if', 'f64').get(0).else().f64(Infinity).end().op(Op.return).end()
  ex2.get(0).f64(-151).op(Op.f64_lt).begin('if').f64(0).op(Op.return).end()
  ex2.get(0).f64(0.5).op(Op.f64_add).op(Op.f64_floor).set(n)
  ex2.get(0).get(n).op(Op.f64_sub).set(f)
  ex2.f64(EX2_COEFFS[0]!).set(p)
  for (let k = 1; k < EX2_COEFFS.length; k++) ex2.get(p).get(f).op(Op.f64_mul).f64(EX2_COEFFS[k]!).op(Op.f64_add).set(p)
  // 2^n from its bits: (n + 1023) << 52
  ex2.get(p).get(n).sat(SatOp.i64_trunc_sat_f64_s).i64(1023n).op(Op.i64_add).i64(52n).op(Op.i64_shl).op(Op.f64_reinterpret_i64).op(Op.f64_mul)
  // lg2(x): numeric.ts lg2f, the same f64 operations in the same order (x an f32 value, the result rounded
  // to f32 by the caller)
  const lg2 = new FunctionBody(['f64'])
  const le = lg2.local('f64'), lm = lg2.local('f64'), ls = lg2.local('f64'), lz = lg2.local('f64'), lp = lg2.local('f64'), lbits = lg2.local('i64')
  lg2.get(0).f64(0).op(Op.f64_gt).op(Op.i32_eqz).begin('if')
  lg2.get(0).f64(0).op(Op.f64_eq).begin('if', 'f64').f64(-Infinity).else().f64(NaN).end().op(Op.return).end()
  lg2.get(0).f64(Infinity).op(Op.f64_eq).begin('if').f64(Infinity).op(Op.return).end()
  lg2.get(0).op(Op.i64_reinterpret_f64).set(lbits)
  lg2.get(lbits).i64(52n).op(Op.i64_shr_u).i64(0x7ffn).op(Op.i64_and).i64(1023n).op(Op.i64_sub).op(Op.f64_convert_i64_s).set(le)
  lg2.get(lbits).i64(0x000fffffffffffffn).op(Op.i64_and).i64(0x3ff0000000000000n).op(Op.i64_or).op(Op.f64_reinterpret_i64).set(lm)
  lg2.get(lm).f64(Math.SQRT2).op(Op.f64_gt).begin('if')
  lg2.get(lm).f64(0.5).op(Op.f64_mul).set(lm).get(le).f64(1).op(Op.f64_add).set(le)
  lg2.end()
  lg2.get(lm).f64(1).op(Op.f64_sub).get(lm).f64(1).op(Op.f64_add).op(Op.f64_div).set(ls)
  lg2.get(ls).get(ls).op(Op.f64_mul).set(lz)
  lg2.f64(LG2_COEFFS[0]!).set(lp)
  for (let k = 1; k < LG2_COEFFS.length; k++) lg2.get(lp).get(lz).op(Op.f64_mul).f64(LG2_COEFFS[k]!).op(Op.f64_add).set(lp)
  lg2.get(le).get(ls).get(lp).f64(TWO_OVER_LN2).op(Op.f64_mul).op(Op.f64_mul).op(Op.f64_add)
  // trig(x, cos): numeric.ts sincosf, the same f64 operations in the same order (x an f32 value, cos 0 or 1)
  const trig = new FunctionBody(['f64', 'i32'])
  const tk = trig.local('f64'), tr = trig.local('f64'), tz = trig.local('f64'), tp = trig.local('f64'), tq = trig.local('i32')
  trig.get(0).op(Op.f64_abs).f64(TRIG_REDUCED).op(Op.f64_le).op(Op.i32_eqz).begin('if')
  trig.get(1).begin('if', 'f64').get(0).call(funcs.cos).else().get(0).call(funcs.sin).end().op(Op.return).end()
  trig.get(0).f64(TWO_OVER_PI).op(Op.f64_mul).f64(0.5).op(Op.f64_add).op(Op.f64_floor).set(tk)
  trig.get(0).get(tk).f64(PIO2_HI).op(Op.f64_mul).op(Op.f64_sub).get(tk).f64(PIO2_LO).op(Op.f64_mul).op(Op.f64_sub).set(tr)
  trig.get(tr).get(tr).op(Op.f64_mul).set(tz)
  trig.get(tk).sat(SatOp.i32_trunc_sat_f64_s).get(1).op(Op.i32_add).i32(3).op(Op.i32_and).set(tq)
  trig.get(tq).i32(1).op(Op.i32_and).op(Op.i32_eqz).begin('if')
  trig.f64(SIN_COEFFS[0]!).set(tp)
  for (let i = 1; i < SIN_COEFFS.length; i++) trig.get(tp).get(tz).op(Op.f64_mul).f64(SIN_COEFFS[i]!).op(Op.f64_add).set(tp)
  trig.get(tr).get(tp).op(Op.f64_mul).set(tp)
  trig.else()
  trig.f64(COS_COEFFS[0]!).set(tp)
  for (let i = 1; i < COS_COEFFS.length; i++) trig.get(tp).get(tz).op(Op.f64_mul).f64(COS_COEFFS[i]!).op(Op.f64_add).set(tp)
  trig.end()
  trig.get(tq).i32(2).op(Op.i32_and).begin('if', 'f64').get(tp).op(Op.f64_neg).else().get(tp).end()
  const ftzI = mb.addFunc(ftz, ['f32'])
  const satI = mb.addFunc(sat, ['f64'])
  const ex2I = mb.addFunc(ex2, ['f64'])
  const lg2I = mb.addFunc(lg2, ['f64'])
  const trigI = mb.addFunc(trig, ['f64'])
  // tanh(x): numeric.ts tanhf, the same f64 operations in the same order (its e^(2|x|) through ex2)
  const th = new FunctionBody(['f64'])
  const ha = th.local('f64'), hz = th.local('f64'), ht = th.local('f64')
  th.get(0).op(Op.f64_abs).set(ha)
  th.get(ha).f64(TANH_SMALL).op(Op.f64_ge).op(Op.i32_eqz).begin('if')
  th.get(ha).f64(0).op(Op.f64_gt).op(Op.i32_eqz).begin('if').get(0).op(Op.return).end()
  th.get(0).get(0).op(Op.f64_mul).set(hz)
  th.get(0).get(0).get(hz).f64(-1 / 3).get(hz).f64(2 / 15).get(hz).f64(-17 / 315)
  th.op(Op.f64_mul).op(Op.f64_add).op(Op.f64_mul).op(Op.f64_add).op(Op.f64_mul).op(Op.f64_mul).op(Op.f64_add).op(Op.return)
  th.end()
  th.f64(1).f64(2).get(ha).f64(TWO_OVER_LN2).op(Op.f64_mul).call(ex2I).f64(1).op(Op.f64_add).op(Op.f64_div).op(Op.f64_sub).set(ht)
  th.get(0).f64(0).op(Op.f64_lt).begin('if', 'f64').get(ht).op(Op.f64_neg).else().get(ht).end()
  const tanhI = mb.addFunc(th, ['f64'])
  if (!simd) return { ftz: ftzI, sat: satI, ex2: ex2I, lg2: lg2I, trig: trigI, tanh: tanhI }
  // vfma(x, y, z): fma.rn.f32 of four lanes one by one, each as fma32 computes it (KernelWriter.fma32: the
  // binary64 sum rounded once more, the exact helper where that can go wrong); the 4-lane fma's path for a
  // group with such a lane, one function instead of four inline copies at every fma
  const vf = new FunctionBody(['v128', 'v128', 'v128'])
  const s64 = vf.local('f64'), r = vf.local('v128')
  vf.get(0).set(r)
  for (let j = 0; j < 4; j++) {
    const lane = (p: number) => { vf.get(p).simdLane(SimdOp.f32x4_extract_lane, j).op(Op.f64_promote_f32) }
    vf.get(r)
    lane(0); lane(1); vf.op(Op.f64_mul); lane(2); vf.op(Op.f64_add).tee(s64)
    vf.op(Op.i64_reinterpret_f64).i64(0x1fffffffn).op(Op.i64_and).i64(0x10000000n).op(Op.i64_ne)
    vf.get(s64).op(Op.f64_abs).f64(2 ** -126).op(Op.f64_ge).get(s64).f64(0).op(Op.f64_eq).op(Op.i32_or).op(Op.i32_and)
    vf.begin('if', 'f32').get(s64).op(Op.f32_demote_f64).else()
    lane(0); lane(1); lane(2); vf.call(funcs.fma32).op(Op.f32_demote_f64).end()
    vf.simdLane(SimdOp.f32x4_replace_lane, j).set(r)
  }
  vf.get(r)
  return { ftz: ftzI, sat: satI, ex2: ex2I, lg2: lg2I, trig: trigI, tanh: tanhI, vfma: mb.addFunc(vf, ['v128']) }
}

/** The device functions a kernel may call: their function index (undefined: no wasm lowering, with the
 *  reason in `why`) and frames (parameter and return offsets, frame size). */
interface Callees {
  index(name: string): number | undefined
  frames: ReadonlyMap<string, Frame>
  why: ReadonlyMap<string, WasmRefusal>
}

/** The parameters of a device function's wasm function, as locals: FB at 2, as in a kernel's. */
const FUNC_PARAMS = ['LB', 'LF', 'FB', 'PSP', 't', 'tx', 'ty', 'tz', 'cx', 'cy', 'cz'] as const

/** Writes one kernel, or one device function. Throws WasmRefusal for what it cannot lower. */
class KernelWriter {
  private readonly fn: IrFunction
  private readonly classes: RegisterClass[]
  private readonly structure: Structure
  private readonly b: FunctionBody
  private readonly regs: number[]
  /** Locals: launch values, loop state, scratch. */
  private readonly L: Record<string, number> = {}
  /** Levels of the open structured regions, by id (block/if: its end; loop: its start). */
  private readonly level = new Map<number, number>()
  private threadLevel = 0
  private cur!: Instruction
  /** Per access site (instruction:slot): its cached range locals. */
  private readonly sites = new Map<string, { lo: number; hi: number; d: number }>()
  private readonly scratch = new Map<string, number>()
  private readonly affine: AffineFacts
  /** Forms with %tid.y and %tid.z as invariant terms (AffineOptions.rowInvariant): a 4-lane turn's lanes are
   *  consecutive threads of one row, so these give a 32-bit register's stride across them (0 for an address
   *  made of tid.y, as a tile row's `As[ty][k]`), never a range. */
  private readonly rowAffine: AffineFacts
  /** Affine forms evaluated in 64-bit integers (AffineOptions.exact64), with loop terms: for loopSites. */
  private readonly loopAffine: AffineFacts
  private readonly cfg: Cfg
  /** The thread-loop schedule of a kernel with barriers (its block-level loops run here). */
  private readonly plan?: ThreadLoopSchedule
  /** Bytes per thread of the loops' slots (0 without a plan). */
  slotBytes = 0
  /** Slot offset (from the thread's LB) of each per-thread register, and of the thread's state. */
  private readonly slotOf = new Map<number, number>()
  /** Slot offset of each collective input a lane leaves (`in:<instruction>:<input>`). */
  private readonly inputSlots = new Map<string, number>()
  private stateOff = 0
  /** Level of the current thread's `R` block (a uniform departure leaves it) and its decision local X. */
  private rLevel = 0
  /** Codes of block-wide decisions, by `kind:node`. */
  private readonly codes = new Map<string, number>()
  /** Writing warp-level lane loops. */
  private warpLevel = false
  /** Emitting the thread loop's copy without the hoisted sites' checks (a block whose ranges were tested). */
  private unchecked = false
  /** Accesses whose every thread's address is inv + c·tid.x: one range test per block (emit-js.ts hoistable). */
  private readonly hoisted = new Map<string, { index: number; space: Space; n: number; al: number; inv: InvExpr; off: number; c: number; conds: Array<{ inv: InvExpr; c: number; lo: number }>; hv: number; tx?: TxInterval }>()
  /** Global accesses in loops whose address in iteration k is inv + off + c·tid.x + (k + next)·step, the loop
   *  with a trip bound (loopSite): tested together once per block over every iteration any of its threads
   *  can reach (loopTest, into loopOk), so that a 4-lane turn where the test held runs their loops without
   *  tests of their own (coverLoop). */
  readonly loopSites = new Map<string, { index: number; n: number; al: number; inv: InvExpr; off: number; c: number; conds: SiteCond[]; iv: SiteIv }>()
  /** The block's loopTest result (a local), once a loop site is found. */
  private loopOk: number | undefined
  /** Instructions of the loops being written in a 4-lane turn that found loopOk set (coverLoop): their
   *  global accesses need no lane test, and their 64-bit widenings of 32-bit values none either (the test
   *  held each such value's range in every iteration). */
  private readonly vCovered = new Set<number>()
  /** The tx of the threads that run the code being written, where a warp-level `if` narrows them (its
   *  guard's stayRange): a site hoisted there is tested over those threads only (blockTest). */
  private siteTx: TxInterval | undefined
  /** Kernel parameter loads, read once per call at entry: local by `offset:memory type`. */
  private readonly params = new Map<string, { local: number; off: number; mt: string }>()
  /** Shared/local accesses checked together at the start of their run (window-groups.ts). */
  private readonly windows: WindowGroups
  /** SIMD across threads (simd-plan.ts): the plan while a 4-lane path may still be written, the 4-lane
   *  registers, and the levels a group leaves by (done, or its lanes parted). */
  private simd?: SimdPlan
  private vmode = false
  /** Writing the block-uniform instructions (writeVectorPrologue); set when that succeeded. */
  private vprologue = false
  private vectorPrologue: true | undefined
  /** The 4-lane path was written. */
  vectorized = false
  /** Thread loops (their first instruction) with a 4-lane turn. */
  readonly vectorLoops = new Set<number>()
  /** PTX lines of the load sites whose next block's cache lines each block reads ahead (touchNextBlock). */
  readonly readAhead = new Set<number>()
  /** PTX lines of the shared accesses 4-lane turns make without a test of their own after hullTest. */
  readonly hullLines = new Set<number>()
  private vregs = new Map<number, number>()
  /** Lane locals of the wide registers of a 4-lane turn (vwideLocals). */
  private vwide = new Map<number, number[]>()
  /** Warp runs written 32 lanes at once (warpRun), by their first shuffle's PTX line, for mod.inspect. */
  readonly warpRuns = new Set<number>()
  /** Runs of lane loops without shuffles written 32 lanes at once (laneRunEnd), by their first PTX line. */
  readonly laneRuns = new Set<number>()
  /** `if`s once per warp a whole warp may skip (skipWholeWarp), by their branch's PTX line, for mod.inspect;
   *  those tested on the warp's tx range in `skipsByRange`. */
  readonly warpSkips = new Set<number>()
  readonly skipsByRange = new Set<number>()
  /** A lane's branch out of a region that no lane takes where it is written (skipWholeWarp's narrowed
   *  region): no code. */
  private elided = -1
  /** The warp-level item being written starts where every lane of the warp runs (warpItems' `settled`). */
  private regionSettled = false
  /** The plan is the writer's own (planLoops: a kernel without barriers whose threads loop). */
  ownPlan = false
  /** The own plan's loop runs the threads the branch at this PTX line keeps (narrowsAll). */
  narrowedAt: number | undefined
  /** Those of them that take in the lane loop before their first shuffle or after their last (edgeLaneLoop). */
  readonly warpRunEdges = new Set<number>()
  private vDone = 0
  private vFail = 0
  /** The branches to vFail written in this turn (vbail). */
  private vBails = 0
  /** A 4-lane thread-loop turn (vectorTurn) has stored to memory: a lane test can no longer send the group
   *  back to one thread at a time. */
  private vStored = false
  /** Writing a 4-lane turn again with a pre-pass of the whole turn first (vectorTurnOrPrepassed). */
  private vTurnPre = false
  /** vinstruction4 writes an integer instruction: f32 registers are read as their bits (vrd). */
  private vIntBits = false
  private readonly movedOnly = new Map<number, boolean>()
  /** The instructions that read each register (by index, ascending). */
  private readonly usesOf = new Map<number, number[]>()
  /** The instructions that write each register (by index, ascending). */
  private readonly defsOf = new Map<number, number[]>()
  /** Writing a loop's pre-pass (vloopPrecheck): the instructions it computes (control and addresses), and
   *  the global accesses it tests. */
  private vSlice?: Set<number>
  private vSliceTests = new Set<number>()
  /** Accesses and branches a loop's pre-pass has tested in this turn, on the values the loop then computes
   *  again: written without their lane tests after the loop's stores. */
  private readonly vPreLoop = new Set<number>()
  /** Writing a 4-lane turn of a thread loop (vectorTurn), not the whole-kernel group (vectorGroup). */
  private vLoop = false
  /** In a 4-lane turn: registers whose lanes are known to differ by a constant (lane k = lane 0 + k·stride,
   *  mod 2^32), from the values the turn starts with and the integer arithmetic on them written so far at
   *  the loop's top level; and the instructions at that level. */
  private readonly vstride = new StrideMap()
  /** The scalar local of each register's lane 0 (StrideMap.lane0), by register (-1: tid.x). */
  private readonly lane0Locals = new Map<number, number>()
  /** In a 4-lane turn: 64-bit registers whose lanes are lane 0's value + k·stride (exact mod 2^64), of which
   *  only lane 0's local is written (vwideStrided): the other lanes' locals are stale until materialized. */
  private vwstride = new Map<number, number>()
  /** Instructions whose one 64-bit destination has a single definition that every use comes after
   *  (dominates): vwideStrided may give it a stride; `local` where every use is in its basic block (an address
   *  computed for the accesses next to it), so that lane 0 alone may be written. */
  private readonly localWide = new Map<number, 'local' | 'dominated'>()
  /** 64-bit registers with a stride whose other lanes' locals hold their values too (vmaterialize). */
  private readonly vwLanes = new Set<number>()
  private vTop = new Set<number>()
  /** In a 4-lane turn: the registers each loop (structure node) only steps by a block value, whose stride
   *  holds all through it and after it. */
  private readonly vLoopSteps = new Map<number, Set<number>>()
  /** Shared accesses (and window runs, by their first access) whose lane test a 4-lane turn made at its start
   *  (vprecheck), not where they are. */
  private readonly vPre = new Set<number>()
  /** Instructions of the block-level loop being written that were computed once before it (uniformPrefix),
   *  and the registers they define. */
  private readonly preComputed = new Set<number>()
  private readonly preComputedRegs = new Set<number>()
  /** Where each such register's value is also kept, in thread 0's slots (LB0 + offset): a 4-lane turn
   *  splats it from there (V8 would move a computation read only inside the loop's turns into them). */
  private readonly preSlot = new Map<number, number>()
  private readonly vPreRuns = new Set<number>()
  /** The thread loop being written: its shared accesses that a test before it (hullTest) found inside the
   *  window for every thread of [LO, HI), and the local holding whether it did (4-lane turns run only then,
   *  without those accesses' own tests). */
  private hull?: { flag: number; sites: ReadonlySet<number> }
  /** In a 4-lane turn: the registers a 4-lane turn leaves out that are block values read after the loop
   *  (computed by one scalar instruction each, from block values), the loop's written registers, and the
   *  scalar ones written so far. */
  private vScalar = new Set<number>()
  /** A region ran lane by lane (vscalarIf): no lane test may come after it. */
  private vLaneByLane = false
  /** Writing a warp run's closing loop: an if whose lanes part runs them one by one (vscalarIf) before the
   *  run's first store too (nothing after such an if can fail the run). */
  private vIfByLane = false
  /** Instructions of the turn written lane by lane (vperLane, vglobalLanes). */
  private vLaneCount = 0
  /** A turn ran floating-point arithmetic lane by lane (no 4-lane form: f64, directed roundings, special
   *  functions): no faster than the whole-grid loop's scalar code, or slower (ownByChoice). */
  vLaneFloat = false
  private vWritten = new Set<number>()
  private readonly vScalarDone = new Set<number>()
  /** Window limits by space, size and alignment (windowLimit). */
  private readonly limits = new Map<string, number>()
  /** Tensor-core collectives registered with the module (tensorOp). */
  private readonly tensorIds = new Map<string, number>()

  /** The writer's own plan was taken for a kernel without loops or a narrowed interval (`preferOwn`): kept
   *  only where its turns are 4-lane ones (writeWasmModule). */
  ownByChoice = false

  constructor(private readonly k: WasmKernelInput, private readonly layout: ModuleLayout, private readonly funcs: Record<Imported, number>, private readonly globals: Record<string, number>, private readonly helpers: Helpers, private readonly callees: Callees, preferOwn = false) {
    this.fn = k.fn
    if (k.suspends) throw new WasmRefusal(`its threads suspend at barriers or collectives in the continuation scheme${k.plan?.kind === 'fallback' ? ` (${k.plan.reason})` : ''}, which only the JavaScript tier has`)
    if (k.plan?.kind === 'fallback') throw new WasmRefusal(`it runs in the continuation scheme: ${k.plan.reason}`)
    if (k.plan?.kind === 'loops') {
      const lowered = new Set(['bar', 'shfl', 'vote', 'activemask', 'elect', 'redux', 'warpsync', 'match', 'mma', 'ldmatrix', 'stmatrix', 'movmatrix'])
      const c = this.fn.instructions.find((x) => { const k2 = collectiveOf(x); return k2 !== undefined && !lowered.has(k2.kind) })
      if (c) throw new WasmRefusal(`\`${c.text}\` (PTX line ${c.line}) is a collective the wasm thread loops do not compute yet`, c.line, c.text)
      this.plan = k.plan
    }
    this.classes = assignRegisterClasses(this.fn)
    this.structure = structureFunction(this.fn)
    if (this.structure.kind !== 'structured') throw new WasmRefusal(`its control flow does not nest (${this.structure.reason})`)
    const cfg = buildCfg(this.fn)
    this.cfg = cfg
    this.affine = analyzeAffine(this.fn, cfg, this.classes, { wideParams: true })
    if (!this.plan && k.planLoops && this.fn.kind === 'entry') {
      // a kernel without barriers whose threads loop (a grid- or block-stride loop): one thread loop over its
      // code, so that four threads of a row take each turn together (vectorTurn), the loop's trips included;
      // its lanes do not talk through memory (else the JavaScript tier would have planned its lockstep points).
      // Also one whose threads but a few branch past all of its code (`if (threadIdx.x == 0) …`): the thread
      // loop then runs those few of each block (threadLoopTxRange), where the whole-grid loop tests them all.
      const loops = helpers.simd && this.hasLoop(this.structure.body)
      const extra = new Map<number, number[]>()
      for (const [i, c] of k.contraction ?? []) extra.set(i, usedRegisters(this.fn.instructions[c.mul]!))
      const p = planThreadLoops(this.fn, { cfg, structure: this.structure, liveness: analyzeLiveness(this.fn, cfg, extra.size ? extra : undefined), lockstep: false, ...(extra.size ? { extraUses: extra } : {}) })
      const blockLoops = p.kind === 'loops' && p.schedule.every((x) => x.kind === 'threads' && x.level === 'block')
      let narrows: number | undefined
      if (blockLoops && !loops && p.schedule.length === 1) {
        // (with the loop's uniform prefix computed once before it, as write() computes it: a bound it loads)
        this.plan = p
        const it = p.schedule[0] as ThreadLoop
        narrows = narrowsAll(this.fn, it, p, this.structure, this.affine, cfg, new Set(this.uniformPrefix(it)))
        this.plan = undefined
      }
      const chosen = preferOwn && !!helpers.simd && !loops && narrows === undefined
      if (blockLoops && (loops || narrows !== undefined || chosen)) { this.plan = p; this.ownPlan = true; this.ownByChoice = chosen }
      if (narrows !== undefined) this.narrowedAt = this.fn.instructions[narrows]!.line
    }
    this.rowAffine = analyzeAffine(this.fn, cfg, this.classes, { wideParams: true, rowInvariant: true })
    this.loopAffine = analyzeAffine(this.fn, cfg, this.classes, { wideParams: true, exact64: true })
    {
      const defs = this.defsOf, uses = this.usesOf
      this.fn.instructions.forEach((x, i) => {
        for (const r of definedRegisters(x)) (defs.get(r) ?? defs.set(r, []).get(r)!).push(i)
        for (const r of usedRegisters(x)) (uses.get(r) ?? uses.set(r, []).get(r)!).push(i)
      })
      for (const [r, d] of defs) {
        if (d.length !== 1 || this.classes[r] !== 'i64') continue
        const at = d[0]!, bd = cfg.blockOf[at]!
        const us = uses.get(r) ?? []
        if (us.every((u) => u > at && cfg.blockOf[u] === bd)) this.localWide.set(at, 'local')
        else if (us.every((u) => (cfg.blockOf[u] === bd ? u > at : dominates(cfg, bd, cfg.blockOf[u]!)))) this.localWide.set(at, 'dominated')
      }
    }
    this.windows = planWindowGroups(this.fn, cfg, this.classes)
    const isFunc = this.fn.kind === 'func'
    this.b = new FunctionBody(isFunc ? FUNC_PARAMS.map(() => 'i32' as const) : ['i32', 'i32', 'i32', 'i32', 'i32'])
    if (isFunc) FUNC_PARAMS.forEach((n, i) => { this.L[n] = i })
    this.regs = this.classes.map((c) => this.b.local(classType(c)))
    for (const g of LAUNCH_GLOBALS) if (!(isFunc && g === 'PSP')) this.L[g] = this.b.local('i32')
    for (const n of ['b', 'cx', 'cy', 'cz', 't', 'tx', 'ty', 'tz', 'LB', 'a32', 'NT', 'LF']) if (this.L[n] === undefined) this.L[n] = this.b.local('i32')
    this.L.a = this.b.local('i64')
  }

  private fail(msg: string): never {
    throw new WasmRefusal(`\`${this.cur.text}\` (PTX line ${this.cur.line}): ${msg}`, this.cur.line, this.cur.text)
  }

  /** A scratch local of type t, by purpose (reused). */
  private tmp(name: string, t: ValType): number {
    const key = `${name}:${t}`
    let i = this.scratch.get(key)
    if (i === undefined) { i = this.b.local(t); this.scratch.set(key, i) }
    return i
  }

  private row(): number { return this.k.rowBase + this.cur.index }

  write(): FunctionBody {
    if (this.fn.kind === 'func') return this.writeFunction()
    const { b, L } = this
    const [T0, T1, FB, B0, B1] = [0, 1, 2, 3, 4]
    if (this.plan) {
      // per-thread slots after the kernel's own local memory: the thread's state (i32), then 8 bytes a register
      const base = Math.ceil(this.k.frame.localSize / 16) * 16
      this.stateOff = base
      this.slotBytes = 8
      for (const r of this.plan.perThread) this.slotOf.set(r, this.nextSlot())
      L.X = b.local('i32')
      L.W0 = b.local('i32')
      L.W1 = b.local('i32')
      // tid.x/y/z of the warp's first lane, split once per warp for its lane loops
      L.wx = b.local('i32')
      L.wy = b.local('i32')
      L.wz = b.local('i32')
    }
    for (const g of LAUNCH_GLOBALS) b.gget(this.globals[g]!).set(L[g]!)
    b.get(L.NTX!).get(L.NTY!).op(Op.i32_mul).get(L.NTZ!).op(Op.i32_mul).set(L.NT!)
    if (this.plan?.warps && !this.plan.threadsEnd) {
      // every thread starts running (state 0), and is running again at each block's end (blockSchedule)
      b.i32(0).set(L.t!)
      const done = b.open('block'), lp = b.open('loop')
      b.get(L.t!).get(L.NT!).op(Op.i32_ge_u).brIf(done)
      b.get(L.LB0!).get(L.t!).get(L.LN!).op(Op.i32_mul).op(Op.i32_add).i32(0).mem(Op.i32_store, 2, this.stateOff)
      b.get(L.t!).i32(1).op(Op.i32_add).set(L.t!)
      b.br(lp)
      b.end().end()
    }
    // cx, cy, cz of b0 (the JS tier's block loop starts the same way)
    this.split3(B0, 'cx', 'cy', 'cz', 'NCX', 'NCY')
    b.get(B0).set(L.b!)
    const entry = b.code.length
    const done = b.open('block')
    const blocks = b.open('loop')
    b.get(L.b!).get(B1).op(Op.i32_ge_u).brIf(done)
    // the hoisted sites are found while writing the checked copy; the per-block test and the unchecked copy
    // are written after it, into a body of their own, and spliced in front
    const checked = this.plan ? this.blockSchedule(this.plan, false) : this.threadLoop(T0, T1, false)
    if (this.helpers.simd && !this.plan && this.hoisted.size > 0) this.simd = planSimd(this.fn, this.classes, this.structure, (i) => this.testedStride(i) !== undefined)
    const unchecked = this.hoisted.size > 0 ? (this.plan ? this.blockSchedule(this.plan, true) : this.threadLoop(T0, T1, true)) : undefined
    if (this.loopSites.size) this.loopTest()
    if (!unchecked) b.code.append(checked)
    else {
      this.blockTest(T0, T1)
      b.begin('if')
      b.code.append(unchecked)
      b.else()
      b.code.append(checked)
      b.end()
    }
    // next block
    b.get(L.b!).i32(1).op(Op.i32_add).set(L.b!)
    this.step3('cx', 'cy', 'cz', 'NCX', 'NCY')
    b.br(blocks)
    b.end().end()
    this.prependEntry(entry)
    return b
  }

  /** A device function: its body once, for the calling thread (FUNC_PARAMS), `ret` leaving it. */
  private writeFunction(): FunctionBody {
    const { b, L } = this
    if (this.structure.kind !== 'structured') throw new WasmRefusal('its control flow does not nest')
    for (const g of LAUNCH_GLOBALS) if (g !== 'PSP') b.gget(this.globals[g]!).set(L[g]!)
    b.get(L.NTX!).get(L.NTY!).op(Op.i32_mul).get(L.NTZ!).op(Op.i32_mul).set(L.NT!)
    const entry = b.code.length
    this.threadLevel = b.open('block')
    this.nodes(this.structure.body)
    b.end()
    this.prependEntry(entry)
    return b
  }

  /** Puts, before the code written since `entry`, what it asked to have computed once per call: the kernel
   *  parameters it reads (FB is local 2) and the window limits windowLimit handed out. */
  private prependEntry(entry: number): void {
    const { b, L } = this
    const rest = b.code.splice(entry)
    for (const p of this.params.values()) {
      b.get(2).set(L.a32!)
      this.loadAt(p.mt, p.off)
      b.set(p.local)
    }
    for (const [key, l] of this.limits) {
      const [space, n, al] = key.split(':')
      const size = space === 'shared' ? L.SHN! : L.LSZ!
      b.get(size).i32(Number(n)).op(Op.i32_sub).i32(Math.log2(Number(al) + 1)).op(Op.i32_shr_u).i32(1).op(Op.i32_add)
      b.i32(0)
      b.get(size).i32(Number(n)).op(Op.i32_ge_u)
      b.op(Op.select).set(l)
    }
    b.code.append(rest)
  }

  /** call(.uni) (rets), f, (args) to a device function with a wasm lowering (emit-instruction.ts call): the
   *  arguments copied into a frame at the parameter stack pointer, the function called with the next frame
   *  after it, the returns copied back; past the call stack's end, a `callstack` fault. */
  private call(ins: Instruction): void {
    const b = this.b, L = this.L, A = ins.operands
    let i = 0
    let rets: IrOperand[] = []
    if (A[0]?.kind === 'list') { rets = A[0].items; i = 1 }
    const target = A[i]
    if (target?.kind !== 'sym' || target.target !== 'function') return this.fail('indirect calls are not lowered')
    const name = target.name
    const args = A[i + 1]?.kind === 'list' ? (A[i + 1] as Extract<IrOperand, { kind: 'list' }>).items : []
    if (name === '__assertfail') { this.fault(SPACES.indexOf('assert'), () => b.f64(0)); return }
    if (name === 'vprintf') {
      // the format's and the argument buffer's generic addresses (the two .b64 arguments), formatted by the
      // instance as the JS tier's E.vprintf does, with the thread, the block and this call's row
      const argAt = (o: IrOperand | undefined) => {
        if (!o) { b.f64(0); return }
        if (o.kind !== 'sym') this.fail('call arguments must be .param variables')
        const v = this.k.frame.vars.get((o as { name: string }).name)
        if (!v || v.v.space !== 'param') this.fail('a vprintf argument that is not a .param variable')
        b.get(this.k.frame.localParams.has(v!.v.name) ? L.LB! : 2).mem(Op.i64_load, 0, v!.off).op(Op.f64_convert_i64_s)
      }
      b.i32(this.row()); argAt(args[0]); argAt(args[1]); b.get(L.t!)
      b.get(L.cx!).get(L.NCX!).get(L.cy!).get(L.NCY!).get(L.cz!).op(Op.i32_mul).op(Op.i32_add).op(Op.i32_mul).op(Op.i32_add)
      b.call(this.funcs.vprintf!)
      const r = this.tmp('pr', 'i32')
      b.set(r)
      const ret = rets[0]
      if (ret?.kind === 'sym') {
        const v = this.k.frame.vars.get(ret.name)
        if (v?.v.space === 'param') b.get(this.k.frame.localParams.has(v.v.name) ? L.LB! : 2).get(r).mem(Op.i32_store, 0, v.off)
      }
      return
    }
    const idx = this.callees.index(name)
    if (idx === undefined) {
      const why = this.callees.why.get(name)
      return this.fail(why ? `it calls ${name}, which has no WebAssembly lowering (${why.message})` : `a call to ${name}, which has no body in this module`)
    }
    const callee = this.callees.frames.get(name)!
    const fn = (this.k.allFunctions ?? []).find((f) => f.name === name)
    if (!fn) return this.fail(`a call to ${name}, which has no body in this module`)
    const argAddr = (o: IrOperand): void => {
      if (o.kind !== 'sym') this.fail('call arguments must be .param variables')
      const v = this.k.frame.vars.get((o as { name: string }).name)
      if (!v || v.v.space !== 'param') this.fail(`call argument ${(o as { name: string }).name} is not a .param variable`)
      b.get(this.k.frame.localParams.has(v!.v.name) ? L.LB! : 2).i32(v!.off).op(Op.i32_add)
    }
    const nf = this.tmp('nf', 'i32')
    b.get(L.PSP!).set(nf)
    b.get(nf).i32(callee.frameSize).op(Op.i32_add).get(L.PSEND!).op(Op.i32_gt_u)
    b.begin('if'); this.fault(SPACES.indexOf('callstack'), () => b.f64(0)); b.end()
    const copy = (to: () => void, from: () => void, size: number) => {
      const dst = this.tmp('cd', 'i32'), src = this.tmp('cs', 'i32')
      to(); b.set(dst); from(); b.set(src)
      let k = 0
      for (; k + 8 <= size; k += 8) b.get(dst).get(src).mem(Op.i64_load, 0, k).mem(Op.i64_store, 0, k)
      for (; k + 4 <= size; k += 4) b.get(dst).get(src).mem(Op.i32_load, 0, k).mem(Op.i32_store, 0, k)
      for (; k < size; k++) b.get(dst).get(src).mem(Op.i32_load8_u, 0, k).mem(Op.i32_store8, 0, k)
    }
    args.forEach((o, j) => {
      if (j >= fn.params.length) this.fail(`too many arguments for ${name}`)
      copy(() => b.get(nf).i32(callee.paramOffsets[j]!).op(Op.i32_add), () => argAddr(o), fn.params[j]!.size)
    })
    // LB, LF (the callee's locals after this function's), FB, PSP, t, tid, ctaid
    b.get(L.LB!).get(L.LF!).i32(this.k.frame.localSize).op(Op.i32_add).get(nf).get(nf).i32(callee.frameSize).op(Op.i32_add)
    for (const n of ['t', 'tx', 'ty', 'tz', 'cx', 'cy', 'cz']) b.get(L[n]!)
    b.call(idx)
    rets.forEach((o, j) => {
      if (j >= fn.returns.length) this.fail(`too many return values for ${name}`)
      copy(() => argAddr(o), () => b.get(nf).i32(callee.retOffsets[j]!).op(Op.i32_add), fn.returns[j]!.size)
    })
  }

  // --- SIMD across threads (simd-plan.ts) ---

  /** The stride in tid.x (bytes) of memory access i when the per-block test covers it, else undefined. */
  private testedStride(index: number): number | undefined {
    const h = this.hoisted.get(`${index}:0`)
    return h && h.space !== 'shared' && (h.c === 0 || h.c === 4) ? h.c : undefined
  }

  /** In the unchecked thread loop: threads t … t+3 (tid.x a multiple of 4, all in one row) as one 4-lane run
   *  of the kernel; when their lanes part at a branch, nothing has been stored yet (simd-plan.ts), and the
   *  loop goes on with thread t alone. If an instruction has no 4-lane form, no 4-lane code is written. */
  private vectorGroup(T1: number, threads: number): void {
    const { b, L } = this
    const mark = b.mark()
    const levels = new Map(this.level)
    try {
      const whole = () => {
        b.get(L.tx!).i32(3).op(Op.i32_and).op(Op.i32_eqz)
        b.get(L.tx!).i32(4).op(Op.i32_add).get(L.NTX!).op(Op.i32_le_u).op(Op.i32_and)
        b.get(L.t!).i32(4).op(Op.i32_add).get(T1).op(Op.i32_le_u).op(Op.i32_and)
      }
      whole()
      b.begin('if')
      this.vFail = b.open('block')
      this.vBails = 0
      // the next group, where it is whole, without going round the thread loop
      const again = b.open('loop')
      this.vDone = b.open('block')
      b.get(L.tx!).simd(SimdOp.i32x4_splat).i32x4([0, 1, 2, 3]).simd(SimdOp.i32x4_add).set(this.vlocal(-1))
      this.vmode = true
      this.nodes(this.structure.kind === 'structured' ? this.structure.body : [])
      this.vmode = false
      b.br(this.vDone)
      b.end()
      // the four threads ran: t += 4, tid.x += 4 (into the next row when that ends the row)
      b.get(L.t!).i32(4).op(Op.i32_add).set(L.t!)
      b.get(L.tx!).i32(4).op(Op.i32_add).tee(L.tx!).get(L.NTX!).op(Op.i32_eq)
      b.begin('if').i32(0).set(L.tx!)
      b.get(L.ty!).i32(1).op(Op.i32_add).tee(L.ty!).get(L.NTY!).op(Op.i32_eq)
      b.begin('if').i32(0).set(L.ty!).get(L.tz!).i32(1).op(Op.i32_add).set(L.tz!).end()
      b.end()
      whole(); b.brIf(again)
      b.end()
      b.br(threads)
      b.end()
      b.end()
      this.vectorized = true
    } catch (e) {
      if (!(e instanceof NotVectorizable) && !(e instanceof WasmRefusal)) throw e
      this.vmode = false
      b.rewind(mark)
      this.level.clear()
      for (const [k, v] of levels) this.level.set(k, v)
      this.simd = undefined
    }
  }

  /** The block-uniform instructions (simd-plan.ts) as 4-lane values, once per block before the thread loop;
   *  on an instruction without a 4-lane form, nothing (and no 4-lane path). */
  private writeVectorPrologue(): void {
    const b = this.b
    const mark = b.mark()
    try {
      this.vmode = true
      this.vprologue = true
      for (const i of this.simd!.uniform) this.instruction(this.fn.instructions[i]!)
      this.vectorPrologue = true
    } catch (e) {
      if (!(e instanceof NotVectorizable) && !(e instanceof WasmRefusal)) throw e
      b.rewind(mark)
      this.simd = undefined
    } finally {
      this.vmode = false
      this.vprologue = false
    }
  }

  /** The v128 local of register r (-1: tid.x of the four lanes). */
  private vlocal(r: number): number {
    let l = this.vregs.get(r)
    if (l === undefined) { l = this.b.local('v128'); this.vregs.set(r, l) }
    return l
  }

  private vfail(what: string): never { throw new NotVectorizable(`${this.cur.text}: ${what}`) }

  /** A block value the loop computes as one thread does (the same in every lane), from block values. */
  private vscalar(ins: Instruction): void {
    for (const u of usedRegisters(ins)) if (this.vWritten.has(u) && !this.vScalarDone.has(u)) this.vfail('a block value computed from per-thread values')
    this.vmode = false
    try { this.instruction(ins) } finally { this.vmode = true; this.cur = ins }
    for (const r of definedRegisters(ins)) this.vScalarDone.add(r)
  }

  /** The four f32 lanes on the stack with each subnormal flushed to a zero of its sign (the scalar helper's
   *  ftz, lane by lane). */
  private vftz(): void {
    const b = this.b, v = this.tmp('vftz', 'v128')
    b.set(v)
    b.get(v).i32x4(SIGN32X4).simd(SimdOp.v128_and)
    b.get(v)
    b.get(v).simd(SimdOp.f32x4_abs).i32x4([0x00800000, 0x00800000, 0x00800000, 0x00800000]).simd(SimdOp.f32x4_lt)
    b.simd(SimdOp.v128_bitselect)
  }

  /** An f32 instruction of four lanes computed in binary64, two lanes at a time: operand A[1] (flushed first
   *  with `ftzIn`), each half promoted into a local that `half` reads, leaving its f64x2 result, rounded back
   *  to f32, the halves joined into A[0] (flushed with `ftzOut`). */
  private vHalves(A: readonly IrOperand[], ftzIn: boolean, ftzOut: boolean, half: (X: number) => void): void {
    const b = this.b, x = this.tmp('vhx', 'v128'), X = this.tmp('vhX', 'v128')
    this.vwr(A[0], () => {
      this.vrd(A[1]); if (ftzIn) this.vftz()
      b.set(x)
      for (const high of [false, true]) {
        b.get(x); if (high) b.get(x).shuffle(HIGH_HALF)
        b.simd(SimdOp.f64x2_promote_low_f32x4).set(X)
        half(X)
        b.simd(SimdOp.f32x4_demote_f64x2_zero)
      }
      b.shuffle(JOIN_HALVES)
      if (ftzOut) this.vftz()
    })
  }

  /** Pushes operand o for the four lanes (i32 lanes; f32 values as their bits). */
  private vrd(o: IrOperand | undefined): void {
    const b = this.b
    if (!o) return this.vfail('a missing operand')
    switch (o.kind) {
      case 'reg': {
        const c = this.classes[o.id]
        if (c !== 'i32' && c !== 'f32' && c !== 'pred') return this.vfail('a register that is not 32 bits wide')
        b.get(this.vlocal(o.id))
        if (c === 'f32' && this.vIntBits) {
          // bitselect(bits, NaN's 0x7fffffff, lanes that are not NaN)
          b.i32x4([0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff]).get(this.vlocal(o.id)).get(this.vlocal(o.id)).simd(SimdOp.f32x4_eq).simd(SimdOp.v128_bitselect)
        }
        return
      }
      case 'imm': {
        const im = o.imm
        if (im.kind === 'int') b.i32(Number(BigInt.asIntN(32, im.value)))
        else if (im.kind === 'f32') b.i32(Number(BigInt.asIntN(32, im.bits)))
        else return this.vfail('an immediate of this kind')
        b.simd(SimdOp.i32x4_splat); return
      }
      case 'special': {
        if (o.name === '%tid.x') { b.get(this.vlocal(-1)); return }
        if (!['%tid.y', '%tid.z', '%ntid.x', '%ntid.y', '%ntid.z', '%ctaid.x', '%ctaid.y', '%ctaid.z', '%nctaid.x', '%nctaid.y', '%nctaid.z'].includes(o.name)) return this.vfail(`${o.name} in 4 lanes`)
        this.special(o.name, 'i32'); b.simd(SimdOp.i32x4_splat)
        return
      }
      case 'sym': {
        if (o.target === 'function' || this.frameLocal(o.name) !== undefined) return this.vfail('a symbol of this kind')
        const a = this.symAddr(o.name)
        if (a === undefined) return this.vfail(`unknown symbol ${o.name}`)
        b.i32(a).simd(SimdOp.i32x4_splat); return
      }
      default: return this.vfail('an operand of this kind')
    }
  }

  /** Writes the v128 `push` leaves to register o (a guarded instruction: only in the lanes whose guard holds). */
  private vwr(o: IrOperand | undefined, push: () => void): void {
    const b = this.b, ins = this.cur
    if (o?.kind !== 'reg') return this.vfail('a destination that is not a register')
    const c = this.classes[o.id]
    if (c !== 'i32' && c !== 'f32' && c !== 'pred') return this.vfail('a destination that is not 32 bits wide')
    const d = this.vlocal(o.id)
    push()
    if (ins.guard) {
      // bitselect(new, old, mask)
      b.get(d)
      this.vguard(ins.guard)
      b.simd(SimdOp.v128_bitselect)
    }
    b.set(d)
    if (this.vLoop) {
      // (inside a region of the turn too: its four lanes go through it together, and the registers it defines
      // lose their strides where it ends, nodes())
      const st = ins.guard ? undefined : this.strideOf(ins)
      if (st === undefined) this.vstride.delete(o.id); else this.vstride.set(o.id, st)
      if (c === 'i32' && this.lane0Of(ins)) this.setLane0(o.id)
    }
  }

  /** Pushes lane 0's value of 32-bit integer instruction `ins` (mov, add, sub, mul.lo, mad.lo, shl by an
   *  immediate below 32, and, or, xor) from its operands' lane-0 locals, immediates and shared variables, as the four lanes'
   *  arithmetic computes it (wrapping modulo 2^32); false, pushing nothing, where an operand has none. */
  private lane0Of(ins: Instruction): boolean {
    const A = ins.operands, t = ins.type ?? ''
    if (ins.guard || ins.flags.cc || ins.flags.sat || !['s32', 'u32', 'b32'].includes(t)) return false
    const L0 = this.vstride.lane0
    // (a symbol as vrd reads it: a shared variable's window offset)
    const sym = (o: IrOperand | undefined): number | undefined => (o?.kind === 'sym' && o.target !== 'function' && this.frameLocal(o.name) === undefined ? this.symAddr(o.name) : undefined)
    const ok = (o: IrOperand | undefined): boolean =>
      (o?.kind === 'imm' && o.imm.kind === 'int') || (o?.kind === 'reg' && L0.has(o.id)) || (o?.kind === 'special' && o.name === '%tid.x' && L0.has(-1)) || sym(o) !== undefined
    const push = (o: IrOperand | undefined): void => {
      if (o?.kind === 'imm' && o.imm.kind === 'int') this.b.i32(Number(BigInt.asIntN(32, o.imm.value)))
      else if (o?.kind === 'sym') this.b.i32(sym(o)!)
      else this.b.get(L0.get(o?.kind === 'reg' ? o.id : -1)!)
    }
    const OPS: Record<string, number> = { add: Op.i32_add, sub: Op.i32_sub, and: Op.i32_and, or: Op.i32_or, xor: Op.i32_xor }
    if (ins.op === 'mov' && A.length === 2 && ok(A[1])) { push(A[1]); return true }
    if (OPS[ins.op] !== undefined && A.length === 3 && ok(A[1]) && ok(A[2])) { push(A[1]); push(A[2]); this.b.op(OPS[ins.op]!); return true }
    if (ins.op === 'mul' && ins.part === 'lo' && A.length === 3 && ok(A[1]) && ok(A[2])) { push(A[1]); push(A[2]); this.b.op(Op.i32_mul); return true }
    if (ins.op === 'mad' && ins.part === 'lo' && A.length === 4 && ok(A[1]) && ok(A[2]) && ok(A[3])) { push(A[1]); push(A[2]); this.b.op(Op.i32_mul); push(A[3]); this.b.op(Op.i32_add); return true }
    const k = A[2]
    if (ins.op === 'shl' && A.length === 3 && ok(A[1]) && k?.kind === 'imm' && k.imm.kind === 'int' && k.imm.value >= 0n && k.imm.value < 32n) { push(A[1]); this.b.i32(Number(k.imm.value)).op(Op.i32_shl); return true }
    return false
  }

  /** Pops the i32 on the stack into register r's lane-0 local and claims it (after r's stride was set). */
  private setLane0(r: number): void {
    let l = this.lane0Locals.get(r)
    if (l === undefined) { l = this.b.local('i32'); this.lane0Locals.set(r, l) }
    this.b.set(l)
    this.vstride.lane0.set(r, l)
  }

  /** The lane-to-lane difference of an operand's value in a 4-lane turn, when known. */
  private operandStride(o: IrOperand | undefined): number | undefined {
    if (!o) return undefined
    switch (o.kind) {
      case 'imm': case 'sym': return 0
      case 'special': return o.name === '%tid.x' ? 1 : ['%tid.y', '%tid.z', '%ntid.x', '%ntid.y', '%ntid.z', '%ctaid.x', '%ctaid.y', '%ctaid.z', '%nctaid.x', '%nctaid.y', '%nctaid.z'].includes(o.name) ? 0 : undefined
      case 'reg': return this.vstride.get(o.id)
      default: return undefined
    }
  }

  /** The lane-to-lane difference of what 32-bit integer instruction `ins` writes, from its operands'
   *  (mod 2^32): moves, sums, differences, products and left shifts by a constant, and anything whose
   *  operands are the same in every lane. */
  private strideOf(ins: Instruction): number | undefined {
    const A = ins.operands, t = ins.type ?? ''
    const i32 = t === 's32' || t === 'u32' || t === 'b32'
    const s = (j: number) => this.operandStride(A[j])
    const imm = (j: number) => immI32(A[j])
    const prod = (x: number, y: number): number | undefined => {
      const sx = s(x), sy = s(y)
      if (sx === 0 && sy === 0) return 0
      const kx = imm(x), ky = imm(y)
      if (sx !== undefined && ky !== undefined) return Math.imul(sx, ky)
      if (sy !== undefined && kx !== undefined) return Math.imul(sy, kx)
      return undefined
    }
    if (i32 && !ins.flags.cc && !ins.flags.sat) {
      switch (ins.op) {
        case 'mov': return s(1)
        case 'add': { const x = s(1), y = s(2); return x === undefined || y === undefined ? undefined : (x + y) | 0 }
        case 'sub': { const x = s(1), y = s(2); return x === undefined || y === undefined ? undefined : (x - y) | 0 }
        case 'mul': return ins.part === 'lo' ? prod(1, 2) : undefined
        case 'mad': { if (ins.part !== 'lo') return undefined; const p = prod(1, 2), z = s(3); return p === undefined || z === undefined ? undefined : (p + z) | 0 }
        case 'shl': { const k = imm(2), x = s(1); return k !== undefined && k >= 0 && k < 32 && x !== undefined ? (x << k) | 0 : undefined }
      }
    }
    // a kernel parameter (hoisted into a local) is the same in every lane
    if (ins.op === 'ld') return this.paramLocal(ins) !== undefined ? 0 : undefined
    if (ins.op === 'st') return undefined
    // the same inputs in every lane give the same value in every lane
    return A.slice(1).every((o) => this.operandStride(o) === 0) ? 0 : undefined
  }

  /** The i32x4 on the stack times constant c (a shift where c is a power of two: V8 keeps i32x4.mul). */
  private vmulImm(c: number): void {
    const b = this.b
    c |= 0
    if (c === 1) return
    if (c > 0 && (c & (c - 1)) === 0) { b.i32(31 - Math.clz32(c)).simd(SimdOp.i32x4_shl); return }
    b.i32(c).simd(SimdOp.i32x4_splat).simd(SimdOp.i32x4_mul)
  }

  /** The lanes where guard g holds, as a mask. */
  private vguard(g: { reg: number; negate: boolean }): void {
    if (this.classes[g.reg] !== 'pred') this.vfail('a guard that is not a predicate register')
    this.b.get(this.vlocal(g.reg))
    if (g.negate) this.b.simd(SimdOp.v128_not)
  }

  /** One instruction in 4 lanes: its 4-lane form; in a thread loop's turn, where it has none, each lane's
   *  scalar code (vperLane) for arithmetic, and per lane accesses for global loads and stores (vglobalLanes). */
  private vinstruction(ins: Instruction): void {
    if (this.vSlice) {
      // a loop's pre-pass (vloopPrecheck): its control and address arithmetic, and its accesses' tests
      if (this.vSliceTests.has(ins.index)) return this.vglobalLanes(ins, true)
      if (ins.op !== 'bra' && !this.vSlice.has(ins.index)) return
    }
    if (this.vLoop && this.vwideStrided(ins)) return
    // 64-bit registers kept as lane 0 and a stride: their lanes, where this instruction reads them as such
    // (a global access reads them as they are, vglobalLanes)
    const globalAccess = (ins.op === 'ld' || ins.op === 'st') && ins.space === 'global'
    for (const r of usedRegisters(ins)) if (this.vwstride.has(r) && !(globalAccess && this.addressBase(ins) === r)) this.vmaterialize(r)
    for (const r of definedRegisters(ins)) if (this.vwstride.has(r)) this.vmaterialize(r)
    this.vinstructionLanes(ins)
    for (const r of definedRegisters(ins)) { this.vwstride.delete(r); this.vwLanes.delete(r) }
  }

  /** The register an access's address is based on. */
  private addressBase(ins: Instruction): number | undefined {
    const o = ins.operands[ins.op === 'st' || ins.op === 'red' ? 0 : 1]
    return o?.kind === 'addr' && o.base?.kind === 'reg' ? o.base.id : undefined
  }

  /** Pushes lane k of 64-bit register r in a 4-lane turn (lane 0 + k·stride where only lane 0 is kept). */
  private vwideLane(r: number, k: number): void {
    const s = this.vwstride.get(r)
    this.b.get(this.vwideLocals(r)[s === undefined ? k : 0]!)
    if (s !== undefined && k && s) this.b.i64(BigInt(k * s)).op(Op.i64_add)
  }

  /** Writes lanes 1–3 of a 64-bit register kept as lane 0 and a stride (once; the stride stays known). */
  private vmaterialize(r: number): void {
    const s = this.vwstride.get(r)
    if (s === undefined || this.vwLanes.has(r)) return
    const l = this.vwideLocals(r)
    for (let k = 1; k < 4; k++) this.b.get(l[0]!).i64(BigInt(k * s)).op(Op.i64_add).set(l[k]!)
    this.vwLanes.add(r)
  }

  /** 64-bit address arithmetic on values whose lanes differ by a known stride (a strided loop's
   *  `cvt.s64.s32 %rd, %r; shl.b64; add.s64` to a global address), for a register used only next to it
   *  (localWide): lane 0 computed as one thread would, the stride carried (vwideLane, vmaterialize), instead
   *  of every lane's scalar code. A 32-bit value widened by sign (zero) extension keeps its stride only where
   *  the four lanes' values do not cross 2^31 (2^32): tested here, a failing group going back to one thread at
   *  a time, so only before the turn's first store, or where a loop's pre-pass made the test. */
  private vwideStrided(ins: Instruction): boolean {
    const kind = this.localWide.get(ins.index)
    if (!kind || ins.guard || ins.flags.cc || ins.flags.sat) return false
    const b = this.b, A = ins.operands, t = ins.types
    const d = A[0]
    // (a register the turn leaves out, or computes once as a block value: vinstruction4)
    if (d?.kind !== 'reg' || this.classes[d.id] !== 'i64' || this.simd?.addressOnly.has(d.id)) return false
    const wide = (o: IrOperand | undefined): { s: number; push: () => void } | undefined => {
      if (o?.kind === 'imm' && o.imm.kind === 'int') { const v = BigInt.asIntN(64, o.imm.value); return { s: 0, push: () => { b.i64(v) } } }
      if (o?.kind !== 'reg' || this.classes[o.id] !== 'i64') return undefined
      const s = this.vwstride.get(o.id)
      if (s !== undefined) return { s, push: () => { b.get(this.vwideLocals(o.id)[0]!) } }
      return undefined
    }
    /** A 32-bit operand widened: its lane 0 and stride, with the test that the lanes do not cross. */
    const narrow = (o: IrOperand | undefined, signed: boolean): { s: number; push: () => void; test: () => void } | undefined => {
      if (o?.kind !== 'reg' || this.classes[o.id] !== 'i32') return undefined
      const s = this.vstride.get(o.id)
      if (s === undefined) return undefined
      const ext = signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u
      const push = () => { b.get(this.vlocal(o.id)).simdLane(SimdOp.i32x4_extract_lane, 0).op(ext) }
      const test = () => {
        // (made by the loop's pre-pass where it ran this instruction on the same values)
        if (s === 0 || this.vPreLoop.has(ins.index) || this.vCovered.has(ins.index)) return
        // lane 3's exact value within the 32-bit range the extension reads
        push(); b.i64(BigInt(3 * s)).op(Op.i64_add)
        const v = this.tmp('vwx', 'i64')
        b.set(v)
        b.get(v).i64(signed ? -(2n ** 31n) : 0n).op(Op.i64_lt_s).get(v).i64(signed ? 2n ** 31n - 1n : 2n ** 32n - 1n).op(Op.i64_gt_s).op(Op.i32_or)
        this.vleave()
      }
      return { s, push, test }
    }
    const canTest = () => this.vPreLoop.has(ins.index) || this.vCovered.has(ins.index) || (!this.vStored && !this.vLaneByLane)
    const l0 = this.vwideLocals(d.id)[0]!
    const out = (s: number, emit: () => void) => {
      if (!Number.isSafeInteger(s) || Math.abs(s) > 2 ** 31) return false
      emit(); b.set(l0)
      this.vwstride.set(d.id, s)
      this.vwLanes.delete(d.id)
      // a register used beyond its block: every lane's local written now (its uses read them as they are)
      if (kind === 'dominated') this.vmaterialize(d.id)
      return true
    }
    switch (ins.op) {
      case 'mov': { const x = wide(A[1]); return x ? out(x.s, x.push) : false }
      case 'ld': {
        // a 64-bit kernel parameter: the same in every lane
        const p = this.paramLocal(ins)
        return p?.kind === 'i64' ? out(0, () => { b.get(p.local) }) : false
      }
      case 'cvta': { if (!ins.flags.to || ins.space !== 'global') return false; const x = wide(A[1]); return x ? out(x.s, x.push) : false }
      case 'cvt': {
        if ((t[0] !== 's64' && t[0] !== 'u64' && t[0] !== 'b64') || (t[1] !== 's32' && t[1] !== 'u32') || ins.rounding || !canTest()) return false
        const x = narrow(A[1], t[1] === 's32')
        if (!x) return false
        x.test()
        return out(x.s, x.push)
      }
      case 'add': case 'sub': {
        if (!['s64', 'u64', 'b64'].includes(t[0] ?? '')) return false
        const x = wide(A[1]), y = wide(A[2])
        if (!x || !y) return false
        return out(ins.op === 'add' ? x.s + y.s : x.s - y.s, () => { x.push(); y.push(); b.op(ins.op === 'add' ? Op.i64_add : Op.i64_sub) })
      }
      case 'shl': {
        const k = A[2]?.kind === 'imm' && A[2].imm.kind === 'int' ? Number(A[2].imm.value) : -1
        const x = wide(A[1])
        if (!x || k < 0 || k > 31 || t[0] !== 'b64') return false
        return out(x.s * 2 ** k, () => { x.push(); b.i64(BigInt(k)).op(Op.i64_shl) })
      }
      case 'mul': {
        if (ins.part === 'lo' && ['s64', 'u64', 'b64'].includes(t[0] ?? '')) {
          // a product of block values, or of a strided value and a constant
          const x = wide(A[1]), y = wide(A[2])
          if (!x || !y) return false
          const k = (o: IrOperand | undefined) => (o?.kind === 'imm' && o.imm.kind === 'int' ? BigInt.asIntN(64, o.imm.value) : undefined)
          const push = () => { x.push(); y.push(); b.op(Op.i64_mul) }
          if (x.s === 0 && y.s === 0) return out(0, push)
          const kx = k(A[1]), ky = k(A[2])
          if (ky !== undefined && ky >= -(2n ** 31n) && ky < 2n ** 31n) return out(x.s * Number(ky), push)
          if (kx !== undefined && kx >= -(2n ** 31n) && kx < 2n ** 31n) return out(y.s * Number(kx), push)
          return false
        }
        if (ins.part !== 'wide' || (t[0] !== 's32' && t[0] !== 'u32') || !canTest()) return false
        const [xo, k] = immI32(A[2]) !== undefined ? [A[1], immI32(A[2])!] : [A[2], immI32(A[1])]
        if (k === undefined) return false
        const x = narrow(xo, t[0] === 's32')
        if (!x) return false
        x.test()
        return out(x.s * (t[0] === 's32' ? k : k >>> 0), () => { x.push(); b.i64(t[0] === 's32' ? BigInt(k) : BigInt(k >>> 0)).op(Op.i64_mul) })
      }
      default: return false
    }
  }

  private vinstructionLanes(ins: Instruction): void {
    const defs = definedRegisters(ins)
    // (the address-only registers a turn leaves out, or computes once as block values: vinstruction4)
    if (!this.vLoop || (defs.length && defs.every((r) => this.simd!.addressOnly.has(r)))) return this.vinstruction4(ins)
    const mark = this.b.mark()
    try {
      return this.vinstruction4(ins)
    } catch (e) {
      if (!(e instanceof NotVectorizable)) throw e
      // (not the carry flag's instructions: one flag for the four lanes, which lane by lane, an instruction at a
      // time, would hand one lane's carry to the next)
      const carry = ins.flags.cc === true || ins.op === 'addc' || ins.op === 'subc' || ins.op === 'madc'
      const lanewise = (!PER_LANE_NOT.has(ins.op) || (ins.op === 'ld' && this.paramLocal(ins) !== undefined)) && !collectiveOf(ins) && !carry
      const global = (ins.op === 'ld' || ins.op === 'st') && ins.space === 'global' && (ins.vector ?? 1) === 1
      if (!lanewise && !global) throw e
      this.b.rewind(mark)
      this.cur = ins
      if (global) this.vglobalLanes(ins); else this.vperLane(ins)
    }
  }

  /** The 64-bit (and other non-32-bit) registers of a 4-lane turn, one local per lane. */
  private vwideLocals(r: number): number[] {
    let l = this.vwide.get(r)
    if (!l) { const t = classType(this.classes[r]!); l = [0, 1, 2, 3].map(() => this.b.local(t)); this.vwide.set(r, l) }
    return l
  }

  private isWide(r: number): boolean { return !['i32', 'f32', 'pred'].includes(this.classes[r]!) }

  /** Lane k's value of 32-bit register r into its scalar local. */
  private vlaneToScalar(r: number, k: number): void {
    const b = this.b
    b.get(this.vlocal(r)).simdLane(SimdOp.i32x4_extract_lane, k)
    if (this.classes[r] === 'f32') b.op(Op.f32_reinterpret_i32)
    else if (this.classes[r] === 'pred') b.i32(1).op(Op.i32_and)
    b.set(this.regs[r]!)
  }

  /** 32-bit register r's scalar local into its lane k. */
  private vscalarToLane(r: number, k: number): void {
    const b = this.b
    b.get(this.vlocal(r)).get(this.regs[r]!)
    if (this.classes[r] === 'f32') b.op(Op.i32_reinterpret_f32)
    else if (this.classes[r] === 'pred') { const q = this.tmp('vq', 'i32'); b.set(q).i32(0).get(q).op(Op.i32_sub) }
    b.simdLane(SimdOp.i32x4_replace_lane, k).set(this.vlocal(r))
  }

  /** Runs `body` once per lane k with lane k as the thread: its 32-bit registers in their scalar locals, its
   *  wide registers' lane locals in place of theirs, tid.x and t its own (put back after). */
  private vlanes(regsIn: Iterable<number>, regsOut: Iterable<number>, body: (k: number) => void, thread = true): void {
    const { b, L } = this
    const ins = [...new Set(regsIn)], outs = [...new Set(regsOut)]
    const wide = [...new Set([...ins, ...outs])].filter((r) => this.isWide(r) && !this.simd!.addressOnly.has(r))
    const tx0 = this.tmp('vptx0', 'i32'), t0 = this.tmp('vpt0', 'i32'), lb0 = this.tmp('vplb0', 'i32')
    if (thread) b.get(L.tx!).set(tx0).get(L.t!).set(t0).get(L.LB!).set(lb0)
    const saved = wide.map((r) => this.regs[r]!)
    for (let k = 0; k < 4; k++) {
      if (thread) {
        b.get(tx0).i32(k).op(Op.i32_add).set(L.tx!)
        this.setThreadIndex()
        this.setLB()
      }
      for (const r of ins) if (!this.isWide(r) && this.vregs.has(r)) this.vlaneToScalar(r, k)
      wide.forEach((r) => { this.regs[r] = this.vwideLocals(r)[k]! })
      const was = this.vmode
      this.vmode = false
      try { body(k) } finally { this.vmode = was; wide.forEach((r, j) => { this.regs[r] = saved[j]! }) }
      for (const r of outs) if (!this.isWide(r)) this.vscalarToLane(r, k)
    }
    if (thread) b.get(tx0).set(L.tx!).get(t0).set(L.t!).get(lb0).set(L.LB!)
  }

  /** An instruction without a 4-lane form, as each lane's scalar code (no memory access, control flow or
   *  collective: nothing that can fault or be seen by another lane). */
  private vperLane(ins: Instruction): void {
    const defs = definedRegisters(ins)
    // a guarded instruction leaves a lane's old value where its guard fails: the destinations go in too
    // (tid.x, t and LB per lane only for what reads them: special registers, cvta of the local window)
    const thread = ins.op === 'cvta' || ins.operands.some((o) => o.kind === 'special')
    this.vlanes([...usedRegisters(ins), ...defs], defs, () => this.instruction(ins), thread)
    for (const d of defs) this.vstride.delete(d)
    this.vLaneCount++
    if (ins.types.some((t) => /^(f|bf)\d/.test(t))) this.vLaneFloat = true
  }

  /** A global load or store at per-lane addresses (a thread loop's turn): each lane's address tested against
   *  the site's cached allocation first (a lane that misses sends the group back to one thread at a time,
   *  whose turns ask the instance, fill the cache or fault), then the four accesses in lane order. */
  private vglobalLanes(ins: Instruction, testOnly = false): void {
    const b = this.b
    const A = ins.operands, t = ins.type ?? ''
    const load = ins.op === 'ld'
    const o = A[load ? 1 : 0]
    const sz = typeSize(t)
    if (ins.guard || !sz || sz > 8 || o?.kind !== 'addr' || o.base?.kind !== 'reg' || this.classes[o.base.id] !== 'i64' || this.simd!.addressOnly.has(o.base.id)) return this.vfail('a global access of this kind')
    const base = o.base.id
    const key = `${ins.index}:0`
    const site = this.siteLocals(key)
    const al = sz >= 16 ? 15 : sz - 1
    const value = load ? A[0] : A[1]
    if (value?.kind !== 'reg') return this.vfail('a global access whose value is not a register')
    const bad = this.tmp('vgbad', 'i32'), a = this.tmp('vga', 'i64')
    const addr = (k: number) => { this.vwideLane(base, k); if (o.offset) b.i64(BigInt(o.offset)).op(Op.i64_add) }
    // consecutive words known from the register's stride (vwideStrided), else tested at run time
    const known = this.vwstride.get(base) === 4
    const consecutive = () => {
      if (known) { b.i32(1); return }
      for (let k = 1; k < 4; k++) { this.vwideLane(base, k); this.vwideLane(base, 0); b.i64(BigInt(4 * k)).op(Op.i64_add).op(Op.i64_eq); if (k > 1) b.op(Op.i32_and) }
    }
    // a 32-bit word per lane at consecutive addresses (a strided loop's `x[c]`, c = tid + k·ntid, whose 64-bit
    // address each lane computes): one v128 access after one test of the four words' hull against the site's
    // cached allocation, where the lanes' addresses turn out consecutive at run time
    const words = sz === 4 && (this.classes[value.id] === 'i32' || this.classes[value.id] === 'f32')
    const consec = this.tmp('vgcons', 'i32')
    // (tested by the pre-pass of the loop it is in, vloopPrecheck, or by the block's loopTest, coverLoop: only
    // the consecutive-words test here)
    const tested = (this.vPreLoop.has(ins.index) || this.vCovered.has(ins.index)) && !testOnly
    if (tested) {
      if (words) { consecutive(); b.set(consec) }
    } else if (words) {
      consecutive()
      b.tee(consec).begin('if', 'i32')
      addr(0); b.set(a)
      b.get(a).get(site.lo).op(Op.i64_lt_s).get(a).i64(12n).op(Op.i64_add).get(site.hi).op(Op.i64_ge_s).op(Op.i32_or)
      b.get(a).op(Op.i32_wrap_i64).i32(al).op(Op.i32_and).op(Op.i32_or)
      b.else()
    }
    if (!tested) {
      b.i32(0).set(bad)
      for (let k = 0; k < 4; k++) {
        addr(k); b.set(a)
        b.get(a).get(site.lo).op(Op.i64_lt_s).get(a).get(site.hi).op(Op.i64_ge_s).op(Op.i32_or)
        if (al > 0) b.get(a).op(Op.i32_wrap_i64).i32(al).op(Op.i32_and).op(Op.i32_or)
        b.get(bad).op(Op.i32_or).set(bad)
      }
      b.get(bad)
      if (words) b.end()
      this.vleave()
    }
    if (testOnly) return
    const mt = this.memType(t, value)
    if (words) {
      b.get(consec).begin('if')
      addr(0); b.op(Op.i32_wrap_i64).get(site.d).op(Op.i32_add)
      if (load) b.simdMem(SimdOp.v128_load, 2).set(this.vlocal(value.id))
      else { this.vrd(value); b.simdMem(SimdOp.v128_store, 2) }
      b.else()
    }
    this.vlanes(load ? [] : [value.id], load ? [value.id] : [], (k) => {
      addr(k)
      b.op(Op.i32_wrap_i64).get(site.d).op(Op.i32_add).set(this.L.a32!)
      if (load) this.wr(value, this.loadKind(mt), () => this.loadAt(mt, 0))
      else { b.get(this.L.a32!); this.rd(value, this.loadKind(mt)); this.storeAt(mt, 0) }
    }, false)
    if (words) b.end()
    if (load) this.vstride.delete(value.id)
    else this.vStored = true
    // (consecutive words are one v128 access: not counted as lane by lane)
    if (!words) this.vLaneCount++
  }

  private vinstruction4(ins: Instruction): void {
    // an f32 register read by an integer instruction is read as its bits, a NaN as 0x7fffffff (vrd), as one
    // thread reads it (f32Bits, js-values.ts bitsOfF32)
    const was = this.vIntBits
    const d = ins.operands[0]
    // (not where the bits only move: to a shuffle and back to an f32 register, as a warp sum's `mov.b32`s do,
    // which no integer operation reads)
    this.vIntBits = /^[sub](8|16|32|64)$/.test(ins.type ?? '') && !(ins.op === 'mov' && d?.kind === 'reg' && this.bitsOnlyMoved(d.id))
    try { this.vinstruction4Body(ins) } finally { this.vIntBits = was }
  }

  /** Register r's bits only move: every instruction that reads it is a shuffle of it (whose result's bits only
   *  move, in turn) or a `mov` of it into an f32 register. */
  private bitsOnlyMoved(r: number, seen = new Set<number>()): boolean {
    const known = this.movedOnly.get(r)
    if (known !== undefined) return known
    if (seen.has(r)) return true
    // (remembered for the register asked about, not for those on the way, which assumed it)
    const top = seen.size === 0
    seen.add(r)
    let ok = true
    for (const i of this.usesOf.get(r) ?? []) {
      const x = this.fn.instructions[i]!
      const A = x.operands, d = A[0]
      const dst = d?.kind === 'pair' ? d.first : d
      if (collectiveOf(x)?.kind === 'shfl' && !x.guard && A[1]?.kind === 'reg' && A[1].id === r && ![2, 3, 4].some((j) => A[j]?.kind === 'reg' && A[j].id === r) && dst?.kind === 'reg' && this.bitsOnlyMoved(dst.id, seen)) continue
      if (x.op === 'mov' && !x.guard && dst?.kind === 'reg' && this.classes[dst.id] === 'f32') continue
      ok = false
      break
    }
    if (top) this.movedOnly.set(r, ok)
    return ok
  }

  private vinstruction4Body(ins: Instruction): void {
    const b = this.b, A = ins.operands, t = ins.type ?? ''
    const defs = definedRegisters(ins)
    // the address-only 64-bit registers are not computed (the accesses use the tested base); the
    // block-uniform values were computed before the groups
    if (defs.length && defs.every((r) => this.simd!.addressOnly.has(r))) {
      if (this.vLoop && defs.some((r) => this.vScalar.has(r))) this.vscalar(ins)
      return
    }
    if (!this.vprologue && this.simd!.uniform.has(ins.index)) return
    const i32 = t === 's32' || t === 'u32' || t === 'b32'
    const f32 = t === 'f32'
    const rn = ins.rounding === undefined || ins.rounding === 'rn'
    const plainF = f32 && rn && !ins.flags.ftz && !ins.flags.sat
    const bin = (op: number) => this.vwr(A[0], () => { this.vrd(A[1]); this.vrd(A[2]); b.simd(op) })
    switch (ins.op) {
      case 'bra': {
        if (ins.index === this.elided) return
        const st = this.structure
        const target = st.kind === 'structured' ? st.branches.get(ins.index) : undefined
        const lv = target ? this.level.get(target.node) : undefined
        if (lv === undefined) return this.vfail('a branch the structure does not resolve')
        if (!ins.guard) { b.br(lv); return }
        return this.vdecide(ins.guard, lv)
      }
      case 'ret': case 'exit':
        if (!ins.guard) { b.br(this.vDone); return }
        return this.vdecide(ins.guard, this.vDone)
      case 'ld': return this.vload(ins)
      case 'st': return this.vstore(ins)
      case 'mov':
        if (!i32 && !f32 && t !== 'pred') return this.vfail(`mov.${t}`)
        return this.vwr(A[0], () => this.vrd(A[1]))
      case 'add': case 'sub': case 'mul': {
        if (ins.flags.cc || ins.flags.sat) return this.vfail('carry or saturation')
        if (i32 && ins.op === 'mul' && ins.part === 'lo') {
          const [xo, c] = immI32(A[2]) !== undefined ? [A[1], immI32(A[2])!] : immI32(A[1]) !== undefined ? [A[2], immI32(A[1])!] : [undefined, undefined]
          if (xo && c !== undefined) return this.vwr(A[0], () => { this.vrd(xo); this.vmulImm(c) })
        }
        if (i32 && (ins.op !== 'mul' || ins.part === 'lo')) return bin(ins.op === 'add' ? SimdOp.i32x4_add : ins.op === 'sub' ? SimdOp.i32x4_sub : SimdOp.i32x4_mul)
        const fused = plainF && ins.op !== 'mul' ? this.k.contraction?.get(ins.index) : undefined
        if (fused) {
          // one fma with the product it reads, as ptxas computes it (the scalar path's rule)
          const m = this.fn.instructions[fused.mul]!
          const other = A[fused.operand === 1 ? 2 : 1]
          const negA = ins.op === 'sub' && fused.operand === 2, negC = ins.op === 'sub' && fused.operand === 1
          return this.vwr(A[0], () => this.vfma(() => { this.vrd(m.operands[1]); if (negA) b.simd(SimdOp.f32x4_neg) }, () => this.vrd(m.operands[2]), () => { this.vrd(other); if (negC) b.simd(SimdOp.f32x4_neg) }))
        }
        if (plainF) return bin(ins.op === 'add' ? SimdOp.f32x4_add : ins.op === 'sub' ? SimdOp.f32x4_sub : SimdOp.f32x4_mul)
        return this.vfail(`${ins.op}.${t}`)
      }
      case 'mad': case 'fma': {
        if (ins.flags.cc || ins.flags.sat) return this.vfail('carry or saturation')
        if (i32 && ins.op === 'mad' && ins.part === 'lo') return this.vwr(A[0], () => { this.vrd(A[1]); this.vrd(A[2]); b.simd(SimdOp.i32x4_mul); this.vrd(A[3]); b.simd(SimdOp.i32x4_add) })
        if (plainF) return this.vwr(A[0], () => this.vfma(() => this.vrd(A[1]), () => this.vrd(A[2]), () => this.vrd(A[3])))
        return this.vfail(`${ins.op}.${t}`)
      }
      // division, reciprocal and square root: IEEE's correctly rounded f32x4 forms, as the scalar code's f32
      // operations (the .approx and .full forms too, which it computes the same way); rsqrt in binary64 as there
      case 'div':
        if (!f32 || !rn || ins.flags.ftz) return this.vfail(`div.${t}`)
        return bin(SimdOp.f32x4_div)
      case 'rcp': case 'sqrt': {
        // (.ftz, as the scalar code: the operand flushed, then the result; rcp.approx.ftz is tanhf's and
        // a sigmoid's 1/(1 + e^-x))
        if (!f32 || !rn) return this.vfail(`${ins.op}.${t}`)
        const ftz = ins.flags.ftz === true
        return this.vwr(A[0], () => {
          if (ins.op === 'rcp') b.i32x4([0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000])
          this.vrd(A[1]); if (ftz) this.vftz()
          b.simd(ins.op === 'rcp' ? SimdOp.f32x4_div : SimdOp.f32x4_sqrt); if (ftz) this.vftz()
        })
      }
      case 'rsqrt': {
        if (!f32 || !rn || ins.flags.ftz) return this.vfail(`rsqrt.${t}`)
        return this.vHalves(A, false, false, (X) => { b.i64x2([0x3ff0000000000000n, 0x3ff0000000000000n]).get(X).simd(SimdOp.f64x2_sqrt).simd(SimdOp.f64x2_div) })
      }
      case 'copysign':
        // b's magnitude with a's sign, bit for bit as the scalar f32.copysign (tanhf's last step)
        if (!f32) return this.vfail(`copysign.${t}`)
        return this.vwr(A[0], () => { this.vrd(A[1]); this.vrd(A[2]); b.i32x4(SIGN32X4).simd(SimdOp.v128_bitselect) })
      case 'ex2': {
        // numeric.ts ex2f in two f64x2 halves, the scalar helper's operations lane by lane (the same bits);
        // .ftz: a subnormal input gives 1 either way, a subnormal result is flushed after the rounding to f32
        if (!f32 || !ins.flags.approx) return this.vfail(`ex2.${t}`)
        const ok = this.tmp('vex2ok', 'v128'), n = this.tmp('vex2n', 'v128'), f = this.tmp('vex2f', 'v128'), lo = this.tmp('vex2lo', 'v128')
        const splat = (v: number) => { b.f64(v).simd(SimdOp.f64x2_splat) }
        return this.vHalves(A, false, ins.flags.ftz === true, (X) => {
          // in range: X < 128 and X >= -151 (not NaN); the others computed from 0 (f, for now) and replaced below
          b.get(X); splat(128); b.simd(SimdOp.f64x2_lt); b.get(X); splat(-151); b.simd(SimdOp.f64x2_ge); b.simd(SimdOp.v128_and).set(ok)
          b.get(X); splat(0); b.get(ok).simd(SimdOp.v128_bitselect).set(f)
          b.get(f); splat(0.5); b.simd(SimdOp.f64x2_add).simd(SimdOp.f64x2_floor).set(n)
          b.get(f).get(n).simd(SimdOp.f64x2_sub).set(f)
          splat(EX2_COEFFS[0]!)
          for (let k = 1; k < EX2_COEFFS.length; k++) { b.get(f).simd(SimdOp.f64x2_mul); splat(EX2_COEFFS[k]!); b.simd(SimdOp.f64x2_add) }
          // 2^n from its bits: n + 1023 + 2^52 holds n + 1023 in its low bits, exactly
          b.get(n); splat(1023 + 2 ** 52); b.simd(SimdOp.f64x2_add)
          b.i64x2([0x4330000000000000n, 0x4330000000000000n]).simd(SimdOp.i64x2_sub).i32(52).simd(SimdOp.i64x2_shl)
          b.simd(SimdOp.f64x2_mul)
          b.set(lo)
          // out of range, from X itself: X < -151 gives +0, X >= 128 +inf, NaN stays NaN
          splat(0); b.get(lo); b.get(X); splat(-151); b.simd(SimdOp.f64x2_lt).simd(SimdOp.v128_bitselect).set(lo)
          splat(Infinity); b.get(lo); b.get(X); splat(128); b.simd(SimdOp.f64x2_ge).simd(SimdOp.v128_bitselect).set(lo)
          b.get(X).get(lo).get(X).get(X).simd(SimdOp.f64x2_ne).simd(SimdOp.v128_bitselect)
        })
      }
      case 'lg2': {
        // numeric.ts lg2f in two f64x2 halves, the scalar helper's operations lane by lane (the same bits); .ftz:
        // a subnormal input flushed first (−∞), as f32In does
        if (!f32 || !ins.flags.approx) return this.vfail(`lg2.${t}`)
        const ok = this.tmp('vlg2ok', 'v128'), bits = this.tmp('vlg2b', 'v128')
        const e = this.tmp('vlg2e', 'v128'), m = this.tmp('vlg2m', 'v128'), sv = this.tmp('vlg2s', 'v128'), z = this.tmp('vlg2z', 'v128'), gt = this.tmp('vlg2g', 'v128')
        const splat = (v: number) => { b.f64(v).simd(SimdOp.f64x2_splat) }
        const i64s = (v: bigint) => { b.i64x2([v, v]) }
        return this.vHalves(A, ins.flags.ftz === true, ins.flags.ftz === true, (X) => {
          // finite and above 0; the others computed from 1 and replaced below
          b.get(X); splat(0); b.simd(SimdOp.f64x2_gt); b.get(X); splat(Infinity); b.simd(SimdOp.f64x2_lt); b.simd(SimdOp.v128_and).set(ok)
          b.get(X); splat(1); b.get(ok).simd(SimdOp.v128_bitselect).set(bits)
          // e = ((bits >> 52) & 0x7ff) − 1023, exactly: the field in the mantissa of 2^52, less 2^52 + 1023
          b.get(bits).i32(52).simd(SimdOp.i64x2_shr_u); i64s(0x7ffn); b.simd(SimdOp.v128_and); i64s(0x4330000000000000n); b.simd(SimdOp.v128_or)
          splat(2 ** 52 + 1023); b.simd(SimdOp.f64x2_sub).set(e)
          b.get(bits); i64s(0x000fffffffffffffn); b.simd(SimdOp.v128_and); i64s(0x3ff0000000000000n); b.simd(SimdOp.v128_or).set(m)
          b.get(m); splat(Math.SQRT2); b.simd(SimdOp.f64x2_gt).set(gt)
          b.get(m); splat(0.5); b.simd(SimdOp.f64x2_mul); b.get(m); b.get(gt).simd(SimdOp.v128_bitselect).set(m)
          b.get(e); splat(1); b.simd(SimdOp.f64x2_add); b.get(e); b.get(gt).simd(SimdOp.v128_bitselect).set(e)
          b.get(m); splat(1); b.simd(SimdOp.f64x2_sub); b.get(m); splat(1); b.simd(SimdOp.f64x2_add); b.simd(SimdOp.f64x2_div).set(sv)
          b.get(sv).get(sv).simd(SimdOp.f64x2_mul).set(z)
          b.get(e).get(sv)
          splat(LG2_COEFFS[0]!)
          for (let k = 1; k < LG2_COEFFS.length; k++) { b.get(z).simd(SimdOp.f64x2_mul); splat(LG2_COEFFS[k]!); b.simd(SimdOp.f64x2_add) }
          splat(TWO_OVER_LN2); b.simd(SimdOp.f64x2_mul).simd(SimdOp.f64x2_mul).simd(SimdOp.f64x2_add)
          // the others from X: ±0 gives −∞, +∞ gives +∞, a negative X or NaN gives NaN
          splat(-Infinity); splat(Infinity); splat(NaN); b.get(X); splat(Infinity); b.simd(SimdOp.f64x2_eq).simd(SimdOp.v128_bitselect)
          b.get(X); splat(0); b.simd(SimdOp.f64x2_eq).simd(SimdOp.v128_bitselect)
          b.get(ok).simd(SimdOp.v128_bitselect)
        })
      }
      case 'and': case 'or': case 'xor':
        if (!i32 && t !== 'pred') return this.vfail(`${ins.op}.${t}`)
        return bin(ins.op === 'and' ? SimdOp.v128_and : ins.op === 'or' ? SimdOp.v128_or : SimdOp.v128_xor)
      case 'not':
        if (!i32 && t !== 'pred') return this.vfail(`not.${t}`)
        return this.vwr(A[0], () => { this.vrd(A[1]); b.simd(SimdOp.v128_not) })
      case 'shl': case 'shr': {
        const k = A[2]?.kind === 'imm' && A[2].imm.kind === 'int' ? Number(A[2].imm.value) : -1
        if (!i32 || k < 0 || k > 31) return this.vfail('a shift by a register or by 32 or more')
        const op = ins.op === 'shl' ? SimdOp.i32x4_shl : t === 's32' ? SimdOp.i32x4_shr_s : SimdOp.i32x4_shr_u
        return this.vwr(A[0], () => { this.vrd(A[1]); b.i32(k).simd(op) })
      }
      case 'neg': case 'abs':
        if (t === 's32') return this.vwr(A[0], () => { this.vrd(A[1]); b.simd(ins.op === 'neg' ? SimdOp.i32x4_neg : SimdOp.i32x4_abs) })
        if (f32 && !ins.flags.ftz) return this.vwr(A[0], () => { this.vrd(A[1]); b.simd(ins.op === 'neg' ? SimdOp.f32x4_neg : SimdOp.f32x4_abs) })
        return this.vfail(`${ins.op}.${t}`)
      case 'selp':
        if (!i32 && !f32) return this.vfail(`selp.${t}`)
        return this.vwr(A[0], () => { this.vrd(A[1]); this.vrd(A[2]); this.vrd(A[3]); b.simd(SimdOp.v128_bitselect) })
      case 'setp': return this.vsetp(ins)
      case 'cvt': {
        const [dt, st] = ins.types as [string, string]
        if (ins.flags.ftz || ins.flags.sat || ins.flags.relu || ins.flags.satfinite) return this.vfail('cvt with .ftz/.sat')
        let op: number | undefined
        if (dt === 'f32' && (st === 's32' || st === 'u32') && rn && !ins.intRounding) op = st === 's32' ? SimdOp.f32x4_convert_i32x4_s : SimdOp.f32x4_convert_i32x4_u
        else if ((dt === 's32' || dt === 'u32') && st === 'f32' && ins.intRounding === 'rzi') op = dt === 's32' ? SimdOp.i32x4_trunc_sat_f32x4_s : SimdOp.i32x4_trunc_sat_f32x4_u
        if (op === undefined) return this.vfail(`cvt.${dt}.${st}`)
        return this.vwr(A[0], () => { this.vrd(A[1]); b.simd(op) })
      }
      default: return this.vfail(`${ins.op} in 4 lanes`)
    }
  }

  /** fma.rn.f32 of three 4-lane values, bit for bit as one thread computes it (fma32): x·y + z in binary64
   *  for two lanes at a time (f64x2), each sum rounded to binary32; where a lane's sum lies on a binary32
   *  midpoint or below the normal range (fma32's two cases), all four lanes go through fma32 one by one. */
  private vfma(px: () => void, py: () => void, pz: () => void): void {
    const b = this.b
    if (this.helpers.fused32) { px(); py(); pz(); b.simd(SimdOp.f32x4_relaxed_madd); return }
    const x = this.tmp('vx', 'v128'), y = this.tmp('vy', 'v128'), z = this.tmp('vz', 'v128')
    const lo = this.tmp('vslo', 'v128'), hi = this.tmp('vshi', 'v128')
    px(); b.set(x); py(); b.set(y); pz(); b.set(z)
    const wide = (v: number, high: boolean) => { b.get(v); if (high) b.get(v).shuffle(HIGH_HALF); b.simd(SimdOp.f64x2_promote_low_f32x4) }
    for (const [high, s] of [[false, lo], [true, hi]] as const) {
      wide(x, high); wide(y, high); b.simd(SimdOp.f64x2_mul); wide(z, high); b.simd(SimdOp.f64x2_add).set(s)
    }
    const hazard = (s: number) => {
      b.get(s).i64x2([0x1fffffffn, 0x1fffffffn]).simd(SimdOp.v128_and).i64x2([0x10000000n, 0x10000000n]).simd(SimdOp.i64x2_eq)
      // not (|s| ≥ 2^-126 or s = 0): below the normal range, or NaN, as fma32 tests it (2^-126 is
      // 0x3810000000000000 in binary64)
      b.get(s).i64x2([0n, 0n]).simd(SimdOp.f64x2_ne)
      b.get(s).simd(SimdOp.f64x2_abs).i64x2([0x3810000000000000n, 0x3810000000000000n]).simd(SimdOp.f64x2_ge)
      b.simd(SimdOp.v128_andnot).simd(SimdOp.v128_or)
    }
    hazard(lo); hazard(hi); b.simd(SimdOp.v128_or).simd(SimdOp.v128_any_true)
    b.begin('if', 'v128')
    b.get(x).get(y).get(z).call(this.helpers.vfma!)
    b.else()
    b.get(lo).simd(SimdOp.f32x4_demote_f64x2_zero).get(hi).simd(SimdOp.f32x4_demote_f64x2_zero).shuffle(JOIN_HALVES)
    b.end()
  }

  /** A guarded branch (or return) to level lv in 4 lanes: taken by all, or by none, or the group parts. */
  private vdecide(g: { reg: number; negate: boolean }, lv: number): void {
    const b = this.b
    // one lane mask (x86: movmskps): 15 all lanes, 0 none
    const m = this.tmp('vmask', 'i32')
    // a branch of a loop whose pre-pass (vloopPrecheck) ran it on the same values: its lanes did not part
    // there, so they do not here
    const agreed = this.vPreLoop.has(this.cur.index)
    if (this.vStored && !agreed) this.vfail('lanes that may part after a store')
    if (this.vLaneByLane && !agreed) this.vfail('lanes that may part after a region run lane by lane')
    this.vguard(g)
    b.simd(SimdOp.i32x4_bitmask).tee(m).i32(15).op(Op.i32_eq).brIf(lv)
    if (agreed) b.get(m).begin('if').op(Op.unreachable).end()
    else { b.get(m); this.vbail() }
  }

  private vsetp(ins: Instruction): void {
    const b = this.b, A = ins.operands, t = ins.type ?? ''
    const cmp = ins.cmp
    if (ins.boolOp || A[0]?.kind === 'pair' || ins.flags.ftz || !cmp) return this.vfail('setp with two results, a boolean op or .ftz')
    if (t === 'f32') {
      const F: Record<string, number> = { eq: SimdOp.f32x4_eq, lt: SimdOp.f32x4_lt, le: SimdOp.f32x4_le, gt: SimdOp.f32x4_gt, ge: SimdOp.f32x4_ge }
      if (F[cmp] !== undefined) return this.vwr(A[0], () => { this.vrd(A[1]); this.vrd(A[2]); b.simd(F[cmp]!) })
      if (cmp === 'ne') {
        // ordered: both numbers and different
        const x = this.tmp('vx', 'v128'), y = this.tmp('vy', 'v128')
        return this.vwr(A[0], () => {
          this.vrd(A[1]); b.set(x); this.vrd(A[2]); b.set(y)
          b.get(x).get(x).simd(SimdOp.f32x4_eq).get(y).get(y).simd(SimdOp.f32x4_eq).simd(SimdOp.v128_and)
          b.get(x).get(y).simd(SimdOp.f32x4_eq).simd(SimdOp.v128_andnot)
        })
      }
      return this.vfail(`setp.${cmp}.f32`)
    }
    if (t !== 's32' && t !== 'u32' && t !== 'b32') return this.vfail(`setp.${t}`)
    const s = t === 's32' && !['lo', 'ls', 'hi', 'hs'].includes(cmp)
    const I: Record<string, number> = {
      eq: SimdOp.i32x4_eq, ne: SimdOp.i32x4_ne,
      lt: s ? SimdOp.i32x4_lt_s : SimdOp.i32x4_lt_u, le: s ? SimdOp.i32x4_le_s : SimdOp.i32x4_le_u,
      gt: s ? SimdOp.i32x4_gt_s : SimdOp.i32x4_gt_u, ge: s ? SimdOp.i32x4_ge_s : SimdOp.i32x4_ge_u,
      lo: SimdOp.i32x4_lt_u, ls: SimdOp.i32x4_le_u, hi: SimdOp.i32x4_gt_u, hs: SimdOp.i32x4_ge_u,
    }
    if (I[cmp] === undefined) return this.vfail(`setp.${cmp}.${t}`)
    return this.vwr(A[0], () => { this.vrd(A[1]); this.vrd(A[2]); b.simd(I[cmp]!) })
  }

  /** ld.param of a kernel parameter (one value, splat), or ld.global at a tested address (4 consecutive
   *  words, or one word every lane reads). */
  private vload(ins: Instruction): void {
    const b = this.b, A = ins.operands, t = ins.type ?? ''
    if (ins.guard || (ins.vector ?? 1) !== 1 || !['f32', 'u32', 's32', 'b32'].includes(t)) return this.vfail('a load of this kind')
    if (ins.space === 'param') {
      const local = this.paramLocal(ins)
      if (local === undefined) return this.vfail('a parameter load that is not hoisted')
      const c = this.cls(A[0])
      return this.vwr(A[0], () => { b.get(local.local); if (local.f32) b.op(Op.i32_reinterpret_f32); b.simd(SimdOp.i32x4_splat); void c })
    }
    if (ins.space === 'shared' && this.vLoop) return this.vwr(A[0], () => this.vshared(ins, A[1]))
    const stride = ins.space === 'global' && this.unchecked ? this.testedStride(ins.index) : undefined
    if (stride === undefined) return this.vfail('a load whose address the block test does not cover')
    const h = this.hoisted.get(`${ins.index}:0`)!
    return this.vwr(A[0], () => {
      b.get(h.hv)
      if (stride) { b.get(this.L.tx!).i32(stride).op(Op.i32_mul).op(Op.i32_add); b.simdMem(SimdOp.v128_load, 2) } else b.mem(Op.i32_load, 2).simd(SimdOp.i32x4_splat)
    })
  }

  /** st.global at a tested address: 4 consecutive words, or the last lane's word where all lanes store to one. */
  private vstore(ins: Instruction): void {
    const b = this.b, A = ins.operands, t = ins.type ?? ''
    if (ins.guard || (ins.vector ?? 1) !== 1 || !['f32', 'u32', 's32', 'b32'].includes(t)) return this.vfail('a store of this kind')
    if (ins.space === 'shared' && this.vLoop) { this.vshared(ins, A[0], A[1]); this.vStored = true; return }
    if (ins.space !== 'global') return this.vfail('a store of this kind')
    const stride = this.unchecked ? this.testedStride(ins.index) : undefined
    if (stride === undefined) return this.vfail('a store whose address the block test does not cover')
    const h = this.hoisted.get(`${ins.index}:0`)!
    b.get(h.hv)
    if (stride) { b.get(this.L.tx!).i32(stride).op(Op.i32_mul).op(Op.i32_add); this.vrd(A[1]); b.simdMem(SimdOp.v128_store, 2) } else { this.vrd(A[1]); b.simdLane(SimdOp.i32x4_extract_lane, 3).mem(Op.i32_store, 2) }
    this.vStored = true
  }

  /** A 4-lane access of one 32-bit word per lane in shared memory (a thread loop's turn, vectorTurn): the
   *  lanes' window offsets tested as one thread's are (unless the per-block test or the hull test of their
   *  run covers them; a lane that fails sends the group back to one thread at a time, which faults as it
   *  would), then one v128 access where the lanes' words are consecutive (stride 4 in tid.x), one word for
   *  all where they are the same, one word per lane, in lane order, otherwise. A load leaves the lanes'
   *  words; a store writes `value`'s. */
  private vshared(ins: Instruction, o: IrOperand | undefined, value?: IrOperand): void {
    const b = this.b, L = this.L
    if (o?.kind !== 'addr') return this.vfail('an address that is not an operand')
    const base = o.base
    const va = this.tmp('va', 'v128')
    let stride: number | undefined
    let fixed: number | undefined
    // lane 0's window offset from a scalar local where the base register has one (StrideMap.lane0)
    let lane0: (() => void) | undefined
    if (!base || base.kind === 'sym') {
      const a = base ? this.symAddr(base.name) : 0
      if (a === undefined || (base && !this.layout.shared.has(base.name))) return this.vfail('an address of this kind')
      fixed = a + o.offset
      b.i32(fixed).simd(SimdOp.i32x4_splat)
      stride = 0
    } else if (base.kind === 'reg' && this.classes[base.id] === 'i32') {
      const l0 = this.vstride.lane0.get(base.id)
      if (l0 !== undefined) lane0 = () => { b.get(l0); if (o.offset) b.i32(o.offset).op(Op.i32_add) }
      b.get(this.vlocal(base.id))
      if (o.offset) b.i32(o.offset).simd(SimdOp.i32x4_splat).simd(SimdOp.i32x4_add)
      stride = this.vstride.get(base.id)
      if (stride === undefined) { const f = this.rowAffine.formAt(base.id, ins.index); stride = f && !f.iv ? f.c : undefined }
    } else if (base.kind === 'reg' && this.classes[base.id] === 'i64' && !this.simd!.addressOnly.has(base.id)) {
      // a 64-bit window offset per lane (clang's shared addresses): each must fit 32 bits, which with the
      // 32-bit test below is the scalar path's 0 ≤ a ≤ size − n
      const lanes = this.vwideLocals(base.id)
      const a = this.tmp('vsa', 'i64'), high = this.tmp('vshb', 'i64')
      const covered = this.vPre.has(ins.index) || this.sharedCovered(ins.index)
      b.i64(0n).set(high).i32x4([0, 0, 0, 0]).set(va)
      lanes.forEach((l, k) => {
        b.get(l); if (o.offset) b.i64(BigInt(o.offset)).op(Op.i64_add); b.set(a)
        b.get(va).get(a).op(Op.i32_wrap_i64).simdLane(SimdOp.i32x4_replace_lane, k).set(va)
        if (!covered) b.get(high).get(a).i64(32n).op(Op.i64_shr_u).op(Op.i64_or).set(high)
      })
      if (!covered) { b.get(high).i64(0n).op(Op.i64_ne); this.vleave() }
      b.get(va)
    } else return this.vfail('a shared address of this kind')
    b.set(va)
    const run = this.windows.at.get(ins.index)
    if (run && !this.vPreRuns.has(ins.index)) this.vwindowRun(run)
    if (!this.vPre.has(ins.index) && !this.sharedCovered(ins.index)) {
      // A fixed window offset (a shared variable and an offset) needs no test where a test of a fixed word at
      // or past it has passed on every path here: the window's size does not change within the turn. (Many
      // equal tests — flash attention's unrolled tile reads — also made V8's optimizing compiler slow beyond
      // use: each one it proved redundant cut an input of the turn's fail block and of its thousands of
      // phis, minutes of compile in the background for one kernel, and a Node process waits for that at exit.)
      const end = fixed !== undefined && fixed % 4 === 0 && fixed >= 0 ? fixed + 4 : undefined
      if (end === undefined || (b.known('shared fixed end') ?? -1) < end) {
        this.vtestShared(va, stride, lane0)
        if (end !== undefined) b.note('shared fixed end', end)
      }
    }
    const at = (lane: number) => {
      if (lane === 0 && lane0) lane0(); else b.get(va).simdLane(SimdOp.i32x4_extract_lane, lane)
      b.get(L.SB!).op(Op.i32_add)
    }
    if (value === undefined) {
      if (stride === 4) { at(0); b.simdMem(SimdOp.v128_load, 2); return }
      if (stride === 0) { at(0); b.simdMem(SimdOp.v128_load32_splat, 2); return }
      const v = this.tmp('vl', 'v128')
      const gather = () => {
        at(0); b.simdMem(SimdOp.v128_load32_splat, 2).set(v)
        for (let k = 1; k < 4; k++) { at(k); b.get(v).simdMemLane(SimdOp.v128_load32_lane, 2, 0, k).set(v) }
        b.get(v)
      }
      if (stride !== undefined) return gather()
      // a stride known only at run time: consecutive words in one v128 load when they are
      const l0 = this.tmp('vsl0', 'i32')
      b.get(va).simdLane(SimdOp.i32x4_extract_lane, 0).set(l0)
      b.get(va).get(l0).simd(SimdOp.i32x4_splat).i32x4([0, 4, 8, 12]).simd(SimdOp.i32x4_add).simd(SimdOp.i32x4_eq).simd(SimdOp.i32x4_all_true)
      b.begin('if', 'v128')
      at(0); b.simdMem(SimdOp.v128_load, 2)
      b.else()
      gather()
      b.end()
      return
    }
    if (stride === 4) { at(0); this.vrd(value); b.simdMem(SimdOp.v128_store, 2); return }
    const v = this.tmp('vs', 'v128')
    this.vrd(value); b.set(v)
    for (let k = 0; k < 4; k++) { at(k); b.get(v).simdMemLane(SimdOp.v128_store32_lane, 2, 0, k) }
  }

  /** Whether shared access `index` needs no test of its own: its run's hull test or the per-block test
   *  (unchecked copy) covers it. */
  private sharedCovered(index: number): boolean {
    return this.windows.covered.has(index) || (this.unchecked && this.hoistedShared(index)) || (this.vLoop && this.hull?.sites.has(index) === true)
  }

  /** The lane test of a 4-byte shared access at the lanes' window offsets `va` (a local). */
  private vtestShared(va: number, stride: number | undefined, lane0?: () => void): void {
    const b = this.b
    if (stride === 0 || stride === 4) {
      // the lanes' words are one word, or 16 consecutive bytes from lane 0's: lane 0's offset tested as one
      // access of that size
      if (lane0) lane0(); else b.get(va).simdLane(SimdOp.i32x4_extract_lane, 0)
      b.i32(2).op(Op.i32_rotr).get(this.windowLimit('shared', stride === 4 ? 16 : 4, 3)).op(Op.i32_ge_u)
    } else {
      this.vrot(() => b.get(va), 3)
      b.get(this.windowLimit('shared', 4, 3)).simd(SimdOp.i32x4_splat).simd(SimdOp.i32x4_ge_u).simd(SimdOp.v128_any_true)
    }
    this.vleave()
  }

  /** A lane test fails the group back to one thread at a time only before the turn's first store. The
   *  shared accesses after it (and window runs that start after it) whose address is integer arithmetic on
   *  values the turn starts with, each computed once in the loop, are tested here, at the start: that
   *  arithmetic (the registers' only definitions, read by nothing before them) is written now, then the
   *  tests; it is written again where it stands, to the same values. A lane that would fail there fails the
   *  group now, and the four threads' scalar turns fault as one thread would. */
  private vprecheck(it: ThreadLoop): void {
    const ins = this.fn.instructions
    let firstStore = -1
    for (let i = it.start; i < it.end && firstStore < 0; i++) if (ins[i]!.op === 'st') firstStore = i
    if (firstStore < 0) return
    const defs = new Map<number, number[]>()
    const firstUse = new Map<number, number>()
    for (let i = it.start; i < it.end; i++) {
      if (this.preComputed.has(i)) continue
      for (const r of usedRegisters(ins[i]!)) if (!firstUse.has(r)) firstUse.set(r, i)
      for (const r of definedRegisters(ins[i]!)) { const d = defs.get(r) ?? []; d.push(i); defs.set(r, d) }
    }
    const PURE32 = new Set(['mov', 'add', 'sub', 'mul', 'mad', 'shl', 'shr', 'and', 'or', 'xor', 'not'])
    const slice = (r: number, before: number, acc: Set<number>): boolean => {
      const d = defs.get(r)
      if (!d) return true
      const at = d[0]!
      const x = ins[at]!
      const t = x.type ?? ''
      if (d.length !== 1 || at >= before || !this.vTop.has(at) || x.guard || (firstUse.get(r) ?? at) < at) return false
      if (!PURE32.has(x.op) || !['s32', 'u32', 'b32'].includes(t) || x.flags.cc || x.flags.sat || ((x.op === 'mul' || x.op === 'mad') && x.part !== 'lo')) return false
      acc.add(at)
      return usedRegisters(x).every((u) => slice(u, at, acc))
    }
    const code = new Set<number>()
    const tests: Array<() => void> = []
    for (let i = firstStore + 1; i < it.end; i++) {
      const x = ins[i]!
      if ((x.op !== 'ld' && x.op !== 'st') || x.space !== 'shared' || !this.vTop.has(i) || x.guard) continue
      const o = x.operands[x.op === 'ld' ? 1 : 0]
      const run = this.windows.at.get(i)
      if (run) {
        const acc = new Set<number>()
        if (run.every((g) => this.classes[g.reg] === 'i32' && slice(g.reg, g.members.reduce((m, y) => Math.min(m, y.index), i), acc))) {
          for (const a of acc) code.add(a)
          this.vPreRuns.add(i)
          tests.push(() => { this.cur = x; this.vwindowRun(run) })
        }
      }
      if (o?.kind !== 'addr' || o.base?.kind !== 'reg' || this.classes[o.base.id] !== 'i32' || this.sharedCovered(i)) continue
      const acc = new Set<number>()
      if (!slice(o.base.id, i, acc)) continue
      for (const a of acc) code.add(a)
      this.vPre.add(i)
      const base = o.base.id, offset = o.offset
      tests.push(() => {
        this.cur = x
        const b = this.b, va = this.tmp('va', 'v128')
        b.get(this.vlocal(base))
        if (offset) b.i32(offset).simd(SimdOp.i32x4_splat).simd(SimdOp.i32x4_add)
        b.set(va)
        const l0 = this.vstride.lane0.get(base)
        this.vtestShared(va, this.vstride.get(base), l0 === undefined ? undefined : () => { b.get(l0); if (offset) b.i32(offset).op(Op.i32_add) })
      })
    }
    for (const i of [...code].sort((p, q) => p - q)) this.instruction(ins[i]!)
    for (const t of tests) t()
  }

  /** Pushes the lanes of `push` rotated right by the bits of an alignment of al + 1 bytes (windowRun's
   *  test: a misaligned offset becomes larger than any limit). */
  private vrot(push: () => void, al: number): void {
    const b = this.b
    push()
    if (al === 0) return
    const k = Math.log2(al + 1)
    const x = this.tmp('vrot', 'v128')
    b.set(x)
    b.get(x).i32(k).simd(SimdOp.i32x4_shr_u).get(x).i32(32 - k).simd(SimdOp.i32x4_shl).simd(SimdOp.v128_or)
  }

  /** On the i32 on the stack (not 0: some lane failed a test), the group goes back to one thread at a time;
   *  after a store it cannot, and the turn keeps its scalar code. */
  private vleave(): void {
    if (this.vStored) this.vfail('a lane test after a store')
    if (this.vLaneByLane) this.vfail('a lane test after a region run lane by lane')
    this.vbail()
  }

  /** The branch of a failed lane test to the turn's fail block. A turn with more than MAX_TURN_BAILS of them
   *  is left to scalar turns: V8's optimizing compiler, proving such branches redundant one at a time, cut an
   *  input of the fail block and of each of its phis (one a local the turn writes) every time — minutes in
   *  the background for one kernel with a thousand equal tests (the corpus's largest turn has 128). */
  private vbail(): void {
    if (++this.vBails > MAX_TURN_BAILS) this.vfail(`more than ${MAX_TURN_BAILS} lane tests in one turn`)
    this.b.brIf(this.vFail)
  }

  /** windowRun in 4 lanes: each group's hull tested in every lane. */
  private vwindowRun(all: readonly WindowGroup[]): void {
    const b = this.b
    // (members the per-block test or the thread loop's test before it covers need none here)
    const tested = (m: { index: number }) => !(this.unchecked && this.hoistedShared(m.index)) && !(this.vLoop && this.hull?.sites.has(m.index))
    const groups = this.unchecked || this.hull ? all.map((g) => ({ ...g, members: g.members.filter(tested) })).filter((g) => g.members.length) : all
    if (!groups.length) return
    const bad = this.tmp('vwbad', 'v128'), sbad = this.tmp('vwsbad', 'i32')
    let vector = false, scalar = false
    for (const g of groups) {
      if (this.classes[g.reg] !== 'i32') this.vfail('a window run through a register that is not 32 bits wide')
      const lo = Math.min(...g.members.map((m) => m.offset))
      const span = Math.max(...g.members.map((m) => m.offset + m.n)) - lo
      const stride = this.vstride.get(g.reg)
      if (stride === 0 || (stride === 4 && g.al <= 3)) {
        // the lanes' offsets are one, or 4 bytes apart from lane 0's up (each aligned where lane 0's is): the
        // hull of the four lanes' runs, from lane 0's, tested as one run
        const l0 = this.vstride.lane0.get(g.reg)
        if (l0 !== undefined) b.get(l0); else b.get(this.vlocal(g.reg)).simdLane(SimdOp.i32x4_extract_lane, 0)
        if (lo) b.i32(lo).op(Op.i32_add)
        if (g.al) b.i32(Math.log2(g.al + 1)).op(Op.i32_rotr)
        b.get(this.windowLimit(g.space, span + (stride === 4 ? 12 : 0), g.al)).op(Op.i32_ge_u)
        if (scalar) b.get(sbad).op(Op.i32_or)
        b.set(sbad)
        scalar = true
        continue
      }
      this.vrot(() => { b.get(this.vlocal(g.reg)); if (lo) b.i32(lo).simd(SimdOp.i32x4_splat).simd(SimdOp.i32x4_add) }, g.al)
      b.get(this.windowLimit(g.space, span, g.al)).simd(SimdOp.i32x4_splat).simd(SimdOp.i32x4_ge_u)
      if (vector) b.get(bad).simd(SimdOp.v128_or)
      b.set(bad)
      vector = true
    }
    if (vector) b.get(bad).simd(SimdOp.v128_any_true)
    if (scalar) { b.get(sbad); if (vector) b.op(Op.i32_or) }
    this.vleave()
  }

  /** x, y, z of the linear index in local v over an NX × NY × … shape (block or thread indices). */
  private split3(v: number, x: string, y: string, z: string, NX: string, NY: string): void {
    const { b, L } = this
    b.get(v).get(L[NX]!).op(Op.i32_rem_u).set(L[x]!)
    b.get(v).get(L[NX]!).op(Op.i32_div_u).get(L[NY]!).op(Op.i32_rem_u).set(L[y]!)
    b.get(v).get(L[NX]!).get(L[NY]!).op(Op.i32_mul).op(Op.i32_div_u).set(L[z]!)
  }

  /** The next linear index's x, y, z, incrementally (no divisions): x first, carrying into y, then z. */
  private step3(x: string, y: string, z: string, NX: string, NY: string): void {
    const { b, L } = this
    b.get(L[x]!).i32(1).op(Op.i32_add).tee(L[x]!).get(L[NX]!).op(Op.i32_eq)
    b.open('if')
    b.i32(0).set(L[x]!)
    b.get(L[y]!).i32(1).op(Op.i32_add).tee(L[y]!).get(L[NY]!).op(Op.i32_eq)
    b.begin('if').i32(0).set(L[y]!).get(L[z]!).i32(1).op(Op.i32_add).set(L[z]!).end()
    b.end()
  }

  /** Code of the loop over threads t0 … t1-1 of one block (unchecked: the hoisted sites' copy), written
   *  apart and returned (the body's depth bookkeeping covers it: it is spliced in at the same depth). */
  private threadLoop(T0: number, T1: number, unchecked: boolean): Uint8Array {
    const { b, L } = this
    const at = b.code.length
    this.unchecked = unchecked
    this.vectorPrologue = undefined
    if (unchecked && this.simd) this.writeVectorPrologue()
    this.split3(T0, 'tx', 'ty', 'tz', 'NTX', 'NTY')
    b.get(T0).set(L.t!)
    const tdone = b.open('block')
    const threads = b.open('loop')
    b.get(L.t!).get(T1).op(Op.i32_ge_u).brIf(tdone)
    if (unchecked && this.simd && this.vectorPrologue !== undefined) this.vectorGroup(T1, threads)
    this.setLB()
    this.threadLevel = b.open('block')
    if (this.structure.kind === 'structured') this.nodes(this.structure.body)
    b.end()
    // next thread: t, and tx/ty/tz incrementally
    b.get(L.t!).i32(1).op(Op.i32_add).set(L.t!)
    this.step3('tx', 'ty', 'tz', 'NTX', 'NTY')
    b.br(threads)
    b.end().end()
    this.unchecked = false
    return b.code.splice(at)
  }

  // --- thread loops (kernels with barriers: @kernelpack/ptx's plan, as emit-thread-loops.ts renders it) ---

  /** The code of one block of a thread-loop kernel, written apart and returned. */
  private blockSchedule(plan: ThreadLoopSchedule, unchecked: boolean): Uint8Array {
    const { b, L } = this
    const at = b.code.length
    this.unchecked = unchecked
    // (where no thread ends before the kernel's closing return, every state is 0 again at a block's end: a
    // lane that waited in a warp-level region is woken at its end, one that left by a block-wide decision
    // after the warps' code; the states are set once a call, write)
    if (plan.threadsEnd) {
      // every thread starts running (state 0)
      b.i32(0).set(L.t!)
      const done = b.open('block')
      const lp = b.open('loop')
      b.get(L.t!).get(L.NT!).op(Op.i32_ge_u).brIf(done)
      b.get(L.LB0!).get(L.t!).get(L.LN!).op(Op.i32_mul).op(Op.i32_add).i32(0).mem(Op.i32_store, 2, this.stateOff)
      b.get(L.t!).i32(1).op(Op.i32_add).set(L.t!)
      b.br(lp)
      b.end().end()
    }
    const items = [...plan.schedule]
    const ins = this.fn.instructions
    const last = items[items.length - 1]
    if (last?.kind === 'threads' && last.scatter === undefined && last.gather === undefined && last.nodes.every((x) => x.kind === 'instr' && ['ret', 'exit'].includes(ins[x.index]!.op) && !ins[x.index]!.guard)) items.pop()
    this.items(items)
    this.unchecked = false
    return b.code.splice(at)
  }

  private items(list: ScheduleItem[]): void {
    const b = this.b
    for (const it of list) {
      switch (it.kind) {
        case 'threads': this.threads(it); break
        case 'warps': this.warps(it); break
        case 'barrier': case 'collective': break
        case 'region': {
          if (it.level !== 'block') { this.warpRegion(it); break }
          const r = it.node
          const lv = b.open(r.kind === 'loop' ? 'loop' : 'block')
          this.level.set(r.id, lv)
          this.items(it.body)
          b.end()
          this.level.delete(r.id)
          break
        }
      }
    }
  }

  private code(kind: 'break' | 'continue', node: number): number {
    const key = `${kind}:${node}`
    let c = this.codes.get(key)
    if (c === undefined) { c = this.codes.size + 1; this.codes.set(key, c) }
    return c
  }

  /** After a block-level loop: the block-wide decision its threads took, as a branch. */
  private dispatch(it: ThreadLoop): void { this.dispatchRange(it.start, it.end) }

  private dispatchRange(start: number, end: number): void {
    const b = this.b
    const seen = new Set<number>()
    for (let i = start; i < end; i++) {
      const d = this.plan!.departures.get(i)
      if (d?.kind !== 'uniform') continue
      const c = this.code(d.target.kind, d.target.node)
      if (seen.has(c)) continue
      seen.add(c)
      const lv = this.level.get(d.target.node)
      if (lv === undefined) throw new WasmRefusal('a block-wide decision to a region that is not open')
      b.get(this.L.X!).i32(c).op(Op.i32_eq).brIf(lv)
    }
  }

  /** One block-level loop over the block's threads (or, `once`, its code run once). */
  /** Code with warp collectives, warp by warp: lanes [W0, W1) of each warp run the warp-level schedule. */
  private warps(it: Extract<ScheduleItem, { kind: 'warps' }>): void {
    const { b, L } = this
    const uniformDeps = this.hasUniformDeparture(it.start, it.end)
    b.i32(0).set(L.X!)
    const saved = it.restores.map((r) => { const q = b.local(classType(this.classes[r]!)); b.get(this.regs[r]!).set(q); return [r, q] as const })
    b.i32(0).set(L.W0!)
    const done = b.open('block'), lp = b.open('loop')
    b.get(L.W0!).get(L.NT!).op(Op.i32_ge_u).brIf(done)
    b.get(L.W0!).i32(32).op(Op.i32_add).get(L.NT!).get(L.W0!).i32(32).op(Op.i32_add).get(L.NT!).op(Op.i32_lt_u).op(Op.select).set(L.W1!)
    for (const [r, q] of saved) b.get(q).set(this.regs[r]!)
    this.split3(L.W0!, 'wx', 'wy', 'wz', 'NTX', 'NTY')
    const was = this.warpLevel
    this.warpLevel = true
    // (at the schedule's top level every lane runs, between departures: none ends, none leaves by a block-wide
    // decision, and lanes that waited in a region run again at its end)
    this.warpItems(it.body, !this.plan!.threadsEnd && !uniformDeps)
    this.warpLevel = was
    b.get(L.W0!).i32(32).op(Op.i32_add).set(L.W0!)
    b.br(lp)
    b.end().end()
    if (uniformDeps) {
      // lanes that left by a block-wide decision run again after it
      this.eachThread(0, () => b.get(L.NT!), () => {
        this.stateAddr(); b.mem(Op.i32_load, 2, this.stateOff).i32(LEFT).op(Op.i32_eq)
        b.begin('if'); this.stateAddr(); b.i32(0).mem(Op.i32_store, 2, this.stateOff); b.end()
      })
      this.dispatchRange(it.start, it.end)
    }
  }

  /** A warp-level schedule, its runs of lane loops between constant shuffles (warpRunEnd) written 32 lanes at
   *  once where the warp is whole (warpRun), the rest as lane loops. */
  private warpItems(list: ScheduleItem[], settled = false): void {
    let i = 0
    while (i < list.length) {
      // (a lane that parks in a loop of this list waits from there on; runs hold no departure)
      if (settled && i > 0 && list[i - 1]!.kind === 'threads') {
        const x = list[i - 1] as ThreadLoop
        for (let k = x.start; k < x.end; k++) if (this.plan!.departures.has(k) && k !== this.elided) settled = false
      }
      // with the lane loops around it where they have a 4-lane form, else without them
      const wide = this.helpers.simd ? this.warpRunEnd(list, i, true) : i
      if (wide > i && this.warpRun(list.slice(i, wide), false)) { i = wide; continue }
      const end = this.helpers.simd ? this.warpRunEnd(list, i, false) : i
      if (end > i) { this.warpRun(list.slice(i, end)); i = end; continue }
      // lane loops one after another with no shuffle between them (a warp's lockstep steps)
      const steps = this.helpers.simd ? this.laneRunEnd(list, i, settled) : i
      if (steps > i && this.warpRun(list.slice(i, steps), false, settled)) { i = steps; continue }
      this.regionSettled = settled
      this.items([list[i]!])
      this.regionSettled = false
      i++
    }
  }

  /** A shfl.sync whose lane, clamp (no segments) and member mask (all lanes) are constants, on a 32-bit
   *  register, unguarded: the source lane of each lane is known when the code is written. */
  private constantShflOf(i: number): { mode: string; b: number; clamp: number } | undefined {
    const ins = this.fn.instructions[i]!
    const c = collectiveOf(ins)
    if (c?.kind !== 'shfl' || ins.guard) return undefined
    const [x, xb, xc, xm] = this.collectiveInputs(ins)
    const v = ins.operands[1]
    if (!x || v?.kind !== 'reg' || !['i32', 'f32'].includes(this.classes[v.id]!)) return undefined
    const d = ins.operands[0]
    const dst = d?.kind === 'pair' ? [d.first, d.second] : [d]
    if (dst.some((o) => o && o.kind !== 'reg') || (dst[0] && !['i32', 'f32'].includes(this.classes[(dst[0] as { id: number }).id]!))) return undefined
    if (xb?.value === undefined || xc?.value === undefined || xm?.value !== -1 || ((xc.value >>> 8) & 31) !== 0) return undefined
    return { mode: c.mode, b: xb.value, clamp: xc.value & 31 }
  }

  /** A warp-level lane loop whose code is 32-bit arithmetic only (no memory, branch, collective or call),
   *  that hands out a constant shuffle's results. */
  private pureLaneLoop(x: ScheduleItem | undefined): x is ThreadLoop {
    if (x?.kind !== 'threads' || x.level !== 'warp' || x.restores.length || x.scatter === undefined || !this.constantShflOf(x.scatter)) return false
    const wide = (r: number) => !['i32', 'f32', 'pred'].includes(this.classes[r]!)
    if ([...x.loads, ...x.stores].some(wide)) return false
    return x.nodes.every((n) => {
      if (n.kind !== 'instr') return false
      const ins = this.fn.instructions[n.index]!
      return !PER_LANE_NOT.has(ins.op) && !collectiveOf(ins) && !this.plan!.departures.has(n.index) && ![...usedRegisters(ins), ...definedRegisters(ins)].some(wide)
    })
  }

  /** A warp-level lane loop a run may open with (`lead`: no collective's results in, it leaves the first
   *  shuffle's inputs; no stores) or close with (no collective's inputs out; stores, and ifs whose lanes
   *  part, allowed): 32-bit slots, no departure, return (but the kernel's closing one), atomic or call. */
  private edgeLaneLoop(x: ScheduleItem | undefined, lead: boolean): x is ThreadLoop {
    if (x?.kind !== 'threads' || x.level !== 'warp' || x.restores.length) return false
    if (lead ? x.scatter !== undefined || x.gather === undefined : x.gather !== undefined || x.scatter === undefined || !this.constantShflOf(x.scatter)) return false
    // (64-bit registers: one the run reads from its slot, or one a loop after the run reads from its slot,
    // refuses the run, warpRun)
    const ins = this.fn.instructions
    for (let i = x.start; i < x.end; i++) {
      const y = ins[i]!
      const closing = !lead && y.op === 'ret' && !y.guard && i === ins.length - 1 && i === x.end - 1
      if (this.plan!.departures.has(i) || collectiveOf(y) || (['ret', 'exit'].includes(y.op) && !closing) || ['atom', 'red', 'call', 'trap', 'brkpt', 'bar', 'barrier', 'membar', 'fence', 'cp', 'mbarrier'].includes(y.op)) return false
      if (lead && y.op === 'st') return false
    }
    return true
  }

  /** A warp-level lane loop without a collective at either end, that a warp run may take whole: 32-bit
   *  slots, no departure, return (but the kernel's closing one), atomic, barrier or call. */
  private plainLaneLoop(x: ScheduleItem | undefined): x is ThreadLoop {
    if (x?.kind !== 'threads' || x.level !== 'warp' || x.restores.length || x.scatter !== undefined || x.gather !== undefined) return false
    const ins = this.fn.instructions
    for (let i = x.start; i < x.end; i++) {
      const y = ins[i]!
      const closing = y.op === 'ret' && !y.guard && i === ins.length - 1 && i === x.end - 1
      if ((this.plan!.departures.has(i) && i !== this.elided) || collectiveOf(y) || (['ret', 'exit'].includes(y.op) && !closing) || ['atom', 'red', 'call', 'trap', 'brkpt', 'bar', 'barrier', 'membar', 'fence', 'cp', 'mbarrier'].includes(y.op)) return false
    }
    return true
  }

  /** The end (exclusive) of a run of two or more plain lane loops from list[i] (a warp's lockstep steps: each
   *  loop holds one access where its lanes may talk, so no lane of a loop reads what another writes in it and
   *  4 lanes at once give the bytes one lane at a time gives), i when there is none. */
  private laneRunEnd(list: ScheduleItem[], i: number, settled: boolean): number {
    let end = i
    while (this.plainLaneLoop(list[end])) end++
    // (one loop alone where no lane can be waiting: the run then asks nothing of the lanes' states)
    return end - i >= (settled ? 1 : 2) ? end : i
  }

  /** The end (exclusive) of a run starting at list[i]: lane loops that each hand out a constant shuffle's
   *  results (the first one's inputs left before the run), separated by those shuffles, at least two of
   *  them; the last loop may leave the inputs of a shuffle after the run. A loop that leaves the first
   *  shuffle's inputs may open it, and one that takes the last one's results close it (edgeLaneLoop). i when
   *  there is none. */
  private warpRunEnd(list: ScheduleItem[], i: number, edges: boolean): number {
    const lead = edges && this.edgeLaneLoop(list[i], true) && list[i + 1]?.kind === 'collective' && (list[i + 1] as { index: number }).index === (list[i] as ThreadLoop).gather
      && this.constantShflOf((list[i + 1] as { index: number }).index) !== undefined && this.pureLaneLoop(list[i + 2]) && (list[i + 2] as ThreadLoop).scatter === (list[i + 1] as { index: number }).index
    const start = lead ? i + 2 : i
    if (!this.pureLaneLoop(list[start])) return i
    let end = start + 1, trail = false
    for (;;) {
      const last = list[end - 1] as ThreadLoop
      const c = list[end], next = list[end + 1]
      if (c?.kind !== 'collective' || c.index !== last.gather) break
      if (this.pureLaneLoop(next) && next.scatter === c.index) { end += 2; continue }
      if (edges && this.edgeLaneLoop(next, false) && next.scatter === c.index) { end += 2; trail = true }
      break
    }
    const lastLoop = list[end - 1] as ThreadLoop
    if (lastLoop.gather !== undefined && collectiveOf(this.fn.instructions[lastLoop.gather]!)?.kind !== 'shfl') return i
    // (with edges: only a run that has one)
    if (edges && !lead && !trail) return i
    return end - i >= 3 ? end : i
  }

  /** A run of lane loops and constant shuffles (warpRunEnd), 32 lanes at once where the warp's 32 lanes all
   *  run (a whole warp in one row of the block, none ended or waiting): every 32-bit register as eight 4-lane
   *  values, the loops' code as a 4-lane turn writes it (vinstruction) for each quarter... eighth of the warp,
   *  each shuffle as a permutation of those values fixed when the code is written (lane j's value, or the
   *  lane's own out of range, as scatter gives them). The run's registers come from the lanes' slots (the
   *  first shuffle's inputs from its input slots) and go back to them at its end, with the inputs of a
   *  shuffle after the run. Pure arithmetic between shuffles has no order another lane can see, so the
   *  values are the lane loops'. Any other warp runs the lane loops. */
  private warpRun(run: ScheduleItem[], final = true, settled = false): boolean {
    const { b, L } = this
    const ins = this.fn.instructions
    const loops = run.filter((x): x is ThreadLoop => x.kind === 'threads')
    const mark = b.mark()
    const regs0 = this.vregs, wide0 = this.vwide, stride0 = new Map(this.vstride)
    /** The writer as it was before the run (scalar mode, the turn's register maps). */
    const restore = () => {
      this.vmode = false
      this.vLoop = false
      this.vregs = regs0
      this.vwide = wide0
      this.simd = undefined
    }
    try {
      // the warp is whole, in one row, and every lane runs
      const full = this.tmp('wfull', 'i32'), at = this.tmp('wat', 'i32')
      b.get(L.W1!).get(L.W0!).op(Op.i32_sub).i32(32).op(Op.i32_eq).get(L.NTX!).i32(31).op(Op.i32_and).op(Op.i32_eqz).op(Op.i32_and).set(full)
      b.get(L.LB0!).get(L.W0!).get(L.LN!).op(Op.i32_mul).op(Op.i32_add).set(at)
      // (a lane ends only at a return before the kernel's last instruction, and waits only at a departure)
      if (!settled && (this.plan!.threadsEnd || this.plan!.departures.size)) {
        b.get(full).begin('if')
        for (let k = 0; k < 32; k++) {
          b.get(at)
          if (k) b.get(L.LN!).i32(k).op(Op.i32_mul).op(Op.i32_add)
          b.mem(Op.i32_load, 2, this.stateOff); if (k) b.op(Op.i32_or)
        }
        b.op(Op.i32_eqz).set(full)
        b.end()
      }
      // the scalar lane loops where the warp is not whole, or where the run fails a lane test (before its
      // first store: a run's accesses come before its slots are written back)
      const out = b.open('block'), fallback = b.open('block')
      b.get(full).op(Op.i32_eqz).brIf(fallback)
      const chunks = Array.from({ length: 8 }, () => ({ regs: new Map<number, number>(), wide: new Map<number, number[]>() }))
      const laneAt = (k: number) => { b.get(at); if (k) b.get(L.LN!).i32(k).op(Op.i32_mul).op(Op.i32_add) }
      const use = (c: number) => {
        this.vregs = chunks[c]!.regs
        this.vwide = chunks[c]!.wide
        b.get(L.wx!).i32(4 * c).op(Op.i32_add).set(L.tx!).get(L.wy!).set(L.ty!).get(L.wz!).set(L.tz!)
        b.get(L.tx!).simd(SimdOp.i32x4_splat).i32x4([0, 1, 2, 3]).simd(SimdOp.i32x4_add).set(this.vlocal(-1))
      }
      const maskPred = (r: number) => { if (this.classes[r] === 'pred') b.i32x4([0, 0, 0, 0]).simd(SimdOp.i32x4_ne) }
      /** 32 lanes' words at slot offset `off` into register r's eight values. */
      const gather = (off: number, dst: (c: number) => number, r?: number) => {
        for (let c = 0; c < 8; c++) {
          use(c)
          const v = dst(c)
          laneAt(4 * c); b.simdMem(SimdOp.v128_load32_splat, 2, off).set(v)
          for (let k = 1; k < 4; k++) { laneAt(4 * c + k); b.get(v).simdMemLane(SimdOp.v128_load32_lane, 2, off, k).set(v) }
          if (r !== undefined && this.classes[r] === 'pred') { b.get(v); maskPred(r); b.set(v) }
        }
      }
      const scatterTo = (off: number, push: (c: number) => void) => {
        for (let c = 0; c < 8; c++) {
          use(c)
          const v = this.tmp('wsv', 'v128')
          push(c); b.set(v)
          for (let k = 0; k < 4; k++) { laneAt(4 * c + k); b.get(v).simdMemLane(SimdOp.v128_store32_lane, 2, off, k) }
        }
      }
      // registers the run reads before writing: per-thread ones from the slots, block values splat
      const written = new Set<number>()
      const loaded = new Set<number>()
      for (const it of loops) {
        for (const r of it.loads) {
          if (written.has(r) || loaded.has(r)) continue
          const tid = this.plan!.recomputed.get(r)
          if (tid) {
            // a copy of %tid.x/y/z: the lanes' own
            for (let c = 0; c < 8; c++) {
              use(c)
              if (tid === '%tid.x') b.get(this.vlocal(-1)); else b.get(L[tid === '%tid.y' ? 'ty' : 'tz']!).simd(SimdOp.i32x4_splat)
              b.set(this.vlocal(r))
            }
            this.vstride.set(r, tid === '%tid.x' ? 1 : 0)
            loaded.add(r)
            continue
          }
          if (this.predRemat(r)) {
            for (let c = 0; c < 8; c++) { use(c); this.pushRematPred(this.predRemat(r)!, true); b.set(this.vlocal(r)) }
            loaded.add(r)
            continue
          }
          if (this.remat(r)) {
            // a register the lane loops recompute (no slot is written for it): inv + c·tx, or an operation on
            // such values (rematOf)
            let st: number | undefined
            for (let c = 0; c < 8; c++) { use(c); st = this.pushRemat(r, true); b.set(this.vlocal(r)) }
            if (st !== undefined) this.vstride.set(r, st); else this.vstride.delete(r)
            loaded.add(r)
            continue
          }
          const off = this.slotOf.get(r)
          if (off === undefined) throw new NotVectorizable(`register ${this.fn.registers[r]?.name} without a slot`)
          if (this.isWide(r)) throw new NotVectorizable(`64-bit register ${this.fn.registers[r]?.name} from its slot`)
          gather(off, () => this.vlocal(r), r)
          loaded.add(r)
        }
        for (let i = it.start; i < it.end; i++) {
          const x = ins[i]!
          for (const r of usedRegisters(x)) {
            if (written.has(r) || loaded.has(r) || it.loads.includes(r)) continue
            for (let c = 0; c < 8; c++) {
              use(c)
              if (this.isWide(r)) { for (const l of this.vwideLocals(r)) b.get(this.regs[r]!).set(l); continue }
              b.get(this.regs[r]!)
              if (this.classes[r] === 'f32') b.op(Op.i32_reinterpret_f32)
              b.simd(SimdOp.i32x4_splat); maskPred(r); b.set(this.vlocal(r))
            }
            if (!this.isWide(r)) this.vstride.set(r, 0)
            loaded.add(r)
          }
          for (const r of definedRegisters(x)) if (!x.guard) written.add(r)
        }
        if (it.scatter !== undefined) for (const r of definedRegisters(ins[it.scatter]!)) written.add(r)
      }
      // the first shuffle's inputs, as the lane loop before the run left them (none where the run opens with
      // that loop)
      let cin = Array.from({ length: 8 }, () => b.local('v128'))
      const first = cin, lead = loops[0]!.scatter === undefined
      if (!lead) {
        const fx = ins[loops[0]!.scatter!]!
        if (this.collectiveInputs(fx)[0]!.direct) {
          // a value the same in every lane (an immediate)
          for (let c = 0; c < 8; c++) { use(c); this.cur = fx; this.vrd(fx.operands[1]); b.set(first[c]!) }
        } else gather(this.inputSlot(loops[0]!.scatter!, 0), (c) => first[c]!)
      }
      this.simd = { addressOnly: new Set(), uniform: new Set() }
      this.vmode = true
      this.vLoop = true
      this.vStored = false
      this.vLaneByLane = false
      this.vScalar = new Set()
      this.vWritten = new Set()
      this.vFail = fallback
      this.vBails = 0
      const closing = loops[loops.length - 1]!.gather === undefined ? loops[loops.length - 1] : undefined
      /** One eighth of the warp (use) through a loop's code (a return ends its code: vDone). */
      const code = (it: ThreadLoop) => {
        this.vIfByLane = it === closing
        this.vDone = b.open('block')
        this.nodes(it.nodes)
        // 64-bit values kept as lane 0 and a stride: every lane's local, for the next eighth's code to find
        // as they are
        for (const r of [...this.vwstride.keys()]) this.vmaterialize(r)
        this.vwstride.clear(); this.vwLanes.clear()
        b.end()
        this.vIfByLane = false
      }
      for (const it of loops) {
        if (it.scatter === undefined && it.gather === undefined) {
          // a run without shuffles (laneRunEnd): each loop's code for the eight groups in lane order
          for (let c = 0; c < 8; c++) { use(c); code(it) }
          continue
        }
        if (it.scatter === undefined) {
          // the run's opening loop: its code, and the first shuffle's inputs it leaves
          const gx = ins[it.gather!]!
          for (let c = 0; c < 8; c++) { use(c); code(it); this.cur = gx; this.vrd(gx.operands[1]); b.set(first[c]!) }
          continue
        }
        // the shuffle's results: lane l reads lane j (in range, p true) or keeps its own value (p false)
        const si = it.scatter!
        const sh = this.constantShflOf(si)!
        const sx = ins[si]!
        const d = sx.operands[0]!
        const [dst, pd] = d.kind === 'pair' ? [d.first, d.second] : [d, undefined]
        const src: number[] = [], pv: boolean[] = []
        for (let l = 0; l < 32; l++) {
          const lane = sh.b & 31
          const j = sh.mode === 'up' ? l - lane : sh.mode === 'down' ? l + lane : sh.mode === 'bfly' ? l ^ lane : lane
          const ok = sh.mode === 'up' ? j >= sh.clamp : j <= sh.clamp
          pv.push(ok); src.push(ok ? j : l)
        }
        for (let c = 0; c < 8; c++) {
          use(c)
          const from = [...new Set(src.slice(4 * c, 4 * c + 4).map((l) => l >> 2))]
          if (from.length > 2) throw new NotVectorizable('a shuffle reading more than two groups of four lanes')
          const [a, a2] = [from[0]!, from[1] ?? from[0]!]
          const bytes = src.slice(4 * c, 4 * c + 4).flatMap((l) => { const base = ((l >> 2) === a ? 0 : 16) + 4 * (l & 3); return [base, base + 1, base + 2, base + 3] })
          b.get(cin[a]!).get(cin[a2]!).shuffle(bytes).set(this.vlocal((dst as { id: number }).id))
          if (pd?.kind === 'reg') b.i32x4(pv.slice(4 * c, 4 * c + 4).map((x) => (x ? -1 : 0)) as [number, number, number, number]).set(this.vlocal(pd.id))
          code(it)
        }
        if (it.gather !== undefined) {
          // the next shuffle's inputs (its value operand), for the next loop or for the lanes after the run
          const gx = ins[it.gather]!
          if (it === loops[loops.length - 1]) {
            this.collectiveInputs(gx).forEach((x, j) => {
              if (x.direct) return
              // (vrd refuses an operand that is not a 32-bit value)
              this.cur = gx
              scatterTo(this.inputSlot(it.gather!, j), () => this.vrd(gx.operands[j + 1]))
            })
            b.i32(-1).set(this.cl('A', it.gather))
          } else {
            const next = Array.from({ length: 8 }, () => b.local('v128'))
            for (let c = 0; c < 8; c++) { use(c); this.cur = gx; this.vrd(gx.operands[1]); b.set(next[c]!) }
            cin = next
          }
        }
      }
      // the registers the loops keep in slots, as the last lane loop that wrote them left them: those a loop
      // outside the run reads, or the run's own loops read before writing them (a run in a loop reads them
      // again on the next trip); the others lived from one loop of the run to the next only
      const outside = new Set<number>()
      const walk = (list: readonly ScheduleItem[]) => {
        for (const x of list) {
          if (x.kind === 'threads') { if (!loops.includes(x)) for (const r of x.loads) outside.add(r) } else if (x.kind === 'warps' || x.kind === 'region') walk(x.body)
        }
      }
      walk(this.plan!.schedule)
      const stored = new Set(loops.flatMap((it) => it.stores).filter((r) => outside.has(r) || loaded.has(r)))
      for (const r of stored) {
        const off = this.slotOf.get(r)
        if (off === undefined || this.remat(r) || this.predRemat(r)) continue
        if (this.isWide(r)) {
          const [, st, al] = slotOps(this.classes[r]!)
          for (let c = 0; c < 8; c++) { use(c); this.vwideLocals(r).forEach((l, k) => { laneAt(4 * c + k); b.get(l).mem(st, al, off) }) }
          continue
        }
        scatterTo(off, () => { b.get(this.vlocal(r)); if (this.classes[r] === 'pred') b.i32x4([1, 1, 1, 1]).simd(SimdOp.v128_and) })
      }
      // block values the loops compute (the same in every lane) stay in their scalar locals for the code after
      // the run, as the last lane left them
      use(7)
      for (const r of this.plan!.perBlock) {
        if (!written.has(r)) continue
        if (this.isWide(r)) { b.get(this.vwideLocals(r)[3]!).set(this.regs[r]!); continue }
        this.vlaneToScalar(r, 3)
      }
      b.br(out)
      b.end()
      restore()
      this.items(run)
      b.end()
      const first0 = loops[0]!.scatter ?? loops[0]!.gather
      if (first0 === undefined) this.laneRuns.add(ins[loops[0]!.start]!.line)
      else {
        const line = ins[first0]!.line
        this.warpRuns.add(line)
        if (lead || closing) this.warpRunEdges.add(line)
      }
      return true
    } catch (e) {
      if (!(e instanceof NotVectorizable) && !(e instanceof WasmRefusal)) throw e
      b.rewind(mark)
      restore()
      if (final) this.items(run)
      return false
    } finally {
      restore()
      this.vstride.clear()
      for (const [k, v] of stride0) this.vstride.set(k, v)
    }
  }

  /** A structure node with collectives, once per warp: lanes that leave wait at its end (or, for a loop, for
   *  the next trip) until the warp gets there, as a GPU's reconvergence (emit-thread-loops.ts). */
  private warpRegion(it: Extract<ScheduleItem, { kind: 'region' }>): void {
    const { b, L } = this
    const r = it.node
    const brk = 2 + 2 * r.id, cont = 3 + 2 * r.id
    const state = () => { this.stateAddr(); b.mem(Op.i32_load, 2, this.stateOff) }
    const setState = (v: number) => { this.stateAddr(); b.i32(v).mem(Op.i32_store, 2, this.stateOff) }
    /** Wakes the lanes that wait at the region's end. */
    const wake = () => this.eachThread(-1, () => b.get(L.W1!), () => { state(); b.i32(brk).op(Op.i32_eq).begin('if'); setState(0); b.end() })
    if (r.kind === 'loop') {
      const again = this.tmp(`again${r.id}`, 'i32')
      const lp = b.open('loop')
      this.warpItems(it.body)
      // lanes still running leave at the end; lanes waiting for the next trip go on, and so does the loop
      b.i32(0).set(again)
      this.eachThread(-1, () => b.get(L.W1!), () => {
        const sv = this.tmp('sv', 'i32')
        state(); b.set(sv)
        b.get(sv).op(Op.i32_eqz).begin('if'); setState(brk)
        b.else().get(sv).i32(cont).op(Op.i32_eq).begin('if'); setState(0); b.i32(1).set(again); b.end()
        b.end()
      })
      b.get(again).brIf(lp)
      b.end()
      // wake the lanes that waited at the end
      wake()
    } else {
      const body = () => {
        const lv = b.open('block')
        this.level.set(r.id, lv)
        // no lane enters after the first item (lanes only leave): a warp with none left running skips the rest
        const [first, ...rest] = it.body
        if (first) this.warpItems([first])
        if (rest.length) {
          // (the first lane still running ends the search)
          const any = this.tmp('any', 'i32'), at = this.tmp('anyAt', 'i32')
          b.i32(0).set(any)
          b.get(L.LB0!).get(L.W0!).get(L.LN!).op(Op.i32_mul).op(Op.i32_add).set(at)
          b.get(L.W0!).set(L.t!)
          const found = b.open('block'), scan = b.open('loop')
          b.get(L.t!).get(L.W1!).op(Op.i32_ge_u).brIf(found)
          b.i32(1).set(any)
          b.get(at).mem(Op.i32_load, 2, this.stateOff).op(Op.i32_eqz).brIf(found)
          b.i32(0).set(any)
          b.get(L.t!).i32(1).op(Op.i32_add).set(L.t!)
          b.get(at).get(L.LN!).op(Op.i32_add).set(at)
          b.br(scan)
          b.end().end()
          b.get(any).op(Op.i32_eqz).brIf(lv)
          this.warpItems(rest)
        }
        b.end()
        this.level.delete(r.id)
        // wake the lanes that waited at the end
        wake()
      }
      /** The region for lanes that all stay at its first branch (`elide`, not written): no search for a lane
       *  still running, its lane loops as runs where they can be, the lanes woken at the end only where a
       *  lane can leave for it further in. */
      const narrowBody = (elide: number) => {
        const lv = b.open('block')
        this.level.set(r.id, lv)
        const outerElided = this.elided
        this.elided = elide
        this.warpItems(it.body, true)
        this.elided = outerElided
        b.end()
        this.level.delete(r.id)
        const leaves = [...this.plan!.departures].some(([i, d]) => i !== elide && d.kind === 'park' && d.target.node === r.id)
        if (leaves) wake()
      }
      // (the sites in the region: reached by the threads of its guard's tx interval only)
      const outer = this.siteTx
      const guard = this.regionGuard(it)
      const tx = guard ? this.stayRange(guard.g, guard.negate, guard.at) : undefined
      if (tx) this.siteTx = outer ? [Math.max(outer[0], tx[0]), outer[1] === 'NTX' ? tx[1] : tx[1] === 'NTX' ? outer[1] : Math.min(outer[1], tx[1])] : tx
      const out = guard ? this.skipWholeWarp(it, guard, this.regionSettled ? tx : undefined, narrowBody) : undefined
      body()
      if (out !== undefined) b.end()
      this.siteTx = outer
    }
  }

  /** The guard of an `if` once per warp whose first instruction is a lane's branch past it, and the branch:
   *  the instruction index and guard register (skipWholeWarp's shape). */
  private regionGuard(it: Extract<ScheduleItem, { kind: 'region' }>): { at: number; g: number; negate: boolean; first: ThreadLoop } | undefined {
    const first = it.body[0]
    const node = first?.kind === 'threads' ? first.nodes[0] : undefined
    if (first?.kind !== 'threads' || first.level !== 'warp' || node?.kind !== 'instr' || first.restores.length || first.scatter !== undefined) return undefined
    const x = this.fn.instructions[node.index]!
    const d = this.plan!.departures.get(node.index)
    if (x.op !== 'bra' || !x.guard || d?.kind !== 'park' || d.target.kind !== 'break' || d.target.node !== it.node.id) return undefined
    return { at: node.index, g: x.guard.reg, negate: !!x.guard.negate, first }
  }

  /** Whether a warp-level schedule holds a collective (its lanes read one another's values). */
  private regionHasCollective(list: readonly ScheduleItem[]): boolean {
    return list.some((x) => x.kind === 'collective' || (x.kind === 'threads' && (x.gather !== undefined || x.scatter !== undefined)) || ((x.kind === 'region' || x.kind === 'warps') && this.regionHasCollective(x.body)))
  }

  /** The tx that do not take `@p bra` (`@!p` where `negate`) at instruction `at`, as [lo, hi), where p's one
   *  definition, before `at`, is `setp.cmp p, %tid.x, imm` (or the operands the other way round): the rule of
   *  threadLoopTxRange (@kernelpack/ptx) for a guard a lane loop before the branch computed. */
  private stayRange(p: number, negate: boolean, at: number): TxInterval | undefined {
    const tc = this.txCompare(p, at)
    const y = tc?.y
    if (!tc || y?.kind !== 'imm' || y.imm.kind !== 'int') return undefined
    const Y = tc.signed ? Number(BigInt.asIntN(32, y.imm.value)) : Number(BigInt.asUintN(32, y.imm.value))
    const ends = stayEnds(tc.cmp, negate)
    const end = (e: TxEnd): number | 'NTX' => (e === '0' ? 0 : e === 'Y' ? Y : e === 'Y1' ? Y + 1 : 'NTX')
    return ends ? [end(ends[0]) as number, end(ends[1])] : undefined
  }

  /** Predicate p's one definition, before instruction `at`, as `setp.cmp p, %tid.x, y` on 32-bit integers (or
   *  the operands the other way round, the comparison then turned to read tid.x first): the comparison, y,
   *  whether it is signed, and where p is defined. */
  private txCompare(p: number, at: number): { cmp: string; y: IrOperand | undefined; signed: boolean; def: number } | undefined {
    const defs = this.defsOf.get(p) ?? []
    const sp = this.fn.instructions[defs[0] ?? -1]
    if (!sp || defs.length !== 1 || sp.index >= at || sp.op !== 'setp' || sp.guard || sp.boolOp || !sp.cmp || sp.operands[0]?.kind !== 'reg') return undefined
    const type = sp.type ?? ''
    if (!['u32', 's32', 'b32'].includes(type)) return undefined
    const isTx = (o: IrOperand | undefined) => (o?.kind === 'special' && o.name === '%tid.x') || (o?.kind === 'reg' && this.plan!.recomputed.get(o.id) === '%tid.x')
    if (isTx(sp.operands[1])) return { cmp: sp.cmp, y: sp.operands[2], signed: type === 's32', def: sp.index }
    if (isTx(sp.operands[2])) return { cmp: SWAPPED_CMP[sp.cmp]!, y: sp.operands[1], signed: type === 's32', def: sp.index }
    return undefined
  }

  /** An `if` once per warp whose first instruction is a lane's branch past it (`@%p6 bra` of `if (t < 32)`):
   *  where every running lane of the warp takes that branch, the warp skips the whole region (its lanes would
   *  each wait at the end and be woken there, changing nothing) instead of three loops over its lanes. Where
   *  every lane runs and the guard compares %tid.x with a constant (stayRange), the lanes that stay are a
   *  tx interval: a warp outside it skips after one test, and one that meets it runs the region (`body`) for
   *  those lanes only, as a warp of fewer lanes (lanes that branch past would only wait and be woken; no
   *  collective in the region sees the difference). Opens the block the test leaves (closed by warpRegion after
   *  the region), or writes nothing. */
  private skipWholeWarp(it: Extract<ScheduleItem, { kind: 'region' }>, guard: NonNullable<ReturnType<KernelWriter['regionGuard']>>, range: TxInterval | undefined, body: (elide: number) => void): number | undefined {
    const { at, g, negate, first } = guard
    const x = this.fn.instructions[at]!
    const off = this.slotOf.get(g)
    if (off === undefined || this.plan!.recomputed.has(g) || this.remat(g) || !first.loads.includes(g) || !['pred', 'i32'].includes(this.classes[g]!)) return undefined
    const { b, L } = this
    const [ld, , al] = slotOps(this.classes[g]!)
    // (a guard recomputed where read, predRemat, is recomputed for each lane: it has no slot to read)
    const sp = this.predRemat(g)
    const out = b.open('block')
    this.warpSkips.add(x.line)
    if (range) {
      this.skipsByRange.add(x.line)
      const [lo, hi] = range
      const end = (e: number | 'NTX') => { if (e === 'NTX') b.get(L.NTX!).op(Op.i64_extend_i32_u); else b.i64(BigInt(e)) }
      // (the warp in one row: NTX a multiple of 32)
      b.get(L.NTX!).i32(31).op(Op.i32_and).op(Op.i32_eqz).begin('if')
      // the warp's lanes are tx [wx, wx + W1 − W0) of one row (32 of them, or fewer inside a region that
      // narrowed them already)
      const w = this.tmp('nw', 'i64'), wEnd = this.tmp('nwe', 'i64')
      b.get(L.wx!).op(Op.i64_extend_i32_u).set(w)
      b.get(w).get(L.W1!).get(L.W0!).op(Op.i32_sub).op(Op.i64_extend_i32_u).op(Op.i64_add).set(wEnd)
      if (this.regionHasCollective(it.body)) {
        end(hi); b.get(w).op(Op.i64_le_s)
        end(lo); b.get(wEnd).op(Op.i64_ge_s)
        b.op(Op.i32_or).brIf(out)
      } else {
        // the lanes [lo', hi') = [lo, hi) ∩ [wx, wEnd), as the warp's lanes while the region runs
        const lo2 = this.tmp('nlo', 'i64'), hi2 = this.tmp('nhi', 'i64')
        end(lo); b.set(lo2)
        b.get(lo2).get(w).get(lo2).get(w).op(Op.i64_gt_s).op(Op.select).set(lo2)
        end(hi); b.set(hi2)
        b.get(hi2).get(wEnd).get(hi2).get(wEnd).op(Op.i64_lt_s).op(Op.select).set(hi2)
        b.get(lo2).get(hi2).op(Op.i64_ge_s).brIf(out)
        const w0 = b.local('i32'), w1 = b.local('i32'), wx = b.local('i32')
        b.get(L.W0!).set(w0).get(L.W1!).set(w1).get(L.wx!).set(wx)
        b.get(w0).get(lo2).get(w).op(Op.i64_sub).op(Op.i32_wrap_i64).op(Op.i32_add).set(L.W0!)
        b.get(w0).get(hi2).get(w).op(Op.i64_sub).op(Op.i32_wrap_i64).op(Op.i32_add).set(L.W1!)
        b.get(lo2).op(Op.i32_wrap_i64).set(L.wx!)
        body(at)
        b.get(w0).set(L.W0!).get(w1).set(L.W1!).get(wx).set(L.wx!)
        b.br(out)
      }
      b.end()
    }
    if (range && sp) return out
    const stays = b.open('block')
    // lane by lane, until one that runs does not take the branch (a recomputed guard with each lane's tx, ty,
    // tz, put back after)
    const saved = sp ? (['tx', 'ty', 'tz'] as const).map((n) => { const q = this.tmp(`sw${n}`, 'i32'); b.get(L[n]!).set(q); return [n, q] as const }) : []
    if (sp) b.get(L.wx!).set(L.tx!).get(L.wy!).set(L.ty!).get(L.wz!).set(L.tz!)
    const restore = () => { for (const [n, q] of saved) b.get(q).set(L[n]!) }
    b.get(L.W0!).set(L.t!)
    const lp = b.open('loop')
    b.get(L.t!).get(L.W1!).op(Op.i32_ge_u)
    if (sp) { b.begin('if'); restore(); b.br(out).end() } else b.brIf(out)
    this.setLB()
    b.get(L.LB!).mem(Op.i32_load, 2, this.stateOff).op(Op.i32_eqz)
    if (sp) this.pushRematPred(sp, false); else b.get(L.LB!).mem(ld, al, off)
    if (!negate) b.op(Op.i32_eqz)
    b.op(Op.i32_and).brIf(stays)
    b.get(L.t!).i32(1).op(Op.i32_add).set(L.t!)
    if (sp) this.step3('tx', 'ty', 'tz', 'NTX', 'NTY')
    b.br(lp)
    b.end().end()
    restore()
    return out
  }

  /** Runs `body` for t in [from, to) with t and LB set (from −1: the warp's W0). */
  private eachThread(from: number, to: () => void, body: () => void): void {
    const { b, L } = this
    if (from < 0) b.get(L.W0!).set(L.t!); else b.i32(from).set(L.t!)
    const done = b.open('block'), lp = b.open('loop')
    b.get(L.t!); to(); b.op(Op.i32_ge_u).brIf(done)
    this.setLB()
    body()
    b.get(L.t!).i32(1).op(Op.i32_add).set(L.t!)
    b.br(lp)
    b.end().end()
  }

  /** Pushes the current thread's LB (its state and slots are at fixed offsets from it). */
  private stateAddr(): void { this.b.get(this.L.LB!) }

  /** t, the thread's linear index in its block, from tz, ty, tx. */
  private setThreadIndex(): void {
    const { b, L } = this
    b.get(L.tz!).get(L.NTY!).op(Op.i32_mul).get(L.ty!).op(Op.i32_add).get(L.NTX!).op(Op.i32_mul).get(L.tx!).op(Op.i32_add).set(L.t!)
  }

  /** LB, the base of thread t's local memory (its state and slots after it). */
  private setLB(): void {
    const { b, L } = this
    b.get(L.LB0!).get(L.t!).get(L.LN!).op(Op.i32_mul).op(Op.i32_add).set(L.LB!)
  }

  private hasUniformDeparture(s: number, e: number): boolean {
    for (let i = s; i < e; i++) if (this.plan!.departures.get(i)?.kind === 'uniform') return true
    return false
  }

  /** One loop over the warp's lanes [W0, W1): lanes not running (ended, left, waiting) are skipped; a
   *  collective's results are taken at the start of a lane's turn, its inputs left at the end. */
  private lanes(it: ThreadLoop): void {
    const { b, L } = this
    if (it.gather !== undefined) this.gatherReset(it.gather)
    const saved = it.restores.map((r) => { const q = b.local(classType(this.classes[r]!)); b.get(this.regs[r]!).set(q); return [r, q] as const })
    b.get(L.W0!).set(L.t!)
    b.get(L.wx!).set(L.tx!).get(L.wy!).set(L.ty!).get(L.wz!).set(L.tz!)
    const done = b.open('block'), lp = b.open('loop')
    b.get(L.t!).get(L.W1!).op(Op.i32_ge_u).brIf(done)
    if (this.helpers.simd && this.vectorItem(it)) this.vectorTurnOrPrepassed(it, L.NTX!, lp, true)
    this.turn(it, saved, true)
    b.get(L.t!).i32(1).op(Op.i32_add).set(L.t!)
    this.step3('tx', 'ty', 'tz', 'NTX', 'NTY')
    b.br(lp)
    b.end().end()
  }

  /** Thread t's turn in a loop (t set): its LB; skipped when it no longer runs (`skipEnded`); the block-wide
   *  values it starts from, its per-thread registers, a collective's results; the loop's code (a departure
   *  leaves the R block), a collective's inputs; its per-thread registers back. A return leaves the turn. */
  private turn(it: ThreadLoop, saved: ReadonlyArray<readonly [number, number]>, skipEnded: boolean): void {
    const { b, L } = this
    this.threadLevel = b.open('block')
    this.setLB()
    if (skipEnded) b.get(L.LB!).mem(Op.i32_load, 2, this.stateOff).brIf(this.threadLevel)
    for (const [r, q] of saved) b.get(q).set(this.regs[r]!)
    for (const r of it.loads) this.slotLoad(r)
    if (it.scatter !== undefined) this.scatter(it.scatter)
    this.rLevel = b.open('block')
    this.nodes(it.nodes)
    if (it.gather !== undefined) this.gather(it.gather)
    b.end()
    for (const r of it.stores) this.slotStore(r)
    b.end()
  }

  // --- collectives between loops (emit-thread-loops.ts gather/scatter, the same rules) ---

  /** The inputs of collective instruction i, as its lanes compute them (emit-instruction.ts's order). */
  private collectiveInputs(ins: Instruction): Array<{ k: WKind; push: () => void; direct: boolean; value?: number }> {
    const A = ins.operands
    // an immediate (or an absent mask) is the same in every lane: read where it is used, no slot (emit-thread-loops.ts direct)
    // so is a 32-bit register that holds one constant wherever the collective reads it (nvcc's `mov.u32 %r12,
    // 16;` before `shfl.sync.down.b32 … %r12, %r11, %r13`): the constant is pushed where it is used
    const constant = (o: IrOperand | undefined): number | undefined => {
      if (o?.kind === 'imm') return o.imm.kind === 'int' ? Number(BigInt.asIntN(32, o.imm.value)) : undefined
      if (o?.kind !== 'reg' || this.classes[o.id] !== 'i32') return undefined
      const f = this.affine.formAt(o.id, ins.index)
      return f && f.c === 0 && !f.iv && f.inv.kind === 'const' && f.conds.length === 0 ? f.inv.value | 0 : undefined
    }
    // (`value`: the constant, for the writer to fold, as scatter does with a shfl's lane, clamp and mask)
    const mask = (o: IrOperand | undefined) => {
      const v = o ? constant(o) : -1
      if (v !== undefined) return { k: 'i32' as WKind, push: () => { this.b.i32(v) }, direct: true, value: v }
      return { k: 'i32' as WKind, push: () => this.rd(o, 'i32'), direct: false }
    }
    const reg = (o: IrOperand | undefined, k: WKind) => {
      const v = k === 'i32' ? constant(o) : undefined
      if (v !== undefined) return { k, push: () => { this.b.i32(v) }, direct: true, value: v }
      return { k, push: () => this.rd(o, k), direct: o?.kind === 'imm' }
    }
    const slotted = (o: IrOperand | undefined, k: WKind) => ({ k, push: () => this.rd(o, k), direct: false })
    const c = collectiveOf(ins)!
    switch (c.kind) {
      case 'shfl': return [reg(A[1], 'i32'), reg(A[2], 'i32'), reg(A[3], 'i32'), mask(A[4])]
      case 'vote': return [reg(A[1], 'pred'), mask(A[2])]
      case 'elect': return [reg(A[1], 'i32')]
      case 'redux': return [reg(A[1], 'i32'), reg(A[2], 'i32')]
      case 'match':
        if (!['b32', 'u32', 's32'].includes(ins.type ?? '')) throw new WasmRefusal(`\`${ins.text}\` (PTX line ${ins.line}): match on 64-bit values is not lowered`, ins.line, ins.text)
        return [reg(A[1], 'i32'), mask(A[2])]
      case 'warpsync': return [mask(A[0])]
      case 'activemask': return []
      case 'bar': return c.red ? [reg(A[A.length - 1], 'pred')] : []
      // tensor-core collectives: every input in a slot (the tc import and other lanes read them there)
      case 'mma': {
        const m = this.mmaOf(ins)
        return [...m.ra.map((o) => slotted(o, fragKind(m.form.a))), ...m.rb.map((o) => slotted(o, fragKind(m.form.b))), ...m.rc.map((o) => slotted(o, fragKind(m.form.c)))]
      }
      case 'movmatrix': return [slotted(A[1], 'i32')]
      case 'ldmatrix': return [{ k: 'i64', push: () => this.addrValue(A[1]), direct: false }]
      case 'stmatrix': return [{ k: 'i64', push: () => this.addrValue(A[0]), direct: false }, ...this.matrixRegs(ins).map((o) => slotted(o, 'i32'))]
      default: throw new WasmRefusal(`\`${ins.text}\` is not lowered`)
    }
  }

  /** The slot (offset from LB) of input j of collective i. */
  private inputSlot(i: number, j: number): number {
    const key = `${i}:${j}`
    let off = this.inputSlots.get(key)
    if (off === undefined) { off = this.nextSlot(); this.inputSlots.set(key, off) }
    return off
  }

  private nextSlot(): number {
    const off = this.stateOff + this.slotBytes
    this.slotBytes += 8
    return off
  }

  private cl(name: string, i: number): number { return this.tmp(`${name}${i}`, 'i32') }

  private gatherReset(i: number): void {
    const b = this.b
    const c = collectiveOf(this.fn.instructions[i]!)!
    if (c.kind === 'bar') { b.i32(0).set(this.cl('BR', i)); b.i32(0).set(this.cl('BN', i)); return }
    b.i32(0).set(this.cl('A', i))
    if (c.kind === 'vote') b.i32(0).set(this.cl('VB', i))
    if (c.kind === 'redux') b.i32(0).set(this.cl('RS', i))
    if (c.kind === 'mma' || c.kind === 'movmatrix') b.i32(0).set(this.cl('TQ', i))
  }

  /** What a thread that reaches collective i leaves for it. */
  private gather(i: number): void {
    const b = this.b, L = this.L
    const ins = this.fn.instructions[i]!
    const c = collectiveOf(ins)!
    if (ins.guard) {
      b.get(this.regs[ins.guard.reg]!)
      if (this.classes[ins.guard.reg] !== 'pred') b.i32(0).op(Op.i32_ne)
      if (ins.guard.negate) b.op(Op.i32_eqz)
      b.open('if')
    }
    const inputs = this.collectiveInputs(ins)
    if (c.kind === 'bar') {
      b.get(this.cl('BN', i)).i32(1).op(Op.i32_add).set(this.cl('BN', i))
      if (c.red) { inputs[0]!.push(); b.get(this.cl('BR', i)).op(Op.i32_add).set(this.cl('BR', i)) }
    } else {
      const bit = () => b.i32(1).get(L.t!).i32(31).op(Op.i32_and).op(Op.i32_shl)
      b.get(this.cl('A', i)); bit(); b.op(Op.i32_or).set(this.cl('A', i))
      inputs.forEach((x, j) => {
        if (c.kind === 'vote' && j === 0) {
          x.push(); b.begin('if').get(this.cl('VB', i)); bit(); b.op(Op.i32_or).set(this.cl('VB', i)).end()
          return
        }
        if (x.direct) return
        b.get(L.LB!); x.push(); this.slotAccess(x.k, true, this.inputSlot(i, j))
      })
    }
    if (ins.guard) b.end()
  }

  /** shfl.sync whose lane operand, clamp/segment word and member mask are constants with no segments (the
   *  warp butterflies and down/up shifts compilers write: `shfl.sync.bfly.b32 %r, %v, 16, 31, -1`): scatter's
   *  computation folded where it is written, the lane's source `j` one operation, the range test `j ≤ 31`
   *  gone where it always holds. Writes the destinations as scatter does and returns true; false (nothing
   *  written) for any other shfl. */
  private constantShfl(i: number, mode: string | undefined, l: number, Ai: number, q0: number, q1: number): boolean {
    const b = this.b
    const ins = this.fn.instructions[i]!
    const [, xb, xc, xm] = this.collectiveInputs(ins)
    const bv = xb?.value, cv = xc?.value, mv = xm?.value
    if (bv === undefined || cv === undefined || mv === undefined || ((cv >>> 8) & 31) !== 0) return false
    const clamp = cv & 31, lane = bv & 31
    const j = this.tmp('sj', 'i32')
    // with no segment bits, mx = clamp: up reads j ≥ clamp, the others j ≤ clamp (signed, as scatter does)
    let always = false
    switch (mode) {
      case 'up': b.get(l).i32(lane).op(Op.i32_sub); break
      case 'down': b.get(l).i32(lane).op(Op.i32_add); break
      // j = l ^ lane is a lane (0–31): in range wherever the clamp is 31
      case 'bfly': b.get(l).i32(lane).op(Op.i32_xor); always = clamp === 31; break
      default: b.i32(lane); always = lane <= clamp
    }
    b.set(j)
    if (always) b.i32(1).set(q1)
    else b.get(j).i32(clamp).op(mode === 'up' ? Op.i32_ge_s : Op.i32_le_s).set(q1)
    const read = () => {
      // lane j's value, or 0 when lane j is not in the member mask or did not arrive (as scatter)
      b.get(Ai); if (mv !== -1) b.i32(mv).op(Op.i32_and)
      b.get(j).op(Op.i32_shr_u).i32(1).op(Op.i32_and).begin('if', 'i32')
      this.input(i, 0, j)
      b.else().i32(0).end()
    }
    if (always) read()
    else { b.get(q1).begin('if', 'i32'); read(); b.else(); this.input(i, 0, l); b.end() }
    b.set(q0)
    const A = ins.operands
    const [dst, p] = A[0]!.kind === 'pair' ? [A[0]!.first, A[0]!.second] : [A[0]!, undefined]
    this.wr(dst, 'i32', () => b.get(q0))
    if (p) this.wr(p, 'pred', () => b.get(q1))
    return true
  }

  /** Pushes input j of collective i as lane `lane` (a local holding 0–31) left it. */
  private input(i: number, j: number, lane: number): void {
    const b = this.b, L = this.L
    const x = this.collectiveInputs(this.fn.instructions[i]!)[j]!
    if (x.direct) return x.push()
    this.laneBase(lane)
    this.slotAccess(x.k, false, this.inputSlot(i, j))
  }

  /** Pushes the local base (LB) of lane `lane` (a local holding 0–31) of the current warp. */
  private laneBase(lane: number): void {
    this.b.get(this.L.LB0!).get(this.L.W0!).get(lane).op(Op.i32_add).get(this.L.LN!).op(Op.i32_mul).op(Op.i32_add)
  }

  /** A load (store) of a collective's slot value of kind k at `off` from the lane base on the stack (below
   *  the value, for a store): 32-bit kinds as i32, f32, f64 and i64 as themselves. */
  private slotAccess(k: WKind, store: boolean, off: number): void {
    const b = this.b
    if (k === 'f32') b.mem(store ? Op.f32_store : Op.f32_load, 2, off)
    else if (k === 'f64') b.mem(store ? Op.f64_store : Op.f64_load, 3, off)
    else if (k === 'i64') b.mem(store ? Op.i64_store : Op.i64_load, 3, off)
    else b.mem(store ? Op.i32_store : Op.i32_load, 2, off)
  }

  /** A wmma.mma/mma.sync instruction's form and register lists (tensor-core.ts mmaOperands). */
  private mmaOf(ins: Instruction): Exclude<ReturnType<typeof mmaOperands>, string> {
    const m = mmaOperands(ins)
    return typeof m === 'string' ? this.fail(m) : m
  }

  /** ldmatrix/stmatrix's registers, one per matrix (tensor-core.ts matrixOperands). */
  private matrixRegs(ins: Instruction): IrOperand[] {
    const r = matrixOperands(ins)
    return typeof r === 'string' ? this.fail(r) : r
  }

  /** The id of collective i's TensorOp (mma, movmatrix), registered once. */
  private tensorOp(i: number): number {
    const key = `tc:${i}`
    let id = this.tensorIds.get(key)
    if (id !== undefined) return id
    const ins = this.fn.instructions[i]!
    const xs = this.collectiveInputs(ins)
    const slot = (j: number): TcSlot => ({ off: this.inputSlot(i, j), kind: xs[j]!.k as TcSlot['kind'] })
    const out = (j: number, kind: TcSlot['kind']): TcSlot => ({ off: this.inputSlot(i, 1000 + j), kind })
    let op: TensorOp
    if (ins.op === 'movmatrix') op = { kind: 'movmatrix', x: slot(0), d: out(0, 'i32') }
    else {
      const m = this.mmaOf(ins)
      const na = m.ra.length, nb = m.rb.length
      op = { kind: 'mma', key: m.form.key, a: m.ra.map((_, j) => slot(j)), b: m.rb.map((_, j) => slot(na + j)), c: m.rc.map((_, j) => slot(na + nb + j)), d: m.rd.map((_, j) => out(j, fragKind(m.form.d))) }
    }
    id = this.helpers.tensor.length
    this.helpers.tensor.push(op)
    this.tensorIds.set(key, id)
    return id
  }


  /** What a thread that took part in collective i gets from it: q0, q1, then the instruction's writes. */
  private scatter(i: number): void {
    const b = this.b, L = this.L
    const ins = this.fn.instructions[i]!
    const A = ins.operands
    const c = collectiveOf(ins)!
    const q0 = this.tmp('q0', 'i32'), q1 = this.tmp('q1', 'i32')
    const split = (o: IrOperand): [IrOperand, IrOperand | undefined] => (o.kind === 'pair' ? [o.first, o.second] : [o, undefined])
    if (c.kind === 'bar') {
      if (!c.red) return
      const BR = this.cl('BR', i), BN = this.cl('BN', i)
      if (c.red === 'popc') b.get(BR); else if (c.red === 'and') b.get(BR).get(BN).op(Op.i32_eq); else b.get(BR).i32(0).op(Op.i32_ne)
      b.set(q0)
      this.wr(A[0], c.red === 'popc' ? 'i32' : 'pred', () => b.get(q0))
      return
    }
    if (c.kind === 'warpsync') return
    const Ai = this.cl('A', i)
    const l = this.tmp('lane', 'i32')
    b.get(L.t!).i32(31).op(Op.i32_and).set(l)
    b.get(Ai).get(l).op(Op.i32_shr_u).i32(1).op(Op.i32_and).begin('if')
    switch (c.kind) {
      case 'shfl': {
        if (this.constantShfl(i, c.mode, l, Ai, q0, q1)) break
        // PTX ISA shfl.sync: c packs the segment mask (bits 8–12) and the clamp lane (bits 0–4)
        const sg = this.tmp('sg', 'i32'), mx = this.tmp('mx', 'i32'), j = this.tmp('j', 'i32'), bb = this.tmp('sb', 'i32'), cc = this.tmp('sc', 'i32')
        this.input(i, 1, l); b.set(bb)
        this.input(i, 2, l); b.set(cc)
        b.get(cc).i32(8).op(Op.i32_shr_u).i32(31).op(Op.i32_and).set(sg)
        b.get(l).get(sg).op(Op.i32_and).get(cc).i32(31).op(Op.i32_and).get(sg).i32(-1).op(Op.i32_xor).op(Op.i32_and).op(Op.i32_or).set(mx)
        switch (c.mode) {
          // (b's low 5 bits: the ISA's bval = b[4:0])
          case 'up': b.get(l).get(bb).i32(31).op(Op.i32_and).op(Op.i32_sub); break
          case 'down': b.get(l).get(bb).i32(31).op(Op.i32_and).op(Op.i32_add); break
          case 'bfly': b.get(l).get(bb).i32(31).op(Op.i32_and).op(Op.i32_xor); break
          default: b.get(l).get(sg).op(Op.i32_and).get(bb).i32(31).op(Op.i32_and).get(sg).i32(-1).op(Op.i32_xor).op(Op.i32_and).op(Op.i32_or)
        }
        b.set(j)
        // pv: up j >= mx, else j <= mx (signed: j may be negative)
        b.get(j).get(mx).op(c.mode === 'up' ? Op.i32_ge_s : Op.i32_le_s).set(q1)
        // in range (pv): lane j's value, or 0 when lane j is not in the reader's member mask or did not arrive
        // (NVIDIA GPUs read 0 there; the ISA leaves it undefined); out of range: the lane's own value
        const mk = this.tmp('smk', 'i32')
        this.input(i, 3, l); b.set(mk)
        b.get(q1).begin('if', 'i32')
        b.get(Ai).get(mk).op(Op.i32_and).get(j).op(Op.i32_shr_u).i32(1).op(Op.i32_and).begin('if', 'i32')
        this.input(i, 0, j)
        b.else().i32(0).end()
        b.else()
        this.input(i, 0, l)
        b.end()
        b.set(q0)
        const [dst, p] = split(A[0]!)
        this.wr(dst, 'i32', () => b.get(q0))
        if (p) this.wr(p, 'pred', () => b.get(q1))
        break
      }
      case 'vote': {
        const m = this.tmp('vm', 'i32'), bal = this.tmp('vbal', 'i32')
        this.input(i, 1, l); b.get(Ai).op(Op.i32_and).set(m)
        b.get(this.cl('VB', i)).get(m).op(Op.i32_and).set(bal)
        switch (c.mode) {
          case 'ballot': b.get(bal); break
          case 'all': b.get(bal).get(m).op(Op.i32_eq); break
          case 'any': b.get(bal).i32(0).op(Op.i32_ne); break
          default: b.get(bal).get(m).op(Op.i32_eq).get(bal).op(Op.i32_eqz).op(Op.i32_or)
        }
        b.set(q0)
        this.wr(A[0], c.mode === 'ballot' ? 'i32' : 'pred', () => b.get(q0))
        break
      }
      case 'activemask': b.get(Ai).set(q0); this.wr(A[0], 'i32', () => b.get(q0)); break
      case 'mma': case 'movmatrix': {
        // the warp's results, computed once a trip by the first lane to take them (tier.ts tc), in each lane's slots
        const id = this.tensorOp(i), op = this.helpers.tensor[id]!
        const TQ = this.cl('TQ', i)
        b.get(TQ).op(Op.i32_eqz).begin('if')
        b.i32(id).get(L.LB0!).get(L.W0!).get(L.LN!).op(Op.i32_mul).op(Op.i32_add).get(L.LN!).get(Ai).call(this.funcs.tc!)
        b.i32(1).set(TQ).end()
        const outs = op.kind === 'mma' ? op.d : [op.d]
        const dst = ins.op === 'movmatrix' ? [A[0]!] : this.mmaOf(ins).rd
        dst.forEach((r, j) => this.wr(r, outs[j]!.kind, () => { this.laneBase(l); this.slotAccess(outs[j]!.kind, false, outs[j]!.off) }))
        break
      }
      case 'ldmatrix': case 'stmatrix': this.matrixRows(i, l); break
      case 'match': {
        // the member lanes that arrived with the same value (any), or all of them when every one did (all)
        const m = this.tmp('mm', 'i32'), x = this.tmp('mx2', 'i32'), k = this.tmp('mk2', 'i32'), eq = this.tmp('meq', 'i32'), all = this.tmp('mall', 'i32'), v = this.tmp('mv', 'i32')
        this.input(i, 1, l); b.get(Ai).op(Op.i32_and).set(m)
        this.input(i, 0, l); b.set(v)
        b.i32(0).set(eq).i32(1).set(all).get(m).set(x)
        const dn = b.open('block'), lp = b.open('loop')
        b.get(x).op(Op.i32_eqz).brIf(dn)
        b.get(x).op(Op.i32_ctz).set(k)
        this.input(i, 0, k); b.get(v).op(Op.i32_eq)
        b.begin('if').get(eq).i32(1).get(k).op(Op.i32_shl).op(Op.i32_or).set(eq).else().i32(0).set(all).end()
        b.get(x).get(x).i32(1).op(Op.i32_sub).op(Op.i32_and).set(x)
        b.br(lp)
        b.end().end()
        const [dst, p] = split(A[0]!)
        if (c.mode === 'any') b.get(eq).set(q0)
        else { b.get(m).i32(0).get(all).op(Op.select).set(q0); b.get(all).set(q1) }
        this.wr(dst, 'i32', () => b.get(q0))
        if (p) this.wr(p, 'pred', () => b.get(q1))
        break
      }
      case 'elect': {
        const m = this.tmp('em', 'i32')
        this.input(i, 0, l); b.get(Ai).op(Op.i32_and).set(m)
        b.get(m).op(Op.i32_ctz).i32(-1).get(m).op(Op.select).set(q0)
        b.get(q0).get(l).op(Op.i32_eq).set(q1)
        const [dst, p] = split(A[0]!)
        this.wr(dst, 'i32', () => b.get(q0))
        if (p) this.wr(p, 'pred', () => b.get(q1))
        break
      }
      case 'redux': {
        // over the member lanes that arrived, in lane order; computed once per distinct member mask
        const m = this.tmp('rm', 'i32'), x = this.tmp('rx', 'i32'), k = this.tmp('rk', 'i32'), acc = this.tmp('racc', 'i32'), v = this.tmp('rv', 'i32'), first = this.tmp('rf', 'i32')
        const RM = this.cl('RMk', i), RV = this.cl('RVv', i), RS = this.cl('RS', i)
        this.input(i, 1, l); b.get(Ai).op(Op.i32_and).set(m)
        b.get(RS).get(RM).get(m).op(Op.i32_eq).op(Op.i32_and).op(Op.i32_eqz).begin('if')
        b.i32(0).set(acc).i32(1).set(first).get(m).set(x)
        const dn = b.open('block'), lp = b.open('loop')
        b.get(x).op(Op.i32_eqz).brIf(dn)
        b.get(x).op(Op.i32_ctz).set(k)
        this.input(i, 0, k); b.set(v)
        b.get(first).begin('if').get(v).set(acc).i32(0).set(first).else()
        const sg = c.signed
        switch (c.mode) {
          case 'add': b.get(acc).get(v).op(Op.i32_add); break
          case 'min': b.get(acc).get(v).get(acc).get(v).op(sg ? Op.i32_lt_s : Op.i32_lt_u).op(Op.select); break
          case 'max': b.get(acc).get(v).get(acc).get(v).op(sg ? Op.i32_gt_s : Op.i32_gt_u).op(Op.select); break
          case 'and': b.get(acc).get(v).op(Op.i32_and); break
          case 'or': b.get(acc).get(v).op(Op.i32_or); break
          default: b.get(acc).get(v).op(Op.i32_xor)
        }
        b.set(acc).end()
        b.get(x).get(x).i32(1).op(Op.i32_sub).op(Op.i32_and).set(x)
        b.br(lp)
        b.end().end()
        b.get(m).set(RM).get(acc).set(RV).i32(1).set(RS)
        b.end()
        b.get(RV).set(q0)
        this.wr(A[0], 'i32', () => b.get(q0))
        break
      }
    }
    b.end()
  }

  /** ldmatrix/stmatrix's own part for lane `l` (emit-instruction.ts matrixRows): lane 8j + r gave the address
   *  of row r of matrix j; the lane loads (stores) its elements of each matrix, every access checked, in the
   *  JavaScript tier's order. */
  private matrixRows(i: number, l: number): void {
    const b = this.b, L = this.L
    const ins = this.fn.instructions[i]!
    const store = ins.op === 'stmatrix'
    const regs = this.matrixRegs(ins)
    const space = (ins.space ?? 'generic') as Space
    if (!SPACES.includes(space)) return this.fail(`${ins.op} in .${space}`)
    const src = this.tmp('tms', 'i32'), u = this.tmp('tmu', 'i32')
    // the address lane `lane` gave, plus `off` bytes, checked for n bytes
    const at = (lane: () => void, off: () => void, n: number, slot: number) => {
      lane(); b.set(src)
      this.input(i, 0, src)
      off(); b.op(Op.i64_extend_i32_u).op(Op.i64_add).set(L.a!)
      this.checkAddress(space, n, slot)
    }
    const quad = () => b.get(l).i32(3).op(Op.i32_and)
    const row = () => b.get(l).i32(2).op(Op.i32_shr_u)
    regs.forEach((r, j) => {
      if (!ins.flags.trans) {
        // row l>>2 of matrix j, bytes 4(l&3)…
        at(() => { b.i32(8 * j); row(); b.op(Op.i32_add) }, () => { quad(); b.i32(2).op(Op.i32_shl) }, 4, j)
        if (store) { b.get(L.a32!); this.input(i, 1 + j, l); b.mem(Op.i32_store, 2, 0) }
        else this.wr(r, 'i32', () => b.get(L.a32!).mem(Op.i32_load, 2, 0))
        return
      }
      // .trans: element (l>>2) of rows 2(l&3) and 2(l&3)+1
      const lane = (k: number) => () => { b.i32(8 * j + k); quad(); b.i32(1).op(Op.i32_shl).op(Op.i32_add) }
      const off = () => { row(); b.i32(1).op(Op.i32_shl) }
      at(lane(0), off, 2, 2 * j)
      if (store) { this.input(i, 1 + j, l); b.set(u); b.get(L.a32!).get(u).mem(Op.i32_store16, 1, 0) } else b.get(L.a32!).mem(Op.i32_load16_u, 1, 0).set(u)
      at(lane(1), off, 2, 2 * j + 1)
      if (store) b.get(L.a32!).get(u).i32(16).op(Op.i32_shr_u).mem(Op.i32_store16, 1, 0)
      else this.wr(r, 'i32', () => b.get(u).get(L.a32!).mem(Op.i32_load16_u, 1, 0).i32(16).op(Op.i32_shl).op(Op.i32_or))
    })
  }

  /** wmma.load.{a,b,c} / wmma.store.d (emit-instruction.ts wmmaMove): each lane moves its own fragment
   *  elements between registers and the matrix at the address with the given stride (in elements), every
   *  element access checked in the JavaScript tier's order. The fragment's element positions are bit-affine
   *  in the lane (tensor-core.ts laneAffine): the lane's part of the offset is computed once, each element
   *  adds a constant row and column. */
  private wmmaMove(ins: Instruction): void {
    const b = this.b, L = this.L, A = ins.operands
    const opcode = [ins.op, ...ins.qualifiers].join('.')
    const w = wmmaOperands(ins)
    if (typeof w === 'string') return this.fail(w)
    const { f, t, per, esz, regs, store, rowMajor } = w
    const aff = laneAffine(f)
    if (!aff) return this.fail(`${opcode}: a fragment layout not affine in the lane`)
    const space = (ins.space ?? 'generic') as Space
    if (!SPACES.includes(space)) return this.fail(`${opcode} in .${space}`)
    // the base address and the stride, read before any register is written (a destination may be either)
    const base = this.tmp('wmb', 'i64'), se = this.tmp('wms', 'i64'), lr = this.tmp('wmr', 'i32'), lc = this.tmp('wmc', 'i32')
    this.addrValue(store ? A[0] : A[1]); b.set(base)
    if (A[2]) { this.rd(A[2], 'u32'); b.op(Op.i64_extend_i32_u) } else b.i64(BigInt(rowMajor ? f.cols : f.rows))
    b.set(se)
    // the lane's row and column parts: Σ coefficient · bit j of the lane
    const lanePart = (coef: number[], to: number) => {
      b.i32(0)
      coef.forEach((c, j) => { if (c) b.get(L.t!).i32(j).op(Op.i32_shr_u).i32(1).op(Op.i32_and).i32(c).op(Op.i32_mul).op(Op.i32_add) })
      b.set(to)
    }
    lanePart(aff.rowBit, lr); lanePart(aff.colBit, lc)
    // base += (major·stride + minor)·esz for the lane's parts; then se = stride·esz
    const [maj, min] = rowMajor ? [lr, lc] : [lc, lr]
    b.get(base).get(maj).op(Op.i64_extend_i32_u).get(se).op(Op.i64_mul).get(min).op(Op.i64_extend_i32_u).op(Op.i64_add).i64(BigInt(esz)).op(Op.i64_mul).op(Op.i64_add).set(base)
    b.get(se).i64(BigInt(esz)).op(Op.i64_mul).set(se)
    const elem = (e: number) => {
      const [m0, n0] = rowMajor ? [aff.row0[e]!, aff.col0[e]!] : [aff.col0[e]!, aff.row0[e]!]
      b.get(base)
      if (m0) b.get(se).i64(BigInt(m0)).op(Op.i64_mul).op(Op.i64_add)
      if (n0) b.i64(BigInt(n0 * esz)).op(Op.i64_add)
      b.set(L.a!)
      this.checkAddress(space, esz, e)
    }
    const mem = esz === 1 ? 'u8' : esz === 2 ? 'u16' : t === 'f64' ? 'f64' : t === 'f32' || t === 'tf32' ? 'f32' : 's32'
    const kind = fragKind(t)
    const u = this.tmp('wmu', 'i32')
    regs.forEach((r, j) => {
      if (per === 1) {
        elem(j)
        if (store) { b.get(L.a32!); this.rd(r, kind); this.storeAt(mem, 0) } else this.wr(r, kind, () => this.loadAt(mem, 0))
        return
      }
      const bits = esz * 8
      if (store) {
        this.rd(r, 'i32'); b.set(u)
        for (let s = 0; s < per; s++) {
          elem(j * per + s)
          b.get(L.a32!).get(u)
          if (s) b.i32(bits * s).op(Op.i32_shr_u)
          this.storeAt(mem, 0)
        }
        return
      }
      const parts = Array.from({ length: per }, (_, s) => this.tmp(`wmp${s}`, 'i32'))
      for (let s = 0; s < per; s++) { elem(j * per + s); this.loadAt(mem, 0); b.set(parts[s]!) }
      this.wr(r, 'i32', () => {
        b.get(parts[0]!)
        for (let s = 1; s < per; s++) b.get(parts[s]!).i32(bits * s).op(Op.i32_shl).op(Op.i32_or)
      })
    })
  }

  private threads(it: ThreadLoop): void {
    const { b, L } = this
    const plan = this.plan!
    if (it.level !== 'block') return this.lanes(it)
    if (it.scatter !== undefined && collectiveOf(this.fn.instructions[it.scatter]!)?.kind !== 'bar') throw new WasmRefusal('a warp collective\'s results in a block-level loop')
    b.i32(0).set(L.X!)
    if (it.once) {
      this.rLevel = b.open('block')
      this.threadLevel = this.rLevel
      this.nodes(it.nodes)
      b.end()
      this.dispatch(it)
      return
    }
    if (it.gather !== undefined) this.gatherReset(it.gather)
    const saved = it.restores.map((r) => { const q = b.local(classType(this.classes[r]!)); b.get(this.regs[r]!).set(q); return [r, q] as const })
    // the loop's arithmetic that gives every thread the same value, once, before it
    this.preComputed.clear(); this.preComputedRegs.clear()
    for (const i of this.uniformPrefix(it)) {
      this.instruction(this.fn.instructions[i]!)
      this.preComputed.add(i)
      for (const r of definedRegisters(this.fn.instructions[i]!)) {
        this.preComputedRegs.add(r)
        let off = this.preSlot.get(r)
        if (off === undefined) { off = this.nextSlot(); this.preSlot.set(r, off) }
        b.get(L.LB0!).get(this.regs[r]!).mem(Op.i32_store, 2, off)
      }
    }
    // tz, ty, tx nested; only the tx interval [LO, HI) that does more than branch past the loop's code
    const LO = this.tmp('LO', 'i32'), HI = this.tmp('HI', 'i32')
    // (a bound the loop computes in its uniform prefix, once before it, as every thread would: the halving
    // tree's `half = n >> 1` then `if (t < half)`)
    const range = this.txRange(it, this.preComputed)
    if (range) { range.lo(); b.set(LO); range.hi(); b.set(HI) } else { b.i32(0).set(LO); b.get(L.NTX!).set(HI) }
    this.hull = this.helpers.simd && this.vectorItem(it) ? this.hullTest(it, LO, HI, range?.branch) : undefined
    b.i32(0).set(L.tz!)
    const zDone = b.open('block'), zLoop = b.open('loop')
    b.get(L.tz!).get(L.NTZ!).op(Op.i32_ge_u).brIf(zDone)
    b.i32(0).set(L.ty!)
    const yDone = b.open('block'), yLoop = b.open('loop')
    b.get(L.ty!).get(L.NTY!).op(Op.i32_ge_u).brIf(yDone)
    b.get(LO).set(L.tx!)
    const done = b.open('block')
    const lp = b.open('loop')
    b.get(L.tx!).get(HI).op(Op.i32_ge_s).brIf(done)
    // (no thread of [LO, HI) takes the branch past the loop's code: not written)
    const outerElided = this.elided
    if (range) this.elided = range.branch
    if (this.helpers.simd && this.vectorItem(it)) this.vectorTurnOrPrepassed(it, HI, lp, plan.threadsEnd)
    this.hull = undefined
    this.setThreadIndex()
    this.turn(it, saved, plan.threadsEnd)
    this.elided = outerElided
    b.get(L.tx!).i32(1).op(Op.i32_add).set(L.tx!)
    b.br(lp)
    b.end().end()
    b.get(L.ty!).i32(1).op(Op.i32_add).set(L.ty!)
    b.br(yLoop)
    b.end().end()
    b.get(L.tz!).i32(1).op(Op.i32_add).set(L.tz!)
    b.br(zLoop)
    b.end().end()
    this.preComputed.clear(); this.preComputedRegs.clear()
    this.dispatch(it)
  }

  /** The shared accesses at the top level of block-level thread loop `it` or in the `if` its interval
   *  [LO, HI) leaves the branch of (`elided`; every thread of the interval that runs its code makes them) whose 4-byte window offset is U + c·tid.x with U the same for the whole loop
   *  (loopForm: the halving tree's `s[t + half]`, the scan's `buf[pin·nt + t]`, whose terms the loop's block
   *  values give): each is tested once, before the loop, at the first and the last thread of the interval —
   *  both inside the window and 4-byte aligned, with c a multiple of 4, put every thread's offset inside it
   *  (the 64-bit ends are congruent modulo 2^32 to the kernel's 32-bit offsets; two ends inside [0, 2^31)
   *  leave the values between them there, unwrapped). The loop's 4-lane turns run only where every such
   *  test held, and make those accesses without tests of their own; else the loop runs one thread at a time,
   *  whose tests fault as they would. Returns nothing where no access qualifies. */
  private hullTest(it: ThreadLoop, LO: number, HI: number, elided: number | undefined): { flag: number; sites: ReadonlySet<number> } | undefined {
    if (it.level !== 'block' || it.once) return undefined
    const ins = this.fn.instructions
    // the sites by their form, offset modulo 4 and the threads that reach them (the loop's interval, or an
    // `if`'s part of it): each group tested at its lowest and its highest offset
    const groups = new Map<string, { form: LoopForm; lo: number; hi: number; sites: number[]; part?: TxPart }>()
    let count = 0
    const add = (ns: readonly StructNode[], part: TxPart | undefined) => {
      for (const n of ns) {
        if (n.kind !== 'instr' || this.preComputed.has(n.index) || count >= MAX_HULL_SITES) continue
        const x = ins[n.index]!
        if ((x.op !== 'ld' && x.op !== 'st') || x.space !== 'shared' || x.guard || (x.vector ?? 1) !== 1 || typeSize(x.type ?? '') !== 4) continue
        const o = x.operands[x.op === 'ld' ? 1 : 0]
        if (o?.kind !== 'addr' || o.base?.kind !== 'reg' || this.classes[o.base.id] !== 'i32') continue
        if (this.unchecked && this.hoistedShared(n.index)) continue
        const form = this.loopForm(o.base.id, n.index, it)
        if (!form || form.c % 4 !== 0 || Math.abs(form.c) > 2 ** 20) continue
        const key = `${JSON.stringify(form.u)}:${form.c}:${o.offset & 3}:${part?.id ?? ''}`
        const g = groups.get(key)
        if (g) { g.lo = Math.min(g.lo, o.offset); g.hi = Math.max(g.hi, o.offset); g.sites.push(n.index) } else groups.set(key, { form, lo: o.offset, hi: o.offset, sites: [n.index], ...(part ? { part } : {}) })
        count++
      }
    }
    // the loop's top level, and the body of the `if` whose branch past it the interval [LO, HI) leaves out
    // (txRange: every thread of the interval runs it); the body of another `if` at that level whose guard
    // compares tid.x with a value the same for the whole loop, over the part of the interval that runs it
    const top = it.nodes.flatMap((n) => (n.kind === 'if' && elided !== undefined && n.branch === elided ? n.body : [n]))
    add(top, undefined)
    for (const n of top) {
      if (n.kind !== 'if' || n.branch === undefined) continue
      const part = this.ifPart(n, it)
      if (part) add(n.body, part)
    }
    if (!groups.size) return undefined
    const b = this.b
    const flag = this.tmp('hull', 'i32'), u = this.tmp('hullu', 'i64'), lo = this.tmp('hullo', 'i64'), hi = this.tmp('hulhi', 'i64'), lim = this.tmp('hullim', 'i64')
    // (a loop of fewer threads runs one at a time rather than pay for the tests)
    b.i32(0).set(flag)
    b.get(HI).get(LO).op(Op.i32_sub).i32(MIN_HULL_THREADS).op(Op.i32_ge_s)
    b.begin('if')
    b.get(this.windowLimit('shared', 4, 3)).op(Op.i64_extend_i32_u).set(lim)
    b.get(LO).op(Op.i64_extend_i32_s).set(lo)
    b.get(HI).i32(1).op(Op.i32_sub).op(Op.i64_extend_i32_s).set(hi)
    // each `if`'s part [plo, phi] of the interval, once
    const parts = new Map<number, { lo: number; hi: number; empty: number }>()
    for (const g of groups.values()) {
      const part = g.part
      if (!part || parts.has(part.id)) continue
      const p = { lo: b.local('i64'), hi: b.local('i64'), empty: b.local('i32') }
      // max(its first tx, LO), min(its last tx, HI − 1), and whether that is empty
      part.lo(); b.set(p.lo)
      b.get(p.lo).get(lo).get(p.lo).get(lo).op(Op.i64_gt_s).op(Op.select).set(p.lo)
      part.hi(); b.i64(1n).op(Op.i64_sub).set(p.hi)
      b.get(p.hi).get(hi).get(p.hi).get(hi).op(Op.i64_lt_s).op(Op.select).set(p.hi)
      b.get(p.hi).get(p.lo).op(Op.i64_lt_s).set(p.empty)
      parts.set(part.id, p)
    }
    let first = true
    for (const g of groups.values()) {
      const c = g.form.c
      const p = g.part ? parts.get(g.part.id)! : undefined
      const [tLo, tHi] = p ? [p.lo, p.hi] : [lo, hi]
      this.pushLoopU(g.form.u)
      b.set(u)
      // the lowest offset at the first thread and the highest at the last (c ≥ 0; the other way round else):
      // each 4-byte aligned, at least 0 and at most the window's size less 4 (rotated right by 2 as a 64-bit
      // value, an unaligned or negative offset becomes larger than any limit); an `if` no thread of the
      // interval runs tests nothing
      for (const [k, [off, t]] of ([[g.lo, c >= 0 ? tLo : tHi], [g.hi, c >= 0 ? tHi : tLo]] as const).entries()) {
        b.get(u)
        if (off) b.i64(BigInt(off)).op(Op.i64_add)
        if (c) b.get(t).i64(BigInt(c)).op(Op.i64_mul).op(Op.i64_add)
        b.i64(2n).op(Op.i64_rotr).get(lim).op(Op.i64_lt_u)
        if (p && k === 1) b.op(Op.i32_and).get(p.empty).op(Op.i32_or)
        else if (p) continue
        if (!first) b.op(Op.i32_and)
        first = false
      }
    }
    b.set(flag)
    b.end()
    return { flag, sites: new Set([...groups.values()].flatMap((g) => g.sites)) }
  }

  /** The threads of thread loop `it` that run `if` region `n`'s body, where its branch is `@p bra` (or
   *  `@!p`) with p's one definition `setp.cmp p, %tid.x, y` (either way round) and y an immediate or a value
   *  the same for the whole loop (a block value it does not write, its uniform prefix): code that pushes the
   *  first and code that pushes one past the last such tx, as i64 (not clamped). */
  private ifPart(n: StructRegion, it: ThreadLoop): TxPart | undefined {
    const ins = this.fn.instructions
    const br = ins[n.branch!]!
    if (br.op !== 'bra' || !br.guard) return undefined
    const tc = this.txCompare(br.guard.reg, n.branch!)
    if (!tc || tc.def < it.start) return undefined
    const { cmp, y, signed } = tc
    const b = this.b
    let yv: () => void
    if (y?.kind === 'imm' && y.imm.kind === 'int') {
      const Y = signed ? BigInt.asIntN(32, y.imm.value) : BigInt.asUintN(32, y.imm.value)
      yv = () => { b.i64(Y) }
    } else if (y?.kind === 'reg' && this.classes[y.id] === 'i32' && (this.preComputedRegs.has(y.id) || (this.plan!.perBlock.includes(y.id) && !(this.defsOf.get(y.id) ?? []).some((d) => d >= it.start && d < it.end)))) {
      const r = y.id
      yv = () => { b.get(this.regs[r]!).op(signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u) }
    } else return undefined
    const ends = stayEnds(cmp, br.guard.negate)
    if (!ends) return undefined
    return { id: n.id, lo: () => this.txEnd(ends[0], yv), hi: () => this.txEnd(ends[1], yv) }
  }

  /** Register r as instruction `at` of thread loop `it` reads it, as U + c·tid.x with U the same for every
   *  thread of the loop: block values the loop does not write (and its uniform prefix's), tid.x, immediates,
   *  shared variables, block-invariant affine forms and rematerialized registers, through 32-bit mov/add/sub/shl by an
   *  immediate/mul.lo and mad.lo where a factor is block-uniform and one is an immediate or both are uniform;
   *  a definition in the loop counts where it is the loop's only one and comes before `at` in its basic block. */
  private loopForm(r: number, at: number, it: ThreadLoop, depth = 0): LoopForm | undefined {
    if (depth > 12 || this.classes[r] !== 'i32') return undefined
    if (this.preComputedRegs.has(r)) return { u: { kind: 'reg', r }, c: 0 }
    const inLoop = (this.defsOf.get(r) ?? []).filter((d) => d >= it.start && d < it.end && !this.preComputed.has(d))
    if (!inLoop.length) {
      const tid = this.plan!.recomputed.get(r)
      if (tid) return tid === '%tid.x' ? { u: { kind: 'const', value: 0 }, c: 1 } : undefined
      if (this.plan!.perBlock.includes(r)) return { u: { kind: 'reg', r }, c: 0 }
      const f = this.affine.formAt(r, at)
      if (f && !f.iv && Number.isInteger(f.c)) return { u: { kind: 'inv', e: f.inv }, c: f.c }
      const t = this.rematOf(r)
      return t ? this.rematForm(t) : undefined
    }
    const d = inLoop[0]!
    if (inLoop.length !== 1 || d >= at || this.cfg.blockOf[d] !== this.cfg.blockOf[at]) return undefined
    const x = this.fn.instructions[d]!
    if (x.guard || x.flags.cc || x.flags.sat || !['u32', 's32', 'b32'].includes(x.type ?? '') || x.operands[0]?.kind !== 'reg') return undefined
    const leaf = (o: IrOperand | undefined): LoopForm | undefined => {
      if (o?.kind === 'imm' && o.imm.kind === 'int') return { u: { kind: 'const', value: Number(BigInt.asIntN(32, o.imm.value)) }, c: 0 }
      if (o?.kind === 'sym' && o.target !== 'function' && this.layout.shared.has(o.name) && this.symAddr(o.name) !== undefined) return { u: { kind: 'inv', e: { kind: 'symbol', name: o.name } }, c: 0 }
      if (o?.kind === 'special') {
        if (o.name === '%tid.x') return { u: { kind: 'const', value: 0 }, c: 1 }
        return /^%(ntid|ctaid|nctaid)\.[xyz]$/.test(o.name) ? { u: { kind: 'inv', e: { kind: 'special', name: o.name } }, c: 0 } : undefined
      }
      return o?.kind === 'reg' ? this.loopForm(o.id, d, it, depth + 1) : undefined
    }
    const A = x.operands
    if (x.op === 'mov') return leaf(A[1])
    switch (x.op) {
      case 'add': return A.length === 3 ? formSum(leaf(A[1]), leaf(A[2]), false) : undefined
      case 'sub': return A.length === 3 ? formSum(leaf(A[1]), leaf(A[2]), true) : undefined
      case 'shl': {
        const s = A[2]
        if (A.length !== 3 || s?.kind !== 'imm' || s.imm.kind !== 'int' || s.imm.value < 0n || s.imm.value >= 32n) return undefined
        return formProduct(leaf(A[1]), { u: { kind: 'const', value: 2 ** Number(s.imm.value) }, c: 0 })
      }
      case 'mul': return x.part === 'lo' && A.length === 3 ? formProduct(leaf(A[1]), leaf(A[2])) : undefined
      case 'mad': return x.part === 'lo' && A.length === 4 ? formSum(formProduct(leaf(A[1]), leaf(A[2])), leaf(A[3]), false) : undefined
      default: return undefined
    }
  }

  /** A rematerialized register (rematOf) as a LoopForm, where its tree is affine in tid.x. */
  private rematForm(t: RematNode): LoopForm | undefined {
    switch (t.kind) {
      case 'imm': return { u: { kind: 'const', value: t.value }, c: 0 }
      case 'tid': return t.name === '%tid.x' ? { u: { kind: 'const', value: 0 }, c: 1 } : undefined
      case 'affine': return Number.isInteger(t.c) ? { u: { kind: 'inv', e: t.inv }, c: t.c } : undefined
      case 'op': {
        const a = this.rematForm(t.a), b = this.rematForm(t.b)
        if (!a || !b) return undefined
        switch (t.op) {
          case 'add': return formSum(a, b, false)
          case 'sub': return formSum(a, b, true)
          case 'shl': {
            // (rematOp's shifts are by an immediate below 32)
            const s = b.c === 0 && b.u.kind === 'const' ? b.u.value : undefined
            return s !== undefined && s >= 0 && s < 32 ? formProduct(a, { u: { kind: 'const', value: 2 ** s }, c: 0 }) : undefined
          }
          case 'mul': return formProduct(a, b)
          default: return undefined
        }
      }
    }
  }

  /** Pushes U (LoopU) as an i64. */
  private pushLoopU(u: LoopU): void {
    const b = this.b
    switch (u.kind) {
      case 'const': b.i64(BigInt(u.value)); return
      case 'inv': this.inv(u.e); return
      case 'reg': b.get(this.regs[u.r]!).op(Op.i64_extend_i32_s); return
      default:
        this.pushLoopU(u.a); this.pushLoopU(u.b)
        b.op(u.kind === 'add' ? Op.i64_add : u.kind === 'sub' ? Op.i64_sub : Op.i64_mul)
    }
  }

  /** The instructions of block-level loop `it` that every thread runs once, to the same value (32-bit
   *  integer arithmetic at the loop's top level on immediates, %ntid/%ctaid/%nctaid, block values the loop
   *  does not write, and earlier such results; each defining a register the loop defines only there and
   *  reads only after it, that is a block value or lives only in the loop): computed once before the loop
   *  instead of once per thread (the scan's `pin * nt`, issue 24). A loop some threads may skip (txRange,
   *  ended threads) keeps the block values it defines in its code, as a thread that runs it leaves them;
   *  where no thread ends, every thread runs a block-level loop (warp-level code elsewhere or not), and a
   *  prefix before the branch a narrowed loop's interval reads (txRange's computedBefore) is what every
   *  thread computes before it. */
  private uniformPrefix(it: ThreadLoop): number[] {
    const plan = this.plan!, ins = this.fn.instructions
    if (it.level !== 'block' || it.once) return []
    const perThread = new Set(plan.perThread), perBlock = new Set(plan.perBlock)
    const defs = new Map<number, number>(), firstUse = new Map<number, number>()
    for (let i = it.start; i < it.end; i++) {
      for (const r of usedRegisters(ins[i]!)) if (!firstUse.has(r)) firstUse.set(r, i)
      for (const r of definedRegisters(ins[i]!)) defs.set(r, (defs.get(r) ?? 0) + 1)
    }
    // a register read after the loop whose value a thread that does not run the loop would keep
    const partial = plan.threadsEnd || this.txRange(it) !== undefined
    const PURE32 = new Set(['mov', 'add', 'sub', 'mul', 'mad', 'shl', 'shr', 'and', 'or', 'xor', 'not'])
    const SAME = /^%(ntid|ctaid|nctaid)\.[xyz]$/
    const uniform = new Set<number>()
    const out: number[] = []
    for (const n of it.nodes) {
      if (n.kind !== 'instr') continue
      const x = ins[n.index]!, d = definedRegisters(x), t = x.type ?? ''
      // a kernel parameter's 32 bits: the same for every thread of the launch (not a call sequence's .param)
      const a = x.operands[1]
      const param = x.op === 'ld' && x.space === 'param' && this.fn.kind === 'entry' && x.operands[0]?.kind === 'reg' && a?.kind === 'addr'
        && a.base?.kind === 'sym' && this.fn.params.some((v) => v.name === (a.base as { name: string }).name)
      if (x.guard || d.length !== 1 || !(PURE32.has(x.op) || param) || !['s32', 'u32', 'b32'].includes(t) || x.flags.cc || x.flags.sat || ((x.op === 'mul' || x.op === 'mad') && x.part !== 'lo')) continue
      const r = d[0]!
      if (this.classes[r] !== 'i32' || defs.get(r) !== 1 || (firstUse.get(r) ?? n.index) < n.index || perThread.has(r) || plan.recomputed.has(r) || it.restores.includes(r) || it.loads.includes(r) || it.stores.includes(r)) continue
      if (perBlock.has(r) && partial) continue
      if (!perBlock.has(r) && (this.usesOf.get(r) ?? []).some((u) => u < it.start || u >= it.end)) continue
      const same = param || x.operands.slice(1).every((o) => o.kind === 'imm' || (o.kind === 'special' && SAME.test(o.name))
        || (o.kind === 'reg' && (uniform.has(o.id) || (perBlock.has(o.id) && !defs.has(o.id)))))
      if (!same) continue
      uniform.add(r)
      out.push(n.index)
    }
    return out
  }

  // --- SIMD across threads in thread loops: a block-level loop's turn, 4 threads a step ---

  /** Whether block-level loop `it` may run 4 consecutive threads of a row as one 4-lane turn: per-thread
   *  code (not once per block), no collective's values in or out, no block-wide decision or return taken
   *  inside it, no atomics or calls (whose order between threads shows). Whether each instruction has a
   *  4-lane form is vectorTurn's to find out. The lanes run an instruction for all
   *  four before the next, as a converged warp does: accesses where lanes of a warp may talk through memory
   *  are lockstep points, which the plan runs in loops of their own (@kernelpack/ptx lockstep.ts), so in
   *  such a loop no lane reads what another writes and the order gives the same bytes. */
  private vectorItem(it: ThreadLoop): boolean {
    if (it.once || it.scatter !== undefined || it.restores.length) return false
    // a warp's lane loop that leaves a shuffle's inputs (layernorm's strided partial sums before its butterfly)
    if (it.gather !== undefined && (it.level !== 'warp' || collectiveOf(this.fn.instructions[it.gather]!)?.kind !== 'shfl' || this.fn.instructions[it.gather]!.guard)) return false
    // in a warp, only a lane loop with a loop in it: a few instructions a lane cost less as lane turns than the
    // 4-lane turn's set-up (the warp-shuffle reduction's first loop measured 10 % slower as 4-lane turns)
    if (it.level === 'warp' && !this.hasLoop(it.nodes)) return false
    for (let i = it.start; i < it.end; i++) {
      const x = this.fn.instructions[i]!
      // (the kernel's closing `ret`, when this loop ends the kernel: the turn ends there, and no loop after it
      // asks whether the thread ended)
      const closing = x.op === 'ret' && !x.guard && i === it.end - 1 && it.end === this.fn.instructions.length && it.nodes.some((n) => n.kind === 'instr' && n.index === i)
      if (this.plan!.departures.has(i) || (['ret', 'exit', 'atom', 'red', 'call', 'trap', 'brkpt'].includes(x.op) && !closing) || collectiveOf(x)) return false
      // (registers of other widths than 32 bits: one local per lane, vwideLocals)
    }
    return true
  }

  /** An `if` after the turn's first store (lanes that part there cannot start again one thread at a time):
   *  the lanes that run its body run it as four lanes where all do, else each alone, in lane order, as its
   *  thread's scalar code (its registers taken from and put back into its lane). Lanes in lane order are
   *  threads in thread order, and no lane test may follow (vleave): a fault in such a body is the first
   *  one the threads would meet one after another. */
  /** A loop with stores in a 4-lane turn, before the turn's first store: its tests would come after a store
   *  from the second trip on, where the group can no longer go back to one thread at a time. When the loop's
   *  control and its global accesses' addresses are integer arithmetic within it on values it starts with
   *  (and its shared accesses need no test of their own), a pre-pass runs the loop with that arithmetic,
   *  the branches and the accesses' lane tests only (no load, no store: nothing another lane or thread can
   *  see), from the same starting values: a lane that would fail a test, or lanes that part at a branch, fail
   *  the group there, before anything is stored, and the four threads take their scalar turns (which fault as
   *  one thread would). Then the loop runs for real on the same values, without those tests. Writes nothing
   *  where it does not apply. */
  private vloopPrecheck(n: StructRegion): void {
    const ins = this.fn.instructions
    // the loop's instructions, from its nodes (a re-laid-out loop's positions are not instruction indices)
    const { at, jumps } = this.regionInstructions(n)
    if (jumps) return
    const accesses: number[] = [], branches: number[] = []
    const INT = /^[sub](8|16|32|64)$/
    const PURE = new Set(['mov', 'add', 'sub', 'mul', 'mad', 'div', 'rem', 'shl', 'shr', 'and', 'or', 'xor', 'not', 'cvt', 'cvta', 'setp', 'selp', 'min', 'max'])
    // (a kernel parameter's load too: the whole turn's pre-pass, vturnPrecheck, starts before the kernel reads them)
    const pure = (x: Instruction) => (x.op === 'ld' && x.space === 'param' && !x.guard && this.paramLocal(x) !== undefined) || (PURE.has(x.op) && !x.flags.cc && !x.flags.sat && x.types.every((t) => INT.test(t) || t === 'pred')
      && x.operands.every((o) => o.kind !== 'special' || /^%(tid|ntid|ctaid|nctaid)\.[xyz]$/.test(o.name)))
    for (const i of at) {
      const x = ins[i]!
      if (x.op === 'ld' || x.op === 'st') {
        if (x.space === 'global' && !x.guard && (x.vector ?? 1) === 1) { if (!(this.unchecked && this.testedStride(i) !== undefined)) accesses.push(i) } else if (x.space === 'shared') { if (!this.sharedCovered(i) && !this.vPre.has(i)) return } else if (!(x.space === 'param' && x.op === 'ld' && this.paramLocal(x) !== undefined)) return
      } else if (x.op === 'bra') { if (x.guard) branches.push(i) } else if (!pure(x) && (['ret', 'exit', 'call', 'atom', 'red', 'trap', 'brkpt', 'bar', 'barrier', 'membar', 'fence', 'cp'].includes(x.op) || collectiveOf(x))) return
    }
    if (!accesses.length) return
    const defs = new Map<number, number[]>()
    for (const i of at) for (const r of definedRegisters(ins[i]!)) (defs.get(r) ?? defs.set(r, []).get(r)!).push(i)
    const slice = new Set<number>()
    const work: number[] = []
    for (const i of accesses) {
      const x = ins[i]!, o = x.operands[x.op === 'ld' ? 1 : 0]
      if (o?.kind !== 'addr' || o.base?.kind !== 'reg') return
      work.push(o.base.id)
    }
    for (const i of branches) work.push(ins[i]!.guard!.reg)
    while (work.length) {
      for (const d of defs.get(work.pop()!) ?? []) {
        if (slice.has(d)) continue
        if (!pure(ins[d]!)) return
        slice.add(d)
        work.push(...usedRegisters(ins[d]!))
      }
    }
    const b = this.b
    // every access covered by the block's loop test, the loop's one branch its latch: the four lanes' trip
    // counts from the bound instead of a pre-pass
    if (branches.length === 1 && accesses.every((i) => this.vCovered.has(i)) && this.tripsAgree(branches[0]!)) {
      for (const i of [...accesses, ...branches, ...slice]) this.vPreLoop.add(i)
      return
    }
    const written = [...new Set([...slice].flatMap((i) => definedRegisters(ins[i]!)))]
    const mark = b.mark()
    const strides = new Map(this.vstride), wideStrides = new Map(this.vwstride), wideLanes = new Set(this.vwLanes), laneCount = this.vLaneCount
    // the values the loop starts from, put back after the pre-pass
    const saved: Array<[number, number]> = []
    const save = () => {
      for (const r of written) {
        if (this.isWide(r)) { if (!this.simd!.addressOnly.has(r)) for (const l of this.vwideLocals(r)) { const q = b.local(classType(this.classes[r]!)); b.get(l).set(q); saved.push([l, q]) } } else if (this.vregs.has(r)) { const l = this.vlocal(r), q = b.local('v128'); b.get(l).set(q); saved.push([l, q]) }
      }
    }
    try {
      for (const i of at) this.vPreLoop.delete(i)
      save()
      this.vSlice = slice
      // (an access the block's loopTest covered needs none: its address arithmetic stays in the slice for
      // the branches' sake only, and is dead code where nothing else reads it)
      this.vSliceTests = new Set(accesses.filter((i) => !this.vCovered.has(i)))
      // a branch out of the loop (a `break` to an enclosing block) ends the pre-pass, not the code around it:
      // every enclosing level is the pre-pass's own block while it is written
      const outer = new Map(this.level)
      const passEnd = b.open('block')
      for (const k of outer.keys()) this.level.set(k, passEnd)
      const lv = b.open(n.kind === 'loop' ? 'loop' : 'block')
      this.level.set(n.id, lv)
      try {
        this.nodes(n.body)
      } finally {
        this.level.clear()
        for (const [k, v] of outer) this.level.set(k, v)
      }
      b.end().end()
      for (const [l, q] of saved) b.get(q).set(l)
      for (const i of [...accesses, ...branches, ...slice]) this.vPreLoop.add(i)
    } catch (e) {
      if (!(e instanceof NotVectorizable) && !(e instanceof WasmRefusal)) throw e
      b.rewind(mark)
    } finally {
      this.vSlice = undefined
      this.vSliceTests = new Set()
      this.vstride.clear()
      for (const [k, v] of strides) this.vstride.set(k, v)
      this.vwstride = wideStrides
      this.vwLanes.clear()
      for (const r of wideLanes) this.vwLanes.add(r)
      this.vLaneCount = laneCount
    }
  }

  /** A turn that stores before a branch its lanes may part at — nvcc's grid-stride loop unrolled by 4: a
   *  remainder loop that stores, then a branch past the unrolled loop, whose latch compares each lane's own
   *  index with the bound — cannot send its group back to one thread at a time once it has stored. Where the
   *  turn's control and addresses are integer arithmetic (vloopPrecheck's rule), a pre-pass of the whole turn
   *  (its closing return left out) runs first, before anything is stored: the branches, each tested for lanes
   *  that part (the group then takes its scalar turns), and the accesses' lane tests; the turn then runs on the
   *  same values without them. Only in a second try at the turn (vectorTurnOrPrepassed); writes nothing where
   *  the rule fails. */
  private vturnPrecheck(it: ThreadLoop): void {
    const ins = this.fn.instructions
    if (!this.vTurnPre) return
    const closing = (n: StructNode) => n.kind === 'instr' && n === it.nodes[it.nodes.length - 1] && ins[n.index]!.op === 'ret' && !ins[n.index]!.guard && n.index === ins.length - 1
    const body = it.nodes.filter((n) => !closing(n))
    this.vloopPrecheck({ kind: 'block', id: -1, label: '', start: it.start, end: it.end, body })
  }

  /** At a loop's entry in a 4-lane turn, where `latch` (a guarded branch) is the back edge of a loop with a
   *  trip bound that the block's loop test bounded (a covered site steps with its counter: the step positive,
   *  the counter unwrapped up to the bound) and the counter's lanes are `v0 + j·s` (s ≥ 0 known): leaves the
   *  turn unless the four lanes run the same number of iterations, max(1, ⌈(bound − v)/step⌉) for v0 and
   *  v0 + 3s (the count never grows with v), and returns true; else writes nothing and returns false. */
  private tripsAgree(latch: number): boolean {
    const ins = this.fn.instructions
    const li = this.cfg.loops.findIndex((l) => l.latches.length === 1 && this.cfg.blocks[l.latches[0]!]!.end - 1 === latch)
    const t = li >= 0 ? this.loopAffine.trips.get(li) : undefined
    if (!t || ![...this.loopSites.values()].some((x) => x.iv.loop === li && this.vCovered.has(x.index))) return false
    const g = ins[latch]!.guard!
    const sp = (this.defsOf.get(g.reg) ?? []).map((d) => ins[d]!)
    const counter = sp.length === 1 ? sp[0]!.operands[1] : undefined
    if (counter?.kind !== 'reg' || this.isWide(counter.id) || !this.vregs.has(counter.id)) return false
    const s = this.vstride.get(counter.id)
    if (s === undefined || s < 0) return false
    const { b } = this
    // (the bound and step recomputed in each turn, not read from the block's loop test: locals live across
    // the whole kernel ran layernorm about 6 % slower in three interleaved runs)
    const v = this.tmp('tav', 'i64'), bound = this.tmp('tab', 'i64'), step = this.tmp('tas', 'i64')
    this.scalar(t.bound); b.op(Op.i64_extend_i32_s).set(bound)
    this.inv(t.step); b.set(step)
    b.get(this.vlocal(counter.id)).simdLane(SimdOp.i32x4_extract_lane, 0).op(Op.i64_extend_i32_s).set(v)
    // the trip count of a lane at v: (bound − v ≤ 0) ? 1 : (bound − v + step − 1) / step
    const count = (plus: number) => {
      const d = this.tmp('tad', 'i64')
      b.get(bound).get(v).op(Op.i64_sub).i64(BigInt(-plus)).op(Op.i64_add).set(d)
      b.get(d).get(step).op(Op.i64_add).i64(1n).op(Op.i64_sub).get(step).op(Op.i64_div_s)
      b.i64(1n).get(d).i64(0n).op(Op.i64_gt_s).op(Op.select)
    }
    count(0); count(3 * s)
    b.op(Op.i64_ne)
    this.vleave()
    return true
  }

  /** The instructions of region `n`, from its nodes (a re-laid-out region's positions are not instruction
   *  indices), and whether it holds a jump. */
  private regionInstructions(n: StructRegion): { at: number[]; jumps: boolean } {
    const at: number[] = []
    let jumps = false
    const walk = (ns: readonly StructNode[]) => { for (const x of ns) { if (x.kind === 'instr') at.push(x.index); else if (x.kind === 'jump') jumps = true; else walk(x.body) } }
    walk(n.body)
    return { at, jumps }
  }

  /** Whether the nodes hold a loop. */
  private hasLoop(ns: readonly StructNode[]): boolean {
    return ns.some((n) => n.kind !== 'instr' && n.kind !== 'jump' && (n.kind === 'loop' || this.hasLoop(n.body)))
  }

  /** Whether region `id` is `n` or lies inside it. */
  private inside(id: number, n: StructRegion): boolean {
    const walk = (ns: readonly StructNode[]): boolean => ns.some((x) => x.kind !== 'instr' && x.kind !== 'jump' && (x.id === id || walk(x.body)))
    return walk(n.body)
  }

  private vscalarIf(n: StructRegion): void {
    // (each lane's scalar code reads its own lane's locals)
    for (const r of [...this.vwstride.keys()]) this.vmaterialize(r)
    const { b, L } = this
    const ins = this.fn.instructions
    const br = ins[n.branch!]!
    if (!br.guard) return this.vfail('an if without a guarded branch')
    // a lane's scalar body must end at the body's end: a branch from it to an enclosing region (a loop's
    // continue or break, a return) would leave with the lane's registers not put back and the lanes after it
    // not run (a block-stride loop `while (i < n) { s[i] = …; i += 32; }` looped for ever here)
    const st = this.structure
    const leaves = (ns: readonly StructNode[]): boolean => ns.some((x) => {
      if (x.kind === 'jump') return true
      if (x.kind !== 'instr') return leaves(x.body)
      const y = ins[x.index]!
      if (y.op === 'ret' || y.op === 'exit') return true
      if (y.op !== 'bra') return false
      const t = st.kind === 'structured' ? st.branches.get(x.index) : undefined
      return t === undefined || (t.node !== n.id && !this.inside(t.node, n))
    })
    if (leaves(n.body.slice(1))) return this.vfail('a branch out of an if the lanes may run one by one')
    const m = this.tmp('vifm', 'i32')
    this.cur = br
    this.vguard(br.guard)
    b.simd(SimdOp.i32x4_bitmask).set(m)
    const lv = b.open('block')
    this.level.set(n.id, lv)
    // every lane skips the body
    b.get(m).i32(15).op(Op.i32_eq).brIf(lv)
    const rest = n.body.slice(1)
    const used = new Set<number>(), defined = new Set<number>()
    for (let i = n.start; i < n.end; i++) {
      if (i === n.branch) continue
      for (const r of usedRegisters(ins[i]!)) used.add(r)
      for (const r of definedRegisters(ins[i]!)) defined.add(r)
    }
    // where every lane runs the body, as four lanes (unless the body has no 4-lane form after a store)
    const mark = b.mark(), strides = new Map(this.vstride), stored = this.vStored, byLane = this.vLaneByLane
    let four = true
    try {
      b.get(m).op(Op.i32_eqz)
      b.begin('if')
      this.nodes(rest)
      b.else()
    } catch (e) {
      if (!(e instanceof NotVectorizable)) throw e
      b.rewind(mark)
      this.level.set(n.id, lv)
      this.vstride.clear()
      for (const [k, v] of strides) this.vstride.set(k, v)
      this.vStored = stored
      this.vLaneByLane = byLane
      four = false
    }
    // each running lane alone, as its thread (tid.x, t, LB and its registers; put back after the lanes)
    this.vlanes([...used, ...defined], defined, (k) => {
      b.get(m).i32(k).op(Op.i32_shr_u).i32(1).op(Op.i32_and).op(Op.i32_eqz)
      b.begin('if')
      const lane = b.open('block')
      this.level.set(n.id, lane)
      this.nodes(rest)
      b.end()
      b.end()
    })
    if (four) b.end()
    b.end()
    this.level.delete(n.id)
    for (const r of defined) this.vstride.delete(r)
    this.vLaneByLane = true
  }

  /** The 64-bit registers of block-level loop `it` that a 4-lane turn leaves out (simd-plan.ts addressOnly,
   *  for this loop): every use is the address of a global access the per-block test covers, at a stride of
   *  0 or 4 bytes in tid.x (unchecked copy only), or feeds one, and every definition is arithmetic; the
   *  accesses address memory from the block's tested base plus 4·tid.x. */
  private loopAddressOnly(it: ThreadLoop): Set<number> {
    const out = new Set<number>()
    if (!this.unchecked) return out
    const ins = this.fn.instructions
    for (let i = it.start; i < it.end; i++) for (const r of [...usedRegisters(ins[i]!), ...definedRegisters(ins[i]!)]) if (this.classes[r] === 'i64') out.add(r)
    for (const r of it.stores) out.delete(r)
    for (let i = it.start; i < it.end; i++) {
      const x = ins[i]!
      const pure = ['mov', 'add', 'sub', 'mul', 'mad', 'shl', 'cvt', 'cvta'].includes(x.op) || this.paramLocal(x) !== undefined
      if (!pure || x.guard) for (const r of definedRegisters(x)) out.delete(r)
    }
    const skipped = (x: Instruction) => { const d = definedRegisters(x); return d.length > 0 && d.every((r) => out.has(r)) }
    for (let changed = true; changed;) {
      changed = false
      for (let i = it.start; i < it.end; i++) {
        const x = ins[i]!
        if (skipped(x)) continue
        const { plain, bases } = reads(x)
        const tested = (x.op === 'ld' || x.op === 'st') && x.space === 'global' && this.testedStride(i) !== undefined
        for (const r of [...plain, ...(tested ? [] : bases)]) if (out.delete(r)) changed = true
      }
    }
    return out
  }

  /** vectorTurn; where it fails because lanes could part or be tested after a store in a turn with a loop,
   *  again with a pre-pass of the whole turn first (vturnPrecheck), which tests all of that before anything is
   *  stored. */
  private vectorTurnOrPrepassed(it: ThreadLoop, HI: number, lp: number, skipEnded: boolean): void {
    const why = this.vectorTurn(it, HI, lp, skipEnded)
    // (in a turn with a loop: straight-line turns that failed so did not gain from it in the corpora, and a
    // second try costs build time)
    if (why === undefined || !/(lanes that may part|a lane test) after a store/.test(why) || !this.hasLoop(it.nodes)) return
    this.vTurnPre = true
    try { this.vectorTurn(it, HI, lp, skipEnded) } finally { this.vTurnPre = false }
  }

  /** In block-level loop `it`, at tx (lane 0; ty and tz set) below HI: when tx is a multiple of 4 and tx + 3
   *  is below HI, threads tx … tx+3 take one 4-lane turn (their slots' registers as 4 lanes, block values
   *  splat, the loop's code as vinstruction writes it, the slots written back) and the loop goes on at tx + 4
   *  (`lp`); when a lane has ended (`skipEnded`), or the lanes part at a branch or a test before anything was
   *  stored, the four take their scalar turns instead. Without a 4-lane form for every instruction, nothing
   *  is written. */
  private vectorTurn(it: ThreadLoop, HI: number, lp: number, skipEnded: boolean): string | undefined {
    const { b, L } = this
    const mark = b.mark()
    const levels = new Map(this.level)
    const vregs = new Map(this.vregs)
    const warp = it.level === 'warp'
    try {
      b.get(L.tx!).i32(3).op(Op.i32_and).op(Op.i32_eqz)
      b.get(L.tx!).i32(4).op(Op.i32_add).get(HI).op(Op.i32_le_s).op(Op.i32_and)
      if (this.hull) b.get(this.hull.flag).op(Op.i32_and)
      // a warp's lane loop (lanes): four lanes of one row of the block, a quarter of a group of 4 in the warp
      if (warp) b.get(L.t!).i32(3).op(Op.i32_and).op(Op.i32_eqz).op(Op.i32_and).get(L.t!).i32(4).op(Op.i32_add).get(L.W1!).op(Op.i32_le_u).op(Op.i32_and)
      b.begin('if')
      this.vFail = b.open('block')
      this.vBails = 0
      const addressOnly = this.loopAddressOnly(it)
      // the registers the loop writes, and those its turns write (its uniform prefix runs once before it:
      // preComputed)
      this.vWritten = new Set()
      const turnWritten = new Set<number>()
      for (let i = it.start; i < it.end; i++) {
        for (const r of definedRegisters(this.fn.instructions[i]!)) {
          this.vWritten.add(r)
          if (!this.preComputed.has(i)) turnWritten.add(r)
        }
      }
      this.vstride.clear()
      // registers the loop reads before writing them: per-thread ones from the lanes' slots (or recomputed),
      // the others (block values, in their scalar locals) splat; those the loop does not write, once for
      // all the turns of a row (the engine does not move loop-invariant code out of a loop)
      const mask = (r: number) => { if (this.classes[r] === 'pred') b.i32x4([0, 0, 0, 0]).simd(SimdOp.i32x4_ne) }
      const loads = new Set(it.loads)
      const exposed = new Set<number>()
      const before = new Set<number>()
      for (let i = it.start; i < it.end; i++) {
        const x = this.fn.instructions[i]!
        for (const r of usedRegisters(x)) if (!before.has(r) && !loads.has(r)) exposed.add(r)
        for (const r of definedRegisters(x)) if (!x.guard) before.add(r)
      }
      const splatPre = (r: number) => {
        b.get(L.LB0!).simdMem(SimdOp.v128_load32_splat, 2, this.preSlot.get(r)!).set(this.vlocal(r))
        this.vstride.set(r, 0)
        if (this.classes[r] === 'i32') { b.get(L.LB0!).mem(Op.i32_load, 2, this.preSlot.get(r)!); this.setLane0(r) }
        exposed.delete(r)
      }
      const splatBlock = (r: number) => {
        b.get(this.regs[r]!)
        if (this.classes[r] === 'f32') b.op(Op.i32_reinterpret_f32)
        b.simd(SimdOp.i32x4_splat); mask(r); b.set(this.vlocal(r))
        this.vstride.set(r, 0)
        if (this.classes[r] === 'i32') { b.get(this.regs[r]!); this.setLane0(r) }
      }
      const preRead = [...this.preComputedRegs].filter((r) => !addressOnly.has(r) && (this.usesOf.get(r) ?? []).some((u) => u >= it.start && u < it.end && !this.preComputed.has(u)))
      const invariant = (r: number) => !turnWritten.has(r)
      for (const r of preRead) if (invariant(r)) splatPre(r)
      for (const r of [...exposed]) if (invariant(r) && !addressOnly.has(r) && !this.isWide(r)) { splatBlock(r); exposed.delete(r) }
      // a block's row: the next turn, where it is whole, without going round the thread loop (its tx is a
      // multiple of 4 already)
      const again = warp ? undefined : b.open('loop')
      this.vDone = b.open('block')
      this.vStored = false
      this.vLaneByLane = false
      this.vLaneCount = 0
      this.vLoop = true
      this.simd = { addressOnly, uniform: new Set() }
      // block values read after the loop, and the address-only registers they are computed from
      this.vScalar = new Set(this.plan!.perBlock.filter((r) => addressOnly.has(r) && this.vWritten.has(r)))
      for (let changed = true; changed;) {
        changed = false
        for (let i = it.start; i < it.end; i++) {
          const x = this.fn.instructions[i]!
          if (!definedRegisters(x).some((r) => this.vScalar.has(r))) continue
          for (const u of usedRegisters(x)) if (addressOnly.has(u) && this.vWritten.has(u) && !this.vScalar.has(u)) { this.vScalar.add(u); changed = true }
        }
      }
      this.vScalarDone.clear()
      this.vwstride.clear()
      this.vwLanes.clear()
      this.vTop = new Set(it.nodes.flatMap((n) => (n.kind === 'instr' ? [n.index] : [])))
      // the lanes' LB, where the turn has slots to read or write, or states to test
      const lb = [L.LB!, this.tmp('vlb1', 'i32'), this.tmp('vlb2', 'i32'), this.tmp('vlb3', 'i32')]
      const slots = it.loads.some((r) => !this.plan!.recomputed.has(r) && !this.remat(r) && !this.predRemat(r)) || it.stores.some((r) => this.slotOf.has(r) && !this.remat(r) && !this.predRemat(r))
      if (slots || skipEnded) {
        this.setThreadIndex()
        this.setLB()
        for (let k = 1; k < 4; k++) b.get(lb[k - 1]!).get(L.LN!).op(Op.i32_add).set(lb[k]!)
      }
      b.get(L.tx!).simd(SimdOp.i32x4_splat).i32x4([0, 1, 2, 3]).simd(SimdOp.i32x4_add).set(this.vlocal(-1))
      b.get(L.tx!); this.setLane0(-1)
      if (skipEnded) {
        for (let k = 0; k < 4; k++) { b.get(lb[k]!).mem(Op.i32_load, 2, this.stateOff); if (k) b.op(Op.i32_or) }
        b.brIf(this.vFail)
      }
      // (the loop-written ones each turn)
      for (const r of preRead) if (!invariant(r)) splatPre(r)
      for (const r of exposed) {
        if (addressOnly.has(r)) continue
        if (this.isWide(r)) {
          for (const l of this.vwideLocals(r)) b.get(this.regs[r]!).set(l)
          if (this.classes[r] === 'i64') { this.vwstride.set(r, 0); this.vwLanes.add(r) }
          continue
        }
        splatBlock(r)
      }
      for (const r of it.loads) {
        if (addressOnly.has(r)) continue
        if (this.isWide(r)) {
          const off = this.slotOf.get(r)
          if (off === undefined || this.plan!.recomputed.has(r)) this.vfail('a wide register without a slot')
          const [ld, , al] = slotOps(this.classes[r]!)
          this.vwideLocals(r).forEach((l, k) => { b.get(lb[k]!).mem(ld, al, off).set(l) })
          continue
        }
        const tid = this.plan!.recomputed.get(r)
        if (tid) {
          if (tid === '%tid.x') b.get(this.vlocal(-1)); else b.get(L[tid === '%tid.y' ? 'ty' : 'tz']!).simd(SimdOp.i32x4_splat)
          this.vstride.set(r, tid === '%tid.x' ? 1 : 0)
          b.set(this.vlocal(r))
          if (this.classes[r] === 'i32') { b.get(L[tid === '%tid.x' ? 'tx' : tid === '%tid.y' ? 'ty' : 'tz']!); this.setLane0(r) }
          continue
        } else if (this.remat(r)) {
          const st = this.pushRemat(r, true)
          if (st !== undefined) this.vstride.set(r, st); else this.vstride.delete(r)
          b.set(this.vlocal(r))
          // (lane 0's thread is the turn's tx, as the scalar remat reads it)
          if (st !== undefined) { this.pushRematNode(this.rematOf(r)!, false); this.setLane0(r) }
          continue
        } else if (this.predRemat(r)) {
          this.pushRematPred(this.predRemat(r)!, true)
        } else {
          const off = this.slotOf.get(r)
          if (off === undefined) throw new WasmRefusal(`register ${this.fn.registers[r]?.name} has no per-thread slot`)
          const v = this.vlocal(r)
          b.get(lb[0]!).simdMem(SimdOp.v128_load32_splat, 2, off).set(v)
          for (let k = 1; k < 4; k++) b.get(lb[k]!).get(v).simdMemLane(SimdOp.v128_load32_lane, 2, off, k).set(v)
          b.get(v); mask(r)
          const f = this.classes[r] === 'i32' ? this.rowAffine.formAt(r, it.start) : undefined
          if (f && !f.iv) this.vstride.set(r, f.c | 0)
        }
        b.set(this.vlocal(r))
      }
      this.vmode = true
      this.vPre.clear()
      this.vPreRuns.clear()
      this.vPreLoop.clear()
      this.vprecheck(it)
      this.vturnPrecheck(it)
      this.nodes(it.nodes)
      for (const r of [...this.vwstride.keys()]) this.vmaterialize(r)
      if (it.gather !== undefined) {
        // the shuffle's inputs the four lanes leave (gather): their bits in the arrival mask, their values in
        // their input slots
        const gi = it.gather, gx = this.fn.instructions[gi]!
        const A = this.cl('A', gi)
        b.get(A).i32(15).get(L.t!).i32(31).op(Op.i32_and).op(Op.i32_shl).op(Op.i32_or).set(A)
        this.collectiveInputs(gx).forEach((x, j) => {
          if (x.direct) return
          this.cur = gx
          const v = this.tmp('vgin', 'v128')
          this.vrd(gx.operands[j + 1]); b.set(v)
          for (let k = 0; k < 4; k++) b.get(lb[k]!).get(v).simdMemLane(SimdOp.v128_store32_lane, 2, this.inputSlot(gi, j), k)
        })
      }
      this.vmode = false
      for (const r of it.stores) {
        const off = this.slotOf.get(r)
        if (off === undefined || this.remat(r) || this.predRemat(r)) continue
        if (this.isWide(r)) {
          const [, st, al] = slotOps(this.classes[r]!)
          this.vwideLocals(r).forEach((l, k) => { b.get(lb[k]!).get(l).mem(st, al, off) })
          continue
        }
        const v = this.tmp('vst', 'v128')
        b.get(this.vlocal(r))
        if (this.classes[r] === 'pred') b.i32x4([1, 1, 1, 1]).simd(SimdOp.v128_and)
        b.set(v)
        for (let k = 0; k < 4; k++) b.get(lb[k]!).get(v).simdMemLane(SimdOp.v128_store32_lane, 2, off, k)
      }
      // a turn that is mostly lane by lane is four scalar turns in more code: not written
      if (2 * this.vLaneCount > it.end - it.start) this.vfail(`${this.vLaneCount} of its ${it.end - it.start} instructions lane by lane`)
      // block values the loop computes (the same in every thread: plan.perBlock) stay in their scalar
      // locals for the code after the loop, as the last thread left them
      const written = new Set<number>()
      for (let i = it.start; i < it.end; i++) for (const r of definedRegisters(this.fn.instructions[i]!)) written.add(r)
      for (const r of this.plan!.perBlock) {
        if (!written.has(r) || addressOnly.has(r) || this.preComputedRegs.has(r)) continue
        if (this.isWide(r)) { b.get(this.vwideLocals(r)[3]!).set(this.regs[r]!); continue }
        b.get(this.vlocal(r)).simdLane(SimdOp.i32x4_extract_lane, 3)
        if (this.classes[r] === 'f32') b.op(Op.f32_reinterpret_i32)
        else if (this.classes[r] === 'pred') b.i32(1).op(Op.i32_and)
        b.set(this.regs[r]!)
      }
      b.br(this.vDone)
      b.end()
      // the four threads ran: on at tx + 4 (a warp's lanes: at t + 4, the next row where this one ends)
      b.get(L.tx!).i32(4).op(Op.i32_add).set(L.tx!)
      if (warp) {
        b.get(L.t!).i32(4).op(Op.i32_add).set(L.t!)
        b.get(L.tx!).get(L.NTX!).op(Op.i32_eq).begin('if')
        b.i32(0).set(L.tx!).get(L.ty!).i32(1).op(Op.i32_add).set(L.ty!)
        b.get(L.ty!).get(L.NTY!).op(Op.i32_eq).begin('if').i32(0).set(L.ty!).get(L.tz!).i32(1).op(Op.i32_add).set(L.tz!).end()
        b.end()
      }
      if (again !== undefined) { b.get(L.tx!).i32(4).op(Op.i32_add).get(HI).op(Op.i32_le_s).brIf(again); b.end() }
      b.br(lp)
      b.end()
      b.end()
      this.vectorized = true
      this.vectorLoops.add(it.start)
      if (this.hull) for (const i of this.hull.sites) this.hullLines.add(this.fn.instructions[i]!.line)
    } catch (e) {
      if (!(e instanceof NotVectorizable) && !(e instanceof WasmRefusal)) throw e
      b.rewind(mark)
      this.level.clear()
      for (const [k, v] of levels) this.level.set(k, v)
      this.vregs.clear()
      for (const [k, v] of vregs) this.vregs.set(k, v)
      return e.message
    } finally {
      this.vmode = false
      this.vLoop = false
      this.vStored = false
      this.vLaneByLane = false
      this.vPre.clear()
      this.vPreRuns.clear()
      this.vPreLoop.clear()
      this.vwstride.clear()
      this.vwLanes.clear()
      this.simd = undefined
    }
  }

  /** Pushes an end of a tx interval (threadLoopTxRange, stayEnds) as an i64: 0, y, y + 1 or NTX, y pushed by `yv`. */
  private txEnd(e: TxEnd, yv: () => void): void {
    const b = this.b
    switch (e) {
      case '0': b.i64(0n); break
      case 'Y': yv(); break
      case 'Y1': yv(); b.i64(1n).op(Op.i64_add); break
      case 'NTX': b.get(this.L.NTX!).op(Op.i64_extend_i32_u); break
    }
  }

  /** The tx interval of a block-level loop whose first act is `@p bra` past the rest of its code, with p
   *  from `setp.cmp p, %tid.x, y` (y the same for the whole block): emit-thread-loops.ts narrow(), the same
   *  rule. Returns code that pushes LO and code that pushes HI, each an i32 clamped to [0, NTX]. */
  private txRange(it: ThreadLoop, prefix?: ReadonlySet<number>): { lo: () => void; hi: () => void; branch: number } | undefined {
    const r = threadLoopTxRange(this.fn, it, this.plan!, this.structure, this.affine, this.cfg, prefix)
    if (!r) return undefined
    const b = this.b, L = this.L
    const yv = (): void => {
      // y as the comparison reads it: s32 sign-extended, u32/b32 zero-extended (LO/HI are clamped to [0, NTX])
      this.rd(r.y, 'i32')
      b.op(r.signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u)
    }
    const end = (e: TxEnd) => {
      this.txEnd(e, yv)
      // clamped into [0, NTX], then 32 bits
      const x = this.tmp('ne', 'i64')
      b.set(x)
      b.get(x).i64(0n).get(x).i64(0n).op(Op.i64_gt_s).op(Op.select).set(x)
      b.get(x).get(L.NTX!).op(Op.i64_extend_i32_u).get(x).get(L.NTX!).op(Op.i64_extend_i32_u).op(Op.i64_lt_s).op(Op.select)
      b.op(Op.i32_wrap_i64)
    }
    return { lo: () => end(r.lo), hi: () => end(r.hi), branch: r.branch }
  }

  /** A per-thread 32-bit register recomputed where a loop needs it instead of kept in a slot (rematOf): one
   *  with an affine form inv + c·tid.x (no loop term; emit-js.ts rematerialize), whose 32-bit operations wrap
   *  modulo 2^32, as does i64 arithmetic wrapped to i32, so the value is the register's whatever the wrap
   *  checks say; or 32-bit operations on such values. */
  private remat(r: number): boolean {
    return this.rematOf(r) !== undefined
  }

  private remats?: Map<number, RematNode | null>

  /** How the lane loops recompute per-thread register r where they read it, so that no slot is kept for it:
   *  an affine register (inv + c·tx), or one defined once, unguarded, by a 32-bit integer operation (and, or,
   *  xor, add, sub, mul.lo, shl/shr by an immediate, mov) of immediates, copies of %tid, affine values as its
   *  definition reads them and other such registers (a few levels deep). Its value is then the same wherever
   *  it is read. */
  private rematOf(r: number, depth = 0): RematNode | undefined {
    if (this.classes[r] !== 'i32' || this.plan!.recomputed.has(r)) return undefined
    this.remats ??= new Map()
    const known = this.remats.get(r)
    if (known !== undefined) return known ?? undefined
    // (in progress: a definition that reads itself has none)
    this.remats.set(r, null)
    const f = this.affine.register.get(r)
    const t: RematNode | undefined = f && !f.iv ? { kind: 'affine', inv: f.inv, c: f.c } : depth < 4 ? this.rematOp(r, depth) : undefined
    this.remats.set(r, t ?? null)
    return t
  }

  private rematOp(r: number, depth: number): RematNode | undefined {
    const defs = this.defsOf.get(r) ?? []
    if (defs.length !== 1) return undefined
    const d = defs[0]!
    const x = this.fn.instructions[d]!
    if (x.guard || x.flags.cc || x.flags.sat || !['u32', 's32', 'b32'].includes(x.type ?? '') || x.operands[0]?.kind !== 'reg') return undefined
    const leaf = (o: IrOperand | undefined): RematNode | undefined => {
      if (o?.kind === 'imm' && o.imm.kind === 'int') return { kind: 'imm', value: Number(BigInt.asIntN(32, o.imm.value)) }
      if (o?.kind !== 'reg' || this.classes[o.id] !== 'i32') return undefined
      const tid = this.plan!.recomputed.get(o.id)
      if (tid) return { kind: 'tid', name: tid as '%tid.x' | '%tid.y' | '%tid.z' }
      // (a register written again later, read here where only its definition before reaches: as it is here)
      const g = this.affine.formAt(o.id, d)
      if (g && !g.iv) return { kind: 'affine', inv: g.inv, c: g.c }
      return this.rematOf(o.id, depth + 1)
    }
    const A = x.operands
    if (x.op === 'mov') return leaf(A[1])
    const OPS: Record<string, Extract<RematNode, { kind: 'op' }>['op']> = { and: 'and', or: 'or', xor: 'xor', add: 'add', sub: 'sub', shl: 'shl' }
    let op = OPS[x.op]
    if (x.op === 'mul' && x.part === 'lo') op = 'mul'
    if (x.op === 'shr') op = x.type === 's32' ? 'shr_s' : 'shr_u'
    if (!op || A.length !== 3) return undefined
    // (a shift by an immediate below 32: wasm's and PTX's shifts agree there)
    if ((op === 'shl' || op === 'shr_s' || op === 'shr_u') && !(A[2]?.kind === 'imm' && A[2].imm.kind === 'int' && A[2].imm.value >= 0n && A[2].imm.value < 32n)) return undefined
    const a = leaf(A[1]), b = leaf(A[2])
    return a && b ? { kind: 'op', op, a, b } : undefined
  }

  /** Pushes rematerialized register r (rematOf) as i32 for the current thread, or, `vector`, as the turn's
   *  4 lanes (their tid.x in vlocal(-1)); returns its stride in tid.x across lanes where known (affine). */
  private pushRemat(r: number, vector: boolean): number | undefined {
    const t = this.rematOf(r)!
    this.pushRematNode(t, vector)
    return t.kind === 'affine' ? t.c | 0 : t.kind === 'tid' ? (t.name === '%tid.x' ? 1 : 0) : t.kind === 'imm' ? 0 : undefined
  }

  private pushRematNode(n: RematNode, vector: boolean): void {
    const { b, L } = this
    switch (n.kind) {
      case 'imm': b.i32(n.value); if (vector) b.simd(SimdOp.i32x4_splat); return
      case 'tid':
        if (vector && n.name === '%tid.x') b.get(this.vlocal(-1))
        else { b.get(L[n.name === '%tid.x' ? 'tx' : n.name === '%tid.y' ? 'ty' : 'tz']!); if (vector) b.simd(SimdOp.i32x4_splat) }
        return
      case 'affine':
        this.inv(n.inv); b.op(Op.i32_wrap_i64)
        if (vector) {
          b.simd(SimdOp.i32x4_splat)
          if (n.c !== 0) { b.get(this.vlocal(-1)); this.vmulImm(n.c); b.simd(SimdOp.i32x4_add) }
        } else if (n.c !== 0) b.get(L.tx!).i32(n.c).op(Op.i32_mul).op(Op.i32_add)
        return
      case 'op': {
        this.pushRematNode(n.a, vector)
        const shift = n.op === 'shl' || n.op === 'shr_s' || n.op === 'shr_u'
        // (a shift's count is a scalar, also for 4 lanes)
        if (shift) b.i32((n.b as { value: number }).value); else this.pushRematNode(n.b, vector)
        if (vector) {
          const V = { and: SimdOp.v128_and, or: SimdOp.v128_or, xor: SimdOp.v128_xor, add: SimdOp.i32x4_add, sub: SimdOp.i32x4_sub, mul: SimdOp.i32x4_mul, shl: SimdOp.i32x4_shl, shr_s: SimdOp.i32x4_shr_s, shr_u: SimdOp.i32x4_shr_u }
          b.simd(V[n.op])
        } else {
          const S = { and: Op.i32_and, or: Op.i32_or, xor: Op.i32_xor, add: Op.i32_add, sub: Op.i32_sub, mul: Op.i32_mul, shl: Op.i32_shl, shr_s: Op.i32_shr_s, shr_u: Op.i32_shr_u }
          b.op(S[n.op])
        }
      }
    }
  }

  private predRemats?: Map<number, Instruction | undefined>

  /** The one definition of predicate r where it is `setp.cmp.{u32,s32,b32} r, a, b` of operands the loops
   *  recompute (a copy of %tid, an affine register: remat, an integer immediate): r is then recomputed where
   *  a loop reads it, as those are, and never kept in a slot (`if (t < 32)`'s guard, written by one lane loop
   *  and read by the next, costs no slot traffic). */
  private predRemat(r: number): Instruction | undefined {
    if (this.classes[r] !== 'pred') return undefined
    this.predRemats ??= new Map()
    if (this.predRemats.has(r)) return this.predRemats.get(r)
    const defs = this.defsOf.get(r) ?? []
    const sp = this.fn.instructions[defs[0] ?? -1]
    const operand = (o: IrOperand | undefined) => (o?.kind === 'imm' && o.imm.kind === 'int') || (o?.kind === 'reg' && (this.plan!.recomputed.has(o.id) || this.remat(o.id)))
    const ok = defs.length === 1 && sp!.op === 'setp' && !sp!.guard && !sp!.boolOp && !sp!.flags.ftz && !!sp!.cmp && sp!.operands[0]?.kind === 'reg'
      && ['u32', 's32', 'b32'].includes(sp!.type ?? '') && CMP_I32[sp!.cmp] !== undefined && operand(sp!.operands[1]) && operand(sp!.operands[2])
    this.predRemats.set(r, ok ? sp : undefined)
    return ok ? sp : undefined
  }

  /** Pushes a predRemat operand (i32) for the current thread, or, `vector`, for the turn's 4 lanes. */
  private pushRemat32(o: IrOperand, vector: boolean): void {
    const { b, L } = this
    if (o.kind === 'imm') { b.i32(immI32(o)!); if (vector) b.simd(SimdOp.i32x4_splat); return }
    if (o.kind !== 'reg') throw new Error('internal: predRemat operand')
    const tid = this.plan!.recomputed.get(o.id)
    if (tid) {
      if (vector && tid === '%tid.x') b.get(this.vlocal(-1))
      else { b.get(L[tid === '%tid.x' ? 'tx' : tid === '%tid.y' ? 'ty' : 'tz']!); if (vector) b.simd(SimdOp.i32x4_splat) }
      return
    }
    this.pushRemat(o.id, vector)
  }

  /** Pushes predRemat `sp`'s value: 0 or 1 for the current thread, or, `vector`, the 4 lanes' mask. */
  private pushRematPred(sp: Instruction, vector: boolean): void {
    this.pushRemat32(sp.operands[1]!, vector)
    this.pushRemat32(sp.operands[2]!, vector)
    const [s32, u32, v32s, v32u] = CMP_I32[sp.cmp!]!
    const signed = sp.type === 's32'
    if (vector) this.b.simd(signed ? v32s : v32u); else this.b.op(signed ? s32 : u32)
  }

  private slotLoad(r: number): void {
    const b = this.b
    const tid = this.plan!.recomputed.get(r)
    if (tid) { this.wr({ kind: 'reg', id: r }, 'u32', () => b.get(this.L[tid === '%tid.x' ? 'tx' : tid === '%tid.y' ? 'ty' : 'tz']!)); return }
    if (this.remat(r)) { this.pushRemat(r, false); b.set(this.regs[r]!); return }
    const sp = this.predRemat(r)
    if (sp) { this.pushRematPred(sp, false); b.set(this.regs[r]!); return }
    const off = this.slotOf.get(r)
    if (off === undefined) throw new WasmRefusal(`register ${this.fn.registers[r]?.name} has no per-thread slot`)
    const [ld, , al] = slotOps(this.classes[r]!)
    b.get(this.L.LB!).mem(ld, al, off).set(this.regs[r]!)
  }

  private slotStore(r: number): void {
    const b = this.b
    const off = this.slotOf.get(r)
    if (off === undefined || this.remat(r) || this.predRemat(r)) return
    const [, st, al] = slotOps(this.classes[r]!)
    b.get(this.L.LB!).get(this.regs[r]!).mem(st, al, off)
  }

  /** The current thread ends (a kernel return): its state says so when later loops must skip it. */
  private endThread(): void {
    const b = this.b
    // (the kernel's closing return where no thread ends before it: nothing after it reads the state, which
    // stays 0 for the next block: blockSchedule)
    const closing = !this.plan?.threadsEnd && (this.cur.op === 'ret' || this.cur.op === 'exit') && this.cur.index === this.fn.instructions.length - 1
    if (this.plan?.threadsEnd || (this.plan?.warps && !closing)) b.get(this.L.LB!).i32(-1).mem(Op.i32_store, 2, this.stateOff)
    b.br(this.threadLevel)
  }

  /** Leaves 1 on the stack when the whole block runs (t0 = 0, t1 = NT) and every hoisted site's range
   *  [inv + off, inv + off + c·(NTX−1)] (both ends, plus its size) lies inside one allocation, aligned, with
   *  its 32-bit terms unwrapped (emit-js.ts hz, wr): the block then runs the unchecked copy. */
  private blockTest(T0: number, T1: number): void {
    const { b, L } = this
    const ok = this.tmp('hok', 'i32')
    const lo = this.tmp('hlo', 'i64'), hi = this.tmp('hhi', 'i64')
    b.get(T0).op(Op.i32_eqz).get(T1).get(L.NT!).op(Op.i32_eq).op(Op.i32_and).set(ok)
    const ntx1 = () => b.get(L.NTX!).i32(1).op(Op.i32_sub).op(Op.i64_extend_i32_u)
    for (const [key, h] of this.hoisted) {
      for (const w of h.conds) this.condHolds(w, ok)
      this.inv(h.inv); b.i64(BigInt(h.off)).op(Op.i64_add).tee(lo)
      b.get(lo).op(Op.i32_wrap_i64).set(h.hv)
      // (a site only threads [t0, t1) of each row reach: its ends at those, and no test where none does)
      const t0 = this.tmp('ht0', 'i64'), t1 = this.tmp('ht1', 'i64')
      if (h.tx) {
        const [a, z] = h.tx
        b.i64(BigInt(Math.max(0, a))).set(t0)
        b.get(L.NTX!).op(Op.i64_extend_i32_u)
        if (z !== 'NTX') { const m = this.tmp('htm', 'i64'); b.tee(m).i64(BigInt(z)).get(m).i64(BigInt(z)).op(Op.i64_lt_s).op(Op.select) }
        b.i64(1n).op(Op.i64_sub).set(t1)
      } else { b.i64(0n).set(t0); ntx1(); b.set(t1) }
      b.get(lo).get(t0).i64(BigInt(h.c)).op(Op.i64_mul).op(Op.i64_add).set(lo)
      this.inv(h.inv); b.i64(BigInt(h.off)).op(Op.i64_add).get(t1).i64(BigInt(h.c)).op(Op.i64_mul).op(Op.i64_add).set(hi)
      const none = () => b.get(t0).get(t1).op(Op.i64_gt_s)
      if (h.space === 'shared') {
        // the window's offsets: both ends in [0, SHN − n], aligned; the heap byte at SB + offset
        b.get(h.hv).get(L.SB!).op(Op.i32_add).set(h.hv)
        if (h.c < 0) { b.get(lo).get(hi).set(lo).set(hi) }
        b.get(lo).i64(0n).op(Op.i64_ge_s)
        b.get(hi).get(L.SHN!).i32(h.n).op(Op.i32_sub).op(Op.i64_extend_i32_s).op(Op.i64_le_s).op(Op.i32_and)
        if (h.al > 0) b.get(lo).op(Op.i32_wrap_i64).i32(h.al).op(Op.i32_and).op(Op.i32_eqz).op(Op.i32_and)
        none(); b.op(Op.i32_or)
        b.get(ok).op(Op.i32_and).set(ok)
        continue
      }
      const site = this.sites.get(key)!
      if (h.c < 0) { b.get(lo).get(hi).set(lo).set(hi) }
      // aligned (c is a multiple of the alignment: checked when the site was hoisted)
      this.insideAllocation(site, lo, hi, h.n, h.al, ok)
    }
    if (this.plan && !this.ownPlan && this.fn.instructions.some((x) => collectiveOf(x)?.kind === 'bar')) this.touchNextBlock(ok)
    b.get(ok)
  }

  /** Clears `ok` unless the 32-bit term `w` lies within [lo, 2^31−1] at both ends of the block's threads
   *  (x and x + c·(NTX−1)); with an iteration term, x + kLo and x + kHi at both (kLo, kHi: its range, set by
   *  ivSpan for w.iv). */
  private condHolds(w: SiteCond, ok: number, kLo?: number, kHi?: number): void {
    const { b, L } = this
    const x = this.tmp('hx', 'i64'), y = this.tmp('hy', 'i64')
    this.inv(w.inv); b.set(x)
    for (const end of [false, true]) {
      b.get(x)
      if (end) b.get(L.NTX!).i32(1).op(Op.i32_sub).op(Op.i64_extend_i32_u).i64(BigInt(w.c)).op(Op.i64_mul).op(Op.i64_add)
      b.set(y)
      b.get(y); if (w.iv) b.get(kLo!).op(Op.i64_add)
      b.i64(BigInt(w.lo)).op(Op.i64_ge_s)
      b.get(y); if (w.iv) b.get(kHi!).op(Op.i64_add)
      b.i64(2147483647n).op(Op.i64_le_s).op(Op.i32_and)
      b.get(ok).op(Op.i32_and).set(ok)
    }
  }

  /** Clears `ok` unless [lo, hi] (start addresses of n-byte accesses, lo aligned to al + 1) lies inside the
   *  allocation `site` last hit (its cached range of valid start addresses [lo, hi)), else inside the one
   *  holding lo (probe: no fault), which the site then caches. Tests nothing where `ok` is already clear. */
  private insideAllocation(site: { lo: number; hi: number; d: number }, lo: number, hi: number, n: number, al: number, ok: number): void {
    const b = this.b
    if (al > 0) b.get(lo).op(Op.i32_wrap_i64).i32(al).op(Op.i32_and).op(Op.i32_eqz).get(ok).op(Op.i32_and).set(ok)
    const inside = () => b.get(lo).get(site.lo).op(Op.i64_ge_s).get(hi).get(site.hi).op(Op.i64_lt_s).op(Op.i32_and)
    b.get(ok).begin('if')
    inside(); b.op(Op.i32_eqz).begin('if')
    b.get(lo).op(Op.f64_convert_i64_s).call(this.funcs.probe).begin('if')
    b.gget(this.globals.RL!).sat(SatOp.i64_trunc_sat_f64_s).set(site.lo)
    b.gget(this.globals.RH!).sat(SatOp.i64_trunc_sat_f64_s).i64(BigInt(n - 1)).op(Op.i64_sub).set(site.hi)
    b.i32(0).set(site.d)
    b.end()
    b.end()
    inside(); b.set(ok)
    b.end()
  }

  /** The block's test of its loop sites (loopSites) into loopOk: for each, every address any thread of the
   *  block makes in any iteration its loop's bound lets it reach (tripLast) inside one allocation, aligned,
   *  with the 32-bit terms of its address unwrapped in all of them (webgpu's access-sites.ts makes the same
   *  test once per launch; here the site's cached allocation makes it a few compares a block). */
  private loopTest(): void {
    const { b, L } = this
    const ok = this.loopOk!
    b.i32(1).set(ok)
    const lasts = new Map<number, number>()
    for (const s of this.loopSites.values()) for (const iv of [s.iv, ...s.conds.map((w) => w.iv)]) if (iv && !lasts.has(iv.loop)) lasts.set(iv.loop, this.tripLast(iv.loop, ok))
    const kLo = this.tmp('lklo', 'i64'), kHi = this.tmp('lkhi', 'i64')
    const lo = this.tmp('hlo', 'i64'), hi = this.tmp('hhi', 'i64')
    for (const [key, s] of this.loopSites) {
      for (const w of s.conds) {
        if (w.iv) this.ivSpan(w.iv, lasts.get(w.iv.loop)!, kLo, kHi, ok, 0)
        this.condHolds(w, ok, kLo, kHi)
      }
      // [lo, hi]: inv + off + c·tx over the block's threads, plus the iteration term's range (its step aligned)
      this.inv(s.inv); b.i64(BigInt(s.off)).op(Op.i64_add).tee(lo).set(hi)
      if (s.c) { b.get(s.c > 0 ? hi : lo).get(L.NTX!).i32(1).op(Op.i32_sub).op(Op.i64_extend_i32_u).i64(BigInt(s.c)).op(Op.i64_mul).op(Op.i64_add).set(s.c > 0 ? hi : lo) }
      this.ivSpan(s.iv, lasts.get(s.iv.loop)!, kLo, kHi, ok, s.al)
      b.get(lo).get(kLo).op(Op.i64_add).set(lo)
      b.get(hi).get(kHi).op(Op.i64_add).set(hi)
      this.insideAllocation(this.sites.get(key)!, lo, hi, s.n, s.al, ok)
    }
  }

  /** The range of an iteration term (k + next)·step for k in [0, last] into kLo, kHi (i64 locals); `ok`
   *  cleared for a step of 2^30 or more in magnitude (the products stay exact: last < 2^33) or one that is
   *  not a multiple of al + 1. */
  private ivSpan(iv: SiteIv, last: number, kLo: number, kHi: number, ok: number, al: number): void {
    const b = this.b
    const st = this.tmp('lst', 'i64')
    this.inv(iv.step); b.set(st)
    b.get(st).i64(-(2n ** 30n)).op(Op.i64_gt_s).get(st).i64(2n ** 30n).op(Op.i64_lt_s).op(Op.i32_and).get(ok).op(Op.i32_and).set(ok)
    if (al > 0) b.get(st).op(Op.i32_wrap_i64).i32(al).op(Op.i32_and).op(Op.i32_eqz).get(ok).op(Op.i32_and).set(ok)
    b.get(st).i64(iv.next ? 1n : 0n).op(Op.i64_mul).set(kLo)
    b.get(last).i64(iv.next ? 1n : 0n).op(Op.i64_add).get(st).op(Op.i64_mul).set(kHi)
    // (min, max)
    b.get(kLo).get(kHi).get(kLo).get(kHi).op(Op.i64_lt_s).op(Op.select)
    b.get(kHi).get(kLo).get(kHi).get(kLo).op(Op.i64_gt_s).op(Op.select).set(kHi).set(kLo)
  }

  /** The largest iteration index k that any thread of the block reaches in `loop` (its TripBound: iteration k
   *  runs only where k = 0 or init + k·step < bound, so k ≤ ⌈(bound − init)/step⌉ − 1, largest for the block's
   *  smallest init), in a local (i64) it returns; `ok` cleared where it cannot be bounded that way: a step not
   *  positive, a first value off the 32-bit range or whose 32-bit terms wrap, a counter that could wrap on its
   *  way past the bound (webgpu's access-sites.ts lastIteration, per block). */
  private tripLast(loop: number, ok: number): number {
    const { b, L } = this
    const t = this.loopAffine.trips.get(loop)!
    const last = b.local('i64'), lo = b.local('i64'), hi = b.local('i64'), step = b.local('i64'), bound = b.local('i64'), y = b.local('i64')
    const and = () => b.get(ok).op(Op.i32_and).set(ok)
    const inRange = () => { b.tee(y).i64(-(2n ** 31n)).op(Op.i64_ge_s).get(y).i64(2147483647n).op(Op.i64_le_s).op(Op.i32_and) }
    // the counter's first value's own 32-bit terms (set before the loop: no iteration term of its own)
    for (const w of t.init.conds) { if (w.iv) b.i32(0).set(ok); else this.condHolds(w, ok) }
    // [lo, hi]: the first values of the block's threads
    this.inv(t.init.inv); b.tee(lo).set(hi)
    if (t.init.c) { b.get(t.init.c > 0 ? hi : lo).get(L.NTX!).i32(1).op(Op.i32_sub).op(Op.i64_extend_i32_u).i64(BigInt(t.init.c)).op(Op.i64_mul).op(Op.i64_add).set(t.init.c > 0 ? hi : lo) }
    this.scalar(t.bound); b.op(Op.i64_extend_i32_s).set(bound)
    this.inv(t.step); b.set(step)
    b.get(step).i64(0n).op(Op.i64_gt_s).get(step).i64(2n ** 30n).op(Op.i64_lt_s).op(Op.i32_and); and()
    b.get(lo); inRange(); and()
    b.get(hi); inRange(); and()
    // max(hi, bound) + step: the counter's value after its last increment stays a 32-bit number
    b.get(hi).get(bound).get(hi).get(bound).op(Op.i64_gt_s).op(Op.select).get(step).op(Op.i64_add).i64(2147483647n).op(Op.i64_le_s); and()
    // last = bound − lo > 0 ? ⌈(bound − lo)/step⌉ − 1 : 0 (divided by 1 where the step failed)
    b.get(bound).get(lo).op(Op.i64_sub).set(y)
    b.get(y).get(step).op(Op.i64_add).i64(1n).op(Op.i64_sub)
    b.get(step).i64(1n).get(step).i64(0n).op(Op.i64_gt_s).op(Op.select).op(Op.i64_div_s).i64(1n).op(Op.i64_sub)
    b.i64(0n).get(y).i64(0n).op(Op.i64_gt_s).op(Op.select).set(last)
    return last
  }

  /** Pushes a loop bound (ScalarExpr) as the kernel computes it: 32-bit wrapping arithmetic, a shift by 32
   *  or more as PTX's (0, or the sign for shr.s32). */
  private scalar(e: ScalarExpr): void {
    const b = this.b
    switch (e.kind) {
      case 'const': b.i32(e.value | 0); return
      case 'special': this.special(e.name, 'u32'); return
      case 'param': {
        const v = this.k.frame.vars.get(e.name)
        if (!v) throw new WasmRefusal(`unknown parameter ${e.name} in a loop bound`)
        b.get(2).mem(Op.i32_load, 2, v.off + e.offset)
        return
      }
      case 'op': {
        const x = b.local('i32'), y = b.local('i32')
        this.scalar(e.a); b.set(x)
        this.scalar(e.b); b.set(y)
        const simple: Partial<Record<typeof e.op, number>> = { add: Op.i32_add, sub: Op.i32_sub, mul: Op.i32_mul, and: Op.i32_and, or: Op.i32_or, xor: Op.i32_xor }
        const op = simple[e.op]
        if (op !== undefined) { b.get(x).get(y).op(op); return }
        if (e.op === 'shr_s') { b.get(x).get(y).i32(31).get(y).i32(32).op(Op.i32_lt_u).op(Op.select).op(Op.i32_shr_s); return }
        b.get(x).get(y).op(e.op === 'shl' ? Op.i32_shl : Op.i32_shr_u).i32(0).get(y).i32(32).op(Op.i32_lt_u).op(Op.select)
      }
    }
  }

  /** Global access `index` as a loop site (loopSites), registered on first ask: an unguarded scalar access
   *  through a 64-bit register whose exact64 form has an iteration term of a loop with a trip bound (and its
   *  wrap checks only such terms), a stride that keeps the alignment. */
  private loopSite(index: number): boolean {
    const key = `${index}:0`
    if (this.loopSites.has(key)) return true
    const x = this.fn.instructions[index]!
    const o = x.operands[x.op === 'ld' ? 1 : 0]
    const n = typeSize(x.type ?? '')
    if (x.guard || (x.vector ?? 1) !== 1 || !n || n > 8 || o?.kind !== 'addr' || o.base?.kind !== 'reg' || this.classes[o.base.id] !== 'i64') return false
    const al = n - 1
    const f = this.loopAffine.formAt(o.base.id, index)
    const bounded = (iv: SiteIv | undefined) => !iv || this.loopAffine.trips.has(iv.loop)
    if (!f?.iv || f.c % n !== 0 || !bounded(f.iv) || !f.conds.every((w) => bounded(w.iv))) return false
    this.loopSites.set(key, { index, n, al, inv: f.inv, off: o.offset, c: f.c, conds: f.conds, iv: f.iv })
    this.siteLocals(key)
    this.loopOk ??= this.b.local('i32')
    return true
  }

  /** A global access site's cached allocation (start addresses [lo, hi), d to the heap byte), by key. */
  private siteLocals(key: string): { lo: number; hi: number; d: number } {
    let s = this.sites.get(key)
    if (!s) { s = { lo: this.b.local('i64'), hi: this.b.local('i64'), d: this.b.local('i32') }; this.sites.set(key, s) }
    return s
  }

  /** At loop `n` in a 4-lane turn that can still go back to one thread at a time: when its global accesses
   *  include loop sites, the turn leaves (its threads take their scalar turns, which test every access) where
   *  the block's loopTest failed, and the loop's code is written without those sites' lane tests and without
   *  the tests of the 64-bit widenings their addresses are computed with (vCovered); returns what it added. */
  private coverLoop(n: StructRegion): number[] {
    const ins = this.fn.instructions
    const { at } = this.regionInstructions(n)
    const sites = at.filter((i) => {
      const x = ins[i]!
      return (x.op === 'ld' || x.op === 'st') && x.space === 'global' && !this.vPreLoop.has(i) && !(this.unchecked && this.testedStride(i) !== undefined) && this.loopSite(i)
    })
    if (!sites.length) return []
    this.b.get(this.loopOk!).op(Op.i32_eqz)
    this.vleave()
    // the sites' address arithmetic within the loop: its widenings of 32-bit values (cvt, mul.wide) need no
    // test (those values are the wrap checks the block's test made)
    const inLoop = new Set(at)
    const defs = new Map<number, number[]>()
    for (const i of at) for (const r of definedRegisters(ins[i]!)) (defs.get(r) ?? defs.set(r, []).get(r)!).push(i)
    const added = new Set<number>(sites)
    const work = sites.map((i) => { const x = ins[i]!, o = x.operands[x.op === 'ld' ? 1 : 0]; return (o as Extract<IrOperand, { kind: 'addr' }>).base!.kind === 'reg' ? (o as { base: { id: number } }).base.id : -1 })
    const seen = new Set<number>()
    while (work.length) {
      const r = work.pop()!
      if (r < 0 || seen.has(r)) continue
      seen.add(r)
      for (const d of defs.get(r) ?? []) {
        const x = ins[d]!
        if (!inLoop.has(d) || !['mov', 'add', 'sub', 'mul', 'mad', 'shl', 'cvt', 'cvta'].includes(x.op)) continue
        added.add(d)
        work.push(...usedRegisters(x))
      }
    }
    const out = [...added].filter((i) => !this.vCovered.has(i))
    for (const i of out) this.vCovered.add(i)
    return out
  }

  /** Reads one word of each of the first cache lines the next block (ctaid.x + 1, in the same row of the grid)
   *  will load at the hoisted global sites whose address depends on the block: a block with barriers leaves
   *  the memory idle while it computes between them, and the hardware prefetcher does not keep a stream across
   *  that gap; a few ascending misses at the start of the next block's range start it again, and it brings the
   *  rest. Touching every line instead (up to 64 a site, until 2026-11-30) cost more than it saved once the
   *  input was in the L3 (each miss a demand load the block waits for: the reductions and the scan 4–22 %
   *  slower than with no touch at all), and with the input in DRAM did no better than four lines (the
   *  shared-memory reduction 5.0 ms with every line, 4.4 with four, 5.4 with none). A kernel without barriers
   *  streams its inputs without it, and is left as it is (the warp-shuffle reduction, whose warps compute
   *  between loads without a barrier, ran 5 % slower with it). WebAssembly has no prefetch instruction, so these
   *  are loads: where the allocation the site's range test found holds the next block's whole range, from the
   *  line of its lowest address up, 64 bytes apart (a thread's stride apart where threads are further apart),
   *  MAX_TOUCHES at most; a word where the site reads 4 bytes or more, else a byte. Their values are xor-ed into
   *  the block's test so that the engine keeps them: a block whose words happen to xor to TOUCH_MAGIC runs the
   *  checked copy, which computes the same. */
  private touchNextBlock(ok: number): void {
    const { b, L } = this
    const sites = [...this.hoisted].filter(([, h]) => h.space === 'global' && this.fn.instructions[h.index]!.op === 'ld' && invMentions(h.inv, '%ctaid.x'))
    if (!sites.length) return
    for (const [, h] of sites) this.readAhead.add(this.fn.instructions[h.index]!.line)
    const acc = this.tmp('tnacc', 'i32'), a = this.tmp('tna', 'i64'), e = this.tmp('tne', 'i64'), cx = this.tmp('tncx', 'i32'), cap = this.tmp('tncap', 'i64')
    b.i32(0).set(acc)
    b.get(L.cx!).i32(1).op(Op.i32_add).get(L.NCX!).op(Op.i32_lt_u).begin('if')
    // (the sites' address forms read ctaid.x as the next block's while they are written)
    b.get(L.cx!).tee(cx).i32(1).op(Op.i32_add).set(L.cx!)
    for (const [key, h] of sites) {
      const site = this.sites.get(key)!
      // [a, e]: the next block's lowest and highest start address at this site
      this.inv(h.inv); b.i64(BigInt(h.off)).op(Op.i64_add).set(a)
      b.get(a).get(L.NTX!).i32(1).op(Op.i32_sub).op(Op.i64_extend_i32_u).i64(BigInt(h.c)).op(Op.i64_mul).op(Op.i64_add).set(e)
      if (h.c < 0) { b.get(a).get(e).set(a).set(e) }
      // (a range the allocation does not hold in full is left alone)
      b.get(a).get(site.lo).op(Op.i64_ge_s).get(e).get(site.hi).op(Op.i64_lt_s).op(Op.i32_and).begin('if')
      const stride = Math.max(64, Math.abs(h.c))
      // (from its first line's start: each line of [a, e] once, where threads are less than a line apart)
      if (stride === 64) b.get(a).i64(-64n).op(Op.i64_and).set(a)
      // (a range of more than MAX_TOUCHES lines: its first MAX_TOUCHES)
      b.get(a).i64(BigInt(stride * (MAX_TOUCHES - 1))).op(Op.i64_add).set(cap)
      b.get(e).get(cap).get(e).get(cap).op(Op.i64_lt_s).op(Op.select).set(e)
      const done = b.open('block'), lp = b.open('loop')
      b.get(a).get(e).op(Op.i64_gt_s).brIf(done)
      b.get(a).op(Op.i32_wrap_i64).mem(h.n >= 4 ? Op.i32_load : Op.i32_load8_u, 0, 0).get(acc).op(Op.i32_xor).set(acc)
      b.get(a).i64(BigInt(stride)).op(Op.i64_add).set(a)
      b.br(lp)
      b.end().end()
      b.end()
    }
    b.get(cx).set(L.cx!)
    b.end()
    b.get(acc).i32(TOUCH_MAGIC).op(Op.i32_ne).get(ok).op(Op.i32_and).set(ok)
  }

  /** An access every thread of the block makes at inv + off + c·tx (hoistable): recorded for the per-block
   *  range test (blockTest); in the unchecked copy its address is the block's lowest (hv, tested) + c·tx,
   *  straight to the heap, and this returns true (the register chain that computed the address is left to
   *  the engine's dead-code elimination). */
  private hoistSite(o: Extract<IrOperand, { kind: 'addr' }>, space: Space, n: number, al: number, slot: number, cls: readonly RegisterClass[]): boolean {
    const f = this.hoistable(o, al, cls)
    if (!f) return false
    const { b, L } = this
    const key = `${this.cur.index}:${slot}`
    let h = this.hoisted.get(key)
    if (!h) { h = { index: this.cur.index, space, n, al, inv: f.inv, off: o.offset, c: f.c, conds: f.conds, hv: b.local('i32'), ...(this.siteTx ? { tx: this.siteTx } : {}) }; this.hoisted.set(key, h) }
    if (!this.unchecked) return false
    b.get(h.hv)
    if (f.c !== 0) b.get(L.tx!).i32(f.c).op(Op.i32_mul).op(Op.i32_add)
    b.set(L.a32!)
    return true
  }

  /** The affine form of an access's address when every thread that makes it uses inv + c·tid.x (emit-js.ts
   *  hoistable): an unguarded access through a 64-bit register whose one definition dominates it, with no
   *  loop-iteration term, and a stride that keeps the alignment. */
  private hoistable(o: Extract<IrOperand, { kind: 'addr' }>, al: number, cls: readonly RegisterClass[] = ['i64']): { inv: InvExpr; c: number; conds: Array<{ inv: InvExpr; c: number; lo: number }> } | undefined {
    if (this.cur.guard || o.base?.kind !== 'reg' || !cls.includes(this.classes[o.base.id]!)) return undefined
    const f = this.affine.formAt(o.base.id, this.cur.index)
    if (!f || f.iv || f.c % (al + 1) !== 0) return undefined
    return { inv: f.inv, c: f.c, conds: f.conds }
  }

  /** Pushes a block-invariant affine term as i64 (emit-js.ts renderInv): kernel parameters read from the
   *  frame, 32-bit ones sign-extended as the form's wrap checks read them. */
  private inv(e: InvExpr): void {
    const b = this.b, L = this.L
    switch (e.kind) {
      case 'const': b.i64(BigInt(e.value)); return
      case 'special': this.special(e.name, 'i64'); return
      case 'symbol': {
        const a = this.symAddr(e.name)
        if (a === undefined) throw new WasmRefusal(`unknown symbol ${e.name} in an address`)
        b.i64(BigInt(a)); return
      }
      case 'param': {
        const v = this.k.frame.vars.get(e.name)
        if (!v) throw new WasmRefusal(`unknown parameter ${e.name} in an address`)
        b.get(2)
        if (e.width === 64) b.mem(Op.i64_load, 3, v.off + e.offset)
        else b.mem(Op.i32_load, 2, v.off + e.offset).op(Op.i64_extend_i32_s)
        void L
        return
      }
      case 'add': this.inv(e.a); this.inv(e.b); b.op(Op.i64_add); return
      case 'mul': this.inv(e.a); this.inv(e.b); b.op(Op.i64_mul); return
    }
  }

  private nodes(ns: readonly StructNode[]): void {
    for (const n of ns) {
      let covered: number[] = []
      if (n.kind === 'instr') { if (!this.preComputed.has(n.index)) this.instruction(this.fn.instructions[n.index]!); continue }
      if (n.kind === 'jump') throw new WasmRefusal('re-laid-out control flow is not lowered')
      if (this.vmode && this.vLoop && (this.vStored || this.vIfByLane) && n.kind === 'if' && n.branch !== undefined && !this.vPreLoop.has(n.branch)) { this.vscalarIf(n); continue }
      if (this.vLoop && n.kind === 'loop') {
        // a register the loop only steps by a value the same in every lane (`add %r, %r, %ntid`: a
        // block-stride loop's index) keeps its lanes' stride through it; the others' are not known there
        const ins = this.fn.instructions
        const defsIn = new Map<number, number[]>()
        for (let i = n.start; i < n.end; i++) for (const r of definedRegisters(ins[i]!)) (defsIn.get(r) ?? defsIn.set(r, []).get(r)!).push(i)
        const inLoop = new Set(defsIn.keys())
        const steps = (r: number) => {
          for (const i of defsIn.get(r)!) {
            const x = ins[i]!
            const A = x.operands
            const self = (o: IrOperand | undefined) => o?.kind === 'reg' && o.id === r
            const uniform = (o: IrOperand | undefined) => o !== undefined && this.operandStride(o) === 0 && !(o.kind === 'reg' && inLoop.has(o.id))
            const t = x.type ?? ''
            if (x.guard || x.flags.cc || x.flags.sat || !['s32', 'u32', 'b32'].includes(t) || this.classes[r] !== 'i32') return false
            if (!((x.op === 'add' && ((self(A[1]) && uniform(A[2])) || (self(A[2]) && uniform(A[1])))) || (x.op === 'sub' && self(A[1]) && uniform(A[2])))) return false
          }
          return true
        }
        const kept = new Set<number>()
        for (const r of inLoop) { if (!this.vstride.has(r) || !steps(r)) this.vstride.delete(r); else kept.add(r) }
        // (a lane-0 local written in the loop's body is read before that write from the second trip on: none
        // is claimed for a register the loop defines until its body writes it)
        for (const r of inLoop) this.vstride.lane0.delete(r)
        this.vLoopSteps.set(n.id, kept)
        // a test at the top of a loop that stores runs, from the second trip on, after that store: the
        // loop's tests are made by a pre-pass where they can be (vloopPrecheck), else the turn cannot test
        const stores = this.fn.instructions.slice(n.start, n.end).some((x) => x.op === 'st')
        if (this.vmode && !this.vStored && !this.vLaneByLane && !this.vSlice) covered = this.coverLoop(n)
        if (stores && this.vmode && !this.vStored && !this.vLaneByLane && !this.vSlice) this.vloopPrecheck(n)
        // (a pre-pass stores nothing)
        if (stores && !this.vSlice) this.vStored = true
      }
      const lv = this.b.open(n.kind === 'loop' ? 'loop' : 'block')
      this.level.set(n.id, lv)
      this.nodes(n.body)
      this.b.end()
      this.level.delete(n.id)
      for (const i of covered) this.vCovered.delete(i)
      // after a region, a register it defines holds its value or an older one (a branch may have skipped it):
      // no stride is known there; a loop's registers that keep theirs through it (steps) keep them
      if (this.vmode && this.vLoop) {
        const keep = n.kind === 'loop' ? this.vLoopSteps.get(n.id) : undefined
        const walk = (ns: readonly StructNode[]) => { for (const x of ns) { if (x.kind === 'instr') { for (const r of definedRegisters(this.fn.instructions[x.index]!)) if (!keep?.has(r)) this.vstride.delete(r) } else if (x.kind !== 'jump') walk(x.body) } }
        walk(n.body)
      }
    }
  }

  // --- registers and operands ---

  private cls(o: IrOperand | undefined): RegisterClass | undefined {
    return o?.kind === 'reg' ? this.classes[o.id] : undefined
  }

  /** Pushes operand o read as kind k (js-values.ts readAs / immediateAs, value for value). */
  private rd(o: IrOperand | undefined, k: WKind): void {
    const b = this.b
    if (!o) return this.fail('missing operand')
    switch (o.kind) {
      case 'reg': {
        const c = this.classes[o.id]!
        b.get(this.regs[o.id]!)
        return this.convertClass(c, k)
      }
      case 'imm': return this.immediate(o.imm, k)
      case 'special': return this.special(o.name, k)
      case 'sym': {
        if (o.target === 'function') return this.fail('function addresses are not lowered')
        const fl = this.frameLocal(o.name)
        if (fl !== undefined) {
          if (k === 'f32' || k === 'f64' || k === 'pred') return this.fail('a symbol read as a float or predicate')
          b.get(this.L.LF!).i32(fl).op(Op.i32_add)
          if (k === 'i64') b.op(Op.i64_extend_i32_u); else this.narrow(k)
          return
        }
        const a = this.symAddr(o.name)
        if (a === undefined) return this.fail(`unknown symbol ${o.name}`)
        if (k === 'i64') { b.i64(BigInt(a)); return }
        if (k === 'f32' || k === 'f64' || k === 'pred') return this.fail('a symbol read as a float or predicate')
        b.i32(a)
        return this.narrow(k)
      }
      case 'not': {
        if (k !== 'pred') return this.fail('`!p` read as a value')
        this.rd(o.operand, 'pred')
        b.op(Op.i32_eqz)
        return
      }
      case 'neg': {
        // `-x` operands (PTX allows negated immediates and registers for some float ops)
        this.rd(o.operand, k)
        if (k === 'f32') b.op(Op.f32_neg)
        else if (k === 'f64') b.op(Op.f64_neg)
        else return this.fail('a negated integer operand')
        return
      }
      default: return this.fail(`operand of kind ${o.kind} read as a value`)
    }
  }

  /** Narrows an i32 on the stack to kind k's value. */
  private narrow(k: WKind): void {
    const b = this.b
    switch (k) {
      case 'u16': b.i32(0xffff).op(Op.i32_and); break
      case 's16': b.op(Op.i32_extend16_s); break
      case 'u8': b.i32(0xff).op(Op.i32_and); break
      case 's8': b.op(Op.i32_extend8_s); break
      case 'pred': b.i32(0).op(Op.i32_ne); break
      default: break
    }
  }

  /** The value of a register of class c on the stack, converted to kind k (readAs). */
  private convertClass(c: RegisterClass, k: WKind): void {
    const b = this.b
    switch (c) {
      case 'pred':
        if (k === 'pred' || k === 'i32' || k === 'u32' || k === 'u16' || k === 'u8' || k === 's16' || k === 's8') return
        if (k === 'i64') { b.op(Op.i64_extend_i32_u); return }
        break
      case 'i32':
        switch (k) {
          case 'i32': case 'u32': return
          case 'i64': b.op(Op.i64_extend_i32_s); return
          case 'f32': b.op(Op.f32_reinterpret_i32); return
          default: return this.narrow(k)
        }
      case 'i16':
        switch (k) {
          case 'u16': case 'i32': case 'u32': return
          case 'i64': b.op(Op.i64_extend_i32_u); return
          case 's16': case 'u8': case 's8': case 'pred': return this.narrow(k)
          default: break
        }
        break
      case 'i64':
        switch (k) {
          case 'i64': return
          case 'f64': b.op(Op.f64_reinterpret_i64); return
          case 'f32': b.op(Op.i32_wrap_i64).op(Op.f32_reinterpret_i32); return
          case 'pred': b.i64(0n).op(Op.i64_ne); return
          default: b.op(Op.i32_wrap_i64); return this.narrow(k)
        }
      case 'f32':
        switch (k) {
          case 'f32': return
          case 'i32': case 'u32': this.f32Bits(); return
          case 'i64': this.f32Bits(); b.op(Op.i64_extend_i32_s); return
          case 'u16': case 's16': this.f32Bits(); return this.narrow(k)
          default: break
        }
        break
      case 'f64':
        switch (k) {
          case 'f64': return
          case 'i64': this.f64Bits(); return
          case 'i32': case 'u32': this.f64Bits(); b.op(Op.i32_wrap_i64); return
          default: break
        }
        break
    }
    return this.fail(`register of class ${c} used as ${k}`)
  }

  /** f32 on the stack → its bits, a NaN as 0x7fffffff (js-values.ts bitsOfF32). */
  private f32Bits(): void {
    const x = this.tmp('bits', 'f32')
    this.b.tee(x).op(Op.i32_reinterpret_f32).i32(0x7fffffff).get(x).get(x).op(Op.f32_eq).op(Op.select)
  }

  /** f64 on the stack → its bits, a NaN as 0x7fffffffffffffff (numeric.ts bitsFromF64). */
  private f64Bits(): void {
    const x = this.tmp('bits', 'f64')
    this.b.tee(x).op(Op.i64_reinterpret_f64).i64(0x7fffffffffffffffn).get(x).get(x).op(Op.f64_eq).op(Op.select)
  }

  /** The value of kind k on the stack, converted for storing in a register of class c (writeAs). */
  private convertToClass(k: WKind, c: RegisterClass): void {
    const b = this.b
    switch (c) {
      case 'i32':
        if (k === 'f32') return this.f32Bits()
        if (k === 'i64') { b.op(Op.i32_wrap_i64); return }
        if (k === 'f64') break
        return
      case 'f32':
        if (k === 'f32') return
        if (k === 'i32' || k === 'u32') { b.op(Op.f32_reinterpret_i32); return }
        if (k === 'i64') { b.op(Op.i32_wrap_i64).op(Op.f32_reinterpret_i32); return }
        break
      case 'i16':
        if (k === 'i64') { b.op(Op.i32_wrap_i64).i32(0xffff).op(Op.i32_and); return }
        if (k === 'f32') { this.f32Bits(); b.i32(0xffff).op(Op.i32_and); return }
        if (k === 'f64') break
        if (k === 'pred' || k === 'u16' || k === 'u8') return
        b.i32(0xffff).op(Op.i32_and)
        return
      case 'i64':
        if (k === 'i64') return
        if (k === 'i32' || k === 's16' || k === 's8') { b.op(Op.i64_extend_i32_s); return }
        if (k === 'u32' || k === 'u16' || k === 'u8') { b.op(Op.i64_extend_i32_u); return }
        if (k === 'f64') { this.f64Bits(); return }
        if (k === 'f32') { this.f32Bits(); b.op(Op.i64_extend_i32_u); return }
        break
      case 'f64':
        if (k === 'f64') return
        if (k === 'i64') { b.op(Op.f64_reinterpret_i64); return }
        break
      case 'pred':
        if (k === 'pred') return
        if (k === 'i64') { b.i64(0n).op(Op.i64_ne); return }
        if (k === 'f32' || k === 'f64') break
        b.i32(0).op(Op.i32_ne)
        return
    }
    return this.fail(`cannot write a ${k} value into a ${c} register`)
  }

  /** Writes the value `push` leaves (kind k) to destination o (a register; `_` drops it). */
  private wr(o: IrOperand | undefined, k: WKind, push: () => void): void {
    if (o?.kind === 'sink') { push(); this.b.op(Op.drop); return }
    if (o?.kind !== 'reg') return this.fail('destination is not a register')
    push()
    this.convertToClass(k, this.classes[o.id]!)
    this.b.set(this.regs[o.id]!)
  }

  private immediate(imm: Immediate, k: WKind): void {
    const b = this.b
    const f32b = new Float32Array(1), i32b = new Int32Array(f32b.buffer)
    const f64b = new Float64Array(1), u64b = new BigUint64Array(f64b.buffer)
    switch (imm.kind) {
      case 'int': {
        const v = imm.value
        switch (k) {
          case 'i32': case 'u32': b.i32(Number(BigInt.asIntN(32, v))); return
          case 'i64': b.i64(v); return
          case 'u16': b.i32(Number(BigInt.asUintN(16, v))); return
          case 's16': b.i32(Number(BigInt.asIntN(16, v))); return
          case 'u8': b.i32(Number(BigInt.asUintN(8, v))); return
          case 's8': b.i32(Number(BigInt.asIntN(8, v))); return
          case 'pred': b.i32(v !== 0n ? 1 : 0); return
          case 'f32': i32b[0] = Number(BigInt.asIntN(32, v)); b.f32bits(i32b[0]!); return
          case 'f64': b.f64bits(BigInt.asUintN(64, v)); return
        }
        break
      }
      case 'f32': case 'f64': {
        let val: number
        if (imm.kind === 'f32') { i32b[0] = Number(BigInt.asIntN(32, imm.bits)); val = f32b[0]! } else { u64b[0] = imm.bits; val = f64b[0]! }
        switch (k) {
          // JS holds the value as a number: an f32 literal's NaN payload survives as the double's
          case 'f32': f32b[0] = val; b.f32bits(i32b[0]!); return
          case 'f64': f64b[0] = val; b.f64bits(u64b[0]!); return
          case 'i32': case 'u32':
            if (imm.kind !== 'f32') break
            b.i32(Number(BigInt.asIntN(32, imm.bits)))
            return
          case 'i64': b.i64(imm.bits); return
          case 'u16': b.i32(Number(imm.bits & 0xffffn)); return
          default: break
        }
        break
      }
      case 'real':
        if (k === 'f32') { f32b[0] = imm.value; b.f32bits(i32b[0]!); return }
        if (k === 'f64') { b.f64(imm.value); return }
        break
    }
    return this.fail(`a literal read as ${k}`)
  }

  private special(name: string, k: WKind): void {
    const b = this.b, L = this.L
    const i32 = (push: () => void) => {
      push()
      if (k === 'i64') b.op(Op.i64_extend_i32_u)
      else if (k === 'f32' || k === 'f64') this.fail(`${name} read as a float`)
      else this.narrow(k)
    }
    const rs = reservedSmemRead(name)
    if (rs) return i32(() => { if ('size' in rs) b.i32(rs.size); else { b.get(L.RSV!); if (rs.offset) b.i32(rs.offset).op(Op.i32_add) } })
    switch (name) {
      case '%tid.x': return i32(() => b.get(L.tx!))
      case '%tid.y': return i32(() => b.get(L.ty!))
      case '%tid.z': return i32(() => b.get(L.tz!))
      case '%ntid.x': return i32(() => b.get(L.NTX!))
      case '%ntid.y': return i32(() => b.get(L.NTY!))
      case '%ntid.z': return i32(() => b.get(L.NTZ!))
      case '%ctaid.x': return i32(() => b.get(L.cx!))
      case '%ctaid.y': return i32(() => b.get(L.cy!))
      case '%ctaid.z': return i32(() => b.get(L.cz!))
      case '%nctaid.x': case '%nclusterid.x': return i32(() => b.get(L.NCX!))
      case '%nctaid.y': case '%nclusterid.y': return i32(() => b.get(L.NCY!))
      case '%nctaid.z': case '%nclusterid.z': return i32(() => b.get(L.NCZ!))
      case '%laneid': return i32(() => b.get(L.t!).i32(31).op(Op.i32_and))
      case '%warpid': return i32(() => b.get(L.t!).i32(5).op(Op.i32_shr_u))
      case '%nwarpid': return i32(() => b.get(L.NTX!).get(L.NTY!).op(Op.i32_mul).get(L.NTZ!).op(Op.i32_mul).i32(31).op(Op.i32_add).i32(5).op(Op.i32_shr_u))
      case '%lanemask_eq': return i32(() => b.i32(1).get(L.t!).op(Op.i32_shl))
      case '%lanemask_lt': return i32(() => b.i32(1).get(L.t!).op(Op.i32_shl).i32(1).op(Op.i32_sub))
      case '%lanemask_le': return i32(() => b.i32(1).get(L.t!).op(Op.i32_shl).i32(1).op(Op.i32_shl).i32(1).op(Op.i32_sub))
      case '%lanemask_gt': return i32(() => b.i32(1).get(L.t!).op(Op.i32_shl).i32(1).op(Op.i32_shl).i32(1).op(Op.i32_sub).i32(-1).op(Op.i32_xor))
      case '%lanemask_ge': return i32(() => b.i32(1).get(L.t!).op(Op.i32_shl).i32(1).op(Op.i32_sub).i32(-1).op(Op.i32_xor))
      case '%dynamic_smem_size': return i32(() => b.get(L.DYN!))
      case '%total_smem_size': case '%aggr_smem_size': return i32(() => b.get(L.SHN!))
      case '%envreg2': return i32(() => b.get(L.GWS!))
      case '%clock': case '%clock64': case '%globaltimer': case '%globaltimer_lo':
        return this.fail(`${name} reads the clock, which the JavaScript tier does`)
      case '%nsmid': case '%cluster_nctarank': case '%cluster_nctaid.x': case '%cluster_nctaid.y': case '%cluster_nctaid.z':
        return i32(() => b.i32(1))
      default: return i32(() => b.i32(0))
    }
  }

  /** Address of a symbol in its own state space (emit-js.ts symAddr). */
  /** A device function's .local variable: its offset in the thread's local window is LF (where the caller's
   *  locals end) + its frame offset, known at run time only. */
  private frameLocal(name: string): number | undefined {
    const v = this.k.frame.vars.get(name)
    return this.fn.kind === 'func' && v?.v.space === 'local' ? v.off : undefined
  }

  private symAddr(name: string): number | undefined {
    if (this.frameLocal(name) !== undefined) throw new WasmRefusal(`the address of the device function's local ${name} as a constant`)
    const v = this.k.frame.vars.get(name)
    if (v) {
      if (v.v.space === 'param') return undefined
      if (v.v.space === 'local') return v.off
      if (v.v.space === 'shared') return this.layout.shared.get(name) ?? 0
      if (v.v.space === 'const' || v.v.space === 'global') return this.layout.globals.get(name)
    }
    return this.layout.globals.get(name) ?? this.layout.shared.get(name)
  }

  // --- instructions ---

  private instruction(ins: Instruction): void {
    this.cur = ins
    if (this.vmode) return this.vinstruction(ins)
    const b = this.b
    if (ins.op === 'bra') return this.branch(ins)
    if (ins.guard) {
      b.get(this.regs[ins.guard.reg]!)
      if (this.classes[ins.guard.reg] !== 'pred') b.i32(0).op(Op.i32_ne)
      if (ins.guard.negate) b.op(Op.i32_eqz)
      b.open('if')
      this.body(ins)
      b.end()
    } else this.body(ins)
  }

  private branch(ins: Instruction): void {
    if (ins.index === this.elided) return
    const st = this.structure
    if (st.kind !== 'structured') return this.fail('unstructured branch')
    const d = this.plan?.departures.get(ins.index)
    if (d) {
      const b = this.b
      if (ins.guard) {
        b.get(this.regs[ins.guard.reg]!)
        if (this.classes[ins.guard.reg] !== 'pred') b.i32(0).op(Op.i32_ne)
        if (ins.guard.negate) b.op(Op.i32_eqz)
        b.open('if')
      }
      switch (d.kind) {
        case 'uniform':
          b.i32(this.code(d.target.kind, d.target.node)).set(this.L.X!)
          if (this.warpLevel) b.get(this.L.LB!).i32(LEFT).mem(Op.i32_store, 2, this.stateOff)
          b.br(this.rLevel)
          break
        case 'park':
          // the lane waits where its warp rejoins: the end of the target, or its loop's next trip
          b.get(this.L.LB!).i32(d.target.kind === 'break' ? 2 + 2 * d.target.node : 3 + 2 * d.target.node).mem(Op.i32_store, 2, this.stateOff)
          b.br(this.rLevel)
          break
        case 'exit': {
          // the thread runs the kernel's barrier-free tail now, and ends
          this.nodes(d.tail)
          const last = d.tail[d.tail.length - 1]
          const ends = last?.kind === 'instr' && ['ret', 'exit'].includes(this.fn.instructions[last.index]!.op) && !this.fn.instructions[last.index]!.guard
          if (!ends) this.endThread()
          break
        }
      }
      if (ins.guard) b.end()
      return
    }
    const target = st.branches.get(ins.index)
    if (!target) return this.fail('a branch the structure does not resolve')
    const lv = this.level.get(target.node)
    if (lv === undefined) return this.fail('a branch to a region that is not open')
    if (ins.guard) {
      this.b.get(this.regs[ins.guard.reg]!)
      if (this.classes[ins.guard.reg] !== 'pred') this.b.i32(0).op(Op.i32_ne)
      if (ins.guard.negate) this.b.op(Op.i32_eqz)
      this.b.brIf(lv)
    } else this.b.br(lv)
  }

  private body(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const b = this.b
    const ftz = ins.flags.ftz === true
    const sat = ins.flags.sat === true
    const rn = ins.rounding === undefined || ins.rounding === 'rn'
    const is64 = t === 'u64' || t === 's64' || t === 'b64'
    const signed = t.startsWith('s')
    const rd = (o: IrOperand | undefined, k: WKind) => this.rd(o, k)
    const wr = (o: IrOperand | undefined, k: WKind, push: () => void) => this.wr(o, k, push)
    const f32In = (o: IrOperand | undefined) => { rd(o, 'f32'); if (ftz) b.call(this.helpers.ftz) }
    const f32Out = () => {
      if (ftz) b.call(this.helpers.ftz)
      if (sat) b.op(Op.f64_promote_f32).call(this.helpers.sat).op(Op.f32_demote_f64)
    }
    if (['add', 'sub', 'mul', 'fma', 'mad'].includes(ins.op) && ['f16', 'bf16', 'f16x2', 'bf16x2'].includes(t)) return this.half(ins)
    if (((ins.op === 'add' || ins.op === 'sub' || ins.op === 'mad') && ins.flags.cc) || ins.op === 'addc' || ins.op === 'subc' || ins.op === 'madc') return this.carry(ins)
    switch (ins.op) {
      case 'mov': return this.mov(ins)
      case 'ld': case 'ldu': return this.load(ins)
      case 'st': return this.store(ins)
      case 'cvta': return this.cvta(ins)
      case 'add': case 'sub': case 'mul': {
        if (ins.flags.cc) return this.fail('carry arithmetic is not lowered')
        const op = ins.op
        const fused = op !== 'mul' && (t === 'f32' || t === 'f64') ? this.k.contraction?.get(ins.index) : undefined
        if (fused) {
          // one fma with the product it reads, as ptxas computes it (issue 32): add(p, c) = fma(a, b, c),
          // sub(p, c) = fma(a, b, -c), sub(c, p) = fma(-a, b, c)
          const m = this.fn.instructions[fused.mul]!
          const other = A[fused.operand === 1 ? 2 : 1]
          const negA = op === 'sub' && fused.operand === 2, negC = op === 'sub' && fused.operand === 1
          if (t === 'f32') return wr(A[0], 'f32', () => { f32In(m.operands[1]); if (negA) b.op(Op.f32_neg); f32In(m.operands[2]); f32In(other); if (negC) b.op(Op.f32_neg); this.fma32(); f32Out() })
          return wr(A[0], 'f64', () => { rd(m.operands[1], 'f64'); if (negA) b.op(Op.f64_neg); rd(m.operands[2], 'f64'); rd(other, 'f64'); if (negC) b.op(Op.f64_neg); this.fma64() })
        }
        if (t === 'f32') {
          if (!rn) return wr(A[0], 'f32', () => { f32In(A[1]); b.op(Op.f64_promote_f32); f32In(A[2]); b.op(Op.f64_promote_f32).f64(0); this.directed('32', op, ins.rounding!); b.op(Op.f32_demote_f64); f32Out() })
          return wr(A[0], 'f32', () => { f32In(A[1]); f32In(A[2]); b.op(op === 'add' ? Op.f32_add : op === 'sub' ? Op.f32_sub : Op.f32_mul); f32Out() })
        }
        if (t === 'f64') {
          if (!rn) return wr(A[0], 'f64', () => { rd(A[1], 'f64'); rd(A[2], 'f64'); b.f64(0); this.directed('64', op, ins.rounding!); if (sat) b.call(this.helpers.sat) })
          return wr(A[0], 'f64', () => { rd(A[1], 'f64'); rd(A[2], 'f64'); b.op(op === 'add' ? Op.f64_add : op === 'sub' ? Op.f64_sub : Op.f64_mul); if (sat) b.call(this.helpers.sat) })
        }
        if (op === 'mul' && ins.part === 'wide') {
          if (t === 's32' || t === 'u32') return wr(A[0], 'i64', () => { rd(A[1], signed ? 'i32' : 'u32'); b.op(signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u); rd(A[2], signed ? 'i32' : 'u32'); b.op(signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u); b.op(Op.i64_mul) })
          if (t === 's16' || t === 'u16') return wr(A[0], 'i32', () => { rd(A[1], signed ? 's16' : 'u16'); rd(A[2], signed ? 's16' : 'u16'); b.op(Op.i32_mul) })
          return this.fail('mul.wide of this type')
        }
        if (op === 'mul' && ins.part === 'hi') {
          if (t === 's32' || t === 'u32') return wr(A[0], 'i32', () => this.mulHi32(A[1], A[2], signed))
          if (is64) return wr(A[0], 'i64', () => this.mulHi64(A[1], A[2], signed))
          return this.fail('mul.hi of this type')
        }
        if (is64) return wr(A[0], 'i64', () => { rd(A[1], 'i64'); rd(A[2], 'i64'); b.op(op === 'add' ? Op.i64_add : op === 'sub' ? Op.i64_sub : Op.i64_mul) })
        if (t === 's32' && sat && op !== 'mul') return wr(A[0], 'i32', () => { rd(A[1], 'i32'); b.op(Op.i64_extend_i32_s); rd(A[2], 'i32'); b.op(Op.i64_extend_i32_s); b.op(op === 'add' ? Op.i64_add : Op.i64_sub); this.satS32() })
        if (t === 's32' || t === 'u32' || t === 'b32') return wr(A[0], 'i32', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); b.op(op === 'add' ? Op.i32_add : op === 'sub' ? Op.i32_sub : Op.i32_mul) })
        if (t === 's16' || t === 'u16' || t === 'b16') return wr(A[0], 'u16', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); b.op(op === 'add' ? Op.i32_add : op === 'sub' ? Op.i32_sub : Op.i32_mul).i32(0xffff).op(Op.i32_and) })
        return this.fail(`${op} of type .${t}`)
      }
      case 'mad': case 'fma': {
        if (ins.flags.cc) return this.fail('carry arithmetic is not lowered')
        if (t === 'f32') {
          if (!rn) return wr(A[0], 'f32', () => { f32In(A[1]); b.op(Op.f64_promote_f32); f32In(A[2]); b.op(Op.f64_promote_f32); f32In(A[3]); b.op(Op.f64_promote_f32); this.directed('32', 'fma', ins.rounding!); b.op(Op.f32_demote_f64); f32Out() })
          return wr(A[0], 'f32', () => { f32In(A[1]); f32In(A[2]); f32In(A[3]); this.fma32(); f32Out() })
        }
        if (t === 'f64') {
          if (!rn) return wr(A[0], 'f64', () => { rd(A[1], 'f64'); rd(A[2], 'f64'); rd(A[3], 'f64'); this.directed('64', 'fma', ins.rounding!); if (sat) b.call(this.helpers.sat) })
          return wr(A[0], 'f64', () => { rd(A[1], 'f64'); rd(A[2], 'f64'); rd(A[3], 'f64'); this.fma64(); if (sat) b.call(this.helpers.sat) })
        }
        if (ins.part === 'wide') {
          if (t === 's32' || t === 'u32') return wr(A[0], 'i64', () => { rd(A[1], signed ? 'i32' : 'u32'); b.op(signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u); rd(A[2], signed ? 'i32' : 'u32'); b.op(signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u); b.op(Op.i64_mul); rd(A[3], 'i64'); b.op(Op.i64_add) })
          return this.fail('mad.wide of this type')
        }
        if (ins.part === 'hi') {
          if ((t === 's32' || t === 'u32') && !sat) return wr(A[0], 'i32', () => { this.mulHi32(A[1], A[2], signed); rd(A[3], 'i32'); b.op(Op.i32_add) })
          return this.fail('mad.hi of this type')
        }
        if (is64) return wr(A[0], 'i64', () => { rd(A[1], 'i64'); rd(A[2], 'i64'); b.op(Op.i64_mul); rd(A[3], 'i64'); b.op(Op.i64_add) })
        if (t === 's32' || t === 'u32') return wr(A[0], 'i32', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); b.op(Op.i32_mul); rd(A[3], 'i32'); b.op(Op.i32_add) })
        return this.fail(`${ins.op} of type .${t}`)
      }
      case 'div': case 'rem': return this.divRem(ins)
      case 'min': case 'max': return this.minMax(ins)
      case 'abs': case 'neg': {
        const ab = ins.op === 'abs'
        if (t === 'f32') return wr(A[0], 'f32', () => { f32In(A[1]); b.op(ab ? Op.f32_abs : Op.f32_neg); if (ftz) b.call(this.helpers.ftz) })
        if (t === 'f64') return wr(A[0], 'f64', () => { rd(A[1], 'f64'); b.op(ab ? Op.f64_abs : Op.f64_neg) })
        if (t === 'f16' || t === 'bf16') return wr(A[0], 'u16', () => { rd(A[1], 'u16'); b.i32(ab ? 0x7fff : 0x8000).op(ab ? Op.i32_and : Op.i32_xor) })
        if (t === 'f16x2' || t === 'bf16x2') return wr(A[0], 'i32', () => { rd(A[1], 'i32'); b.i32(ab ? 0x7fff7fff : 0x80008000 | 0).op(ab ? Op.i32_and : Op.i32_xor) })
        if (is64) return wr(A[0], 'i64', () => {
          const x = this.tmp('x', 'i64')
          if (ab) { rd(A[1], 'i64'); b.set(x); b.i64(0n).get(x).op(Op.i64_sub).get(x).get(x).i64(0n).op(Op.i64_lt_s).op(Op.select); return }
          b.i64(0n); rd(A[1], 'i64'); b.op(Op.i64_sub)
        })
        if (t === 's32') return wr(A[0], 'i32', () => {
          const x = this.tmp('x', 'i32')
          if (ab) { rd(A[1], 'i32'); b.set(x); b.i32(0).get(x).op(Op.i32_sub).get(x).get(x).i32(0).op(Op.i32_lt_s).op(Op.select); return }
          b.i32(0); rd(A[1], 'i32'); b.op(Op.i32_sub)
        })
        return this.fail(`${ins.op} of type .${t}`)
      }
      case 'and': case 'or': case 'xor': {
        const o32 = ins.op === 'and' ? Op.i32_and : ins.op === 'or' ? Op.i32_or : Op.i32_xor
        if (t === 'pred') return wr(A[0], 'pred', () => { rd(A[1], 'pred'); rd(A[2], 'pred'); b.op(o32) })
        if (is64) return wr(A[0], 'i64', () => { rd(A[1], 'i64'); rd(A[2], 'i64'); b.op(ins.op === 'and' ? Op.i64_and : ins.op === 'or' ? Op.i64_or : Op.i64_xor) })
        if (t === 'b16' || t === 'u16' || t === 's16') return wr(A[0], 'u16', () => { rd(A[1], 'u16'); rd(A[2], 'u16'); b.op(o32) })
        if (t === 'b8') return wr(A[0], 'u8', () => { rd(A[1], 'u8'); rd(A[2], 'u8'); b.op(o32) })
        return wr(A[0], 'i32', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); b.op(o32) })
      }
      case 'not': {
        if (t === 'pred') return wr(A[0], 'pred', () => { rd(A[1], 'pred'); b.op(Op.i32_eqz) })
        if (is64) return wr(A[0], 'i64', () => { rd(A[1], 'i64'); b.i64(-1n).op(Op.i64_xor) })
        if (t === 'b16' || t === 'u16' || t === 's16') return wr(A[0], 'u16', () => { rd(A[1], 'u16'); b.i32(0xffff).op(Op.i32_xor) })
        return wr(A[0], 'i32', () => { rd(A[1], 'i32'); b.i32(-1).op(Op.i32_xor) })
      }
      case 'cnot': {
        if (is64) return wr(A[0], 'i64', () => { rd(A[1], 'i64'); b.op(Op.i64_eqz).op(Op.i64_extend_i32_u) })
        const kk: WKind = t === 's32' || t === 'u32' || t === 'b32' ? 'i32' : 'u16'
        return wr(A[0], kk, () => { rd(A[1], kk); b.op(Op.i32_eqz) })
      }
      case 'shl': case 'shr': return this.shift(ins)
      case 'popc': return wr(A[0], 'i32', () => { if (is64) { rd(A[1], 'i64'); b.op(Op.i64_popcnt).op(Op.i32_wrap_i64) } else { rd(A[1], 'i32'); b.op(Op.i32_popcnt) } })
      case 'clz': return wr(A[0], 'i32', () => { if (is64) { rd(A[1], 'i64'); b.op(Op.i64_clz).op(Op.i32_wrap_i64) } else { rd(A[1], 'i32'); b.op(Op.i32_clz) } })
      case 'bfind': {
        // the position of the most significant 1 (of ~a for a negative signed a), −1 for none; .shiftamt: the
        // left shift that brings it to the top (numeric.ts bfind32/bfind64)
        const w = is64 ? 64 : 32
        if (!is64 && t !== 'u32' && t !== 's32') return this.fail(`bfind of type .${t}`)
        return wr(A[0], 'i32', () => {
          const x = this.tmp(is64 ? 'bfx64' : 'bfx32', is64 ? 'i64' : 'i32'), p = this.tmp('bfp', 'i32')
          rd(A[1], is64 ? 'i64' : 'i32'); b.set(x)
          if (signed) {
            if (is64) b.get(x).i64(-1n).op(Op.i64_xor).get(x).get(x).i64(0n).op(Op.i64_lt_s).op(Op.select).set(x)
            else b.get(x).i32(-1).op(Op.i32_xor).get(x).get(x).i32(0).op(Op.i32_lt_s).op(Op.select).set(x)
          }
          b.i32(w - 1)
          if (is64) b.get(x).op(Op.i64_clz).op(Op.i32_wrap_i64); else b.get(x).op(Op.i32_clz)
          b.op(Op.i32_sub).set(p)
          if (ins.flags.shiftamt) b.i32(w - 1).get(p).op(Op.i32_sub); else b.get(p)
          b.i32(-1)
          if (is64) b.get(x).op(Op.i64_eqz); else b.get(x).op(Op.i32_eqz)
          b.op(Op.i32_eqz).op(Op.select)
        })
      }
      case 'brev': if (is64) return this.fail('brev.b64'); return wr(A[0], 'i32', () => { rd(A[1], 'i32'); b.call(this.funcs.brev32!) })
      case 'bfe':
        if (is64) return wr(A[0], 'i64', () => { rd(A[1], 'i64'); rd(A[2], 'i32'); rd(A[3], 'i32'); b.call(this.funcs[signed ? 'bfe64s' : 'bfe64u']!) })
        return wr(A[0], 'i32', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); rd(A[3], 'i32'); b.call(this.funcs[signed ? 'bfe32s' : 'bfe32u']!) })
      case 'bfi':
        if (is64) return wr(A[0], 'i64', () => { rd(A[1], 'i64'); rd(A[2], 'i64'); rd(A[3], 'i32'); rd(A[4], 'i32'); b.call(this.funcs.bfi64!) })
        return wr(A[0], 'i32', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); rd(A[3], 'i32'); rd(A[4], 'i32'); b.call(this.funcs.bfi32!) })
      case 'lop3':
        if (A[0]?.kind === 'pair') return this.fail('lop3 with a predicate output')
        return wr(A[0], 'i32', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); rd(A[3], 'i32'); rd(A[4], 'i32'); b.call(this.funcs.lop3!) })
      case 'prmt': {
        const f = this.funcs[`prmt${ins.mode ?? ''}`]
        if (f === undefined) return this.fail(`prmt mode .${ins.mode}`)
        return wr(A[0], 'i32', () => { rd(A[1], 'i32'); rd(A[2], 'i32'); rd(A[3], 'i32'); b.call(f) })
      }
      case 'testp': {
        // testp.op.f32/f64 on the magnitude's bits (as emit-instruction.ts tests the value): unsigned compares
        // against the bits of infinity and of the smallest normal
        if (t !== 'f32' && t !== 'f64') return this.fail(`testp of type .${t}`)
        const m = ins.mode
        const test = t === 'f64'
          ? { rd: Op.i64_reinterpret_f64, mask: () => b.i64(0x7fffffffffffffffn).op(Op.i64_and), k: (v: bigint) => b.i64(v), inf: 0x7ff0000000000000n, min: 0x0010000000000000n,
            lt: Op.i64_lt_u, le: Op.i64_le_u, gt: Op.i64_gt_u, eq: Op.i64_eq, sub: Op.i64_sub }
          : { rd: Op.i32_reinterpret_f32, mask: () => b.i32(0x7fffffff).op(Op.i32_and), k: (v: bigint) => b.i32(Number(BigInt.asIntN(32, v))), inf: 0x7f800000n, min: 0x00800000n,
            lt: Op.i32_lt_u, le: Op.i32_le_u, gt: Op.i32_gt_u, eq: Op.i32_eq, sub: Op.i32_sub }
        if (!['finite', 'infinite', 'number', 'notanumber', 'normal', 'subnormal'].includes(m ?? '')) return this.fail(`testp.${m}`)
        return wr(A[0], 'pred', () => {
          rd(A[1], t as 'f32' | 'f64'); b.op(test.rd); test.mask()
          switch (m) {
            case 'finite': test.k(test.inf); b.op(test.lt); break
            case 'infinite': test.k(test.inf); b.op(test.eq); break
            case 'number': test.k(test.inf); b.op(test.le); break
            case 'notanumber': test.k(test.inf); b.op(test.gt); break
            // min ≤ |x| < inf, and 0 < |x| < min, each as one unsigned compare after a subtraction
            case 'normal': test.k(test.min); b.op(test.sub); test.k(test.inf - test.min); b.op(test.lt); break
            default: test.k(1n); b.op(test.sub); test.k(test.min - 1n); b.op(test.lt)
          }
        })
      }
      case 'copysign':
        // copysign.f d, a, b: b's magnitude with a's sign (numeric.ts copysign: a NaN's sign bit counts)
        if (t === 'f32') return wr(A[0], 'f32', () => { rd(A[2], 'f32'); rd(A[1], 'f32'); b.op(Op.f32_copysign) })
        if (t === 'f64') return wr(A[0], 'f64', () => { rd(A[2], 'f64'); rd(A[1], 'f64'); b.op(Op.f64_copysign) })
        return this.fail(`copysign of type .${t}`)
      case 'setp': return this.setp(ins)
      case 'selp': {
        const d = this.cls(A[0])
        let kk = kindOfType(t) ?? this.fail(`selp of type .${t}`)
        if (t === 'b32' || t === 'u32' || t === 's32') kk = d === 'f32' ? 'f32' : 'i32'
        if (t === 'b64' || t === 'u64' || t === 's64') kk = d === 'f64' ? 'f64' : 'i64'
        return wr(A[0], kk, () => { rd(A[1], kk); rd(A[2], kk); rd(A[3], 'pred'); b.op(Op.select) })
      }
      case 'cvt': return this.cvt(ins)
      case 'rcp': case 'sqrt': case 'rsqrt': case 'sin': case 'cos': case 'lg2': case 'ex2': case 'tanh': {
        const approx = ins.flags.approx === true
        if (!approx && !rn) {
          if (ins.op !== 'rcp' && ins.op !== 'sqrt') return this.fail('a directed rounding mode')
          const w = t === 'f32' ? '32' : t === 'f64' ? '64' : this.fail(`${ins.op} of type .${t}`)
          return wr(A[0], t as 'f32' | 'f64', () => {
            if (ins.op === 'rcp') b.f64(1)
            if (t === 'f32') { f32In(A[1]); b.op(Op.f64_promote_f32) } else rd(A[1], 'f64')
            if (ins.op === 'sqrt') b.f64(0)
            b.f64(0)
            this.directed(w, ins.op === 'rcp' ? 'div' : 'sqrt', ins.rounding!)
            if (t === 'f32') { b.op(Op.f32_demote_f64); if (ftz) b.call(this.helpers.ftz) }
          })
        }
        if (t === 'f32') {
          return wr(A[0], 'f32', () => {
            switch (ins.op) {
              case 'rcp': b.f32bits(0x3f800000); f32In(A[1]); b.op(Op.f32_div); break
              case 'sqrt': f32In(A[1]); b.op(Op.f32_sqrt); break
              case 'rsqrt': b.f64(1); f32In(A[1]); b.op(Op.f64_promote_f32).op(Op.f64_sqrt).op(Op.f64_div).op(Op.f32_demote_f64); break
              default: {
                f32In(A[1]); b.op(Op.f64_promote_f32)
                if (ins.op === 'ex2') b.call(this.helpers.ex2)
                else if (ins.op === 'lg2') b.call(this.helpers.lg2)
                else if (ins.op === 'sin' || ins.op === 'cos') b.i32(ins.op === 'cos' ? 1 : 0).call(this.helpers.trig)
                else b.call(this.helpers.tanh)
                b.op(Op.f32_demote_f64)
              }
            }
            if (ftz) b.call(this.helpers.ftz)
          })
        }
        if (t === 'f64') {
          // rcp.approx{.ftz}.f64 as the JavaScript tier computes it: 1/x, correctly rounded (within the ISA's bound)
          return wr(A[0], 'f64', () => {
            switch (ins.op) {
              case 'rcp': b.f64(1); rd(A[1], 'f64'); b.op(Op.f64_div); break
              case 'sqrt': rd(A[1], 'f64'); b.op(Op.f64_sqrt); break
              case 'rsqrt': b.f64(1); rd(A[1], 'f64'); b.op(Op.f64_sqrt).op(Op.f64_div); break
              default: return this.fail(`${ins.op}.f64`)
            }
          })
        }
        return this.fail(`${ins.op} of type .${t}`)
      }
      case 'ret': case 'exit': this.endThread(); return
      case 'wmma':
        if (ins.mode !== 'mma') return this.wmmaMove(ins)
        if (this.plan && collectiveOf(ins)) return
        return this.fail('a collective outside the thread-loop plan')
      case 'bar': case 'barrier': case 'shfl': case 'vote': case 'activemask': case 'elect': case 'redux': case 'match':
      case 'mma': case 'ldmatrix': case 'stmatrix': case 'movmatrix':
        // a thread-loop kernel's collectives: the loops end there, and the writer gathers their inputs and
        // hands out their results (gather, scatter); nothing runs at the instruction itself
        if (this.plan && collectiveOf(ins)) return
        return this.fail('a collective outside the thread-loop plan')
      case 'trap': this.fault(6, () => b.f64(0)); return
      case 'membar': case 'fence': case 'nanosleep': case 'prefetch': case 'prefetchu': case 'pmevent': case 'brkpt': case 'discard': case 'applypriority': case 'griddepcontrol': case 'setmaxnreg':
        return
      case 'atom': case 'red': return this.atomic(ins)
      case 'cp': return this.cpAsync(ins)
      case 'call': return this.call(ins)
      case 'shf': {
        // funnel shift of b:a (numeric.ts shf): n = c & 31 (.wrap) or min(c, 32) (.clamp, unsigned)
        if (t !== 'b32') return this.fail(`shf of type .${t}`)
        const n = this.tmp('shn', 'i64')
        this.rd(A[3], 'i32')
        if (ins.flags.clamp) { const c = this.tmp('shc', 'i32'); b.set(c).get(c).i32(32).get(c).i32(32).op(Op.i32_lt_u).op(Op.select) } else b.i32(31).op(Op.i32_and)
        b.op(Op.i64_extend_i32_u).set(n)
        return this.wr(A[0], 'i32', () => {
          this.rd(A[2], 'i32'); b.op(Op.i64_extend_i32_u).i64(32n).op(Op.i64_shl)
          this.rd(A[1], 'i32'); b.op(Op.i64_extend_i32_u).op(Op.i64_or)
          if (ins.mode === 'l') b.get(n).op(Op.i64_shl).i64(32n).op(Op.i64_shr_u)
          else b.get(n).op(Op.i64_shr_u)
          b.op(Op.i32_wrap_i64)
        })
      }
      default: return this.fail(`${ins.op} has no WebAssembly lowering yet`)
    }
  }

  /** Calls numeric.ts fop32/fop64 for `op` with a directed rounding mode on the three f64 values on the stack
   *  (exact, as the JS tier computes it). */
  private directed(w: '32' | '64', op: string, mode: string): void {
    const f = this.funcs[`fop${w}${op}${mode}`]
    if (f === undefined) return this.fail(`.${mode} ${op}`)
    this.b.call(f)
  }

  /** fma.rn.f64 of the three f64 values on the stack: the CPU's fused multiply-add where relaxed SIMD has
   *  one (relaxedMaddFused), else the JavaScript tier's exact helper. */
  private fma64(): void {
    const b = this.b
    if (!this.helpers.fused64) { b.call(this.funcs.fma64); return }
    const z = this.tmp('dz', 'f64'), y = this.tmp('dy', 'f64')
    b.set(z).set(y).simd(SimdOp.f64x2_splat).get(y).simd(SimdOp.f64x2_splat).get(z).simd(SimdOp.f64x2_splat)
    b.simd(SimdOp.f64x2_relaxed_madd).simdLane(SimdOp.f64x2_extract_lane, 0)
  }

  /** fma.rn.f32 of the three f32 values on the stack, inline (the module's helper, defineHelpers, as code
   *  here: the engine does not inline calls between wasm functions, and a tiled matmul is all fma). */
  private fma32(): void {
    const b = this.b
    const z = this.tmp('fz', 'f32'), y = this.tmp('fy', 'f32'), x = this.tmp('fx', 'f32')
    if (this.helpers.fused32) {
      // the CPU's fused multiply-add (relaxedMaddFused)
      b.set(z).set(y).simd(SimdOp.f32x4_splat).get(y).simd(SimdOp.f32x4_splat).get(z).simd(SimdOp.f32x4_splat)
      b.simd(SimdOp.f32x4_relaxed_madd).simdLane(SimdOp.f32x4_extract_lane, 0)
      return
    }
    const fs = this.tmp('fs', 'f64')
    b.set(z).set(y).set(x)
    // x·y is exact in binary64 (24 + 24 bits), so s = x·y + z is rounded once; rounding s to binary32 then
    // gives the correctly rounded fma unless s lies exactly on a binary32 midpoint (its 29 bits below
    // binary32's precision are 1000…0), where the first rounding may have made the tie, or is below the
    // normal binary32 range (coarser spacing) and not 0: those take the exact helper
    b.get(x).op(Op.f64_promote_f32).get(y).op(Op.f64_promote_f32).op(Op.f64_mul).get(z).op(Op.f64_promote_f32).op(Op.f64_add).tee(fs)
    b.op(Op.i64_reinterpret_f64).i64(0x1fffffffn).op(Op.i64_and).i64(0x10000000n).op(Op.i64_ne)
    b.get(fs).op(Op.f64_abs).f64(2 ** -126).op(Op.f64_ge).get(fs).f64(0).op(Op.f64_eq).op(Op.i32_or).op(Op.i32_and)
    b.begin('if', 'f32').get(fs).op(Op.f32_demote_f64).else()
    b.get(x).op(Op.f64_promote_f32).get(y).op(Op.f64_promote_f32).get(z).op(Op.f64_promote_f32).call(this.funcs.fma32).op(Op.f32_demote_f64).end()
  }

  /** The high 32 bits of a 32×32 product. */
  private mulHi32(x: IrOperand | undefined, y: IrOperand | undefined, signed: boolean): void {
    const b = this.b
    const ext = signed ? Op.i64_extend_i32_s : Op.i64_extend_i32_u
    this.rd(x, 'i32'); b.op(ext)
    this.rd(y, 'i32'); b.op(ext)
    b.op(Op.i64_mul).i64(32n).op(signed ? Op.i64_shr_s : Op.i64_shr_u).op(Op.i32_wrap_i64)
  }

  /** The high 64 bits of a 64×64 product (numeric.ts mulhi64), from 32-bit limbs: the unsigned high part,
   *  then for a signed product minus b where a < 0 and minus a where b < 0 (mod 2^64). */
  private mulHi64(x: IrOperand | undefined, y: IrOperand | undefined, signed: boolean): void {
    const b = this.b
    const a = this.tmp('ha', 'i64'), c = this.tmp('hb', 'i64'), lh = this.tmp('hlh', 'i64'), hl = this.tmp('hhl', 'i64'), mid = this.tmp('hmid', 'i64')
    const M = 0xffffffffn
    this.rd(x, 'i64'); b.set(a)
    this.rd(y, 'i64'); b.set(c)
    const lo = (v: number) => b.get(v).i64(M).op(Op.i64_and)
    const hi = (v: number) => b.get(v).i64(32n).op(Op.i64_shr_u)
    lo(a); hi(c); b.op(Op.i64_mul).set(lh)
    hi(a); lo(c); b.op(Op.i64_mul).set(hl)
    // (lo a · lo b) >> 32 + low halves of the cross products
    lo(a); lo(c); b.op(Op.i64_mul).i64(32n).op(Op.i64_shr_u)
    b.get(lh).i64(M).op(Op.i64_and).op(Op.i64_add)
    b.get(hl).i64(M).op(Op.i64_and).op(Op.i64_add).set(mid)
    hi(a); hi(c); b.op(Op.i64_mul)
    b.get(lh).i64(32n).op(Op.i64_shr_u).op(Op.i64_add)
    b.get(hl).i64(32n).op(Op.i64_shr_u).op(Op.i64_add)
    b.get(mid).i64(32n).op(Op.i64_shr_u).op(Op.i64_add)
    if (signed) {
      b.get(c).i64(0n).get(a).i64(0n).op(Op.i64_lt_s).op(Op.select).op(Op.i64_sub)
      b.get(a).i64(0n).get(c).i64(0n).op(Op.i64_lt_s).op(Op.select).op(Op.i64_sub)
    }
  }

  /** add.cc / addc(.cc) / sub.cc / subc(.cc) / mad.lo.cc / madc.{lo,hi}(.cc) with the carry flag in a local
   *  (emit-instruction.ts carry): carry out of an unsigned sum, borrow out of a difference. */
  private carry(ins: Instruction): void {
    const b = this.b, A = ins.operands, t = ins.type ?? ''
    const CF = this.tmp('CF', 'i32')
    const setCC = ins.flags.cc === true
    const useC = ins.op === 'addc' || ins.op === 'subc' || ins.op === 'madc'
    const isSub = ins.op === 'sub' || ins.op === 'subc'
    const isMad = ins.op === 'mad' || ins.op === 'madc'
    if (isMad && ins.part !== 'lo' && ins.part !== 'hi') return this.fail(`${ins.op} without .lo or .hi`)
    if (t === 'u64' || t === 's64' || t === 'b64') {
      const x = this.tmp('cx64', 'i64'), y = this.tmp('cy64', 'i64'), s1 = this.tmp('cs64', 'i64'), c1 = this.tmp('cc1', 'i32')
      if (isMad) {
        if (ins.part === 'hi') this.mulHi64(A[1], A[2], false)
        else { this.rd(A[1], 'i64'); this.rd(A[2], 'i64'); b.op(Op.i64_mul) }
        b.set(x); this.rd(A[3], 'i64'); b.set(y)
      } else { this.rd(A[1], 'i64'); b.set(x); this.rd(A[2], 'i64'); b.set(y) }
      if (isSub) {
        // borrow: a < b, or a − b = 0 with a borrow in
        b.get(x).get(y).op(Op.i64_lt_u).set(c1)
        b.get(x).get(y).op(Op.i64_sub).set(s1)
        if (useC) { b.get(s1).op(Op.i64_eqz).get(CF).op(Op.i32_and).get(c1).op(Op.i32_or).set(c1); b.get(s1).get(CF).op(Op.i64_extend_i32_u).op(Op.i64_sub).set(s1) }
      } else {
        b.get(x).get(y).op(Op.i64_add).tee(s1).get(x).op(Op.i64_lt_u).set(c1)
        if (useC) { b.get(s1).i64(-1n).op(Op.i64_eq).get(CF).op(Op.i32_and).get(c1).op(Op.i32_or).set(c1); b.get(s1).get(CF).op(Op.i64_extend_i32_u).op(Op.i64_add).set(s1) }
      }
      if (setCC) b.get(c1).set(CF)
      return this.wr(A[0], 'i64', () => { b.get(s1) })
    }
    if (t !== 'u32' && t !== 's32' && t !== 'b32') return this.fail(`carry arithmetic on .${t}`)
    const u = this.tmp('cu', 'i64')
    if (isMad) {
      if (ins.part === 'hi') this.mulHi32(A[1], A[2], t === 's32'); else { this.rd(A[1], 'i32'); this.rd(A[2], 'i32'); b.op(Op.i32_mul) }
      b.op(Op.i64_extend_i32_u)
      this.rd(A[3], 'i32'); b.op(Op.i64_extend_i32_u).op(Op.i64_add)
    } else {
      this.rd(A[1], 'i32'); b.op(Op.i64_extend_i32_u)
      this.rd(A[2], 'i32'); b.op(Op.i64_extend_i32_u).op(isSub ? Op.i64_sub : Op.i64_add)
    }
    if (useC) b.get(CF).op(Op.i64_extend_i32_u).op(isSub ? Op.i64_sub : Op.i64_add)
    b.set(u)
    if (setCC) { b.get(u); if (isSub) b.i64(0n).op(Op.i64_lt_s); else b.i64(32n).op(Op.i64_shr_u).op(Op.i64_eqz).op(Op.i32_eqz); b.set(CF) }
    this.wr(A[0], 'i32', () => { b.get(u).op(Op.i32_wrap_i64) })
  }

  /** An i64 on the stack clamped to int32 (numeric.ts satS32). */
  private satS32(): void {
    const b = this.b
    const x = this.tmp('x', 'i64')
    b.tee(x).i64(2147483647n).get(x).i64(2147483647n).op(Op.i64_lt_s).op(Op.select).tee(x)
    b.i64(-2147483648n).get(x).i64(-2147483648n).op(Op.i64_gt_s).op(Op.select).op(Op.i32_wrap_i64)
  }

  private mov(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const b = this.b
    const src = A[1], dst = A[0]
    if (src?.kind === 'vec') {
      const it = src.items
      if (t === 'b64' && it.length === 2) return this.wr(dst, 'i64', () => { this.rd(it[0], 'u32'); b.op(Op.i64_extend_i32_u); this.rd(it[1], 'u32'); b.op(Op.i64_extend_i32_u).i64(32n).op(Op.i64_shl).op(Op.i64_or) })
      if (t === 'b32' && it.length === 2) return this.wr(dst, 'i32', () => { this.rd(it[0], 'u16'); this.rd(it[1], 'u16'); b.i32(16).op(Op.i32_shl).op(Op.i32_or) })
      return this.fail('this vector mov')
    }
    if (dst?.kind === 'vec') {
      const it = dst.items
      if (t === 'b64' && it.length === 2) {
        const x = this.tmp('x', 'i64')
        this.rd(src, 'i64'); b.set(x)
        this.wr(it[0], 'i32', () => b.get(x).op(Op.i32_wrap_i64))
        this.wr(it[1], 'i32', () => b.get(x).i64(32n).op(Op.i64_shr_u).op(Op.i32_wrap_i64))
        return
      }
      if (t === 'b32' && it.length === 2) {
        const x = this.tmp('x', 'i32')
        this.rd(src, 'i32'); b.set(x)
        this.wr(it[0], 'u16', () => b.get(x).i32(0xffff).op(Op.i32_and))
        this.wr(it[1], 'u16', () => b.get(x).i32(16).op(Op.i32_shr_u))
        return
      }
      return this.fail('this vector mov')
    }
    const d = this.cls(dst)
    if (!d) return this.fail('mov destination is not a register')
    let kk = kindOfType(t) ?? this.fail(`mov of type .${t}`)
    if (t === 'b32' || t === 'u32' || t === 's32') kk = d === 'f32' ? 'f32' : 'i32'
    if (t === 'b64' || t === 'u64' || t === 's64') kk = d === 'f64' ? 'f64' : 'i64'
    const pv = src?.kind === 'sym' ? this.k.frame.vars.get(src.name) : undefined
    if (pv?.v.space === 'param') {
      // a parameter's address (emit-js.ts symAddr): where it is in the heap, FB + its offset (LB + it for a
      // call sequence's variable in the thread's local memory); ld.param through it checks [PB, PE)
      if (kk !== 'i64' && kk !== 'i32') return this.fail('a parameter\'s address as a float')
      return this.wr(dst, kk, () => {
        this.b.get(this.k.frame.localParams.has(pv.v.name) ? this.L.LB! : 2).i32(pv.off).op(Op.i32_add)
        if (kk === 'i64') this.b.op(Op.i64_extend_i32_u)
      })
    }
    this.wr(dst, kk, () => this.rd(src, kk))
  }

  private cvta(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const to = ins.flags.to === true
    const space = ins.space ?? 'global'
    const b = this.b
    if (t === 'u32') {
      if (space === 'global' || space === 'const') return this.wr(A[0], 'u32', () => this.rd(A[1], 'u32'))
      return this.fail('32-bit cvta of a window')
    }
    const base = space === 'shared' ? GSH : space === 'local' ? GLO : space === 'param' ? GPA : 0n
    if (base === 0n) return this.wr(A[0], 'i64', () => this.rd(A[1], 'i64'))
    if (space === 'local') {
      // generic local addresses are thread-relative windows: GLO + (LB - LB0) + offset
      return this.wr(A[0], 'i64', () => {
        this.rd(A[1], 'i64')
        b.i64(GLO).get(this.L.LB!).get(this.L.LB0!).op(Op.i32_sub).op(Op.i64_extend_i32_u).op(Op.i64_add)
        b.op(to ? Op.i64_sub : Op.i64_add)
      })
    }
    if (space === 'param') return this.fail('cvta of the parameter space')
    return this.wr(A[0], 'i64', () => { this.rd(A[1], 'i64'); b.i64(base).op(to ? Op.i64_sub : Op.i64_add) })
  }

  // --- memory ---

  /** Calls the imported fault (it throws) with the current instruction's row, the address `push` leaves
   *  (f64) and the space. */
  private fault(space: number, push: () => void): void {
    this.b.i32(this.row())
    push()
    this.b.i32(space).call(this.funcs.fault).op(Op.unreachable)
  }

  /** Computes the address of operand o in `space` for an access of n bytes and leaves the checked heap
   *  address in local a32. */
  private address(o: IrOperand | undefined, space: Space, n: number, slot: number): void {
    const b = this.b, L = this.L
    if (o?.kind !== 'addr') return this.fail('expected an address operand')
    const base = o.base
    if (base?.kind === 'sym') {
      const v = this.k.frame.vars.get(base.name)
      if (v?.v.space === 'param' && !this.fn.params.some((p) => p.name === base.name)) {
        // a return value or a call sequence's variable, in the frame (FB + its offset) or, for kernels whose
        // threads take turns at collectives, in the thread's local memory (Frame.localParams): checked here
        if (space !== 'param') return this.fail('the address of a parameter in another state space')
        if (o.offset < 0 || o.offset + n > v.v.size) return this.fail('an access past its parameter')
        b.get(this.k.frame.localParams.has(base.name) ? L.LB! : 2).i32(v.off + o.offset).op(Op.i32_add).set(L.a32!)
        return
      }
      if (v?.v.space === 'param') {
        if (space !== 'param') return this.fail('the address of a parameter in another state space')
        // a kernel parameter: FB + its offset, inside the launch's parameter frame, which holds every
        // parameter the kernel declares (the launch checks the size): no check to make
        if (o.offset < 0 || o.offset + n > v.v.size) return this.fail('an access past its parameter')
        b.get(2).i32(v.off + o.offset).op(Op.i32_add).set(L.a32!)
        return
      }
    }
    this.addrValue(o)
    b.set(L.a!)
    this.checkAddress(space, n, slot, o)
  }

  /** Pushes the address of operand o as an i64 (emit-js.ts addrExpr: 32-bit registers zero-extended,
   *  wrapping with the offset). Not for parameters (address() reads those in their frame). */
  private addrValue(o: IrOperand | undefined): void {
    const b = this.b, L = this.L
    if (o?.kind !== 'addr') return this.fail('expected an address operand')
    const base = o.base
    if (!base) b.i64(BigInt(o.offset))
    else if (base.kind === 'reg') {
      const c = this.classes[base.id]
      if (c === 'i64') { b.get(this.regs[base.id]!); if (o.offset) b.i64(BigInt(o.offset)).op(Op.i64_add) }
      else if (c === 'i32' || c === 'i16') { b.get(this.regs[base.id]!); if (o.offset) b.i32(o.offset).op(Op.i32_add); b.op(Op.i64_extend_i32_u) }
      else return this.fail('address register must be an integer')
    } else if (base.kind === 'sym') {
      if (this.k.frame.vars.get(base.name)?.v.space === 'param') return this.fail('the address of a parameter as a value')
      if (this.frameLocal(base.name) !== undefined) {
        b.get(L.LF!).op(Op.i64_extend_i32_u).i64(BigInt(this.frameLocal(base.name)! + o.offset)).op(Op.i64_add)
      } else {
        const s = this.symAddr(base.name)
        if (s === undefined) return this.fail(`unknown symbol ${base.name}`)
        b.i64(BigInt(s + o.offset))
      }
    } else return this.fail('bad address')
  }

  /** Checks the address in local `a` (i64) for an access of n bytes in `space` and leaves the heap address in
   *  a32. `o`, the instruction's address operand, lets the check use what is known of it (a 32-bit base
   *  register, a window run, a hoisted range); without it (an address the writer computed: a wmma element,
   *  an ldmatrix row) the full test is made, `slot` naming the access among the instruction's. */
  private checkAddress(space: Space, n: number, slot: number, o?: Extract<IrOperand, { kind: 'addr' }>): void {
    const b = this.b, L = this.L
    const base = o?.base
    const al = n >= 16 ? 15 : n - 1
    const a = L.a!
    const misaligned = () => { if (al > 0) b.get(a).op(Op.i32_wrap_i64).i32(al).op(Op.i32_and).op(Op.i32_or) }
    switch (space) {
      case 'shared': case 'local': {
        const run = o ? this.windows.at.get(this.cur.index) : undefined
        if (run) this.windowRun(run)
        if (space === 'shared' && o) {
          // every thread of the block at inv + off + c·tx: one test of both ends against the window per block
          if (this.hoistSite(o, space, n, al, slot, ['i32', 'i64'])) return
        }
        // a = window offset: 0 ≤ a ≤ size − n, aligned; the heap byte is at window base + a
        const size = space === 'shared' ? L.SHN! : L.LSZ!
        if (base?.kind === 'reg' && this.classes[base.id] !== 'i64') {
          // a 32-bit offset (zero-extended, so never negative): rotated right by the alignment's bits, so that
          // a misaligned offset becomes larger than any limit, then one unsigned compare against the window's
          // limit for this size, computed once per call (windowLimit)
          const a32 = L.a32!
          b.get(a).op(Op.i32_wrap_i64).set(a32)
          if (!this.windows.covered.has(this.cur.index)) {
            b.get(a32)
            if (al > 0) b.i32(Math.log2(al + 1)).op(Op.i32_rotr)
            b.get(this.windowLimit(space, n, al)).op(Op.i32_ge_u)
            b.open('if'); this.fault(space === 'shared' ? 1 : 2, () => b.get(a32).op(Op.f64_convert_i32_u)); b.end()
          }
          b.get(a32).get(space === 'shared' ? L.SB! : L.LB!).op(Op.i32_add).set(a32)
          return
        }
        b.get(a).i64(0n).op(Op.i64_lt_s)
        b.get(a).get(size).i32(n).op(Op.i32_sub).op(Op.i64_extend_i32_s).op(Op.i64_gt_s).op(Op.i32_or)
        misaligned()
        b.open('if'); this.fault(space === 'shared' ? 1 : 2, () => b.get(a).op(Op.f64_convert_i64_s)); b.end()
        b.get(a).op(Op.i32_wrap_i64).get(space === 'shared' ? L.SB! : L.LB!).op(Op.i32_add).set(L.a32!)
        return
      }
      case 'param': {
        b.get(a).get(L.PB!).op(Op.i64_extend_i32_u).op(Op.i64_lt_s)
        b.get(a).get(L.PE!).i32(n).op(Op.i32_sub).op(Op.i64_extend_i32_u).op(Op.i64_gt_s).op(Op.i32_or)
        misaligned()
        b.open('if'); this.fault(3, () => b.get(a).op(Op.f64_convert_i64_s)); b.end()
        b.get(a).op(Op.i32_wrap_i64).set(L.a32!)
        return
      }
      default: {
        // global, const, generic: the site's cached range [lo, hi) (i64; both 0, empty, at the start of a
        // call) with the distance d to the heap byte; a miss asks the instance (granule check, generic
        // windows, fault)
        const key = `${this.cur.index}:${slot}`
        if (o && this.hoistSite(o, space, n, al, slot, ['i64'])) return
        const s = this.siteLocals(key)
        b.get(a).get(s.lo).op(Op.i64_lt_s)
        b.get(a).get(s.hi).op(Op.i64_ge_s).op(Op.i32_or)
        misaligned()
        b.open('if', 'i32')
        b.i32(this.row()).get(a).op(Op.f64_convert_i64_s).i32(n).i32(SPACES.indexOf(space)).call(this.funcs.miss)
        b.gget(this.globals.RL!).sat(SatOp.i64_trunc_sat_f64_s).set(s.lo)
        b.gget(this.globals.RH!).f64(1).op(Op.f64_add).sat(SatOp.i64_trunc_sat_f64_s).set(s.hi)
        b.gget(this.globals.RD!).set(s.d)
        b.else()
        b.get(a).op(Op.i32_wrap_i64).get(s.d).op(Op.i32_add)
        b.end()
        b.set(L.a32!)
      }
    }
  }

  /** add/sub/mul/fma on f16, bf16 and their packed pairs, as the JavaScript tier computes them
   *  (emit-instruction.ts half): each half widened exactly (f16ToNum), the operation in binary64, rounded
   *  once to the half type (numToF16; fma through numeric.ts fmaH/fmaB), .sat as a clamp of that. */
  private half(ins: Instruction): void {
    const b = this.b, A = ins.operands, t = ins.type!
    if (ins.flags.relu || ins.flags.ftz || (ins.rounding && ins.rounding !== 'rn')) return this.fail(`${[ins.op, ...ins.qualifiers].join('.')} is not lowered`)
    const bf = t.startsWith('bf')
    const from = this.funcs[bf ? 'bf16ToNum' : 'f16ToNum']!, to = this.funcs[bf ? 'numToBf16' : 'numToF16']!
    const isFma = ins.op === 'fma' || ins.op === 'mad'
    const n = isFma ? 3 : 2
    // one half: the operands' halves pushed as binary64 by x(k); leaves the result's 16 bits
    const one = (x: (k: number) => void) => {
      for (let k = 0; k < n; k++) x(k)
      if (isFma) b.call(this.funcs[bf ? 'fmaB' : 'fmaH']!)
      else b.op(ins.op === 'add' ? Op.f64_add : ins.op === 'sub' ? Op.f64_sub : Op.f64_mul).call(to)
      if (ins.flags.sat) b.call(from).call(this.helpers.sat).call(to)
    }
    if (t === 'f16' || t === 'bf16') return this.wr(A[0], 'u16', () => one((k) => { this.rd(A[1 + k], 'u16'); b.call(from) }))
    const h = [0, 1, 2].slice(0, n).map((k) => this.tmp(`hh${k}`, 'i32'))
    this.wr(A[0], 'i32', () => {
      h.forEach((l, k) => { this.rd(A[1 + k], 'i32'); b.set(l) })
      one((k) => { b.get(h[k]!).i32(0xffff).op(Op.i32_and).call(from) })
      one((k) => { b.get(h[k]!).i32(16).op(Op.i32_shr_u).call(from) })
      b.i32(16).op(Op.i32_shl).op(Op.i32_or)
    })
  }

  /** cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size}: copied at once (emit-instruction.ts),
   *  bytes past src-size zero, so commit_group/wait_group/wait_all have nothing left to wait for. */
  private cpAsync(ins: Instruction): void {
    const b = this.b, A = ins.operands
    if (!ins.flags.async) return this.fail(`${[ins.op, ...ins.qualifiers].join('.')} is not lowered`)
    if (ins.mode === 'commit_group' || ins.mode === 'wait_group' || ins.mode === 'wait_all') return
    if (ins.flags.bulk || ins.hints?.includes('mbarrier')) return this.fail('bulk copies and mbarrier arrivals of cp.async are not lowered')
    const sz = A[2]?.kind === 'imm' && A[2].imm.kind === 'int' ? Number(A[2].imm.value) : this.fail('cp.async size must be an immediate')
    if (![4, 8, 16].includes(sz)) return this.fail(`cp.async of ${sz} bytes`)
    const dst = this.tmp('cpd', 'i32'), n = this.tmp('cpn', 'i32')
    if (A[3]) this.rd(A[3], 'i32'); else b.i32(sz)
    b.set(n)
    this.address(A[0], 'shared', sz, 0)
    b.get(this.L.a32!).set(dst)
    this.address(A[1], 'global', sz, 1)
    for (let k = 0; k < sz; k++) {
      b.get(dst).get(this.L.a32!).mem(Op.i32_load8_u, 0, k).i32(0).i32(k).get(n).op(Op.i32_lt_u).op(Op.select).mem(Op.i32_store8, 0, k)
    }
  }

  /** The checks of a run's window accesses (window-groups.ts), at its first: each group's hull of offsets at
   *  once; if one does not fit, every access of the run in program order (cold), which faults at the first
   *  that would have. */
  private windowRun(all: readonly WindowGroup[]): void {
    const b = this.b
    // in the unchecked copy, accesses the per-block test covers (hoistSite) need no check here
    const groups = this.unchecked ? all.map((g) => ({ ...g, members: g.members.filter((m) => !this.hoistedShared(m.index)) })).filter((g) => g.members.length) : all
    if (!groups.length) return
    const v = this.tmp('wv', 'i32'), bad = this.tmp('wbad', 'i32')
    const rot = (al: number) => { if (al > 0) b.i32(Math.log2(al + 1)).op(Op.i32_rotr) }
    b.i32(0).set(bad)
    for (const g of groups) {
      const lo = Math.min(...g.members.map((m) => m.offset))
      const span = Math.max(...g.members.map((m) => m.offset + m.n)) - lo
      b.get(this.regs[g.reg]!).i32(lo).op(Op.i32_add)
      rot(g.al)
      b.get(this.windowLimit(g.space, span, g.al)).op(Op.i32_ge_u).get(bad).op(Op.i32_or).set(bad)
    }
    b.get(bad).begin('if')
    const members = groups.flatMap((g) => g.members.map((m) => ({ ...m, g }))).sort((x, y) => x.index - y.index)
    for (const m of members) {
      b.get(this.regs[m.g.reg]!).i32(m.offset).op(Op.i32_add).tee(v)
      rot(m.g.al)
      b.get(this.windowLimit(m.g.space, m.n, m.g.al)).op(Op.i32_ge_u)
      b.begin('if')
      b.i32(this.k.rowBase + m.index).get(v).op(Op.f64_convert_i32_u).i32(m.g.space === 'shared' ? 1 : 2).call(this.funcs.fault).op(Op.unreachable)
      b.end()
    }
    // (a hull that does not fit has a member that does not, so a fault above ends the call)
    b.end()
  }

  /** Whether window access `index` is one hoistSite takes (shared, every thread at inv + c·tx). */
  private hoistedShared(index: number): boolean {
    const ins = this.fn.instructions[index]!
    if (ins.space !== 'shared') return false
    const o = ins.operands[ins.op === 'ld' ? 1 : 0]
    if (o?.kind !== 'addr') return false
    const n = typeSize(ins.type ?? '')! * (ins.vector ?? 1)
    const cur = this.cur
    this.cur = ins
    try { return this.hoistable(o, n >= 16 ? 15 : n - 1, ['i32', 'i64']) !== undefined } finally { this.cur = cur }
  }

  /** The local holding, for accesses of n bytes aligned to al + 1 in the shared or local window, the bound
   *  the rotated offset must stay under: size ≥ n ? ((size − n) >> log2(al + 1)) + 1 : 0 (0: every access
   *  faults). Computed at entry, once per call (write). */
  private windowLimit(space: 'shared' | 'local', n: number, al: number): number {
    const key = `${space}:${n}:${al}`
    let l = this.limits.get(key)
    if (l === undefined) { l = this.b.local('i32'); this.limits.set(key, l) }
    return l
  }

  private load(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const space = (ins.space ?? 'generic') as Space
    const vec = ins.vector ?? 1
    const sz = typeSize(t)
    if (!sz || t === 'b128' || sz > 8) return this.fail(`load of type .${t}`)
    const am = A[1]
    const hp = this.paramLocal(ins)
    if (hp) return this.wr(A[0], hp.kind, () => this.b.get(hp.local))
    if (!SPACES.includes(space)) return this.fail(`loads from .${space}`)
    this.address(A[1], space, sz * vec, 0)
    const dsts = vec > 1 ? (A[0]?.kind === 'vec' ? A[0].items : this.fail('vector load needs a vector destination')) : [A[0]!]
    dsts.forEach((dst, i) => {
      if (dst.kind === 'sink') return
      const mt = this.memType(t, dst)
      this.wr(dst, this.loadKind(mt), () => this.loadAt(mt, i * sz))
    })
  }

  /** A kernel parameter's load, loaded once per call (kernel parameters are read-only for the whole launch:
   *  emit-js.ts hoistParam): its local and kind, or undefined for any other load. */
  private paramLocal(ins: Instruction): { local: number; kind: WKind; f32: boolean } | undefined {
    const A = ins.operands, t = ins.type ?? '', am = A[1]
    const sz = typeSize(t)
    if (this.fn.kind !== 'entry' || ins.space !== 'param' || (ins.vector ?? 1) !== 1 || !sz || am?.kind !== 'addr' || am.base?.kind !== 'sym' || A[0]?.kind !== 'reg') return undefined
    const pv = this.k.frame.vars.get(am.base.name)
    if (pv?.v.space !== 'param' || !this.fn.params.some((p) => p.name === pv.v.name) || am.offset < 0 || am.offset + sz > pv.v.size) return undefined
    const mt = this.memType(t, A[0])
    const key = `${pv.off + am.offset}:${mt}`
    let p = this.params.get(key)
    if (!p) { p = { local: this.b.local(wasmType(this.loadKind(mt))), off: pv.off + am.offset, mt }; this.params.set(key, p) }
    const kind = this.loadKind(mt)
    return { local: p.local, kind, f32: kind === 'f32' }
  }

  private store(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const space = (ins.space === 'const' ? 'generic' : ins.space ?? 'generic') as Space
    const vec = ins.vector ?? 1
    const sz = typeSize(t)
    if (!sz || t === 'b128' || sz > 8) return this.fail(`store of type .${t}`)
    if (!SPACES.includes(space)) return this.fail(`stores to .${space}`)
    const srcs = vec > 1 ? (A[1]?.kind === 'vec' ? A[1].items : this.fail('vector store needs a vector source')) : [A[1]!]
    this.address(A[0], space, sz * vec, 0)
    srcs.forEach((src, i) => {
      const mt = this.memType(t, src)
      this.b.get(this.L.a32!)
      const k = this.loadKind(mt)
      // a narrow store writes the low bits of whatever the operand holds
      this.rd(src, k === 'u8' || k === 's8' || k === 'u16' || k === 's16' ? (src.kind === 'imm' ? (k === 'u8' || k === 's8' ? 'u8' : 'u16') : 'i32') : k)
      this.storeAt(mt, i * sz)
    })
  }

  /** The memory type of a load/store of type t for register operand o (js-values.ts memTypeFor). */
  private memType(t: string, o: IrOperand): string {
    return memTypeFor(t, this.cls(o))
  }

  private loadKind(t: string): WKind {
    switch (t) {
      case 'u8': case 'b8': return 'u8'
      case 's8': return 's8'
      case 'u16': case 'b16': case 'f16': case 'bf16': return 'u16'
      case 's16': return 's16'
      case 'u32': case 'b32': return 'u32'
      case 's32': case 'f16x2': case 'bf16x2': return 'i32'
      case 'f32': return 'f32'
      case 'f64': return 'f64'
      case 'u64': case 's64': case 'b64': return 'i64'
    }
    return this.fail(`memory type .${t}`)
  }

  private loadAt(t: string, off: number): void {
    const b = this.b
    b.get(this.L.a32!)
    switch (this.loadKind(t)) {
      case 'u8': b.mem(Op.i32_load8_u, 0, off); return
      case 's8': b.mem(Op.i32_load8_s, 0, off); return
      case 'u16': b.mem(Op.i32_load16_u, 1, off); return
      case 's16': b.mem(Op.i32_load16_s, 1, off); return
      case 'u32': case 'i32': b.mem(Op.i32_load, 2, off); return
      case 'f32': b.mem(Op.f32_load, 2, off); return
      case 'f64': b.mem(Op.f64_load, 3, off); return
      case 'i64': b.mem(Op.i64_load, 3, off); return
      default: return this.fail(`load of .${t}`)
    }
  }

  private storeAt(t: string, off: number): void {
    const b = this.b
    switch (this.loadKind(t)) {
      case 'u8': case 's8': b.mem(Op.i32_store8, 0, off); return
      case 'u16': case 's16': b.mem(Op.i32_store16, 1, off); return
      case 'u32': case 'i32': b.mem(Op.i32_store, 2, off); return
      case 'f32': b.mem(Op.f32_store, 2, off); return
      case 'f64': b.mem(Op.f64_store, 3, off); return
      case 'i64': b.mem(Op.i64_store, 3, off); return
      default: return this.fail(`store of .${t}`)
    }
  }

  private atomic(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const b = this.b
    const space = (ins.space ?? 'generic') as Space
    if (space !== 'global' && space !== 'generic' && space !== 'shared') return this.fail(`atomics on .${space}`)
    if (ins.vector) return this.fail('vector atomics')
    const isAtom = ins.op === 'atom'
    const [dst, am, v, c] = isAtom ? [A[0], A[1], A[2], A[3]] : [undefined, A[0], A[1], undefined]
    const op = ins.atomOp
    const is64 = t === 'u64' || t === 's64' || t === 'b64'
    const is32 = t === 'u32' || t === 's32' || t === 'b32'
    const n = is64 ? 8 : 4
    const simple: Record<string, [number, number]> = {
      add: [AtomicOp.i32_atomic_rmw_add, AtomicOp.i64_atomic_rmw_add], and: [AtomicOp.i32_atomic_rmw_and, AtomicOp.i64_atomic_rmw_and],
      or: [AtomicOp.i32_atomic_rmw_or, AtomicOp.i64_atomic_rmw_or], xor: [AtomicOp.i32_atomic_rmw_xor, AtomicOp.i64_atomic_rmw_xor],
      exch: [AtomicOp.i32_atomic_rmw_xchg, AtomicOp.i64_atomic_rmw_xchg],
    }
    const finish = (k: WKind) => { if (dst) { const r = this.tmp('atom', wasmType(k)); b.set(r); this.wr(dst, k, () => b.get(r)) } else b.op(Op.drop) }
    if ((is32 || is64) && op && simple[op]) {
      this.address(am, space, n, 0)
      b.get(this.L.a32!)
      this.rd(v, is64 ? 'i64' : 'i32')
      b.atomic(simple[op][is64 ? 1 : 0], is64 ? 3 : 2)
      return finish(is64 ? 'i64' : 'i32')
    }
    if ((is32 || is64) && op === 'cas') {
      this.address(am, space, n, 0)
      b.get(this.L.a32!)
      this.rd(v, is64 ? 'i64' : 'i32')
      this.rd(c, is64 ? 'i64' : 'i32')
      b.atomic(is64 ? AtomicOp.i64_atomic_rmw_cmpxchg : AtomicOp.i32_atomic_rmw_cmpxchg, is64 ? 3 : 2)
      return finish(is64 ? 'i64' : 'i32')
    }
    if ((is32 && (op === 'min' || op === 'max' || op === 'inc' || op === 'dec')) || (t === 'f32' && op === 'add')) {
      // compare-exchange loop (as the JS tier's Atomics loop): old, new = f(old, v), until the exchange takes
      this.address(am, space, n, 0)
      const old = this.tmp('old', 'i32'), nv = this.tmp('nv', 'i32'), val = this.tmp('val', t === 'f32' ? 'f32' : 'i32')
      this.rd(v, t === 'f32' ? 'f32' : 'i32')
      b.set(val)
      b.get(this.L.a32!).atomic(AtomicOp.i32_atomic_load, 2).set(old)
      const again = b.open('loop')
      const x = () => b.get(old)
      switch (op) {
        case 'add': x(); b.op(Op.f32_reinterpret_i32).get(val).op(Op.f32_add); this.f32Bits(); break
        case 'min': case 'max': {
          const s = t === 's32'
          x(); b.get(val); x(); b.get(val)
          b.op(op === 'min' ? (s ? Op.i32_lt_s : Op.i32_lt_u) : (s ? Op.i32_gt_s : Op.i32_gt_u)).op(Op.select)
          break
        }
        case 'inc': b.i32(0); x(); b.i32(1).op(Op.i32_add); x(); b.get(val).op(Op.i32_ge_u).op(Op.select); break
        case 'dec': b.get(val); x(); b.i32(1).op(Op.i32_sub); x(); b.op(Op.i32_eqz); x(); b.get(val).op(Op.i32_gt_u).op(Op.i32_or).op(Op.select); break
      }
      b.set(nv)
      b.get(this.L.a32!).get(old).get(nv).atomic(AtomicOp.i32_atomic_rmw_cmpxchg, 2)
      const seen = this.tmp('seen', 'i32')
      b.tee(seen).get(old).op(Op.i32_ne)
      b.begin('if').get(seen).set(old).br(again).end()
      b.end()
      if (dst) this.wr(dst, t === 'f32' ? 'f32' : 'i32', () => { b.get(old); if (t === 'f32') b.op(Op.f32_reinterpret_i32) })
      return
    }
    if (((op === 'min' || op === 'max') && (t === 'u64' || t === 's64')) || (op === 'add' && t === 'f64')) {
      // the same loop on 64 bits
      this.address(am, space, 8, 0)
      const old = this.tmp('old64', 'i64'), nv = this.tmp('nv64', 'i64'), val = this.tmp('val64', 'i64'), seen = this.tmp('seen64', 'i64')
      if (t === 'f64') { this.rd(v, 'f64'); b.op(Op.i64_reinterpret_f64) } else this.rd(v, 'i64')
      b.set(val)
      b.get(this.L.a32!).atomic(AtomicOp.i64_atomic_load, 3).set(old)
      const again = b.open('loop')
      const s = t === 's64'
      if (op === 'add') b.get(old).op(Op.f64_reinterpret_i64).get(val).op(Op.f64_reinterpret_i64).op(Op.f64_add).op(Op.i64_reinterpret_f64)
      else b.get(old).get(val).get(old).get(val).op(op === 'min' ? (s ? Op.i64_lt_s : Op.i64_lt_u) : (s ? Op.i64_gt_s : Op.i64_gt_u)).op(Op.select)
      b.set(nv)
      b.get(this.L.a32!).get(old).get(nv).atomic(AtomicOp.i64_atomic_rmw_cmpxchg, 3)
      b.tee(seen).get(old).op(Op.i64_ne)
      b.begin('if').get(seen).set(old).br(again).end()
      b.end()
      if (dst) this.wr(dst, t === 'f64' ? 'f64' : 'i64', () => { b.get(old); if (t === 'f64') b.op(Op.f64_reinterpret_i64) })
      return
    }
    return this.fail(`${ins.op}.${op}.${t} is not lowered`)
  }

  // --- integer division, shifts, min/max ---

  private divRem(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const b = this.b
    const div = ins.op === 'div'
    const rn = ins.rounding === undefined || ins.rounding === 'rn'
    if ((t === 'f32' || t === 'f64') && !rn && !ins.flags.approx && !ins.flags.full) {
      const ftz = ins.flags.ftz === true && t === 'f32'
      return this.wr(A[0], t, () => {
        for (const o of [A[1], A[2]]) { if (t === 'f32') { this.rd(o, 'f32'); if (ftz) b.call(this.helpers.ftz); b.op(Op.f64_promote_f32) } else this.rd(o, 'f64') }
        b.f64(0)
        this.directed(t === 'f32' ? '32' : '64', 'div', ins.rounding!)
        if (t === 'f32') { b.op(Op.f32_demote_f64); if (ftz) b.call(this.helpers.ftz) }
      })
    }
    if (t === 'f32') {
      const ftz = ins.flags.ftz === true
      return this.wr(A[0], 'f32', () => {
        this.rd(A[1], 'f32'); if (ftz) b.call(this.helpers.ftz)
        this.rd(A[2], 'f32'); if (ftz) b.call(this.helpers.ftz)
        b.op(Op.f32_div)
        if (ftz) b.call(this.helpers.ftz)
      })
    }
    if (t === 'f64') return this.wr(A[0], 'f64', () => { this.rd(A[1], 'f64'); this.rd(A[2], 'f64'); b.op(Op.f64_div) })
    const signed = t.startsWith('s')
    const is64 = t === 'u64' || t === 's64'
    if (t === 's16' || t === 'u16') {
      // on the 16-bit values as numbers (the JS tier's divs32/divu32 on them), the result's low 16 bits
      const x = this.tmp('dx', 'i32'), y = this.tmp('dy', 'i32')
      this.rd(A[1], signed ? 's16' : 'u16'); b.set(x)
      this.rd(A[2], signed ? 's16' : 'u16'); b.set(y)
      return this.wr(A[0], 'u16', () => {
        b.get(y).op(Op.i32_eqz).begin('if', 'i32')
        if (div) b.i32(-1); else b.get(x)
        b.else().get(x).get(y).op(div ? (signed ? Op.i32_div_s : Op.i32_div_u) : (signed ? Op.i32_rem_s : Op.i32_rem_u)).end()
        b.i32(0xffff).op(Op.i32_and)
      })
    }
    if (!is64 && t !== 's32' && t !== 'u32') return this.fail(`${ins.op} of type .${t}`)
    // PTX on NVIDIA GPUs: x / 0 = all ones, x % 0 = x (numeric.ts); MIN / -1 wraps, MIN % -1 = 0
    const vt: ValType = is64 ? 'i64' : 'i32'
    const x = this.tmp('dx', vt), y = this.tmp('dy', vt)
    this.rd(A[1], vt); b.set(x)
    this.rd(A[2], vt); b.set(y)
    const O = is64
      ? { eqz: Op.i64_eqz, sub: Op.i64_sub, div: signed ? Op.i64_div_s : Op.i64_div_u, rem: signed ? Op.i64_rem_s : Op.i64_rem_u, eq: Op.i64_eq }
      : { eqz: Op.i32_eqz, sub: Op.i32_sub, div: signed ? Op.i32_div_s : Op.i32_div_u, rem: signed ? Op.i32_rem_s : Op.i32_rem_u, eq: Op.i32_eq }
    const c = (v: number) => (is64 ? b.i64(BigInt(v)) : b.i32(v))
    this.wr(A[0], vt, () => {
      b.get(y).op(O.eqz)
      b.open('if', vt)
      if (div) c(-1); else b.get(x)
      b.else()
      if (signed) {
        b.get(y); c(-1); b.op(O.eq)
        b.open('if', vt)
        if (div) { c(0); b.get(x).op(O.sub) } else c(0)
        b.else()
        b.get(x).get(y).op(div ? O.div : O.rem)
        b.end()
      } else b.get(x).get(y).op(div ? O.div : O.rem)
      b.end()
    })
  }

  private shift(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const b = this.b
    const shl = ins.op === 'shl'
    const signed = t.startsWith('s')
    const is64 = t === 'u64' || t === 's64' || t === 'b64'
    const n = this.tmp('sh', 'i32')
    if (is64) {
      return this.wr(A[0], 'i64', () => {
        this.rd(A[2], 'u32'); b.set(n)
        // counts past 63: 0, or the sign for an arithmetic shift (PTX clamps the count)
        this.rd(A[1], 'i64')
        b.get(n).i32(63).get(n).i32(63).op(Op.i32_lt_u).op(Op.select).op(Op.i64_extend_i32_u)
        b.op(shl ? Op.i64_shl : signed ? Op.i64_shr_s : Op.i64_shr_u)
        if (!signed || shl) b.i64(0n).get(n).i32(64).op(Op.i32_lt_u).op(Op.select)
      })
    }
    if (t === 'b32' || t === 'u32' || t === 's32') {
      return this.wr(A[0], 'i32', () => {
        this.rd(A[2], 'u32'); b.set(n)
        this.rd(A[1], 'i32')
        b.get(n).i32(31).get(n).i32(31).op(Op.i32_lt_u).op(Op.select)
        b.op(shl ? Op.i32_shl : signed ? Op.i32_shr_s : Op.i32_shr_u)
        if (!signed || shl) b.i32(0).get(n).i32(32).op(Op.i32_lt_u).op(Op.select)
      })
    }
    if (t === 'b16' || t === 'u16' || t === 's16') {
      return this.wr(A[0], 'u16', () => {
        this.rd(A[2], 'u32'); b.set(n)
        this.rd(A[1], signed ? 's16' : 'u16')
        b.get(n).i32(15).get(n).i32(15).op(Op.i32_lt_u).op(Op.select)
        b.op(shl ? Op.i32_shl : signed ? Op.i32_shr_s : Op.i32_shr_u)
        if (!signed || shl) b.i32(0).get(n).i32(16).op(Op.i32_lt_u).op(Op.select)
        b.i32(0xffff).op(Op.i32_and)
      })
    }
    return this.fail(`shift of type .${t}`)
  }

  private minMax(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const b = this.b
    const mx = ins.op === 'max'
    if (t === 'f32' || t === 'f64') {
      const vt: ValType = t
      const ftz = ins.flags.ftz === true && t === 'f32'
      const x = this.tmp('mx', vt), y = this.tmp('my', vt)
      return this.wr(A[0], vt, () => {
        this.rd(A[1], vt); if (ftz) b.call(this.helpers.ftz); b.set(x)
        this.rd(A[2], vt); if (ftz) b.call(this.helpers.ftz); b.set(y)
        const O = t === 'f32'
          ? { ne: Op.f32_ne, min: Op.f32_min, max: Op.f32_max }
          : { ne: Op.f64_ne, min: Op.f64_min, max: Op.f64_max }
        // numeric.ts fmin/fmax: a NaN operand is ignored (both NaN: NaN), -0 < +0 — as wasm's min/max order
        // zeros; .NaN propagates NaN, as wasm's min/max do
        const m = () => b.get(x).get(y).op(mx ? O.max : O.min)
        if (ins.flags.nan) m()
        else {
          // x NaN ? y : (y NaN ? x : min(x, y))
          b.get(y)
          b.get(x); m(); b.get(y).get(y).op(O.ne).op(Op.select)
          b.get(x).get(x).op(O.ne).op(Op.select)
        }
        if (ftz) b.call(this.helpers.ftz)
      })
    }
    const is64 = t === 'u64' || t === 's64'
    const signed = t.startsWith('s')
    if (is64 || t === 'u32' || t === 's32' || t === 'b32' || t === 'u16' || t === 's16') {
      const k: WKind = is64 ? 'i64' : t === 'u16' ? 'u16' : t === 's16' ? 's16' : 'i32'
      const vt = wasmType(k)
      const x = this.tmp('ix', vt), y = this.tmp('iy', vt)
      return this.wr(A[0], k, () => {
        this.rd(A[1], k); b.tee(x)
        this.rd(A[2], k); b.tee(y)
        b.get(x).get(y)
        const lt = is64 ? (signed ? Op.i64_lt_s : Op.i64_lt_u) : (signed ? Op.i32_lt_s : Op.i32_lt_u)
        const gt = is64 ? (signed ? Op.i64_gt_s : Op.i64_gt_u) : (signed ? Op.i32_gt_s : Op.i32_gt_u)
        b.op(mx ? gt : lt).op(Op.select)
      })
    }
    return this.fail(`${ins.op} of type .${t}`)
  }

  private setp(ins: Instruction): void {
    const A = ins.operands
    const t = ins.type ?? ''
    const b = this.b
    const cmp = ins.cmp ?? this.fail('setp without a comparison')
    // f16/bf16: both widened exactly to binary64 (f16ToNum, as the JavaScript tier compares them)
    const halfT = t === 'f16' || t === 'bf16'
    const isF = t === 'f32' || t === 'f64' || halfT
    const is64 = t === 'u64' || t === 's64' || t === 'b64'
    const signedCmp = t.startsWith('s') && !['lo', 'ls', 'hi', 'hs'].includes(cmp)
    let kk: WKind
    if (halfT) kk = 'f64'
    else if (t === 'f32' || t === 'f64') kk = t
    else if (is64) kk = 'i64'
    else if (t === 'u32' || t === 'b32' || t === 's32') kk = 'i32'
    else if (t === 'u16' || t === 'b16') kk = signedCmp ? 's16' : 'u16'
    else if (t === 's16') kk = 's16'
    else return this.fail(`setp of type .${t}`)
    const vt = wasmType(kk)
    const x = this.tmp('cx', vt), y = this.tmp('cy', vt)
    const operand = (o: IrOperand | undefined) => {
      if (halfT) { this.rd(o, 'u16'); b.call(this.funcs[t === 'f16' ? 'f16ToNum' : 'bf16ToNum']!); return }
      this.rd(o, kk); if (ins.flags.ftz && t === 'f32') b.call(this.helpers.ftz)
    }
    operand(A[1]); b.set(x)
    operand(A[2]); b.set(y)
    const c = this.tmp('cmp', 'i32')
    if (isF) {
      const F = kk === 'f32'
        ? { eq: Op.f32_eq, ne: Op.f32_ne, lt: Op.f32_lt, le: Op.f32_le, gt: Op.f32_gt, ge: Op.f32_ge }
        : { eq: Op.f64_eq, ne: Op.f64_ne, lt: Op.f64_lt, le: Op.f64_le, gt: Op.f64_gt, ge: Op.f64_ge }
      const nan = () => { b.get(x).get(x).op(F.ne).get(y).get(y).op(F.ne).op(Op.i32_or) }
      const un = cmp.endsWith('u')
      const base = un ? cmp.slice(0, -1) : cmp
      if (cmp === 'num') { nan(); b.op(Op.i32_eqz) } else if (cmp === 'nan') nan()
      else {
        const o = F[base as keyof typeof F]
        if (o === undefined) return this.fail(`comparison .${cmp}`)
        b.get(x).get(y).op(o)
        if (base === 'ne') { nan(); b.op(Op.i32_eqz).op(Op.i32_and) }
        if (un) { nan(); b.op(Op.i32_or) }
      }
    } else {
      const uns = !signedCmp
      const I = is64
        ? { eq: Op.i64_eq, ne: Op.i64_ne, lt: uns ? Op.i64_lt_u : Op.i64_lt_s, le: uns ? Op.i64_le_u : Op.i64_le_s, gt: uns ? Op.i64_gt_u : Op.i64_gt_s, ge: uns ? Op.i64_ge_u : Op.i64_ge_s }
        : { eq: Op.i32_eq, ne: Op.i32_ne, lt: uns ? Op.i32_lt_u : Op.i32_lt_s, le: uns ? Op.i32_le_u : Op.i32_le_s, gt: uns ? Op.i32_gt_u : Op.i32_gt_s, ge: uns ? Op.i32_ge_u : Op.i32_ge_s }
      const map: Record<string, keyof typeof I> = { eq: 'eq', ne: 'ne', lt: 'lt', le: 'le', gt: 'gt', ge: 'ge', lo: 'lt', ls: 'le', hi: 'gt', hs: 'ge' }
      const o = map[cmp]
      if (!o) return this.fail(`comparison .${cmp}`)
      b.get(x).get(y).op(I[o])
    }
    b.set(c)
    const [dst, q] = A[0]!.kind === 'pair' ? [A[0]!.first, A[0]!.second] : [A[0]!, undefined]
    if (ins.boolOp) {
      const pc = this.tmp('pc', 'i32')
      this.rd(A[3], 'pred'); b.set(pc)
      const bo = ins.boolOp === 'and' ? Op.i32_and : ins.boolOp === 'or' ? Op.i32_or : Op.i32_xor
      this.wr(dst, 'pred', () => b.get(c).get(pc).op(bo))
      if (q) this.wr(q, 'pred', () => b.get(c).op(Op.i32_eqz).get(pc).op(bo))
      return
    }
    this.wr(dst, 'pred', () => b.get(c))
    if (q) this.wr(q, 'pred', () => b.get(c).op(Op.i32_eqz))
  }

  private cvt(ins: Instruction): void {
    const A = ins.operands
    const [dt, st] = ins.types as [string, string]
    const b = this.b
    if (!dt || !st) return this.fail('cvt needs two types')
    const irnd = ins.intRounding
    const frnd = ins.rounding ?? 'rn'
    const ftz = ins.flags.ftz === true
    const sat = ins.flags.sat === true
    if (dt === 'tf32' && st === 'f32' && !ins.flags.relu && !irnd && !ftz && !sat) {
      // cvt.{rna,rn,rz}{.satfinite}.tf32.f32 (numeric.ts numToTf32): the low 13 bits rounded off in the bits;
      // NaN and infinities pass; .satfinite turns an overflow into the largest finite tf32 of its sign
      const mode = ins.rounding ?? 'rna'
      if (mode !== 'rna' && mode !== 'rn' && mode !== 'rz') return this.fail(`cvt.${mode}.tf32.f32`)
      const x = this.tmp('tfx', 'i32'), low = this.tmp('tfl', 'i32'), u = this.tmp('tfu', 'i32')
      return this.wr(A[0], 'f32', () => {
        this.rd(A[1], 'f32'); b.op(Op.i32_reinterpret_f32).set(x)
        b.get(x).i32(0x1fff).op(Op.i32_and).set(low)
        b.get(x).i32(~0x1fff).op(Op.i32_and).set(u)
        if (mode !== 'rz') {
          b.get(u).i32(0x2000).op(Op.i32_add).get(u)
          if (mode === 'rna') b.get(low).i32(0x1000).op(Op.i32_ge_u)
          else b.get(low).i32(0x1000).op(Op.i32_gt_u).get(low).i32(0x1000).op(Op.i32_eq).get(u).i32(0x2000).op(Op.i32_and).i32(0).op(Op.i32_ne).op(Op.i32_and).op(Op.i32_or)
          b.op(Op.select).set(u)
        }
        if (ins.flags.satfinite) {
          b.get(x).i32(0x80000000 | 0).op(Op.i32_and).i32(0x7f7fe000).op(Op.i32_or).get(u)
          b.get(u).i32(0x7fffffff).op(Op.i32_and).i32(0x7f800000).op(Op.i32_eq).op(Op.select).set(u)
        }
        // NaN and infinities (every exponent bit set) as they are
        b.get(x).get(u).get(x).i32(0x7f800000).op(Op.i32_and).i32(0x7f800000).op(Op.i32_eq).op(Op.select)
        b.op(Op.f32_reinterpret_i32)
      })
    }
    if (ins.flags.relu || ins.flags.satfinite) return this.fail('cvt .relu/.satfinite')
    if ((dt === 'f16x2' || dt === 'bf16x2') && st === 'f32' && frnd === 'rn' && !irnd && !ftz && !sat) {
      // cvt.rn.f16x2.f32 d, a, b: d = {a → high half, b → low half}, each rounded once (numeric.ts numToF16)
      const to = this.funcs[dt === 'f16x2' ? 'numToF16' : 'numToBf16']!
      return this.wr(A[0], 'i32', () => {
        this.rd(A[2], 'f32'); b.op(Op.f64_promote_f32).call(to)
        this.rd(A[1], 'f32'); b.op(Op.f64_promote_f32).call(to).i32(16).op(Op.i32_shl).op(Op.i32_or)
      })
    }
    const isF = (x: string) => x === 'f32' || x === 'f64'
    const isI = (x: string) => /^[sub](8|16|32|64)$/.test(x)
    const bits = (x: string) => Number(x.slice(1))
    const round = (vt: 'f32' | 'f64', mode: string | undefined) => {
      const o = vt === 'f32'
        ? { rni: Op.f32_nearest, rzi: Op.f32_trunc, rmi: Op.f32_floor, rpi: Op.f32_ceil }
        : { rni: Op.f64_nearest, rzi: Op.f64_trunc, rmi: Op.f64_floor, rpi: Op.f64_ceil }
      if (mode) b.op(o[mode as keyof typeof o])
    }
    const readF = () => { this.rd(A[1], st as 'f32' | 'f64'); if (st === 'f32' && ftz) b.call(this.helpers.ftz) }
    const half = (x: string) => x === 'f16' || x === 'bf16'
    if ((half(dt) && (isF(st) || isI(st))) || (half(st) && (isF(dt) || isI(dt)))) {
      if (irnd && half(dt)) return this.fail(`cvt.${irnd} to .${dt}`)
      if (half(dt) && frnd !== 'rn') return this.fail('a directed rounding mode')
      // through the JS tier's exact helpers (numeric.ts numToF16/f16ToNum and the bf16 pair)
      const toNum = () => {
        if (half(st)) { this.rd(A[1], 'u16'); b.call(this.funcs[st === 'f16' ? 'f16ToNum' : 'bf16ToNum']!) } else if (st === 'f32') { readF(); b.op(Op.f64_promote_f32) } else if (st === 'f64') readF()
        else {
          const sb = bits(st), sg = st.startsWith('s')
          if (sb === 64) { this.rd(A[1], 'i64'); b.op(sg ? Op.f64_convert_i64_s : Op.f64_convert_i64_u) } else { this.rd(A[1], sb === 32 ? (sg ? 'i32' : 'u32') : sb === 16 ? (sg ? 's16' : 'u16') : sg ? 's8' : 'u8'); b.op(sg || sb < 32 ? Op.f64_convert_i32_s : Op.f64_convert_i32_u) }
          if (sb === 64) return this.fail('cvt from 64-bit integers to half precision')
        }
      }
      if (half(dt)) return this.wr(A[0], 'u16', () => { toNum(); if (sat) b.call(this.helpers.sat); b.call(this.funcs[dt === 'f16' ? 'numToF16' : 'numToBf16']!) })
      if (dt === 'f32') return this.wr(A[0], 'f32', () => { toNum(); round('f64', irnd); b.op(Op.f32_demote_f64); if (ftz) b.call(this.helpers.ftz); if (sat) b.op(Op.f64_promote_f32).call(this.helpers.sat).op(Op.f32_demote_f64) })
      if (dt === 'f64') return this.wr(A[0], 'f64', () => { toNum(); round('f64', irnd); if (sat) b.call(this.helpers.sat) })
      const db = bits(dt), sgd = dt.startsWith('s')
      if (db < 32) return this.fail(`cvt to .${dt}`)
      return this.wr(A[0], db === 64 ? 'i64' : 'i32', () => { toNum(); round('f64', irnd ?? 'rzi'); b.sat(db === 64 ? (sgd ? SatOp.i64_trunc_sat_f64_s : SatOp.i64_trunc_sat_f64_u) : (sgd ? SatOp.i32_trunc_sat_f64_s : SatOp.i32_trunc_sat_f64_u)) })
    }
    if (isF(dt) && isF(st)) {
      if (dt === 'f32') {
        const dir = st === 'f64' && frnd !== 'rn' && !irnd
        return this.wr(A[0], 'f32', () => {
          readF()
          if (dir) { const f = this.funcs[`cvt32${frnd}`]; if (f === undefined) return this.fail(`cvt.${frnd}`); b.call(f).op(Op.f32_demote_f64) }
          else if (irnd) { if (st === 'f64') { round('f64', irnd); b.op(Op.f32_demote_f64) } else round('f32', irnd) } else if (st === 'f64') b.op(Op.f32_demote_f64)
          if (ftz) b.call(this.helpers.ftz)
          if (sat) b.op(Op.f64_promote_f32).call(this.helpers.sat).op(Op.f32_demote_f64)
        })
      }
      return this.wr(A[0], 'f64', () => {
        readF()
        if (st === 'f32') b.op(Op.f64_promote_f32)
        round('f64', irnd)
        if (sat) b.call(this.helpers.sat)
      })
    }
    if (isI(dt) && isF(st)) {
      const mode = irnd ?? 'rzi'
      const sg = dt.startsWith('s')
      const db = bits(dt)
      if (db < 32) return this.fail(`cvt to .${dt}`)
      return this.wr(A[0], db === 64 ? 'i64' : 'i32', () => {
        readF()
        if (st === 'f32') b.op(Op.f64_promote_f32)
        round('f64', mode)
        b.sat(db === 64 ? (sg ? SatOp.i64_trunc_sat_f64_s : SatOp.i64_trunc_sat_f64_u) : (sg ? SatOp.i32_trunc_sat_f64_s : SatOp.i32_trunc_sat_f64_u))
      })
    }
    if (isF(dt) && isI(st)) {
      if (frnd !== 'rn') return this.fail('a directed rounding mode')
      const sg = st.startsWith('s')
      const sb = bits(st)
      return this.wr(A[0], dt as 'f32' | 'f64', () => {
        if (sb === 64) {
          this.rd(A[1], 'i64')
          b.op(dt === 'f32' ? (sg ? Op.f32_convert_i64_s : Op.f32_convert_i64_u) : (sg ? Op.f64_convert_i64_s : Op.f64_convert_i64_u))
        } else {
          const kk: WKind = sb === 32 ? (sg ? 'i32' : 'u32') : sb === 16 ? (sg ? 's16' : 'u16') : sg ? 's8' : 'u8'
          this.rd(A[1], kk)
          const s = sg || sb < 32
          b.op(dt === 'f32' ? (s ? Op.f32_convert_i32_s : Op.f32_convert_i32_u) : (s ? Op.f64_convert_i32_s : Op.f64_convert_i32_u))
        }
        if (sat) { if (dt === 'f32') b.op(Op.f64_promote_f32).call(this.helpers.sat).op(Op.f32_demote_f64); else b.call(this.helpers.sat) }
      })
    }
    if (isI(dt) && isI(st)) {
      if (sat) return this.fail('cvt.sat between integers')
      const sb = bits(st), db = bits(dt)
      const ss = st.startsWith('s'), ds = dt.startsWith('s')
      const kk: WKind = sb === 64 ? 'i64' : sb === 32 ? (ss ? 'i32' : 'u32') : sb === 16 ? (ss ? 's16' : 'u16') : ss ? 's8' : 'u8'
      if (db === 64) return this.wr(A[0], 'i64', () => { this.rd(A[1], kk); if (kk !== 'i64') b.op(ss ? Op.i64_extend_i32_s : Op.i64_extend_i32_u) })
      const low = () => { this.rd(A[1], kk); if (kk === 'i64') b.op(Op.i32_wrap_i64) }
      if (db === 32) return this.wr(A[0], 'i32', low)
      if (db === 16) return this.wr(A[0], 'u16', () => { low(); b.i32(0xffff).op(Op.i32_and) })
      if (ds) return this.wr(A[0], 'i32', () => { low(); b.op(Op.i32_extend8_s) })
      return this.wr(A[0], 'i32', () => { low(); b.i32(0xff).op(Op.i32_and) })
    }
    return this.fail(`conversion .${dt}.${st}`)
  }
}
