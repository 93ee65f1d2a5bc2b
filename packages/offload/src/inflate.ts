// Inflating a compressed (v3) offload binary: the part of the reader that only the codecs need, so a reader
// of uncompressed binaries (`@kernelpack/offload/core`: the browser runtime, the CLI) does not load it.
// read.ts has checked the header's entries offset and inflated size and that the bytes are all there.
import { DecodeError } from './errors.js'
import { H_INFLATED_SIZE, H_SIZE, HEADER_SIZE_V3, ZSTD_MAGIC } from './layout.js'
import type { Codecs } from './read.js'

// Worst expansion ratios, so that a lying InflatedSize cannot make us allocate more than the compressed
// bytes could possibly produce: deflate's maximum is 1032:1; zstd's is an RLE block (128 KiB from 4 bytes).
const ZLIB_MAX_RATIO = 1032
const ZSTD_MAX_RATIO = 32768

/** Inflates a compressed v3 binary into a fresh buffer holding the header (InflatedSize cleared) and body. */
export function inflateBinary(binary: Uint8Array, offset: number, inflatedSize: number, maxInflatedSize: number, unzlib: Codecs['unzlib'], unzstd: Codecs['unzstd']): Uint8Array {
  const size = binary.length
  const entriesOffset = HEADER_SIZE_V3
  const compressed = binary.subarray(entriesOffset)
  const bodySize = inflatedSize - entriesOffset
  const isZstd = ZSTD_MAGIC.every((b, i) => compressed[i] === b)
  const bound = compressed.length * (isZstd ? ZSTD_MAX_RATIO : ZLIB_MAX_RATIO) + 1024
  if (inflatedSize > maxInflatedSize || bodySize > bound) {
    throw new DecodeError(`compressed binary: inflated size ${inflatedSize} is beyond what ${compressed.length} compressed bytes can hold or the limit of ${maxInflatedSize}`, offset + H_INFLATED_SIZE)
  }
  if (isZstd) {
    const declared = zstdContentSize(compressed)
    if (declared !== undefined && declared !== bodySize) {
      throw new DecodeError(`compressed binary: zstd frame holds ${declared} bytes, header says ${bodySize}`, offset + H_INFLATED_SIZE)
    }
  }
  const out = new Uint8Array(entriesOffset + bodySize)
  let body: Uint8Array
  try {
    body = isZstd ? unzstd(compressed, out.subarray(entriesOffset)) : unzlib(compressed, out.subarray(entriesOffset))
  } catch (err) {
    throw new DecodeError(`compressed binary: ${isZstd ? 'zstd' : 'zlib'} body does not decompress: ${(err as Error).message}`, offset + entriesOffset)
  }
  if (!isZstd && compressed.length >= 4) {
    // fflate does not verify zlib's Adler-32 trailer; LLVM (zlib's uncompress) does.
    const want = new DataView(compressed.buffer, compressed.byteOffset + compressed.length - 4, 4).getUint32(0, false)
    if (adler32(body) !== want) throw new DecodeError('compressed binary: zlib body fails its Adler-32 check', offset + size - 4)
  }
  if (body.length !== bodySize || (body.buffer !== out.buffer || body.byteOffset !== out.byteOffset + entriesOffset)) {
    if (body.length !== bodySize) {
      throw new DecodeError(`compressed binary: body inflates to ${body.length} bytes, header says ${bodySize}`, offset + H_INFLATED_SIZE)
    }
    out.set(body, entriesOffset)
  }
  // The inflated binary is the original: header with Size = InflatedSize and InflatedSize = 0.
  out.set(binary.subarray(0, entriesOffset), 0)
  const v = new DataView(out.buffer, out.byteOffset, out.byteLength)
  v.setBigUint64(H_SIZE, BigInt(inflatedSize), true)
  v.setBigUint64(H_INFLATED_SIZE, 0n, true)
  return out
}

function adler32(data: Uint8Array): number {
  let a = 1
  let b = 0
  const NMAX = 5552
  for (let i = 0; i < data.length; ) {
    const end = Math.min(data.length, i + NMAX)
    for (; i < end; i++) {
      a += data[i]!
      b += a
    }
    a %= 65521
    b %= 65521
  }
  return ((b << 16) | a) >>> 0
}

/** Frame_Content_Size of a zstd frame header (RFC 8878 §3.1.1.1), when the frame declares it. */
function zstdContentSize(frame: Uint8Array): number | undefined {
  if (frame.length < 5) return undefined
  const fhd = frame[4]!
  const fcsFlag = fhd >> 6
  const single = (fhd >> 5) & 1
  const dictBytes = [0, 1, 2, 4][fhd & 3]!
  const fcsBytes = [single ? 1 : 0, 2, 4, 8][fcsFlag]!
  if (fcsBytes === 0) return undefined
  const at = 5 + (single ? 0 : 1) + dictBytes
  if (at + fcsBytes > frame.length) return undefined
  const v = new DataView(frame.buffer, frame.byteOffset + at, fcsBytes)
  if (fcsBytes === 1) return v.getUint8(0)
  if (fcsBytes === 2) return v.getUint16(0, true) + 256
  if (fcsBytes === 4) return v.getUint32(0, true)
  return Number(v.getBigUint64(0, true))
}
