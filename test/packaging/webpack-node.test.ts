// A webpack build for Node outside the repository, without any `externals` (issue 16, "Must show"): the
// runtime and the emulator are bundled, koffi is not (the runtime's import of it is left to Node), and the
// bundle runs its kernel on the emulator where there is no driver, saying why.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot, tool } from '../helpers/tools.js'
import { installProject, output } from './install.js'
import { packAll } from './pack.js'

tool('nvcc')
const project = installProject('webpack-node', packAll())
const env = { KERNELPACK_CACHE_DIR: join(repoRoot, 'test', '.out', 'packaging-cache') }

const wp = suite('packaging: webpack Node app without externals')

wp('builds with no externals configuration and runs on the emulator', () => {
  assert.not.match(readFileSync(join(project.dir, 'build.mjs'), 'utf8'), /externals(Type|Presets)?\s*:/)
  const b = project.pnpm(['run', 'build'], { env })
  assert.is(b.status, 0, output(b))
  const bundle = readdirSync(join(project.dir, 'dist')).filter((f) => f.endsWith('.js')).map((f) => readFileSync(join(project.dir, 'dist', f), 'utf8')).join('\n')
  assert.match(bundle, 'PTX emulator', 'the runtime is in the bundle')
  assert.not.match(bundle, 'koffi.node', 'koffi is not')
  assert.ok(readdirSync(join(project.dir, 'dist')).some((f) => f.endsWith('.offload')), 'the offload binary is emitted beside the bundle')
  // KERNELPACK_LIBCUDA at a missing file: no driver on any machine, GPU or not
  const r = project.pnpm(['start'], { env: { KERNELPACK_LIBCUDA: join(project.dir, 'no-libcuda.so.1') } })
  assert.is(r.status, 0, output(r))
  const line = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { ok: boolean; backend: string; reason: string }
  assert.equal([line.ok, line.backend], [true, 'emulator'], r.stdout)
  // pnpm keeps koffi beside @kernelpack/runtime only, so the bundle's import of it fails and auto says so
  assert.match(line.reason, /^auto: using the PTX emulator because (koffi, the optional dependency the cuda backend calls the driver through, was not found|no NVIDIA driver was found)/)
  // webpack followed the emulator's `new Worker(new URL('./worker.js', import.meta.url))` and emitted the
  // worker script, so launches run on worker_threads (issue 13)
  assert.match(line.reason, /; launches run on \d+ worker threads? \(worker_threads\) sharing device memory$/, line.reason)
})

wp.run()
