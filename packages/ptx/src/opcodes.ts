// Opcodes and their qualifier rules (PTX ISA 9.x, "Instruction Set"). Each opcode lists which qualifiers
// it takes and what each one means (decode.ts records them as typed IR fields); a qualifier the opcode does
// not list is refused at decode, naming the PTX line, so a qualifier that changes results (`.relu`,
// `.xorsign`) can never be ignored by accident. What each opcode writes (its destination operands) is here
// too, for the analyses.
import type { BoolOp, Flags, MemorySemantics, ProductPart, Reduction, Rounding, Scope } from './ir.js'

export const OPCODES = [
  // integer and floating-point arithmetic
  'add', 'sub', 'addc', 'subc', 'mul', 'mad', 'madc', 'mul24', 'mad24', 'fma', 'div', 'rem', 'min', 'max', 'abs', 'neg',
  'sad', 'dp4a', 'dp2a', 'copysign', 'testp', 'rcp', 'sqrt', 'rsqrt', 'sin', 'cos', 'lg2', 'ex2', 'tanh',
  // logic, shifts, bit fields
  'and', 'or', 'xor', 'not', 'cnot', 'shl', 'shr', 'shf', 'popc', 'clz', 'brev', 'bfind', 'bfe', 'bfi', 'prmt', 'lop3',
  'szext', 'bmsk',
  // comparison, selection, conversion, data movement
  'setp', 'set', 'selp', 'slct', 'cvt', 'cvta', 'mov', 'isspacep',
  // memory
  'ld', 'ldu', 'st', 'atom', 'red', 'cp', 'prefetch', 'prefetchu', 'discard', 'applypriority', 'createpolicy',
  // control flow
  'bra', 'brx', 'call', 'ret', 'exit', 'trap', 'brkpt',
  // synchronization and warp collectives (collectives.ts)
  'bar', 'barrier', 'membar', 'fence', 'shfl', 'vote', 'match', 'redux', 'activemask', 'elect',
  // no effect on an emulated device
  'nanosleep', 'pmevent', 'griddepcontrol', 'setmaxnreg',
  // tensor cores (warp-wide: each lane holds a fragment) and asynchronous-copy barriers
  'wmma', 'mma', 'ldmatrix', 'stmatrix', 'movmatrix', 'mbarrier',
] as const

export type Opcode = (typeof OPCODES)[number]
const opcodeSet: ReadonlySet<string> = new Set(OPCODES)
export function isOpcode(s: string): s is Opcode { return opcodeSet.has(s) }

/** How the qualifiers of one opcode are read. */
export interface OpcodeRule {
  /** Type qualifiers (`.u32`, `.f16x2`). */
  types?: boolean
  /** State-space qualifiers it takes (`shared::cta` reads as `shared`). */
  spaces?: readonly string[]
  /** `.v2` / `.v4` / `.v8`. */
  vector?: boolean
  rounding?: readonly Rounding[]
  intRounding?: boolean
  cmp?: boolean
  boolOp?: readonly BoolOp[]
  part?: readonly ProductPart[]
  atomOp?: boolean
  reduction?: readonly Reduction[]
  /** The opcode's own one-of choice (Instruction.mode). */
  modes?: readonly string[]
  /** A mode given by pattern (mma's `m16n8k16`, ldmatrix's `m8n8`, `x4`). */
  shapes?: RegExp
  /** wmma's matrix qualifier (`.a`, `.b`, `.c`, `.d`). */
  fragments?: boolean
  layouts?: boolean
  sem?: readonly MemorySemantics[]
  scope?: readonly Scope[]
  /** Cache operators accepted as hints; `L1::…`/`L2::…` qualifiers too when `cacheHints` is set. */
  cache?: readonly string[]
  cacheHints?: boolean
  flags?: readonly (keyof Flags)[]
  /** Qualifiers accepted without a recorded meaning (fence proxy kinds, prefetch levels…). */
  accept?: readonly string[]
  /** Whether operand 0 is written (false: st, red, branches, barriers without a result). */
  writes?: boolean
}

const FR: readonly Rounding[] = ['rn', 'rz', 'rm', 'rp']
const MEM_SPACES = ['global', 'shared', 'shared::cta', 'shared::cluster', 'local', 'const', 'param', 'param::entry', 'param::func']
const LD_SEM: readonly MemorySemantics[] = ['weak', 'volatile', 'relaxed', 'acquire', 'mmio']
const ST_SEM: readonly MemorySemantics[] = ['weak', 'volatile', 'relaxed', 'release', 'mmio']
const ATOM_SEM: readonly MemorySemantics[] = ['relaxed', 'acquire', 'release', 'acq_rel']
const SCOPES: readonly Scope[] = ['cta', 'cluster', 'gpu', 'sys']
const TESTP = ['finite', 'infinite', 'number', 'notanumber', 'normal', 'subnormal']
const PRMT = ['f4e', 'b4e', 'rc8', 'ecl', 'ecr', 'rc16']

const arith = (flags: readonly (keyof Flags)[], more: Partial<OpcodeRule> = {}): OpcodeRule => ({ types: true, writes: true, flags, ...more })
const unary = (flags: readonly (keyof Flags)[] = ['approx', 'ftz'], more: Partial<OpcodeRule> = {}): OpcodeRule => ({ types: true, writes: true, flags, ...more })

export const OPCODE_RULES: Readonly<Record<Opcode, OpcodeRule>> = {
  add: arith(['ftz', 'sat', 'cc'], { rounding: FR }),
  sub: arith(['ftz', 'sat', 'cc'], { rounding: FR }),
  addc: arith(['cc']),
  subc: arith(['cc']),
  mul: arith(['ftz', 'sat'], { rounding: FR, part: ['lo', 'hi', 'wide'] }),
  mad: arith(['ftz', 'sat', 'cc'], { rounding: FR, part: ['lo', 'hi', 'wide'] }),
  madc: arith(['cc'], { part: ['lo', 'hi'] }),
  mul24: arith([], { part: ['lo', 'hi'] }),
  mad24: arith(['sat'], { part: ['lo', 'hi'] }),
  fma: arith(['ftz', 'sat', 'relu'], { rounding: FR }),
  div: arith(['ftz', 'approx', 'full'], { rounding: FR }),
  rem: arith([]),
  min: arith(['ftz', 'nan']),
  max: arith(['ftz', 'nan']),
  abs: arith(['ftz']),
  neg: arith(['ftz']),
  sad: arith([]),
  dp4a: arith([]),
  dp2a: arith([], { part: ['lo', 'hi'] }),
  copysign: arith([]),
  testp: arith([], { modes: TESTP }),
  rcp: unary(['approx', 'ftz'], { rounding: FR }),
  sqrt: unary(['approx', 'ftz'], { rounding: FR }),
  rsqrt: unary(),
  sin: unary(),
  cos: unary(),
  lg2: unary(),
  ex2: unary(),
  tanh: unary(),
  and: arith([]),
  or: arith([]),
  xor: arith([]),
  not: arith([]),
  cnot: arith([]),
  shl: arith([]),
  shr: arith([]),
  shf: arith(['clamp', 'wrap'], { modes: ['l', 'r'] }),
  popc: arith([]),
  clz: arith([]),
  brev: arith([]),
  bfind: arith(['shiftamt']),
  bfe: arith([]),
  bfi: arith([]),
  prmt: arith([], { modes: PRMT }),
  lop3: arith([]),
  szext: arith([], { modes: ['clamp', 'wrap'] }),
  bmsk: arith([], { modes: ['clamp', 'wrap'] }),
  setp: arith(['ftz'], { cmp: true, boolOp: ['and', 'or', 'xor'] }),
  set: arith(['ftz'], { cmp: true, boolOp: ['and', 'or', 'xor'] }),
  selp: arith([]),
  slct: arith(['ftz']),
  cvt: arith(['ftz', 'sat', 'satfinite', 'relu'], { rounding: ['rn', 'rz', 'rm', 'rp', 'rna', 'rs'], intRounding: true }),
  cvta: arith(['to'], { spaces: ['global', 'shared', 'shared::cta', 'shared::cluster', 'local', 'const', 'param', 'param::entry'] }),
  mov: arith([]),
  isspacep: { writes: true, spaces: ['global', 'shared', 'shared::cta', 'shared::cluster', 'local', 'const', 'param', 'param::entry'] },
  ld: arith(['nc'], { spaces: MEM_SPACES, vector: true, sem: LD_SEM, scope: SCOPES, cache: ['ca', 'cg', 'cs', 'lu', 'cv'], cacheHints: true }),
  ldu: arith([], { spaces: ['global'], vector: true }),
  st: { types: true, writes: false, spaces: MEM_SPACES, vector: true, sem: ST_SEM, scope: SCOPES, cache: ['wb', 'cg', 'cs', 'wt'], cacheHints: true },
  atom: arith(['noftz'], { spaces: ['global', 'shared', 'shared::cta', 'shared::cluster'], vector: true, atomOp: true, sem: ATOM_SEM, scope: SCOPES, cacheHints: true }),
  red: { types: true, writes: false, flags: ['noftz'], spaces: ['global', 'shared', 'shared::cta', 'shared::cluster'], vector: true, atomOp: true, sem: ATOM_SEM, scope: SCOPES, cacheHints: true },
  // cp.async.{ca,cg}.shared{::cta}.global [dst], [src], n; cp.async.commit_group / wait_group N / wait_all;
  // the bulk (TMA) and mbarrier forms decode, and the emulator refuses them
  cp: { types: true, writes: false, modes: ['commit_group', 'wait_group', 'wait_all'], flags: ['async', 'bulk'], spaces: ['shared', 'shared::cta', 'shared::cluster', 'global'], cache: ['ca', 'cg'], cacheHints: true, accept: ['mbarrier', 'arrive', 'noinc', 'complete_tx::bytes', 'bulk_group'] },
  prefetch: { writes: false, spaces: ['global', 'local'], accept: ['L1', 'L2', 'tensormap'], cacheHints: true },
  prefetchu: { writes: false, accept: ['L1'] },
  discard: { writes: false, spaces: ['global'], accept: ['L2'] },
  applypriority: { writes: false, spaces: ['global'], cacheHints: true },
  createpolicy: { types: true, writes: true, modes: ['fractional', 'range'], cacheHints: true },
  bra: { writes: false, flags: ['uni'] },
  brx: { writes: false, modes: ['idx'], flags: ['uni'] },
  call: { writes: false, flags: ['uni'] },
  ret: { writes: false, flags: ['uni'] },
  exit: { writes: false },
  trap: { writes: false },
  brkpt: { writes: false },
  // bar{.cta}.sync / bar.arrive / bar.red.{popc,and,or} / bar.warp.sync / barrier{.cta}.sync{.aligned}
  bar: { types: true, writes: false, modes: ['sync', 'arrive', 'red'], reduction: ['popc', 'and', 'or'], flags: ['warp', 'cta', 'cluster', 'aligned'] },
  barrier: { types: true, writes: false, modes: ['sync', 'arrive', 'red'], reduction: ['popc', 'and', 'or'], flags: ['warp', 'cta', 'cluster', 'aligned'] },
  membar: { writes: false, scope: ['cta', 'gl', 'sys'], accept: ['proxy', 'alias'] },
  fence: { writes: false, sem: ['sc', 'acq_rel', 'acquire', 'release'], scope: SCOPES, accept: ['proxy', 'alias', 'async', 'global', 'shared', 'shared::cta', 'shared::cluster', 'tensormap', 'generic', 'mbarrier_init', 'op_restrict', 'sync_restrict', 'to_proxykind', 'from_proxykind'] },
  shfl: arith(['sync'], { modes: ['up', 'down', 'bfly', 'idx'] }),
  vote: arith(['sync'], { modes: ['all', 'any', 'uni', 'ballot'] }),
  match: arith(['sync'], { modes: ['any', 'all'] }),
  redux: arith(['sync', 'abs', 'nan'], { reduction: ['add', 'min', 'max', 'and', 'or', 'xor'] }),
  activemask: arith([]),
  elect: { writes: true, flags: ['sync'] },
  nanosleep: { types: true, writes: false },
  pmevent: { writes: false, accept: ['mask'] },
  griddepcontrol: { writes: false, modes: ['launch_dependents', 'wait'] },
  setmaxnreg: { types: true, writes: false, modes: ['inc', 'dec'], flags: ['sync', 'aligned'] },
  // wmma.load.{a,b,c} / wmma.store.d / wmma.mma: .sync.aligned, the layout(s), the shape, an optional state
  // space (generic when absent), the type(s); wmma.mma on f64 takes a rounding (PTX ISA, "Warp Level Matrix
  // Multiply-Accumulate Instructions")
  wmma: { types: true, writes: true, modes: ['load', 'store', 'mma'], fragments: true, flags: ['sync', 'aligned', 'satfinite'], shapes: /^m\d+n\d+k\d+$/, layouts: true, spaces: ['global', 'shared', 'shared::cta'], rounding: FR },
  mma: { types: true, writes: true, flags: ['sync', 'aligned', 'satfinite'], shapes: /^m\d+n\d+k\d+$/, layouts: true, accept: ['kind::f8f6f4', 'kind::mxf8f6f4', 'block_scale', 'sp', 'ordered_metadata'] },
  ldmatrix: { types: true, writes: true, flags: ['sync', 'aligned', 'trans'], spaces: ['shared', 'shared::cta'], shapes: /^(m\d+n\d+|x[124])$/ },
  stmatrix: { types: true, writes: false, flags: ['sync', 'aligned', 'trans'], spaces: ['shared', 'shared::cta'], shapes: /^(m\d+n\d+|x[124])$/ },
  movmatrix: { types: true, writes: true, flags: ['sync', 'aligned', 'trans'], shapes: /^m\d+n\d+$/ },
  // mbarrier.{init,inval,arrive,arrive_drop,test_wait,try_wait,pending_count,complete_tx}, .expect_tx alone or
  // after arrive
  // (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"); which of them write
  // operand 0: writesFirstOperand
  mbarrier: {
    types: true, writes: true, modes: ['init', 'inval', 'arrive', 'arrive_drop', 'test_wait', 'try_wait', 'pending_count', 'complete_tx'],
    spaces: ['shared', 'shared::cta', 'shared::cluster'], sem: ['release', 'acquire', 'relaxed'], scope: ['cta', 'cluster'], flags: ['parity', 'noComplete', 'expect_tx'],
  },
}

/** True when `ins` writes its operand 0 (bar.red's result included; `call`'s returns are .param variables). */
export function writesFirstOperand(ins: { op: Opcode; mode?: string }): boolean {
  if (ins.op === 'bar' || ins.op === 'barrier') return ins.mode === 'red'
  if (ins.op === 'wmma') return ins.mode !== 'store'
  if (ins.op === 'mbarrier') return ins.mode === 'arrive' || ins.mode === 'arrive_drop' || ins.mode === 'test_wait' || ins.mode === 'try_wait' || ins.mode === 'pending_count'
  return OPCODE_RULES[ins.op].writes === true
}
