// @kernelpack/webgpu in Node on Dawn (the optional `webgpu` package) over chromium's SwiftShader Vulkan ICD
// (issue 15): the same plumbing cases as in the browser (hand-written WGSL through the test hook — memory,
// parameters, dispatch, not translation), and what loadModule refuses, with the reason.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { create } from 'webgpu'
import * as wg from '../../packages/webgpu/src/index.js'
import { repoRoot } from '../helpers/tools.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { runUnderDawn } from '../helpers/webgpu.js'
import { caseNames, runPlumbingCases } from '../fixtures/webgpu/plumbing-cases.js'
import { handKernels, handVariables } from '../fixtures/webgpu/hand-kernels.js'
import { loadModule } from '../../packages/runtime/src/index.js'
import { readPtxManifest } from '@kernelpack/toolchain'

// Dawn finds Vulkan at create(): re-run this file under chromium's loader + SwiftShader ICD first.
runUnderDawn(import.meta.filename)

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'plumbing.cu'), config })
const gpu = create([])
const ptxImage = (text: string) => ({ kind: 'ptx' as const, arch: config.target, bytes: new TextEncoder().encode(text) })

/** The error `f` throws (failing when it does not throw). */
async function caught(f: () => Promise<unknown>): Promise<Error> {
  try { await f() } catch (e) { return e as Error }
  throw new Error('expected an error')
}

const Device = suite('device on Dawn')

Device('requestWebGpuDevice: SwiftShader adapter, limits raised to the adapter\'s maxima', async () => {
  const g = await wg.requestWebGpuDevice({ gpu })
  assert.is(g.info.architecture, 'swiftshader')
  const al = wg.readLimits(g.adapter.limits)
  for (const k of wg.RAISED_LIMITS) assert.is(g.limits[k], al[k], k)
  assert.ok(g.features.has('subgroups'))
  g.device.destroy()
})

Device('no GPU object and no navigator.gpu: NoAdapterError naming the `webgpu` package', async () => {
  const err = await caught(() => wg.requestWebGpuDevice({}))
  assert.is(err.name, 'NoAdapterError')
  assert.match(err.message, /no navigator\.gpu.*install the optional `webgpu` package/)
})

Device('the backend keeps the GPU object referenced: Dawn crashes once it is collected', async () => {
  const be = await wg.createWebGpuBackend({ gpu: create([]), translator: wg.createFixedTranslator(handKernels, handVariables) })
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  for (let i = 0; i < 3; i++) { gc(); await new Promise((ok) => setTimeout(ok, 20)) }
  const mod = await be.loadModule(ptxImage(ptx), 'plumbing.ptx')
  const n = 256
  const c = await be.alloc(n * 4)
  const params = new Uint8Array(28)
  new DataView(params.buffer).setBigUint64(0, c, true)
  new DataView(params.buffer).setBigUint64(8, c, true)
  new DataView(params.buffer).setBigUint64(16, c, true)
  new DataView(params.buffer).setInt32(24, n, true)
  await be.copyToDevice(c, new Uint8Array(new Float32Array(n).fill(1.25).buffer))
  await be.launch(mod.getFunction('vec_add'), { grid: [1, 1, 1], block: [n, 1, 1], sharedBytes: 0 }, { bytes: params, offsets: [0, 8, 16, 24], sizes: [8, 8, 8, 4] })
  const out = new Float32Array(n)
  await be.copyFromDevice(new Uint8Array(out.buffer), c)
  assert.equal(Array.from(out), new Array(n).fill(2.5))
  await be.dispose()
})

Device.run()

// ---

const Plumbing = suite('plumbing on Dawn (hand-written WGSL, not translation)')

Plumbing('every plumbing case passes', async () => {
  const r = await runPlumbingCases(ptx, config.target, { gpu })
  assert.match(r.adapter, /swiftshader/)
  assert.equal(r.results.map((c) => c.name), caseNames)
  const failed = r.results.filter((c) => c.error)
  assert.is(failed.length, 0, failed.map((c) => `${c.name}: ${c.error}`).join('\n'))
})

Plumbing.run()

// ---

const Load = suite('loadModule refusals')

Load('the default translator (emit-wgsl) refuses an f64 kernel with its PTX line and the reason', async () => {
  const f64 = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'refused.cu'), config })
  const be = await wg.createWebGpuBackend({ gpu })
  assert.is(be.translator, wg.emitWgsl)
  const err = await caught(() => be.loadModule(ptxImage(f64), 'refused.ptx')) as InstanceType<typeof wg.CannotTranslateError>
  assert.is(err.name, 'CannotTranslateError')
  const line = f64.split('\n').findIndex((l) => /\batom\.global\.add\.f64/.test(l)) + 1
  assert.equal(err.refused.map((u) => [u.kernel, u.line]), [['axpy_f64', line]])
  assert.match(err.message, new RegExp(`^refused\\.ptx: cannot run on WebGPU: kernel axpy_f64: PTX line ${line} \\(.*f64.*\\): f64 atomics: WGSL has no f64`))
  await be.dispose()
})

Load('an entry without WGSL is refused with its PTX line; nothing is left allocated', async () => {
  const be = await wg.createWebGpuBackend({ gpu, translator: wg.createFixedTranslator(handKernels.filter((k) => k.name !== 'histogram_shared')) })
  const err = await caught(() => be.loadModule(ptxImage(ptx), 'plumbing.ptx')) as InstanceType<typeof wg.CannotTranslateError>
  const line = ptx.split('\n').findIndex((l) => /\.entry histogram_shared\(/.test(l)) + 1
  assert.ok(line > 0)
  assert.equal(err.refused.map((u) => [u.kernel, u.line]), [['histogram_shared', line]])
  assert.match(err.message, new RegExp(`kernel histogram_shared: PTX line ${line} \\(\\.visible \\.entry histogram_shared\\(\\): no hand-written WGSL`))
  await be.dispose()
})

Load('a kernel needing a feature the adapter lacks (shader-f16 on SwiftShader) is refused, naming it', async () => {
  const f16 = handKernels.map((k) => (k.name === 'vec_add' ? { ...k, features: ['shader-f16'] } : k))
  const be = await wg.createWebGpuBackend({ gpu, translator: wg.createFixedTranslator(f16) })
  const err = await caught(() => be.loadModule(ptxImage(ptx), 'plumbing.ptx'))
  assert.is(err.name, 'CannotTranslateError')
  assert.match(err.message, /kernel vec_add: needs the WebGPU feature\(s\) shader-f16, which google swiftshader/)
  await be.dispose()
})

Load('WGSL that does not compile is a translator bug: WebGpuError with the kernel and the WGSL line', async () => {
  const broken = handKernels.map((k) => (k.name === 'vec_add' ? { ...k, wgsl: k.wgsl.replace('let off =', 'let off: f32 =') } : k))
  const be = await wg.createWebGpuBackend({ gpu, translator: wg.createFixedTranslator(broken) })
  const err = await caught(() => be.loadModule(ptxImage(ptx), 'plumbing.ptx'))
  assert.is(err.name, 'WebGpuError')
  assert.match(err.message, /plumbing\.ptx: the WGSL of kernel vec_add \(from hand-written WGSL \(test hook\)\) does not compile: line \d+:\d+: /)
  await be.dispose()
})

Load.run()

// ---

const Runtime = suite("runtime backend 'webgpu' in Node")

Runtime("loadModule(…, { backend: 'webgpu' }) imports Dawn from the optional `webgpu` package and launches with the runtime's marshalling", async () => {
  const manifest = await readPtxManifest(ptx, { demangle: false })
  const mod = await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'webgpu', webgpu: { translator: wg.createFixedTranslator(handKernels, handVariables) } })
  assert.is(mod.backend.name, 'webgpu')
  assert.match(mod.backend.device.name, /^WebGPU: google swiftshader/)
  const n = 777
  const a = Float32Array.from({ length: n }, (_, i) => i), b = Float32Array.from({ length: n }, (_, i) => -2 * i)
  const [da, db, dc] = await Promise.all([mod.upload(a), mod.upload(b), mod.alloc(n * 4)])
  await mod.kernel('vec_add').launch({ grid: Math.ceil(n / 32), block: 32 }, da, db, dc, n)
  assert.equal(Array.from(await dc.download(new Float32Array(n))), Array.from({ length: n }, (_, i) => -i))
  const start = await mod.createEvent(), end = await mod.createEvent()
  await start.record()
  await mod.kernel('vec_add').launch({ grid: Math.ceil(n / 32), block: 32 }, da, db, dc, n)
  await end.record()
  assert.ok((await end.elapsedSince(start)) >= 0)
  await mod.unload()
})

Runtime('auto without a CUDA driver: Dawn\'s only adapter here is SwiftShader, a fallback (CPU) adapter, so the emulator runs and the reason names it', async () => {
  const manifest = await readPtxManifest(ptx, { demangle: false })
  const before = process.env.KERNELPACK_LIBCUDA
  process.env.KERNELPACK_LIBCUDA = '/nonexistent/libcuda.so.1'
  try {
    const mod = await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'auto', workers: 0 })
    assert.is(mod.backend.name, 'emulator')
    assert.match(mod.backend.reason, /^auto: using the PTX emulator because no NVIDIA driver was found \(could not load \/nonexistent\/libcuda\.so\.1\), and WebGPU's only adapter, google swiftshader.*, is a fallback \(CPU\) adapter \(webgpu\.allowFallbackAdapter takes it\)/)
    await mod.unload()
    // allowed to take the CPU adapter, auto runs WebGPU when every kernel translates (the hand-written WGSL)…
    const hand = wg.createFixedTranslator(handKernels, handVariables)
    const w = await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'auto', webgpu: { translator: hand, allowFallbackAdapter: true } })
    assert.is(w.backend.name, 'webgpu')
    assert.match(w.backend.reason, /^auto: no NVIDIA driver was found \(could not load \/nonexistent\/libcuda\.so\.1\), so WebGPU runs on google swiftshader .* \(Dawn\)$/)
    const n = 100
    const [da, db, dc] = await Promise.all([w.upload(new Float32Array(n).fill(1.5)), w.upload(new Float32Array(n).fill(2)), w.alloc(n * 4)])
    await w.kernel('vec_add').launch({ grid: 4, block: 32 }, da, db, dc, n)
    assert.equal(Array.from(await dc.download(new Float32Array(n))), new Array(n).fill(3.5))
    await w.unload()
    // …and the emulator when one kernel does not, naming it
    const partial = wg.createFixedTranslator(handKernels.filter((k) => k.name !== 'matmul_tile16'), handVariables)
    const e = await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'auto', workers: 0, webgpu: { translator: partial, allowFallbackAdapter: true } })
    assert.is(e.backend.name, 'emulator')
    assert.match(e.backend.reason, /^auto: no NVIDIA driver was found \(could not load \/nonexistent\/libcuda\.so\.1\), and WebGPU \(google swiftshader.*\) cannot run this module: kernel matmul_tile16: PTX line \d+ .*, so the PTX emulator runs/)
    await e.unload()
  } finally {
    if (before === undefined) delete process.env.KERNELPACK_LIBCUDA
    else process.env.KERNELPACK_LIBCUDA = before
  }
})

Runtime.run()

// ---

const Errors = suite('WebGPU errors reach the caller')

Errors('a validation error of a launch is thrown at the next download, naming the launch (sticky, like CUDA)', async () => {
  // the WGSL declares a 128-byte kp_params, but the kernel says it reads 28 bytes: the bound buffer is too small
  const bad = handKernels.map((k) => (k.name === 'vec_add' ? { ...k, wgsl: k.wgsl.replace('array<vec4<u32>, 2>', 'array<vec4<u32>, 8>') } : k))
  const be = await wg.createWebGpuBackend({ gpu, translator: wg.createFixedTranslator(bad, handVariables) })
  const mod = await be.loadModule(ptxImage(ptx), 'plumbing.ptx')
  const c = await be.alloc(64)
  await be.launch(mod.getFunction('vec_add'), { grid: [1, 1, 1], block: [16, 1, 1], sharedBytes: 0 }, { bytes: new Uint8Array(28), offsets: [0, 8, 16, 24], sizes: [8, 8, 8, 4] })
  const err = await caught(() => be.copyFromDevice(new Uint8Array(64), c))
  assert.is(err.name, 'WebGpuError')
  assert.match(err.message, /^WebGPU reported an error: launch vec_add: /)
  await be.copyFromDevice(new Uint8Array(64), c) // reported once
  await be.dispose()
})

Errors('an arena the device cannot allocate: alloc rejects with a RangeError naming the size, the use and the limit; the arena keeps working (issue 25)', async () => {
  // the device's own limits say 1 GiB; told 4 GiB, the backend asks for buffers Dawn refuses, as a device
  // whose maxBufferSize exceeds what its memory holds does
  const dev = await wg.requestWebGpuDevice({ gpu })
  const real = dev.limits.maxBufferSize!
  const be = await wg.createWebGpuBackend({ webgpu: { ...dev, limits: { ...dev.limits, maxBufferSize: 4 * real, maxStorageBufferBindingSize: 4 * real } } })
  const keep = await be.alloc(4096)
  await be.copyToDevice(keep, new Uint8Array([9, 8, 7, 6]))
  const err = await caught(() => be.alloc(real + (64 << 20)))
  assert.is(err.name, 'RangeError')
  assert.match(err.message, /^alloc: \d+ bytes: the WebGPU device could not grow its memory to \d+ bytes \(it holds \d+, 4096 in use; the adapter's limit is \d+\): Buffer size \(\d+\) exceeds the max buffer size limit \(\d+\)\. Free memory, or allocate less\.$/)
  // nothing was poisoned: the old arena and its contents are there, and new allocations work
  const got = new Uint8Array(4)
  await be.copyFromDevice(got, keep)
  assert.equal(Array.from(got), [9, 8, 7, 6])
  const more = await be.alloc(1 << 20)
  await be.copyToDevice(more, new Uint8Array([1, 2, 3]))
  const back = new Uint8Array(3)
  await be.copyFromDevice(back, more)
  assert.equal(Array.from(back), [1, 2, 3])
  await be.synchronize()
  await be.dispose()
  dev.device.destroy()
})

Errors('one allocation over the adapter\'s buffer limit is a WebGpuLimitError naming the limit, its value and the fix, before anything is queued', async () => {
  const be = await wg.createWebGpuBackend({ gpu })
  const err = await caught(() => be.alloc(2 ** 31)) as InstanceType<typeof wg.WebGpuLimitError>
  assert.is(err.name, 'WebGpuLimitError')
  assert.is(err.limit, 'maxBufferSize')
  assert.match(err.message, /^alloc of 2147483648 bytes: 2147483648 exceeds this adapter's maxBufferSize \(\d+\); the arena holds every allocation in one storage buffer: split the data over several launches, or use the emulator/)
  const small = await be.alloc(64)
  assert.ok(small > 0n)
  await be.dispose()
})

Errors('a lost device fails every later call with the reason', async () => {
  const dev = await wg.requestWebGpuDevice({ gpu })
  const be = await wg.createWebGpuBackend({ webgpu: dev, translator: wg.createFixedTranslator(handKernels, handVariables) })
  dev.device.destroy()
  await dev.device.lost
  const err = await caught(() => be.alloc(16))
  assert.is(err.name, 'WebGpuError')
  assert.match(err.message, /the WebGPU device was lost \(destroyed\)/)
})

Errors('a failed device assert(), __trap() and a wild load throw WebGpuFault at the next download with the PTX line (emit-wgsl)', async () => {
  const faults = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'faults.cu'), config })
  const be = await wg.createWebGpuBackend({ gpu })
  const mod = await be.loadModule(ptxImage(faults), 'faults.ptx')
  const n = 64
  const input = await be.alloc(n * 4), out = await be.alloc(n * 4)
  const params = { bytes: new Uint8Array(new BigUint64Array([input, out, BigInt(n)]).buffer).slice(0, 20), offsets: [0, 8, 16], sizes: [8, 8, 4] }
  const line = (re: RegExp) => faults.split('\n').findIndex((l) => re.test(l)) + 1
  const run = async (kernel: string, values: Int32Array) => {
    await be.copyToDevice(input, new Uint8Array(values.buffer))
    await be.launch(mod.getFunction(kernel), { grid: [1, 1, 1], block: [n, 1, 1], sharedBytes: 0 }, params)
    const got = new Int32Array(n)
    await be.copyFromDevice(new Uint8Array(got.buffer), out)
    return got
  }
  const good = Int32Array.from({ length: n }, (_, i) => i), bad = good.map((x) => (x === 17 ? -1 : x))
  for (const kernel of ['checked_copy', 'trap_on_negative']) assert.equal(Array.from(await run(kernel, good)), Array.from(good), kernel)
  let err = await caught(() => run('checked_copy', bad)) as InstanceType<typeof wg.WebGpuFault>
  assert.is(err.name, 'WebGpuFault')
  assert.is(err.kind, 'assert')
  assert.is(err.message, `kernel checked_copy: device-side assertion failed (PTX line ${line(/^\s*call(\.uni)?\s*(__assertfail|$)/)})`)
  err = await caught(() => run('trap_on_negative', bad)) as InstanceType<typeof wg.WebGpuFault>
  assert.is(err.kind, 'trap')
  assert.is(err.message, `kernel trap_on_negative: trap instruction executed (PTX line ${line(/^\s*trap;/)})`)
  assert.equal(Array.from(await run('checked_copy', good)), Array.from(good), 'the record is clear again')
  // a thread's access fault is kept until it ends or traps; a trap after it reports the access, which came first
  err = await caught(() => run('wild_then_trap', good)) as InstanceType<typeof wg.WebGpuFault>
  assert.is(err.kind, 'access')
  const lines = faults.split('\n'), entry = lines.findIndex((l) => l.includes('.entry wild_then_trap'))
  const load = lines.findIndex((l, i) => i > entry && /^\s*ld\.global/.test(l)) + 1
  assert.match(err.message, new RegExp(`^kernel wild_then_trap: invalid memory access at 0x[0-9a-f]+ \\(PTX line ${load}\\)$`))
  assert.ok(BigInt(err.address) >= BigInt(input) + (1n << 30n), `the address of the access, 0x${err.address.toString(16)}`)
  assert.equal(Array.from(await run('checked_copy', good)), Array.from(good), 'the record is clear again')
  await be.dispose()
})

Errors('integer to float conversions round to nearest even, as CUDA does (not as the implementation rounds f32(u32))', async () => {
  const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'conversions.cu'), config })
  const be = await wg.createWebGpuBackend({ gpu })
  const mod = await be.loadModule(ptxImage(ptx), 'conversions.ptx')
  // ties and near-ties at every exponent from 2^24 up, values SwiftShader's f32(u32) rounded wrongly, the ends
  const u: number[] = [0, 1, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 4177729699, 3531631270, 3895400816, 2960602997]
  for (let e = 24; e < 32; e++) for (let k = 0; k < 8; k++) { const b = 2 ** e + k * 2 ** (e - 24); u.push(b >>> 0, (b + 1) >>> 0, (b - 1) >>> 0) }
  const n = u.length
  const w = u.map((x, i) => BigInt.asIntN(64, (BigInt(x) << BigInt(i % 33)) * (i % 3 === 0 ? -1n : 1n)))
  const uBuf = await be.alloc(n * 4), wBuf = await be.alloc(n * 8), out = await be.alloc(n * 16)
  await be.copyToDevice(uBuf, new Uint8Array(Uint32Array.from(u).buffer))
  await be.copyToDevice(wBuf, new Uint8Array(BigInt64Array.from(w).buffer))
  const params = { bytes: new Uint8Array(new BigUint64Array([uBuf, wBuf, out, BigInt(n)]).buffer).slice(0, 28), offsets: [0, 8, 16, 24], sizes: [8, 8, 8, 4] }
  await be.launch(mod.getFunction('to_float'), { grid: [Math.ceil(n / 64), 1, 1], block: [64, 1, 1], sharedBytes: 0 }, params)
  const got = new Float32Array(n * 4)
  await be.copyFromDevice(new Uint8Array(got.buffer), out)
  // JS converts a safe integer exactly and Math.fround rounds to nearest even; a 64-bit one through its exact
  // decimal text (Number() of a bigint beyond 2^53 would round twice)
  const f32 = (b: bigint) => Math.fround(Number.parseFloat(b.toString()))
  const bad: string[] = []
  u.forEach((x, i) => {
    const want = [Math.fround(x), Math.fround(x | 0), f32(BigInt.asUintN(64, w[i]!)), f32(w[i]!)]
    want.forEach((v, k) => { if (got[4 * i + k] !== v) bad.push(`${['u32', 's32', 'u64', 's64'][k]} of ${k < 2 ? x : w[i]}: ${got[4 * i + k]}, expected ${v}`) })
  })
  assert.equal(bad, [])
  await be.dispose()
})

Errors.run()
