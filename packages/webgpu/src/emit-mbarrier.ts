// mbarrier (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"): the split
// arrive/wait barrier of cuda::barrier and cuda::pipeline, an object of 8 bytes in shared memory.
//
// The object is laid out as the emulator keeps it (packages/emulator/src/mbarrier.ts): word i the arrivals
// still pending in the current phase, word i + 1 the arrivals expected per phase with the phase's parity in
// bit 31; an arrive's state is (pending after it, parity) as a 64-bit value. Arrivals are workgroup atomics,
// so threads arrive concurrently; the arrival that leaves none pending starts the next phase.
//
// A wait (test_wait / try_wait, in the loop libcu++ spins in) is where WGSL differs from a GPU: a workgroup's
// invocations give one another no forward-progress guarantee, so a wait cannot spin on arrivals made by other
// invocations. It is written as a barrier instead (the KernelWriter treats it as one, so the code around it
// is predicated and every invocation reaches it): the workgroup meets, then each waiting thread reads the
// phase. Every arrival that comes before the wait in program order has then been made, which is the case in
// the shapes cuda::barrier's arrive_and_wait and cuda::pipeline's stages take; a phase still pending there
// waits for an arrival later in the program, which on WebGPU would never come. A kernel whose waits run in code of
// their own (roles) is written in rounds instead (rounds.ts); in one the rounds cannot hold (a tensor-core
// operation) the launch fails with a fault that says so (FAULT_KIND.mbarrier), where a GPU, or the emulator,
// would run it. Transaction counts (TMA) are
// refused. A launch is its own cluster of one block here (%cluster_nctarank is 1), so `.cluster` scope and
// `.shared::cluster` name the block's own barrier.
import type { Instruction, IrOperand as Operand } from '@kernelpack/ptx'
import { address } from './emit-memory.js'
import type { KernelWriter } from './emit-kernel.js'
import { FAULT_KIND } from './layout.js'

const ARRIVE = `// an mbarrier arrival (emit-mbarrier.ts): word i pending arrivals, word i + 1 expected ones | parity << 31;
// returns the state (pending after this arrival, parity of its phase), as the emulator's mbarrier.ts
fn kp_mbar_arrive(i: u32, count: u32, drop: bool) -> vec2<u32> {
  if (drop) { atomicSub(&kp_smem[i + 1u], min(count, atomicLoad(&kp_smem[i + 1u]) & 0x7fffffffu)); }
  let word = atomicLoad(&kp_smem[i + 1u]);
  let pending = atomicSub(&kp_smem[i], count) - count;
  if (bitcast<i32>(pending) <= 0) {
    atomicStore(&kp_smem[i], word & 0x7fffffffu);
    atomicStore(&kp_smem[i + 1u], word ^ 0x80000000u);
  }
  return vec2<u32>(pending, word >> 31u);
}`

/** Whether `ins` works on an mbarrier object (the memory plan makes shared memory atomic for it). */
export function usesMbarrier(ins: Instruction): boolean {
  return ins.op === 'mbarrier' || (ins.op === 'cp' && (ins.hints ?? []).includes('mbarrier'))
}

/** The word index in kp_smem of the mbarrier object at `o`. */
function objectWord(w: KernelWriter, ins: Instruction, o: Operand): string {
  const a = address(w, o, ins.space === 'shared' ? 'shared' : 'generic')
  if (a.space !== 'shared') return w.refuse('an mbarrier named by a generic address: WebGPU needs to know it is in shared memory (use the .shared form, or a __shared__ variable)')
  return w.tmp(`(${a.at}) >> 2u`)
}

function refuseTransactions(w: KernelWriter, ins: Instruction): void {
  if (ins.flags.expect_tx || ins.mode === 'complete_tx') w.refuse('mbarrier transaction counts (expect_tx/complete_tx): they belong to the bulk asynchronous copies (TMA), which WebGPU has not')
}

/** mbarrier.init / inval / arrive / arrive_drop / pending_count (per thread, under the caller's guard). */
export function emitMbarrier(w: KernelWriter, ins: Instruction): void {
  refuseTransactions(w, ins)
  const A = ins.operands
  switch (ins.mode) {
    case 'init': {
      const i = objectWord(w, ins, A[0]!)
      const c = w.tmp(`${w.u32(A[1]!)} & 0x7fffffffu`)
      w.line(`atomicStore(&kp_smem[${i}], ${c});`)
      w.line(`atomicStore(&kp_smem[${i} + 1u], ${c});`)
      return
    }
    case 'inval': {
      const i = objectWord(w, ins, A[0]!)
      w.line(`atomicStore(&kp_smem[${i}], 0u);`)
      w.line(`atomicStore(&kp_smem[${i} + 1u], 0u);`)
      return
    }
    case 'arrive': case 'arrive_drop': {
      const i = objectWord(w, ins, A[1]!)
      w.helpers.set('kp_mbar_arrive', ARRIVE)
      return w.setU64(A[0], `kp_mbar_arrive(${i}, ${A[2] ? w.u32(A[2]) : '1u'}, ${ins.mode === 'arrive_drop'})`)
    }
    case 'pending_count':
      return w.setU32(A[0], `${w.u64(A[1]!)}.x`)
    default:
      return w.refuse(`mbarrier.${ins.mode ?? ins.qualifiers.join('.')}`)
  }
}

/** cp.async.mbarrier.arrive{.noinc} [mbar]: the copies before it were made when they were issued, so it is an
 *  arrival now with .noinc, and none without (the pending count is raised first: no net change). */
export function emitCpAsyncArrive(w: KernelWriter, ins: Instruction): void {
  const i = objectWord(w, ins, ins.operands[0]!)
  if (!(ins.hints ?? []).includes('noinc')) {
    w.line(`// (without .noinc: the pending count rises, then falls, at mbarrier ${i})`)
    return
  }
  w.helpers.set('kp_mbar_arrive', ARRIVE)
  w.line(`_ = kp_mbar_arrive(${i}, 1u, false);`)
}

/** Whether the phase the wait `ins` names has completed (a `let` of the current scope). */
export function mbarrierPhaseDone(w: KernelWriter, ins: Instruction): string {
  refuseTransactions(w, ins)
  const A = ins.operands
  const i = objectWord(w, ins, A[1]!)
  const parity = ins.flags.parity ? `(${w.u32(A[2]!)} & 1u)` : `(${w.u64(A[2]!)}.y & 1u)`
  return w.tmp(`(atomicLoad(&kp_smem[${i} + 1u]) >> 31u) != ${parity}`)
}

/** mbarrier.test_wait / try_wait{.parity} in predicated code: every invocation meets at a barrier, then each
 *  active thread reads whether its phase completed (see the top of this file). */
export function emitMbarrierWait(w: KernelWriter, ins: Instruction, active: () => string): void {
  refuseTransactions(w, ins)
  const A = ins.operands
  // the arrivals before it made, and (as a GPU's acquire at the completed phase) the block's memory
  // accesses before them visible
  if (w.mem.globalStores) w.line('storageBarrier();')
  w.line('workgroupBarrier();')
  w.perThread(() => {
    w.open(`if (${active()}) {`)
    const done = mbarrierPhaseDone(w, ins)
    w.features.add('kp_trap')
    w.line(`if (!${done}) { kp_fault_at(${ins.line}u, 0u, ${FAULT_KIND.mbarrier}u); }`)
    // (after such a fault the wait ends, so that the launch ends and reports it)
    w.setPred(A[0], 'true')
    w.close()
  })
}
