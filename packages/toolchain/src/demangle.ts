// Demangles Itanium C++ names (the PTX `.entry` names of C++ kernels, the device front end's type names) with
// the system's demangler, `c++filt` (GNU binutils, present wherever gcc is), reading one name per line on
// stdin and writing one per line; LLVM's `llvm-cxxfilt` speaks the same protocol and is the fallback.
// One process serves the whole build: c++filt answers each line as it reads it, so the process started for
// the first batch (and its probe) stays, unref'd, for the next ones (a process start costs the build more
// than the demangling). A demangler that does not answer line by line gets one process per batch instead.
// Never one process per name: a file with 200 template instantiations would otherwise spawn 200 processes.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { execa } from 'execa'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'

/** Demanglers tried in order; the first that exists and runs wins. */
const candidates = ['c++filt', '/usr/lib/llvm-22/bin/llvm-cxxfilt', 'llvm-cxxfilt-22', 'llvm-cxxfilt']

/** How long a probe or a batch may take before the demangler is given up on. */
const TIMEOUT_MS = 60_000

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

/** A demangler process kept for the build: batches go one at a time, each answered line for line. */
class LineDemangler {
  private readonly child: ChildProcessWithoutNullStreams
  private buffered = ''
  private waiting: { lines: string[]; count: number; resolve: (lines: string[] | undefined) => void; timer: NodeJS.Timeout } | undefined
  private queue: Promise<unknown> = Promise.resolve()
  dead = false

  constructor(path: string) {
    this.child = spawn(path, [], { stdio: 'pipe', env: { ...process.env, LC_ALL: 'C' } })
    const end = () => { this.dead = true; this.finish(undefined) }
    this.child.on('error', end)
    this.child.on('exit', end)
    this.child.stdin.on('error', end)
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => this.read(chunk))
    // the build may end with it running: it reads EOF when we exit
    this.child.unref()
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr] as unknown as Array<{ unref?: () => void }>) s.unref?.()
    this.child.stderr.resume()
  }

  private read(chunk: string): void {
    this.buffered += chunk
    const w = this.waiting
    if (!w) return
    let nl: number
    while (w.lines.length < w.count && (nl = this.buffered.indexOf('\n')) >= 0) {
      w.lines.push(this.buffered.slice(0, nl))
      this.buffered = this.buffered.slice(nl + 1)
    }
    if (w.lines.length === w.count) this.finish(w.lines)
  }

  /** While a batch is out, its answer keeps the process alive; between batches the demangler does not. */
  private hold(on: boolean): void {
    const out = this.child.stdout as unknown as { ref?: () => void; unref?: () => void }
    if (on) out.ref?.()
    else out.unref?.()
  }

  private finish(lines: string[] | undefined): void {
    const w = this.waiting
    if (!w) return
    this.waiting = undefined
    clearTimeout(w.timer)
    this.hold(false)
    w.resolve(lines)
  }

  close(): void {
    this.dead = true
    this.child.kill()
    this.finish(undefined)
  }

  /** The demangled names, or undefined when the process failed or did not answer in time. */
  demangle(names: readonly string[]): Promise<string[] | undefined> {
    const run = () => new Promise<string[] | undefined>((resolve) => {
      if (this.dead) { resolve(undefined); return }
      const timer = setTimeout(() => this.close(), TIMEOUT_MS) as unknown as NodeJS.Timeout
      timer.unref()
      this.waiting = { lines: [], count: names.length, resolve, timer }
      this.hold(true)
      this.child.stdin.write(names.join('\n') + '\n')
    })
    const p = this.queue.then(run)
    this.queue = p.catch(() => undefined)
    return p
  }
}

/** The demangler: a kept process where the tool answers line by line, else its path for one process per
 *  batch; undefined when there is none. */
let demangler: Promise<{ line?: LineDemangler; path: string } | undefined> | undefined

function findDemangler(): Promise<{ line?: LineDemangler; path: string } | undefined> {
  demangler ??= (async () => {
    for (const c of candidates) {
      const p = which(c)
      if (!p) continue
      // A probe proves the tool runs (a broken symlink or a foreign binary would not echo this back), and
      // that it answers a line before its input ends.
      const line = new LineDemangler(p)
      const probe = await Promise.race([line.demangle(['_Z1fi']), new Promise<undefined>((r) => (setTimeout(r, 5_000) as unknown as NodeJS.Timeout).unref())])
      if (probe?.[0] === 'f(int)') return { line, path: p }
      line.close()
      const r = await execa(p, [], { input: '_Z1fi\n', reject: false, timeout: 10_000 })
      if (r.exitCode === 0 && r.stdout.trim() === 'f(int)') return { path: p }
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
      let lines = tool.line && !tool.line.dead ? await tool.line.demangle(safe) : undefined
      if (!lines) {
        const r = await execa(tool.path, [], { input: safe.join('\n') + '\n', reject: false, timeout: TIMEOUT_MS, stripFinalNewline: true })
        lines = r.exitCode === 0 ? r.stdout.split('\n') : []
      }
      if (lines.length === safe.length) safe.forEach((n, i) => memo.set(n, lines[i]!))
    }
  }
  return names.map((n) => {
    const d = demanglable(n)
    return memo.get(d) ?? (d === n ? n : d)
  })
}
