// zlib (fflate) and zstd (fzstd, decode only) for version-3 bodies; LLVM picks zstd by the frame
// magic, zlib otherwise (OffloadBinary.cpp, decompressOffloadBinary).
import { unzlibSync, zlibSync } from 'fflate'
import { decompress } from 'fzstd'
import { inflateBinary } from './inflate.js'
import type { Codecs } from './read.js'

export const codecs: Codecs = {
  unzlib: (data, out) => unzlibSync(data, { out }),
  unzstd: (data, out) => decompress(data, out),
  zlib: (data, level) => zlibSync(data, { level: Math.max(0, Math.min(9, Math.trunc(level))) as 6 }),
  inflate: (binary, at, inflatedSize, maxInflatedSize) => inflateBinary(binary, at, inflatedSize, maxInflatedSize, codecs.unzlib, codecs.unzstd),
}
