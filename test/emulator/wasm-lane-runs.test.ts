// The wasm tier's warp-level code without shuffles (emit-wasm.ts laneRunEnd, skipWholeWarp): the lockstep steps
// of a warp-synchronous reduction's last warp (and any lane loop where every lane of the warp runs) as eight
// 4-lane values instead of 32 lane turns, and an `if (t < 32)` once per warp that a whole warp branches past
// skipped at once (tested on the warp's tx range where the guard compares %tid.x with a constant, else lane by
// lane). Checked against the JavaScript tier bit for bit and against sums by hand, with nvcc's PTX: blocks
// whose warps all run, a block size that cuts its last warp short, two-dimensional blocks (rows of 64 and of
// 16: a warp across two rows), lanes that returned before the warp-level code, a register the lane loops
// recompute (an address affine in %tid.x) read by a run, shared accesses in such an `if` tested once a block
// over the threads that reach them (a block of exactly a word a thread; a read past it that must fault).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'

const SOURCE = `
// lanes 0-15 of a warp sum its 32 values into a[0] in lockstep
__device__ void half_warp_sum(volatile int *a, unsigned l)
{
    a[l] += a[l + 16];
    a[l] += a[l + 8];
    a[l] += a[l + 4];
    a[l] += a[l + 2];
    a[l] += a[l + 1];
}

// the block's words of in into acc, a word of zeros after them each, then a barrier
__device__ void load_block(int *acc, const int *in)
{
    unsigned t = threadIdx.x;
    acc[t] = in[blockIdx.x * blockDim.x + t];
    acc[t + blockDim.x] = 0;
    __syncthreads();
}

// the last warp's 64 values into acc[0]
__device__ void last_warp(volatile int *acc, unsigned t)
{
    acc[t] += acc[t + 32];
    half_warp_sum(acc, t);
}

// Harris's reduction with the last warp unrolled over volatile shared memory (no __syncwarp): block_sums with
// a zeroed second word a thread (for blocks whose last warp reads past the block's own words), tight_sums in
// the bench's shape, exactly blockDim.x words, so acc[t + 32] is in range for the threads that run the last
// warp's code (t < 32) and not for the block's others
${['block_sums', 'tight_sums'].map((name) => `extern "C" __global__ void ${name}(const int *in, int *out, unsigned n)
{
    extern __shared__ int acc[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + t;
    int v = 0;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    acc[t] = v;${name === 'block_sums' ? '\n    acc[t + blockDim.x] = 0;' : ''}
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 32; half >>= 1) {
        if (t < half) acc[t] += acc[t + half];
        __syncthreads();
    }
    if (t < 32) last_warp(acc, t);
    if (t == 0) out[blockIdx.x] = acc[0];
}
`).join('\n')}
// the last warp reads 48 words on: past a block's shared memory of a word a thread from lane 16 of 64 threads
extern "C" __global__ void far_read(const int *in, int *out, unsigned n)
{
    extern __shared__ int acc[];
    unsigned t = threadIdx.x;
    acc[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    if (t < 32) { volatile int *a = acc; a[t] += a[t + 48]; a[t] += a[t + 1]; }
    if (t == 0) out[blockIdx.x] = acc[0];
}

// guards on %tid.x that cut warps short: lanes 0-19 (warp 0 narrowed to 20 lanes), and t >= 40 (warp 1 from its
// lane 8, the warps after it whole), each region with lockstep steps; then one inside another
extern "C" __global__ void partial_warps(const int *in, int *out)
{
    extern __shared__ int acc[];
    unsigned t = threadIdx.x;
    load_block(acc, in);
    volatile int *a = acc;
    if (t < 20) { a[t] += a[t + 20]; a[t] += a[t + 1]; a[t] = a[t + 3] - a[t]; }
    if (t >= 40) { a[t] += a[t + 2]; a[t] = a[t] * 3 + a[t + 1]; }
    __syncthreads();
    // nested: lanes 8-31 of warp 0, and within them those below 40 (all of them, not lanes of warp 1)
    if (t >= 8) {
        a[t] += a[t + 4];
        if (t < 40) { a[t] = a[t + 1] - a[t]; a[t] += a[t + 2]; }
        a[t] = a[t - 1] + 1;
    }
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = acc[t];
}

// every lane stores after its warp's lockstep steps, then the kernel returns (or, in a copy of its PTX, exits):
// the lane loop with the closing return holds the store
extern "C" __global__ void store_after_steps(const int *in, int *out)
{
    __shared__ int acc[512];
    unsigned t = threadIdx.x;
    load_block(acc, in);
    if ((t & 31) < 16) half_warp_sum(acc + (t & ~31u), t & 31);
    out[blockIdx.x * blockDim.x + t] = acc[t];
}

// the same per row of a two-dimensional block: the guard compares %tid.x, the row is %tid.y
extern "C" __global__ void row_sums(const int *in, int *out)
{
    extern __shared__ int acc[];
    unsigned t = threadIdx.x, w = blockDim.x;
    int *row = acc + threadIdx.y * 2 * w;
    row[t] = in[(blockIdx.x * blockDim.y + threadIdx.y) * w + t];
    row[t + w] = 0;
    __syncthreads();
    if (t < 32) last_warp(row, t);
    if (t == 0) out[blockIdx.x * blockDim.y + threadIdx.y] = row[0];
}

// lanes past n return first; the others sum their warp's first 32 values in lockstep
extern "C" __global__ void ended_lanes(const int *in, int *out, unsigned n)
{
    __shared__ int acc[512];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    acc[t] = 0;
    acc[t + blockDim.x] = 0;
    if (i >= n) return;
    acc[t] = in[i];
    if ((t & 31) < 16) {
        half_warp_sum(acc + (t & ~31u), t & 31);
    }
    if ((t & 31) == 0) out[i >> 5] = acc[t];
}

// a guard the same in each warp on another register than %tid.x: the warps it excludes skip after a lane-by-lane
// test of their guards
extern "C" __global__ void second_warp(const int *in, int *out)
{
    __shared__ int acc[512];
    unsigned t = threadIdx.x;
    load_block(acc, in);
    if ((t >> 5) == 1) {
        half_warp_sum(acc + 32, t & 31);
    }
    __syncthreads();
    if (t == 0) out[blockIdx.x] = acc[32];
}
`

const ptx = nvccPtx(SOURCE)

interface Run { words: Uint32Array; inspect: string }

function run(codegen: 'wasm' | 'js', kernel: string, grid: number, block: [number, number], input: Int32Array, outWords: number, shared: number, n?: number): Run {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    const din = upload(be, input)
    const dout = be.alloc(outWords * 4)
    const args = marshal([{ u64: din }, { u64: dout }, ...(n === undefined ? [] : [{ u32: n }])])
    const fault = launchOrFault(be, mod, kernel, { grid: [grid, 1, 1], block: [block[0], block[1], 1], sharedBytes: shared }, args)
    if (fault) throw new Error(`${kernel} (${codegen}): ${fault.message}`)
    return { words: download(be, dout, new Uint32Array(outWords)), inspect: mod.inspect(kernel) }
  } finally {
    be.dispose()
  }
}

const ints = (n: number) => Int32Array.from({ length: n }, (_, i) => (((i * 2654435761) >>> 20) % 2001) - 1000)

const s = suite('wasm tier: lane loops without shuffles, a warp at once; ifs a whole warp skips')

s('block sums with the last warp in lockstep: the JavaScript tier\'s words and the sums by hand', () => {
  // (block 96: the tree stops at 48, the last warp adds acc[t + 32] of the 64 elements; block 48: NTX not a
  // multiple of 32, its second warp 16 lanes; block 64: no halving step)
  for (const [grid, block, n] of [[8, 256, 4096], [5, 128, 1200], [4, 64, 500], [3, 96, 576], [4, 48, 384]] as const) {
    const x = ints(grid * block * 2)
    const wasm = run('wasm', 'block_sums', grid, [block, 1], x, grid, block * 8, n), js = run('js', 'block_sums', grid, [block, 1], x, grid, block * 8, n)
    const label = `${grid}x${block}, n=${n}`
    assert.equal([...wasm.words], [...js.words], label)
    if ((block & (block - 1)) === 0) {
      const got = new Int32Array(wasm.words.buffer)
      for (let g = 0; g < grid; g++) {
        let sum = 0
        for (let k = 0; k < 2 * block; k++) { const i = g * block * 2 + k; if (i < n) sum += x[i]! }
        assert.is(got[g], sum, `${label}: block ${g}`)
      }
      assert.match(wasm.inspect, /a whole warp at once \(eight 4-lane values a register\) in \d+ runs of lane loops without shuffles \(lockstep steps, or code between them\), from PTX lines [\d, ]+, where its 32 lanes all run/, label)
      // `if (t < 32)` and `if (t == 0)`: warps 1 … skip the last warp's code and the store after one test of
      // their tx range each
      assert.match(wasm.inspect, /a warp whose running lanes all branch past the ifs at PTX lines \d+, \d+ skips each at once \(each tested on the warp's %tid\.x range\)/, label)
    }
  }
})

s('exactly a word a thread of shared memory: the sums; a read past it in the last warp\'s code, the JavaScript tier\'s fault', () => {
  for (const [grid, block] of [[6, 256], [4, 128], [4, 64]] as const) {
    const n = grid * block * 2 - 5
    const x = ints(grid * block * 2)
    const wasm = run('wasm', 'tight_sums', grid, [block, 1], x, grid, block * 4, n), js = run('js', 'tight_sums', grid, [block, 1], x, grid, block * 4, n)
    assert.equal([...wasm.words], [...js.words], `${grid}x${block}`)
    const got = new Int32Array(wasm.words.buffer)
    for (let g = 0; g < grid; g++) {
      let sum = 0
      for (let k = 0; k < 2 * block; k++) { const i = g * block * 2 + k; if (i < n) sum += x[i]! }
      assert.is(got[g], sum, `${grid}x${block}: block ${g}`)
    }
  }
  // 64 threads, 64 words: lane 16 of the last warp's code reads acc[64], past the block's shared memory (96
  // threads: every read in range)
  const faults = (['wasm', 'js'] as const).map((codegen) => {
    const be = createEmulatorBackend({ codegen, workers: 0 })
    try {
      const mod = be.loadModule(ptxBytes(ptx))
      const x = ints(256)
      const args = marshal([{ u64: upload(be, x) }, { u64: be.alloc(16) }, { u32: 256 }])
      return launchOrFault(be, mod, 'far_read', { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 64 * 4 }, args)
    } finally {
      be.dispose()
    }
  })
  assert.ok(faults[0] && faults[1], 'both tiers fault')
  assert.is(faults[0]!.message, faults[1]!.message)
  assert.is(faults[0]!.instruction, faults[1]!.instruction)
  assert.ok(faults[1]!.instruction.startsWith('ld.volatile.shared'), faults[1]!.instruction)
  const x = ints(2 * 96)
  const wasm = run('wasm', 'far_read', 2, [96, 1], x, 2, 96 * 4, 0), js = run('js', 'far_read', 2, [96, 1], x, 2, 96 * 4, 0)
  assert.equal([...wasm.words], [...js.words], 'far_read, 96 threads')
})

s('rows of a two-dimensional block (64 and 32 wide, and 16: a warp over two rows): the JavaScript tier\'s words', () => {
  for (const [grid, w, h] of [[3, 64, 4], [2, 32, 8], [2, 16, 8]] as const) {
    // (rows of 16: lanes t + 16 .. t + 32 read the next row's zeros past the row's 16 values: the same on both tiers)
    const x = ints(grid * w * h)
    const rows = grid * h
    const wasm = run('wasm', 'row_sums', grid, [w, h], x, rows, w * h * 8 + 256), js = run('js', 'row_sums', grid, [w, h], x, rows, w * h * 8 + 256)
    assert.equal([...wasm.words], [...js.words], `${grid} blocks of ${w}x${h}`)
    if (w >= 32) {
      const got = new Int32Array(wasm.words.buffer)
      for (let r = 0; r < rows; r++) {
        let sum = 0
        for (let k = 0; k < Math.min(w, 64); k++) sum += x[r * w + k]!
        assert.is(got[r], sum, `${w}x${h}: row ${r}`)
      }
    }
  }
})

s('lanes that returned before the warp-level code: the JavaScript tier\'s words', () => {
  for (const [grid, block, n] of [[4, 128, 512], [4, 128, 300], [3, 96, 250], [2, 256, 17]] as const) {
    const x = ints(grid * block)
    const warps = Math.ceil(grid * block / 32)
    const wasm = run('wasm', 'ended_lanes', grid, [block, 1], x, warps, 0, n), js = run('js', 'ended_lanes', grid, [block, 1], x, warps, 0, n)
    assert.equal([...wasm.words], [...js.words], `${grid}x${block}, n=${n}`)
    // a warp whose 32 lanes all ran: lane 0 holds the sum of its 32 values
    const got = new Int32Array(wasm.words.buffer)
    for (let w = 0; w < warps; w++) {
      if (w * 32 + 31 >= n) continue
      let sum = 0
      for (let l = 0; l < 32; l++) sum += x[w * 32 + l]!
      assert.is(got[w], sum, `n=${n}: warp ${w}`)
    }
  }
})

s('guards that cut warps short (t < 20, t >= 40), and one inside another: the JavaScript tier\'s words and block 0 by hand', () => {
  for (const [grid, block] of [[3, 64], [2, 128], [2, 96], [2, 48]] as const) {
    const x = ints(grid * block)
    const wasm = run('wasm', 'partial_warps', grid, [block, 1], x, grid * block, block * 8), js = run('js', 'partial_warps', grid, [block, 1], x, grid * block, block * 8)
    assert.equal([...wasm.words], [...js.words], `${grid}x${block}`)
    // by hand for block 0: the steps in lockstep, lane by lane in the same order
    if (block === 64) {
      const a = [...Array.from(x.subarray(0, 64)), ...new Array(64).fill(0)]
      const step = (lanes: number[], f: (t: number) => number) => { const v = lanes.map(f); lanes.forEach((t, k) => { a[t] = v[k]! }) }
      const lo = Array.from({ length: 20 }, (_, t) => t), hi = Array.from({ length: 24 }, (_, k) => 40 + k)
      step(lo, (t) => (a[t]! + a[t + 20]!) | 0); step(lo, (t) => (a[t]! + a[t + 1]!) | 0); step(lo, (t) => (a[t + 3]! - a[t]!) | 0)
      step(hi, (t) => (a[t]! + a[t + 2]!) | 0); step(hi, (t) => (Math.imul(a[t]!, 3) + a[t + 1]!) | 0)
      // each warp in turn: its lanes from 8, then those below 40
      for (let w = 0; w < 2; w++) {
        const lanes = Array.from({ length: 32 }, (_, l) => 32 * w + l).filter((t) => t >= 8)
        step(lanes, (t) => (a[t]! + a[t + 4]!) | 0)
        const inner = lanes.filter((t) => t < 40)
        step(inner, (t) => (a[t + 1]! - a[t]!) | 0); step(inner, (t) => (a[t]! + a[t + 2]!) | 0)
        step(lanes, (t) => (a[t - 1]! + 1) | 0)
      }
      assert.equal([...new Int32Array(wasm.words.buffer).subarray(0, 64)], a.slice(0, 64), 'block 0 by hand')
    }
  }
})

s('blocks one after another after a closing ret or exit in warp-level code: every lane of every block runs', () => {
  // (thread states are set once a call where no thread ends before the closing return: a lane that ran the
  // closing `exit` must not count as ended in the next block)
  const entry = ptx.indexOf('.entry store_after_steps')
  const end = ptx.indexOf('\n}', entry)
  const body = ptx.slice(entry, end)
  assert.ok(/\tret;\s*$/.test(body), 'the kernel ends with ret')
  const exitPtx = ptx.slice(0, entry) + body.replace(/\tret;(\s*)$/, '\texit;$1') + ptx.slice(end)
  for (const text of [ptx, exitPtx]) {
    const words = (['wasm', 'js'] as const).map((codegen) => {
      const be = createEmulatorBackend({ codegen, workers: 0 })
      try {
        const mod = be.loadModule(ptxBytes(text))
        const x = ints(4 * 128)
        const out = be.alloc(4 * 128 * 4)
        const fault = launchOrFault(be, mod, 'store_after_steps', { grid: [4, 1, 1], block: [128, 1, 1], sharedBytes: 0 }, marshal([{ u64: upload(be, x) }, { u64: out }]))
        if (fault) throw new Error(fault.message)
        return download(be, out, new Int32Array(4 * 128))
      } finally {
        be.dispose()
      }
    })
    assert.equal([...words[0]!], [...words[1]!], text === ptx ? 'ret' : 'exit')
    // lane 0 of each warp: the sum of its warp's 32 values, in every block
    const x = ints(4 * 128)
    for (let w = 0; w < 16; w++) {
      let sum = 0
      for (let l = 0; l < 32; l++) sum += x[w * 32 + l]!
      assert.is(words[0]![w * 32], sum, `${text === ptx ? 'ret' : 'exit'}: warp ${w}`)
    }
  }
})

s('a warp-uniform guard on another register: the JavaScript tier\'s words and the second warp\'s sums by hand', () => {
  for (const [grid, block] of [[4, 128], [3, 64], [2, 256]] as const) {
    const x = ints(grid * block)
    const wasm = run('wasm', 'second_warp', grid, [block, 1], x, grid, 0), js = run('js', 'second_warp', grid, [block, 1], x, grid, 0)
    assert.equal([...wasm.words], [...js.words], `${grid}x${block}`)
    const got = new Int32Array(wasm.words.buffer)
    for (let g = 0; g < grid; g++) {
      let sum = 0
      for (let l = 0; l < 32; l++) sum += x[g * block + 32 + l]!
      assert.is(got[g], sum, `${grid}x${block}: block ${g}`)
    }
    assert.match(wasm.inspect, /a warp whose running lanes all branch past the ifs? at PTX lines? [\d, ]+ skips (it|each) at once/)
  }
})

s.run()
