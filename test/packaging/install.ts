// A fresh project outside the repository with the packed tarballs installed by pnpm, as a user would get
// them: kernelpack's packages from their tarballs (also every one of them another depends on, through
// pnpm.overrides), third-party packages from the registry at the exact versions this repository's lockfile
// installed. The pnpm store is the workspace's own (`pnpm store path`), so those are hard links of what
// `pnpm install` already fetched and a cold run downloads only package metadata; override it with
// $KERNELPACK_TEST_PNPM_STORE.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot, tempDir } from '../helpers/tools.js'
import { pnpmCommand, type Packed } from './pack.js'

export interface Project {
  dir: string
  /** Runs a command in the project with a clean environment (no npm_* of the suite's pnpm, no NODE_OPTIONS). */
  run(cmd: string, args: string[], opts?: { env?: Record<string, string>; timeoutMs?: number }): SpawnSyncReturns<string>
  /** `pnpm <args>` in the project. */
  pnpm(args: string[], opts?: { env?: Record<string, string>; timeoutMs?: number }): SpawnSyncReturns<string>
}

/** Environment of a user's shell: the suite's PATH and HOME, none of pnpm's npm_* variables or NODE_OPTIONS. */
export function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(npm_|pnpm_|NODE_OPTIONS$|NODE_PATH$|INIT_CWD$)/i.test(k)) continue
    env[k] = v
  }
  return { ...env, NO_COLOR: '1', FORCE_COLOR: '0', ...extra }
}

let storeDir: string | undefined
function pnpmStore(): string {
  if (process.env.KERNELPACK_TEST_PNPM_STORE) return process.env.KERNELPACK_TEST_PNPM_STORE
  if (!storeDir) {
    const [cmd, pre] = pnpmCommand()
    storeDir = spawnSync(cmd, [...pre, 'store', 'path'], { cwd: repoRoot, encoding: 'utf8', env: userEnv() }).stdout.trim()
    if (!storeDir) throw new Error('`pnpm store path` printed nothing')
  }
  return storeDir
}

/** The version of a third-party package this repository installed (its lockfile's). */
function workspaceVersion(name: string): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
}

/**
 * Copies test/fixtures/packaging/<fixture> into a new folder under the OS temp dir, fills in its
 * package.json (`"<packed>"` → the tarball, `"<workspace>"` → the repository's version) and runs
 * `pnpm install` there. Throws with pnpm's output when the install fails.
 */
export function installProject(fixture: string, packed: Packed[]): Project {
  const dir = join(tempDir(`kp-${fixture}-`), fixture)
  cpSync(join(repoRoot, 'test', 'fixtures', 'packaging', fixture), dir, { recursive: true })
  const pkgFile = join(dir, 'package.json')
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as Record<string, unknown> & { pnpm?: Record<string, unknown> }
  const tarballOf = new Map(packed.map((p) => [p.name, `file:${p.tarball}`]))
  for (const field of ['dependencies', 'devDependencies'] as const) {
    const deps = pkg[field] as Record<string, string> | undefined
    for (const [name, spec] of Object.entries(deps ?? {})) {
      if (spec === '<packed>') {
        const t = tarballOf.get(name)
        if (!t) throw new Error(`${fixture}: no tarball for ${name}`)
        deps![name] = t
      } else if (spec === '<workspace>') deps![name] = workspaceVersion(name)
    }
  }
  // kernelpack packages that others depend on come from their tarballs too, never from the registry
  pkg.pnpm = { ...pkg.pnpm, overrides: Object.fromEntries(tarballOf) }
  writeFileSync(pkgFile, JSON.stringify(pkg, null, 2) + '\n')

  return installIn(dir)
}

/** `pnpm install` in `dir` (a project, or a workspace of several, whose package.json already names the
 *  tarballs), from the workspace's store; throws with pnpm's output when it fails. */
export function installIn(dir: string): Project {
  const [cmd, pre] = pnpmCommand()
  const project: Project = {
    dir,
    run(c, args, opts = {}) {
      return spawnSync(c, args, { cwd: dir, encoding: 'utf8', env: userEnv(opts.env), timeout: opts.timeoutMs ?? 300_000, maxBuffer: 64 << 20 })
    },
    pnpm(args, opts) {
      return project.run(cmd, [...pre, ...args], opts)
    },
  }
  const r = project.pnpm(['install', '--prefer-offline', '--store-dir', pnpmStore(), '--reporter', 'append-only', '--config.confirmModulesPurge=false'])
  if (r.status !== 0) throw new Error(`${dir}: pnpm install failed (${r.status}):\n${r.stdout}\n${r.stderr}`)
  return project
}

/** A command's output for a failure message. */
export function output(r: SpawnSyncReturns<string>): string {
  return `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}\n${r.stdout}\n${r.stderr}`
}
