import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from '../helpers/tools.js'
import { exec } from './exec.js'

// A logging c++filt first on PATH, so the test can count demangler processes. Set before the module loads
// (it remembers the demangler it found).
const bin = tempDir('kp-demangle-')
const log = join(bin, 'calls.log')
const real = (await exec('sh', ['-c', 'command -v c++filt'])).stdout.trim()
writeFileSync(join(bin, 'c++filt'), `#!/bin/sh\necho call >> '${log}'\nexec '${real}' "$@"\n`)
chmodSync(join(bin, 'c++filt'), 0o755)
writeFileSync(log, '')
process.env.PATH = `${bin}:${process.env.PATH}`
const { demangleNames } = await import('@kernelpack/toolchain')

const calls = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length

// ---

const demangle = suite('demangleNames')

demangle('one demangler process for every batch of the build; results agree with llvm-cxxfilt', async () => {
  const names = Array.from({ length: 60 }, (_, i) => `_Z${`kernel${i}`.length}kernel${i}Pfi`)
  const out = await demangleNames(names)
  const ref = (await exec(tool('llvm-cxxfilt'), names)).stdout.trimEnd().split('\n')
  assert.equal(out, ref)
  assert.is(calls(), 1, 'one process for the probe and the batch')
  await demangleNames(names)
  assert.is(calls(), 1, 'names already seen are not demangled again')
  // another batch: the same process answers it
  const more = Array.from({ length: 5 }, (_, i) => `_Z${`more${i}`.length}more${i}v`)
  assert.equal(await demangleNames(more), (await exec(tool('llvm-cxxfilt'), more)).stdout.trimEnd().split('\n'))
  assert.is(calls(), 1, 'the demangler process is kept for the build')
})

demangle('extern "C" names, nvcc __nv_static_ prefixes and clang __intern__ suffixes', async () => {
  const out = await demangleNames([
    'saxpy',
    '__nv_static_39__9c386d43_17_static_kernels_cu_ddfd827a__Z11apply_scalePfi',
    '_ZL11apply_scalePfi__intern__e36e8000d9062220',
  ])
  const ref = (await exec(tool('llvm-cxxfilt'), ['_Z11apply_scalePfi', '_ZL11apply_scalePfi'])).stdout.trimEnd().split('\n')
  assert.equal(out, ['saxpy', ref[0], ref[1]])
})

demangle.run()
