// The emulator on its exact fma path (issue 24). Where relaxed SIMD compiles (Chromium, Node 22 and later; on
// Node 20 the emulator turns V8's --experimental-wasm-relaxed-simd on itself) and the start-up probe
// (relaxedMaddFused) finds f32x4.relaxed_madd fused, bit for bit against the exact fma, fma.rn.f32 is the CPU's
// fused multiply-add, one instruction for 4 lanes: emulator.bench.ts measures that, the default. This file
// measures the path an engine or CPU without it takes (KERNELPACK_EMULATOR_RELAXED_SIMD=0 forces it): x·y + z
// in binary64 for two lanes at a time, rounded once more, with the exact helper where that could go wrong.
// Only the kernel with fma.rn in its inner loop runs here (the tiled matmul; the other six have no fma, or the
// same code either way), with the same workload, native reference and interleaving as emulator.bench.ts, and
// `emulator (exact fma path) …` names.
import { relaxedMaddFused } from '../packages/emulator/src/wasm/emit-wasm.js'
import { compilePtx, corpusConfigs } from '../test/helpers/ptx-cache.js'
import { ownSource } from '../test/fixtures/emulator/cases-own.js'
import type { BenchResult } from './lib.js'
import { buildNativeRef } from './native/native-ref.js'
import { measure, workloads } from './emulator.bench.js'

export async function run(): Promise<BenchResult[]> {
  // this process only (each bench file runs in its own): the emulator keeps the exact paths
  process.env.KERNELPACK_EMULATOR_RELAXED_SIMD = '0'
  if (relaxedMaddFused().f32) throw new Error('emulator-exact-fma.bench.ts: the emulator still takes relaxed SIMD\'s fused multiply-add with KERNELPACK_EMULATOR_RELAXED_SIMD=0')
  const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
  const ptx = await compilePtx({ source: ownSource, config })
  const results: BenchResult[] = []
  const native = buildNativeRef()
  try {
    for (const w of workloads.filter((x) => x.entry === 'matmul_tile16')) await measure(w, ptx, config.target, native, results, 'emulator (exact fma path)')
  } finally {
    native.dispose()
  }
  for (const r of results) r.reference += '; fma.rn.f32 by the exact path (binary64, rounded again; relaxed SIMD\'s fused multiply-add not used)'
  return results
}
