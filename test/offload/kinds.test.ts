import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { imageKindFromExtension, imageKindName, offloadKindFromName, offloadKindName, readOffloadEntries } from '@kernelpack/offload'
import { tempDir, tool } from '../helpers/tools.js'

const exts = ['o', 'bc', 'cubin', 'fatbin', 's', 'spv', 'ptx', 'bin', 'CUBIN', 'S', 'txt']
const kinds = ['openmp', 'cuda', 'hip', 'sycl', 'none', 'CUDA', 'bogus', '']

/** What llvm-offload-binary stores: one image per extension and per kind= value. */
function packed(): { byExt: Map<string, number>; byKind: Map<string, number> } {
  const dir = tempDir()
  const args: string[] = []
  for (const e of exts) {
    writeFileSync(join(dir, `f.${e}`), 'data')
    args.push(`--image=file=f.${e},triple=t`)
  }
  writeFileSync(join(dir, 'noext'), 'data')
  args.push('--image=file=noext,triple=t')
  for (const k of kinds) args.push(`--image=file=f.bin,triple=t,kind=${k}`)
  const r = spawnSync(tool('llvm-offload-binary'), ['-o', 'o.bin', ...args], { cwd: dir, encoding: 'utf8' })
  assert.is(r.status, 0, r.stderr)
  const entries = readOffloadEntries(new Uint8Array(readFileSync(join(dir, 'o.bin'))))
  return {
    byExt: new Map([...exts, ''].map((e, i) => [e, entries[i]!.imageKind])),
    byKind: new Map(kinds.map((k, i) => [k, entries[exts.length + 1 + i]!.offloadKind])),
  }
}

const tool22 = packed()

// ---
const fromExt = suite('imageKindFromExtension')
fromExt('agrees with llvm-offload-binary for every extension tried', () => {
  for (const [e, kind] of tool22.byExt) {
    assert.is(imageKindFromExtension(e), kind, e)
    if (e) assert.is(imageKindFromExtension(`.${e}`), kind)
  }
})
fromExt.run()

// ---
const fromName = suite('offloadKindFromName')
fromName('agrees with llvm-offload-binary for every kind= value tried', () => {
  for (const [k, kind] of tool22.byKind) assert.is(offloadKindFromName(k), kind, k)
})
fromName.run()

// ---
const kindName = suite('offloadKindName')
kindName('round-trips the names LLVM knows, none otherwise', () => {
  for (const k of ['openmp', 'cuda', 'hip', 'sycl']) assert.is(offloadKindName(offloadKindFromName(k)), k)
  assert.is(offloadKindName(0), 'none')
  assert.is(offloadKindName(3), 'none')
})
kindName.run()

// ---
const imgName = suite('imageKindName')
imgName('is the extension that maps back to the kind (LLVM getImageKindName)', () => {
  for (const e of ['o', 'bc', 'cubin', 'fatbin', 's']) assert.is(imageKindName(tool22.byExt.get(e)!), e)
  assert.is(imageKindName(0), '')
  assert.is(imageKindName(6), '') // IMG_SPIRV: LLVM 22 has no name for it (llvm-offload-binary unpacks it as "<stem>-…-<arch>.0.")
  assert.is(imageKindName(99), '')
})
imgName.run()
