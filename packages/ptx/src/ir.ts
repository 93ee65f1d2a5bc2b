// The typed IR (decode.ts builds it from the AST). Data only: analyses annotate it from their own files
// (analysis/*.ts), code generators read it (the emulator's emit-js, the coming emit-wgsl) and never write
// it. Modelled on naga's IR (PTX ISA 9.x for the meaning of every field):
//
//   IrModule     variables + functions (+ the `.file` table for `.loc` positions)
//   IrFunction   registers (indexed; operands refer to them by id), parameters and local/shared/param
//                variables, a linear list of instructions, and labels as positions in that list
//   Instruction  an Opcode, every qualifier as a typed field (types, state space, vector width, rounding,
//                comparison, flags such as ftz/sat/approx, the opcode's mode such as shfl's `bfly`), a
//                guard predicate, and operands in PTX order
//   Operand      a register, a special register (%tid.x), a typed immediate, a symbol (the address of a
//                variable or a function), a label, an address [base+offset], a vector {a, b}, a pair a|p,
//                a negation, a call's argument list, or the sink `_`
//
// Immediates are values, never text: an integer literal keeps its exact (signed, unbounded) value, a
// `0f…`/`0d…` literal its IEEE bits, a decimal literal its number; the instruction's types say how to read
// them (immediates.ts).
import type { PtxError } from './errors.js'
import { writesFirstOperand, type Opcode } from './opcodes.js'
import type { PtxVariable, SourceLoc } from './parse.js'
import type { PtxType, StateSpace } from './types.js'

/** The special registers a kernel can read (PTX ISA, "Special Registers"). */
export const SPECIAL_REGISTERS = [
  '%tid.x', '%tid.y', '%tid.z', '%ntid.x', '%ntid.y', '%ntid.z',
  '%ctaid.x', '%ctaid.y', '%ctaid.z', '%nctaid.x', '%nctaid.y', '%nctaid.z',
  '%laneid', '%warpid', '%nwarpid', '%smid', '%nsmid', '%gridid',
  '%lanemask_eq', '%lanemask_lt', '%lanemask_le', '%lanemask_gt', '%lanemask_ge',
  '%clock', '%clock_hi', '%clock64', '%globaltimer', '%globaltimer_lo', '%globaltimer_hi',
  '%dynamic_smem_size', '%total_smem_size', '%aggr_smem_size',
  '%cluster_ctarank', '%cluster_nctarank', '%is_explicit_cluster',
  '%clusterid.x', '%clusterid.y', '%clusterid.z', '%nclusterid.x', '%nclusterid.y', '%nclusterid.z',
  '%cluster_ctaid.x', '%cluster_ctaid.y', '%cluster_ctaid.z', '%cluster_nctaid.x', '%cluster_nctaid.y', '%cluster_nctaid.z',
  // the block's reserved shared memory (sm_80+; cg::block_tile_memory's scratch is at %reserved_smem_offset_1)
  '%reserved_smem_offset_begin', '%reserved_smem_offset_end', '%reserved_smem_offset_cap', '%reserved_smem_offset_0', '%reserved_smem_offset_1',
  // driver-defined registers; %envreg1/%envreg2 hold the grid workspace of a cooperative launch (cg::this_grid().sync())
  '%envreg0', '%envreg1', '%envreg2', '%envreg3', '%envreg4', '%envreg5', '%envreg6', '%envreg7', '%envreg8', '%envreg9', '%envreg10',
  '%envreg11', '%envreg12', '%envreg13', '%envreg14', '%envreg15', '%envreg16', '%envreg17', '%envreg18', '%envreg19', '%envreg20',
  '%envreg21', '%envreg22', '%envreg23', '%envreg24', '%envreg25', '%envreg26', '%envreg27', '%envreg28', '%envreg29', '%envreg30', '%envreg31',
] as const
export type SpecialRegister = (typeof SPECIAL_REGISTERS)[number]
const specials: ReadonlySet<string> = new Set(SPECIAL_REGISTERS)
export function isSpecialRegister(name: string): name is SpecialRegister { return specials.has(name) }

/** A literal operand's value as written. */
export type Immediate =
  /** An integer literal (decimal, hex, octal, binary), sign included, not yet truncated to any width. */
  | { kind: 'int'; value: bigint }
  /** `0fXXXXXXXX`: the bits of an IEEE binary32 (a `-` before it flips the sign bit). */
  | { kind: 'f32'; bits: bigint }
  /** `0dXXXXXXXXXXXXXXXX`: the bits of an IEEE binary64. */
  | { kind: 'f64'; bits: bigint }
  /** A decimal floating-point literal (`1.5`, `1e-3`). */
  | { kind: 'real'; value: number }

export type Operand =
  | { kind: 'reg'; id: number }
  | { kind: 'special'; name: SpecialRegister }
  | { kind: 'imm'; imm: Immediate }
  /** The address of a variable (in its own state space) or a function, used as a value. */
  | { kind: 'sym'; name: string; target: 'variable' | 'function' }
  /** A branch target. */
  | { kind: 'label'; name: string }
  /** `[base+offset]`; base is a register, a variable symbol or absent (an absolute address). */
  | { kind: 'addr'; base?: Operand; offset: number }
  | { kind: 'vec'; items: Operand[] }
  /** `d|p`: a value and a predicate written by one instruction (setp, shfl, match, elect). */
  | { kind: 'pair'; first: Operand; second: Operand }
  | { kind: 'not'; operand: Operand }
  | { kind: 'neg'; operand: Operand }
  /** `(a, b)`: a call's return or argument list; brx.idx's `.branchtargets` list, as labels. */
  | { kind: 'list'; items: Operand[] }
  /** `_`: a destination whose value is dropped. */
  | { kind: 'sink' }

export type Rounding = 'rn' | 'rz' | 'rm' | 'rp' | 'rna' | 'rs'
export type IntRounding = 'rni' | 'rzi' | 'rmi' | 'rpi'
export type CmpOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'lo' | 'ls' | 'hi' | 'hs' | 'equ' | 'neu' | 'ltu' | 'leu' | 'gtu' | 'geu' | 'num' | 'nan'
export type BoolOp = 'and' | 'or' | 'xor'
/** Which part of a product: `mul.lo`, `mul.hi`, `mul.wide`. */
export type ProductPart = 'lo' | 'hi' | 'wide'
export type AtomOp = 'add' | 'min' | 'max' | 'inc' | 'dec' | 'exch' | 'cas' | 'and' | 'or' | 'xor'
/** bar.red's and redux's reduction. */
export type Reduction = 'popc' | 'and' | 'or' | 'xor' | 'add' | 'min' | 'max'
export type MemorySemantics = 'weak' | 'volatile' | 'relaxed' | 'acquire' | 'release' | 'acq_rel' | 'sc' | 'mmio'
export type Scope = 'cta' | 'cluster' | 'gpu' | 'sys' | 'gl'

/** Boolean qualifiers. */
export interface Flags {
  ftz?: true
  sat?: true
  satfinite?: true
  approx?: true
  full?: true
  relu?: true
  /** `.NaN` (min/max propagate NaN). */
  nan?: true
  /** `.cc`: writes the carry flag. */
  cc?: true
  uni?: true
  sync?: true
  aligned?: true
  /** `.nc`: non-coherent (read-only) load. */
  nc?: true
  /** `cvta.to`: generic → state space. */
  to?: true
  shiftamt?: true
  noftz?: true
  /** `bar.warp`, `bar.cta`, `barrier.cluster`. */
  warp?: true
  cta?: true
  cluster?: true
  clamp?: true
  wrap?: true
  trans?: true
  abs?: true
  async?: true
  bulk?: true
  /** mbarrier: `.parity` waits, `.noComplete` arrivals, `.expect_tx` transaction counts. */
  parity?: true
  noComplete?: true
  expect_tx?: true
}

export interface Instruction {
  /** Position in IrFunction.instructions. */
  index: number
  op: Opcode
  /** Every qualifier as written (`ld.global.nc.f32` → ['global', 'nc', 'f32']), each one checked against the
   *  opcode's rules (opcodes.ts) and recorded in the typed fields below. */
  qualifiers: readonly string[]
  /** Type qualifiers in order (`cvt.rn.f32.s32` → ['f32', 's32']). */
  types: PtxType[]
  /** The operation type: the last type qualifier. */
  type?: PtxType
  space?: StateSpace
  /** cp's source space (`cp.async.ca.shared.global`: space `shared`, srcSpace `global`). */
  srcSpace?: StateSpace
  vector?: 2 | 4 | 8
  rounding?: Rounding
  intRounding?: IntRounding
  cmp?: CmpOp
  boolOp?: BoolOp
  part?: ProductPart
  atomOp?: AtomOp
  reduction?: Reduction
  /** The opcode's own choice (opcodes.ts lists them): shfl `up|down|bfly|idx`, vote `all|any|uni|ballot`,
   *  match `any|all`, prmt `f4e…`, testp `finite…`, shf `l|r`, bar `sync|arrive|red`, szext/bmsk
   *  `clamp|wrap`, cp `async` forms, mma/ldmatrix shapes… */
  mode?: string
  /** mma's `.row.col` (A and B layouts, in order). */
  layouts?: Array<'row' | 'col'>
  /** Shape qualifiers in order (mma `m16n8k16`; ldmatrix `m8n8`, `x4`). */
  shape?: string[]
  /** wmma.load/store's matrix (`.a`, `.b`, `.c`; `.d` for a store). */
  fragment?: 'a' | 'b' | 'c' | 'd'
  sem?: MemorySemantics
  scope?: Scope
  /** Cache operators and L1::/L2:: hints: accepted, no effect on results. */
  hints?: string[]
  flags: Flags
  guard?: { reg: number; negate: boolean }
  operands: Operand[]
  /** PTX line and statement text, for messages. */
  line: number
  text: string
  /** The CUDA source position from `.loc` (file index into IrModule.files). */
  loc?: SourceLoc
}

export interface IrRegister {
  name: string
  type: PtxType
}

export interface IrFunction {
  name: string
  kind: 'entry' | 'func'
  linkage: string
  /** False for a prototype (`.extern .func f(…);`): no registers, no instructions. */
  defined: boolean
  params: PtxVariable[]
  returns: PtxVariable[]
  registers: IrRegister[]
  /** Variables of the body: .local/.shared/.const and the .param variables of call sequences. */
  vars: PtxVariable[]
  instructions: Instruction[]
  /** Label → index of the instruction it precedes (instructions.length for a label at the very end). */
  labels: Map<string, number>
  directives: Record<string, number[]>
  line: number
  /** Set only by `decodeModule(ast, { perFunction: true })` when the body cannot be decoded: the error (its
   *  line names the statement). The function then has no instructions; a consumer refuses it (and what calls
   *  it) with this error and can keep the rest of the module. */
  refused?: PtxError
}

export interface IrModule {
  version?: string
  target?: string[]
  addressSize?: number
  files: Map<number, string>
  variables: PtxVariable[]
  functions: IrFunction[]
}

/** Registers an operand reads or writes, in order (addresses' bases, vector items, pairs, lists). */
export function operandRegisters(o: Operand | undefined, out: number[] = []): number[] {
  if (!o) return out
  switch (o.kind) {
    case 'reg': out.push(o.id); break
    case 'vec': case 'list': for (const x of o.items) operandRegisters(x, out); break
    case 'pair': operandRegisters(o.first, out); operandRegisters(o.second, out); break
    case 'not': case 'neg': operandRegisters(o.operand, out); break
    case 'addr': operandRegisters(o.base, out); break
    default: break
  }
  return out
}

/** Registers `ins` writes: every register of operand 0 when the opcode writes it (a vector or a `d|p` pair
 *  writes all of its registers). A guarded instruction may leave them unchanged (see `guard`). */
export function definedRegisters(ins: Instruction): number[] {
  if (!writesFirstOperand(ins)) return []
  return operandRegisters(ins.operands[0])
}

/** Registers `ins` reads: its guard, every register of the operands it does not write, and the base
 *  registers of a written operand's addresses (none in practice). */
export function usedRegisters(ins: Instruction): number[] {
  const out: number[] = []
  if (ins.guard) out.push(ins.guard.reg)
  const w = writesFirstOperand(ins)
  ins.operands.forEach((o, i) => { if (i > 0 || !w) operandRegisters(o, out) })
  return out
}
