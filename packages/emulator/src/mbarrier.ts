// The mbarrier object (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"): a
// 64-bit object in shared memory that counts arrivals per phase. Its layout is opaque to programs; the
// emulator keeps, at word index i of the heap's Int32Array, the pending arrivals of the current phase (word
// i) and the expected arrivals per phase with the phase's parity in bit 31 (word i + 1). The state an
// arrive returns (also opaque) is the phase it arrived in, times 2^32, plus the pending count after it.
// Transaction counts (expect_tx/complete_tx) belong to the bulk copies (TMA), which the emulator refuses.

const PHASE = 0x80000000

/** mbarrier.init: `count` expected arrivals, phase 0. */
export function mbarInit(H: Int32Array, i: number, count: number): void {
  const c = count & 0x7fffffff
  H[i] = c
  H[i + 1] = c
}

/** mbarrier.arrive{_drop} with `count` arrivals: the phase completes when no arrival is pending (the
 *  parity flips and the pending count starts again at the expected count; arrive_drop lowers that for
 *  the phases after this one). Returns the state. */
export function mbarArrive(H: Int32Array, i: number, count: number, drop: boolean): number {
  let pending = H[i]! - count
  const word = H[i + 1]! >>> 0
  let expected = word & 0x7fffffff
  let phase = word >>> 31
  if (drop) expected = Math.max(0, expected - count)
  const state = phase * 4294967296 + (pending >>> 0)
  if (pending <= 0) {
    phase ^= 1
    pending = expected
  }
  H[i] = pending
  H[i + 1] = ((phase ? PHASE : 0) | expected) | 0
  return state
}

/** mbarrier.test_wait/try_wait with a state: has the phase the state was taken in completed? */
export function mbarTestWait(H: Int32Array, i: number, state: number | bigint): boolean {
  const phase = Number(BigInt.asUintN(64, BigInt(state)) >> 32n) & 1
  return (H[i + 1]! >>> 31) !== phase
}

/** mbarrier.test_wait/try_wait.parity: has the phase of parity `parity` completed (the current phase has
 *  the other parity)? */
export function mbarTestParity(H: Int32Array, i: number, parity: number): boolean {
  return (H[i + 1]! >>> 31) !== (parity & 1)
}

/** mbarrier.pending_count: the pending arrivals recorded in a state. */
export function mbarPending(state: number | bigint): number {
  return Number(BigInt.asUintN(32, BigInt(state))) | 0
}
