// Property test: 12,000 mutated binaries (bytes flipped, u64 fields overwritten with edge values,
// truncated or extended), in every version and compression. Reading one either succeeds with image
// views inside the input, or throws a DecodeError / RangeError whose offset lies inside the input.
// It never hangs, reads out of range or allocates beyond what the input can describe.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { DecodeError, readOffloadBinaries, writeOffloadBinary } from '@kernelpack/offload'
import type { OffloadEntryInput } from '@kernelpack/offload'
import { fixture } from './helpers.js'

const small: OffloadEntryInput[] = [
  { imageKind: 3, offloadKind: 2, strings: { triple: 'nvptx64-nvidia-cuda', arch: 'sm_90', producer: 'x' }, image: new Uint8Array(40).fill(0xab) },
  { imageKind: 5, offloadKind: 1, strings: new Map([['arch', 'sm_80'], ['', '']]), image: new Uint8Array(0) },
  { imageKind: 6, offloadKind: 8, flags: 1, strings: { k: 'v=w' }, image: new TextEncoder().encode('.version 8.0\n') },
]
const bases: [string, Uint8Array][] = [
  ['c_empty v1', fixture('c_empty.bin')],
  ['d_tailmerge v1', fixture('d_tailmerge.bin')],
  ['three v1', writeOffloadBinary(small)],
  ['v3', writeOffloadBinary(small, { version: 3 })],
  ['v3 zlib', writeOffloadBinary(small, { version: 3, compression: 'zlib' })],
  ['v3 zstd', writeOffloadBinary(small, { version: 3, compression: 'zstd' })],
]

const edge = [0n, 1n, 8n, 31n, 32n, 40n, 0x48n, 0xffn, 0xffffn, 1n << 32n, (1n << 32n) - 1n, 1n << 53n, 1n << 63n, (1n << 64n) - 1n]

type Mutation =
  | { t: 'flip'; at: number; xor: number }
  | { t: 'u64'; at: number; value: bigint; rel: number }
  | { t: 'cut'; at: number }
  | { t: 'grow'; bytes: number[] }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ t: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ t: fc.constant('u64' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom(...edge), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })), rel: fc.integer({ min: -16, max: 16 }) }),
  fc.record({ t: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ t: fc.constant('grow' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 24 }) }),
)

function mutate(base: Uint8Array, ms: Mutation[]): Uint8Array {
  let b = new Uint8Array(base)
  for (const m of ms) {
    if (b.length === 0) break
    if (m.t === 'flip') b[m.at % b.length]! ^= m.xor
    else if (m.t === 'cut') b = b.slice(0, m.at % b.length)
    else if (m.t === 'grow') {
      const n = new Uint8Array(b.length + m.bytes.length)
      n.set(b)
      n.set(m.bytes, b.length)
      b = n
    } else if (b.length >= 8) {
      // Header and entry fields are u64s on 8-byte boundaries; some values are relative to the length.
      const at = ((m.at % b.length) & ~7) % (b.length - 7)
      const value = m.rel !== 0 ? BigInt(Math.max(0, b.length + m.rel)) : m.value
      new DataView(b.buffer).setBigUint64(at, value, true)
    }
  }
  return b
}

const fuzz = suite('readOffloadBinaries fuzz')

fuzz('12,000 mutated inputs: success with in-bounds views, or a typed error with an offset', () => {
  let ok = 0
  let failed = 0
  for (const [name, base] of bases) {
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (ms) => {
        const input = mutate(base, ms)
        let result
        try {
          result = readOffloadBinaries(input, { maxInflatedSize: 1 << 20 })
        } catch (err) {
          failed++
          if (!(err instanceof DecodeError) && !(err instanceof RangeError)) throw new Error(`${name}: untyped error ${String(err)}`)
          const at = (err as { offset?: number }).offset
          if (typeof at !== 'number' || !Number.isInteger(at) || at < 0 || at > input.length) throw new Error(`${name}: bad offset ${at} for ${input.length} bytes: ${(err as Error).message}`)
          return
        }
        ok++
        for (const b of result) {
          if (b.offset + b.size > input.length) throw new Error(`${name}: binary past the end`)
          for (const e of b.entries) {
            if (e.image.buffer === input.buffer && e.image.byteOffset + e.image.length > input.byteOffset + input.length) throw new Error(`${name}: image view past the end`)
          }
        }
      }),
      { numRuns: 2000, seed: 0x5eed + name.length, includeErrorInReport: true },
    )
  }
  assert.is(ok + failed, 12000)
  assert.ok(failed > 1000 && ok > 100, `both outcomes exercised (ok ${ok}, errors ${failed})`)
})

fuzz.run()
