// The small demangler of @kernelpack/ptx (messages printed where no system demangler runs, e.g. the WebGPU
// backend's refusals in a browser): each name it reads is demangled exactly as GNU c++filt does (run here as the
// reference), and a name it does not cover (templates, operators) gives undefined rather than a wrong text.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { demangleFunctionName, readableName } from '@kernelpack/ptx'
import { tool } from '../helpers/tools.js'

const covered = [
  '_Z13collatz_stepsj', '_Z6vecAddPfS_S_i', '_Z7k_mixed5MixedPd', '_Z4k_fpfdPfPd', '_ZN2ns4axpyEfPKfPfi',
  '_Z3fooRKN2ns5PointES2_', '_Z1fv', '_Z1gPVi', '_ZN12_GLOBAL__N_13fooEv', '_Z5scalePffi', '_Z3barPKcS0_PcS1_',
  '_Z4sumsPyPxPtPsPhPaPb', '_Z3dotPKdS0_Pdm', '_ZN5outer5inner1fEPNS_1SEPNS0_1TE', '_Z1hPKVf', '_Z1kRiOi',
]
const notCovered = ['_Z5axpbyIfEvT_PKS0_S0_PS0_i', '_ZplRK1AS1_', 'vec_add', '_ZN1AC2Ev']
const s = suite('demangleFunctionName against c++filt')

s('every covered name reads exactly as c++filt prints it', () => {
  const want = execFileSync(tool('c++filt'), { input: covered.join('\n') + '\n', encoding: 'utf8' }).split('\n')
  covered.forEach((n, i) => assert.is(demangleFunctionName(n), want[i], n))
})

s('templates, operators, constructors and plain names are left alone: undefined, and readableName keeps the name', () => {
  for (const n of notCovered) assert.is(demangleFunctionName(n), undefined, n)
  assert.is(readableName('vec_add'), 'vec_add')
  assert.is(readableName('_Z13collatz_stepsj'), '_Z13collatz_stepsj (collatz_steps(unsigned int))')
})

s.run()
