// loadModule: sources (bytes, path, file: URL, data: URL, Response, offload binary, raw PTX), backend choice
// ('cuda' with no driver, 'auto' falling back to the emulator), and the image picked from a real offload binary.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule, NoDriverError } from '@kernelpack/runtime'
import { fixturesDir, referencePtxDir, tempDir } from '../helpers/tools.js'
import { buildTestDouble } from './libcuda-double.js'
import { rejects } from './rejects.js'

const td = buildTestDouble()
// A path where no libcuda exists, so "no driver" holds on every machine, GPU or not.
const missing = join(tempDir('kp-no-driver-'), 'libcuda.so.1')
// llvm-offload-binary output: cubin sm_80, PTX sm_80, cubin sm_90, PTX sm_90 (openmp) of extern_c.cu
const offloadPath = join(fixturesDir, 'offload', 'b_cubin_ptx_2arch.bin')
const ptxPath = join(referencePtxDir, 'extern_c.sm_90.ptx')
const manifest = await readPtxManifest(readFileSync(ptxPath, 'utf8'), { demangle: false })
for (const k of manifest.kernels) td.defineKernel(k.name, k.params.map((p) => p.size))

// ---
const Backend = suite('loadModule: backend choice')

Backend("backend 'cuda' without libcuda says no NVIDIA driver was found and what to do", async () => {
  await rejects(() => loadModule(readFileSync(ptxPath), manifest, { backend: 'cuda', libcudaPath: missing }), (e) =>
    e instanceof NoDriverError &&
    e.message.startsWith(`no NVIDIA driver was found: could not load ${missing}`) &&
    e.message.includes('Install the NVIDIA driver') && e.message.includes("{ backend: 'emulator' }"))
})

Backend("'auto' without a driver falls back to the emulator and says so; the kernel runs there", async () => {
  const mod = await loadModule(readFileSync(ptxPath), manifest, { backend: 'auto', libcudaPath: missing })
  assert.is(mod.backend.name, 'emulator')
  assert.match(mod.backend.reason, /^auto: using the PTX emulator because no NVIDIA driver was found/)
  const n = 300
  const x = Float32Array.from({ length: n }, (_, i) => i * 0.5)
  const y = Float32Array.from({ length: n }, (_, i) => 1000 - i)
  const [dx, dy] = await Promise.all([mod.upload(x), mod.upload(y)])
  await mod.kernel('saxpy').launch({ grid: Math.ceil(n / 128), block: 128 }, n, 3, dx, dy)
  const out = await dy.download(new Float32Array(n))
  assert.equal(Array.from(out), Array.from(y, (v, i) => Math.fround(Math.fround(3 * x[i]!) + v)))
  await mod.unload()
})

Backend("'auto' with a driver picks cuda and says so", async () => {
  const mod = await loadModule(readFileSync(ptxPath), manifest, { backend: 'auto', libcudaPath: td.path })
  assert.is(mod.backend.name, 'cuda')
  assert.match(mod.backend.reason, /^auto: the NVIDIA driver answered \(kernelpack libcuda test double/)
  await mod.unload()
})

Backend("'emulator' is used when asked even with a driver", async () => {
  const mod = await loadModule(readFileSync(ptxPath), manifest, { backend: 'emulator', libcudaPath: td.path })
  assert.is(mod.backend.name, 'emulator')
  assert.match(mod.backend.reason, /^backend 'emulator' was requested; launches run on \d+ worker threads? \(worker_threads\) sharing device memory$/)
})

Backend('an unknown backend name is a TypeError', async () => {
  await rejects(() => loadModule(readFileSync(ptxPath), manifest, { backend: 'gpu' as never }), (e) => e instanceof TypeError && /'auto', 'cuda', 'emulator' or 'webgpu'/.test(e.message))
})

Backend.run()

// ---
const Sources = suite('loadModule: sources')

Sources('an offload binary as a file path: the cubin for the device on cuda, PTX on the emulator', async () => {
  const onCuda = await loadModule(offloadPath, manifest, { backend: 'cuda', libcudaPath: td.path })
  assert.equal(onCuda.image, { arch: 'sm_90', kind: 'cubin', reason: 'cubin sm_90 runs on compute capability 9.0 (same major, minor 0 <= 0)' })
  assert.match(td.log(), /cuModuleLoadDataEx kind=elf options=4 5 6 3 4/)
  const onEmu = await loadModule(offloadPath, manifest, { backend: 'emulator' })
  assert.is(onEmu.image.kind, 'ptx')
  // named as the manifest and `kernelpack inspect` name PTX targets (the entry's own arch string is sm_90)
  assert.is(onEmu.image.arch, 'compute_90')
  assert.match(onEmu.image.reason, /: compute_90 \(executed by the PTX emulator\)/)
})

Sources('file: URL, string file URL, ArrayBuffer, Response and data: URL', async () => {
  const bytes = readFileSync(ptxPath)
  const opts = { backend: 'emulator' } as const
  for (const src of [pathToFileURL(ptxPath), pathToFileURL(ptxPath).href, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    new Response(bytes), `data:text/plain;base64,${bytes.toString('base64')}`]) {
    const mod = await loadModule(src as never, manifest, opts)
    assert.is(mod.image.arch, 'compute_90')
  }
})

Sources('unreadable sources name the file and the problem', async () => {
  await rejects(() => loadModule('/nonexistent/k.offload', manifest, { backend: 'emulator' }), (e) => /^\/nonexistent\/k\.offload: cannot read the module: ENOENT/.test(e.message))
  await rejects(() => loadModule(new Uint8Array([1, 2, 3, 4, 5]), manifest, { backend: 'emulator' }), (e) => /module bytes: neither an offload binary \(magic 10 ff 10 ad\) nor a cubin/.test(e.message))
  const truncated = readFileSync(offloadPath).subarray(0, 100)
  await rejects(() => loadModule(truncated, manifest, { backend: 'emulator' }), (e) => /module bytes: not a readable offload binary/.test(e.message))
  await rejects(() => loadModule(new Response('nope', { status: 404, statusText: 'Not Found' }), manifest, { backend: 'emulator' }), (e) => /HTTP 404 Not Found/.test(e.message))
})

Sources('a malformed manifest names the place', async () => {
  const bytes = readFileSync(ptxPath)
  await rejects(() => loadModule(bytes, {} as never, { backend: 'emulator' }), (e) => e instanceof TypeError && /module bytes: manifest: no kernels array/.test(e.message))
  const bad = { kernels: [{ name: 'saxpy', demangled: 'saxpy', linkage: 'visible', params: [{ type: 'u32', size: 4, align: 3 }] }], variables: [] }
  await rejects(() => loadModule(bytes, bad as never, { backend: 'emulator' }), (e) => /manifest kernels\[0\] \(saxpy\) params\[0\]: needs \{ type, size, align \} with a power-of-two align, got \{"type":"u32","size":4,"align":3\}/.test(e.message))
  const under = { kernels: [{ name: 'saxpy', demangled: 'saxpy', linkage: 'visible', params: [{ type: 'u32', size: 4, align: 4 }, { type: 'u64', size: 8, align: 4 }] }], variables: [] }
  await rejects(() => loadModule(bytes, under as never, { backend: 'emulator' }), (e) => /params\[1\]: a 8-byte \.u64 parameter must be aligned to at least 8, got align 4/.test(e.message))
})

Sources('no image for the device: the error lists the images and the device', async () => {
  td.setDevice(7, 5)
  const { createCudaBackend } = await import('../../packages/runtime/src/cuda/cuda-backend.js')
  const { createModule } = await import('@kernelpack/runtime')
  const b = await createCudaBackend({ libcudaPath: td.path })
  await rejects(() => createModule(b, readFileSync(offloadPath), manifest, { sourceName: 'b.offload', reason: 'test' }), (e) =>
    e.message.startsWith('b.offload: no image in this module runs on kernelpack libcuda test double (device 0) (compute capability 7.5)') &&
    e.message.includes('images present: cubin sm_80, ptx compute_80, cubin sm_90, ptx compute_90'))
  td.reset()
})

Sources.run()

// ---
const Buffers = suite('DeviceBuffer')

Buffers('upload/download/write/fill/free on the cuda backend', async () => {
  const mod = await loadModule(readFileSync(ptxPath), manifest, { backend: 'cuda', libcudaPath: td.path })
  const buf = await mod.upload(new Uint16Array([1, 2, 3, 4]))
  assert.is(buf.byteLength, 8)
  assert.equal(Array.from(await buf.download()), [1, 0, 2, 0, 3, 0, 4, 0])
  await buf.write(new Uint8Array([9, 9]))
  await buf.fill(7)
  assert.equal(Array.from(await buf.download(new Uint8Array(8))), [7, 7, 7, 7, 7, 7, 7, 7])
  await rejects(() => buf.download(new Uint8Array(9)), (e) => e instanceof RangeError)
  await buf.free()
  await rejects(() => buf.download(), (e) => /after free/.test(e.message))
  const sub = await mod.upload(new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]).subarray(2, 6))
  assert.equal(Array.from(await sub.download()), [2, 3, 4, 5])
  const into = new Uint8Array(10)
  await sub.download(into.subarray(3, 7))
  assert.equal(Array.from(into), [0, 0, 0, 2, 3, 4, 5, 0, 0, 0])
  const z = await mod.alloc(16)
  assert.equal(Array.from(await z.download()), new Array(16).fill(0))
  await mod.unload()
  await rejects(() => mod.alloc(4), (e) => /after the module was unloaded/.test(e.message))
})

Buffers.run()

// ---
const Checked = suite('loadModule: the manifest is checked against the PTX (issue 17 item 8)')

// out[0] = n * a: a u32 and an f32 at equal sizes, so a manifest that swaps them keeps every offset
const scalePtx = `.version 8.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u32 n, .param .f32 a, .param .u64 out)
{
\t.reg .b32 %r<2>;
\t.reg .f32 %f<4>;
\t.reg .b64 %rd<3>;
\tld.param.u32 %r1, [n];
\tld.param.f32 %f1, [a];
\tld.param.u64 %rd1, [out];
\tcvta.to.global.u64 %rd2, %rd1;
\tcvt.rn.f32.u32 %f2, %r1;
\tmul.f32 %f3, %f2, %f1;
\tst.global.f32 [%rd2], %f3;
\tret;
}
`
const scaleParams = [{ name: 'n', type: 'u32', size: 4, align: 4 }, { name: 'a', type: 'f32', size: 4, align: 4 }, { name: 'out', type: 'u64', size: 8, align: 8, pointer: true }]
const scaleManifest = (params: unknown[]) => ({ kernels: [{ name: 'scale', demangled: 'scale', linkage: 'visible', params }], variables: [] }) as never
const scaleBytes = new TextEncoder().encode(scalePtx)

Checked('the manifest that matches runs', async () => {
  const mod = await loadModule(scaleBytes, scaleManifest(scaleParams), { backend: 'emulator' })
  const out = await mod.alloc(4)
  await mod.kernel('scale').launch({ grid: 1, block: 1 }, 3, 0.5, out)
  assert.equal(Array.from(await out.download(new Float32Array(1))), [1.5])
})

Checked('types reordered at equal offsets (was a silently wrong result) are refused at load, naming the parameter', async () => {
  const swapped = [scaleParams[1], scaleParams[0], scaleParams[2]]
  await rejects(() => loadModule(scaleBytes, scaleManifest(swapped), { backend: 'emulator' }), (e) => e instanceof TypeError &&
    e.message.startsWith('module bytes: manifest kernels[0] (scale) params[0] (a): .f32 of 4 bytes aligned to 4, but the PTX image compute_80 declares n: .u32 of 4 bytes aligned to 4 (PTX line 4)') &&
    e.message.includes('is the manifest from another build?'))
})

Checked('types of different sizes swapped (was a fault at address 0x4) are refused at load', async () => {
  const swapped = [scaleParams[2], scaleParams[0], scaleParams[1]]
  await rejects(() => loadModule(scaleBytes, scaleManifest(swapped), { backend: 'emulator' }), (e) => e instanceof TypeError &&
    /manifest kernels\[0\] \(scale\) params\[0\] \(out\): \.u64 of 8 bytes aligned to 8, but the PTX image compute_80 declares n: \.u32/.test(e.message))
  await rejects(() => loadModule(scaleBytes, scaleManifest(scaleParams.slice(0, 2)), { backend: 'emulator' }), (e) =>
    /manifest kernels\[0\] \(scale\): 2 parameters, but the PTX image compute_80 declares 3/.test(e.message))
})

Checked('type "constructor" and other names outside the PTX type table are refused', async () => {
  for (const type of ['constructor', '__proto__', 'toString', 'float']) {
    await rejects(() => loadModule(scaleBytes, scaleManifest([{ ...scaleParams[0], type }, scaleParams[1], scaleParams[2]]), { backend: 'emulator' }), (e) =>
      e instanceof TypeError && e.message.includes(`manifest kernels[0] (scale) params[0]: type ${JSON.stringify(type)} is not a PTX type`))
  }
})

Checked('a size of 2^31 (was "expects an integer of 17179869184 bits") and sizes that do not fit the type are refused', async () => {
  await rejects(() => loadModule(scaleBytes, scaleManifest([{ ...scaleParams[0], size: 2 ** 31 }, scaleParams[1], scaleParams[2]]), { backend: 'emulator' }), (e) =>
    e instanceof TypeError && e.message.includes('params[0]: a parameter of 2147483648 bytes is larger than the 32764 bytes a kernel\'s parameters may take in all'))
  await rejects(() => loadModule(scaleBytes, scaleManifest([{ ...scaleParams[0], size: 8, align: 8 }, scaleParams[1], scaleParams[2]]), { backend: 'emulator' }), (e) =>
    e instanceof TypeError && e.message.includes('params[0]: size 8 is not the 4 bytes of a .u32'))
})

Checked('a binary with cubins and PTX is checked against its PTX even when the cubin is loaded', async () => {
  const k = manifest.kernels.find((x) => x.params.length >= 2 && x.params[0]!.size === x.params[1]!.size && x.params[0]!.type !== x.params[1]!.type)!
  const bad = { ...manifest, kernels: manifest.kernels.map((x) => (x === k ? { ...x, params: [x.params[1]!, x.params[0]!, ...x.params.slice(2)] } : x)) }
  await rejects(() => loadModule(offloadPath, bad, { backend: 'cuda', libcudaPath: td.path }), (e) =>
    e instanceof TypeError && e.message.includes(`(${k.name}) params[0]`) && /but the PTX image sm_80 declares saxpy_param_0/.test(e.message))
})

Checked.run()
