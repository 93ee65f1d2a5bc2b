// Everything of the package without the zlib/zstd codecs (so uncompressed binaries are read without
// loading them; the CLI starts faster). `@kernelpack/offload` = this + the codecs registered.
export * from './types.js'
export type * from './manifest.js'
export { DecodeError } from './errors.js'
export { readOffloadBinaries, readOffloadEntries, decodeBinaryAt, windowSource, WindowTooSmall, setCodecs } from './read.js'
export type { DecodeLimits, DecodedEntry, DecodedBinary, Codecs } from './read.js'
export { writeOffloadBinary, encodeV1Prefix, orderedStrings, zstdStored } from './write.js'
export type { WriteOptions, EntryMeta, BinaryPrefix } from './write.js'
export { imageKindFromExtension, imageKindName, offloadKindName, offloadKindFromName, imageKindOfFile, isBitcode, extensionOf, stemOf } from './kinds.js'
export { orderKeysLikeLLVM, hashStringRef } from './string-order.js'
export { buildStringTable } from './string-table.js'
export { nameKernels, splitSignature, kernelParamTypes, RESERVED_EXPORTS, SEMANTIC_EXPORTS } from './kernel-names.js'
export type { KernelName, KernelNameProblem } from './kernel-names.js'
