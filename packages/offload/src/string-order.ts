// The order in which llvm-offload-binary (LLVM 22) lists an image's strings. It parses
// `--image=k=v,…` into a `DenseMap<StringRef, StringRef>` and copies it, in bucket order, into the
// image's `MapVector` (llvm-offload-binary.cpp, `getImageArguments`/`bundleImages`). So the order is
// DenseMap iteration order: buckets indexed by the low bits of `hash_value(StringRef)`, quadratic
// probing, 64 buckets to start, doubling when 3/4 full (llvm/ADT/DenseMap.h). The hash is LLVM 22's
// `hash_combine_range` over the bytes (llvm/ADT/Hashing.h: CityHash-derived, fixed seed
// 0xff51afd7ed558ccd in release builds, truncated to 32 bits by DenseMapInfo<StringRef>). The
// differential test against llvm-offload-binary checks all of this.

const M64 = (1n << 64n) - 1n
const K0 = 0xc3a5c85c97cb3127n
const K1 = 0xb492b66fbe98f273n
const K2 = 0x9ae16a3b2f90404fn
const K3 = 0xc949d7c7509e6557n
const SEED = 0xff51afd7ed558ccdn

function fetch64(s: Uint8Array, p: number): bigint {
  let v = 0n
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(s[p + i]!)
  return v
}
function fetch32(s: Uint8Array, p: number): bigint {
  return BigInt((s[p]! | (s[p + 1]! << 8) | (s[p + 2]! << 16) | (s[p + 3]! << 24)) >>> 0)
}
const add = (...xs: bigint[]): bigint => xs.reduce((a, b) => a + b, 0n) & M64
const mul = (a: bigint, b: bigint): bigint => (a * b) & M64
function rotr(v: bigint, n: number): bigint {
  if (n === 0) return v
  const s = BigInt(n)
  return ((v >> s) | (v << (64n - s))) & M64
}
const shiftMix = (v: bigint): bigint => v ^ (v >> 47n)

function hash16(low: bigint, high: bigint): bigint {
  const kMul = 0x9ddfea08eb382d69n
  let a = mul(low ^ high, kMul)
  a ^= a >> 47n
  let b = mul(high ^ a, kMul)
  b ^= b >> 47n
  return mul(b, kMul)
}

function hashShort(s: Uint8Array, len: number, seed: bigint): bigint {
  const L = BigInt(len)
  if (len >= 4 && len <= 8) {
    const a = fetch32(s, 0)
    return hash16(add(L, a << 3n), seed ^ fetch32(s, len - 4))
  }
  if (len > 8 && len <= 16) {
    const a = fetch64(s, 0)
    const b = fetch64(s, len - 8)
    return hash16(seed ^ a, rotr(add(b, L), len)) ^ b
  }
  if (len > 16 && len <= 32) {
    const a = mul(fetch64(s, 0), K1)
    const b = fetch64(s, 8)
    const c = mul(fetch64(s, len - 8), K2)
    const d = mul(fetch64(s, len - 16), K0)
    return hash16(add(rotr((a - b) & M64, 43), rotr(c ^ seed, 30), d), (add(a, rotr(b ^ K3, 20), L, seed) - c) & M64)
  }
  if (len > 32) {
    let z = fetch64(s, 24)
    let a = add(fetch64(s, 0), mul(add(L, fetch64(s, len - 16)), K0))
    let b = rotr(add(a, z), 52)
    let c = rotr(a, 37)
    a = add(a, fetch64(s, 8))
    c = add(c, rotr(a, 7))
    a = add(a, fetch64(s, 16))
    const vf = add(a, z)
    const vs = add(b, rotr(a, 31), c)
    a = add(fetch64(s, 16), fetch64(s, len - 32))
    z = fetch64(s, len - 8)
    b = rotr(add(a, z), 52)
    c = rotr(a, 37)
    a = add(a, fetch64(s, len - 24))
    c = add(c, rotr(a, 7))
    a = add(a, fetch64(s, len - 16))
    const wf = add(a, z)
    const ws = add(b, rotr(a, 31), c)
    const r = shiftMix(add(mul(add(vf, ws), K2), mul(add(wf, vs), K0)))
    return mul(shiftMix(add(seed ^ mul(r, K0), vs)), K2)
  }
  if (len !== 0) {
    const a = BigInt(s[0]!)
    const b = BigInt(s[len >> 1]!)
    const c = BigInt(s[len - 1]!)
    const y = a + (b << 8n)
    const z = L + (c << 2n)
    return mul(shiftMix(mul(y, K2) ^ mul(z, K3) ^ seed), K2)
  }
  return K2 ^ seed
}

/** hash_state of Hashing.h, for byte ranges longer than 64. */
function hashLong(s: Uint8Array, len: number, seed: bigint): bigint {
  const st = { h0: 0n, h1: seed, h2: hash16(seed, K1), h3: rotr(seed ^ K1, 49), h4: mul(seed, K1), h5: shiftMix(seed), h6: 0n }
  st.h6 = hash16(st.h4, st.h5)
  const mix32 = (p: number, a: bigint, b: bigint): [bigint, bigint] => {
    a = add(a, fetch64(s, p))
    const c = fetch64(s, p + 24)
    b = rotr(add(b, a, c), 21)
    const d = a
    a = add(a, fetch64(s, p + 8), fetch64(s, p + 16))
    b = add(b, rotr(a, 44), d)
    a = add(a, c)
    return [a, b]
  }
  const mix = (p: number): void => {
    st.h0 = mul(rotr(add(st.h0, st.h1, st.h3, fetch64(s, p + 8)), 37), K1)
    st.h1 = mul(rotr(add(st.h1, st.h4, fetch64(s, p + 48)), 42), K1)
    st.h0 ^= st.h6
    st.h1 = add(st.h1, st.h3, fetch64(s, p + 40))
    st.h2 = mul(rotr(add(st.h2, st.h5), 33), K1)
    st.h3 = mul(st.h4, K1)
    st.h4 = add(st.h0, st.h5)
    ;[st.h3, st.h4] = mix32(p, st.h3, st.h4)
    st.h5 = add(st.h2, st.h6)
    st.h6 = add(st.h1, fetch64(s, p + 16))
    ;[st.h5, st.h6] = mix32(p + 32, st.h5, st.h6)
    ;[st.h0, st.h2] = [st.h2, st.h0]
  }
  mix(0)
  const alignedEnd = len & ~63
  for (let p = 64; p < alignedEnd; p += 64) mix(p)
  if (len & 63) mix(len - 64)
  const L = BigInt(len)
  return hash16(add(hash16(st.h3, st.h5), mul(shiftMix(st.h1), K1), st.h2), add(hash16(st.h4, st.h6), mul(shiftMix(L), K1), st.h0))
}

/** `DenseMapInfo<StringRef>::getHashValue` of LLVM 22 (release build): 32 bits. */
export function hashStringRef(text: string): number {
  const s = new TextEncoder().encode(text)
  const h = s.length <= 64 ? hashShort(s, s.length, SEED) : hashLong(s, s.length, SEED)
  return Number(h & 0xffffffffn)
}

/**
 * The iteration order of an LLVM `DenseMap<StringRef, …>` after inserting `keys` in the given order
 * (duplicates are ignored, as `try_emplace` does). No erasure happens, so there are no tombstones.
 */
export function orderKeysLikeLLVM(keys: Iterable<string>): string[] {
  let buckets: (string | undefined)[] = []
  let count = 0
  const place = (table: (string | undefined)[], key: string, hash: number): boolean => {
    const mask = table.length - 1
    let i = hash & mask
    let probe = 1
    for (;;) {
      const k = table[i]
      if (k === undefined) {
        table[i] = key
        return true
      }
      if (k === key) return false
      i = (i + probe++) & mask
    }
  }
  const hashes = new Map<string, number>()
  const hashOf = (k: string): number => {
    let h = hashes.get(k)
    if (h === undefined) hashes.set(k, (h = hashStringRef(k)))
    return h
  }
  const grow = (atLeast: number): void => {
    // DenseMap::grow: max(64, NextPowerOf2(AtLeast - 1)); re-inserts the old buckets in index order.
    let n = 64
    while (n <= atLeast - 1) n *= 2
    const next: (string | undefined)[] = new Array(n).fill(undefined)
    for (const k of buckets) if (k !== undefined) place(next, k, hashOf(k))
    buckets = next
  }
  for (const key of keys) {
    if (buckets.length > 0) {
      // Look the key up first: an existing key grows nothing.
      const mask = buckets.length - 1
      let i = hashOf(key) & mask
      let probe = 1
      let found = false
      while (buckets[i] !== undefined) {
        if (buckets[i] === key) { found = true; break }
        i = (i + probe++) & mask
      }
      if (found) continue
    }
    // InsertIntoBucketImpl: grow when the new count would make the table 3/4 full.
    const n = buckets.length
    if ((count + 1) * 4 >= n * 3) grow(n * 2)
    else if (n - (count + 1) <= n / 8) grow(n)
    place(buckets, key, hashOf(key))
    count++
  }
  return buckets.filter((k): k is string => k !== undefined)
}
