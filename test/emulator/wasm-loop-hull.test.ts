// The wasm tier tests a thread loop's shared accesses once before the loop where every thread's window offset is
// U + c·tid.x with U the same for the whole loop (emit-wasm.ts hullTest): the halving tree's `s[t + half]` and the
// scan's `buf[pin·nt + t]`, whose U comes from block values the block-level loop steps. Both ends of the loop's
// thread interval inside the window (and aligned) put every thread's offset inside it, and the loop's 4-lane turns
// then make those accesses without a test each; where an end is outside, the loop runs one thread at a time, and
// the first offset outside faults as on the JavaScript tier.
//
// Here: kernels written in that shape, checked against the JavaScript tier bit for bit and by hand, on the calling
// thread and two workers: windows exactly large enough, one word short at the top, an offset below 0, threads that
// left before the loop (whose offsets would lie outside: the test fails, the results stand), block sizes that are
// not multiples of 4, and a reversed index (c < 0). `inspect` says which accesses the test before the loop covers.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { nvccPtx } from './helpers.js'
import { KernelRunner, type KernelArg } from '../helpers/kernel-runner.js'

const SOURCE = `
// every thread reads buf[t + off] and buf[live - t + off] each round, off = (r mod 4)·shift a block value (not a
// step nvcc could strength-reduce into per-thread pointers); threads past live leave before the rounds
extern "C" __global__ void shift_rounds(int *out, int words, int rounds, int shift, unsigned live)
{
    extern __shared__ int buf[];
    unsigned t = threadIdx.x, nt = blockDim.x;
    for (unsigned i = t; i < (unsigned)words; i += nt) buf[i] = (int)(i * 7 + blockIdx.x * 1000);
    __syncthreads();
    if (t >= live) return;
    int acc = 0;
    for (int r = 0; r < rounds; r++) {
        int off = (r & 3) * shift;
        acc += buf[t + off] * (r + 1);
        acc ^= buf[live - t + off] << (r & 7);
        __syncthreads();
    }
    out[blockIdx.x * nt + t] = acc;
}

// Hillis-Steele-like steps: every thread reads buf[t], and buf[t - off + back] only where t >= off (off a block
// value the loop doubles): the second read is tested over the threads that make it
extern "C" __global__ void shifted_sum(int *out, int steps, int back)
{
    extern __shared__ int buf[];
    unsigned t = threadIdx.x, nt = blockDim.x;
    buf[t] = (int)(t * 3 + blockIdx.x);
    __syncthreads();
    int acc = 0;
    for (int s = 0, off = 1; s < steps; s++, off *= 2) {
        int v = buf[t];
        if (t >= (unsigned)off) v += buf[t - off + back];
        acc += v * (s + 1);
        __syncthreads();
    }
    out[blockIdx.x * nt + t] = acc;
}

// the halving tree of a block's values in dynamic shared memory (a power-of-two block)
extern "C" __global__ void tree_sum(const float *in, float *sums)
{
    extern __shared__ float s[];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned half = blockDim.x >> 1; half > 0; half >>= 1) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = s[0];
}
`

const ptx = nvccPtx(SOURCE)

/** The PTX lines of a kernel's `ld.shared` instructions: those through its most used address register (buf[t])
 *  and the others. */
function sharedLoads(entry: string): { plain: number[]; conditional: number[] } {
  const lines = ptx.split('\n')
  const start = lines.findIndex((l) => l.includes(`.entry ${entry}(`))
  const end = lines.findIndex((l, i) => i > start && l.includes('.entry '))
  const loads: Array<{ line: number; base: string }> = []
  for (let i = start; i < (end < 0 ? lines.length : end); i++) {
    const m = /^\s*ld\.shared\.\S+\s+\S+,\s*\[(%r\d+)/.exec(lines[i]!)
    if (m) loads.push({ line: i + 1, base: m[1]! })
  }
  const counts = new Map<string, number>()
  for (const l of loads) counts.set(l.base, (counts.get(l.base) ?? 0) + 1)
  const top = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0]
  const plain = loads.filter((l) => l.base === top).map((l) => l.line), conditional = loads.filter((l) => l.base !== top).map((l) => l.line)
  assert.ok(plain.length && conditional.length, `${entry}: its ld.shared lines in the PTX`)
  return { plain, conditional }
}

interface Outcome { words?: Int32Array; floats?: Float32Array; fault?: string; inspect: string }

/** `entry` launched once on a backend of its own: its output words (grid · block of them, zeroed first, the
 *  kernel's first argument, `args` the rest), or the fault it stopped at; and what `inspect` says of it. */
async function launchOnce(codegen: 'wasm' | 'js', workers: number, entry: string, grid: number, block: number, args: KernelArg[], sharedBytes: number): Promise<Outcome> {
  const be = createEmulatorBackend({ codegen, workers })
  try {
    const k = await KernelRunner.load(be, ptx, 'compute_80', `${entry} (${codegen}, ${workers} workers)`)
    const dout = await k.alloc(grid * block * 4, 0)
    const inspect = (k.module as unknown as { inspect(name: string): string }).inspect(k.entry(entry))
    try {
      await k.launch(entry, [grid, 1, 1], block, [dout, ...args], sharedBytes)
    } catch (err) {
      return { fault: (err as Error).message, inspect }
    }
    return { words: await k.read(dout, Int32Array), inspect }
  } finally {
    be.dispose()
  }
}

const shiftRounds = (codegen: 'wasm' | 'js', workers: number, grid: number, block: number, a: { words: number; rounds: number; shift: number; live: number; bytes: number }) =>
  launchOnce(codegen, workers, 'shift_rounds', grid, block, [a.words, a.rounds, a.shift, a.live], a.bytes)

/** The offsets of the rounds (off = (r mod 4)·shift). */
const offsets = (rounds: number, shift: number) => Array.from({ length: rounds }, (_, r) => (r & 3) * shift)

function byHand(grid: number, block: number, a: { rounds: number; shift: number; live: number }): Int32Array {
  const out = new Int32Array(grid * block)
  for (let g = 0; g < grid; g++) {
    const buf = (i: number) => (Math.imul(i, 7) + g * 1000) | 0
    for (let t = 0; t < Math.min(block, a.live); t++) {
      let acc = 0
      for (let r = 0; r < a.rounds; r++) {
        const off = (r & 3) * a.shift
        acc = (acc + Math.imul(buf(t + off), r + 1)) | 0
        acc ^= buf(a.live - t + off) << (r & 7)
      }
      out[g * block + t] = acc
    }
  }
  return out
}

const s = suite('wasm tier: shared offsets tested once a thread loop')

s('windows large enough: every word as by hand and as the JavaScript tier computes it; the test before the loop covers both reads', async () => {
  for (const [grid, block, rounds, shift] of [[3, 128, 6, 5], [2, 96, 9, 3], [2, 66, 4, 7], [1, 256, 12, 16]] as const) {
    const words = block + 1 + Math.max(...offsets(rounds, shift))
    const a = { words, rounds, shift, live: block, bytes: words * 4 }
    const js = await shiftRounds('js', 0, grid, block, a)
    const wasm = await shiftRounds('wasm', 0, grid, block, a)
    const wasm2 = await shiftRounds('wasm', 2, grid, block, a)
    assert.match(wasm.inspect, /tier: WebAssembly/, wasm.inspect)
    assert.match(wasm.inspect, /thread-loop ranges: .* shared accesses at PTX lines \d+, \d+/, `the two reads are tested before the loop\n${wasm.inspect}`)
    assert.ok(js.words && wasm.words && wasm2.words, `${grid}x${block}: no fault (${js.fault ?? wasm.fault ?? wasm2.fault})`)
    assert.equal([...js.words!], [...byHand(grid, block, a)], `${grid}x${block}: JavaScript tier by hand`)
    assert.equal([...wasm.words!], [...js.words!], `${grid}x${block}: wasm tier, calling thread`)
    assert.equal([...wasm2.words!], [...js.words!], `${grid}x${block}: wasm tier, 2 workers`)
  }
})

s('a window one word short, or an offset below 0: the first thread to reach outside faults, as on the JavaScript tier', async () => {
  for (const [block, rounds, shift, short] of [[128, 6, 5, 1], [96, 9, 3, 1], [64, 3, 4, 4], [128, 4, -1, 0]] as const) {
    const words = block + 1 + Math.max(...offsets(rounds, shift))
    const a = { words: words - short, rounds, shift, live: block, bytes: (words - short) * 4 }
    const js = await shiftRounds('js', 0, 2, block, a)
    const wasm = await shiftRounds('wasm', 0, 2, block, a)
    const wasm2 = await shiftRounds('wasm', 2, 2, block, a)
    assert.ok(js.fault, `${block} threads, shift ${shift}: the JavaScript tier faults`)
    assert.match(js.fault!, /shared/)
    assert.is(wasm.fault, js.fault, `${block} threads, shift ${shift}: wasm tier, calling thread`)
    assert.is(wasm2.fault, js.fault, `${block} threads, shift ${shift}: wasm tier, 2 workers`)
  }
})

s('threads that left before the rounds, whose offsets would lie outside: the loop runs one thread at a time, no fault, the same words', async () => {
  for (const [block, live, rounds, shift] of [[128, 100, 5, 4], [96, 33, 7, 2], [64, 1, 3, 1]] as const) {
    // the window holds what the threads that stay read (the reversed read of a thread past live would be below 0)
    const words = live + 1 + Math.max(...offsets(rounds, shift))
    const a = { words, rounds, shift, live, bytes: words * 4 }
    const js = await shiftRounds('js', 0, 2, block, a)
    const wasm = await shiftRounds('wasm', 0, 2, block, a)
    assert.ok(js.words && wasm.words, `${block} threads, ${live} stay: no fault (${js.fault ?? wasm.fault})`)
    assert.equal([...js.words!], [...byHand(2, block, a)], `${block} threads, ${live} stay: JavaScript tier by hand`)
    assert.equal([...wasm.words!], [...js.words!], `${block} threads, ${live} stay: wasm tier`)
  }
})

s('a read only the threads past an offset make, tested over those threads: as by hand and as the JavaScript tier; reaching past the window faults as there', async () => {
  for (const [grid, block, steps, back, faults] of [[2, 128, 6, 0, false], [3, 96, 7, 1, false], [2, 64, 4, 0, false], [2, 128, 5, 2, true], [1, 256, 3, 9, true]] as const) {
    const outs: Outcome[] = []
    for (const [codegen, workers] of [['js', 0], ['wasm', 0], ['wasm', 2]] as const) outs.push(await launchOnce(codegen, workers, 'shifted_sum', grid, block, [steps, back], block * 4))
    const [js, wasm, wasm2] = outs as [typeof outs[0], typeof outs[0], typeof outs[0]]
    // the reads under the `if` too (nvcc unrolls the steps: a step's loop that runs 4 threads a step tests both
    // of its reads before it; those are the ones listed)
    const listed = new Set((/thread-loop ranges: .* shared accesses at PTX lines? ([\d, ]+);/.exec(wasm.inspect)?.[1] ?? '').split(', ').map(Number))
    const { plain, conditional } = sharedLoads('shifted_sum')
    assert.ok(plain.some((l) => listed.has(l)), `a read of buf[t] tested before its loop\n${wasm.inspect}`)
    assert.ok(conditional.some((l) => listed.has(l)), `a read under the if tested before its loop\n${wasm.inspect}`)
    if (faults) {
      assert.ok(js.fault, `${grid}x${block}, back ${back}: the JavaScript tier faults`)
      assert.match(js.fault!, /shared/)
      assert.is(wasm.fault, js.fault, `${grid}x${block}, back ${back}: wasm tier, calling thread`)
      assert.is(wasm2.fault, js.fault, `${grid}x${block}, back ${back}: wasm tier, 2 workers`)
      continue
    }
    assert.ok(js.words && wasm.words && wasm2.words, `${grid}x${block}, back ${back}: no fault (${js.fault ?? wasm.fault ?? wasm2.fault})`)
    for (let g = 0; g < grid; g++) {
      const buf = (i: number) => i * 3 + g
      for (let t = 0; t < block; t++) {
        let acc = 0
        for (let st = 0, off = 1; st < steps; st++, off *= 2) {
          let v = buf(t)
          if (t >= off) v += buf(t - off + back)
          acc = (acc + Math.imul(v, st + 1)) | 0
        }
        if (js.words![g * block + t] !== acc) assert.unreachable(`${grid}x${block}, back ${back}: JavaScript tier block ${g} thread ${t}: ${js.words![g * block + t]} for ${acc}`)
      }
    }
    assert.equal([...wasm.words!], [...js.words!], `${grid}x${block}, back ${back}: wasm tier, calling thread`)
    assert.equal([...wasm2.words!], [...js.words!], `${grid}x${block}, back ${back}: wasm tier, 2 workers`)
  }
})

s('the halving tree: sums bit for bit as the JavaScript tier, in the tree\'s order by hand', async () => {
  for (const block of [256, 128, 32, 8, 4, 1]) {
    const grid = 5
    const x = Float32Array.from({ length: grid * block }, (_, i) => Math.fround(((i * 2654435761) >>> 0) % 1999 / 7 - 140))
    const sums: Float32Array[] = []
    let inspect = ''
    for (const [codegen, workers] of [['js', 0], ['wasm', 0], ['wasm', 2]] as const) {
      const be = createEmulatorBackend({ codegen, workers })
      try {
        const k = await KernelRunner.load(be, ptx, 'compute_80', `tree_sum (${codegen}, ${workers} workers)`)
        const din = await k.upload(x), dout = await k.alloc(grid * 4)
        await k.launch('tree_sum', [grid, 1, 1], block, [din, dout], block * 4)
        sums.push(await k.read(dout, Float32Array))
        if (codegen === 'wasm') inspect = (k.module as unknown as { inspect(name: string): string }).inspect(k.entry('tree_sum'))
      } finally {
        be.dispose()
      }
    }
    assert.match(inspect, /thread-loop ranges: .* shared accesses at PTX lines? /, `the tree's reads and write are tested before each level\n${inspect}`)
    for (let g = 0; g < grid; g++) {
      const v = Array.from(x.subarray(g * block, (g + 1) * block))
      for (let half = block >> 1; half > 0; half >>= 1) for (let t = 0; t < half; t++) v[t] = Math.fround(v[t]! + v[t + half]!)
      assert.is(Object.is(sums[0]![g], Math.fround(v[0]!)), true, `${block} threads, block ${g}: JavaScript tier ${sums[0]![g]} by hand ${v[0]}`)
    }
    assert.equal([...sums[1]!].map((f) => Object.is(f, -0) ? '-0' : f), [...sums[0]!].map((f) => Object.is(f, -0) ? '-0' : f), `${block} threads: wasm tier, calling thread`)
    assert.equal([...sums[2]!], [...sums[0]!], `${block} threads: wasm tier, 2 workers`)
  }
})

s.run()
