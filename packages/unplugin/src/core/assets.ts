// Content-hashed asset names and atomic writes. Same bytes → same name, so repeated and parallel builds
// agree and browsers may cache assets forever.
import { createHash } from 'node:crypto'
import { basename } from 'node:path'
import { writeFileIfChanged } from '@kernelpack/toolchain/atomic-write'

/** Short content hash (hex) of some bytes. */
export function hashBytes(bytes: Uint8Array | string, length = 12): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, length)
}

/** `kernels.cu` + bytes → `kernels.<hash>.offload`. */
export function assetFileName(file: string, bytes: Uint8Array, ext = '.offload'): string {
  return `${basename(file).replace(/\.cu$/i, '')}.${hashBytes(bytes)}${ext}`
}

/** Writes through a temp file and a rename (temp files of killed processes are cleaned up); skips the
 *  write when the file already holds these bytes (so watchers see no change and mtimes stay put). Returns
 *  true when it wrote. */
export function writeFileAtomic(path: string, data: Uint8Array | string): boolean {
  return writeFileIfChanged(path, data)
}
