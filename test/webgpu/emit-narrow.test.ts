// Which 64-bit registers emit-wgsl keeps as one u32 (narrowRegisters, README "Narrowing to u32"): those whose
// high word nothing reads — pointer arithmetic (ring operations) feeding addresses, or integer truncations.
// A register compared, shifted right, stored to memory as a value, converted to a float, or fed to an
// operation whose result needs its high word keeps both words. The translations are compared with the
// emulator by the kernel corpora on Dawn; this checks the decisions register by register.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { assignRegisterClasses, decodeModule, parsePtx } from '@kernelpack/ptx'
import { narrowRegisters } from '../../packages/webgpu/src/emit-kernel.js'

const kernel = (name: string, params: string, regs: string, body: string) => `.version 8.0
.target sm_80
.address_size 64
.visible .entry ${name}(${params})
{
${regs}
${body}
\tret;
}
`

/** The names of the narrowed registers of the PTX's one kernel. */
function narrowed(ptx: string): string[] {
  const fn = decodeModule(parsePtx(ptx), { perFunction: true }).functions[0]!
  return [...narrowRegisters(fn, assignRegisterClasses(fn))].map((r) => fn.registers[r]!.name).sort()
}

const regs = '\t.reg .pred %p<2>;\n\t.reg .b32 %r<4>;\n\t.reg .f32 %f<2>;\n\t.reg .b64 %rd<8>;'
const s = suite('narrowing 64-bit registers to u32')

s('pointer arithmetic that only feeds addresses is narrowed (nvcc\'s vector add)', () => {
  const ptx = kernel('k', '.param .u64 k_a, .param .u64 k_b', regs, `\tld.param.u64 %rd1, [k_a];
\tld.param.u64 %rd2, [k_b];
\tcvta.to.global.u64 %rd3, %rd1;
\tmov.u32 %r1, %tid.x;
\tmul.wide.s32 %rd4, %r1, 4;
\tadd.s64 %rd5, %rd3, %rd4;
\tld.global.f32 %f1, [%rd5];
\tcvta.to.global.u64 %rd6, %rd2;
\tadd.s64 %rd7, %rd6, %rd4;
\tst.global.f32 [%rd7], %f1;`)
  assert.equal(narrowed(ptx), ['%rd1', '%rd2', '%rd3', '%rd4', '%rd5', '%rd6', '%rd7'])
})

s('a value whose high word is read keeps both words: compared, shifted, stored, converted to a float', () => {
  const ptx = kernel('k', '.param .u64 k_a, .param .u64 k_n', regs, `\tld.param.u64 %rd1, [k_a];
\tld.param.u64 %rd2, [k_n];
\tadd.s64 %rd3, %rd2, 1;
\tsetp.lt.u64 %p1, %rd3, 100;
\tshr.u64 %rd4, %rd2, 33;
\tcvt.rn.f32.u64 %f1, %rd4;
\tst.global.u64 [%rd1], %rd3;
\tld.global.u64 %rd5, [%rd1+8];
\tcvt.rn.f32.u64 %f1, %rd5;
\tadd.s64 %rd6, %rd1, 16;
\tcvt.u32.u64 %r1, %rd6;
\tst.global.u32 [%rd6], %r1;`)
  // rd1 and rd6 are addresses (and a truncation); rd2 feeds a shift, rd3 a comparison and a stored value,
  // rd4 and rd5 conversions to float
  assert.equal(narrowed(ptx), ['%rd1', '%rd6'])
})

s('a register feeding a result that is not narrowed is not narrowed either', () => {
  const ptx = kernel('k', '.param .u64 k_a', regs, `\tld.param.u64 %rd1, [k_a];
\tadd.s64 %rd2, %rd1, 8;
\tld.global.u32 %r1, [%rd2];
\tadd.s64 %rd3, %rd2, 4;
\tsetp.eq.u64 %p1, %rd3, 0;`)
  // rd2 is an address, but also feeds rd3, which a 64-bit comparison reads
  assert.equal(narrowed(ptx), [])
})

s.run()
