// The entries cache-stress-child.ts stores: 8 KiB per key, different for every key.
import { createHash } from 'node:crypto'

export const KEYS = 24
export const ENTRY_BYTES = 8192

export function entryBytes(k: number): Uint8Array {
  const out = new Uint8Array(ENTRY_BYTES)
  let block = createHash('sha256').update(`entry ${k}`).digest()
  for (let i = 0; i < out.length; i += 32) {
    out.set(block.subarray(0, Math.min(32, out.length - i)), i)
    block = createHash('sha256').update(block).digest()
  }
  return out
}
