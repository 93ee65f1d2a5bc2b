import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ImageKind, OffloadKind, readOffloadBinaries, readOffloadEntries, writeOffloadBinary } from '@kernelpack/offload'
import { fixture, fixtureBinaries } from './helpers.js'

const equalBytes = (a: Uint8Array, b: Uint8Array, msg?: string) => assert.ok(Buffer.from(a).equals(Buffer.from(b)), msg)

// ---
const write = suite('writeOffloadBinary')

write('writing the decoded entries of every reference binary gives the same bytes', () => {
  for (const name of fixtureBinaries()) {
    const bytes = fixture(name)
    equalBytes(writeOffloadBinary(readOffloadEntries(bytes)), bytes, name)
  }
})

write('a plain strings object gets llvm-offload-binary order (a_one_cubin.bin)', () => {
  const out = writeOffloadBinary({
    imageKind: ImageKind.Cubin,
    offloadKind: OffloadKind.CUDA,
    strings: { triple: 'nvptx64-nvidia-cuda', arch: 'sm_90' },
    image: fixture('inputs/extern_c.sm_90.cubin'),
  })
  equalBytes(out, fixture('a_one_cubin.bin'))
})

write('tail-merged strings and an empty value (d_tailmerge.bin)', () => {
  const out = writeOffloadBinary({
    imageKind: ImageKind.None,
    offloadKind: OffloadKind.CUDA,
    strings: { triple: 'nvptx64-nvidia-cuda', arch: 'sm_90', alias: 'cuda', self: 'arch', z: '' },
    image: fixture('inputs/extern_c.sm_90.ptx'),
  })
  equalBytes(out, fixture('d_tailmerge.bin'))
})

write('a Map keeps its order', () => {
  const strings = new Map([['triple', 't'], ['arch', 'a']])
  const out = writeOffloadBinary({ imageKind: 0, offloadKind: 0, strings, image: new Uint8Array(3) })
  assert.equal([...readOffloadEntries(out)[0]!.strings.keys()], ['triple', 'arch'])
})

write('version 1: one binary per entry; version 3: one binary for all', () => {
  const entries = readOffloadEntries(fixture('b_cubin_ptx_2arch.bin'))
  const v1 = readOffloadBinaries(writeOffloadBinary(entries))
  assert.equal(v1.map((b) => [b.version, b.entries.length]), [[1, 1], [1, 1], [1, 1], [1, 1]])
  const v3bytes = writeOffloadBinary(entries, { version: 3 })
  const v3 = readOffloadBinaries(v3bytes)
  assert.equal(v3.map((b) => [b.version, b.entries.length, b.size]), [[3, 4, v3bytes.length]])
  v3[0]!.entries.forEach((e, i) => {
    equalBytes(e.image, entries[i]!.image)
    assert.equal([...e.strings], [...entries[i]!.strings])
    assert.is(e.imageKind, entries[i]!.imageKind)
    assert.is(e.offloadKind, entries[i]!.offloadKind)
  })
})

write('compressed version 3 (zlib, zstd) reads back to the same entries', () => {
  const entries = readOffloadEntries(fixture('b_cubin_ptx_2arch.bin'))
  const plain = writeOffloadBinary(entries, { version: 3 })
  for (const compression of ['zlib', 'zstd'] as const) {
    const packed = writeOffloadBinary(entries, { version: 3, compression })
    assert.is(packed.length % 8, 0)
    const [b] = readOffloadBinaries(packed)
    assert.is(b!.version, 3)
    assert.equal(writeOffloadBinary(b!.entries, { version: 3 }), plain, compression)
  }
})

write('rejects what the format cannot hold', () => {
  const base = { imageKind: 0, offloadKind: 0, image: new Uint8Array(0) }
  assert.throws(() => writeOffloadBinary({ ...base, strings: { 'a\0b': 'x' } }), /NUL/)
  assert.throws(() => writeOffloadBinary({ ...base, imageKind: 70000, strings: {} }), /imageKind/)
  assert.throws(() => writeOffloadBinary([]), /at least one/)
  assert.throws(() => writeOffloadBinary({ ...base, strings: {} }, { compression: 'zlib' }), /version 3/)
})

write.run()
