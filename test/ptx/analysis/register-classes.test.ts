// analysis/register-classes.ts: typed registers keep their type; clang's untyped .b32/.b64 registers become
// floats when float uses outvote integer ones.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { assignRegisterClasses, decodeModule, parsePtx } from '@kernelpack/ptx'
import { kernel, PTX_HEAD, reg } from '../helpers.js'

const rc = suite('assignRegisterClasses')

rc('typed registers and clang-style votes', () => {
  const { fn } = kernel(`  ld.param.u64 %rd1, [k_a];
  ld.global.f32 %r1, [%rd1];
  add.f32 %r2, %r1, %r1;
  st.global.f32 [%rd1], %r2;
  mov.b32 %r3, 0f3F800000;
  add.s32 %r4, %r3, 1;
  mul.f32 %r5, %r3, %r3;
  mov.b64 %rd2, 0d3FF0000000000000;
  cvt.rn.f32.s32 %f1, %r6;
  setp.lt.f32 %p1, %r7, %f1;`)
  const c = assignRegisterClasses(fn)
  const of = (name: string) => c[reg(fn, name)]
  assert.equal([of('%p1'), of('%h1'), of('%f1'), of('%fd1')], ['pred', 'i16', 'f32', 'f64'])
  // %r1, %r2: loaded, added and stored as f32; %r3: a float literal, one float use against one integer use
  assert.equal([of('%r1'), of('%r2'), of('%r3'), of('%r4'), of('%r5')], ['f32', 'f32', 'f32', 'i32', 'f32'])
  // cvt votes its source by the source type; setp its operands by the compared type
  assert.equal([of('%r6'), of('%r7'), of('%rd1'), of('%rd2'), of('%rd3')], ['i32', 'f32', 'i64', 'f64', 'i64'])
})

rc('an unsupported register type names the function', () => {
  const m = decodeModule(parsePtx(`${PTX_HEAD}.visible .entry k() {\n  .reg .b128 %q;\n  ret;\n}`))
  assert.throws(() => assignRegisterClasses(m.functions[0]!), /PTX line 4: unsupported register type \.b128 for %q/)
})

rc.run()
