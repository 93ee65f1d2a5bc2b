// Finds the device compiler and reads its identity. nvcc: an explicit path, $CUDA_PATH/bin, $CUDA_HOME/bin,
// $PATH, /usr/local/cuda/bin, /usr/local/cuda-*/bin (newest first), /opt/cuda/bin. clang: an explicit path,
// clang++ on $PATH, versioned clang++-NN on $PATH (newest first), /usr/lib/llvm-NN/bin (newest first).
// The identity (real path + the whole `--version` text) goes into every cache key, so an upgraded or
// different compiler never reuses another's outputs.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs'
import { basename, delimiter, dirname, join } from 'node:path'
import { writeFileAtomic } from './atomic-write.js'
import { ToolchainError } from './errors.js'

export type CompilerKind = 'nvcc' | 'clang'

export interface CompilerInfo {
  kind: CompilerKind
  /** Absolute path of the executable that is run. */
  path: string
  /** Version number (`13.0.88`, `22.1.8`). */
  version: string
  /** sha256 over the real path and the full `--version` output. */
  identity: string
  /** Real architecture numbers this compiler builds for (nvcc --list-gpu-code; a fixed list for clang). */
  archs: number[]
  /** CUDA toolkit root (`/usr/local/cuda`): nvcc's own, or the one clang is pointed at. */
  cudaPath?: string
}

export interface FindCompilerOptions {
  /** Environment to read PATH, CUDA_PATH and CUDA_HOME from. @default process.env */
  env?: Record<string, string | undefined>
  /** Also search the usual install locations (/usr/local/cuda, /usr/lib/llvm-NN). @default true */
  wellKnown?: boolean
  /** CUDA toolkit root for clang (`--cuda-path`). @default $CUDA_PATH, $CUDA_HOME, nvcc's toolkit, /usr/local/cuda */
  cudaPath?: string
  /** Where to remember compiler identities (keyed by the executables' stat), so that a warm build does not
   *  run `--version`. @default none (probe every process once) */
  cacheDir?: string
}

const installHelp: Record<CompilerKind, string> = {
  nvcc: 'install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads, or your distribution\'s cuda-toolkit package) and put its bin directory on PATH or set CUDA_PATH',
  clang: 'install clang with CUDA support (Debian/Ubuntu: apt-get install clang-22) together with the CUDA toolkit headers (CUDA_PATH)',
}

/** Real architectures clang 22 accepts for CUDA (`--offload-arch`). */
const CLANG_ARCHS = [75, 80, 86, 87, 88, 89, 90, 100, 101, 103, 120, 121]

function run(cmd: string, args: string[], timeout = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0
      resolve({ code, stdout, stderr: stderr || (err && typeof err.code !== 'number' ? err.message : '') })
    })
  })
}

function isFile(p: string): boolean {
  try { return statSync(p).isFile() } catch { return false }
}

function versionDirs(parent: string, re: RegExp): string[] {
  try {
    // Newest first: `cuda-13.0` before `cuda-12.4`, `llvm-22` before `llvm-9`.
    return readdirSync(parent).filter((n) => re.test(n)).sort((a, b) => b.localeCompare(a, 'en', { numeric: true })).map((n) => join(parent, n))
  } catch {
    return []
  }
}

/** Candidate executables in search order, each with the place it came from (for the not-found message). */
function candidates(kind: CompilerKind, env: Record<string, string | undefined>, wellKnown: boolean): string[] {
  const pathDirs = (env.PATH ?? '').split(delimiter).filter(Boolean)
  const out: string[] = []
  if (kind === 'nvcc') {
    for (const v of ['CUDA_PATH', 'CUDA_HOME']) if (env[v]) out.push(join(env[v]!, 'bin', 'nvcc'))
    for (const d of pathDirs) out.push(join(d, 'nvcc'))
    if (wellKnown) {
      out.push('/usr/local/cuda/bin/nvcc')
      for (const d of versionDirs('/usr/local', /^cuda-\d+(\.\d+)?$/)) out.push(join(d, 'bin', 'nvcc'))
      out.push('/opt/cuda/bin/nvcc')
    }
  } else {
    for (const d of pathDirs) out.push(join(d, 'clang++'))
    const versioned: string[] = []
    for (const d of pathDirs) {
      try {
        for (const n of readdirSync(d)) if (/^clang\+\+-\d+$/.test(n)) versioned.push(join(d, n))
      } catch { /* unreadable PATH entry */ }
    }
    versioned.sort((a, b) => Number(b.split('-').pop()) - Number(a.split('-').pop()))
    out.push(...versioned)
    if (wellKnown) for (const d of versionDirs('/usr/lib', /^llvm-\d+$/)) out.push(join(d, 'bin', 'clang++'))
  }
  return [...new Set(out)]
}

/** nvcc or clang, from an executable's name or, failing that, its `--version` text. */
function kindOf(path: string, versionText: string): CompilerKind | undefined {
  const name = basename(path)
  if (/nvcc/i.test(name) || /NVIDIA \(R\) Cuda compiler driver/.test(versionText)) return 'nvcc'
  if (/clang/i.test(name) || /clang version/.test(versionText)) return 'clang'
  return undefined
}

const cache = new Map<string, Promise<CompilerInfo>>()

/** Stat signature of the executables that decide a compiler's output: the driver and, for nvcc, the
 *  tools it runs (cudafe++, cicc, ptxas). A changed file means a re-probe. */
function toolSignature(path: string): string | undefined {
  let real: string
  try { real = realpathSync(path) } catch { return undefined }
  // A wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) hides the compiler it runs: its own stat
  // says nothing about an upgrade behind it, so such a compiler is probed in every process.
  try {
    const fd = openSync(real, 'r')
    const head = Buffer.alloc(2)
    readSync(fd, head, 0, 2, 0)
    closeSync(fd)
    if (head.toString('latin1') === '#!') return undefined
  } catch {
    return undefined
  }
  const bin = dirname(real)
  const files = [real, join(bin, 'cudafe++'), join(bin, 'ptxas'), join(bin, 'nvcc.profile'), join(bin, '..', 'nvvm', 'bin', 'cicc')]
  return files.map((f) => {
    try {
      const s = statSync(f, { bigint: true })
      return `${f}:${s.size}:${s.mtimeNs}:${s.ino}`
    } catch {
      return `${f}:-`
    }
  }).join('|')
}

function recordPath(cacheDir: string, path: string): string {
  return join(cacheDir, 'v1', 'compilers', `${createHash('sha256').update(path).digest('hex').slice(0, 32)}.json`)
}

async function probe(path: string, want: CompilerKind | undefined, options: FindCompilerOptions): Promise<CompilerInfo | { problem: string }> {
  const sig = options.cacheDir ? toolSignature(path) : undefined
  const env0 = options.env ?? process.env
  const context = JSON.stringify([sig, options.cudaPath ?? '', env0.CUDA_PATH ?? '', env0.CUDA_HOME ?? ''])
  if (options.cacheDir && sig) {
    try {
      const rec = JSON.parse(readFileSync(recordPath(options.cacheDir, path), 'utf8')) as { context: string; info: CompilerInfo }
      if (rec.context === context && rec.info.path === path && (!want || rec.info.kind === want)) return rec.info
    } catch { /* no record yet */ }
  }
  const info = await probeProcess(path, want, options)
  if (options.cacheDir && sig && !('problem' in info)) {
    try {
      const file = recordPath(options.cacheDir, path)
      mkdirSync(dirname(file), { recursive: true })
      writeFileAtomic(file, JSON.stringify({ context, info }))
    } catch { /* a read-only cache only costs a probe */ }
  }
  return info
}

async function probeProcess(path: string, want: CompilerKind | undefined, options: FindCompilerOptions): Promise<CompilerInfo | { problem: string }> {
  const r = await run(path, ['--version'])
  const text = (r.stdout + r.stderr).trim()
  if (r.code !== 0) return { problem: `${path} --version failed (exit ${r.code}): ${text.split('\n')[0] ?? ''}` }
  const kind = kindOf(path, text) ?? want
  if (!kind) return { problem: `${path} is neither nvcc nor clang (--version says: ${text.split('\n')[0]})` }
  if (want && kind !== want) return { problem: `${path} is ${kind}, not ${want}` }
  const version = kind === 'nvcc' ? /release [\d.]+, V([\d.]+)/.exec(text)?.[1] : /clang version ([\d.]+)/.exec(text)?.[1]
  let real = path
  try { real = realpathSync(path) } catch { /* keep the path as given */ }
  const identity = createHash('sha256').update(real).update('\0').update(text).digest('hex')
  const env = options.env ?? process.env
  let archs = CLANG_ARCHS
  let cudaPath: string | undefined
  if (kind === 'nvcc') {
    const list = await run(path, ['--list-gpu-code'])
    const nums = [...list.stdout.matchAll(/\bsm_(\d+)\b/g)].map((m) => Number(m[1]))
    archs = nums.length ? [...new Set(nums)].sort((a, b) => a - b) : archs
    cudaPath = dirname(dirname(real))
  } else {
    const roots = [options.cudaPath, env.CUDA_PATH, env.CUDA_HOME]
    for (const c of candidates('nvcc', env, options.wellKnown !== false)) if (isFile(c)) roots.push(dirname(dirname(c)))
    roots.push('/usr/local/cuda')
    cudaPath = roots.find((r) => r && existsSync(join(r, 'include', 'cuda_runtime.h')))
    if (!cudaPath) {
      return { problem: `${path} found, but no CUDA toolkit headers for it (searched ${roots.filter(Boolean).join(', ')} for include/cuda_runtime.h); set CUDA_PATH or pass cudaPath` }
    }
  }
  return { kind, path, version: version ?? 'unknown', identity, archs, cudaPath }
}

/**
 * Finds a device compiler: `kind` 'nvcc' or 'clang' searches the usual places, a path uses that executable,
 * and no kind takes nvcc when there is one, else clang. Throws a ToolchainError that lists every place
 * searched and how to install a compiler.
 */
export function findCompiler(kind?: CompilerKind | (string & {}), options: FindCompilerOptions = {}): Promise<CompilerInfo> {
  const env = options.env ?? process.env
  const key = JSON.stringify([kind ?? '', options.cudaPath ?? '', options.cacheDir ?? '', options.wellKnown !== false, env.PATH ?? '', env.CUDA_PATH ?? '', env.CUDA_HOME ?? ''])
  let p = cache.get(key)
  if (!p) {
    p = locate(kind, options)
    cache.set(key, p)
    p.catch(() => cache.delete(key))
  }
  return p
}

async function locate(kind: string | undefined, options: FindCompilerOptions): Promise<CompilerInfo> {
  const env = options.env ?? process.env
  const wellKnown = options.wellKnown !== false
  const problems: string[] = []
  if (kind && kind !== 'nvcc' && kind !== 'clang') {
    // An explicit executable (a path, or a name looked up on PATH).
    const path = kind.includes('/') ? kind : candidatesOnPath(kind, env)
    if (!path || !isFile(path)) {
      throw new ToolchainError(`compiler '${kind}' not found${kind.includes('/') ? '' : ` on PATH (${env.PATH ?? ''})`}; pass 'nvcc', 'clang' or the path of one`)
    }
    const r = await probe(path, undefined, options)
    if ('problem' in r) throw new ToolchainError(`compiler '${kind}' is not usable: ${r.problem}`)
    return r
  }
  const kinds: CompilerKind[] = kind ? [kind as CompilerKind] : ['nvcc', 'clang']
  const searched: string[] = []
  for (const k of kinds) {
    for (const c of candidates(k, env, wellKnown)) {
      searched.push(c)
      if (!isFile(c)) continue
      const r = await probe(c, k, options)
      if ('problem' in r) { problems.push(r.problem); continue }
      return r
    }
  }
  const what = kinds.length === 2 ? 'no CUDA compiler (nvcc or clang)' : `${kinds[0]} not found`
  throw new ToolchainError(
    `${what}: searched ${searched.join(', ') || '(nothing: PATH is empty)'}` +
      (problems.length ? `; unusable: ${problems.join('; ')}` : '') +
      `. To fix: ${kinds.map((k) => installHelp[k]).join('; or ')}.`,
  )
}

function candidatesOnPath(name: string, env: Record<string, string | undefined>): string | undefined {
  for (const d of (env.PATH ?? '').split(delimiter)) if (d && isFile(join(d, name))) return join(d, name)
  return undefined
}
