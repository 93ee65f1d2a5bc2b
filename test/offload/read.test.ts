import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ImageKind, OffloadKind, readOffloadBinaries, readOffloadEntries, writeOffloadBinary } from '@kernelpack/offload'
import { fixture, fixtureBinaries, offloadFixtures, parseTwin } from './helpers.js'

const equalBytes = (a: Uint8Array, b: Uint8Array, msg?: string) => assert.ok(Buffer.from(a).equals(Buffer.from(b)), msg)

// ---
const binaries = suite('readOffloadBinaries')

binaries('every clang .llvm.offloading section matches its independent readable twin', () => {
  const names = fixtureBinaries().filter((n) => n.startsWith('clang/'))
  assert.ok(names.length >= 8)
  for (const name of names) {
    const bytes = fixture(name)
    const twin = parseTwin(readFileSync(join(offloadFixtures, name.replace('.bin', '.txt')), 'utf8'))
    const got = readOffloadBinaries(bytes)
    assert.is(got.length, twin.length, name)
    got.forEach((b, i) => {
      const t = twin[i]!
      assert.is(b.offset, t.offset, `${name} #${i} offset`)
      assert.is(b.size, t.size)
      assert.is(b.version, t.version)
      assert.is(b.entries.length, 1)
      const e = b.entries[0]!
      assert.is(e.imageKind, t.imageKind)
      assert.is(e.offloadKind, t.offloadKind)
      assert.is(e.flags, t.flags)
      assert.equal([...e.strings], t.strings, `${name} #${i} strings in file order`)
      equalBytes(e.image, bytes.subarray(t.offset + t.imageOffset, t.offset + t.imageOffset + t.imageSize))
    })
  }
})

binaries('llvm-offload-binary outputs hold the packed input files with the inferred kinds', () => {
  const input = (n: string) => fixture(`inputs/${n}`)
  const a = readOffloadBinaries(fixture('a_one_cubin.bin'))
  assert.is(a.length, 1)
  assert.is(a[0]!.entries[0]!.imageKind, ImageKind.Cubin)
  assert.is(a[0]!.entries[0]!.offloadKind, OffloadKind.CUDA)
  assert.is(a[0]!.entries[0]!.strings.get('arch'), 'sm_90')
  assert.is(a[0]!.entries[0]!.strings.get('triple'), 'nvptx64-nvidia-cuda')
  equalBytes(a[0]!.entries[0]!.image, input('extern_c.sm_90.cubin'))

  // commands.txt: four --image arguments, the last with kind=openmp and dup=1,dup=2.
  const b = readOffloadEntries(fixture('b_cubin_ptx_2arch.bin'))
  assert.equal(b.map((e) => e.imageKind), [ImageKind.Cubin, ImageKind.PTX, ImageKind.Cubin, ImageKind.PTX])
  assert.equal(b.map((e) => e.offloadKind), [OffloadKind.CUDA, OffloadKind.CUDA, OffloadKind.CUDA, OffloadKind.OpenMP])
  equalBytes(b[0]!.image, input('extern_c.sm_80.cubin'))
  equalBytes(b[1]!.image, input('extern_c.sm_80.s'))
  equalBytes(b[2]!.image, input('extern_c.sm_90.cubin'))
  equalBytes(b[3]!.image, input('extern_c.sm_90.s'))
  assert.is(b[3]!.strings.get('dup'), '1,2')
  assert.is(b[2]!.strings.get('note'), 'hello')

  const c = readOffloadEntries(fixture('c_empty.bin'))
  assert.is(c[0]!.image.length, 0)

  const d = readOffloadEntries(fixture('d_tailmerge.bin'))[0]!
  assert.is(d.imageKind, ImageKind.None) // .ptx is not an extension LLVM knows
  assert.equal([...d.strings], [['arch', 'sm_90'], ['self', 'arch'], ['triple', 'nvptx64-nvidia-cuda'], ['z', ''], ['alias', 'cuda']])
  equalBytes(d.image, input('extern_c.sm_90.ptx'))
})

binaries('image bytes are views into the input, not copies', () => {
  const bytes = fixture('b_cubin_ptx_2arch.bin')
  for (const b of readOffloadBinaries(bytes)) for (const e of b.entries) assert.ok(e.image.buffer === bytes.buffer)
})

binaries('binaries start 8-byte aligned one after another', () => {
  for (const name of fixtureBinaries()) {
    const bytes = fixture(name)
    const bins = readOffloadBinaries(bytes)
    let at = 0
    for (const b of bins) {
      assert.is(b.offset, at, name)
      at = Math.ceil((b.offset + b.size) / 8) * 8
    }
    assert.is(at, bytes.length)
  }
})

binaries.run()

// ---
const entries = suite('readOffloadEntries')

entries('flattens every binary, in order', () => {
  const bytes = fixture('b2_multi_file_one_image_arg.bin')
  const list = readOffloadEntries(bytes)
  assert.is(list.length, 2)
  equalBytes(list[0]!.image, fixture('inputs/extern_c.sm_80.cubin'))
  equalBytes(list[1]!.image, fixture('inputs/extern_c.sm_80.s'))
  assert.equal(list.map((e) => e.strings.get('arch')), ['sm_80', 'sm_80'])
})

entries.run()

// ---
const versions = suite('readOffloadBinaries: versions 2 and 3')

/** A version-2 binary made from an uncompressed version-3 one, field by field per LLVM main's
 *  OffloadBinary.h: the 32-byte v2 header lacks InflatedSize, so every offset moves down by 8. */
function toV2(v3: Uint8Array): Uint8Array {
  const src = new DataView(v3.buffer, v3.byteOffset, v3.byteLength)
  const out = new Uint8Array(v3.length - 8)
  out.set(v3.subarray(0, 32), 0)
  out.set(v3.subarray(40), 32)
  const v = new DataView(out.buffer)
  v.setUint32(4, 2, true)
  v.setBigUint64(8, BigInt(out.length), true)
  v.setBigUint64(16, 32n, true)
  const count = Number(src.getBigUint64(24, true))
  let strings = 0
  for (let i = 0; i < count; i++) {
    const e = 32 + 40 * i
    const shift = (at: number) => v.setBigUint64(at, v.getBigUint64(at, true) - 8n, true)
    shift(e + 8)
    shift(e + 24)
    strings += Number(v.getBigUint64(e + 16, true))
  }
  const first = Number(v.getBigUint64(32 + 8, true))
  for (let j = 0; j < strings; j++) {
    v.setBigUint64(first + 24 * j, v.getBigUint64(first + 24 * j, true) - 8n, true)
    v.setBigUint64(first + 24 * j + 8, v.getBigUint64(first + 24 * j + 8, true) - 8n, true)
  }
  return out
}

versions('version 2 and 3 hold several entries in one binary, strings in insertion order', () => {
  const entries = readOffloadEntries(fixture('b_cubin_ptx_2arch.bin'))
  const v3 = writeOffloadBinary(entries, { version: 3 })
  for (const [label, bytes, version] of [['v3', v3, 3], ['v2', toV2(v3), 2]] as const) {
    const bins = readOffloadBinaries(bytes)
    assert.is(bins.length, 1, label)
    assert.is(bins[0]!.version, version)
    assert.is(bins[0]!.entries.length, 4)
    bins[0]!.entries.forEach((e, i) => {
      equalBytes(e.image, entries[i]!.image, `${label} image ${i}`)
      assert.ok(e.image.buffer === bytes.buffer, 'uncompressed: views into the input')
      assert.equal([...e.strings], [...entries[i]!.strings])
      assert.equal([e.imageKind, e.offloadKind, e.flags], [entries[i]!.imageKind, entries[i]!.offloadKind, entries[i]!.flags])
    })
  }
})

versions('a v3 value is its ValueSize bytes, not up to a NUL', () => {
  const v3 = new Uint8Array(writeOffloadBinary({ imageKind: 0, offloadKind: 0, strings: new Map([['key', 'value']]), image: new Uint8Array(0) }, { version: 3 }))
  const v = new DataView(v3.buffer)
  const strings = Number(v.getBigUint64(40 + 8, true))
  assert.is(v.getBigUint64(strings + 16, true), 5n)
  v.setBigUint64(strings + 16, 3n, true)
  assert.is(readOffloadEntries(v3)[0]!.strings.get('key'), 'val')
})

versions('version 1, 2 and 3 binaries concatenated in one buffer', () => {
  const e = { imageKind: 3, offloadKind: 2, strings: { arch: 'sm_90' }, image: new Uint8Array([1, 2, 3]) }
  const parts = [writeOffloadBinary(e), toV2(writeOffloadBinary(e, { version: 3 })), writeOffloadBinary(e, { version: 3, compression: 'zlib' })]
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { all.set(p, at); at += p.length }
  const bins = readOffloadBinaries(all)
  assert.equal(bins.map((b) => b.version), [1, 2, 3])
  assert.equal(bins.map((b) => b.offset), [0, parts[0]!.length, parts[0]!.length + parts[1]!.length])
  for (const b of bins) equalBytes(b.entries[0]!.image, e.image)
})

versions.run()
