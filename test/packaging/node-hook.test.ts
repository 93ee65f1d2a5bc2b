// `.cu` imports without a bundler (issue 28): a project outside the repository with the packed tarballs
// installed imports a `.cu` through `node --import unplugin-cuda/register` in plain Node ESM, under tsx and in
// `node --test`; its options come from kernelpack.config.json; a second run is served from the compile
// cache; a broken `.cu` gives the compiler's message at file:line:col with the code frame.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from '../helpers/tools.js'
import { installProject, output } from './install.js'
import { packAll } from './pack.js'

tool('nvcc')
const project = installProject('node-hook', packAll())
// a fresh cache: the first run compiles, the second must not
const env = { KERNELPACK_CACHE_DIR: tempDir('kp-node-hook-cache-'), KERNELPACK_LIBCUDA: join(project.dir, 'no-libcuda.so.1') }

const hook = suite('packaging: the Node import hook')

hook('plain Node ESM: node --import unplugin-cuda/register, options from kernelpack.config.json, then the cache', () => {
  const r = project.pnpm(['start'], { env })
  assert.is(r.status, 0, output(r))
  const line = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { ok: boolean; backend: string; images: string[]; ran: string }
  assert.equal([line.ok, line.backend, line.images], [true, 'emulator', ['sm_80', 'compute_80']], r.stdout)
  assert.match(r.stderr, /unplugin-cuda: compiled src\/saxpy\.cu → sm_80, compute_80 \(2 compiled, 0 cached\)/, output(r))
  // the declarations the plugin would write, beside the .cu
  assert.match(readFileSync(join(project.dir, 'src', 'saxpy.cu.d.ts'), 'utf8'), /export declare const scale: Launcher<\[n: number, v: DevicePointer\]>/)
  const again = project.pnpm(['start'], { env })
  assert.is(again.status, 0, output(again))
  assert.is(again.stdout.trim().split('\n').at(-1), r.stdout.trim().split('\n').at(-1))
  assert.not.match(again.stderr, /compiled/, `the second run is served from the cache\n${output(again)}`)
})

hook('tsx: a TypeScript entry imports the .cu (SCALE from the config file reaches the kernel)', () => {
  const r = project.pnpm(['run', 'start:tsx'], { env })
  assert.is(r.status, 0, output(r))
  assert.equal(JSON.parse(r.stdout.trim().split('\n').at(-1)!), { ok: true, kernels: ['saxpy', 'scale'] }, r.stdout)
})

hook('node --test: the test file imports the .cu and its ?manifest, and passes', () => {
  const r = project.pnpm(['test'], { env })
  assert.is(r.status, 0, output(r))
  assert.match(r.stdout, /^# pass 3$/m, r.stdout)
  assert.match(r.stdout, /^# fail 0$/m, r.stdout)
})

hook('a .cu that does not compile: the compiler\'s message at file:line:col with the code frame', () => {
  const r = project.run(process.execPath, ['--import', 'unplugin-cuda/register', 'broken/main.js'], { env })
  assert.is.not(r.status, 0, output(r))
  assert.match(r.stderr, /broken\/broken\.cu:4:22: error: identifier "not_declared" is undefined/, r.stderr)
  assert.match(r.stderr, /> 4 \|     y\[threadIdx\.x\] = not_declared \* 2\.0f;/, r.stderr)
  assert.not.ok(existsSync(join(project.dir, 'broken', 'broken.cu.d.ts')))
})

hook.run()
