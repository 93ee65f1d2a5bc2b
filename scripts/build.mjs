// Builds every package's dist/ (`pnpm build`, and `pnpm install`'s prepare step):
//   - src/**/*.ts → dist/**/*.js with esbuild, one file in, one file out, no bundling, so `default` exports
//     work for bundlers and plain Node;
//   - src/**/*.ts → dist/**/*.d.ts + .d.ts.map with TypeScript (declarationMap), the `types` of every
//     `exports` entry in the published packages (issue 16: consumers type-check against compiled
//     declarations, never the library's own source).
// Declarations come from one TypeScript program over all packages (the workspace resolves package imports
// to their sources through the `source` condition), emitted once and redirected into each package's dist/.
// Their inputs' hash is kept in node_modules/.cache/kernelpack-build/: an unchanged tree skips the ~4 s emit.
// `node scripts/build.mjs runtime codegen` builds only those packages' JavaScript (declarations always
// cover every package, as one program).
import { build } from 'esbuild'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const only = process.argv.slice(2)
const pkgsDir = join(root, 'packages')

function listFiles(dir, keep) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...listFiles(p, keep))
    else if (keep(name)) out.push(p)
  }
  return out
}
const isSource = (name) => name.endsWith('.ts') && !name.endsWith('.d.ts')

const pkgs = readdirSync(pkgsDir).filter((n) => existsSync(join(pkgsDir, n, 'src'))).sort()

/** What each package's dist/ must hold: `a/b.js`, `a/b.d.ts`, `a/b.d.ts.map` for every `src/a/b.ts`. */
function expectedOutputs(name) {
  const src = join(pkgsDir, name, 'src')
  return listFiles(src, isSource).flatMap((f) => {
    const stem = relative(src, f).replace(/\.ts$/, '')
    return [`${stem}.js`, `${stem}.d.ts`, `${stem}.d.ts.map`]
  })
}

/** Removes files of dist/ that no source produces any more (a deleted or renamed module). */
function pruneDist(name) {
  const dist = join(pkgsDir, name, 'dist')
  if (!existsSync(dist)) return
  const keep = new Set(expectedOutputs(name).map((p) => join(dist, p)))
  for (const f of listFiles(dist, () => true)) if (!keep.has(f)) rmSync(f)
}

// --- JavaScript
await Promise.all(pkgs.filter((n) => only.length === 0 || only.includes(n)).map(async (name) => {
  const src = join(pkgsDir, name, 'src')
  const entryPoints = listFiles(src, isSource)
  if (entryPoints.length === 0) return
  await build({
    entryPoints,
    outdir: join(pkgsDir, name, 'dist'),
    outbase: src,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    bundle: false,
    sourcemap: false,
    logLevel: 'warning',
  })
}))

// --- Worker scripts: a worker loads one file, so these are self-contained bundles of their imports. Bundlers
// that follow `new Worker(new URL('./x.js', import.meta.url))` bundle them anyway; for those that do not
// (esbuild), an app ships the one file (packages/emulator/src/web-threads.ts, node/threads.ts).
const workerScripts = [['emulator', 'web-worker.ts', 'browser'], ['emulator', 'node/worker.ts', 'node']]
await Promise.all(workerScripts.filter(([name]) => only.length === 0 || only.includes(name)).map(([name, file, platform]) => build({
  entryPoints: [join(pkgsDir, name, 'src', file)],
  outfile: join(pkgsDir, name, 'dist', file.replace(/\.ts$/, '.js')),
  format: 'esm',
  platform,
  target: 'es2022',
  bundle: true,
  sourcemap: false,
  logLevel: 'warning',
})))

// --- Declarations
const ts = (await import('typescript')).default
const configPath = join(root, 'tsconfig.build.json')
const inputs = pkgs.flatMap((n) => listFiles(join(pkgsDir, n, 'src'), (f) => f.endsWith('.ts')))
const hash = createHash('sha256')
hash.update(`typescript ${ts.version}\n`)
hash.update(readFileSync(configPath))
for (const f of [...inputs, ...pkgs.map((n) => join(pkgsDir, n, 'package.json'))]) {
  hash.update(`\0${relative(root, f)}\0`)
  hash.update(readFileSync(f))
}
const digest = hash.digest('hex')
const stampDir = join(root, 'node_modules', '.cache', 'kernelpack-build')
const stamp = join(stampDir, 'declarations.sha256')
const complete = pkgs.every((n) => expectedOutputs(n).every((p) => existsSync(join(pkgsDir, n, 'dist', p))))
const fresh = complete && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest

if (!fresh) {
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')) } })
  const options = { ...config.options, noEmit: false, declaration: true, emitDeclarationOnly: true, declarationMap: true, rootDir: pkgsDir, outDir: join(stampDir, 'out') }
  const program = ts.createProgram({ rootNames: config.fileNames, options })
  const problems = []
  const written = []
  const result = program.emit(undefined, (file, text) => {
    // <outDir>/<pkg>/src/a/b.d.ts(.map) → packages/<pkg>/dist/a/b.d.ts(.map)
    const rel = relative(options.outDir, file).split(sep)
    if (rel[1] !== 'src') { problems.push(`declaration outside a package's src/: ${relative(root, file)}`); return }
    const target = join(pkgsDir, rel[0], 'dist', ...rel.slice(2))
    if (file.endsWith('.map')) {
      // Sources relative to where the map really lives (dist/), not to the redirected output folder.
      const map = JSON.parse(text)
      map.sources = map.sources.map((s) => relative(dirname(target), resolve(dirname(file), s)).split(sep).join('/'))
      text = JSON.stringify(map)
    } else {
      // A package's declarations may reach other packages only by name: a relative path out of the package
      // would point into the build tree of this repository, which no consumer has.
      for (const m of text.matchAll(/(?:from\s+|import\()\s*["']([^"']+)["']/g)) {
        const spec = m[1]
        if (spec.startsWith('.') && !resolve(dirname(target), spec).startsWith(join(pkgsDir, rel[0], 'dist') + sep)) {
          problems.push(`${relative(root, target)}: refers to ${spec}, outside its package; export the type from the package it lives in and import it by name`)
        }
      }
    }
    mkdirSync(dirname(target), { recursive: true })
    const tmp = `${target}.${process.pid}.tmp`
    writeFileSync(tmp, text)
    renameSync(tmp, target)
    written.push(target)
  }, undefined, true)
  // Declaration errors only (a type the emitter cannot name, TS2742…); `pnpm typecheck` checks the rest.
  const diagnostics = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error)
  if (diagnostics.length || problems.length) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' }
    process.stderr.write(ts.formatDiagnostics(diagnostics, host) + problems.join('\n') + '\n')
    process.stderr.write('scripts/build.mjs: the packages\' declarations could not be built (see above)\n')
    process.exit(1)
  }
  mkdirSync(stampDir, { recursive: true })
  writeFileSync(stamp, digest)
}
for (const name of pkgs) pruneDist(name)
