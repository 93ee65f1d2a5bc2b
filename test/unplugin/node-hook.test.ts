// The Node import hook's options (`unplugin-cuda/node`: kernelpack.config.json, KERNELPACK_CONFIG and the
// KERNELPACK_ARCH / KERNELPACK_COMPILER / KERNELPACK_BACKEND variables), and the hook itself in a child
// Node inside the workspace: a `.cu` import in plain ESM, the query forms, the compile error at
// file:line:col. The hook from the packed tarballs, under tsx and `node --test`, is test/packaging/node-hook.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadHookConfig, CONFIG_FILE } from 'unplugin-cuda/node'
import { repoRoot, tempDir, tool } from '../helpers/tools.js'

const cfg = suite('node hook: options')

cfg('the nearest kernelpack.config.json from the working directory up; its folder is the root', () => {
  const dir = tempDir('kp-hook-cfg-')
  writeFileSync(join(dir, CONFIG_FILE), JSON.stringify({ arch: '80', defines: { N: 4 } }))
  mkdirSync(join(dir, 'a', 'b'), { recursive: true })
  const c = loadHookConfig(join(dir, 'a', 'b'), {})
  assert.equal(c.options, { arch: '80', defines: { N: 4 } })
  assert.is(c.root, dir)
  assert.is(c.configFile, join(dir, CONFIG_FILE))
})

cfg('no config file: no options, the working directory is the root', () => {
  const dir = tempDir('kp-hook-cfg-')
  const c = loadHookConfig(dir, {})
  // a config file above the OS temp folder would be found; there is none on a test machine
  assert.is(c.configFile, undefined)
  assert.equal(c.options, {})
  assert.is(c.root, dir)
})

cfg('the environment wins over the file; KERNELPACK_CONFIG names another file', () => {
  const dir = tempDir('kp-hook-cfg-')
  writeFileSync(join(dir, CONFIG_FILE), JSON.stringify({ arch: '80', backend: 'cuda' }))
  writeFileSync(join(dir, 'ci.json'), JSON.stringify({ arch: '90', lineinfo: true }))
  const c = loadHookConfig(dir, { KERNELPACK_ARCH: '75;80', KERNELPACK_BACKEND: 'emulator', KERNELPACK_COMPILER: 'clang' })
  assert.equal(c.options, { arch: '75;80', backend: 'emulator', compiler: 'clang' })
  const d = loadHookConfig(dir, { KERNELPACK_CONFIG: 'ci.json' })
  assert.equal(d.options, { arch: '90', lineinfo: true })
  assert.is(d.configFile, join(dir, 'ci.json'))
})

cfg('explicit options (registerCuda(options)) replace the file', () => {
  const dir = tempDir('kp-hook-cfg-')
  writeFileSync(join(dir, CONFIG_FILE), JSON.stringify({ arch: '80' }))
  const c = loadHookConfig(dir, {}, { lineinfo: true })
  assert.equal(c.options, { lineinfo: true })
  assert.is(c.configFile, undefined)
})

cfg('a config file that is not JSON, not an object, or has a wrong option names the file and the fix', () => {
  const dir = tempDir('kp-hook-cfg-')
  const file = join(dir, CONFIG_FILE)
  writeFileSync(file, '{ arch: 80 }')
  assert.throws(() => loadHookConfig(dir, {}), (e: Error) => e instanceof TypeError && e.message.includes(file) && /is not JSON/.test(e.message) && /\{"arch": "80"\}/.test(e.message))
  writeFileSync(file, '[1]')
  assert.throws(() => loadHookConfig(dir, {}), (e: Error) => e.message.includes(file) && /must hold a JSON object/.test(e.message))
  writeFileSync(file, JSON.stringify({ arhc: '80' }))
  assert.throws(() => loadHookConfig(dir, {}), (e: Error) => e.message.startsWith(`${file}: unplugin-cuda: unknown option "arhc"`))
  writeFileSync(file, JSON.stringify({ arch: 'sm_80!' }))
  assert.throws(() => loadHookConfig(dir, {}), (e: Error) => e.message.startsWith(`${file}: unplugin-cuda: option arch:`))
  assert.throws(() => loadHookConfig(dir, { KERNELPACK_CONFIG: 'missing.json' }), (e: Error) => e.message.includes(join(dir, 'missing.json')) && /cannot read/.test(e.message))
  // a wrong value from the environment is named too
  writeFileSync(file, '{}')
  assert.throws(() => loadHookConfig(dir, { KERNELPACK_BACKEND: 'gpu' }), (e: Error) => /option backend must be 'auto', 'cuda', 'emulator' or 'webgpu'/.test(e.message))
})

cfg.run()

// ---- the hook in a child Node ----------------------------------------------------------------------------

tool('nvcc')
const hook = suite('node hook: .cu imports in plain Node')
// under test/.out, so the stub's `@kernelpack/runtime` and `unplugin-cuda/register` resolve to the workspace's
const project = join(repoRoot, 'test', '.out', `node-hook-${process.pid}`)
mkdirSync(project, { recursive: true })
const cacheDir = tempDir('kp-hook-cache-')

function node(args: string[], env: Record<string, string> = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(NODE_OPTIONS|KERNELPACK_)/.test(k))) as Record<string, string>
  return spawnSync(process.execPath, ['--import', 'unplugin-cuda/register', ...args], {
    cwd: project, encoding: 'utf8', timeout: 120_000,
    env: { ...clean, KERNELPACK_CACHE_DIR: cacheDir, KERNELPACK_LIBCUDA: join(project, 'no-libcuda.so.1'), KERNELPACK_BACKEND: 'emulator', ...env },
  })
}
const show = (r: ReturnType<typeof node>) => `exit ${r.status}\n${r.stdout}\n${r.stderr}`

writeFileSync(join(project, 'add.cu'), `// written for the hook test: c = a + b, and a block sum in shared memory
extern "C" __global__ void add(int n, const int *a, const int *b, int *c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i] * OFFSET;
}
`)
writeFileSync(join(project, CONFIG_FILE), JSON.stringify({ arch: '80', defines: { OFFSET: 10 } }))
writeFileSync(join(project, 'app.mjs'), `import { add, module } from './add.cu'
import url from './add.cu?url'
import raw from './add.cu?raw'
import manifest from './add.cu?manifest'
import { readFileSync } from 'node:fs'
const n = 300
const a = await module.upload(Int32Array.from({ length: n }, (_, i) => i))
const b = await module.upload(Int32Array.from({ length: n }, (_, i) => 2 * i))
const c = await module.alloc(4 * n)
await add({ grid: 2, block: 256 }, n, a, b, c)
const out = await c.download(new Int32Array(n))
const { backend } = await module.load()
const file = new Uint8Array(readFileSync(new URL(url)))
console.log(JSON.stringify({ ok: out.every((v, i) => v === i + 20 * i), backend: backend.name, kernels: manifest.kernels.map((k) => k.name), sameBytes: file.length === raw.length && file.every((x, i) => x === raw[i]), url: String(url) }))
`)

hook('imports a .cu in plain Node ESM: the stub, ?url, ?raw and ?manifest; the .d.ts beside it; a second run from the cache', () => {
  const r = node(['app.mjs'])
  assert.is(r.status, 0, show(r))
  const line = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { ok: boolean; backend: string; kernels: string[]; sameBytes: boolean; url: string }
  assert.equal([line.ok, line.backend, line.kernels, line.sameBytes], [true, 'emulator', ['add'], true], r.stdout)
  // the offload binary is staged in the cache directory and reached by a file: URL
  assert.ok(line.url.startsWith('file://' + cacheDir), line.url)
  assert.match(r.stderr, /unplugin-cuda: compiled add\.cu → sm_80, compute_80 \(2 compiled, 0 cached\)/)
  assert.match(readFileSync(join(project, 'add.cu.d.ts'), 'utf8'), /export declare const add: Launcher<\[n: number, a: DevicePointer, b: DevicePointer, c: DevicePointer\]>/)
  const again = node(['app.mjs'])
  assert.is(again.status, 0, show(again))
  assert.is(again.stdout, r.stdout)
  assert.not.match(again.stderr, /compiled/, 'the second run compiles nothing')
})

hook('a .cu that does not compile: the compiler\'s message at file:line:col with the code frame', () => {
  writeFileSync(join(project, 'bad.cu'), 'extern "C" __global__ void k(float *y)\n{\n    y[0] = missing_name;\n}\n')
  writeFileSync(join(project, 'bad.mjs'), "import { k } from './bad.cu'\nconsole.log(k)\n")
  const r = node(['bad.mjs'])
  assert.is.not(r.status, 0, show(r))
  assert.match(r.stderr, /CompileError\]?: bad\.cu:3:12: error: identifier "missing_name" is undefined/, r.stderr)
  assert.match(r.stderr, /> 3 \|     y\[0\] = missing_name;\n\s+\|\s{12}\^/, r.stderr)
  assert.not.ok(existsSync(join(project, 'bad.cu.d.ts')), 'no declarations for a file that does not compile')
})

hook('worker threads: --import registers the hooks in the main thread only; a worker that imports a .cu calls registerCuda()', () => {
  writeFileSync(join(project, 'w-plain.mjs'), `import { parentPort } from 'node:worker_threads'
import('./add.cu').then(() => parentPort.postMessage('imported'), (e) => parentPort.postMessage(e.code))
`)
  writeFileSync(join(project, 'w-registered.mjs'), `import { parentPort } from 'node:worker_threads'
import { registerCuda } from 'unplugin-cuda/node'
registerCuda()
const m = await import('./add.cu')
parentPort.postMessage(typeof m.add)
`)
  writeFileSync(join(project, 'worker.mjs'), `import { Worker } from 'node:worker_threads'
const run = (file) => new Promise((resolve) => {
  const w = new Worker(new URL(file, import.meta.url))
  w.on('message', (m) => { resolve(m); w.terminate() })
  w.on('error', (e) => resolve('error: ' + e.message))
})
console.log(JSON.stringify({ plain: await run('./w-plain.mjs'), registered: await run('./w-registered.mjs') }))
`)
  const r = node(['worker.mjs'])
  assert.is(r.status, 0, show(r))
  assert.equal(JSON.parse(r.stdout.trim().split('\n').at(-1)!), { plain: 'ERR_UNKNOWN_FILE_EXTENSION', registered: 'function' }, r.stdout)
})

hook('a bad config file fails at start, naming the file', () => {
  const r = node(['app.mjs'], { KERNELPACK_CONFIG: 'nope.json' })
  assert.is.not(r.status, 0, show(r))
  assert.match(r.stderr, `unplugin-cuda: cannot read ${join(project, 'nope.json')}`)
})

hook.run()
