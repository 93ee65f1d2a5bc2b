// The one internal WGSL kernel of the backend: patches up to two partially written u32 words of the arena
// (the head and tail of a copy or memset whose ends are not 4-byte aligned). queue.writeBuffer and
// clearBuffer take only 4-byte aligned offsets and sizes (WebGPU spec, GPUQueue.writeBuffer), and reading
// the old word back first would need a round trip; a dispatch keeps the patch in queue order with the rest.
import { BINDING_MEMORY } from './layout.js'

export const PATCH_BINDING = 1
/** Bytes of the patch uniform: two { index, mask, value, pad } records. */
export const PATCH_BYTES = 32

export const patchWgsl = `// kernelpack: merge bytes into partially written words of the arena
struct Patch { index: u32, mask: u32, value: u32, pad: u32 }
@group(0) @binding(${BINDING_MEMORY}) var<storage, read_write> kp_mem: array<u32>;
@group(0) @binding(${PATCH_BINDING}) var<uniform> patches: array<Patch, 2>;
@compute @workgroup_size(2)
fn patch_words(@builtin(local_invocation_index) i: u32) {
  let p = patches[i];
  if (p.mask != 0u) {
    kp_mem[p.index] = (kp_mem[p.index] & ~p.mask) | (p.value & p.mask);
  }
}
`

export interface WordPatch {
  /** Word index into kp_mem. */
  index: number
  mask: number
  value: number
}

/**
 * Splits a write of `n` bytes at byte address `at` into the aligned middle [mid, mid + midBytes) and up to
 * two word patches for the unaligned ends; `byteAt(k)` gives the k-th byte written.
 */
export function splitUnaligned(at: number, n: number, byteAt: (k: number) => number): { mid: number; midBytes: number; patches: WordPatch[] } {
  const end = at + n
  const mid = Math.min(Math.ceil(at / 4) * 4, end)
  const midEnd = Math.max(Math.floor(end / 4) * 4, mid)
  const patches = new Map<number, WordPatch>()
  const put = (addr: number) => {
    const index = addr >>> 2
    const shift = (addr & 3) * 8
    let p = patches.get(index)
    if (!p) patches.set(index, (p = { index, mask: 0, value: 0 }))
    p.mask = (p.mask | (0xff << shift)) >>> 0
    p.value = (p.value | (byteAt(addr - at) << shift)) >>> 0
  }
  for (let a = at; a < mid; a++) put(a)
  for (let a = Math.max(midEnd, mid); a < end; a++) put(a)
  return { mid, midBytes: midEnd - mid, patches: [...patches.values()] }
}
