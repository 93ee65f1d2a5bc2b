// The .d.ts written beside every imported `.cu` (`kernels.cu.d.ts`, which TypeScript finds for
// `import … from './kernels.cu'` without any config), typing each launcher from the manifest: numbers for
// 8–32-bit scalars and floats, bigint | number for 64-bit ones, device buffers for pointers, a struct value
// or its bytes for `.param .align A .b8 name[N]` (structs and arrays by value). Pure; snapshot-tested.
import type { KernelManifest, ParamInfo, ValueType } from '@kernelpack/offload'
import { kernelParamTypes, nameKernelExports } from './emit-loader.js'
import { jsComment, jsString } from './serialize.js'

export interface EmitDtsOptions {
  manifest: KernelManifest
  /** Source file name used in the header comment (basename of the `.cu`). */
  name: string
  /** Module specifier of the runtime helper that declares the launcher types. @default '@kernelpack/runtime' */
  runtime?: string
}

/** TypeScript type of one kernel argument, from its PTX declaration and (when known) its C++ type. */
export function paramTsType(param: ParamInfo, cppType?: string, named?: Map<string, string>): string {
  const t = param.type.replace(/^\./, '')
  if (param.valueType?.kind === 'scalar' && (param.valueType.name === 'f16' || param.valueType.name === 'bf16')) return 'number | StructArg'
  if (param.valueType && param.valueType.kind !== 'scalar') {
    const v = param.valueType
    const id = v.kind !== 'array' && v.name ? named?.get(v.name) : undefined
    return `${id ?? valueTsType(param.valueType, named)} | StructArg`
  }
  const isPointer = param.pointer ?? (cppType !== undefined ? /[*&]\s*(?:const\s*)?(?:__restrict__\s*)?$/.test(cppType) : undefined)
  if (isPointer) return 'DevicePointer'
  if (param.count !== undefined || (t === 'b8' && param.size > 1)) return 'StructArg'
  if (/^[usb](8|16|32)$|^f(16|32|64)$|^bf16$|^f16x2$/.test(t)) return 'number'
  if (/^[usb]64$/.test(t)) {
    // extern "C" kernels carry no C++ types: a .u64 may be a pointer or a 64-bit integer.
    return isPointer === undefined ? 'DevicePointer | bigint | number' : 'bigint | number'
  }
  if (/^[usb]128$/.test(t)) return 'bigint | Uint8Array'
  return 'StructArg'
}

const TYPED_ARRAYS: Partial<Record<string, string>> = {
  i8: 'Int8Array', u8: 'Uint8Array', i16: 'Int16Array', u16: 'Uint16Array', i32: 'Int32Array', u32: 'Uint32Array',
  f32: 'Float32Array', f64: 'Float64Array', i64: 'BigInt64Array', u64: 'BigUint64Array',
}

/** The names the declarations give the C++ types of `manifest`'s by-value parameters (ValueType.name): the
 *  C++ name made an identifier (`Pair<float>` → `Pair_float`), unique, clear of the runtime's type names. */
export function valueTypeNames(manifest: KernelManifest): Map<string, string> {
  const names = new Map<string, string>()
  const used = new Set(['DevicePointer', 'KernelModule', 'Launcher', 'StructArg', 'ValueCodec'])
  const visit = (v: ValueType) => {
    if (v.kind === 'array') return visit(v.elem)
    if (v.kind === 'scalar') return
    if (v.name && !names.has(v.name)) {
      let id = v.name.replace(/[^A-Za-z0-9_$]+/g, '_').replace(/^_+|_+$/g, '') || 'Value'
      if (/^[0-9]/.test(id)) id = `_${id}`
      if (RESERVED.has(id)) id = `${id}_`
      while (used.has(id)) id = `${id}_`
      used.add(id)
      names.set(v.name, id)
    }
    for (const f of v.fields) visit(f.type)
  }
  for (const k of manifest.kernels) for (const p of k.params) if (p.valueType) visit(p.valueType)
  return names
}

const fieldKey = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : jsString(name))

/** The TypeScript type of a value of `v`: numbers, `bigint | number` for 64-bit integers, device pointers,
 *  tuples (or a typed array) for fixed arrays, objects with the C++ field names, and a union as one of its
 *  members or its bytes. `named` gives the declared name of a struct or union (valueTypeNames). */
export function valueTsType(v: ValueType, named?: Map<string, string>, top = false): string {
  if (v.kind === 'scalar') {
    switch (v.name) {
      case 'bool': return 'boolean | number'
      case 'i64': case 'u64': return 'bigint | number'
      case 'i128': case 'u128': return 'bigint'
      case 'ptr': return 'DevicePointer | number'
      default: return 'number'
    }
  }
  if (v.kind === 'array') {
    const elem = valueTsType(v.elem, named)
    const typed = v.elem.kind === 'scalar' ? TYPED_ARRAYS[v.elem.name] : undefined
    const list = v.length <= 16 ? `readonly [${Array.from({ length: v.length }, () => (elem.includes('|') ? `(${elem})` : elem)).join(', ')}]` : `ArrayLike<${elem}>`
    return typed ? `${list} | ${typed}` : list
  }
  const id = !top && v.name ? named?.get(v.name) : undefined
  if (id) return id
  if (v.kind === 'union') return ['Uint8Array', ...v.fields.map((f) => `{ ${fieldKey(f.name)}: ${valueTsType(f.type, named)} }`)].join(' | ')
  return `{ ${v.fields.map((f) => `${fieldKey(f.name)}: ${valueTsType(f.type, named)};`).join(' ')} }`
}

// Reserved words cannot label a tuple element in every TypeScript version: such a name gets a `_`.
const RESERVED = new Set(('break case catch class const continue debugger default delete do else enum export extends false finally for ' +
  'function if import in instanceof new null return super switch this throw true try typeof var void while with ' +
  'implements interface let package private protected public static yield await').split(' '))

/** Labels of a launcher's arguments: the names in the CUDA source (`n`, `a`, `x`, `y`) where the manifest has
 *  them (ParamInfo.sourceName), else `argN`. A name that is no plain identifier or repeats falls back too. */
export function paramLabels(params: readonly ParamInfo[]): string[] {
  const labels = params.map((p, i) => {
    const n = p.sourceName
    if (!n || !/^[A-Za-z_$][\w$]*$/.test(n)) return `arg${i}`
    return RESERVED.has(n) ? `${n}_` : n
  })
  return labels.map((l, i) => (labels.indexOf(l) !== i || labels.lastIndexOf(l) !== i ? `arg${i}` : l))
}

/**
 * Which file TypeScript reads for `import './<name>.cu'`: `cu.d.ts` (`<name>.cu.d.ts`) under
 * `moduleResolution: bundler` (and node10) with no other setting; `d.cu.ts` (`<name>.d.cu.ts`) under `node16` and
 * `nodenext`, and under `bundler` too, when `allowArbitraryExtensions` is set. Only one may exist: where both
 * do, TypeScript picks `<name>.d.cu.ts` and fails without `allowArbitraryExtensions` (TS6263, checked with
 * TypeScript 5.9).
 */
export type DeclarationForm = 'cu.d.ts' | 'd.cu.ts'

export const DECLARATION_FORMS: readonly DeclarationForm[] = ['cu.d.ts', 'd.cu.ts']

/** The declaration file of `<dir>/<name>.cu` in `form`: `<dir>/<name>.cu.d.ts` or `<dir>/<name>.d.cu.ts`. */
export function declarationPath(cuFile: string, form: DeclarationForm = 'cu.d.ts'): string {
  if (form === 'cu.d.ts') return `${cuFile}.d.ts`
  const slash = Math.max(cuFile.lastIndexOf('/'), cuFile.lastIndexOf('\\'))
  const base = cuFile.slice(slash + 1)
  const dot = base.lastIndexOf('.')
  if (dot <= 0) return `${cuFile}.d.ts`
  return `${cuFile.slice(0, slash + 1)}${base.slice(0, dot)}.d${base.slice(dot)}.ts`
}

const HEADER = '// Generated by kernelpack from '

/** True for a declaration file kernelpack (or unplugin-cuda 0.1) wrote, which it may replace or remove. */
export function isGeneratedDeclaration(text: string): boolean {
  return text.startsWith(HEADER) || text.startsWith('// Generated by unplugin-cuda from ')
}

/** What to do on disk so that `cuFile`'s declaration is `text` in `form`: write it where it differs, and remove
 *  a generated declaration of the other form (TypeScript would read that one first, see DeclarationForm).
 *  `read` returns a file's text, or undefined when there is none. Pure: the caller writes and removes. */
export function planDeclarationFiles(cuFile: string, text: string, form: DeclarationForm, read: (path: string) => string | undefined): { write?: string; remove: string[] } {
  const path = declarationPath(cuFile, form)
  const remove = DECLARATION_FORMS.filter((f) => f !== form).map((f) => declarationPath(cuFile, f)).filter((p) => {
    const old = read(p)
    return old !== undefined && isGeneratedDeclaration(old)
  })
  return read(path) === text ? { remove } : { write: path, remove }
}

/** The .d.ts text for one `.cu` file. */
export function emitLoaderDts(options: EmitDtsOptions): string {
  const runtime = options.runtime ?? '@kernelpack/runtime'
  const exports = nameKernelExports(options.manifest, options.name)
  const named = valueTypeNames(options.manifest)
  const lines: string[] = [
    `${HEADER}${jsString(options.name)} (\`kernelpack types\`, or unplugin-cuda at build time). Do not edit.`,
    `import type { DevicePointer, KernelModule, Launcher, StructArg${named.size ? ', ValueCodec' : ''} } from ${jsString(runtime)};`,
    '',
  ]
  // the C++ structs and unions the kernels take by value, as the compiler laid them out
  const declared = new Map<string, ValueType>()
  const collect = (v: ValueType) => {
    if (v.kind === 'array') return collect(v.elem)
    if (v.kind === 'scalar') return
    for (const f of v.fields) collect(f.type)
    if (v.name && !declared.has(v.name)) declared.set(v.name, v)
  }
  for (const k of options.manifest.kernels) for (const p of k.params) if (p.valueType) collect(p.valueType)
  for (const [cpp, v] of declared) {
    if (v.kind === 'scalar' || v.kind === 'array') continue
    lines.push(`/** C++ \`${jsComment(cpp)}\`: ${v.size} bytes, aligned to ${v.align}${v.kind === 'union' ? ' (a union: one member, or its bytes)' : ''}. */`)
    lines.push(`export type ${named.get(cpp)!} = ${valueTsType(v, named, true)};`)
  }
  if (declared.size) lines.push('')
  for (const e of exports) {
    const cpp = kernelParamTypes(e.kernel)
    const labels = paramLabels(e.kernel.params)
    const args = e.kernel.params.map((p, i) => {
      const c = cpp.length === e.kernel.params.length ? cpp[i] : undefined
      return `${labels[i]}: ${paramTsType(p, c, named)}`
    })
    const notes = e.kernel.params.flatMap((p, i) => (p.valueTypeNote ? [`parameter ${labels[i]} takes its bytes: ${p.valueTypeNote}`] : []))
    lines.push(`/** \`${jsComment(e.fullName)}\` (PTX entry \`${jsComment(e.kernel.name)}\`)${e.note ? `: ${e.note}` : ''}${notes.length ? `. ${jsComment(notes.join('; '))}` : ''} */`)
    lines.push(`export declare const ${e.exportName}: Launcher<[${args.join(', ')}]>;`)
  }
  if (exports.length) lines.push('')
  lines.push('export declare const kernels: {')
  for (const e of exports) lines.push(`  readonly ${jsString(e.fullName)}: typeof ${e.exportName};`)
  lines.push('};')
  if (named.size) {
    lines.push('export declare const module: KernelModule & {')
    lines.push('  readonly types: {')
    for (const [cpp, id] of named) lines.push(`    readonly ${jsString(cpp)}: ValueCodec<${id}>;`)
    lines.push('  };')
    lines.push('};')
  } else lines.push('export declare const module: KernelModule;')
  lines.push('export default kernels;')
  return lines.join('\n') + '\n'
}
