// The wasm tier's per-thread values recomputed where the lane loops read them (emit-wasm.ts rematOf) instead of
// kept in a slot: besides affine values (inv + c·tid.x), a value defined once by 32-bit integer operations on
// the thread's index and block values — a lane `tid & 31`, a warp `tid >> 5`, a shared address
// `smem + (lane << 2)`, a predicate `lane == 0` — read across barriers and shuffles, also where the register
// it was computed from is written again later (nvcc keeps threadIdx.x in the register a later loop steps: the
// value is recomputed as its definition read it). Kernels written here, in nvcc's PTX, each checked against
// the JavaScript tier bit for bit and against values by hand, on the calling thread and on two workers.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { nvccPtx } from './helpers.js'
import { KernelRunner, type KernelArg } from '../helpers/kernel-runner.js'

const SOURCE = `
// block sums of rows (a block-stride loop, two shuffle butterflies through shared memory), then per thread a
// word made of the sum and of values derived from the thread's index after both barriers
extern "C" __global__ void lane_words(const int *in, int *out, int n)
{
    __shared__ int sh[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = 0;
    for (int c = threadIdx.x; c < n; c += blockDim.x) v += in[blockIdx.x * n + c];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    int t = lane < (int)(blockDim.x >> 5) ? sh[lane] : 0;
    for (int m = 16; m > 0; m >>= 1) t += __shfl_xor_sync(0xffffffffu, t, m);
    __syncthreads();
    for (int c = threadIdx.x; c < n; c += blockDim.x)
        out[blockIdx.x * n + c] = t * 1000 + lane * 10 + (warp ^ 5) + ((c * 3) >> 2) - ((threadIdx.x | 6) & 0x55);
}

// the warp's lanes in shared memory: each lane's word at smem + (lane << 2) written before a barrier and read
// after one, at the warp's mirror lane, with a shuffle between
extern "C" __global__ void mirror_lanes(const int *in, int *out)
{
    __shared__ int s[1024];
    unsigned lane = threadIdx.x & 31u, base = (threadIdx.x >> 5) << 5;
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    v += __shfl_down_sync(0xffffffffu, v, 1);
    s[base + lane] = v;
    __syncthreads();
    int w = s[base + (31u - lane)];
    w = __shfl_xor_sync(0xffffffffu, w, 3);
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = w * 7 + (int)(lane << 3) - (int)(base >> 1);
}
`

const ptx = nvccPtx(SOURCE)

async function run(codegen: 'wasm' | 'js', workers: number, kernel: string, grid: number, block: number, input: Int32Array, outWords: number, scalars: KernelArg[]): Promise<{ words: Int32Array; inspect: string }> {
  const be = createEmulatorBackend({ codegen, workers })
  try {
    const k = await KernelRunner.load(be, ptx, 'compute_80', `remat kernels (${codegen}, ${workers} workers)`)
    const din = await k.upload(input), dout = await k.alloc(outWords * 4)
    await k.launch(kernel, [grid, 1, 1], block, [din, dout, ...scalars])
    return { words: await k.read(dout, Int32Array), inspect: (k.module as unknown as { inspect(name: string): string }).inspect(k.entry(kernel)) }
  } finally {
    be.dispose()
  }
}

async function both(kernel: string, grid: number, block: number, input: Int32Array, outWords: number, scalars: KernelArg[] = []): Promise<Int32Array> {
  const js = await run('js', 0, kernel, grid, block, input, outWords, scalars)
  const wasm = await run('wasm', 0, kernel, grid, block, input, outWords, scalars)
  const wasm2 = await run('wasm', 2, kernel, grid, block, input, outWords, scalars)
  assert.equal([...wasm.words], [...js.words], `${kernel}: wasm tier, calling thread`)
  assert.equal([...wasm2.words], [...js.words], `${kernel}: wasm tier, 2 workers`)
  assert.match(wasm.inspect, /tier: WebAssembly/)
  // (the warp-level code runs as whole warps: the recomputed values feed 4-lane and 32-lane code)
  assert.match(wasm.inspect, /a whole warp at once/, wasm.inspect)
  return wasm.words
}

const ints = (n: number) => Int32Array.from({ length: n }, (_, i) => (((i * 2654435761) >>> 20) % 2001) - 1000)

const s = suite('wasm tier: per-thread values recomputed from the thread\'s index where they are read')

s('lane and warp values after barriers and shuffles: every word as by hand', async () => {
  for (const [rows, n, block] of [[6, 1024, 256], [5, 300, 96], [3, 64, 128]] as const) {
    const x = ints(rows * n)
    const got = await both('lane_words', rows, block, x, rows * n, [n])
    for (let r = 0; r < rows; r++) {
      let t = 0
      for (let c = 0; c < n; c++) t += x[r * n + c]!
      for (let c = 0; c < n; c++) {
        const tid = c % block, lane = tid & 31, warp = tid >> 5
        const want = (Math.imul(t, 1000) + lane * 10 + (warp ^ 5) + ((c * 3) >> 2) - ((tid | 6) & 0x55)) | 0
        if (got[r * n + c] !== want) assert.unreachable(`${rows}x${n}/${block}: row ${r}, column ${c}: ${got[r * n + c]} for ${want}`)
      }
    }
  }
})

s('lanes at smem + (lane << 2) across barriers, the mirror lane read: every word as by hand', async () => {
  for (const [grid, block] of [[4, 256], [3, 64]] as const) {
    const x = ints(grid * block)
    const got = await both('mirror_lanes', grid, block, x, grid * block)
    const v = (g: number, t: number) => {
      // lane l's v after shfl.down by 1: its own plus lane l + 1's (the last lane keeps its own twice)
      const l = t & 31, src = l < 31 ? t + 1 : t
      return (x[g * block + t]! + x[g * block + src]!) | 0
    }
    for (let g = 0; g < grid; g++) {
      for (let t = 0; t < block; t++) {
        const lane = t & 31, base = t & ~31
        // w of lane l: s[base + 31 - l'] for l' = l ^ 3
        const l2 = lane ^ 3
        const w = v(g, base + (31 - l2))
        const want = (Math.imul(w, 7) + (lane << 3) - (base >> 1)) | 0
        if (got[g * block + t] !== want) assert.unreachable(`${grid}x${block}: block ${g}, thread ${t}: ${got[g * block + t]} for ${want}`)
      }
    }
  }
})

s.run()
