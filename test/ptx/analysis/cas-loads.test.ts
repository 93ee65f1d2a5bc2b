// analysis/cas-loads.ts: which loads are the read of a compare-and-swap loop (issue 32, part 3).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeCasLoads } from '@kernelpack/ptx'
import { at, kernel } from '../helpers.js'

const cl = suite('analyzeCasLoads')

const loop = (load: string, cas: string, between = '') => kernel(`  ld.param.u64 %rd1, [k_a];
  ${load}
  ${between}
$retry:
  mov.b64 %fd2, %rd11;
  add.f64 %fd3, %fd1, %fd2;
  mov.b64 %rd10, %fd3;
  ${cas}
  setp.ne.s64 %p2, %rd11, %rd4;
  mov.u64 %rd11, %rd4;
  @%p2 bra $retry;
  ret;`).fn

cl('the Programming Guide\'s atomicAdd(double): the load feeds the expected value of a CAS on its address', () => {
  const fn = loop('ld.global.u64 %rd11, [%rd1];', 'atom.global.cas.b64 %rd4, [%rd1], %rd11, %rd10;')
  assert.equal([...analyzeCasLoads(fn)], [at(fn, 'ld.global.u64 %rd11')])
})

cl('through movs: a double loaded and moved to the integer register the CAS compares', () => {
  const fn = loop('ld.global.f64 %fd5, [%rd1+8];', 'atom.global.cas.b64 %rd4, [%rd1+8], %rd11, %rd10;', 'mov.b64 %rd12, %fd5;\n  mov.u64 %rd11, %rd12;')
  assert.equal([...analyzeCasLoads(fn)], [at(fn, 'ld.global.f64')])
})

cl('a shared variable named directly by the load and through a register by the CAS', () => {
  const fn = loop('ld.shared.u64 %rd11, [tile];', 'atom.shared.cas.b64 %rd4, [%r6], %rd11, %rd10;', 'mov.u32 %r6, tile;')
  assert.equal([...analyzeCasLoads(fn)], [at(fn, 'ld.shared.u64')])
})

cl('not the idiom: another address, another offset, the value as the new value, no CAS', () => {
  assert.equal([...analyzeCasLoads(loop('ld.global.u64 %rd11, [%rd2];', 'atom.global.cas.b64 %rd4, [%rd1], %rd11, %rd10;'))], [])
  assert.equal([...analyzeCasLoads(loop('ld.global.u64 %rd11, [%rd1+8];', 'atom.global.cas.b64 %rd4, [%rd1], %rd11, %rd10;'))], [])
  assert.equal([...analyzeCasLoads(loop('ld.global.u64 %rd11, [%rd1];', 'atom.global.cas.b64 %rd4, [%rd1], %rd10, %rd11;'))], [])
  assert.equal([...analyzeCasLoads(loop('ld.global.u64 %rd11, [%rd1];', 'atom.global.exch.b64 %rd4, [%rd1], %rd11;'))], [])
})

cl('a counter read beside atomicAdds is not the idiom', () => {
  const { fn } = kernel(`  ld.param.u64 %rd1, [k_a];
  atom.shared.add.u32 %r1, [tile], 1;
  ld.shared.u32 %r2, [tile];
  st.global.u32 [%rd1], %r2;
  ret;`)
  assert.equal([...analyzeCasLoads(fn)], [])
})

cl.run()
