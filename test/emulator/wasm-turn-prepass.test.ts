// A 4-lane turn that stores before a branch its lanes may part at cannot send its group back to one thread at
// a time once it has stored. nvcc's grid-stride loop is that shape with its default unrolling: the trip count
// by a division, a remainder loop (up to 3 trips) that stores, a branch past the loop unrolled by 4, whose latch
// compares each thread's own index with the bound. Where a turn with a loop fails for that, the wasm tier writes
// it again with a pre-pass of the whole turn first (emit-wasm.ts vectorTurnOrPrepassed, vturnPrecheck: its control
// and addresses, each branch tested for lanes that part, each access's lane test, nothing stored), and the turn on
// the same values after it; where lanes part or a lane would fault, the group takes its scalar turns, which fault
// as the JavaScript tier does.
//
// Here: such kernels against the JavaScript tier bit for bit and by hand, on the calling thread and two
// workers: bounds that end inside a group of four threads, a grid with one trip for some threads and none for
// others, a buffer too short (the JavaScript tier's fault), and a branch on the thread's index after a loop that
// stores (lanes part there: scalar turns for that group only).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { nvccPtx } from './helpers.js'
import { KernelRunner } from '../helpers/kernel-runner.js'

const SOURCE = `
// y[i] = a·x[i] + y[i] over a grid-stride loop, as nvcc unrolls it by default
extern "C" __global__ void saxpy_stride(int *y, const int *x, int a, int n)
{
    int S = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += S) y[i] = a * x[i] + y[i];
}

// a per-thread loop that stores, then a branch on the thread's index, then a store
extern "C" __global__ void fill_then_mark(int *out, int *marks, int count, int lim)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < count; k++) out[t * count + k] = (int)t * 31 + k;
    if (t < (unsigned)lim) marks[t] = (int)t + 7;
}
`

const ptx = nvccPtx(SOURCE)

const ints = (n: number, seed: number) => Int32Array.from({ length: n }, (_, i) => ((((i + seed) * 2654435761) >>> 7) % 20001) - 10000)

async function saxpy(codegen: 'wasm' | 'js', workers: number, grid: number, block: number, n: number, xLen: number): Promise<{ y?: Int32Array; fault?: string; inspect: string }> {
  const be = createEmulatorBackend({ codegen, workers })
  try {
    const k = await KernelRunner.load(be, ptx, 'compute_80', `saxpy_stride (${codegen}, ${workers} workers)`)
    const dy = await k.upload(ints(Math.max(n, 1), 1)), dx = await k.upload(ints(Math.max(xLen, 1), 2))
    const inspect = (k.module as unknown as { inspect(name: string): string }).inspect(k.entry('saxpy_stride'))
    try {
      await k.launch('saxpy_stride', [grid, 1, 1], block, [dy, dx, -3, n])
    } catch (err) {
      return { fault: (err as Error).message, inspect }
    }
    return { y: await k.read(dy, Int32Array), inspect }
  } finally {
    be.dispose()
  }
}

const s = suite('wasm tier: a pre-pass of the whole turn before its stores')

s('nvcc\'s unrolled grid-stride loop runs 4 threads a step: as by hand and as the JavaScript tier computes it', async () => {
  for (const [grid, block, n] of [[3, 96, 4099], [8, 256, 1 << 15], [2, 64, 130], [4, 128, 300], [5, 32, 4096 + 3], [2, 100, 1], [2, 128, 0]] as const) {
    const js = await saxpy('js', 0, grid, block, n, n)
    const wasm = await saxpy('wasm', 0, grid, block, n, n)
    const wasm2 = await saxpy('wasm', 2, grid, block, n, n)
    assert.match(wasm.inspect, /SIMD across threads: .* through its loops/, `4 threads a step\n${wasm.inspect}`)
    assert.ok(js.y && wasm.y && wasm2.y, `${grid}x${block}, n ${n}: no fault (${js.fault ?? wasm.fault ?? wasm2.fault})`)
    const x = ints(Math.max(n, 1), 2), y0 = ints(Math.max(n, 1), 1)
    for (let i = 0; i < n; i++) {
      const want = (Math.imul(-3, x[i]!) + y0[i]!) | 0
      if (js.y![i] !== want) assert.unreachable(`${grid}x${block}, n ${n}: JavaScript tier y[${i}] ${js.y![i]} for ${want}`)
    }
    assert.equal([...wasm.y!], [...js.y!], `${grid}x${block}, n ${n}: wasm tier, calling thread`)
    assert.equal([...wasm2.y!], [...js.y!], `${grid}x${block}, n ${n}: wasm tier, 2 workers`)
  }
})

s('x shorter than n: the first thread to read past it faults, as on the JavaScript tier', async () => {
  for (const [grid, block, n, xLen] of [[3, 96, 4099, 4000], [2, 64, 1000, 999], [4, 128, 3000, 16]] as const) {
    const js = await saxpy('js', 0, grid, block, n, xLen)
    const wasm = await saxpy('wasm', 0, grid, block, n, xLen)
    const wasm2 = await saxpy('wasm', 2, grid, block, n, xLen)
    assert.ok(js.fault, `${grid}x${block}, n ${n}, x of ${xLen}: the JavaScript tier faults`)
    assert.is(wasm.fault, js.fault, `${grid}x${block}, n ${n}: wasm tier, calling thread`)
    // (on two workers the first fault in time rejects the launch: another block's thread may get there first,
    // at another address past the end; the kernel, instruction and PTX line are the same)
    const site = (m: string | undefined) => m?.replace(/ \(address 0x[0-9a-f]+\).*$/, '')
    assert.ok(wasm2.fault, `${grid}x${block}, n ${n}: wasm tier, 2 workers, faults`)
    assert.is(site(wasm2.fault), site(js.fault), `${grid}x${block}, n ${n}: wasm tier, 2 workers`)
    assert.match(wasm2.fault!, /the address is at offset (\d+) from its start/)
    assert.ok(Number(/offset (\d+) from its start/.exec(wasm2.fault!)![1]) >= xLen * 4, `${grid}x${block}, n ${n}: 2 workers fault past x's end`)
  }
})

s('a branch on the thread\'s index after a loop that stores: the groups whose lanes part there run one thread at a time', async () => {
  for (const [grid, block, count, lim] of [[2, 64, 5, 70], [3, 96, 3, 1], [2, 128, 0, 200], [1, 256, 2, 255]] as const) {
    const total = grid * block
    const outs: Array<{ out: Int32Array; marks: Int32Array }> = []
    for (const [codegen, workers] of [['js', 0], ['wasm', 0], ['wasm', 2]] as const) {
      const be = createEmulatorBackend({ codegen, workers })
      try {
        const k = await KernelRunner.load(be, ptx, 'compute_80', `fill_then_mark (${codegen}, ${workers} workers)`)
        const out = await k.alloc(Math.max(1, total * count) * 4, 0), marks = await k.alloc(total * 4, 0)
        await k.launch('fill_then_mark', [grid, 1, 1], block, [out, marks, count, lim])
        outs.push({ out: await k.read(out, Int32Array), marks: await k.read(marks, Int32Array) })
      } finally {
        be.dispose()
      }
    }
    for (let t = 0; t < total; t++) {
      for (let k = 0; k < count; k++) if (outs[0]!.out[t * count + k] !== t * 31 + k) assert.unreachable(`out[${t * count + k}] ${outs[0]!.out[t * count + k]}`)
      if (outs[0]!.marks[t] !== (t < lim ? t + 7 : 0)) assert.unreachable(`marks[${t}] ${outs[0]!.marks[t]}`)
    }
    for (const [i, what] of [[1, 'calling thread'], [2, '2 workers']] as const) {
      assert.equal([...outs[i]!.out], [...outs[0]!.out], `${grid}x${block}, count ${count}, lim ${lim}: wasm tier (${what}) out`)
      assert.equal([...outs[i]!.marks], [...outs[0]!.marks], `${grid}x${block}, count ${count}, lim ${lim}: wasm tier (${what}) marks`)
    }
  }
})

s.run()
