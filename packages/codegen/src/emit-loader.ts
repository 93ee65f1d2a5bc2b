// The ESM loader stub a bundler plugin returns for `import { vecAdd } from './kernels.cu'`, and the export
// names it gives each kernel. Pure functions from a manifest and an asset reference to source text, so the
// stub is reproducible and snapshot-tested. Every string that came from a user file goes through the one
// serializer (serialize.ts: jsString/jsValue, safe in code and in comments); export names are checked to
// be plain identifiers before they are written.
//
// The stub is thin on purpose (vite-plugin-wasm's rule: runtime helpers are real modules, never template
// text): it builds one `defineKernelModule` (from the plugin's runtime helper) and exports one launcher per
// kernel, a `kernels` map by full C++ name, and `module`.
import type { KernelInfo, KernelManifest } from '@kernelpack/offload'
import { jsComment, jsString, jsValue } from './serialize.js'

/** One kernel and the name the stub exports it under. */
export interface KernelExport {
  /** JS identifier exported by the stub (`vecAdd`, `axpby_float`). */
  exportName: string
  /** Key in the stub's `kernels` map: the demangled C++ signature (or the entry name for extern "C"). */
  fullName: string
  kernel: KernelInfo
  /** Why the export is not the kernel's own name, when that name would change what the module means. */
  note?: string
}

/** Where the stub finds the offload binary at run time. */
export type LoaderAsset =
  /** A JavaScript expression, written by the plugin (never from user text), that evaluates to a URL, URL
   *  string or file path: `import.meta.ROLLUP_FILE_URL_x`, `new URL("./a.offload", import.meta.url)`.
   *  `eager`: evaluate it when the stub module runs, not at first load (`document.currentScript` is only
   *  set while a classic script runs). */
  | { kind: 'expression'; expression: string; eager?: boolean }
  /** The bytes themselves, inlined as base64 (the plugin's `inline` threshold). */
  | { kind: 'inline'; bytes: Uint8Array }

/** Size and target of one image in the offload binary, for `module.images`. */
export interface LoaderImageInfo {
  /** The target built: `sm_90` (cubin), `compute_90` (PTX). */
  target: string
  /** The image's `arch` string (`sm_90` for both). */
  arch: string
  kind: string
  size: number
}

export interface EmitLoaderOptions {
  manifest: KernelManifest
  asset: LoaderAsset
  /** Source file name used in messages (basename of the `.cu`). */
  name: string
  images?: LoaderImageInfo[]
  /** Backend the stub's module asks for when `module.load()` gets none. @default 'auto' */
  backend?: 'auto' | 'cuda' | 'emulator'
  /** Module specifier of the runtime helper that defines `defineKernelModule`. @default 'unplugin-cuda/runtime' */
  runtime?: string
  /** Emit Vite HMR glue (`import.meta.hot`): swap the kernels in place for modules with `onUpdate`
   *  listeners, else let Vite update the importers. @default false */
  hot?: boolean
}

/** Thrown when two kernels (or a kernel and a stub export) would need the same export name. */
export class KernelNameCollisionError extends Error {
  readonly names: string[]
  constructor(message: string, names: string[]) {
    super(message)
    this.name = 'KernelNameCollisionError'
    this.names = names
  }
}

/** Names the stub exports itself; an extern "C" kernel cannot take them. */
export const RESERVED_EXPORTS: ReadonlySet<string> = new Set(['module', 'kernels', 'default'])

// ECMAScript reserved words (and strict-mode ones): an export may be named so, but a `const` may not.
const RESERVED_WORDS = new Set(('await break case catch class const continue debugger default delete do else enum export extends ' +
  'false finally for function if implements import in instanceof interface let new null package private protected public ' +
  'return static super switch this throw true try typeof var void while with yield arguments eval').split(' '))

const IDENT = /^[A-Za-z_$][\w$]*$/

/** Export names that would change the meaning of the stub module itself: a module namespace with a `then`
 *  export is a thenable, so `await import('./k.cu')` would call the launcher instead of giving the module.
 *  A kernel with such a name is exported as `<name>_`, with a note in the .d.ts. */
export const SEMANTIC_EXPORTS: ReadonlySet<string> = new Set(['then'])

function semanticNote(name: string, exportName: string): string {
  return `exported as \`${exportName}\`, not \`${name}\`: an export named \`${name}\` would make this module a thenable (\`await import()\` would call the kernel instead of returning the module)`
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

/**
 * Export names for every kernel, in manifest order. extern "C" kernels keep their C name (an error when it
 * is not a usable identifier or takes a reserved export); mangled kernels get the shortest readable name
 * that is unique: the function name (`vecAdd`), then the qualified name with template arguments
 * (`axpby_float`), then with parameter types, then an index suffix.
 */
export function nameKernelExports(manifest: KernelManifest, source = manifest.source ?? 'the .cu file'): KernelExport[] {
  const kernels = manifest.kernels
  const fixed = new Map<string, KernelInfo>()
  for (const k of kernels) {
    if (k.demangled !== k.name) continue
    if (!IDENT.test(k.name) || RESERVED_WORDS.has(k.name)) {
      throw new KernelNameCollisionError(`${source}: kernel ${JSON.stringify(k.name)} is not a valid JavaScript export name; rename the kernel`, [k.name])
    }
    if (RESERVED_EXPORTS.has(k.name)) {
      throw new KernelNameCollisionError(`${source}: extern "C" kernel ${JSON.stringify(k.name)} collides with the stub's own \`${k.name}\` export; rename the kernel (the stub exports module, kernels and default)`, [k.name])
    }
    const other = fixed.get(k.name)
    if (other) throw new KernelNameCollisionError(`${source}: two kernels are both named ${JSON.stringify(k.name)}; rename one`, [k.name])
    fixed.set(k.name, k)
  }
  const exportOf = (name: string) => (SEMANTIC_EXPORTS.has(name) ? `${name}_` : name)
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
    const exportName = fixed.has(k.name) && k.demangled === k.name ? exportOf(k.name) : names.get(k)!
    const wanted = k.demangled === k.name ? k.name : readableParts(k).base
    const e: KernelExport = { exportName, fullName: k.demangled, kernel: k }
    if (SEMANTIC_EXPORTS.has(wanted) && exportName !== wanted) e.note = semanticNote(wanted, exportName)
    return e
  })
}

function safeName(id: string): string {
  return RESERVED_WORDS.has(id) || SEMANTIC_EXPORTS.has(id) ? id + '_' : id
}

function encodeBase64(bytes: Uint8Array): string {
  let s = ''
  const chunk = 0x8000
  for (let i = 0; i < bytes.length; i += chunk) s += String.fromCharCode(...bytes.subarray(i, i + chunk))
  return btoa(s)
}

/** The source expression for an asset: the plugin's expression, or the inlined bytes. */
function emitSource(asset: LoaderAsset): string {
  if (asset.kind === 'inline') return `() => decodeBase64(${jsString(encodeBase64(asset.bytes))})`
  if (asset.eager) return `((source) => () => source)(${asset.expression})`
  return `() => ${asset.expression}`
}

/** The loader stub (ESM source) for one `.cu` file. */
export function emitLoaderStub(options: EmitLoaderOptions): string {
  const { manifest, asset, name } = options
  const runtime = options.runtime ?? 'unplugin-cuda/runtime'
  const exports = nameKernelExports(manifest, name)
  const imports = asset.kind === 'inline' ? 'decodeBase64, defineKernelModule' : 'defineKernelModule'
  const lines: string[] = [
    `// Generated by unplugin-cuda from ${jsString(name)}. Do not edit.`,
    `import { ${imports} } from ${jsString(runtime)};`,
    '',
    `export const module = /*#__PURE__*/ defineKernelModule({`,
    `  name: ${jsString(name)},`,
    `  backend: ${jsString(options.backend ?? 'auto')},`,
    `  manifest: ${jsValue(manifest)},`,
    `  images: ${jsValue(options.images ?? [])},`,
    `  source: ${emitSource(asset)},`,
    `});`,
    '',
  ]
  for (const e of exports) {
    lines.push(`/** ${jsComment(e.fullName)} */`)
    lines.push(`export const ${e.exportName} = /*#__PURE__*/ module.launcher(${jsString(e.kernel.name)});`)
  }
  lines.push('')
  // a null-prototype object with computed keys: `{ "__proto__": f }` would set the prototype instead
  lines.push('export const kernels = /*#__PURE__*/ Object.freeze(Object.assign(Object.create(null), {')
  for (const e of exports) lines.push(`  [${jsString(e.fullName)}]: ${e.exportName},`)
  lines.push('}));')
  lines.push('export default kernels;')
  if (options.hot) {
    lines.push('')
    lines.push('if (import.meta.hot) {')
    lines.push('  // A new build of this .cu: swap its kernels into the running module (launchers and buffers stay')
    lines.push('  // valid) when the app listens with module.onUpdate; otherwise update the importers.')
    lines.push('  import.meta.hot.accept((next) => {')
    lines.push('    if (!next || !module.hotReplace(next.module)) import.meta.hot.invalidate();')
    lines.push('  });')
    lines.push('}')
  }
  return lines.join('\n') + '\n'
}

/** Stub for `?url`: the asset URL as a string (a `data:` URL when the bytes are inlined). */
export function emitUrlStub(options: { asset: LoaderAsset; runtime?: string }): string {
  const runtime = options.runtime ?? 'unplugin-cuda/runtime'
  const imports = options.asset.kind === 'inline' ? 'decodeBase64, toAssetHref' : 'toAssetHref'
  return `import { ${imports} } from ${jsString(runtime)};\nexport default toAssetHref((${emitSource(options.asset)})());\n`
}

/** Stub for `?manifest`: the manifest as a JSON value. */
export function emitManifestStub(manifest: KernelManifest): string {
  return `export default ${jsValue(manifest)};\n`
}

/** Stub for `?raw`: the offload bytes (a Uint8Array), inlined. */
export function emitRawStub(options: { bytes: Uint8Array; runtime?: string }): string {
  const runtime = options.runtime ?? 'unplugin-cuda/runtime'
  return `import { decodeBase64 } from ${jsString(runtime)};\nexport default decodeBase64(${jsString(encodeBase64(options.bytes))});\n`
}
