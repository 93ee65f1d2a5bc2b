// The CLI reads offload files through a metadata window and copies large images out of the file
// (offload-file.ts). For any input, mutated or not, that windowed scan must agree with decoding the
// whole buffer: the same binaries, entries, strings and image bytes, or an error for the same inputs.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { closeSync, openSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readOffloadBinaries, writeOffloadBinary } from '@kernelpack/offload'
import { imageBytes, scanOffloadFile } from '../../packages/cli/src/offload-file.js'
import { tempDir } from '../helpers/tools.js'
import { fixture } from '../offload/helpers.js'

const scan = suite('scanOffloadFile')
const dir = tempDir()

async function both(bytes: Uint8Array, window?: number): Promise<void> {
  const path = join(dir, 'in.bin')
  writeFileSync(path, bytes)
  let whole: ReturnType<typeof readOffloadBinaries> | undefined
  try { whole = readOffloadBinaries(bytes) } catch { whole = undefined }
  const fd = openSync(path, 'r')
  try {
    let scanned
    try { scanned = await scanOffloadFile(fd, 'in.bin', window) } catch { scanned = undefined }
    assert.is(scanned === undefined, whole === undefined, 'both fail or both succeed')
    if (!scanned || !whole) return
    assert.equal(scanned.map((b) => [b.offset, b.size, b.version]), whole.map((b) => [b.offset, b.size, b.version]))
    scanned.forEach((b, i) => b.entries.forEach((e, j) => {
      const w = whole![i]!.entries[j]!
      assert.equal([e.imageKind, e.offloadKind, e.flags, [...e.strings]], [w.imageKind, w.offloadKind, w.flags, [...w.strings]])
      assert.ok(Buffer.from(imageBytes(fd, e)).equals(Buffer.from(w.image)))
    }))
  } finally {
    closeSync(fd)
  }
}

scan('agrees with whole-buffer decoding for every window size on the corpus', async () => {
  for (const name of ['b_cubin_ptx_2arch.bin', 'd_tailmerge.bin', 'c_empty.bin']) {
    for (const window of [8, 40, 64, 100, 1000, 1 << 20]) await both(fixture(name), window)
  }
  const v3 = writeOffloadBinary([{ imageKind: 3, offloadKind: 2, strings: { a: 'b' }, image: new Uint8Array(300).fill(9) }], { version: 3 })
  for (const window of [8, 64, 1 << 20]) await both(v3, window)
})

scan('agrees when metadata or a compressed body runs past the window, which then grows', async () => {
  // 3000 entries with long strings: ~300 KiB of metadata, past the default first window.
  const many = writeOffloadBinary(Array.from({ length: 3000 }, (_, i) => ({ imageKind: 3, offloadKind: 2, strings: { triple: 'nvptx64-nvidia-cuda', arch: `sm_${i}`, note: 'x'.repeat(40) }, image: new Uint8Array([i & 255, 1, 2]) })))
  assert.ok(many.length > 256 << 10, `${many.length} bytes`)
  for (const window of [undefined, 8, 4096]) await both(many, window)
  const z = writeOffloadBinary([{ imageKind: 3, offloadKind: 2, strings: { a: 'b' }, image: new Uint8Array(200_000).map((_, i) => (i * 7) & 255) }], { version: 3, compression: 'zlib' })
  for (const window of [undefined, 8, 64]) await both(z, window)
})

scan('agrees on 500 mutated inputs with a small window', async () => {
  const base = fixture('b2_multi_file_one_image_arg.bin')
  await fc.assert(
    fc.asyncProperty(fc.array(fc.record({ at: fc.nat(base.length - 1), xor: fc.integer({ min: 1, max: 255 }) }), { minLength: 1, maxLength: 3 }), fc.constantFrom(48, 128, 4096), async (flips, window) => {
      const b = new Uint8Array(base)
      for (const f of flips) b[f.at]! ^= f.xor
      await both(b, window)
    }),
    { numRuns: 500, seed: 7 },
  )
})

scan.run()
