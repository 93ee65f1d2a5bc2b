// Watch mode outside Vite: an edit to a header that a .cu includes rebuilds the bundle with the new
// kernel (webpack through the loader's file dependencies, esbuild through its onLoad watchFiles).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { copyFixture, unpluginCacheDir, watchConfig } from '../helpers/bundlers.js'
import { repoRoot } from '../helpers/tools.js'

const N = 100
const f = Math.fround
const expected = (B: number) => Array.from({ length: N }, (_, i) => f(f(f(i * 0.5) + f(f(B) * f(100 - i))) * 3))

function runOutput(file: string): number[] {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify('file://' + file)}); process.stdout.write(JSON.stringify((await m.run()).out))`], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  assert.is(r.status, 0, r.stderr)
  return JSON.parse(r.stdout) as number[]
}

/** Fails (instead of hanging) when no rebuild comes: the header was not watched. */
function within<T>(p: Promise<T>, what: string, ms = 60_000): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([p, new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms) })]).finally(() => clearTimeout(timer))
}

function editHeader(root: string, from: string, to: string): void {
  const h = join(root, 'src', 'common.h')
  writeFileSync(h, readFileSync(h, 'utf8').replace(from, to))
}

// ---
const wp = suite('webpack watch')

wp('a header edit rebuilds with the new kernel', async () => {
  const root = copyFixture('app', 'watch-webpack')
  const outDir = join(root, '..', 'out')
  const webpack = (await import('webpack')).default
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'webpack.js'))).default
  const compiler = webpack(watchConfig(root, outDir, cuda, { cacheDir: unpluginCacheDir, dtsScan: [] }) as never)
  const builds: Array<() => void> = []
  let count = 0
  const watching = compiler.watch({ aggregateTimeout: 50 }, (err, stats) => {
    if (err || stats?.hasErrors()) throw err ?? new Error(stats!.toString('errors-only'))
    count++
    builds.shift()?.()
  })
  const nextBuild = () => within(new Promise<void>((resolve) => builds.push(resolve)), 'webpack build')
  try {
    await nextBuild()
    assert.equal(runOutput(join(outDir, 'main.mjs')), expected(1))
    const before = count
    editHeader(root, '#define COMBINE_B 1.0f', '#define COMBINE_B 2.0f')
    await nextBuild()
    assert.ok(count > before)
    assert.equal(runOutput(join(outDir, 'main.mjs')), expected(2))
  } finally {
    await new Promise<void>((resolve) => (watching ? watching.close(() => resolve()) : resolve()))
  }
})

wp.run()

// ---
const es = suite('esbuild watch')

es('a header edit rebuilds with the new kernel', async () => {
  const root = copyFixture('app', 'watch-esbuild')
  const outDir = join(root, '..', 'out')
  const esbuild = await import('esbuild')
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'esbuild.js'))).default
  const builds: Array<() => void> = []
  const ctx = await esbuild.context({
    absWorkingDir: root,
    entryPoints: { main: join(root, 'src', 'main.js') },
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
    plugins: [cuda({ cacheDir: unpluginCacheDir, dtsScan: [] }), { name: 'done', setup(b: { onEnd(cb: () => void): void }) { b.onEnd(() => { builds.shift()?.() }) } }],
  })
  const nextBuild = () => within(new Promise<void>((resolve) => builds.push(resolve)), 'esbuild build')
  try {
    const first = nextBuild()
    await ctx.watch()
    await first
    assert.equal(runOutput(join(outDir, 'main.mjs')), expected(1))
    const second = nextBuild()
    editHeader(root, '#define COMBINE_B 1.0f', '#define COMBINE_B 2.0f')
    await second
    assert.equal(runOutput(join(outDir, 'main.mjs')), expected(2))
  } finally {
    await ctx.dispose()
  }
})

es.run()
