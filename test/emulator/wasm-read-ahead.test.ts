// The wasm tier's read-ahead (emit-wasm.ts touchNextBlock): in a kernel with barriers, each block first reads a
// word of the first cache lines the next block (ctaid.x + 1) loads at its hoisted global load sites whose
// address depends on the block, so that the hardware prefetcher, which loses the stream while a block computes
// between barriers, starts it again there. A speed measure only: these tests hold it to changing nothing. Each kernel
// written here is checked against the JavaScript tier bit for bit and against sums by hand (integers, so any
// order gives the same sums), with nvcc's PTX, on the calling thread and on two workers; `inspect` names the
// PTX lines read ahead, and none for a load every block makes alike or for a kernel without barriers. The
// shapes: the bench's reduction with an input that ends at the last block's words (its next block's range
// lies past the allocation: nothing read there), a two-dimensional grid (no next block in the row at its
// end), threads a row of a matrix apart (one line a thread), a block's reads of a table every block shares,
// and kernels without barriers (a vector add, a warp-shuffle sum), which keep the hardware prefetcher's
// stream and get none.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { nvccPtx } from './helpers.js'
import { KernelRunner, type KernelArg } from '../helpers/kernel-runner.js'

const SOURCE = `
// the block's 2·blockDim.x words summed in shared memory (a tree, barriers between its steps)
__device__ int tree_sum(int *s, int v)
{
    unsigned t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
        if (t < st) s[t] += s[t + st];
        __syncthreads();
    }
    return s[0];
}

extern "C" __global__ void block_sums(const int *in, int *out, unsigned n)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + t;
    int v = 0;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    int r = tree_sum(s, v);
    if (t == 0) out[blockIdx.x] = r;
}

// rows of a matrix (blockIdx.y), each cut into chunks of 2·blockDim.x words (blockIdx.x)
extern "C" __global__ void grid2d_sums(const int *in, int *out, unsigned rowLen)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    const int *row = in + blockIdx.y * rowLen + blockIdx.x * blockDim.x * 2;
    int r = tree_sum(s, row[t] + row[t + blockDim.x]);
    if (t == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = r;
}

// column blockIdx.x of a matrix of COLS columns, a thread a row: threads a row (384 bytes) apart
#define COLS 96
extern "C" __global__ void column_sums(const int *in, int *out)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    int r = tree_sum(s, in[t * COLS + blockIdx.x] + in[(t + blockDim.x) * COLS + blockIdx.x]);
    if (threadIdx.x == 0) out[blockIdx.x] = r;
}

// each word times a weight of a table every block reads alike
extern "C" __global__ void weighted_sums(const int *in, const int *weight, int *out)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    int r = tree_sum(s, in[i] * weight[t]);
    if (t == 0) out[blockIdx.x] = r;
}

// no barriers: a thread loop the hardware prefetcher streams through
extern "C" __global__ void add_vectors(const int *a, const int *b, int *c)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}

// warp shuffles and no barrier: each warp's sum (the warps compute between loads without waiting for others)
extern "C" __global__ void warp_sums(const int *in, int *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    for (int m = 16; m > 0; m >>= 1) v += __shfl_down_sync(0xffffffffu, v, m);
    if ((threadIdx.x & 31) == 0) out[i >> 5] = v;
}
`

const ptx = nvccPtx(SOURCE)
const ptxLines = ptx.split('\n')

interface Run { words: Int32Array; inspect: string }

/** Runs `kernel` with `inputs` (each uploaded into an allocation of exactly its size) and the output's words
 *  after them, then the scalar arguments. */
async function run(codegen: 'wasm' | 'js', workers: number, kernel: string, grid: [number, number], block: number, inputs: Int32Array[], outWords: number, scalars: KernelArg[]): Promise<Run> {
  const be = createEmulatorBackend({ codegen, workers })
  try {
    const k = await KernelRunner.load(be, ptx, 'compute_80', `read-ahead kernels (${codegen}, ${workers} workers)`)
    const ins: KernelArg[] = []
    for (const x of inputs) ins.push(await k.upload(x))
    const out = await k.alloc(outWords * 4)
    await k.launch(kernel, [grid[0], grid[1], 1], block, [...ins, out, ...scalars])
    return { words: await k.read(out, Int32Array), inspect: (k.module as unknown as { inspect(name: string): string }).inspect(k.entry(kernel)) }
  } finally {
    be.dispose()
  }
}

/** The same launch on both tiers (the wasm tier on the calling thread and on two workers): every word equal. */
async function both(kernel: string, grid: [number, number], block: number, inputs: Int32Array[], outWords: number, scalars: KernelArg[] = []): Promise<Run> {
  const js = await run('js', 0, kernel, grid, block, inputs, outWords, scalars)
  const wasm = await run('wasm', 0, kernel, grid, block, inputs, outWords, scalars)
  const wasm2 = await run('wasm', 2, kernel, grid, block, inputs, outWords, scalars)
  assert.equal([...wasm.words], [...js.words], `${kernel}: wasm tier, calling thread`)
  assert.equal([...wasm2.words], [...js.words], `${kernel}: wasm tier, 2 workers`)
  assert.match(wasm.inspect, /tier: WebAssembly/, kernel)
  return wasm
}

/** The PTX lines the read-ahead line of `inspect` names (none where it has none). */
function readAheadLines(inspect: string): number[] {
  const m = /read-ahead: each block first reads a word of the first cache lines the next block loads at PTX lines? ([\d, ]+) \(/.exec(inspect)
  return m ? m[1]!.split(', ').map(Number) : []
}

const ints = (n: number) => Int32Array.from({ length: n }, (_, i) => (((i * 2654435761) >>> 20) % 2001) - 1000)

const s = suite('wasm tier: each block reads ahead the next block\'s lines')

s('the bench\'s reduction, its input ending at the last block\'s words: the sums, and its two loads read ahead', async () => {
  for (const [grid, block] of [[40, 256], [7, 128], [5, 64]] as const) {
    const n = grid * block * 2
    const x = ints(n)
    const r = await both('block_sums', [grid, 1], block, [x], grid, [n])
    for (let g = 0; g < grid; g++) {
      let sum = 0
      for (let k = 0; k < 2 * block; k++) sum += x[g * block * 2 + k]!
      assert.is(r.words[g], sum, `${grid}x${block}: block ${g}`)
    }
    const lines = readAheadLines(r.inspect)
    assert.is(lines.length, 2, r.inspect)
    for (const l of lines) assert.match(ptxLines[l - 1]!, /ld\.global/, `PTX line ${l}`)
  }
})

s('a two-dimensional grid, and threads a matrix row apart: the sums', async () => {
  const [cx, cy, block] = [3, 5, 64]
  const rowLen = cx * block * 2
  const x = ints(rowLen * cy)
  const r = await both('grid2d_sums', [cx, cy], block, [x], cx * cy, [rowLen])
  for (let y = 0; y < cy; y++) {
    for (let c = 0; c < cx; c++) {
      let sum = 0
      for (let k = 0; k < 2 * block; k++) sum += x[y * rowLen + c * block * 2 + k]!
      assert.is(r.words[y * cx + c], sum, `block (${c}, ${y})`)
    }
  }
  assert.is(readAheadLines(r.inspect).length, 2, r.inspect)
  // 256 rows of 96 columns: a thread's words 384 bytes apart; blocks are columns (the last one has no next)
  const cols = 96
  const m = ints(256 * cols)
  const c = await both('column_sums', [cols, 1], 128, [m], cols)
  for (let col = 0; col < cols; col++) {
    let sum = 0
    for (let row = 0; row < 256; row++) sum += m[row * cols + col]!
    assert.is(c.words[col], sum, `column ${col}`)
  }
  assert.is(readAheadLines(c.inspect).length, 2, c.inspect)
})

s('a table every block reads alike is not read ahead; kernels without barriers (a thread loop, warp shuffles) read nothing ahead', async () => {
  const [grid, block] = [12, 128]
  const x = ints(grid * block), w = Int32Array.from({ length: block }, (_, i) => (i % 7) - 3)
  const r = await both('weighted_sums', [grid, 1], block, [x, w], grid)
  for (let g = 0; g < grid; g++) {
    let sum = 0
    for (let t = 0; t < block; t++) sum += x[g * block + t]! * w[t]!
    assert.is(r.words[g], sum, `block ${g}`)
  }
  const lines = readAheadLines(r.inspect)
  assert.is(lines.length, 1, r.inspect)
  assert.match(ptxLines[lines[0]! - 1]!, /ld\.global/)
  // the weight's load is the other ld.global of the kernel: not the one read ahead
  const body = ptx.slice(ptx.indexOf('.entry weighted_sums'))
  const first = ptx.slice(0, ptx.indexOf('.entry weighted_sums')).split('\n').length
  const loads = body.split('\n').map((l, i) => [l, first + i] as const).filter(([l]) => /ld\.global/.test(l)).slice(0, 2).map(([, n]) => n)
  assert.is(loads.length, 2)
  assert.ok(loads.includes(lines[0]!), `${lines[0]} among ${loads}`)
  const a = ints(64 * 256), b2 = ints(64 * 256).reverse()
  const v = await both('add_vectors', [64, 1], 256, [a, b2], 64 * 256)
  for (let i = 0; i < a.length; i++) if (v.words[i] !== a[i]! + b2[i]!) assert.unreachable(`c[${i}]`)
  assert.is(readAheadLines(v.inspect).length, 0, v.inspect)
  assert.not.match(v.inspect, /read-ahead/)
  const x2 = ints(32 * 256)
  const ws = await both('warp_sums', [32, 1], 256, [x2], 32 * 8)
  for (let w = 0; w < 32 * 8; w++) {
    let sum = 0
    for (let l = 0; l < 32; l++) sum += x2[w * 32 + l]!
    assert.is(ws.words[w], sum, `warp ${w}`)
  }
  assert.not.match(ws.inspect, /read-ahead/, ws.inspect)
})

s.run()
