// A launch of a kernel split at its grid syncs (grid-sync.ts), loaded by the backend for the first such launch:
// a page whose kernels have no grid sync never loads it. It checks that the launch is cooperative (as CUDA
// requires for cg::this_grid().sync()) and sets up the workspace the phases keep their state in.
import type { WgslKernel } from './translate.js'
import { MAP_READ, USAGE_COPY_DST } from './layout.js'

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
  const at = await arena.alloc(blocks * words * 4 + (gs.branches ? 4 : 0))
  new DataView(params.buffer, params.byteOffset).setUint32(gs.workspaceAt, Number(at), true)
  return { release: () => arena.free(at), decision: Number(at) + blocks * words * 4 }
}

/**
 * Runs a grid-sync kernel's phases: `run(from, to, after)` dispatches phases from..to in order and puts `after`
 * behind them on the queue. A phase that ends with a branch (a loop's back edge, an `if`'s skip test;
 * WgslKernel.gridSync.branches) sets the word at `decisionAt` where a thread takes it: the word is cleared before
 * that phase and read back after it with the fault record's first word, and the launch goes on at the branch's
 * phase where it was taken, else at the next; a fault ends it (and is reported as any other).
 */
export async function runPhases(
  device: GPUDevice, gs: NonNullable<WgslKernel['gridSync']>, decisionAt: number, memory: GPUBuffer, faultRecord: GPUBuffer, label: string,
  run: (from: number, to: number, after?: (enc: GPUCommandEncoder) => void) => Promise<void>,
): Promise<void> {
  const branches = new Map((gs.branches ?? []).map((l) => [l.phase, l.to]))
  if (!branches.size) return run(0, gs.phases - 1)
  const decision = device.createBuffer({ label: `${label} branch decision`, size: 8, usage: MAP_READ | USAGE_COPY_DST })
  try {
    for (let from = 0; from < gs.phases;) {
      let to = from
      while (to < gs.phases - 1 && !branches.has(to)) to++
      if (!branches.has(to)) return await run(from, to)
      device.queue.writeBuffer(memory, decisionAt, new Uint32Array(1))
      await run(from, to, (enc) => {
        enc.copyBufferToBuffer(memory, decisionAt, decision, 0, 4)
        enc.copyBufferToBuffer(faultRecord, 0, decision, 4, 4)
      })
      await decision.mapAsync(MAP_READ)
      const [taken, fault] = new Uint32Array(decision.getMappedRange().slice(0))
      decision.unmap()
      if (fault) return
      from = taken ? branches.get(to)! : to + 1
    }
  } finally {
    decision.destroy()
  }
}
