// loadModule's `codegen` option (issue 24): which of the emulator's writers runs the kernels, passed through
// to the emulator backend. saxpy (test/fixtures/toolchain/ptx/extern_c.sm_90.ptx) has a WebAssembly lowering;
// a kernel that reads %clock has none (the clock is the JavaScript tier's), so `codegen: 'wasm'` refuses it by
// its instruction while 'auto' and 'js' run it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadModule } from '@kernelpack/runtime'
import { readPtxManifest } from '@kernelpack/toolchain'

const root = join(import.meta.dirname, '..', '..')
const saxpyPtx = readFileSync(join(root, 'test', 'fixtures', 'toolchain', 'ptx', 'extern_c.sm_90.ptx'))
const clockPtx = new TextEncoder().encode(`.version 8.0
.target sm_80
.address_size 64
.visible .entry stamp(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %clock;
  mov.u32 %r2, 7;
  st.global.u32 [%rd1], %r2;
  ret;
}
`)

const s = suite('loadModule codegen option')

async function saxpy(codegen: 'auto' | 'wasm' | 'js'): Promise<number[]> {
  const mod = await loadModule(saxpyPtx, await readPtxManifest(saxpyPtx.toString('utf8'), { demangle: false }), { backend: 'emulator', workers: 0, codegen })
  const n = 100
  const [dx, dy] = await Promise.all([mod.upload(Float32Array.from({ length: n }, (_, i) => i * 0.25)), mod.upload(Float32Array.from({ length: n }, (_, i) => 7 - i))])
  await mod.kernel('saxpy').launch({ grid: 1, block: 128 }, n, 2.5, dx, dy)
  const out = Array.from(await dy.download(new Float32Array(n)))
  await mod.unload()
  return out
}

s('every setting runs saxpy with the same results', async () => {
  const f = Math.fround
  const want = Array.from({ length: 100 }, (_, i) => f(f(2.5 * f(i * 0.25)) + (7 - i)))
  for (const c of ['auto', 'wasm', 'js'] as const) assert.equal(await saxpy(c), want, `codegen: '${c}'`)
})

s("'wasm' refuses a kernel without a WebAssembly lowering, naming its instruction; 'auto' and 'js' run it", async () => {
  const manifest = await readPtxManifest(new TextDecoder().decode(clockPtx), { demangle: false })
  for (const c of ['auto', 'js'] as const) {
    const mod = await loadModule(clockPtx, manifest, { backend: 'emulator', workers: 0, codegen: c })
    const out = await mod.alloc(4)
    await mod.kernel('stamp').launch({ grid: 1, block: 1 }, out)
    assert.equal(Array.from(await out.download(new Uint32Array(1))), [7], `codegen: '${c}'`)
    await mod.unload()
  }
  const mod = await loadModule(clockPtx, manifest, { backend: 'emulator', workers: 0, codegen: 'wasm' })
  let err: unknown
  try {
    const out = await mod.alloc(4)
    await mod.kernel('stamp').launch({ grid: 1, block: 1 }, out)
  } catch (e) { err = e }
  await mod.unload()
  assert.ok(err instanceof Error, 'codegen: wasm must refuse the kernel')
  assert.match((err as Error).message, /no WebAssembly lowering \(codegen: 'wasm'\).*mov\.u32 %r1, %clock/)
})

s('a codegen that is not one of the three is a TypeError naming the option', async () => {
  let err: unknown
  try { await loadModule(saxpyPtx, await readPtxManifest(saxpyPtx.toString('utf8'), { demangle: false }), { backend: 'emulator', codegen: 'fast' as never }) } catch (e) { err = e }
  assert.ok(err instanceof TypeError)
  assert.is((err as Error).message, `loadModule: codegen must be 'auto', 'wasm' or 'js', got "fast"`)
})

s.run()
