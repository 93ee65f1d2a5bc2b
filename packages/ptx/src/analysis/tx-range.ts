// The tx interval of a block-level thread loop that does more than branch past its code: a loop whose first
// act is `@p bra` past the rest of its body, with p from `setp.cmp p, %tid.x, y` (y the same for the whole
// block and not set in the loop before the branch, or set there only by instructions a writer computes once
// before the loop, `computedBefore`) — a tree reduction's `if (tid < s)`, an `if (tid == 0)` — where that
// setp is in the loop before the branch, or is p's one definition, computed once by each thread before the
// loop (outside loops, on every path to it: nvcc hoists an `if (tid == 0)`'s test above a barrier). The other
// threads only compute that predicate, so a writer runs the loop over [lo, hi) of tid.x alone (both clamped
// to [0, ntid.x]). One rule, rendered by each of the emulator's writers (JavaScript and WebAssembly).
import { definedRegisters, type IrFunction, type Operand } from '../ir.js'
import { dominates, type Cfg } from '../cfg.js'
import type { Structure } from '../structure.js'
import type { AffineFacts } from './affine.js'
import type { ThreadLoop, ThreadLoopSchedule } from './thread-loops.js'

/** `a cmp b` read as `b cmp' a` (integer comparisons). */
export const SWAPPED_CMP: Readonly<Record<string, string>> = { lt: 'gt', gt: 'lt', le: 'ge', ge: 'le', lo: 'hi', hi: 'lo', ls: 'hs', hs: 'ls', eq: 'eq', ne: 'ne' }
/** The integer comparison that holds where `a cmp b` does not. */
export const NEGATED_CMP: Readonly<Record<string, string>> = { lt: 'ge', ge: 'lt', lo: 'hs', hs: 'lo', gt: 'le', le: 'gt', hi: 'ls', ls: 'hi', eq: 'ne', ne: 'eq' }

/** An end of the interval: 0, y, y + 1, or %ntid.x. */
export type TxEnd = '0' | 'Y' | 'Y1' | 'NTX'

export interface TxRange {
  /** The bound the threads are compared with, as the setp reads it (`signed`: .s32, else .u32/.b32). */
  y: Operand
  signed: boolean
  lo: TxEnd
  hi: TxEnd
  /** The `@p bra` past the loop's code: no thread of [lo, hi) takes it. */
  branch: number
}

const LOOP_OPS = new Set(['mov', 'add', 'sub', 'mul', 'mad', 'shl', 'shr', 'and', 'or', 'xor', 'setp', 'cvt', 'cvta', 'selp', 'ld'])

/** The interval of `it`, or undefined when the loop is not of that shape. */
export function threadLoopTxRange(fn: IrFunction, it: ThreadLoop, plan: ThreadLoopSchedule, structure: Structure, affine: AffineFacts | undefined, cfg: Cfg, computedBefore?: ReadonlySet<number>): TxRange | undefined {
  const ins = fn.instructions
  if (it.gather !== undefined || it.scatter !== undefined || !affine || structure.kind !== 'structured') return undefined
  let k = 0
  while (k < it.nodes.length && it.nodes[k]!.kind === 'instr') k++
  const R = it.nodes[k]
  // (a return after it ends the skipped threads, which have nothing left to do either)
  const trailing = it.nodes.slice(k + 1).every((x) => x.kind === 'instr' && (ins[x.index]!.op === 'ret' || ins[x.index]!.op === 'exit') && !ins[x.index]!.guard)
  if (!R || (R.kind !== 'block' && R.kind !== 'if') || !trailing) return undefined
  const first = R.body[0]
  if (first?.kind !== 'instr') return undefined
  const br = ins[first.index]!
  const t = structure.branches.get(first.index)
  if (br.op !== 'bra' || !br.guard || t?.kind !== 'break' || t.node !== R.id || plan.departures.has(first.index)) return undefined
  // before the branch: nothing the skipped threads would have left behind
  let setp: number | undefined
  for (let i = it.start; i < first.index; i++) {
    const x = ins[i]!
    if (!LOOP_OPS.has(x.op) || (x.op === 'ld' && x.space !== 'param')) return undefined
    if (definedRegisters(x).some((r) => it.stores.includes(r))) return undefined
    if (definedRegisters(x).includes(br.guard.reg)) setp = i
  }
  // else a predicate computed once before the loop (nvcc hoists `tid == 0` above a barrier, kept per thread)
  const once = setp === undefined ? computedOnceBefore(fn, cfg, br.guard.reg, first.index, structure) : undefined
  setp ??= once?.at
  if (setp === undefined) return undefined
  const sp = ins[setp]!
  const cmp0 = sp.cmp
  const type = sp.type ?? ''
  if (sp.op !== 'setp' || sp.guard || sp.boolOp || !cmp0 || sp.operands[0]?.kind !== 'reg' || !['u32', 's32', 'b32'].includes(type)) return undefined
  const isTx = (o: Operand | undefined) => {
    if (o?.kind === 'special') return o.name === '%tid.x'
    if (o?.kind !== 'reg') return false
    const f = affine.register.get(o.id)
    return !!f && f.c === 1 && !f.iv && f.conds.length === 0 && f.inv.kind === 'const' && f.inv.value === 0
  }
  let cmp: string = cmp0
  let y = sp.operands[2]!
  if (!isTx(sp.operands[1])) {
    if (!isTx(sp.operands[2])) return undefined
    cmp = SWAPPED_CMP[cmp0]!
    y = sp.operands[1]!
  }
  // y: an immediate, or a register the same for the whole block that the loop does not set before the branch
  if (y.kind === 'reg') {
    if (!['grid', 'block'].includes(plan.uniformity.register[y.id]!)) return undefined
    for (let i = it.start; i < first.index; i++) if (definedRegisters(ins[i]!).includes(y.id) && !computedBefore?.has(i)) return undefined
    // (a predicate from before the loop: y's one definition, outside loops, came before the setp read it)
    if (once && !once.before(y.id, setp)) return undefined
  } else if (y.kind !== 'imm') return undefined
  const pair = stayEnds(cmp, !!br.guard.negate)
  if (!pair) return undefined
  return { y, signed: type === 's32', lo: pair[0], hi: pair[1], branch: first.index }
}

/** Each function's registers' definitions (instruction indices), for computedOnceBefore. */
const definitions = new WeakMap<IrFunction, Map<number, number[]>>()

/** The one definition of register `p` when each thread computes it once before instruction `use` (the
 *  definition is the function's only one, outside every loop, and on every path to `use`), so that its value
 *  there is the one that definition computed; `before(r, at)` says the same of register r and instruction at. */
function computedOnceBefore(fn: IrFunction, cfg: Cfg, p: number, use: number, structure: Structure): { at: number; before(r: number, at: number): boolean } | undefined {
  // (instruction order only: a re-laid-out structure's positions are not instruction indices)
  if (structure.kind !== 'structured' || structure.order) return undefined
  let defs = definitions.get(fn)
  if (!defs) {
    defs = new Map()
    for (const [i, x] of fn.instructions.entries()) for (const r of definedRegisters(x)) (defs.get(r) ?? defs.set(r, []).get(r)!).push(i)
    definitions.set(fn, defs)
  }
  const before = (r: number, at: number): number | undefined => {
    const d = defs.get(r)
    if (d?.length !== 1) return undefined
    const db = cfg.blockOf[d[0]!]!, ub = cfg.blockOf[at]!
    if (cfg.loopOf[db]! >= 0 || (db === ub ? d[0]! >= at : !dominates(cfg, db, ub))) return undefined
    return d[0]
  }
  const at = before(p, use)
  return at === undefined ? undefined : { at, before: (r, i) => before(r, i) !== undefined }
}

// the threads where `%tid.x cmp y` holds, and where it does not
const HOLDS: Readonly<Record<string, [TxEnd, TxEnd]>> = { lt: ['0', 'Y'], lo: ['0', 'Y'], le: ['0', 'Y1'], ls: ['0', 'Y1'], gt: ['Y1', 'NTX'], hi: ['Y1', 'NTX'], ge: ['Y', 'NTX'], hs: ['Y', 'NTX'], eq: ['Y', 'Y1'] }
const FAILS: Readonly<Record<string, [TxEnd, TxEnd]>> = { lt: ['Y', 'NTX'], lo: ['Y', 'NTX'], le: ['Y1', 'NTX'], ls: ['Y1', 'NTX'], gt: ['0', 'Y1'], hi: ['0', 'Y1'], ge: ['0', 'Y'], hs: ['0', 'Y'], ne: ['Y', 'Y1'] }

/** The tx of the threads that do not branch at `@p bra` (`@!p bra` where `negate`), p = `%tid.x cmp y`: they
 *  branch where p is true and run where it is false, or the other way round; undefined where that is not one
 *  interval (`!=` that runs, `==` that branches). */
export function stayEnds(cmp: string, negate: boolean): [TxEnd, TxEnd] | undefined {
  return (negate ? HOLDS : FAILS)[cmp]
}
