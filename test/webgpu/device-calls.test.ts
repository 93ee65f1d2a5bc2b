// Device-function calls on WebGPU (issue 26 item 1): the translator expands them in place (@kernelpack/ptx
// inlineCalls), so a callee's parameters, returns and locals live in the caller's state spaces as the PTX
// passes them. test/fixtures/webgpu/device-calls.cu keeps its functions as calls (__noinline__): a pointer into
// the caller's local array, a struct returned by value, nested calls in a loop, a call only some threads make,
// 64-bit and pointer parameters; every result compared with the emulator's, for nvcc and clang 22. A recursive
// function refuses its kernel, naming the function.
import { join } from 'node:path'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { repoRoot } from '../helpers/tools.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

const source = join(repoRoot, 'test', 'fixtures', 'webgpu', 'device-calls.cu')
const configs = corpusConfigs.filter((c) => c.label !== 'nvcc compute_90')
const ptxs = new Map<string, string>()
for (const config of configs) ptxs.set(config.label, await compilePtx({ source, config }))

const n = 1000
const xs = Float32Array.from({ length: n }, (_, i) => ((i * 37) % 101) / 16 - 3)
const table = Uint32Array.from({ length: 8 }, (_, i) => (0x9e3779b9 * (i + 1)) >>> 0)

async function run(k: KernelRunner): Promise<{ out: Float32Array; hashes: BigUint64Array }> {
  const dx = await k.upload(xs), dt = await k.upload(table), dout = await k.alloc(4 * n), dh = await k.alloc(8 * n)
  await k.launch('device_calls', Math.ceil(n / 128), 128, [dx, dt, dout, dh, n])
  return { out: await k.read(dout, Float32Array), hashes: await k.read(dh, BigUint64Array) }
}

const s = await webgpuPageSuite('WebGPU: device-function calls, inlined')

for (const config of configs) {
  s(`${config.label}: the calls run with the emulator's results; the recursive kernel is refused by name`, async (ctx) => {
    const ptx = ptxs.get(config.label)!
    // the PTX keeps them as calls
    for (const f of ['minmax3', 'split', 'poly', 'mix64']) assert.ok(new RegExp(`call(\\.uni)?\\s[^;]*${f}`).test(ptx), `${config.label}: ${f} is called in the PTX`)
    const gpu = await run(await KernelRunner.load(ctx.gpu!, ptx, config.target, `device-calls (WebGPU, ${config.label})`))
    const refused = ctx.gpu!.refused.map((r) => `${r.kernel}: ${r.reason}`)
    assert.is(refused.length, 1, refused.join('\n'))
    assert.match(refused[0]!, /^recursive_fib: _Z3fibj \(fib\(unsigned int\)\) calls itself \(recursion\): WGSL functions cannot recurse/)
    const be = createEmulatorBackend({ workers: 0 })
    const emu = await run(await KernelRunner.load(be, ptx, config.target, `device-calls (emulator, ${config.label})`))
    be.dispose()
    assert.equal([...gpu.hashes], [...emu.hashes], 'the 64-bit hashes')
    const gb = new Uint32Array(gpu.out.buffer), eb = new Uint32Array(emu.out.buffer)
    for (let i = 0; i < n; i++) assert.is(gb[i], eb[i], `out[${i}]: WebGPU ${gpu.out[i]}, emulator ${emu.out[i]}`)
    // and the emulator's results are the algorithm's (minmax spread, plus poly's for every third thread)
    assert.is(emu.out[1], Math.fround(Math.max(xs[1]!, xs[2]!, xs[3]!) - Math.min(xs[1]!, xs[2]!, xs[3]!)))
  })
}

s.run()
