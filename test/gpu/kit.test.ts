// `pnpm gpu:kit` (scripts/gpu-kit.mjs, issue 18): the bundles a bare GPU machine runs. Built here without Node
// and caches into a temp folder outside the repository, so koffi resolves from the kit's own node_modules, and
// run: test:gpu --self-test against the libcuda test double, and the GPU bench without a driver.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot, tempDir } from '../helpers/tools.js'
import { buildTestDouble } from '../runtime/libcuda-double.js'
import type { Report } from './report.js'

const td = buildTestDouble()
const kit = tempDir('kp-gpu-kit-')
const out = tempDir('kp-gpu-kit-out-')
process.on('exit', () => { rmSync(kit, { recursive: true, force: true }); rmSync(out, { recursive: true, force: true }) })
const built = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'gpu-kit.mjs'), '--out', kit, '--no-node', '--no-cache'], { cwd: repoRoot, encoding: 'utf8' })
const env = { ...process.env, KP_REPO_ROOT: repoRoot }

const Kit = suite('pnpm gpu:kit')

Kit('writes the bundles, koffi with its x86-64 Linux binary, and the run script', () => {
  assert.is(built.status, 0, built.stderr)
  for (const f of ['test-gpu.mjs', 'bench-gpu.mjs', 'run-on-gpu.sh', 'node_modules/koffi/index.js', 'node_modules/@koromix/koffi-linux-x64/package.json',
    'node_modules/webgpu/index.js', 'node_modules/webgpu/dist/linux-x64/dawn.node.gz']) assert.ok(existsSync(join(kit, f)), f)
  const script = readFileSync(join(kit, 'run-on-gpu.sh'), 'utf8')
  assert.match(script, /test-gpu\.mjs" --timeout-s \d+ --case-timeout-s \d+ "\$@"/)
  // Dawn unpacked before the run, the NVIDIA Vulkan ICD looked for, the example run when the kit has it
  assert.match(script, /gunzip -c "\$DAWN\.gz" > "\$DAWN"/)
  assert.match(script, /nvidia_icd\.json/)
  assert.match(script, /"\$NODE" "\$KIT\/example\/main\.mjs" > "\$OUT\/example\.log"/)
})

Kit('the bundled test:gpu runs its self-test (sections in child processes of the bundle)', () => {
  const r = spawnSync(process.execPath, [join(kit, 'test-gpu.mjs'), '--self-test', '--libcuda', td.path, '--only', 'images,corpus', '--cases', 'emulator-own/vec_add', '--no-record', '--out', out], { cwd: repoRoot, encoding: 'utf8', env })
  assert.is(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report
  assert.is(report.mode, 'self-test')
  assert.is(report.kernels.length, 1)
  assert.is(report.kernels[0]!.status, 'pass')
  assert.ok(report.checks.some((c) => c.section === 'images' && c.status === 'pass'))
})

Kit('the bundled bench says "no GPU" without a driver', () => {
  const r = spawnSync(process.execPath, [join(kit, 'bench-gpu.mjs'), join(out, 'results.json')], { cwd: repoRoot, encoding: 'utf8', env: { ...env, KERNELPACK_LIBCUDA: '/nonexistent/libcuda.so.1' } })
  assert.is(r.status, 0, r.stderr)
  assert.match(r.stdout, /gpu: vecAdd 2\^22 kernel time \(CUDA events\) — no GPU/)
  const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { value: number | null }[]
  assert.is(results.length, 5)
  assert.ok(results.every((x) => x.value === null))
})

Kit.run()
