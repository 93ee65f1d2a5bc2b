// Section `errors` of `pnpm test:gpu` (issue 18 item 1d): error paths on the device, with the CUresult names
// checked. A block too large and dynamic shared memory past the limit: refused by the runtime before the
// driver (its CudaError names the driver's CUDA_ERROR_INVALID_VALUE), refused by the driver the same way when
// the runtime is bypassed, and the context still works afterwards. Last, an illegal address: the kernel's
// CUDA_ERROR_ILLEGAL_ADDRESS comes at the next synchronization and is sticky (every later call of the process
// fails with it); section `after-sticky` then shows a fresh process gets a working context.
import { CudaError, loadModule, type Module } from '@kernelpack/runtime'
import { abiSource, buildModule } from './build-module.js'
import { assert, Checks, declareDoubleKernels, deviceLoadOptions, expectCudaError, openDevice, type GpuOptions, type SectionOutput } from './session.js'

const needsDriver = 'needs a driver that runs kernels (self-test against the libcuda test double)'

async function stillWorks(m: Module): Promise<void> {
  const x = await m.upload(Int32Array.of(41))
  await m.kernel('add_one').launch({ grid: 1, block: 32 }, x, 1)
  const v = (await x.download(new Int32Array(1)))[0]
  await x.free()
  assert(v === 42, `after the error, add_one gave ${v}, expected 42: the context no longer works`)
}

export async function checkErrors(o: GpuOptions): Promise<SectionOutput> {
  const checks = new Checks('errors')
  const hw = o.mode === 'hardware'
  const abi = await buildModule(abiSource, o.arch)
  await declareDoubleKernels(o, abi.manifest)
  const m = await loadModule(abi.both, abi.manifest, deviceLoadOptions(o))
  const backend = await openDevice(o)
  const device = backend.device()
  const optin = device.maxSharedMemoryPerBlockOptin ?? 48 * 1024

  await checks.run('block of 2048 threads: the runtime refuses it before the driver with CUDA_ERROR_INVALID_VALUE', async () => {
    const e = await expectCudaError('launch add_one with block 2048', () => m.kernel('add_one').launch({ grid: 1, block: 2048 }, 0n, 0), 'CUDA_ERROR_INVALID_VALUE')
    return e.message
  })
  await checks.run(`dynamic shared memory of ${optin + 1024} bytes (over the opt-in maximum ${optin}): the runtime refuses setAttribute and the launch with CUDA_ERROR_INVALID_VALUE`, async () => {
    const k = m.kernel('add_one')
    await expectCudaError('launch with 49156 bytes without the attribute', () => k.launch({ grid: 1, block: 32, sharedBytes: 48 * 1024 + 4 }, 0n, 0), 'CUDA_ERROR_INVALID_VALUE')
    let err: unknown
    try {
      k.setAttribute('maxDynamicSharedMemorySize', optin + 1024)
    } catch (e) {
      err = e
    }
    assert(err instanceof CudaError && err.codeName === 'CUDA_ERROR_INVALID_VALUE', `setAttribute(${optin + 1024}): ${err ? (err as Error).message : 'accepted'}`)
    return (err as Error).message
  })

  if (!hw) {
    for (const name of ['the driver refuses a block of 2048 threads (runtime bypassed): CUDA_ERROR_INVALID_VALUE, and the context still works',
      'the driver refuses dynamic shared memory over the opt-in maximum (runtime bypassed): CUDA_ERROR_INVALID_VALUE, and the context still works',
      'illegal address: CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronization',
      'after the illegal address the error is sticky: synchronize, alloc, upload and a new module all fail with CUDA_ERROR_ILLEGAL_ADDRESS']) checks.notRun(name, needsDriver)
    await m.unload()
    return { checks: checks.list, kernels: [], recordings: [] }
  }

  const fn = await (await backend.loadModule({ kind: 'cubin', arch: o.arch, bytes: abi.cubin }, 'abi-echo cubin')).getFunction('add_one')
  const params = (n: number) => {
    const bytes = new Uint8Array(16)
    new DataView(bytes.buffer).setInt32(8, n, true)
    return { bytes, offsets: [0, 8], sizes: [8, 4] }
  }
  await checks.run('the driver refuses a block of 2048 threads (runtime bypassed): CUDA_ERROR_INVALID_VALUE, and the context still works', async () => {
    const e = await expectCudaError('cuLaunchKernelEx(add_one, block 2048)', async () => { await backend.launch(fn, { grid: [1, 1, 1], block: [2048, 1, 1], sharedBytes: 0 }, params(0)); await backend.synchronize() }, 'CUDA_ERROR_INVALID_VALUE')
    await stillWorks(m)
    return e.message
  })
  await checks.run('the driver refuses dynamic shared memory over the opt-in maximum (runtime bypassed): CUDA_ERROR_INVALID_VALUE, and the context still works', async () => {
    const e = await expectCudaError(`cuFuncSetAttribute + cuLaunchKernelEx(add_one, ${optin + 1024} B shared)`,
      async () => { await backend.launch(fn, { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: optin + 1024, maxDynamicSharedBytes: optin + 1024 }, params(0)); await backend.synchronize() }, 'CUDA_ERROR_INVALID_VALUE')
    await stillWorks(m)
    return e.message
  })

  // last: an illegal address ends this process's context
  let stickyOk = false
  await checks.run('illegal address: CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronization', async () => {
    const e = await expectCudaError('poke(0x10) then synchronize', async () => {
      await m.kernel('poke').launch({ grid: 1, block: 1 }, 0x10n, 1)
      await m.synchronize()
    }, 'CUDA_ERROR_ILLEGAL_ADDRESS')
    stickyOk = true
    return e.message
  })
  if (!stickyOk) checks.notRun('after the illegal address the error is sticky', 'the illegal-address launch did not fail as expected')
  else {
    await checks.run('after the illegal address the error is sticky: synchronize, alloc, upload and a new module all fail with CUDA_ERROR_ILLEGAL_ADDRESS', async () => {
      const seen: string[] = []
      for (const [what, call] of [
        ['synchronize', () => m.synchronize()],
        ['alloc', () => m.alloc(1024)],
        ['upload', () => m.upload(Int32Array.of(1))],
        ['loadModule', () => loadModule(abi.both, abi.manifest, deviceLoadOptions(o))],
      ] as const) {
        const e = await expectCudaError(`${what} after the illegal address`, call, 'CUDA_ERROR_ILLEGAL_ADDRESS')
        seen.push(`${what}: ${e.codeName}`)
      }
      return seen.join(', ')
    })
  }
  return { checks: checks.list, kernels: [], recordings: [] }
}

/** Section `after-sticky`: a new process after the one whose context an illegal address ended. */
export async function checkAfterSticky(o: GpuOptions): Promise<SectionOutput> {
  const checks = new Checks('errors')
  if (o.mode !== 'hardware') {
    checks.notRun('a new process after the sticky error gets a working context', needsDriver)
    return { checks: checks.list, kernels: [], recordings: [] }
  }
  const abi = await buildModule(abiSource, o.arch)
  await checks.run('a new process after the sticky error gets a working context', async () => {
    const m = await loadModule(abi.both, abi.manifest, deviceLoadOptions(o))
    await stillWorks(m)
    await m.unload()
  })
  return { checks: checks.list, kernels: [], recordings: [] }
}
