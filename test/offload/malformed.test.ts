// Bad input: every truncation, bad magic and version, offsets and sizes past the end or overlapping,
// strings without a NUL, absurd counts, lying compressed sizes. Each gives a DecodeError or (for
// input that ends early) a RangeError, both carrying the byte offset of the bad field.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DecodeError, readOffloadBinaries, writeOffloadBinary } from '@kernelpack/offload'
import { fixture } from './helpers.js'

function expectError(bytes: Uint8Array, kind: 'decode' | 'range', offset: number | undefined, message?: RegExp): void {
  try {
    readOffloadBinaries(bytes)
  } catch (err) {
    if (kind === 'decode') assert.instance(err, DecodeError)
    else {
      assert.instance(err, RangeError)
      assert.not.instance(err, DecodeError)
    }
    const at = (err as { offset: number }).offset
    assert.type(at, 'number')
    if (offset !== undefined) assert.is(at, offset, (err as Error).message)
    if (message) assert.match((err as Error).message, message)
    assert.match((err as Error).message, /at byte offset \d+/)
    return
  }
  assert.unreachable('no error thrown')
}

const copy = (b: Uint8Array) => new Uint8Array(b)
const setU64 = (b: Uint8Array, at: number, v: bigint) => new DataView(b.buffer, b.byteOffset).setBigUint64(at, v, true)
const setU32 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint32(at, v, true)

// ---
const read = suite('readOffloadBinaries on malformed input')

read('every truncation of a single binary is a RangeError with an offset', () => {
  for (const name of ['c_empty.bin', 'd_tailmerge.bin']) {
    const bytes = fixture(name)
    for (let n = 0; n < bytes.length; n++) expectError(bytes.subarray(0, n), 'range', undefined)
  }
})

read('truncations of concatenated binaries: whole binaries read, a cut one is a RangeError at its header', () => {
  const bytes = fixture('b_cubin_ptx_2arch.bin')
  const starts = readOffloadBinaries(bytes).map((b) => b.offset)
  for (let n = 1; n < bytes.length; n += 7) {
    const boundary = starts.includes(n)
    if (boundary) {
      assert.is(readOffloadBinaries(bytes.subarray(0, n)).length, starts.indexOf(n))
      continue
    }
    let caught: unknown
    try { readOffloadBinaries(bytes.subarray(0, n)) } catch (err) { caught = err }
    assert.instance(caught, RangeError)
    const last = Math.max(...starts.filter((s) => s < n))
    const at = (caught as { offset: number }).offset
    assert.ok(at >= last && at <= n, `cut at ${n}: offset ${at} should lie in the cut binary at ${last}`)
  }
})

read('bad magic, in the first and in a later binary', () => {
  const a = copy(fixture('a_one_cubin.bin'))
  a[1] = 0xfe
  expectError(a, 'decode', 0, /bad magic 10 fe 10 ad/)
  const b = copy(fixture('b_cubin_ptx_2arch.bin'))
  const second = readOffloadBinaries(b)[1]!.offset
  b[second + 3] = 0
  expectError(b, 'decode', second, /bad magic/)
  expectError(new TextEncoder().encode('!<arch>\nfoo/ '.padEnd(64, ' ')), 'decode', 0, /not an offload binary/)
})

read('bad version', () => {
  for (const v of [0, 4, 0xffffffff]) {
    const a = copy(fixture('a_one_cubin.bin'))
    setU32(a, 4, v)
    expectError(a, 'decode', 4, new RegExp(`version ${v}`))
  }
})

read('size field past the end or smaller than the header', () => {
  const a = copy(fixture('a_one_cubin.bin'))
  setU64(a, 8, BigInt(a.length + 8))
  expectError(a, 'range', 8, /truncated/)
  setU64(a, 8, 1n << 62n)
  expectError(a, 'range', 8)
  setU64(a, 8, 16n)
  expectError(a, 'decode', 8, /smaller than the 32-byte header/)
})

read('entry offset and entry size out of range', () => {
  const a = copy(fixture('a_one_cubin.bin'))
  setU64(a, 16, BigInt(a.length - 8))
  expectError(a, 'decode', 16, /entry table/)
  const b = copy(fixture('a_one_cubin.bin'))
  setU64(b, 16, 8n) // overlaps the header
  expectError(b, 'decode', 16)
  const c = copy(fixture('a_one_cubin.bin'))
  setU64(c, 24, 8n)
  expectError(c, 'decode', 24, /entry size/)
})

read('image offset or size past the end, or overlapping the header', () => {
  const a = copy(fixture('a_one_cubin.bin'))
  setU64(a, 0x20 + 32, BigInt(a.length)) // image size
  expectError(a, 'decode', 0x20 + 24, /image/)
  const b = copy(fixture('a_one_cubin.bin'))
  setU64(b, 0x20 + 24, 1n << 60n) // image offset
  expectError(b, 'decode', 0x20 + 24, /image/)
  const c = copy(fixture('a_one_cubin.bin'))
  setU64(c, 0x20 + 24, 0n)
  expectError(c, 'decode', 0x20 + 24, /overlaps/)
})

read('string offsets past the end or without a terminating NUL', () => {
  const bin = writeOffloadBinary({ imageKind: 3, offloadKind: 2, strings: new Map([['arch', 'sm_90']]), image: new Uint8Array(16).fill(0xff) })
  const imageAt = Number(new DataView(bin.buffer).getBigUint64(0x20 + 24, true))
  const a = copy(bin)
  setU64(a, 0x48, BigInt(imageAt)) // key points into the image: 0xff… to the end, no NUL
  expectError(a, 'decode', 0x48, /no terminating NUL/)
  const b = copy(bin)
  setU64(b, 0x50, BigInt(bin.length + 100))
  expectError(b, 'decode', 0x50, /string offset/)
})

read('absurd counts are refused before allocating', () => {
  const a = copy(fixture('a_one_cubin.bin'))
  setU64(a, 0x20 + 16, 1n << 58n) // num strings
  expectError(a, 'decode', 0x20 + 16)
  const v3 = writeOffloadBinary({ imageKind: 3, offloadKind: 2, strings: { arch: 'sm_90' }, image: new Uint8Array(8) }, { version: 3 })
  const b = copy(v3)
  setU64(b, 24, 1n << 40n) // entries count
  expectError(b, 'decode', 24, /entry count/)
  const c = copy(v3)
  setU64(c, 24, 1000n)
  expectError(c, 'decode', 16, /entry table/)
  assert.throws(() => readOffloadBinaries(fixture('b_cubin_ptx_2arch.bin'), { maxStrings: 3 }), (e: Error) => e instanceof DecodeError && /limit of 3/.test(e.message))
})

read('compressed binaries with a lying inflated size or a corrupt body', () => {
  const entries = [{ imageKind: 3, offloadKind: 2, strings: { arch: 'sm_90' }, image: new Uint8Array(4096).fill(7) }]
  for (const compression of ['zlib', 'zstd'] as const) {
    const z = writeOffloadBinary(entries, { version: 3, compression })
    const a = copy(z)
    setU64(a, 32, 1n << 50n)
    expectError(a, 'decode', 32, /inflated size/)
    const b = copy(z)
    setU64(b, 32, new DataView(z.buffer).getBigUint64(32, true) + 8n)
    expectError(b, 'decode', 32, /inflates to|zstd frame holds/)
    // Damage the compressed stream's own header (zlib CMF/FLG; zstd frame descriptor and block header).
    const c = copy(z)
    for (let i = 40; i < 49; i++) c[i] ^= 0xa5
    expectError(c, 'decode', undefined, /does not decompress|inflates to/)
  }
})

read('an empty buffer is a RangeError', () => {
  expectError(new Uint8Array(0), 'range', 0)
})

read.run()
