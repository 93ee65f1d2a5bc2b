// Builds the kernel corpus (test/fixtures/kernels) with nvcc and clang 22 through @kernelpack/toolchain, as a
// user's build does, cached under test/.out/kernels-cache; a compile error is an outcome, not an exception.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile, BuildSession, CompileError, Pool } from '@kernelpack/toolchain'
import type { KernelManifest } from '@kernelpack/offload'
import type { Compiler, CorpusFile } from './kernel-corpus.js'
import { fixturesDir, repoRoot, tool } from './tools.js'

export const corpusDir = join(fixturesDir, 'kernels')

/** Where the corpus's builds are cached between runs (gitignored). */
export const corpusCacheDir = join(repoRoot, 'test', '.out', 'kernels-cache')

export type BuildOutcome =
  | { ok: true; offload: Uint8Array; manifest: KernelManifest; ptx: string; cached: boolean }
  | { ok: false; message: string }

const pool = new Pool(2)
const session = new BuildSession()

/** PTX of one fixture by one compiler, through the toolchain and its disk cache; a compile error is an
 *  outcome (its first error line), not an exception. */
export async function buildCorpusFile(f: CorpusFile, compiler: Compiler): Promise<BuildOutcome> {
  // three test files build this corpus and may run at the same time: one builds each (file, compiler) pair
  // while the others wait for it and then read the shared cache, instead of all of them running the compiler
  const release = await lockPair(`${compiler}-${f.file.replace(/[^A-Za-z0-9_.-]/g, '_')}`)
  try {
    return await buildPair(f, compiler)
  } finally {
    release()
  }
}

/** A directory lock under the cache, holding the owner's pid; a lock whose owner has died is taken over. */
async function lockPair(name: string): Promise<() => void> {
  const dir = join(corpusCacheDir, 'locks', `${name}.lock`)
  mkdirSync(join(corpusCacheDir, 'locks'), { recursive: true })
  for (;;) {
    try {
      mkdirSync(dir)
      writeFileSync(join(dir, 'pid'), String(process.pid))
      return () => rmSync(dir, { recursive: true, force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    let owner = NaN
    try { owner = Number(readFileSync(join(dir, 'pid'), 'utf8')) } catch { /* being created or removed */ }
    if (owner > 0 && !alive(owner)) rmSync(dir, { recursive: true, force: true })
    await new Promise((r) => setTimeout(r, 100))
  }
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
}

async function buildPair(f: CorpusFile, compiler: Compiler): Promise<BuildOutcome> {
  const path = join(corpusDir, f.file)
  try {
    const r = await buildCudaFile(path, {
      arch: `compute_${f.arch}`,
      compiler: compiler === 'nvcc' ? tool('nvcc') : tool('clang++'),
      includeDirs: (f.includeDirs ?? []).map((d) => join(corpusDir, d)),
      cacheDir: corpusCacheDir,
      jobs: pool,
      session,
    })
    const image = r.images[0]!
    return { ok: true, offload: r.offload, manifest: r.manifest, ptx: new TextDecoder().decode(image.bytes), cached: image.cached }
  } catch (err) {
    if (!(err instanceof CompileError)) throw err
    const first = err.diagnostics.find((d) => d.severity === 'error') ?? err.diagnostics[0]
    const where = first && first.line > 0 ? `${first.file.slice(corpusDir.length + 1)}:${first.line}: ` : ''
    return { ok: false, message: first ? `${where}${first.message.split('\n')[0]}` : err.message.split('\n')[0]! }
  }
}
