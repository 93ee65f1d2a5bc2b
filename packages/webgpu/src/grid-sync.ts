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
// This module finds the syncs: the regions at the top level of the structured kernel, or at the top level of the
// body of a top-level loop, that read or write the grid workspace (through registers derived from
// %envreg1/%envreg2), and checks that they are only the sync: no other memory write, nothing they compute used
// after them, and the workspace used nowhere else. Such a loop's body becomes phases of its own, run again
// while its back edge is taken: the launch reads that decision between dispatches (backend.ts). A sync nested
// deeper, or in a loop left or restarted other than by the branch that ends its body, is refused by name.
import {
  analyzeLiveness, definedRegisters, isGridWorkspaceRegister, specialUse, usedRegisters,
  type BranchTarget, type Cfg, type Instruction, type IrFunction, type IrOperand, type StructNode, type StructRegion,
} from '@kernelpack/ptx'

export interface GridSyncPhase {
  /** The nodes the phase runs: a stretch of the kernel between grid syncs, at its top level or inside a loop or
   *  an `if` around syncs. */
  nodes: readonly StructNode[]
  /** The phase ends with a branch that decides where the launch goes on (the instruction index; the phase does
   *  not run it): taken, to phase `to` (a loop's first phase again, or the phase after an `if` it skips),
   *  else to the next phase. */
  branch?: { at: number; to: number }
}

export interface GridSyncPlan {
  /** The stretches between grid syncs, in program order; a launch runs them one after the other, except where
   *  a phase's branch is taken. */
  phases: GridSyncPhase[]
  /** The registers live where a phase starts or decides (any of them), ascending: kept in the workspace. */
  live: number[]
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
 * The kernel's phases (its stretches between grid syncs), or the reason the kernel's use of the grid workspace
 * cannot be split into phases. `body`: the top-level nodes of the structured kernel; `branches`: where its
 * branches go (structureFunction). A sync may be at the kernel's top level or, nested to any depth, in a loop
 * whose only way back is the branch that ends its body and whose only way out is falling past it (the shape
 * nvcc and clang give a `for` or `while` loop), or in an `if` left only by the branch that skips it (a loop's
 * "run at all" test): each such loop or `if` ends or starts a phase with that branch, which the launch reads
 * between dispatches (every block of a cooperative launch takes the same way at a grid sync).
 */
export function planGridSyncs(fn: IrFunction, cfg: Cfg, body: readonly StructNode[], branches: ReadonlyMap<number, BranchTarget>): GridSyncPlan | { refuse: string; at?: Instruction } {
  const ins = fn.instructions
  const tainted = workspaceRegisters(fn)
  const touchesWorkspace = (x: Instruction) => addressRegs(x).some((r) => tainted.has(r))
  const nested = 'a grid-wide sync (cg::this_grid().sync()) in a branch or loop that is not a loop left only past the branch that ends its body, or an `if` left only by the branch that skips it: WebGPU runs a cooperative launch as dispatches of the stretches between syncs, and decides only such branches between them'
  const inSync = new Set<number>()
  const uses = (n: StructNode) => instructionsOf(n).find((i) => touchesWorkspace(ins[i]!))
  /** A sync's own region: the `if` around its first thread's counter, between the block barriers. */
  const isSync = (n: StructNode) => n.kind === 'if' && uses(n) !== undefined && !instructionsOf(n).some((i) => ins[i]!.op === 'bar' || ins[i]!.op === 'barrier')
  const regionsIn = (n: StructNode, out = new Set<number>()): Set<number> => {
    if (n.kind !== 'instr' && n.kind !== 'jump') { out.add(n.id); for (const c of n.body) regionsIn(c, out) }
    return out
  }
  /** Whether every branch and jump inside region `r` stays inside it, but the instruction `except`. */
  const closed = (r: StructRegion, except: number): boolean => {
    const inner = regionsIn(r)
    inner.delete(r.id)
    const escapes = (t: BranchTarget | undefined) => t !== undefined && !inner.has(t.node)
    if (instructionsOf(r).some((i) => i !== except && ins[i]!.op === 'bra' && escapes(branches.get(i)))) return false
    const jumps = (m: StructNode): boolean => (m.kind === 'jump' ? escapes(m.target) : m.kind === 'instr' ? false : m.body.some(jumps))
    return !r.body.some(jumps)
  }
  const phases: GridSyncPhase[] = []
  const starts: number[] = []
  let cur: StructNode[] = []
  const close = (branch?: GridSyncPhase['branch']) => {
    const first = cur.map((n) => instructionsOf(n)).find((l) => l.length)?.[0]
    if (first !== undefined) starts.push(first)
    if (branch) starts.push(branch.at)
    phases.push(branch ? { nodes: cur, branch } : { nodes: cur })
    cur = []
  }
  const flatten = (nodes: readonly StructNode[]): { refuse: string; at?: Instruction } | undefined => {
    for (const n of nodes) {
      const access = uses(n)
      if (access === undefined) { cur.push(n); continue }
      if (isSync(n)) {
        for (const i of instructionsOf(n)) inSync.add(i)
        close()
        continue
      }
      if (n.kind === 'loop') {
        // the back edge last; no other way back or out
        const last = n.body[n.body.length - 1]
        const back = last?.kind === 'instr' ? last.index : -1
        const bt = branches.get(back)
        if (ins[back]?.op !== 'bra' || !ins[back]!.guard || bt?.kind !== 'continue' || bt.node !== n.id || !closed(n, back)) return { refuse: nested, at: ins[access] }
        close()
        const first = phases.length
        const r = flatten(n.body.slice(0, -1))
        if (r) return r
        close({ at: back, to: first })
        continue
      }
      if (n.kind === 'if' && n.branch !== undefined && closed(n, n.branch)) {
        // the skip test decides at the end of the phase before; the skipped part's phases, then the phase after
        close({ at: n.branch, to: -1 })
        const skipper = phases[phases.length - 1]!
        const r = flatten(n.body.slice(1))
        if (r) return r
        close()
        skipper.branch!.to = phases.length
        continue
      }
      return { refuse: nested, at: ins[access] }
    }
    return undefined
  }
  const refused = flatten(body)
  if (refused) return refused
  close()
  for (const [i, x] of ins.entries()) {
    if (inSync.has(i) || !readsWorkspace(x, tainted)) continue
    // outside a sync, the workspace may only be carried to one (address arithmetic)
    if (touchesWorkspace(x)) return { refuse: nested, at: x }
    // (grid.sync() first checks that there is a workspace, trapping where there is none: %envreg1:%envreg2
    // read as the workspace's address, so the check passes as in a cooperative launch on a GPU)
    if (writesMemory(x)) return { refuse: 'the grid workspace of a cooperative launch (%envreg1/%envreg2) used for something other than cg::this_grid().sync()', at: x }
  }
  if (!inSync.size) return { refuse: 'the grid workspace of a cooperative launch (%envreg1/%envreg2) read, but no grid-wide sync found at the kernel\'s top level' }
  // a sync's own work: the counter (atomics and loads of the workspace), its arithmetic and its loop; nothing
  // it computes is used after it
  const syncs = [...inSync].sort((a, b) => a - b)
  for (const i of syncs) {
    const x = ins[i]!
    if (writesMemory(x) && !touchesWorkspace(x)) return { refuse: `a grid-wide sync whose region also writes memory (${x.text.split(/\s+/)[0]}): only cg::this_grid().sync()'s own counter is expected there`, at: x }
    if (x.op === 'ld' && !touchesWorkspace(x)) return { refuse: 'a grid-wide sync whose region also reads memory other than the grid workspace', at: x }
  }
  const live = analyzeLiveness(fn, cfg)
  const defined = new Set(syncs.flatMap((i) => definedRegisters(ins[i]!)))
  const kept = new Set<number>()
  for (const i of starts) {
    const after = live.liveIn(i)
    const escaping = after.find((r) => defined.has(r))
    if (escaping !== undefined) return { refuse: `a grid-wide sync whose region computes a register used after it (${fn.registers[escaping]?.name ?? `#${escaping}`})`, at: ins[syncs[0]!] }
    for (const r of after) kept.add(r)
  }
  return { phases, live: [...kept].sort((a, b) => a - b) }
}
