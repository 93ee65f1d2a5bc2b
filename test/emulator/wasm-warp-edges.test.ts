// The wasm tier's warp runs with the lane loops around them (emit-wasm.ts warpRunEnd with edges, warpRun): the
// loop that computes the first shuffle's inputs (loads, a guard, a strided loop over a row) and the loop that
// takes the last shuffle's results (`if (lane == 0) out[w] = v`, every lane's store, the kernel's closing
// return) run as eight 4-lane values too, so a warp reduction is one pass over 32 lanes instead of two scalar
// lane loops around it. Checked against the JavaScript tier bit for bit (and a hand computation) with nvcc's
// PTX: warps whole and cut short by the block's size, block values a run computes and later loops read, the
// first fault where a lane's load or lane 0's store leaves its buffer.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, type EmulatorFault } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'

const SOURCE = `
__device__ float warp_sum(float v)
{
    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
    return v;
}

// one total per warp: a guarded load before the butterfly, lane 0's store after it
extern "C" __global__ void warp_totals(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.f;
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) out[i >> 5] = v;
}

// every lane stores (its share of its warp's total), integer shuffles down
extern "C" __global__ void warp_shares(const int *x, int *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0, s = v;
    for (int d = 16; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
    s = __shfl_sync(0xffffffffu, s, 0);
    if (i < n) y[i] = v * 1000 / (s == 0 ? 1 : s);
}

// a strided loop over a row before the butterfly (one block a row), the warp totals through shared memory and
// a second butterfly, a row offset computed once and used after both barriers
extern "C" __global__ void row_sums(const float *x, float *out, int cols)
{
    __shared__ float sh[32];
    const float *xr = x + (size_t)blockIdx.x * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;
    __syncthreads();
    float t = warp_sum((threadIdx.x & 31) < (blockDim.x >> 5) ? sh[threadIdx.x & 31] : 0.f);
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[(size_t)blockIdx.x * cols + c] = xr[c] - t / cols;
}
`

const ptx = nvccPtx(SOURCE)

interface Run { words?: Uint32Array; fault?: EmulatorFault; inspect: string }

function run(codegen: 'wasm' | 'js', kernel: string, grid: number, block: number, input: Float32Array | Int32Array, outWords: number, scalar: number, inWords = input.length): Run {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    // (x as long as the kernel may read: inWords of the input's words)
    const din = upload(be, input.subarray(0, inWords))
    const dout = be.alloc(outWords * 4)
    const fault = launchOrFault(be, mod, kernel, { grid: [grid, 1, 1], block: [block, 1, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }, { s32: scalar }]))
    return fault ? { fault, inspect: mod.inspect(kernel) } : { words: download(be, dout, new Uint32Array(outWords)), inspect: mod.inspect(kernel) }
  } finally {
    be.dispose()
  }
}

const floats = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i * 0.37) * 5 + (i % 7) * 0.125))
const ints = (n: number) => Int32Array.from({ length: n }, (_, i) => ((i * 2654435761) >>> 22) + 1)

const s = suite('wasm tier: warp runs with the lane loops around them')

s('warp totals (guarded load, butterfly, lane 0 stores): the JavaScript tier\'s bits and the sums by hand', () => {
  for (const [grid, block, n] of [[4, 64, 256], [3, 96, 250], [2, 128, 200], [2, 48, 96], [3, 40, 120]] as const) {
    const x = floats(grid * block)
    const warps = Math.ceil(grid * block / 32)
    const wasm = run('wasm', 'warp_totals', grid, block, x, warps, n), js = run('js', 'warp_totals', grid, block, x, warps, n)
    const label = `${grid}x${block}, n=${n}`
    assert.ok(wasm.words && js.words, `${label}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.words!], [...js.words!], label)
    if (block % 32 === 0) {
      // the butterfly's order: lane l's total is ((x_l + x_l^16) + …) — every lane the same value; lane 0's by hand
      const f = Math.fround
      const got = new Float32Array(wasm.words!.buffer)
      for (let w = 0; w < warps; w++) {
        let v = Array.from({ length: 32 }, (_, l) => (w * 32 + l < n ? x[w * 32 + l]! : 0))
        for (let m = 16; m > 0; m >>= 1) v = v.map((a, l) => f(a + v[l ^ m]!))
        assert.is(got[w], v[0], `${label}: warp ${w}`)
      }
      assert.match(wasm.inspect, /a whole warp at once \(eight 4-lane values a register\) in the run of shuffles and arithmetic from PTX line \d+, where its 32 lanes all run \(with the lane loops that feed or read it\)/, label)
    }
  }
})

s('every lane stores its share (shuffles down, an index shuffle): the JavaScript tier\'s words', () => {
  for (const [grid, block, n] of [[4, 64, 256], [3, 96, 250], [2, 48, 90]] as const) {
    const x = ints(grid * block)
    const wasm = run('wasm', 'warp_shares', grid, block, x, grid * block, n), js = run('js', 'warp_shares', grid, block, x, grid * block, n)
    assert.ok(wasm.words && js.words, `${grid}x${block}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.words!], [...js.words!], `${grid}x${block}, n=${n}`)
  }
})

s('a row\'s strided loop, two butterflies and the block values after them: the JavaScript tier\'s bits', () => {
  for (const [rows, block, cols] of [[3, 64, 256], [2, 128, 1000], [2, 96, 96], [2, 256, 1024]] as const) {
    const x = floats(rows * cols)
    const wasm = run('wasm', 'row_sums', rows, block, x, rows * cols, cols), js = run('js', 'row_sums', rows, block, x, rows * cols, cols)
    assert.ok(wasm.words && js.words, `${rows}x${block}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.words!], [...js.words!], `${rows} rows of ${cols}, ${block} threads`)
    // both butterflies, each with its loops
    assert.match(wasm.inspect, /a whole warp at once \(eight 4-lane values a register\) in 2 runs of shuffles and arithmetic, from PTX lines \d+, \d+, where its 32 lanes all run \(each with the lane loops that feed or read it\)/)
  }
})

s('the first fault: a lane\'s load past x, lane 0\'s store past out — the JavaScript tier\'s', () => {
  // x holds 100 floats but n says 128: lane 4 of warp 3 (i = 100) reads past it
  const x = floats(128)
  let wasm = run('wasm', 'warp_totals', 2, 64, x, 4, 128, 100), js = run('js', 'warp_totals', 2, 64, x, 4, 128, 100)
  assert.ok(wasm.fault && js.fault, 'both tiers fault on the load')
  assert.is(wasm.fault!.message, js.fault!.message)
  assert.is(wasm.fault!.instruction, js.fault!.instruction)
  assert.is(wasm.fault!.address, js.fault!.address)
  assert.ok(js.fault!.instruction.startsWith('ld.global'), js.fault!.instruction)
  // out holds 3 totals: warp 3's lane 0 stores the fourth
  wasm = run('wasm', 'warp_totals', 2, 64, x, 3, 128); js = run('js', 'warp_totals', 2, 64, x, 3, 128)
  assert.ok(wasm.fault && js.fault, 'both tiers fault on the store')
  assert.is(wasm.fault!.message, js.fault!.message)
  assert.is(wasm.fault!.address, js.fault!.address)
  assert.ok(js.fault!.instruction.startsWith('st.global'), js.fault!.instruction)
})

s.run()
