// A small WebAssembly binary encoder for the subset the emulator's wasm writer emits (issue 24 item 6):
// LEB128 integers, the type, import, function, export and code sections, and a function body builder with
// the opcodes as named methods. WebAssembly Core Specification 2.0, "Binary Format" (section ids, value
// types, instruction encodings); the threads proposal for the atomic opcodes (0xfe prefix). Nothing here
// knows about PTX: emit-wasm.ts decides what to write.

export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128'

const VALTYPE: Record<ValType, number> = { i32: 0x7f, i64: 0x7e, f32: 0x7d, f64: 0x7c, v128: 0x7b }

/** Something bytes are appended to: a number[] or a Bytes. */
interface Sink { push(b: number): unknown }

/** A growable byte buffer (a Uint8Array that doubles): what the writer appends code to. */
export class Bytes {
  private buf = new Uint8Array(1024)
  length = 0
  push(b: number): void {
    if (this.length === this.buf.length) this.grow(this.length + 1)
    this.buf[this.length++] = b
  }
  /** Appends every byte of xs. */
  append(xs: Uint8Array | readonly number[]): void {
    if (this.length + xs.length > this.buf.length) this.grow(this.length + xs.length)
    if (xs instanceof Uint8Array) this.buf.set(xs, this.length)
    else for (let i = 0; i < xs.length; i++) this.buf[this.length + i] = xs[i]!
    this.length += xs.length
  }
  /** Removes the bytes from `at` on and returns them. */
  splice(at: number): Uint8Array {
    const out = this.buf.slice(at, this.length)
    this.length = at
    return out
  }
  /** A copy of the bytes. */
  bytes(): Uint8Array { return this.buf.slice(0, this.length) }
  private grow(need: number): void {
    let n = this.buf.length * 2
    while (n < need) n *= 2
    const nb = new Uint8Array(n)
    nb.set(this.buf.subarray(0, this.length))
    this.buf = nb
  }
}

/** Appends the signed LEB128 encoding of a 32-bit integer. */
export function sleb32(out: Sink, v: number): void {
  v |= 0
  for (;;) {
    const b = v & 0x7f
    v >>= 7
    if ((v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0)) { out.push(b); return }
    out.push(b | 0x80)
  }
}

/** Appends the unsigned LEB128 encoding of n (0 ≤ n < 2^32). */
export function uleb(out: Sink, n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`uleb: ${n} is not a u32`)
  do {
    let b = n & 0x7f
    n = Math.floor(n / 128)
    if (n !== 0) b |= 0x80
    out.push(b)
  } while (n !== 0)
}

/** Appends the signed LEB128 encoding of v (any bigint; the caller keeps it within the type's range). */
export function sleb(out: Sink, v: bigint): void {
  if (v >= -2147483648n && v <= 2147483647n) return sleb32(out, Number(v))
  for (;;) {
    const b = Number(v & 0x7fn)
    v >>= 7n
    if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) { out.push(b); return }
    out.push(b | 0x80)
  }
}

function bytesOf(s: string): number[] {
  return [...new TextEncoder().encode(s)]
}

export function append(out: number[], xs: readonly number[]): void {
  for (let i = 0; i < xs.length; i++) out.push(xs[i]!)
}

function vec(out: number[], items: readonly number[][]): void {
  uleb(out, items.length)
  for (const it of items) append(out, it)
}

function name(out: number[], s: string): void {
  const b = bytesOf(s)
  uleb(out, b.length)
  out.push(...b)
}

/** Opcodes of one byte (Core 2.0 §5.4) used by the writer. */
export const Op = {
  unreachable: 0x00, nop: 0x01, block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b, br: 0x0c, br_if: 0x0d,
  return: 0x0f, call: 0x10, drop: 0x1a, select: 0x1b,
  local_get: 0x20, local_set: 0x21, local_tee: 0x22, global_get: 0x23, global_set: 0x24,
  i32_load: 0x28, i64_load: 0x29, f32_load: 0x2a, f64_load: 0x2b,
  i32_load8_s: 0x2c, i32_load8_u: 0x2d, i32_load16_s: 0x2e, i32_load16_u: 0x2f,
  i32_store: 0x36, i64_store: 0x37, f32_store: 0x38, f64_store: 0x39, i32_store8: 0x3a, i32_store16: 0x3b,
  i32_const: 0x41, i64_const: 0x42, f32_const: 0x43, f64_const: 0x44,
  i32_eqz: 0x45, i32_eq: 0x46, i32_ne: 0x47, i32_lt_s: 0x48, i32_lt_u: 0x49, i32_gt_s: 0x4a, i32_gt_u: 0x4b,
  i32_le_s: 0x4c, i32_le_u: 0x4d, i32_ge_s: 0x4e, i32_ge_u: 0x4f,
  i64_eqz: 0x50, i64_eq: 0x51, i64_ne: 0x52, i64_lt_s: 0x53, i64_lt_u: 0x54, i64_gt_s: 0x55, i64_gt_u: 0x56,
  i64_le_s: 0x57, i64_le_u: 0x58, i64_ge_s: 0x59, i64_ge_u: 0x5a,
  f32_eq: 0x5b, f32_ne: 0x5c, f32_lt: 0x5d, f32_gt: 0x5e, f32_le: 0x5f, f32_ge: 0x60,
  f64_eq: 0x61, f64_ne: 0x62, f64_lt: 0x63, f64_gt: 0x64, f64_le: 0x65, f64_ge: 0x66,
  i32_clz: 0x67, i32_ctz: 0x68, i32_popcnt: 0x69, i32_add: 0x6a, i32_sub: 0x6b, i32_mul: 0x6c, i32_div_s: 0x6d,
  i32_div_u: 0x6e, i32_rem_s: 0x6f, i32_rem_u: 0x70, i32_and: 0x71, i32_or: 0x72, i32_xor: 0x73, i32_shl: 0x74,
  i32_shr_s: 0x75, i32_shr_u: 0x76, i32_rotl: 0x77, i32_rotr: 0x78,
  i64_clz: 0x79, i64_ctz: 0x7a, i64_popcnt: 0x7b, i64_add: 0x7c, i64_sub: 0x7d, i64_mul: 0x7e, i64_div_s: 0x7f,
  i64_div_u: 0x80, i64_rem_s: 0x81, i64_rem_u: 0x82, i64_and: 0x83, i64_or: 0x84, i64_xor: 0x85, i64_shl: 0x86,
  i64_shr_s: 0x87, i64_shr_u: 0x88, i64_rotl: 0x89, i64_rotr: 0x8a,
  f32_abs: 0x8b, f32_neg: 0x8c, f32_ceil: 0x8d, f32_floor: 0x8e, f32_trunc: 0x8f, f32_nearest: 0x90, f32_sqrt: 0x91,
  f32_add: 0x92, f32_sub: 0x93, f32_mul: 0x94, f32_div: 0x95, f32_min: 0x96, f32_max: 0x97, f32_copysign: 0x98,
  f64_abs: 0x99, f64_neg: 0x9a, f64_ceil: 0x9b, f64_floor: 0x9c, f64_trunc: 0x9d, f64_nearest: 0x9e, f64_sqrt: 0x9f,
  f64_add: 0xa0, f64_sub: 0xa1, f64_mul: 0xa2, f64_div: 0xa3, f64_min: 0xa4, f64_max: 0xa5, f64_copysign: 0xa6,
  i32_wrap_i64: 0xa7, i64_extend_i32_s: 0xac, i64_extend_i32_u: 0xad,
  f32_convert_i32_s: 0xb2, f32_convert_i32_u: 0xb3, f32_convert_i64_s: 0xb4, f32_convert_i64_u: 0xb5, f32_demote_f64: 0xb6,
  f64_convert_i32_s: 0xb7, f64_convert_i32_u: 0xb8, f64_convert_i64_s: 0xb9, f64_convert_i64_u: 0xba, f64_promote_f32: 0xbb,
  i32_reinterpret_f32: 0xbc, i64_reinterpret_f64: 0xbd, f32_reinterpret_i32: 0xbe, f64_reinterpret_i64: 0xbf,
  i32_extend8_s: 0xc0, i32_extend16_s: 0xc1,
} as const

/** Saturating float → int conversions (0xfc prefix, Core 2.0): NaN gives 0, out-of-range values the nearest
 *  bound, as PTX's `cvt.rzi` does. */
export const SatOp = {
  i32_trunc_sat_f32_s: 0, i32_trunc_sat_f32_u: 1, i32_trunc_sat_f64_s: 2, i32_trunc_sat_f64_u: 3,
  i64_trunc_sat_f32_s: 4, i64_trunc_sat_f32_u: 5, i64_trunc_sat_f64_s: 6, i64_trunc_sat_f64_u: 7,
} as const

/** Atomic memory opcodes (0xfe prefix, threads proposal). */
export const AtomicOp = {
  i32_atomic_load: 0x10, i64_atomic_load: 0x11, i32_atomic_store: 0x17, i64_atomic_store: 0x18,
  i32_atomic_rmw_add: 0x1e, i64_atomic_rmw_add: 0x1f, i32_atomic_rmw_sub: 0x25, i64_atomic_rmw_sub: 0x26,
  i32_atomic_rmw_and: 0x2c, i64_atomic_rmw_and: 0x2d, i32_atomic_rmw_or: 0x33, i64_atomic_rmw_or: 0x34,
  i32_atomic_rmw_xor: 0x3a, i64_atomic_rmw_xor: 0x3b, i32_atomic_rmw_xchg: 0x41, i64_atomic_rmw_xchg: 0x42,
  i32_atomic_rmw_cmpxchg: 0x48, i64_atomic_rmw_cmpxchg: 0x49,
} as const

/** The 128-bit SIMD instructions the writers use (after the 0xfd prefix, as LEB128). */
export const SimdOp = {
  v128_load: 0x00, v128_load32_splat: 0x09, v128_store: 0x0b, v128_const: 0x0c, i8x16_shuffle: 0x0d, i32x4_splat: 0x11, f32x4_splat: 0x13, f64x2_splat: 0x14,
  i32x4_extract_lane: 0x1b, i32x4_replace_lane: 0x1c, f32x4_extract_lane: 0x1f, f32x4_replace_lane: 0x20, f64x2_extract_lane: 0x21,
  i32x4_eq: 0x37, i32x4_ne: 0x38, i32x4_lt_s: 0x39, i32x4_lt_u: 0x3a, i32x4_gt_s: 0x3b, i32x4_gt_u: 0x3c,
  i32x4_le_s: 0x3d, i32x4_le_u: 0x3e, i32x4_ge_s: 0x3f, i32x4_ge_u: 0x40,
  f32x4_eq: 0x41, f32x4_ne: 0x42, f32x4_lt: 0x43, f32x4_gt: 0x44, f32x4_le: 0x45, f32x4_ge: 0x46,
  f64x2_eq: 0x47, f64x2_ne: 0x48, f64x2_lt: 0x49, f64x2_gt: 0x4a, f64x2_ge: 0x4c,
  v128_not: 0x4d, v128_and: 0x4e, v128_andnot: 0x4f, v128_or: 0x50, v128_xor: 0x51, v128_bitselect: 0x52, v128_any_true: 0x53,
  v128_load32_lane: 0x56, v128_store32_lane: 0x5a, f32x4_demote_f64x2_zero: 0x5e, f64x2_promote_low_f32x4: 0x5f,
  i32x4_abs: 0xa0, i32x4_neg: 0xa1, i32x4_all_true: 0xa3, i32x4_bitmask: 0xa4, i32x4_shl: 0xab, i32x4_shr_s: 0xac, i32x4_shr_u: 0xad,
  i32x4_add: 0xae, i32x4_sub: 0xb1, i32x4_mul: 0xb5, i64x2_eq: 0xd6,
  f32x4_abs: 0xe0, f32x4_neg: 0xe1, f32x4_sqrt: 0xe3, f32x4_add: 0xe4, f32x4_sub: 0xe5, f32x4_mul: 0xe6, f32x4_div: 0xe7,
  f64x2_abs: 0xec, f64x2_sqrt: 0xef, f64x2_add: 0xf0, f64x2_sub: 0xf1, f64x2_mul: 0xf2, f64x2_div: 0xf3, f64x2_floor: 0x75,
  i64x2_shl: 0xcb, i64x2_shr_u: 0xcd, i64x2_sub: 0xd1,
  // relaxed SIMD
  f32x4_relaxed_madd: 0x105, f64x2_relaxed_madd: 0x107,
  i32x4_trunc_sat_f32x4_s: 0xf8, i32x4_trunc_sat_f32x4_u: 0xf9, f32x4_convert_i32x4_s: 0xfa, f32x4_convert_i32x4_u: 0xfb,
} as const

/** Block types: no result, or one value. */
export type BlockType = 'void' | ValType

/** An open structured instruction, for the facts of `FunctionBody.note`. */
interface Scope { id: number; kind: 'block' | 'loop' | 'if'; bypassAt: number }
/** A place in a function body to go back to. */
export interface Mark { at: number; depth: number; scopes: Scope[]; facts: Fact[] }
interface Fact { readonly key: string; readonly value: number; readonly scope: number; readonly at: number }

/** A function body under construction: locals, then instructions as bytes. */
export class FunctionBody {
  readonly code = new Bytes()
  private readonly locals: ValType[] = []
  /** Open structured instructions (block/loop/if), innermost last, for branch depths. */
  private depth = 0
  /** Each open structured instruction (an `else` arm counts as a new one), innermost last, the function's
   *  body first: where a fact noted by `note` holds (see `known`). `bypassAt`: the first place in the code
   *  from which control reaches its end without falling through its body (a branch to a block's end, an
   *  `if` without its arm). */
  private scopes: Scope[] = [{ id: 0, kind: 'block', bypassAt: Infinity }]
  private nextScope = 1
  /** Facts the code written so far establishes where it falls through (a test that branches away when it
   *  fails), each with the scope it holds in and where it was written. */
  private facts: Fact[] = []

  constructor(readonly params: readonly ValType[]) {}

  /** A new local of type t: its index. */
  local(t: ValType): number {
    this.locals.push(t)
    return this.params.length + this.locals.length - 1
  }

  op(b: number): this { this.code.push(b); return this }
  /** Opens a block/loop/if: returns its nesting level (for br depths: `depthOf`). */
  open(kind: 'block' | 'loop' | 'if', bt: BlockType = 'void'): number {
    this.code.push(Op[kind])
    this.code.push(bt === 'void' ? 0x40 : VALTYPE[bt])
    this.scopes.push({ id: this.nextScope++, kind, bypassAt: kind === 'if' ? this.code.length : Infinity })
    return ++this.depth
  }
  /** Opens a block/loop/if, chainable (when nothing branches to it by level). */
  begin(kind: 'block' | 'loop' | 'if', bt: BlockType = 'void'): this { this.open(kind, bt); return this }
  else(): this {
    this.code.push(Op.else)
    // the then-arm's facts do not hold here, and neither arm's hold after the `if`
    this.scopes[this.scopes.length - 1] = { id: this.nextScope++, kind: 'if', bypassAt: 0 }
    return this
  }
  end(): this {
    this.code.push(Op.end)
    this.depth--
    const s = this.scopes.pop()!
    // a fact of the closed scope holds after it where every way to its end passed it: no branch to the end
    // written before the fact (a loop's end is reached only by falling through its body); the others hold
    // nowhere any more (scope ids are not reused) and go. (Facts are not changed in place: a mark keeps the
    // list as it was.)
    if (this.facts.some((f) => f.scope === s.id)) {
      const parent = this.scopes[this.scopes.length - 1]!.id
      this.facts = this.facts.flatMap((f) => f.scope !== s.id ? [f] : s.kind === 'loop' || s.bypassAt > f.at ? [{ ...f, scope: parent }] : [])
    }
    return this
  }
  /** Notes that the code from here on, in the innermost open structured instruction (or arm) and whatever
   *  opens inside it, runs only where `key`'s fact holds up to `value` (the test just written branches away
   *  otherwise). Structured control flow reaches a later point of that scope only through here: a branch
   *  out of it closes it, a loop's header inside it comes after this point. */
  note(key: string, value: number): void {
    this.facts.push({ key, value, scope: this.scopes[this.scopes.length - 1]!.id, at: this.code.length })
  }
  /** The largest value noted for `key` by code that every path to here has run, or undefined. */
  known(key: string): number | undefined {
    let best: number | undefined
    for (const f of this.facts) {
      if (f.key === key && (best === undefined || f.value > best) && this.scopes.some((s) => s.id === f.scope)) best = f.value
    }
    return best
  }
  /** The br depth from here to the structured instruction opened at `level`. */
  depthOf(level: number): number {
    if (level > this.depth || level < 1) throw new Error(`internal error: branch to a closed block (level ${level}, depth ${this.depth})`)
    return this.depth - level
  }
  br(level: number): this { this.branchTo(level); this.code.push(Op.br); uleb(this.code, this.depthOf(level)); return this }
  brIf(level: number): this { this.branchTo(level); this.code.push(Op.br_if); uleb(this.code, this.depthOf(level)); return this }
  private branchTo(level: number): void {
    const s = this.scopes[level]
    if (s && s.kind !== 'loop' && s.bypassAt > this.code.length) s.bypassAt = this.code.length
  }
  get(i: number): this { this.code.push(Op.local_get); uleb(this.code, i); return this }
  set(i: number): this { this.code.push(Op.local_set); uleb(this.code, i); return this }
  tee(i: number): this { this.code.push(Op.local_tee); uleb(this.code, i); return this }
  gget(i: number): this { this.code.push(Op.global_get); uleb(this.code, i); return this }
  call(f: number): this { this.code.push(Op.call); uleb(this.code, f); return this }
  i32(v: number): this { this.code.push(Op.i32_const); sleb32(this.code, v); return this }
  i64(v: bigint): this { this.code.push(Op.i64_const); sleb(this.code, BigInt.asIntN(64, v)); return this }
  /** An f32 constant from its bits. */
  f32bits(bits: number): this {
    this.code.push(Op.f32_const)
    for (let i = 0; i < 4; i++) this.code.push((bits >>> (8 * i)) & 0xff)
    return this
  }
  /** An f64 constant from its bits. */
  f64bits(bits: bigint): this {
    this.code.push(Op.f64_const)
    for (let i = 0n; i < 8n; i++) this.code.push(Number((BigInt.asUintN(64, bits) >> (8n * i)) & 0xffn))
    return this
  }
  f64(x: number): this {
    const b = new Float64Array([x])
    return this.f64bits(new BigUint64Array(b.buffer)[0]!)
  }
  /** A load or store with its alignment (log2 bytes) and constant offset. */
  mem(op: number, alignLog2: number, offset = 0): this { this.code.push(op); uleb(this.code, alignLog2); uleb(this.code, offset); return this }
  sat(op: number): this { this.code.push(0xfc); uleb(this.code, op); return this }
  /** A SIMD instruction without immediates. */
  simd(op: number): this { this.code.push(0xfd); uleb(this.code, op); return this }
  /** v128.load / v128.store with their memory argument. */
  simdMem(op: number, alignLog2: number, offset = 0): this { this.code.push(0xfd); uleb(this.code, op); uleb(this.code, alignLog2); uleb(this.code, offset); return this }
  /** extract_lane / replace_lane with the lane. */
  simdLane(op: number, lane: number): this { this.code.push(0xfd); uleb(this.code, op); this.code.push(lane); return this }
  /** v128.const of four i32 lanes. */
  i32x4(lanes: readonly [number, number, number, number]): this {
    this.code.push(0xfd); uleb(this.code, SimdOp.v128_const)
    for (const v of lanes) for (let i = 0; i < 4; i++) this.code.push((v >>> (8 * i)) & 0xff)
    return this
  }
  /** v128.const of two i64 lanes. */
  i64x2(lanes: readonly [bigint, bigint]): this {
    this.code.push(0xfd); uleb(this.code, SimdOp.v128_const)
    for (const v of lanes) for (let i = 0n; i < 8n; i++) this.code.push(Number((BigInt.asUintN(64, v) >> (8n * i)) & 0xffn))
    return this
  }
  /** i8x16.shuffle of the two v128 on the stack: byte i of the result is byte lanes[i] of a‖b (0–31). */
  shuffle(lanes: readonly number[]): this {
    if (lanes.length !== 16 || lanes.some((l) => l < 0 || l > 31)) throw new Error('internal error: i8x16.shuffle takes 16 lane indices 0–31')
    this.code.push(0xfd); uleb(this.code, SimdOp.i8x16_shuffle)
    for (const l of lanes) this.code.push(l)
    return this
  }
  /** v128.load32_lane / v128.store32_lane: memory argument, then the lane. */
  simdMemLane(op: number, alignLog2: number, offset: number, lane: number): this {
    this.code.push(0xfd); uleb(this.code, op); uleb(this.code, alignLog2); uleb(this.code, offset); this.code.push(lane)
    return this
  }
  /** Where the body is now, to go back to (rewind) when code written after it is dropped. */
  mark(): Mark { return { at: this.code.length, depth: this.depth, scopes: this.scopes.map((x) => ({ ...x })), facts: [...this.facts] } }
  rewind(m: Mark): void {
    this.code.splice(m.at)
    this.depth = m.depth
    this.scopes = m.scopes.map((x) => ({ ...x }))
    // the tests written after the mark are gone, and so are their facts and what closing scopes did to the others
    this.facts = [...m.facts]
  }
  atomic(op: number, alignLog2: number, offset = 0): this { this.code.push(0xfe); uleb(this.code, op); uleb(this.code, alignLog2); uleb(this.code, offset); return this }

  /** The body as the code section holds it: size, locals (run-length grouped), code, `end`. */
  encode(): Uint8Array {
    if (this.depth !== 0) throw new Error(`internal error: ${this.depth} structured instruction(s) left open`)
    const body: number[] = []
    const groups: Array<[number, ValType]> = []
    for (const t of this.locals) {
      const g = groups[groups.length - 1]
      if (g && g[1] === t) g[0]++
      else groups.push([1, t])
    }
    uleb(body, groups.length)
    for (const [n, t] of groups) { uleb(body, n); body.push(VALTYPE[t]) }
    const size = body.length + this.code.length + 1
    const out = new Bytes()
    uleb(out, size)
    out.append(body)
    out.append(this.code.bytes())
    out.push(Op.end)
    return out.bytes()
  }
}

interface FuncType { params: readonly ValType[]; results: readonly ValType[] }

/** A module: imported functions, one imported memory and globals, defined functions, exports. */
export class ModuleBuilder {
  private readonly types: FuncType[] = []
  private readonly typeKeys = new Map<string, number>()
  private readonly imports: number[][] = []
  private importedFuncs = 0
  private importedGlobals = 0
  private readonly funcs: Array<{ type: number; body: FunctionBody }> = []
  private readonly exports: number[][] = []

  private typeIndex(t: FuncType): number {
    const key = `${t.params.join(',')}>${t.results.join(',')}`
    let i = this.typeKeys.get(key)
    if (i === undefined) { i = this.types.length; this.types.push(t); this.typeKeys.set(key, i) }
    return i
  }

  /** Imports a function (before any function is defined): its function index. */
  importFunc(module: string, field: string, params: readonly ValType[], results: readonly ValType[]): number {
    if (this.funcs.length) throw new Error('internal error: imports come before defined functions')
    const e: number[] = []
    name(e, module); name(e, field)
    e.push(0x00)
    uleb(e, this.typeIndex({ params, results }))
    this.imports.push(e)
    return this.importedFuncs++
  }

  /** Imports a memory of at most `maximum` pages (shared: the threads proposal's shared limits). */
  importMemory(module: string, field: string, maximum: number, shared: boolean): void {
    const e: number[] = []
    name(e, module); name(e, field)
    e.push(0x02, shared ? 0x03 : 0x01)
    uleb(e, 0)
    uleb(e, maximum)
    this.imports.push(e)
  }

  /** Imports a mutable global: its global index. */
  importGlobal(module: string, field: string, t: ValType): number {
    const e: number[] = []
    name(e, module); name(e, field)
    e.push(0x03, VALTYPE[t], 0x01)
    this.imports.push(e)
    return this.importedGlobals++
  }

  /** The index the next defined function gets. */
  functionCount(): number { return this.importedFuncs + this.funcs.length }

  /** Defines a function: its function index (after the imported ones). */
  addFunc(body: FunctionBody, results: readonly ValType[] = []): number {
    this.funcs.push({ type: this.typeIndex({ params: body.params, results }), body })
    return this.importedFuncs + this.funcs.length - 1
  }

  exportFunc(field: string, index: number): void {
    const e: number[] = []
    name(e, field)
    e.push(0x00)
    uleb(e, index)
    this.exports.push(e)
  }

  /** The module's bytes. */
  encode(): Uint8Array {
    const out: number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]
    const section = (id: number, content: number[]) => {
      out.push(id)
      uleb(out, content.length)
      for (const b of content) out.push(b)
    }
    const types: number[] = []
    vec(types, this.types.map((t) => {
      const e = [0x60]
      vec(e, t.params.map((p) => [VALTYPE[p]]))
      vec(e, t.results.map((r) => [VALTYPE[r]]))
      return e
    }))
    section(1, types)
    if (this.imports.length) { const s: number[] = []; vec(s, this.imports); section(2, s) }
    const fs: number[] = []
    vec(fs, this.funcs.map((f) => { const e: number[] = []; uleb(e, f.type); return e }))
    section(3, fs)
    if (this.exports.length) { const s: number[] = []; vec(s, this.exports); section(7, s) }
    const bodies = this.funcs.map((f) => f.body.encode())
    const code = new Bytes()
    uleb(code, bodies.length)
    for (const x of bodies) code.append(x)
    const tail = code.bytes()
    const head: number[] = []
    uleb(head, tail.length)
    const all = new Bytes()
    all.append(out)
    all.push(10)
    all.append(head)
    all.append(tail)
    return all.bytes()
  }
}
