// Where offload binaries go (issue 16 item 4): the `fileName` pattern in every bundler (the bundle still
// finds its kernels), Vite's own `build.assetsInlineLimit` when `inline` is not set, and the start line a
// slow compile prints through the bundler's logger.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { build, bundlers, copyFixture, unpluginCacheDir } from '../helpers/bundlers.js'
import { tempDir } from '../helpers/tools.js'

const root = copyFixture('assets', 'assets')
const options = { cacheDir: unpluginCacheDir, dtsScan: [] }

const runner = `
import { pathToFileURL } from 'node:url'
const m = await import(pathToFileURL(process.argv[1]).href)
process.stdout.write(JSON.stringify(await m.run()))
`
function runOutput(file: string): number[] {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', runner, file], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  assert.is(r.status, 0, `running ${file} failed:\n${r.stderr}`)
  return JSON.parse(r.stdout) as number[]
}

// ---
const fileName = suite('option fileName')

for (const b of bundlers) {
  fileName(`${b}: the offload binary is written where the pattern says, and the bundle loads it from there`, async () => {
    const out = await build[b]({ root, entry: 'main.js', outDir: join(root, '..', `out-${b}`), options: { ...options, fileName: 'kernels/[name].[hash].offload', inline: 0 } })
    const assets = out.files.filter((f) => f.endsWith('.offload'))
    assert.equal(assets.length, 1, `one asset: ${out.files.join(', ')}`)
    assert.match(assets[0]!, /^kernels\/fill\.[0-9a-f]{12}\.offload$/, out.files.join(', '))
    assert.equal(runOutput(out.file), [2.5, 2.5, 2.5, 2.5])
  })
}

fileName.run()

// ---
const inline = suite('option inline: Vite assetsInlineLimit')

inline('unset, Vite inlines an offload binary below build.assetsInlineLimit, as it inlines its own assets', async () => {
  const emitted = await build.vite({ root, entry: 'main.js', outDir: join(root, '..', 'out-vite-limit0'), options, viteBuild: { assetsInlineLimit: 0 } })
  const asset = emitted.files.find((f) => f.endsWith('.offload'))
  assert.ok(asset, `limit 0: emitted (${emitted.files.join(', ')})`)
  const size = readFileSync(join(root, '..', 'out-vite-limit0', asset!)).byteLength

  const above = await build.vite({ root, entry: 'main.js', outDir: join(root, '..', 'out-vite-above'), options, viteBuild: { assetsInlineLimit: size + 1 } })
  assert.equal(above.files.filter((f) => f.endsWith('.offload')), [], 'limit above the size: inlined')
  assert.match(readFileSync(above.file, 'utf8'), 'decodeBase64(')
  assert.equal(runOutput(above.file), [2.5, 2.5, 2.5, 2.5])

  const fn = await build.vite({ root, entry: 'main.js', outDir: join(root, '..', 'out-vite-fn'), options, viteBuild: { assetsInlineLimit: (file: string) => !file.endsWith('.cu') } })
  assert.equal(fn.files.filter((f) => f.endsWith('.offload')).length, 1, 'a function saying no for .cu files: emitted')

  const explicit = await build.vite({ root, entry: 'main.js', outDir: join(root, '..', 'out-vite-explicit'), options: { ...options, inline: 0 }, viteBuild: { assetsInlineLimit: size + 1 } })
  assert.equal(explicit.files.filter((f) => f.endsWith('.offload')).length, 1, 'the inline option wins over Vite')
})

inline.run()

// ---
const progress = suite('progress: a start line for compiles')

progress('rollup: "compiling fill.cu for sm_80, compute_80…" through the logger before the compile ends; none for cache hits', async () => {
  const cacheDir = tempDir('kp-progress-cache-')
  const saved = process.env.KERNELPACK_PROGRESS_DELAY_MS
  process.env.KERNELPACK_PROGRESS_DELAY_MS = '0' // a compile here may take less than the default second
  try {
    const cold = await build.rollup({ root, entry: 'main.js', outDir: join(root, '..', 'out-progress'), options: { ...options, cacheDir } })
    // rollup prefixes `[plugin unplugin-cuda]`; its root is the working directory
    const start = cold.messages.findIndex((m) => /compiling \S*fill\.cu for sm_80, compute_80…$/.test(m))
    const done = cold.messages.findIndex((m) => /compiled \S*fill\.cu → sm_80, compute_80 /.test(m))
    assert.ok(start >= 0 && done > start, `start line, then the compiled line:\n${cold.messages.join('\n')}`)
  } finally {
    if (saved === undefined) delete process.env.KERNELPACK_PROGRESS_DELAY_MS
    else process.env.KERNELPACK_PROGRESS_DELAY_MS = saved
  }
  const warm = await build.rollup({ root, entry: 'main.js', outDir: join(root, '..', 'out-progress'), options: { ...options, cacheDir } })
  assert.not.ok(warm.messages.some((m) => /compiling /.test(m)), warm.messages.join('\n'))
})

progress.run()
