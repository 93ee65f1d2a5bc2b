// The wasm tier's kernels without barriers whose threads loop (emit-wasm.ts: KernelWriter plans one thread loop
// for them, planLoops): a grid-stride loop, a row's block-stride loop after an early return, a loop whose trip
// count differs from lane to lane, run four threads of a row a turn (the trips included, a pre-pass testing a
// stored loop's addresses first), with the JavaScript tier's bytes and faults. Kernels whose lanes talk
// through memory keep their one-thread-at-a-time order (lockstep.ts finds them; the JavaScript tier plans
// them), and `threadLoops: false` turns this off too. Kernels without a loop take the same thread loop where
// its turns have a 4-lane form (else the whole-grid loop, as one whose f64 arithmetic runs lane by lane), and
// run only the threads of a block that pass a first `if (threadIdx.x == 0 / < 32 / < n)`.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, type EmulatorFault } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'

const SOURCE = `
extern "C" __global__ void saxpy_gs(const float *x, float *y, int n, float a)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

// one block a row, early return past the last row; the row's columns in a block-stride loop
extern "C" __global__ void row_scale(const float *x, float *y, int n, float a)
{
    int rows = n / 64;
    if (blockIdx.x >= rows) return;
    const float *xr = x + blockIdx.x * 64;
    for (int c = threadIdx.y * blockDim.x + threadIdx.x; c < 64; c += blockDim.x * blockDim.y)
        y[blockIdx.x * 64 + c] = xr[c] * a - (float)c;
}

// a trip count of its own in every thread (a Collatz walk): lanes part at the loop's branch
extern "C" __global__ void collatz(const float *x, float *y, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = (unsigned)x[i], steps = 0;
    while (v > 1u && steps < 1000u) { v = (v & 1u) ? 3u * v + 1u : v >> 1; steps++; }
    y[i] = (float)steps + a;
}

// no loop: a block's lead thread, or its first warp, does the work and the others branch past it all
extern "C" __global__ void lead_thread(const float *x, float *y, int n, float a)
{
    if (threadIdx.x == 0) y[blockIdx.x * blockDim.y + threadIdx.y] = x[blockIdx.x] * a + (float)threadIdx.y;
}

extern "C" __global__ void first_warp(const float *x, float *y, int n, float a)
{
    if (threadIdx.x < 32) y[blockIdx.x * 32 + threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x] * a;
}

extern "C" __global__ void below_n(const float *x, float *y, int n, float a)
{
    if (threadIdx.x < (unsigned)n) y[blockIdx.x * blockDim.x + threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x] + a;
}

// no loop, every thread at work: a 2-D grid of 2-D blocks, a 64-bit index, and one in f64
extern "C" __global__ void scale_2d(const float *x, float *y, int n, float a)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < 40 && r * 40 + c < n) y[r * 40 + c] = x[r * 40 + c] * a + (float)r;
}

extern "C" __global__ void axpy_wide(const float *x, float *y, int n, float a)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)n) y[i] = a * x[i] - y[i];
}

extern "C" __global__ void scale_f64(const float *x, float *y, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)((double)x[i] * 1.0000001 + (double)a);
}
`

const ptx = nvccPtx(SOURCE)

interface Run { y?: Float32Array; fault?: EmulatorFault; inspect: string }

function run(codegen: 'wasm' | 'js', kernel: string, grid: number, block: [number, number, number], x: Float32Array, yLength: number, n: number, threadLoops = true): Run {
  const be = createEmulatorBackend({ codegen, workers: 0, threadLoops })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    const dx = upload(be, x), dy = upload(be, Float32Array.from({ length: yLength }, (_, i) => i * 0.25))
    const fault = launchOrFault(be, mod, kernel, { grid: [grid, 1, 1], block, sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }, { s32: n }, { f32: 1.5 }]))
    return fault ? { fault, inspect: mod.inspect(kernel) } : { y: download(be, dy, new Float32Array(yLength)), inspect: mod.inspect(kernel) }
  } finally {
    be.dispose()
  }
}

const SIMD = /SIMD across threads: 4 consecutive threads of a row a step \(f32x4\/i32x4\) through its loops \(the kernel, without barriers, as one thread loop\)/

const s = suite('wasm tier: kernels without barriers whose threads loop, 4 threads a turn')

s('a grid-stride loop: the JavaScript tier\'s bytes and the hand computation\'s', () => {
  for (const [grid, block, n] of [[8, 64, 4096], [5, 96, 3001], [3, 33, 1000], [2, 4, 37], [1, 3, 10]] as const) {
    const x = Float32Array.from({ length: n }, (_, i) => Math.fround(Math.cos(i) * 3))
    const wasm = run('wasm', 'saxpy_gs', grid, [block, 1, 1], x, n, n), js = run('js', 'saxpy_gs', grid, [block, 1, 1], x, n, n)
    const label = `${grid}x${block}, n=${n}`
    assert.ok(wasm.y && js.y, `${label}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.y!], [...js.y!], label)
    // nvcc contracts a * x[i] + y[i] into one fma.rn.f32
    const want = Array.from({ length: n }, (_, i) => Math.fround(1.5 * x[i]! + Math.fround(i * 0.25)))
    assert.equal([...wasm.y!], want, label)
    if (block >= 4) assert.match(wasm.inspect, SIMD, label)
    assert.match(wasm.inspect, /tier: WebAssembly$/)
  }
})

s('an early return, then a block-stride loop over a row in 2-D blocks: the JavaScript tier\'s bytes', () => {
  for (const block of [[16, 2, 1], [8, 3, 1], [32, 1, 1], [6, 5, 1]] as Array<[number, number, number]>) {
    const n = 64 * 5
    const x = Float32Array.from({ length: n }, (_, i) => i % 13 - 6.5)
    // 7 blocks for 5 rows: two return at once
    const wasm = run('wasm', 'row_scale', 7, block, x, n, n), js = run('js', 'row_scale', 7, block, x, n, n)
    assert.ok(wasm.y && js.y, `${block}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.y!], [...js.y!], `block ${block.join('x')}`)
    assert.equal([...wasm.y!], Array.from({ length: n }, (_, i) => Math.fround(Math.fround(x[i]! * 1.5) - (i % 64))), `block ${block.join('x')}`)
  }
})

s('trip counts that differ from lane to lane (the lanes part): the JavaScript tier\'s bytes', () => {
  const n = 300
  const x = Float32Array.from({ length: n }, (_, i) => (i * 7919) % 1000 + 1)
  const wasm = run('wasm', 'collatz', 5, [64, 1, 1], x, n, n), js = run('js', 'collatz', 5, [64, 1, 1], x, n, n)
  assert.ok(wasm.y && js.y)
  assert.equal([...wasm.y!], [...js.y!])
  // 27 takes 111 steps
  const i27 = [...x].indexOf(27)
  if (i27 >= 0) assert.is(wasm.y![i27], 112.5)
})

s('a store past y inside the loop: the JavaScript tier\'s fault, nothing else different', () => {
  for (const yLength of [3000, 4000, 4095]) {
    const x = new Float32Array(4096).fill(2)
    const wasm = run('wasm', 'saxpy_gs', 8, [64, 1, 1], x, yLength, 4096), js = run('js', 'saxpy_gs', 8, [64, 1, 1], x, yLength, 4096)
    assert.ok(wasm.fault && js.fault, `y of ${yLength}: both tiers fault`)
    assert.is(wasm.fault!.message, js.fault!.message)
    assert.is(wasm.fault!.instruction, js.fault!.instruction)
    assert.is(wasm.fault!.address, js.fault!.address)
  }
})

const NARROWED = /thread range: on WebAssembly each block runs only the threads its branch at PTX line \d+ keeps/

s('no loop, only some threads of a block at work (if threadIdx.x == 0, < 32, < n): those alone run, the JavaScript tier\'s bytes', () => {
  const cases: Array<[string, number, [number, number, number], number, number]> = [
    // kernel, grid, block, y length, n
    ['lead_thread', 9, [64, 1, 1], 9, 0], ['lead_thread', 6, [16, 3, 1], 18, 0], ['lead_thread', 4, [1, 1, 1], 4, 0],
    ['first_warp', 5, [128, 1, 1], 160, 0], ['first_warp', 3, [20, 1, 1], 96, 0],
    ['below_n', 4, [64, 1, 1], 256, 37], ['below_n', 4, [64, 1, 1], 256, 64], ['below_n', 4, [64, 1, 1], 256, 1000], ['below_n', 4, [64, 1, 1], 256, 0],
  ]
  for (const [kernel, grid, block, yLength, n] of cases) {
    const label = `${kernel} ${grid}x${block.join('x')} n=${n}`
    const x = Float32Array.from({ length: 1024 }, (_, i) => Math.fround(Math.sin(i) * 5))
    const wasm = run('wasm', kernel, grid, block, x, yLength, n), js = run('js', kernel, grid, block, x, yLength, n)
    assert.ok(wasm.y && js.y, `${label}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.y!], [...js.y!], label)
    assert.match(wasm.inspect, NARROWED, label)
    assert.match(wasm.inspect, /tier: WebAssembly$/)
  }
  // the hand computation of the lead thread's
  const x = Float32Array.from({ length: 16 }, (_, i) => i - 3.5)
  const r = run('wasm', 'lead_thread', 6, [16, 3, 1], x, 18, 0)
  assert.equal([...r.y!], Array.from({ length: 18 }, (_, i) => Math.fround(x[Math.floor(i / 3)]! * 1.5 + (i % 3))))
  // a kernel every thread of which works keeps the whole-grid loop
  assert.not.match(run('wasm', 'saxpy_gs', 2, [64, 1, 1], new Float32Array(128), 128, 128).inspect, NARROWED)
})

s('the lead thread storing past y: the JavaScript tier\'s fault', () => {
  const x = new Float32Array(64).fill(2)
  const wasm = run('wasm', 'lead_thread', 12, [32, 1, 1], x, 10, 0), js = run('js', 'lead_thread', 12, [32, 1, 1], x, 10, 0)
  assert.ok(wasm.fault && js.fault, 'both tiers fault')
  assert.is(wasm.fault!.message, js.fault!.message)
  assert.is(wasm.fault!.address, js.fault!.address)
})

const OWN = /SIMD across threads: 4 consecutive threads of a row a step \(f32x4\/i32x4\) in its thread loop \(the kernel, without barriers, as one loop a block over its threads\)/

s('no loop, every thread at work: one thread loop a block, 4 threads a turn, where its turns have a 4-lane form; the JavaScript tier\'s bytes and faults', () => {
  const x = Float32Array.from({ length: 1024 }, (_, i) => Math.fround(Math.cos(i) * 4))
  const cases: Array<[string, number, [number, number, number], number, number, boolean]> = [
    // kernel, grid x, block, y length, n, takes the own loop
    ['scale_2d', 3, [16, 4, 1], 1024, 1000, true], ['scale_2d', 3, [7, 3, 1], 1024, 400, true],
    ['axpy_wide', 5, [64, 1, 1], 320, 300, true], ['axpy_wide', 2, [5, 1, 1], 16, 9, true],
    // f64 arithmetic has no 4-lane form: lane by lane it is no faster than the whole-grid loop, which it keeps
    ['scale_f64', 4, [64, 1, 1], 256, 250, false],
  ]
  for (const [kernel, grid, block, yLength, n, own] of cases) {
    const label = `${kernel} ${grid}x${block.join('x')} n=${n}`
    const wasm = run('wasm', kernel, grid, block, x, yLength, n), js = run('js', kernel, grid, block, x, yLength, n)
    assert.ok(wasm.y && js.y, `${label}: ${wasm.fault?.message ?? js.fault?.message}`)
    assert.equal([...wasm.y!], [...js.y!], label)
    if (own) assert.match(wasm.inspect, OWN, label)
    else assert.not.match(wasm.inspect, /thread loop/, label)
  }
  // (the 2-D grid's rows are blockIdx.y: run() launches grid x only, so a second row of blocks by hand)
  const be = createEmulatorBackend({ codegen: 'wasm', workers: 0 }), bj = createEmulatorBackend({ codegen: 'js', workers: 0 })
  try {
    const ys = [be, bj].map((e) => {
      const mod = e.loadModule(ptxBytes(ptx))
      const dx = upload(e, x), dy = upload(e, new Float32Array(1024))
      const f = launchOrFault(e, mod, 'scale_2d', { grid: [3, 5, 1], block: [16, 8, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }, { s32: 1024 }, { f32: 0.5 }]))
      assert.not.ok(f, f?.message)
      return [...download(e, dy, new Float32Array(1024))]
    })
    assert.equal(ys[0], ys[1])
    assert.is(ys[0]![40 * 25 + 23], Math.fround(Math.fround(x[40 * 25 + 23]! * 0.5) + 25))
  } finally {
    be.dispose(); bj.dispose()
  }
  // a store past y: the same fault, the same address
  const wasm = run('wasm', 'axpy_wide', 5, [64, 1, 1], x, 200, 300), js = run('js', 'axpy_wide', 5, [64, 1, 1], x, 200, 300)
  assert.ok(wasm.fault && js.fault, 'both tiers fault')
  assert.is(wasm.fault!.message, js.fault!.message)
  assert.is(wasm.fault!.address, js.fault!.address)
})

s('threadLoops: false keeps one thread at a time', () => {
  const x = new Float32Array(1000).fill(1)
  const r = run('wasm', 'saxpy_gs', 4, [64, 1, 1], x, 1000, 1000, false)
  assert.ok(r.y)
  assert.not.match(r.inspect, SIMD)
  assert.not.match(run('wasm', 'lead_thread', 4, [64, 1, 1], r.y!, 4, 0, false).inspect, NARROWED)
})

s.run()
