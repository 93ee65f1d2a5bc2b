// One device compile = one compiler process for one target (Node's spawn, an argument array, never a shell):
//   nvcc  [-c] -cubin|-ptx -arch=<target> … -Xcompiler -MD,-MF,<deps> (with a launcher: -MD -MF <deps>) -o <out> <file>
//   clang -x cuda --cuda-device-only --offload-arch=<sm> -c|-S --cuda-path=<toolkit> … -MD -MF <deps> -o <out> <file>
// The dependency list comes from `-MD -MF` of the same process (no separate preprocessing pass).
// nvcc hands paths to its sub-tools through a shell (a source named `a $(x).cu` runs `x`), so for nvcc a
// path with shell-special characters is compiled through a staged one-line file that #includes it, and
// include directories through symlinks; messages and dependencies are mapped back to the user's paths.
import { execa } from 'execa'
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, renameSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { removeStaleTemps, tempPathFor, writeFileIfChanged } from './atomic-write.js'
import { howItEnded, spawnAll } from './processes.js'
import { processWorkDir, scratchRoot, shellSafe } from './scratch.js'
import type { Target } from './arch-spec.js'
import { parseDepFile } from './deps.js'
import { dedupeDiagnostics, parseDiagnostics } from './diagnostics.js'
import { CompileError, ToolchainError, type Diagnostic } from './errors.js'
import type { CompilerInfo } from './find-compiler.js'
import { sha256 } from './cache.js'
import { clangCompatHeader } from './clang-compat.js'

/** Build options after defaults, with absolute paths. */
export interface ResolvedCompileOptions {
  cwd: string
  includeDirs: string[]
  defines: [string, string | number | boolean][]
  flags: string[]
  std?: string
  rdc: boolean
  lineinfo: boolean
  debug: boolean
  optimize?: 0 | 1 | 2 | 3
  launcher?: string[]
}

export interface CompileOutput {
  bytes: Uint8Array
  /** Absolute paths of the source and every file it included, as the user names them. */
  deps: string[]
  warnings: Diagnostic[]
}

/** The warning for a compile whose dependency list names files that do not exist (nvcc cannot spell a
 *  '"' in a file name in its .d output): such an output is not cached. */
export function unreadableDepsWarning(compiler: CompilerInfo, file: string): Diagnostic {
  return { file, line: 0, column: 0, severity: 'warning', message: `${compiler.kind} did not list this file's dependencies in a form that can be read back (a '"' in a file name?); it is rebuilt every time, not cached` }
}

let outputCounter = 0

/** Counts compiler processes started by this module (tests and stats read it); `planned`: the whole-file
 *  compiles that ran nvcc's steps from its plan (nvccPlan) instead of nvcc; `plans`: the `nvcc --dryrun`s that
 *  asked for those plans (counted in `spawned` too). */
export const processCounter = { spawned: 0, planned: 0, plans: 0 }

export { scratchRoot } from './scratch.js'

/** Writes `data` to `path` unless it already holds exactly that (temp file + rename). */
function ensureFile(path: string, data: string): void {
  writeFileIfChanged(path, data)
}

/** A symlink at a shell-safe path pointing to `target` (created once, atomically). */
function ensureLink(path: string, target: string): void {
  try {
    if (realpathSync(path) === realpathSync(target)) return
  } catch { /* missing or dangling */ }
  removeStaleTemps(dirname(path))
  const tmp = tempPathFor(path)
  symlinkSync(target, tmp)
  renameSync(tmp, path)
}

/** The empty `curand_mtgp32_kernel.h` that clang's CUDA wrapper headers include and CUDA 13 no longer
 *  ships; added with -idirafter so a real one always wins. */
function clangShimDir(cudaPath: string): string | undefined {
  if (existsSync(join(cudaPath, 'include', 'curand_mtgp32_kernel.h'))) return undefined
  const dir = join(scratchRoot(), 'clang-shim')
  mkdirSync(dir, { recursive: true })
  ensureFile(join(dir, 'curand_mtgp32_kernel.h'), '// Empty stand-in written by kernelpack: CUDA 13 dropped this header, clang still includes it.\n')
  return dir
}

/** The header of what clang's CUDA headers lack next to nvcc's (clang-compat.ts), force-included in clang
 *  builds; its name carries a hash of its text, so a change reaches the compile cache's keys. */
function clangCompatHeaderPath(): string {
  const text = clangCompatHeader()
  const dir = join(scratchRoot(), 'clang-compat')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `kernelpack-clang-compat-${sha256(text).slice(0, 12)}.h`)
  ensureFile(path, text)
  return path
}

/** clang errors whose cause is a difference from nvcc, each followed by a note that says what to do. */
export function explainClangDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return list.flatMap((d) => {
    if (d.severity !== 'error' || !/initialization is not supported for __shared__ variables/.test(d.message)) return [d]
    // clang/lib/Sema/SemaCUDA.cpp: a __shared__ variable's type needs an empty constructor and an empty
    // destructor; cuda::barrier<thread_scope_block>'s destructor invalidates its mbarrier. nvcc accepts it.
    return [d, {
      file: d.file, line: d.line, column: d.column, severity: 'note' as const, code: 'kernelpack',
      message: 'clang requires a __shared__ variable\'s type to have an empty constructor and an empty destructor (cuda::barrier\'s destructor is not empty); nvcc accepts it. With clang, declare storage and use it through a reference: `__shared__ alignas(T) unsigned char storage[sizeof(T)]; T &name = *reinterpret_cast<T *>(storage);` (as CCCL\'s own tests do), or build this file with nvcc',
    }]
  })
}

/** The toolkit's CCCL headers (`cuda/std/…`, `nv/target`, cub, thrust), which `cooperative_groups.h`,
 *  `cuda/pipeline` and `cuda/barrier` include. CUDA 13 moved them from `include/` to `include/cccl/`; nvcc adds
 *  that folder itself (nvcc.profile: `SYSTEM_INCLUDES += "-isystem" ".../include/cccl"`), clang 22 does not,
 *  so without it clang fails with `cuda/std/type_traits file not found` (issue 14). */
function clangCcclDir(cudaPath: string): string | undefined {
  const dir = join(cudaPath, 'include', 'cccl')
  return existsSync(join(dir, 'cuda', 'std')) ? dir : undefined
}

interface Staging {
  input: string
  includeDirs: string[]
  /** Staged path → user path (longest prefix first). */
  mapPath: (p: string) => string
  /** True for files kernelpack made (staged wrapper, clang shim): not dependencies of the user's build. */
  isOwn: (p: string) => boolean
}

function stage(compiler: CompilerInfo, file: string, includeDirs: string[]): Staging {
  const root = scratchRoot()
  const isOwn = (p: string) => p.startsWith(root + '/')
  if (compiler.kind !== 'nvcc' || (shellSafe.test(file) && includeDirs.every((d) => shellSafe.test(d)))) {
    return { input: file, includeDirs, mapPath: (p) => p, isOwn }
  }
  const dir = join(root, 'stage')
  mkdirSync(dir, { recursive: true })
  const links: [string, string][] = []
  let input = file
  if (!shellSafe.test(file)) {
    // The wrapper #includes the real file through a symlink to its directory: the preprocessor opens it
    // directly (no shell), its own quoted #includes resolve next to it, and nvcc's dependency output,
    // which cannot spell a '"' in a path, sees only the link's name. The names derive from the path so
    // outputs stay reproducible (nvcc's RDC module id hashes the main file's path).
    const srcDir = dirname(file)
    const link = join(dir, `dir-${sha256(srcDir).slice(0, 16)}`)
    ensureLink(link, srcDir)
    links.push([link, srcDir])
    const target = join(link, basename(file))
    let directive: string
    if (!/["\n\r]/.test(target)) directive = `#include "${target}"`
    else if (!/[>\n\r]/.test(target)) directive = `#include <${target}>`
    else throw new ToolchainError(`cannot compile ${JSON.stringify(file)} with nvcc: its name contains both '"' and '>' (or a newline); rename it`)
    input = join(dir, `src-${sha256(file).slice(0, 16)}.cu`)
    ensureFile(input, `${directive}\n`)
  }
  const dirs = includeDirs.map((d) => {
    if (shellSafe.test(d)) return d
    const link = join(dir, `inc-${sha256(d).slice(0, 16)}`)
    ensureLink(link, d)
    links.push([link, d])
    return link
  })
  links.sort((a, b) => b[0].length - a[0].length)
  const mapPath = (p: string) => {
    if (p === input) return file
    for (const [link, real] of links) if (p === link || p.startsWith(link + '/')) return real + p.slice(link.length)
    return p
  }
  return { input, includeDirs: dirs, mapPath, isOwn: (p) => isOwn(p) && !links.some(([l]) => p.startsWith(l + '/')) }
}

function defineArgs(defines: [string, string | number | boolean][]): string[] {
  return defines.map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_,.\s]*\))?$/.test(name)) {
      throw new ToolchainError(`bad define name ${JSON.stringify(name)}: use a C identifier (optionally a macro parameter list)`)
    }
    if (value === false) return `-U${name}`
    if (value === true) return `-D${name}`
    return `-D${name}=${value}`
  })
}

/** The compiler's arguments for one target, with the given input, output and dependency-file paths. */
export function compileArgs(compiler: CompilerInfo, target: Target, o: ResolvedCompileOptions, io: { input: string; output: string; depfile: string; includeDirs: string[] }): string[] {
  // nvcc's own -MD runs one more preprocessing pass of the whole source (a host-side `gcc -E -M`), about a
  // quarter of a small file's front end; gcc's -MD on the device pass nvcc runs anyway (`-Xcompiler`) lists
  // the same files at no cost, as the pass that made the PTX saw them. Launchers know only nvcc's -MD, and
  // -Xcompiler splits at commas.
  const deps = compiler.kind === 'nvcc' && !o.launcher && !io.depfile.includes(',') ? ['-Xcompiler', `-MD,-MF,${io.depfile}`] : ['-MD', '-MF', io.depfile]
  const common = [
    ...io.includeDirs.flatMap((d) => ['-I', d]),
    ...defineArgs(o.defines),
    ...o.flags,
    ...deps,
    '-o', io.output,
  ]
  if (compiler.kind === 'nvcc') {
    return [
      // ccache caches only calls with -c; nvcc gives -cubin/-ptx precedence and writes identical bytes.
      ...(o.launcher ? ['-c'] : []),
      target.kind === 'cubin' ? '-cubin' : '-ptx',
      `-arch=${target.target}`,
      ...(o.rdc ? ['-rdc=true'] : []),
      ...(o.std ? [`-std=${o.std}`] : []),
      ...(o.lineinfo ? ['-lineinfo'] : []),
      ...(o.debug ? ['-G'] : []),
      // nvcc's -O is for host code; device optimisation is ptxas's (and cicc always optimises unless -G).
      ...(o.optimize !== undefined && target.kind === 'cubin' ? [`-Xptxas=-O${o.optimize}`] : []),
      ...common,
      io.input,
    ]
  }
  const shim = clangShimDir(compiler.cudaPath!)
  const cccl = clangCcclDir(compiler.cudaPath!)
  return [
    '-x', 'cuda',
    '--cuda-device-only',
    `--offload-arch=${target.arch}`,
    target.kind === 'cubin' ? '-c' : '-S',
    `--cuda-path=${compiler.cudaPath}`,
    '-Wno-unknown-cuda-version',
    // Searched after every -I folder of the user's, wherever it stands on the line (as with nvcc).
    ...(cccl ? ['-isystem', cccl] : []),
    ...(shim ? ['-idirafter', shim] : []),
    '-include', clangCompatHeaderPath(),
    ...(o.rdc ? ['-fgpu-rdc'] : []),
    ...(o.std ? [`-std=${o.std}`] : []),
    ...(o.lineinfo ? ['-gline-tables-only'] : []),
    ...(o.debug ? ['-g', '--cuda-noopt-device-debug'] : []),
    // clang defaults to -O0; nvcc optimises device code by default, so match it.
    `-O${o.optimize ?? 3}`,
    ...common,
    io.input,
  ]
}

/** The arguments that define the output, for the cache key: real input path, placeholder output paths. */
export function keyArgs(compiler: CompilerInfo, target: Target, o: ResolvedCompileOptions, file: string): string[] {
  return compileArgs(compiler, target, { ...o, launcher: undefined }, { input: file, output: '<out>', depfile: '<deps>', includeDirs: o.includeDirs })
}

function lineCount(file: string): number {
  try {
    const text = readFileSync(file, 'utf8')
    return text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
  } catch {
    return 0
  }
}

/** Whether a cubin is assembled from the PTX of its virtual architecture (nvcc's own plan: `cicc` once per
 *  virtual architecture, `ptxas` once per real one) rather than compiled from the source in a process of its
 *  own. Not with ccache as the launcher: ccache (4.7 to at least 4.10) caches an nvcc compile of a `.cu` but
 *  calls one of a `.ptx` "Unsupported source language" and runs it uncached, so a CI fleet's remote storage
 *  would lose every cubin; there each cubin stays one nvcc compile of the source, which ccache caches whole.
 *  Other launchers (sccache, which splits nvcc into cicc and ptxas jobs itself; a logging wrapper) wrap each
 *  step. clang compiles each offload arch in a cc1 of its own, so only a cubin and a PTX of the same arch
 *  share a front end. */
export function assemblesFromPtx(o: ResolvedCompileOptions): boolean {
  const launcher = o.launcher?.[0]
  return !(launcher && /^ccache(?:\.exe)?$/i.test(basename(launcher)))
}

/** nvcc's arguments for assembling one real target's cubin from the PTX of its virtual architecture: what
 *  `nvcc -cubin -arch=sm_XY file.cu` gives ptxas (`-lineinfo`, `-G`, `-rdc`, `-Xptxas`, the user's flags), with
 *  the PTX as input. Include directories, macros, the C++ standard and `-MD` are the front end's and stay out. */
export function assembleArgs(target: Target, o: ResolvedCompileOptions, io: { input: string; output: string }): string[] {
  return [
    ...(o.launcher ? ['-c'] : []),
    '-cubin',
    `-arch=${target.target}`,
    ...(o.rdc ? ['-rdc=true'] : []),
    ...(o.lineinfo ? ['-lineinfo'] : []),
    ...(o.debug ? ['-G'] : []),
    ...(o.optimize !== undefined ? [`-Xptxas=-O${o.optimize}`] : []),
    ...o.flags,
    '-o', io.output,
    io.input,
  ]
}

/** `make()` once per key and process; a rejection is forgotten, so the next call tries again. */
function once<T>(memo: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = memo.get(key)
  if (!p) {
    p = make()
    memo.set(key, p)
    p.catch(() => memo.delete(key))
  }
  return p
}

/** A probed ptxas command with its input and output placeholders filled in. */
function fillIo(line: string[], input: string, output: string): string[] {
  return line.map((w) => (w === '@KP_OUT@' ? output : w === '@KP_IN@' ? input : w))
}

/** clang's ptxas command for one target, read from `clang -###` of the compile it would run (so `-O`, `-g`,
 *  `-gline-tables-only`, `-fgpu-rdc` and `-Xcuda-ptxas` map exactly as clang maps them), with the input and
 *  output left as placeholders. Once per argument list and process. */
const clangPtxasLines = new Map<string, Promise<string[]>>()
async function clangPtxasCommand(compiler: CompilerInfo, target: Target, o: ResolvedCompileOptions, file: string): Promise<string[]> {
  const args = compileArgs(compiler, target, { ...o, launcher: undefined }, { input: file, output: '@KP_OUT@', depfile: '@KP_DEPS@', includeDirs: o.includeDirs })
  return once(clangPtxasLines, JSON.stringify([compiler.path, args]), async () => {
    const r = await execa(compiler.path, ['-###', ...args], { cwd: o.cwd, reject: false, all: true, stdin: 'ignore', env: { LC_ALL: 'C' } })
    const lines = (r.all ?? '').split('\n').filter((l) => /^ "/.test(l))
    const words = (l: string) => [...l.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'))
    const ptxas = lines.map(words).find((w) => basename(w[0] ?? '') === 'ptxas')
    if (r.exitCode !== 0 || !ptxas) throw new ToolchainError(`cannot read the ptxas command of ${compiler.path} -### for ${target.target}: ${(r.all ?? r.message).trim().split('\n').slice(-5).join('\n')}`)
    const out = ptxas.indexOf('--output-file')
    if (out < 0 || ptxas[out + 1] !== '@KP_OUT@') throw new ToolchainError(`unexpected ptxas command from ${compiler.path} -###: ${ptxas.join(' ')}`)
    // clang's temporary .s file is the input (with -fgpu-rdc a `-c` follows it): the PTX goes there
    const input = ptxas.findLastIndex((w, i) => i > 0 && /\.s$/.test(w) && !w.startsWith('-') && ptxas[i - 1] !== '--output-file')
    if (input < 0) throw new ToolchainError(`no input file in the ptxas command from ${compiler.path} -###: ${ptxas.join(' ')}`)
    return ptxas.map((w, i) => (i === input ? '@KP_IN@' : w))
  })
}

/** nvcc's ptxas command for assembling one target, read from `nvcc --dryrun` of the same `-cubin` call on a
 *  PTX input (so `-lineinfo`, `-G`, `-rdc`, `-Xptxas`, `-maxrregcount` and the user's flags map exactly as
 *  nvcc maps them), with the input and output as placeholders; undefined when nvcc would run anything but
 *  one ptxas (then nvcc itself runs). Running ptxas directly saves nvcc's own start-up, a third of the time
 *  of assembling a small kernel. Once per argument list and process. */
const nvccPtxasLines = new Map<string, Promise<string[] | undefined>>()
function nvccPtxasCommand(compiler: CompilerInfo, target: Target, o: ResolvedCompileOptions): Promise<string[] | undefined> {
  const args = assembleArgs(target, { ...o, launcher: undefined }, { input: 'KP_IN.ptx', output: 'KP_OUT.cubin' })
  return once(nvccPtxasLines, JSON.stringify([compiler.path, args]), async () => {
    const r = await execa(compiler.path, ['--dryrun', ...args], { cwd: o.cwd, reject: false, all: true, stdin: 'ignore', env: { LC_ALL: 'C' } })
    if (r.exitCode !== 0) return undefined
    const commands = (r.all ?? '').split('\n').filter((l) => l.startsWith('#$ ') && !/^#\$ [A-Za-z_][A-Za-z0-9_]*=/.test(l))
    if (commands.length !== 1) return undefined
    // a shell command line: bare words and "double-quoted" ones (nvcc quotes paths)
    const words = [...commands[0]!.slice(3).matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!)
    if (words[0] !== 'ptxas' || words.filter((w) => w === 'KP_IN.ptx').length !== 1 || words.filter((w) => w === 'KP_OUT.cubin').length !== 1) return undefined
    if (words.some((w) => /[$`'\\]/.test(w))) return undefined // something a shell would have expanded
    return [join(dirname(compiler.path), 'ptxas'), ...words.slice(1).map((w) => (w === 'KP_IN.ptx' ? '@KP_IN@' : w === 'KP_OUT.cubin' ? '@KP_OUT@' : w))]
  })
}

/** A name for the assembler's files, the same for every build of `file` (nvcc and ptxas write the command
 *  line, with both names, into a `-G` cubin): the source's base name, shell-safe. */
function assembleStem(file: string): string {
  return basename(file).replace(/\.cu$/i, '').replace(/[^A-Za-z0-9_-]/g, '_') || 'kernel'
}

/** Assembles one real target's cubin from `ptx`, the PTX of its virtual architecture, with ptxas (through nvcc
 *  for nvcc builds, as nvcc runs it; directly for clang, as clang runs it). The files lie in a folder of their
 *  own, named the same in every build, so the bytes are the same in every build (nvcc's own temporary names
 *  carry a process id into `-G` cubins). Throws a CompileError with ptxas's messages when it fails. */
export async function assembleCubin(compiler: CompilerInfo, target: Target, file: string, ptx: Uint8Array, o: ResolvedCompileOptions, release?: () => void): Promise<CompileOutput> {
  const dir = join(processWorkDir(), `as-${++outputCounter}`)
  mkdirSync(dir, { recursive: true })
  const stem = assembleStem(file)
  const input = `${stem}.ptx`
  const output = `${stem}.cubin`
  try {
    await writeFile(join(dir, input), ptx)
    let argv: string[]
    if (compiler.kind === 'nvcc') {
      // a launcher is given nvcc's own call (what sccache recognises); without one, ptxas as nvcc runs it
      const line = o.launcher ? undefined : await nvccPtxasCommand(compiler, target, o)
      argv = line ? fillIo(line, input, output) : compilerArgv(compiler, o, assembleArgs(target, o, { input, output }))
    } else {
      argv = [...(o.launcher ?? []), ...fillIo(await clangPtxasCommand(compiler, target, o, file), input, output)]
    }
    const r = await runTool(compiler, file, o, {
      argv, cwd: dir, targetName: target.target, read: () => readBytes(join(dir, output)), release,
      failure: `ptxas could not assemble the ${target.target} cubin`,
    })
    return { bytes: r.out, deps: [file], warnings: r.warnings }
  } finally {
    removeQuietly(dir)
  }
}

/** One compiler (or ptxas) process: its command line, where it runs, and how its output is read. */
interface ToolRun<T> {
  /** The command and its arguments, a launcher first where there is one. */
  argv: string[]
  cwd: string
  /** Rewrites paths in its messages (staged copies → the user's paths). */
  mapPath?: (path: string) => string
  /** The target(s) named in a CompileError. */
  targetName: string
  /** Reads what it wrote; undefined (or a throw) when it wrote nothing. */
  read: () => Promise<T | undefined>
  /** Put before the process's last lines when it fails without an error message of its own. */
  failure?: string
  /** The command a CompileError names when `argv` runs it another way (nvccPlan's script for nvcc's argv). */
  shown?: string[]
  /** Called when the process has ended, before its outputs are read: frees its slot of the pool (Pool.run). */
  release?: () => void
}

/** Runs one process tied to ours (processes.ts) and reads what it wrote. Throws a ToolchainError when the
 *  command is not there, a CompileError carrying every diagnostic when it fails. */
async function runTool<T>(compiler: CompilerInfo, file: string, o: ResolvedCompileOptions, run: ToolRun<T>): Promise<{ out: T; warnings: Diagnostic[] }> {
  const [cmd, ...rest] = run.argv
  processCounter.spawned++
  // Stable, untranslated messages (gcc, which nvcc runs to preprocess, localises them); the compilers'
  // own temporary files in our work folder, which a later run removes if we are killed. The compile and every
  // process it starts die with us, even on SIGKILL (processes.ts).
  const r = await spawnAll(cmd!, rest, { cwd: run.cwd, env: { LC_ALL: 'C', TMPDIR: join(processWorkDir(), 'tmp') } })
  run.release?.()
  const text = r.text
  const parsed = dedupeDiagnostics(parseDiagnostics(text, { file, mapPath: run.mapPath, lineCount: lineCount(file) }))
  const diagnostics = compiler.kind === 'clang' ? explainClangDiagnostics(parsed) : parsed
  let out: T | undefined
  if (r.exitCode === 0) out = await run.read().catch(() => undefined)
  if (r.exitCode !== 0 || out === undefined) {
    if (r.errorCode === 'ENOENT') {
      throw new ToolchainError(`cannot run ${cmd}: not found${o.launcher ? ' (the compiler launcher)' : ''}`)
    }
    const last = (text.trim() || howItEnded(cmd!, r)).split('\n').slice(-20).join('\n')
    const errors = diagnostics.some((d) => d.severity === 'error') ? diagnostics
      : [...diagnostics, { file, line: 0, column: 0, severity: 'error' as const, message: run.failure ? `${run.failure}: ${last}` : last }]
    throw new CompileError(file, errors, { target: run.targetName, command: run.shown ?? run.argv, exitCode: r.exitCode, output: text })
  }
  return { out, warnings: diagnostics.filter((d) => d.severity !== 'error') }
}

/** The command line of a compile: the launcher, if any, in front of the compiler. */
function compilerArgv(compiler: CompilerInfo, o: ResolvedCompileOptions, args: string[]): string[] {
  return [...(o.launcher ?? []), compiler.path, ...args]
}

/** The dependency list a compile wrote (`-MD`), as the user names the files, the source first. */
async function readDeps(depfile: string, st: Staging, o: ResolvedCompileOptions, file: string): Promise<string[]> {
  try {
    const deps = parseDepFile(readFileSync(depfile, 'utf8')).map((p) => st.mapPath(resolve(o.cwd, p))).filter((p) => !st.isOwn(p))
    return [file, ...deps.filter((p) => p !== file)]
  } catch {
    return [file] // no dependency file: only the source is known
  }
}

/** Removes a compile's files (synchronously: fs/promises' recursive rm cost this process 0.8 ms of CPU for a
 *  whole-file compile's folder of 16 files, rmSync 0.25 ms); what cannot be removed stays for the next run's
 *  clean-up of dead processes' folders. */
export function removeQuietly(...paths: string[]): void {
  for (const p of paths) {
    try { rmSync(p, { recursive: true, force: true }) } catch { /* left for the clean-up */ }
  }
}

/** A compiler's output file (synchronously, as the compile's other small files: fs/promises costs this process
 *  several times the CPU of the read itself). */
const readBytes = async (path: string): Promise<Uint8Array> => {
  const b = readFileSync(path)
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
}

/** Runs one compile; throws a CompileError carrying every diagnostic when the compiler fails. */
export async function compileTarget(compiler: CompilerInfo, target: Target, file: string, o: ResolvedCompileOptions, release?: () => void): Promise<CompileOutput> {
  const st = stage(compiler, file, o.includeDirs)
  const stem = join(processWorkDir(), String(++outputCounter))
  const output = `${stem}.${target.kind === 'cubin' ? 'cubin' : 'ptx'}`
  const depfile = `${stem}.d`
  const args = compileArgs(compiler, target, o, { input: st.input, output, depfile, includeDirs: st.includeDirs })
  try {
    const r = await runTool(compiler, file, o, { argv: compilerArgv(compiler, o, args), cwd: o.cwd, mapPath: st.mapPath, targetName: target.target, read: () => readBytes(output), release })
    return { bytes: r.out, deps: await readDeps(depfile, st, o, file), warnings: r.warnings }
  } finally {
    removeQuietly(output, depfile)
  }
}

/** How many steps one nvcc runs at once: its `--threads N` / `-t N` among the user's flags (0: as many as
 *  the machine has; the last one given wins), else 1. A whole-file compile runs at most one step per virtual
 *  architecture at a time, so it is bounded by that too (`steps`). */
export function nvccThreads(flags: readonly string[], steps: number, cores: number): number {
  let n = 1
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]!
    const m = /^(?:--threads|-t)(?:=?(\d+))?$/.exec(f)
    if (!m) continue
    const v = m[1] ?? flags[i + 1]
    if (m[1] === undefined) i++
    if (v !== undefined && /^\d+$/.test(v)) n = Number(v) === 0 ? cores : Number(v)
  }
  return Math.max(1, Math.min(n, steps))
}

/** What one nvcc process gave for a whole file: each virtual architecture's PTX and each real target's cubin. */
export interface FileCompileOutput {
  ptx: Map<string, Uint8Array>
  cubins: Map<string, Uint8Array>
  /** Per virtual architecture: the files its front end read (gcc's -MD on each device pass). */
  deps: Map<string, string[]>
  /** The device side lowered to C that the front end of `deviceCOf` (compileFile) wrote beside its PTX (cicc's
   *  `<stem>.cudafe1.gpu`, device-c.ts), by virtual architecture, where nvcc left one. */
  deviceC: Map<string, string>
  warnings: Diagnostic[]
}

/** What nvccPlan substitutes in a plan: the source, the folder of the intermediates, the source's stem. */
const PLAN_SRC = '\u0000src\u0000', PLAN_DIR = '\u0000dir\u0000', PLAN_STEM = '\u0000stem\u0000'
/** Plans by compiler, arguments (the file's and folder's places held) and environment, for this process: the
 *  `nvcc --dryrun` that makes one, then its text (undefined: no plan, nvcc runs). */
const plans = new Map<string, string | undefined | Promise<string | undefined>>()
/** Environment variables that change nvcc's plan (its flags, its host compiler, where it finds them). */
const planEnv = ['NVCC_PREPEND_FLAGS', 'NVCC_APPEND_FLAGS', 'NVCC_CCBIN', 'PATH', 'LD_LIBRARY_PATH']
const singleQuoted = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`

/**
 * nvcc's own steps for a file's compile (one virtual architecture's, or all of them under --threads), as one
 * shell script: what `nvcc --dryrun` prints for the same
 * arguments (its environment, then gcc -E and cicc per virtual architecture, ptxas per real one), asked once
 * per compiler, arguments and environment in this process with placeholders for the file and its folder, and
 * filled in per file. Run by one `sh -e`, the steps are the commands nvcc itself would start, each with the same
 * arguments, so every intermediate (PTX, cubins, the device C, gcc's dependency lists) is byte-identical; what
 * it leaves out is nvcc's own work around them — the driver and the gcc it starts to learn gcc's version, a
 * `sh -c` per step, and fatbinary, whose fatbin compileFile does not read: about 3.5 % of a cold build's CPU
 * (bench/toolchain.bench.ts's files). The plan is asked of the compiler as configured, so a script named as
 * nvcc (a forwarding wrapper, flags of its own) gives its plan, and its steps then run without it; a launcher
 * (ccache, sccache) keeps nvcc. Undefined (nvcc runs) where the plan is not a plain list of steps, nvcc printed
 * anything else (a warning of its own), nvcc --threads runs steps at once, a name is not shell-safe, or
 * $KERNELPACK_NVCC_PLAN is 0.
 */
function nvccPlan(compiler: CompilerInfo, o: ResolvedCompileOptions, args: string[], input: string, dir: string, stem: string): string | undefined | Promise<string | undefined> {
  if (process.platform === 'win32' || !existsSync('/bin/sh') || o.launcher) return undefined
  if (nvccThreads(o.flags, 2, 2) > 1 || process.env.KERNELPACK_NVCC_PLAN === '0') return undefined
  if (![input, dir, stem].every((x) => shellSafe.test(x)) || !/\.cu$/.test(input) || input.startsWith(dir + '/')) return undefined
  const held = args.map((a) => a.split(dir).join(PLAN_DIR).split(input).join(PLAN_SRC))
  if (held.some((a) => a.includes('kpplanstem'))) return undefined // the template's stem, which makePlan replaces
  const key = JSON.stringify([compiler.path, compiler.identity, o.cwd, held, planEnv.map((k) => process.env[k] ?? null)])
  const fill = (text: string | undefined) => text?.split(PLAN_SRC).join(input).split(PLAN_DIR).join(dir).split(PLAN_STEM).join(stem)
  if (!plans.has(key)) plans.set(key, makePlan(compiler, o, held).then((text) => { plans.set(key, text); return text }))
  // a plan made before is filled in at once: from the pool's grant to the command's start nothing waits, so the
  // slot is not held while other builds' continuations (manifests, hashing) run
  const plan = plans.get(key)
  return typeof plan === 'object' ? plan.then(fill) : fill(plan)
}

async function makePlan(compiler: CompilerInfo, o: ResolvedCompileOptions, held: string[]): Promise<string | undefined> {
  const work = join(processWorkDir(), 'plan')
  const tDir = join(work, 'keep'), tSrc = join(work, 'kpplanstem.cu')
  const fill = (a: string) => a.split(PLAN_DIR).join(tDir).split(PLAN_SRC).join(tSrc)
  processCounter.spawned++
  processCounter.plans++
  const r = await spawnAll(compiler.path, [...held.map(fill), '--dryrun'], { cwd: o.cwd, env: { LC_ALL: 'C', TMPDIR: join(processWorkDir(), 'tmp') } })
  if (r.exitCode !== 0) return undefined
  const lines = r.text.split('\n').filter((l) => l !== '')
  if (lines.some((l) => !l.startsWith('#$ '))) return undefined
  const out = ['set -e']
  for (const raw of lines) {
    const line = raw.slice(3).split(tSrc).join(PLAN_SRC).split(tDir).join(PLAN_DIR).split('kpplanstem').join(PLAN_STEM)
    const env = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line)
    if (env) { out.push(`export ${env[1]}=${singleQuoted(env[2]!)}`); continue }
    // a step: cicc, ptxas or the host compiler's preprocessor (fatbinary's fatbin is not read); nothing else,
    // and no file of nvcc's own temporary names, which the files compiled at once would share
    const cmd = /^("?)([^"\s]+)\1(\s|$)/.exec(line)?.[2]
    if (cmd === 'fatbinary') continue
    if (cmd === undefined || line.includes('tmpxft')) return undefined
    if (!/^(\$CICC_PATH\/cicc|ptxas)$/.test(cmd) && !/(^|\/)(gcc|g\+\+|c\+\+|clang\+\+|cc)(-\d+)?$/.test(cmd)) return undefined
    out.push(line)
  }
  return out.join('\n')
}

/**
 * A file's first build, one virtual architecture's (build.ts planFileCompile runs one per virtual
 * architecture, side by side) or, under --threads, all of them in one nvcc process, as CMake runs it:
 * `nvcc -fatbin` with one `-gencode` per virtual architecture (`code=sm_XY` where a cubin is wanted, `code=compute_XY` where only the PTX is), `--keep` so
 * that nvcc's own intermediates are read back: the PTX each front end wrote and the cubin each ptxas wrote.
 * nvcc starts once instead of once per step, which is what separated a per-step build from nvcc's own time;
 * where nvccPlan gives the steps of that nvcc call, one `sh` runs them instead of nvcc (the same commands).
 * The PTX is what `nvcc -ptx` writes and each cubin what `nvcc -cubin` writes (the arguments of compileArgs
 * and assembleArgs; test/toolchain/assemble.test.ts compares them), except under -G, where ptxas records the
 * temporary file's name in the cubin: -G builds are not made this way. `deviceCOf`: the virtual architecture
 * whose front end's C is read too (the struct layouts', device-c.ts).
 */
export async function compileFile(compiler: CompilerInfo, virtuals: Target[], reals: Target[], file: string, o: ResolvedCompileOptions, deviceCOf?: string, release?: () => void): Promise<FileCompileOutput> {
  if (compiler.kind !== 'nvcc' || o.debug || o.launcher) throw new Error('internal: compileFile is for nvcc without -G or a launcher')
  const st = stage(compiler, file, o.includeDirs)
  const dir = join(processWorkDir(), `file-${++outputCounter}`)
  mkdirSync(dir, { recursive: true })
  const depfile = join(dir, 'deps.d')
  const gencodes = virtuals.flatMap((v) => {
    const real = reals.find((r) => r.sm === v.sm && r.suffix === v.suffix)
    return ['-gencode', `arch=${v.target},code=${real ? real.target : v.target}`]
  })
  // compileArgs' options, in its order, with -fatbin and the -gencodes for -ptx/-cubin -arch
  const ptxArgs = compileArgs(compiler, virtuals[0]!, o, { input: st.input, output: join(dir, 'out.fatbin'), depfile, includeDirs: st.includeDirs })
  const at = ptxArgs.indexOf('-ptx')
  if (at < 0 || ptxArgs[at + 1] !== `-arch=${virtuals[0]!.target}`) throw new Error('internal: unexpected nvcc arguments')
  // gcc writes each device pass's dependencies next to its output (`<stem>.compute_XY.cpp1.d`): one list per
  // virtual architecture, as its own `nvcc -ptx` would give (an #include under `#if __CUDA_ARCH__` differs)
  const depArg = ptxArgs.indexOf(`-MD,-MF,${depfile}`)
  if (depArg < 0) throw new Error('internal: unexpected nvcc dependency arguments')
  const args = [
    '-fatbin', ...gencodes, '--keep', '--keep-dir', dir,
    ...ptxArgs.slice(at + 2, -1).map((a, i) => (i + at + 2 === depArg ? '-MD' : a)),
    ...(o.optimize !== undefined ? [`-Xptxas=-O${o.optimize}`] : []),
    ptxArgs[ptxArgs.length - 1]!,
  ]
  const stem = basename(st.input).replace(/\.cu$/i, '')
  const argv = compilerArgv(compiler, o, args)
  const planned = nvccPlan(compiler, o, args, st.input, dir, stem)
  const plan = typeof planned === 'object' ? await planned : planned
  if (plan) processCounter.planned++
  try {
    const r = await runTool(compiler, file, o, { argv: plan ? ['/bin/sh', '-ec', plan] : argv, shown: argv, cwd: o.cwd, mapPath: st.mapPath, targetName: virtuals.map((v) => v.target).join(','), release, read: async () => {
      const ptx = new Map<string, Uint8Array>()
      const cubins = new Map<string, Uint8Array>()
      const deps = new Map<string, string[]>()
      const deviceC = new Map<string, string>()
      // nvcc names its intermediates `<stem>.compute_XY.<ext>` when it compiles for several architectures,
      // `<stem>.<ext>` for one
      const name = (virtual: string, ext: string) => join(dir, virtuals.length > 1 ? `${stem}.${virtual}.${ext}` : `${stem}.${ext}`)
      for (const v of virtuals) {
        ptx.set(v.target, await readBytes(name(v.target, 'ptx')))
        deps.set(v.target, await readDeps(name(v.target, 'cpp1.d'), st, o, file))
        if (v.target !== deviceCOf) continue
        let c: string | undefined
        try { c = readFileSync(name(v.target, 'cudafe1.gpu'), 'utf8') } catch { c = undefined }
        if (c !== undefined) deviceC.set(v.target, c)
      }
      for (const t of reals) cubins.set(t.target, await readBytes(name(`compute_${t.sm}${t.suffix}`, 'cubin')))
      return { ptx, cubins, deps, deviceC }
    } })
    return { ...r.out, warnings: r.warnings }
  } finally {
    // once the pool has started the next compile in the slot this one frees (a few ms of unlinks here)
    setImmediate(() => removeQuietly(dir))
  }
}

/**
 * The arguments of the host compile the parameter types are read from (param-types.ts): the same source,
 * macros, include folders and flags as the device compiles, compiled for the host with debugging
 * information into an object file.
 *   nvcc  -c -g -arch=<the manifest's virtual target> … (one cicc, no ptxas; gcc -g for the host side)
 *   clang -x cuda --cuda-host-only -c -g -O0 --cuda-path=<toolkit> …
 */
export function hostTypesArgs(compiler: CompilerInfo, target: Target, o: ResolvedCompileOptions, io: { input: string; output: string; depfile: string; includeDirs: string[] }): string[] {
  const deps = compiler.kind === 'nvcc' && !io.depfile.includes(',') ? ['-Xcompiler', `-MD,-MF,${io.depfile}`] : ['-MD', '-MF', io.depfile]
  const common = [...io.includeDirs.flatMap((d) => ['-I', d]), ...defineArgs(o.defines), ...o.flags, ...deps, '-o', io.output]
  if (compiler.kind === 'nvcc') {
    return ['-c', '-g', '-x', 'cu', `-arch=${target.target}`, ...(o.rdc ? ['-rdc=true'] : []), ...(o.std ? [`-std=${o.std}`] : []), ...common, io.input]
  }
  const shim = clangShimDir(compiler.cudaPath!)
  const cccl = clangCcclDir(compiler.cudaPath!)
  return [
    '-x', 'cuda', '--cuda-host-only', `--offload-arch=${target.arch}`, '-c', '-g', '-O0',
    `--cuda-path=${compiler.cudaPath}`, '-Wno-unknown-cuda-version',
    ...(cccl ? ['-isystem', cccl] : []),
    ...(shim ? ['-idirafter', shim] : []),
    '-include', clangCompatHeaderPath(),
    ...(o.rdc ? ['-fgpu-rdc'] : []),
    ...(o.std ? [`-std=${o.std}`] : []),
    ...common,
    io.input,
  ]
}

/** What `readelf --debug-dump=info` printed for the host compile's object, and the files it read. */
export interface HostTypesOutput {
  dump: string
  deps: string[]
  warnings: Diagnostic[]
}

/** readelf (binutils) prints the DWARF: a ToolchainError names the fix when there is none. */
export async function readelfInfo(object: string): Promise<string> {
  processCounter.spawned++
  const r = await spawnAll('readelf', ['--debug-dump=info', object], { env: { LC_ALL: 'C' }, stdout: true })
  if (r.errorCode === 'ENOENT') {
    throw new ToolchainError('cannot run readelf: not found (install binutils: the struct types of by-value kernel parameters are read from the debugging information it prints)')
  }
  if (r.errorCode !== undefined || r.exitCode === undefined) throw new ToolchainError(`readelf --debug-dump=info ${object}: ${howItEnded('readelf', r)}`)
  if (r.exitCode !== 0) throw new ToolchainError(`readelf --debug-dump=info failed (exit ${String(r.exitCode)}): ${r.text.trim().split('\n').slice(-3).join('\n')}`)
  return r.stdout!
}

/** Compiles `file` for the host with `-g` and returns the DWARF dump of the object (hostTypesArgs). */
export async function compileHostTypes(compiler: CompilerInfo, target: Target, file: string, o: ResolvedCompileOptions, release?: () => void): Promise<HostTypesOutput> {
  const st = stage(compiler, file, o.includeDirs)
  const stem = join(processWorkDir(), String(++outputCounter))
  const output = `${stem}.host.o`
  const depfile = `${stem}.d`
  const args = hostTypesArgs(compiler, target, o, { input: st.input, output, depfile, includeDirs: st.includeDirs })
  try {
    const r = await runTool(compiler, file, o, { argv: [compiler.path, ...args], cwd: o.cwd, mapPath: st.mapPath, targetName: 'host', read: () => readFile(output).then(() => true), release })
    return { dump: await readelfInfo(output), deps: await readDeps(depfile, st, o, file), warnings: r.warnings }
  } finally {
    removeQuietly(output, depfile)
  }
}
