// WebGPU vs the PTX emulator (issue 15, "Must show"): in one headless chromium page (SwiftShader adapter, see
// test/helpers/webgpu.ts), vector add on 2^22 floats, a 192³ tiled matmul and a shared-memory reduction of
// 2^22 floats run on both backends from the same nvcc PTX (test/fixtures/webgpu/plumbing.cu), and sqrtf(a) / b and
// a vector add in f64 on 2^22 elements (bench/kernels/exact.cu: sqrt.rn and div.rn, exact integer routines on
// WebGPU; add.f64 in software binary64, against the hand-written f32 vector add), A/B interleaved,
// launch + synchronize timed (WebGPU: launch + the queue done); the figure is the ratio of the medians; beside
// them hand-written WGSL of the same kernels (bench/webgpu-hand.ts) on the same device, the translator's cost (issue 25: ratio = hand-written time / translated time, target ≥ 0.8).
// WebGPU against the emulator is reported, not a target: SwiftShader is a CPU. The WebGPU side runs the WGSL
// emit-wgsl translates from that PTX; the name of each figure names the translator.
// Smoke mode (KP_BENCH_SMOKE=1, bench/lib.ts): vector add and reduction on 2^12 floats and a 32³ matmul, one
// untimed and one timed launch per side.
import { join } from 'node:path'
import { smoke, type BenchResult } from './lib.js'
import { compilePtx, corpusConfigs } from '../test/helpers/ptx-cache.js'
import { repoRoot } from '../test/helpers/tools.js'
import { bundleForBrowser, inlineJson, modulePage, runPage } from '../test/helpers/webgpu.js'

const REPS = smoke ? 1 : 7

interface PageResult { adapter: string; translator: string; results: Array<{ name: string; emulatorMs: number; webgpuMs: number; handMs: number }> }

export async function run(): Promise<BenchResult[]> {
  const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
  const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'plumbing.cu'), config })
  const exactPtx = await compilePtx({ source: join(import.meta.dirname, 'kernels', 'exact.cu'), config })
  const js = await bundleForBrowser(join(import.meta.dirname, 'webgpu-page.ts'), { define: { KP_DATA: inlineJson({ ptx, exactPtx, arch: config.target, reps: REPS, smoke }) } })
  const r = await runPage<PageResult>({ '/': ['text/html', modulePage], '/page.js': ['text/javascript', js] }, { webgpu: true, timeoutMs: 300_000 })
  const adapter = r.adapter.replace(/^WebGPU: /, '')
  return r.results.flatMap((w) => [{
    name: `webgpu ${w.name} (chromium, ${adapter}; WGSL by ${r.translator})`,
    value: w.webgpuMs / 1000,
    unit: 's per launch',
    reference: 'PTX emulator in the same page, same PTX and inputs (A/B interleaved)',
    referenceValue: w.emulatorMs / 1000,
    ratio: w.webgpuMs / w.emulatorMs,
    target: 'report only (SwiftShader is a CPU); ratio < 1 means WebGPU is faster',
  }, {
    name: `webgpu translated vs hand-written WGSL: ${w.name} (chromium, ${adapter})`,
    value: w.webgpuMs / 1000,
    unit: 's per launch',
    reference: 'hand-written WGSL of the same kernel (bench/webgpu-hand.ts), same device and inputs, A/B interleaved; both: launch, then the queue done',
    referenceValue: w.handMs / 1000,
    ratio: w.handMs / w.webgpuMs,
    target: '>= 0.8 (issue 25: hand-written time / translated time)',
  }])
}
