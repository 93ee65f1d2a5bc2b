// Randomly shaped warp-level code on both tiers (issue 24: the wasm tier's warp runs, lane loops a warp at a time,
// ifs a whole warp skips and regions narrowed to the lanes a %tid.x guard keeps): kernels of nested
// `if (t OP c)` with lockstep steps over volatile shared memory (lanes read their neighbours' elements) written
// by a seeded generator, compiled by nvcc, run at block shapes whose warps are whole, cut short, or spread over
// rows; every word the wasm tier writes must be the JavaScript tier's. With either of the two nesting bugs that
// 0212507 fixed put back (an inner guard intersected with the whole warp instead of the outer region's lanes; the
// inner region's saved lane bounds overwriting the outer one's), both seeds fail. KP_FUZZ_SEEDS=1,2,3,… runs more.

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'

/** mulberry32: a small seeded generator, so the kernels are the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function kernels(seed: number, count: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const stmt = (depth: number): string => {
    if (depth < 3 && r() < 0.45) {
      const body = Array.from({ length: 2 + Math.floor(r() * 3) }, () => stmt(depth + 1)).join('\n')
      return `if (t ${pick(['<', '>=', '>', '<=', '==', '!='])} ${pick([0, 1, 7, 8, 15, 16, 20, 31, 32, 33, 40, 47, 63, 64, 95, 100, 127, 128])}u) {\n${body}\n}`
    }
    const k = pick([1, 2, 3, 4, 8, 16, 32])
    return pick([`a[t] += a[t + ${k}];`, `a[t] = a[t + ${k}] - a[t];`, `a[t] = a[t] * 3 + ${k};`, `a[t] ^= a[(t + ${k}) & 255];`])
  }
  return Array.from({ length: count }, (_, i) => `extern "C" __global__ void f${i}(const int *in, int *out)
{
    __shared__ int acc[512];
    unsigned t = threadIdx.x;
    acc[t] = in[blockIdx.x * blockDim.x + t];
    acc[t + blockDim.x] = 0;
    __syncthreads();
    volatile int *a = acc;
${Array.from({ length: 2 + Math.floor(r() * 4) }, () => stmt(0)).join('\n')}
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = acc[t];
}`).join('\n\n')
}

const SHAPES = [[2, 64, 1], [2, 256, 1], [3, 96, 1], [2, 48, 1], [2, 32, 4], [2, 16, 8], [1, 200, 1]] as const

const s = suite('wasm tier: random warp-level ifs and lockstep steps, against the JavaScript tier')

for (const seed of (process.env.KP_FUZZ_SEEDS ?? '1,2').split(',').map(Number)) {
  s(`seed ${seed}: 16 kernels at ${SHAPES.length} block shapes, every word equal`, () => {
    const ptx = nvccPtx(kernels(seed, 16))
    const names = [...ptx.matchAll(/\.entry\s+(\S+?)\s*\(/g)].map((m) => m[1]!)
    assert.is(names.length, 16)
    let skipped = 0
    /** Every kernel at every shape on one tier: the words it wrote, or its fault. */
    const runAll = (codegen: 'wasm' | 'js'): string[] => {
      const be = createEmulatorBackend({ codegen, workers: 0 })
      try {
        const mod = be.loadModule(ptxBytes(ptx))
        if (codegen === 'wasm') skipped = names.filter((k) => /skips (it|each) at once/.test(mod.inspect(k))).length
        return SHAPES.flatMap(([grid, bx, by]) => {
          const n = grid * bx * by
          const x = Int32Array.from({ length: n }, (_, i) => (((i * 2654435761) >>> 20) % 2001) - 1000)
          const din = upload(be, x)
          return names.map((k) => {
            const dout = be.alloc(n * 4)
            const f = launchOrFault(be, mod, k, { grid: [grid, 1, 1], block: [bx, by, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }]))
            const words = f ? `fault: ${f.message}` : [...download(be, dout, new Int32Array(n))].join(',')
            be.free(dout)
            return `${k} at ${grid} x [${bx}, ${by}]: ${words}`
          })
        })
      } finally {
        be.dispose()
      }
    }
    const [w, j] = [runAll('wasm'), runAll('js')]
    w.forEach((got, i) => assert.is(got, j[i]))
    // the generator reaches the paths it is for
    assert.ok(skipped > 0, 'some kernel has an if a whole warp skips')
  })
}

s.run()
