// Loads the addon, checks that it names both kernels and carries the device images, and prints them.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import assert from 'node:assert/strict'

const file = join(import.meta.dirname, 'native', 'build', 'Release', 'kp_native_addon.node')
const addon = createRequire(import.meta.url)(file)
const names = addon.kernels().map((k) => k.name)
assert.deepEqual(names.slice().sort(), ['_Z5scalePffi', 'vecAdd'])
// The fatbinary (magic 0xBA55ED50) is embedded in the .node file itself.
assert.ok(readFileSync(file).includes(Buffer.from([0x50, 0xed, 0x55, 0xba])), 'no fatbinary in the .node file')
for (const name of names) console.log(`kernel ${name}`)
const dev = addon.device()
if (dev.count > 0) {
  const c = addon.vecAdd(Float32Array.of(1, 2, 3), Float32Array.of(10, 20, 30))
  assert.deepEqual([...c], [11, 22, 33])
  console.log(`vecAdd on ${dev.count} GPU(s): ${[...c].join(' ')}`)
} else {
  console.log(`no GPU (${dev.status}): kernels registered, launch skipped`)
}
