// A kernel's threads as resumable dispatchers run in rounds (issue 26): for threads that wait for one another in
// code of their own, which WebGPU's barriers cannot express.
//
// Elsewhere a wait is a workgroup barrier where every invocation of the workgroup reaches it (the code around it
// predicated: emit-kernel.ts, emit-mbarrier.ts): right when every arrival a wait needs comes before it in program
// order. cuda::pipeline's producer and consumer threads break that: the producers wait, in a loop of their own,
// for the consumers to release a stage, and the consumers, in theirs, for the producers' copies. WGSL gives a
// workgroup's invocations no forward progress of their own either, so no invocation may spin for another.
//
// Here each CUDA thread is the dispatcher over its basic blocks (emit-kernel.ts writeDispatcher) with its program
// counter kept across rounds. A round: every thread runs until it waits (a block barrier, an mbarrier wait, a
// wait on shared memory, a device-scope fence) or ends; the workgroup meets (storageBarrier, workgroupBarrier);
// invocation 0 releases the block barrier when every thread still running waits at one (the emulator's rule:
// packages/emulator/src/scheduler.ts) and decides whether to go on; the workgroup meets again and each waiting
// thread reads whether its wait is over, from memory every thread's writes of the round have reached; the
// decision is read with workgroupUniformLoad, so the loop of rounds is uniform control flow. A wait always ends
// a round, even one whose condition already holds: what other threads wrote before the release is then
// visible to it. A thread moved in a round when it reached a wait or ended (going round a spin on shared memory
// again is no progress); after STALL_LIMIT rounds in a row in which no thread moved and no barrier was released
// (the emulator's count) the block is deadlocked: the waiting threads record the fault (FAULT_KIND.deadlock) at
// their waits, as the emulator reports one.
//
// Warp collectives (shfl, vote, match, redux, activemask, elect) meet the lanes of the warp that reach them in the
// same round: each lane writes its value and the case it resumes in to its slot of a workgroup exchange (kp_xpc,
// kp_xv), and between rounds reads its warp's slots (a lane that did not come gives what the predicated form
// gives for an inactive lane: emit-collective.ts); a __syncwarp waits until every lane of its mask waits at one or
// has ended. Tensor-core operations stay with the predicated form.
//
// Written in rounds: a kernel whose mbarrier waits run under a branch that tells its threads apart (roles:
// emit-kernel.ts findRoleWaits), one with more exchanging warp collectives in loops than SwiftShader compiles in
// reasonable time predicated (ROUNDS_EXCHANGES_IN_LOOPS), one whose control flow does not nest around its
// barriers, and one with barriers and shared software binary64 sites (f64-services.ts). The registers are
// elements of arrays, as in f64-services.ts (compile time: 107 s with variables, 15 s with arrays for a kernel of
// 290 cases).
import { collectiveOf, waitOf, type Instruction } from '@kernelpack/ptx'
import type { KernelWriter } from './emit-kernel.js'
import { dstOf, maskOf, reduxCombine, shflSource } from './emit-collective.js'
import { mbarrierPhaseDone } from './emit-mbarrier.js'
import { isDeviceFence } from './emit-ops.js'
import { FAULT_KIND } from './layout.js'

/** Words of the workgroup's schedule (kp_sched): threads ended, threads that moved in the round, threads waiting
 *  at the block barrier, the barrier's generation, the count of bar.red predicates that were true, at the last
 *  release that count and how many waited, and the rounds in a row in which nothing moved. */
const S = { exited: 0, moved: 1, waiting: 2, gen: 3, acc: 4, resCount: 5, resWaiting: 6, stalls: 7 } as const
const SCHED_WORDS = 8
/** Rounds in a row without progress after which the block is deadlocked: the emulator's STALL_LIMIT
 *  (packages/emulator/src/scheduler.ts), so that a spin with a retry counter may still leave its loop. */
const STALL_LIMIT = 1000

/** Workgroup bytes the schedule takes (kp_sched and kp_stop), besides the lanes' exchange (kp_xpc, kp_xv: 12
 *  bytes per thread, workgroupBytesPerThread). */
export const ROUNDS_WORKGROUP_BYTES = SCHED_WORDS * 4 + 4
/** Workgroup bytes per thread of the lanes' exchange, where the kernel has one. */
export const ROUNDS_EXCHANGE_BYTES = 12

/** A warp collective in rounds: the lanes of the warp that reach it in the same round meet (warpsync: every lane
 *  of its mask, whenever they come). */
type WarpKind = 'activemask' | 'match' | 'shfl' | 'vote' | 'redux' | 'elect' | 'warpsync'
type WaitKind = 'bar' | 'mbarrier' | 'spin' | 'fence' | WarpKind
const WARP_KINDS: ReadonlySet<string> = new Set(['activemask', 'match', 'shfl', 'vote', 'redux', 'elect', 'warpsync'])
/** A lane's exchange slot while it waits at a __syncwarp (with its resume case), or once it has ended. */
const WARPSYNC_BIT = 0x8000_0000
const ENDED = 0xffff_ffff

/** What kind of wait `ins` is in rounds, or why it cannot be one. */
function waitKind(w: KernelWriter, ins: Instruction): WaitKind | { problem: string } {
  const at = `${ins.text.split(/\s+/)[0]} at PTX line ${ins.line}`
  if (waitOf(ins) === 'mbarrier') return 'mbarrier'
  if (isDeviceFence(ins)) return 'fence'
  const c = collectiveOf(ins)
  if (c?.kind === 'bar') {
    if (ins.flags.cluster) return { problem: `a cluster barrier (${at})` }
    if (ins.operands.length > (c.red ? 3 : 1)) return { problem: `a named barrier with a thread count (${at})` }
    return 'bar'
  }
  if (c && WARP_KINDS.has(c.kind)) return c.kind as WarpKind
  if (c) return { problem: `a warp collective (${at}): tensor-core operations need the warp's lanes together` }
  if (ins.op === 'ld' && w.isSync(ins)) return 'spin'
  return { problem: `a wait the rounds do not know (${at})` }
}

/** Why the kernel cannot run in rounds (a grid sync, a warp collective…), or undefined when it can. */
export function roundsProblem(w: KernelWriter, gridSync: boolean): string | undefined {
  if (gridSync) return 'a grid sync'
  for (const ins of w.fn.instructions) {
    if (!w.isSync(ins)) continue
    const k = waitKind(w, ins)
    if (typeof k !== 'string') return k.problem
  }
  return undefined
}

/**
 * The dispatcher's `switch` (its lines as written, the first `switch <pc> {`) as a chain of one-pass loops, one per
 * case: `loop { if (<pc> != N || <yielded>) { break; } <case> break; }`. SwiftShader runs every case of a `switch`
 * whose selector differs between invocations under a lane mask, each pass: the 37 cases of matmul_barrier_chunk16
 * in rounds took 32.2 s against 11.6 s as a chain (1.18 s predicated; 256³, 2026-12-01), and the compile of a
 * 167-case kernel 14.5 s against 10.7 s. A case that sets the next one runs it in the same pass when it comes
 * later in the chain (the blocks run in order all the same); a `break` in a case leaves its loop, as it left the
 * switch; once the thread yields the rest of the chain is skipped.
 */
function chainCases(lines: string[], yielded: string): string[] {
  const head = /^(\s*)switch (.+) \{$/.exec(lines[0] ?? '')
  if (!head) throw new Error('internal: the dispatcher does not start with its switch')
  const [, ind, sel] = head
  const out = [`${ind}{`]
  let skip = false
  for (const l of lines.slice(1)) {
    const c = new RegExp(`^${ind}  case (\\d+)u: \\{$`).exec(l)
    if (c) { out.push(`${ind}  loop { if (${sel} != ${c[1]}u || ${yielded}) { break; }`); continue }
    // (the default case: a program counter past the cases, which the dispatcher never sets)
    if (l === `${ind}  default: {`) { skip = true; continue }
    if (l === `${ind}  }`) {
      if (skip) skip = false
      else out.push(`${ind}    break;`, l)
      continue
    }
    if (!skip) out.push(l)
  }
  return out
}

/** The rounds of one kernel: the waits' cases, and the loop of rounds around the dispatcher. */
export class Rounds {
  /** What each waiting thread reads between rounds, by the case it waits in. */
  private readonly checks: Array<{ at: number; write: () => void }> = []

  constructor(private readonly w: KernelWriter, private readonly pc: string) {
    w.features.add('kp_trap')
    w.moduleDecls.set('kp_sched', `// the rounds' schedule (rounds.ts)\nvar<workgroup> kp_sched: array<atomic<u32>, ${SCHED_WORDS}>;\nvar<workgroup> kp_stop: u32;`)
  }

  private get ready(): string { return this.w.declare('kp_ready', 'bool') }
  private get yielded(): string { return this.w.declare('kp_yield', 'bool') }
  private get stalled(): string { return this.w.declare('kp_stalled', 'bool') }
  private get waitLine(): string { return this.w.declare('kp_wline', 'u32') }
  private get seen(): string { return this.w.declare('kp_seen', 'u32') }

  /** Cases `b` (the guarded wait `ins`: the thread's arrival, then the end of its run) and `resume` (where it goes
   *  on to case `next` once its wait is over). */
  waitCases(ins: Instruction, b: number, next: number, resume: number, guard: string): void {
    const w = this.w, pc = this.pc
    w.open(`case ${b}u: {`)
    w.line(`if (!(${guard})) { ${pc} = ${next}u; break; }`)
    this.arrive(ins, resume)
    w.close()
    w.open(`case ${resume}u: {`)
    this.resume(ins, resume)
    w.line(`${pc} = ${next}u;`)
    w.close()
  }

  /** The thread's arrival at the wait `ins` in the current case, which it ends: the thread's run ends, and it goes
   *  on in case `resume`. */
  arrive(ins: Instruction, resume: number): void {
    const w = this.w, pc = this.pc
    const kind = waitKind(w, ins)
    if (typeof kind !== 'string') return w.refuse(`internal: ${kind.problem} in rounds`)
    const A = ins.operands
    const bar = collectiveOf(ins)
    const red = bar?.kind === 'bar' ? bar.red : undefined
    w.line(`// ${ins.text.replace(/\s+/g, ' ').replace(/\*\//g, '* /')}`)
    if (kind === 'bar') {
      w.line(`${this.seen} = atomicLoad(&kp_sched[${S.gen}]);`)
      if (red) w.line(`atomicAdd(&kp_sched[${S.acc}], select(0u, 1u, ${w.pred(A[A.length - 1]!)}));`)
      w.line(`atomicAdd(&kp_sched[${S.waiting}], 1u);`)
    }
    if (WARP_KINDS.has(kind)) {
      // a warp collective: the lanes that reach it in the same round meet. Each writes its value and the case it
      // resumes in (which names the instruction) to its slot; between rounds each reads its warp's slots
      w.moduleDecls.set('kp_xpc', '// the lanes\' exchange of warp collectives in rounds (rounds.ts)\nvar<workgroup> kp_xpc: array<u32, kp_nt>;\nvar<workgroup> kp_xv: array<vec2<u32>, kp_nt>;')
      const value = kind === 'match' ? (ins.type === 'b64' ? w.u64(A[1]!) : `vec2<u32>(${w.u32(A[1]!)}, 0u)`)
        : kind === 'shfl' || kind === 'redux' ? `vec2<u32>(${w.u32(A[1]!)}, 0u)`
          : kind === 'vote' ? `vec2<u32>(select(0u, 1u, ${w.pred(A[1]!)}), 0u)` : undefined
      if (value) w.line(`kp_xv[kp_t] = ${value};`)
      w.line(`kp_xpc[kp_t] = ${kind === 'warpsync' ? `${(resume | WARPSYNC_BIT) >>> 0}u` : `${resume}u`};`)
    }
    w.line(`${this.waitLine} = ${ins.line}u;`)
    // (a thread that reached a wait moved; one that goes round a spin again did not: see resume)
    if (kind !== 'spin') w.line(`${this.stalled} = false;`)
    w.line(`${pc} = ${resume}u;`)
    w.line(`${this.yielded} = true;`)
  }

  /** The start of case `resume`, where the thread goes on after the wait `ins`: while the wait is not over the
   *  run ends again (a `break` out of the switch); then the wait's results. */
  resume(ins: Instruction, resume: number): void {
    const w = this.w
    const kind = waitKind(w, ins) as WaitKind
    const A = ins.operands
    const bar = collectiveOf(ins)
    const red = bar?.kind === 'bar' ? bar.red : undefined
    w.line(`if (!${this.ready}) { ${this.stalled} = true; ${this.yielded} = true; break; }`)
    w.line(`${this.ready} = false;`)
    switch (kind) {
      case 'bar':
        if (red === 'popc') w.setU32(A[0], `atomicLoad(&kp_sched[${S.resCount}])`)
        // (bar.red.and: no thread's predicate was false)
        else if (red === 'and') w.setPred(A[0], `atomicLoad(&kp_sched[${S.resCount}]) == atomicLoad(&kp_sched[${S.resWaiting}])`)
        else if (red === 'or') w.setPred(A[0], `atomicLoad(&kp_sched[${S.resCount}]) != 0u`)
        if (w.hasPrintf) w.line('kp_pbar += 1u;')
        break
      case 'mbarrier':
        // (the phase completed: try_wait and test_wait are true)
        w.setPred(A[0], 'true')
        break
      case 'spin':
        // the load the thread waits on, now that the round's writes are visible to it; going round the spin is
        // no progress (the thread moves once it reaches another wait or ends)
        w.line(`${this.stalled} = true;`)
        w.instruction(ins)
        break
      case 'fence':
        w.line('// (the round\'s storageBarrier ordered the thread\'s accesses)')
        break
      case 'warpsync':
        w.line('kp_xpc[kp_t] = 0u;')
        break
      case 'activemask': case 'match': case 'shfl': case 'vote': case 'redux': case 'elect': {
        w.line('kp_xpc[kp_t] = 0u;')
        const { d, p } = dstOf(ins)
        const res = w.declare('kp_xres', 'u32'), flag = w.declare('kp_xall', 'bool')
        // (vote.all/any/uni: a predicate; vote.ballot: the mask)
        if (kind === 'vote' && ins.mode !== 'ballot') w.setPred(A[0], flag)
        else if (d) w.setU32(d, res)
        if (p) w.setPred(p, flag)
        break
      }
    }
    this.checks.push({
      at: resume,
      write: () => {
        w.ins = ins
        if (kind === 'bar') w.line(`${this.ready} = atomicLoad(&kp_sched[${S.gen}]) != ${this.seen};`)
        else if (kind === 'mbarrier') w.line(`${this.ready} = ${mbarrierPhaseDone(w, ins)};`)
        else if (kind === 'warpsync') {
          // every lane of the mask waits at a __syncwarp (any of them) or has ended
          const base = w.tmp('kp_t & ~31u')
          const m = w.tmp(maskOf(w, ins, 0))
          w.line(`${this.ready} = true;`)
          w.line(`for (var l = 0u; l < 32u; l = l + 1u) { if (((${m} >> l) & 1u) != 0u && ${base} + l < kp_nt && (kp_xpc[${base} + l] & ${WARPSYNC_BIT >>> 0}u) == 0u) { ${this.ready} = false; } }`)
        } else if (WARP_KINDS.has(kind)) {
          this.meet(ins, kind as Exclude<WarpKind, 'warpsync'>, resume)
          w.line(`${this.ready} = true;`)
        }
        else w.line(`${this.ready} = true;`)
      },
    })
  }

  /** Between rounds, for a lane at the warp collective `ins` (resuming in case `resume`): its result (kp_xres, and
   *  kp_xall for a predicate) from the slots of the lanes of its warp that met it there, as the predicated form
   *  computes it (emit-collective.ts). */
  private meet(ins: Instruction, kind: Exclude<WarpKind, 'warpsync'>, resume: number): void {
    const w = this.w
    const A = ins.operands
    const res = w.declare('kp_xres', 'u32'), flag = w.declare('kp_xall', 'bool')
    const base = w.tmp('kp_t & ~31u')
    // the lanes that met
    const met = w.declare('kp_xmet', 'u32')
    w.line(`${met} = 0u;`)
    w.line(`for (var l = 0u; l < 32u; l = l + 1u) { if (${base} + l < kp_nt && kp_xpc[${base} + l] == ${resume}u) { ${met} = ${met} | (1u << l); } }`)
    const lane = w.tmp('kp_t & 31u')
    const mine = w.tmp('kp_xv[kp_t]')
    switch (kind) {
      case 'activemask':
        w.line(`${res} = ${met};`)
        return
      case 'elect': {
        const m = w.tmp(`${maskOf(w, ins, 1)} & ${met}`)
        w.line(`${res} = select(firstTrailingBit(${m}), 0xffffffffu, ${m} == 0u);`)
        w.line(`${flag} = ${res} == ${lane};`)
        return
      }
      case 'vote': {
        const m = w.tmp(`${maskOf(w, ins, 2)} & ${met}`)
        const bal = w.declare('kp_xbal', 'u32')
        w.line(`${bal} = 0u;`)
        w.line(`for (var l = 0u; l < 32u; l = l + 1u) { if (((${m} >> l) & 1u) != 0u && kp_xv[${base} + l].x != 0u) { ${bal} = ${bal} | (1u << l); } }`)
        w.line(`${res} = ${bal};`)
        w.line(`${flag} = ${ins.mode === 'all' ? `${bal} == ${m}` : ins.mode === 'any' ? `${bal} != 0u` : `(${bal} == ${m}) || (${bal} == 0u)`};`)
        return
      }
      case 'shfl': {
        // shfl.sync.{up,down,bfly,idx}.b32 d{|p}, a, b, c, membermask
        const { srcLane, pv } = shflSource(w, ins, lane, w.tmp(w.u32(A[2]!)), w.tmp(w.u32(A[3]!)))
        const m = w.tmp(maskOf(w, ins, 4))
        // (a source lane that did not meet it or is not in membermask gives 0, as in the predicated form)
        const e = w.tmp(`select(0u, kp_xv[${base} + (${srcLane} & 31u)].x, (((${met} & ${m}) >> ${srcLane}) & 1u) != 0u)`)
        w.line(`${res} = select(${mine}.x, ${e}, ${pv});`)
        w.line(`${flag} = ${pv};`)
        return
      }
      case 'redux': {
        const m = w.tmp(`${maskOf(w, ins, 2)} & ${met}`)
        const first = w.declare('kp_xfirst', 'bool')
        w.line(`${first} = true;`)
        w.line(`${res} = 0u;`)
        const v = `kp_xv[${base} + l].x`
        const comb = reduxCombine(w, ins, res, v)
        w.line(`for (var l = 0u; l < 32u; l = l + 1u) { if (((${m} >> l) & 1u) != 0u) { if (${first}) { ${res} = ${v}; ${first} = false; } else { ${res} = ${comb}; } } }`)
        return
      }
      case 'match': {
        // match.{any,all}.sync d{|p}, a, membermask: over the lanes of the mask that met it
        const m = w.tmp(`${maskOf(w, ins, 2)} & ${met}`)
        w.line(`${res} = 0u;`)
        w.line(`${flag} = true;`)
        w.line(`for (var l = 0u; l < 32u; l = l + 1u) { if (((${m} >> l) & 1u) != 0u) { if (all(kp_xv[${base} + l] == ${mine})) { ${res} = ${res} | (1u << l); } else { ${flag} = false; } } }`)
        if (ins.mode === 'all') w.line(`${res} = select(0u, ${m}, ${flag});`)
        return
      }
    }
  }

  /** The loop of rounds around `dispatch`, which writes the thread's `switch` over its cases; `done`: the
   *  case of a thread that ended. */
  loop(done: number, dispatch: () => void): void {
    const w = this.w, pc = this.pc
    w.open('loop {')
    w.perThread(() => {
      w.open(`if (${pc} != ${done}u) {`)
      w.line(`${this.yielded} = false;`)
      w.line(`${this.stalled} = false;`)
      w.open('loop {')
      const at = w.lines.length
      dispatch()
      w.lines.push(...chainCases(w.lines.splice(at), this.yielded))
      // (an ended lane counts as waiting at every __syncwarp)
      w.line(`if (${pc} == ${done}u) { atomicAdd(&kp_sched[${S.exited}], 1u);${w.moduleDecls.has('kp_xpc') ? ` kp_xpc[kp_t] = ${ENDED}u;` : ''} ${this.stalled} = false; break; }`)
      w.line(`if (${this.yielded}) { break; }`)
      w.close()
      w.line(`if (!${this.stalled}) { atomicAdd(&kp_sched[${S.moved}], 1u); }`)
      w.close()
    })
    w.line('storageBarrier();')
    w.line('workgroupBarrier();')
    // invocation 0: the block barrier's release, and whether the rounds go on (0), end (1) or deadlock (2)
    w.open('if (kp_lidx == 0u) {')
    w.line(`let kp_x_exited = atomicLoad(&kp_sched[${S.exited}]);`)
    w.line(`let kp_x_moved = atomicExchange(&kp_sched[${S.moved}], 0u);`)
    w.line(`let kp_x_waiting = atomicLoad(&kp_sched[${S.waiting}]);`)
    w.line('let kp_x_release = kp_x_waiting != 0u && kp_x_waiting + kp_x_exited == kp_nt;')
    w.open('if (kp_x_release) {')
    w.line(`atomicStore(&kp_sched[${S.waiting}], 0u);`)
    w.line(`atomicAdd(&kp_sched[${S.gen}], 1u);`)
    w.line(`atomicStore(&kp_sched[${S.resCount}], atomicExchange(&kp_sched[${S.acc}], 0u));`)
    w.line(`atomicStore(&kp_sched[${S.resWaiting}], kp_x_waiting);`)
    w.close()
    w.line(`let kp_x_stalls = select(0u, atomicLoad(&kp_sched[${S.stalls}]) + 1u, kp_x_moved == 0u && !kp_x_release);`)
    w.line(`atomicStore(&kp_sched[${S.stalls}], kp_x_stalls);`)
    w.line(`kp_stop = select(select(0u, 2u, kp_x_stalls >= ${STALL_LIMIT}u), 1u, kp_x_exited >= kp_nt);`)
    w.close()
    w.line('workgroupBarrier();')
    if (this.checks.length) {
      w.perThread(() => {
        w.open(`switch ${pc} {`)
        for (const c of this.checks) {
          w.open(`case ${c.at}u: {`)
          c.write()
          w.close()
        }
        w.line('default: {}')
        w.close()
      })
    }
    const stop = w.tmp('workgroupUniformLoad(&kp_stop)')
    w.open(`if (${stop} != 0u) {`)
    w.open(`if (${stop} == 2u) {`)
    w.perThread(() => w.line(`if (${pc} != ${done}u) { kp_fault_at(${this.waitLine}, 0u, ${FAULT_KIND.deadlock}u); }`))
    w.close()
    w.line('break;')
    w.close()
    w.close()
  }
}
