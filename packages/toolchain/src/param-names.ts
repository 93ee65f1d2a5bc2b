// Kernel parameter names from the CUDA source (issue 16: a launcher typed `(n: number, a: number, x, y)`
// reads better than `(arg0, arg1, arg2, arg3)`). PTX keeps no names (`saxpy_param_0`), so they come from
// the `__global__` declarations of the .cu file: comments, strings and preprocessor lines are blanked, each
// `__global__ … name(params)` is read, and its parameter list split at top-level commas. A name is only
// given where it is unambiguous: a definition (with a body) wins over prototypes and explicit
// instantiations, and overloads of one name with the same parameter count must agree.
import { readFileSync } from 'node:fs'
import type { KernelInfo, KernelManifest, ParamInfo } from '@kernelpack/offload'

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/

// Words that may end a parameter's type but are never its name.
const NOT_NAMES = new Set([
  'const', 'volatile', 'restrict', '__restrict__', '__restrict', 'unsigned', 'signed', 'int', 'char', 'short', 'long', 'float',
  'double', 'bool', 'void', 'auto', 'struct', 'class', 'union', 'enum', 'typename', '__grid_constant__', '__half', 'half',
  'size_t', 'int8_t', 'int16_t', 'int32_t', 'int64_t', 'uint8_t', 'uint16_t', 'uint32_t', 'uint64_t',
])

/** Comments, string and character literals and preprocessor lines replaced by spaces (offsets kept). */
function blankNonCode(text: string): string {
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*/gm, (m) => m.replace(/[^\n]/g, ' '))
}

/** Index of the bracket closing the one at `open` (`(`, `<`, `[`, `{`), or -1. */
function closing(s: string, open: number): number {
  const pairs: Record<string, string> = { '(': ')', '[': ']', '{': '}', '<': '>' }
  const stack: string[] = []
  for (let i = open; i < s.length; i++) {
    const c = s[i]!
    if (c in pairs) {
      // `<` opens a template argument list only right after the name (at `open`); elsewhere inside
      // parentheses it may be a comparison in a default argument.
      if (c === '<' && i !== open && stack[stack.length - 1] !== '>') continue
      stack.push(pairs[c]!)
    } else if (c === stack[stack.length - 1]) {
      stack.pop()
      if (stack.length === 0) return i
    } else if (c === ';' && stack[0] !== '}') return -1
  }
  return -1
}

function splitTopLevel(s: string): string[] {
  const out: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === '(' || c === '[' || c === '{' || c === '<') depth++
    else if (c === ')' || c === ']' || c === '}' || c === '>') depth--
    else if (c === ',' && depth === 0) { out.push(s.slice(start, i)); start = i + 1 }
  }
  out.push(s.slice(start))
  return out.map((p) => p.trim()).filter((p, i, all) => !(all.length === 1 && (p === '' || p === 'void')))
}

/** The declared name of one parameter (`const float *__restrict__ x` → `x`), or undefined when unnamed. */
export function parameterName(decl: string): string | undefined {
  let d = decl.replace(/=[\s\S]*$/, '').trim() // default argument
  // a function pointer `void (*cb)(int)`: the name sits in the first parenthesised group
  const fp = /\(\s*[*&]\s*([A-Za-z_]\w*)\s*\)\s*\(/.exec(d)
  if (fp) return fp[1]
  d = d.replace(/\[[^\]]*\]\s*$/g, '').replace(/\[[^\]]*\]/g, '').trim() // array declarators
  d = d.replace(/<[^<>]*(?:<[^<>]*>[^<>]*)*>/g, ' ') // template arguments of the type
  const words = d.split(/[\s*&]+/).filter(Boolean)
  if (words.length < 2) return undefined
  const last = words[words.length - 1]!
  if (!IDENT.test(last) || NOT_NAMES.has(last) || last.includes('::')) return undefined
  return last
}

// Arithmetic types: a parameter declared with only these (and qualifiers) is no pointer, whatever its PTX
// type (`size_t n` is a .u64 like a pointer). Typedef names are not known here, so they settle nothing.
const ARITHMETIC = new Set([
  'unsigned', 'signed', 'int', 'char', 'short', 'long', 'float', 'double', 'bool', 'size_t', 'ptrdiff_t', 'intptr_t', 'uintptr_t',
  'int8_t', 'int16_t', 'int32_t', 'int64_t', 'uint8_t', 'uint16_t', 'uint32_t', 'uint64_t', '__int128', 'std::size_t',
])
const QUALIFIERS = new Set(['const', 'volatile', 'restrict', '__restrict__', '__restrict', '__grid_constant__', 'register'])

/** Whether a parameter declaration is a pointer (or reference): true for a `*`, `&` or `[]`, false when
 *  its type is made of arithmetic types only, undefined when the source does not tell (a typedef). */
export function parameterIsPointer(decl: string): boolean | undefined {
  const d = decl.replace(/=[\s\S]*$/, '').replace(/<[^<>]*(?:<[^<>]*>[^<>]*)*>/g, ' ')
  if (/[*&[]/.test(d)) return true // an array parameter is a pointer (C decays it)
  const name = parameterName(decl)
  const words = d.replace(/\[[^\]]*\]/g, ' ').split(/\s+/).filter((w) => w && w !== name && !QUALIFIERS.has(w))
  return words.length > 0 && words.every((w) => ARITHMETIC.has(w)) ? false : undefined
}

interface Param { name: string | undefined; pointer: boolean | undefined; text: string }
interface Declaration { params: Param[]; definition: boolean }

/** Every `__global__` function declared in `source`: its name and parameter names (undefined where unnamed). */
export function readKernelDeclarations(source: string): Map<string, Declaration[]> {
  const s = blankNonCode(source)
  const out = new Map<string, Declaration[]>()
  for (const m of s.matchAll(/\b__global__\b/g)) {
    // the name: the first identifier followed by `(` or `<…>(`, skipping attributes like __launch_bounds__(…)
    let i = m.index! + m[0].length
    for (;;) {
      const word = /\s*([A-Za-z_][\w:]*)\s*/y
      word.lastIndex = i
      const w = word.exec(s)
      if (!w) break
      let j = word.lastIndex
      if (s[j] === '<') {
        const end = closing(s, j)
        if (end < 0) break
        j = end + 1
        while (/\s/.test(s[j] ?? '')) j++
      }
      if (s[j] !== '(') { i = word.lastIndex; continue }
      const close = closing(s, j)
      if (close < 0) break
      const name = w[1]!
      if (/^(__launch_bounds__|__cluster_dims__|__maxnreg__|__attribute__|alignas|__declspec)$/.test(name)) { i = close + 1; continue }
      let k = close + 1
      while (k < s.length && s[k] !== '{' && s[k] !== ';') k++
      const base = name.slice(name.lastIndexOf(':') + 1)
      const list = out.get(base) ?? []
      list.push({ params: splitTopLevel(s.slice(j + 1, close)).map((p) => ({ name: parameterName(p), pointer: parameterIsPointer(p), text: p })), definition: s[k] === '{' })
      out.set(base, list)
      break
    }
  }
  return out
}

/** The name a kernel has in the source: `saxpy`, or `scale` for `void ns::scale<float>(float*, int)`. */
function baseName(k: KernelInfo): string {
  if (k.demangled === k.name) return k.name
  let s = k.demangled.trim()
  // the parameter list is the last top-level parenthesised group (a parameter may be a function pointer)
  if (s.endsWith(')')) {
    let depth = 0
    for (let i = s.length - 1; i >= 0; i--) {
      if (s[i] === ')') depth++
      else if (s[i] === '(' && --depth === 0) { s = s.slice(0, i); break }
    }
  }
  // drop template arguments, then the return type and qualifiers
  let depth = 0
  let plain = ''
  for (const c of s) {
    if (c === '<') depth++
    else if (c === '>') depth--
    else if (depth === 0) plain += c
  }
  plain = plain.trim()
  return plain.slice(Math.max(plain.lastIndexOf(' '), plain.lastIndexOf(':')) + 1)
}

/** Parameter names (and pointer-ness) for `kernel` from the declarations, when the source settles them. */
function paramsFor(kernel: KernelInfo, decls: Map<string, Declaration[]>): Param[] | undefined {
  const all = (decls.get(baseName(kernel)) ?? []).filter((d) => d.params.length === kernel.params.length)
  const defs = all.filter((d) => d.definition)
  const pick = defs.length ? defs : all.filter((d) => d.params.every((p) => p.name !== undefined))
  if (pick.length === 0) return undefined
  const first = pick[0]!.params
  if (pick.some((d) => d.params.some((p, i) => p.name !== first[i]!.name || p.pointer !== first[i]!.pointer))) return undefined
  const names = first.map((p) => p.name)
  if (names.some((n) => n === undefined) || new Set(names).size !== names.length) return undefined
  return first
}

/**
 * The manifest with `sourceName` set on the parameters of every kernel whose declaration `sources` (the .cu
 * file and the project's own headers) settle, and `pointer` where the PTX and the mangled name left it open
 * (extern "C" kernels: `float *x` is a pointer, `size_t n` is not); other kernels are left as they are.
 * Returns a new manifest.
 */
export function nameKernelParams(manifest: KernelManifest, sources: readonly string[]): KernelManifest {
  const decls = new Map<string, Declaration[]>()
  for (const src of sources) for (const [k, v] of readKernelDeclarations(src)) decls.set(k, [...(decls.get(k) ?? []), ...v])
  return {
    ...manifest,
    kernels: manifest.kernels.map((k) => {
      const found = paramsFor(k, decls)
      if (!found) return k
      return {
        ...k,
        params: k.params.map((p, i) => {
          const q: ParamInfo = { ...p, sourceName: found[i]!.name! }
          if (q.pointer === undefined && found[i]!.pointer !== undefined) q.pointer = found[i]!.pointer
          return q
        }),
      }
    }),
  }
}

// Words of a parameter's type that make it a scalar (or say nothing about its kind).
const SCALAR_WORDS = new Set([
  'const', 'volatile', 'unsigned', 'signed', 'int', 'char', 'short', 'long', 'float', 'double', 'bool', '__grid_constant__',
  'size_t', 'ptrdiff_t', 'int8_t', 'int16_t', 'int32_t', 'int64_t', 'uint8_t', 'uint16_t', 'uint32_t', 'uint64_t', 'uint', 'ushort', 'ulong',
  'std', 'restrict', '__restrict__', '__restrict',
])

/**
 * Whether a `__global__` declaration of the .cu file `file` may take a struct, class, union or vector type
 * by value: a parameter that is no pointer and names a type other than the built-in scalars and the file's
 * template type parameters. A guess, to start the host compile for their layouts early (a wrong guess costs
 * one compile beside the others, a missed one runs it after them); the manifest decides. False when the
 * file cannot be read.
 */
export function mayTakeAggregates(file: string): boolean {
  let text: string
  try { text = readFileSync(file, 'utf8') } catch { return false }
  if (!text.includes('__global__')) return false
  // template type parameters (`template <typename T>`) are most often scalars: not a reason to guess
  const templateParams = new Set<string>()
  for (const m of blankNonCode(text).matchAll(/\btemplate\s*<([^>]*)>/g)) {
    for (const p of m[1]!.matchAll(/\b(?:typename|class)\s+([A-Za-z_]\w*)/g)) templateParams.add(p[1]!)
  }
  for (const decls of readKernelDeclarations(text).values()) {
    for (const d of decls) {
      for (const p of d.params) {
        if (p.pointer === true || /[*&]/.test(p.text)) continue
        const words = (p.text.match(/[A-Za-z_]\w*/g) ?? []).filter((w) => w !== p.name)
        if (words.some((w) => !SCALAR_WORDS.has(w) && !templateParams.has(w))) return true
      }
    }
  }
  return false
}
