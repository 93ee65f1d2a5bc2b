// The published shape of every packages/* package (issue 16 item 1), written into its package.json:
// `node scripts/package-shape.mjs` rewrites them, `--check` lists what differs and exits 1 (the packaging
// test runs it, so a new package gets the shape by running this once).
//   - exports: `source` first for the workspace (tests and `pnpm typecheck` read src/ through it), then
//     `types` pointing at the compiled dist/*.d.ts, then the JS; `./package.json` exported;
//   - publishConfig.exports: the same without `source` (pnpm pack/publish use it: no src/ in tarballs);
//   - main/types fallbacks, files ["dist", …], engines, repository (+directory), homepage, bugs, license,
//     keywords (a package's own are kept; the common ones are added), a LICENSE file (the root's);
//   - README links absolute (relative ones are dead on the registry's page).
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const repoUrl = rootPkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '')
const COMMON_KEYWORDS = ['cuda', 'gpu', 'ptx', 'nvcc', 'kernels']

/** A condition value with `source` dropped (the published form). */
function published(value) {
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'source').map(([k, v]) => [k, published(v)]))
}

/** `types` of an entry: the compiled declaration beside its JS (`./src/a.ts` → `./dist/a.d.ts`). */
function typesFor(entry) {
  if (typeof entry.types === 'string' && !entry.types.startsWith('./src/')) return entry.types
  const js = typeof entry.default === 'string' ? entry.default : typeof entry.import === 'string' ? entry.import : undefined
  if (js) return js.replace(/\.js$/, '.d.ts')
  return entry.types?.replace(/^\.\/src\//, './dist/').replace(/\.ts$/, '.d.ts')
}

/** One exports entry in the workspace order: source, types, the rest. */
function shapeEntry(entry) {
  if (typeof entry !== 'object' || entry === null) return entry
  const out = {}
  if (entry.source !== undefined) out.source = entry.source
  const types = typesFor(entry)
  if (types !== undefined) out.types = types
  for (const [k, v] of Object.entries(entry)) if (!(k in out)) out[k] = v
  return out
}

export function shapePackage(dir, pkg) {
  const exportsIn = pkg.exports ?? {}
  const exports = {}
  for (const [k, v] of Object.entries(exportsIn)) if (k !== './package.json') exports[k] = shapeEntry(v)
  exports['./package.json'] = './package.json'
  const main = exports['.']
  const out = {
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    keywords: [...new Set([...COMMON_KEYWORDS, ...(pkg.keywords ?? [])])],
    homepage: `${repoUrl}/tree/main/packages/${dir}#readme`,
    bugs: { url: `${repoUrl}/issues` },
    repository: { type: 'git', url: `git+${repoUrl}.git`, directory: `packages/${dir}` },
    license: rootPkg.license,
    type: 'module',
    engines: rootPkg.engines,
    sideEffects: pkg.sideEffects ?? false,
    exports,
    main: typeof main === 'object' ? main.default : main,
    types: typeof main === 'object' ? main.types : undefined,
    files: ['dist', ...(pkg.files ?? []).filter((f) => f !== 'dist' && f !== 'src')],
  }
  for (const k of Object.keys(pkg)) {
    if (!(k in out) && k !== 'publishConfig') out[k] = pkg[k]
  }
  out.publishConfig = { ...pkg.publishConfig, exports: published(exports) }
  return out
}

/** README links made absolute (the registry's page has no repository around it): `../../examples/x` and
 *  `../toolchain` become GitHub URLs of the main branch. */
export function absoluteLinks(readme, dir) {
  return readme.replace(/\]\(([^)\s]+)\)/g, (m, target) => {
    if (/^(https?:|mailto:|#)/.test(target)) return m
    const path = target.startsWith('../../') ? target.slice(6) : target.startsWith('../') ? `packages/${target.slice(3)}` : `packages/${dir}/${target.replace(/^\.\//, '')}`
    return `](${repoUrl}/tree/main/${path})`
  })
}

const check = process.argv.includes('--check')
const differ = []
for (const dir of readdirSync(join(root, 'packages')).sort()) {
  const file = join(root, 'packages', dir, 'package.json')
  if (!existsSync(file)) continue
  const text = readFileSync(file, 'utf8')
  const next = JSON.stringify(shapePackage(dir, JSON.parse(text)), null, 2) + '\n'
  const license = join(root, 'packages', dir, 'LICENSE')
  const licenseOk = existsSync(license) && readFileSync(license, 'utf8') === readFileSync(join(root, 'LICENSE'), 'utf8')
  const readmeFile = join(root, 'packages', dir, 'README.md')
  const readme = existsSync(readmeFile) ? readFileSync(readmeFile, 'utf8') : undefined
  const readmeNext = readme === undefined ? undefined : absoluteLinks(readme, dir)
  if (next !== text) differ.push(`packages/${dir}/package.json`)
  if (!licenseOk) differ.push(`packages/${dir}/LICENSE`)
  if (readme === undefined) differ.push(`packages/${dir}/README.md (missing)`)
  else if (readmeNext !== readme) differ.push(`packages/${dir}/README.md`)
  if (!check) {
    if (next !== text) writeFileSync(file, next)
    if (!licenseOk) copyFileSync(join(root, 'LICENSE'), license)
    if (readme !== undefined && readmeNext !== readme) writeFileSync(readmeFile, readmeNext)
  }
}
if (check && differ.length) {
  process.stderr.write(`not in the published shape: ${differ.join(', ')}; run \`node scripts/package-shape.mjs\` and review the diff\n`)
  process.exit(1)
}
if (!check && differ.length) process.stdout.write(`reshaped: ${differ.join(', ')}\n`)
