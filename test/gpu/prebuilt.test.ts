// The kernel corpus's PTX carried by the GPU kit (test/gpu/prebuilt.ts, issue 30): a file written from these
// sources is used, one from other sources or of another format is refused with the reason, and the writer
// writes what the reader reads (on a one-unit corpus, so the test compiles nothing).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { kernelSourcesHash, readPrebuilt, writePrebuilt } from './prebuilt.js'
import { tempDir } from '../helpers/tools.js'

const dir = tempDir('kp-gpu-prebuilt-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
const manifest = { kernels: [{ name: 'k', demangled: 'k', params: [] }] } as never
const put = (name: string, data: unknown) => {
  const f = join(dir, name)
  writeFileSync(f, gzipSync(JSON.stringify(data)))
  return f
}

const Prebuilt = suite('kit: the kernel corpus as prebuilt PTX')

Prebuilt('the sources hash covers every file of test/fixtures/kernels and is stable', () => {
  assert.match(kernelSourcesHash(), /^[0-9a-f]{64}$/)
  assert.is(kernelSourcesHash(), kernelSourcesHash())
})

Prebuilt('writes the units that build, and reads them back while the sources match', async () => {
  const f = join(dir, 'ok.json.gz')
  const units = () => [
    { id: 'kernels/a.cu', group: 'kernels', build: async () => ({ ok: true as const, ptx: '.version 9.0\n', manifest }) },
    { id: 'kernels/broken.cu', group: 'kernels', build: async () => ({ ok: false as const }) },
    { id: 'emulator/x.cu', group: 'emulator-own', build: async () => { throw new Error('emulator units are not prebuilt') } },
  ]
  assert.is(await writePrebuilt(f, units), 1)
  const r = readPrebuilt(f)
  assert.type(r, 'object')
  assert.equal(Object.keys(r as object), ['kernels/a.cu'])
  assert.is((r as Record<string, { ptx: string }>)['kernels/a.cu']!.ptx, '.version 9.0\n')
})

Prebuilt('a file from other sources, or of another format, is refused with the reason', () => {
  const other = put('other.json.gz', { format: 'kernelpack gpu prebuilt 1', sourcesHash: '0'.repeat(64), units: { 'kernels/a.cu': { ptx: 'x', manifest } } })
  assert.match(readPrebuilt(other) as string, /other\.json\.gz was built from other kernel-corpus sources than these/)
  const fmt = put('fmt.json.gz', { format: 'something else', sourcesHash: kernelSourcesHash(), units: {} })
  assert.match(readPrebuilt(fmt) as string, /fmt\.json\.gz: not a kernelpack gpu prebuilt file \(format "something else"\)/)
})

Prebuilt.run()
