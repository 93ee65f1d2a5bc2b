// What `pnpm publish` would upload, for every packages/* package (issue 16 item 1, "Must show"): compiled
// JS and declarations (+ maps) and no src/, `types` first in every exports entry and pointing at a
// compiled .d.ts inside the tarball, main/types fallbacks, the metadata the registry page shows, a LICENSE,
// README links that work off GitHub; then publint --strict and arethetypeswrong (esm-only profile) on the
// tarball itself. New packages are covered as they appear (the list is read from packages/).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { repoRoot } from '../helpers/tools.js'
import { packAll, type Packed } from './pack.js'

const run = promisify(execFile)
const packed = packAll()
const rootPkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { repository: { url: string }; license: string; engines: { node: string } }

function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir).sort().flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? listFiles(p, base) : [relative(base, p)]
  })
}

/** Every [subpath, condition path, target] of an exports map, nested conditions included. */
function conditionsOf(value: unknown, path: string[] = []): Array<[string[], string]> {
  if (typeof value === 'string') return [[path, value]]
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => conditionsOf(v, [...path, k]))
  return []
}

const shape = suite('published shape')

shape('every package folder is packed, and scripts/package-shape.mjs --check finds nothing to reshape', () => {
  assert.ok(packed.length >= 7, packed.map((p) => p.dir).join(', '))
  const r = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'package-shape.mjs'), '--check'], { encoding: 'utf8' })
  assert.is(r.status, 0, r.stderr)
})

shape('tarballs: dist JS with .d.ts and .d.ts.map beside it, LICENSE, README, no src/, no workspace: versions, no source condition', () => {
  const license = readFileSync(join(repoRoot, 'LICENSE'), 'utf8')
  assert.match(license, 'Apache License\n                           Version 2.0, January 2004')
  for (const p of packed) {
    const files = listFiles(p.root)
    assert.not.ok(files.some((f) => f.startsWith('src/')), `${p.name}: no src/`)
    const js = files.filter((f) => f.startsWith('dist/') && f.endsWith('.js'))
    assert.ok(js.length > 0, `${p.name}: dist/*.js`)
    for (const f of js) {
      assert.ok(files.includes(f.replace(/\.js$/, '.d.ts')), `${p.name}: ${f} has its .d.ts`)
      assert.ok(files.includes(f.replace(/\.js$/, '.d.ts.map')), `${p.name}: ${f} has its declaration map`)
    }
    assert.is(readFileSync(join(p.root, 'LICENSE'), 'utf8'), license, `${p.name}: LICENSE is the Apache-2.0 text`)
    assert.ok(files.includes('README.md'), `${p.name}: README`)
    const text = readFileSync(join(p.root, 'package.json'), 'utf8')
    assert.not.match(text, 'workspace:', `${p.name}: versions, not workspace:*`)
    assert.not.match(text, '"source"', `${p.name}: no source condition`)
    assert.not.ok('tsx' in ((p.pkg.dependencies ?? {}) as object), `${p.name}: tsx is no run-time dependency`)
  }
})

shape('exports: types first in every entry, each types a compiled .d.ts in the tarball, each target present; main/types fallbacks', () => {
  for (const p of packed) {
    const exports = p.pkg.exports as Record<string, unknown>
    for (const [sub, entry] of Object.entries(exports)) {
      if (typeof entry !== 'object') continue
      const keys = Object.keys(entry as object)
      assert.is(keys[0], 'types', `${p.name} ${sub}: types first (${keys.join(', ')})`)
    }
    for (const [path, target] of conditionsOf(exports)) {
      assert.ok(existsSync(join(p.root, target)), `${p.name} ${path.join(' → ')}: ${target} is in the tarball`)
      if (path.at(-1) === 'types') assert.match(target, /\.d\.ts$/, `${p.name} ${path.join(' → ')}: a .d.ts`)
    }
    assert.ok(existsSync(join(p.root, p.pkg.main as string)), `${p.name}: main`)
    assert.match(p.pkg.types as string, /^\.\/dist\/.*\.d\.ts$/, `${p.name}: types`)
    assert.ok(existsSync(join(p.root, p.pkg.types as string)), `${p.name}: types file`)
    for (const bin of Object.values((p.pkg.bin ?? {}) as Record<string, string>)) assert.ok(existsSync(join(p.root, bin)), `${p.name}: bin ${bin}`)
  }
})

shape('metadata: engines, license, repository with directory, homepage, bugs, keywords', () => {
  const url = rootPkg.repository.url
  for (const p of packed) {
    assert.equal(p.pkg.engines, rootPkg.engines, p.name)
    assert.is(p.pkg.license, rootPkg.license, p.name)
    assert.equal(p.pkg.repository, { type: 'git', url, directory: `packages/${p.dir}` }, p.name)
    assert.match(p.pkg.homepage as string, /^https:\/\/github\.com\/.+#readme$/, p.name)
    assert.match((p.pkg.bugs as { url: string }).url, /^https:\/\/github\.com\/.+\/issues$/, p.name)
    const keywords = p.pkg.keywords as string[]
    assert.ok(keywords.includes('cuda') && keywords.includes('gpu'), p.name)
  }
  const plugin = packed.find((p) => p.name === 'unplugin-cuda')!
  for (const k of ['unplugin', 'vite-plugin', 'rollup-plugin', 'webpack-plugin', 'esbuild-plugin', 'webgpu']) assert.ok((plugin.pkg.keywords as string[]).includes(k), k)
  const runtime = packed.find((p) => p.name === '@kernelpack/runtime')!
  assert.equal(Object.keys((runtime.pkg.optionalDependencies ?? {}) as object), ['koffi'], 'koffi is optional')
  assert.not.ok('koffi' in ((runtime.pkg.dependencies ?? {}) as object))
})

shape('README links work on the registry page: absolute, no paths into the repository', () => {
  for (const p of packed) {
    const readme = readFileSync(join(p.root, 'README.md'), 'utf8')
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)
    const relativeLinks = links.filter((l) => !/^(https?:|mailto:|#)/.test(l))
    assert.equal(relativeLinks, [], `${p.name}: relative links`)
  }
})

shape.run()

// ---
const lint = suite('publint and arethetypeswrong')

async function each<T>(items: T[], fn: (x: T) => Promise<void>, jobs = 2): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: jobs }, async () => { while (next < items.length) await fn(items[next++]!) }))
}

const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name)

lint('publint --strict reports nothing for any tarball', async () => {
  await each(packed, async (p: Packed) => {
    // --pack false: lint the unpacked tarball as it is (the files pnpm pack chose)
    const r = await run(bin('publint'), ['--strict', '--pack', 'false', p.root], { encoding: 'utf8' }).catch((e: { stdout: string; stderr: string }) => e)
    assert.match(r.stdout, 'All good!', `${p.name}: publint --strict:\n${r.stdout}${r.stderr}`)
  })
})

lint('attw --profile esm-only finds no problem in any tarball (node16 from ESM and bundler resolve every entry to its types)', async () => {
  await each(packed, async (p: Packed) => {
    // exit status 1 with the problems in the JSON when there are any
    const r = await run(bin('attw'), [p.tarball, '--profile', 'esm-only', '--format', 'json'], { encoding: 'utf8', maxBuffer: 64 << 20 })
      .catch((e: { stdout: string; stderr: string }) => e)
    assert.ok(r.stdout.startsWith('{'), `${p.name}: attw:\n${r.stdout.slice(0, 2000)}${r.stderr}`)
    const report = JSON.parse(r.stdout) as { analysis: { problems: Array<{ kind: string; resolutionKind?: string; entrypoint?: string }> } }
    const ignored = new Set(['node10', 'node16-cjs'])
    const problems = report.analysis.problems.filter((x) => !ignored.has(x.resolutionKind ?? ''))
    assert.equal(problems, [], `${p.name}: ${JSON.stringify(problems)}`)
  })
})

lint.run()
