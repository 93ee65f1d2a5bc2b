// The gallery's inputs and JS references, one section per example: what each page uploads, and what its
// kernel must give back. Pure functions without a DOM or a .cu import, so the pages (which check every run
// against them) and test/docs/site.test.ts (which checks what the pages expose) share one definition.

/** xorshift32: the same pseudo-random numbers in every browser and in Node. */
export function randomWords(seed: number, n: number): Uint32Array {
  const out = new Uint32Array(n)
  let s = seed >>> 0 || 1
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0
    s ^= s >>> 17
    s ^= s << 5; s >>>= 0
    out[i] = s
  }
  return out
}

/** The first index where `got` is not within `tolerance` (relative to max(1, |want|)) of `want`, with both
 *  values, or null when every element is. Lengths must match. */
export function firstMismatch(got: ArrayLike<number>, want: ArrayLike<number>, tolerance = 0): string | null {
  if (got.length !== want.length) return `${got.length} values, expected ${want.length}`
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!, w = want[i]!
    if (tolerance === 0 ? g !== w : !(Math.abs(g - w) <= tolerance * Math.max(1, Math.abs(w)))) return `element ${i} is ${g}, expected ${w}`
  }
  return null
}

// --- saxpy

export const saxpyInput = { n: 4096, a: 2 } as const

export function saxpyData(n: number = saxpyInput.n): { x: Float32Array; y: Float32Array } {
  const x = Float32Array.from({ length: n }, (_, i) => Math.sin((4 * Math.PI * i) / n))
  const y = Float32Array.from({ length: n }, (_, i) => 0.5 * Math.cos((6 * Math.PI * i) / n))
  return { x, y }
}

/** out = a·x + y in float32 (the kernel's fused multiply-add may round once where this rounds twice). */
export function saxpyReference(a: number, x: Float32Array, y: Float32Array): Float32Array {
  return Float32Array.from(x, (xi, i) => Math.fround(Math.fround(a * xi) + y[i]!))
}

export const saxpyTolerance = 1e-6

// --- mandelbrot

/** A view of the plane in Q12 fixed point (4096 = 1.0): the top-left corner and the step between pixels. */
export interface MandelbrotView { label: string; x0: number; y0: number; step: number }

export const mandelbrotSize = { width: 256, height: 192, maxIter: 96 } as const
export const mandelbrotViews: readonly MandelbrotView[] = [
  { label: 'the whole set', x0: -9216, y0: -4608, step: 48 },   // re −2.25…0.75, im −1.125…1.125
  { label: 'seahorse valley', x0: -3180, y0: 367, step: 1 },    // re −0.776…−0.714, im 0.090…0.137
]

/** Escape-time counts with the kernel's int32 fixed-point arithmetic. */
export function mandelbrotReference(view: MandelbrotView, width: number = mandelbrotSize.width, height: number = mandelbrotSize.height, maxIter: number = mandelbrotSize.maxIter): Uint32Array {
  const out = new Uint32Array(width * height)
  for (let py = 0; py < height; py++) {
    for (let px = 0; px < width; px++) {
      const cr = (view.x0 + px * view.step) | 0, ci = (view.y0 + py * view.step) | 0
      let zr = 0, zi = 0, k = 0
      for (; k < maxIter; k++) {
        const rr = Math.imul(zr, zr) >> 12, ii = Math.imul(zi, zi) >> 12
        if (rr + ii > 4 << 12) break
        zi = (Math.imul(zr, zi) >> 11) + ci
        zr = rr - ii + cr
      }
      out[py * width + px] = k
    }
  }
  return out
}

// --- convolution

/** A 5×5 integer filter: out = clamp(((Σ w·in + 2^(shift-1)) >> shift) + bias, 0, 255). */
export interface Filter { label: string; weights: readonly number[]; shift: number; bias: number }

const binomial = [1, 4, 6, 4, 1]
const blurWeights = binomial.flatMap((r) => binomial.map((c) => r * c))
export const filters: Readonly<Record<'blur' | 'sharpen' | 'edges', Filter>> = {
  blur: { label: 'blur (5×5 binomial)', weights: blurWeights, shift: 8, bias: 0 },
  // 2·identity − blur: the detail the blur removes, added back once more
  sharpen: { label: 'sharpen (unsharp mask)', weights: blurWeights.map((w, i) => (i === 12 ? 512 : 0) - w), shift: 8, bias: 0 },
  // the blurred image minus the image: a Laplacian of Gaussian, centred on mid grey
  edges: { label: 'edges (blur − image)', weights: blurWeights.map((w, i) => w - (i === 12 ? 256 : 0)), shift: 6, bias: 128 },
}

/** The filter applied to a grey image with the kernel's clamped borders and integer rounding. */
export function convolveReference(image: Uint8Array, width: number, height: number, filter: Filter): Uint8Array {
  const out = new Uint8Array(width * height)
  const clamp = (v: number, hi: number) => (v < 0 ? 0 : v > hi ? hi : v)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0
      for (let dy = -2; dy <= 2; dy++) {
        for (let dx = -2; dx <= 2; dx++) sum += filter.weights[(dy + 2) * 5 + dx + 2]! * image[clamp(y + dy, height - 1) * width + clamp(x + dx, width - 1)]!
      }
      out[y * width + x] = clamp(((sum + (1 << (filter.shift - 1))) >> filter.shift) + filter.bias, 255)
    }
  }
  return out
}

// --- histogram

export const histogramInput = { n: 1 << 16, seed: 2024 } as const

/** Bytes shaped like a bell: the sum of four random numbers in 0…63. */
export function histogramData(n: number = histogramInput.n, seed: number = histogramInput.seed): Uint8Array {
  const words = randomWords(seed, n)
  return Uint8Array.from(words, (w) => (w & 63) + ((w >>> 8) & 63) + ((w >>> 16) & 63) + ((w >>> 24) & 63))
}

export function histogramReference(data: Uint8Array): Uint32Array {
  const bins = new Uint32Array(256)
  for (const v of data) bins[v]!++
  return bins
}

// --- reduction

export const reductionInput = { n: 1 << 18, seed: 7, block: 256, blocks: 64 } as const

/** Integers in −1000…1000. */
export function reductionData(n: number = reductionInput.n, seed: number = reductionInput.seed): Int32Array {
  return Int32Array.from(randomWords(seed, n), (w) => (w % 2001) - 1000)
}

/** The partial sums of the kernel's first launch (block b sums the elements of its grid-stride loop) and
 *  their total, with int32 wrap-around as the kernel adds. */
export function reductionReference(data: Int32Array, blocks: number = reductionInput.blocks, block: number = reductionInput.block): { partials: Int32Array; total: number } {
  const partials = new Int32Array(blocks)
  for (let i = 0; i < data.length; i++) {
    const b = Math.floor(i / (2 * block)) % blocks
    partials[b] = (partials[b]! + data[i]!) | 0
  }
  return { partials, total: partials.reduce((s, v) => (s + v) | 0, 0) }
}

// --- matmul

export const matmulSizes = [64, 128, 256] as const
export const matmulDefault = 128

/** Elements in {−1, −7/8, …, 1}: every product is a multiple of 1/64 and every sum of n of them is exact
 *  in float32, so all backends and the reference agree to the bit, whatever the order of the additions. */
export function matmulData(n: number): { a: Float32Array; b: Float32Array } {
  const a = Float32Array.from({ length: n * n }, (_, k) => ((((k / n) | 0) * 7 + (k % n) * 13) % 17 - 8) / 8)
  const b = Float32Array.from({ length: n * n }, (_, k) => ((((k / n) | 0) * 5 + (k % n) * 3 + 11) % 17 - 8) / 8)
  return { a, b }
}

export function matmulReference(a: Float32Array, b: Float32Array, n: number): Float32Array {
  const c = new Float32Array(n * n)
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0
      for (let k = 0; k < n; k++) s += a[i * n + k]! * b[k * n + j]!
      c[i * n + j] = s
    }
  }
  return c
}

// --- scan

export const scanInput = { n: 50_000, seed: 99, block: 256 } as const

/** Small integers 0…9, so that the running sum stays a readable curve. */
export function scanData(n: number = scanInput.n, seed: number = scanInput.seed): Int32Array {
  return Int32Array.from(randomWords(seed, n), (w) => w % 10)
}

/** Inclusive prefix sums. */
export function scanReference(data: Int32Array): Int32Array {
  const out = new Int32Array(data.length)
  let s = 0
  for (let i = 0; i < data.length; i++) out[i] = s = (s + data[i]!) | 0
  return out
}

// --- sanitizer

export const sanitizerInput = { blocks: 4, block: 256, seed: 5 } as const

export function sanitizerData(): Int32Array {
  const { blocks, block, seed } = sanitizerInput
  return Int32Array.from(randomWords(seed, blocks * block), (w) => w % 100)
}

/** One sum per block of 256 values. */
export function blockSumsReference(data: Int32Array, block: number = sanitizerInput.block): Int32Array {
  const out = new Int32Array(data.length / block)
  for (let i = 0; i < data.length; i++) out[(i / block) | 0] += data[i]!
  return out
}
