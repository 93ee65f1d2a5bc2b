// Decoder for LLVM offload binaries, versions 1 to 3 (layout.ts). Every count, offset and size is
// checked against the bytes that remain before it is used or anything is allocated: malformed input
// gives a DecodeError, input that ends early a RangeError, both with the byte offset.
import {
  ALIGNMENT, E_FLAGS, E_IMAGE_KIND, E_IMAGE_OFFSET, E_IMAGE_SIZE, E_NUM_STRINGS, E_OFFLOAD_KIND, E_STRING_OFFSET,
  ENTRY_SIZE, H_ENTRIES_OFFSET, H_ENTRY_SIZE_OR_COUNT, H_INFLATED_SIZE, H_SIZE, H_VERSION, HEADER_SIZE_V1,
  HEADER_SIZE_V3, MAGIC, MAX_VERSION, STRING_ENTRY_SIZE_V1, STRING_ENTRY_SIZE_V2, alignTo,
} from './layout.js'
import { DecodeError, TruncatedError } from './errors.js'
import type { OffloadBinary, OffloadEntry } from './types.js'

/** Decompressors for version-3 bodies, registered by the package entry (codecs.ts) so that a reader of
 *  uncompressed binaries (the CLI through `@kernelpack/offload/core`) never loads them. */
export interface Codecs {
  /** Inflates a zlib stream into `out` (exactly the expected size); returns the bytes written. */
  unzlib(data: Uint8Array, out: Uint8Array): Uint8Array
  unzstd(data: Uint8Array, out: Uint8Array): Uint8Array
  zlib(data: Uint8Array, level: number): Uint8Array
  /** A compressed v3 binary (`binary`: header and compressed body; `at` its offset in the source, for
   *  errors) inflated into a fresh buffer holding the header (InflatedSize cleared) and the body (inflate.ts). */
  inflate(binary: Uint8Array, at: number, inflatedSize: number, maxInflatedSize: number): Uint8Array
}

let codecs: Codecs | undefined

export function setCodecs(c: Codecs): void {
  codecs = c
}

export function getCodecs(): Codecs {
  // code CODECS_NOT_LOADED: a reader that imports only the core (the browser runtime) loads them then and reads again
  if (!codecs) throw Object.assign(new Error("zlib/zstd support is not loaded: import '@kernelpack/offload' (the package entry registers it), not only '@kernelpack/offload/core'"), { code: 'CODECS_NOT_LOADED' })
  return codecs
}

/** Bounds checked before allocating; each has a default that real binaries never reach. */
export interface DecodeLimits {
  /** Most entries in one binary (v2/v3). @default 65536 */
  maxEntries?: number
  /** Most strings in one entry. @default 65536 */
  maxStrings?: number
  /** Largest inflated size of a compressed (v3) binary, in bytes. @default 1 GiB */
  maxInflatedSize?: number
}

const defaults: Required<DecodeLimits> = { maxEntries: 65536, maxStrings: 65536, maxInflatedSize: 1 << 30 }


/** Thrown internally when a partial window (streaming unpack) lacks bytes the binary declares. */
export class WindowTooSmall extends Error {
  override name = 'WindowTooSmall'
}

interface Source {
  bytes: Uint8Array
  view: DataView
  /** Length of the whole source; bytes may hold only a prefix of it (streaming). */
  length: number
}

function u64(src: Source, at: number): number {
  need(src, at, 8)
  const v = src.view.getBigUint64(at, true)
  // Anything above 2^53 is past every buffer JavaScript can hold; keep it as an unsafe-but-huge number.
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v)
}

function need(src: Source, at: number, n: number): void {
  if (at + n > src.bytes.length) {
    if (at + n <= src.length) throw new WindowTooSmall(`need bytes ${at}..${at + n}`)
    throw new TruncatedError(`offload binary truncated: need ${n} bytes, ${Math.max(0, src.length - at)} left`, at)
  }
}

/** A decoded entry plus where its image lies in the source (absent when it came from a compressed body). */
export interface DecodedEntry extends OffloadEntry {
  /** Absolute offset of the image in the source, when the binary is not compressed. */
  imageOffset?: number
  imageSize: number
}

export interface DecodedBinary extends OffloadBinary {
  entries: DecodedEntry[]
  /** Offset of the next binary (this one's end rounded up to 8). */
  next: number
  compressed: boolean
}

/**
 * Decodes the binary whose header starts at `offset`. `src.length` may exceed `src.bytes.length`
 * (a metadata window of a large file): then image ranges are checked against the whole length and
 * images past the window come back empty with their `imageOffset`; anything else past it throws
 * WindowTooSmall.
 */
export function decodeBinaryAt(src: Source, offset: number, limits: DecodeLimits = {}): DecodedBinary {
  const lim = { ...defaults, ...limits }
  const remaining = src.length - offset
  need(src, offset, 4)
  for (let i = 0; i < 4; i++) {
    if (src.bytes[offset + i] !== MAGIC[i]) {
      throw new DecodeError(`not an offload binary: bad magic ${hex(src.bytes.subarray(offset, offset + 4))}, expected 10 ff 10 ad`, offset)
    }
  }
  need(src, offset, 8)
  const version = src.view.getUint32(offset + H_VERSION, true)
  if (version === 0 || version > MAX_VERSION) {
    throw new DecodeError(`unsupported offload binary version ${version} (this reader knows 1 to ${MAX_VERSION})`, offset + H_VERSION)
  }
  const headerSize = version >= 3 ? HEADER_SIZE_V3 : HEADER_SIZE_V1
  need(src, offset, headerSize)
  const size = u64(src, offset + H_SIZE)
  if (size < headerSize) throw new DecodeError(`header size field ${size} is smaller than the ${headerSize}-byte header`, offset + H_SIZE)
  if (size > remaining) {
    throw new TruncatedError(`offload binary truncated: header says ${size} bytes, ${remaining} left`, offset + H_SIZE)
  }
  const entriesOffset = u64(src, offset + H_ENTRIES_OFFSET)
  const inflatedSize = version >= 3 ? u64(src, offset + H_INFLATED_SIZE) : 0
  const next = alignTo(offset + size, ALIGNMENT)

  if (inflatedSize !== 0) {
    const body = inflate(src, offset, size, entriesOffset, inflatedSize, lim)
    let inner: DecodedBinary
    try {
      inner = decodeBinaryAt({ bytes: body, view: viewOf(body), length: body.length }, 0, limits)
    } catch (err) {
      // Offsets inside the inflated body do not exist in the input: name them in the message and
      // point the error at the compressed body.
      if (!(err instanceof DecodeError) && !(err instanceof RangeError)) throw err
      const inside = (err as { offset?: number }).offset
      const why = err.message.replace(/ \(at byte offset \d+\)$/, '')
      throw new DecodeError(`compressed binary: inflated body is malformed: ${why} (inflated offset ${inside})`, offset + entriesOffset)
    }
    for (const e of inner.entries) delete e.imageOffset
    return { ...inner, offset, size, next, compressed: true }
  }

  let count: number
  if (version === 1) {
    // v1 holds one entry; its declared size must at least cover the 40-byte Entry.
    const entrySize = u64(src, offset + H_ENTRY_SIZE_OR_COUNT)
    if (entrySize < ENTRY_SIZE) throw new DecodeError(`entry size ${entrySize} is smaller than the ${ENTRY_SIZE}-byte entry`, offset + H_ENTRY_SIZE_OR_COUNT)
    count = 1
  } else {
    count = u64(src, offset + H_ENTRY_SIZE_OR_COUNT)
    if (count > lim.maxEntries) throw new DecodeError(`entry count ${count} exceeds the limit of ${lim.maxEntries}`, offset + H_ENTRY_SIZE_OR_COUNT)
  }
  if (entriesOffset < headerSize || entriesOffset > size || count > Math.floor((size - entriesOffset) / ENTRY_SIZE)) {
    throw new DecodeError(`entry table (${count} × ${ENTRY_SIZE} bytes at ${entriesOffset}) lies outside the ${size}-byte binary`, offset + H_ENTRIES_OFFSET)
  }
  const tableEnd = entriesOffset + count * ENTRY_SIZE
  const stringEntrySize = version === 1 ? STRING_ENTRY_SIZE_V1 : STRING_ENTRY_SIZE_V2
  const entries: DecodedEntry[] = []
  for (let i = 0; i < count; i++) {
    const at = offset + entriesOffset + i * ENTRY_SIZE
    need(src, at, ENTRY_SIZE)
    const imageKind = src.view.getUint16(at + E_IMAGE_KIND, true)
    const offloadKind = src.view.getUint16(at + E_OFFLOAD_KIND, true)
    const flags = src.view.getUint32(at + E_FLAGS, true)
    const stringOffset = u64(src, at + E_STRING_OFFSET)
    const numStrings = u64(src, at + E_NUM_STRINGS)
    const imageOffset = u64(src, at + E_IMAGE_OFFSET)
    const imageSize = u64(src, at + E_IMAGE_SIZE)
    if (numStrings > lim.maxStrings) throw new DecodeError(`string count ${numStrings} exceeds the limit of ${lim.maxStrings}`, at + E_NUM_STRINGS)
    if (stringOffset > size || numStrings > Math.floor((size - stringOffset) / stringEntrySize)) {
      throw new DecodeError(`string entries (${numStrings} × ${stringEntrySize} bytes at ${stringOffset}) lie outside the ${size}-byte binary`, at + E_STRING_OFFSET)
    }
    if (numStrings > 0 && stringOffset < tableEnd && stringOffset + numStrings * stringEntrySize > entriesOffset) {
      throw new DecodeError(`string entries at ${stringOffset} overlap the entry table`, at + E_STRING_OFFSET)
    }
    if (imageOffset > size || imageSize > size - imageOffset) {
      throw new DecodeError(`image (${imageSize} bytes at ${imageOffset}) lies outside the ${size}-byte binary`, at + E_IMAGE_OFFSET)
    }
    if (imageSize > 0 && imageOffset < tableEnd) {
      throw new DecodeError(`image at ${imageOffset} overlaps the header or entry table`, at + E_IMAGE_OFFSET)
    }
    const strings = new Map<string, string>()
    for (let j = 0; j < numStrings; j++) {
      const se = offset + stringOffset + j * stringEntrySize
      need(src, se, stringEntrySize)
      const keyOffset = u64(src, se)
      const valueOffset = u64(src, se + 8)
      const key = readCString(src, offset, size, keyOffset, se)
      let value: string
      if (version === 1) {
        value = readCString(src, offset, size, valueOffset, se + 8)
      } else {
        const valueSize = u64(src, se + 16)
        if (valueOffset > size || valueSize > size - valueOffset) {
          throw new DecodeError(`string value (${valueSize} bytes at ${valueOffset}) lies outside the ${size}-byte binary`, se + 8)
        }
        need(src, offset + valueOffset, valueSize)
        value = decodeText(src.bytes.subarray(offset + valueOffset, offset + valueOffset + valueSize))
      }
      strings.set(key, value)
    }
    const absolute = offset + imageOffset
    const inWindow = absolute + imageSize <= src.bytes.length
    entries.push({
      imageKind,
      offloadKind,
      flags,
      strings,
      image: inWindow ? src.bytes.subarray(absolute, absolute + imageSize) : new Uint8Array(0),
      imageOffset: absolute,
      imageSize,
    })
  }
  return { offset, size, version, entries, next, compressed: false }
}

function readCString(src: Source, base: number, size: number, rel: number, fieldAt: number): string {
  if (rel >= size) throw new DecodeError(`string offset ${rel} lies outside the ${size}-byte binary`, fieldAt)
  const start = base + rel
  const end = base + size
  const limit = Math.min(end, src.bytes.length)
  const nul = src.bytes.subarray(start, limit).indexOf(0)
  if (nul === -1) {
    if (limit < end) throw new WindowTooSmall('string runs past the window')
    throw new DecodeError(`string at offset ${rel} has no terminating NUL before the end of the binary`, fieldAt)
  }
  return decodeText(src.bytes.subarray(start, start + nul))
}

const textDecoder = new TextDecoder()
function decodeText(bytes: Uint8Array): string {
  return textDecoder.decode(bytes)
}

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ')
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** Checks a compressed v3 binary's header fields and hands it to the codecs' inflate (inflate.ts). */
function inflate(src: Source, offset: number, size: number, entriesOffset: number, inflatedSize: number, lim: Required<DecodeLimits>): Uint8Array {
  if (entriesOffset !== HEADER_SIZE_V3 || entriesOffset > size) {
    throw new DecodeError(`compressed binary: entries offset ${entriesOffset} must be ${HEADER_SIZE_V3}`, offset + H_ENTRIES_OFFSET)
  }
  if (inflatedSize < entriesOffset) {
    throw new DecodeError(`compressed binary: inflated size ${inflatedSize} is smaller than the header`, offset + H_INFLATED_SIZE)
  }
  need(src, offset, size)
  return getCodecs().inflate(src.bytes.subarray(offset, offset + size), offset, inflatedSize, lim.maxInflatedSize)
}

/**
 * Every offload binary in `bytes` (several may be concatenated, each starting 8-byte aligned), with
 * its offset, size, version and entries. Image bytes are views into `bytes` (into a fresh buffer for
 * compressed binaries).
 */
export function readOffloadBinaries(bytes: Uint8Array, limits?: DecodeLimits): OffloadBinary[] {
  const src: Source = { bytes, view: viewOf(bytes), length: bytes.length }
  const out: OffloadBinary[] = []
  let offset = 0
  if (bytes.length === 0) throw new TruncatedError('empty input: an offload binary needs at least a 32-byte header', 0)
  while (offset < bytes.length) {
    const b = decodeBinaryAt(src, offset, limits)
    out.push({ offset: b.offset, size: b.size, version: b.version, entries: b.entries.map(publicEntry) })
    offset = b.next
  }
  return out
}

function publicEntry(e: DecodedEntry): OffloadEntry {
  return { imageKind: e.imageKind, offloadKind: e.offloadKind, flags: e.flags, strings: e.strings, image: e.image }
}

/** All entries of all binaries in `bytes`, in order. */
export function readOffloadEntries(bytes: Uint8Array, limits?: DecodeLimits): OffloadEntry[] {
  return readOffloadBinaries(bytes, limits).flatMap((b) => b.entries)
}

/** For streaming readers: a Source over a window (a prefix of `length` bytes starting at `base`). */
export function windowSource(bytes: Uint8Array, length: number): Source {
  return { bytes, view: viewOf(bytes), length }
}
