// Content-hashed asset names and atomic writes. Same bytes → same name, so repeated and parallel builds
// agree and browsers may cache assets forever.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { basename, dirname } from 'node:path'

/** Short content hash (hex) of some bytes. */
export function hashBytes(bytes: Uint8Array | string, length = 12): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, length)
}

/** `kernels.cu` + bytes → `kernels.<hash>.offload`. */
export function assetFileName(file: string, bytes: Uint8Array, ext = '.offload'): string {
  return `${basename(file).replace(/\.cu$/i, '')}.${hashBytes(bytes)}${ext}`
}

/** Writes through a temp file and a rename; skips the write when the file already holds these bytes
 *  (so watchers see no change and mtimes stay put). Returns true when it wrote. */
export function writeFileAtomic(path: string, data: Uint8Array | string): boolean {
  try {
    const old = readFileSync(path)
    const next = typeof data === 'string' ? Buffer.from(data) : data
    if (old.length === next.length && Buffer.compare(old, Buffer.from(next.buffer, next.byteOffset, next.byteLength)) === 0) return false
  } catch { /* absent: write it */ }
  mkdirSync(dirname(path), { recursive: true })
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  writeFileSync(tmp, data)
  renameSync(tmp, path)
  return true
}
