// Threads that wait for one another in code of their own, on WebGPU (packages/webgpu/src/rounds.ts): a producer
// warp and consumer warps over a two-stage ring of shared memory, synchronized with mbarriers written as inline PTX
// (the shape CUTLASS's barriers take), with warp collectives inside each role (shfl.up scan and ballot in the
// producer; redux, match.any over activemask and __syncwarp in the consumers), then __syncthreads_count/_or over
// the threads still running (a last warp ends at once). Built by nvcc (compute_80) and clang 22 (sm_80), run in
// headless chromium (SwiftShader) in a block of 128 threads and in one of 320 (two CUDA threads an invocation),
// checked against a TypeScript reference and the emulator.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import type { Backend } from '../../packages/runtime/src/backend.js'
import { startWebGpuPages, type PageBackend } from '../helpers/webgpu-page.js'
import { repoRoot } from '../helpers/tools.js'
import { decodeForTranslation } from '../../packages/webgpu/src/from-ptx.js'
import { translateModule } from '../../packages/webgpu/src/emit-wgsl.js'

const SOURCE = `// Producer and consumer warps over a ring of shared memory (test/webgpu/rounds.test.ts)
#include <cstdint>

__device__ __forceinline__ unsigned smem(const void *p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbar_init(uint64_t *b, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(smem(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *b) {
  asm volatile("{\\n .reg .b64 st;\\n mbarrier.arrive.shared.b64 st, [%0];\\n}" :: "r"(smem(b)) : "memory");
}
// waits until the phase of the given parity completed
__device__ __forceinline__ void mbar_wait(uint64_t *b, unsigned parity) {
  asm volatile("{\\n .reg .pred p;\\n WAIT:\\n mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\\n @!p bra WAIT;\\n}" :: "r"(smem(b)), "r"(parity) : "memory");
}

constexpr int kStages = 2;
constexpr int kMaxConsumers = 256;

// warp 0 produces, warps 1 .. n-2 consume (blockDim.x - 64 threads), the last warp ends at once
extern "C" __global__ void roles(const int *in, int *out, int tiles) {
  __shared__ int ring[kStages][kMaxConsumers];
  __shared__ uint64_t full[kStages], empty[kStages];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int consumers = blockDim.x - 64;
  if (warp == (blockDim.x >> 5) - 1) return;
  if (tid == 0)
    for (int s = 0; s < kStages; ++s) { mbar_init(&full[s], 32); mbar_init(&empty[s], consumers); }
  __syncthreads();
  const int *src = in + blockIdx.x * tiles * consumers;
  int *dst = out + blockIdx.x * blockDim.x * 4;
  int mine = 0, reduced = 0, matches = 0;
  if (warp == 0) {
    for (int t = 0; t < tiles; ++t) {
      const int s = t % kStages;
      if (t >= kStages) mbar_wait(&empty[s], ((t / kStages) - 1) & 1);
      for (int c = lane; c < consumers; c += 32) {
        int v = src[t * consumers + c];
        for (int d = 1; d < 32; d <<= 1) {
          const int up = __shfl_up_sync(0xffffffffu, v, d);
          if (lane >= d) v += up;
        }
        ring[s][c] = v;
      }
      mine += __popc(__ballot_sync(0xffffffffu, (src[t * consumers + lane] & 1) != 0));
      mbar_arrive(&full[s]);
    }
  } else {
    const int c = tid - 32;
    for (int t = 0; t < tiles; ++t) {
      const int s = t % kStages;
      mbar_wait(&full[s], (t / kStages) & 1);
      const int v = ring[s][c];
      mine += v;
      reduced += __reduce_add_sync(0xffffffffu, v & 0xff);
      matches += __popc(__match_any_sync(__activemask(), v & 3));
      __syncwarp();
      mbar_arrive(&empty[s]);
    }
  }
  const int odd = __syncthreads_count(mine & 1);
  const int big = __syncthreads_or(mine > 4000);
  dst[tid * 4 + 0] = mine;
  dst[tid * 4 + 1] = reduced;
  dst[tid * 4 + 2] = matches;
  dst[tid * 4 + 3] = odd * 2 + big;
}
`

const dir = join(repoRoot, 'test', '.out', 'rounds')
mkdirSync(dir, { recursive: true })
const source = join(dir, 'rounds.cu')
writeFileSync(source, SOURCE)
const configs = corpusConfigs.filter((c) => c.label === 'nvcc compute_80' || c.label === 'clang sm_80')
const texts = await compilePtxAll(configs.map((config) => ({ source, config })))
const pages = await startWebGpuPages()

const BLOCKS = 3, TILES = 5

function input(block: number): Int32Array {
  const consumers = block - 64
  return Int32Array.from({ length: BLOCKS * TILES * consumers }, (_, i) => ((i * 2654435761) >>> 9) % 97 - 20)
}

/** What `roles` writes, 4 words per thread (the last warp's stay 0). */
function expected(block: number): Int32Array {
  const consumers = block - 64
  const xs = input(block)
  const out = new Int32Array(BLOCKS * block * 4)
  for (let b = 0; b < BLOCKS; b++) {
    const src = xs.subarray(b * TILES * consumers)
    const mine = new Int32Array(block - 32), reduced = new Int32Array(block - 32), matches = new Int32Array(block - 32)
    for (let t = 0; t < TILES; t++) {
      let ballot = 0
      for (let l = 0; l < 32; l++) if (src[t * consumers + l]! & 1) ballot++
      for (let l = 0; l < 32; l++) mine[l]! += ballot
      // each 32 values the producer loads together, scanned
      const ring = new Int32Array(consumers)
      for (let g = 0; g < consumers; g += 32) {
        let acc = 0
        for (let l = 0; l < 32; l++) { acc = (acc + src[t * consumers + g + l]!) | 0; ring[g + l] = acc }
      }
      for (let g = 0; g < consumers; g += 32) {
        let sum = 0
        for (let l = 0; l < 32; l++) sum += ring[g + l]! & 0xff
        for (let l = 0; l < 32; l++) {
          const c = g + l
          mine[32 + c]! += ring[c]!
          reduced[32 + c]! += sum
          let same = 0
          for (let k = 0; k < 32; k++) if ((ring[g + k]! & 3) === (ring[c]! & 3)) same++
          matches[32 + c]! += same
        }
      }
    }
    let odd = 0, big = 0
    for (let t = 0; t < block - 32; t++) { if (mine[t]! & 1) odd++; if (mine[t]! > 4000) big = 1 }
    for (let t = 0; t < block - 32; t++) out.set([mine[t]!, reduced[t]!, matches[t]!, odd * 2 + big], (b * block + t) * 4)
  }
  return out
}

async function run(k: KernelRunner, block: number): Promise<Int32Array> {
  const out = await k.alloc(BLOCKS * block * 16)
  await k.launch('roles', BLOCKS, block, [await k.upload(input(block)), out, TILES])
  return k.read(out, Int32Array)
}

configs.forEach((config, r) => {
  const s = suite<{ gpu?: PageBackend; k?: KernelRunner }>(`WebGPU: threads waiting for one another in code of their own, in rounds (${config.label})`, {})
  s.before(async (ctx) => {
    ctx.gpu = await pages.open({ partial: true })
    ctx.k = await KernelRunner.load(ctx.gpu, texts[r]!, config.target, `rounds.cu (${config.label}, WebGPU)`)
  })
  s.after(async (ctx) => {
    await ctx.gpu?.page.close()
    if (r === configs.length - 1) await pages.close()
  })
  s('the kernel runs in rounds, with the warp collectives in them', (ctx) => {
    assert.equal(ctx.gpu!.refused, [])
    const { module } = decodeForTranslation(texts[r]!, 'rounds.cu')
    const t = translateModule(module, { features: new Set(), limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 16384 } }, texts[r]!)
    const wgsl = t.kernels.get(ctx.k!.entry('roles'))!.wgsl
    assert.match(wgsl, /var<workgroup> kp_sched/)
    assert.match(wgsl, /var<workgroup> kp_xpc: array<u32, kp_nt>/)
  })
  for (const block of [128, 320]) {
    s(`${block} threads: the reference's results, and the emulator's`, async (ctx) => {
      const want = [...expected(block)]
      const emu = createEmulatorBackend({ workers: 0 })
      try {
        const ke = await KernelRunner.load(emu as unknown as Backend, texts[r]!, config.target, `rounds.cu (${config.label}, emulator)`)
        assert.equal([...await run(ke, block)], want, 'emulator')
      } finally {
        emu.dispose()
      }
      assert.equal([...await run(ctx.k!, block)], want, 'WebGPU')
    })
  }
  s.run()
})
