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
import type { KernelParams } from './backend.js'
import { isTypedValue, showValue, toBfloat16Bits, toHalfBits, writeValue, type TypedValue } from './schema.js'

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

export type KernelArg = { address: bigint } | number | bigint | boolean | null | Uint8Array | TypedValue | Slice

export interface ParamLayout {
  /** Bytes of the whole `.param` block (the end of the last parameter, rounded up to 8). */
  size: number
  offsets: number[]
  sizes: number[]
}

/** Offsets of the PTX parameters in `.param` space: each at the next multiple of its alignment. */
export function layoutParams(params: readonly ParamInfo[]): ParamLayout {
  let off = 0
  const offsets: number[] = []
  const sizes: number[] = []
  for (const p of params) {
    const align = Math.max(1, p.align || p.size || 1)
    off = Math.ceil(off / align) * align
    offsets.push(off)
    sizes.push(p.size)
    off += p.size
  }
  return { size: Math.max(8, Math.ceil(off / 8) * 8), offsets, sizes }
}

/** What a PTX parameter expects, in words (`u32 (an integer)`, `a by-value aggregate of 32 bytes, align 8`). */
export function describeParam(p: ParamInfo): string {
  const ptx = isAggregate(p) ? `.param .align ${p.align} .b8 [${p.size}]` : `.param .${p.type}`
  if (p.pointer) return `a pointer: DeviceBuffer or device address (PTX ${ptx})`
  if (isAggregate(p)) return `a by-value struct/array of ${p.size} bytes aligned to ${p.align}: a Uint8Array(${p.size}) or a schema value (PTX ${ptx})`
  const t = p.type
  if (t === 'f32' || t === 'f64' || t === 'f16' || t === 'bf16') return `${t} (a number) (PTX ${ptx})`
  if (p.size === 8) return `a 64-bit integer (bigint or safe integer number) or a device pointer (PTX ${ptx})`
  return `an integer of ${p.size * 8} bits (PTX ${ptx})`
}

/** `.b8 name[N]` (struct/array by value) as opposed to a scalar `.b8`. */
const isAggregate = (p: ParamInfo) => p.type === 'b8' && (p.count !== undefined ? true : p.size !== 1)

type Writer = (dv: DataView, off: number, v: unknown) => void

const intBounds = (bits: number, signedOk: boolean): [number, number] =>
  [signedOk ? -(2 ** (bits - 1)) : 0, 2 ** bits - 1]

/**
 * Builds the packer for one kernel: `pack(args, bytes)` checks `args` against the PTX parameter list and
 * writes them at the layout's offsets into `bytes` (a view that may live in native memory).
 */
export function createPacker(kernel: string, params: readonly ParamInfo[]): { layout: ParamLayout; pack(args: readonly unknown[], bytes: Uint8Array, dv?: DataView): void } {
  const layout = layoutParams(params)
  const n = params.length
  const errAt = (i: number, got: unknown, extra = '') => {
    const p = params[i]!
    return new TypeError(`kernel ${kernel}: parameter ${i}${p.name ? ` (${p.name})` : ''} expects ${describeParam(p)}, got ${showValue(got)}${extra}`)
  }
  const writers: Writer[] = params.map((p, i) => makeWriter(p, i))

  function makeWriter(p: ParamInfo, i: number): Writer {
    if (isAggregate(p)) {
      return (dv, off, v) => {
        if (v instanceof Uint8Array) {
          if (v.byteLength !== p.size) throw errAt(i, v)
          new Uint8Array(dv.buffer, dv.byteOffset + off, p.size).set(v)
          return
        }
        if (isTypedValue(v)) {
          if (v.type.size !== p.size || v.type.align !== p.align) throw errAt(i, v, ` of ${v.type.size} bytes aligned to ${v.type.align}`)
          writeValue(dv, off, v.type, v.value, `kernel ${kernel}: parameter ${i}`)
          return
        }
        if (p.size === 16 && p.align === 16 && typeof v === 'bigint') {
          // __int128 / unsigned __int128 by value
          const b = BigInt.asUintN(128, v)
          if (v < -(2n ** 127n) || v >= 2n ** 128n) throw errAt(i, v, ' (out of the 128-bit range)')
          dv.setBigUint64(off, BigInt.asUintN(64, b), true)
          dv.setBigUint64(off + 8, b >> 64n, true)
          return
        }
        throw errAt(i, v)
      }
    }
    const t = p.type
    if (t === 'f32') return (dv, off, v) => { if (typeof v !== 'number') throw errAt(i, v); dv.setFloat32(off, v, true) }
    if (t === 'f64') return (dv, off, v) => { if (typeof v !== 'number') throw errAt(i, v); dv.setFloat64(off, v, true) }
    if (t === 'f16' || t === 'bf16') {
      const conv = t === 'f16' ? toHalfBits : toBfloat16Bits
      return (dv, off, v) => {
        if (typeof v === 'number') return dv.setUint16(off, conv(v), true)
        if (isTypedValue(v) && v.type.size === 2) return writeValue(dv, off, v.type, v.value, `kernel ${kernel}: parameter ${i}`)
        throw errAt(i, v)
      }
    }
    const signed = t[0] === 's'
    const size = p.size
    if (size === 8) {
      return (dv, off, v) => {
        if (typeof v === 'bigint') {
          if (v < -(2n ** 63n) || v >= 2n ** 64n || (signed && v >= 2n ** 63n)) throw errAt(i, v, ' (out of range)')
          dv.setBigUint64(off, BigInt.asUintN(64, v), true)
        } else if (typeof v === 'object' && v !== null && typeof (v as { address?: unknown }).address === 'bigint') {
          dv.setBigUint64(off, (v as { address: bigint }).address, true)
        } else if (typeof v === 'number') {
          if (!Number.isSafeInteger(v)) throw errAt(i, v, ' (not a safe integer: pass a bigint)')
          dv.setBigInt64(off, BigInt(v), true)
        } else if (v === null) {
          dv.setBigUint64(off, 0n, true)
        } else if (isTypedValue(v) && v.type.size === 8) {
          writeValue(dv, off, v.type, v.value, `kernel ${kernel}: parameter ${i}`)
        } else throw errAt(i, v)
      }
    }
    if (size === 1 || size === 2 || size === 4) {
      const [lo, hi] = intBounds(size * 8, true)
      const hiSigned = 2 ** (size * 8 - 1) - 1
      const max = signed ? hiSigned : hi
      const set = size === 1 ? 'setUint8' : size === 2 ? 'setUint16' : 'setUint32'
      const mod = 2 ** (size * 8)
      return (dv, off, raw) => {
        let v = raw
        if (typeof v === 'boolean' && size === 1) v = v ? 1 : 0
        else if (typeof v === 'bigint' && v >= BigInt(lo) && v <= BigInt(max)) v = Number(v)
        else if (isTypedValue(v) && v.type.size === size) return writeValue(dv, off, v.type, v.value, `kernel ${kernel}: parameter ${i}`)
        if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > max) throw errAt(i, raw, typeof v === 'number' && Number.isInteger(v) ? ` (out of range [${lo}, ${max}])` : '')
        const u = v < 0 ? v + mod : v
        if (set === 'setUint8') dv.setUint8(off, u)
        else dv[set](off, u, true)
      }
    }
    return (dv, off, v) => {
      if (v instanceof Uint8Array && v.byteLength === size) return void new Uint8Array(dv.buffer, dv.byteOffset + off, size).set(v)
      throw errAt(i, v)
    }
  }

  // Fast path: no slices and no zero-sized values, so argument i is parameter i.
  function pack(args: readonly unknown[], bytes: Uint8Array, dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)): void {
    let simple = args.length === n
    if (simple) {
      for (let i = 0; i < n; i++) {
        const a = args[i]
        if (typeof a === 'object' && a !== null && (isSlice(a) || (isTypedValue(a) && a.type.size === 0))) { simple = false; break }
      }
    }
    if (simple) {
      for (let i = 0; i < n; i++) writers[i]!(dv, layout.offsets[i]!, args[i])
      return
    }
    const flat: unknown[] = []
    for (const a of args) {
      if (isSlice(a)) flat.push(a.buffer, a.length)
      else if (isTypedValue(a) && a.type.size === 0) continue
      else flat.push(a)
    }
    if (flat.length !== n) {
      throw new TypeError(
        `kernel ${kernel}: expects ${n} argument${n === 1 ? '' : 's'} (PTX parameters: ${params.map((p) => describeParamShort(p)).join(', ') || 'none'}), got ${args.length}` +
          (flat.length !== args.length ? ` (${flat.length} after expanding slices and dropping zero-sized values)` : ''),
      )
    }
    for (let i = 0; i < n; i++) {
      if (isSlice(args[i]) && params[i] && params[i]!.size !== 8) throw errAt(i, args[i], ' (a slice pointer needs a 64-bit parameter)')
      writers[i]!(dv, layout.offsets[i]!, flat[i])
    }
  }
  return { layout, pack }
}

function describeParamShort(p: ParamInfo): string {
  return isAggregate(p) ? `.align ${p.align} .b8[${p.size}]` : `.${p.type}${p.pointer ? ' (pointer)' : ''}`
}

/** Packs `args` for `params` into a fresh buffer: the KernelParams a Backend.launch receives. */
export function packParams(kernel: string, params: readonly ParamInfo[], args: readonly unknown[]): KernelParams {
  const { layout, pack } = createPacker(kernel, params)
  const bytes = new Uint8Array(layout.size)
  pack(args, bytes)
  return { bytes, offsets: layout.offsets, sizes: layout.sizes }
}
