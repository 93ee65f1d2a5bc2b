// The emulator where WebAssembly's relaxed SIMD is on (issue 24): Chromium and Node 22 and later compile
// f32x4.relaxed_madd, and where the emulator's start-up probe (relaxedMaddFused) finds it fused, bit for bit
// against the exact fma, fma.rn.f32 is the CPU's fused multiply-add, one instruction for 4 lanes. Node 20
// (this project's CI) has relaxed SIMD behind --experimental-wasm-relaxed-simd, so bench/run.ts starts this
// file's process with that flag there; emulator.bench.ts measures the same kernels on the exact path. Only the
// kernel with fma.rn in its inner loop runs here (the tiled matmul; the other six have no fma, or the same
// code either way), with the same workload, native reference and interleaving as emulator.bench.ts, and
// `emulator (relaxed SIMD) …` names.
import { relaxedMaddFused } from '../packages/emulator/src/wasm/emit-wasm.js'
import { compilePtx, corpusConfigs } from '../test/helpers/ptx-cache.js'
import { ownSource } from '../test/fixtures/emulator/cases-own.js'
import type { BenchResult } from './lib.js'
import { buildNativeRef } from './native/native-ref.js'
import { measure, workloads } from './emulator.bench.js'

export async function run(): Promise<BenchResult[]> {
  const fused = relaxedMaddFused()
  // without a fused multiply-add here the figures would be emulator.bench.ts's again, under another name
  if (!fused.f32) throw new Error('emulator-relaxed.bench.ts: relaxed SIMD\'s f32x4.relaxed_madd is not fused on this machine (or not compiled): the emulator runs the exact fma path, which emulator.bench.ts measures')
  const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
  const ptx = await compilePtx({ source: ownSource, config })
  const results: BenchResult[] = []
  const native = buildNativeRef()
  try {
    for (const w of workloads.filter((x) => x.entry === 'matmul_tile16')) await measure(w, ptx, config.target, native, results, 'emulator (relaxed SIMD)')
  } finally {
    native.dispose()
  }
  for (const r of results) r.reference += '; fma.rn.f32 as relaxed SIMD\'s fused multiply-add (the start-up probe found it exact)'
  return results
}
