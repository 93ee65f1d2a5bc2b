// Builds every package's src/**/*.ts to dist/**/*.js with esbuild (one file in, one file out, no bundling),
// so `default` exports work for bundlers and plain Node. Types are read from src by TypeScript (`pnpm typecheck`).
import { build } from 'esbuild'
import { readdirSync, statSync, existsSync, rmSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const only = process.argv.slice(2)

function listTs(dir) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...listTs(p))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p)
  }
  return out
}

const pkgsDir = join(root, 'packages')
const pkgs = readdirSync(pkgsDir).filter((n) => existsSync(join(pkgsDir, n, 'src')) && (only.length === 0 || only.includes(n)))
await Promise.all(pkgs.map(async (name) => {
  const src = join(pkgsDir, name, 'src')
  const dist = join(pkgsDir, name, 'dist')
  const entryPoints = listTs(src)
  if (entryPoints.length === 0) return
  rmSync(dist, { recursive: true, force: true })
  await build({
    entryPoints,
    outdir: dist,
    outbase: src,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    bundle: false,
    sourcemap: false,
    logLevel: 'warning',
  })
}))
