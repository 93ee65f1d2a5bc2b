// Reads the kernel manifest (packages/offload/src/manifest.ts) from PTX text: every `.entry` with its
// linkage, parameters and performance directives, every module-scope `.global` / `.const` variable.
// Grammar per the PTX ISA ("Kernel and Function Directives", "Parameter State Space", "Variable
// Declarations", "Performance-Tuning Directives"). Only module scope matters here: function bodies, debug
// `.section`s and initializers are skipped by brace matching.
import type { KernelInfo, KernelManifest, Linkage, ParamInfo, VariableInfo } from '@kernelpack/offload'
import { demangleNames } from './demangle.js'

export interface ReadPtxManifestOptions {
  /** Fill `demangled` through c++filt / llvm-cxxfilt (one process for all names).
   * @default true */
  demangle?: boolean
}

/** A PTX text that cannot be read as a module; carries the 1-based line of the problem. */
export class PtxParseError extends Error {
  override name = 'PtxParseError'
  constructor(message: string, public line: number) {
    super(`${message} (PTX line ${line})`)
  }
}

/** Byte size of a PTX fundamental type (`.u32` → 4). `.pred` has no memory size; use 1 like ptxas. */
const typeSize: Record<string, number> = {
  b8: 1, s8: 1, u8: 1, e4m3x2: 2, e5m2x2: 2,
  b16: 2, s16: 2, u16: 2, f16: 2, bf16: 2,
  b32: 4, s32: 4, u32: 4, f32: 4, f16x2: 4, bf16x2: 4, tf32: 4,
  b64: 8, s64: 8, u64: 8, f64: 8,
  b128: 16, pred: 1,
}

/** One module-scope statement: its text (comments removed, whitespace collapsed) and first line. */
interface Statement { text: string; line: number }

/**
 * Splits PTX into module-scope statements. A statement ends at `;` or, for a function/entry header, at the
 * `{` of its body (the body is skipped). `= { … }` initializers stay part of their statement. Comments
 * (`//`, `/* … *\/`) and string literals (`.file 1 "a//b.cu"`) are honoured.
 */
function splitStatements(ptx: string): Statement[] {
  const out: Statement[] = []
  let cur = ''
  let line = 1
  let startLine = 1
  let depth = 0 // brace depth inside a skipped body
  let init = 0 // brace depth inside an initializer
  const n = ptx.length
  for (let i = 0; i < n; i++) {
    const c = ptx[i]!
    if (c === '\n') {
      line++
      // `.version`, `.target`, `.address_size` and `.file` end at the line's end, without `;`.
      if (depth === 0 && init === 0 && /^\s*\.(?:version|target|address_size|file)\b/.test(cur)) {
        out.push({ text: collapse(cur), line: startLine })
        cur = ''
      }
    }
    if (c === '/' && ptx[i + 1] === '/') {
      while (i < n && ptx[i] !== '\n') i++
      i--
      continue
    }
    if (c === '/' && ptx[i + 1] === '*') {
      const end = ptx.indexOf('*/', i + 2)
      const stop = end < 0 ? n : end + 2
      for (let j = i; j < stop; j++) if (ptx[j] === '\n') line++
      i = stop - 1
      if (depth === 0) cur += ' '
      continue
    }
    if (c === '"') {
      let j = i + 1
      while (j < n && ptx[j] !== '"') {
        if (ptx[j] === '\\') j++
        if (ptx[j] === '\n') line++
        j++
      }
      if (depth === 0) cur += ptx.slice(i, j + 1)
      i = j
      continue
    }
    if (depth > 0) {
      if (c === '{') depth++
      else if (c === '}') depth--
      continue
    }
    if (c === '{') {
      if (init > 0 || /=\s*$/.test(cur)) { init++; cur += c; continue }
      // A body (entry, func, `.section`): the statement is its header.
      if (cur.trim()) out.push({ text: collapse(cur), line: startLine })
      cur = ''
      depth = 1
      continue
    }
    if (c === '}' && init > 0) { init--; cur += c; continue }
    if (c === ';' && init === 0) {
      if (cur.trim()) out.push({ text: collapse(cur), line: startLine })
      cur = ''
      continue
    }
    if (!cur.trim()) startLine = line
    cur += c
  }
  if (cur.trim()) out.push({ text: collapse(cur), line: startLine })
  return out
}

function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim()
}

const linkageWords = new Set(['visible', 'weak', 'extern', 'common'])

/** Leading `.visible` / `.weak` / `.extern` / `.common` words; internal when none (PTX's default). */
function readLinkage(tokens: string[]): { linkage: Linkage; rest: string[] } {
  let linkage: Linkage = 'internal'
  let i = 0
  while (i < tokens.length && linkageWords.has(tokens[i]!.slice(1))) linkage = tokens[i++]!.slice(1) as Linkage
  return { linkage, rest: tokens.slice(i) }
}

/** Splits a declaration into tokens, keeping `[N]`, `.attribute(…)` and `= …` attached sensibly. */
function tokenize(decl: string): string[] {
  return decl.replace(/\s*\[\s*/g, '[').replace(/\s*\]/g, ']').replace(/\.attribute\s*\(\s*([^)]*?)\s*\)/g, '.attribute($1)')
    .split(' ').filter(Boolean)
}

interface Declared { type: string; size: number; align: number; name: string; count?: number; pointer?: boolean; pointeeAlign?: number; space?: string; attributes?: string[] }

/** Reads `[.ptr] [.space] [.align A] [.vN] .type name[dims]` in any order (clang writes
 *  `.u64 .ptr .global .align 1 p`, nvcc `.align 8 .b8 s[24]`). */
function readDeclaration(tokens: string[], where: number): Declared {
  let align: number | undefined
  let vector = 1
  let type: string | undefined
  let name: string | undefined
  let pointer = false
  let pointee: number | undefined
  let space: string | undefined
  const attributes: string[] = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!
    if (t === '.align') {
      const a = Number(tokens[++i])
      if (!Number.isInteger(a) || a <= 0) throw new PtxParseError(`bad .align value '${tokens[i]}'`, where)
      // After `.ptr`, `.align` is the alignment of the memory pointed to, not of the parameter itself
      // (PTX ISA, "Kernel Function Parameter Attribute: .ptr").
      if (pointer) pointee = a
      else align = a
    } else if (t === '.ptr') pointer = true
    else if (/^\.v[248]$/.test(t)) vector = Number(t.slice(2))
    else if (t.startsWith('.attribute(')) attributes.push(t.slice('.attribute('.length, -1).replace(/^\./, ''))
    else if (t === '.global' || t === '.const' || t === '.shared' || t === '.local' || t === '.param') space = t.slice(1)
    else if (t.startsWith('.') && typeSize[t.slice(1)] !== undefined && type === undefined) type = t.slice(1)
    else if (t.startsWith('.')) continue // other qualifiers (.texref, .noreturn…) do not change the size here
    else { name = t; break }
  }
  if (!type || !name) throw new PtxParseError(`cannot read declaration '${tokens.join(' ')}'`, where)
  const dims = [...name.matchAll(/\[(\d*)\]/g)].map((m) => (m[1] === '' ? 0 : Number(m[1])))
  const base = name.replace(/\[.*$/, '')
  const elem = typeSize[type]! * vector
  const count = dims.length ? dims.reduce((a, b) => a * b, 1) : undefined
  const d: Declared = { type, size: elem * (count ?? 1), align: align ?? elem, name: base }
  if (count !== undefined) d.count = count
  if (pointer) d.pointer = true
  if (pointee !== undefined) d.pointeeAlign = pointee
  if (space) d.space = space
  if (attributes.length) d.attributes = attributes
  return d
}

function readTriple(text: string, directive: string): [number, number, number] | undefined {
  const m = new RegExp(`\\.${directive}\\s+(\\d+)(?:\\s*,\\s*(\\d+))?(?:\\s*,\\s*(\\d+))?`).exec(text)
  if (!m) return undefined
  return [Number(m[1]), m[2] ? Number(m[2]) : 1, m[3] ? Number(m[3]) : 1]
}

function readScalar(text: string, directive: string): number | undefined {
  const m = new RegExp(`\\.${directive}\\s+(\\d+)`).exec(text)
  return m ? Number(m[1]) : undefined
}

/** Splits a demangled signature's parameter list at top-level commas: `f<a, b>(int, S<c, d>*)` →
 *  [`int`, `S<c, d>*`]. Undefined when the name has no parameter list (extern "C"). */
function signatureParams(demangled: string): string[] | undefined {
  if (!demangled.endsWith(')')) return undefined
  let depth = 0
  let open = -1
  for (let i = demangled.length - 1; i >= 0; i--) {
    const c = demangled[i]
    if (c === ')') depth++
    else if (c === '(') { depth--; if (depth === 0) { open = i; break } }
  }
  if (open < 0) return undefined
  const inner = demangled.slice(open + 1, -1).trim()
  if (inner === '' || inner === 'void') return []
  const parts: string[] = []
  let cur = ''
  depth = 0
  for (const c of inner) {
    if (c === '<' || c === '(' || c === '[') depth++
    else if (c === '>' || c === ')' || c === ']') depth--
    if (c === ',' && depth === 0) { parts.push(cur.trim()); cur = ''; continue }
    cur += c
  }
  parts.push(cur.trim())
  return parts
}

/** A C++ parameter type that is passed as a pointer: `T*`, `T* const`, `T* __restrict`, `void (*)(…)`. */
function isPointerType(t: string): boolean {
  const s = t.replace(/(?:\s+(?:const|volatile|__restrict|restrict))+$/, '')
  return s.endsWith('*') || /\(\*+\)/.test(s)
}

/**
 * Reads the kernel manifest from PTX text (nvcc's or clang's). `demangled` comes from one c++filt process
 * for all names; pointer parameters are marked from `.ptr` (clang) or from the demangled C++ signature when
 * its parameter count matches the PTX's (zero-sized parameters vanish from PTX, so a mismatch means unknown).
 */
export async function readPtxManifest(ptx: string, options: ReadPtxManifestOptions = {}): Promise<KernelManifest> {
  const kernels: KernelInfo[] = []
  const variables: VariableInfo[] = []
  for (const st of splitStatements(ptx)) {
    const text = st.text
    const entry = /^((?:\.\w+\s+)*)\.entry\s+([\w$%]+)\s*(?:\(([^)]*)\))?(.*)$/.exec(text)
    if (entry) {
      const { linkage } = readLinkage(tokenize(entry[1]!.trim()))
      const params: ParamInfo[] = []
      const list = (entry[3] ?? '').trim()
      if (list) {
        for (const p of list.split(',')) {
          const tokens = tokenize(p.trim())
          if (tokens[0] !== '.param') throw new PtxParseError(`kernel ${entry[2]}: expected .param, found '${p.trim()}'`, st.line)
          const d = readDeclaration(tokens.slice(1), st.line)
          const info: ParamInfo = { name: d.name, type: d.type, size: d.size, align: d.align }
          if (d.count !== undefined) info.count = d.count
          if (d.pointer) info.pointer = true
          params.push(info)
        }
      }
      const k: KernelInfo = { name: entry[2]!, demangled: entry[2]!, linkage, params }
      const tail = entry[4] ?? ''
      const maxntid = readTriple(tail, 'maxntid')
      const reqntid = readTriple(tail, 'reqntid')
      const minnctapersm = readScalar(tail, 'minnctapersm') ?? readScalar(tail, 'minnctasm')
      const maxnreg = readScalar(tail, 'maxnreg')
      if (maxntid) k.maxntid = maxntid
      if (reqntid) k.reqntid = reqntid
      if (minnctapersm !== undefined) k.minnctapersm = minnctapersm
      if (maxnreg !== undefined) k.maxnreg = maxnreg
      kernels.push(k)
      continue
    }
    const tokens = tokenize(text.replace(/\s*=[\s\S]*$/, ''))
    const { linkage, rest } = readLinkage(tokens)
    if (rest[0] !== '.global' && rest[0] !== '.const') continue
    // `.global .texref t;` / `.surfref` / `.samplerref` are opaque handles, not memory the runtime sizes.
    if (rest.some((t) => t === '.texref' || t === '.surfref' || t === '.samplerref')) continue
    const d = readDeclaration(rest.slice(1), st.line)
    const v: VariableInfo = { name: d.name, space: rest[0].slice(1) as 'global' | 'const', size: d.size, linkage, align: d.align }
    const extra = v as VariableInfo & { type?: string; count?: number; managed?: boolean }
    extra.type = d.type
    if (d.count !== undefined) extra.count = d.count
    if (d.attributes?.includes('managed')) extra.managed = true
    variables.push(v)
  }
  if (options.demangle !== false && kernels.length > 0) {
    const names = await demangleNames(kernels.map((k) => k.name))
    kernels.forEach((k, i) => {
      k.demangled = names[i]!
      const sig = signatureParams(k.demangled)
      if (sig && sig.length === k.params.length) {
        k.params.forEach((p, j) => { if (isPointerType(sig[j]!)) p.pointer = true })
      }
    })
  }
  return { version: 1, kernels, variables }
}
