// Lockstep points (issue 33): the memory accesses at which lanes of one warp may talk to each other through
// memory without a barrier or a `.sync` collective between — implicit warp-synchronous code, such as the last
// steps of the classic shared-memory reduction (`volatile float *s; s[tid] += s[tid + 16]; …`) or a lane
// reading its neighbour's element (`out[tid] = s[(tid + 1) % 64]` after `s[tid] = …`). A converged warp on an
// NVIDIA GPU runs each instruction for all its lanes together, so every lane's load of one instruction sees
// every lane's store of the instructions before it; a writer that runs the lanes one after another must run
// these accesses lane loop by lane loop (one instruction for the whole warp at a time) to give the same answer.
// Everything else may keep running a thread at a time.
//
// An address is read as a sum of terms with integer coefficients (a "lane form"): a constant, the
// per-lane specials (%tid.x/y/z, %laneid), the base of an object (a shared or global variable's symbol, a
// pointer kernel parameter), and registers the form cannot see through (kept as atoms, uniform across the
// block or not, from the uniformity analysis). Registers with one unguarded definition are read through it
// (mov, add, sub, mul/mad/shl by a constant, widening cvt, cvta); others are atoms. Two accesses of one
// barrier interval (one can reach the other along a path with no barrier and no warp collective; the same
// instruction in two iterations of a loop does not count), of which one writes (a store, an atomic), talk
// when another lane's element of the one may be touched by the other:
//   - in different state spaces (shared against global), or on different objects (two symbols, two pointer
//     parameters: taken to be different buffers or the same one), they do not;
//   - nor do two plain stores, two atomics, or two accesses that one lane runs alone (`if (tid == 0)`);
//   - when the forms differ by a constant and every atom they share means the same value at both (none is
//     written on the way from one to the other), the lanes' ranges are compared exactly over the lane
//     differences of one warp (±31 in x, and a row or plane apart where the address has y or z: rows taken
//     to hold at least 16 threads, or as many as a row-major array's row); the same address expression with
//     a per-lane part is each lane's own element, and an address the same for every lane is everybody's;
//   - the tree-reduction shape is private: `if (tid < u) s[tid] += s[tid + u]` with u a constant or
//     block-uniform (the writers' elements lie below u, the read ones from u up);
//   - `.volatile`/`.relaxed` accesses (what warp-synchronous code is written with) talk in every other case;
//     plain ones talk where the lane parts differ and one of them is affine in the lane (`(tid + 1) % 64`
//     against `tid`), and are otherwise taken as race-free (a block-uniform distance; two per-lane values
//     the analysis cannot see through; a value written between the two accesses).
// Both accesses become lockstep points.
import type { Cfg } from '../cfg.js'
import { buildCfg, dominates } from '../cfg.js'
import { collectiveOf } from '../collectives.js'
import { definedRegisters, type Instruction, type IrFunction, type IrModule, type Operand } from '../ir.js'
import { sourcePosition, type SourcePosition } from '../source-location.js'
import { structureFunction, type StructRegion, type Structure } from '../structure.js'
import { typeSize } from '../types.js'
import { NEGATED_CMP, SWAPPED_CMP } from './tx-range.js'
import { analyzeUniformity, type UniformityFacts } from './uniformity.js'

export interface LockstepPoint {
  /** Instruction index of the access. */
  index: number
  /** The access it may talk with (instruction index) and why. */
  partner: number
  reason: string
}

export interface LockstepFacts {
  /** The accesses that run in lockstep, by instruction index (ascending), each with one partner and why. */
  points: LockstepPoint[]
}

type Term = Map<string, number>
interface LaneForm { k: number; terms: Term }

const LANE = new Set(['%tid.x', '%tid.y', '%tid.z'])
const LANEID = (): LaneForm => ({ k: 0, terms: new Map([['%tid.x', 1], ['s:-warpbase', 1]]) })
/** `%tid.x / 32` and the like: the same for every lane of a warp. */
const WARP = (r: number): LaneForm => ({ k: 0, terms: new Map([[`u:w${r}`, 1]]) })
const isLane = (key: string) => LANE.has(key)
const isBase = (key: string) => key.startsWith('sym:') || key.startsWith('param:')
/** The register of an atom (`u:12`, `v:12`); undefined for the other terms (a warp's `u:w12` included). */
const atomReg = (key: string) => { const m = /^[uv]:(\d+)$/.exec(key); return m ? Number(m[1]) : undefined }

interface Access {
  index: number
  space: 'shared' | 'global' | 'generic'
  form: LaneForm | undefined
  /** The object it points into, where known. */
  base: string | undefined
  size: number
  write: boolean
  read: boolean
  atomic: boolean
  strong: boolean
}

/** The instruction's memory access in shared, global or generic memory, or undefined. */
function accessOf(x: Instruction): { addr: Operand | undefined; write: boolean; read: boolean } | undefined {
  const space = x.space ?? 'generic'
  if (space !== 'shared' && space !== 'global' && space !== 'generic') return undefined
  switch (x.op) {
    // a read-only load (`.nc`, ldu) reads memory no thread of the kernel writes
    case 'ld': return x.flags.nc ? undefined : { addr: x.operands[1], write: false, read: true }
    case 'st': return { addr: x.operands[0], write: true, read: false }
    case 'atom': return { addr: x.operands[1], write: true, read: true }
    case 'red': return { addr: x.operands[0], write: true, read: false }
    default: return undefined
  }
}

export function analyzeLockstep(fn: IrFunction, cfg: Cfg, structure: Structure, uniformity: UniformityFacts): LockstepFacts {
  const ins = fn.instructions
  const n = ins.length
  const defs = new Map<number, number[]>()
  ins.forEach((x, i) => { for (const r of definedRegisters(x)) { let l = defs.get(r); if (!l) defs.set(r, (l = [])); l.push(i) } })
  const params = new Set(fn.kind === 'entry' ? fn.params.map((p) => p.name) : [])

  // ---- lane forms
  const memo = new Map<number, LaneForm>()
  const atomOf = (r: number): LaneForm => ({ k: 0, terms: new Map([[`${['grid', 'block', 'warp'].includes(uniformity.register[r]!) ? 'u' : 'v'}:${r}`, 1]]) })
  const konst = (k: number): LaneForm => ({ k, terms: new Map() })
  const add = (a: LaneForm, b: LaneForm, sb = 1): LaneForm => {
    const t = new Map(a.terms)
    for (const [key, c] of b.terms) { const v = (t.get(key) ?? 0) + sb * c; if (v) t.set(key, v); else t.delete(key) }
    return { k: a.k + sb * b.k, terms: t }
  }
  const scale = (a: LaneForm, s: number): LaneForm => (s === 0 ? konst(0) : { k: a.k * s, terms: new Map([...a.terms].map(([key, c]) => [key, c * s])) })
  const intImm = (o: Operand | undefined): number | undefined =>
    o?.kind === 'imm' && o.imm.kind === 'int' && o.imm.value >= -(2n ** 40n) && o.imm.value <= 2n ** 40n ? Number(o.imm.value) : undefined
  const operandForm = (o: Operand | undefined, depth: number): LaneForm | undefined => {
    if (!o) return undefined
    switch (o.kind) {
      case 'imm': { const v = intImm(o); return v === undefined ? undefined : konst(v) }
      // %laneid is %tid.x less the warp's first thread (the same for the warp's lanes): 1-D blocks, and rows of
      // a multiple of 32 threads
      case 'special': return o.name === '%laneid' ? LANEID() : { k: 0, terms: new Map([[isLane(o.name) ? o.name : `s:${o.name}`, 1]]) }
      case 'sym': return o.target === 'variable' ? { k: 0, terms: new Map([[`sym:${o.name}`, 1]]) } : undefined
      case 'reg': return regForm(o.id, depth)
      default: return undefined
    }
  }
  // a form cut short by the depth limit (an atom where a deeper look would see through) is not remembered
  let cut = false
  const regForm = (r: number, depth: number): LaneForm => {
    const m = memo.get(r)
    if (m) return m
    const outer = cut
    cut = false
    const f = readThrough(r, depth) ?? atomOf(r)
    if (!cut) memo.set(r, f)
    cut ||= outer
    return f
  }
  const readThrough = (r: number, depth: number): LaneForm | undefined => {
    const d = defs.get(r)
    if (!d || d.length !== 1) return undefined
    if (depth > 48) { cut = true; return undefined }
    const x = ins[d[0]!]!
    if (x.guard) return undefined
    const o = x.operands
    const f = (k: number) => operandForm(o[k], depth + 1)
    const t = x.type ?? ''
    const integer = /^[usb](8|16|32|64)$/.test(t)
    switch (x.op) {
      case 'mov': return integer || t === '' ? f(1) : undefined
      case 'cvta': return f(1)
      case 'cvt': {
        // widening between integer types keeps the value (as far as this analysis cares)
        const [to, from] = x.types
        return to && from && /^[us]\d+$/.test(to) && /^[us]\d+$/.test(from) && typeSize(to) >= typeSize(from) ? f(1) : undefined
      }
      case 'add': case 'sub': {
        if (!integer || x.flags.cc || x.flags.sat) return undefined
        const a = f(1), b = f(2)
        return a && b ? add(a, b, x.op === 'add' ? 1 : -1) : undefined
      }
      case 'shl': {
        const a = f(1), s = intImm(o[2])
        return a && s !== undefined && s >= 0 && s < 32 ? scale(a, 2 ** s) : undefined
      }
      case 'mul': case 'mad': {
        if (!integer || (x.part !== 'lo' && x.part !== 'wide')) return undefined
        const ca = intImm(o[1]), cb = intImm(o[2])
        const p = cb !== undefined ? (() => { const a = f(1); return a && scale(a, cb) })() : ca !== undefined ? (() => { const b = f(2); return b && scale(b, ca) })() : undefined
        if (!p) return undefined
        if (x.op === 'mul') return p
        const c = f(3)
        return c ? add(p, c) : undefined
      }
      // the lane and the warp of %tid.x: `tid & 31`, `tid % 32`, `tid >> 5`, `tid / 32`
      case 'and': case 'rem': case 'shr': case 'div': {
        const a = f(1), m = intImm(o[2])
        const tx = !!a && a.k === 0 && a.terms.size === 1 && a.terms.get('%tid.x') === 1
        if (!tx || m === undefined || !integer || t.startsWith('s')) return undefined
        if ((x.op === 'and' && m === 31) || (x.op === 'rem' && m === 32)) return LANEID()
        if ((x.op === 'shr' && m >= 5 && m < 32) || (x.op === 'div' && m >= 32 && (m & (m - 1)) === 0)) return WARP(r)
        return undefined
      }
      case 'ld': {
        // a pointer kernel parameter: the base of a buffer
        const a = o[1]
        if (x.space === 'param' && a?.kind === 'addr' && a.base?.kind === 'sym' && params.has(a.base.name)) return { k: 0, terms: new Map([[`param:${a.base.name}+${a.offset}`, 1]]) }
        return undefined
      }
      default: return undefined
    }
  }
  const addressForm = (a: Operand | undefined): LaneForm | undefined => {
    if (a?.kind !== 'addr') return undefined
    const base = a.base ? operandForm(a.base, 0) : konst(0)
    return base && add(base, konst(a.offset))
  }

  // ---- the object an address points into (its symbol or pointer parameter), through every definition of a
  // register (a pointer bumped in a loop keeps its object); undefined where unknown or mixed
  const UNKNOWN = '?'
  const regBase = new Map<number, string>()
  const baseOfForm = (f: LaneForm | undefined) => {
    const b = f ? [...f.terms].filter(([k, c]) => isBase(k) && c === 1).map(([k]) => k) : []
    return b.length === 1 ? b[0]! : undefined
  }
  const defBase = (x: Instruction, self: number): string | undefined => {
    const o = x.operands
    const of = (op: Operand | undefined): string | undefined => {
      if (op?.kind === 'reg') return op.id === self ? undefined : regBase.get(op.id)
      if (op?.kind === 'sym' && op.target === 'variable') return `sym:${op.name}`
      return undefined
    }
    switch (x.op) {
      case 'mov': case 'cvta': return of(o[1])
      case 'add': case 'sub': case 'mad': {
        const bs = [of(o[1]), of(o[2]), x.op === 'mad' ? of(o[3]) : undefined].filter((b) => b !== undefined)
        return bs.length === 1 ? bs[0] : bs.length ? UNKNOWN : undefined
      }
      default: {
        const f = regForm(self, 0)
        return baseOfForm(f)
      }
    }
  }
  for (let changed = true, rounds = 0; changed && rounds < 8; rounds++) {
    changed = false
    for (const [r, ds] of defs) {
      let b: string | undefined
      for (const d of ds) {
        const db = defBase(ins[d]!, r)
        if (db === undefined) continue
        b = b === undefined || b === db ? db : UNKNOWN
      }
      // a loop's own update (`add r, r, 4`) keeps what the other definitions give
      if (b !== undefined && regBase.get(r) !== b) { regBase.set(r, b); changed = true }
    }
  }
  const accessBase = (a: Operand | undefined): string | undefined => {
    if (a?.kind !== 'addr') return undefined
    const b = a.base?.kind === 'reg' ? regBase.get(a.base.id) : a.base?.kind === 'sym' ? `sym:${a.base.name}` : undefined
    return b === UNKNOWN ? undefined : b
  }

  // ---- the accesses
  const accesses: Access[] = []
  ins.forEach((x, i) => {
    const a = accessOf(x)
    if (!a) return
    const size = typeSize(x.type ?? '') * (x.vector ?? 1)
    const strong = x.sem !== undefined && x.sem !== 'weak'
    accesses.push({ index: i, space: (x.space ?? 'generic') as Access['space'], form: addressForm(a.addr), base: accessBase(a.addr), size: size || 16, write: a.write, read: a.read, atomic: x.op === 'atom' || x.op === 'red', strong })
  })
  if (!accesses.some((a) => a.write) || accesses.length < 2) return { points: [] }

  // ---- reach without a barrier or collective: the blocks whose start each access reaches
  const sync = (x: Instruction) => collectiveOf(x) !== undefined
  const firstSync = new Int32Array(cfg.blocks.length)
  for (const b of cfg.blocks) {
    let p = b.end
    for (let i = b.start; i < b.end; i++) if (sync(ins[i]!)) { p = i; break }
    firstSync[b.id] = p
  }
  const syncPrefix = new Int32Array(n + 1)
  for (let i = 0; i < n; i++) syncPrefix[i + 1] = syncPrefix[i]! + (sync(ins[i]!) ? 1 : 0)
  const entered = new Map<number, Uint8Array>()
  const enteredFrom = (i: number): Uint8Array => {
    let e = entered.get(i)
    if (e) return e
    e = new Uint8Array(cfg.blocks.length)
    const b = cfg.blocks[cfg.blockOf[i]!]!
    const open = syncPrefix[b.end]! === syncPrefix[i + 1]!
    const stack = open ? [...b.succs] : []
    while (stack.length) {
      const s = stack.pop()!
      if (e[s]) continue
      e[s] = 1
      if (firstSync[s] === cfg.blocks[s]!.end) stack.push(...cfg.blocks[s]!.succs)
    }
    entered.set(i, e)
    return e
  }
  /** j runs after i (a later instance) along a path without a barrier or collective. */
  const reaches = (i: number, j: number): boolean => {
    const bi = cfg.blockOf[i]!, bj = cfg.blockOf[j]!
    if (bi === bj && j > i && syncPrefix[j]! === syncPrefix[i + 1]!) return true
    return enteredFrom(i)[bj] === 1 && j < firstSync[bj]!
  }
  /** Every atom the two forms share means the same value at both accesses (none is written on the way from
   *  one to the other), so that it cancels in their difference. */
  const stable = (x: Access, y: Access): boolean => {
    for (const key of x.form!.terms.keys()) {
      const r = atomReg(key)
      if (r === undefined || !y.form!.terms.has(key)) continue
      for (const d of defs.get(r) ?? []) {
        if ((reaches(x.index, d) && reaches(d, y.index)) || (reaches(y.index, d) && reaches(d, x.index))) return false
      }
    }
    return true
  }

  // ---- guards: the access runs only where V < B (V the lane's index, %tid.x or one per-lane value; B a
  // constant or a block-uniform value): the region after `@p bra` past it, p from a setp comparing them
  const regions = structure.kind === 'structured' && !structure.order ? structure.regions : []
  const sameForm = (a: LaneForm | undefined, b: LaneForm) => !!a && a.k === b.k && a.terms.size === b.terms.size && [...b.terms].every(([k, c]) => a.terms.get(k) === c)
  /** The guards of the regions around instruction i: each `@p bra` past a region, as the comparison that
   *  holds where the code runs, `a cmp b` (forms), in both orientations (`b cmp' a` too). */
  type Guard = { a: LaneForm | undefined; b: LaneForm | undefined; cmp: string; R: StructRegion }
  const guards = new Map<number, Guard[]>()
  const guardsOf = (i: number): Guard[] => {
    let out = guards.get(i)
    if (out) return out
    out = []
    for (const R of regions) {
      if (!(R.start <= i && i < R.end) || (R.kind !== 'if' && R.kind !== 'block')) continue
      const first = R.body[0]
      if (first?.kind !== 'instr' || first.index >= i) continue
      const br = ins[first.index]!
      if (br.op !== 'bra' || !br.guard || structure.kind !== 'structured') continue
      const t = structure.branches.get(first.index)
      if (t?.kind !== 'break' || t.node !== R.id) continue
      const pd = defs.get(br.guard.reg)
      if (pd?.length !== 1) continue
      const sp = ins[pd[0]!]!
      if (sp.op !== 'setp' || sp.guard || sp.boolOp || !sp.cmp || !dominates(cfg, cfg.blockOf[pd[0]!]!, cfg.blockOf[first.index]!)) continue
      // the code runs where the branch is not taken: guard false for `@p bra`, true for `@!p bra`
      const cmp = br.guard.negate ? sp.cmp : NEGATED_CMP[sp.cmp]
      if (!cmp) continue
      const a = operandForm(sp.operands[1], 0), b = operandForm(sp.operands[2], 0)
      out.push({ a, b, cmp, R }, { a: b, b: a, cmp: SWAPPED_CMP[cmp]!, R })
    }
    guards.set(i, out)
    return out
  }
  const TX: LaneForm = { k: 0, terms: new Map([['%tid.x', 1]]) }
  /** The one %tid.x that runs instruction i, where a guard says so (`if (tid == k)`, `if (tid < 1)`). */
  const onlyLane = (i: number): number | undefined => {
    for (const { a, b, cmp } of guardsOf(i)) {
      if (!sameForm(a, TX) || !b || b.terms.size) continue
      if (cmp === 'eq') return b.k
      if (((cmp === 'lt' || cmp === 'lo') && b.k === 1) || ((cmp === 'le' || cmp === 'ls') && b.k === 0)) return 0
    }
    return undefined
  }
  /** Instruction i runs only where V < B (V < B read as V <= B - 1 too), B not written in the region. */
  const under = (i: number, V: string, B: LaneForm): boolean => {
    const v: LaneForm = { k: 0, terms: new Map([[V, 1]]) }
    const B1 = add(B, konst(-1))
    const moving = [...B.terms.keys()].map(atomReg).filter((r) => r !== undefined)
    return guardsOf(i).some(({ a, b, cmp, R }) =>
      sameForm(a, v) && ((sameForm(b, B) && (cmp === 'lt' || cmp === 'lo')) || (sameForm(b, B1) && (cmp === 'le' || cmp === 'ls'))) &&
      moving.every((r) => (defs.get(r) ?? []).every((d) => d < R.start || d >= R.end)))
  }
  /** The tree reduction's shape: x at base + c·V and y at base + c·V + c·B (or the other way round), both
   *  where V < B: the written elements lie below base + c·B, the read ones from there up. */
  const treeShape = (x: Access, y: Access, d: LaneForm): boolean => {
    const lanePart = [...x.form!.terms].filter(([k]) => isLane(k) || k.startsWith('v:'))
    if (lanePart.length !== 1) return false
    const [V, c] = lanePart[0]!
    if (c <= 0 || Math.max(x.size, y.size) > c) return false
    const sign = d.k !== 0 ? Math.sign(d.k) : Math.sign([...d.terms.values()][0] ?? 0)
    const B = scale(d, sign / c)
    if (!Number.isInteger(B.k) || [...B.terms.values()].some((v) => !Number.isInteger(v))) return false
    if ([...B.terms.keys()].some((k) => !(k.startsWith('u:') || k.startsWith('s:')))) return false
    return under(x.index, V, B) && under(y.index, V, B)
  }

  // ---- the pairs
  const where = (a: Access) => `line ${ins[a.index]!.line} (\`${ins[a.index]!.text}\`)`
  const talk = (x: Access, y: Access): string | undefined => {
    if (x.space !== 'generic' && y.space !== 'generic' && x.space !== y.space) return undefined
    if (x.base !== undefined && y.base !== undefined && x.base !== y.base) return undefined
    // two stores: lanes that write each other's elements at two different instructions is a write-write race
    // on a GPU too; only where the code says it means it (volatile) are they ordered as a warp orders them
    if (x.write && y.write && !x.read && !y.read && !x.strong && !y.strong) return undefined
    // two atomics: made for lanes that meet at one address, in an order no GPU promises
    if (x.atomic && y.atomic) return undefined
    const strong = x.strong || y.strong
    // one lane runs both (`if (tid == 0)`): nobody to talk to
    const solo = onlyLane(x.index)
    if (solo !== undefined && solo === onlyLane(y.index)) return undefined
    const fx = x.form, fy = y.form
    if (!fx || !fy) return strong ? 'a volatile address the analysis cannot read' : undefined
    // (a plain access at an address made of a value written between the two is another iteration's element:
    // two lanes at one address there would race on a GPU)
    if (!stable(x, y)) return strong ? 'volatile addresses made of a value written between the two accesses' : undefined
    const d = add(fy, fx, -1)
    const opaque = (f: LaneForm) => [...f.terms.keys()].some((k) => k.startsWith('v:'))
    const laneOf = (f: LaneForm) => [...f.terms].filter(([k]) => isLane(k))
    if (d.terms.size === 0) {
      if (d.k === 0 && x.size === y.size && (laneOf(fx).length > 0 || opaque(fx))) return undefined // each lane's own element
      if (treeShape(x, y, d)) return undefined
      if (opaque(fx)) return strong ? `volatile per-lane addresses ${Math.abs(d.k)} bytes apart` : undefined
      // a constant distance: compare the lanes' ranges over the lane differences of one warp
      const c = (k: string) => fx.terms.get(k) ?? 0
      const cx = c('%tid.x'), cy = c('%tid.y'), cz = c('%tid.z')
      const hit = (delta: number) => delta + d.k > -y.size && delta + d.k < x.size
      if (cx === 0 && cy === 0 && cz === 0) return hit(0) ? 'the same address for every lane' : undefined
      // a warp is 32 consecutive threads of the block (x fastest): with rows of at least 16 threads (what 2-D
      // and 3-D blocks have in practice) its lanes are at most one row (one plane) apart
      const ry = cy ? 1 : 0, rz = cz ? 1 : 0
      // where the address is a row-major s[ty][tx] (cy a multiple of cx), the block's rows are taken to be
      // as wide as the array's: lanes of one warp are at most 31 threads apart in x + pitch·y
      const P = cx && cy % cx === 0 ? cy / cx : undefined, Q = cx && cz % cx === 0 ? cz / cx : undefined
      for (let dz = -rz; dz <= rz; dz++) for (let dy = -ry; dy <= ry; dy++) for (let dx = -31; dx <= 31; dx++) {
        if (!dx && !dy && !dz) continue
        if (P !== undefined && (Q !== undefined || !dz) && Math.abs(dx + P * dy + (Q ?? 0) * dz) > 31) continue
        if (hit(cx * dx + cy * dy + cz * dz)) return `addresses ${Math.abs(d.k)} bytes apart: another lane's element in the same warp`
      }
      return undefined
    }
    if ([...d.terms.keys()].every((k) => k.startsWith('u:') || k.startsWith('s:') || isBase(k))) {
      if (treeShape(x, y, d)) return undefined
      return strong ? 'volatile accesses a block-uniform distance apart that the analysis cannot bound' : undefined
    }
    if (strong) return 'volatile addresses whose distance differs from lane to lane'
    // plain accesses: talk where one address is affine in the lane and the other is not, or both are with
    // different steps (`s[(tid + 1) % 64]` against `s[tid]`, `s[2 * tid]` against `s[tid]`); two per-lane
    // values the analysis cannot see through are taken to be each lane's own
    if (opaque(fx) && opaque(fy)) return undefined
    return 'addresses whose distance differs from lane to lane'
  }

  const points = new Map<number, LockstepPoint>()
  for (let a = 0; a < accesses.length; a++) {
    for (let b = a + 1; b < accesses.length; b++) {
      const x = accesses[a]!, y = accesses[b]!
      if (!x.write && !y.write) continue
      if (!reaches(x.index, y.index) && !reaches(y.index, x.index)) continue
      const why = talk(x, y)
      if (!why) continue
      const reason = `${where(x)} and ${where(y)}: ${why}`
      if (!points.has(x.index)) points.set(x.index, { index: x.index, partner: y.index, reason })
      if (!points.has(y.index)) points.set(y.index, { index: y.index, partner: x.index, reason })
    }
  }
  return { points: [...points.values()].sort((p, q) => p.index - q.index) }
}

/** A kernel whose lanes talk through memory without a barrier or collective between (one site per kernel:
 *  its first pair), for a build's warning where the code may run on a target without lockstep (WebGPU). */
export interface WarpTalkSite {
  kernel: string
  /** The first access of the pair: its PTX line and text, and its CUDA source position where the PTX has
   *  line information (the user's call site for inlined code). */
  line: number
  text: string
  source?: SourcePosition & { inlined?: SourcePosition }
  reason: string
}

/** The kernels of a decoded module whose lanes talk (analyzeLockstep over each kernel's whole control flow). */
export function warpTalkSites(mod: IrModule): WarpTalkSite[] {
  const out: WarpTalkSite[] = []
  for (const fn of mod.functions) {
    if (fn.kind !== 'entry' || !fn.defined || fn.refused) continue
    const cfg = buildCfg(fn)
    const points = analyzeLockstep(fn, cfg, structureFunction(fn), analyzeUniformity(fn, cfg)).points
    const p = points[0]
    if (!p) continue
    const x = fn.instructions[p.index]!
    const pos = sourcePosition(mod.files, x.loc)
    const site: WarpTalkSite = { kernel: fn.name, line: x.line, text: x.text, reason: p.reason }
    if (pos) site.source = pos
    out.push(site)
  }
  return out
}
