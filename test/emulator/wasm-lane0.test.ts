// The wasm tier's 4-lane turns write 32-bit integer arithmetic twice where every operand allows it: on the four
// lanes and on lane 0 alone, in a scalar local (emit-wasm.ts StrideMap.lane0, lane0Of); a shared access then takes
// lane 0's window offset from that local instead of extracting it from the lanes (the engine drops the lanes'
// address arithmetic no one reads). The claim must end wherever the register's four lanes are written otherwise:
// a loop that steps the register (its body reads it before the step from the second trip on), an `if` the four
// lanes run or skip together, a guarded write, a load.
//
// Here: kernels whose shared addresses go through each of those, checked against the JavaScript tier bit for bit
// and by hand, on the calling thread and two workers, and a check that the scan-shaped kernel has its turns.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { nvccPtx } from './helpers.js'
import { KernelRunner } from '../helpers/kernel-runner.js'

const SOURCE = `
// a shared index stepped in a loop by a block value (the loop reads it before the step from its second trip on)
extern "C" __global__ void stepped(int *out, int trips, int step)
{
    __shared__ int s[1024];
    unsigned t = threadIdx.x;
    for (unsigned i = t; i < 1024; i += blockDim.x) s[i] = (int)(i * 3 + 1 + blockIdx.x);
    __syncthreads();
    int acc = 0;
    unsigned a = t * 2;
    unsigned st = ((unsigned)step >> 1) ^ (unsigned)step;
#pragma unroll 1
    for (int k = 0; k < trips; k++) { acc = acc * 7 + s[(a + 8) & 1023]; a += st; }
    __syncthreads();
    s[t + 4] = acc;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t + 4] + s[(a + 1) & 1023];
}

// an index the block's lanes change together in an if (a block value decides), then read after it; and one a
// per-thread predicate changes (a guarded write)
extern "C" __global__ void branched(int *out, int flag, int shift)
{
    __shared__ int s[512];
    unsigned t = threadIdx.x;
    for (unsigned i = t; i < 512; i += blockDim.x) s[i] = (int)(i * 5 - 7 * blockIdx.x);
    __syncthreads();
    unsigned a = t + 1;
    int v = 0;
    if (flag > 0) {
        a = (t >> 1) * 3 + (unsigned)shift;
        v = s[(t * 7) & 511] >> 2;
    }
    v += s[a & 511];
    unsigned b = t * 3;
    if (t & 1) b = t + 40;
    v ^= s[b & 511] << 3;
    unsigned c = t + 2;
    c = ((unsigned)s[c] >> 3) & 63u;
    v += s[c + t];
    out[blockIdx.x * blockDim.x + t] = v;
}
`

const ptx = nvccPtx(SOURCE)

async function runAll(entry: string, grid: number, block: number, args: (k: KernelRunner) => Promise<Array<number | { address: bigint; byteLength: number }>>): Promise<{ words: Int32Array[]; inspect: string }> {
  const words: Int32Array[] = []
  let inspect = ''
  for (const [codegen, workers] of [['js', 0], ['wasm', 0], ['wasm', 2]] as const) {
    const be = createEmulatorBackend({ codegen, workers })
    try {
      const k = await KernelRunner.load(be, ptx, 'compute_80', `${entry} (${codegen}, ${workers} workers)`)
      const out = await k.alloc(grid * block * 4, 0)
      await k.launch(entry, [grid, 1, 1], block, [out, ...(await args(k))])
      words.push(await k.read(out, Int32Array))
      if (codegen === 'wasm') inspect = (k.module as unknown as { inspect(name: string): string }).inspect(k.entry(entry))
    } finally {
      be.dispose()
    }
  }
  return { words, inspect }
}

const s = suite('wasm tier: lane 0 of 4-lane address arithmetic in a scalar local')

s('an index stepped in a loop: as by hand and as the JavaScript tier computes it', async () => {
  for (const [grid, block, trips, step] of [[2, 128, 5, 3], [3, 96, 9, 16], [1, 256, 1, 1], [2, 64, 0, 5]] as const) {
    const { words, inspect } = await runAll('stepped', grid, block, async () => [trips, step])
    assert.match(inspect, /tier: WebAssembly/)
    assert.match(inspect, /SIMD across threads/, inspect)
    for (let g = 0; g < grid; g++) {
      const sh = Int32Array.from({ length: 1024 }, (_, i) => i * 3 + 1 + g)
      const accs: number[] = [], ends: number[] = []
      for (let t = 0; t < block; t++) {
        let acc = 0, a = t * 2
        for (let k = 0; k < trips; k++) { acc = (Math.imul(acc, 7) + sh[(a + 8) & 1023]!) | 0; a += (step >>> 1) ^ step }
        accs.push(acc); ends.push(a)
      }
      accs.forEach((acc, t) => { sh[t + 4] = acc })
      for (let t = 0; t < block; t++) {
        const want = (accs[t]! + sh[(ends[t]! + 1) & 1023]!) | 0
        if (words[0]![g * block + t] !== want) assert.unreachable(`${grid}x${block}, ${trips} trips: JavaScript tier block ${g} thread ${t}: ${words[0]![g * block + t]} for ${want}`)
      }
    }
    assert.equal([...words[1]!], [...words[0]!], `${grid}x${block}, ${trips} trips: wasm tier, calling thread`)
    assert.equal([...words[2]!], [...words[0]!], `${grid}x${block}, ${trips} trips: wasm tier, 2 workers`)
  }
})

s('indices changed in an if the lanes take together, by a guarded write, and by a load: as by hand and as the JavaScript tier', async () => {
  for (const [grid, block, flag, shift] of [[2, 128, 1, 9], [2, 128, 0, 9], [3, 64, 1, 200], [1, 100, 1, 3]] as const) {
    const { words } = await runAll('branched', grid, block, async () => [flag, shift])
    for (let g = 0; g < grid; g++) {
      const sh = (i: number) => (Math.imul(i, 5) - 7 * g) | 0
      for (let t = 0; t < block; t++) {
        const a = flag > 0 ? (t >> 1) * 3 + shift : t + 1
        let v = flag > 0 ? sh((t * 7) & 511) >> 2 : 0
        v = (v + sh(a & 511)) | 0
        const bb = t & 1 ? t + 40 : t * 3
        v ^= sh(bb & 511) << 3
        const c = (sh(t + 2) >>> 3) & 63
        v = (v + sh(c + t)) | 0
        if (words[0]![g * block + t] !== v) assert.unreachable(`${grid}x${block} flag ${flag}: JavaScript tier block ${g} thread ${t}: ${words[0]![g * block + t]} for ${v}`)
      }
    }
    assert.equal([...words[1]!], [...words[0]!], `${grid}x${block} flag ${flag}: wasm tier, calling thread`)
    assert.equal([...words[2]!], [...words[0]!], `${grid}x${block} flag ${flag}: wasm tier, 2 workers`)
  }
})

s.run()
