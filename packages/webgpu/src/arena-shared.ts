// The host side of shared memory in the arena (emit-arena-shared.ts), loaded by the backend for the first launch
// that runs a kernel's sharedInArena variant (its shared memory exceeds the adapter's workgroup storage): the
// width of its dispatches and the workspace that holds one slice per workgroup of a dispatch. Dispatches of one
// launch run one after another (WebGPU orders a pass's dispatches), so they reuse the slices.
import type { WgslKernel } from './translate.js'

/** The most bytes of slices a launch takes: wider grids run as more dispatches. */
export const ARENA_SHARED_BYTES = 64 << 20

type Variant = NonNullable<WgslKernel['sharedInArena']>

/** Words of one workgroup's slice for a launch with `sharedBytes` of dynamic shared memory. */
export function sliceWords(v: Variant, sharedBytes: number): number {
  return v.words.fixed + (v.words.dynamic ? Math.max(1, Math.ceil(sharedBytes / 4)) : 0)
}

/** How many columns of the grid (blocks along x) each dispatch runs: as many as ARENA_SHARED_BYTES of slices
 *  hold, at least one, at most `perDim`; a launch in slices (stoppable.ts) widens its slices up to perDim. */
export function arenaColumns(v: Variant, grid: readonly number[], perDim: number, sharedBytes: number, stoppable: boolean): number {
  const most = Math.min(grid[0]!, perDim)
  if (stoppable) return most
  const slots = Math.floor(ARENA_SHARED_BYTES / (sliceWords(v, sharedBytes) * 4))
  return Math.max(1, Math.min(most, Math.floor(slots / (grid[1]! * grid[2]!))))
}

/** The slices of a launch: its dispatches' width (arenaColumns), and a slice per workgroup of one dispatch
 *  allocated in the arena, their byte address written at the variant's place in the parameter block; `release`
 *  gives them back (once the launch is queued: what is queued after it runs after it). */
export async function arenaSlices(
  arena: { alloc(bytes: number): Promise<bigint>; free(at: bigint): void },
  v: Variant, grid: readonly number[], perDim: number, sharedBytes: number, stoppable: boolean, params: Uint8Array,
): Promise<{ columns: number; release: () => void }> {
  const columns = arenaColumns(v, grid, perDim, sharedBytes, stoppable)
  const at = await arena.alloc(columns * grid[1]! * grid[2]! * sliceWords(v, sharedBytes) * 4)
  new DataView(params.buffer, params.byteOffset).setUint32(v.workspaceAt, Number(at), true)
  return { columns, release: () => arena.free(at) }
}
