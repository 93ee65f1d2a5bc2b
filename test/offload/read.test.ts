import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ImageKind, OffloadKind, readOffloadBinaries, readOffloadEntries } from '@kernelpack/offload'
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
