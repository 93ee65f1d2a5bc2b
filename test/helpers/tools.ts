// Locates the real tools the tests compare against. A missing tool fails the test that needs it with a
// message that says what was searched and how to install it (CI installs every one of them).
import { chmodSync, existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, delimiter } from 'node:path'
import { tmpdir } from 'node:os'

export const repoRoot = join(import.meta.dirname, '..', '..')
export const fixturesDir = join(repoRoot, 'test', 'fixtures')
/** nvcc 13.0.88 PTX of the reference corpus (test/fixtures/reference-cu), copied into the repository
 *  (test/fixtures/toolchain/README.md says from where): tests read nothing outside the repository. */
export const referencePtxDir = join(fixturesDir, 'toolchain', 'ptx')

const llvmBin = process.env.LLVM_BIN ?? '/usr/lib/llvm-22/bin'
const cudaBin = join(process.env.CUDA_PATH ?? '/usr/local/cuda', 'bin')

const installHint: Record<string, string> = {
  'llvm-offload-binary': 'apt-get install -y llvm-22',
  'llvm-readelf': 'apt-get install -y llvm-22',
  'llvm-objdump': 'apt-get install -y llvm-22',
  'llvm-objcopy': 'apt-get install -y llvm-22',
  'llvm-offload-wrapper': 'apt-get install -y llvm-22',
  clang: 'apt-get install -y clang-22',
  'clang++': 'apt-get install -y clang-22',
  nvcc: 'install the CUDA toolkit 13 under /usr/local/cuda (or set CUDA_PATH)',
  ptxas: 'install the CUDA toolkit 13 under /usr/local/cuda (or set CUDA_PATH)',
  gcc: 'apt-get install -y gcc',
  'g++': 'apt-get install -y g++',
  chromium: 'apt-get install -y chromium',
  ccache: 'apt-get install -y ccache',
  'redis-server': 'apt-get install -y redis-server (.ci/run installs and starts one)',
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, name)
    if (dir && existsSync(p)) return p
  }
  return undefined
}

/** Absolute path of a reference tool, or throws an Error naming what was searched and the install command. */
export function tool(name: string): string {
  const searched: string[] = []
  const candidates: string[] = []
  if (name.startsWith('llvm-') || name === 'clang' || name === 'clang++') candidates.push(join(llvmBin, name))
  if (name === 'nvcc' || name === 'ptxas' || name === 'fatbinary' || name === 'cu++filt') candidates.push(join(cudaBin, name))
  for (const c of candidates) {
    searched.push(c)
    if (existsSync(c)) return c
  }
  const versioned = name === 'clang' || name === 'clang++' || name.startsWith('llvm-') ? [`${name}-22`, name] : [name]
  for (const v of versioned) {
    searched.push(`$PATH/${v}`)
    const p = onPath(v)
    if (p) return p
  }
  throw new Error(`required tool ${name} not found (searched ${searched.join(', ')}); install it: ${installHint[name] ?? 'see README'}`)
}

/** True when the tool exists; for code that picks between tools, never to skip a test. */
export function hasTool(name: string): boolean {
  try { tool(name); return true } catch { return false }
}

/** A fresh temporary directory under the OS temp dir. */
export function tempDir(prefix = 'kp-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** A compiler launcher (`launcher` option) that appends each command line it runs to `log`, then runs it:
 *  every compiler process of a build is one line. */
export function loggingLauncher(dir: string, name = 'launcher'): { launcher: string; log: string } {
  const log = join(dir, `${name}.log`)
  const launcher = join(dir, `${name}.sh`)
  writeFileSync(launcher, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec "$@"\n`)
  chmodSync(launcher, 0o755)
  return { launcher, log }
}

/** A script that runs `command` ("$@" for a launcher, a compiler's quoted path for a compiler in its place)
 *  and records how many copies of itself are running as each starts (`counts()`); `passThrough` arguments
 *  (a compiler's probes: --version …) go straight through, uncounted, and `hold` keeps each counted run alive
 *  that many seconds more, so that overlap shows. */
export function countingScript(dir: string, name: string, command: string, options: { passThrough?: string[]; hold?: number } = {}): { script: string; counts: () => number[]; reset: () => void } {
  const running = join(dir, `${name}.running`)
  mkdirSync(running, { recursive: true })
  const log = join(dir, `${name}.counts`)
  const script = join(dir, name)
  const pass = options.passThrough?.length ? `case "$1" in ${options.passThrough.join('|')}) exec ${command};; esac\n` : ''
  writeFileSync(script, `#!/bin/sh\n${pass}touch '${running}'/$$\nls '${running}' | wc -l >> '${log}'\n${options.hold ? `sleep ${options.hold}\n` : ''}${command}\nrc=$?\nrm -f '${running}'/$$\nexit $rc\n`)
  chmodSync(script, 0o755)
  writeFileSync(log, '')
  return {
    script,
    counts: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number),
    reset: () => writeFileSync(log, ''),
  }
}

/** Include dir holding the empty curand_mtgp32_kernel.h that clang's CUDA wrapper headers want (CUDA 13 lacks it). */
export function clangCurandShim(): string {
  const dir = join(tmpdir(), 'kp-curand-shim')
  mkdirSync(dir, { recursive: true })
  const h = join(dir, 'curand_mtgp32_kernel.h')
  if (!existsSync(h)) writeFileSync(h, '')
  return dir
}
