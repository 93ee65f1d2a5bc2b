// The wasm tier's test of a shared access at a register four consecutive threads hold 4 bytes apart (emit-wasm.ts
// vwindowRun): one test of the hull of the four lanes' words, from lane 0's, instead of a test in each lane. A
// tree reduction reads s[t + st + k] for the threads below st: with k = 0 every read is inside the block's 1 KiB,
// with k > 0 the last threads of the first step read past it and must fault as on the JavaScript tier (the
// same message and instruction), whichever lane of a turn is the first past the end. Checked with nvcc's PTX
// against the JavaScript tier bit for bit and the sums by hand.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'

const SOURCE = `
extern "C" __global__ void shifted_sums(const int *in, int *out, unsigned k)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
        if (t < st) s[t] += s[t + st + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
`

const ptx = nvccPtx(SOURCE)

function run(codegen: 'wasm' | 'js', grid: number, block: number, x: Int32Array, k: number) {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    const dout = be.alloc(grid * 4)
    const args = marshal([{ u64: upload(be, x) }, { u64: dout }, { u32: k }])
    const fault = launchOrFault(be, mod, 'shifted_sums', { grid: [grid, 1, 1], block: [block, 1, 1], sharedBytes: 0 }, args)
    return { fault, words: fault ? undefined : download(be, dout, new Int32Array(grid)), inspect: mod.inspect('shifted_sums') }
  } finally {
    be.dispose()
  }
}

const ints = (n: number) => Int32Array.from({ length: n }, (_, i) => (((i * 2654435761) >>> 20) % 2001) - 1000)

const s = suite('wasm tier: a shared access four lanes make 4 bytes apart, tested once a turn')

s('inside the block\'s shared memory: the sums of the JavaScript tier and by hand', () => {
  for (const [grid, block] of [[6, 256], [5, 128], [4, 64]] as const) {
    const x = ints(grid * block)
    const wasm = run('wasm', grid, block, x, 0), js = run('js', grid, block, x, 0)
    assert.is(wasm.fault, undefined, wasm.fault?.message)
    assert.equal([...wasm.words!], [...js.words!], `${grid}x${block}`)
    for (let g = 0; g < grid; g++) {
      let sum = 0
      for (let t = 0; t < block; t++) sum += x[g * block + t]!
      assert.is(wasm.words![g], sum, `${grid}x${block}: block ${g}`)
    }
    assert.match(wasm.inspect, /4 consecutive threads of a row a step \(f32x4\/i32x4\) in \d+ of its thread loops/, wasm.inspect)
  }
})

s('past it by 1 to 4 words (the last lane of a turn, then more of its lanes, then all): the JavaScript tier\'s fault', () => {
  for (const k of [1, 2, 3, 4]) {
    const x = ints(2 * 256)
    const wasm = run('wasm', 2, 256, x, k), js = run('js', 2, 256, x, k)
    assert.ok(js.fault, `k=${k}: the JavaScript tier faults`)
    assert.ok(wasm.fault, `k=${k}: the wasm tier faults`)
    assert.is(wasm.fault!.message, js.fault!.message, `k=${k}`)
    assert.is(wasm.fault!.instruction, js.fault!.instruction, `k=${k}`)
    assert.match(js.fault!.instruction, /^ld\.shared/, `k=${k}`)
  }
})

s.run()
