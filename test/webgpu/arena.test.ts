// The arena's address bookkeeping and the split of unaligned writes (packages/webgpu/src/arena.ts, memops.ts):
// pure functions, no GPU.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { ArenaAllocator } from '../../packages/webgpu/src/arena.js'
import { splitUnaligned } from '../../packages/webgpu/src/memops.js'
import { ALLOC_ALIGN, RESERVED_BYTES } from '../../packages/webgpu/src/layout.js'

const Arena = suite('ArenaAllocator')

Arena('addresses start above the reserved page, 256-aligned; zero-byte allocations get distinct addresses', () => {
  const a = new ArenaAllocator(1 << 20)
  const p = a.alloc(10), q = a.alloc(0), r = a.alloc(0)
  assert.is(p, RESERVED_BYTES)
  assert.is(q, RESERVED_BYTES + ALLOC_ALIGN)
  assert.is(r, RESERVED_BYTES + 2 * ALLOC_ALIGN)
  assert.ok(a.contains(p, 10) && a.contains(p, 256) && !a.contains(p, 257))
})

Arena('freed ranges are reused first-fit and coalesced; a free tail gives `top` back', () => {
  const a = new ArenaAllocator(1 << 20)
  const [x, y, z] = [a.alloc(1000), a.alloc(1000), a.alloc(1000)]
  a.free(x); a.free(y)
  assert.is(a.alloc(2048), x, 'x and y coalesced into one 2 KiB range')
  a.free(z)
  assert.is(a.top, x + 2048)
  assert.throws(() => a.free(z), /is not an allocation/)
})

Arena('the limit is enforced with a message naming it', () => {
  const a = new ArenaAllocator(RESERVED_BYTES + 4096)
  a.alloc(4096)
  assert.throws(() => a.alloc(1), /out of WebGPU device memory: 1 bytes do not fit .* may not exceed 8192 bytes/)
  assert.throws(() => a.alloc(-1), /non-negative integer/)
})

Arena('random alloc/free sequences never hand out overlapping live ranges', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 5000 })), { maxLength: 60 }), (ops) => {
    const a = new ArenaAllocator(1 << 24)
    const live: Array<[number, number]> = []
    for (const [doFree, n] of ops) {
      if (doFree && live.length) { const [at] = live.splice(n % live.length, 1)[0]!; a.free(at) } else {
        const at = a.alloc(n)
        const span = Math.max(ALLOC_ALIGN, Math.ceil(n / ALLOC_ALIGN) * ALLOC_ALIGN)
        for (const [s, l] of live) if (at < s + l && s < at + span) return false
        if (at % ALLOC_ALIGN || at < RESERVED_BYTES || at + span > a.top) return false
        live.push([at, span])
      }
    }
    return true
  }))
})

Arena.run()

// ---

const Split = suite('splitUnaligned')

Split('aligned middle plus head/tail word patches reproduce every byte, touching no other', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), (at, n) => {
    const mem = Uint8Array.from({ length: 96 }, (_, i) => i)
    const want = mem.slice()
    for (let k = 0; k < n; k++) want[at + k] = 200 + k
    const { mid, midBytes, patches } = splitUnaligned(at, n, (k) => 200 + k)
    if ((midBytes > 0 && mid % 4 !== 0) || midBytes % 4 || patches.length > 2) return false
    for (let k = 0; k < midBytes; k++) mem[mid + k] = 200 + (mid - at) + k
    const words = new Uint32Array(mem.buffer)
    for (const p of patches) words[p.index] = ((words[p.index]! & ~p.mask) | (p.value & p.mask)) >>> 0
    return mem.every((b, i) => b === want[i])
  }))
})

Split.run()
