// The C++ types of kernel parameters passed by value (structs, classes, unions, arrays, CUDA vector types),
// as the compiler laid them out: read from DWARF the compiler's own output gives (the host and the device lay
// these types out alike, which is what lets a launch pass them as bytes), never from a C++ parser of ours.
// Two sources:
//  - a host compile of the .cu with `-g` (clang; nvcc where the next is not at hand). Each kernel is found by
//    its host-side function: nvcc's host copy of an extern "C" kernel (its name), of a C++ kernel (its linkage
//    name, or the `__device_stub_<entry>` function nvcc writes for templates), clang's `__device_stub__<name>`
//    (extern "C", or the entry's mangling with the name prefixed);
//  - nvcc's device front end's C (device-c.ts): cicc writes the device side of the translation unit lowered
//    to C beside every PTX it makes, each type with EDG's layout spelled out (its end padding as a member,
//    `__align__` as an attribute, a base class as a member `__b_<mangled base>`), types outside the global
//    namespace and template instances named by their mangled names, and each kernel a C function named by
//    its PTX entry. gcc compiles its types with -g; the names are demangled (deviceCTypeName) and the rest read as
//    the host compile's. It costs a C compile of a few hundred lines instead of a second C++ front end.
// The type's size and alignment must be the PTX parameter's: a mismatch is an error naming the type.
import type { FieldInfo, KernelManifest, ParamInfo, ValueScalar, ValueType } from '@kernelpack/offload'
import { nameOf, numberOf, refOf, type DebugInfo, type Die } from './dwarf-text.js'

/** `.b8 name[N]`: a struct/array by value (not a one-byte `.b8`). */
export function isAggregateParam(p: ParamInfo): boolean {
  return p.type === 'b8' && (p.count !== undefined || p.size !== 1)
}

export function hasAggregateParams(manifest: KernelManifest): boolean {
  return manifest.kernels.some((k) => k.params.some(isAggregateParam))
}

/** A type that cannot be described; the message says why (it becomes the parameter's note). */
class Undescribable extends Error {}

const SUBPROGRAM = 'DW_TAG_subprogram'

/** The linkage name clang gives a C++ kernel's host stub: `_Z2k26Params…` → `_Z17__device_stub__k26Params…`
 *  (the innermost name of the entry, possibly inside N…E, with `__device_stub__` in front). */
function clangStubName(entry: string): string | undefined {
  const m = /^_Z(N(?:[^0-9]*))?(\d+)/.exec(entry)
  if (!m) return undefined
  // nested names (N…E) put the kernel's own name last: only the simple case is rewritten here
  if (m[1]) return undefined
  const len = Number(m[2])
  const at = m[0].length
  const name = entry.slice(at, at + len)
  return `_Z${len + 15}__device_stub__${name}${entry.slice(at + len)}`
}

/** Functions with formal parameters: where findKernel looks (collected once per object). */
function functionsOf(info: DebugInfo): Die[] {
  return [...info.byOffset.values()].filter((die) => die.tag === SUBPROGRAM && die.children.some((c) => c.tag === 'DW_TAG_formal_parameter'))
}

/** The host function among `candidates` (functionsOf) that stands for `entry`, with its formal parameters. */
function findKernel(info: DebugInfo, candidates: readonly Die[], entry: string, deviceC: boolean): Die | undefined {
  const linkage = (d: Die) => nameOf(info, d, 'DW_AT_linkage_name') ?? nameOf(info, d, 'DW_AT_MIPS_linkage_name')
  const name = (d: Die) => nameOf(info, d)
  // the device front end's C names each kernel's function by its PTX entry
  if (deviceC) return candidates.find((d) => name(d) === entry)
  const clang = clangStubName(entry)
  const rules: Array<(d: Die) => boolean> = [
    (d) => linkage(d) === entry,
    (d) => linkage(d) === `__device_stub__${entry}` || (clang !== undefined && linkage(d) === clang),
    (d) => name(d) === `__device_stub_${entry}`,
    (d) => !entry.startsWith('_Z') && name(d) === entry && linkage(d) === undefined,
  ]
  for (const rule of rules) {
    const found = candidates.filter(rule)
    if (found.length >= 1) return found[0]
  }
  return undefined
}

function typeDie(info: DebugInfo, die: Die): Die | undefined {
  const ref = refOf(die, 'DW_AT_type')
  return ref === undefined ? undefined : info.byOffset.get(ref)
}

/** Through typedefs, cv-qualifiers and references (nvcc's stubs take `Params&`) to the type itself. */
function strip(info: DebugInfo, die: Die | undefined): Die | undefined {
  for (let hops = 0; die && hops < 32; hops++) {
    if (!['DW_TAG_typedef', 'DW_TAG_const_type', 'DW_TAG_volatile_type', 'DW_TAG_restrict_type', 'DW_TAG_reference_type', 'DW_TAG_rvalue_reference_type', 'DW_TAG_atomic_type'].includes(die.tag)) return die
    die = typeDie(info, die)
  }
  return die
}

/** Integer template arguments as written in source: clang spells `Vec<float, 4U>`, gcc `Vec<float, 4>`. */
function plainTemplateArgs(name: string): string {
  return name.includes('<') ? name.replace(/\b(\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)\b/g, '$1') : name
}

/** Demangled names of the device front end's C types (`_ZN6render5InnerE` → `render::Inner`), from
 *  deviceCMangledNames through the demangler. */
export type DeviceCNames = ReadonlyMap<string, string>

/** The device front end's C members that are not the C++ type's: the end padding EDG spells out and the byte it
 *  puts after a member of an empty type (C's empty struct has no size, C++'s one byte), a base class subobject,
 *  a vtable pointer. */
const DEVICE_C_PADDING = /^(?:__nv_no_debug_dummy_end_padding_\d+|__dummy_empty\d+)$/
const DEVICE_C_BASE = /^__b_/
const DEVICE_C_VPTR = /^__(?:vptr|vtbl)/

/** The names in a device-C object that are manglings (types outside the global namespace, template instances). */
export function deviceCMangledNames(info: DebugInfo): string[] {
  const names = new Set<string>()
  for (const die of info.byOffset.values()) {
    const n = die.attrs.get('DW_AT_name')
    if (n?.startsWith('_Z') && die.tag !== SUBPROGRAM) names.add(n)
  }
  return [...names].sort()
}

/** A device-C type's name as the host compile's DWARF gives it (qualifiedName): demangled, its scopes without
 *  inline namespaces (libcu++'s `cuda::std::__4`) or anonymous ones, integer template arguments without their
 *  suffixes. */
function deviceCTypeName(own: string, dc: DeviceCNames): string {
  const full = own.startsWith('_Z') ? dc.get(own) ?? own : own
  // the scopes: `::` outside template arguments
  const parts: string[] = []
  let depth = 0, start = 0
  for (let i = 0; i < full.length; i++) {
    const ch = full[i]
    if (ch === '<' || ch === '(') depth++
    else if (ch === '>' || ch === ')') depth--
    else if (depth === 0 && full.startsWith('::', i)) { parts.push(full.slice(start, i)); start = i + 2; i++ }
  }
  parts.push(full.slice(start))
  return parts.filter((p, i) => i === parts.length - 1 || !(/^__\d+$/.test(p) || p === '(anonymous namespace)')).map(plainTemplateArgs).join('::')
}

/** The typedef names on the way from `die` to the type itself. */
function typedefsOf(info: DebugInfo, die: Die | undefined): string[] {
  const out: string[] = []
  for (let d = die, hops = 0; d && hops < 32; hops++) {
    if (d.tag === 'DW_TAG_typedef') out.push(nameOf(info, d) ?? '')
    else if (!['DW_TAG_const_type', 'DW_TAG_volatile_type', 'DW_TAG_restrict_type'].includes(d.tag)) break
    d = typeDie(info, d)
  }
  return out
}

/** The name a person calls the type by: the struct's own, else the typedef naming it (`typedef struct {…} Rgb`). */
function typeName(info: DebugInfo, declared: Die | undefined, resolved: Die, dc: DeviceCNames | undefined): string | undefined {
  const own = qualifiedName(info, resolved, dc)
  if (own) return own
  for (let d = declared, hops = 0; d && d !== resolved && hops < 32; hops++) {
    if (d.tag === 'DW_TAG_typedef') return qualifiedName(info, d, dc)
    d = typeDie(info, d)
  }
  return undefined
}

const SCOPES = new Set(['DW_TAG_namespace', 'DW_TAG_structure_type', 'DW_TAG_class_type', 'DW_TAG_union_type'])

/** `sim::Inner` for a struct declared in namespace `sim` (two types named `Inner` stay apart); inline
 *  namespaces (libcu++'s `cuda::std::__4`) are left out, as C++ lets one leave them out. */
function qualifiedName(info: DebugInfo, die: Die, dc: DeviceCNames | undefined): string | undefined {
  const own = nameOf(info, die)
  if (!own) return undefined
  if (dc) return deviceCTypeName(own, dc)
  const parts = [plainTemplateArgs(own)]
  for (let p = die.parent, hops = 0; p && SCOPES.has(p.tag) && hops < 16; p = p.parent, hops++) {
    const n = nameOf(info, p)
    if (!n) continue
    if (p.tag === 'DW_TAG_namespace' && (p.attrs.has('DW_AT_export_symbols') || /^__\d+$/.test(n))) continue
    parts.unshift(plainTemplateArgs(n))
  }
  return parts.join('::')
}

const FLOATS: Record<number, ValueScalar> = { 2: 'f16', 4: 'f32', 8: 'f64' }

function baseScalar(info: DebugInfo, die: Die): ValueScalar {
  const size = numberOf(die, 'DW_AT_byte_size') ?? 0
  const enc = /\((.+)\)\s*$/.exec(die.attrs.get('DW_AT_encoding') ?? '')?.[1] ?? ''
  const name = nameOf(info, die) ?? '?'
  const ints: Record<number, [ValueScalar, ValueScalar]> = { 1: ['i8', 'u8'], 2: ['i16', 'u16'], 4: ['i32', 'u32'], 8: ['i64', 'u64'], 16: ['i128', 'u128'] }
  if (enc === 'float') {
    const f = FLOATS[size]
    if (!f) throw new Undescribable(`its field type ${name} (a ${size}-byte float) has no JS counterpart`)
    return f
  }
  if (enc === 'boolean') return 'bool'
  const pair = ints[size]
  if (!pair) throw new Undescribable(`its field type ${name} (${size} bytes, ${enc || 'no encoding'}) has no JS counterpart`)
  if (/^unsigned|UTF/.test(enc)) return pair[1]
  if (/^signed/.test(enc)) return pair[0]
  throw new Undescribable(`its field type ${name} (${enc || 'no encoding'}) has no JS counterpart`)
}

/** Alignment the compiler gave an aggregate: DW_AT_alignment (`__align__`, alignas) where present, else the
 *  largest of its members'. */
function aggregateAlign(die: Die, fields: FieldInfo[]): number {
  const declared = numberOf(die, 'DW_AT_alignment') ?? 1
  return Math.max(declared, ...fields.map((f) => alignOf(f.type)))
}

export function alignOf(t: ValueType): number {
  // scalars are aligned to their size (the 128-bit integers to 16, as __int128)
  if (t.kind === 'scalar') return sizeOfScalar(t.name)
  if (t.kind === 'array') return alignOf(t.elem)
  return t.align
}

function sizeOfScalar(n: ValueScalar): number {
  switch (n) {
    case 'bool': case 'i8': case 'u8': return 1
    case 'i16': case 'u16': case 'f16': case 'bf16': return 2
    case 'i32': case 'u32': case 'f32': return 4
    case 'i64': case 'u64': case 'f64': case 'ptr': return 8
    default: return 16
  }
}

export function sizeOf(t: ValueType): number {
  if (t.kind === 'scalar') return sizeOfScalar(t.name)
  if (t.kind === 'array') return sizeOf(t.elem) * t.length
  return t.size
}

function describe(info: DebugInfo, declared: Die | undefined, dc: DeviceCNames | undefined, depth = 0): ValueType {
  if (depth > 24) throw new Undescribable('it nests too deeply')
  const die = strip(info, declared)
  if (!die) throw new Undescribable('the debugging information has no type for it')
  // C has no bool: the device front end's C spells it `__nv_bool`, a typedef of char
  if (dc && die.tag === 'DW_TAG_base_type' && typedefsOf(info, declared).includes('__nv_bool')) return { kind: 'scalar', name: 'bool' }
  const name = typeName(info, declared, die, dc)
  switch (die.tag) {
    case 'DW_TAG_base_type': return { kind: 'scalar', name: baseScalar(info, die) }
    case 'DW_TAG_pointer_type': return { kind: 'scalar', name: 'ptr' }
    case 'DW_TAG_enumeration_type': {
      const under = strip(info, typeDie(info, die))
      if (under?.tag === 'DW_TAG_base_type') return { kind: 'scalar', name: baseScalar(info, under) }
      const size = numberOf(die, 'DW_AT_byte_size') ?? 4
      return { kind: 'scalar', name: ({ 1: 'i8', 2: 'i16', 4: 'i32', 8: 'i64' } as Record<number, ValueScalar>)[size] ?? 'i32' }
    }
    case 'DW_TAG_array_type': {
      const dims = die.children.filter((c) => c.tag === 'DW_TAG_subrange_type').map((c) => {
        const count = numberOf(c, 'DW_AT_count') ?? (numberOf(c, 'DW_AT_upper_bound') !== undefined ? numberOf(c, 'DW_AT_upper_bound')! + 1 : undefined)
        if (count === undefined) throw new Undescribable('it has an array of unknown length')
        return count
      })
      let t = describe(info, typeDie(info, die), dc, depth + 1)
      for (const n of dims.reverse()) t = { kind: 'array', elem: t, length: n }
      return t
    }
    case 'DW_TAG_structure_type':
    case 'DW_TAG_class_type':
    case 'DW_TAG_union_type': {
      // CUDA's half types are structs holding the bits: they are scalars to JS
      if (name === '__half' || name === 'half') return { kind: 'scalar', name: 'f16' }
      if (name === '__nv_bfloat16' || name === 'nv_bfloat16') return { kind: 'scalar', name: 'bf16' }
      if (die.attrs.has('DW_AT_declaration')) throw new Undescribable(`${name ?? 'a type'} is only declared there`)
      const bytes = numberOf(die, 'DW_AT_byte_size')
      if (bytes === undefined) throw new Undescribable(`${name ?? 'a type'} has no size there`)
      // an empty struct: no size in C (the device front end's), one byte in C++
      const size = dc && bytes === 0 ? 1 : bytes
      const fields: FieldInfo[] = []
      // a base class's fields are the derived object's, at the base's offset (an empty base adds none)
      const addBase = (c: Die, at: number) => {
        const base = describe(info, typeDie(info, c), dc, depth + 1)
        if (base.kind !== 'struct') throw new Undescribable(`${name ?? 'it'} derives from a ${base.kind}`)
        for (const f of base.fields) {
          if (fields.some((g) => g.name === f.name)) throw new Undescribable(`${name ?? 'it'} has two fields named ${f.name}`)
          fields.push({ ...f, offset: f.offset + at })
        }
      }
      for (const c of die.children) {
        if (c.tag === 'DW_TAG_inheritance') {
          if (c.attrs.has('DW_AT_virtuality')) throw new Undescribable(`${name ?? 'it'} has a virtual base class`)
          addBase(c, numberOf(c, 'DW_AT_data_member_location') ?? 0)
          continue
        }
        if (c.tag !== 'DW_TAG_member') continue
        // static data members are declarations without a place in the object
        if (c.attrs.has('DW_AT_external') || c.attrs.has('DW_AT_declaration')) continue
        if (c.attrs.has('DW_AT_bit_size') || c.attrs.has('DW_AT_data_bit_offset')) throw new Undescribable(`${name ?? 'it'} has bit-fields`)
        const fname = nameOf(info, c)
        if (!fname) throw new Undescribable(`${name ?? 'it'} has an unnamed member (an anonymous struct or union)`)
        const offset = die.tag === 'DW_TAG_union_type' ? numberOf(c, 'DW_AT_data_member_location') ?? 0 : numberOf(c, 'DW_AT_data_member_location')
        if (offset === undefined) throw new Undescribable(`${name ?? 'it'}: member ${fname} has no constant offset`)
        if (dc && DEVICE_C_PADDING.test(fname)) continue
        if (dc && DEVICE_C_VPTR.test(fname)) throw new Undescribable(`${name ?? 'it'} has virtual functions (a vtable pointer)`)
        if (dc && DEVICE_C_BASE.test(fname)) { addBase(c, offset); continue }
        fields.push({ name: fname, offset, type: describe(info, typeDie(info, c), dc, depth + 1) })
      }
      if (die.children.some((c) => c.attrs.has('DW_AT_virtuality') || c.attrs.has('DW_AT_containing_type')) || die.attrs.has('DW_AT_containing_type')) {
        throw new Undescribable(`${name ?? 'it'} has virtual functions (a vtable pointer)`)
      }
      // std::array<T, N> (and libcu++'s cuda::std::array) holds one C array: it is that array
      if (name && /^(cuda::)?std::array</.test(name) && fields.length === 1 && fields[0]!.type.kind === 'array' && fields[0]!.offset === 0) return fields[0]!.type
      const kind = die.tag === 'DW_TAG_union_type' ? 'union' : 'struct'
      return { kind, ...(name ? { name } : {}), size, align: aggregateAlign(die, fields), fields }
    }
    default:
      throw new Undescribable(`${name ?? 'its type'} is a ${die.tag.replace(/^DW_TAG_/, '').replace(/_/g, ' ')}`)
  }
}

export interface ParamTypes {
  /** Kernel entry → per parameter: its value type, a note why there is none (aggregates only), or nothing. */
  kernels: Map<string, Array<{ valueType?: ValueType; note?: string; cType?: string }>>
}

/** A mismatch between the compiler's layout and the PTX parameter: a build error. */
export class ParamTypeMismatch extends Error {}

/**
 * The value types of every by-value aggregate parameter of `manifest`'s kernels, from the host DWARF `info`.
 * Throws ParamTypeMismatch when a type's size or alignment is not the PTX parameter's.
 */
export function readParamTypes(info: DebugInfo, manifest: KernelManifest, deviceC?: DeviceCNames): ParamTypes {
  const kernels = new Map<string, Array<{ valueType?: ValueType; note?: string; cType?: string }>>()
  const functions = manifest.kernels.some((k) => k.params.some(isAggregateParam)) ? functionsOf(info) : []
  for (const k of manifest.kernels) {
    if (!k.params.some(isAggregateParam)) continue
    const fn = findKernel(info, functions, k.name, !!deviceC)
    const formals = fn?.children.filter((c) => c.tag === 'DW_TAG_formal_parameter' && !c.attrs.has('DW_AT_artificial')) ?? []
    const out: Array<{ valueType?: ValueType; note?: string; cType?: string }> = []
    k.params.forEach((p, i) => {
      if (!isAggregateParam(p)) { out.push({}); return }
      // the device front end's C must have every kernel as the PTX has it (else the host compile is read)
      if (deviceC && (!fn || formals.length !== k.params.length)) throw new ParamTypeMismatch(`kernel ${k.demangled} is not in the device front end's C as the PTX has it`)
      if (!fn) { out.push({ note: `the host compile's debugging information has no function for kernel ${k.demangled}` }); return }
      if (formals.length !== k.params.length) { out.push({ note: `kernel ${k.demangled} has ${formals.length} parameters in the host compile's debugging information, ${k.params.length} in the PTX` }); return }
      const declared = typeDie(info, formals[i]!)
      const resolved = strip(info, declared)
      const cType = resolved ? typeName(info, declared, resolved, deviceC) : undefined
      let vt: ValueType
      try {
        vt = describe(info, declared, deviceC)
      } catch (err) {
        if (err instanceof Undescribable) { out.push({ note: `${cType ?? 'the type'} cannot be described: ${err.message}`, ...(cType ? { cType } : {}) }); return }
        throw err
      }
      const size = sizeOf(vt)
      const align = alignOf(vt)
      if (size !== p.size || align !== p.align) {
        throw new ParamTypeMismatch(`kernel ${k.demangled}: parameter ${i}${p.sourceName ? ` (${p.sourceName})` : ''} of type ${cType ?? 'unnamed'} is ${size} bytes aligned to ${align} in the host compile's layout, but the PTX declares .param .align ${p.align} .b8 [${p.size}]`)
      }
      out.push({ valueType: vt, ...(cType ? { cType } : {}) })
    })
    kernels.set(k.name, out)
  }
  return { kernels }
}

/** The manifest with `valueType` (or `valueTypeNote`) on every by-value aggregate parameter. */
export function withParamTypes(manifest: KernelManifest, types: ParamTypes | { note: string }): KernelManifest {
  return {
    ...manifest,
    kernels: manifest.kernels.map((k) => {
      if (!k.params.some(isAggregateParam)) return k
      const found = 'kernels' in types ? types.kernels.get(k.name) : undefined
      return {
        ...k,
        params: k.params.map((p, i) => {
          if (!isAggregateParam(p)) return p
          const t = found?.[i]
          if (t?.valueType) return { ...p, valueType: t.valueType }
          return { ...p, valueTypeNote: t?.note ?? ('note' in types ? types.note : 'no layout was read') }
        }),
      }
    }),
  }
}

/** One line per by-value aggregate parameter that takes bytes for want of a layout, saying why. */
export function paramTypeNotes(manifest: KernelManifest): string[] {
  return manifest.kernels.flatMap((k) => k.params.flatMap((p, i) => (p.valueTypeNote
    ? [`kernel ${k.demangled}: parameter ${i}${p.sourceName ? ` (${p.sourceName})` : ''} takes its ${p.size} bytes (a Uint8Array or a schema value), not an object: ${p.valueTypeNote}`]
    : [])))
}
