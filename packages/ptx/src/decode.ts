// AST (parse.ts) → typed IR (ir.ts). Every qualifier of every instruction is checked against its opcode's
// rules (opcodes.ts) and recorded as a typed field; every operand name is resolved to a register, a special
// register, a label or a symbol; literals stay typed values. Anything the rules do not allow is refused here
// with the PTX line and the statement, so consumers (the emulator's emit-js, emit-wgsl) can rely on the
// fields they read and never parse qualifier strings themselves.
import { PtxError } from './errors.js'
import {
  isSpecialRegister, type CmpOp, type Flags, type Immediate, type Instruction, type IntRounding, type IrFunction, type IrModule,
  type MemorySemantics, type Operand, type Scope,
} from './ir.js'
import { OPCODE_RULES, isOpcode } from './opcodes.js'
import type { Operand as AstOperand, PtxFunction, PtxInstruction, PtxModule } from './parse.js'
import { isPtxType, type PtxType, type StateSpace } from './types.js'

const CMP_OPS: ReadonlySet<string> = new Set(['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'lo', 'ls', 'hi', 'hs', 'equ', 'neu', 'ltu', 'leu', 'gtu', 'geu', 'num', 'nan'])
const INT_ROUNDING: ReadonlySet<string> = new Set(['rni', 'rzi', 'rmi', 'rpi'])
const ATOM_OPS: ReadonlySet<string> = new Set(['add', 'min', 'max', 'inc', 'dec', 'exch', 'cas', 'and', 'or', 'xor'])
/** Qualifier spellings of boolean flags that differ from the flag's name. */
const FLAG_SPELLING: Readonly<Record<string, keyof Flags>> = { NaN: 'nan' }

/** Names an instruction's operands may refer to, besides its function's registers and labels. */
interface Scope_ {
  variables: ReadonlySet<string>
  functions: ReadonlySet<string>
}

function fail(msg: string, ins: PtxInstruction, fn: string): never {
  throw new PtxError(`${msg} in \`${ins.text}\` (function ${fn})`, ins.line)
}

/** Reads the qualifiers of `ins` (its opcode split at dots, without the opcode) into typed fields. */
function decodeQualifiers(ins: PtxInstruction, fnName: string): Omit<Instruction, 'index' | 'guard' | 'operands' | 'line' | 'text' | 'loc'> {
  const op = ins.op[0]!
  if (!isOpcode(op)) fail(`unsupported instruction ${ins.opcode}`, ins, fnName)
  const rule = OPCODE_RULES[op]
  const qualifiers = ins.op.slice(1)
  const out: Omit<Instruction, 'index' | 'guard' | 'operands' | 'line' | 'text' | 'loc'> = { op, qualifiers, types: [], flags: {} }
  const once = <K extends keyof typeof out>(key: K, value: (typeof out)[K], q: string) => {
    if (out[key] !== undefined && key !== 'types') fail(`qualifier .${q} conflicts with an earlier one of ${op}`, ins, fnName)
    out[key] = value
  }
  for (const q of qualifiers) {
    if (rule.types && isPtxType(q)) { out.types.push(q); continue }
    if (rule.spaces?.includes(q)) {
      const space = (q.startsWith('shared') ? 'shared' : q.startsWith('param') ? 'param' : q) as StateSpace
      if (op === 'cp' && out.space !== undefined) once('srcSpace', space, q)
      else once('space', space, q)
      if (q === 'shared::cluster') out.flags.cluster = true
      continue
    }
    if (rule.vector && (q === 'v2' || q === 'v4' || q === 'v8')) { once('vector', Number(q.slice(1)) as 2 | 4 | 8, q); continue }
    if (rule.rounding?.includes(q as never)) { once('rounding', q as never, q); continue }
    if (rule.intRounding && INT_ROUNDING.has(q)) { once('intRounding', q as IntRounding, q); continue }
    if (rule.cmp && CMP_OPS.has(q) && out.cmp === undefined) { out.cmp = q as CmpOp; continue }
    if (rule.boolOp?.includes(q as never)) { once('boolOp', q as never, q); continue }
    if (rule.part?.includes(q as never)) { once('part', q as never, q); continue }
    if (rule.atomOp && ATOM_OPS.has(q)) { once('atomOp', q as never, q); continue }
    if (rule.modes?.includes(q)) { once('mode', q, q); continue }
    if (rule.reduction?.includes(q as never)) { once('reduction', q as never, q); continue }
    if (rule.shapes?.test(q)) { (out.shape ??= []).push(q); continue }
    if (rule.fragments && (q === 'a' || q === 'b' || q === 'c' || q === 'd')) { once('fragment', q, q); continue }
    if (rule.layouts && (q === 'row' || q === 'col')) { (out.layouts ??= []).push(q); continue }
    if (rule.sem?.includes(q as MemorySemantics)) { once('sem', q as MemorySemantics, q); continue }
    if (rule.scope?.includes(q as Scope)) { once('scope', q as Scope, q); continue }
    const flag = FLAG_SPELLING[q] ?? q
    if (rule.flags?.includes(flag as keyof Flags)) { out.flags[flag as keyof Flags] = true; continue }
    if (rule.cache?.includes(q) || rule.accept?.includes(q) || (rule.cacheHints && /^L[12]::/.test(q))) { (out.hints ??= []).push(q); continue }
    // an unknown qualifier may change semantics (.relu, .xorsign, .satfinite…): refuse rather than ignore
    fail(`unsupported qualifier .${q} of ${op}`, ins, fnName)
  }
  if (out.types.length) out.type = out.types[out.types.length - 1]
  return out
}

function immediate(o: AstOperand): Immediate | undefined {
  switch (o.k) {
    case 'imm': return { kind: 'int', value: o.value }
    case 'fimm': return o.width === 32 ? { kind: 'f32', bits: o.bits } : { kind: 'f64', bits: o.bits }
    case 'dimm': return { kind: 'real', value: o.value }
    default: return undefined
  }
}

class FunctionDecoder {
  regs = new Map<string, number>()
  names: Set<string>
  constructor(readonly fn: PtxFunction, readonly scope: Scope_, readonly labels: ReadonlySet<string>) {
    fn.regs.forEach((r, i) => this.regs.set(r.name, i))
    this.names = new Set([...fn.params, ...fn.returns, ...fn.vars].map((v) => v.name))
  }

  name(name: string, ins: PtxInstruction): Operand {
    if (name === '_') return { kind: 'sink' }
    const r = this.regs.get(name)
    if (r !== undefined) return { kind: 'reg', id: r }
    if (isSpecialRegister(name)) return { kind: 'special', name }
    // PTX ISA, "Predefined Identifiers": WARP_SZ, the warp size, a constant (nvcc writes warpSize so)
    if (name === 'WARP_SZ') return { kind: 'imm', imm: { kind: 'int', value: 32n } }
    if (this.labels.has(name)) return { kind: 'label', name }
    const targets = this.fn.branchTargets?.get(name)
    if (targets) {
      for (const t of targets) if (!this.labels.has(t)) fail(`.branchtargets ${name} names ${t}, which is not a label of this function`, ins, this.fn.name)
      return { kind: 'list', items: targets.map((t) => ({ kind: 'label', name: t })) }
    }
    if (this.names.has(name) || this.scope.variables.has(name)) return { kind: 'sym', name, target: 'variable' }
    if (this.scope.functions.has(name)) return { kind: 'sym', name, target: 'function' }
    return fail(`unknown register or symbol ${name}`, ins, this.fn.name)
  }

  operand(o: AstOperand, ins: PtxInstruction): Operand {
    const imm = immediate(o)
    if (imm) return { kind: 'imm', imm }
    switch (o.k) {
      case 'id': return this.name(o.name, ins)
      case 'addr': {
        const out: Operand = { kind: 'addr', offset: o.offset }
        if (o.base) out.base = this.operand(o.base, ins)
        return out
      }
      case 'vec': return { kind: 'vec', items: o.items.map((x) => this.operand(x, ins)) }
      case 'list': return { kind: 'list', items: o.items.map((x) => this.operand(x, ins)) }
      case 'pair': return { kind: 'pair', first: this.operand(o.a, ins), second: this.operand(o.b, ins) }
      case 'not': return { kind: 'not', operand: this.operand(o.a, ins) }
      case 'neg': return { kind: 'neg', operand: this.operand(o.a, ins) }
      default: return fail('bad operand', ins, this.fn.name)
    }
  }

  instruction(ins: PtxInstruction, index: number): Instruction {
    const q = decodeQualifiers(ins, this.fn.name)
    let guard: Instruction['guard']
    if (ins.guard) {
      const g = this.regs.get(ins.guard.reg)
      if (g === undefined || this.fn.regs[g]!.type !== 'pred') fail(`guard ${ins.guard.reg} is not a predicate register`, ins, this.fn.name)
      guard = { reg: g, negate: ins.guard.negate }
    }
    const out: Instruction = { index, ...q, operands: ins.args.map((a) => this.operand(a, ins)), line: ins.line, text: ins.text }
    if (guard) out.guard = guard
    if (ins.loc) out.loc = ins.loc
    if (out.op === 'bra' && out.operands[0]?.kind !== 'label') fail('unknown branch target', ins, this.fn.name)
    // brx.idx index, tlist: tlist is a .branchtargets list (a table in memory is not a PTX form)
    if (out.op === 'brx' && out.operands[1]?.kind !== 'list') fail('brx.idx needs a .branchtargets list as its target', ins, this.fn.name)
    return out
  }
}

/** Decodes one function; `scope` lists the module's variables and functions. */
export function decodeFunction(fn: PtxFunction, scope: Scope_): IrFunction {
  const out: IrFunction = {
    name: fn.name, kind: fn.kind, linkage: fn.linkage, defined: fn.body !== undefined, params: fn.params, returns: fn.returns,
    registers: fn.regs.map((r) => ({ name: r.name, type: r.type as PtxType })), vars: fn.vars, instructions: [], labels: new Map(),
    directives: fn.directives, line: fn.line,
  }
  if (!fn.body) return out
  for (const s of fn.body) {
    if (s.kind === 'label') out.labels.set(s.name, -1)
  }
  const d = new FunctionDecoder(fn, scope, new Set(out.labels.keys()))
  for (const s of fn.body) {
    if (s.kind === 'label') { out.labels.set(s.name, out.instructions.length); continue }
    out.instructions.push(d.instruction(s, out.instructions.length))
  }
  return out
}

export interface DecodeOptions {
  /** Keep decoding the other functions when one cannot be decoded: it gets `refused` (the error) and no
   *  instructions, so a backend can refuse it alone (issue 14: one unsupported kernel must not take its
   *  neighbours down). Off: the first error throws. @default false */
  perFunction?: boolean
}

/** Decodes every function of a parsed module (prototypes stay without instructions). */
export function decodeModule(mod: PtxModule, options: DecodeOptions = {}): IrModule {
  const variables = new Set(mod.variables.map((v) => v.name))
  for (const f of mod.functions) for (const v of f.vars) if (v.space === 'global' || v.space === 'const' || v.space === 'shared') variables.add(v.name)
  const scope: Scope_ = { variables, functions: new Set([...mod.functions.map((f) => f.name), ...mod.aliases.map((a) => a.name)]) }
  const decodeOne = (f: PtxFunction): IrFunction => {
    if (!options.perFunction) return decodeFunction(f, scope)
    try {
      return decodeFunction(f, scope)
    } catch (err) {
      if (!(err instanceof PtxError)) throw err
      return { ...decodeFunction({ ...f, body: [] }, scope), refused: err }
    }
  }
  const out: IrModule = { files: mod.files, variables: mod.variables, functions: mod.functions.map(decodeOne) }
  if (mod.version !== undefined) out.version = mod.version
  if (mod.target !== undefined) out.target = mod.target
  if (mod.addressSize !== undefined) out.addressSize = mod.addressSize
  return out
}
