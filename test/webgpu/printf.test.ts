// Device printf on WebGPU (issue 26 item 2): records appended to the printf area of the fault-record buffer,
// formatted and ordered on the host with the emulator's formatter and order (@kernelpack/ptx printf.ts). The
// text printed at synchronize must be the emulator's, byte for byte: the warp-primitives walkthrough and the
// uneven loop of test/fixtures/emulator/printf-warp.cu (statement by statement per warp, lanes that diverge,
// two pieces of one line), and test/fixtures/webgpu/printf.cu (every conversion, across a barrier, several
// blocks; a statement one lane reaches before a shuffle; strings, read at the call), with nvcc and clang 22.
// What printf returns is the same on both: the number of arguments its format reads (CUDA's printf).
import { join } from 'node:path'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner, createRng } from '../helpers/kernel-runner.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { fixturesDir } from '../helpers/tools.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

const configs = corpusConfigs.filter((c) => c.label !== 'nvcc compute_90')
const warpSource = join(fixturesDir, 'emulator', 'printf-warp.cu'), formatSource = join(fixturesDir, 'webgpu', 'printf.cu')
const rng = createRng(5)
const data = Int32Array.from({ length: 96 }, () => rng.int(-40, 40))
const xs = Float32Array.from({ length: 128 }, () => rng.int(-5000, 5000) / 64)
const big = BigInt64Array.from({ length: 64 }, (_, i) => BigInt(i) * -123456789012n + 7n)

/** Runs the cases on one backend and returns what each printed. */
async function runAll(k: KernelRunner, fk: KernelRunner, printed: () => Promise<string>): Promise<string[]> {
  const out: string[] = []
  await k.launch('warp_primitives', 3, 32, [await k.upload(data)])
  await k.read(await k.alloc(4), Uint8Array)
  out.push(await printed())
  await k.launch('uneven_loop', 1, 32, [await k.alloc(4 * 32)])
  await k.read(await k.alloc(4), Uint8Array)
  out.push(await printed())
  await fk.launch('printf_formats', 2, 64, [await fk.upload(xs), await fk.upload(big)])
  await fk.read(await fk.alloc(4), Uint8Array)
  out.push(await printed())
  await fk.launch('printf_diverged', 1, 64, [await fk.alloc(4 * 64)])
  await fk.read(await fk.alloc(4), Uint8Array)
  out.push(await printed())
  await fk.launch('printf_string', 1, 8, [await fk.upload(new TextEncoder().encode('kernelpack prints strings\0'))])
  await fk.read(await fk.alloc(4), Uint8Array)
  out.push(await printed())
  return out
}

const s = await webgpuPageSuite('WebGPU: device printf, the emulator\'s text')

for (const config of configs) {
  s(`${config.label}: warp primitives, an uneven loop and every conversion print what the emulator prints`, async (ctx) => {
    const gpu = ctx.gpu!
    const warpPtx = await compilePtx({ source: warpSource, config }), formatPtx = await compilePtx({ source: formatSource, config })
    const gk = await KernelRunner.load(gpu, warpPtx, config.target, `printf-warp (WebGPU, ${config.label})`)
    assert.equal(gpu.refused, [], 'printf-warp.cu translates')
    const gf = await KernelRunner.load(gpu, formatPtx, config.target, `printf (WebGPU, ${config.label})`)
    assert.equal(gpu.refused, [], 'printf.cu translates, %s included')
    await gpu.printed()
    const onGpu = await runAll(gk, gf, () => gpu.printed())
    let text = ''
    const be = createEmulatorBackend({ workers: 0, print: (t) => { text += t } })
    const ek = await KernelRunner.load(be, warpPtx, config.target, 'printf-warp (emulator)'), ef = await KernelRunner.load(be, formatPtx, config.target, 'printf (emulator)')
    const onEmu = await runAll(ek, ef, async () => { const t = text; text = ''; return t })
    be.dispose()
    for (let i = 0; i < onEmu.length; i++) {
      assert.ok(onEmu[i]!.length > 50, `case ${i} printed on the emulator`)
      assert.fixture(onGpu[i]!, onEmu[i]!, `case ${i}`)
    }
    assert.ok(onEmu[2]!.includes('b1 t2: -3 14 3999999998 101 ABE 12 c|    2|2   |'), onEmu[2]!.slice(0, 300))
    // what printf returns, CUDA's: the number of arguments its format reads, on both
    const results = async (k: KernelRunner) => {
      const out = await k.alloc(4 * 64)
      await k.launch('printf_result', 1, 32, [out])
      return [...await k.read(out, Int32Array)]
    }
    const expected = Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? 3 : 0))
    assert.equal(await results(gk), expected, 'WebGPU')
    const be2 = createEmulatorBackend({ workers: 0, print: () => {} })
    assert.equal(await results(await KernelRunner.load(be2, warpPtx, config.target, 'printf-warp (emulator)')), expected, 'emulator')
    be2.dispose()
    await gpu.printed()
    assert.ok(onEmu[4]!.startsWith('kernelpack prints strings|0|even  ||kernelpack prints strings|\nernelpack prints strings|1|odd   ||rnelpack prints strings|\n'), onEmu[4]!.slice(0, 200))
    assert.ok(onEmu[4]!.includes('[kernelpack prints strings] [kernelpack prints strings]\n'), onEmu[4]!)
    // statement by statement: lane 1's line before lane 0's, in both warps
    assert.ok(onEmu[3]!.startsWith('lane 1 before the shuffle\nlane 0 after: 3\nlane 1 after: 6\n'), onEmu[3]!)
  })
}

s.run()
