// The fixture app built by each bundler, run in Node: kernels execute on the emulator with the results a
// plain JS computation gives, and the emitted offload binaries decode with llvm-offload-binary.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ImageKind, readOffloadBinaries } from '@kernelpack/offload'
import { build, bundlers, copyFixture, unpluginCacheDir, type BundlerName } from '../helpers/bundlers.js'
import { tempDir, tool } from '../helpers/tools.js'

const root = copyFixture('app', 'bundlers')
const options = { cacheDir: unpluginCacheDir, dtsScan: [join(root, 'src')] }

// What the fixture computes, in JS: c = a + 1.0f*b (common.h), then c *= 3 (scale<float>), in float32.
const N = 100
const expected = Array.from({ length: N }, (_, i) => Math.fround(Math.fround(Math.fround(i * 0.5) + Math.fround(100 - i)) * 3))

interface RunResult { backend: string; out: number[]; kernels: string[]; manifestKernels: string[]; url: string; rawBytes: number; images: string[] }

// Outputs run in a plain `node` (no tsx, no `source` condition), as users run them: the bundles load
// @kernelpack/runtime from its built dist/.
const runner = `
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
const file = process.argv[1]
// webpack's CommonJS library export of an async module (external ESM imports) is a Promise of the exports.
const m = file.endsWith('.cjs') ? await createRequire(import.meta.url)(file) : await import(pathToFileURL(file).href)
const run = m.run ?? m.default?.run
if (typeof run !== 'function') throw new Error(file + ' exports no run()')
process.stdout.write(JSON.stringify(await run()))
`

function runOutput(file: string): RunResult {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', runner, file], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  assert.is(r.status, 0, `running ${file} failed:\n${r.stderr}`)
  return JSON.parse(r.stdout) as RunResult
}

/** Each binary of an emitted .offload (v1: one image per binary, concatenated), extracted on its own by
 *  llvm-offload-binary, equals the image our reader sees; the PTX one holds the fixture's kernels. */
function checkWithLlvm(asset: string): void {
  const bytes = new Uint8Array(readFileSync(asset))
  const binaries = readOffloadBinaries(bytes)
  assert.ok(binaries.length > 0, 'at least one image')
  const dir = tempDir('kp-unplugin-llvm-')
  let ptx: string | undefined
  let wgsl = 0
  for (const [i, bin] of binaries.entries()) {
    const e = bin.entries[0]!
    const arch = e.strings.get('arch')!
    const one = join(dir, `bin${i}.offload`)
    writeFileSync(one, bytes.subarray(bin.offset, bin.offset + bin.size))
    const out = join(dir, `img${i}`)
    execFileSync(tool('llvm-offload-binary'), [one, `--image=file=${out},arch=${arch}`])
    assert.equal(new Uint8Array(readFileSync(out)), e.image, `image ${i} (${arch}) extracted by llvm-offload-binary`)
    if (e.strings.get('triple') === 'wgsl') {
      // the WGSL translated at build time (backend 'auto' ships it, issue 25): kind None, its own triple and arch
      assert.is(e.imageKind, ImageKind.None)
      assert.is(arch, 'wgsl')
      const doc = JSON.parse(new TextDecoder().decode(e.image)) as { format: string; kernels: Array<{ name: string }> }
      assert.is(doc.format, 'kernelpack-wgsl')
      assert.ok(doc.kernels.some((k) => k.name === 'vecAdd'), 'the WGSL image has vecAdd')
      wgsl++
      continue
    }
    assert.is(e.strings.get('triple'), 'nvptx64-nvidia-cuda')
    if (e.imageKind === ImageKind.PTX) ptx = new TextDecoder().decode(e.image)
  }
  assert.is(wgsl, 1, 'one WGSL image')
  assert.ok(ptx, 'a PTX image for the emulator')
  assert.match(ptx!, '.entry vecAdd')
}

function checkResult(r: RunResult, b: string): void {
  assert.is(r.backend, 'emulator', `${b}: runs on the emulator`)
  assert.equal(r.out, expected, `${b}: kernel results`)
  assert.equal(r.kernels, ['vecAdd', 'void scale<float>(float*, float, int)', 'void scale<int>(int*, int, int)'])
  assert.equal(r.manifestKernels.length, 3)
  assert.ok(r.rawBytes > 0)
}

// ---
for (const b of bundlers) {
  const test = suite(`build.${b}`)
  for (const format of ['esm', 'cjs'] as const) {
    test(`${b} ${format} output runs the kernels in Node; its asset decodes with llvm-offload-binary`, async () => {
      const outDir = join(root, '..', `out-${b}-${format}`)
      const out = await build[b as BundlerName]({ root, entry: 'src/main.js', outDir, format, options })
      const assets = out.files.filter((f) => f.endsWith('.offload'))
      assert.is(assets.length, 1, `${b}: one offload asset, got ${out.files.join(', ')}`)
      assert.match(assets[0]!, /[0-9a-zA-Z_-]{8,}/, 'content-hashed name')
      const r = runOutput(out.file)
      checkResult(r, `${b} ${format}`)
      assert.is(r.rawBytes, readFileSync(join(outDir, assets[0]!)).byteLength, '?raw is the asset bytes')
      assert.ok(r.url.endsWith(assets[0]!.split('/').pop()!), `?url names the asset: ${r.url}`)
      checkWithLlvm(join(outDir, assets[0]!))
      if (b === 'rollup') {
        // The per-build summary reaches Rollup's onLog (kernels, targets, sizes, cache hits).
        const summary = out.messages.find((m) => m.includes('1 .cu file'))
        assert.ok(summary, `summary in ${JSON.stringify(out.messages)}`)
        assert.match(summary!, /3 kernels, targets .*compute_\d+.*, [\d.]+ KiB of images, \d+ compiles?, \d+ cache hits?/)
      }
    })
  }
  test.run()
}

// ---
const inline = suite('inline threshold')

inline('an image under the inline threshold is embedded as base64: no asset, same results', async () => {
  const outDir = join(root, '..', 'out-inline')
  const out = await build.rollup({ root, entry: 'src/main.js', outDir, options: { ...options, inline: 1 << 20 } })
  assert.equal(out.files.filter((f) => f.endsWith('.offload')), [])
  const r = runOutput(out.file)
  checkResult(r, 'rollup inline')
  assert.match(r.url, /^data:application\/octet-stream;base64,/)
})

inline.run()

// ---
const native = suite('emit wrapper-c and hostrefs')

for (const b of ['rollup', 'esbuild', 'webpack'] as const) {
  native(`${b} emits <name>.wrapper.c/.h and <name>.hostrefs.c beside the bundle, and gcc compiles them`, async () => {
    const outDir = join(root, '..', `out-native-${b}`)
    const out = await build[b]({ root, entry: 'src/main.js', outDir, options: { ...options, emit: ['wrapper-c', 'hostrefs'] } })
    for (const f of ['kernels.wrapper.c', 'kernels.wrapper.h', 'kernels.hostrefs.c']) assert.ok(out.files.includes(f), `${b}: ${f} in ${out.files.join(', ')}`)
    const hostrefs = readFileSync(join(outDir, 'kernels.hostrefs.c'), 'utf8')
    assert.match(hostrefs, '.nvHRKE')
    assert.match(hostrefs, '/* vecAdd */')
    const wrapper = readFileSync(join(outDir, 'kernels.wrapper.c'), 'utf8')
    assert.match(wrapper, 'llvm_offload_entries')
    for (const f of ['kernels.wrapper.c', 'kernels.hostrefs.c']) {
      execFileSync(tool('gcc'), ['-c', '-I', outDir, join(outDir, f), '-o', join(outDir, f.replace(/\.c$/, '.o'))])
    }
  })
}

native.run()
