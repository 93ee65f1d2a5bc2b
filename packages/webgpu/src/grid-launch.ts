// A launch of a kernel split at its grid syncs (grid-sync.ts), loaded by the backend for the first such launch:
// a page whose kernels have no grid sync never loads it. It checks that the launch is cooperative (as CUDA
// requires for cg::this_grid().sync()) and sets up the workspace the phases keep their state in.
import type { WgslKernel } from './translate.js'

/** The workspace of one launch: allocated in the arena, its address written into the parameter block where
 *  the WGSL reads it; `release` gives it back (once the launch is queued: what is queued after it runs after
 *  it); `decision`: the byte address of the word a phase that ends with a branch sets where the branch is taken
 *  (after the blocks' state; kernels with loops or `if`s around grid syncs only). */
export async function gridWorkspace(
  arena: { alloc(bytes: number): Promise<bigint>; free(at: bigint): void },
  gs: NonNullable<WgslKernel['gridSync']>, what: string, cooperative: boolean | undefined,
  blocks: number, threads: number, sharedBytes: number, params: Uint8Array,
): Promise<{ release: () => void; decision: number }> {
  if (!cooperative) throw new Error(`${what}: the kernel synchronizes the whole grid (cg::this_grid().sync()), which only a cooperative launch provides: launch it with { cooperative: true } (cudaLaunchCooperativeKernel)`)
  // per block: block-uniform registers, each thread's state, shared memory (translate.ts WgslKernel.gridSync)
  const words = gs.uniformWords + threads * gs.threadWords + gs.sharedWords.fixed + (gs.sharedWords.dynamic ? Math.max(1, Math.ceil(sharedBytes / 4)) : 0)
  const at = await arena.alloc(blocks * words * 4 + (gs.loops ? 4 : 0))
  new DataView(params.buffer, params.byteOffset).setUint32(gs.workspaceAt, Number(at), true)
  return { release: () => arena.free(at), decision: Number(at) + blocks * words * 4 }
}
