// Kernel ABI marshalling (DESIGN.md "Kernel ABI"): arguments in PTX order are checked against the PTX
// parameter list and packed into one buffer laid out like the `.param` state space, each parameter at the
// next multiple of its alignment. The cuda backend hands `base + offsets[i]` to cuLaunchKernelEx as
// kernelParams[i]; the emulator reads the same bytes. Checks happen before anything is launched.
//
// Argument forms per PTX parameter:
//   .u64/.b64/.s64 marked pointer → a DeviceBuffer, a raw device address (bigint/number) or null (0)
//   .u8 … .u64, .s8 … .s64, .b8 … .b64 → an integer (number or bigint; u-types also take the signed range,
//                                        as nvcc declares `int` as .u32), booleans for 1-byte params
//   .f32/.f64 (and .f16/.bf16) → a number;  .b16 from __half → `t.f16.of(x)` or an integer of the bits
//   .align A .b8 name[N]      → a Uint8Array of exactly N bytes or a schema value (`Mixed.of({…})`) of
//                                size N and alignment A; 128-bit integers: `t.i128.of(x)` or a bigint
//   slice(buffer, length)      → two consecutive params (pointer, integer length)
//   a schema value of size 0   → no param (zero-sized types vanish from the PTX signature)
import type { ParamInfo } from '@kernelpack/offload'
import { layoutParams as layoutPtxParams } from '@kernelpack/ptx'
import type { KernelParams } from './backend.js'
import type { valueLayouts } from './schema.js'
import { isTypedValue, showValue, writeTypedValue, type TypedValue } from './typed-value.js'

/** A (pointer, length) pair passed as two kernel parameters (Rust slices, `std::span` by value). */
export interface Slice {
  readonly buffer: { address: bigint } | bigint
  readonly length: number | bigint
}

const sliceTag = Symbol.for('kernelpack.slice')

/** `slice(buf, n)`: the device address of `buf` and the element count `n`, as two parameters. */
export function slice(buffer: { address: bigint } | bigint, length: number | bigint): Slice {
  return Object.freeze({ buffer, length, [sliceTag]: true }) as Slice
}

function isSlice(x: unknown): x is Slice {
  return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[sliceTag] === true
}

/** A struct, union or array by value, with the C++ field names (parameters whose manifest has a `valueType`). */
export type StructValue = { readonly [field: string]: unknown } | readonly unknown[] | ArrayBufferView
export type KernelArg = { address: bigint } | number | bigint | boolean | null | Uint8Array | TypedValue | Slice | StructValue

export interface ParamLayout {
  /** Bytes of the whole `.param` block (the end of the last parameter, rounded up to 8). */
  size: number
  offsets: number[]
  sizes: number[]
}

/** Offsets of the PTX parameters in `.param` space: @kernelpack/ptx's layout, the one the manifest and the
 *  emulator use (each parameter at the next multiple of its alignment). */
export function layoutParams(params: readonly ParamInfo[]): ParamLayout {
  const l = layoutPtxParams(params)
  return { size: l.size, offsets: l.offsets, sizes: l.sizes }
}

/** What a PTX parameter expects, in words (`u32 (an integer)`, `a by-value aggregate of 32 bytes, align 8`). */
export function describeParam(p: ParamInfo): string {
  const ptx = isAggregate(p) ? `.param .align ${p.align} .b8 [${p.size}]` : `.param .${p.type}`
  if (p.pointer) return `a pointer: DeviceBuffer or device address (PTX ${ptx})`
  if (isAggregate(p) && p.valueType && p.valueType.kind !== 'scalar') {
    const what = p.valueType.kind === 'array' ? `an array of ${p.valueType.length}` : `${p.valueType.kind === 'union' ? 'a union' : 'an object'} { ${p.valueType.fields.map((f) => f.name).join(', ')} }${p.valueType.name ? ` (${p.valueType.name})` : ''}`
    return `${what}, a Uint8Array(${p.size}) or a schema value (PTX ${ptx})`
  }
  if (isAggregate(p)) return `a by-value struct/array of ${p.size} bytes aligned to ${p.align}: a Uint8Array(${p.size}) or a schema value (PTX ${ptx})`
  const t = p.type
  if (t === 'f32' || t === 'f64' || t === 'f16' || t === 'bf16') return `${t} (a number) (PTX ${ptx})`
  if (p.size === 8) return `a 64-bit integer (bigint or safe integer number) or a device pointer (PTX ${ptx})`
  return `an integer of ${p.size * 8} bits (PTX ${ptx})`
}

/** `.b8 name[N]` (struct/array by value) as opposed to a scalar `.b8`. */
const isAggregate = (p: ParamInfo) => p.type === 'b8' && (p.count !== undefined ? true : p.size !== 1)

/**
 * Typed views over one parameter block, made once per block. PTX aligns every parameter to its size (or more),
 * and blocks start 16-aligned, so element views index parameters directly (offset >> log2 size).
 */
export interface PackTarget {
  bytes: Uint8Array
  dv: DataView
  u16: Uint16Array
  u32: Uint32Array
  i32: Int32Array
  f32: Float32Array
  f64: Float64Array
  u64: BigUint64Array
}

export function createPackTarget(bytes: Uint8Array): PackTarget {
  const { buffer, byteOffset, byteLength } = bytes
  if (byteOffset % 8 !== 0) throw new RangeError('a parameter block must start 8-byte aligned')
  const words = (size: number) => Math.floor(byteLength / size)
  return {
    bytes,
    dv: new DataView(buffer, byteOffset, byteLength),
    u16: new Uint16Array(buffer, byteOffset, words(2)),
    u32: new Uint32Array(buffer, byteOffset, words(4)),
    i32: new Int32Array(buffer, byteOffset, words(4)),
    f32: new Float32Array(buffer, byteOffset, words(4)),
    f64: new Float64Array(buffer, byteOffset, words(8)),
    u64: new BigUint64Array(buffer, byteOffset, words(8)),
  }
}

type Writer = (t: PackTarget, off: number, v: unknown) => void

// BigInt bounds computed once: `2n ** 63n` in a hot path allocates on every call.
const I64_MIN = -(2n ** 63n)
const I64_MAX = 2n ** 63n - 1n
const U64_END = 2n ** 64n
const I128_MIN = -(2n ** 127n)
const U128_END = 2n ** 128n
const TWO32 = 2 ** 32

const KIND_OTHER = 0
const KIND_U64 = 1
const KIND_U32 = 2
const KIND_F32 = 3
const KIND_F64 = 4

/** Thrown by a writer that meets a slice or a zero-sized value: the arguments need expanding first. */
const EXPAND = Symbol('expand')
const needsExpanding = (v: unknown) => isSlice(v) || (isTypedValue(v) && v.type.size === 0)

export interface Packer {
  layout: ParamLayout
  /** Checks `args` (slices expanded, zero-sized values dropped) and writes them into `target`; throws a TypeError naming the kernel and parameter. */
  pack(args: readonly unknown[], target: PackTarget): void
  /**
   * The common case without an argument array: true when every argument was checked and written; false when
   * one needs expanding (a slice or a zero-sized value: call `pack` with the arguments). Throws the same
   * TypeErrors as `pack`. Absent where code generation is refused.
   */
  packFixed?: FixedPack
}

const MAX_FIXED_ARITY = 64

export interface PackerOptions {
  /** Generate a pack function specialised to the parameter list with `new Function` (falls back to a loop
   * over the parameters where code generation is refused, e.g. under a Content-Security-Policy). @default true */
  generate?: boolean
  /** schema.ts's `valueLayouts`, for parameters with the compiler's layout (`valueType`) and f16/bf16 ones:
   *  module.ts loads that file only for a manifest that has them. */
  layouts?: ValueLayouts
}

export type ValueLayouts = typeof valueLayouts

/**
 * Builds the packer for one kernel: `pack(args, target)` checks `args` against the PTX parameter list and
 * writes them at the layout's offsets into the target block (which may live in native memory).
 */
export function createPacker(
  kernel: string,
  params: readonly ParamInfo[],
  options: PackerOptions = {},
): Packer {
  const layout = layoutParams(params)
  const n = params.length
  const offsets = layout.offsets
  const errAt = (i: number, got: unknown, extra = '') => {
    if (needsExpanding(got)) return EXPAND
    const p = params[i]!
    return new TypeError(`kernel ${kernel}: parameter ${i}${p.name ? ` (${p.name})` : ''} expects ${describeParam(p)}, got ${showValue(got)}${extra}`)
  }
  const path = (i: number) => `kernel ${kernel}: parameter ${i}`
  // (module.ts loads the layouts for every manifest with such parameters: an internal error)
  const noLayouts = (i: number) => new Error(`${path(i)} needs schema.ts's valueLayouts`)
  const writers: Writer[] = params.map((p, i) => makeWriter(p, i))

  function makeWriter(p: ParamInfo, i: number): Writer {
    if (isAggregate(p)) {
      // the compiler's layout of the parameter's C++ type: a plain object (or array) with its field names
      const layouts = options.layouts
      if (p.valueType && !layouts) throw noLayouts(i)
      const schema = p.valueType ? layouts!.fromValueType(p.valueType) : undefined
      const writeValue = layouts?.writeValue
      const where = `kernel ${kernel}: parameter ${i}${p.sourceName ?? p.name ? ` (${p.sourceName ?? p.name})` : ''}`
      return (t, off, v) => {
        // (a typed array for a C array by value, `std::array`; a Uint8Array stays the exact bytes)
        if (schema && typeof v === 'object' && v !== null && !isTypedValue(v) && (!ArrayBuffer.isView(v) || (schema.kind === 'array' && !(v instanceof Uint8Array) && !(v instanceof DataView)))) {
          writeValue!(t.dv, off, schema, v, where)
          return
        }
        // `__half`, `__nv_bfloat16` by value: the compiler's type says what a plain number means
        if (schema?.kind === 'scalar' && (schema.name === 'f16' || schema.name === 'bf16') && typeof v === 'number') {
          writeValue!(t.dv, off, schema, v, where)
          return
        }
        if (v instanceof Uint8Array) {
          if (v.byteLength !== p.size) throw errAt(i, v)
          t.bytes.set(v, off)
          return
        }
        if (isTypedValue(v) && v.type.size !== 0) {
          if (v.type.size !== p.size || v.type.align !== p.align) throw errAt(i, v, ` of ${v.type.size} bytes aligned to ${v.type.align}`)
          writeTypedValue(t.dv, off, v, path(i))
          return
        }
        if (p.size === 16 && p.align === 16 && typeof v === 'bigint') {
          // __int128 / unsigned __int128 by value
          if (v < I128_MIN || v >= U128_END) throw errAt(i, v, ' (out of the 128-bit range)')
          const b = BigInt.asUintN(128, v)
          t.dv.setBigUint64(off, BigInt.asUintN(64, b), true)
          t.dv.setBigUint64(off + 8, b >> 64n, true)
          return
        }
        throw errAt(i, v)
      }
    }
    const ty = p.type
    if (ty === 'f32') return (t, off, v) => { if (typeof v !== 'number') throw errAt(i, v); t.f32[off >> 2] = v }
    if (ty === 'f64') return (t, off, v) => { if (typeof v !== 'number') throw errAt(i, v); t.f64[off >> 3] = v }
    if (ty === 'f16' || ty === 'bf16') {
      const layouts = options.layouts
      if (!layouts) throw noLayouts(i)
      const conv = ty === 'f16' ? layouts.toHalfBits : layouts.toBfloat16Bits
      return (t, off, v) => {
        if (typeof v === 'number') return void (t.u16[off >> 1] = conv(v))
        if (isTypedValue(v) && v.type.size === 2) return writeTypedValue(t.dv, off, v, path(i))
        throw errAt(i, v)
      }
    }
    const signed = ty[0] === 's'
    const size = p.size
    if (size === 8) {
      return (t, off, v) => {
        if (typeof v === 'object' && v !== null) {
          const address = (v as { address?: unknown }).address
          if (typeof address === 'bigint') return void (t.u64[off >> 3] = address)
          if (isTypedValue(v) && v.type.size === 8) return writeTypedValue(t.dv, off, v, path(i))
          throw errAt(i, v)
        }
        if (typeof v === 'bigint') {
          if (v < I64_MIN || v >= U64_END || (signed && v > I64_MAX)) throw errAt(i, v, ' (out of range)')
          t.u64[off >> 3] = v // a BigUint64Array store wraps negatives modulo 2^64 itself
        } else if (typeof v === 'number') {
          if (!Number.isSafeInteger(v)) throw errAt(i, v, ' (not a safe integer: pass a bigint)')
          if (v >= 0) {
            // two 32-bit halves: no BigInt allocated for the common case
            t.u32[off >> 2] = v % TWO32
            t.u32[(off >> 2) + 1] = Math.floor(v / TWO32)
          } else t.u64[off >> 3] = BigInt.asUintN(64, BigInt(v))
        } else if (v === null) {
          t.u64[off >> 3] = 0n
        } else throw errAt(i, v)
      }
    }
    if (size === 1 || size === 2 || size === 4) {
      const lo = -(2 ** (size * 8 - 1))
      const max = signed ? 2 ** (size * 8 - 1) - 1 : 2 ** (size * 8) - 1
      const mod = 2 ** (size * 8)
      return (t, off, raw) => {
        let v = raw
        if (typeof v !== 'number') {
          if (typeof v === 'boolean' && size === 1) v = v ? 1 : 0
          else if (typeof v === 'bigint' && v >= BigInt(lo) && v <= BigInt(max)) v = Number(v)
          else if (isTypedValue(v) && v.type.size === size) return writeTypedValue(t.dv, off, v, path(i))
        }
        if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > max) throw errAt(i, raw, typeof v === 'number' && Number.isInteger(v) ? ` (out of range [${lo}, ${max}])` : '')
        const u = v < 0 ? v + mod : v
        if (size === 4) t.u32[off >> 2] = u
        else if (size === 2) t.u16[off >> 1] = u
        else t.bytes[off] = u
      }
    }
    return (t, off, v) => {
      if (v instanceof Uint8Array && v.byteLength === size) return void t.bytes.set(v, off)
      throw errAt(i, v)
    }
  }

  // Inline cases for the common parameter shapes keep the launch path free of megamorphic calls; anything
  // else (and every error) goes through the parameter's writer, which checks the value in full.
  const kinds = Uint8Array.from(params, (p) =>
    isAggregate(p) ? KIND_OTHER : p.type === 'f32' ? KIND_F32 : p.type === 'f64' ? KIND_F64
      : p.size === 8 && p.type[0] !== 's' && p.type[0] !== 'f' ? KIND_U64 : p.size === 4 && p.type[0] === 'u' ? KIND_U32 : KIND_OTHER)
  const offs = Int32Array.from(offsets)
  const generate = options.generate ?? true
  const fast = (generate ? (generateFastPack(kinds, offs, writers, false) as FastPack | undefined) : undefined) ?? loopFastPack(kinds, offs, writers)
  // Kernels with very long parameter lists keep the array form (a function of hundreds of parameters gains nothing).
  const packFixed = generate && n <= MAX_FIXED_ARITY ? (generateFastPack(kinds, offs, writers, true) as FixedPack | undefined) : undefined

  function pack(args: readonly unknown[], target: PackTarget): void {
    // Fast path: argument i is parameter i unless a slice or a zero-sized value turns up (EXPAND).
    if (args.length === n && fast(args, target)) return
    const flat: unknown[] = []
    const slicePointers: number[] = [] // parameter indices that receive a slice's pointer
    for (const a of args) {
      if (isSlice(a)) {
        slicePointers.push(flat.length)
        flat.push(a.buffer, a.length)
      } else if (isTypedValue(a) && a.type.size === 0) continue
      else flat.push(a)
    }
    if (flat.length !== n) {
      throw new TypeError(
        `kernel ${kernel}: expects ${n} argument${n === 1 ? '' : 's'} (PTX parameters: ${params.map((p) => describeParamShort(p)).join(', ') || 'none'}), got ${args.length}` +
          (flat.length !== args.length ? ` (${flat.length} after expanding slices and dropping zero-sized values)` : ''),
      )
    }
    for (const i of slicePointers) {
      const p = params[i]!
      if (p.size !== 8 || isAggregate(p)) {
        throw new TypeError(`kernel ${kernel}: parameter ${i}${p.name ? ` (${p.name})` : ''} expects ${describeParam(p)}, got the pointer of a slice (a slice pointer needs a 64-bit parameter)`)
      }
    }
    for (let i = 0; i < n; i++) {
      const w = writers[i]!
      try {
        w(target, offsets[i]!, flat[i])
      } catch (err) {
        throw err === EXPAND ? new TypeError(`kernel ${kernel}: parameter ${i} expects ${describeParam(params[i]!)}, got a nested slice or zero-sized value`) : err
      }
    }
  }
  return { layout, pack, packFixed }
}

/** Packs every argument in place; false when one needs expanding (a slice or a zero-sized value). */
type FastPack = (args: readonly unknown[], target: PackTarget) => boolean

/** The inline cases as a loop over the parameter kinds: the fallback where code generation is refused. */
function loopFastPack(kinds: Uint8Array, offs: Int32Array, writers: readonly Writer[]): FastPack {
  const n = kinds.length
  return (args, target) => {
    try {
      for (let i = 0; i < n; i++) {
        const v = args[i]
        const off = offs[i]!
        switch (kinds[i]) {
          case KIND_U64:
            if (typeof v === 'object' && v !== null) {
              const address = (v as { address?: unknown }).address
              if (typeof address === 'bigint') { target.u64[off >> 3] = address; continue }
            } else if (typeof v === 'bigint' && BigInt.asUintN(64, v) === v) { target.u64[off >> 3] = v; continue }
            break
          case KIND_U32:
            // a Uint32Array store wraps the signed range as C does (int → .u32)
            if (typeof v === 'number' && v >= -2147483648 && v <= 4294967295 && Math.floor(v) === v) { target.u32[off >> 2] = v; continue }
            break
          case KIND_F32:
            if (typeof v === 'number') { target.f32[off >> 2] = v; continue }
            break
          case KIND_F64:
            if (typeof v === 'number') { target.f64[off >> 3] = v; continue }
            break
        }
        writers[i]!(target, off, v)
      }
      return true
    } catch (err) {
      if (err !== EXPAND) throw err
      return false
    }
  }
}

/** `packFixed(target, a0, …, aN-1)`: the fast pack with the arguments as parameters (no array). */
export type FixedPack = (target: PackTarget, ...args: unknown[]) => boolean

/**
 * The same inline cases unrolled into one function per kernel: constant element indices, one type check per
 * argument, no dispatch on the kind and no call unless an argument takes the writer's path (which checks it
 * in full and throws the TypeError). The source holds only kinds and numeric offsets, never a name from the
 * manifest. `fixed` takes the arguments as parameters `(t, a0, …)`, otherwise as an array `(a, t)`.
 * Undefined where `new Function` is refused (CSP without 'unsafe-eval').
 */
function generateFastPack(kinds: Uint8Array, offs: Int32Array, writers: readonly Writer[], fixed: boolean): ((...a: never[]) => boolean) | undefined {
  const lines: string[] = []
  const names: string[] = []
  for (let i = 0; i < kinds.length; i++) {
    const off = offs[i]!
    const slow = `w[${i}](t, ${off}, v)`
    names.push(`a${i}`)
    lines.push(fixed ? `v = a${i}` : `v = a[${i}]`)
    switch (kinds[i]) {
      case KIND_U64:
        // a DeviceBuffer's address needs no range check (a bigint store into BigUint64Array takes it whole);
        // a raw bigint inside [0, 2^64) is one asUintN comparison, anything else the writer's full check
        lines.push(
          `if (typeof v === 'object' && v !== null) { x = v.address; if (typeof x === 'bigint') u64[${off >> 3}] = x; else ${slow} }`,
          `else if (typeof v === 'bigint' && asUintN(64, v) === v) u64[${off >> 3}] = v`,
          `else ${slow}`,
        )
        break
      case KIND_U32:
        lines.push(`if (typeof v === 'number' && v >= -2147483648 && v <= 4294967295 && floor(v) === v) u32[${off >> 2}] = v; else ${slow}`)
        break
      case KIND_F32:
        lines.push(`if (typeof v === 'number') f32[${off >> 2}] = v; else ${slow}`)
        break
      case KIND_F64:
        lines.push(`if (typeof v === 'number') f64[${off >> 3}] = v; else ${slow}`)
        break
      default:
        lines.push(slow)
    }
  }
  const body = `'use strict'
return function ${fixed ? 'packFixed' : 'packFast'}(${fixed ? ['t', ...names].join(', ') : 'a, t'}) {
  const u64 = t.u64, u32 = t.u32, f32 = t.f32, f64 = t.f64
  let v, x
  try {
    ${lines.join('\n    ')}
    return true
  } catch (err) {
    if (err !== EXPAND) throw err
    return false
  }
}`
  try {
    return new Function('w', 'EXPAND', 'asUintN', 'floor', body)(writers, EXPAND, BigInt.asUintN, Math.floor)
  } catch {
    return undefined
  }
}

function describeParamShort(p: ParamInfo): string {
  return isAggregate(p) ? `.align ${p.align} .b8[${p.size}]` : `.${p.type}${p.pointer ? ' (pointer)' : ''}`
}

/** Packs `args` for `params` into a fresh buffer: the KernelParams a Backend.launch receives. */
export function packParams(kernel: string, params: readonly ParamInfo[], args: readonly unknown[], layouts?: ValueLayouts): KernelParams {
  const { layout, pack } = createPacker(kernel, params, { layouts })
  const bytes = new Uint8Array(layout.size)
  pack(args, createPackTarget(bytes))
  return { bytes, offsets: layout.offsets, sizes: layout.sizes }
}
