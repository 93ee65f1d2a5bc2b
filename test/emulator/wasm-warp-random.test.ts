// Random chains of warp shuffles with constant operands and arithmetic between them on the wasm tier (its
// warp runs: a whole warp at once, emit-wasm.ts warpRun) against the JavaScript tier's lane loops (issue 24),
// drawn by fast-check with a fixed seed: every mode, lane operands past 31, clamps below 31, 32-bit integer
// and f32 arithmetic, predicates read after the run, blocks whose warps are whole, cut short or split over
// rows, and a lane that leaves before the shuffles. Each launch must give the JavaScript tier's bytes.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, marshal, ptxBytes, upload } from './helpers.js'

interface Step { mode: 'up' | 'down' | 'bfly' | 'idx'; b: number; c: number; op: 'add.s32' | 'xor.b32' | 'mul.lo.s32' | 'sub.s32' | 'min.s32' | 'add.f32' | 'mul.f32' }
interface Chain { steps: Step[]; ntx: number; nty: number; quit: number }

function kernelPtx(ch: Chain): string {
  const lines: string[] = []
  ch.steps.forEach((st, i) => {
    // %r<10+i> holds the value going into step i
    const v = `%r${10 + i}`, got = `%r${40 + i}`, next = `%r${11 + i}`
    lines.push(`  shfl.sync.${st.mode}.b32 ${got}|%p${i}, ${v}, ${st.b}, ${st.c}, -1;`)
    if (st.op.endsWith('f32')) lines.push(`  mov.b32 %f1, ${got}; mov.b32 %f2, ${v}; ${st.op} %f3, %f1, %f2; mov.b32 ${next}, %f3;`)
    else lines.push(`  ${st.op} ${next}, ${got}, ${v};`)
  })
  const last = `%r${10 + ch.steps.length}`
  const preds = ch.steps.map((_, i) => `  selp.u32 %r80, ${1 << i}, 0, %p${i}; or.b32 %r81, %r81, %r80;`)
  return `.version 8.0
.target sm_80
.address_size 64
.visible .entry chain(.param .u64 in, .param .u64 out, .param .u32 quit)
{
  .reg .b64 %rd<8>; .reg .b32 %r<90>; .reg .f32 %f<4>; .reg .pred %p<16>;
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [quit];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x; mov.u32 %r3, %tid.y; mov.u32 %r4, %ntid.x;
  mad.lo.s32 %r5, %r3, %r4, %r2;
  setp.eq.s32 %p15, %r5, %r1;
  @%p15 bra $end;
  mul.wide.u32 %rd3, %r5, 4; add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r10, [%rd4];
${lines.join('\n')}
  mov.u32 %r81, 0;
${preds.join('\n')}
  mul.wide.u32 %rd5, %r5, 8; add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], ${last}; st.global.u32 [%rd6+4], %r81;
$end:
  ret;
}`
}

function run(ch: Chain, codegen: 'wasm' | 'js'): { out: Uint32Array; inspect: string } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(kernelPtx(ch)))
    const n = ch.ntx * ch.nty
    // small integers and floats' bits alike: the f32 steps read whatever bits the integer steps left
    const din = upload(be, Int32Array.from({ length: n }, (_, t) => (t % 3 === 0 ? 0x3f800000 + t * 4099 : ((t * 2654435761) >>> 8) % 2001 - 1000)))
    const dout = be.alloc(n * 8)
    be.launch(mod.getFunction('chain'), { grid: [1, 1, 1], block: [ch.ntx, ch.nty, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { u32: ch.quit }]))
    return { out: download(be, dout, new Uint32Array(n * 2)), inspect: mod.inspect('chain') }
  } finally {
    be.dispose()
  }
}

const step: fc.Arbitrary<Step> = fc.record({
  mode: fc.constantFrom('up', 'down', 'bfly', 'idx'),
  b: fc.oneof(fc.constantFrom(1, 2, 4, 8, 16), fc.integer({ min: 0, max: 40 })),
  c: fc.oneof(fc.constant(31), fc.constant(0), fc.integer({ min: 0, max: 31 })),
  op: fc.constantFrom('add.s32', 'xor.b32', 'mul.lo.s32', 'sub.s32', 'min.s32', 'add.f32', 'mul.f32'),
})
const chain: fc.Arbitrary<Chain> = fc.record({
  steps: fc.array(step, { minLength: 2, maxLength: 8 }),
  ntx: fc.constantFrom(32, 64, 96, 48, 16, 40),
  nty: fc.integer({ min: 1, max: 2 }),
  quit: fc.oneof(fc.constant(100000), fc.integer({ min: 0, max: 100 })),
})

const s = suite('wasm tier: random chains of constant shuffles, as the JavaScript tier runs them')

s('the JavaScript tier\'s values and predicates on every drawn chain', () => {
  let runs = 0
  fc.assert(fc.property(chain, (ch) => {
    const wasm = run(ch, 'wasm'), js = run(ch, 'js')
    if (/a whole warp at once/.test(wasm.inspect)) runs++
    let diff = -1
    for (let i = 0; i < js.out.length; i++) if (wasm.out[i] !== js.out[i]) { diff = i; break }
    assert.is(diff, -1, `${JSON.stringify(ch)}: word ${diff} is 0x${wasm.out[diff]?.toString(16)} on wasm, 0x${js.out[diff]?.toString(16)} on JS`)
  }), { numRuns: Number(process.env.KP_WASM_WARP_RUNS ?? 80), seed: Number(process.env.KP_WASM_WARP_SEED ?? 33), includeErrorInReport: true })
  assert.ok(runs > 30, `${runs} of the drawn kernels had a warp run`)
})

s.run()
