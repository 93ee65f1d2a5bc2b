// How PTX values live in generated JavaScript (numeric.ts holds the helpers the code calls):
//   register classes (@kernelpack/ptx, analysis/register-classes.ts): i32 registers hold int32 numbers, i16
//   registers unsigned 16-bit numbers, i64 registers the hybrid number-or-BigInt, f32/f64 registers numbers,
//   predicates booleans;
//   kinds: the representation an instruction reads or writes an operand in (u32: a uint32 number; u16, s16,
//   u8, s8: numbers of that width; i64: number-or-BigInt; …).
// This file converts between the two and renders literals. Pure functions of typed IR values; every number
// written into code goes through jsLiteral, which parenthesizes negatives, so `x - -7` can never become
// the decrement `x--7` (issue 17 item 11).
import { reservedSmemRead, type Immediate, type RegisterClass, type SpecialRegister } from '@kernelpack/ptx'

export type Kind = 'i32' | 'u32' | 'f32' | 'f64' | 'i64' | 'u16' | 's16' | 'u8' | 's8' | 'pred'

/** An error the caller reports with the instruction it was emitting. */
export type Fail = (msg: string) => never

/** The kind a load/store/operation of PTX type `type` uses. */
export function kindOf(type: string, fail: Fail): Kind {
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
    default: return fail(`no kind for type ${type}`)
  }
}

/** The memory type a load/store of PTX type t uses for a register of class c: a float-class register moves
 *  its float, an integer-class one its bits (both of the emulator's writers). */
export function memTypeFor(t: string, c: RegisterClass | undefined): string {
  if (t === 'b32' && c === 'f32') return 'f32'
  if (t === 'b64' && c === 'f64') return 'f64'
  if (t === 'f32' && c === 'i32') return 'b32'
  if (t === 'f64' && c === 'i64') return 'b64'
  return t
}

/** A number as JavaScript source, bare (`-7`, `NaN`, `-0`): only where no operator precedes it. */
export function jsNumber(x: number): string {
  if (x !== x) return 'NaN'
  if (x === Infinity) return 'Infinity'
  if (x === -Infinity) return '-Infinity'
  if (Object.is(x, -0)) return '-0'
  return String(x)
}

/** A number as a JavaScript operand: negatives (and -0, -Infinity) in parentheses. */
export function jsLiteral(x: number): string {
  const s = jsNumber(x)
  return s.startsWith('-') ? `(${s})` : s
}

/** A 64-bit integer value: a number while safe, else a BigInt literal; negatives parenthesized. */
export function jsInt64(v: bigint): string {
  v = BigInt.asIntN(64, v)
  if (v >= -9007199254740991n && v <= 9007199254740991n) return jsLiteral(Number(v))
  return v < 0n ? `(${v}n)` : `${v}n`
}

const f32buf = new Float32Array(1)
const i32buf = new Int32Array(f32buf.buffer)
const f64buf = new Float64Array(1)
const u64buf = new BigUint64Array(f64buf.buffer)

/** An immediate read as kind k (PTX ISA, "Constants": an integer literal where a float is expected is a bit
 *  pattern — `mov.b32 %r6, 1056964608` into a register clang uses as f32; a float literal read as an
 *  integer gives its bits). */
export function immediateAs(imm: Immediate, k: Kind, fail: Fail): string {
  switch (imm.kind) {
    case 'int': {
      const v = imm.value
      switch (k) {
        case 'i32': return jsLiteral(Number(BigInt.asIntN(32, v)))
        case 'u32': return jsLiteral(Number(BigInt.asUintN(32, v)))
        case 'i64': return jsInt64(v)
        case 'u16': return jsLiteral(Number(BigInt.asUintN(16, v)))
        case 's16': return jsLiteral(Number(BigInt.asIntN(16, v)))
        case 'u8': return jsLiteral(Number(BigInt.asUintN(8, v)))
        case 's8': return jsLiteral(Number(BigInt.asIntN(8, v)))
        case 'pred': return v !== 0n ? 'true' : 'false'
        case 'f32': i32buf[0] = Number(BigInt.asIntN(32, v)); return jsLiteral(f32buf[0]!)
        case 'f64': u64buf[0] = BigInt.asUintN(64, v); return jsLiteral(f64buf[0]!)
      }
      break
    }
    case 'f32': case 'f64': {
      let val: number
      if (imm.kind === 'f32') { i32buf[0] = Number(BigInt.asIntN(32, imm.bits)); val = f32buf[0]! } else { u64buf[0] = imm.bits; val = f64buf[0]! }
      switch (k) {
        case 'f32': return jsLiteral(Math.fround(val))
        case 'f64': return jsLiteral(val)
        case 'i32': case 'u32': return imm.kind === 'f32' ? jsLiteral(Number(k === 'i32' ? BigInt.asIntN(32, imm.bits) : imm.bits)) : fail('f64 immediate used as 32-bit')
        case 'i64': return jsInt64(imm.bits)
        case 'u16': return jsLiteral(Number(imm.bits & 0xffffn))
        default: break
      }
      break
    }
    case 'real':
      if (k === 'f32') return jsLiteral(Math.fround(imm.value))
      if (k === 'f64') return jsLiteral(imm.value)
      break
  }
  const what: Record<Immediate['kind'], string> = { int: 'an integer literal', f32: 'an f32 literal', f64: 'an f64 literal', real: 'a decimal literal' }
  return fail(`${what[imm.kind]} cannot be read as ${k}`)
}

/** The bits of f32 value x as an int32 (NaN as 0x7fffffff, as numeric.ts bitsFromF32), written inline through
 *  the generated module's one-float scratch _SF/_SI: a large kernel spends V8's inlining budget, after which
 *  every helper call stays a call (issue 13). */
export function bitsOfF32(x: string): string {
  return `(_SF[0]=${x},_SF[0]===_SF[0]?_SI[0]:2147483647)`
}

/** The f32 value of int32 bits x, inline (numeric.ts f32FromBits). */
export function f32OfBits(x: string): string {
  return `(_SI[0]=${x},_SF[0])`
}

/** A register of class c (JS expression x) read as kind k. */
export function readAs(x: string, c: RegisterClass, k: Kind, fail: Fail): string {
  if (c === 'pred') return k === 'pred' ? x : `(${x}?1:0)`
  switch (c) {
    case 'i32':
      switch (k) {
        case 'i32': case 'i64': return x
        case 'u32': return `(${x}>>>0)`
        case 'f32': return `${f32OfBits(x)}`
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
        case 'i32': case 'i64': return `${bitsOfF32(x)}`
        case 'u32': return `(${bitsOfF32(x)}>>>0)`
        case 'u16': return `(${bitsOfF32(x)}&65535)`
        case 's16': return `(${bitsOfF32(x)}<<16>>16)`
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
        case 'f32': return `${f32OfBits(`lo32(${x})`)}`
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
  return fail(`register of class ${c} used as ${k}`)
}

/** An expression e of kind k converted for storing in a register of class c. */
export function writeAs(e: string, k: Kind, c: RegisterClass, fail: Fail): string {
  switch (c) {
    case 'i32':
      if (k === 'i32') return e
      if (k === 'f32') return `${bitsOfF32(e)}`
      if (k === 'i64') return `lo32(${e})`
      if (k === 'pred') return `(${e}?1:0)`
      if (k === 'f64') break
      return `(${e})|0`
    case 'f32':
      if (k === 'f32') return e
      if (k === 'i32' || k === 'u32') return `${f32OfBits(e)}`
      if (k === 'i64') return `${f32OfBits(`lo32(${e})`)}`
      break
    case 'i16':
      if (k === 'i64') return `(lo32(${e})&65535)`
      if (k === 'f32') return `(${bitsOfF32(e)}&65535)`
      if (k === 'pred') return `(${e}?1:0)`
      if (k === 'f64') break
      return `(${e})&65535`
    case 'i64':
      if (k === 'i64' || k === 'i32' || k === 'u32' || k === 'u16' || k === 's16' || k === 'u8' || k === 's8') return e
      if (k === 'f64') return `BF64(${e})`
      if (k === 'f32') return `(${bitsOfF32(e)}>>>0)`
      break
    case 'f64':
      if (k === 'f64') return e
      if (k === 'i64') return `FB64(${e})`
      break
    case 'pred':
      if (k === 'pred') return e
      return `(${e})!=0`
  }
  return fail(`cannot write a ${k} value into a ${c} register`)
}

/** A special register as a JavaScript expression over the launch state (emit-js.ts's locals). */
export function specialRegister(name: SpecialRegister): string {
  // the block's reserved shared memory: RESERVED_SMEM bytes at RSV, after the kernel's own (backend.ts)
  const rs = reservedSmemRead(name)
  if (rs) return 'size' in rs ? String(rs.size) : rs.offset ? `(RSV+${rs.offset})` : 'RSV'
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
    case '%clock64': case '%globaltimer': case '%globaltimer_lo': return '(E.clock()|0)'
    case '%globaltimer_hi': return '0'
    case '%dynamic_smem_size': return 'DYN'
    case '%total_smem_size': case '%aggr_smem_size': return 'SHN'
    case '%cluster_ctarank': return '0'
    case '%cluster_nctarank': return '1'
    case '%clusterid.x': case '%clusterid.y': case '%clusterid.z': return '0'
    case '%cluster_ctaid.x': case '%cluster_ctaid.y': case '%cluster_ctaid.z': return '0'
    case '%cluster_nctaid.x': case '%cluster_nctaid.y': case '%cluster_nctaid.z': return '1'
    case '%nclusterid.x': return 'NCX'
    case '%nclusterid.y': return 'NCY'
    case '%nclusterid.z': return 'NCZ'
    case '%is_explicit_cluster': return '0'
    // a cooperative launch's grid workspace (cg::this_grid().sync()): %envreg1 its high, %envreg2 its low
    // 32 bits; emulated addresses are below 2^32. 0 (no workspace) in other launches.
    case '%envreg2': return 'GWS'
    default: return '0'
  }
}

export { isGridWorkspaceRegister } from '@kernelpack/ptx'

/** Generated code `c` mentions the variable `name` (a whole word). */
export function usesName(c: string, name: string): boolean {
  return new RegExp(`\\b${name}\\b`).test(c)
}
