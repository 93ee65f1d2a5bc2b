// `kernelpack types` (issue 16 item 3): every .cu's declaration file before any bundler runs, in the form
// TypeScript's module resolution reads (cu.d.ts for bundler, d.cu.ts for node16/nodenext), the same text the
// plugin writes, `--check` for projects that commit them, and only the PTX compile the plugin then reuses.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile } from '@kernelpack/toolchain'
import { emitLoaderDts } from '@kernelpack/codegen'
import { main, type CliIO } from '../../packages/cli/src/main.js'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'

tool('nvcc')
const cu = join(fixturesDir, 'reference-cu')

function project(): string {
  const root = tempDir('kp-cli-types-')
  mkdirSync(join(root, 'src', 'kernels'), { recursive: true })
  copyFileSync(join(cu, 'extern_c.cu'), join(root, 'src', 'saxpy.cu'))
  copyFileSync(join(cu, 'templates.cu'), join(root, 'src', 'kernels', 'templates.cu'))
  mkdirSync(join(root, 'src', 'node_modules', 'dep'), { recursive: true })
  copyFileSync(join(cu, 'bad.cu'), join(root, 'src', 'node_modules', 'dep', 'skipped.cu'))
  return root
}

async function kp(cwd: string, args: string[]) {
  const out = { stdout: '', stderr: '' }
  const io: CliIO = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), cwd }
  const code = await main(['types', ...args], io)
  return { code, ...out }
}

const types = suite('kernelpack types')

types('writes <name>.cu.d.ts for every .cu under src (not node_modules), with the source\'s parameter names', async () => {
  const root = project()
  const cache = join(root, 'cache')
  const r = await kp(root, ['--cache-dir', cache])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stdout, 'src/saxpy.cu → src/saxpy.cu.d.ts (3 kernels)')
  assert.match(r.stdout, 'src/kernels/templates.cu → src/kernels/templates.cu.d.ts (7 kernels)')
  const dts = readFileSync(join(root, 'src', 'saxpy.cu.d.ts'), 'utf8')
  assert.match(dts, 'export declare const saxpy: Launcher<[n: number, a: number, x: DevicePointer, y: DevicePointer]>;')
  assert.not.ok(existsSync(join(root, 'src', 'saxpy.d.cu.ts')))
  assert.not.ok(existsSync(join(root, 'src', 'node_modules', 'dep', 'skipped.cu.d.ts')))
  // the plugin writes the same text for the same build
  const built = await buildCudaFile(join(root, 'src', 'saxpy.cu'), { cacheDir: cache, cwd: root })
  assert.is(emitLoaderDts({ manifest: built.manifest, name: 'src/saxpy.cu' }), dts)
  // …and compiles only the cubin: the PTX came from `kernelpack types` through the shared cache
  assert.equal([built.stats.compiles, built.stats.cacheHits], [1, 1])
})

types('--check: 0 when up to date, 1 naming the stale file after an edit, nothing written', async () => {
  const root = project()
  const cache = join(root, 'cache')
  assert.is((await kp(root, ['--cache-dir', cache, '-q'])).code, 0)
  const ok = await kp(root, ['--check', '--cache-dir', cache])
  assert.is(ok.code, 0, ok.stderr)
  const src = join(root, 'src', 'saxpy.cu')
  writeFileSync(src, readFileSync(src, 'utf8') + '\nextern "C" __global__ void extra(int *out) { out[0] = 1; }\n')
  const stale = await kp(root, ['--check', '--cache-dir', cache])
  assert.is(stale.code, 1)
  assert.match(stale.stderr, 'kernelpack types --check: 1 declaration file is missing or out of date: src/saxpy.cu.d.ts; run `kernelpack types`')
  assert.not.match(readFileSync(`${src}.d.ts`, 'utf8'), 'extra')
})

types('--form d.cu.ts writes <name>.d.cu.ts and removes the generated <name>.cu.d.ts (TypeScript would read the other first); a hand-written one stays', async () => {
  const root = project()
  const cache = join(root, 'cache')
  assert.is((await kp(root, ['--cache-dir', cache, '-q'])).code, 0)
  writeFileSync(join(root, 'src', 'kernels', 'templates.cu.d.ts'), '// my own declarations\nexport {}\n')
  const r = await kp(root, ['--form', 'd.cu.ts', '--cache-dir', cache])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stdout, 'src/saxpy.cu → src/saxpy.d.cu.ts (3 kernels)')
  assert.ok(existsSync(join(root, 'src', 'saxpy.d.cu.ts')))
  assert.not.ok(existsSync(join(root, 'src', 'saxpy.cu.d.ts')))
  assert.is(readFileSync(join(root, 'src', 'kernels', 'templates.cu.d.ts'), 'utf8'), '// my own declarations\nexport {}\n')
  assert.is((await kp(root, ['--form', 'd.ts'])).code, 2)
})

types('a .cu that does not compile: exit 1 with file:line:col, no declaration written, the others still are', async () => {
  const root = project()
  copyFileSync(join(cu, 'bad.cu'), join(root, 'src', 'bad.cu'))
  const r = await kp(root, ['--cache-dir', join(root, 'cache')])
  assert.is(r.code, 1)
  assert.match(r.stderr, /kernelpack types: src\/bad\.cu: compile failed, no declarations written\nsrc\/bad\.cu:\d+:\d+: error/)
  assert.not.ok(existsSync(join(root, 'src', 'bad.cu.d.ts')))
  assert.ok(existsSync(join(root, 'src', 'saxpy.cu.d.ts')))
})

types('named folders and files; a missing one is a user error; none found is no error', async () => {
  const root = project()
  const r = await kp(root, ['src/kernels', '--cache-dir', join(root, 'cache')])
  assert.is(r.code, 0, r.stderr)
  assert.ok(existsSync(join(root, 'src', 'kernels', 'templates.cu.d.ts')))
  assert.not.ok(existsSync(join(root, 'src', 'saxpy.cu.d.ts')))
  const missing = await kp(root, ['lib'])
  assert.is(missing.code, 1)
  assert.match(missing.stderr, 'lib: no such file or folder')
  const empty = tempDir('kp-cli-types-empty-')
  const none = await kp(empty, [])
  assert.is(none.code, 0)
  assert.match(none.stderr, 'no .cu files under .')
})

types.run()
