// The driver library stays loaded for as long as the cuda backend's entry points may be called: koffi unloads
// a library once its object is garbage-collected, and the entry points cuGetProcAddress returns do not hold it
// (issue 18: a GC after createCudaBackend unmapped libcuda and the next call crashed the process).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from '../helpers/tools.js'
import { buildTestDouble } from './libcuda-double.js'

const td = buildTestDouble()
const Lifetime = suite('cuda backend: libcuda lifetime')

Lifetime('driver calls after garbage collections still reach libcuda (the library is not unloaded)', () => {
  const r = spawnSync(process.execPath, ['--expose-gc', '--conditions=source', '--import', 'tsx', join(repoRoot, 'test', 'runtime', 'gc-after-load.ts'), td.path], { cwd: repoRoot, encoding: 'utf8' })
  assert.is(r.signal, null, `the child died with ${r.signal} (libcuda was unloaded under the backend): ${r.stderr}`)
  assert.is(r.status, 0, r.stderr)
  assert.match(r.stdout, /^ok \d+/m)
})

Lifetime.run()
