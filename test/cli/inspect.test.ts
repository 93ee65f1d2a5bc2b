import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeOffloadBinary } from '@kernelpack/offload'
import { tempDir } from '../helpers/tools.js'
import { kernelpack } from '../offload/cli-helpers.js'
import { offloadFixtures, parseTwin } from '../offload/helpers.js'

const inspect = suite('kernelpack inspect')
const clangDir = join(offloadFixtures, 'clang')

inspect('--json agrees with the independent readable twins of clang sections', async () => {
  const names = readdirSync(clangDir).filter((f) => f.endsWith('.offloading.bin'))
  const r = await kernelpack(['inspect', '--json', ...names], clangDir)
  assert.is(r.code, 0, r.stderr)
  const doc = JSON.parse(r.stdout) as { files: { file: string; binaries: { offset: number; size: number; version: number; entries: { imageKind: number; offloadKind: number; flags: number; imageSize: number; imageOffset: number; strings: Record<string, string> }[] }[] }[] }
  assert.is(doc.files.length, names.length)
  doc.files.forEach((f, i) => {
    assert.is(f.file, names[i])
    const twin = parseTwin(readFileSync(join(clangDir, names[i]!.replace('.bin', '.txt')), 'utf8'))
    assert.is(f.binaries.length, twin.length)
    f.binaries.forEach((b, j) => {
      const t = twin[j]!
      const e = b.entries[0]!
      assert.equal([b.offset, b.size, b.version], [t.offset, t.size, t.version])
      assert.equal([e.imageKind, e.offloadKind, e.flags, e.imageSize, e.imageOffset], [t.imageKind, t.offloadKind, t.flags, t.imageSize, t.offset + t.imageOffset])
      assert.equal(Object.entries(e.strings), t.strings)
    })
  })
})

inspect('the human table lists every image with kinds, size and strings', async () => {
  const r = await kernelpack(['inspect', 'b_cubin_ptx_2arch.bin'], offloadFixtures)
  assert.is(r.code, 0)
  const lines = r.stdout.trim().split('\n')
  assert.match(lines[0]!, /b_cubin_ptx_2arch\.bin: 4 binaries, 4 images/)
  assert.match(lines[1]!, /#\s+offset\s+ver\s+image\s+offload\s+flags\s+size\s+strings/)
  assert.is(lines.length, 6)
  // Sizes of the packed inputs (commands.txt): sm_80 cubin first, sm_90 PTX (.s) last.
  const size = (n: string) => readFileSync(join(offloadFixtures, 'inputs', n)).length
  assert.match(lines[2]!, new RegExp(`^0\\s+0x0\\s+1\\s+cubin\\s+cuda\\s+0x0\\s+${size('extern_c.sm_80.cubin')}\\s+`))
  assert.match(lines[5]!, new RegExp(`ptx\\s+openmp\\s+0x0\\s+${size('extern_c.sm_90.s')}\\s+.*dup=1,2`))
})

inspect('version 3 and compressed binaries', async () => {
  const dir = tempDir()
  const entries = [
    { imageKind: 6, offloadKind: 8, flags: 1, strings: new Map([['triple', 'spirv64'], ['quote', 'a"b']]), image: new Uint8Array(10) },
    { imageKind: 3, offloadKind: 2, strings: { arch: 'sm_90' }, image: new Uint8Array(20) },
  ]
  writeFileSync(join(dir, 'v3.bin'), writeOffloadBinary(entries, { version: 3, compression: 'zstd' }))
  const r = await kernelpack(['inspect', 'v3.bin', '--json'], dir)
  assert.is(r.code, 0, r.stderr)
  const b = JSON.parse(r.stdout).files[0].binaries
  assert.is(b.length, 1)
  assert.is(b[0].version, 3)
  assert.is(b[0].compressed, true)
  assert.equal(b[0].entries.map((e: { imageKindName: string; offloadKindName: string; flags: number; imageSize: number }) => [e.imageKindName, e.offloadKindName, e.flags, e.imageSize]), [['spirv', 'sycl', 1, 10], ['cubin', 'cuda', 0, 20]])
  assert.equal(b[0].entries[0].strings, { triple: 'spirv64', quote: 'a"b' })
  const text = await kernelpack(['inspect', 'v3.bin'], dir)
  assert.match(text.stdout, /3z\s+spirv\s+sycl\s+0x1\s+10\s+triple=spirv64 quote=a\\"b/)
})

inspect('errors', async () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'x.bin'), new Uint8Array(64))
  let r = await kernelpack(['inspect', 'x.bin'], dir)
  assert.is(r.code, 1)
  assert.match(r.stderr, /x\.bin: not an offload binary: bad magic 00 00 00 00/)
  r = await kernelpack(['inspect'], dir)
  assert.is(r.code, 2)
})

inspect.run()

const fresh = suite('kernelpack inspect in a fresh process')

fresh('loads the zlib/zstd codecs on demand for compressed binaries', async () => {
  const { spawnSync } = await import('node:child_process')
  const { repoRoot } = await import('../helpers/tools.js')
  const dir = tempDir()
  const z = writeOffloadBinary([{ imageKind: 3, offloadKind: 2, strings: { arch: 'sm_90' }, image: new Uint8Array(99).fill(1) }], { version: 3, compression: 'zlib' })
  writeFileSync(join(dir, 'z.bin'), z)
  const script = `const { main } = await import(${JSON.stringify(join(repoRoot, 'packages/cli/src/main.ts'))}); process.exitCode = await main(['inspect', '--json', 'z.bin'], { cwd: ${JSON.stringify(dir)}, stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) })`
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' })
  assert.is(r.status, 0, r.stderr)
  assert.is(JSON.parse(r.stdout).files[0].binaries[0].entries[0].imageSize, 99)
})

fresh.run()
