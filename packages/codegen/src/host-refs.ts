// cudafe++'s host-reference arrays: six sections `.nvHRKI` … `.nvHRCE` that list, as NUL-terminated glob
// patterns over device symbol names, the kernels and variables that host code names. nvlink keeps those
// entities alive in relocatable-device-code links. Format measured on nvcc 13.0 (reference/FINDINGS.md §1.3):
// blocks in the order KI KE DI DE CI CE, entries sorted by byte value and deduplicated, each entry a
// `/* pattern */` comment line plus a `0x%x,` byte line ending in `0x0,`; an empty array is `{\n0x0};`.
import type { KernelManifest, Linkage } from '@kernelpack/offload'
import { cComment } from './serialize.js'

/** One host-referenced device entity, as the PTX names it. */
export interface HostRefSymbol {
  /** PTX symbol name (`_Z6vecAddPfS_S_i`, `saxpy`, `__nv_static_39__…_s_scale`). */
  name: string
  kind: 'kernel' | 'variable'
  linkage: Linkage
  /** State space of a variable: `.global` (D arrays, also `__managed__`) or `.const` (C arrays).
   * @default 'global' */
  space?: 'global' | 'const'
}

export interface EmitHostRefsOptions {
  /** The translation unit's module id (`_9c386d43_17_static_kernels_cu_ddfd827a`, nvcc's `X.module_id`).
   * Needed for internal-linkage names that lack the `__nv_static_` prefix and for the extra internal
   * entry cudafe++ adds for every external template kernel; otherwise it is read from the
   * `__nv_static_<len>_<id>_` prefix of any symbol that has one. */
  moduleId?: string
  /** `cudafe` (default): cudafe++'s exact C++ text (`extern "C" { extern … }`). `c`: the same arrays,
   * bytes and sections as C (no `extern "C"`, no `extern` on a definition), to sit in a C object.
   * @default 'cudafe' */
  dialect?: 'cudafe' | 'c'
  /** What to do with an entry that needs the module id when none is known: throw a HostRefError naming
   * the symbol (default), or leave that one entry out (the external entry of a template kernel stays).
   * @default 'error' */
  missingModuleId?: 'error' | 'skip'
}

/** The six arrays in cudafe++'s order: section suffix and C identifier. */
export const hostRefArrays = [
  { key: 'KI', ident: 'hostRefKernelArrayInternalLinkage' },
  { key: 'KE', ident: 'hostRefKernelArrayExternalLinkage' },
  { key: 'DI', ident: 'hostRefDeviceArrayInternalLinkage' },
  { key: 'DE', ident: 'hostRefDeviceArrayExternalLinkage' },
  { key: 'CI', ident: 'hostRefConstantArrayInternalLinkage' },
  { key: 'CE', ident: 'hostRefConstantArrayExternalLinkage' },
] as const
export type HostRefArrayKey = (typeof hostRefArrays)[number]['key']

/** Error for a symbol that cannot be turned into a pattern; names the symbol and the fix. */
export class HostRefError extends Error {
  override name = 'HostRefError'
  readonly userError = true
}

const staticPrefix = /^__nv_static_(\d+)_/

interface SplitName {
  /** Module id when the name carries the `__nv_static_<len>_<id>_` prefix. */
  moduleId?: string
  /** The name after that prefix (or the whole name). */
  inner: string
}

function splitStatic(name: string): SplitName {
  const m = staticPrefix.exec(name)
  if (!m) return { inner: name }
  const len = Number(m[1])
  const start = m[0].length
  // `__nv_static_<len>_<module id of len chars>_<name>`; a malformed prefix is treated as an ordinary name.
  if (start + len + 1 > name.length || name[start + len] !== '_') return { inner: name }
  return { moduleId: name.slice(start, start + len), inner: name.slice(start + len + 1) }
}

interface Mangled {
  /** `_Z` or `_ZN` plus the length-prefixed source names of the entity, as spelled in the name. */
  prefix: string
  /** The source names alone (`2ns5ml_ns`), `<len><id>` each. */
  nested: string
  /** The entity's source names are followed by template arguments (`I…E`). */
  template: boolean
}

/** Reads the `<nested-name>` / `<unscoped-name>` of an Itanium-mangled name up to its last source name. */
function readMangled(name: string): Mangled | undefined {
  if (!name.startsWith('_Z')) return undefined
  let i = 2
  let prefix = '_Z'
  // `_Z <unqualified-name> <params>` has one source name; only `_ZN … E` nests several.
  const nestedName = name[i] === 'N'
  if (nestedName) {
    i++
    prefix += 'N'
    // CV- and ref-qualifiers of a nested name (`_ZNK…`) are part of the prefix text.
    while (i < name.length && 'rVKRO'.includes(name[i]!)) prefix += name[i++]
  }
  const parts: string[] = []
  const spelled: string[] = []
  for (;;) {
    // `L` marks an internal-linkage name in GCC/EDG manglings (`_ZL3foo`, `_ZN2nsL1xE`).
    let lead = ''
    while (name[i] === 'L') lead += name[i++]
    const digits = /^\d+/.exec(name.slice(i))
    if (!digits) {
      i -= lead.length
      break
    }
    const len = Number(digits[0])
    const idStart = i + digits[0].length
    if (len === 0 || idStart + len > name.length) return undefined
    const part = digits[0] + name.slice(idStart, idStart + len)
    spelled.push(lead + part)
    parts.push(part)
    i = idStart + len
    if (!nestedName) break
  }
  if (parts.length === 0) return undefined
  return { prefix: prefix + spelled.join(''), nested: parts.filter((p) => !/^\d+_INTERNAL_/.test(p)).join(''), template: name[i] === 'I' }
}

function internalPrefix(moduleId: string): string {
  return `__nv_static_${moduleId.length}_${moduleId}_`
}

/** Glob pattern(s) for one symbol: `[array, pattern]` pairs (external template kernels give two). */
export function hostRefPatterns(symbol: HostRefSymbol, moduleId?: string, missingModuleId: 'error' | 'skip' = 'error'): Array<[HostRefArrayKey, string]> {
  const letter = symbol.kind === 'kernel' ? 'K' : (symbol.space ?? 'global') === 'const' ? 'C' : 'D'
  const split = splitStatic(symbol.name)
  const internal = symbol.linkage === 'internal' || split.moduleId !== undefined
  const mangled = readMangled(split.inner)
  const needId = (why: string): string | undefined => {
    const id = split.moduleId ?? moduleId
    if (!id && missingModuleId === 'skip') return undefined
    if (!id) throw new HostRefError(`host-reference symbol ${JSON.stringify(symbol.name)} ${why}, which needs the module id; pass it (nvcc -keep writes it to X.module_id)`)
    return id
  }
  if (internal) {
    // `__nv_static_<len>_<id>_*<nested>*`: the first `*` absorbs `_Z`, `_ZN`, `_ZN43_INTERNAL_<id>`; a
    // plain (unmangled) static variable keeps its bare name with no trailing `*` (FINDINGS.md §1.3).
    const id = needId('has internal linkage but no __nv_static_ prefix')
    if (id === undefined) return []
    const tail = mangled ? `${mangled.nested}*` : split.inner
    return [[`${letter}I` as HostRefArrayKey, `${internalPrefix(id)}*${tail}`]]
  }
  const out: Array<[HostRefArrayKey, string]> = [[`${letter}E` as HostRefArrayKey, mangled ? `${mangled.prefix}*` : symbol.name]]
  // cudafe++ also lists every external template kernel under internal linkage (an entry that matches
  // nothing in the PTX; seen for axpby, tiled_copy, vec_sum in templates.cu).
  if (symbol.kind === 'kernel' && mangled?.template) {
    const id = needId('is an external template kernel')
    if (id !== undefined) out.push(['KI', `${internalPrefix(id)}*${mangled.nested}*`])
  }
  return out
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.length - b.length
}

/** Comment text that cannot end the comment: star-slash becomes star-backslash-slash, slash-star likewise,
 * and control, backslash and non-ASCII bytes become `\xNN`.
 * For PTX identifiers (`[A-Za-z0-9_$%]`) and their patterns this is the name itself, as cudafe++ writes it. */

/** cudafe++'s byte list: `0x5f,0x5a,…,0x0,` (lower-case hex without padding, `0x%x`). */
export function formatHexBytes(bytes: Uint8Array, terminate = true): string {
  const parts: string[] = []
  for (const b of bytes) parts.push(`0x${b.toString(16)},`)
  if (terminate) parts.push('0x0,')
  return parts.join('')
}

/** Sorted, deduplicated patterns per array. */
export function collectHostRefs(symbols: HostRefSymbol[], moduleId?: string, missingModuleId: 'error' | 'skip' = 'error'): Record<HostRefArrayKey, string[]> {
  const sets: Record<HostRefArrayKey, Set<string>> = { KI: new Set(), KE: new Set(), DI: new Set(), DE: new Set(), CI: new Set(), CE: new Set() }
  let id = moduleId
  if (id === undefined) for (const s of symbols) id ??= splitStatic(s.name).moduleId
  for (const s of symbols) for (const [key, pattern] of hostRefPatterns(s, id, missingModuleId)) sets[key].add(pattern)
  const enc = new TextEncoder()
  const out = {} as Record<HostRefArrayKey, string[]>
  for (const { key } of hostRefArrays) out[key] = [...sets[key]].sort((a, b) => compareBytes(enc.encode(a), enc.encode(b)))
  return out
}

/** The six `.nvHR*` blocks, KI KE DI DE CI CE, byte-identical to cudafe++ 13.0 for the same symbols. */
export function emitHostRefs(symbols: HostRefSymbol[], options: EmitHostRefsOptions = {}): string {
  const arrays = collectHostRefs(symbols, options.moduleId, options.missingModuleId)
  const c = options.dialect === 'c'
  const enc = new TextEncoder()
  const blocks: string[] = []
  for (const { key, ident } of hostRefArrays) {
    const lines: string[] = []
    if (!c) lines.push('extern "C" {')
    lines.push(`${c ? '' : 'extern '}__attribute__ ((section (".nvHR${key}"))) __attribute__((weak)) const unsigned char ${ident}[] = {`)
    const entries = arrays[key]
    if (entries.length === 0) lines.push('0x0};')
    else {
      for (const pattern of entries) lines.push(`/* ${cComment(pattern)} */`, formatHexBytes(enc.encode(pattern)))
      lines.push('};')
    }
    if (!c) lines.push('}')
    blocks.push(lines.join('\n') + '\n')
  }
  return blocks.join('\n')
}

/** Compiler-made globals that are no user entity: nvcc's string literals (`$str`, `$str$1`) and clang's
 * `__clang_gpu_used_external` list. Neither cudafe++ nor clang's host side lists them. */
export function isCompilerInternalSymbol(name: string): boolean {
  return name.startsWith('$') || name.startsWith('__clang_')
}

/** Host-reference symbols for the kernels and variables of a manifest; `only` picks PTX names (each must
 * exist in the manifest). Default: every kernel and variable that the module defines, less the
 * compiler-made ones (isCompilerInternalSymbol). */
export function hostRefSymbolsFromManifest(manifest: KernelManifest, only?: string[]): HostRefSymbol[] {
  const all: HostRefSymbol[] = [
    ...manifest.kernels.map((k): HostRefSymbol => ({ name: k.name, kind: 'kernel', linkage: k.linkage })),
    ...manifest.variables.map((v): HostRefSymbol => ({ name: v.name, kind: 'variable', linkage: v.linkage, space: v.space })),
  ]
  if (!only) return all.filter((s) => s.linkage !== 'extern' && !isCompilerInternalSymbol(s.name))
  const byName = new Map(all.map((s) => [s.name, s]))
  return only.map((name) => {
    const s = byName.get(name)
    if (!s) {
      const where = manifest.source ? ` of ${manifest.source}` : ''
      throw new HostRefError(`symbol ${JSON.stringify(name)} is not a kernel or variable in the PTX${where}; list PTX names (as in .entry / .global / .const), one per line`)
    }
    return s
  })
}
