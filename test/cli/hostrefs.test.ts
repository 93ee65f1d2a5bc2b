import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { main, type CliIO } from '../../packages/cli/src/main.js'
import { fixturesDir, tempDir } from '../helpers/tools.js'

// cudafe++ 13.0 output and inputs (test/fixtures/codegen/nvcc, from reference/nvcc): <case>.rdc.{hostref.c,hostref-symbols.txt,module_id,sm_90.ptx}.
const nvccDir = join(fixturesDir, 'codegen', 'nvcc')
const dir = tempDir('kp-hostrefs-cli-')

async function cli(args: string[]) {
  const out = { stdout: '', stderr: '', code: 0 }
  const io: CliIO = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), cwd: dir }
  out.code = await main(['hostrefs', ...args], io)
  return out
}

// ---
const hostrefs = suite('hostrefs')

for (const name of ['extern_c', 'host_launch', 'scalars', 'shared_sync', 'static_kernels', 'structs', 'templates', 'unreferenced']) {
  hostrefs(`${name}: prints cudafe++'s blocks byte for byte`, async () => {
    const symbols = join(nvccDir, `${name}.rdc.hostref-symbols.txt`)
    const list = existsSync(symbols) ? symbols : join(dir, 'empty.txt')
    if (!existsSync(symbols)) writeFileSync(list, '')
    const moduleId = readFileSync(join(nvccDir, `${name}.rdc.module_id`), 'utf8').trim()
    const r = await cli(['--ptx', join(nvccDir, `${name}.rdc.sm_90.ptx`), '--symbols', list, '--module-id', moduleId])
    assert.is(r.stderr, '')
    assert.is(r.code, 0)
    assert.is(r.stdout, readFileSync(join(nvccDir, `${name}.rdc.hostref.c`), 'utf8'))
  })
}

hostrefs('default symbols: every kernel and variable of the PTX; -o writes the file', async () => {
  const out = join(dir, 'sk.c')
  const r = await cli(['--ptx', join(nvccDir, 'static_kernels.rdc.sm_90.ptx'), '-o', out])
  assert.is(r.code, 0)
  const text = readFileSync(out, 'utf8')
  assert.match(text, /\/\* __nv_static_39__9c386d43_17_static_kernels_cu_ddfd827a_\*19static_unreferenced\* \*\//)
  assert.match(text, /\/\* g_coeffs \*\//)
  assert.match(text, /\/\* _Z13external_poly\* \*\//)
})

hostrefs('default symbols skip compiler-made globals (nvcc\'s printf strings $str)', async () => {
  const r = await cli(['--ptx', join(nvccDir, 'structs.rdc.sm_90.ptx')])
  assert.is(r.code, 0, r.stderr)
  assert.not.match(r.stdout, /\$str/)
  assert.match(r.stdout, /\/\* _Z8k_arrays\* \*\//)
})

hostrefs('--c gives C without extern "C"', async () => {
  const r = await cli(['--ptx', join(nvccDir, 'extern_c.rdc.sm_90.ptx'), '--c'])
  assert.is(r.code, 0)
  assert.not.match(r.stdout, /extern/)
  assert.match(r.stdout, /section \("\.nvHRKE"\)/)
})

hostrefs('errors: usage 2, missing file or unknown symbol 1 with the name', async () => {
  assert.is((await cli([])).code, 2)
  assert.is((await cli(['--bogus'])).code, 2)
  const missing = await cli(['--ptx', 'nope.ptx'])
  assert.is(missing.code, 1)
  assert.match(missing.stderr, /nope\.ptx/)
  const list = join(dir, 'bad.txt')
  writeFileSync(list, 'saxpy\nnot_a_kernel\n')
  const unknown = await cli(['--ptx', join(nvccDir, 'extern_c.rdc.sm_90.ptx'), '--symbols', list])
  assert.is(unknown.code, 1)
  assert.match(unknown.stderr, /"not_a_kernel"/)
  const tmpl = await cli(['--ptx', join(nvccDir, 'templates.rdc.sm_90.ptx')])
  assert.is(tmpl.code, 1)
  assert.match(tmpl.stderr, /module id/)
})

hostrefs.run()
