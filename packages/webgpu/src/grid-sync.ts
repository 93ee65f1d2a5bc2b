// cg::this_grid().sync() in a cooperative launch (issue 26 item 6). On a GPU the grid waits at a counter in the
// grid workspace that %envreg1:%envreg2 point to: each block's first thread adds to it (atom.add.release.gpu)
// and spins until its top bit flips (ld.acquire.gpu in a loop), between two block barriers. WebGPU gives
// workgroups no forward progress, so the spin could wait forever; instead the kernel is split at each such sync
// into phases, one dispatch (or one per grid.x chunk) each, in order in one compute pass: a later dispatch
// starts after every workgroup of the earlier one finished, which is exactly the sync (every block of a
// cooperative launch is resident at once anyway, so no block has run ahead). What lives across a sync goes to a
// workspace in global memory at the end of a phase and comes back at the start of the next (emit-kernel.ts
// writeBody): the registers live after it, whether the thread is still active, its local memory, and the
// block's shared memory.
//
// This module finds the syncs: the regions at the top level of the structured kernel that read or write the
// grid workspace (through registers derived from %envreg1/%envreg2), and checks that they are only the sync:
// no other memory write, nothing they compute used after them, and the workspace used nowhere else. A sync
// nested in a loop or branch is refused by name (each phase is a top-level stretch of the kernel).
import {
  analyzeLiveness, definedRegisters, isGridWorkspaceRegister, specialUse, usedRegisters,
  type Cfg, type Instruction, type IrFunction, type IrOperand, type StructNode,
} from '@kernelpack/ptx'

export interface GridSyncPlan {
  /** Positions in the top-level node list of the sync regions, ascending. */
  at: number[]
  /** Per sync: the registers live after it, ascending. */
  live: number[][]
}

function instructionsOf(n: StructNode, out: number[] = []): number[] {
  if (n.kind === 'instr') out.push(n.index)
  else if (n.kind !== 'jump') for (const c of n.body) instructionsOf(c, out)
  return out
}

const writesMemory = (x: Instruction) => x.op === 'st' || x.op === 'atom' || x.op === 'red' || x.op === 'cp' || x.op === 'call' ||
  x.op === 'stmatrix' || (x.op === 'wmma' && x.mode === 'store') || x.op === 'mbarrier' || x.op === 'bar' || x.op === 'barrier'

/** Registers an instruction's address operands read. */
const addressRegs = (x: Instruction) => x.operands.flatMap((o) => (o.kind === 'addr' && o.base?.kind === 'reg' ? [o.base.id] : []))

/** Whether `x` reads the grid workspace: %envreg1/%envreg2, or a register derived from them (`tainted`). */
const readsWorkspace = (x: Instruction, tainted: ReadonlySet<number>) =>
  x.operands.some((o) => o.kind === 'special' && isGridWorkspaceRegister(o.name)) || usedRegisters(x).some((r) => tainted.has(r))

/** Registers derived from the grid workspace registers (forward, to a fixpoint: loops). */
function workspaceRegisters(fn: IrFunction): Set<number> {
  const tainted = new Set<number>()
  for (let changed = true; changed;) {
    changed = false
    for (const x of fn.instructions) {
      if (!readsWorkspace(x, tainted)) continue
      for (const d of definedRegisters(x)) if (!tainted.has(d)) { tainted.add(d); changed = true }
    }
  }
  return tainted
}

/**
 * Keeps a grid-sync kernel's syncs at its top level, where the phases can split it (planGridSyncs):
 * - grid.sync() first checks that the launch has a grid workspace and traps where it has none (`setp.ne
 *   workspace, 0` and a branch around a `trap`). On WebGPU the workspace is always there (%envreg1:%envreg2 read
 *   as its address), so such a branch is always taken: it becomes unconditional, and the trap unreachable
 *   (clang's layout, where the trap's block jumps to the kernel's end, nested the rest of the kernel otherwise);
 * - a branch to a `ret` (an early `return`) becomes that `ret` under the branch's guard, so the code after it
 *   is not nested in the branch's region.
 */
export function foldWorkspaceChecks(fn: IrFunction): IrFunction {
  if (!specialUse(fn).gridSync) return fn
  const tainted = workspaceRegisters(fn)
  const defs = new Map<number, number>()
  for (const x of fn.instructions) for (const d of definedRegisters(x)) defs.set(d, (defs.get(d) ?? 0) + 1)
  const isZero = (o: IrOperand | undefined) => o?.kind === 'imm' && o.imm.kind === 'int' && o.imm.value === 0n
  // a predicate whose every definition compares the workspace with 0 (each grid.sync() checks it afresh), all
  // with the same outcome: its value (null where they differ), and how many such definitions it has
  const ws = (o: IrOperand | undefined) => o?.kind === 'reg' && tainted.has(o.id)
  const checks = new Map<number, { value: boolean | null; count: number }>()
  for (const x of fn.instructions) {
    const [p, a, b] = x.operands
    if (x.op !== 'setp' || x.guard || x.operands.length !== 3 || p?.kind !== 'reg' || (x.cmp !== 'ne' && x.cmp !== 'eq')) continue
    if (!((ws(a) && isZero(b)) || (ws(b) && isZero(a)))) continue
    const c = checks.get(p.id)
    checks.set(p.id, { value: c && c.value !== (x.cmp === 'ne') ? null : x.cmp === 'ne', count: (c?.count ?? 0) + 1 })
  }
  const known = new Map([...checks].flatMap(([p, c]) => (c.value !== null && c.count === defs.get(p) ? [[p, c.value] as [number, boolean]] : [])))
  // a branch to a `ret` (an early return: `if (i >= n) return;`) is that `ret`, under the branch's guard: the
  // rest of the kernel, grid syncs included, then stays at its top level instead of in the branch's region
  const returnAt = (o: IrOperand | undefined) => {
    const at = o?.kind === 'label' ? fn.labels.get(o.name) : undefined
    const target = at === undefined ? undefined : fn.instructions[at]
    return target && (target.op === 'ret' || target.op === 'exit') && !target.guard ? target : undefined
  }
  const instructions = fn.instructions.map((x) => {
    if (x.op !== 'bra') return x
    const ret = returnAt(x.operands[0])
    if (ret) return { ...x, op: ret.op, qualifiers: [], operands: [], text: `${x.text} (a return)` } as Instruction
    if (!x.guard || !known.has(x.guard.reg) || known.get(x.guard.reg) === x.guard.negate) return x
    const { guard: _, ...always } = x
    return { ...always, text: `${x.text} (taken: the grid workspace is there)` }
  })
  return { ...fn, instructions }
}

/**
 * The kernel's grid syncs, or the reason the kernel's use of the grid workspace cannot be split into phases.
 * `body`: the top-level nodes of the structured kernel.
 */
export function planGridSyncs(fn: IrFunction, cfg: Cfg, body: readonly StructNode[]): GridSyncPlan | { refuse: string; at?: Instruction } {
  const ins = fn.instructions
  const tainted = workspaceRegisters(fn)
  const touchesWorkspace = (x: Instruction) => addressRegs(x).some((r) => tainted.has(r))
  const nested = 'a grid-wide sync (cg::this_grid().sync()) inside a loop or a branch: WebGPU runs a cooperative launch as one dispatch per stretch of the kernel between syncs, so only syncs at its top level are translated'
  const at: number[] = []
  const inSync = new Set<number>()
  for (const [j, n] of body.entries()) {
    if (n.kind === 'instr' || n.kind === 'jump') continue
    const own = instructionsOf(n)
    const access = own.find((i) => touchesWorkspace(ins[i]!))
    if (access === undefined) continue
    // the sync's own region is the `if` around its first thread's counter, between the block barriers
    const barrier = own.find((i) => ins[i]!.op === 'bar' || ins[i]!.op === 'barrier')
    if (n.kind !== 'if' || barrier !== undefined) return { refuse: nested, at: ins[access] }
    at.push(j)
    for (const i of own) inSync.add(i)
  }
  for (const [i, x] of ins.entries()) {
    if (inSync.has(i) || !readsWorkspace(x, tainted)) continue
    // outside a sync, the workspace may only be carried to one (address arithmetic)
    if (touchesWorkspace(x)) return { refuse: nested, at: x }
    // (grid.sync() first checks that there is a workspace, trapping where there is none: %envreg1:%envreg2
    // read as the workspace's address, so the check passes as in a cooperative launch on a GPU)
    if (writesMemory(x)) return { refuse: 'the grid workspace of a cooperative launch (%envreg1/%envreg2) used for something other than cg::this_grid().sync()', at: x }
  }
  if (!at.length) return { refuse: 'the grid workspace of a cooperative launch (%envreg1/%envreg2) read, but no grid-wide sync found at the kernel\'s top level' }
  const live = analyzeLiveness(fn, cfg)
  const plans: number[][] = []
  for (const j of at) {
    const own = instructionsOf(body[j]!)
    for (const i of own) {
      const x = ins[i]!
      // the sync's own work: the counter (atomics and loads of the workspace), its arithmetic and its loop
      if (writesMemory(x) && !touchesWorkspace(x)) return { refuse: `a grid-wide sync whose region also writes memory (${x.text.split(/\s+/)[0]}): only cg::this_grid().sync()'s own counter is expected there`, at: x }
      if (x.op === 'ld' && !touchesWorkspace(x)) return { refuse: 'a grid-wide sync whose region also reads memory other than the grid workspace', at: x }
    }
    // what runs after it: the first instruction of the next top-level node
    const next = body.slice(j + 1).map((n) => instructionsOf(n)).find((l) => l.length)?.[0]
    const after = next === undefined ? [] : live.liveIn(next)
    const defined = new Set(own.flatMap((i) => definedRegisters(ins[i]!)))
    const escaping = after.find((r) => defined.has(r))
    if (escaping !== undefined) return { refuse: `a grid-wide sync whose region computes a register used after it (${fn.registers[escaping]?.name ?? `#${escaping}`})`, at: ins[own[0]!] }
    plans.push(after)
  }
  return { at, live: plans }
}
