// Runs of exact fma.rn.f32 sites through one loop (packages/webgpu/src/fma-batch.ts, issue 26): which runs are
// batched, that a site reading an earlier site's result (or writing the same register) starts a new run, and
// what a batched run reads and writes; then a kernel's WGSL as translated. test/webgpu/exact-rounding.test.ts
// runs a batched kernel on SwiftShader against the emulator, bit for bit.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { batchExactFma, FMA_BATCH_MAX, FMA_BATCH_MIN } from '../../packages/webgpu/src/fma-batch.js'
import { decodeForTranslation, SHIPPING_TARGET } from '../../packages/webgpu/src/from-ptx.js'
import { translateModule } from '../../packages/webgpu/src/emit-wgsl.js'

const s = suite('fma-batch: runs of exact fma sites')

const site = (d: string, a: string, b: string, c: string, ind = '    ') => [`${ind}// fma.rn.f32 ${d}, ${a}, ${b}, ${c};`, `${ind}${d} = kp_fma_rn(${a}, ${b}, ${c});`]
/** The GEMM shape: acc_k = fma(a, b_k, acc_k), independent of one another. */
const gemm = (n: number, ind = '    ') => Array.from({ length: n }, (_, k) => site(`r_f${100 + k}`, 'r_f1', `r_f${10 + k}`, `r_f${100 + k}`, ind)).flat()

s('a run of independent sites becomes one loop over its operands, with plain fma() where fma() is fused', () => {
  const lines = ['    let t0 = 1u;', ...gemm(5), '    r_f9 = r_f100 + r_f104;']
  const out = batchExactFma(lines)
  assert.is(out[0], '    let t0 = 1u;')
  // the sites' PTX comments first, in order
  assert.equal(out.slice(1, 6), lines.filter((l) => l.includes('// fma')))
  const at = out.indexOf('    if (kp_fma_exact) {')
  assert.ok(at > 0, out.join('\n'))
  assert.equal(out.slice(at + 1, at + 12), [
    '      kp_fma_a[0] = r_f1; kp_fma_b[0] = r_f10; kp_fma_c[0] = r_f100;',
    '      kp_fma_a[1] = r_f1; kp_fma_b[1] = r_f11; kp_fma_c[1] = r_f101;',
    '      kp_fma_a[2] = r_f1; kp_fma_b[2] = r_f12; kp_fma_c[2] = r_f102;',
    '      kp_fma_a[3] = r_f1; kp_fma_b[3] = r_f13; kp_fma_c[3] = r_f103;',
    '      kp_fma_a[4] = r_f1; kp_fma_b[4] = r_f14; kp_fma_c[4] = r_f104;',
    '      kp_fma_batch(5u);',
    '      r_f100 = kp_fma_c[0];',
    '      r_f101 = kp_fma_c[1];',
    '      r_f102 = kp_fma_c[2];',
    '      r_f103 = kp_fma_c[3];',
    '      r_f104 = kp_fma_c[4];',
  ])
  assert.equal(out.slice(at + 12, at + 19), [
    '    } else {',
    '      r_f100 = fma(r_f1, r_f10, r_f100);',
    '      r_f101 = fma(r_f1, r_f11, r_f101);',
    '      r_f102 = fma(r_f1, r_f12, r_f102);',
    '      r_f103 = fma(r_f1, r_f13, r_f103);',
    '      r_f104 = fma(r_f1, r_f14, r_f104);',
    '    }',
  ])
  assert.is(out[at + 19], '    r_f9 = r_f100 + r_f104;')
  assert.is(out.length, at + 20)
})

s(`runs shorter than ${FMA_BATCH_MIN} sites stay as written`, () => {
  const lines = ['    let t0 = 1u;', ...gemm(FMA_BATCH_MIN - 1), '    r_f9 = r_f100;']
  assert.equal(batchExactFma(lines), lines)
})

s('a site that reads an earlier site\'s result, or writes its register again, starts a new run', () => {
  // a chain: each site's addend is the previous result, so nothing is batched
  const chain = Array.from({ length: 6 }, (_, k) => site(`r_f${51 + k}`, 'r_f1', 'r_f2', `r_f${50 + k}`)).flat()
  assert.equal(batchExactFma(chain), chain)
  // 4 independent sites, then one that reads the first's result (through a call): two runs, the second too short
  const read = [...gemm(4), ...site('r_f7', 'kp_nc(r_f100)', 'r_f2', 'r_f3')]
  const out = batchExactFma(read)
  assert.is(out.filter((l) => l.includes('kp_fma_batch(')).length, 1)
  assert.ok(out.includes('    r_f7 = kp_fma_rn(kp_nc(r_f100), r_f2, r_f3);'), out.join('\n'))
  assert.ok(out.indexOf('    r_f7 = kp_fma_rn(kp_nc(r_f100), r_f2, r_f3);') > out.indexOf('    }'), 'the dependent site comes after the batch')
  // the same register written twice
  const twice = [...gemm(4), ...site('r_f101', 'r_f1', 'r_f2', 'r_f3'), ...gemm(4).map((l) => l.replace(/r_f1(\d\d)\b/g, 'r_f2$1'))]
  const out2 = batchExactFma(twice)
  assert.equal(out2.filter((l) => l.includes('kp_fma_batch(')).map((l) => l.trim()), ['kp_fma_batch(4u);', 'kp_fma_batch(5u);'])
})

s('a site reading its own register is one site (the operands are read before any result is written)', () => {
  const out = batchExactFma(gemm(4))
  assert.ok(out.includes('      kp_fma_a[3] = r_f1; kp_fma_b[3] = r_f13; kp_fma_c[3] = r_f103;'), out.join('\n'))
  assert.ok(out.includes('      r_f103 = kp_fma_c[3];'))
})

s(`longer runs are cut at ${FMA_BATCH_MAX} sites; operands with calls and commas; per-sub-thread registers; another indentation ends a run`, () => {
  const long = batchExactFma(gemm(FMA_BATCH_MAX + 6))
  assert.equal(long.filter((l) => l.includes('kp_fma_batch(')).map((l) => l.trim()), [`kp_fma_batch(${FMA_BATCH_MAX}u);`, 'kp_fma_batch(6u);'])
  const calls = Array.from({ length: 4 }, (_, k) => site(`r_f${60 + k}[kp_c]`, `kp_nc(bitcast<f32>(select(1u, 2u, r_p1)))`, `r_f2[kp_c]`, `-r_f${70 + k}[kp_c]`)).flat()
  const out = batchExactFma(calls)
  assert.ok(out.includes('      kp_fma_a[2] = kp_nc(bitcast<f32>(select(1u, 2u, r_p1))); kp_fma_b[2] = r_f2[kp_c]; kp_fma_c[2] = -r_f72[kp_c];'), out.join('\n'))
  assert.ok(out.includes('      r_f62[kp_c] = kp_fma_c[2];'))
  const mixed = [...gemm(2), ...gemm(2, '      ').map((l) => l.replace(/r_f1(\d\d)\b/g, 'r_f3$1'))]
  assert.equal(batchExactFma(mixed), mixed)
})

s('a translated kernel: the unrolled run is batched, a chain is not, and the override is declared', () => {
  const acc = Array.from({ length: 8 }, (_, k) => `%f${10 + k}`)
  const ptx = `.version 8.0
.target sm_80
.address_size 64
.visible .entry run8(.param .u64 p)
{
  .reg .b64 %rd<3>; .reg .f32 %f<20>;
  ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
  ld.global.f32 %f1, [%rd2]; ld.global.f32 %f2, [%rd2+4];
${acc.map((f, k) => `  ld.global.f32 ${f}, [%rd2+${8 + 4 * k}];`).join('\n')}
${acc.map((f) => `  fma.rn.f32 ${f}, %f1, %f2, ${f};`).join('\n')}
  fma.rn.f32 %f3, %f1, %f2, %f10;
  fma.rn.f32 %f4, %f1, %f2, %f3;
  fma.rn.f32 %f5, %f1, %f2, %f4;
  fma.rn.f32 %f6, %f1, %f2, %f5;
${acc.map((f, k) => `  st.global.f32 [%rd2+${8 + 4 * k}], ${f};`).join('\n')}
  st.global.f32 [%rd2], %f6;
  ret;
}`
  const { module } = decodeForTranslation(ptx, 'run8.ptx')
  const t = translateModule(module, SHIPPING_TARGET, ptx)
  const k = t.kernels.get('run8')!
  assert.ok(k, `refused: ${JSON.stringify(t.refused)}`)
  assert.is(k.wgsl.match(/kp_fma_batch\(\d+u\);/g)?.join(' '), 'kp_fma_batch(8u);')
  assert.is(k.wgsl.match(/\br_f\d+ = kp_fma_rn\(/g)?.length, 4, 'the chain of four stays site by site')
  assert.match(k.wgsl, /override kp_fma_exact: bool = true;/)
  assert.match(k.wgsl, /var<private> kp_fma_c: array<f32, 64>;/)
})

s.run()
