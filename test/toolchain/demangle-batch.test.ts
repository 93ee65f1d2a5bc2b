// A demangler that answers only once its input ends (a buffering wrapper in front of c++filt): the kept
// process of demangle.ts never answers its probe, so each batch gets a process of its own, with the same
// results. (A file of its own: the module keeps the demangler it found for the life of the process.)
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from '../helpers/tools.js'
import { exec } from './exec.js'

const bin = tempDir('kp-demangle-batch-')
const log = join(bin, 'calls.log')
const real = (await exec('sh', ['-c', 'command -v c++filt'])).stdout.trim()
// reads everything, then demangles: no line comes back before the input ends
writeFileSync(join(bin, 'c++filt'), `#!/bin/sh\necho call >> '${log}'\ninput=$(cat)\nprintf '%s\\n' "$input" | '${real}' "$@"\n`)
chmodSync(join(bin, 'c++filt'), 0o755)
writeFileSync(log, '')
process.env.PATH = `${bin}:${process.env.PATH}`
const { demangleNames } = await import('@kernelpack/toolchain')
const calls = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length

const batch = suite('demangleNames with a demangler that answers at the end of its input')

batch('one process per batch after the kept one failed its probe; the same names as llvm-cxxfilt', async () => {
  const first = ['_Z6kernelPfi', '_Z5saxpyfPKfPfi']
  const second = ['_Z4stepv']
  const ref = (names: string[]) => exec(tool('llvm-cxxfilt'), names).then((r) => r.stdout.trimEnd().split('\n'))
  assert.equal(await demangleNames(first), await ref(first))
  // the kept process (probe not answered in time), the probe again in a process of its own, the batch
  assert.is(calls(), 3)
  assert.equal(await demangleNames(second), await ref(second))
  assert.is(calls(), 4, 'one more process for the next batch')
})

batch.run()
