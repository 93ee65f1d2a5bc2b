// LLVM's `StringTableBuilder(StringTableBuilder::ELF)` with `finalize()` (llvm/lib/MC/StringTableBuilder.cpp):
// a leading NUL, then every distinct string once, NUL-terminated, sorted by their reversed bytes in
// descending order (the three-way radix sort yields exactly that total order), and a string that is a
// suffix of the one placed before it shares its bytes (tail merging). The empty string is offset 0.

export interface StringTable {
  /** The table bytes (size = what LLVM's getSize() returns; no padding). */
  bytes: Uint8Array
  /** Offset of each string within the table. */
  offsets: Map<string, number>
}

/** Descending by bytes read from the end; a string that is a suffix of another sorts after it. */
function compareReversedDescending(a: Uint8Array, b: Uint8Array): number {
  for (let i = 1; ; i++) {
    const ca = i <= a.length ? a[a.length - i]! : -1
    const cb = i <= b.length ? b[b.length - i]! : -1
    if (ca !== cb) return cb - ca
    if (ca === -1) return 0
  }
}

function endsWith(s: Uint8Array, suffix: Uint8Array): boolean {
  if (suffix.length > s.length) return false
  for (let i = 1; i <= suffix.length; i++) if (s[s.length - i] !== suffix[suffix.length - i]) return false
  return true
}

export function buildStringTable(strings: Iterable<string>): StringTable {
  const encoder = new TextEncoder()
  const unique = new Map<string, Uint8Array>()
  for (const s of strings) if (!unique.has(s)) unique.set(s, encoder.encode(s))
  const sorted = [...unique.entries()].sort((x, y) => compareReversedDescending(x[1], y[1]))
  const offsets = new Map<string, number>()
  let size = 1
  let previous: Uint8Array = new Uint8Array(0)
  const placed: [number, Uint8Array][] = []
  for (const [text, bytes] of sorted) {
    if (endsWith(previous, bytes)) {
      offsets.set(text, size - bytes.length - 1)
      continue
    }
    offsets.set(text, size)
    placed.push([size, bytes])
    size += bytes.length + 1
    previous = bytes
  }
  // finalizeStringTable maps "" to the leading NUL whatever the sort did.
  offsets.set('', 0)
  const out = new Uint8Array(size)
  for (const [at, bytes] of placed) out.set(bytes, at)
  return { bytes: out, offsets }
}
