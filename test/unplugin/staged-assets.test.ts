// Staged assets under <cacheDir>/assets are pruned (issue 17 item 12): webpack in watch mode and Rspack
// run after run stage one .offload per edit, and only those a running build refers to stay; a live build's
// assets are never pruned by another, the records of dead processes are dropped.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { StagedAssets } from '../../packages/unplugin/src/core/staged-assets.js'
import { copyFixture, watchConfig } from '../helpers/bundlers.js'
import { repoRoot, tempDir } from '../helpers/tools.js'

const offloads = (cacheDir: string) => (existsSync(join(cacheDir, 'assets')) ? readdirSync(join(cacheDir, 'assets')).filter((n) => n.endsWith('.offload')).sort() : [])
const refFiles = (cacheDir: string) => (existsSync(join(cacheDir, 'assets', '.refs')) ? readdirSync(join(cacheDir, 'assets', '.refs')) : [])

/** A compile cache kept between runs (the edits below are always the same, so a second run compiles
 *  nothing) with its staged assets cleared: the test counts them. */
function stagingCache(label: string): string {
  const dir = join(repoRoot, 'test', '.out', `staged-assets-${label}`)
  rmSync(join(dir, 'assets'), { recursive: true, force: true })
  return dir
}

function editHeader(root: string, value: number): void {
  const h = join(root, 'src', 'common.h')
  writeFileSync(h, readFileSync(h, 'utf8').replace(/#define COMBINE_B [0-9.]+f/, `#define COMBINE_B ${value}.0f`))
}

function within<T>(p: Promise<T>, what: string, ms = 120_000): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([p, new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms) })]).finally(() => clearTimeout(timer))
}


// ---
const bundlers = suite('staged assets with real bundlers')

bundlers('webpack watch: each edit stages a new .offload and the superseded one is pruned', async () => {
  const root = copyFixture('app', 'staged-webpack')
  const cacheDir = stagingCache('webpack')
  const webpack = (await import('webpack')).default
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'webpack.js'))).default
  const compiler = webpack(watchConfig(root, join(root, '..', 'out'), cuda, { cacheDir, dtsScan: [], arch: 'compute_80' }) as never)
  const builds: Array<() => void> = []
  const watching = compiler.watch({ aggregateTimeout: 50 }, (err, stats) => {
    if (err || stats?.hasErrors()) throw err ?? new Error(stats!.toString('errors-only'))
    builds.shift()?.()
  })
  const nextBuild = () => within(new Promise<void>((resolve) => builds.push(resolve)), 'webpack build')
  const seen = new Set<string>()
  try {
    await nextBuild()
    for (let edit = 2; edit <= 3; edit++) {
      const before = offloads(cacheDir)
      assert.is(before.length, 1, `one staged asset, not one per edit: ${before.join(', ')}`)
      before.forEach((n) => seen.add(n))
      editHeader(root, edit)
      await nextBuild()
    }
    const after = offloads(cacheDir)
    assert.is(after.length, 1, after.join(', '))
    assert.not.ok(seen.has(after[0]!), 'the staged asset is the newest build\'s')
    const out = readFileSync(join(root, '..', 'out', 'main.mjs'), 'utf8')
    assert.ok(out.length > 0)
  } finally {
    await new Promise<void>((resolve) => (watching ? watching.close(() => resolve()) : resolve()))
  }
  await new Promise<void>((resolve) => compiler.close(() => resolve()))
  assert.equal(refFiles(cacheDir), [], 'a closed compiler no longer holds its assets')
})

bundlers('Rspack, one run after another: the previous run\'s asset goes once it has shut down', async () => {
  const root = copyFixture('app', 'staged-rspack')
  const cacheDir = stagingCache('rspack')
  const { rspack } = await import('@rspack/core')
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'rspack.js'))).default
  const names: string[] = []
  for (const value of [4, 5]) {
    editHeader(root, value)
    const compiler = rspack(watchConfig(root, join(root, '..', 'out-rspack'), cuda, { cacheDir, dtsScan: [], arch: 'compute_80' }) as never)
    await new Promise<void>((resolve, reject) => compiler.run((err, stats) => {
      if (err || stats?.hasErrors()) return reject(err ?? new Error(stats!.toString('errors-only')))
      compiler.close(() => resolve())
    }))
    const now = offloads(cacheDir)
    assert.is(now.length, 1, now.join(', '))
    names.push(now[0]!)
    // the bundle works from the emitted asset, whatever happened to the staged one
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify('file://' + join(root, '..', 'out-rspack', 'main.mjs'))}); process.stdout.write(String((await m.run()).out.length))`], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
    assert.is(r.status, 0, r.stderr)
    assert.is(r.stdout, '100')
  }
  assert.is.not(names[0], names[1])
})

bundlers.run()

// ---
const refs = suite('StagedAssets')

refs('an asset a live build refers to is never pruned by another; once that build is done it is', () => {
  const cacheDir = tempDir('kp-staged-unit-')
  const a = new StagedAssets(cacheDir)
  const b = new StagedAssets(cacheDir)
  a.stage('/p/k.cu', 'k.aaaaaaaaaaaa.offload', new Uint8Array([1]))
  b.stage('/p/k.cu', 'k.bbbbbbbbbbbb.offload', new Uint8Array([2]))
  assert.equal(b.prune(), [])
  assert.equal(offloads(cacheDir), ['k.aaaaaaaaaaaa.offload', 'k.bbbbbbbbbbbb.offload'])
  // an edit: b supersedes its asset, which goes; a's stays
  b.stage('/p/k.cu', 'k.cccccccccccc.offload', new Uint8Array([3]))
  assert.equal(offloads(cacheDir), ['k.aaaaaaaaaaaa.offload', 'k.cccccccccccc.offload'])
  a.dispose()
  assert.equal(b.prune(), ['k.aaaaaaaaaaaa.offload'])
  assert.equal(offloads(cacheDir), ['k.cccccccccccc.offload'])
})

refs('the records of a dead process hold nothing: its assets and its record go', () => {
  const cacheDir = tempDir('kp-staged-dead-')
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
  const deadPid = Number(dead.stdout)
  mkdirSync(join(cacheDir, 'assets', '.refs'), { recursive: true })
  writeFileSync(join(cacheDir, 'assets', 'old.dddddddddddd.offload'), 'x')
  writeFileSync(join(cacheDir, 'assets', '.refs', `${deadPid}-0-1.json`), JSON.stringify(['old.dddddddddddd.offload']))
  const live = new StagedAssets(cacheDir)
  live.stage('/p/new.cu', 'new.eeeeeeeeeeee.offload', new Uint8Array([1]))
  assert.equal(live.prune(), ['old.dddddddddddd.offload'])
  assert.equal(offloads(cacheDir), ['new.eeeeeeeeeeee.offload'])
  assert.equal(refFiles(cacheDir).filter((n) => n.startsWith(`${deadPid}-`)), [])
})

refs.run()
