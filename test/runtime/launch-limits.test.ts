// CUDA launch limits enforced by the runtime before any backend runs (issue 17 item 7): the adversarial
// pass's launches (sharedBytes of 1 GiB, grid y = 65536, block z = 65, a double free()) on the emulator and
// on the cuda backend over the libcuda test double, each refused with the driver's CUDA_ERROR_INVALID_VALUE
// and nothing reaching the backend; dynamic shared memory above 48 KiB only after the opt-in attribute, up
// to the architecture's maximum.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { createModule, CudaError, launchLimitsFor, loadModule, maxSharedOptInFor, type Backend, type Module } from '@kernelpack/runtime'
import { createCudaBackend } from '../../packages/runtime/src/cuda/cuda-backend.js'
import { loadGlobalsFixture } from './globals-fixture.js'
import { rejects } from './rejects.js'

const { ptx, manifest, td } = await loadGlobalsFixture()

const invalid = (re: RegExp) => (e: Error) => e instanceof CudaError && e.code === 1 && e.codeName === 'CUDA_ERROR_INVALID_VALUE' && re.test(e.message)

/** The adversarial launches: each must be refused with the driver's error, before the kernel runs. */
async function refusesBadLaunches(mod: Module, launched: () => number): Promise<void> {
  const out = await mod.alloc(4)
  const k = mod.kernel('shared_rotate')
  // one good launch first: on cuda, later launches take the generated fixed-arity path, which must check too
  await k.launch({ grid: 1, block: 1, sharedBytes: 4 }, out, 1)
  const before = launched()
  const cases: [Parameters<typeof k.launch>[0], RegExp][] = [
    [{ grid: [1, 65536], block: 1 }, /^launch of kernel shared_rotate failed: CUDA_ERROR_INVALID_VALUE \(1\): grid y = 65536 exceeds the maximum of 65535/],
    [{ grid: [1, 1, 65536], block: 1 }, /grid z = 65536 exceeds the maximum of 65535/],
    [{ grid: 1, block: [1, 1, 65] }, /block z = 65 exceeds the maximum of 64/],
    [{ grid: 1, block: [1025, 1, 1] }, /block x = 1025 exceeds the maximum of 1024/],
    [{ grid: 1, block: [1, 1025, 1] }, /block y = 1025 exceeds the maximum of 1024/],
    [{ grid: 1, block: [64, 32, 1] }, /block \[64, 32, 1\] has 2048 threads; at most 1024 per block/],
    [{ grid: 1, block: 1, sharedBytes: 2 ** 30 }, /sharedBytes = 1073741824 exceeds the 49152 bytes \(48 KiB\) of dynamic shared memory a kernel gets by default; opt in first with kernel\.setAttribute\('maxDynamicSharedMemorySize', 1073741824\)/],
    [{ grid: 1, block: 1, sharedBytes: 48 * 1024 + 1 }, /sharedBytes = 49153 exceeds the 49152 bytes/],
  ]
  for (const [opts, re] of cases) await rejects(() => k.launch(opts, out, 1), invalid(re))
  // grid x has the full 31 bits; one more is not an integer CUDA can take at all
  await rejects(() => k.launch({ grid: [2 ** 31, 1, 1], block: 1 }, out, 1), (e) => e instanceof TypeError && /grid must be a positive integer/.test(e.message))
  assert.is(launched(), before, 'no refused launch reached the backend')
  await out.free()
}

async function optInSharedMemory(mod: Module, maxOptIn: number, cc: string): Promise<void> {
  const out = await mod.alloc(4)
  const k = mod.kernel('shared_rotate')
  await rejects(async () => k.setAttribute('maxDynamicSharedMemorySize', maxOptIn + 1), invalid(new RegExp(`maxDynamicSharedMemorySize = ${maxOptIn + 1} exceeds the ${maxOptIn} bytes of shared memory a block may have on compute capability ${cc.replace('.', '\\.')}`)))
  await rejects(async () => k.setAttribute('maxDynamicSharedMemorySize', -1), invalid(/non-negative integer/))
  await rejects(async () => k.setAttribute('maxSharedBytes' as never, 1), (e) => e instanceof TypeError && /unknown attribute; kernels have 'maxDynamicSharedMemorySize'/.test(e.message))
  k.setAttribute('maxDynamicSharedMemorySize', maxOptIn)
  const words = maxOptIn / 4
  await k.launch({ grid: 1, block: 128, sharedBytes: maxOptIn }, out, words)
  await mod.synchronize()
  await rejects(() => k.launch({ grid: 1, block: 1, sharedBytes: maxOptIn + 4 }, out, words), invalid(/exceeds the kernel's maxDynamicSharedMemorySize attribute of \d+ bytes/))
  // the attribute may be lowered again, and then binds
  k.setAttribute('maxDynamicSharedMemorySize', 60 * 1024)
  await rejects(() => k.launch({ grid: 1, block: 1, sharedBytes: 61 * 1024 }, out, 4), invalid(/attribute of 61440 bytes/))
  k.setAttribute('maxDynamicSharedMemorySize', 48 * 1024)
  await out.free()
}

async function doubleFree(mod: Module): Promise<void> {
  const buf = await mod.upload(new Uint32Array([1, 2, 3]))
  await buf.free()
  await rejects(() => buf.free(), invalid(/^DeviceBuffer 0x[0-9a-f]+ free failed: CUDA_ERROR_INVALID_VALUE \(1\): free\(\) after free\(\)/))
  await rejects(() => buf.download(), invalid(/download after free\(\)/))
  await rejects(() => buf.write(new Uint8Array(4)), invalid(/write after free\(\)/))
  await rejects(() => buf.fill(0), invalid(/fill after free\(\)/))
}

// ---
const Table = suite('launch limits by compute capability')

Table('the opt-in shared memory maximum of each architecture, as the programming guide lists it', () => {
  const kib = (cc: [number, number]) => maxSharedOptInFor(cc) / 1024
  assert.equal([[6, 1], [7, 0], [7, 5], [8, 0], [8, 6], [8, 7], [8, 9], [9, 0], [10, 0], [12, 0]].map((cc) => kib(cc as [number, number])),
    [48, 96, 64, 163, 99, 163, 99, 227, 227, 99])
  assert.equal(launchLimitsFor([9, 0]).maxGrid, [2 ** 31 - 1, 65535, 65535])
  assert.equal(launchLimitsFor([9, 0]).maxBlock, [1024, 1024, 64])
})

Table.run()

// ---
const Emulator = suite('launch limits on the emulator (the image\'s architecture: compute_80)')

// The emulator backend with its launches counted, under the runtime's module.
const emuBackend = createEmulatorBackend()
let emuLaunches = 0
const emuLaunch = emuBackend.launch.bind(emuBackend)
emuBackend.launch = (...a) => { emuLaunches++; emuLaunch(...a) }
const emu = await createModule(emuBackend as unknown as Backend, ptx, manifest, { sourceName: 'globals.ptx', reason: 'test' })

Emulator('grid y = 65536, block z = 65, 2048 threads and 1 GiB of shared memory are refused before the emulator runs', async () => {
  assert.is(emu.backend.name, 'emulator')
  await refusesBadLaunches(emu, () => emuLaunches)
})

Emulator('more than 48 KiB of dynamic shared memory after the opt-in, up to sm_80\'s 163 KiB', async () => {
  assert.is(maxSharedOptInFor([8, 0]), 166912)
  await optInSharedMemory(emu, 166912, '8.0')
  const out = await emu.alloc(4)
  const k = emu.kernel('shared_rotate')
  k.setAttribute('maxDynamicSharedMemorySize', 166912)
  await k.launch({ grid: 1, block: 256, sharedBytes: 166912 }, out, 166912 / 4)
  assert.equal(Array.from(await out.download(new Int32Array(1))), [166912 / 4 - 1], 'the kernel used all of it')
})

Emulator('a double free() is CUDA_ERROR_INVALID_VALUE, and so is any use after free()', async () => {
  await doubleFree(emu)
})

Emulator.run()

// ---
const Cuda = suite('launch limits on the cuda backend (the device\'s own: the test double)')

Cuda('the same launches are refused before cuLaunchKernelEx', async () => {
  const mod = await loadModule(ptx, manifest, { backend: 'cuda', libcudaPath: td.path })
  await refusesBadLaunches(mod, () => Number(td.launchCount()))
})

Cuda('a device of compute capability 9.0 opts in up to 227 KiB, one of 8.6 up to 99 KiB (the driver\'s MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)', async () => {
  for (const [major, minor, max] of [[9, 0, 232448], [8, 6, 101376]] as const) {
    td.reset()
    td.setDevice(major, minor)
    const b = await createCudaBackend({ libcudaPath: td.path })
    assert.is(b.device().maxSharedMemoryPerBlockOptin, max)
    const mod = await createModule(b, ptx, manifest, { sourceName: 'globals.ptx', reason: 'test' })
    td.clearLog()
    await optInSharedMemory(mod, max, `${major}.${minor}`)
    assert.equal(td.log().match(/^cuFuncSetAttribute .*$/gm), [`cuFuncSetAttribute shared_rotate 8 ${max}`], 'the opt-in reached the driver once')
  }
  td.reset()
})

Cuda('a double free() never reaches cuMemFree twice', async () => {
  const mod = await loadModule(ptx, manifest, { backend: 'cuda', libcudaPath: td.path })
  td.clearLog()
  await doubleFree(mod)
  assert.is(td.log().match(/^cuMemFree$/gm)?.length, 1)
})

Cuda.run()
