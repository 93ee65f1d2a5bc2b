// Address bookkeeping of the arena (README.md, "Pointer model"): device addresses are byte offsets into one
// storage buffer; this class hands out [start, start + size) ranges first-fit from a sorted free list,
// 256-byte aligned, above the reserved first 4 KiB, and never past `limit`. It knows nothing of GPU buffers:
// the backend grows the buffer to `top` before it uses a new range.
import { ALLOC_ALIGN, RESERVED_BYTES } from './layout.js'

export class ArenaAllocator {
  /** End of the highest range ever handed out and not given back at the top. */
  top = RESERVED_BYTES
  private readonly live = new Map<number, number>()
  private readonly freeList: Array<{ at: number; size: number }> = []

  constructor(readonly limit: number) {}

  /** Start of a new range of `byteLength` bytes (at least one granule, so every allocation has an address of
   *  its own), or a RangeError naming the limit. */
  alloc(byteLength: number): number {
    if (!Number.isSafeInteger(byteLength) || byteLength < 0) throw new RangeError(`alloc: byte length must be a non-negative integer, got ${byteLength}`)
    const span = Math.max(ALLOC_ALIGN, Math.ceil(byteLength / ALLOC_ALIGN) * ALLOC_ALIGN)
    for (let i = 0; i < this.freeList.length; i++) {
      const f = this.freeList[i]!
      if (f.size < span) continue
      const at = f.at
      if (f.size === span) this.freeList.splice(i, 1)
      else { f.at += span; f.size -= span }
      this.live.set(at, span)
      return at
    }
    if (this.top + span > this.limit) {
      throw new RangeError(`alloc: out of WebGPU device memory: ${byteLength} bytes do not fit (${this.top - RESERVED_BYTES} bytes in use or fragmented, the arena may not exceed ${this.limit} bytes)`)
    }
    const at = this.top
    this.top += span
    this.live.set(at, span)
    return at
  }

  free(at: number): void {
    const span = this.live.get(at)
    if (span === undefined) throw new RangeError(`free: 0x${at.toString(16)} is not an allocation of this device`)
    this.live.delete(at)
    let i = 0
    while (i < this.freeList.length && this.freeList[i]!.at < at) i++
    this.freeList.splice(i, 0, { at, size: span })
    // coalesce with the neighbours, then give a free tail back to `top`
    if (i + 1 < this.freeList.length && at + span === this.freeList[i + 1]!.at) {
      this.freeList[i]!.size += this.freeList[i + 1]!.size
      this.freeList.splice(i + 1, 1)
    }
    if (i > 0 && this.freeList[i - 1]!.at + this.freeList[i - 1]!.size === at) {
      this.freeList[i - 1]!.size += this.freeList[i]!.size
      this.freeList.splice(i, 1)
    }
    const last = this.freeList[this.freeList.length - 1]
    if (last && last.at + last.size === this.top) {
      this.top = last.at
      this.freeList.pop()
    }
  }

  /** Bytes reserved for the allocation starting at `at` (a multiple of 256), or undefined. */
  spanOf(at: number): number | undefined {
    return this.live.get(at)
  }

  /** True when [at, at + n) lies inside one live allocation (its 256-byte span). */
  contains(at: number, n: number): boolean {
    // live allocations are few in tests and apps; a scan keeps this class trivially correct
    for (const [start, span] of this.live) if (at >= start && at + n <= start + span) return true
    return false
  }
}
