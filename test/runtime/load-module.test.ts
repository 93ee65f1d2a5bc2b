// loadModule: sources (bytes, path, file: URL, data: URL, Response, offload binary, raw PTX), backend choice
// ('cuda' with no driver, 'auto' falling back to the emulator), and the image picked from a real offload binary.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule, NoDriverError } from '@kernelpack/runtime'
import { referenceDir, tempDir } from '../helpers/tools.js'
import { buildTestDouble } from './libcuda-double.js'
import { rejects } from './rejects.js'

const td = buildTestDouble()
// A path where no libcuda exists, so "no driver" holds on every machine, GPU or not.
const missing = join(tempDir('kp-no-driver-'), 'libcuda.so.1')
// llvm-offload-binary output: cubin sm_80, PTX sm_80, cubin sm_90, PTX sm_90 (openmp) of extern_c.cu
const offloadPath = join(referenceDir, 'offload', 'b_cubin_ptx_2arch.bin')
const ptxPath = join(referenceDir, 'nvcc', 'extern_c.sm_90.ptx')
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
  assert.is(mod.backend.reason, "backend 'emulator' was requested")
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
    e.message.includes('images present: cubin sm_80, ptx sm_80, cubin sm_90, ptx sm_90'))
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
