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

/** One global access: `size` bytes at `inv + c·%tid.x + offset`; `wraps`: 32-bit terms `inv + c·%tid.x` that
 *  must stay in [lo, 2^31 − 1]. */
export interface AccessSite {
  line: number
  size: number
  inv: SiteExpr
  c: number
  offset: number
  wraps: Array<{ inv: SiteExpr; c: number; lo: number }>
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
      const m = /^%(ctaid|ntid|nctaid)\.([xyz])$/.exec(e.name)
      if (!m) return undefined
      const d = 'xyz'.indexOf(m[2]!)
      const n = BigInt(m[1] === 'ntid' ? block[d]! : grid[d]!)
      return m[1] === 'ctaid' ? [0n, n - 1n] : [n, n]
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

/**
 * Whether every access of `sites`, by every thread of a launch of `grid` × `block` with these parameters,
 * lies in [reserved, arenaBytes) and no 32-bit term wraps: then the launch may run without checks.
 */
export function accessesInside(sites: readonly AccessSite[], params: Uint8Array, grid: Dim3, block: Dim3, reserved: number, arenaBytes: number): boolean {
  const dv = new DataView(params.buffer, params.byteOffset, params.byteLength)
  for (const s of sites) {
    const r = spread(s.inv, s.c, dv, grid, block)
    if (!r || r[0] + BigInt(s.offset) < BigInt(reserved) || r[1] + BigInt(s.offset + s.size) > BigInt(arenaBytes)) return false
    for (const w of s.wraps) {
      const x = spread(w.inv, w.c, dv, grid, block)
      if (!x || x[0] < BigInt(w.lo) || x[1] > 2147483647n) return false
    }
  }
  return true
}
