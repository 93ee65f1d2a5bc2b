// The global accesses of a kernel as affine forms (@kernelpack/ptx's analysis/affine.ts: `inv + c·%tid.x`, inv
// the same for every thread of a block), evaluated on the host at each launch: when every access of every
// thread of the grid lies inside the arena, past its reserved page, the launch runs the kernel's unchecked
// WGSL, which has no per-access check and no fault record to keep (on SwiftShader the checks cost a vector
// add about a third of its time, and WebGPU has no way to branch around them cheaply: a uniform `if` runs both
// sides there). One access without a form, and the kernel has no unchecked variant.
//
// A form is data (emit-wgsl writes it into the kernel, and so into a WGSL image): parameters by their byte
// offset in the launch's parameter block, the block-uniform specials by name. The evaluation is interval
// arithmetic in exact integers over the whole grid (%ctaid in [0, %nctaid − 1], %tid.x in [0, %ntid.x − 1]),
// together with the form's wrap checks (its 32-bit intermediates must not wrap, or the kernel's own values
// differ from the exact ones).
import type { Dim3 } from './translate.js'

/** A block-uniform term. */
export type SiteExpr =
  | { kind: 'const'; value: number }
  /** The integer at byte `at` of the parameter block, read as 32 bits (signed, as the kernel's 32-bit
   *  arithmetic sees it) or 64 bits. */
  | { kind: 'param'; at: number; width: 32 | 64 }
  | { kind: 'special'; name: string }
  | { kind: 'add' | 'mul'; a: SiteExpr; b: SiteExpr }

/** A 32-bit value a loop bound is computed from, with the kernel's wrapping arithmetic (ScalarExpr of
 *  @kernelpack/ptx): parameters by byte offset, launch dimensions, constants. */
export type SiteScalar =
  | { kind: 'const'; value: number }
  | { kind: 'param'; at: number }
  | { kind: 'special'; name: string }
  | { kind: 'op'; op: 'add' | 'sub' | 'mul' | 'shl' | 'shr_s' | 'shr_u' | 'and' | 'or' | 'xor'; a: SiteScalar; b: SiteScalar }

/** A loop's iteration bound (TripBound): iteration k runs only where k = 0 or init + c·%tid.x + k·step <
 *  bound (signed), its counter read after its increment. */
export interface SiteTrip { init: SiteExpr; c: number; step: SiteExpr; bound: SiteScalar; wraps: Array<{ inv: SiteExpr; c: number; lo: number }> }

/** An induction variable's term in an access or a wrap check: + (k + (next ? 1 : 0))·step in iteration k of
 *  `loop` (SiteTrip). */
export interface SiteIv { loop: number; step: SiteExpr; next: boolean }

/** One global access: `size` bytes at `inv + c·%tid.x + offset` (+ the iteration term `iv`, in a loop with a
 *  bound in `trips`); `wraps`: 32-bit terms `inv + c·%tid.x` (+ their iteration term) that must stay in
 *  [lo, 2^31 − 1]. */
export interface AccessSite {
  line: number
  size: number
  inv: SiteExpr
  c: number
  offset: number
  wraps: Array<{ inv: SiteExpr; c: number; lo: number; iv?: SiteIv }>
  iv?: SiteIv
}

type Range = [bigint, bigint]
/** Parameters of at most this magnitude (the forms assume exact 64-bit values, as the emulator's do). */
const PARAM_LIMIT = 1n << 40n

function range(e: SiteExpr, params: DataView, grid: Dim3, block: Dim3): Range | undefined {
  switch (e.kind) {
    case 'const': return [BigInt(e.value), BigInt(e.value)]
    case 'param': {
      if (e.at + e.width / 8 > params.byteLength) return undefined
      const v = e.width === 32 ? BigInt(params.getInt32(e.at, true)) : params.getBigInt64(e.at, true)
      return v > PARAM_LIMIT || v < -PARAM_LIMIT ? undefined : [v, v]
    }
    case 'special': {
      // (%tid.y and %tid.z: forms whose tid.x term is apart, the others a thread's row and plane)
      const m = /^%(ctaid|ntid|nctaid|tid)\.([xyz])$/.exec(e.name)
      if (!m || (m[1] === 'tid' && m[2] === 'x')) return undefined
      const d = 'xyz'.indexOf(m[2]!)
      const n = BigInt(m[1] === 'ntid' || m[1] === 'tid' ? block[d]! : grid[d]!)
      return m[1] === 'ctaid' || m[1] === 'tid' ? [0n, n - 1n] : [n, n]
    }
    default: {
      const a = range(e.a, params, grid, block), b = range(e.b, params, grid, block)
      if (!a || !b) return undefined
      if (e.kind === 'add') return [a[0] + b[0], a[1] + b[1]]
      const p = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
      return [p.reduce((x, y) => (y < x ? y : x)), p.reduce((x, y) => (y > x ? y : x))]
    }
  }
}

/** The range of `inv + c·%tid.x` over the grid. */
function spread(inv: SiteExpr, c: number, params: DataView, grid: Dim3, block: Dim3): Range | undefined {
  const r = range(inv, params, grid, block)
  if (!r) return undefined
  const t = BigInt(c) * BigInt(block[0] - 1)
  return [r[0] + (t < 0n ? t : 0n), r[1] + (t > 0n ? t : 0n)]
}

/** A 32-bit term's range within [lo, 2^31 − 1] (it did not wrap). */
const unwrapped = (x: Range | undefined, lo: number): boolean => !!x && x[0] >= BigInt(lo) && x[1] <= 2147483647n

/** A loop bound's value for this launch (32-bit wrapping arithmetic, as the kernel computes it). */
function scalar(e: SiteScalar, params: DataView, grid: Dim3, block: Dim3): number | undefined {
  switch (e.kind) {
    case 'const': return e.value | 0
    case 'param': return e.at + 4 <= params.byteLength ? params.getInt32(e.at, true) : undefined
    case 'special': {
      // (a launch dimension: range's one value)
      if (!/^%(ntid|nctaid)\./.test(e.name)) return undefined
      const r = range(e, params, grid, block)
      return r ? Number(r[0]) | 0 : undefined
    }
    default: {
      const a = scalar(e.a, params, grid, block), b = scalar(e.b, params, grid, block)
      if (a === undefined || b === undefined) return undefined
      switch (e.op) {
        case 'add': return (a + b) | 0
        case 'sub': return (a - b) | 0
        case 'mul': return Math.imul(a, b)
        case 'shl': return (b & 31) === b ? a << b : undefined
        case 'shr_s': return (b & 31) === b ? a >> b : undefined
        case 'shr_u': return (b & 31) === b ? (a >>> b) | 0 : undefined
        case 'and': return a & b
        case 'or': return a | b
        case 'xor': return a ^ b
      }
    }
  }
}

/** The largest iteration index k any thread of the launch reaches in a loop with bound `t`, or undefined when
 *  the host cannot bound it: a step not positive, or a counter that could wrap on its way to the bound. */
function lastIteration(t: SiteTrip, params: DataView, grid: Dim3, block: Dim3): bigint | undefined {
  const bound = scalar(t.bound, params, grid, block)
  const init = spread(t.init, t.c, params, grid, block)
  const step = range(t.step, params, grid, block)
  if (bound === undefined || !init || !step || step[0] <= 0n) return undefined
  // (the counter's first value exactly as its form says: its 32-bit terms unwrapped)
  if (!t.wraps.every((w) => unwrapped(spread(w.inv, w.c, params, grid, block), w.lo))) return undefined
  const b = BigInt(bound)
  // k runs where k = 0 or init + k·step < bound: k ≤ ⌈(bound − init)/step⌉ − 1, largest for the smallest init
  // and step; the counter's values (each compared after its increment) stay below bound + step
  const span = b - init[0]
  const last = span <= 0n ? 0n : (span + step[0] - 1n) / step[0] - 1n
  if (init[0] < -2147483648n || init[1] > 2147483647n || (init[1] > b ? init[1] : b) + step[1] > 2147483647n) return undefined
  return last < 0n ? 0n : last
}

/** The range of an iteration term (k + next)·step, k in [0, last]. */
function ivSpan(iv: SiteIv, last: bigint, params: DataView, grid: Dim3, block: Dim3): Range | undefined {
  const step = range(iv.step, params, grid, block)
  if (!step) return undefined
  const kHi = last + (iv.next ? 1n : 0n), kLo = iv.next ? 1n : 0n
  const p = [kLo * step[0], kLo * step[1], kHi * step[0], kHi * step[1]]
  return [p.reduce((x, y) => (y < x ? y : x)), p.reduce((x, y) => (y > x ? y : x))]
}

/**
 * Whether every access of `sites`, by every thread of a launch of `grid` × `block` with these parameters,
 * lies in [reserved, arenaBytes) and no 32-bit term wraps: then the launch may run without checks. An access
 * in a loop counts every iteration the loop's bound (`trips`) lets any thread run.
 */
export function accessesInside(sites: readonly AccessSite[], params: Uint8Array, grid: Dim3, block: Dim3, reserved: number, arenaBytes: number, trips: ReadonlyMap<number, SiteTrip> = new Map()): boolean {
  const dv = new DataView(params.buffer, params.byteOffset, params.byteLength)
  const lasts = new Map<number, bigint | undefined>()
  const withIv = (r: Range | undefined, iv: SiteIv | undefined): Range | undefined => {
    if (!r || !iv) return r
    const t = trips.get(iv.loop)
    if (!t) return undefined
    if (!lasts.has(iv.loop)) lasts.set(iv.loop, lastIteration(t, dv, grid, block))
    const last = lasts.get(iv.loop)
    const k = last === undefined ? undefined : ivSpan(iv, last, dv, grid, block)
    return k ? [r[0] + k[0], r[1] + k[1]] : undefined
  }
  for (const s of sites) {
    const r = withIv(spread(s.inv, s.c, dv, grid, block), s.iv)
    if (!r || r[0] + BigInt(s.offset) < BigInt(reserved) || r[1] + BigInt(s.offset + s.size) > BigInt(arenaBytes)) return false
    if (!s.wraps.every((w) => unwrapped(withIv(spread(w.inv, w.c, dv, grid, block), w.iv), w.lo))) return false
  }
  return true
}
