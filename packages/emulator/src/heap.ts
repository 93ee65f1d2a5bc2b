// The emulated device memory: one growable buffer. Device addresses are byte offsets into it (the
// first 4 KiB are never handed out, so a null pointer faults). Allocations are 256-byte aligned with at
// least one unmapped 4-byte granule after each, and `ok` marks every mapped granule, so an access past
// the end of an allocation faults instead of reaching its neighbour. A launch's own memory (shared
// windows, local memory, the parameter frame and call stack) comes from `allocInternal`: it lies in the
// same buffer but `ok` never marks it and `ranges()` leaves it out, so a global or generic access that
// strays into it faults like any other unmapped address (issue 17 item 3); the generated code reaches it
// through its own window checks.
//
// The heap's bytes are a WebAssembly.Memory (issue 24 item 4), so the kernels of the WebAssembly tier
// (wasm/) and the JavaScript tier, host copies and the sanitizer all see the same bytes. Where launches run
// on worker threads (issue 13 item 3), it is a shared memory (maximum = the memory limit) and `ok` a growable
// SharedArrayBuffer: every worker sees the same bytes, host copies and module variables included, and
// growing keeps the memory in place, so workers that are running go on with their old (shorter,
// fixed-length) views and rebind at their next launch (`memory.buffer` is then a longer SharedArrayBuffer
// over the same memory). Fixed-length views, because V8 runs length-tracking views of a growable buffer
// some 25× slower. Otherwise the memory is not shared and growth detaches its old buffer (every view is
// made again from `buffer` after a `generation` change); `ok` is a plain ArrayBuffer that growth replaces.
// An engine without WebAssembly keeps the heap in (growable Shared)ArrayBuffers, as before.
//
// With the sanitizer on (issue 19) the heap also keeps what its checks need: the exact byte size of every
// allocation (memcheck's bounds are to the byte, not to the granule), one byte per heap byte saying whether
// anything wrote it (initcheck: host copies, memsets and device stores set it; a new allocation starts
// unwritten, as cudaMalloc's memory does), and a quarantine of freed allocations, which are neither reused nor
// forgotten for a while, so that an access to a freed buffer faults and is reported as such (like
// AddressSanitizer's quarantine).

const GUARD = 4096
/** Bytes of a WebAssembly page. */
const PAGE = 65536
const ALIGN = 256
/** Freed bytes the sanitizer's quarantine holds back before the oldest are reused. */
const QUARANTINE_BYTES = 64 << 20

/** A SharedArrayBuffer that can grow in place (ES2024). */
export interface GrowableSharedArrayBuffer extends SharedArrayBuffer {
  grow(byteLength: number): void
  readonly growable: boolean
  readonly maxByteLength: number
}

/** Why this engine cannot give the heap a growable SharedArrayBuffer, or undefined when it can. */
export function sharedHeapUnavailable(): string | undefined {
  if (typeof SharedArrayBuffer !== 'function') return 'SharedArrayBuffer is unavailable'
  if (typeof (SharedArrayBuffer.prototype as Partial<GrowableSharedArrayBuffer>).grow !== 'function') return 'this engine has no growable SharedArrayBuffer (ES2024)'
  return undefined
}

function newSharedBuffer(byteLength: number, maxByteLength: number): GrowableSharedArrayBuffer {
  return new (SharedArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => GrowableSharedArrayBuffer)(byteLength, { maxByteLength })
}

export interface HeapOptions {
  /** Back the heap with shared memory (for worker threads). */
  shared?: boolean
  /** Keep the bytes in a WebAssembly.Memory (default: where the engine has WebAssembly). */
  wasm?: boolean
}

/** Why this engine cannot keep the heap in a WebAssembly.Memory (shared, for workers), or undefined. */
export function wasmMemoryUnavailable(shared: boolean): string | undefined {
  if (typeof WebAssembly !== 'object' || typeof WebAssembly.Memory !== 'function') return 'this engine has no WebAssembly'
  if (!shared) return undefined
  try {
    new WebAssembly.Memory({ initial: 0, maximum: 1, shared: true } as WebAssembly.MemoryDescriptor)
    return undefined
  } catch (e) {
    return `this engine has no shared WebAssembly memory (${(e as Error).message})`
  }
}

export class Heap {
  buffer: ArrayBuffer | GrowableSharedArrayBuffer
  /** The WebAssembly memory whose buffer `buffer` is (undefined where the engine has none). */
  readonly memory: WebAssembly.Memory | undefined
  ok: Uint8Array
  readonly shared: boolean
  /** Bumped whenever `buffer` is replaced; compiled modules rebind their views when it changes. */
  generation = 0
  private top = GUARD
  private live = new Map<number, number>()
  /** Mapped bytes of each allocation (what `ok` marks), by start address. */
  private mapped = new Map<number, number>()
  /** Starts of launch-internal allocations (allocInternal). */
  private internal = new Set<number>()
  private freeList: Array<{ at: number; size: number }> = []
  /** Requested byte length of each allocation, by start address (sanitizer: exact bounds). */
  private readonly exact = new Map<number, number>()
  /** One byte per heap byte, 1 once written (initcheck); undefined unless tracking was enabled. */
  init: Uint8Array | undefined
  /** Freed allocations held back from reuse (sanitizer), oldest first, with their requested size. */
  private quarantine: Array<{ at: number; span: number; size: number }> | undefined
  private quarantined = 0

  constructor(initial = 1 << 24, readonly limit = 2 ** 31, options: HeapOptions = {}) {
    if (limit > 2 ** 32) throw new RangeError(`memoryLimit: at most 4 GiB (2^32 bytes: 32-bit device addresses), got ${limit}`)
    if (initial > limit) initial = limit
    this.shared = options.shared === true
    const wasm = (options.wasm ?? true) && wasmMemoryUnavailable(this.shared) === undefined
    if (wasm) {
      // whole pages: the memory's length is a multiple of 64 KiB, the limit rounded down to one
      initial = Math.max(PAGE, Math.ceil(initial / PAGE) * PAGE)
      const maximum = Math.max(1, Math.floor(limit / PAGE))
      if (initial > maximum * PAGE) initial = maximum * PAGE
      this.memory = new WebAssembly.Memory({ initial: initial / PAGE, maximum, shared: this.shared } as WebAssembly.MemoryDescriptor)
      this.buffer = this.memory.buffer as ArrayBuffer
    } else {
      this.memory = undefined
      this.buffer = this.shared ? newSharedBuffer(initial, limit) : new ArrayBuffer(initial)
    }
    this.ok = this.shared ? new Uint8Array(newSharedBuffer(initial >>> 2, Math.ceil(limit / 4)), 0, initial >>> 2) : new Uint8Array(initial >>> 2)
  }

  /** Starts the sanitizer's bookkeeping: written-bytes tracking (memory allocated so far counts as written)
   *  and the quarantine of freed allocations. */
  enableSanitizer(trackInit: boolean): void {
    if (trackInit && !this.init) this.init = new Uint8Array(this.buffer.byteLength).fill(1)
    this.quarantine ??= []
  }

  /** Marks [at, at+n) written (host copies, memsets, initializers; the sanitizer marks device stores). */
  markWritten(at: number, n: number): void {
    this.init?.fill(1, at, at + n)
  }

  alloc(byteLength: number): number {
    const at = this.reserve(byteLength)
    this.ok.fill(1, at >>> 2, (at + this.mapped.get(at)!) >>> 2)
    return at
  }

  /** Memory of a launch (shared, local, parameters): zeroed like an allocation, never mapped for global
   *  accesses. Freed with free(). */
  allocInternal(byteLength: number): number {
    const at = this.reserve(byteLength)
    this.mapped.delete(at)
    this.internal.add(at)
    return at
  }

  /** The user allocation (or module variable) nearest to `address`: the one containing it, else the
   *  closest by distance to its mapped bytes (for fault messages). */
  nearest(address: number): { start: number; end: number } | undefined {
    let best: { start: number; end: number } | undefined
    let dist = Infinity
    for (const [at, size] of this.mapped) {
      const d = address < at ? at - address : address >= at + size ? address - (at + size) + 1 : 0
      if (d < dist) { dist = d; best = { start: at, end: at + size } }
    }
    return best
  }

  private reserve(byteLength: number): number {
    if (!Number.isInteger(byteLength) || byteLength < 0) throw new RangeError(`alloc: byte length must be a non-negative integer, got ${byteLength}`)
    const size = Math.max(4, Math.ceil(byteLength / 4) * 4)
    const span = Math.ceil((size + 4) / ALIGN) * ALIGN
    let at = -1
    for (let i = 0; i < this.freeList.length; i++) {
      const f = this.freeList[i]!
      if (f.size >= span) {
        at = f.at
        if (f.size === span) this.freeList.splice(i, 1)
        else { f.at += span; f.size -= span }
        break
      }
    }
    if (at < 0) {
      at = this.top
      this.ensure(at + span)
      this.top = at + span
    }
    this.live.set(at, span)
    this.mapped.set(at, size)
    this.exact.set(at, byteLength)
    new Uint8Array(this.buffer, at, span).fill(0)
    this.init?.fill(0, at, at + span)
    return at
  }

  /** Frees an allocation (`internal`: one of allocInternal's, which a user's free never reaches). With the
   *  sanitizer on, a user allocation goes to the quarantine; the launch's own regions (shared, local,
   *  frames) are released at once, as no user pointer can reach them after the launch. */
  free(at: number, internal = false): void {
    const span = this.live.get(at)
    if (span === undefined || this.internal.has(at) !== internal) throw new RangeError(`free: 0x${at.toString(16)} is not an allocation of this device`)
    const size = this.exact.get(at)!
    this.live.delete(at)
    this.mapped.delete(at)
    this.internal.delete(at)
    this.exact.delete(at)
    // a launch's own region was never mapped (allocInternal): its words of `ok` are 0 already
    if (!internal) this.ok.fill(0, at >>> 2, (at + span) >>> 2)
    if (this.quarantine && !internal) {
      // held back: the next allocations get other addresses, so an access through a stale pointer faults
      this.quarantine.push({ at, span, size })
      this.quarantined += span
      while (this.quarantined > QUARANTINE_BYTES && this.quarantine.length > 1) {
        const q = this.quarantine.shift()!
        this.quarantined -= q.span
        this.release(q.at, q.span)
      }
      return
    }
    this.release(at, span)
  }

  private release(at: number, span: number): void {
    if (at + span === this.top) { this.top = at; this.mergeTop(); return }
    this.freeList.push({ at, size: span })
    this.freeList.sort((a, b) => a.at - b.at)
    // coalesce neighbours
    for (let i = 0; i + 1 < this.freeList.length;) {
      const a = this.freeList[i]!, b = this.freeList[i + 1]!
      if (a.at + a.size === b.at) { a.size += b.size; this.freeList.splice(i + 1, 1) } else i++
    }
    this.mergeTop()
  }

  private mergeTop(): void {
    for (;;) {
      const last = this.freeList[this.freeList.length - 1]
      if (last && last.at + last.size === this.top) { this.top = last.at; this.freeList.pop() } else break
    }
  }

  /** Size of the allocation starting at `at`, or undefined. */
  sizeOf(at: number): number | undefined { return this.live.get(at) }

  /** Every live allocation as [start, requested byte length], sorted by start (the sanitizer's exact bounds). */
  allocations(): Array<[number, number]> {
    return [...this.exact].sort((a, b) => a[0] - b[0])
  }

  /** The quarantined (freed) allocation holding `a`, with its requested size; undefined when none does. */
  freedAt(a: number): { at: number; size: number } | undefined {
    for (let i = (this.quarantine?.length ?? 0) - 1; i >= 0; i--) {
      const q = this.quarantine![i]!
      if (a >= q.at && a < q.at + q.span) return { at: q.at, size: q.size }
    }
    return undefined
  }

  /** The mapped range of every allocation as sorted [start, end) pairs: exactly the granules `ok` marks,
   *  so a kernel may test an address against one of them instead of reading `ok` (compile.ts, addr()). */
  ranges(): Float64Array {
    const starts = [...this.mapped.keys()].sort((a, b) => a - b)
    const out = new Float64Array(starts.length * 2)
    starts.forEach((at, i) => { out[2 * i] = at; out[2 * i + 1] = at + this.mapped.get(at)! })
    return out
  }

  /** Checks that [at, at+n) lies inside mapped memory (for host copies). */
  check(at: number, n: number, what: string): void {
    if (!Number.isSafeInteger(at) || at < 0 || at + n > this.buffer.byteLength) throw new RangeError(`${what}: range 0x${at.toString(16)}+${n} is outside device memory`)
    if (n === 0) return
    for (let g = at >>> 2; g <= (at + n - 1) >>> 2; g++) {
      if (this.ok[g] !== 1) throw new RangeError(`${what}: range 0x${at.toString(16)}+${n} is not inside one allocation (0x${(g * 4).toString(16)} is unmapped)`)
    }
  }

  private ensure(end: number): void {
    if (end <= this.buffer.byteLength) return
    let cap = this.buffer.byteLength
    while (cap < end) cap *= 2
    const limit = this.memory ? Math.floor(this.limit / PAGE) * PAGE : this.limit
    if (cap > limit) {
      if (end > limit) throw new RangeError(`out of emulated device memory: need ${end} bytes, the limit is ${this.limit}`)
      cap = limit
    }
    if (this.memory) {
      // in place (a shared memory: running workers keep valid, shorter views; otherwise the old buffer is
      // detached and every view is made again after the generation change)
      this.memory.grow((cap - this.buffer.byteLength) / PAGE)
      this.buffer = this.memory.buffer as ArrayBuffer
    }
    if (this.shared) {
      if (!this.memory) (this.buffer as GrowableSharedArrayBuffer).grow(cap)
      const okBuffer = this.ok.buffer as GrowableSharedArrayBuffer
      okBuffer.grow(cap >>> 2)
      this.ok = new Uint8Array(okBuffer, 0, cap >>> 2)
    } else {
      if (!this.memory) {
        const nb = new ArrayBuffer(cap)
        new Uint8Array(nb).set(new Uint8Array(this.buffer))
        this.buffer = nb
      }
      const ok = new Uint8Array(cap >>> 2)
      ok.set(this.ok)
      this.ok = ok
    }
    if (this.init) {
      const init = new Uint8Array(cap)
      init.set(this.init)
      this.init = init
    }
    this.generation++
  }
}
