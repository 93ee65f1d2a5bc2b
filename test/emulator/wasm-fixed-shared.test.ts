// The wasm tier's 4-lane turns read a shared word at a fixed offset (a shared variable plus an immediate, as an
// unrolled loop over a tile reads it: flash attention's `Ks[k]`) after testing it once: a later fixed word at or
// before the largest one tested on every path to it is not tested again (FunctionBody.note/known in
// wasm/encoder.ts). Before, flash attention (clang's PTX) had over a thousand equal tests in its turns, and V8's
// optimizing compiler, proving each redundant in turn, compiled that one kernel for minutes in the background
// (a Node process waits for that before it exits: the kernel corpus test took 500 s for 17 s of tests).
//
// And a turn with more than 256 lane tests (MAX_TURN_BAILS, emit-wasm.ts vbail) is left to scalar turns, so that
// no other shape of many tests branching to one fail block brings the optimizing compiler's cost back.
//
// Here: the facts' rules on the encoder itself (what holds after a block, an `if`, an `else`, a loop, a rewind),
// and kernels written in that shape checked against the JavaScript tier bit for bit and by hand, on the calling
// thread and two workers, with dynamic shared memory large enough and too small (the fault of the first word
// past the window, with the JavaScript tier's message, on both tiers).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { FunctionBody } from '../../packages/emulator/src/wasm/encoder.js'
import { nvccPtx } from './helpers.js'
import { KernelRunner } from '../helpers/kernel-runner.js'

const f = suite('wasm encoder: facts of the tests written, where they hold')

f('a fact holds in its scope and in what opens inside it, not before it nor in a sibling arm', () => {
  const b = new FunctionBody([])
  assert.is(b.known('k'), undefined)
  b.begin('block')
  b.note('k', 8)
  assert.is(b.known('k'), 8, 'right after it')
  b.begin('block').begin('loop')
  assert.is(b.known('k'), 8, 'in blocks and loops opened after it')
  b.note('k', 4)
  assert.is(b.known('k'), 8, 'the largest value')
  b.end().end()
  b.begin('if')
  b.note('k', 20)
  assert.is(b.known('k'), 20)
  b.else()
  assert.is(b.known('k'), 8, 'the then-arm\'s fact does not hold in the else-arm')
  b.note('k', 24)
  b.end()
  assert.is(b.known('k'), 8, 'neither arm\'s fact holds after the if')
  b.end()
  assert.is(b.known('k'), 8, 'a block nothing branches to: its facts hold after it')
  assert.is(b.known('other'), undefined, 'facts are per key')
})

f('a branch to a block\'s end before a fact keeps the fact inside; one after it does not', () => {
  const b = new FunctionBody([])
  const outer = b.open('block')
  const before = b.open('block')
  b.i32(0).brIf(before)
  b.note('k', 16)
  b.end()
  assert.is(b.known('k'), undefined, 'a branch before the fact reaches the block\'s end without it')
  const after = b.open('block')
  b.note('k', 32)
  b.i32(0).brIf(after)
  b.i32(0).brIf(outer)
  b.end()
  assert.is(b.known('k'), 32, 'branches after the fact passed it')
  b.begin('if')
  b.note('k', 64)
  b.end()
  assert.is(b.known('k'), 32, 'an if without else is skipped when its condition is false')
  b.begin('loop')
  b.note('k', 48)
  b.end()
  assert.is(b.known('k'), 48, 'a loop\'s end is reached only through its body')
  b.end()
})

f('a rewind takes back the facts noted and the scopes closed after the mark', () => {
  const b = new FunctionBody([])
  const blk = b.open('block')
  b.note('k', 8)
  const m = b.mark()
  b.note('k', 40)
  b.end()
  assert.is(b.known('k'), 40)
  b.rewind(m)
  assert.is(b.known('k'), 8, 'the fact written after the mark is gone')
  b.i32(0).brIf(blk)
  b.note('k', 12)
  b.end()
  assert.is(b.known('k'), 8, 'the block reopened by the rewind: the branch written after it keeps its later fact inside')
})

f.run()

const SOURCE = `
// a tile in shared memory read at fixed offsets by every thread (the unrolled loop: the 24 odd words in the order
// 7, 21, 35, 1, 15, 29, 43, 9, …, 47, 13, 27, 41, one ld.shared.u32 each: the wasm tier tests 7, 21, 35, 43 and
// 47 and no other), then per-thread arithmetic and one store a thread
extern __shared__ int tile[];
extern "C" __global__ void tile_dot(const int *in, int *out, unsigned n)
{
    unsigned t = threadIdx.x;
    if (t < n) tile[t] = in[blockIdx.x * 48 + t];
    __syncthreads();
    int acc = 0;
#pragma unroll
    for (int k = 0; k < 24; k++) acc += tile[2 * ((k * 7 + 3) % 24) + 1] * (int)(t + 3 * k) ^ (k << 4);
    out[blockIdx.x * blockDim.x + t] = acc;
}
`

const ptx = nvccPtx(SOURCE)

async function run(codegen: 'wasm' | 'js', workers: number, grid: number, block: number, input: Int32Array, sharedBytes: number): Promise<{ words?: Int32Array; fault?: string; inspect: string }> {
  const be = createEmulatorBackend({ codegen, workers })
  try {
    const k = await KernelRunner.load(be, ptx, 'compute_80', `tile_dot (${codegen}, ${workers} workers)`)
    const din = await k.upload(input), dout = await k.alloc(grid * block * 4)
    const inspect = (k.module as unknown as { inspect(name: string): string }).inspect(k.entry('tile_dot'))
    try {
      await k.launch('tile_dot', [grid, 1, 1], block, [din, dout, Math.min(48, sharedBytes >> 2)], sharedBytes)
    } catch (err) {
      return { fault: (err as Error).message, inspect }
    }
    return { words: await k.read(dout, Int32Array), inspect }
  } finally {
    be.dispose()
  }
}

const ints = (n: number) => Int32Array.from({ length: n }, (_, i) => (((i * 2654435761) >>> 20) % 2001) - 1000)

const s = suite('wasm tier: fixed shared words tested once a turn')

s('24 fixed reads a thread: every word as by hand and as the JavaScript tier computes it', async () => {
  for (const [grid, block] of [[3, 256], [2, 64], [5, 96]] as const) {
    const x = ints(grid * 48)
    const js = await run('js', 0, grid, block, x, 48 * 4)
    const wasm = await run('wasm', 0, grid, block, x, 48 * 4)
    const wasm2 = await run('wasm', 2, grid, block, x, 48 * 4)
    assert.match(wasm.inspect, /tier: WebAssembly/, wasm.inspect)
    assert.ok(js.words && wasm.words && wasm2.words, `${grid}x${block}: no fault (${js.fault ?? wasm.fault ?? wasm2.fault})`)
    assert.equal([...wasm.words!], [...js.words!], `${grid}x${block}: wasm tier, calling thread`)
    assert.equal([...wasm2.words!], [...js.words!], `${grid}x${block}: wasm tier, 2 workers`)
    for (let g = 0; g < grid; g++) {
      for (let t = 0; t < block; t++) {
        let acc = 0
        for (let k = 0; k < 24; k++) acc = (acc + (Math.imul(x[g * 48 + 2 * ((k * 7 + 3) % 24) + 1]!, t + 3 * k) ^ (k << 4))) | 0
        if (wasm.words![g * block + t] !== (acc | 0)) assert.unreachable(`${grid}x${block}: block ${g}, thread ${t}: ${wasm.words![g * block + t]} for ${acc | 0}`)
      }
    }
  }
})

s('a window too small for the fixed reads: the first word past it faults, as on the JavaScript tier', async () => {
  // the window's words written (n = its size in words), then the odd words read: the first read at or past n
  // faults (n = 40: word 43, after reads the tested 35 covers; 47 and 46: word 47, the 21st read; 25: word 35)
  for (const bytes of [160, 188, 100, 184]) {
    const x = ints(2 * 48)
    const js = await run('js', 0, 2, 128, x, bytes)
    const wasm = await run('wasm', 0, 2, 128, x, bytes)
    const wasm2 = await run('wasm', 2, 2, 128, x, bytes)
    assert.ok(js.fault, `${bytes} bytes: the JavaScript tier faults`)
    assert.match(js.fault!, /shared/)
    assert.is(wasm.fault, js.fault, `${bytes} bytes: wasm tier, calling thread`)
    assert.is(wasm2.fault, js.fault, `${bytes} bytes: wasm tier, 2 workers`)
  }
})

const many = (n: number) => `
extern "C" __global__ void many_${n}(const int *in, int *out)
{
    extern __shared__ int tile[];
    unsigned t = threadIdx.x;
    for (unsigned i = t; i < ${2 * n}; i += blockDim.x) tile[i] = in[blockIdx.x * ${2 * n} + i];
    __syncthreads();
    int acc = 0;
#pragma unroll
    for (int k = 0; k < ${n}; k++) acc += tile[2 * k + 1] * (int)(t + k) ^ k;
    out[blockIdx.x * blockDim.x + t] = acc;
}
`
const manyPtx = nvccPtx(many(200) + many(300))

s('a turn of 200 tested fixed reads runs in 4 lanes, one of 300 in scalar turns: both as by hand and as the JavaScript tier', async () => {
  for (const n of [200, 300]) {
    const grid = 2, block = 96
    const x = ints(grid * 2 * n)
    const words: Int32Array[] = []
    let inspect = ''
    for (const [codegen, workers] of [['js', 0], ['wasm', 0], ['wasm', 2]] as const) {
      const be = createEmulatorBackend({ codegen, workers })
      try {
        const k = await KernelRunner.load(be, manyPtx, 'compute_80', `many_${n} (${codegen}, ${workers} workers)`)
        const din = await k.upload(x), dout = await k.alloc(grid * block * 4)
        await k.launch(`many_${n}`, [grid, 1, 1], block, [din, dout], 2 * n * 4)
        words.push(await k.read(dout, Int32Array))
        if (codegen === 'wasm') inspect = (k.module as unknown as { inspect(name: string): string }).inspect(k.entry(`many_${n}`))
      } finally {
        be.dispose()
      }
    }
    assert.match(inspect, /tier: WebAssembly/)
    if (n === 200) assert.match(inspect, /SIMD across threads/, `${n} tests a turn: 4 lanes\n${inspect}`)
    else assert.not.match(inspect, /SIMD across threads/, `${n} tests a turn: scalar turns\n${inspect}`)
    assert.equal([...words[1]!], [...words[0]!], `many_${n}: wasm tier, calling thread`)
    assert.equal([...words[2]!], [...words[0]!], `many_${n}: wasm tier, 2 workers`)
    for (let g = 0; g < grid; g++) {
      for (let t = 0; t < block; t++) {
        let acc = 0
        for (let k = 0; k < n; k++) acc = (acc + (Math.imul(x[g * 2 * n + 2 * k + 1]!, t + k) ^ k)) | 0
        if (words[1]![g * block + t] !== acc) assert.unreachable(`many_${n}: block ${g}, thread ${t}: ${words[1]![g * block + t]} for ${acc}`)
      }
    }
  }
})

s.run()
