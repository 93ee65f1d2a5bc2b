// Packs every workspace package as `pnpm -r pack` does (what `pnpm publish` uploads: publishConfig applied,
// workspace:* turned into versions) and unpacks each tarball, for the packaging tests. The packages' dist/
// must be built (`pnpm test` builds first).
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot, tempDir } from '../helpers/tools.js'

export interface Packed {
  /** Folder under packages/. */
  dir: string
  name: string
  tarball: string
  /** The unpacked tarball (its `package/` folder). */
  root: string
  pkg: Record<string, unknown> & { name: string; version: string }
}

/** The pnpm that runs the suite (`npm_execpath` under `pnpm test`), else the one on PATH. */
export function pnpmCommand(): [string, string[]] {
  const exec = process.env.npm_execpath
  return exec && /pnpm/.test(exec) && /\.[cm]?js$/.test(exec) ? [process.execPath, [exec]] : ['pnpm', []]
}

export function packAll(): Packed[] {
  const out = tempDir('kp-pack-')
  const [cmd, pre] = pnpmCommand()
  execFileSync(cmd, [...pre, '-r', '--filter', './packages/*', 'pack', '--pack-destination', out], { cwd: repoRoot, stdio: 'pipe' })
  const dirs = readdirSync(join(repoRoot, 'packages')).filter((d) => {
    try { readFileSync(join(repoRoot, 'packages', d, 'package.json')); return true } catch { return false }
  }).sort()
  const tarballs = readdirSync(out).filter((f) => f.endsWith('.tgz'))
  return dirs.map((dir) => {
    const { name, version } = JSON.parse(readFileSync(join(repoRoot, 'packages', dir, 'package.json'), 'utf8')) as { name: string; version: string }
    const tarball = join(out, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`)
    if (!tarballs.includes(tarball.slice(out.length + 1))) throw new Error(`pnpm pack wrote no ${tarball} for packages/${dir} (wrote ${tarballs.join(', ')})`)
    const root = join(out, 'unpacked', dir)
    mkdirSync(root, { recursive: true })
    execFileSync('tar', ['xzf', tarball, '-C', root])
    const pkgRoot = join(root, 'package')
    return { dir, name, tarball, root: pkgRoot, pkg: JSON.parse(readFileSync(join(pkgRoot, 'package.json'), 'utf8')) }
  })
}
