// The sanitizer at run time (issue 19): what the checked variant of a module's code (emit-js.ts with
// `check`) calls at every global/shared access, at barriers, warp collectives and thread exits, and what the
// scheduler (scheduler.ts) calls when a barrier or a warp collective resolves. One object per backend; the
// backend tells it about each launch (begin/end).
//
// racecheck keeps, per byte of memory touched in the launch (shadow.ts), the last writer and up to two
// readers of the current barrier interval, each as (thread, epoch, warp clock, instruction). The epoch
// changes at every new block and every resolved barrier, so accesses of earlier intervals (and of other
// blocks: hazards across blocks are out of scope, as they are for racecheck) never conflict. Two accesses of
// one interval conflict when different threads made them, at least one wrote, not both are strong operations
// (atomics, mbarrier operations, and loads/stores with .relaxed/.acquire/.release: PTX ISA, "Memory
// Consistency Model", morally strong operations do not race; the plain read of a compare-and-swap loop counts
// as one too, issue 32, since a stale value only makes the CAS retry; `.volatile` is not taken as one, so warp-
// synchronous code without __syncwarp is reported as racecheck does), and nothing orders them: a warp
// collective both threads took part in, or a release by the first thread that the second acquired (an
// mbarrier arrive and a completed wait, st/red/atom.release and ld/atom.acquire on the same address). Each
// thread's clock counts those events; `seen[t][lane]` is the clock lane had at the latest collective it
// shared with t, `acq[t][u]` the clock of u's latest release t acquired. A write
// that leaves the bytes as they were is no WAW/WAR hazard (the outcome does not depend on the order); the
// store hook checks before the store and `fin()` compares after it.
//
// initcheck reads the heap's written-bytes map (heap.ts): host copies, memsets and device stores set it, a
// new allocation starts unwritten; the block's shared memory starts unwritten at every block. memcheck
// bounds global accesses by the exact size of the allocation they fall in, and turns the generated code's
// faults (unmapped granule, window overrun, misalignment) into reports naming the allocation, or the freed
// buffer still in the heap's quarantine. synccheck compares what the threads of a block (or the lanes a
// collective names) did when the scheduler resolves a barrier (or collective).
import { SanitizerError, sourcePosition, type Dim3, type ResolvedCheck, type SanitizerAccess, type SanitizerAllocation, type SanitizerReport } from '@kernelpack/ptx'
import type { Heap } from '../heap.js'
import type { InstrInfo } from '../js/emit-js.js'
import { formatReport } from './report.js'
import { RaceShadow, ATOMIC, EPOCH_LIMIT } from './shadow.js'

/** What the sanitizer needs to know about a launch. */
export interface SanitizerLaunch {
  kernel: string
  instrs: readonly InstrInfo[]
  files: ReadonlyMap<number, string>
  /** The static `.shared` variables the kernel reaches, with their offsets and sizes (shared-use.ts); module
   *  `.global`/`.const` variables by address. */
  sharedVars: ReadonlyArray<{ name: string; offset: number; size: number }>
  globalVars: ReadonlyMap<string, { address: number; size: number }>
  grid: Dim3
  block: Dim3
  /** The block's shared window [sb, sb+shn), of which [sb+dynamicStart, sb+shn) is dynamic shared memory (and
   *  reserved shared memory); the threads' local windows [lb0, lb0+localBytes) (every resident block's). A
   *  cooperative launch moves the shared window with each block's turn (enter()). */
  sb: number
  shn: number
  dynamicStart: number
  lb0: number
  localBytes: number
  /** Every block resident at once, run in turns (runCooperative): each keeps its barrier interval. */
  cooperative?: boolean
}

/** A cp.async whose bytes have not landed (Sanitizer.cpa). */
interface InflightCopy { t: number; group: number; at: number; n: number; i: number }

/** A thread's view of the scheduler: st 1 = at a barrier, 2 = at a warp collective, 3 = exited. */
export interface ThreadStatus { st: number }

const KIND_READ = 0
const KIND_WRITE = 1
const KIND_ATOMIC = 2
/** Hook flags (emit-js.ts): a morally strong operation, an acquire, a release. */
const STRONG = 1, ACQUIRE = 2, RELEASE = 4
/** Distinct reports kept in collect mode (repeats only count). */
const MAX_REPORTS = 1000

export class Sanitizer {
  /** Reports collected (collect mode) since the last take(). */
  private collected: SanitizerReport[] = []
  private byKey = new Map<string, SanitizerReport>()
  private readonly shadow = new RaceShadow()
  private L!: SanitizerLaunch
  private nt = 0
  /** Linear index of the running block; -1 before the first. */
  private b = -1
  /** The running block's shared window (L.sb, or its own in a cooperative launch). */
  private sb = 0
  /** The running block's barrier interval (stamps carry it), and the counter intervals are drawn from. */
  private epoch = 0
  private epochs = 0
  /** Cooperative launches: each block's current interval, kept across its turns. */
  private blockEpoch?: Map<number, number>
  /** Per thread: warp clock, `seen` (32 per thread), the barrier/collective it waits at and the exit site. */
  private clk = new Int32Array(0)
  private seen = new Int32Array(0)
  private site = new Int32Array(0)
  private barId = new Int32Array(0)
  private barCnt = new Int32Array(0)
  private mask = new Int32Array(0)
  private exitSite = new Int32Array(0)
  /** Releases by address (thread → its clock after the release), and acquired clocks (n per thread); made on
   *  the first acquire or release of a launch. */
  private acq: Int32Array | undefined
  private readonly relAt = new Map<number, Map<number, number>>()
  /** Reserved shared memory of the running block ([sb+reservedFrom, sb+shn)), cooperative groups' own
   *  scratch: not the kernel's memory, not checked. */
  private reservedFrom = -1
  /** Sorted [start, end) of every allocation (exact sizes), for memcheck and for naming allocations. */
  private starts: number[] = []
  private ends: number[] = []
  private lastLo = 1
  private lastHi = 0
  /** A store's WAW/WAR hazard waits for the stored value: `p` says one does, fin() decides. */
  p = false
  private pending?: { report: Omit<SanitizerReport, 'message' | 'count'>; at: number; n: number; old: Uint8Array; warpLevel: boolean }
  /** cp.async copies into shared memory that have not completed yet (racecheck): the emulator copies at
   *  issue, but on a GPU the bytes land only by the cp.async.wait_group/wait_all that covers the copy's group
   *  (or the mbarrier phase of cp.async.mbarrier.arrive), so any access to them before that is a race with the
   *  copy. Per issuing thread, its copies (group: the thread's committed-group count when issued; heap range;
   *  row); by heap byte, the copy in flight into it, so an access looks up its own bytes only. */
  private inflight: InflightCopy[][] = []
  private inflightAt = new Map<number, InflightCopy>()
  /** Per thread: cp.async groups committed so far in this block. */
  private committed = new Int32Array(0)
  /** An uninitialised shared read waiting for the end of its barrier interval (throw mode with racecheck):
   *  when another thread writes those bytes in the same interval, the race is the report, not the read. */
  private deferredInit?: { report: Omit<SanitizerReport, 'message' | 'count'>; detail: string[] }

  constructor(readonly check: ResolvedCheck, readonly heap: Heap) {
    heap.enableSanitizer(check.init)
  }

  /** The reports collected since the last call, which are cleared. */
  take(): SanitizerReport[] {
    const out = this.collected
    this.collected = []
    this.byKey.clear()
    return out
  }

  begin(l: SanitizerLaunch): void {
    this.L = l
    const n = l.block[0] * l.block[1] * l.block[2]
    this.nt = n
    this.b = -1
    this.sb = l.sb
    this.blockEpoch = l.cooperative ? new Map() : undefined
    this.acq = undefined
    this.relAt.clear()
    this.reservedFrom = -1
    if (this.clk.length < n) {
      this.clk = new Int32Array(n)
      this.seen = new Int32Array(n * 32)
      this.site = new Int32Array(n)
      this.barId = new Int32Array(n)
      this.barCnt = new Int32Array(n)
      this.mask = new Int32Array(n)
      this.exitSite = new Int32Array(n)
      this.committed = new Int32Array(n)
    } else {
      this.clk.fill(0); this.seen.fill(0)
    }
    this.starts = []
    this.ends = []
    for (const [at, size] of this.heap.allocations()) { this.starts.push(at); this.ends.push(at + size) }
    this.lastLo = 1
    this.lastHi = 0
    this.p = false
    this.pending = undefined
    this.inflight = []
    this.inflightAt.clear()
    // local memory is private to its thread: counted written, never raced on
    this.heap.markWritten(l.lb0, l.localBytes)
  }

  /** The launch ran to its end: what waited for the end of an interval is reported now. */
  finish(): void {
    this.flushInit()
  }

  /** The launch is over, finished or not. */
  end(): void {
    this.p = false
    this.pending = undefined
    this.deferredInit = undefined
  }

  private flushInit(): void {
    const d = this.deferredInit
    if (!d) return
    this.deferredInit = undefined
    this.emit(d.report, { detail: d.detail })
  }

  // --- hooks of the generated code ---

  /** A block starts (called at every entry into a block's thread loop; only a new `b` counts). */
  blk(b: number): void {
    if (b === this.b) return
    this.flushInit()
    this.b = b
    const known = this.blockEpoch?.get(b)
    if (known !== undefined) { this.epoch = known; return }
    this.nextEpoch()
    // shared memory starts unwritten in every block (its contents are the previous block's, on a GPU garbage)
    this.heap.init?.fill(0, this.sb, this.sb + this.L.shn)
    this.exitSite.fill(-1, 0, this.nt)
    if (!this.blockEpoch) { this.inflight = []; this.inflightAt.clear(); this.committed.fill(0, 0, this.nt) }
  }

  /** The backend points the windows at block b (before each of its turns): its shared window at `sb`, of
   *  which [sb+reservedFrom, sb+shn) is the reserved shared memory the backend zeroes (-1: none). */
  enter(b: number, sb: number, reservedFrom: number): void {
    if (b !== this.b) { this.sb = sb; this.blk(b) }
    this.reservedFrom = reservedFrom
  }

  /** Load of n bytes at absolute address a by thread t (instruction table row i); f: STRONG | ACQUIRE. */
  ld(i: number, a: number, n: number, t: number, f = 0): void {
    const sp = this.space(a)
    if (sp === 2) return
    if (this.check.memory) this.bounds(i, a, n, t, KIND_READ, sp)
    if (this.check.init) this.initRead(i, a, n, t, sp)
    if (this.check.race) {
      if (this.inflightAt.size && sp === 1) this.inflightAccess(i, a, n, t, KIND_READ)
      this.race(i, a, n, t, KIND_READ, sp, (f & STRONG) !== 0)
      if (f & ACQUIRE) this.acquire(t, a)
    }
  }

  /** Store of n bytes at a by thread t, before the store (fin() after it); f: STRONG | RELEASE. */
  st(i: number, a: number, n: number, t: number, f = 0): void {
    const sp = this.space(a)
    if (sp === 2) return
    if (this.check.memory) this.bounds(i, a, n, t, KIND_WRITE, sp)
    if (this.check.race) {
      if (this.inflightAt.size && sp === 1) this.inflightAccess(i, a, n, t, KIND_WRITE)
      this.race(i, a, n, t, KIND_WRITE, sp, (f & STRONG) !== 0)
      if (f & RELEASE) this.release(t, a)
    }
    this.heap.init?.fill(1, a, a + n)
  }

  /** Atomic read-modify-write of n bytes at a by thread t (atom, red, mbarrier); f: ACQUIRE | RELEASE. */
  at(i: number, a: number, n: number, t: number, f = 0): void {
    const sp = this.space(a)
    if (sp === 2) return
    if (this.check.memory) this.bounds(i, a, n, t, KIND_ATOMIC, sp)
    if (this.check.init) this.initRead(i, a, n, t, sp)
    if (this.check.race) {
      this.race(i, a, n, t, KIND_ATOMIC, sp, true)
      if (f & ACQUIRE) this.acquire(t, a)
      if (f & RELEASE) this.release(t, a)
    }
    this.heap.init?.fill(1, a, a + n)
  }

  /** cp.async by thread t (row i) of n bytes to shared address a (absolute), issued after its store hook. */
  cpa(i: number, a: number, n: number, t: number): void {
    if (!this.check.race) return
    const c: InflightCopy = { t, group: this.committed[t]!, at: a, n, i }
    ;(this.inflight[t] ??= []).push(c)
    for (let k = 0; k < n; k++) this.inflightAt.set(a + k, c)
  }

  /** cp.async.commit_group by thread t: its copies issued since the last commit form a group. */
  cpc(t: number): void {
    this.committed[t]!++
  }

  /** cp.async.wait_group keep by thread t: all but its `keep` most recent committed groups are complete
   *  (copies not committed yet are not waited for); cp.async.wait_all is commit + wait_group 0. */
  cpw(t: number, keep: number): void {
    const mine = this.inflight[t]
    if (!mine?.length) return
    const done = this.committed[t]! - keep
    for (const c of mine) if (c.group < done) this.landed(c)
    this.inflight[t] = mine.filter((c) => c.group >= done)
  }

  /** cp.async.mbarrier.arrive by thread t: its copies complete by the mbarrier's phase, which the kernel
   *  waits for; taken as complete here (no report, rather than tracking the phase). */
  cpm(t: number): void {
    const mine = this.inflight[t]
    if (!mine?.length) return
    for (const c of mine) this.landed(c)
    mine.length = 0
  }

  /** Copy c's bytes are no longer in flight (a later copy into the same bytes keeps its own). */
  private landed(c: InflightCopy): void {
    for (let k = 0; k < c.n; k++) if (this.inflightAt.get(c.at + k) === c) this.inflightAt.delete(c.at + k)
  }

  /** An access to shared bytes an incomplete cp.async writes: a race with the copy. */
  private inflightAccess(i: number, a: number, n: number, t: number, kind: number): void {
    let k = 0
    while (k < n && !this.inflightAt.has(a + k)) k++
    if (k === n) return
    const c = this.inflightAt.get(a + k)!
    const addr = a + k - this.sb
    const report = this.base('race', kind === KIND_READ ? 'RAW' : 'WAW', [this.access(c.i, c.t, KIND_WRITE), this.access(i, t, kind)], 'shared', addr, n, this.sharedAllocation(addr))
    // reported once per copy: the copy counts as landed from here on
    this.landed(c)
    const mine = this.inflight[c.t]!
    mine.splice(mine.indexOf(c), 1)
    this.emit(report, { warpLevel: c.t >>> 5 === t >>> 5, detail: [`the cp.async by thread ${fmt(this.tidOf(c.t))} has not completed: no cp.async.wait_group / wait_all covering its group (or cp.async.mbarrier.arrive) ran in that thread before this access`] })
  }

  /** Thread t releases at a: its accesses so far are ordered before an acquire at a. */
  private release(t: number, a: number): void {
    this.acq ??= new Int32Array(this.nt * this.nt)
    let m = this.relAt.get(a)
    if (!m) { m = new Map(); this.relAt.set(a, m) }
    m.set(t, ++this.clk[t]!)
  }

  /** Thread t acquires at a: every release at a so far is ordered before its next accesses. */
  private acquire(t: number, a: number): void {
    const m = this.relAt.get(a)
    if (!m) return
    const acq = this.acq!
    const row = t * this.nt
    for (const [u, c] of m) if (acq[row + u]! < c) acq[row + u] = c
  }

  /** After a store whose hazard waits for the value: a hazard only if the bytes changed. */
  fin(): void {
    const p = this.pending!
    this.p = false
    this.pending = undefined
    const now = new Uint8Array(this.heap.buffer, p.at, p.n)
    if (now.every((x, k) => x === p.old[k])) return
    this.emit(p.report, { currentValue: valueHex(p.old), incomingValue: valueHex(now), warpLevel: p.warpLevel })
  }

  /** Thread t arrives at a block barrier (row i) with barrier id and thread count (-1: all threads). */
  bar(i: number, t: number, id: number, count: number): void {
    this.site[t] = i
    this.barId[t] = id
    this.barCnt[t] = count
  }

  /** Thread t arrives at a warp collective (row i) with its member mask. */
  col(i: number, t: number, mask: number): void {
    this.site[t] = i
    this.mask[t] = mask
    if (this.check.sync && ((mask >>> (t & 31)) & 1) === 0) {
      this.emitSync('invalid-arguments', i, t, [`thread ${fmt(this.tidOf(t))} is not in its own member mask ${hex32(mask)}`])
    }
  }

  /** Thread t arrives at a warp collective without a member mask (activemask). */
  arrive(i: number, t: number): void {
    this.site[t] = i
    this.mask[t] = 0
  }

  /** Thread t leaves the kernel at row i. */
  ex(i: number, t: number): void {
    this.exitSite[t] = i
  }

  // --- the scheduler's resolutions ---

  /** Every thread of the block still running waits at a barrier: synccheck, then a new barrier interval. */
  barrier(states: readonly ThreadStatus[], n: number): void {
    this.flushInit()
    if (this.check.sync) {
      let first = -1, exited = -1, other = -1
      for (let t = 0; t < n; t++) {
        const st = states[t]!.st
        if (st === 1) {
          if (first < 0) first = t
          // the same barrier at another instruction is allowed (sm_70+ counts arrivals per barrier id; compilers
          // and code like sgemm's warp specialisation reach one barrier from two places)
          else if (other < 0 && (this.barId[t] !== this.barId[first] || this.barCnt[t] !== this.barCnt[first])) other = t
        } else if (st === 3 && exited < 0) exited = t
      }
      if (first >= 0 && other >= 0) {
        const f = first, o = other
        const what = (t: number) => `barrier ${this.barId[t]}${this.barCnt[t] >= 0 ? ` with ${this.barCnt[t]} threads` : ''}`
        this.emitSync('barrier-mismatch', this.site[f]!, f, [
          `thread ${fmt(this.tidOf(o))} waits at another ${what(o)} ${this.where(this.site[o]!)}`,
        ], { kind: 'barrier', t: o, i: this.site[o]! })
      } else if (first >= 0 && exited >= 0) {
        const e = exited
        const at = this.exitSite[e]! >= 0 ? ` ${this.where(this.exitSite[e]!)}` : ''
        this.emitSync('divergent-block', this.site[first]!, first, [`thread ${fmt(this.tidOf(e))} exited${at} without reaching it`],
          this.exitSite[e]! >= 0 ? { kind: 'exit', t: e, i: this.exitSite[e]! } : undefined)
      } else if (first >= 0 && this.barCnt[first]! >= 0) {
        let waiting = 0
        for (let t = 0; t < n; t++) if (states[t]!.st === 1) waiting++
        if (waiting !== this.barCnt[first]) this.emitSync('barrier-mismatch', this.site[first]!, first, [`${waiting} threads arrived at barrier ${this.barId[first]}, which names a thread count of ${this.barCnt[first]}`])
      }
    }
    this.nextEpoch()
  }

  /** The lanes `group` of warp `w` (block-linear thread ids) took part in one warp collective together. */
  warp(w: number, group: readonly number[], states: readonly ThreadStatus[]): void {
    let groupMask = 0
    for (const t of group) groupMask |= 1 << (t - w)
    if (this.check.sync) {
      for (const t of group) {
        const m = this.mask[t]!
        // lanes past the block's last thread do not exist: a full mask over a short last warp names nobody
        const exists = this.nt - w >= 32 ? -1 : (1 << (this.nt - w)) - 1
        const missing = m & ~groupMask & exists
        if (missing === 0) continue
        const lane = 31 - Math.clz32(missing & -missing)
        const u = w + lane
        const st = states[u]?.st
        const why = st === 3 ? 'exited' : st === 1 ? 'waits at a block barrier' : st === 2 ? `waits at another collective ${this.where(this.site[u]!)}` : 'did not arrive'
        this.emitSync('divergent-warp', this.site[t]!, t, [`member mask ${hex32(m)} names lane ${lane}, thread ${fmt(this.tidOf(u))}, which ${why}`])
        break
      }
    }
    // the lanes that met are ordered after each other's earlier accesses
    for (const t of group) this.clk[t]!++
    for (const t of group) {
      const row = t * 32
      for (const u of group) this.seen[row + (u & 31)] = this.clk[u]!
    }
  }

  /** shfl.sync lanes of warp w that read a source lane in range which is not in their member mask or did not
   *  take part (`zeroed`: thread, source lane, member mask, …; scheduler.ts gives them 0). The PTX ISA leaves
   *  the value undefined; compute-sanitizer's synccheck reports a shfl.sync with such arguments as `Invalid
   *  arguments` (its report on CUB's sub-warp shuffles, NVIDIA/cccl#854). One report per resolution, for the
   *  first such lane. */
  shuffleSource(w: number, zeroed: readonly number[], states: readonly ThreadStatus[]): void {
    if (!this.check.sync) return
    const t = zeroed[0]!, lane = zeroed[1]!, m = zeroed[2]!
    const u = w + lane
    const st = u < this.nt ? states[u]?.st : undefined
    const why = ((m >>> lane) & 1) === 0 ? `is not in the member mask ${hex32(m)}`
      : u >= this.nt ? 'is past the block\'s last thread'
      : st === 3 ? 'exited' : st === 1 ? 'waits at a block barrier' : st === 2 ? `waits at another collective ${this.where(this.site[u]!)}` : 'did not take part'
    this.emitSync('invalid-arguments', this.site[t]!, t, [
      `shuffle source lane ${lane}${u < this.nt ? `, thread ${fmt(this.tidOf(u))},` : ''} ${why}: undefined in the PTX ISA; the emulator reads 0, as NVIDIA GPUs do`,
    ])
  }

  /** A memory fault of the generated code (window overrun, unmapped granule, misalignment) as a memcheck
   *  report; `a` is the window offset for shared/local, the device address otherwise. */
  fault(i: number, a0: number | bigint, space: string, t: number, rw: string, n: number): never {
    const a = typeof a0 === 'bigint' ? Number(BigInt.asUintN(64, a0)) : a0
    const kind = rw === 'w' ? KIND_WRITE : rw === 'a' ? KIND_ATOMIC : KIND_READ
    // the generated check asks for natural alignment up to 16 bytes (emit-js.ts, addr())
    const hazard = a % Math.min(n, 16) !== 0 ? 'misaligned' : 'out-of-bounds'
    if (space === 'shared' || space === 'local') this.emitMemory(hazard, i, t, kind, space, a, n, space === 'shared' ? this.sharedAllocation(a) : undefined)
    if (this.space(a) === 1) this.emitMemory(hazard, i, t, kind, 'shared', a - this.sb, n, this.sharedAllocation(a - this.sb))
    const freed = this.heap.freedAt(a)
    if (freed) this.emitMemory('use-after-free', i, t, kind, 'global', a, n, { space: 'global', base: BigInt(freed.at), size: freed.size, offset: a - freed.at, state: 'freed' })
    this.emitMemory(hazard, i, t, kind, 'global', a, n, a < 4096 ? undefined : this.nearest(a), a < 4096 ? ['a null pointer (the first 4 KiB of the device address space are never allocated)'] : [])
  }

  // --- checks ---

  /** 0 global, 1 shared, 2 local (not checked). */
  private space(a: number): number {
    const L = this.L
    if (a >= this.sb && a < this.sb + L.shn) return this.reservedFrom >= 0 && a >= this.sb + this.reservedFrom ? 2 : 1
    if (a >= L.lb0 && a < L.lb0 + L.localBytes) return 2
    return 0
  }

  private bounds(i: number, a: number, n: number, t: number, kind: number, sp: number): void {
    if (sp === 1) return this.sharedBounds(i, a - this.sb, n, t, kind)
    if (a >= this.lastLo && a + n <= this.lastHi) return
    const k = this.find(a)
    if (k >= 0 && a + n <= this.ends[k]!) { this.lastLo = this.starts[k]!; this.lastHi = this.ends[k]!; return }
    this.emitMemory('out-of-bounds', i, t, kind, 'global', a, n, this.nearest(a))
  }

  /** A shared access must stay inside one of the kernel's own variables, or in dynamic shared memory. */
  private sharedBounds(i: number, off: number, n: number, t: number, kind: number): void {
    if (off >= this.L.dynamicStart && off + n <= this.L.shn) return
    for (const v of this.L.sharedVars) if (off >= v.offset && off + n <= v.offset + v.size) return
    let near: { name: string; offset: number; size: number } | undefined
    for (const v of this.L.sharedVars) if (!near || Math.abs(off - v.offset) < Math.abs(off - near.offset)) near = v
    const al: SanitizerAllocation = near
      ? { space: 'shared', base: BigInt(near.offset), size: near.size, offset: off - near.offset, variable: near.name, state: 'live' }
      : { space: 'shared', base: 0n, size: this.L.shn, offset: off, state: 'live' }
    this.emitMemory('out-of-bounds', i, t, kind, 'shared', off, n, al)
  }

  private initRead(i: number, a: number, n: number, t: number, sp: number): void {
    const init = this.heap.init!
    for (let k = 0; k < n; k++) {
      if (init[a + k] !== 0) continue
      const addr = sp === 1 ? a - this.sb : a
      const report = this.base('init', 'uninitialized', [this.access(i, t, KIND_READ)], sp === 1 ? 'shared' : 'global', addr + k, n,
        sp === 1 ? this.sharedAllocation(addr + k) : this.nearest(a + k))
      const detail = n > 1 && k > 0 ? [`the first ${k} of the ${n} bytes were written`] : []
      if (sp === 1 && this.check.race && this.check.mode === 'throw') this.deferredInit ??= { report, detail }
      else this.emit(report, { detail })
      // marks the bytes so one uninitialised buffer gives one report per instruction, not one per element
      init.fill(1, a, a + n)
      return
    }
  }

  private race(i: number, a: number, n: number, t: number, kind: number, sp: number, strong: boolean): void {
    const sh = this.shadow
    const E = this.epoch
    const self = (E << 10) | t
    const ci = this.clk[t]!
    const si = strong ? i | ATOMIC : i
    let hazard: { prevStamp: number; prevSite: number; type: 'RAW' | 'WAR' | 'WAW'; at: number } | undefined
    for (let k = 0; k < n; k++) {
      const x = a + k
      const pg = sh.page(x)
      const o = x & 4095
      if (!hazard) {
        const w = pg[o]!
        if (w !== 0 && w >>> 10 === E && (w & 1023) !== t) {
          const ws = pg[8192 + o]!
          if (!(strong && (ws & ATOMIC) !== 0) && !this.ordered(w & 1023, pg[4096 + o]!, t)) hazard = { prevStamp: w, prevSite: ws, type: kind === KIND_READ ? 'RAW' : 'WAW', at: x }
        }
        if (!hazard && kind !== KIND_READ) {
          for (let r = 3; r <= 6; r += 3) {
            const rs = pg[r * 4096 + o]!
            if (rs !== 0 && rs >>> 10 === E && (rs & 1023) !== t && !(strong && (pg[(r + 2) * 4096 + o]! & ATOMIC) !== 0) && !this.ordered(rs & 1023, pg[(r + 1) * 4096 + o]!, t)) { hazard = { prevStamp: rs, prevSite: pg[(r + 2) * 4096 + o]!, type: 'WAR', at: x }; break }
          }
        }
      }
      if (kind === KIND_READ) {
        const r1 = pg[3 * 4096 + o]!
        if (r1 >>> 10 !== E || (r1 & 1023) === t) { pg[3 * 4096 + o] = self; pg[4 * 4096 + o] = ci; pg[5 * 4096 + o] = si }
        else { pg[6 * 4096 + o] = self; pg[7 * 4096 + o] = ci; pg[8 * 4096 + o] = si }
      } else if (!(strong && pg[o] === self && (pg[8192 + o]! & ATOMIC) === 0)) {
        // a thread's own atomic does not hide its plain store of the interval, which still races with the
        // other threads' atomics (a sum cleared by one thread while the others add to it; issue 32)
        pg[o] = self; pg[4096 + o] = ci; pg[8192 + o] = si
      }
    }
    if (!hazard) return
    const pt = hazard.prevStamp & 1023
    const prevSite = hazard.prevSite & ~ATOMIC
    const prevKind = this.isAtomic(prevSite) ? KIND_ATOMIC : hazard.type === 'WAR' ? KIND_READ : KIND_WRITE
    const space = sp === 1 ? 'shared' : 'global'
    const addr = sp === 1 ? hazard.at - this.sb : hazard.at
    const report = this.base('race', hazard.type, [this.access(prevSite, pt, prevKind), this.access(i, t, kind)], space, addr, n,
      sp === 1 ? this.sharedAllocation(addr) : this.nearest(hazard.at))
    const warpLevel = pt >>> 5 === t >>> 5
    if (kind === KIND_WRITE && hazard.type !== 'RAW') {
      // decided after the store: a write that leaves the bytes unchanged cannot make the outcome order-dependent
      this.pending = { report, at: a, n, old: new Uint8Array(this.heap.buffer, a, n).slice(), warpLevel }
      this.p = true
      return
    }
    this.emit(report, { currentValue: valueHex(new Uint8Array(this.heap.buffer, a, Math.min(n, 8))), warpLevel })
  }

  /** Thread ta's access at clock c happened before thread t's next one: through a collective both took part
   *  in, or a release of ta's that t acquired. */
  private ordered(ta: number, c: number, t: number): boolean {
    if (ta >>> 5 === t >>> 5 && this.seen[t * 32 + (ta & 31)]! > c) return true
    return this.acq !== undefined && this.acq[t * this.nt + ta]! > c
  }

  /** The instruction at row i is a read-modify-write (atom, red, mbarrier), for reports. */
  private isAtomic(i: number): boolean {
    const text = this.L.instrs[i]?.text ?? ''
    return /^(@!?\S+\s+)?(atom|red|mbarrier|cp\.async\.mbarrier)\b/.test(text)
  }

  private nextEpoch(): void {
    if (++this.epochs >= EPOCH_LIMIT) {
      // the stamps' epoch bits are spent: forget every access so far (blocks keep their intervals, renumbered)
      this.shadow.clear()
      this.epochs = 1
      if (this.blockEpoch) for (const k of this.blockEpoch.keys()) this.blockEpoch.set(k, ++this.epochs)
    }
    this.epoch = this.epochs
    this.blockEpoch?.set(this.b, this.epoch)
  }

  // --- reports ---

  private tidOf(t: number): [number, number, number] {
    const [x, y] = this.L.block
    return [t % x, Math.floor(t / x) % y, Math.floor(t / (x * y))]
  }

  private blockOf(): [number, number, number] {
    const [x, y] = this.L.grid
    const b = Math.max(this.b, 0)
    return [b % x, Math.floor(b / x) % y, Math.floor(b / (x * y))]
  }

  private access(i: number, t: number, kind: number | SanitizerAccess['kind']): SanitizerAccess {
    const info = this.L.instrs[i]
    const k: SanitizerAccess['kind'] = typeof kind === 'string' ? kind : kind === KIND_WRITE ? 'write' : kind === KIND_ATOMIC ? 'atomic' : 'read'
    const a: SanitizerAccess = { kind: k, thread: this.tidOf(t), block: this.blockOf(), function: info?.fn ?? this.L.kernel, ptxLine: info?.line ?? 0, instruction: info?.text ?? '?' }
    const src = sourcePosition(this.L.files, info?.loc)
    if (src) {
      const { inlined, ...at } = src
      a.source = at
      if (inlined) a.inlinedFrom = inlined
    }
    return a
  }

  private where(i: number): string {
    const info = this.L.instrs[i]
    if (!info) return ''
    const src = sourcePosition(this.L.files, info.loc)
    return `at PTX line ${info.line}${src ? ` (${src.file}:${src.line})` : ''}`
  }

  private base(kind: SanitizerReport['kind'], hazard: SanitizerReport['hazard'], accesses: SanitizerAccess[], space?: 'global' | 'shared' | 'local', address?: number, size?: number, allocation?: SanitizerAllocation): Omit<SanitizerReport, 'message' | 'count'> {
    const r: Omit<SanitizerReport, 'message' | 'count'> = { kind, hazard, kernel: this.L.kernel, accesses }
    if (space) r.space = space
    if (address !== undefined) r.address = BigInt(Math.trunc(address))
    if (size !== undefined) r.size = size
    if (allocation) r.allocation = allocation
    return r
  }

  private emitSync(hazard: SanitizerReport['hazard'], i: number, t: number, detail: string[], other?: { kind: SanitizerAccess['kind']; t: number; i: number }): void {
    const accesses = [this.access(i, t, this.L.instrs[i]?.text.startsWith('bar') ? 'barrier' : 'collective')]
    if (other) accesses.push(this.access(other.i, other.t, other.kind))
    this.emit(this.base('sync', hazard, accesses), { detail })
  }

  private emitMemory(hazard: SanitizerReport['hazard'], i: number, t: number, kind: number, space: 'global' | 'shared' | 'local', a: number, n: number, al?: SanitizerAllocation, detail: string[] = []): never {
    this.emit(this.base('memory', hazard, [this.access(i, t, kind)], space, a, n, al), { detail }, true)
    throw new Error('unreachable')
  }

  private emit(r: Omit<SanitizerReport, 'message' | 'count'>, extra: Parameters<typeof formatReport>[1], fatal = false): void {
    const message = formatReport(r, extra)
    const report: SanitizerReport = { ...r, count: 1, message }
    if (this.check.mode === 'throw') throw new SanitizerError(report)
    const key = `${r.kind}|${r.hazard}|${r.accesses.map((a) => `${a.ptxLine}:${a.kind}`).join('|')}`
    const seen = this.byKey.get(key)
    if (seen) seen.count++
    else if (this.collected.length < MAX_REPORTS) { this.byKey.set(key, report); this.collected.push(report) }
    if (fatal) throw new SanitizerError(seen ?? report)
  }

  // --- allocations ---

  /** Index of the allocation containing a, or -1. */
  private find(a: number): number {
    let lo = 0, hi = this.starts.length - 1
    while (lo <= hi) {
      const m = (lo + hi) >>> 1
      if (a < this.starts[m]!) hi = m - 1
      else if (a >= this.ends[m]!) lo = m + 1
      else return m
    }
    return -1
  }

  /** The allocation containing a, else the nearest one (before or after), with the offset of a in it. */
  private nearest(a: number): SanitizerAllocation | undefined {
    if (this.starts.length === 0) return undefined
    let best = 0, dist = Infinity
    for (let k = 0; k < this.starts.length; k++) {
      const s = this.starts[k]!, e = this.ends[k]!
      const d = a < s ? s - a : a >= e ? a - e + 1 : 0
      if (d < dist) { dist = d; best = k }
      if (d === 0) break
    }
    const base = this.starts[best]!
    const al: SanitizerAllocation = { space: 'global', base: BigInt(base), size: this.ends[best]! - base, offset: a - base, state: 'live' }
    for (const [name, g] of this.L.globalVars) if (g.address === base) al.variable = name
    return al
  }

  /** The `.shared` variable holding window offset `off`, else the whole window. */
  private sharedAllocation(off: number): SanitizerAllocation {
    for (const v of this.L.sharedVars) {
      if (off >= v.offset && off < v.offset + v.size) return { space: 'shared', base: BigInt(v.offset), size: v.size, offset: off - v.offset, variable: v.name, state: 'live' }
    }
    return { space: 'shared', base: 0n, size: this.L.shn, offset: off, state: 'live' }
  }
}

function fmt(d: readonly number[]): string {
  return `(${d.join(',')})`
}

function hex32(m: number): string {
  return `0x${(m >>> 0).toString(16).padStart(8, '0')}`
}

/** Little-endian bytes as one hex number (compute-sanitizer's Current/Incoming Value). */
function valueHex(bytes: Uint8Array): string {
  let v = 0n
  for (let k = Math.min(bytes.length, 8) - 1; k >= 0; k--) v = (v << 8n) | BigInt(bytes[k]!)
  return `0x${v.toString(16)}`
}
