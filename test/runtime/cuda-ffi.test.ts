// The cuda backend against the libcuda test double (test/fixtures/runtime/README.md): entry-point resolution,
// the bytes every kind of kernel parameter arrives as, launch configuration, and error mapping.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KernelManifest } from '@kernelpack/offload'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule, slice, t, CudaError, NoDriverError, type Module, type DeviceBuffer } from '@kernelpack/runtime'
import { createCudaBackend } from '../../packages/runtime/src/cuda/cuda-backend.js'
import { entryPoints } from '../../packages/runtime/src/cuda/driver-api.js'
import { referencePtxDir, fixturesDir, tempDir, tool } from '../helpers/tools.js'
import { buildTestDouble } from './libcuda-double.js'
import { rejects } from './rejects.js'
import { readHostFacts, schemas, values, hex } from './host-structs.js'

const td = buildTestDouble()
const host = readHostFacts()

// PTX: structs.cu and scalars.cu from the reference corpus (nvcc 13.0), abi.cu compiled here with nvcc.
const structsPtx = readFileSync(join(referencePtxDir, 'structs.sm_90.ptx'), 'utf8')
const scalarsPtx = readFileSync(join(referencePtxDir, 'scalars.sm_90.ptx'), 'utf8')
const abiDir = tempDir('kp-abi-')
execFileSync(tool('nvcc'), ['-ptx', '-arch=sm_90', join(fixturesDir, 'runtime', 'abi.cu'), '-o', join(abiDir, 'abi.ptx')], { stdio: 'pipe' })
const abiPtx = readFileSync(join(abiDir, 'abi.ptx'), 'utf8')

async function load(ptx: string): Promise<Module> {
  const manifest = await readPtxManifest(ptx)
  // the driver knows each kernel's parameter sizes from the image; the double is told them from the PTX
  for (const k of manifest.kernels) td.defineKernel(k.name, k.params.map((p) => p.size))
  return loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'cuda', libcudaPath: td.path })
}

interface Launch { header: string; params: { align16: number; hex: string }[] }
function lastLaunch(): Launch {
  const lines = td.log().split('\n')
  const i = lines.map((l) => l.startsWith('cuLaunchKernelEx')).lastIndexOf(true)
  assert.ok(i >= 0, 'a launch was recorded')
  const params: Launch['params'] = []
  for (const l of lines.slice(i + 1)) {
    const m = /^param (\d+) addr%16=(\d+) ([0-9a-f]*)$/.exec(l)
    if (!m) break
    params.push({ align16: Number(m[2]), hex: m[3]! })
  }
  return { header: lines[i]!, params }
}
const u64hex = (v: bigint) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, v, true); return hex(b) }

const structsMod = await load(structsPtx)
const scalarsMod = await load(scalarsPtx)
const abiMod = await load(abiPtx)
const out: DeviceBuffer = await structsMod.alloc(256)
const paramsOf = (mod: Module, name: string) => mod.manifest.kernels.find((k) => k.name === name)!.params

// ---
const Resolve = suite('cuGetProcAddress_v2')

Resolve('every entry point is resolved once, with the ABI version of its PFN typedef in cudaTypedefs.h and legacy-stream flags', () => {
  const typedefs = readFileSync(join(process.env.CUDA_PATH ?? '/usr/local/cuda', 'include', 'cudaTypedefs.h'), 'utf8')
  const queries = [...td.log().matchAll(/^cuGetProcAddress_v2 (\w+) (\d+) (\d+)$/gm)].map((m) => ({ name: m[1]!, version: Number(m[2]), flags: Number(m[3]) }))
  assert.equal(queries.map((q) => q.name).sort(), entryPoints.map((e) => e.name).sort())
  for (const q of queries) {
    assert.is(q.flags, 1, `${q.name}: CU_GET_PROC_ADDRESS_LEGACY_STREAM`)
    const m = new RegExp(`typedef CUresult \\(CUDAAPI \\*PFN_${q.name}_v${q.version}\\)\\(([^)]*)\\);`).exec(typedefs)
    assert.ok(m, `PFN_${q.name}_v${q.version} exists in cudaTypedefs.h`)
    const cParams = m![1]!.trim() === 'void' ? 0 : m![1]!.split(',').length
    const proto = entryPoints.find((e) => e.name === q.name)!.proto
    const ours = /\(\)$/.test(proto) ? 0 : proto.slice(proto.indexOf('(') + 1, -1).split(',').length
    assert.is(ours, cParams, `${q.name}: parameter count of our declaration vs the PFN typedef`)
  }
})

Resolve('the per-thread default stream option asks for per-thread symbols (flags 2) and launches through cuLaunchKernelEx_ptsz', async () => {
  td.clearLog()
  const b = await createCudaBackend({ libcudaPath: td.path, perThreadDefaultStream: true })
  assert.ok(/^cuGetProcAddress_v2 cuLaunchKernelEx 11060 2$/m.test(td.log()))
  const mod = await b.loadModule({ kind: 'ptx', arch: 'compute_90', bytes: new TextEncoder().encode(structsPtx) })
  const fn = await mod.getFunction('_Z8k_params6Params')
  td.clearLog()
  await b.launch(fn, { grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0 }, { bytes: new Uint8Array(48), offsets: [0], sizes: [48] })
  assert.match(td.log(), /^cuLaunchKernelEx_ptsz _Z8k_params6Params/m)
  await b.dispose()
})

Resolve('CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND and _VERSION_NOT_SUFFICIENT become clear errors', async () => {
  td.procStatus('cuLaunchKernelEx', 1)
  await rejects(() => createCudaBackend({ libcudaPath: td.path }), (e: Error) =>
    e instanceof NoDriverError && /no cuLaunchKernelEx \(cuGetProcAddress: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND\); update the NVIDIA driver/.test(e.message))
  td.reset()
  td.procStatus('cuMemAlloc', 2)
  await rejects(() => createCudaBackend({ libcudaPath: td.path }), (e: Error) =>
    /too old for cuMemAlloc as declared for CUDA 3\.2 \(cuGetProcAddress: CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT\)/.test(e.message))
  td.reset()
})

Resolve('a driver reporting no device is "no driver" (so auto can fall back)', async () => {
  td.setDevice(9, 0, 0)
  await rejects(() => createCudaBackend({ libcudaPath: td.path }), (e: Error) => e instanceof NoDriverError && /reports no CUDA device/.test(e.message))
  td.reset()
})

Resolve('each device uses its primary context, made current again whenever another device was used last', async () => {
  td.setDevice(9, 0, 2)
  const b0 = await createCudaBackend({ libcudaPath: td.path, device: 0 })
  const b1 = await createCudaBackend({ libcudaPath: td.path, device: 1 })
  td.clearLog()
  const p0 = await b0.alloc(16)
  const p1 = await b1.alloc(16)
  const p2 = await b1.alloc(16)
  assert.is(td.log(), 'cuCtxSetCurrent primary of device 0\ncuMemAlloc 16\ncuCtxSetCurrent primary of device 1\ncuMemAlloc 16\ncuMemAlloc 16\n')
  for (const [b, p] of [[b0, p0], [b1, p1], [b1, p2]] as const) await b.free(p)
  await b0.dispose()
  await b1.dispose()
  assert.match(td.log(), /cuDevicePrimaryCtxRelease 0\n.*cuDevicePrimaryCtxRelease 1\n/s)
  td.reset()
})

Resolve.run()

// ---
const Structs = suite('kernel params: structs.cu by value')

async function launchAndRead(mod: Module, name: string, ...args: unknown[]): Promise<Launch> {
  td.clearLog()
  await mod.kernel(name).launch({ grid: 1, block: 32 }, ...(args as never[]))
  const l = lastLaunch()
  const params = paramsOf(mod, name)
  assert.is(l.params.length, params.length, 'one kernelParams entry per PTX parameter')
  params.forEach((p, i) => assert.is(l.params[i]!.align16 % Math.min(16, p.align), 0, `param ${i} is ${p.align}-aligned`))
  return l
}

Structs('k_mixed(Mixed, double*): {u16, u64, double, char[3]} arrives as gcc lays it out', async () => {
  const l = await launchAndRead(structsMod, '_Z7k_mixed5MixedPd', schemas.Mixed!.of(values.Mixed), out)
  assert.is(l.params[0]!.hex, host.values.Mixed)
  assert.is(l.params[1]!.hex, u64hex(out.address))
})

Structs('k_arrays(Arrays, float*): arrays inside a struct', async () => {
  const l = await launchAndRead(structsMod, '_Z8k_arrays6ArraysPf', schemas.Arrays!.of(values.Arrays), out)
  assert.is(l.params[0]!.hex, host.values.Arrays)
})

Structs('k_nested(Nested, int, Nested*): nested structs, then a negative int', async () => {
  const l = await launchAndRead(structsMod, '_Z8k_nested6NestediPS_', schemas.Nested!.of(values.Nested), -7, out)
  assert.is(l.params[0]!.hex, host.values.Nested)
  assert.is(l.params[1]!.hex, 'f9ffffff')
})

Structs('k_params(Params): pointers, a union and an __align__(16) struct inside', async () => {
  const l = await launchAndRead(structsMod, '_Z8k_params6Params', schemas.Params!.of(values.Params))
  assert.is(l.params[0]!.hex, host.values.Params)
})

Structs('k_mixed_scalars(char, Mixed, short, Aligned16, bool, Arrays, double): mixed alignment', async () => {
  const l = await launchAndRead(structsMod, '_Z15k_mixed_scalarsc5Mixeds9Aligned16b6Arraysd',
    -5, schemas.Mixed!.of(values.Mixed), -300, schemas.Aligned16!.of(values.Aligned16), true, schemas.Arrays!.of(values.Arrays), -2.25)
  assert.equal(l.params.map((p) => p.hex), [host.values.char, host.values.Mixed, host.values.short, host.values.Aligned16, host.values.bool, host.values.Arrays, host.values.double])
})

Structs('exact bytes in a Uint8Array are passed as they are', async () => {
  const bytes = Buffer.from(host.values.Mixed!, 'hex')
  const l = await launchAndRead(structsMod, '_Z7k_mixed5MixedPd', new Uint8Array(bytes), 0n)
  assert.is(l.params[0]!.hex, host.values.Mixed)
  assert.is(l.params[1]!.hex, '0000000000000000')
})

Structs.run()

// ---
const Scalars = suite('kernel params: scalars.cu')

Scalars('k_all: every scalar type arrives as the C value of that type', async () => {
  const l = await launchAndRead(scalarsMod, '_Z5k_allcsixhtjyfdbPv', -5, -300, -70000, -(1n << 40n), 250, 65000, 4000000000, 18446744073709551611n, 1.5, -2.25, true, out)
  assert.equal(l.params.map((p) => p.hex), [
    host.values.char, host.values.short, host.values.int, host.values.longlong, host.values.uchar, host.values.ushort,
    host.values.uint, host.values.ulonglong, host.values.float, host.values.double, host.values.bool, u64hex(out.address),
  ])
})

Scalars('64-bit values as safe numbers or bigints; long is 64-bit', async () => {
  const a = await launchAndRead(scalarsMod, '_Z5k_intijlmPi', -70000, 4000000000, -(2 ** 40), 2 ** 53 - 1, out)
  assert.equal(a.params.slice(0, 4).map((p) => p.hex), [host.values.int, host.values.uint, host.values.longlong, 'ffffffffffff1f00'])
  const b = await launchAndRead(scalarsMod, '_Z4k_llxyPx', -(1n << 40n), 18446744073709551611n, out)
  assert.equal(b.params.slice(0, 2).map((p) => p.hex), [host.values.longlong, host.values.ulonglong])
})

Scalars('overloads are separate entries; a raw device address works as a pointer', async () => {
  const l = await launchAndRead(scalarsMod, '_Z6k_overPdi', 0x7f0000001000n, 3)
  assert.equal(l.params.map((p) => p.hex), ['00100000007f0000', '03000000'])
})

Scalars.run()

// ---
const Abi = suite('kernel params: abi.cu (f16, bf16, i128, slices, arrays of structs)')

Abi('k_half(__half, __nv_bfloat16, short, float*)', async () => {
  const l = await launchAndRead(abiMod, 'k_half', t.f16.of(1.5), t.bf16.of(-3.5), -300, out)
  assert.equal(l.params.slice(0, 3).map((p) => p.hex), [host.values.half, host.values.bf16, host.values.short])
})

Abi('k_i128(__int128, unsigned __int128, char, long long*): bigints and schema values', async () => {
  const x = -(1n << 100n) - 12345n
  const y = (0xfedcba9876543210n << 64n) | 0x0123456789abcdefn
  const a = await launchAndRead(abiMod, 'k_i128', x, y, -5, out)
  assert.equal(a.params.slice(0, 3).map((p) => p.hex), [host.values.i128, host.values.u128, host.values.char])
  const b = await launchAndRead(abiMod, 'k_i128', t.i128.of(x), t.u128.of(y), -5, out)
  assert.equal(b.params.slice(0, 2).map((p) => p.hex), [host.values.i128, host.values.u128])
})

Abi('k_slice(const float*, size_t, float*, unsigned): slice(buffer, length) fills the (pointer, length) pair', async () => {
  const buf = await abiMod.upload(new Float32Array(10))
  const l = await launchAndRead(abiMod, 'k_slice', slice(buf, 10), out, 7)
  assert.equal(l.params.map((p) => p.hex), [u64hex(buf.address), u64hex(10n), u64hex(out.address), '07000000'])
})

Abi('k_outer(Outer, char, double*): an array of structs and a nested struct', async () => {
  const l = await launchAndRead(abiMod, 'k_outer', schemas.Outer!.of(values.Outer), 65, out)
  assert.equal(l.params.map((p) => p.hex), [host.values.Outer, '41', u64hex(out.address)])
})

Abi('zero-sized schema values take no parameter', async () => {
  const l = await launchAndRead(abiMod, 'k_outer', t.struct({}).of({}), schemas.Outer!.of(values.Outer), 65, out)
  assert.is(l.params[0]!.hex, host.values.Outer)
})

Abi.run()

// ---
const Check = suite('argument checks happen before launch')

const rejectsBefore = async (fn: () => Promise<void>, re: RegExp) => {
  const before = td.launchCount()
  await rejects(fn, (e: Error) => e instanceof TypeError && re.test(e.message))
  assert.is(td.launchCount(), before, 'nothing was launched')
}

Check('wrong count names the kernel and the PTX parameters', async () => {
  await rejectsBefore(() => structsMod.kernel('_Z7k_mixed5MixedPd').launch({ grid: 1, block: 1 }, schemas.Mixed!.of(values.Mixed)),
    /kernel _Z7k_mixed5MixedPd \(k_mixed\(Mixed, double\*\)\): expects 2 arguments \(PTX parameters: \.align 8 \.b8\[32\], \.u64 \(pointer\)\), got 1/)
})

Check('a struct of the wrong size or alignment names the parameter and the expected layout', async () => {
  await rejectsBefore(() => structsMod.kernel('_Z7k_mixed5MixedPd').launch({ grid: 1, block: 1 }, schemas.Arrays!.of(values.Arrays), out),
    /k_mixed\(Mixed, double\*\)\): parameter 0 \(_Z7k_mixed5MixedPd_param_0\) expects a by-value struct\/array of 32 bytes aligned to 8.*got an object.* of 36 bytes aligned to 4/)
  await rejectsBefore(() => structsMod.kernel('_Z7k_mixed5MixedPd').launch({ grid: 1, block: 1 }, new Uint8Array(31), out), /parameter 0 .*got Uint8Array\(31 bytes\)/)
})

Check('a number for a pointer that is not an integer, a string for an int, out-of-range values', async () => {
  await rejectsBefore(() => scalarsMod.kernel('_Z6k_overPi').launch({ grid: 1, block: 1 }, 1.5), /parameter 0 \(_Z6k_overPi_param_0\) expects a pointer: DeviceBuffer or device address.*got 1\.5/)
  await rejectsBefore(() => scalarsMod.kernel('_Z6k_overPdi').launch({ grid: 1, block: 1 }, out, '3' as never), /parameter 1 .*expects an integer of 32 bits \(PTX \.param \.u32\), got "3" \(string\)/)
  await rejectsBefore(() => scalarsMod.kernel('_Z7k_shortstPs').launch({ grid: 1, block: 1 }, 70000, 1, out), /parameter 0 .*out of range \[-32768, 65535\]/)
  await rejectsBefore(() => scalarsMod.kernel('_Z4k_fpfdPfPd').launch({ grid: 1, block: 1 }, 1n as never, 2, out, out), /parameter 0 .*expects f32 \(a number\)/)
})

Check('a wrong field inside a struct value names the field path', async () => {
  await rejectsBefore(() => structsMod.kernel('_Z7k_mixed5MixedPd').launch({ grid: 1, block: 1 }, schemas.Mixed!.of({ ...values.Mixed as object, tag: -1 }), out),
    /kernel _Z7k_mixed5MixedPd \(k_mixed\(Mixed, double\*\)\): parameter 0\.tag: expected u16 in \[0, 65535\], got -1/)
})

Check('bad grid/block and unknown kernels', async () => {
  await rejectsBefore(() => scalarsMod.kernel('_Z6k_overPi').launch({ grid: 0, block: 1 }, out), /grid must be a positive integer/)
  await rejectsBefore(() => scalarsMod.kernel('_Z6k_overPi').launch({ grid: 1, block: [32, 1.5] }, out), /block must be a positive integer/)
  assert.throws(() => scalarsMod.kernel('nope'), /no kernel "nope"; kernels \(PTX name \(signature; export name\)\): _Z6k_charcahPc \(k_char\(char, signed char, unsigned char, char\*\); k_char\)/)
  assert.throws(() => scalarsMod.kernel('k_over'), /ambiguous: 3 overloads/)
  assert.is(scalarsMod.kernel('k_bool').name, '_Z6k_boolbPb')
})

Check('once launched (the generated fixed-arity launch), the same checks hold; slices and other counts take the general path', async () => {
  const mod = await load(scalarsPtx)
  const k = mod.kernel('_Z6k_overPdi')
  td.clearLog()
  await k.launch({ grid: 1, block: 1 }, out, 3)
  assert.equal(lastLaunch().params.map((p) => p.hex), [u64hex(out.address), '03000000'])
  for (let i = 0; i < 3; i++) {
    // again and again: the second launch on is the generated path, whatever V8 has compiled by then
    await rejectsBefore(() => k.launch({ grid: 1, block: 1 }, out, '3' as never), /^kernel _Z6k_overPdi \(k_over\(double\*, int\)\): parameter 1 \(_Z6k_overPdi_param_1\) expects an integer of 32 bits \(PTX \.param \.u32\), got "3" \(string\)$/)
    await rejectsBefore(() => k.launch({ grid: 1, block: 1 }, out, 2 ** 32), /parameter 1 .*out of range/)
    await rejectsBefore(() => k.launch({ grid: 1, block: 1 }, 1.5, 3), /parameter 0 \(_Z6k_overPdi_param_0\) expects a pointer: DeviceBuffer or device address.*got 1\.5/)
    await rejectsBefore(() => k.launch({ grid: 1, block: 1 }, 2n ** 64n, 3), /parameter 0 .*out of range/)
    await rejectsBefore(() => (k.launch as (...a: unknown[]) => Promise<void>)({ grid: 1, block: 1 }, out), /expects 2 arguments \(PTX parameters: \.u64 \(pointer\), \.u32\), got 1$/)
    await rejectsBefore(() => (k.launch as (...a: unknown[]) => Promise<void>)({ grid: 1, block: 1 }, out, 3, 4), /expects 2 arguments .*got 3$/)
    await rejectsBefore(() => k.launch({ grid: 0, block: 1 }, out, 3), /grid must be a positive integer/)
  }
  await k.launch({ grid: 1, block: 1 }, slice(out, 9))
  assert.equal(lastLaunch().params.map((p) => p.hex), [u64hex(out.address), '09000000'])
  await k.launch({ grid: 1, block: 1 }, 0x7f0000001000n, -1)
  assert.equal(lastLaunch().params.map((p) => p.hex), ['00100000007f0000', 'ffffffff'])
  await mod.unload()
  await rejects(() => k.launch({ grid: 1, block: 1 }, out, 3), (e) => /launching _Z6k_overPdi .*after the module was unloaded/.test(e.message))
})

Check('where code generation is refused (CSP), kernels launch and check through the closure fallback', async () => {
  const mod = await load(scalarsPtx)
  const realFunction = globalThis.Function
  let k
  globalThis.Function = function refused() { throw new EvalError('Refused to evaluate a string as JavaScript (CSP)') } as unknown as FunctionConstructor
  try {
    k = mod.kernel('_Z6k_overPdi')
  } finally {
    globalThis.Function = realFunction
  }
  // the fallback is `(opts, ...args)`; the generated launch declares one parameter per PTX parameter
  assert.is(k.launch.length, 1)
  assert.is(mod.kernel('_Z6k_overPi').launch.length, 2)
  for (let i = 0; i < 3; i++) {
    await k.launch({ grid: 1, block: 1 }, out, 5 + i)
    assert.equal(lastLaunch().params.map((p) => p.hex), [u64hex(out.address), `0${5 + i}000000`])
    await rejectsBefore(() => k.launch({ grid: 1, block: 1 }, out, '3' as never), /parameter 1 \(_Z6k_overPdi_param_1\) expects an integer of 32 bits/)
    await rejectsBefore(() => (k.launch as (...a: unknown[]) => Promise<void>)({ grid: 1, block: 1 }, out), /expects 2 arguments/)
  }
  await k.launch({ grid: 1, block: 1 }, slice(out, 9))
  assert.equal(lastLaunch().params.map((p) => p.hex), [u64hex(out.address), '09000000'])
  await mod.unload()
  await rejects(() => k.launch({ grid: 1, block: 1 }, out, 3), (e) => /after the module was unloaded/.test(e.message))
})

Check.run()

// ---
const Config = suite('launch configuration')

Config('grid/block as numbers or tuples, dynamic shared memory and a stream reach CUlaunchConfig', async () => {
  const k = scalarsMod.kernel('_Z6k_overPi')
  td.clearLog()
  await k.launch({ grid: [4, 3], block: [8, 4, 2], sharedBytes: 1024 }, out)
  assert.match(lastLaunch().header, /grid=4,3,1 block=8,4,2 shared=1024 stream=null attrs=0 extra=null/)
  const s = await scalarsMod.createStream()
  await k.launch({ grid: 7, block: 64, stream: s }, out)
  assert.match(lastLaunch().header, /grid=7,1,1 block=64,1,1 shared=0 stream=set/)
  await k.launch({ grid: 7, block: 64 }, out)
  assert.match(lastLaunch().header, /grid=7,1,1 block=64,1,1 shared=0 stream=null/)
  await s.synchronize()
  await s.destroy()
  assert.match(td.log(), /cuStreamSynchronize\ncuStreamDestroy/)
})

Config('more than 48 KiB of dynamic shared memory needs the opt-in attribute, which reaches cuFuncSetAttribute once before the first such launch', async () => {
  const k = scalarsMod.kernel('_Z6k_overPf')
  td.clearLog()
  await k.launch({ grid: 1, block: 1, sharedBytes: 48 * 1024 }, out)
  await rejects(() => k.launch({ grid: 1, block: 1, sharedBytes: 100_000 }, out), (e) => e instanceof CudaError && e.codeName === 'CUDA_ERROR_INVALID_VALUE' &&
    /sharedBytes = 100000 exceeds the 49152 bytes \(48 KiB\).*setAttribute\('maxDynamicSharedMemorySize', 100000\)/.test(e.message))
  assert.not.match(td.log(), /cuLaunchKernelEx _Z6k_overPf grid=1,1,1 block=1,1,1 shared=100000/, 'refused before the driver')
  k.setAttribute('maxDynamicSharedMemorySize', 100_000)
  await k.launch({ grid: 1, block: 1, sharedBytes: 100_000 }, out)
  await k.launch({ grid: 1, block: 1, sharedBytes: 90_000 }, out)
  assert.equal(td.log().match(/^cuFuncSetAttribute .*$/gm), ['cuFuncSetAttribute _Z6k_overPf 8 100000'])
  assert.match(td.log(), /cuFuncSetAttribute _Z6k_overPf 8 100000\ncuLaunchKernelEx _Z6k_overPf grid=1,1,1 block=1,1,1 shared=100000/)
})

Config('cooperative: true reaches cuLaunchKernelEx as CU_LAUNCH_ATTRIBUTE_COOPERATIVE (cudaLaunchCooperativeKernel); other launches carry no attribute', async () => {
  const k = scalarsMod.kernel('_Z6k_overPi')
  td.clearLog()
  await k.launch({ grid: 8, block: 128, cooperative: true }, out)
  const lines = td.log().split('\n')
  const at = lines.findIndex((l) => l.startsWith('cuLaunchKernelEx _Z6k_overPi grid=8,1,1 block=128,1,1'))
  assert.match(lines[at]!, /attrs=1/)
  assert.ok(lines.slice(at + 1).includes('attr id=2 value=1'), `CU_LAUNCH_ATTRIBUTE_COOPERATIVE (2) = 1 in ${lines.slice(at, at + 4).join(' / ')}`)
  await k.launch({ grid: 8, block: 128 }, out)
  assert.match(lastLaunch().header, /grid=8,1,1 block=128,1,1 shared=0 stream=null attrs=0/)
})

Config('events: record on the default stream and a stream, elapsed time read back from cuEventElapsedTime', async () => {
  const [start, end] = [await scalarsMod.createEvent(), await scalarsMod.createEvent()]
  const s = await scalarsMod.createStream()
  await start.record()
  await end.record(s)
  assert.is(await end.elapsedSince(start), 1.5) // the double reports 1.5 ms
  await start.destroy()
  await end.destroy()
  await s.destroy()
})

Config('overlapping first launches look the function up once', async () => {
  const mod = await load(scalarsPtx)
  td.clearLog()
  const k = mod.kernel('_Z6k_boolbPb')
  await Promise.all([k.launch({ grid: 1, block: 1 }, true, out), k.launch({ grid: 1, block: 1 }, false, out)])
  assert.is(td.log().match(/cuModuleGetFunction _Z6k_boolbPb/g)?.length, 1)
  assert.is(td.log().match(/^cuLaunchKernelEx _Z6k_boolbPb/gm)?.length, 2)
})

Config('upload, launch and download end to end (the double adds vectors for kptd_vecadd)', async () => {
  td.defineKernel('kptd_vecadd', [8, 8, 8, 4])
  const manifest: KernelManifest = { kernels: [{ name: 'kptd_vecadd', demangled: 'kptd_vecadd', linkage: 'visible', params: [
    { type: 'u64', size: 8, align: 8, pointer: true }, { type: 'u64', size: 8, align: 8, pointer: true }, { type: 'u64', size: 8, align: 8, pointer: true }, { type: 'u32', size: 4, align: 4 }] }], variables: [] }
  // the PTX declares what the manifest says (the runtime checks the two agree); the double runs its own vecadd
  const ptx = '.version 9.0\n.target sm_90\n.address_size 64\n.visible .entry kptd_vecadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) { ret; }\n'
  const mod = await loadModule(new TextEncoder().encode(ptx), manifest, { backend: 'cuda', libcudaPath: td.path })
  assert.is(mod.backend.name, 'cuda')
  assert.is(mod.image.kind, 'ptx')
  const a = Float32Array.from({ length: 100 }, (_, i) => i)
  const b = Float32Array.from({ length: 100 }, (_, i) => 2 * i + 0.5)
  const [da, db, dc] = await Promise.all([mod.upload(a), mod.upload(b), mod.alloc(400)])
  await mod.kernel('kptd_vecadd').launch({ grid: 4, block: 32 }, da, db, dc, 100)
  const c = await dc.download(new Float32Array(100))
  assert.equal(Array.from(c), Array.from(a, (x, i) => x + b[i]!))
  assert.is((await dc.download()).byteLength, 400)
  await Promise.all([da.free(), db.free(), dc.free()])
  await mod.unload()
  assert.match(td.log(), /cuModuleUnload ok/)
})

Config.run()

// ---
const Errors = suite('CUresult errors')

Errors('CudaError carries the code with cuGetErrorName / cuGetErrorString from the driver', async () => {
  td.fail('cuMemAlloc', 2)
  await rejects(() => structsMod.alloc(64), (e: Error) => e instanceof CudaError && e.code === 2 && e.codeName === 'CUDA_ERROR_OUT_OF_MEMORY' &&
    e.message === 'cuMemAlloc(64 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2): kptd: out of memory')
  td.reset()
  td.fail('cuLaunchKernelEx', 701)
  await rejects(() => scalarsMod.kernel('_Z6k_overPi').launch({ grid: 1, block: 1024 }, out), (e: Error) =>
    e instanceof CudaError && /cuLaunchKernelEx\(_Z6k_overPi, grid \[1, 1, 1\], block \[1024, 1, 1\], 0 B shared\) failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES \(701\): kptd: too many resources requested for launch/.test(e.message))
  td.reset()
})

Errors('an unknown CUresult still gets a message', async () => {
  td.fail('cuMemAlloc', 12345)
  await rejects(() => structsMod.alloc(64), (e: Error) => e instanceof CudaError && e.code === 12345 && /CUresult 12345 \(12345\): unknown error/.test(e.message))
  td.reset()
})

Errors('a failed JIT returns the JIT error log', async () => {
  td.fail('cuModuleLoadDataEx', 218)
  td.setJitError("ptxas application ptx input, line 42; error   : Unknown symbol 'foo'")
  await rejects(() => load(structsPtx), (e: Error) => e instanceof CudaError && e.codeName === 'CUDA_ERROR_INVALID_PTX' &&
    e.message.includes("JIT error log:\nptxas application ptx input, line 42; error   : Unknown symbol 'foo'"))
  td.reset()
})

Errors('CUDA_ERROR_UNSUPPORTED_PTX_VERSION is explained (driver older than the toolkit)', async () => {
  td.fail('cuModuleLoadDataEx', 222)
  await rejects(() => load(structsPtx), (e: Error) => e instanceof CudaError &&
    /built by a newer CUDA toolkit than this driver supports \(driver: CUDA 13\.0, PTX ISA up to 9\.0\)\. Update the NVIDIA driver, or build a cubin for this GPU \(--arch sm_90\)/.test(e.message))
  td.reset()
})

Errors.run()
