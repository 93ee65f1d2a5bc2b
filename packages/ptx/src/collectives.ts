// THE registry of instructions that need other threads (PTX ISA, "Parallel Synchronization and
// Communication Instructions"): block barriers (bar/barrier .sync and .red.popc/.and/.or) and warp
// collectives (bar.warp.sync, shfl.sync, vote, match.sync, redux.sync, activemask, elect.sync, and the
// tensor-core instructions whose lanes exchange fragments: wmma.mma, mma.sync, ldmatrix, stmatrix, movmatrix). The
// emulator's code generator (suspension points), its scheduler (how to resolve them), the inliner, the
// barrier-region analysis and the coming lane loops all ask this file, never their own list.
import type { Instruction } from './ir.js'

export type Collective =
  /** `bar.sync` / `barrier.sync`, with an optional `.red` reduction of a predicate over the block. */
  | { kind: 'bar'; red?: 'popc' | 'and' | 'or' }
  | { kind: 'shfl'; mode: 'up' | 'down' | 'bfly' | 'idx' }
  | { kind: 'vote'; mode: 'all' | 'any' | 'uni' | 'ballot' }
  | { kind: 'match'; mode: 'any' | 'all' }
  | { kind: 'activemask' }
  /** `bar.warp.sync`: the lanes of a warp meet. */
  | { kind: 'warpsync' }
  | { kind: 'elect' }
  | { kind: 'redux'; mode: 'add' | 'min' | 'max' | 'and' | 'or' | 'xor'; signed: boolean }
  /** Tensor cores, warp-wide: each lane holds a fragment of the matrices (PTX ISA, "Warp Level Matrix Multiply-
   *  Accumulate Instructions"). `mma`: wmma.mma / mma.sync; `ldmatrix`/`stmatrix`: the rows' addresses come
   *  from other lanes; `movmatrix`: a transpose across lanes. (wmma.load/store are not collectives: each lane
   *  moves its own fragment.) */
  | { kind: 'mma' }
  | { kind: 'ldmatrix' }
  | { kind: 'stmatrix' }
  | { kind: 'movmatrix' }

/** The collective `ins` performs, or undefined. `bar.arrive` (no wait) is none; cluster barriers are
 *  reported as `bar` with `cluster` set by the caller's check of `ins.flags.cluster`. */
export function collectiveOf(ins: Instruction): Collective | undefined {
  switch (ins.op) {
    case 'bar': case 'barrier':
      if (ins.flags.warp) return { kind: 'warpsync' }
      if (ins.mode === 'arrive') return undefined
      if (ins.mode === 'red') return { kind: 'bar', red: ins.reduction as 'popc' | 'and' | 'or' }
      return { kind: 'bar' }
    case 'shfl': return { kind: 'shfl', mode: ins.mode as 'up' | 'down' | 'bfly' | 'idx' }
    case 'vote': return { kind: 'vote', mode: ins.mode as 'all' | 'any' | 'uni' | 'ballot' }
    case 'match': return { kind: 'match', mode: ins.mode === 'all' ? 'all' : 'any' }
    case 'activemask': return { kind: 'activemask' }
    case 'elect': return { kind: 'elect' }
    case 'redux': return { kind: 'redux', mode: ins.reduction as 'add' | 'min' | 'max' | 'and' | 'or' | 'xor', signed: ins.type?.startsWith('s') ?? false }
    case 'wmma': return ins.mode === 'mma' ? { kind: 'mma' } : undefined
    case 'mma': return { kind: 'mma' }
    case 'ldmatrix': return { kind: 'ldmatrix' }
    case 'stmatrix': return { kind: 'stmatrix' }
    case 'movmatrix': return { kind: 'movmatrix' }
    default: return undefined
  }
}

/** Who must arrive before a collective resolves: the whole block (barriers) or the warp's lanes. */
export function collectiveScope(c: Collective): 'block' | 'warp' {
  return c.kind === 'bar' ? 'block' : 'warp'
}

/** How a thread may wait for others at `ins` without a collective: `mbarrier` for mbarrier.test_wait/try_wait
 *  (the phase completes when the other threads arrive; PTX ISA, "mbarrier"), `memory` for a load or atomic
 *  whose value other threads may change under it (`ld.volatile`/`.relaxed`/`.acquire`, atom.cas/exch; PTX
 *  ISA, "Memory Consistency Model"), which is a spin-wait when it sits in a loop (cg::this_grid().sync(),
 *  flags, locks). A scheduler that runs threads one after another lets the waiting thread step aside there
 *  (the emulator's yields), so that the threads it waits for can run. */
export function waitOf(ins: Instruction): 'mbarrier' | 'memory' | undefined {
  switch (ins.op) {
    case 'mbarrier': return ins.mode === 'test_wait' || ins.mode === 'try_wait' ? 'mbarrier' : undefined
    case 'ld': return ins.sem === 'volatile' || ins.sem === 'relaxed' || ins.sem === 'acquire' ? 'memory' : undefined
    case 'atom': return ins.atomOp === 'cas' || ins.atomOp === 'exch' ? 'memory' : undefined
    default: return undefined
  }
}
