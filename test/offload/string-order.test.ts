// The string order of llvm-offload-binary is LLVM 22's DenseMap iteration order; checked here against
// the real tool for key sets that exercise every hash length class and the table's growth.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { hashStringRef, orderKeysLikeLLVM, readOffloadEntries } from '@kernelpack/offload'
import { tempDir, tool } from '../helpers/tools.js'
import { prng } from './cli-helpers.js'

/** The key order llvm-offload-binary stores for `--image=file=a.cubin,<keys>=v…`. */
function toolOrder(dir: string, keys: string[]): string[] {
  const arg = ['file=a.cubin', ...keys.map((k) => `${k}=v`)].join(',')
  const r = spawnSync(tool('llvm-offload-binary'), ['-o', 'o.bin', `--image=${arg}`], { cwd: dir, encoding: 'utf8' })
  assert.is(r.status, 0, r.stderr)
  return [...readOffloadEntries(new Uint8Array(readFileSync(join(dir, 'o.bin'))))[0]!.strings.keys()]
}

const order = suite('orderKeysLikeLLVM')

order('matches llvm-offload-binary for keys of every length class, the empty key, and table growth', () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'a.cubin'), 'x')
  const r = prng(42)
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789_-+.'
  const word = (n: number) => Array.from({ length: n }, () => r.pick([...chars])).join('')
  const sets: string[][] = [
    // lengths 0..140 (hash_short's 1-3, 4-8, 9-16, 17-32, 33-64 branches and the 64-byte block loop)
    Array.from({ length: 47 }, (_, i) => word(i * 3)),
    // 60 and 200 keys: the 64-bucket table grows to 128 and 512 buckets
    Array.from({ length: 60 }, () => word(r.int(1, 10))),
    Array.from({ length: 200 }, () => word(r.int(1, 20))),
    ['triple', 'arch', 'feature', 'producer'],
  ]
  for (const keys of sets) {
    const unique = [...new Set(keys)]
    assert.equal(orderKeysLikeLLVM(['file', ...unique]).filter((k) => k !== 'file'), toolOrder(dir, unique))
  }
})

order('duplicates keep their first place', () => {
  assert.equal(orderKeysLikeLLVM(['a', 'b', 'a']), orderKeysLikeLLVM(['a', 'b']))
})

order.run()

const hash = suite('hashStringRef')

hash('is a 32-bit value, stable across calls', () => {
  for (const s of ['', 'a', 'arch', 'x'.repeat(100)]) {
    const h = hashStringRef(s)
    assert.ok(Number.isInteger(h) && h >= 0 && h < 2 ** 32)
    assert.is(hashStringRef(s), h)
  }
  assert.is.not(hashStringRef('arch'), hashStringRef('triple'))
})

hash.run()
