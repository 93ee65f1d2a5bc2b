// Events on the emulator (issue 25: events on all three backends; the cuda backend's are tested against the
// libcuda test double in cuda-ffi.test.ts, WebGPU's on Dawn in test/webgpu/node.test.ts): mod.createEvent(),
// record before and after work, elapsedSince the time between, in queue order, on both tiers and with workers
// (where launches run on other threads and the record must wait for them).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule } from '@kernelpack/runtime'
import { referencePtxDir } from '../helpers/tools.js'

const ptxPath = join(referencePtxDir, 'extern_c.sm_90.ptx')
const ptx = readFileSync(ptxPath)
const manifest = await readPtxManifest(ptx.toString('utf8'), { demangle: false })
const kernel = 'saxpy'

const s = suite('emulator events')

for (const [label, opts] of [['wasm tier, calling thread', { workers: 0 }], ['JS tier, calling thread', { workers: 0, codegen: 'js' as const }], ['2 workers', { workers: 2 }]] as const) {
  s(`${label}: record, launch, record: elapsedSince measures the launch; the download sees its result`, async () => {
    const mod = await loadModule(ptx, manifest, { backend: 'emulator', ...opts })
    const n = 1 << 16
    const x = Float32Array.from({ length: n }, (_, i) => i * 0.5)
    const y = Float32Array.from({ length: n }, (_, i) => 1000 - i)
    const [dx, dy] = await Promise.all([mod.upload(x), mod.upload(y)])
    const [start, end] = [await mod.createEvent(), await mod.createEvent()]
    await start.record()
    for (let r = 0; r < 4; r++) await mod.kernel(kernel).launch({ grid: n / 256, block: 256 }, n, 2, dx, dy)
    await end.record()
    const ms = await end.elapsedSince(start)
    assert.ok(Number.isFinite(ms) && ms >= 0, String(ms))
    // an event recorded with nothing queued after another: no time passes in between on the queue
    const again = await mod.createEvent()
    await again.record()
    assert.ok((await again.elapsedSince(end)) >= 0)
    const out = await dy.download(new Float32Array(n))
    assert.is(out[10], 1000 - 10 + 4 * 2 * 5)
    await Promise.all([start.destroy(), end.destroy(), again.destroy()])
    await mod.unload()
  })
}

s('an event that was never recorded: elapsedSince says so', async () => {
  const mod = await loadModule(ptx, manifest, { backend: 'emulator', workers: 0 })
  const [a, b] = [await mod.createEvent(), await mod.createEvent()]
  await a.record()
  try {
    await b.elapsedSince(a)
    assert.unreachable('elapsedSince of an unrecorded event resolved')
  } catch (err) {
    assert.match((err as Error).message, /both events must have been recorded/)
  }
  await mod.unload()
})

s.run()
