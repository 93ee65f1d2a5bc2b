// The readable names of a manifest's kernels: the export names the generated loader stubs give them
// (@kernelpack/codegen) and that the runtime's `mod.kernel(name)` accepts beside the PTX name and the
// demangled signature (issue 17 item 10). One function, so that the stub and the runtime never disagree.
// Pure: no Node APIs.
import type { KernelInfo, KernelManifest } from './manifest.js'
import { exportOf, SEMANTIC_EXPORTS } from './semantic-exports.js'

export { exportOf, SEMANTIC_EXPORTS } from './semantic-exports.js'

/** Names the stub exports itself; an extern "C" kernel cannot take them. */
export const RESERVED_EXPORTS: ReadonlySet<string> = new Set(['module', 'kernels', 'default'])

// ECMAScript reserved words (and strict-mode ones): an export may be named so, but a `const` may not.
const RESERVED_WORDS = new Set(('await break case catch class const continue debugger default delete do else enum export extends ' +
  'false finally for function if implements import in instanceof interface let new null package private protected public ' +
  'return static super switch this throw true try typeof var void while with yield arguments eval').split(' '))

const IDENT = /^[A-Za-z_$][\w$]*$/

/** Why an extern "C" kernel's own name cannot be its export name. */
export type KernelNameProblem = 'not-an-identifier' | 'reserved-export' | 'duplicate'

export interface KernelName {
  kernel: KernelInfo
  /** The export name; undefined when `problem` is set. */
  exportName: string | undefined
  /** The name the kernel would have had (its C name, or the function name of a C++ kernel). */
  wanted: string
  problem?: KernelNameProblem
}

/** Splits `void ns::axpby<float>(float, float const*)` into the qualified name and the parameter list. */
export function splitSignature(demangled: string): { qualified: string; params: string[] } {
  const s = demangled.trim()
  // The parameter list is the last top-level parenthesised group; `operator()` and templates nest.
  let depth = 0
  let open = -1
  let close = -1
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s[i]
    if (c === ')') { if (depth++ === 0) close = i }
    else if (c === '(') { if (--depth === 0) { open = i; break } }
  }
  if (open < 0 || close < 0) return { qualified: s, params: [] }
  let head = s.slice(0, open).trim()
  // Function templates demangle with their return type first (`void axpby<float>(…)`): drop it.
  const space = lastTopLevel(head, ' ')
  if (space >= 0) head = head.slice(space + 1)
  return { qualified: head, params: splitTopLevel(s.slice(open + 1, close)) }
}

function lastTopLevel(s: string, ch: string): number {
  let depth = 0
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s[i]
    if (c === '>' || c === ')') depth++
    else if (c === '<' || c === '(') depth--
    else if (c === ch && depth === 0) return i
  }
  return -1
}

function splitTopLevel(s: string): string[] {
  const out: string[] = []
  let depth = 0
  let cur = ''
  for (const c of s) {
    if (c === '<' || c === '(' || c === '[') depth++
    else if (c === '>' || c === ')' || c === ']') depth--
    if (c === ',' && depth === 0) { out.push(cur.trim()); cur = '' } else cur += c
  }
  if (cur.trim() && cur.trim() !== 'void') out.push(cur.trim())
  return out
}

/** C++ parameter types of a kernel from its demangled name ([] for extern "C", which carries none). */
export function kernelParamTypes(kernel: KernelInfo): string[] {
  if (kernel.demangled === kernel.name) return []
  return splitSignature(kernel.demangled).params
}

function toIdentifier(s: string): string {
  let id = s
    .replace(/\*/g, '_ptr')
    .replace(/&/g, '_ref')
    .replace(/::/g, '_')
    .replace(/[^A-Za-z0-9_$]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^_+(?=[A-Za-z])|_+$/g, '')
  if (!id) id = '_'
  if (/^[0-9]/.test(id)) id = '_' + id
  return id
}

function readableParts(kernel: KernelInfo): { base: string; qualified: string; withTypes: string } {
  const { qualified, params } = splitSignature(kernel.demangled)
  const lt = qualified.indexOf('<')
  const plain = lt >= 0 ? qualified.slice(0, lt) : qualified
  const colon = plain.lastIndexOf('::')
  const base = toIdentifier(colon >= 0 ? plain.slice(colon + 2) : plain)
  const q = toIdentifier(qualified)
  return { base, qualified: q, withTypes: toIdentifier(`${qualified}_${params.join('_')}`) }
}

function safeName(id: string): string {
  return RESERVED_WORDS.has(id) || SEMANTIC_EXPORTS.has(id) ? id + '_' : id
}

/**
 * Export names for every kernel, in manifest order. extern "C" kernels keep their C name (`problem` is set
 * when it is not a usable identifier, takes a reserved export or is declared twice); mangled kernels get the
 * shortest readable name that is unique: the function name (`vecAdd`), then the qualified name with
 * template arguments (`axpby_float`), then with parameter types, then an index suffix.
 */
export function nameKernels(manifest: KernelManifest): KernelName[] {
  const kernels = manifest.kernels
  const fixed = new Map<string, KernelInfo>()
  const problems = new Map<KernelInfo, KernelNameProblem>()
  for (const k of kernels) {
    if (k.demangled !== k.name) continue
    if (!IDENT.test(k.name) || RESERVED_WORDS.has(k.name)) problems.set(k, 'not-an-identifier')
    else if (RESERVED_EXPORTS.has(k.name)) problems.set(k, 'reserved-export')
    else if (fixed.has(k.name)) problems.set(k, 'duplicate')
    else fixed.set(k.name, k)
  }
  const taken = new Set<string>([...RESERVED_EXPORTS, ...SEMANTIC_EXPORTS, ...[...fixed.keys()].map(exportOf)])
  const mangled = kernels.filter((k) => k.demangled !== k.name)
  const parts = new Map(mangled.map((k) => [k, readableParts(k)]))
  const count = (key: 'base' | 'qualified' | 'withTypes', value: string) => mangled.filter((k) => parts.get(k)![key] === value).length
  const names = new Map<KernelInfo, string>()
  for (const k of mangled) {
    const p = parts.get(k)!
    let name: string | undefined
    for (const key of ['base', 'qualified', 'withTypes'] as const) {
      const cand = safeName(p[key])
      if (count(key, p[key]) === 1 && !taken.has(cand)) { name = cand; break }
    }
    if (!name) {
      let i = 1
      while (taken.has(`${safeName(p.withTypes)}_${i}`)) i++
      name = `${safeName(p.withTypes)}_${i}`
    }
    taken.add(name)
    names.set(k, name)
  }
  return kernels.map((k) => {
    const wanted = k.demangled === k.name ? k.name : parts.get(k)!.base
    const problem = problems.get(k)
    if (problem) return { kernel: k, exportName: undefined, wanted, problem }
    return { kernel: k, exportName: k.demangled === k.name ? exportOf(k.name) : names.get(k)!, wanted }
  })
}
