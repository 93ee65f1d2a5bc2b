import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, readdirSync, readFileSync, realpathSync, writeFileSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { buildCudaFile, findCompiler, ToolchainError } from '@kernelpack/toolchain'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'
import { exec } from './exec.js'

const empty = tempDir('kp-find-empty-')

async function rejects(p: Promise<unknown>, re: RegExp): Promise<Error> {
  try {
    await p
  } catch (err) {
    assert.instance(err, ToolchainError)
    assert.match((err as Error).message, re)
    return err as Error
  }
  assert.unreachable('should reject')
  throw new Error('unreachable')
}

// ---

const find = suite('findCompiler')

find('nvcc: path, version and supported archs read from the tool itself', async () => {
  const nvcc = tool('nvcc')
  const c = await findCompiler('nvcc', { env: { PATH: dirname(nvcc) } })
  assert.is(c.kind, 'nvcc')
  assert.is(c.path, nvcc)
  const text = (await exec(nvcc, ['--version'])).stdout
  assert.ok(text.includes(`V${c.version}`), c.version)
  const codes = (await exec(nvcc, ['--list-gpu-code'])).stdout.match(/sm_\d+/g)!.map((s) => Number(s.slice(3))).sort((a, b) => a - b)
  assert.equal(c.archs, codes)
  assert.match(c.identity, /^[0-9a-f]{64}$/)
  assert.is(c.cudaPath, dirname(dirname(realpathSync(nvcc))))
})

find('clang: versioned clang++-NN on PATH, version from --version, CUDA toolkit from CUDA_PATH', async () => {
  const clang = tool('clang++')
  const versioned = tempDir('kp-find-clang-')
  // Only a versioned name on this PATH (like Debian's /usr/bin/clang++-22).
  await exec('ln', ['-s', clang, join(versioned, 'clang++-22')])
  const c = await findCompiler('clang', { env: { PATH: versioned, CUDA_PATH: dirname(dirname(tool('nvcc'))) }, wellKnown: false })
  assert.is(c.kind, 'clang')
  assert.is(c.path, join(versioned, 'clang++-22'))
  assert.ok((await exec(clang, ['--version'])).stdout.includes(`clang version ${c.version}`))
  assert.is(c.cudaPath, dirname(dirname(tool('nvcc'))))
})

find('an explicit path is probed for its kind', async () => {
  const c = await findCompiler(tool('clang++'))
  assert.is(c.kind, 'clang')
  await rejects(findCompiler('/bin/true'), /not usable: \/bin\/true is neither nvcc nor clang/)
  await rejects(findCompiler(join(empty, 'nvcc')), /not found/)
})

find('CUDA_PATH is searched before PATH', async () => {
  const root = dirname(dirname(tool('nvcc')))
  const c = await findCompiler('nvcc', { env: { PATH: empty, CUDA_PATH: root }, wellKnown: false })
  assert.is(c.path, join(root, 'bin', 'nvcc'))
})

find('nothing found: the error lists what was searched and how to install', async () => {
  const e1 = await rejects(findCompiler('nvcc', { env: { PATH: empty, CUDA_PATH: join(empty, 'cuda') }, wellKnown: false }), /nvcc not found/)
  assert.ok(e1.message.includes(join(empty, 'cuda', 'bin', 'nvcc')) && e1.message.includes(join(empty, 'nvcc')), e1.message)
  assert.match(e1.message, /install the CUDA toolkit/)
  assert.is((e1 as ToolchainError).userError, true)
  const e2 = await rejects(findCompiler(undefined, { env: { PATH: empty }, wellKnown: false }), /no CUDA compiler \(nvcc or clang\)/)
  assert.match(e2.message, /apt-get install clang-22/)
})

find('with a cache directory the identity is read from a record keyed by the executables\' stat', async () => {
  const real = realpathSync(tool('nvcc'))
  const bin = tempDir('kp-find-link-')
  await exec('ln', ['-s', real, join(bin, 'nvcc')])
  const cacheDir = tempDir('kp-find-cache-')
  const a = await findCompiler(join(bin, 'nvcc'), { cacheDir })
  const records = readdirSync(join(cacheDir, 'v1', 'compilers'))
  assert.is(records.length, 1)
  // Tamper with the record: a later lookup (a different in-memory key) must return it without probing.
  const recordFile = join(cacheDir, 'v1', 'compilers', records[0]!)
  const rec = JSON.parse(readFileSync(recordFile, 'utf8'))
  rec.info.version = 'from-the-record'
  writeFileSync(recordFile, JSON.stringify(rec))
  const b = await findCompiler(join(bin, 'nvcc'), { cacheDir, env: { ...process.env, PATH: `${process.env.PATH}:${empty}` } })
  assert.equal(b, { ...a, version: 'from-the-record' })
})

find('a wrapper script is probed in every process (its stat says nothing about the compiler behind it)', async () => {
  const bin = tempDir('kp-find-wrap-')
  const log = join(bin, 'calls.log')
  const wrapper = join(bin, 'nvcc')
  writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${tool('nvcc')}' "$@"\n`)
  chmodSync(wrapper, 0o755)
  const cacheDir = tempDir('kp-find-cache-')
  const a = await findCompiler(wrapper, { cacheDir })
  assert.equal(readFileSync(log, 'utf8').split('\n').filter(Boolean), ['--version', '--list-gpu-code'])
  const b = await findCompiler(wrapper, { cacheDir, env: { ...process.env, PATH: `${process.env.PATH}:${empty}` } })
  assert.equal(b, a)
  assert.is(readFileSync(log, 'utf8').split('\n').filter(Boolean).length, 4)
})

find('buildCudaFile with a missing compiler or file fails with a ToolchainError', async () => {
  const file = join(fixturesDir, 'reference-cu', 'scalars.cu')
  await rejects(buildCudaFile(file, { compiler: join(empty, 'nvcc'), cacheDir: false }), /compiler '.*nvcc' not found/)
  await rejects(buildCudaFile(join(empty, 'missing.cu'), { cacheDir: false }), /cannot read .*missing\.cu: no such file/)
  await rejects(buildCudaFile(file, { arch: 'sm_50', cacheDir: false }), /does not support sm_50/)
  assert.not.ok(existsSync(join(empty, 'node_modules')))
})

find.run()
