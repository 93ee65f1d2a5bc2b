// 64-bit atomic and/or/xor whose old value no thread reads, on WebGPU (issue 26): WGSL has no 64-bit atomics,
// but a bitwise operation never carries from one 32-bit half into the other, so each half is its own 32-bit
// atomic and the word ends as the 64-bit operations in any order leave it. Kernels written here (a bitmap of
// seen values, a mask cleared bit by bit, a running xor, bits spread over several words, on global and shared
// memory), built by nvcc (compute_80) and clang 22 (sm_80), run in headless chromium (SwiftShader) and on the
// emulator, each word against BigInt; the same operations whose old value is read stay refused, by name.
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

const SOURCE = `// 64-bit atomic and/or/xor whose old value is not read (test/webgpu/atomics-u64.test.ts)
extern "C" __global__ void bits64(unsigned long long *words, const unsigned *in, unsigned n)
{
    __shared__ unsigned long long local[2];
    if (threadIdx.x < 2) local[threadIdx.x] = threadIdx.x ? ~0ull : 0ull;
    __syncthreads();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned v = in[i];
        unsigned long long bit = 1ull << (v & 63);
        atomicOr(&words[0], bit);
        atomicAnd(&words[1], ~bit);
        atomicXor(&words[2], (unsigned long long)v * 0x9E3779B97F4A7C15ull);
        atomicOr(&words[3 + ((v >> 6) & 3)], 1ull << ((v >> 8) & 63));
        atomicOr(&local[0], bit);
        atomicAnd(&local[1], ~(1ull << ((v >> 3) & 63)));
    }
    __syncthreads();
    if (threadIdx.x < 2) atomicXor(&words[7 + threadIdx.x], local[threadIdx.x]);
}

// the old value read: refused
extern "C" __global__ void or_old(unsigned long long *words, unsigned long long *old)
{
    old[threadIdx.x] = atomicOr(&words[0], 1ull << threadIdx.x);
}
`

const dir = join(repoRoot, 'test', '.out', 'atomics-u64')
mkdirSync(dir, { recursive: true })
const source = join(dir, 'atomics-u64.cu')
writeFileSync(source, SOURCE)
const configs = corpusConfigs.filter((c) => c.label === 'nvcc compute_80' || c.label === 'clang sm_80')
const texts = await compilePtxAll(configs.map((config) => ({ source, config })))
const pages = await startWebGpuPages()

const N = 3000, BLOCK = 128, BLOCKS = Math.ceil(N / BLOCK)
const input = Uint32Array.from({ length: N }, (_, i) => ((i * 2654435761) >>> 7) ^ (i << 3))
const M64 = (1n << 64n) - 1n

/** The ten words as BigInt: the global ones, then each block's shared pair xor-ed into words 7 and 8. */
function expected(): bigint[] {
  const w = [0n, M64, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n]
  const blocks: Array<[bigint, bigint]> = Array.from({ length: BLOCKS }, () => [0n, M64])
  input.forEach((v, i) => {
    const bit = 1n << BigInt(v & 63)
    w[0] |= bit
    w[1] &= ~bit & M64
    w[2] ^= (BigInt(v) * 0x9E3779B97F4A7C15n) & M64
    w[3 + ((v >>> 6) & 3)] |= 1n << BigInt((v >>> 8) & 63)
    const b = blocks[Math.floor(i / BLOCK)]!
    b[0] |= bit
    b[1] &= ~(1n << BigInt((v >>> 3) & 63)) & M64
  })
  for (const [a, b] of blocks) { w[7] ^= a; w[8] ^= b }
  return w
}

async function run(k: KernelRunner): Promise<bigint[]> {
  const words = await k.upload(new BigUint64Array(10).fill(0n).map((_, i) => (i === 1 ? M64 : 0n)))
  await k.launch('bits64', BLOCKS, BLOCK, [words, await k.upload(input), N])
  return [...await k.read(words, BigUint64Array)]
}

configs.forEach((config, r) => {
  const s = suite<{ gpu?: PageBackend; k?: KernelRunner }>(`WebGPU: 64-bit atomic and/or/xor, results unused (${config.label})`, {})
  s.before(async (ctx) => {
    ctx.gpu = await pages.open({ partial: true })
    ctx.k = await KernelRunner.load(ctx.gpu, texts[r]!, config.target, `atomics-u64.cu (${config.label}, WebGPU)`)
  })
  s.after(async (ctx) => {
    await ctx.gpu?.page.close()
    if (r === configs.length - 1) await pages.close()
  })
  s('every word as BigInt gives it, on WebGPU and on the emulator', async (ctx) => {
    assert.equal(ctx.gpu!.refused.filter((x) => x.kernel === ctx.k!.entry('bits64')), [])
    const want = expected()
    const got = await run(ctx.k!)
    const emu = createEmulatorBackend({ workers: 0 })
    try {
      const ke = await KernelRunner.load(emu as unknown as Backend, texts[r]!, config.target, `atomics-u64.cu (${config.label}, emulator)`)
      assert.equal((await run(ke)).map((x) => x.toString(16)), want.map((x) => x.toString(16)), 'emulator')
    } finally {
      emu.dispose()
    }
    assert.equal(got.map((x) => x.toString(16)), want.map((x) => x.toString(16)), 'WebGPU')
  })
  s('an or whose old value is read is refused, by name', (ctx) => {
    const why = ctx.gpu!.refused.filter((x) => x.kernel === ctx.k!.entry('or_old')).map((x) => x.reason)
    assert.is(why.length, 1, JSON.stringify(ctx.gpu!.refused))
    assert.match(why[0]!, /64-bit atom\.or whose old value is used: WGSL has no 64-bit atomics/)
  })
  s.run()
})
