// The kernel corpus harness (issues 14, 31): the types of the registry in test/fixtures/kernels, seeded inputs,
// and the comparison of a case's outputs with its independent TypeScript reference within the case's stated
// tolerance (building the files: kernel-corpus-build.ts). The emulator, the sanitizer, the WebGPU backend and
// the GPU check run the same registry on their own hosts.
// No Node APIs here (cases and references can run in a browser page).
import { createRng, type KernelHost } from './kernel-runner.js'

export type Compiler = 'nvcc' | 'clang'
export const compilers: readonly Compiler[] = ['nvcc', 'clang']

/** A fixture translation unit. */
export interface CorpusFile {
  /** Path under test/fixtures/kernels (`basics/vector_add.cu`). */
  file: string
  /** The architecture the kernels need: nvcc builds PTX for compute_<arch>, clang for sm_<arch>. */
  arch: 80 | 90
  /** `-I` folders under test/fixtures/kernels. */
  includeDirs?: string[]
}

/** What a kernel exercises (for the README's coverage table and for backends that select by feature), in the
 *  table's order. */
export const features = [
  'shared', 'dynamic-shared', 'barrier', 'atomics', 'shared-atomics', 'float-atomics', 'threadfence',
  'warp-shuffle', 'warp-vote', 'warp-reduce', 'warpSize', 'cooperative-groups', 'cg-reduce', 'cg-partition',
  'grid-sync', 'cp.async', 'mbarrier', 'wmma', 'mma', 'ldmatrix',
  'f16', 'bf16', 'tf32', 'f64', 'int8', 'math', 'constant', 'vector-types', '2d-grid', '3d-grid', 'templates',
] as const
export type Feature = (typeof features)[number]

/** Per-element error allowed for float outputs; `why` says where the bound comes from. An element passes when
 *  it equals the reference, or its distance is within the largest of `abs`, `rel`·|ref|, `ulps` f32 ulps of
 *  the reference, and the reference's own per-element `bound`. */
export interface Tolerance {
  exact?: true
  abs?: number
  rel?: number
  ulps?: number
  why: string
}

export type Numeric = ArrayLike<number> | ArrayLike<bigint>
/** Reference values with a per-element absolute error bound (a dot product's γₙ·Σ|aᵢbᵢ|, say). */
export interface Bounded { values: ArrayLike<number>; bound: ArrayLike<number> }
export type Outputs = Record<string, Numeric>
export type Expected = Record<string, Numeric | Bounded>

/** The launch options a case may need beyond grid, block and dynamic shared memory. */
export interface LaunchExtras {
  /** cudaLaunchCooperativeKernel: every block resident at once, `cg::this_grid().sync()` allowed. */
  cooperative?: boolean
  /** cudaFuncSetAttribute(…, cudaFuncAttributeMaxDynamicSharedMemorySize, n) before the launch. */
  maxDynamicSharedBytes?: number
}

/** A KernelHost whose launches can carry LaunchExtras. */
export interface CorpusHost extends KernelHost {
  launchWith(name: string, grid: number | [number, number, number], block: number | [number, number, number], args: Parameters<KernelHost['launch']>[3], sharedBytes: number, extras: LaunchExtras): Promise<void>
}

export interface Rng {
  u32(): number
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number
  /** f32 uniform in [lo, hi). */
  float(lo: number, hi: number): number
}

export interface CorpusCase<I = any> {
  /** Unique; the kernel's name (or the pipeline's, for kernels that only make sense together). */
  name: string
  /** The fixture it lives in (CorpusFile.file). */
  file: string
  /** The kernels it launches: identifiers found in the PTX entry names. */
  kernels: string[]
  features: Feature[]
  /** Seeded inputs (plain arrays and numbers). */
  inputs(rng: Rng): I
  /** Uploads the inputs, launches as the original host code does, downloads the outputs. */
  run(host: CorpusHost, input: I): Promise<Outputs>
  /** The same outputs, computed in TypeScript from the algorithm (never from a backend's output). */
  reference(input: I): Expected
  tolerance: Tolerance
}

/** A case with its input type inferred (the registry holds CorpusCase<any>). */
export function defineCase<I>(c: CorpusCase<I>): CorpusCase<I> {
  return c
}

/** The seed of a case's generator: FNV-1a of its name (recorded with the GPU fixtures, issue 18). */
export function caseSeed(name: string): number {
  let seed = 0x811c9dc5
  for (let i = 0; i < name.length; i++) seed = Math.imul(seed ^ name.charCodeAt(i), 0x01000193) >>> 0
  return seed
}

/** A deterministic generator for one case (seeded by the case's name). */
export function caseRng(name: string): Rng {
  const r = createRng(caseSeed(name))
  return {
    u32: r.u32,
    int: r.int,
    float: (lo, hi) => Math.fround(lo + (hi - lo) * (r.u32() / 2 ** 32)),
  }
}

/** The distance between `x` and the next f32 away from zero (an f32 ulp at |x|). */
export function ulpF32(x: number): number {
  const a = Math.abs(x)
  if (a < 2 ** -126) return 2 ** -149
  return 2 ** (Math.floor(Math.log2(a)) - 23)
}

const isBounded = (e: Numeric | Bounded): e is Bounded => typeof e === 'object' && e !== null && 'values' in e && 'bound' in e

/** Mismatch descriptions (empty when every output is within tolerance). */
export function compareOutputs(c: CorpusCase, actual: Outputs, expected: Expected): string[] {
  const problems: string[] = []
  for (const key of Object.keys(expected)) {
    const e = expected[key]!
    const a = actual[key]
    if (!a) { problems.push(`${key}: no such output`); continue }
    const values = isBounded(e) ? e.values : e
    const bound = isBounded(e) ? e.bound : undefined
    if (a.length !== values.length) { problems.push(`${key}: length ${a.length}, expected ${values.length}`); continue }
    const bad: string[] = []
    let count = 0
    for (let i = 0; i < a.length; i++) {
      const x = a[i]!
      const y = values[i]!
      let ok: boolean
      if (typeof x === 'bigint' || typeof y === 'bigint') ok = BigInt(x) === BigInt(y)
      else if (x === y || (Number.isNaN(x) && Number.isNaN(y))) ok = true
      else if (c.tolerance.exact) ok = false
      else {
        const t = c.tolerance
        const allowed = Math.max(t.abs ?? 0, (t.rel ?? 0) * Math.abs(y), (t.ulps ?? 0) * ulpF32(y), bound ? bound[i]! : 0)
        ok = Math.abs(x - y) <= allowed
      }
      if (!ok) {
        count++
        if (bad.length < 6) bad.push(`[${i}] got ${x}, expected ${y}${bound ? ` ± ${bound[i]}` : ''}`)
      }
    }
    if (count) problems.push(`${key}: ${count} of ${a.length} elements differ: ${bad.join('; ')}`)
  }
  for (const key of Object.keys(actual)) if (!(key in expected)) problems.push(`${key}: output has no reference`)
  return problems
}

/** Runs one case on a host and compares; throws with the mismatches. */
export async function runAndCheck(c: CorpusCase, host: CorpusHost): Promise<void> {
  const input = c.inputs(caseRng(c.name))
  const actual = await c.run(host, input)
  const problems = compareOutputs(c, actual, c.reference(input))
  if (problems.length) throw new Error(`wrong result: ${problems.join(' | ')}`)
}
