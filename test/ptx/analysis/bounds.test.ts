// analysis/bounds.ts: 64-bit magnitudes when 64-bit parameters are within ±2^40.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeBounds, assignRegisterClasses, PARAM_BOUND } from '@kernelpack/ptx'
import { kernel, reg } from '../helpers.js'

const bd = suite('analyzeBounds')

bd('parameters, widened products and sums are bounded; loop-carried increments and 64-bit products are not', () => {
  const { fn } = kernel(`  ld.param.u64 %rd1, [k_a];
  mov.u32 %r1, %tid.x;
  mul.wide.s32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  shl.b64 %rd4, %rd2, 2;
  mul.lo.s64 %rd5, %rd1, %rd1;
  mov.u64 %rd6, 0;
$loop:
  add.s64 %rd6, %rd6, %rd1;
  bra $loop;`)
  const b = analyzeBounds(fn, assignRegisterClasses(fn))
  const of = (name: string) => b.get(reg(fn, name))
  assert.is(of('%rd1'), PARAM_BOUND)
  assert.is(of('%rd2'), 2 ** 32 * 4)
  assert.is(of('%rd3'), PARAM_BOUND + 2 ** 34)
  assert.is(of('%rd4'), 2 ** 36)
  assert.is(of('%rd5'), Infinity)
  assert.is(of('%rd6'), Infinity)
  assert.is(of('%r1'), undefined)
})

bd.run()
