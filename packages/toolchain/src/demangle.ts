// Demangles Itanium C++ names (the PTX `.entry` names of C++ kernels) with the system's demangler: one
// `c++filt` process (GNU binutils, present wherever gcc is) for a whole batch of names, reading one name per
// line on stdin and writing one per line; LLVM's `llvm-cxxfilt` speaks the same protocol and is the fallback.
// Never one process per name: a file with 200 template instantiations would otherwise spawn 200 processes.
import { execa } from 'execa'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'

/** Demanglers tried in order; the first that exists and runs wins. */
const candidates = ['c++filt', '/usr/lib/llvm-22/bin/llvm-cxxfilt', 'llvm-cxxfilt-22', 'llvm-cxxfilt']

let demangler: Promise<string | undefined> | undefined
const memo = new Map<string, string>()

function which(name: string): string | undefined {
  if (name.includes('/')) return existsSync(name) ? name : undefined
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    const p = join(dir, name)
    if (existsSync(p)) return p
  }
  return undefined
}

function findDemangler(): Promise<string | undefined> {
  demangler ??= (async () => {
    for (const c of candidates) {
      const p = which(c)
      if (!p) continue
      // A probe proves the tool runs (a broken symlink or a foreign binary would not echo this back).
      const r = await execa(p, [], { input: '_Z1fi\n', reject: false, timeout: 10_000 })
      if (r.exitCode === 0 && r.stdout.trim() === 'f(int)') return p
    }
    return undefined
  })()
  return demangler
}

/** `__nv_static_<len>_<len chars>_<mangled>`: nvcc's prefix for internal-linkage symbols in RDC mode
 *  (FINDINGS.md §1.6). Returns the mangled part, or undefined when the name has no such prefix. */
function stripNvStatic(name: string): string | undefined {
  const m = /^__nv_static_(\d+)_/.exec(name)
  if (!m) return undefined
  const start = m[0].length + Number(m[1])
  if (name[start] !== '_' || start + 1 >= name.length) return undefined
  return name.slice(start + 1)
}

/** The part of a name the demangler understands: without nvcc's `__nv_static_…_` prefix and without clang's
 *  `__intern__<cuid>` / `__static__<cuid>` suffix for internal entities (FINDINGS.md §3). */
function demanglable(name: string): string {
  const inner = stripNvStatic(name) ?? name
  return inner.replace(/__(?:intern|static)__[0-9a-f]+$/, '')
}

/**
 * Demangles every name with one demangler process. Names that are not mangled (extern "C" kernels) come back
 * unchanged, as they do when no demangler is installed at all (the manifest stays usable; only the
 * `demangled` field then repeats the mangled name).
 */
export async function demangleNames(names: readonly string[]): Promise<string[]> {
  const todo = [...new Set(names.map(demanglable).filter((n) => n.startsWith('_Z') && !memo.has(n)))]
  if (todo.length > 0) {
    const tool = await findDemangler()
    // A name with a newline cannot come from PTX (identifiers are [A-Za-z0-9_$%]); guard anyway so one line
    // in is always one line out.
    const safe = todo.filter((n) => !/[\r\n]/.test(n))
    if (tool && safe.length > 0) {
      const r = await execa(tool, [], { input: safe.join('\n') + '\n', reject: false, timeout: 60_000, stripFinalNewline: true })
      const lines = r.exitCode === 0 ? r.stdout.split('\n') : []
      if (lines.length === safe.length) safe.forEach((n, i) => memo.set(n, lines[i]!))
    }
  }
  return names.map((n) => {
    const d = demanglable(n)
    return memo.get(d) ?? (d === n ? n : d)
  })
}
