// Byte layout of LLVM's offload binary (llvm/include/llvm/Object/OffloadBinary.h). All fields are
// little-endian. LLVM 22 writes and reads version 1 only; LLVM main (Version = 3) reads 1 to 3.
//
// Header, v1 (32 bytes)              Header, v2 (32 bytes)          Header, v3 (40 bytes)
//   0  u8[4] magic 10 ff 10 ad         0  magic                       0  magic
//   4  u32   version = 1               4  version = 2                 4  version = 3
//   8  u64   size (whole binary)       8  size                        8  size (stored, maybe compressed)
//  16  u64   entry offset             16  entries offset             16  entries offset (= 40)
//  24  u64   entry size (= 40)        24  entries count              24  entries count
//                                                                    32  inflated size (0 = not compressed)
// Entry (40 bytes, all versions)
//   0  u16 image kind   2 u16 offload kind   4 u32 flags   8 u64 string offset   16 u64 string count
//  24  u64 image offset 32 u64 image size
// String entry: v1 16 bytes (u64 key offset, u64 value offset, both NUL-terminated);
//               v2+ 24 bytes (key offset, value offset, u64 value size; value not NUL-terminated by rule).
// Offsets are from the start of the (inflated) binary. Image data is 8-byte aligned and the total
// size is padded to a multiple of 8, so concatenated binaries each start 8-byte aligned.

export const MAGIC = [0x10, 0xff, 0x10, 0xad] as const
/** The magic as a little-endian u32 (bytes 10 ff 10 ad). */
export const MAGIC_U32 = 0xad10ff10

export const HEADER_SIZE_V1 = 32
export const HEADER_SIZE_V2 = 32
export const HEADER_SIZE_V3 = 40
export const ENTRY_SIZE = 40
export const STRING_ENTRY_SIZE_V1 = 16
export const STRING_ENTRY_SIZE_V2 = 24
export const ALIGNMENT = 8

/** Newest version this codec reads (LLVM main's OffloadBinary::Version). */
export const MAX_VERSION = 3

// Header field offsets.
export const H_MAGIC = 0
export const H_VERSION = 4
export const H_SIZE = 8
export const H_ENTRIES_OFFSET = 16
export const H_ENTRY_SIZE_OR_COUNT = 24
export const H_INFLATED_SIZE = 32

// Entry field offsets.
export const E_IMAGE_KIND = 0
export const E_OFFLOAD_KIND = 2
export const E_FLAGS = 4
export const E_STRING_OFFSET = 8
export const E_NUM_STRINGS = 16
export const E_IMAGE_OFFSET = 24
export const E_IMAGE_SIZE = 32

/** `OIF_Metadata`: the entry holds metadata only, no image (LLVM main). */
export const FLAG_METADATA = 1

/** zstd frame magic (28 b5 2f fd); LLVM picks zstd over zlib for a compressed body by this magic. */
export const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const

export function alignTo(n: number, a: number = ALIGNMENT): number {
  return Math.ceil(n / a) * a
}
