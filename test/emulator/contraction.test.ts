// Multiply-add contraction (issue 32, part 1): a Julia set (test/fixtures/emulator/julia.cu, built by nvcc)
// whose iteration magnifies a one-ulp difference. nvcc 13 writes its step as
//   mul re2 = re*re; mul im2 = im*im; sub d = re2 - im2;          (left to ptxas, which fuses re*re into it)
//   mul t = re*im; fma.rn m = re*im + t; add re' = d + cr; add im' = m + ci;
//   mul s = im'*im'; fma.rn n = re'*re' + s; setp.gt n, 1000
// The emulator must give the pixels the JS model below gives with ptxas's fusion (fma(re, re, -im2)), which
// differ from the unfused ones in some pixels; `fmad: false` gives the unfused ones, on the backend and
// through loadModule. Built with nvcc --fmad=false, the PTX carries .rn everywhere and nothing contracts.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { loadModule } from '@kernelpack/runtime'
import { readPtxManifest } from '@kernelpack/toolchain'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { fixturesDir } from '../helpers/tools.js'

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const source = join(fixturesDir, 'emulator', 'julia.cu')
const ptx = await compilePtx({ source, config })
// nvcc --fmad=false writes .rn on every mul, add and sub (and no fma.rn of its own)
const ptxNoFmad = await compilePtx({ source, config, extraArgs: ['--fmad=false'] })

const f = Math.fround

/** fma.rn.f32, exactly: a*b is exact in binary64 and a*b + c = s + e exactly (TwoSum); rounding s to f32 is
 *  right unless s lies halfway between two floats, where the sign of e decides. */
function fma32(a: number, b: number, c: number): number {
  const p = a * b
  const s = p + c
  const v = s - p
  const e = (p - (s - v)) + (c - v)
  const r = f(s)
  const other = 2 * s - r
  if (r === s || e === 0 || f(other) !== other) return r
  return e > 0 ? Math.max(r, other) : Math.min(r, other)
}

const dim = 128, steps = 200
const cr = f(-0.8), ci = f(0.156)

/** The escape steps julia.cu computes: nvcc's PTX with ptxas's contraction (`fused`) or without
 *  (`unfused`), or the PTX of nvcc --fmad=false, where every operation is rounded (`rounded`). */
function model(kind: 'fused' | 'unfused' | 'rounded'): Int32Array {
  const out = new Int32Array(dim * dim)
  const half = f(Math.trunc(dim / 2))
  for (let y = 0; y < dim; y++) {
    for (let x = 0; x < dim; x++) {
      let re = f(f(f(half - x) * 1.5) / half), im = f(f(f(half - y) * 1.5) / half)
      let k = 0
      for (; k < steps; k++) {
        const im2 = f(im * im)
        const d = kind === 'fused' ? fma32(re, re, -im2) : f(f(re * re) - im2)
        const m = kind === 'rounded' ? f(f(re * im) + f(re * im)) : fma32(re, im, f(re * im))
        re = f(d + cr)
        im = f(m + ci)
        if ((kind === 'rounded' ? f(f(re * re) + f(im * im)) : fma32(re, re, f(im * im))) > 1000) break
      }
      out[y * dim + x] = k
    }
  }
  return out
}

const fusedModel = model('fused')
const unfusedModel = model('unfused')
const differing = fusedModel.reduce((n, v, i) => n + (v !== unfusedModel[i] ? 1 : 0), 0)

async function render(options: { fmad?: boolean; workers?: number; codegen?: 'js' | 'wasm' }, text = ptx): Promise<Int32Array> {
  const be = createEmulatorBackend({ workers: 0, ...options })
  try {
    const k = await KernelRunner.load(be, text, config.target, 'julia.cu (nvcc)')
    const out = await k.alloc(4 * dim * dim)
    await k.launch('julia', [dim / 16, dim / 16, 1], [16, 16, 1], [out, dim, cr, ci, steps])
    return await k.read(out, Int32Array)
  } finally {
    be.dispose()
  }
}

const mismatches = (a: Int32Array, b: Int32Array) => a.reduce((n, v, i) => n + (v !== b[i] ? 1 : 0), 0)

const s = suite('multiply-add contraction: a Julia set')

s('the fusion matters here: the models differ in some pixels', () => {
  assert.ok(differing > 0, 'the fused and unfused models agree everywhere: the test would not tell them apart')
})

for (const codegen of ['js', 'wasm'] as const) {
  s(`by default the emulator contracts as ptxas does: every pixel as the fused model (${codegen} tier)`, async () => {
    const img = await render({ codegen })
    assert.is(mismatches(img, fusedModel), 0, `the image differs from the fused model in ${mismatches(img, fusedModel)} pixels, from the unfused one in ${mismatches(img, unfusedModel)} (the models differ in ${differing}; they mirror nvcc 13's PTX)`)
  })

  s(`fmad: false rounds the product on its own: every pixel as the unfused model (${codegen} tier)`, async () => {
    assert.is(mismatches(await render({ fmad: false, codegen }), unfusedModel), 0)
  })
}

s('the same with 2 workers', async () => {
  assert.is(mismatches(await render({ workers: 2 }), fusedModel), 0)
})


s('PTX built with nvcc --fmad=false contracts nothing, as ptxas would not: every pixel as every operation rounded', async () => {
  assert.not.match(ptxNoFmad, /\bfma\.rn\.f32|\b(mul|add|sub)\.f32\b/, 'nvcc --fmad=false writes .rn on every operation')
  const rounded = model('rounded')
  assert.is(mismatches(await render({}, ptxNoFmad), rounded), 0)
  assert.ok(mismatches(rounded, fusedModel) > 0)
})

s('loadModule passes fmad on', async () => {
  const manifest = await readPtxManifest(ptx, { demangle: false })
  for (const [fmad, want] of [[undefined, fusedModel], [false, unfusedModel]] as const) {
    const mod = await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'emulator', workers: 0, ...(fmad === undefined ? {} : { fmad }) })
    const out = await mod.alloc(4 * dim * dim)
    await mod.kernel('julia').launch({ grid: [dim / 16, dim / 16], block: [16, 16] }, out, dim, cr, ci, steps)
    await mod.synchronize()
    assert.is(mismatches(await out.download(new Int32Array(dim * dim)), want), 0, `fmad ${String(fmad)}`)
  }
})

// A product fused into an add on the far side of a warp collective: the add reads the product's operands
// (fma(a, b, c)), which the PTX leaves dead after the mul. They must survive to the add, in the thread loops
// (from one lane loop to the next, on both tiers) and across the continuation scheme's suspension.
const fusedAcross = `.version 8.0
.target sm_80
.address_size 64
.visible .entry fused_across(.param .u64 pa, .param .u64 pout)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pout];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3DCCCCCD;
  mul.f32 %f3, %f1, %f2;
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
  cvt.rn.f32.u32 %f4, %r2;
  add.f32 %f5, %f3, %f4;
  add.s64 %rd5, %rd2, %rd3;
  st.global.f32 [%rd5], %f5;
  ret;
}
`

for (const [name, options] of [
  ['thread loops, JavaScript', { workers: 0, codegen: 'js' }],
  ['thread loops, WebAssembly', { workers: 0, codegen: 'wasm' }],
  ['continuation scheme', { workers: 0, threadLoops: false }],
] as const) {
  s(`a product fused into an add after a shfl.sync keeps its operands to the add (${name})`, async () => {
    const backend = createEmulatorBackend(options)
    try {
      const k = await KernelRunner.load(backend, fusedAcross, 'compute_80', `fused_across (${name})`)
      const a = Float32Array.from({ length: 64 }, (_, i) => f(1 + i / 7))
      const out = await k.alloc(4 * 64)
      await k.launch('fused_across', 1, 64, [await k.upload(a), out])
      const got = await k.read(out, Float32Array)
      for (let t = 0; t < 64; t++) assert.is(got[t], fma32(a[t]!, f(a[t]! + f(0.1)), t ^ 1), `lane ${t}`)
    } finally {
      backend.dispose()
    }
  })
}

s.run()
