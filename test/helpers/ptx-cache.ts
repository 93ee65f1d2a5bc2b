// Compiles CUDA sources to PTX for tests and benches, with a content-addressed cache under test/.out/ptx-cache
// (gitignored) so a second run costs no compiler time. The key is a SHA-256 of the source bytes and of every
// file it pulls in with a quoted `#include "…"` (recursively, relative to the including file), the full
// argument list and the compiler's `--version` text; toolkit headers (`<…>`) are covered by the version.
// Entries are written to a temp file and renamed, so a run killed mid-compile never leaves a truncated PTX
// behind, and parallel test files can share the cache.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { clangCurandShim, repoRoot, tool } from './tools.js'

/** One way of compiling device code to PTX. */
export interface PtxConfig {
  /** Short label used in test names: `nvcc compute_80`, `clang sm_80`. */
  label: string
  compiler: 'nvcc' | 'clang'
  /** `compute_80` for nvcc (`-arch`), `sm_80` for clang (`--cuda-gpu-arch`). */
  arch: string
  /** The PTX ISA target the output declares (`.target`), for the emulator's `ImageToLoad.arch`. */
  target: string
}

/** The three configurations the emulator corpus runs: nvcc for compute_80 and compute_90, clang 22 for sm_80. */
export const corpusConfigs: readonly PtxConfig[] = [
  { label: 'nvcc compute_80', compiler: 'nvcc', arch: 'compute_80', target: 'compute_80' },
  { label: 'nvcc compute_90', compiler: 'nvcc', arch: 'compute_90', target: 'compute_90' },
  { label: 'clang sm_80', compiler: 'clang', arch: 'sm_80', target: 'compute_80' },
]

export const ptxCacheDir = join(repoRoot, 'test', '.out', 'ptx-cache')

export interface CompileRequest {
  /** Absolute path of the .cu file. */
  source: string
  config: PtxConfig
  /** Extra `-D` defines and flags, passed to both compilers. */
  extraArgs?: readonly string[]
}

function run(cmd: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, [...args], { encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(new Error(`${cmd} ${args.join(' ')} failed (${err.code ?? err.signal}):\n${stderr || err.message}`), { stderr }))
      else resolve({ stdout, stderr })
    })
  })
}

const versions = new Map<string, Promise<string>>()
/** The compiler's `--version` output, once per process. */
function compilerVersion(path: string): Promise<string> {
  let v = versions.get(path)
  if (!v) {
    v = run(path, ['--version']).then((r) => r.stdout)
    versions.set(path, v)
  }
  return v
}

/** Command line (without the output path) for one request. */
function compileArgs(req: CompileRequest): { cmd: string; args: string[] } {
  const extra = req.extraArgs ?? []
  if (req.config.compiler === 'nvcc') {
    return { cmd: tool('nvcc'), args: ['-ptx', `-arch=${req.config.arch}`, ...extra, req.source] }
  }
  // Device-only compile: the reference sources also define host functions, which need no host toolchain here.
  return {
    cmd: tool('clang++'),
    args: ['--cuda-device-only', '-S', `--cuda-gpu-arch=${req.config.arch}`, '--cuda-path=/usr/local/cuda',
      `-I${clangCurandShim()}`, '-O3', '-Wno-unknown-cuda-version', ...extra, req.source],
  }
}

/** Hashes `file` and, depth first, every local file it includes with `#include "…"`. */
function hashSources(file: string, hash: ReturnType<typeof createHash>, seen = new Set<string>()): void {
  if (seen.has(file)) return
  seen.add(file)
  const text = readFileSync(file)
  hash.update(file + '\0').update(text)
  for (const m of text.toString('utf8').matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) {
    const dep = resolve(dirname(file), m[1]!)
    if (existsSync(dep)) hashSources(dep, hash, seen)
  }
}

/** PTX text for one source and configuration, from the cache or freshly compiled. */
export async function compilePtx(req: CompileRequest): Promise<string> {
  const { cmd, args } = compileArgs(req)
  const hash = createHash('sha256')
  hashSources(req.source, hash)
  const key = hash.update('\0' + args.slice(0, -1).join('\0') + '\0').update(await compilerVersion(cmd)).digest('hex')
  const stem = basename(req.source).replace(/\.cu$/, '')
  const file = join(ptxCacheDir, `${stem}-${req.config.compiler}-${req.config.arch}-${key.slice(0, 24)}.ptx`)
  if (existsSync(file)) return readFileSync(file, 'utf8')
  mkdirSync(ptxCacheDir, { recursive: true })
  // Test files run in parallel processes: the first to create `<entry>.lock` compiles, the others wait for
  // the entry instead of running the same compiler again (a lock older than 5 minutes is taken as stale).
  const lock = `${file}.lock`
  for (;;) {
    if (existsSync(file)) return readFileSync(file, 'utf8')
    try {
      mkdirSync(lock)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true })
    } catch { /* the other process just finished */ }
    await new Promise((r) => setTimeout(r, 100))
  }
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    await run(cmd, [...args, '-o', tmp])
    renameSync(tmp, file)
  } finally {
    rmSync(tmp, { force: true })
    rmSync(lock, { recursive: true, force: true })
  }
  return readFileSync(file, 'utf8')
}

/** Compiles many requests with at most `concurrency` compilers at once (the CI machine has 2 cores);
 *  results come back in request order. */
export async function compilePtxAll(reqs: readonly CompileRequest[], concurrency = 2): Promise<string[]> {
  const out: string[] = new Array(reqs.length)
  let next = 0
  async function worker(): Promise<void> {
    while (next < reqs.length) {
      const i = next++
      out[i] = await compilePtx(reqs[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, reqs.length) }, worker))
  return out
}
