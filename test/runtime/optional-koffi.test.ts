// koffi is an optional dependency (issue 16 item 2): an app bundled with the runtime inside, run where koffi
// cannot be found or cannot load, still runs its kernels on the emulator under `auto` (saying why), and
// `backend: 'cuda'` names what to install. The bundler must leave the koffi import alone (it never bundles it).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { repoRoot, referencePtxDir, tempDir } from '../helpers/tools.js'

const app = `
import { loadModule } from '@kernelpack/runtime'
import { readFileSync } from 'node:fs'
const ptx = readFileSync(process.argv[2], 'utf8')
const manifest = JSON.parse(readFileSync(process.argv[3], 'utf8'))
const out = {}
const mod = await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'auto' })
const x = await mod.upload(new Float32Array([1, 2])), y = await mod.upload(new Float32Array([10, 20]))
await mod.kernel('saxpy').launch({ grid: 1, block: 32 }, 2, 2, x, y)
out.auto = { backend: mod.backend.name, reason: mod.backend.reason, y: Array.from(await y.download(new Float32Array(2))) }
try { await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'cuda' }) } catch (e) { out.cuda = { name: e.name, message: e.message } }
process.stdout.write(JSON.stringify(out))
`

/** The app bundled (runtime included, koffi left to Node), in a folder of its own outside the repository. */
async function bundle(): Promise<string> {
  const dir = tempDir('kp-optional-ffi-')
  writeFileSync(join(dir, 'app.mjs'), app)
  const r = await build({
    entryPoints: [join(dir, 'app.mjs')], outfile: join(dir, 'dist', 'main.mjs'), bundle: true, platform: 'node', format: 'esm',
    conditions: ['source'], nodePaths: [join(repoRoot, 'node_modules')], logLevel: 'silent', metafile: true,
  })
  assert.not.ok(Object.keys(r.metafile.inputs).some((p) => p.includes('node_modules/koffi') || p.includes('.pnpm/koffi')), 'koffi is not in the bundle')
  assert.match(readFileSync(join(dir, 'dist', 'main.mjs'), 'utf8'), /import\(\s*\/\* webpackIgnore: true \*\/\s*\/\* @vite-ignore \*\/\s*KOFFI\s*\)/)
  return dir
}

async function run(dir: string): Promise<{ auto: { backend: string; reason: string; y: number[] }; cuda: { name: string; message: string } }> {
  const ptx = join(referencePtxDir, 'extern_c.sm_90.ptx')
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(await readPtxManifest(readFileSync(ptx, 'utf8'), { demangle: false })))
  const r = spawnSync(process.execPath, [join(dir, 'dist', 'main.mjs'), ptx, join(dir, 'manifest.json')], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', NODE_PATH: '' } })
  assert.is(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

const koffi = suite('optional koffi')

koffi('not installed: auto runs the emulator and says koffi is missing; cuda says what to install', async () => {
  const out = await run(await bundle())
  assert.is(out.auto.backend, 'emulator')
  assert.equal(out.auto.y, [12, 24])
  // then WebGPU, which this machine lacks too (no Vulkan loader for Dawn, or Dawn not installed beside the bundle)
  assert.match(out.auto.reason.split('; ')[0]!, /^auto: using the PTX emulator because koffi, the optional dependency the cuda backend calls the driver through, was not found, and WebGPU (has no Vulkan loader|needs the optional `webgpu` package)/)
  // the bundle left the emulator's worker script behind: its launches run on the calling thread, and say why
  assert.match(out.auto.reason.split('; ')[1]!, /^launches run on the calling thread: the worker_threads worker script could not be started \(Cannot find module '.*worker\.js'/)
  assert.is(out.cuda.name, 'NoDriverError')
  assert.match(out.cuda.message, 'npm install koffi')
  assert.match(out.cuda.message, "{ backend: 'emulator' }")
})

koffi('installed but it cannot load (a native module a bundler mangled): auto falls back with the loader\'s message', async () => {
  const dir = await bundle()
  mkdirSync(join(dir, 'node_modules', 'koffi'), { recursive: true })
  writeFileSync(join(dir, 'node_modules', 'koffi', 'package.json'), JSON.stringify({ name: 'koffi', version: '0.0.0', main: 'index.js' }))
  writeFileSync(join(dir, 'node_modules', 'koffi', 'index.js'), "throw new Error('Cannot find the native Koffi module; did you bundle it correctly?')\n")
  const out = await run(dir)
  assert.is(out.auto.backend, 'emulator')
  const why = 'auto: using the PTX emulator because koffi, the native module the cuda backend calls the driver through, could not be loaded (Cannot find the native Koffi module; did you bundle it correctly?)'
  assert.ok(out.auto.reason.startsWith(`${why}, and WebGPU `) && /; launches run on /.test(out.auto.reason), out.auto.reason)
  assert.match(out.cuda.message, 'keep koffi out of the bundle')
})

koffi.run()
