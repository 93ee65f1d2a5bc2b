// The wasm tier's per-block test of the accesses in loops with a trip bound (emit-wasm.ts loopTest, coverLoop):
// where an access's address in iteration k is inv + c·tid.x + k·step (a block- or grid-stride loop
// `for (i = …; i < n; i += step)`), each block tests once every address its threads can reach in any
// iteration the loop's bound lets them run, and a 4-lane turn where that held runs the loop without tests of
// its own; where it did not (the bound's reach goes past the allocation, or the loop really reads past it),
// the turn's threads take their scalar turns, which test every access and fault as the JavaScript tier does.
// Kernels written here, in nvcc's PTX: a row per block (layernorm's shape: a 64-bit `row · cols` base,
// block-stride loops that read, then one that writes), rows whose length is not a multiple of the block
// (the last row's reach passes the allocation's end), a grid-stride loop without barriers, a loop reading
// `x[c + 1]`. Each is checked against the JavaScript tier bit for bit and against sums by hand (integers);
// a row cut short faults on both tiers with the same message and instruction.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, EmulatorFault } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'
import { KernelRunner } from '../helpers/kernel-runner.js'

const SOURCE = `
// one block per row: the row's sum (a block-stride loop, warp shuffles, shared memory), then every element
// times the block's size minus that sum (a block-stride loop that writes)
extern "C" __global__ void row_center(const int *x, int *y, int cols)
{
    __shared__ int sh[32];
    const int *xr = x + (size_t)blockIdx.x * cols;
    int *yr = y + (size_t)blockIdx.x * cols;
    int s = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    for (int m = 16; m > 0; m >>= 1) s += __shfl_xor_sync(0xffffffffu, s, m);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;
    __syncthreads();
    int t = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) t += sh[w];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] * 3 - t;
}

// a grid-stride loop, no barriers: y = a·x + y
extern "C" __global__ void axpy_grid(int a, const int *x, int *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];
}

// neighbours' differences along a row (x[c + 1] - x[c]), a row per block
extern "C" __global__ void row_diff(const int *x, int *y, int cols)
{
    const int *xr = x + (size_t)blockIdx.x * cols;
    int *yr = y + (size_t)blockIdx.x * (cols - 1);
    for (int c = threadIdx.x; c < cols - 1; c += blockDim.x) yr[c] = xr[c + 1] - xr[c];
}
`

const ptx = nvccPtx(SOURCE)
const ptxLines = ptx.split('\n')

const ints = (n: number) => Int32Array.from({ length: n }, (_, i) => (((i * 2654435761) >>> 20) % 2001) - 1000)

interface Run { fault?: EmulatorFault; words?: Int32Array; inspect: string }

/** `kernel` on the calling thread: the inputs each in an allocation of exactly their size, the output (outWords
 *  words, holding `init` where given) after them, then the scalars (a leading scalar goes first). */
function run(codegen: 'wasm' | 'js', kernel: string, grid: number, block: number, inputs: Int32Array[], outWords: number, scalars: number[], init?: Int32Array, lead?: number): Run {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    const dout = init ? upload(be, init) : be.alloc(outWords * 4)
    const args = marshal([...(lead !== undefined ? [{ s32: lead }] : []), ...inputs.map((x) => ({ u64: upload(be, x) })), { u64: dout }, ...scalars.map((v) => ({ s32: v }))])
    const fault = launchOrFault(be, mod, kernel, { grid: [grid, 1, 1], block: [block, 1, 1], sharedBytes: 0 }, args)
    return { ...(fault ? { fault } : { words: download(be, dout, new Int32Array(outWords)) }), inspect: mod.inspect(kernel) }
  } finally {
    be.dispose()
  }
}

/** Both tiers: no fault, every word equal; the wasm tier's run. */
function both(kernel: string, grid: number, block: number, inputs: Int32Array[], outWords: number, scalars: number[], init?: Int32Array, lead?: number): Run {
  const js = run('js', kernel, grid, block, inputs, outWords, scalars, init, lead)
  const wasm = run('wasm', kernel, grid, block, inputs, outWords, scalars, init, lead)
  assert.is(js.fault, undefined, js.fault?.message)
  assert.is(wasm.fault, undefined, wasm.fault?.message)
  assert.equal([...wasm.words!], [...js.words!], `${kernel} ${grid}x${block}: the tiers' words`)
  assert.match(wasm.inspect, /tier: WebAssembly/)
  return wasm
}

/** The PTX lines inspect's `loop ranges` line names (none where it has none). */
function loopLines(inspect: string): number[] {
  const m = /loop ranges: each block tests once every address its threads can reach in the loops at PTX lines? ([\d, ]+) \(/.exec(inspect)
  return m ? m[1]!.split(', ').map(Number) : []
}

function rowCenter(x: Int32Array, rows: number, cols: number): Int32Array {
  const y = new Int32Array(rows * cols)
  for (let r = 0; r < rows; r++) {
    let t = 0
    for (let c = 0; c < cols; c++) t += x[r * cols + c]!
    for (let c = 0; c < cols; c++) y[r * cols + c] = x[r * cols + c]! * 3 - t
  }
  return y
}

const s = suite('wasm tier: one range test a block for the accesses of loops with a trip bound')

// (rows of 1001 and 998 words: the four lanes of one turn run different numbers of iterations of the loop that
// writes, so that turn goes back to one thread at a time: the lanes' trip counts from the bound, tripsAgree)
s('a row per block: the rows as by hand, whatever the row\'s length against the block\'s; the loops\' accesses tested a block', () => {
  for (const [rows, cols, block] of [[12, 1024, 256], [9, 1000, 256], [6, 1001, 256], [4, 998, 128], [7, 37, 64], [5, 200, 96], [4, 4, 128], [3, 0, 64]] as const) {
    const x = ints(rows * cols)
    const r = both('row_center', rows, block, [x], rows * cols, [cols])
    assert.equal([...r.words!], [...rowCenter(x, rows, cols)], `${rows}x${cols}, ${block} threads`)
    // the three loops' accesses: two loads of x, the store to y
    const lines = loopLines(r.inspect)
    assert.is(lines.length, 3, r.inspect)
    assert.equal(lines.map((l) => /^\s*(ld|st)\.global/.exec(ptxLines[l - 1]!)?.[1]), ['ld', 'ld', 'st'], r.inspect)
  }
})

s('a grid-stride loop without barriers, and a loop reading x[c + 1]: the results as by hand', () => {
  for (const [grid, block, n] of [[8, 128, 8 * 128 * 5], [6, 64, 6 * 64 * 3 + 17], [3, 256, 100]] as const) {
    const x = ints(n), y0 = ints(n).reverse()
    const r = both('axpy_grid', grid, block, [x], n, [n], y0, -7)
    for (let i = 0; i < n; i++) if (r.words![i] !== ((Math.imul(-7, x[i]!) + y0[i]!) | 0)) assert.unreachable(`y[${i}] = ${r.words![i]}`)
    assert.is(loopLines(r.inspect).length, 3, r.inspect)
  }
  for (const [rows, cols, block] of [[6, 513, 128], [4, 64, 64], [3, 2, 32]] as const) {
    const x = ints(rows * cols)
    const r = both('row_diff', rows, block, [x], rows * (cols - 1), [cols])
    for (let row = 0; row < rows; row++) {
      for (let c = 0; c < cols - 1; c++) assert.is(r.words![row * (cols - 1) + c], x[row * cols + c + 1]! - x[row * cols + c]!, `row ${row}, column ${c}`)
    }
    assert.is(loopLines(r.inspect).length, 3, r.inspect)
  }
})

s('a last row cut short: the JavaScript tier\'s fault, message and instruction, wherever the row ends', () => {
  for (const [rows, cols, block, short] of [[6, 1024, 256, 1], [6, 1024, 256, 300], [5, 200, 96, 3], [4, 37, 64, 37]] as const) {
    const x = ints(rows * cols - short)
    const js = run('js', 'row_center', rows, block, [x], rows * cols, [cols])
    const wasm = run('wasm', 'row_center', rows, block, [x], rows * cols, [cols])
    assert.ok(js.fault, `${rows}x${cols} less ${short}: the JavaScript tier faults`)
    assert.ok(wasm.fault, `${rows}x${cols} less ${short}: the wasm tier faults`)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.instruction, js.fault!.instruction)
    assert.match(js.fault!.instruction, /^ld\.global/)
  }
})

s('two workers: the rows as by hand', async () => {
  const [rows, cols, block] = [16, 1000, 128]
  const x = ints(rows * cols)
  const be = createEmulatorBackend({ codegen: 'wasm', workers: 2 })
  try {
    const k = await KernelRunner.load(be, ptx, 'compute_80', 'loop-range kernels (2 workers)')
    const dx = await k.upload(x), dy = await k.alloc(rows * cols * 4)
    await k.launch('row_center', [rows, 1, 1], block, [dx, dy, cols])
    assert.equal([...await k.read(dy, Int32Array)], [...rowCenter(x, rows, cols)])
  } finally {
    be.dispose()
  }
})

s.run()
