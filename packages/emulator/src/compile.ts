// PTX AST → JavaScript source, one function per .entry/.func, compiled once per module with `new Function`.
//
// Execution model (see backend.ts): a kernel function runs the threads [t0, t1) of blocks b0 … b1-1 in a loop
// (the whole grid in one call when it has no suspension points);
// each thread runs its control flow as a `switch (pc)` state machine over basic blocks, with PTX registers
// as JS locals. Instructions that need other threads (bar.sync, shfl/vote/match/redux/activemask) are
// suspension points: the thread saves its registers and resume pc into its state object and the scheduler
// moves on; when the whole block (barrier) or the warp's group (collective) has arrived, the scheduler
// computes the result and resumes the threads. Kernels without suspension points skip all that.
//
// Value representations (numeric.ts): i32 registers hold int32 numbers, i16 registers unsigned 16-bit
// numbers, i64 registers the hybrid number-or-BigInt, f32/f64 registers numbers, predicates booleans.
// A `.b32`/`.b64` register is given the f32/f64 representation when the instructions that use it mostly
// treat it as a float (clang 22 declares every register `.b32`/`.b64`); mismatched uses bit-cast.
//
// Memory: one heap (ArrayBuffer) holds global allocations, .global/.const variables, the shared memory of
// the running block, per-thread local memory and the parameter stack. Global/generic/const/param accesses
// are checked against a 4-byte-granule validity map (OK), shared and local accesses against their window
// sizes; a failed check calls fault(), which throws EmulatorFault.
import { PtxError } from './errors.js'
import { isPtxType, layoutParams, typeSize, type Operand, type PtxFunction, type PtxInstruction, type PtxModule, type PtxVariable } from '@kernelpack/ptx'

type Cls = 'i32' | 'f32' | 'i64' | 'f64' | 'i16' | 'pred'
type Kind = 'i32' | 'u32' | 'f32' | 'f64' | 'i64' | 'u16' | 's16' | 'u8' | 's8' | 'pred'

interface RegInfo { js: string; cls: Cls }
/** An integer `inv + c·%tid.x`: inv a JS expression constant over a block, valid when all of conds hold. */
interface Affine { inv: string; c: number; conds: string[]; mag: number }
/** A suspension point: resume pc, the code that suspends, the code that takes the results on resume. */
interface SuspInfo { pc: number; pre: string; post: string; guard?: string }

export interface InstrInfo { fn: string; text: string; line: number }

export type CollectiveKind =
  | { kind: 'bar'; red?: 'popc' | 'and' | 'or' }
  | { kind: 'shfl'; mode: string }
  | { kind: 'vote'; mode: string }
  | { kind: 'match'; mode: 'any' | 'all' }
  | { kind: 'activemask' }
  | { kind: 'warpsync' }
  | { kind: 'elect' }
  | { kind: 'redux'; mode: string; signed: boolean }

export interface CompiledFunction {
  name: string
  kind: 'entry' | 'func'
  js: string
  /** Suspension points: resume pc → what the scheduler must do. */
  collectives: Map<number, CollectiveKind>
  hasSuspend: boolean
  /** Has shfl/vote/match/activemask/redux (suspends at warp granularity). */
  hasWarpCollective: boolean
  /** Bytes of kernel params (entry) / frame (func) in param memory. */
  frameSize: number
  paramOffsets: number[]
  localSize: number
  /** Local memory needed by this function and everything it calls (per thread). */
  stackNeed: number
  calls: Set<string>
  regCount: number
}

export interface ModuleLayout {
  /** Absolute heap addresses of module .global/.const variables. */
  globals: Map<string, number>
  /** Offsets of static .shared variables in the shared window; dynamic (.extern) ones at `sharedStatic`. */
  shared: Map<string, number>
  sharedStatic: number
}

function kindOf(type: string): Kind {
  switch (type) {
    case 'f32': return 'f32'
    case 'f64': return 'f64'
    case 's32': return 'i32'
    case 'u32': case 'b32': case 'f16x2': case 'bf16x2': case 'tf32': return 'i32'
    case 's64': case 'u64': case 'b64': return 'i64'
    case 's16': return 's16'
    case 'u16': case 'b16': case 'f16': case 'bf16': case 'e4m3x2': case 'e5m2x2': return 'u16'
    case 's8': return 's8'
    case 'u8': case 'b8': return 'u8'
    case 'pred': return 'pred'
    default: throw new Error(`no kind for type ${type}`)
  }
}

function align(n: number, a: number): number { return Math.ceil(n / a) * a }

function jsNum(x: number): string {
  if (x !== x) return 'NaN'
  if (x === Infinity) return 'Infinity'
  if (x === -Infinity) return '-Infinity'
  if (Object.is(x, -0)) return '-0'
  return String(x)
}

const f32buf = new Float32Array(1)
const i32buf = new Int32Array(f32buf.buffer)
const f64buf = new Float64Array(1)
const u64buf = new BigUint64Array(f64buf.buffer)

function immI64(v: bigint): string {
  v = BigInt.asIntN(64, v)
  if (v >= -9007199254740991n && v <= 9007199254740991n) return jsNum(Number(v))
  return `${v}n`
}

/** Per-function code generator. */
class FnCompiler {
  regs = new Map<string, RegInfo>()
  out: string[] = []
  labels = new Map<string, number>()
  nextPc = 1
  collectives = new Map<number, CollectiveKind>()
  hasSuspend = false
  vars = new Map<string, { v: PtxVariable; off: number }>() // param/local vars of this function
  localSize = 0
  localExact = 0
  frameSize = 0
  paramOffsets: number[] = []
  retOffsets: number[] = []
  calls = new Set<string>()
  hoisted = new Map<string, { name: string; code: string; kind: Kind }>()
  suspendAt = new Map<number, PtxInstruction>()
  cur!: PtxInstruction
  instrIndex = 0
  /** Module-wide ids of this function's access sites with an allocation-range cache (addr()). */
  siteIds: number[] = []
  /** Block-level bounds checks (see affineStep): registers whose value is `inv + c·%tid.x` for the whole
   *  block, valid under `conds`; `prefix` while compiling the straight-line code before the first label. */
  aff = new Map<string, Affine>()
  defCount = new Map<string, number>()
  prefix = false
  /** Conditions, evaluated once per block, under which the marked per-thread checks can be left out. */
  hoistConds = new Set<string>()

  /** Speculative variant: i64 kernel parameters are assumed to be numbers within ±2^40 (checked on entry,
   *  else the generic variant `slow` runs), which lets bounded 64-bit adds use plain `+`. */
  bounds?: Map<string, number>
  constructor(public fn: PtxFunction, public mc: ModuleCompiler, public slow?: string) {}

  fail(msg: string, ins: PtxInstruction = this.cur): never {
    throw new PtxError(`${msg} in \`${ins.text}\` (function ${this.fn.name})`, ins.line)
  }

  // --- registers ---
  assignRegs(): void {
    const votes = new Map<string, number>()
    const vote = (o: Operand | undefined, w: number) => {
      if (!o) return
      if (o.k === 'id') votes.set(o.name, (votes.get(o.name) ?? 0) + w)
      else if (o.k === 'vec') for (const x of o.items) vote(x, w)
      else if (o.k === 'pair') vote(o.a, w)
    }
    for (const s of this.fn.body!) {
      if (s.kind !== 'instr') continue
      const types = s.op.filter((p) => isPtxType(p))
      const op0 = s.op[0]!
      if (op0 === 'cvt') {
        const w = (t: string | undefined) => (t === 'f32' || t === 'f64' ? 1 : t && /^[su](32|64)$/.test(t) ? -1 : 0)
        vote(s.args[0], w(types[0]))
        vote(s.args[1], w(types[1]))
        continue
      }
      if (op0 === 'setp' || op0 === 'set' || op0 === 'slct' || op0 === 'testp') {
        const t = types[types.length - 1]
        const w = t === 'f32' || t === 'f64' ? 1 : t && /^[su](32|64)$/.test(t) ? -1 : 0
        for (let i = 1; i < s.args.length; i++) vote(s.args[i], w)
        continue
      }
      const t = types[types.length - 1]
      if (!t) continue
      let w = t === 'f32' || t === 'f64' ? 1 : /^[su](32|64)$/.test(t) ? -1 : 0
      if (w === 0 && (op0 === 'mov') && s.args[1]?.k === 'fimm') w = 1
      if (w === 0) continue
      if (op0 === 'ld' || op0 === 'st' || op0 === 'atom' || op0 === 'red' || op0 === 'ldu') {
        for (const a of s.args) if (a.k !== 'addr') vote(a, w)
        continue
      }
      if (op0 === 'mul' && s.op.includes('wide')) { vote(s.args[1], w); vote(s.args[2], w); continue }
      for (const a of s.args) vote(a, w)
    }
    let i = 0
    for (const r of this.fn.regs) {
      let cls: Cls
      switch (r.type) {
        case 'pred': cls = 'pred'; break
        case 'f32': cls = 'f32'; break
        case 'f64': cls = 'f64'; break
        case 'b32': case 'u32': case 's32': cls = (votes.get(r.name) ?? 0) > 0 ? 'f32' : 'i32'; break
        case 'b64': case 'u64': case 's64': cls = (votes.get(r.name) ?? 0) > 0 ? 'f64' : 'i64'; break
        case 'b16': case 'u16': case 's16': case 'f16': case 'bf16': case 'b8': case 'u8': case 's8': cls = 'i16'; break
        case 'f16x2': case 'bf16x2': cls = 'i32'; break
        default: throw new PtxError(`unsupported register type .${r.type} for ${r.name}`, this.fn.line)
      }
      this.regs.set(r.name, { js: `r${i++}`, cls })
    }
  }

  reg(o: Operand): RegInfo | undefined {
    return o.k === 'id' ? this.regs.get(o.name) : undefined
  }

  conv(x: string, c: Cls, k: Kind): string {
    if (c === 'pred') return k === 'pred' ? x : `(${x}?1:0)`
    switch (c) {
      case 'i32':
        switch (k) {
          case 'i32': case 'i64': return x
          case 'u32': return `(${x}>>>0)`
          case 'f32': return `FB32(${x})`
          case 'u16': return `(${x}&65535)`
          case 's16': return `(${x}<<16>>16)`
          case 'u8': return `(${x}&255)`
          case 's8': return `(${x}<<24>>24)`
          case 'pred': return `(${x}!==0)`
          case 'f64': break
        }
        break
      case 'f32':
        switch (k) {
          case 'f32': return x
          case 'i32': case 'i64': return `BF32(${x})`
          case 'u32': return `(BF32(${x})>>>0)`
          case 'u16': return `(BF32(${x})&65535)`
          case 's16': return `(BF32(${x})<<16>>16)`
          default: break
        }
        break
      case 'i16':
        switch (k) {
          case 'u16': case 'i32': case 'u32': case 'i64': return x
          case 's16': return `(${x}<<16>>16)`
          case 'u8': return `(${x}&255)`
          case 's8': return `(${x}<<24>>24)`
          case 'pred': return `(${x}!==0)`
          default: break
        }
        break
      case 'i64':
        switch (k) {
          case 'i64': return x
          case 'i32': return `lo32(${x})`
          case 'u32': return `(lo32(${x})>>>0)`
          case 'f64': return `FB64(${x})`
          case 'u16': return `(lo32(${x})&65535)`
          case 's16': return `(lo32(${x})<<16>>16)`
          case 'u8': return `(lo32(${x})&255)`
          case 's8': return `(lo32(${x})<<24>>24)`
          case 'f32': return `FB32(lo32(${x}))`
          case 'pred': return `(${x}!=0)`
        }
        break
      case 'f64':
        switch (k) {
          case 'f64': return x
          case 'i64': return `BF64(${x})`
          case 'i32': return `lo32(BF64(${x}))`
          case 'u32': return `(lo32(BF64(${x}))>>>0)`
          default: break
        }
        break
    }
    this.fail(`register of class ${c} used as ${k}`)
  }

  /** JS expression for operand `o` read as kind k. */
  rd(o: Operand, k: Kind): string {
    switch (o.k) {
      case 'id': {
        const r = this.regs.get(o.name)
        if (r) return this.conv(r.js, r.cls, k)
        const sp = this.special(o.name)
        if (sp !== undefined) {
          if (k === 'i64' || k === 'u32') return `(${sp}>>>0)`
          return this.conv(sp, 'i32', k)
        }
        const addr = this.symAddr(o.name)
        if (addr !== undefined) return k === 'i32' ? `((${addr})|0)` : addr
        return this.fail(`unknown register or symbol ${o.name}`)
      }
      case 'imm': {
        const v = o.value
        switch (k) {
          case 'i32': return jsNum(Number(BigInt.asIntN(32, v)))
          case 'u32': return jsNum(Number(BigInt.asUintN(32, v)))
          case 'i64': return immI64(v)
          case 'u16': return jsNum(Number(BigInt.asUintN(16, v)))
          case 's16': return jsNum(Number(BigInt.asIntN(16, v)))
          case 'u8': return jsNum(Number(BigInt.asUintN(8, v)))
          case 's8': return jsNum(Number(BigInt.asIntN(8, v)))
          case 'pred': return v !== 0n ? 'true' : 'false'
          // an integer literal where a float is expected is a bit pattern (`mov.b32 %r6, 1056964608` into a
          // register clang uses as f32)
          case 'f32': i32buf[0] = Number(BigInt.asIntN(32, v)); return jsNum(f32buf[0]!)
          case 'f64': u64buf[0] = BigInt.asUintN(64, v); return jsNum(f64buf[0]!)
        }
        break
      }
      case 'fimm': {
        let val: number
        if (o.width === 32) { i32buf[0] = Number(BigInt.asIntN(32, o.bits)); val = f32buf[0]! } else { u64buf[0] = o.bits; val = f64buf[0]! }
        switch (k) {
          case 'f32': return jsNum(Math.fround(val))
          case 'f64': return jsNum(val)
          case 'i32': case 'u32': return o.width === 32 ? jsNum(Number(k === 'i32' ? BigInt.asIntN(32, o.bits) : o.bits)) : this.fail('f64 immediate used as 32-bit')
          case 'i64': return immI64(o.bits)
          case 'u16': return jsNum(Number(o.bits & 0xffffn))
          default: break
        }
        break
      }
      case 'dimm':
        if (k === 'f32') return jsNum(Math.fround(o.value))
        if (k === 'f64') return jsNum(o.value)
        break
      case 'neg':
        return `(-${this.rd(o.a, k)})`
      case 'not':
        if (k === 'pred') return `!${this.rd(o.a, 'pred')}`
        break
      default:
        break
    }
    return this.fail(`operand of kind ${o.k} cannot be read as ${k}`)
  }

  /** Statement writing expression e (of kind k) into register operand o. */
  wr(o: Operand, k: Kind, e: string): string {
    if (o.k === 'id' && o.name === '_') return `${e};`
    const r = this.reg(o)
    if (!r) return this.fail(`destination is not a register`)
    return `${r.js}=${this.toCls(e, k, r.cls)};`
  }

  toCls(e: string, k: Kind, c: Cls): string {
    switch (c) {
      case 'i32':
        if (k === 'i32') return e
        if (k === 'f32') return `BF32(${e})`
        if (k === 'i64') return `lo32(${e})`
        if (k === 'pred') return `(${e}?1:0)`
        if (k === 'f64') break
        return `(${e})|0`
      case 'f32':
        if (k === 'f32') return e
        if (k === 'i32' || k === 'u32') return `FB32(${e})`
        if (k === 'i64') return `FB32(lo32(${e}))`
        break
      case 'i16':
        if (k === 'i64') return `(lo32(${e})&65535)`
        if (k === 'f32') return `(BF32(${e})&65535)`
        if (k === 'pred') return `(${e}?1:0)`
        if (k === 'f64') break
        return `(${e})&65535`
      case 'i64':
        if (k === 'i64' || k === 'i32' || k === 'u32' || k === 'u16' || k === 's16' || k === 'u8' || k === 's8') return e
        if (k === 'f64') return `BF64(${e})`
        if (k === 'f32') return `(BF32(${e})>>>0)`
        break
      case 'f64':
        if (k === 'f64') return e
        if (k === 'i64') return `FB64(${e})`
        break
      case 'pred':
        if (k === 'pred') return e
        return `(${e})!=0`
    }
    return this.fail(`cannot write a ${k} value into a ${c} register`)
  }

  special(name: string): string | undefined {
    switch (name) {
      case '%tid.x': return 'tx'
      case '%tid.y': return 'ty'
      case '%tid.z': return 'tz'
      case '%ntid.x': return 'NTX'
      case '%ntid.y': return 'NTY'
      case '%ntid.z': return 'NTZ'
      case '%ctaid.x': return 'CX'
      case '%ctaid.y': return 'CY'
      case '%ctaid.z': return 'CZ'
      case '%nctaid.x': return 'NCX'
      case '%nctaid.y': return 'NCY'
      case '%nctaid.z': return 'NCZ'
      case '%laneid': return '(t&31)'
      case '%warpid': return '(t>>>5)'
      case '%nwarpid': return '((NT+31)>>>5)'
      case '%smid': return '0'
      case '%nsmid': return '1'
      case '%gridid': return '0'
      case '%lanemask_eq': return '(1<<(t&31))'
      case '%lanemask_lt': return '((1<<(t&31))-1)'
      case '%lanemask_le': return '(((1<<(t&31))<<1)-1)'
      case '%lanemask_gt': return '(~(((1<<(t&31))<<1)-1))'
      case '%lanemask_ge': return '(~((1<<(t&31))-1))'
      case '%clock': return '(E.clock()|0)'
      case '%clock_hi': return '0'
      case '%dynamic_smem_size': return 'DYN'
      case '%total_smem_size': return 'SHN'
      case '%cluster_ctarank': case '%cluster_nctarank': return name === '%cluster_nctarank' ? '1' : '0'
      case '%clusterid.x': case '%clusterid.y': case '%clusterid.z': return '0'
      case '%cluster_ctaid.x': case '%cluster_ctaid.y': case '%cluster_ctaid.z': return '0'
      case '%cluster_nctaid.x': case '%cluster_nctaid.y': case '%cluster_nctaid.z': return '1'
      case '%nclusterid.x': return 'NCX'
      case '%nclusterid.y': return 'NCY'
      case '%nclusterid.z': return 'NCZ'
      case '%is_explicit_cluster': return '0'
    }
    if (name === '%clock64' || name === '%globaltimer') return '(E.clock()|0)'
    return undefined
  }

  /** Address of a symbol in its own state space, as a JS expression (number). */
  symAddr(name: string): string | undefined {
    const v = this.vars.get(name)
    if (v) {
      if (v.v.space === 'param') return `(FB+${v.off})`
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
  symSpace(name: string): string | undefined {
    const v = this.vars.get(name)
    if (v) return v.v.space
    if (this.mc.layout.globals.has(name)) return this.mc.varSpace.get(name)
    if (this.mc.layout.shared.has(name)) return 'shared'
    return undefined
  }

  // --- memory ---

  /** Emits code that computes the absolute address of operand `a` for an access of n bytes in `space`
   *  into local `a`, checked; returns the statement. */
  addr(o: Operand, space: string, n: number, idx: number): string {
    if (o.k !== 'addr') return this.fail('expected an address operand')
    let base: string
    if (!o.base) base = '0'
    else {
      const r = this.reg(o.base)
      if (r) base = r.cls === 'i64' ? r.js : r.cls === 'i32' || r.cls === 'i16' ? `(${r.js}>>>0)` : this.fail('address register must be an integer')
      else if (o.base.k === 'id') {
        const s = this.symAddr(o.base.name)
        if (s === undefined) return this.fail(`unknown symbol ${o.base.name}`)
        base = s
      } else return this.fail('bad address')
    }
    const off = o.offset
    const r32 = o.base && this.reg(o.base) && this.reg(o.base)!.cls !== 'i64'
    // 32-bit address registers wrap modulo 2^32 (PTX .u32 addressing of shared/local windows)
    const w = off === 0 ? base : /^\d+$/.test(base) ? String(Number(base) + off) : r32 ? `((${base}+${off})>>>0)` : `${base}+${off}`
    const al = n >= 16 ? 15 : n - 1
    const alc = al > 0 ? `||(a&${al})!==0` : ''
    const last = n > 4 ? `||OK[(a+${n - 4})>>>2]!==1` : ''
    switch (space) {
      case 'shared':
        return `a=${w};if(!(a>=0&&a<=SHN-${n})${alc})fault(${idx},a,'shared');a+=SB;`
      case 'local':
        return `a=${w};if(!(a>=0&&a<=LSZ-${n})${alc})fault(${idx},a,'local');a+=LB;`
      default: {
        // a >>> 2 of a negative address indexes far past OK (undefined); a < HN rules out wrap-around
        const check = `if(!(a<HN&&OK[a>>>2]===1)${last}${alc})fault(${idx},a,${JSON.stringify(space)});`
        if (this.fn.kind !== 'entry' || space === 'param') return `a=${w};${check}`
        // Kernels cache, per access site k, the allocation an earlier address of that site fell in:
        // GR[2k], GR[2k+1] bound the addresses at which an n-byte access stays inside it (empty at the
        // start of a launch). The full granule check runs only on a miss, which then looks up the
        // allocation (rng: binary search over the launch's allocation ranges, Heap.ranges()) for the next
        // block. A hit implies the full check would pass, since every granule of an allocation is mapped
        // and allocations do not change during a launch; a BigInt address fails the range test before
        // `a&al` could see it. The bounds are constants within a block (gLk/gHk, read at block start):
        // V8 keeps loop-invariant bounds in registers, where bounds updated inside the thread loop cost
        // as much as the granule check they replace.
        const k = this.mc.sites++
        this.siteIds.push(k)
        const site = `if(!(a>=gL${k}&&a<=gH${k})${alc}){${check}rng(a);GR[${2 * k}]=RL;GR[${2 * k + 1}]=RH-${n};}`
        const f = this.prefix && !this.cur.guard && o.base?.k === 'id' && this.reg(o.base)?.cls === 'i64' ? this.aff.get(o.base.name) : undefined
        if (!f || f.c % (al + 1) !== 0) return `a=${w};${site}`
        // every thread of the block accesses inv+off+c·tx, tx in [0, NTX): one range test of both ends,
        // against the site's cached allocation (GR) first, so consecutive blocks skip the lookup
        for (const c of f.conds) this.hoistConds.add(c)
        this.hoistConds.add(`hz(${f.inv}+${off},${f.c},${n},${al + 1},${2 * k})`)
        return `a=${w};/*H<*/${site}/*>H*/`
      }
    }
  }

  /** Load expression of type t from absolute address in `a` (+ byte offset k). */
  load(t: string, k = 0): { e: string; kind: Kind } {
    const ad = k ? `(a+${k})` : 'a'
    switch (t) {
      case 'u8': case 'b8': return { e: `H8[${ad}]`, kind: 'u8' }
      case 's8': return { e: `HI8[${ad}]`, kind: 's8' }
      case 'u16': case 'b16': case 'f16': case 'bf16': return { e: `HU16[${ad}>>>1]`, kind: 'u16' }
      case 's16': return { e: `HI16[${ad}>>>1]`, kind: 's16' }
      // PTX ISA "Operand Size Exceeding Instruction-Type Size": a load into a wider register sign-extends
      // only signed types; .b32 zero-extends like .u32 (clang loads `unsigned` params with ld.param.b32 into %rd)
      case 'u32': case 'b32': return { e: `HU32[${ad}>>>2]`, kind: 'u32' }
      case 's32': case 'f16x2': case 'bf16x2': return { e: `HI32[${ad}>>>2]`, kind: 'i32' }
      case 'f32': return { e: `HF32[${ad}>>>2]`, kind: 'f32' }
      case 'f64': return { e: `HF64[${ad}>>>3]`, kind: 'f64' }
      case 'u64': case 's64': case 'b64': return { e: `mk64(HU32[${ad}>>>2],HI32[(${ad}>>>2)+1])`, kind: 'i64' }
    }
    return this.fail(`unsupported load type .${t}`)
  }
  /** Store statement of value expression v (already in kind kindOf(t) or f32/f64) at a(+k). */
  store(t: string, v: string, k = 0): string {
    const ad = k ? `(a+${k})` : 'a'
    switch (t) {
      case 'u8': case 'b8': case 's8': return `H8[${ad}]=${v};`
      case 'u16': case 'b16': case 's16': case 'f16': case 'bf16': return `HU16[${ad}>>>1]=${v};`
      case 'u32': case 's32': case 'b32': case 'f16x2': case 'bf16x2': return `HI32[${ad}>>>2]=${v};`
      case 'f32': return `HF32[${ad}>>>2]=${v};`
      case 'f64': return `HF64[${ad}>>>3]=${v};`
      case 'u64': case 's64': case 'b64': return `x64=${v};HI32[${ad}>>>2]=lo32(x64);HI32[(${ad}>>>2)+1]=hi32(x64);`
    }
    return this.fail(`unsupported store type .${t}`)
  }

  /** The representation in which a load/store of type t moves data for register class c. */
  dataKind(t: string, o: Operand): Kind {
    const r = this.reg(o)
    if (t === 'b32' && r?.cls === 'f32') return 'f32'
    if (t === 'b64' && r?.cls === 'f64') return 'f64'
    return kindOf(t)
  }

  compile(): string {
    const fn = this.fn
    this.assignRegs()
    if (this.slow !== undefined) this.bounds = this.computeBounds()
    // params / returns / local vars
    // kernel parameters at the offsets of @kernelpack/ptx's layout (the manifest's and the runtime's)
    const pl = layoutParams(fn.params)
    fn.params.forEach((p, i) => this.vars.set(p.name, { v: p, off: pl.offsets[i]! }))
    this.paramOffsets = pl.offsets
    let off = pl.end
    for (const p of fn.returns) {
      off = align(off, Math.max(1, p.align))
      this.vars.set(p.name, { v: p, off })
      this.retOffsets.push(off)
      off += p.size
    }
    let loff = 0
    for (const v of fn.vars) {
      if (v.space === 'param') {
        off = align(off, Math.max(1, v.align))
        this.vars.set(v.name, { v, off })
        off += v.size
      } else if (v.space === 'local') {
        loff = align(loff, Math.max(1, v.align))
        this.vars.set(v.name, { v, off: loff })
        loff += v.size
      } else if (v.space === 'shared') {
        // laid out module-wide by ModuleCompiler
      } else this.vars.set(v.name, { v, off: 0 })
    }
    this.frameSize = align(off, 16)
    this.localSize = align(loff, 16)
    this.localExact = loff

    // labels → pcs
    for (const s of fn.body!) if (s.kind === 'label') this.labels.set(s.name, this.nextPc++)

    const body: string[] = []
    const stmtCode: string[][] = []
    const suspInfo = new Map<number, SuspInfo>()
    this.prefix = fn.kind === 'entry'
    if (this.prefix) this.countDefs()
    for (const s of fn.body!) {
      const start = body.length
      if (s.kind === 'label') { this.prefix = false; body.push(`case ${this.labels.get(s.name)}:`); stmtCode.push(body.slice(start)); continue }
      this.cur = s
      const idx = this.mc.instrs.length
      this.mc.instrs.push({ fn: fn.name, text: s.text, line: s.line })
      const code = this.instr(s, idx)
      if (this.prefix) this.affineStep(s)
      if (typeof code !== 'string' && code.susp) {
        const g = s.guard ? this.regs.get(s.guard.reg) : undefined
        suspInfo.set(stmtCode.length, { ...code.susp, guard: g ? `${s.guard!.negate ? '!' : ''}${g.js}` : undefined })
      }
      if (s.guard) {
        const g = this.regs.get(s.guard.reg)
        if (!g || g.cls !== 'pred') this.fail(`guard ${s.guard.reg} is not a predicate register`)
        if (typeof code === 'string') body.push(`if(${s.guard.negate ? '!' : ''}${g.js}){${code}}`)
        else {
          const skip = this.nextPc++
          body.push(`if(${s.guard.negate ? '' : '!'}${g.js}){pc=${skip};continue L;}`)
          body.push(...code.parts)
          body.push(`case ${skip}:`)
        }
      } else if (typeof code === 'string') body.push(code)
      else body.push(...code.parts)
      stmtCode.push(body.slice(start))
    }
    const structured = this.structure(stmtCode, suspInfo)
    const regDecl = [...this.regs.values()].map((r) => `${r.js}=${r.cls === 'pred' ? 'false' : '0'}`).join(',')
    const regList = [...this.regs.values()].map((r) => r.js)
    // save/restore only the registers live across each suspension point
    const live = this.liveAcross()
    let code = structured ?? body.join('\n').replace(/\/\*BR:([^*]+)\*\//g, (_m, l: string) => `pc=${this.labels.get(l)};continue L;`)
    let restore = ''
    if (this.suspendAt.size) {
      // numbers go to a Float64Array (no boxing), i64 values (number or BigInt) to a plain array
      const slot = new Map(regList.map((r, i) => [r, i]))
      const clsOf = new Map([...this.regs.values()].map((r) => [r.js, r.cls]))
      const sv = (r: string) => (clsOf.get(r) === 'i64' ? `R[${slot.get(r)}]=${r};` : clsOf.get(r) === 'pred' ? `RF[${slot.get(r)}]=${r}?1:0;` : `RF[${slot.get(r)}]=${r};`)
      const rs = (r: string) => (clsOf.get(r) === 'i64' ? `${r}=R[${slot.get(r)}];` : clsOf.get(r) === 'pred' ? `${r}=RF[${slot.get(r)}]!==0;` : `${r}=RF[${slot.get(r)}];`)
      const cases: string[] = []
      for (const [pc, regs] of live) {
        code = code.replace(`/*SAVE${pc}*/`, regs.map(sv).join('')).replace(`/*RESTORE${pc}*/`, regs.map(rs).join(''))
        cases.push(`case ${pc}:${regs.map(rs).join('')}break;`)
      }
      restore = `switch(pc){${cases.join('')}}`
    }
    // launch state as function-local constants (V8 keeps them in registers; the module-level ones are
    // mutable and would be reloaded after every helper call)
    const snap = 'const H8=_H8,HI8=_HI8,HU16=_HU16,HI16=_HI16,HI32=_HI32,HU32=_HU32,HF32=_HF32,HF64=_HF64,OK=_OK,HN=_HN,SB=_SB,SHN=_SHN,DYN=_DYN,LB0=_LB0,LN=_LN,LSZ=_LSZ,NTX=_NTX,NTY=_NTY,NTZ=_NTZ,NT=_NT,NCX=_NCX,NCY=_NCY,NCZ=_NCZ,CX=_CX,CY=_CY,CZ=_CZ;'
    const locals = `${snap}let a=0,x64=0,CF=0,u=0,v=0${regDecl ? ',' + regDecl : ''};`
    const siteDecl = this.siteIds.length ? `const ${this.siteIds.map((k) => `gL${k}=GR[${2 * k}],gH${k}=GR[${2 * k + 1}]`).join(',')};` : ''
    if (fn.kind === 'entry') {
      // A kernel call runs threads [t0, t1) of each block b0 … b1-1 (linear block index, x fastest, as the
      // backend orders them); kernels without suspension points get the whole grid in one call, so the
      // parameter loads, the i64 guard and the access-site range caches are set up once per launch.
      // Thread ids advance incrementally (no division per thread); LB = this thread's local window.
      const guard = this.slow === undefined ? '' : [...this.hoisted.values()].filter((h) => h.kind === 'i64').map((h) => `if(typeof ${h.name}!=='number'||${h.name}>1099511627776||${h.name}<-1099511627776)return ${this.slow}(T,t0,t1,FB,b0,b1);`).join('')
      const pre = `${locals.replace(',CX=_CX,CY=_CY,CZ=_CZ;', ',GR=_GR;')}const LF=0;${[...this.hoisted.values()].map((h) => h.code).join('')}${guard}`
      // device functions read the block index from the module-level _CX/_CY/_CZ
      const blk = `for(let b=b0;b<b1;b++){const CX=b%NCX,CY=((b/NCX)|0)%NCY,CZ=(b/(NCX*NCY))|0;_CX=CX;_CY=CY;_CZ=CZ;${siteDecl}let tx=t0%NTX,ty=((t0/NTX)|0)%NTY,tz=(t0/(NTX*NTY))|0;`
      const step = `t++,(++tx===NTX&&(tx=0,++ty===NTY&&(ty=0,tz++)))`
      if (this.hasSuspend) code = code.replace(/\/\*H<\*\/|\/\*>H\*\//g, '')
      if (this.hasSuspend && structured !== undefined) {
        return `function(T,t0,t1,FB,b0,b1){${pre}${blk}\nTH:for(let t=t0;t<t1;${step}){const S=T[t];if(S.st!==0)continue;const LB=LB0+t*LN;let pc=S.pc;const R=S.r,RF=S.f;\n${code}\n}}}`
      }
      if (this.hasSuspend) {
        return `function(T,t0,t1,FB,b0,b1){${pre}${blk}\nTH:for(let t=t0;t<t1;${step}){const S=T[t];if(S.st!==0)continue;const LB=LB0+t*LN;let pc=S.pc;const R=S.r,RF=S.f;if(pc!==0){${restore}}\nL:for(;;)switch(pc){case 0:\n${code}\nS.st=3;continue TH;default:throw new Error('bad pc '+pc)}}}}`
      }
      const loop = (c: string, whole = false) => {
        // a whole block as three nested counting loops (cheaper than the incremental tx/ty/tz step)
        const head = whole ? `let t=0;for(let tz=0;tz<NTZ;tz++)for(let ty=0;ty<NTY;ty++)TH:for(let tx=0;tx<NTX;tx++,t++)` : `TH:for(let t=t0;t<t1;${step})`
        return structured !== undefined
          ? `${head}{const LB=LB0+t*LN;\n${c}\n}`
          : `${head}{const LB=LB0+t*LN;let pc=0;\nL:for(;;)switch(pc){case 0:\n${c}\ncontinue TH;default:throw new Error('bad pc '+pc)}}`
      }
      const checked = loop(code.replace(/\/\*H<\*\/|\/\*>H\*\//g, ''))
      // a whole block (t0 = 0, t1 = NTX·NTY·NTZ) whose hoisted accesses all stay inside one allocation
      // each runs a copy of the thread loop without their per-thread checks
      // (only for small bodies: the copy doubles the function, and V8 does not optimize very large ones)
      if (!this.hoistConds.size || code.length > 20000) return `function(T,t0,t1,FB,b0,b1){${pre}${blk}\n${checked}}}`
      const unchecked = loop(code.replace(/\/\*H<\*\/.*?\/\*>H\*\//g, ''), true)
      return `function(T,t0,t1,FB,b0,b1){${pre}${blk}\nif(t0===0&&t1===NT&&${[...this.hoistConds].join('&&')}){${unchecked}}else{${checked}}}}`
    }
    if (structured !== undefined) return `function(FB,LB,LF,t){${locals}const tx=t%NTX,ty=((t/NTX)|0)%NTY,tz=(t/(NTX*NTY))|0;\n${code}\n}`
    return `function(FB,LB,LF,t){${locals}const tx=t%NTX,ty=((t/NTX)|0)%NTY,tz=(t/(NTX*NTY))|0;let pc=0;\nL:for(;;)switch(pc){case 0:\n${code}\nreturn;default:throw new Error('bad pc '+pc)}}`
  }

  /** How often each register is written anywhere in the function (affineStep trusts single definitions). */
  countDefs(): void {
    const add = (o: Operand | undefined) => {
      if (!o) return
      if (o.k === 'id') this.defCount.set(o.name, (this.defCount.get(o.name) ?? 0) + 1)
      else if (o.k === 'vec' || o.k === 'list') o.items.forEach(add)
      else if (o.k === 'pair') { add(o.a); add(o.b) }
    }
    for (const st of this.fn.body!) {
      if (st.kind !== 'instr') continue
      if (st.op[0] === 'call') { st.args.forEach(add); continue }
      add(st.args[0])
    }
  }

  /** Affine value of an operand at this point of the prefix, or undefined. */
  affOf(o: Operand | undefined, cls: Cls): Affine | undefined {
    if (!o) return undefined
    if (o.k === 'imm') {
      const v = cls === 'i32' ? Number(BigInt.asIntN(32, o.value)) : Number(BigInt.asIntN(64, o.value))
      return Math.abs(v) <= 2 ** 40 ? { inv: jsNum(v), c: 0, conds: [], mag: Math.abs(v) } : undefined
    }
    if (o.k !== 'id') return undefined
    const r = this.regs.get(o.name)
    return r && r.cls === cls ? this.aff.get(o.name) : undefined
  }

  /** Tracks, through the straight-line code before the first label (which each thread runs at most once,
   *  in order), the registers whose value is an exact integer `inv + c·%tid.x` with `inv` the same for the
   *  whole block (kernel parameters, %ctaid, %ntid, %nctaid, immediates) and c a constant: nvcc's
   *  `mad.lo.s32 %r1, %ctaid.x, %ntid.x, %tid.x; mul.wide.s32 %rd5, %r1, 4; add.s64 %rd6, %rd4, %rd5`.
   *  32-bit results carry a condition that neither end wraps (wr); an access through such an address
   *  then needs one range test per block (addr(), hz). Only singly-defined, unpredicated definitions
   *  count, so the value at any later use in the prefix is the one computed here. 64-bit kernel
   *  parameters take part only in the speculative variant, where they are numbers within ±2^40, so that
   *  all of this is exact in doubles. */
  affineStep(ins: PtxInstruction): void {
    const op = ins.op
    if ((op[0] === 'bra' || op[0] === 'ret' || op[0] === 'exit') && !ins.guard) { this.prefix = false; return }
    const d = ins.args[0]
    if (ins.guard || d?.k !== 'id' || this.defCount.get(d.name) !== 1) return
    const dr = this.regs.get(d.name)
    if (!dr || (dr.cls !== 'i32' && dr.cls !== 'i64')) return
    const t = this.types(ins)
    const A = ins.args
    const s32 = t[0] === 's32' || t[0] === 'u32' || t[0] === 'b32'
    // mag bounds |inv| + |c|·1024; past 2^52 the doubles might round, and the value is dropped
    const wr = (f: Affine, lo = -2147483648): Affine => ({ ...f, conds: [...f.conds, `wr(${f.inv},${f.c},${lo})`], mag: 2 ** 31 + Math.abs(f.c) * 1024 })
    const sum = (x: Affine, y: Affine): Affine => ({ inv: `(${x.inv}+${y.inv})`, c: x.c + y.c, conds: [...x.conds, ...y.conds], mag: x.mag + y.mag })
    const lit = (f: Affine) => (/^-?\d+$/.test(f.inv) && f.c === 0 ? Number(f.inv) : undefined)
    const prod = (x: Affine, y: Affine, needLit: boolean): Affine | undefined => {
      const k = lit(x) ?? lit(y)
      if (k === undefined || Math.abs(k) > 65536) {
        // two block-invariant factors: exact only while small, which the caller's wr() checks
        if (needLit || x.c !== 0 || y.c !== 0) return undefined
        return { inv: `(${x.inv}*${y.inv})`, c: 0, conds: [...x.conds, ...y.conds], mag: Infinity }
      }
      const f = lit(x) !== undefined ? y : x
      return { inv: `(${f.inv}*${k})`, c: f.c * k, conds: f.conds, mag: f.mag * Math.abs(k) }
    }
    let v: Affine | undefined
    switch (op[0]) {
      case 'ld': {
        const am = A[1]
        if (!op.includes('param') || am?.k !== 'addr' || am.base?.k !== 'id' || !this.fn.params.some((p) => p.name === (am.base as { name: string }).name)) return
        const h = [...this.hoisted.entries()].find(([key]) => key.startsWith(`${(am.base as { name: string }).name}+${am.offset}:`))?.[1]
        if (!h) return
        if (dr.cls === 'i64' && h.kind === 'i64' && this.slow !== undefined) v = { inv: h.name, c: 0, conds: [], mag: 2 ** 40 }
        else if (dr.cls === 'i32' && (h.kind === 'i32' || h.kind === 'u32')) v = { inv: `(${h.name}|0)`, c: 0, conds: [], mag: 2 ** 31 }
        break
      }
      case 'mov': {
        const src = A[1]
        if (src?.k === 'id' && !this.regs.has(src.name)) {
          if (dr.cls !== 'i32') return
          if (src.name === '%tid.x') v = { inv: '0', c: 1, conds: [], mag: 1024 }
          else if (/^%(ctaid|ntid|nctaid)\.[xyz]$/.test(src.name)) v = { inv: this.special(src.name)!, c: 0, conds: [], mag: 2 ** 31 }
        } else v = this.affOf(src, dr.cls)
        break
      }
      case 'cvta':
        if (op.includes('to') && op.includes('global') && dr.cls === 'i64') v = this.affOf(A[1], 'i64')
        break
      case 'cvt': {
        if (dr.cls !== 'i64' || (t[0] !== 's64' && t[0] !== 'u64') || (t[1] !== 's32' && t[1] !== 'u32')) return
        const x = this.affOf(A[1], 'i32')
        if (x) v = t[1] === 'u32' ? wr(x, 0) : x
        break
      }
      case 'add': {
        if (op.includes('cc') || op.includes('sat') || !(s32 || t[0] === 's64' || t[0] === 'u64' || t[0] === 'b64')) return
        const x = this.affOf(A[1], dr.cls), y = this.affOf(A[2], dr.cls)
        if (!x || !y) return
        v = dr.cls === 'i32' ? (s32 ? wr(sum(x, y)) : undefined) : sum(x, y)
        break
      }
      case 'mad': case 'mul': {
        if (dr.cls === 'i32' && op.includes('lo') && s32) {
          const x = this.affOf(A[1], 'i32'), y = this.affOf(A[2], 'i32')
          const p = x && y ? prod(x, y, false) : undefined
          if (!p) return
          if (op[0] === 'mul') { v = wr(p); break }
          const z = this.affOf(A[3], 'i32')
          if (z) v = wr(sum(p, z))
        } else if (op[0] === 'mul' && dr.cls === 'i64' && op.includes('wide') && (t[0] === 's32' || t[0] === 'u32')) {
          const x = this.affOf(A[1], 'i32'), y = this.affOf(A[2], 'i32')
          // the 64-bit product of two block-invariant values may exceed 2^53: only literal factors
          if (x && y) v = prod(t[0] === 'u32' ? wr(x, 0) : x, t[0] === 'u32' ? wr(y, 0) : y, true)
        }
        break
      }
      default: return
    }
    if (v && v.mag <= 2 ** 52) this.aff.set(d.name, v)
  }

  /** Largest magnitude each i64 register can hold, assuming hoisted kernel parameters within ±2^40:
   *  a monotone fixpoint over all definitions; anything unbounded or beyond 2^53 is Infinity. */
  computeBounds(): Map<string, number> {
    const PB = 2 ** 40
    const MAX = 2 ** 53 - 1
    const b = new Map<string, number>()
    const params = new Set(this.fn.params.map((p) => p.name))
    for (const [name, r] of this.regs) if (r.cls === 'i64') b.set(name, 0)
    const val = (o: Operand | undefined): number => {
      if (!o) return Infinity
      if (o.k === 'imm') return Math.abs(Number(BigInt.asIntN(64, o.value)))
      if (o.k !== 'id') return Infinity
      const r = this.regs.get(o.name)
      if (r) return r.cls === 'i64' ? b.get(o.name)! : r.cls === 'i32' || r.cls === 'i16' ? 2 ** 32 : Infinity
      if (this.special(o.name) !== undefined) return 2 ** 32
      return this.symAddr(o.name) !== undefined ? 2 ** 32 : Infinity
    }
    const transfer = (ins: PtxInstruction): number => {
      const A = ins.args
      const op = ins.op
      const t = this.types(ins)
      switch (op[0]) {
        case 'ld':
          if (op.includes('param') && A[1]?.k === 'addr' && A[1].base?.k === 'id' && params.has(A[1].base.name)) return PB
          return Infinity
        case 'mov': return A[1]?.k === 'vec' ? Infinity : val(A[1])
        case 'cvt': return t[1] && /^[us](8|16|32)$/.test(t[1]) ? 2 ** 32 : Infinity
        case 'cvta': return op.includes('shared') || op.includes('local') ? val(A[1]) + 2 ** 32 : val(A[1])
        case 'mul': return op.includes('wide') && (t[0] === 's32' || t[0] === 'u32') ? 2 ** 32 * (A[2]?.k === 'imm' ? Math.abs(Number(BigInt.asIntN(32, A[2].value))) : 2 ** 32) : Infinity
        case 'add': case 'sub': return op.includes('cc') ? Infinity : val(A[1]) + val(A[2])
        case 'shl': return A[2]?.k === 'imm' && A[2].value < 32n ? val(A[1]) * 2 ** Number(A[2].value) : Infinity
        case 'selp': return Math.max(val(A[1]), val(A[2]))
        default: return Infinity
      }
    }
    const defs: Array<[string, PtxInstruction]> = []
    const unbounded = new Set<string>()
    for (const st of this.fn.body!) {
      if (st.kind !== 'instr') continue
      // registers written through vector or pair destinations are not tracked
      const d0 = st.args[0]
      if (d0 && (d0.k === 'vec' || d0.k === 'pair')) for (const x of d0.k === 'vec' ? d0.items : [d0.a, d0.b]) if (x.k === 'id' && b.has(x.name)) unbounded.add(x.name)
      if (st.args[0]?.k !== 'id') continue
      const name = st.args[0].name
      if (b.has(name) && !['st', 'red', 'bra', 'call'].includes(st.op[0]!)) defs.push([name, st])
    }
    for (const n of unbounded) b.set(n, Infinity)
    for (let pass = 0; ; pass++) {
      let changed = false
      for (const [name, ins] of defs) {
        let v = transfer(ins)
        if (!(v <= MAX)) v = Infinity
        if (v > b.get(name)!) {
          // growth after many passes means a loop-carried increment: give up on that register
          b.set(name, pass > 8 ? Infinity : v)
          changed = true
        }
      }
      if (!changed) break
    }
    return b
  }

  /** Structured control flow for functions without suspension points: forward branches become `break`
   *  out of labelled blocks, backward branches `continue` of labelled loops, so V8 sees ordinary loops
   *  instead of a `switch (pc)` dispatcher. Returns undefined (use the dispatcher) when the branch
   *  intervals do not nest. `stmtCode[i]` is the code of fn.body[i]. */
  structure(stmtCode: string[][], susp: Map<number, SuspInfo>): string | undefined {
    const stmts = this.fn.body!
    const labelPos = new Map<string, number>()
    stmts.forEach((st, i) => { if (st.kind === 'label') labelPos.set(st.name, i) })
    const fwd = new Map<string, [number, number]>() // label → [first source, target)
    const loops = new Map<string, [number, number]>() // label → [header, last back-edge + 1)
    for (let i = 0; i < stmts.length; i++) {
      const st = stmts[i]!
      if (st.kind !== 'instr' || st.op[0] !== 'bra') continue
      const name = (st.args[0] as { name: string }).name
      const t = labelPos.get(name)!
      if (t > i) { const f = fwd.get(name); fwd.set(name, [f ? Math.min(f[0], i) : i, t]) } else { const l = loops.get(name); loops.set(name, [t, Math.max(l ? l[1] : 0, i + 1)]) }
    }
    type Iv = { kind: 'B' | 'L'; name: string; s: number; e: number }
    const ivs: Iv[] = [...[...fwd].map(([name, [s0, e]]) => ({ kind: 'B' as const, name, s: s0, e })), ...[...loops].map(([name, [s0, e]]) => ({ kind: 'L' as const, name, s: s0, e }))]
    // a forward block may start earlier so that it encloses what it would cross (a `break` out of a loop
    // becomes a block around the loop); a jump into a loop from before it cannot be structured
    for (let changed = true; changed;) {
      changed = false
      for (const a of ivs) for (const b of ivs) {
        if (a === b || a.kind !== 'B') continue
        if (b.s < a.s && a.s < b.e && b.e < a.e) { a.s = b.s; changed = true }
      }
    }
    for (const a of ivs) for (const b of ivs) if (a !== b && a.s < b.s && b.s < a.e && a.e < b.e) return undefined
    const ids = new Map<string, number>()
    const lab = (iv: Iv) => `${iv.kind}${ids.get(iv.kind + iv.name) ?? (ids.set(iv.kind + iv.name, ids.size), ids.size - 1)}`
    // Resumable structured code (threads suspended at barriers/collectives): a resumed thread enters the
    // blocks and loops that contain its suspension point and skips everything else, which is wrapped in
    // `if(pc===0){…}`; at the resume point pc returns to 0 and execution continues normally.
    const hot = (iv: Iv) => [...susp.keys()].some((k) => iv.s <= k && k < iv.e)
    const out: string[] = []
    const open: Iv[] = []
    let guarded = false
    const guard = (on: boolean) => {
      if (susp.size === 0 || on === guarded) return
      out.push(on ? 'if(pc===0){' : '}')
      guarded = on
    }
    for (let i = 0; i <= stmts.length; i++) {
      // close what ends here (innermost first), then open what starts here (outermost first)
      while (open.length && open[open.length - 1]!.e === i) {
        const iv = open.pop()!
        if (hot(iv)) guard(false)
        out.push(iv.kind === 'L' ? 'break;}' : '}')
      }
      if (open.some((iv) => iv.e === i)) return undefined
      const starting = ivs.filter((iv) => iv.s === i).sort((x, y) => y.e - x.e || (x.kind === 'B' ? -1 : 1))
      for (const iv of starting) {
        guard(!hot(iv))
        out.push(iv.kind === 'L' ? `${lab(iv)}:for(;;){` : `${lab(iv)}:{`)
        open.push(iv)
      }
      if (i === stmts.length) break
      const st = stmts[i]!
      if (st.kind === 'label') continue
      const sp = susp.get(i)
      if (sp) {
        guard(false)
        out.push(`if(pc===0${sp.guard ? `&&${sp.guard}` : ''}){${sp.pre}}`, `if(pc===${sp.pc}){pc=0;/*RESTORE${sp.pc}*/${sp.post}}`)
        continue
      }
      guard(true)
      out.push(stmtCode[i]!.join('\n').replace(/\/\*BR:([^*]+)\*\//g, (_m, l: string) => {
        const loop = ivs.find((iv) => iv.kind === 'L' && iv.name === l && labelPos.get(l)! <= i)
        if (loop && open.includes(loop)) return `continue ${lab(loop)};`
        const blk = ivs.find((iv) => iv.kind === 'B' && iv.name === l)!
        return `break ${lab(blk)};`
      }))
    }
    if (open.length) return undefined
    guard(false)
    out.push(this.ret())
    return out.join('\n')
  }

  /** Backward liveness over the instruction graph; for each suspension pc, the JS names of the registers
   *  live after the suspending instruction (its own destinations are written on resume). */
  liveAcross(): Map<number, string[]> {
    const result = new Map<number, string[]>()
    if (this.suspendAt.size === 0) return result
    const instrs: PtxInstruction[] = []
    const labelAt = new Map<string, number>()
    for (const st of this.fn.body!) {
      if (st.kind === 'label') labelAt.set(st.name, instrs.length)
      else instrs.push(st)
    }
    const regIndex = new Map<string, number>()
    const regNames: string[] = []
    for (const [name, r] of this.regs) { regIndex.set(name, regNames.length); regNames.push(r.js) }
    const W = Math.max(1, Math.ceil(regNames.length / 32))
    const n = instrs.length
    const noDest = new Set(['st', 'red', 'bar', 'barrier', 'bra', 'ret', 'exit', 'call', 'membar', 'fence', 'trap', 'brkpt', 'nanosleep', 'prefetch', 'prefetchu', 'pmevent', 'discard', 'applypriority', 'griddepcontrol', 'setmaxnreg'])
    const collect = (o: Operand | undefined, out: number[]) => {
      if (!o) return
      switch (o.k) {
        case 'id': { const i = regIndex.get(o.name); if (i !== undefined) out.push(i); break }
        case 'vec': case 'list': for (const x of o.items) collect(x, out); break
        case 'pair': collect(o.a, out); collect(o.b, out); break
        case 'not': case 'neg': collect(o.a, out); break
        case 'addr': collect(o.base, out); break
        default: break
      }
    }
    const uses: number[][] = [], dests: number[][] = [], kills: boolean[] = [], succ: number[][] = []
    instrs.forEach((ins, i) => {
      const u: number[] = [], d: number[] = []
      const hasDest = !noDest.has(ins.op[0]!)
      ins.args.forEach((a, j) => collect(a, j === 0 && hasDest ? d : u))
      if (ins.guard) { const g = regIndex.get(ins.guard.reg); if (g !== undefined) u.push(g) }
      uses.push(u); dests.push(d); kills.push(!ins.guard)
      const op0 = ins.op[0]
      const next = i + 1 < n ? [i + 1] : []
      if (op0 === 'bra') {
        const tgt = ins.args[0]?.k === 'id' ? labelAt.get(ins.args[0].name) : undefined
        const t = tgt !== undefined && tgt < n ? [tgt] : []
        succ.push(ins.guard ? [...t, ...next] : t)
      } else if (op0 === 'ret' || op0 === 'exit') succ.push(ins.guard ? next : [])
      else succ.push(next)
    })
    const liveIn = Array.from({ length: n }, () => new Uint32Array(W))
    const liveOut = Array.from({ length: n }, () => new Uint32Array(W))
    for (let changed = true; changed;) {
      changed = false
      for (let i = n - 1; i >= 0; i--) {
        const out = liveOut[i]!
        for (const sI of succ[i]!) { const li = liveIn[sI]!; for (let w = 0; w < W; w++) out[w]! |= li[w]! }
        const inn = new Uint32Array(out)
        if (kills[i]) for (const d of dests[i]!) inn[d >>> 5]! &= ~(1 << (d & 31))
        for (const u of uses[i]!) inn[u >>> 5]! |= 1 << (u & 31)
        const cur = liveIn[i]!
        for (let w = 0; w < W; w++) if (cur[w] !== inn[w]) { cur[w] = inn[w]!; changed = true }
      }
    }
    for (const [pc, ins] of this.suspendAt) {
      const i = instrs.indexOf(ins)
      const set = new Uint32Array(liveOut[i]!)
      for (const d of dests[i]!) set[d >>> 5]! &= ~(1 << (d & 31))
      const names: string[] = []
      for (let r = 0; r < regNames.length; r++) if ((set[r >>> 5]! >>> (r & 31)) & 1) names.push(regNames[r]!)
      result.set(pc, names)
    }
    return result
  }

  ret(): string {
    if (this.fn.kind === 'entry') return this.hasSuspend ? 'S.st=3;continue TH;' : 'continue TH;'
    return 'return;'
  }

  suspend(kind: CollectiveKind, inputs: string[], outputs: string[]): { parts: string[]; susp?: SuspInfo } {
    // calls to functions with suspension points are inlined (inline.ts); the function itself is unreachable
    if (this.fn.kind !== 'entry') return { parts: [`throw new Error(${JSON.stringify(`internal: ${this.cur.opcode} reached in a called function`)});`] }
    this.hasSuspend = true
    const pc = this.nextPc++
    this.collectives.set(pc, kind)
    const ins = inputs.map((e, i) => `S.c${i}=${e};`).join('')
    this.suspendAt.set(pc, this.cur)
    const pre = `${ins}S.pc=${pc};S.st=${kind.kind === 'bar' ? 1 : 2};/*SAVE${pc}*/continue TH;`
    return { parts: [pre, `case ${pc}:`, outputs.join('')], susp: { pc, pre, post: outputs.join('') } }
  }

  types(ins: PtxInstruction): string[] { return ins.op.filter((p) => isPtxType(p)) }
  has(ins: PtxInstruction, m: string): boolean { return ins.op.includes(m) }

  instr(ins: PtxInstruction, idx: number): string | { parts: string[]; susp?: SuspInfo } {
    // qualifiers were checked against the opcode's rules by @kernelpack/ptx's decode (load-module.ts)
    const op = ins.op
    const A = ins.args
    const types = this.types(ins)
    const t = types[types.length - 1] ?? ''
    const k = t ? kindOf(t) : 'i32'
    const ftz = this.has(ins, 'ftz')
    const satf = this.has(ins, 'sat')
    const fl = (e: string) => (ftz ? `ftz(${e})` : e)
    const fin = (o: Operand) => fl(this.rd(o, 'f32'))
    const rnd = (['rn', 'rz', 'rm', 'rp'] as const).find((m) => op.includes(m)) ?? 'rn'
    const is64 = t === 'u64' || t === 's64' || t === 'b64'
    const signed = t.startsWith('s')
    switch (op[0]) {
      case 'mov': {
        if (A[1]!.k === 'vec') {
          // pack: mov.b64 %rd, {%r1,%r2} / mov.b32 %r, {%rs1,%rs2}
          const items = A[1]!.items
          if (t === 'b64' && items.length === 2) return this.wr(A[0]!, 'i64', `mk64(${this.rd(items[0]!, 'i32')},${this.rd(items[1]!, 'i32')})`)
          if (t === 'b32' && items.length === 2) return this.wr(A[0]!, 'i32', `(${this.rd(items[0]!, 'u16')}|(${this.rd(items[1]!, 'u16')}<<16))`)
          if (t === 'b64' && items.length === 4) return this.wr(A[0]!, 'i64', `mk64(${this.rd(items[0]!, 'u16')}|(${this.rd(items[1]!, 'u16')}<<16),${this.rd(items[2]!, 'u16')}|(${this.rd(items[3]!, 'u16')}<<16))`)
          if (t === 'b32' && items.length === 4) return this.wr(A[0]!, 'i32', `(${this.rd(items[0]!, 'u8')}|(${this.rd(items[1]!, 'u8')}<<8)|(${this.rd(items[2]!, 'u8')}<<16)|(${this.rd(items[3]!, 'u8')}<<24))`)
          if (t === 'b128') return this.fail('128-bit mov is not supported')
          return this.fail('unsupported vector mov')
        }
        if (A[0]!.k === 'vec') {
          const items = A[0]!.items
          if (t === 'b64' && items.length === 2) return `x64=${this.rd(A[1]!, 'i64')};${this.wr(items[0]!, 'i32', 'lo32(x64)')}${this.wr(items[1]!, 'i32', 'hi32(x64)')}`
          if (t === 'b32' && items.length === 2) return `u=${this.rd(A[1]!, 'i32')};${this.wr(items[0]!, 'u16', 'u&65535')}${this.wr(items[1]!, 'u16', 'u>>>16')}`
          if (t === 'b64' && items.length === 4) return `x64=${this.rd(A[1]!, 'i64')};u=lo32(x64);v=hi32(x64);${this.wr(items[0]!, 'u16', 'u&65535')}${this.wr(items[1]!, 'u16', 'u>>>16')}${this.wr(items[2]!, 'u16', 'v&65535')}${this.wr(items[3]!, 'u16', 'v>>>16')}`
          if (t === 'b32' && items.length === 4) return `u=${this.rd(A[1]!, 'i32')};${items.map((it, i) => this.wr(it, 'u8', `(u>>>${8 * i})&255`)).join('')}`
          return this.fail('unsupported vector mov')
        }
        const d = this.reg(A[0]!)
        if (!d) return this.fail('mov destination is not a register')
        let kk: Kind = k
        if (t === 'b32' || t === 'u32' || t === 's32') kk = d.cls === 'f32' ? 'f32' : 'i32'
        if (t === 'b64' || t === 'u64' || t === 's64') kk = d.cls === 'f64' ? 'f64' : 'i64'
        if (A[1]!.k === 'id' && !this.regs.has(A[1]!.name) && this.symAddr(A[1]!.name) === undefined && this.special(A[1]!.name) === undefined) {
          if (this.mc.fnNames.has(A[1]!.name)) return this.fail('function pointers are not supported by the emulator')
        }
        return this.wr(A[0]!, kk, this.rd(A[1]!, kk))
      }
      case 'ld': case 'ldu': {
        const space = ['global', 'shared', 'local', 'const', 'param'].find((s) => op.includes(s)) ?? 'generic'
        const vec = op.includes('v4') ? 4 : op.includes('v2') ? 2 : op.includes('v8') ? 8 : 1
        const sz = typeSize(t)
        if (!sz || t === 'b128') return this.fail(`unsupported load type .${t}`)
        const am = A[1]!
        if (space === 'param' && vec === 1 && this.fn.kind === 'entry' && am.k === 'addr' && am.base?.k === 'id' && this.fn.params.some((p) => p.name === (am.base as { name: string }).name) && A[0]!.k === 'id') {
          // kernel parameters are read-only for the whole launch: load each once per block, before the thread loop
          let tt = t
          const r = this.reg(A[0]!)
          if (t === 'b32' && r?.cls === 'f32') tt = 'f32'
          if (t === 'b64' && r?.cls === 'f64') tt = 'f64'
          if (t === 'f32' && r?.cls === 'i32') tt = 'b32'
          if (t === 'f64' && r?.cls === 'i64') tt = 'b64'
          const key = `${am.base.name}+${am.offset}:${tt}`
          let h = this.hoisted.get(key)
          if (!h) {
            h = { name: `P${this.hoisted.size}`, code: '', kind: 'i32' }
            const l = this.load(tt)
            h.code = `${this.addr(am, 'param', sz, idx)}const ${h.name}=${l.e};`
            h.kind = l.kind
            this.hoisted.set(key, h)
          }
          return this.wr(A[0]!, h.kind, h.name)
        }
        let code = this.addr(A[1]!, space === 'param' ? 'param' : space, sz * vec, idx)
        const dsts = vec > 1 ? (A[0]!.k === 'vec' ? A[0]!.items : this.fail('vector load needs a vector destination')) : [A[0]!]
        dsts.forEach((dst, i) => {
          if (dst.k === 'id' && dst.name === '_') return
          let tt = t
          const r = this.reg(dst)
          if (t === 'b32' && r?.cls === 'f32') tt = 'f32'
          if (t === 'b64' && r?.cls === 'f64') tt = 'f64'
          if (t === 'f32' && r?.cls === 'i32') tt = 'b32'
          if (t === 'f64' && r?.cls === 'i64') tt = 'b64'
          const l = this.load(tt, i * sz)
          code += this.wr(dst, l.kind, l.e)
        })
        return code
      }
      case 'st': {
        const space = ['global', 'shared', 'local', 'param'].find((s) => op.includes(s)) ?? 'generic'
        const vec = op.includes('v4') ? 4 : op.includes('v2') ? 2 : op.includes('v8') ? 8 : 1
        const sz = typeSize(t)
        if (!sz || t === 'b128') return this.fail(`unsupported store type .${t}`)
        const srcs = vec > 1 ? (A[1]!.k === 'vec' ? A[1]!.items : this.fail('vector store needs a vector source')) : [A[1]!]
        // evaluate sources first (a store may not alias its source registers, but keep it simple)
        let code = this.addr(A[0]!, space, sz * vec, idx)
        srcs.forEach((src, i) => {
          let tt = t
          const r = this.reg(src)
          if (t === 'b32' && r?.cls === 'f32') tt = 'f32'
          if (t === 'b64' && r?.cls === 'f64') tt = 'f64'
          if (t === 'f32' && r?.cls === 'i32') tt = 'b32'
          if (t === 'f64' && r?.cls === 'i64') tt = 'b64'
          let vk: Kind = kindOf(tt)
          if (tt === 'f32') vk = 'f32'
          if (tt === 'f64') vk = 'f64'
          let val = this.rd(src, vk === 'u8' || vk === 's8' || vk === 'u16' || vk === 's16' ? 'i32' : vk)
          if (src.k === 'fimm' || src.k === 'imm') val = this.rd(src, vk === 'u8' || vk === 's8' ? 'u8' : vk === 'u16' || vk === 's16' ? 'u16' : vk)
          code += this.store(tt, val, i * sz)
        })
        return code
      }
      case 'cvta': {
        const to = op.includes('to')
        const space = ['global', 'shared', 'local', 'const', 'param'].find((s) => op.includes(s)) ?? 'global'
        const kk: Kind = t === 'u32' ? 'u32' : 'i64'
        const src = this.rd(A[1]!, kk)
        let e = src
        if (space === 'shared') e = to ? `sub64(${src},SB)` : `add64(${src},SB)`
        if (space === 'local') e = to ? `sub64(${src},LB)` : `add64(${src},LB)`
        return this.wr(A[0]!, kk === 'u32' ? 'u32' : 'i64', e)
      }
      case 'add': case 'sub': {
        const isSub = op[0] === 'sub'
        if (op.includes('cc')) return this.carry(ins)
        if (t === 'f32') {
          const e = rnd === 'rn' ? `fround(${fin(A[1]!)}${isSub ? '-' : '+'}${fin(A[2]!)})` : `fop32(${isSub ? "'sub'" : "'add'"},'${rnd}',${fin(A[1]!)},${fin(A[2]!)})`
          return this.wr(A[0]!, 'f32', this.fsat(fl(e), satf))
        }
        if (t === 'f64') {
          const e = rnd === 'rn' ? `(${this.rd(A[1]!, 'f64')}${isSub ? '-' : '+'}${this.rd(A[2]!, 'f64')})` : `fop64(${isSub ? "'sub'" : "'add'"},'${rnd}',${this.rd(A[1]!, 'f64')},${this.rd(A[2]!, 'f64')})`
          return this.wr(A[0]!, 'f64', satf ? `sat(${e})` : e)
        }
        if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return this.half(ins, isSub ? '-' : '+')
        if (is64) {
          // fast path inline (both numbers, exact result in range), helper otherwise
          const x = this.rd(A[1]!, 'i64'), y = this.rd(A[2]!, 'i64')
          const bd = (o: Operand) => (o.k === 'imm' ? Math.abs(Number(BigInt.asIntN(64, o.value))) : o.k === 'id' && this.regs.get(o.name)?.cls === 'i64' ? this.bounds?.get(o.name) ?? Infinity : Infinity)
          // both operands are numbers bounded so that the exact result stays within ±(2^53 - 1)
          if (this.bounds && bd(A[1]!) + bd(A[2]!) <= 2 ** 53 - 1) return this.wr(A[0]!, 'i64', `(${x}${isSub ? '-' : '+'}${y})`)
          return this.wr(A[0]!, 'i64', `${isSub ? 'sub64' : 'add64'}(${x},${y})`)
        }
        if (t === 's32' && satf) return this.wr(A[0]!, 'i32', `satS32(${this.rd(A[1]!, 'i32')}${isSub ? '-' : '+'}${this.rd(A[2]!, 'i32')})`)
        if (k === 'i32') return this.wr(A[0]!, 'i32', `(${this.rd(A[1]!, 'i32')}${isSub ? '-' : '+'}${this.rd(A[2]!, 'i32')})|0`)
        return this.wr(A[0]!, k, `(${this.rd(A[1]!, 'i32')}${isSub ? '-' : '+'}${this.rd(A[2]!, 'i32')})`)
      }
      case 'addc': case 'subc': return this.carry(ins)
      case 'mul': {
        if (t === 'f32') {
          const e = rnd === 'rn' ? `fround(${fin(A[1]!)}*${fin(A[2]!)})` : `fop32('mul','${rnd}',${fin(A[1]!)},${fin(A[2]!)})`
          return this.wr(A[0]!, 'f32', this.fsat(fl(e), satf))
        }
        if (t === 'f64') {
          const e = rnd === 'rn' ? `(${this.rd(A[1]!, 'f64')}*${this.rd(A[2]!, 'f64')})` : `fop64('mul','${rnd}',${this.rd(A[1]!, 'f64')},${this.rd(A[2]!, 'f64')})`
          return this.wr(A[0]!, 'f64', satf ? `sat(${e})` : e)
        }
        if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return this.half(ins, '*')
        if (op.includes('wide')) {
          if (t === 's32' || t === 'u32') {
            // a 32-bit value times a small constant always stays within ±2^53: plain multiplication
            const imm = A[2]!.k === 'imm' ? Number(signed ? BigInt.asIntN(32, A[2]!.value) : BigInt.asUintN(32, A[2]!.value)) : undefined
            if (imm !== undefined && Math.abs(imm) <= 1 << 20) return this.wr(A[0]!, 'i64', `(${this.rd(A[1]!, signed ? 'i32' : 'u32')}*${imm}+0)`)
            return this.wr(A[0]!, 'i64', `mulwide32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${signed})`)
          }
          if (t === 's16' || t === 'u16') return this.wr(A[0]!, 'i32', `(${this.rd(A[1]!, kindOf(t))}*${this.rd(A[2]!, kindOf(t))})|0`)
          return this.fail('unsupported mul.wide type')
        }
        const hi = op.includes('hi')
        if (is64) return this.wr(A[0]!, 'i64', hi ? `mulhi64(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')},${signed})` : `mul64(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')})`)
        if (t === 's32' || t === 'u32') return this.wr(A[0]!, 'i32', hi ? `mulhi32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${signed})` : `Math.imul(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')})`)
        if (t === 's16' || t === 'u16') {
          const p = `(${this.rd(A[1]!, kindOf(t))}*${this.rd(A[2]!, kindOf(t))})`
          return this.wr(A[0]!, 'u16', hi ? `(${p}>>16)&65535` : `${p}&65535`)
        }
        return this.fail('unsupported mul type')
      }
      case 'mul24': case 'mad24': {
        const s24 = (o: Operand) => signed ? `(${this.rd(o, 'i32')}<<8>>8)` : `(${this.rd(o, 'i32')}&0xffffff)`
        const p = op.includes('hi') ? `lo32(shrs64(mulwide32(${s24(A[1]!)},${s24(A[2]!)},${signed}),16))` : `Math.imul(${s24(A[1]!)},${s24(A[2]!)})`
        return this.wr(A[0]!, 'i32', op[0] === 'mad24' ? `(${p}+${this.rd(A[3]!, 'i32')})|0` : p)
      }
      case 'mad': case 'fma': {
        if (op.includes('cc')) return this.carry(ins)
        if (t === 'f32') {
          const e = rnd === 'rn' ? `fma32(${fin(A[1]!)},${fin(A[2]!)},${fin(A[3]!)})` : `fop32('fma','${rnd}',${fin(A[1]!)},${fin(A[2]!)},${fin(A[3]!)})`
          return this.wr(A[0]!, 'f32', this.fsat(fl(e), satf))
        }
        if (t === 'f64') {
          const e = rnd === 'rn' ? `fma64(${this.rd(A[1]!, 'f64')},${this.rd(A[2]!, 'f64')},${this.rd(A[3]!, 'f64')})` : `fop64('fma','${rnd}',${this.rd(A[1]!, 'f64')},${this.rd(A[2]!, 'f64')},${this.rd(A[3]!, 'f64')})`
          return this.wr(A[0]!, 'f64', satf ? `sat(${e})` : e)
        }
        if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return this.half(ins, 'fma')
        if (op.includes('wide')) {
          if (t === 's32' || t === 'u32') return this.wr(A[0]!, 'i64', `add64(mulwide32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${signed}),${this.rd(A[3]!, 'i64')})`)
          if (t === 's16' || t === 'u16') return this.wr(A[0]!, 'i32', `(${this.rd(A[1]!, kindOf(t))}*${this.rd(A[2]!, kindOf(t))}+${this.rd(A[3]!, 'i32')})|0`)
          return this.fail('unsupported mad.wide type')
        }
        const hi = op.includes('hi')
        if (is64) return this.wr(A[0]!, 'i64', hi ? `add64(mulhi64(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')},${signed}),${this.rd(A[3]!, 'i64')})` : `add64(mul64(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')}),${this.rd(A[3]!, 'i64')})`)
        if (t === 's32' || t === 'u32') {
          if (hi && satf) return this.wr(A[0]!, 'i32', `satS32(mulhi32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},true)+${this.rd(A[3]!, 'i32')})`)
          return this.wr(A[0]!, 'i32', hi ? `(mulhi32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${signed})+${this.rd(A[3]!, 'i32')})|0` : `(Math.imul(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')})+${this.rd(A[3]!, 'i32')})|0`)
        }
        if (t === 's16' || t === 'u16') {
          const p = `(${this.rd(A[1]!, kindOf(t))}*${this.rd(A[2]!, kindOf(t))})`
          return this.wr(A[0]!, 'u16', hi ? `((${p}>>16)+${this.rd(A[3]!, 'i32')})&65535` : `(${p}+${this.rd(A[3]!, 'i32')})&65535`)
        }
        return this.fail('unsupported mad type')
      }
      case 'madc': return this.carry(ins)
      case 'div': {
        if (t === 'f32') {
          let e: string
          if (op.includes('approx') || op.includes('full')) e = `fround(${fin(A[1]!)}/${fin(A[2]!)})`
          else e = rnd === 'rn' ? `fround(${fin(A[1]!)}/${fin(A[2]!)})` : `fop32('div','${rnd}',${fin(A[1]!)},${fin(A[2]!)})`
          return this.wr(A[0]!, 'f32', fl(e))
        }
        if (t === 'f64') return this.wr(A[0]!, 'f64', rnd === 'rn' ? `(${this.rd(A[1]!, 'f64')}/${this.rd(A[2]!, 'f64')})` : `fop64('div','${rnd}',${this.rd(A[1]!, 'f64')},${this.rd(A[2]!, 'f64')})`)
        if (is64) return this.wr(A[0]!, 'i64', `${signed ? 'divs64' : 'divu64'}(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')})`)
        if (t === 's32' || t === 'u32') return this.wr(A[0]!, 'i32', `${signed ? 'divs32' : 'divu32'}(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')})`)
        if (t === 's16' || t === 'u16') return this.wr(A[0]!, 'u16', `${signed ? 'divs32' : 'divu32'}(${this.rd(A[1]!, kindOf(t))},${this.rd(A[2]!, kindOf(t))})`)
        return this.fail('unsupported div type')
      }
      case 'rem': {
        if (is64) return this.wr(A[0]!, 'i64', `${signed ? 'rems64' : 'remu64'}(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')})`)
        if (t === 's32' || t === 'u32') return this.wr(A[0]!, 'i32', `${signed ? 'rems32' : 'remu32'}(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')})`)
        if (t === 's16' || t === 'u16') return this.wr(A[0]!, 'u16', `${signed ? 'rems32' : 'remu32'}(${this.rd(A[1]!, kindOf(t))},${this.rd(A[2]!, kindOf(t))})`)
        return this.fail('unsupported rem type')
      }
      case 'min': case 'max': {
        const mx = op[0] === 'max'
        if (t === 'f32') {
          const e = `${mx ? 'fmax' : 'fmin'}${op.includes('NaN') ? 'NaN' : ''}(${fin(A[1]!)},${fin(A[2]!)})`
          return this.wr(A[0]!, 'f32', fl(e))
        }
        if (t === 'f64') return this.wr(A[0]!, 'f64', `${mx ? 'fmax' : 'fmin'}${op.includes('NaN') ? 'NaN' : ''}(${this.rd(A[1]!, 'f64')},${this.rd(A[2]!, 'f64')})`)
        if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return this.half(ins, mx ? 'max' : 'min')
        if (is64) {
          const c = signed ? 'scmp64' : 'ucmp64'
          return `u=${c}(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')});${this.wr(A[0]!, 'i64', `u${mx ? '>' : '<'}0?${this.rd(A[1]!, 'i64')}:${this.rd(A[2]!, 'i64')}`)}`
        }
        if (t === 'u32' || t === 's32' || t === 'b32') {
          const kk: Kind = signed ? 'i32' : 'u32'
          const e = `Math.${mx ? 'max' : 'min'}(${this.rd(A[1]!, kk)},${this.rd(A[2]!, kk)})`
          return this.wr(A[0]!, 'i32', signed ? e : `${e}|0`)
        }
        if (t === 'u16' || t === 's16') return this.wr(A[0]!, 'u16', `Math.${mx ? 'max' : 'min'}(${this.rd(A[1]!, kindOf(t))},${this.rd(A[2]!, kindOf(t))})`)
        if (t === 'u16x2' || t === 's16x2') return this.fail('unsupported min/max type')
        return this.fail('unsupported min/max type')
      }
      case 'abs': case 'neg': {
        const ab = op[0] === 'abs'
        if (t === 'f32') return this.wr(A[0]!, 'f32', fl(ab ? `Math.abs(${fin(A[1]!)})` : `(-${fin(A[1]!)})`))
        if (t === 'f64') return this.wr(A[0]!, 'f64', ab ? `Math.abs(${this.rd(A[1]!, 'f64')})` : `(-${this.rd(A[1]!, 'f64')})`)
        if (t === 'f16' || t === 'bf16') return this.wr(A[0]!, 'u16', ab ? `${this.rd(A[1]!, 'u16')}&0x7fff` : `${this.rd(A[1]!, 'u16')}^0x8000`)
        if (t === 'f16x2' || t === 'bf16x2') return this.wr(A[0]!, 'i32', ab ? `${this.rd(A[1]!, 'i32')}&0x7fff7fff` : `${this.rd(A[1]!, 'i32')}^0x80008000`)
        if (is64) return `x64=${this.rd(A[1]!, 'i64')};${this.wr(A[0]!, 'i64', ab ? 'x64<0?neg64(x64):x64' : 'neg64(x64)')}`
        if (t === 's32') return this.wr(A[0]!, 'i32', ab ? `Math.abs(${this.rd(A[1]!, 'i32')})|0` : `(-${this.rd(A[1]!, 'i32')})|0`)
        if (t === 's16') return this.wr(A[0]!, 'u16', ab ? `Math.abs(${this.rd(A[1]!, 's16')})` : `(-${this.rd(A[1]!, 's16')})`)
        return this.fail('unsupported abs/neg type')
      }
      case 'and': case 'or': case 'xor': {
        const o = op[0] === 'and' ? '&' : op[0] === 'or' ? '|' : '^'
        if (t === 'pred') return this.wr(A[0]!, 'pred', `${o === '^' ? '(' : ''}${this.rd(A[1]!, 'pred')}${o === '^' ? '!==' : o + o}${this.rd(A[2]!, 'pred')}${o === '^' ? ')' : ''}`)
        if (is64) return this.wr(A[0]!, 'i64', `${op[0]}64(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')})`)
        if (t === 'b16' || t === 'u16' || t === 's16') return this.wr(A[0]!, 'u16', `${this.rd(A[1]!, 'u16')}${o}${this.rd(A[2]!, 'u16')}`)
        if (t === 'b8') return this.wr(A[0]!, 'u8', `(${this.rd(A[1]!, 'u8')}${o}${this.rd(A[2]!, 'u8')})&255`)
        return this.wr(A[0]!, 'i32', `${this.rd(A[1]!, 'i32')}${o}${this.rd(A[2]!, 'i32')}`)
      }
      case 'not': {
        if (t === 'pred') return this.wr(A[0]!, 'pred', `!${this.rd(A[1]!, 'pred')}`)
        if (is64) return this.wr(A[0]!, 'i64', `not64(${this.rd(A[1]!, 'i64')})`)
        if (t === 'b16' || t === 'u16' || t === 's16') return this.wr(A[0]!, 'u16', `(~${this.rd(A[1]!, 'u16')})&65535`)
        return this.wr(A[0]!, 'i32', `~${this.rd(A[1]!, 'i32')}`)
      }
      case 'cnot': {
        if (is64) return this.wr(A[0]!, 'i64', `(${this.rd(A[1]!, 'i64')}==0?1:0)`)
        return this.wr(A[0]!, k === 'i32' ? 'i32' : 'u16', `(${this.rd(A[1]!, k === 'i32' ? 'i32' : 'u16')}===0?1:0)`)
      }
      case 'shl': case 'shr': {
        const n = `(${this.rd(A[2]!, 'u32')})`
        if (is64) {
          const fn = op[0] === 'shl' ? 'shl64' : signed ? 'shrs64' : 'shru64'
          return this.wr(A[0]!, 'i64', `${fn}(${this.rd(A[1]!, 'i64')},${n})`)
        }
        if (t === 'b32' || t === 'u32' || t === 's32') {
          const a = this.rd(A[1]!, 'i32')
          const nn = A[2]!.k === 'imm' ? Number(BigInt.asUintN(32, A[2]!.value)) : undefined
          if (nn !== undefined) {
            if (op[0] === 'shl') return this.wr(A[0]!, 'i32', nn >= 32 ? '0' : `${a}<<${nn}`)
            if (signed) return this.wr(A[0]!, 'i32', `${a}>>${Math.min(nn, 31)}`)
            return this.wr(A[0]!, 'i32', nn >= 32 ? '0' : `(${a}>>>${nn})|0`)
          }
          if (op[0] === 'shl') return `u=${n};${this.wr(A[0]!, 'i32', `u>=32?0:${a}<<u`)}`
          if (signed) return `u=${n};${this.wr(A[0]!, 'i32', `${a}>>(u>31?31:u)`)}`
          return `u=${n};${this.wr(A[0]!, 'i32', `u>=32?0:(${a}>>>u)|0`)}`
        }
        if (t === 'b16' || t === 'u16' || t === 's16') {
          const a = this.rd(A[1]!, signed ? 's16' : 'u16')
          if (op[0] === 'shl') return `u=${n};${this.wr(A[0]!, 'u16', `u>=16?0:(${a}<<u)&65535`)}`
          if (signed) return `u=${n};${this.wr(A[0]!, 'u16', `(${a}>>(u>15?15:u))&65535`)}`
          return `u=${n};${this.wr(A[0]!, 'u16', `u>=16?0:${a}>>>u`)}`
        }
        return this.fail('unsupported shift type')
      }
      case 'shf': {
        const left = op.includes('l')
        return this.wr(A[0]!, 'i32', `shf(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},${left},${op.includes('clamp')})`)
      }
      case 'popc': return this.wr(A[0]!, 'i32', is64 ? `popc64(${this.rd(A[1]!, 'i64')})` : `popc32(${this.rd(A[1]!, 'i32')})`)
      case 'clz': return this.wr(A[0]!, 'i32', is64 ? `clz64(${this.rd(A[1]!, 'i64')})` : `Math.clz32(${this.rd(A[1]!, 'i32')})`)
      case 'brev': return is64 ? this.wr(A[0]!, 'i64', `brev64(${this.rd(A[1]!, 'i64')})`) : this.wr(A[0]!, 'i32', `brev32(${this.rd(A[1]!, 'i32')})`)
      case 'bfind': return this.wr(A[0]!, 'i32', is64 ? `bfind64(${this.rd(A[1]!, 'i64')},${signed},${op.includes('shiftamt')})` : `bfind32(${this.rd(A[1]!, 'i32')},${signed},${op.includes('shiftamt')})`)
      case 'bfe': return is64 ? this.wr(A[0]!, 'i64', `bfe64(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},${signed})`) : this.wr(A[0]!, 'i32', `bfe32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},${signed})`)
      case 'bfi': return is64 ? this.wr(A[0]!, 'i64', `bfi64(${this.rd(A[1]!, 'i64')},${this.rd(A[2]!, 'i64')},${this.rd(A[3]!, 'i32')},${this.rd(A[4]!, 'i32')})`) : this.wr(A[0]!, 'i32', `bfi32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},${this.rd(A[4]!, 'i32')})`)
      case 'prmt': {
        const mode = op.find((p) => ['f4e', 'b4e', 'rc8', 'ecl', 'ecr', 'rc16'].includes(p)) ?? ''
        return this.wr(A[0]!, 'i32', `prmt(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},'${mode}')`)
      }
      case 'lop3': {
        if (A[0]!.k === 'pair') return this.fail('lop3 with a predicate output is not supported')
        return this.wr(A[0]!, 'i32', `lop3(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},${this.rd(A[4]!, 'i32')})`)
      }
      case 'dp4a': {
        const [ta, tb] = types
        return this.wr(A[0]!, 'i32', `dp4a(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},${ta === 's32'},${tb === 's32'})`)
      }
      case 'dp2a': {
        const [ta, tb] = types
        return this.wr(A[0]!, 'i32', `dp2a(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${this.rd(A[3]!, 'i32')},${ta === 's32'},${tb === 's32'},${op.includes('hi')})`)
      }
      case 'sad': {
        const kk: Kind = signed ? 'i32' : 'u32'
        return this.wr(A[0]!, 'i32', `(Math.abs(${this.rd(A[1]!, kk)}-${this.rd(A[2]!, kk)})+${this.rd(A[3]!, 'i32')})|0`)
      }
      case 'szext': {
        const n = `(${this.rd(A[2]!, 'u32')})`
        const a = this.rd(A[1]!, 'i32')
        // szext.{clamp,wrap}.{s32,u32}: sign- (.s32) or zero-extend (.u32) the low b bits of a
        const width = op.includes('wrap') ? 'u=u&31;' : 'u=u>32?32:u;'
        return `u=${n};${width}${this.wr(A[0]!, 'i32', signed ? `u===0?0:(${a}<<(32-u))>>(32-u)` : `u===0?0:u===32?${a}:${a}&((1<<u)-1)`)}`
      }
      case 'setp': return this.setp(ins)
      case 'set': return this.set(ins)
      case 'selp': {
        const d = this.reg(A[0]!)
        let kk: Kind = k
        if (t === 'b32' || t === 'u32' || t === 's32') kk = d?.cls === 'f32' ? 'f32' : 'i32'
        if (t === 'b64' || t === 'u64' || t === 's64') kk = d?.cls === 'f64' ? 'f64' : 'i64'
        return this.wr(A[0]!, kk, `${this.rd(A[3]!, 'pred')}?${this.rd(A[1]!, kk)}:${this.rd(A[2]!, kk)}`)
      }
      case 'slct': {
        const [dt, ct] = types
        const dk = kindOf(dt!)
        const cond = ct === 'f32' ? `${fl(this.rd(A[3]!, 'f32'))}>=0` : `${this.rd(A[3]!, 'i32')}>=0`
        const kk: Kind = dk === 'i32' && this.reg(A[0]!)?.cls === 'f32' ? 'f32' : dk
        return this.wr(A[0]!, kk, `(${cond})?${this.rd(A[1]!, kk)}:${this.rd(A[2]!, kk)}`)
      }
      case 'cvt': return this.cvt(ins)
      case 'copysign': {
        if (t === 'f32') return this.wr(A[0]!, 'f32', `copysign(${this.rd(A[2]!, 'f32')},${this.rd(A[1]!, 'f32')})`)
        return this.wr(A[0]!, 'f64', `copysign(${this.rd(A[2]!, 'f64')},${this.rd(A[1]!, 'f64')})`)
      }
      case 'testp': {
        const m = op[1]
        const x = t === 'f32' ? this.rd(A[1]!, 'f32') : this.rd(A[1]!, 'f64')
        const min = t === 'f32' ? '1.1754943508222875e-38' : '2.2250738585072014e-308'
        const e = m === 'finite' ? `Number.isFinite(u)` : m === 'infinite' ? `(u===Infinity||u===-Infinity)` : m === 'number' ? `(u===u)` : m === 'notanumber' ? `(u!==u)` : m === 'normal' ? `(Math.abs(u)>=${min}&&Number.isFinite(u))` : m === 'subnormal' ? `(u!==0&&Math.abs(u)<${min})` : this.fail('unsupported testp')
        return `u=${x};${this.wr(A[0]!, 'pred', e)}`
      }
      case 'rcp': case 'sqrt': case 'rsqrt': case 'sin': case 'cos': case 'lg2': case 'ex2': case 'tanh': {
        if (t === 'f64') {
          const x = this.rd(A[1]!, 'f64')
          const e = op[0] === 'rcp' ? (rnd !== 'rn' && !op.includes('approx') ? `fop64('div','${rnd}',1,${x})` : `(1/${x})`) : op[0] === 'sqrt' ? (rnd !== 'rn' && !op.includes('approx') ? `fop64('sqrt','${rnd}',${x},0)` : `Math.sqrt(${x})`) : op[0] === 'rsqrt' ? `(1/Math.sqrt(${x}))` : op[0] === 'ex2' ? `(2**${x})` : op[0] === 'lg2' ? `Math.log2(${x})` : op[0] === 'tanh' ? `Math.tanh(${x})` : `Math.${op[0]}(${x})`
          return this.wr(A[0]!, 'f64', e)
        }
        if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return this.half(ins, op[0])
        const x = fin(A[1]!)
        let e: string
        const approx = op.includes('approx')
        switch (op[0]) {
          case 'rcp': e = approx || rnd === 'rn' ? `fround(1/${x})` : `fop32('div','${rnd}',1,${x})`; break
          case 'sqrt': e = approx || rnd === 'rn' ? `fround(Math.sqrt(${x}))` : `fop32('sqrt','${rnd}',${x},0)`; break
          case 'rsqrt': e = `fround(1/Math.sqrt(${x}))`; break
          case 'sin': e = `fround(Math.sin(${x}))`; break
          case 'cos': e = `fround(Math.cos(${x}))`; break
          case 'lg2': e = `fround(Math.log2(${x}))`; break
          case 'ex2': e = `fround(2**${x})`; break
          default: e = `fround(Math.tanh(${x}))`
        }
        return this.wr(A[0]!, 'f32', fl(e))
      }
      case 'bra': {
        const target = A[0]!
        if (target.k !== 'id' || !this.labels.has(target.name)) return this.fail('unknown branch target')
        return `/*BR:${target.name}*/`
      }
      case 'brx': return this.fail('indirect branches (brx.idx) are not supported')
      case 'ret': return this.ret()
      case 'exit': return this.fn.kind === 'entry' ? this.ret() : this.fail('exit inside a called function is not supported by the emulator')
      case 'trap': return `fault(${idx},undefined,'trap');`
      case 'brkpt': case 'nanosleep': case 'pmevent': case 'prefetch': case 'prefetchu': case 'membar': case 'fence': case 'discard': case 'applypriority': case 'createpolicy': case 'griddepcontrol': case 'setmaxnreg':
        if (op[0] === 'createpolicy') return this.wr(A[0]!, 'i64', '0')
        return ''
      case 'call': return this.call(ins)
      case 'bar': case 'barrier': {
        // __syncwarp(): the lanes of the warp meet (warp-synchronous shared-memory code depends on it)
        if (op.includes('warp')) return this.suspend({ kind: 'warpsync' }, [], [])
        if (op.includes('arrive')) return ''
        if (op.includes('red')) {
          const mode = op.includes('popc') ? 'popc' : op.includes('and') ? 'and' : 'or'
          const predArg = A[A.length - 1]!
          const out = mode === 'popc' ? this.wr(A[0]!, 'i32', 'S.o0') : this.wr(A[0]!, 'pred', 'S.o0')
          return this.suspend({ kind: 'bar', red: mode }, [this.rd(predArg, 'pred')], [out])
        }
        if (op.includes('cluster')) return this.fail('cluster barriers are not supported')
        return this.suspend({ kind: 'bar' }, [], [])
      }
      case 'shfl': {
        const mode = op.find((p) => ['up', 'down', 'bfly', 'idx'].includes(p))
        if (!mode) return this.fail('shfl without a mode')
        const dst = A[0]!.k === 'pair' ? A[0]!.a : A[0]!
        const outs = [this.wr(dst, 'i32', 'S.o0')]
        if (A[0]!.k === 'pair') outs.push(this.wr(A[0]!.b, 'pred', 'S.o1'))
        const mask = A.length > 4 ? this.rd(A[4]!, 'i32') : '-1'
        return this.suspend({ kind: 'shfl', mode }, [this.rd(A[1]!, 'i32'), this.rd(A[2]!, 'i32'), this.rd(A[3]!, 'i32'), mask], outs)
      }
      case 'vote': {
        const mode = op.find((p) => ['all', 'any', 'uni', 'ballot'].includes(p))!
        const mask = A.length > 2 ? this.rd(A[2]!, 'i32') : '-1'
        const out = mode === 'ballot' ? this.wr(A[0]!, 'i32', 'S.o0') : this.wr(A[0]!, 'pred', 'S.o0')
        return this.suspend({ kind: 'vote', mode }, [this.rd(A[1]!, 'pred'), mask], [out])
      }
      case 'match': {
        const mode = op.includes('all') ? 'all' : 'any'
        const dst = A[0]!.k === 'pair' ? A[0]!.a : A[0]!
        const outs = [this.wr(dst, 'i32', 'S.o0')]
        if (A[0]!.k === 'pair') outs.push(this.wr(A[0]!.b, 'pred', 'S.o1'))
        return this.suspend({ kind: 'match', mode }, [this.rd(A[1]!, is64 ? 'i64' : 'i32'), this.rd(A[2]!, 'i32')], outs)
      }
      case 'activemask': return this.suspend({ kind: 'activemask' }, [], [this.wr(A[0]!, 'i32', 'S.o0')])
      case 'elect': {
        // elect.sync d|p, membermask: the lowest lane of the group in membermask is the leader
        const dst = A[0]!.k === 'pair' ? A[0]!.a : A[0]!
        const outs = [this.wr(dst, 'i32', 'S.o0')]
        if (A[0]!.k === 'pair') outs.push(this.wr(A[0]!.b, 'pred', 'S.o1'))
        return this.suspend({ kind: 'elect' }, [this.rd(A[1]!, 'i32')], outs)
      }
      case 'bmsk': {
        // bmsk.{clamp,wrap}.b32 d, a, b: b ones starting at bit a
        const wrap = op.includes('wrap')
        const a = this.rd(A[1]!, 'u32'), b = this.rd(A[2]!, 'u32')
        return `u=${wrap ? `${a}&31` : `Math.min(${a},32)`};v=${wrap ? `${b}&31` : `Math.min(${b},32)`};${this.wr(A[0]!, 'i32', 'u>=32?0:((u+v>=32?0:(1<<(u+v)))-(1<<u))|0')}`
      }
      case 'redux': {
        const mode = op[2]!
        return this.suspend({ kind: 'redux', mode, signed }, [this.rd(A[1]!, 'i32'), this.rd(A[2]!, 'i32')], [this.wr(A[0]!, 'i32', 'S.o0')])
      }
      case 'atom': case 'red': return this.atom(ins, idx)
      case 'cp': {
        // cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size}: copied at once, so the
        // commit/wait instructions have nothing left to wait for
        if (op[1] !== 'async') return this.fail(`unsupported instruction ${ins.opcode}`)
        if (op.includes('commit_group') || op.includes('wait_group') || op.includes('wait_all')) return ''
        if (op.includes('bulk') || op.includes('mbarrier')) return this.fail(`unsupported instruction ${ins.opcode}`)
        const size = A[2]?.k === 'imm' ? Number(A[2].value) : this.fail('cp.async size must be an immediate')
        const srcSize = A[3] ? this.rd(A[3], 'u32') : String(size)
        let code = this.addr(A[0]!, 'shared', size, idx) + 'v=a;'
        code += this.addr(A[1]!, 'global', size, idx)
        return code + `u=${srcSize};for(let k=0;k<${size};k++)H8[v+k]=k<u?H8[a+k]:0;`
      }
      case 'isspacep': {
        const space = op[1]
        const a = this.rd(A[1]!, 'i64')
        const e = space === 'shared' ? `(u>=SB&&u<SB+SHN)` : space === 'local' ? `(u>=LB&&u<LB+LN)` : space === 'global' ? `(u>=0&&u<HN&&!(u>=SB&&u<SB+SHN)&&!(u>=LB0&&u<LB0+LN*NT))` : 'false'
        return `u=${a};${this.wr(A[0]!, 'pred', e)}`
      }
      default:
        return this.fail(`unsupported instruction ${ins.opcode}`)
    }
  }

  fsat(e: string, s: boolean): string { return s ? `sat(${e})` : e }

  carry(ins: PtxInstruction): string {
    // add.cc / addc(.cc) / sub.cc / subc(.cc) / mad.lo.cc / madc.{lo,hi}(.cc): carry flag in CF
    const op = ins.op
    const A = ins.args
    const t = this.types(ins).pop()!
    const setCC = op.includes('cc')
    const useC = op[0] === 'addc' || op[0] === 'subc' || op[0] === 'madc'
    const c = useC ? '+CF' : ''
    if (t === 'u64' || t === 's64' || t === 'b64') {
      const big = (o: Operand) => `u64b(${this.rd(o, 'i64')})`
      let e: string
      if (op[0] === 'add' || op[0] === 'addc') e = `${big(A[1]!)}+${big(A[2]!)}${useC ? '+BigInt(CF)' : ''}`
      else if (op[0] === 'sub' || op[0] === 'subc') e = `${big(A[1]!)}-${big(A[2]!)}${useC ? '-BigInt(CF)' : ''}`
      else {
        const p = `${big(A[1]!)}*${big(A[2]!)}`
        e = `${op.includes('hi') ? `((${p})>>64n)` : `BigInt.asUintN(64,${p})`}+${big(A[3]!)}${useC ? '+BigInt(CF)' : ''}`
      }
      const isSub = op[0] === 'sub' || op[0] === 'subc'
      return `{const W=${e};${setCC ? (isSub ? 'CF=W<0n?1:0;' : 'CF=W>18446744073709551615n?1:0;') : ''}${this.wr(A[0]!, 'i64', 'n64(W)')}}`
    }
    const a = this.rd(A[1]!, 'u32')
    const b = this.rd(A[2]!, 'u32')
    let e: string
    const isSub = op[0] === 'sub' || op[0] === 'subc'
    if (op[0] === 'add' || op[0] === 'addc') e = `${a}+${b}${c}`
    else if (isSub) e = `${a}-${b}${useC ? '-CF' : ''}`
    else {
      const hi = op.includes('hi')
      const p = hi ? `(mulhi32(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')},${t === 's32'})>>>0)` : `(Math.imul(${this.rd(A[1]!, 'i32')},${this.rd(A[2]!, 'i32')})>>>0)`
      e = `${p}+${this.rd(A[3]!, 'u32')}${c}`
    }
    return `u=${e};${setCC ? (isSub ? 'CF=u<0?1:0;' : 'CF=u>4294967295?1:0;') : ''}${this.wr(A[0]!, 'i32', 'u|0')}`
  }

  cmpExpr(cmp: string, t: string, a: string, b: string): string {
    const isF = t === 'f32' || t === 'f64' || t === 'f16' || t === 'bf16'
    if (isF) {
      const un = cmp.endsWith('u') && cmp !== 'nu'
      const base = un ? cmp.slice(0, -1) : cmp
      const opm: Record<string, string> = { eq: '===', ne: '!==', lt: '<', le: '<=', gt: '>', ge: '>=' }
      if (cmp === 'num') return `(${a}===${a}&&${b}===${b})`
      if (cmp === 'nan') return `(${a}!==${a}||${b}!==${b})`
      if (!opm[base]) this.fail(`unsupported comparison .${cmp}`)
      if (un) return `(u=${a},v=${b},u!==u||v!==v||u${opm[base]}v)`
      if (base === 'ne') return `(u=${a},v=${b},u===u&&v===v&&u!==v)`
      return `(${a}${opm[base]}${b})`
    }
    const is64 = t === 'u64' || t === 's64' || t === 'b64'
    const signed = t.startsWith('s')
    const m: Record<string, string> = { eq: '===', ne: '!==', lt: '<', le: '<=', gt: '>', ge: '>=', lo: '<', ls: '<=', hi: '>', hs: '>=' }
    const o = m[cmp]
    if (!o) this.fail(`unsupported integer comparison .${cmp}`)
    const uns = !signed || ['lo', 'ls', 'hi', 'hs'].includes(cmp)
    if (is64) {
      if (cmp === 'eq' || cmp === 'ne') return `(${a}${cmp === 'eq' ? '==' : '!='}${b})`
      return `(${uns ? 'ucmp64' : 'scmp64'}(${a},${b})${o}0)`
    }
    return `(${a}${o}${b})`
  }

  operandKind(t: string, signedCmp: boolean): Kind {
    if (t === 'f32' || t === 'f64') return t
    if (t === 'u32' || t === 'b32') return signedCmp ? 'i32' : 'u32'
    if (t === 's32') return 'i32'
    if (t === 'u16' || t === 'b16') return signedCmp ? 's16' : 'u16'
    return kindOf(t)
  }

  setp(ins: PtxInstruction): string {
    const op = ins.op
    const A = ins.args
    const types = this.types(ins)
    const t = types[types.length - 1]!
    const cmp = op[1]!
    const boolOp = op.find((p) => p === 'and' || p === 'or' || p === 'xor')
    const signedCmp = t.startsWith('s') && !['lo', 'ls', 'hi', 'hs'].includes(cmp)
    let a: string, b: string
    if (t === 'f16' || t === 'bf16') {
      const f = t === 'f16' ? 'f16ToNum' : 'bf16ToNum'
      a = `${f}(${this.rd(A[1]!, 'u16')})`; b = `${f}(${this.rd(A[2]!, 'u16')})`
    } else if (t === 'f16x2' || t === 'bf16x2') {
      return this.fail('setp on packed halves is not supported')
    } else {
      const kk = t === 'u64' || t === 's64' || t === 'b64' ? 'i64' : this.operandKind(t, signedCmp)
      a = this.rd(A[1]!, kk); b = this.rd(A[2]!, kk)
      if (op.includes('ftz') && t === 'f32') { a = `ftz(${a})`; b = `ftz(${b})` }
    }
    const c = this.cmpExpr(cmp, t, a, b)
    const dst = A[0]!.k === 'pair' ? A[0]!.a : A[0]!
    const q = A[0]!.k === 'pair' ? A[0]!.b : undefined
    if (boolOp) {
      const pc = this.rd(A[3]!, 'pred')
      const j = boolOp === 'and' ? '&&' : boolOp === 'or' ? '||' : '!=='
      return `u=${c};v=${pc};${this.wr(dst, 'pred', `(u${j}v)`)}${q ? this.wr(q, 'pred', `(!u${j}v)`) : ''}`
    }
    if (q) return `u=${c};${this.wr(dst, 'pred', 'u')}${this.wr(q, 'pred', '!u')}`
    return this.wr(dst, 'pred', c)
  }

  set(ins: PtxInstruction): string {
    const op = ins.op
    const A = ins.args
    const types = this.types(ins)
    const [dt, st] = types as [string, string]
    const cmp = op[1]!
    const signedCmp = st.startsWith('s') && !['lo', 'ls', 'hi', 'hs'].includes(cmp)
    const kk = st === 'u64' || st === 's64' || st === 'b64' ? 'i64' : this.operandKind(st, signedCmp)
    let c = this.cmpExpr(cmp, st, this.rd(A[1]!, kk), this.rd(A[2]!, kk))
    const boolOp = op.find((p) => p === 'and' || p === 'or' || p === 'xor')
    if (boolOp) c = `(${c}${boolOp === 'and' ? '&&' : boolOp === 'or' ? '||' : '!=='}${this.rd(A[3]!, 'pred')})`
    if (dt === 'f32') return this.wr(A[0]!, 'f32', `(${c}?1:0)`)
    return this.wr(A[0]!, 'i32', `(${c}?-1:0)`)
  }

  cvt(ins: PtxInstruction): string {
    const op = ins.op
    const A = ins.args
    const types = this.types(ins)
    if (types.length < 2) return this.fail('cvt needs two types')
    const [dt, st] = types as [string, string]
    const irnd = op.find((p) => ['rni', 'rzi', 'rmi', 'rpi'].includes(p))
    const frnd = (op.find((p) => ['rn', 'rz', 'rm', 'rp', 'rna', 'rs'].includes(p)) ?? 'rn') as 'rn' | 'rz' | 'rm' | 'rp'
    const ftzF = op.includes('ftz')
    const satF = op.includes('sat')
    const isF = (x: string) => x === 'f32' || x === 'f64' || x === 'f16' || x === 'bf16'
    const isI = (x: string) => /^[sub](8|16|32|64)$/.test(x)
    const bits = (x: string) => Number(x.slice(1))
    // source value as number (floats) or int expression
    const readF = (): string => {
      if (st === 'f32') return ftzF ? `ftz(${this.rd(A[1]!, 'f32')})` : this.rd(A[1]!, 'f32')
      if (st === 'f64') return this.rd(A[1]!, 'f64')
      if (st === 'f16') return `f16ToNum(${this.rd(A[1]!, 'u16')})`
      return `bf16ToNum(${this.rd(A[1]!, 'u16')})`
    }
    const fp8 = types.find((t) => t === 'e4m3x2' || t === 'e5m2x2')
    if (fp8) {
      const e4 = fp8 === 'e4m3x2'
      if (dt === fp8) {
        if (!op.includes('satfinite')) return this.fail(`cvt to .${fp8} needs .satfinite`)
        const enc = e4 ? 'numToE4m3' : 'numToE5m2'
        // two f32 sources: a → upper byte, b → lower byte; one f16x2 source: halves in place
        if (st === 'f32') return this.wr(A[0]!, 'u16', `(${enc}(${this.rd(A[2]!, 'f32')})|(${enc}(${this.rd(A[1]!, 'f32')})<<8))`)
        if (st === 'f16x2') return `u=${this.rd(A[1]!, 'i32')};${this.wr(A[0]!, 'u16', `(${enc}(f16ToNum(u&65535))|(${enc}(f16ToNum(u>>>16))<<8))`)}`
        return this.fail(`unsupported conversion .${dt}.${st}`)
      }
      if (dt === 'f16x2' && st === fp8) {
        const dec = e4 ? 'e4m3ToNum' : 'e5m2ToNum'
        return `u=${this.rd(A[1]!, 'u16')};${this.wr(A[0]!, 'i32', `(numToF16(${dec}(u&255))|(numToF16(${dec}(u>>>8))<<16))`)}`
      }
      return this.fail(`unsupported conversion .${dt}.${st}`)
    }
    const relu = op.includes('relu')
    const rl = (e: string, bf: boolean) => (relu ? `relu16(${e},${bf})` : e)
    if (op.includes('f16x2') || op.includes('bf16x2')) {
      // cvt.rn{.relu}{.satfinite}.f16x2.f32 d, a, b: d = {a→hi, b→lo}
      const bf = dt === 'bf16x2'
      const f = bf ? 'numToBf16' : 'numToF16'
      const sf = op.includes('satfinite')
      return this.wr(A[0]!, 'i32', `(${rl(`${f}(${this.rd(A[2]!, 'f32')},'${frnd}',${sf})`, bf)}|(${rl(`${f}(${this.rd(A[1]!, 'f32')},'${frnd}',${sf})`, bf)}<<16))`)
    }
    if (relu && dt !== 'f16' && dt !== 'bf16') return this.fail('.relu applies to half-precision results only')
    if (isF(dt) && isF(st)) {
      const x = readF()
      if (dt === 'f32') {
        let e = st === 'f64' ? (frnd === 'rn' ? `fround(${x})` : `cvt32(${x},'${frnd}')`) : x
        if (irnd) e = `fround(roundInt(${x},'${irnd}'))`
        if (ftzF) e = `ftz(${e})`
        if (satF) e = `sat(${e})`
        return this.wr(A[0]!, 'f32', e)
      }
      if (dt === 'f64') {
        let e = irnd ? `roundInt(${x},'${irnd}')` : x
        if (satF) e = `sat(${e})`
        return this.wr(A[0]!, 'f64', e)
      }
      let src = irnd ? `roundInt(${x},'${irnd}')` : x
      if (satF) src = `sat(${src})`
      const sf = op.includes('satfinite')
      if (dt === 'f16') return this.wr(A[0]!, 'u16', rl(`numToF16(${src},'${frnd}',${sf})`, false))
      return this.wr(A[0]!, 'u16', rl(`numToBf16(${src},'${frnd}',${sf})`, true))
    }
    if (isI(dt) && isF(st)) {
      const x = readF()
      const mode = irnd ?? 'rzi'
      const sg = dt.startsWith('s')
      if (bits(dt) === 64) return this.wr(A[0]!, 'i64', `f2i64(${x},'${mode}',${sg})`)
      if (bits(dt) === 32) return this.wr(A[0]!, 'i32', `f2i32(${x},'${mode}',${sg})`)
      return this.wr(A[0]!, bits(dt) === 16 ? 'u16' : 'u8', `f2iN(${x},'${mode}',${sg},${bits(dt)})`)
    }
    if (isF(dt) && isI(st)) {
      const sg = st.startsWith('s')
      let num: string
      if (bits(st) === 64) {
        num = dt === 'f32' ? `i64ToF(${this.rd(A[1]!, 'i64')},${!sg},true,'${frnd}')` : `i64ToF(${this.rd(A[1]!, 'i64')},${!sg},false,'${frnd}')`
      } else {
        const kk: Kind = bits(st) === 32 ? (sg ? 'i32' : 'u32') : bits(st) === 16 ? (sg ? 's16' : 'u16') : sg ? 's8' : 'u8'
        const v = this.rd(A[1]!, kk)
        num = dt === 'f32' ? (bits(st) === 32 ? `i32ToF32(${v},'${frnd}')` : `fround(${v})`) : v
      }
      if (satF) num = `sat(${num})`
      if (dt === 'f32') return this.wr(A[0]!, 'f32', num)
      if (dt === 'f64') return this.wr(A[0]!, 'f64', num)
      if (dt === 'f16') return this.wr(A[0]!, 'u16', `numToF16(${num},'${frnd}')`)
      return this.wr(A[0]!, 'u16', `numToBf16(${num},'${frnd}')`)
    }
    if (isI(dt) && isI(st)) {
      const sb = bits(st), db = bits(dt)
      const ss = st.startsWith('s'), ds = dt.startsWith('s')
      if (satF) {
        // clamp the source value into the destination range
        const lo = ds ? -(2 ** (db - 1)) : 0
        const hi = ds ? 2 ** (db - 1) - 1 : 2 ** db - 1
        if (sb === 64 || db === 64) {
          const v = ss ? `big(${this.rd(A[1]!, 'i64')})` : `u64b(${this.rd(A[1]!, 'i64')})`
          return `{const W=${v};${this.wr(A[0]!, 'i64', `n64(W<${BigInt(lo)}n?${BigInt(lo)}n:W>${BigInt(hi)}n?${BigInt(hi)}n:W)`)}}`
        }
        const kk: Kind = sb === 32 ? (ss ? 'i32' : 'u32') : sb === 16 ? (ss ? 's16' : 'u16') : ss ? 's8' : 'u8'
        const v = this.rd(A[1]!, kk)
        const e = `Math.min(Math.max(${v},${lo}),${hi})`
        return this.wr(A[0]!, db === 32 ? 'i32' : db === 16 ? 'u16' : 'u8', db === 32 ? `${e}|0` : `${e}&${2 ** db - 1}`)
      }
      // read source at its width (sign/zero extended), write to destination width
      let v: string
      let kk: Kind
      if (sb === 64) { v = this.rd(A[1]!, 'i64'); kk = 'i64' } else if (sb === 32) { kk = ss ? 'i32' : 'u32'; v = this.rd(A[1]!, kk) } else if (sb === 16) { kk = ss ? 's16' : 'u16'; v = this.rd(A[1]!, kk) } else { kk = ss ? 's8' : 'u8'; v = this.rd(A[1]!, kk) }
      if (db === 64) return this.wr(A[0]!, 'i64', kk === 'i64' ? v : v)
      if (db === 32) return this.wr(A[0]!, 'i32', kk === 'i64' ? `lo32(${v})` : `${v}|0`)
      const wv = kk === 'i64' ? `lo32(${v})` : v
      if (db === 16) return this.wr(A[0]!, ds ? 'u16' : 'u16', `${wv}&65535`)
      // 8-bit destination in a wider register: PTX sign-extends .s8 results to the register width
      if (ds) return this.wr(A[0]!, 'i32', `(${wv}<<24>>24)`)
      return this.wr(A[0]!, 'i32', `${wv}&255`)
    }
    return this.fail(`unsupported conversion .${dt}.${st}`)
  }

  half(ins: PtxInstruction, what: string): string {
    const A = ins.args
    const t = this.types(ins).pop()!
    const bf = t.startsWith('bf')
    const to = bf ? 'numToBf16' : 'numToF16'
    const from = bf ? 'bf16ToNum' : 'f16ToNum'
    const sat = ins.op.includes('sat')
    const relu = ins.op.includes('relu')
    if (relu && what !== 'fma') this.fail(`.relu is supported on fma only`)
    const ftzH = ins.op.includes('ftz')
    void ftzH
    const one = (x: string[]): string => {
      let e: string
      switch (what) {
        case '+': case '-': case '*': e = `${to}(${x[0]}${what}${x[1]})`; break
        case 'fma': e = bf ? `fmaB(${x[0]},${x[1]},${x[2]})` : `fmaH(${x[0]},${x[1]},${x[2]})`; break
        case 'min': e = `${to}(fmin(${x[0]},${x[1]}))`; break
        case 'max': e = `${to}(fmax(${x[0]},${x[1]}))`; break
        case 'ex2': e = `${to}(2**${x[0]})`; break
        case 'tanh': e = `${to}(Math.tanh(${x[0]}))`; break
        case 'rcp': e = `${to}(1/${x[0]})`; break
        case 'sqrt': e = `${to}(Math.sqrt(${x[0]}))`; break
        case 'rsqrt': e = `${to}(1/Math.sqrt(${x[0]}))`; break
        case 'sin': e = `${to}(Math.sin(${x[0]}))`; break
        case 'cos': e = `${to}(Math.cos(${x[0]}))`; break
        case 'lg2': e = `${to}(Math.log2(${x[0]}))`; break
        default: return this.fail(`unsupported half-precision ${what}`)
      }
      if (sat) e = `${to}(sat(${from}(${e})))`
      if (relu) e = `relu16(${e},${bf})`
      return e
    }
    const n = what === 'fma' ? 3 : ['+', '-', '*', 'min', 'max'].includes(what) ? 2 : 1
    if (t === 'f16' || t === 'bf16') {
      const xs = A.slice(1, 1 + n).map((o) => `${from}(${this.rd(o, 'u16')})`)
      return this.wr(A[0]!, 'u16', one(xs))
    }
    const srcs = A.slice(1, 1 + n).map((o) => this.rd(o, 'i32'))
    const pre = srcs.map((s, i) => `const h${i}=${s};`).join('')
    const lo = one(srcs.map((_, i) => `${from}(h${i}&65535)`))
    const hi = one(srcs.map((_, i) => `${from}(h${i}>>>16)`))
    return `{${pre}${this.wr(A[0]!, 'i32', `(${lo})|((${hi})<<16)`)}}`
  }

  atom(ins: PtxInstruction, idx: number): string {
    const op = ins.op
    const A = ins.args
    const isRed = op[0] === 'red'
    const space = op.includes('shared') || op.includes('shared::cta') ? 'shared' : op.includes('global') ? 'global' : 'generic'
    const types = this.types(ins)
    const t = types[types.length - 1]!
    const opn = op.find((p) => ['add', 'min', 'max', 'inc', 'dec', 'exch', 'cas', 'and', 'or', 'xor'].includes(p))
    if (!opn) return this.fail('unsupported atomic operation')
    if (op.includes('v2') || op.includes('v4') || op.includes('v8')) return this.fail('vector atomics are not supported')
    const sz = typeSize(t)
    const addrOp = isRed ? A[0]! : A[1]!
    const b = isRed ? A[1]! : A[2]!
    const c = isRed ? undefined : A[3]
    let code = this.addr(addrOp, space === 'shared' ? 'shared' : space, sz, idx)
    const dst = isRed ? undefined : A[0]!
    const out = (kind: Kind, e: string) => (dst ? this.wr(dst, kind, e) : '')
    if (t === 'f32') {
      const old = 'HF32[a>>>2]'
      const bv = this.rd(b, 'f32')
      code += `u=${old};v=${bv};`
      const nv = opn === 'add' ? 'fround(u+v)' : opn === 'min' ? 'fmin(u,v)' : opn === 'max' ? 'fmax(u,v)' : opn === 'exch' ? 'v' : this.fail('unsupported f32 atomic')
      return code + `HF32[a>>>2]=${nv};` + out('f32', 'u')
    }
    if (t === 'f64') {
      code += `u=HF64[a>>>3];v=${this.rd(b, 'f64')};`
      const nv = opn === 'add' ? '(u+v)' : opn === 'min' ? 'fmin(u,v)' : opn === 'max' ? 'fmax(u,v)' : opn === 'exch' ? 'v' : this.fail('unsupported f64 atomic')
      return code + `HF64[a>>>3]=${nv};` + out('f64', 'u')
    }
    if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') {
      if (opn !== 'add') return this.fail('unsupported half-precision atomic')
      const bf = t.startsWith('bf')
      const to = bf ? 'numToBf16' : 'numToF16', from = bf ? 'bf16ToNum' : 'f16ToNum'
      if (t === 'f16' || t === 'bf16') {
        code += `u=HU16[a>>>1];HU16[a>>>1]=${to}(${from}(u)+${from}(${this.rd(b, 'u16')}));`
        return code + out('u16', 'u')
      }
      code += `u=HI32[a>>>2];v=${this.rd(b, 'i32')};HI32[a>>>2]=${to}(${from}(u&65535)+${from}(v&65535))|(${to}(${from}(u>>>16)+${from}(v>>>16))<<16);`
      return code + out('i32', 'u')
    }
    if (sz === 8) {
      code += `x64=mk64(HU32[a>>>2],HI32[(a>>>2)+1]);`
      const bv = this.rd(b, 'i64')
      const signed = t === 's64'
      let nv: string
      switch (opn) {
        case 'add': nv = `add64(x64,${bv})`; break
        case 'min': nv = `(${signed ? 'scmp64' : 'ucmp64'}(x64,${bv})<=0?x64:${bv})`; break
        case 'max': nv = `(${signed ? 'scmp64' : 'ucmp64'}(x64,${bv})>=0?x64:${bv})`; break
        case 'exch': nv = bv; break
        case 'cas': nv = `(x64==${bv}?${this.rd(c!, 'i64')}:x64)`; break
        case 'and': case 'or': case 'xor': nv = `${opn}64(x64,${bv})`; break
        case 'inc': case 'dec': nv = this.fail('64-bit atom.inc/dec does not exist in PTX'); break
      }
      return code + `{const N=${nv!};HI32[a>>>2]=lo32(N);HI32[(a>>>2)+1]=hi32(N);}` + out('i64', 'x64')
    }
    if (sz === 4) {
      const signed = t === 's32'
      code += `u=HI32[a>>>2];v=${this.rd(b, 'i32')};`
      let nv: string
      switch (opn) {
        case 'add': nv = '(u+v)|0'; break
        case 'min': nv = signed ? 'Math.min(u,v)' : '(Math.min(u>>>0,v>>>0)|0)'; break
        case 'max': nv = signed ? 'Math.max(u,v)' : '(Math.max(u>>>0,v>>>0)|0)'; break
        case 'inc': nv = 'incWrap(u,v)'; break
        case 'dec': nv = 'decWrap(u,v)'; break
        case 'exch': nv = 'v'; break
        case 'cas': nv = `(u===v?${this.rd(c!, 'i32')}:u)`; break
        case 'and': nv = 'u&v'; break
        case 'or': nv = 'u|v'; break
        case 'xor': nv = 'u^v'; break
      }
      return code + `HI32[a>>>2]=${nv!};` + out('i32', 'u')
    }
    if (sz === 2 && opn === 'cas') {
      code += `u=HU16[a>>>1];if(u===${this.rd(b, 'u16')})HU16[a>>>1]=${this.rd(c!, 'u16')};`
      return code + out('u16', 'u')
    }
    return this.fail(`unsupported atomic type .${t}`)
  }

  call(ins: PtxInstruction): string {
    // call(.uni) (ret), fname, (args)   |   call fname, (args)   |   call fname
    const A = ins.args
    let i = 0
    let rets: Operand[] = []
    if (A[0]?.k === 'list') { rets = A[0].items; i = 1 }
    const target = A[i]
    if (!target || target.k !== 'id') return this.fail('indirect calls are not supported by the emulator')
    const name = target.name
    const args = A[i + 1]?.k === 'list' ? (A[i + 1] as { items: Operand[] }).items : []
    if (this.regs.has(name)) return this.fail('indirect calls are not supported by the emulator')
    const argAddr = (o: Operand): string => {
      if (o.k !== 'id') return this.fail('call arguments must be .param variables')
      const v = this.vars.get(o.name)
      if (!v || v.v.space !== 'param') return this.fail(`call argument ${o.name} is not a .param variable`)
      return `(FB+${v.off})`
    }
    if (name === 'vprintf') {
      const out = rets.length ? `HI32[${argAddr(rets[0]!)}>>>2]=r_;` : ''
      return `{const r_=E.vprintf(H8,HU32,HI32,${args.length > 0 ? `mk64(HU32[${argAddr(args[0]!)}>>>2],HI32[(${argAddr(args[0]!)}>>>2)+1])` : 0},${args.length > 1 ? `mk64(HU32[${argAddr(args[1]!)}>>>2],HI32[(${argAddr(args[1]!)}>>>2)+1])` : 0});${out}}`
    }
    if (name === '__assertfail') return `fault(${this.mc.instrs.length - 1},undefined,'assert');`
    if (name === 'malloc' || name === 'free') return this.fail(`device ${name} is not supported by the emulator`)
    const callee = this.mc.mod.functions.find((f) => f.name === name && f.body)
    if (!callee) return this.fail(`call to ${name}, which has no body in this module`)
    this.calls.add(name)
    const ci = this.mc.fnIndex.get(name)!
    // copy args into the callee frame (callee param offsets are known only after it is laid out: read from layout table)
    const cp = args.map((o, j) => `mcp(nf+FOFF[${ci}][${j}],${argAddr(o)},${this.mc.paramSize(callee, j)});`).join('')
    const rp = rets.map((o, j) => `mcp(${argAddr(o)},nf+ROFF[${ci}][${j}],${this.mc.retSize(callee, j)});`).join('')
    return `{const nf=PSP;PSP+=FSIZE[${ci}];if(PSP>PSEND)fault(${this.mc.instrs.length - 1},undefined,'callstack');${cp}F${ci}(nf,LB,LF+${'LOCALSZ'},t);${rp}PSP=nf;}`
  }
}

export class ModuleCompiler {
  instrs: InstrInfo[] = []
  fnIndex = new Map<string, number>()
  fnNames = new Set<string>()
  varSpace = new Map<string, string>()
  compiled: CompiledFunction[] = []
  /** Access sites with an allocation-range cache, over all functions (FnCompiler.siteIds). */
  sites = 0
  constructor(public mod: PtxModule, public layout: ModuleLayout) {
    mod.functions.forEach((f, i) => { if (f.body) this.fnIndex.set(f.name, i); this.fnNames.add(f.name) })
    for (const v of mod.variables) this.varSpace.set(v.name, v.space)
  }
  paramSize(f: PtxFunction, j: number): number { return f.params[j]?.size ?? this.bad(f, 'argument count') }
  retSize(f: PtxFunction, j: number): number { return f.returns[j]?.size ?? this.bad(f, 'return count') }
  bad(f: PtxFunction, what: string): never { throw new PtxError(`call to ${f.name} does not match its ${what}`, f.line) }

  compile(): { source: string; functions: Map<string, CompiledFunction> } {
    const parts: string[] = []
    const out = new Map<string, CompiledFunction>()
    const fcs: FnCompiler[] = []
    const fastJs = new Map<string, string | undefined>()
    this.mod.functions.forEach((f, i) => {
      if (!f.body) return
      const fc = new FnCompiler(f, this)
      const js = fc.compile()
      fcs[i] = fc
      let fast: string | undefined
      if (f.kind === 'entry' && [...fc.hoisted.values()].some((h) => h.kind === 'i64')) {
        const ff = new FnCompiler(f, this, `K${i}s`)
        const fjs = ff.compile()
        // worth it only when some 64-bit add became plain arithmetic
        if (fjs !== js.replace(/^/, '') && ff.bounds && [...ff.bounds.values()].some((x) => x < Infinity)) fast = fjs
      }
      fastJs.set(f.name, fast)
      const cf: CompiledFunction = {
        name: f.name, kind: f.kind, js, collectives: fc.collectives, hasSuspend: fc.hasSuspend,
        hasWarpCollective: [...fc.collectives.values()].some((c) => c.kind !== 'bar'),
        frameSize: fc.frameSize, paramOffsets: fc.paramOffsets, localSize: fc.localSize, stackNeed: fc.localSize,
        calls: fc.calls, regCount: fc.regs.size,
      }
      out.set(f.name, cf)
    })
    // stack needs (recursion: a fixed allowance, overflow is caught by the local window check)
    const need = (name: string, seen: Set<string>): number => {
      const cf = out.get(name)!
      if (seen.has(name)) return 1 << 16
      seen.add(name)
      let m = 0
      for (const c of cf.calls) m = Math.max(m, need(c, seen))
      seen.delete(name)
      return Math.min(cf.localSize + m, 1 << 20)
    }
    for (const cf of out.values()) cf.stackNeed = need(cf.name, new Set())
    // a kernel without calls gets a window of exactly its declared local bytes, so overruns fault
    this.mod.functions.forEach((f, i) => { const fc = fcs[i]; if (fc && fc.calls.size === 0) out.get(f.name)!.stackNeed = fc.localExact })
    const foff: string[] = [], roff: string[] = [], fsize: string[] = []
    this.mod.functions.forEach((f, i) => {
      const fc = fcs[i]
      foff.push(fc ? JSON.stringify(fc.paramOffsets) : '[]')
      roff.push(fc ? JSON.stringify(fc.retOffsets) : '[]')
      fsize.push(fc ? String(fc.frameSize) : '0')
      if (!fc) return
      const cf = out.get(f.name)!
      const fast = fastJs.get(f.name)
      if (fast) {
        parts.push(`const K${i}s=${cf.js.replaceAll('LOCALSZ', String(cf.localSize))};`)
        parts.push(`const K${i}=${fast.replaceAll('LOCALSZ', String(cf.localSize))};`)
      } else parts.push(`const ${f.kind === 'entry' ? 'K' : 'F'}${i}=${cf.js.replaceAll('LOCALSZ', String(cf.localSize))};`)
      parts.push(`FN[${JSON.stringify(f.name)}]=${f.kind === 'entry' ? 'K' : 'F'}${i};`)
    })
    const helpers = ['add64', 'sub64', 'mul64', 'mulhi64', 'neg64', 'and64', 'or64', 'xor64', 'not64', 'shl64', 'shrs64', 'shru64', 'ucmp64', 'scmp64', 'divs64', 'divu64', 'rems64', 'remu64', 'popc64', 'clz64', 'brev64', 'mk64', 'lo32', 'hi32', 'n64', 'big', 'u64b',
      'popc32', 'brev32', 'mulhi32', 'mulwide32', 'divs32', 'divu32', 'rems32', 'remu32', 'bfe32', 'bfe64', 'bfi32', 'bfi64', 'bfind32', 'bfind64', 'prmt', 'lop3', 'shf', 'dp4a', 'dp2a',
      'fround', 'ftz', 'sat', 'fmin', 'fmax', 'fminNaN', 'fmaxNaN', 'fma64', 'fma32', 'fop32', 'fop64', 'cvt32', 'f16ToNum', 'numToF16', 'bf16ToNum', 'numToBf16', 'fmaH', 'fmaB',
      'roundInt', 'f2i32', 'f2iN', 'f2i64', 'i64ToF', 'i32ToF32', 'incWrap', 'decWrap', 'copysign', 'satS32', 'numToE4m3', 'numToE5m2', 'e4m3ToNum', 'e5m2ToNum', 'relu16']
    const source = `"use strict";
const {${helpers.join(',')}}=E.h;
const FB32=E.h.f32FromBits,BF32=E.h.bitsFromF32,FB64=E.h.f64FromBits,BF64=E.h.bitsFromF64;
let _H8,_HI8,_HU16,_HI16,_HI32,_HU32,_HF32,_HF64,_OK,_HN=0;
let _SB=0,_SHN=0,_DYN=0,_LB0=0,_LN=0,_LSZ=0,PSP=0,PSEND=0,_NTX=1,_NTY=1,_NTZ=1,_NT=1,_NCX=1,_NCY=1,_NCZ=1,_CX=0,_CY=0,_CZ=0;
function mcp(d,s,n){_H8.copyWithin(d,s,s+n)}
const FOFF=[${foff.join(',')}],ROFF=[${roff.join(',')}],FSIZE=[${fsize.join(',')}];
function fault(i,a,what){E.fault(i,a,what)}
let _AR=new Float64Array(0),RL=1,RH=0;const _GR=new Float64Array(${2 * Math.max(this.sites, 1)});
function wr(x,c,lo){const y=x+c*(_NTX-1);return x>=lo&&x<=2147483647&&y>=lo&&y<=2147483647}
function hz(lo,c,n,al,k){const hi=lo+c*(_NTX-1),mn=lo<hi?lo:hi,mx=lo<hi?hi:lo;if(lo%al!==0)return false;if(mn>=_GR[k]&&mx<=_GR[k+1])return true;rng(mn);_GR[k]=RL;_GR[k+1]=RH-n;return mn>=RL&&mx+n<=RH}
function rng(a){let lo=0,hi=(_AR.length>>>1)-1;while(lo<=hi){const m=(lo+hi)>>>1;if(a<_AR[2*m])hi=m-1;else if(a>=_AR[2*m+1])lo=m+1;else{RL=_AR[2*m];RH=_AR[2*m+1];return}}RL=1;RH=0}
const FN=Object.create(null);
${parts.join('\n')}
return {
  FN,
  setHeap(buf,ok){_H8=new Uint8Array(buf);_HI8=new Int8Array(buf);_HU16=new Uint16Array(buf);_HI16=new Int16Array(buf);_HI32=new Int32Array(buf,0,buf.byteLength>>>2);_HU32=new Uint32Array(buf,0,buf.byteLength>>>2);_HF32=new Float32Array(buf,0,buf.byteLength>>>2);_HF64=new Float64Array(buf,0,buf.byteLength>>>3);_OK=ok;_HN=buf.byteLength;},
  setLaunch(o){_SB=o.SB;_SHN=o.SHN;_DYN=o.DYN;_LB0=o.LB0;_LN=o.LN;_LSZ=o.LSZ;PSP=o.PSP;PSEND=o.PSEND;_NTX=o.NTX;_NTY=o.NTY;_NTZ=o.NTZ;_NT=_NTX*_NTY*_NTZ;_NCX=o.NCX;_NCY=o.NCY;_NCZ=o.NCZ;},
  setRanges(ar){_AR=ar;for(let i=0;i<_GR.length;i+=2){_GR[i]=1;_GR[i+1]=0;}},
};`
    return { source, functions: out }
  }
}
