import type { KernelManifest, ValueType } from '@kernelpack/offload'
import { isTypedValue, showValue, typedValueTag, type TypedValue } from './typed-value.js'

export { isTypedValue, showValue, type TypedValue } from './typed-value.js'

// Data schemas for by-value kernel arguments, in the spirit of TypeGPU's `d.struct`: scalars, fixed arrays,
// structs and unions, laid out the way the C compiler lays them out for the host ABI that nvcc mirrors on
// the device (x86-64 System V / AArch64 AAPCS64 agree for these types): every field at the next multiple of
// its alignment, the aggregate aligned to its largest member (or a declared `__align__(N)`), the size rounded
// up to the alignment. nvcc declares such an argument as `.param .align A .b8 name[size]`.

/** Scalar type names; `i*` are signed, `u*` unsigned, `ptr` a 64-bit device address. */
export type ScalarName =
  | 'bool' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64'
  | 'f16' | 'bf16' | 'f32' | 'f64' | 'i128' | 'u128' | 'ptr'

interface TypeBase {
  readonly size: number
  readonly align: number
  /** A value of this type, for `launch` (`Mixed.of({ tag: 1, … })`, `t.f16.of(1.5)`). */
  of(value: unknown): TypedValue
}

export interface ScalarType extends TypeBase {
  readonly kind: 'scalar'
  readonly name: ScalarName
}

export interface ArrayType extends TypeBase {
  readonly kind: 'array'
  readonly elem: DataType
  readonly length: number
}

export interface FieldLayout {
  readonly name: string
  readonly type: DataType
  readonly offset: number
}

export interface StructType extends TypeBase {
  readonly kind: 'struct' | 'union'
  readonly fields: readonly FieldLayout[]
}

export type DataType = ScalarType | ArrayType | StructType

function makeOf(this: DataType, value: unknown): TypedValue {
  // the tag holds writeValue: marshalling writes a typed value without importing this module (typed-value.ts)
  return { type: this, value, [typedValueTag]: writeValue } as TypedValue
}

function scalar(name: ScalarName, size: number): ScalarType {
  return Object.freeze({ kind: 'scalar' as const, name, size, align: size, of: makeOf })
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a

function checkAlign(align: number | undefined, where: string): void {
  if (align === undefined) return
  if (!Number.isInteger(align) || align < 1 || (align & (align - 1)) !== 0) {
    throw new TypeError(`${where}: align must be a power of two, got ${align}`)
  }
}

/** A fixed-length array `elem[length]` (C array; by value inside a struct). */
export function array(elem: DataType, length: number): ArrayType {
  if (!Number.isInteger(length) || length < 0) throw new TypeError(`array length must be a non-negative integer, got ${length}`)
  return Object.freeze({ kind: 'array' as const, elem, length, size: elem.size * length, align: elem.align, of: makeOf })
}

/**
 * A C struct. Fields keep their declaration order; `options.align` is `__align__(N)` / `alignas(N)`
 * (it can only raise the alignment, as in C).
 */
export function struct(fields: Record<string, DataType>, options: { align?: number } = {}): StructType {
  checkAlign(options.align, 'struct')
  let offset = 0
  let align = 1
  const out: FieldLayout[] = []
  for (const [name, type] of Object.entries(fields)) {
    offset = alignUp(offset, type.align)
    out.push(Object.freeze({ name, type, offset }))
    offset += type.size
    align = Math.max(align, type.align)
  }
  align = Math.max(align, options.align ?? 1)
  // An empty struct is a zero-sized type here (as in Rust or C with GNU extensions); kernels drop it.
  const size = alignUp(offset, align)
  return Object.freeze({ kind: 'struct' as const, fields: Object.freeze(out), size, align, of: makeOf })
}

/** A C union: every field at offset 0, size = the largest field rounded up to the alignment. */
export function union(fields: Record<string, DataType>, options: { align?: number } = {}): StructType {
  checkAlign(options.align, 'union')
  let size = 0
  let align = 1
  const out: FieldLayout[] = []
  for (const [name, type] of Object.entries(fields)) {
    out.push(Object.freeze({ name, type, offset: 0 }))
    size = Math.max(size, type.size)
    align = Math.max(align, type.align)
  }
  align = Math.max(align, options.align ?? 1)
  return Object.freeze({ kind: 'union' as const, fields: Object.freeze(out), size: alignUp(size, align), align, of: makeOf })
}

/** Schema constructors and scalar types (`t.struct({ tag: t.u16, id: t.u64 })`). */
export const t = Object.freeze({
  bool: scalar('bool', 1),
  i8: scalar('i8', 1),
  u8: scalar('u8', 1),
  i16: scalar('i16', 2),
  u16: scalar('u16', 2),
  i32: scalar('i32', 4),
  u32: scalar('u32', 4),
  i64: scalar('i64', 8),
  u64: scalar('u64', 8),
  f16: scalar('f16', 2),
  bf16: scalar('bf16', 2),
  f32: scalar('f32', 4),
  f64: scalar('f64', 8),
  i128: scalar('i128', 16),
  u128: scalar('u128', 16),
  ptr: scalar('ptr', 8),
  array,
  struct,
  union,
})

export function sizeof(type: DataType): number {
  return type.size
}

export function alignof(type: DataType): number {
  return type.align
}

/** Byte offset of a field (`offsetof(Mixed, 'weight')`); a dotted path reaches nested structs (`'m.id'`). */
export function offsetof(type: DataType, path: string): number {
  let offset = 0
  let cur: DataType = type
  for (const part of path.split('.')) {
    if (cur.kind !== 'struct' && cur.kind !== 'union') throw new TypeError(`offsetof: ${JSON.stringify(part)} is not inside a struct`)
    const f: FieldLayout | undefined = cur.fields.find((x) => x.name === part)
    if (!f) throw new TypeError(`offsetof: no field ${JSON.stringify(part)} (fields: ${cur.fields.map((x) => x.name).join(', ')})`)
    offset += f.offset
    cur = f.type
  }
  return offset
}

/** The layout of a type: size, alignment and every field offset (flattened, dotted names). */
export function layout(type: DataType): { size: number; align: number; fields: { name: string; offset: number; size: number }[] } {
  const fields: { name: string; offset: number; size: number }[] = []
  const walk = (ty: DataType, prefix: string, base: number) => {
    if (ty.kind !== 'struct' && ty.kind !== 'union') return
    for (const f of ty.fields) {
      const name = prefix ? `${prefix}.${f.name}` : f.name
      fields.push({ name, offset: base + f.offset, size: f.type.size })
      walk(f.type, name, base + f.offset)
    }
  }
  walk(type, '', 0)
  return { size: type.size, align: type.align, fields }
}

export function describeType(type: DataType): string {
  switch (type.kind) {
    case 'scalar': return type.name
    case 'array': return `${describeType(type.elem)}[${type.length}]`
    default: return `${type.kind} { ${type.fields.map((f) => `${f.name}: ${describeType(f.type)}`).join('; ')} } (${type.size} bytes, align ${type.align})`
  }
}

// --- encoding

const f32buf = new Float32Array(1)
const u32buf = new Uint32Array(f32buf.buffer)

/** IEEE binary16 bits of a number, round to nearest even (as `__float2half_rn`). */
export function toHalfBits(x: number): number {
  // Round in two steps through float32 would double-round; work from the float64 directly.
  if (Number.isNaN(x)) return 0x7e00
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0
  const a = Math.abs(x)
  if (a === Infinity) return sign | 0x7c00
  if (a >= 65520) return sign | 0x7c00 // rounds to infinity
  if (a < 2 ** -24 * 0.5) return sign // underflow to zero (exactly half rounds to even = 0)
  let e = Math.floor(Math.log2(a))
  if (2 ** e > a) e-- // guard log2 rounding
  else if (2 ** (e + 1) <= a) e++
  if (e < -14) {
    // subnormal: units of 2^-24
    const m = roundEven(a / 2 ** -24)
    return sign | m // m may reach 0x400 = smallest normal, which is the right encoding
  }
  let m = roundEven((a / 2 ** e - 1) * 1024)
  if (m === 1024) { m = 0; e++ }
  if (e > 15) return sign | 0x7c00
  return sign | ((e + 15) << 10) | m
}

function roundEven(v: number): number {
  const f = Math.floor(v)
  const d = v - f
  if (d > 0.5) return f + 1
  if (d < 0.5) return f
  return f % 2 === 0 ? f : f + 1
}

/** bfloat16 bits of a number: float32 bits rounded to nearest even in the upper half (as `__float2bfloat16_rn`). */
export function toBfloat16Bits(x: number): number {
  f32buf[0] = x
  const bits = u32buf[0]!
  if (Number.isNaN(x)) return ((bits >>> 16) | 0x40) & 0xffff
  const lsb = (bits >>> 16) & 1
  return ((bits + 0x7fff + lsb) >>> 16) & 0xffff
}

/** The bytes of a value of `type`, little-endian, padding zeroed. */
export function encode(type: DataType, value: unknown): Uint8Array {
  const out = new Uint8Array(type.size)
  writeValue(new DataView(out.buffer), 0, type, value, 'value')
  return out
}

const intRange: Record<string, [bigint, bigint]> = {
  bool: [0n, 1n], i8: [-(2n ** 7n), 2n ** 7n - 1n], u8: [0n, 2n ** 8n - 1n],
  i16: [-(2n ** 15n), 2n ** 15n - 1n], u16: [0n, 2n ** 16n - 1n],
  i32: [-(2n ** 31n), 2n ** 31n - 1n], u32: [0n, 2n ** 32n - 1n],
  i64: [-(2n ** 63n), 2n ** 63n - 1n], u64: [0n, 2n ** 64n - 1n], ptr: [0n, 2n ** 64n - 1n],
  i128: [-(2n ** 127n), 2n ** 127n - 1n], u128: [0n, 2n ** 128n - 1n],
}

function fail(path: string, expected: string, got: unknown): never {
  throw new TypeError(`${path}: expected ${expected}, got ${showValue(got)}`)
}


function toInteger(name: string, v: unknown, path: string): bigint {
  let b: bigint
  if (typeof v === 'bigint') b = v
  else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v)
  else if (typeof v === 'boolean' && (name === 'bool' || name === 'u8' || name === 'i8')) b = v ? 1n : 0n
  else if (typeof v === 'object' && v !== null && typeof (v as { address?: unknown }).address === 'bigint' && name === 'ptr') b = (v as { address: bigint }).address
  else return fail(path, `${name} (an integer as a safe number or bigint)`, v)
  const [lo, hi] = intRange[name]!
  if (b < lo || b > hi) fail(path, `${name} in [${lo}, ${hi}]`, v)
  return b
}

/** Writes `value` as `type` at `offset`; `path` names the place for errors (`Mixed.code[2]`). */
export function writeValue(dv: DataView, offset: number, type: DataType, value: unknown, path: string): void {
  if (isTypedValue(value)) {
    if (value.type !== type && (value.type.size !== type.size || value.type.align !== type.align)) {
      fail(path, describeType(type), `a value of ${describeType(value.type)}`)
    }
    return writeValue(dv, offset, value.type, value.value, path)
  }
  // exact bytes for an aggregate or a 128-bit integer
  if (value instanceof Uint8Array && (type.kind !== 'scalar' || type.size === 16)) {
    if (value.byteLength !== type.size) fail(path, `${type.size} bytes for ${describeType(type)}`, value)
    new Uint8Array(dv.buffer, dv.byteOffset + offset, type.size).set(value)
    return
  }
  switch (type.kind) {
    case 'scalar': return writeScalar(dv, offset, type.name, value, path)
    case 'array': {
      const len = type.length
      if (!(Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView)))) fail(path, `an array of ${len} ${describeType(type.elem)}`, value)
      const arr = value as ArrayLike<unknown>
      if (arr.length !== len) fail(path, `an array of ${len} ${describeType(type.elem)}`, value)
      for (let i = 0; i < len; i++) writeValue(dv, offset + i * type.elem.size, type.elem, arr[i], `${path}[${i}]`)
      return
    }
    case 'struct':
    case 'union': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, describeType(type), value)
      const obj = value as Record<string, unknown>
      // zero the whole aggregate first so padding bytes are deterministic
      new Uint8Array(dv.buffer, dv.byteOffset + offset, type.size).fill(0)
      if (type.kind === 'union') {
        const present = type.fields.filter((f) => obj[f.name] !== undefined)
        if (present.length !== 1) fail(path, `exactly one of ${type.fields.map((f) => f.name).join(', ')} (a union)`, value)
        const f = present[0]!
        return writeValue(dv, offset, f.type, obj[f.name], `${path}.${f.name}`)
      }
      for (const k of Object.keys(obj)) {
        if (!type.fields.some((f) => f.name === k)) throw new TypeError(`${path}.${k}: no such field (the fields are ${type.fields.map((f) => f.name).join(', ')}), got ${showValue(obj[k])}`)
      }
      for (const f of type.fields) {
        if (obj[f.name] === undefined) throw new TypeError(`${path}.${f.name}: missing field (${describeType(f.type)})`)
        writeValue(dv, offset + f.offset, f.type, obj[f.name], `${path}.${f.name}`)
      }
    }
  }
}

function writeScalar(dv: DataView, offset: number, name: ScalarName, value: unknown, path: string): void {
  switch (name) {
    case 'f32':
      if (typeof value !== 'number') fail(path, 'f32 (a number)', value)
      return dv.setFloat32(offset, value, true)
    case 'f64':
      if (typeof value !== 'number') fail(path, 'f64 (a number)', value)
      return dv.setFloat64(offset, value, true)
    case 'f16':
      if (typeof value !== 'number') fail(path, 'f16 (a number)', value)
      return dv.setUint16(offset, toHalfBits(value), true)
    case 'bf16':
      if (typeof value !== 'number') fail(path, 'bf16 (a number)', value)
      return dv.setUint16(offset, toBfloat16Bits(value), true)
    case 'bool':
    case 'i8':
    case 'u8': return dv.setUint8(offset, Number(BigInt.asUintN(8, toInteger(name, value, path))))
    case 'i16':
    case 'u16': return dv.setUint16(offset, Number(BigInt.asUintN(16, toInteger(name, value, path))), true)
    case 'i32':
    case 'u32': return dv.setUint32(offset, Number(BigInt.asUintN(32, toInteger(name, value, path))), true)
    case 'i64':
    case 'u64':
    case 'ptr': return dv.setBigUint64(offset, BigInt.asUintN(64, toInteger(name, value, path)), true)
    case 'i128':
    case 'u128': {
      const b = BigInt.asUintN(128, toInteger(name, value, path))
      dv.setBigUint64(offset, BigInt.asUintN(64, b), true)
      dv.setBigUint64(offset + 8, b >> 64n, true)
    }
  }
}

// --- layouts the compiler gave (the manifest's `valueType`, @kernelpack/toolchain's param-types.ts)

/** A schema from the manifest's compiler-read layout: fields at the compiler's offsets (not recomputed). */
export function fromValueType(v: ValueType): DataType {
  switch (v.kind) {
    case 'scalar': return t[v.name]
    case 'array': return array(fromValueType(v.elem), v.length)
    default: {
      const fields = Object.freeze(v.fields.map((f) => Object.freeze({ name: f.name, type: fromValueType(f.type), offset: f.offset })))
      return Object.freeze({ kind: v.kind, fields, size: v.size, align: v.align, of: makeOf })
    }
  }
}

/**
 * A C++ type of a `.cu` file as host code uses it: `module.types.Params.encode({ scale: 2, n: 8 })` gives
 * the bytes a kernel reads for one `Params`, `encodeArray([...])` those of a `Params[]` (elements `size`
 * bytes apart, as in device memory), `decode`/`decodeArray` read them back, `of(value)` is a schema value
 * for a launch.
 */
export interface ValueCodec<T = unknown> {
  /** The C++ name (`Params`, `Pair<float>`). */
  readonly name: string
  /** The schema (`offsetof(codec.type, 'offset.x')`, `layout(codec.type)`). */
  readonly type: DataType
  readonly size: number
  readonly align: number
  encode(value: T): Uint8Array
  encodeArray(values: readonly T[]): Uint8Array
  of(value: T): TypedValue
  /** The `index`th value of an array of them in `bytes` (a download of device memory): numbers, bigints for
   *  64-bit integers and pointers, arrays, objects; a union as its bytes. */
  decode(bytes: ArrayBufferView, index?: number): T
  /** Every value of an array of them (`bytes.byteLength` a multiple of `size`). */
  decodeArray(bytes: ArrayBufferView): T[]
}

/** A float from IEEE binary16 bits. */
function fromHalfBits(h: number): number {
  const sign = h & 0x8000 ? -1 : 1
  const exp = (h >> 10) & 0x1f
  const frac = h & 0x3ff
  if (exp === 0) return sign * frac * 2 ** -24
  if (exp === 31) return frac ? NaN : sign * Infinity
  return sign * (1 + frac / 1024) * 2 ** (exp - 15)
}

/** Reads a value of `type` at `offset`: numbers (bigint for 64- and 128-bit integers and pointers, a boolean
 *  for bool), arrays, objects with the field names; a union reads as its bytes. */
export function readValue(dv: DataView, offset: number, type: DataType): unknown {
  switch (type.kind) {
    case 'array': return Array.from({ length: type.length }, (_, i) => readValue(dv, offset + i * type.elem.size, type.elem))
    case 'union': return new Uint8Array(dv.buffer.slice(dv.byteOffset + offset, dv.byteOffset + offset + type.size))
    case 'struct': {
      const out: Record<string, unknown> = {}
      for (const f of type.fields) out[f.name] = readValue(dv, offset + f.offset, f.type)
      return out
    }
  }
  switch (type.name) {
    case 'bool': return dv.getUint8(offset) !== 0
    case 'i8': return dv.getInt8(offset)
    case 'u8': return dv.getUint8(offset)
    case 'i16': return dv.getInt16(offset, true)
    case 'u16': return dv.getUint16(offset, true)
    case 'i32': return dv.getInt32(offset, true)
    case 'u32': return dv.getUint32(offset, true)
    case 'i64': return dv.getBigInt64(offset, true)
    case 'u64': case 'ptr': return dv.getBigUint64(offset, true)
    case 'f16': return fromHalfBits(dv.getUint16(offset, true))
    case 'bf16': u32buf[0] = dv.getUint16(offset, true) << 16; return f32buf[0]!
    case 'f32': return dv.getFloat32(offset, true)
    case 'f64': return dv.getFloat64(offset, true)
    case 'i128': return BigInt.asIntN(128, dv.getBigUint64(offset, true) | (dv.getBigUint64(offset + 8, true) << 64n))
    case 'u128': return dv.getBigUint64(offset, true) | (dv.getBigUint64(offset + 8, true) << 64n)
  }
}

function viewOf(bytes: ArrayBufferView, what: string): DataView {
  if (!ArrayBuffer.isView(bytes)) throw new TypeError(`${what}: expected bytes (a Uint8Array or another ArrayBufferView), got ${showValue(bytes)}`)
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export function valueCodec<T = unknown>(name: string, type: DataType): ValueCodec<T> {
  return Object.freeze({
    name,
    type,
    size: type.size,
    align: type.align,
    encode: (value: T) => {
      const out = new Uint8Array(type.size)
      writeValue(new DataView(out.buffer), 0, type, value, name)
      return out
    },
    encodeArray: (values: readonly T[]) => {
      if (!Array.isArray(values)) throw new TypeError(`${name}.encodeArray: expected an array of ${name} values, got ${showValue(values)}`)
      const out = new Uint8Array(type.size * values.length)
      const dv = new DataView(out.buffer)
      values.forEach((v, i) => writeValue(dv, i * type.size, type, v, `${name}[${i}]`))
      return out
    },
    of: (value: T) => type.of(value),
    decode: (bytes: ArrayBufferView, index = 0) => {
      const dv = viewOf(bytes, `${name}.decode`)
      if (!Number.isInteger(index) || index < 0 || (index + 1) * type.size > dv.byteLength) throw new RangeError(`${name}.decode: element ${index} is not inside ${dv.byteLength} bytes (${type.size} bytes each)`)
      return readValue(dv, index * type.size, type) as T
    },
    decodeArray: (bytes: ArrayBufferView) => {
      const dv = viewOf(bytes, `${name}.decodeArray`)
      if (type.size === 0 || dv.byteLength % type.size !== 0) throw new RangeError(`${name}.decodeArray: ${dv.byteLength} bytes are not a whole number of ${name} (${type.size} bytes each)`)
      return Array.from({ length: dv.byteLength / type.size }, (_, i) => readValue(dv, i * type.size, type) as T)
    },
  })
}

/** Every named struct and union of the manifest's parameter layouts (nested ones too), by C++ name. */
export function namedValueTypes(manifest: KernelManifest): Record<string, ValueCodec> {
  const out: Record<string, ValueCodec> = Object.create(null) as Record<string, ValueCodec>
  const visit = (v: ValueType) => {
    if (v.kind === 'array') return visit(v.elem)
    if (v.kind === 'scalar') return
    if (v.name && !(v.name in out)) out[v.name] = valueCodec(v.name, fromValueType(v))
    for (const f of v.fields) visit(f.type)
  }
  for (const k of manifest.kernels) for (const p of k.params) if (p.valueType) visit(p.valueType)
  return Object.freeze(out)
}

/** What marshal.ts needs for by-value parameters with the compiler's layout (`valueType`) and for f16/bf16
 *  parameters; the module loads this file only for a manifest that has such parameters (module.ts). */
export const valueLayouts = Object.freeze({ fromValueType, writeValue, toHalfBits, toBfloat16Bits })
