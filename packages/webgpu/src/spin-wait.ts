// A thread that waits in a loop for a word of its block's shared memory (issue 26): cooperative groups' tiles wider
// than a warp sync through a word of the block's tile memory (%reserved_smem_offset_1): each warp sets its bit with
// an atomic; the warp whose bit completes the tile's mask does the tile's work (a cross-warp reduce) and clears
// the bits; the others spin on ld.acquire until their bit is clear. WGSL gives a workgroup's invocations no
// forward-progress guarantee, so the spin itself cannot be written; but the kernel around it runs predicated
// (emit-kernel.ts), every invocation walking it from barrier to barrier, so the wait is written as the mbarrier
// wait is (emit-mbarrier.ts): the workgroup meets at a barrier, then each waiting thread reads the word once and
// runs the loop's body once. Every write that comes before the wait in program order has then been made. Where every
// way out of the loop leads to the end of one enclosing block (clang's layout puts the spin before the tile's work),
// the thread does nothing until that end, so the wait moves there (emit-kernel.ts spinLoop). Where the
// wait is still not over, what it waits for comes later in the program, which on WebGPU never comes: the launch
// fails with a fault that says so, where a GPU or the emulator would run it.
//
// Only such a loop: its own blocks hold the load, register arithmetic and its branches (no other memory access, no
// barrier, no call, no inner loop), and the load reads shared memory (`.shared`, or a generic address made from a
// shared one by cvta and offsets). A spin on global memory (another block's flag) stays refused: WebGPU gives
// workgroups no forward progress either, and nothing orders one dispatch's workgroups.
import { definedRegisters, type Cfg, type Instruction, type IrFunction } from '@kernelpack/ptx'

/** Whether `ins` reads memory in a way a spin would (`ld.acquire`, `ld.relaxed`; an `ld.volatile` in a loop is
 *  written as a plain load, as before). */
export const waitLoad = (ins: Instruction): boolean => ins.op === 'ld' && (ins.sem === 'acquire' || ins.sem === 'relaxed')

const NOT_PURE = new Set(['ld', 'ldu', 'st', 'atom', 'red', 'cp', 'call', 'bar', 'barrier', 'membar', 'fence', 'mbarrier', 'ret', 'exit', 'trap', 'brx',
  'shfl', 'vote', 'match', 'redux', 'activemask', 'elect', 'wmma', 'mma', 'ldmatrix', 'stmatrix', 'movmatrix', 'prefetch', 'prefetchu', 'discard', 'tex', 'tld4', 'suld', 'sust', 'nanosleep'])

/** 64-bit registers that hold generic addresses of shared memory: every definition a cvta from .shared, or a
 *  move of, or an add/sub of an offset to, such a register (to a fixpoint; a pointer stepped in a loop is not
 *  found, which only leaves a spin on it refused). */
export function sharedPointers(fn: IrFunction): Set<number> {
  const defs = new Map<number, Instruction[]>()
  for (const ins of fn.instructions) for (const d of definedRegisters(ins)) defs.set(d, [...(defs.get(d) ?? []), ins])
  const out = new Set<number>()
  const reg = (k: number, ins: Instruction) => { const o = ins.operands[k]; return o?.kind === 'reg' ? o.id : undefined }
  const from = (ins: Instruction): boolean => {
    if (ins.guard) return false
    if (ins.op === 'cvta') return ins.space === 'shared' && !ins.flags.to
    if (ins.op === 'mov') { const r = reg(1, ins); return r !== undefined && out.has(r) }
    if (ins.op === 'add' || ins.op === 'sub') {
      const a = reg(1, ins), b = reg(2, ins)
      const inA = a !== undefined && out.has(a), inB = ins.op === 'add' && b !== undefined && out.has(b)
      return inA !== inB
    }
    return false
  }
  for (let changed = true; changed;) {
    changed = false
    for (const [r, ds] of defs) if (!out.has(r) && ds.every(from)) { out.add(r); changed = true }
  }
  return out
}

/** Why the wait at instruction `i` (a waitLoad in a loop) cannot be written as a wait on the block's shared
 *  memory, or undefined where it can. */
export function blockSpinProblem(fn: IrFunction, cfg: Cfg, i: number, shared: ReadonlySet<number>): string | undefined {
  const ins = fn.instructions[i]!
  const li = cfg.loopOf[cfg.blockOf[i]!]!
  const loop = cfg.loops[li]!
  const base = ins.operands[1]?.kind === 'addr' ? ins.operands[1].base : undefined
  const isShared = ins.space === 'shared' || ((ins.space === undefined || ins.space === 'generic') && base?.kind === 'reg' && shared.has(base.id))
  if (!isShared) return 'the memory is not known to be the block\'s shared memory'
  if (cfg.loops.some((l) => l.parent === li)) return 'the loop holds another loop'
  for (const b of loop.blocks) {
    const blk = cfg.blocks[b]!
    for (let k = blk.start; k < blk.end; k++) {
      if (k === i) continue
      const x = fn.instructions[k]!
      if (x.op === 'bra') continue
      if (NOT_PURE.has(x.op)) return `the loop also runs ${x.text.split(/\s+/)[0]}`
    }
  }
  return undefined
}
