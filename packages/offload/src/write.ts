// Encoder for LLVM offload binaries. Version 1 (the default) reproduces LLVM 22's
// `OffloadBinary::write` byte for byte: header, entry, string entries, the tail-merged ELF string
// table, zero padding to 8, the image, zero padding to 8. llvm-offload-binary writes one such binary
// per image and concatenates them. Version 3 follows LLVM main: one binary, all entries, 24-byte
// string entries with the value size, optionally a zlib- or zstd-compressed body.
import {
  ALIGNMENT, E_FLAGS, E_IMAGE_KIND, E_IMAGE_OFFSET, E_IMAGE_SIZE, E_NUM_STRINGS, E_OFFLOAD_KIND, E_STRING_OFFSET,
  ENTRY_SIZE, H_ENTRIES_OFFSET, H_ENTRY_SIZE_OR_COUNT, H_INFLATED_SIZE, H_SIZE, H_VERSION, HEADER_SIZE_V1,
  HEADER_SIZE_V3, MAGIC, STRING_ENTRY_SIZE_V1, STRING_ENTRY_SIZE_V2, alignTo,
} from './layout.js'
import { getCodecs } from './read.js'
import { buildStringTable } from './string-table.js'
import { orderKeysLikeLLVM } from './string-order.js'
import type { OffloadEntryInput } from './types.js'

export interface WriteOptions {
  /** 1: one binary per entry, concatenated (LLVM 22, llvm-offload-binary). 3: one binary (LLVM main). @default 1 */
  version?: 1 | 3
  /** Body compression, version 3 only. zstd frames are written with stored (raw) blocks. @default 'none' */
  compression?: 'none' | 'zlib' | 'zstd'
  /** zlib level 0-9. @default 6 */
  level?: number
}

/** Entry metadata without the image bytes: what the header region of a binary depends on. */
export interface EntryMeta {
  imageKind: number
  offloadKind: number
  flags?: number
  strings: Map<string, string> | Record<string, string>
}

/**
 * The key/value pairs in the order they are written. A Map keeps its order (so decoded binaries
 * write back identically). A plain object is unordered by intent and gets llvm-offload-binary's
 * order for an image argument `file=…,<keys…>,kind=…` (see string-order.ts), so that
 * `writeOffloadBinary({ …, strings: { triple, arch } })` matches the tool byte for byte.
 */
export function orderedStrings(strings: Map<string, string> | Record<string, string>): [string, string][] {
  if (strings instanceof Map) return [...strings]
  const keys = Object.keys(strings)
  const order = orderKeysLikeLLVM(['file', ...keys, 'kind'])
  return order.filter((k) => Object.hasOwn(strings, k)).map((k) => [k, strings[k]!])
}

function checkString(s: string, what: string): void {
  if (typeof s !== 'string') throw new TypeError(`offload binary ${what} must be a string, got ${typeof s}`)
  if (s.includes('\0')) throw new TypeError(`offload binary ${what} ${JSON.stringify(s)} contains a NUL byte, which the format cannot store`)
}

function checkMeta(e: EntryMeta, i: number): [string, string][] {
  for (const [name, v, max] of [['imageKind', e.imageKind, 0xffff], ['offloadKind', e.offloadKind, 0xffff], ['flags', e.flags ?? 0, 0xffffffff]] as const) {
    if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`entry ${i}: ${name} ${v} is not an integer in 0..${max}`)
  }
  const pairs = orderedStrings(e.strings)
  for (const [k, v] of pairs) {
    checkString(k, `entry ${i} key`)
    checkString(v, `entry ${i} value of ${JSON.stringify(k)}`)
  }
  return pairs
}

const encoder = new TextEncoder()

export interface BinaryPrefix {
  /** Header, entry, string entries, string table and padding: everything before the image. */
  prefix: Uint8Array
  /** Total size of the binary (prefix + image + tail padding). */
  size: number
}

/**
 * The bytes of a version-1 binary that precede the image, for an image of `imageSize` bytes. Lets a
 * caller stream a large image instead of holding it (the CLI's pack does); `writeOffloadBinary` uses it too.
 */
export function encodeV1Prefix(meta: EntryMeta, imageSize: number, index = 0): BinaryPrefix {
  const pairs = checkMeta(meta, index)
  const table = buildStringTable(pairs.flatMap(([k, v]) => [k, v]))
  const stringsAt = HEADER_SIZE_V1 + ENTRY_SIZE
  const tableAt = stringsAt + STRING_ENTRY_SIZE_V1 * pairs.length
  const imageAt = alignTo(tableAt + table.bytes.length, ALIGNMENT)
  const size = alignTo(imageAt + imageSize, ALIGNMENT)
  const prefix = new Uint8Array(imageAt)
  const v = new DataView(prefix.buffer)
  prefix.set(MAGIC, 0)
  v.setUint32(H_VERSION, 1, true)
  v.setBigUint64(H_SIZE, BigInt(size), true)
  v.setBigUint64(H_ENTRIES_OFFSET, BigInt(HEADER_SIZE_V1), true)
  v.setBigUint64(H_ENTRY_SIZE_OR_COUNT, BigInt(ENTRY_SIZE), true)
  const e = HEADER_SIZE_V1
  v.setUint16(e + E_IMAGE_KIND, meta.imageKind, true)
  v.setUint16(e + E_OFFLOAD_KIND, meta.offloadKind, true)
  v.setUint32(e + E_FLAGS, meta.flags ?? 0, true)
  v.setBigUint64(e + E_STRING_OFFSET, BigInt(stringsAt), true)
  v.setBigUint64(e + E_NUM_STRINGS, BigInt(pairs.length), true)
  v.setBigUint64(e + E_IMAGE_OFFSET, BigInt(imageAt), true)
  v.setBigUint64(e + E_IMAGE_SIZE, BigInt(imageSize), true)
  pairs.forEach(([k, val], j) => {
    v.setBigUint64(stringsAt + j * STRING_ENTRY_SIZE_V1, BigInt(tableAt + table.offsets.get(k)!), true)
    v.setBigUint64(stringsAt + j * STRING_ENTRY_SIZE_V1 + 8, BigInt(tableAt + table.offsets.get(val)!), true)
  })
  prefix.set(table.bytes, tableAt)
  return { prefix, size }
}

function writeV1(entries: OffloadEntryInput[]): Uint8Array {
  const parts = entries.map((e, i) => ({ ...encodeV1Prefix(e, e.image.length, i), image: e.image }))
  const out = new Uint8Array(parts.reduce((n, p) => n + p.size, 0))
  let at = 0
  for (const p of parts) {
    out.set(p.prefix, at)
    out.set(p.image, at + p.prefix.length)
    at += p.size
  }
  return out
}

function writeV3(entries: OffloadEntryInput[]): Uint8Array {
  const all = entries.map((e, i) => checkMeta(e, i))
  const table = buildStringTable(all.flatMap((pairs) => pairs.flatMap(([k, v]) => [k, v])))
  const entriesAt = HEADER_SIZE_V3
  let stringAt = entriesAt + ENTRY_SIZE * entries.length
  const tableAt = stringAt + STRING_ENTRY_SIZE_V2 * all.reduce((n, p) => n + p.length, 0)
  const dataAt = alignTo(tableAt + table.bytes.length, ALIGNMENT)
  const imagesSize = entries.reduce((n, e) => n + e.image.length, 0)
  const size = alignTo(dataAt + imagesSize, ALIGNMENT)
  const out = new Uint8Array(size)
  const v = new DataView(out.buffer)
  out.set(MAGIC, 0)
  v.setUint32(H_VERSION, 3, true)
  v.setBigUint64(H_SIZE, BigInt(size), true)
  v.setBigUint64(H_ENTRIES_OFFSET, BigInt(entriesAt), true)
  v.setBigUint64(H_ENTRY_SIZE_OR_COUNT, BigInt(entries.length), true)
  v.setBigUint64(H_INFLATED_SIZE, 0n, true)
  let imageAt = dataAt
  let s = stringAt
  entries.forEach((e, i) => {
    const at = entriesAt + i * ENTRY_SIZE
    v.setUint16(at + E_IMAGE_KIND, e.imageKind, true)
    v.setUint16(at + E_OFFLOAD_KIND, e.offloadKind, true)
    v.setUint32(at + E_FLAGS, e.flags ?? 0, true)
    v.setBigUint64(at + E_STRING_OFFSET, BigInt(stringAt), true)
    v.setBigUint64(at + E_NUM_STRINGS, BigInt(all[i]!.length), true)
    v.setBigUint64(at + E_IMAGE_OFFSET, BigInt(imageAt), true)
    v.setBigUint64(at + E_IMAGE_SIZE, BigInt(e.image.length), true)
    stringAt += STRING_ENTRY_SIZE_V2 * all[i]!.length
    out.set(e.image, imageAt)
    imageAt += e.image.length
  })
  for (const pairs of all) {
    for (const [k, val] of pairs) {
      v.setBigUint64(s, BigInt(tableAt + table.offsets.get(k)!), true)
      v.setBigUint64(s + 8, BigInt(tableAt + table.offsets.get(val)!), true)
      v.setBigUint64(s + 16, BigInt(encoder.encode(val).length), true)
      s += STRING_ENTRY_SIZE_V2
    }
  }
  out.set(table.bytes, tableAt)
  return out
}

/** A zstd frame (RFC 8878) of stored blocks: valid zstd that every decoder reads, without an encoder. */
export function zstdStored(data: Uint8Array): Uint8Array {
  const MAX_BLOCK = 128 * 1024
  const n = data.length
  // Single-segment frame: Frame_Content_Size is mandatory; pick the smallest field that holds it.
  let fcsFlag: number
  let fcsBytes: number
  if (n < 256) { fcsFlag = 0; fcsBytes = 1 } else if (n < 65536 + 256) { fcsFlag = 1; fcsBytes = 2 } else if (n < 2 ** 32) { fcsFlag = 2; fcsBytes = 4 } else { fcsFlag = 3; fcsBytes = 8 }
  const blocks = Math.max(1, Math.ceil(n / MAX_BLOCK))
  const out = new Uint8Array(4 + 1 + fcsBytes + blocks * 3 + n)
  const v = new DataView(out.buffer)
  out.set([0x28, 0xb5, 0x2f, 0xfd], 0)
  out[4] = (fcsFlag << 6) | (1 << 5)
  if (fcsBytes === 1) out[5] = n
  else if (fcsBytes === 2) v.setUint16(5, n - 256, true)
  else if (fcsBytes === 4) v.setUint32(5, n, true)
  else v.setBigUint64(5, BigInt(n), true)
  let at = 5 + fcsBytes
  for (let b = 0, src = 0; b < blocks; b++) {
    const len = Math.min(MAX_BLOCK, n - src)
    const header = (len << 3) | (0 << 1) | (b === blocks - 1 ? 1 : 0)
    out[at] = header & 0xff
    out[at + 1] = (header >>> 8) & 0xff
    out[at + 2] = (header >>> 16) & 0xff
    out.set(data.subarray(src, src + len), at + 3)
    at += 3 + len
    src += len
  }
  return out
}

/** LLVM main's compressed write: the body after the header compressed, Size = header + compressed, InflatedSize = original size, padded to 8. */
function compressV3(plain: Uint8Array, format: 'zlib' | 'zstd', level: number): Uint8Array {
  const body = plain.subarray(HEADER_SIZE_V3)
  const packed = format === 'zlib' ? getCodecs().zlib(body, level) : zstdStored(body)
  const size = HEADER_SIZE_V3 + packed.length
  const out = new Uint8Array(alignTo(size, ALIGNMENT))
  out.set(plain.subarray(0, HEADER_SIZE_V3), 0)
  out.set(packed, HEADER_SIZE_V3)
  const v = new DataView(out.buffer)
  v.setBigUint64(H_SIZE, BigInt(size), true)
  v.setBigUint64(H_INFLATED_SIZE, BigInt(plain.length), true)
  return out
}

/**
 * Writes offload binaries. Version 1 (default): one complete binary per entry, concatenated, exactly
 * as llvm-offload-binary (LLVM 22) writes them. Version 3: a single binary holding every entry,
 * optionally compressed, as LLVM main writes it.
 */
export function writeOffloadBinary(entries: OffloadEntryInput | OffloadEntryInput[], options: WriteOptions = {}): Uint8Array {
  const list = Array.isArray(entries) ? entries : [entries]
  const version = options.version ?? 1
  const compression = options.compression ?? 'none'
  if (list.length === 0) throw new RangeError('writeOffloadBinary needs at least one entry')
  for (const [i, e] of list.entries()) {
    if (!(e.image instanceof Uint8Array)) throw new TypeError(`entry ${i}: image must be a Uint8Array`)
  }
  if (version === 1) {
    if (compression !== 'none') throw new RangeError(`compression '${compression}' needs version 3; version 1 cannot be compressed`)
    return writeV1(list)
  }
  if (version !== 3) throw new RangeError(`cannot write offload binary version ${String(version)}: use 1 or 3`)
  const plain = writeV3(list)
  if (compression === 'none') return plain
  if (compression !== 'zlib' && compression !== 'zstd') throw new RangeError(`unknown compression '${String(compression)}': use none, zlib or zstd`)
  return compressV3(plain, compression, options.level ?? 6)
}
