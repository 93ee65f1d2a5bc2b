// analysis/contraction.ts: which mul/add pairs ptxas fuses into one fma (issue 32, part 1). Each case is a
// kernel that loads four values, computes, and stores its results; the expected fusions are what ptxas 13 did
// with such PTX for sm_80 (the cases in the analysis's comment), and the second suite assembles every case with
// ptxas --fmad=true and --fmad=false and checks that the cubins differ by exactly the fusions the analysis
// finds: one FFMA/DFMA more per fused add, one FMUL/DMUL less per product that is gone.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeContraction, decodeModule, parsePtx, type IrFunction } from '@kernelpack/ptx'
import { assemble, countFloatOps } from '../../helpers/sass.js'

interface Case {
  name: string
  body: string
  outs: string[]
  /** The adds that fuse (their text) and the operand the product is. */
  fused: Array<[string, 1 | 2]>
  t?: 'f32' | 'f64'
}

const cases: Case[] = [
  { name: 'mul then add', body: 'mul.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [['add.f32 %f6, %f5, %f3', 1]] },
  { name: 'the product as the second operand of an add', body: 'mul.f32 %f5, %f1, %f2; add.f32 %f6, %f3, %f5;', outs: ['%f6'], fused: [['add.f32 %f6, %f3, %f5', 2]] },
  { name: 'sub, the product first', body: 'mul.f32 %f5, %f1, %f2; sub.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [['sub.f32 %f6, %f5, %f3', 1]] },
  { name: 'sub, the product second', body: 'mul.f32 %f5, %f1, %f2; sub.f32 %f6, %f3, %f5;', outs: ['%f6'], fused: [['sub.f32 %f6, %f3, %f5', 2]] },
  { name: 'f64', t: 'f64', body: 'mul.f64 %fd5, %fd1, %fd2; sub.f64 %fd6, %fd3, %fd5;', outs: ['%fd6'], fused: [['sub.f64 %fd6, %fd3, %fd5', 2]] },
  { name: '.rn on the mul', body: 'mul.rn.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [] },
  { name: '.rn on the add', body: 'mul.f32 %f5, %f1, %f2; add.rn.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [] },
  { name: '.rz on the add', body: 'mul.f32 %f5, %f1, %f2; add.rz.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [] },
  { name: '.rn on an f64 mul', t: 'f64', body: 'mul.rn.f64 %fd5, %fd1, %fd2; add.f64 %fd6, %fd5, %fd3;', outs: ['%fd6'], fused: [] },
  { name: 'a product with two uses: an add and a store', body: 'mul.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f3;', outs: ['%f6', '%f5'], fused: [] },
  { name: 'a product with two uses: an add and a mul', body: 'mul.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f3; mul.f32 %f7, %f5, %f4;', outs: ['%f6', '%f7'], fused: [] },
  { name: 'a product with two uses, both adds: fused into both', body: 'mul.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f3; add.f32 %f7, %f5, %f4;', outs: ['%f6', '%f7'], fused: [['add.f32 %f6, %f5, %f3', 1], ['add.f32 %f7, %f5, %f4', 1]] },
  { name: 'a product feeding a mul: only the second product fuses', body: 'mul.f32 %f5, %f1, %f2; mul.f32 %f6, %f5, %f3; add.f32 %f7, %f6, %f4;', outs: ['%f7'], fused: [['add.f32 %f7, %f6, %f4', 1]] },
  { name: 'a product added to itself', body: 'mul.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f5;', outs: ['%f6'], fused: [] },
  { name: 'two products: the first operand\'s fuses', body: 'mul.f32 %f5, %f1, %f2; mul.f32 %f6, %f3, %f4; sub.f32 %f7, %f6, %f5;', outs: ['%f7'], fused: [['sub.f32 %f7, %f6, %f5', 1]] },
  { name: 'two products, the first with another add: the one used once fuses, the other nowhere', body: 'mul.f32 %f5, %f1, %f2; mul.f32 %f6, %f3, %f4; add.f32 %f7, %f5, %f6; add.f32 %f8, %f5, %f4;', outs: ['%f7', '%f8'], fused: [['add.f32 %f7, %f5, %f6', 2]] },
  { name: '.ftz on both', body: 'mul.ftz.f32 %f5, %f1, %f2; add.ftz.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [['add.ftz.f32 %f6, %f5, %f3', 1]] },
  { name: '.ftz on the mul only', body: 'mul.ftz.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [] },
  { name: '.sat on the add', body: 'mul.f32 %f5, %f1, %f2; add.sat.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [['add.sat.f32 %f6, %f5, %f3', 1]] },
  { name: 'a barrier, a store and a label nothing jumps to between', body: 'mul.f32 %f5, %f1, %f2; bar.sync 0; st.global.f32 [%rd1+60], %f1; $unused: add.f32 %f6, %f5, %f3;', outs: ['%f6'], fused: [['add.f32 %f6, %f5, %f3', 1]] },
  { name: 'a branch between', body: 'mul.f32 %f5, %f1, %f2; setp.eq.f32 %p1, %f1, %f2; @%p1 bra $skip; add.f32 %f3, %f5, %f3; $skip:', outs: ['%f3'], fused: [] },
  { name: 'div.rn.f32 between (ptxas calls a subroutine for it)', body: 'mul.f32 %f5, %f1, %f2; div.rn.f32 %f7, %f3, %f4; add.f32 %f6, %f5, %f7;', outs: ['%f6'], fused: [] },
  { name: 'div.approx.f32 between', body: 'mul.f32 %f5, %f1, %f2; div.approx.f32 %f7, %f3, %f4; add.f32 %f6, %f5, %f7;', outs: ['%f6'], fused: [['add.f32 %f6, %f5, %f7', 1]] },
  { name: 'a guarded add', body: 'mul.f32 %f5, %f1, %f2; setp.eq.f32 %p1, %f1, %f2; @%p1 add.f32 %f3, %f5, %f3;', outs: ['%f3'], fused: [['@%p1 add.f32 %f3, %f5, %f3', 1]] },
]

function ptxOf(c: Case): string {
  const t = c.t ?? 'f32'
  const r = t === 'f32' ? '%f' : '%fd'
  const sz = t === 'f32' ? 4 : 8
  const loads = [1, 2, 3, 4].map((i) => `  ld.global.${t} ${r}${i}, [%rd1+${(i - 1) * sz}];`).join('\n')
  const stores = c.outs.map((o, i) => `  st.global.${t} [%rd1+${(8 + i) * sz}], ${o};`).join('\n')
  return `.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_a)
{
  .reg .pred %p<4>;
  .reg .f32 %f<16>;
  .reg .f64 %fd<16>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd0, [k_a];
  cvta.to.global.u64 %rd1, %rd0;
${loads}
  ${c.body}
${stores}
  ret;
}
`
}

function kernelOf(c: Case): IrFunction {
  return decodeModule(parsePtx(ptxOf(c))).functions[0]!
}

const rule = suite('analyzeContraction: the pairs ptxas fuses')
for (const c of cases) {
  rule(c.name, () => {
    const fn = kernelOf(c)
    const got = [...analyzeContraction(fn)].map(([a, f]) => {
      assert.is(fn.instructions[f.mul]!.op, 'mul', 'the fused product is a mul')
      return [fn.instructions[a]!.text, f.operand]
    })
    assert.equal(got, c.fused)
  })
}
rule.run()

// ---
const ptxas = suite('analyzeContraction: the cubins of ptxas --fmad=true and --fmad=false differ by its fusions')
for (const c of cases) {
  ptxas(c.name, () => {
    const fn = kernelOf(c)
    const fused = analyzeContraction(fn)
    const on = countFloatOps(assemble(ptxOf(c), true), 'k')
    const off = countFloatOps(assemble(ptxOf(c), false), 'k')
    const gone = new Set([...fused.values()].map((f) => f.mul)).size
    assert.is(on.FFMA + on.DFMA - off.FFMA - off.DFMA, fused.size, `fused adds: ptxas ${JSON.stringify(on)} / ${JSON.stringify(off)}`)
    assert.is(off.FMUL + off.DMUL - on.FMUL - on.DMUL, gone, 'products gone')
  })
}
ptxas.run()
