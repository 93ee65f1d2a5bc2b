// Runs an example the way its README says: the backticked command on the README's `Run:` line, in the
// example's own folder, through the shell. Every example of one test run shares one compile cache
// (KERNELPACK_CACHE_DIR, read by the examples' configs and by `kernelpack build`).
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../helpers/tools.js'

export const examplesDir = join(repoRoot, 'examples')
export const examplesCacheDir = join(repoRoot, 'test', '.out', 'examples-cache')

export interface CommandResult { code: number | null; stdout: string; stderr: string }

/** The command of the README's third line, `Run: \`pnpm build && pnpm start\` …` (the first backticked text). */
export function readmeCommand(example: string): string {
  const lines = readFileSync(join(examplesDir, example, 'README.md'), 'utf8').split('\n')
  const run = lines.find((l) => l.startsWith('Run:'))
  const cmd = run && /`([^`]+)`/.exec(run)?.[1]
  if (!cmd) throw new Error(`examples/${example}/README.md has no "Run: \`command\`" line`)
  return cmd
}

/** Fails early, with the fix, when the packages' dist/ (what bundlers import) is missing. */
export function checkBuilt(): void {
  for (const pkg of ['unplugin', 'runtime', 'emulator', 'toolchain', 'cli']) {
    if (!existsSync(join(repoRoot, 'packages', pkg, 'dist', 'index.js')) && !existsSync(join(repoRoot, 'packages', pkg, 'dist', 'main.js'))) {
      throw new Error(`packages/${pkg}/dist is missing: run \`node scripts/build.mjs\` (pnpm test does) before the example tests`)
    }
  }
}

/** Runs a shell command in `cwd` with the shared compile cache; resolves when it exits. */
export function runShell(command: string, cwd: string, env: Record<string, string> = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      cwd,
      env: { ...process.env, NODE_OPTIONS: '', FORCE_COLOR: '0', NO_COLOR: '1', KERNELPACK_CACHE_DIR: examplesCacheDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Runs the README command of `example` and returns its output; throws with the whole output on failure. */
export async function runReadme(example: string): Promise<CommandResult> {
  checkBuilt()
  const cmd = readmeCommand(example)
  const r = await runShell(cmd, join(examplesDir, example))
  if (r.code !== 0) throw new Error(`examples/${example}: \`${cmd}\` exited ${r.code}\n${r.stdout}\n${r.stderr}`)
  return r
}

/** The `backend:` and `images:` lines every Node example prints. */
export function readBackend(stdout: string): { backend: string; images: string } {
  const backend = /^backend: (cuda|emulator) /m.exec(stdout)?.[1]
  const images = /^images: ([^;\n]+)/m.exec(stdout)?.[1]
  if (!backend || !images) throw new Error(`no backend/images lines in:\n${stdout}`)
  return { backend, images }
}
