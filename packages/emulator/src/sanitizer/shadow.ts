// racecheck's shadow memory (checker.ts): per byte of device memory touched by a checked launch, the last
// writer and two readers of the current barrier interval. Kept in 4 KiB pages created on first touch, so a
// launch pays for the memory it uses, not for the heap. A page is nine Int32 planes of 4096 entries:
//   0 writer stamp, 1 writer's warp clock, 2 writer's instruction (| ATOMIC),
//   3 reader stamp, 4 reader's clock, 5 reader's instruction, 6–8 a second reader (another thread than 3).
// A stamp is `epoch << 10 | thread` (0: none), so an entry of an earlier interval is recognised by its epoch
// and never has to be cleared; the epoch counter wraps at EPOCH_LIMIT, which clears every page.
// Two readers suffice to know whether a thread other than the writer read the byte in this interval.

/** Instruction-plane flag: the access was an atomic. */
export const ATOMIC = 1 << 30
/** Epochs fit in the 21 bits above the thread index (1024 threads per block at most). */
export const EPOCH_LIMIT = 1 << 21
const PAGE = 4096

export class RaceShadow {
  private pages: Array<Int32Array | undefined> = []

  /** The page holding byte x (created zeroed on first use). */
  page(x: number): Int32Array {
    const k = x >>> 12
    let p = this.pages[k]
    if (!p) { p = new Int32Array(9 * PAGE); this.pages[k] = p }
    return p
  }

  clear(): void {
    for (const p of this.pages) p?.fill(0)
  }
}
