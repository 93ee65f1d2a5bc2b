import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { parseArchSpec, DEFAULT_ARCH, NVCC_13_ARCHS, ToolchainError, type Target } from '@kernelpack/toolchain'
import { tool } from '../helpers/tools.js'
import { exec } from './exec.js'

const names = (ts: Target[]) => ts.map((t) => t.target)

function throws(spec: string | string[], re: RegExp, options = {}) {
  try {
    parseArchSpec(spec, options)
  } catch (err) {
    assert.instance(err, ToolchainError)
    assert.match((err as Error).message, re)
    assert.is((err as ToolchainError).userError, true)
    return
  }
  assert.unreachable(`${String(spec)} should be rejected`)
}

// ---

const parse = suite('parseArchSpec')

parse('CMake forms: NN = cubin + PTX, -real, -virtual, ;-lists', () => {
  assert.equal(names(parseArchSpec('80')), ['sm_80', 'compute_80'])
  assert.equal(names(parseArchSpec('80-real;90')), ['sm_80', 'sm_90', 'compute_90'])
  assert.equal(names(parseArchSpec('90-virtual')), ['compute_90'])
  assert.equal(names(parseArchSpec('90a-real')), ['sm_90a'])
  assert.equal(names(parseArchSpec('100f')), ['sm_100f', 'compute_100f'])
})

parse('nvcc names, arrays, commas and spaces; sorted and deduplicated', () => {
  assert.equal(names(parseArchSpec(['compute_90', 'sm_90a', 'sm_80', 'sm_80'])), ['sm_80', 'compute_90', 'sm_90a'])
  assert.equal(names(parseArchSpec('sm_90, compute_80 sm_100f')), ['compute_80', 'sm_90', 'sm_100f'])
  assert.equal(names(parseArchSpec('90;80')), names(parseArchSpec('80;90')))
})

parse('target fields: arch is the sm_ name of both kinds', () => {
  assert.equal(parseArchSpec('90a'), [
    { target: 'sm_90a', arch: 'sm_90a', kind: 'cubin', sm: 90, suffix: 'a' },
    { target: 'compute_90a', arch: 'sm_90a', kind: 'ptx', sm: 90, suffix: 'a' },
  ])
})

parse('DEFAULT_ARCH includes a PTX target (manifest, emulator)', () => {
  const ts = parseArchSpec(DEFAULT_ARCH)
  assert.ok(ts.some((t) => t.kind === 'ptx'))
  assert.ok(ts.some((t) => t.kind === 'cubin'))
})

parse('all and all-major follow the list nvcc itself prints', async () => {
  const listed = (await exec(tool('nvcc'), ['--list-gpu-code'])).stdout.match(/sm_\d+/g)!.map((s) => Number(s.slice(3)))
  assert.equal([...listed].sort((a, b) => a - b), NVCC_13_ARCHS)
  const all = parseArchSpec('all', { supported: listed })
  assert.equal(names(all.filter((t) => t.kind === 'cubin')).sort(), listed.map((n) => `sm_${n}`).sort())
  assert.equal(names(all.filter((t) => t.kind === 'ptx')), [`compute_${Math.max(...listed)}`])
  const major = parseArchSpec('all-major', { supported: listed })
  assert.equal(names(major.filter((t) => t.kind === 'cubin')), listed.filter((n) => n % 10 === 0).sort((a, b) => a - b).map((n) => `sm_${n}`))
})

parse('an `all` list without `supported` defines all/all-major but does not restrict other targets', () => {
  assert.equal(names(parseArchSpec('all-major', { all: [75, 80, 86, 90, 100, 120] })), ['sm_80', 'sm_90', 'sm_100', 'sm_120', 'compute_120'])
  assert.equal(names(parseArchSpec('sm_70', { all: [75, 80] })), ['sm_70'])
})

parse('native: one cubin per local GPU; a clear error without one', () => {
  assert.equal(names(parseArchSpec('native', { native: () => [86, 90] })), ['sm_86', 'sm_90'])
  throws('native', /needs a GPU, and none was found.*--arch 80/, { native: () => [] })
})

parse('bad specs name the item and the accepted syntax', () => {
  throws('', /no architecture given/)
  throws('80;banana', /'banana'.*CMake CUDA_ARCHITECTURES syntax/)
  throws('8', /2 or 3 digits/)
  throws('sm_80a', /'a' suffix exists from sm_90/)
  throws('90f', /'f' suffix exists from sm_100/)
  throws('80-rea', /not an architecture/)
  throws('lto_90', /LTO/)
  throws('sm_50', /does not support sm_50/, { supported: NVCC_13_ARCHS })
})

parse.run()
