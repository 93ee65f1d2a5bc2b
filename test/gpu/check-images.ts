// Section `images` of `pnpm test:gpu` (issue 18 item 1c): which image the runtime picks and what the driver
// says about the ones it must not load. PTX alone → the driver's JIT compiles it and the kernel runs; a
// cubin and PTX for a newer arch → the runtime's NoImageError before the driver is asked, and the driver's own
// refusal when the runtime is bypassed (CUDA_ERROR_NO_BINARY_FOR_GPU); PTX whose `.version` the driver does
// not know → skipped by the runtime, CUDA_ERROR_UNSUPPORTED_PTX_VERSION from the driver.
import { NVCC_13_ARCHS } from '@kernelpack/toolchain'
import { loadModule, NoImageError } from '@kernelpack/runtime'
import { abiSource, buildModule } from './build-module.js'
import { assert, Checks, declareDoubleKernels, deviceLoadOptions, expectCudaError, openDevice, type GpuOptions, type SectionOutput } from './session.js'

/** The arch a newer GPU than `cc` has (the smallest nvcc 13 knows with a higher major), else one of another
 *  major (a cubin runs only within its major, so it is refused just the same). */
export function foreignArch(cc: number): { arch: string; newer: boolean } {
  const major = Math.floor(cc / 10)
  const newer = NVCC_13_ARCHS.filter((a) => Math.floor(a / 10) > major).sort((a, b) => a - b)[0]
  if (newer !== undefined) return { arch: `sm_${newer}`, newer: true }
  const other = NVCC_13_ARCHS.filter((a) => Math.floor(a / 10) !== major).sort((a, b) => b - a)[0]!
  return { arch: `sm_${other}`, newer: false }
}

export async function checkImages(o: GpuOptions): Promise<SectionOutput> {
  const checks = new Checks('images')
  const hw = o.mode === 'hardware'
  const needsDriver = 'needs a driver that runs kernels (self-test against the libcuda test double)'
  const backend = await openDevice(o)
  const device = backend.device()
  const cc = device.computeCapability[0] * 10 + device.computeCapability[1]
  const mod = await buildModule(abiSource, o.arch)
  await declareDoubleKernels(o, mod.manifest)
  const foreign = foreignArch(cc)
  const other = await buildModule(abiSource, foreign.arch)
  const otherWhat = `${foreign.newer ? 'a newer arch' : 'another major'} (${foreign.arch})`

  await checks.run(`cubin ${o.arch} + PTX ${mod.virtualArch}: the runtime loads the cubin`, async () => {
    const m = await loadModule(mod.both, mod.manifest, deviceLoadOptions(o))
    try {
      assert(m.image.kind === 'cubin' && m.image.arch === o.arch, `loaded ${m.image.kind} ${m.image.arch}: ${m.image.reason}`)
      return m.image.reason
    } finally {
      await m.unload()
    }
  })

  if (!hw) checks.notRun(`PTX ${mod.virtualArch} alone: the driver's JIT compiles it and the kernel runs`, needsDriver)
  else {
    await checks.run(`PTX ${mod.virtualArch} alone: the driver's JIT compiles it and the kernel runs`, async () => {
      const t0 = performance.now()
      const m = await loadModule(mod.ptxOnly, mod.manifest, deviceLoadOptions(o))
      const loadMs = performance.now() - t0
      try {
        assert(m.image.kind === 'ptx', `loaded ${m.image.kind} ${m.image.arch}, expected the PTX`)
        const n = 1000
        const x = await m.upload(Int32Array.from({ length: n }, (_, i) => i * 3 - 500))
        await m.kernel('add_one').launch({ grid: Math.ceil(n / 128), block: 128 }, x, n)
        const got = await x.download(new Int32Array(n))
        const bad = got.findIndex((v, i) => v !== i * 3 - 499)
        assert(bad < 0, `add_one from the JIT-compiled PTX: [${bad}] = ${got[bad]}, expected ${bad * 3 - 499}`)
        await x.free()
        return `JIT load ${loadMs.toFixed(0)} ms; ${m.image.reason}`
      } finally {
        await m.unload()
      }
    })
  }

  await checks.run(`cubin ${foreign.arch} + PTX ${other.virtualArch} only (${otherWhat}): loadModule refuses with NoImageError naming the device`, async () => {
    let err: unknown
    try {
      const m = await loadModule(other.both, other.manifest, deviceLoadOptions(o))
      await m.unload()
    } catch (e) {
      err = e
    }
    assert(err, `loadModule accepted images for ${foreign.arch} on compute capability ${device.computeCapability.join('.')}`)
    const cause = (err as Error).cause
    assert(cause instanceof NoImageError, `expected a NoImageError cause, got ${(err as Error).name}: ${(err as Error).message}`)
    assert((err as Error).message.includes(`compute capability ${device.computeCapability.join('.')}`), `the message does not name the device: ${(err as Error).message}`)
    return (err as Error).message
  })

  if (!hw) {
    checks.notRun(`the driver itself refuses the cubin ${foreign.arch}: CUDA_ERROR_NO_BINARY_FOR_GPU`, needsDriver)
    checks.notRun(`the driver itself refuses PTX for ${other.virtualArch}`, needsDriver)
    checks.notRun('PTX with a .version the driver does not know: CUDA_ERROR_UNSUPPORTED_PTX_VERSION from the driver', needsDriver)
  } else {
    await checks.run(`the driver itself refuses the cubin ${foreign.arch}: CUDA_ERROR_NO_BINARY_FOR_GPU`, async () => {
      const e = await expectCudaError(`cuModuleLoadDataEx(cubin ${foreign.arch})`, async () => (await backend.loadModule({ kind: 'cubin', arch: foreign.arch, bytes: other.cubin }, 'foreign cubin')).unload(), 'CUDA_ERROR_NO_BINARY_FOR_GPU')
      return e.message.split('\n').join(' ')
    })
    await checks.run(`the driver itself refuses PTX for ${other.virtualArch}`, async () => {
      const e = await expectCudaError(`cuModuleLoadDataEx(PTX ${other.virtualArch})`,
        async () => (await backend.loadModule({ kind: 'ptx', arch: other.virtualArch, bytes: new TextEncoder().encode(other.ptx) }, 'foreign PTX')).unload(),
        ['CUDA_ERROR_INVALID_PTX', 'CUDA_ERROR_NO_BINARY_FOR_GPU', 'CUDA_ERROR_INVALID_IMAGE'])
      return `${e.codeName}: ${e.message.split('\n').slice(0, 2).join(' ')}`
    })
    const [maj, min] = device.ptxVersion ?? [9, 0]
    const future = `${maj}.${min + 1}`
    await checks.run(`PTX with .version ${future} (the driver knows up to ${maj}.${min}): the runtime skips it, the driver says CUDA_ERROR_UNSUPPORTED_PTX_VERSION`, async () => {
      const text = mod.ptx.replace(/^(\s*\.version\s+)\d+\.\d+/m, `$1${future}`)
      const bytes = new TextEncoder().encode(text)
      let err: unknown
      try {
        await (await loadModule(bytes, mod.manifest, deviceLoadOptions(o))).unload()
      } catch (e) {
        err = e
      }
      assert((err as Error | undefined)?.cause instanceof NoImageError && /needs PTX ISA/.test((err as Error).message), `loadModule: ${(err as Error | undefined)?.message ?? 'accepted it'}`)
      const e = await expectCudaError('cuModuleLoadDataEx(PTX .version ' + future + ')', async () => (await backend.loadModule({ kind: 'ptx', arch: mod.virtualArch, bytes }, 'future PTX')).unload(), 'CUDA_ERROR_UNSUPPORTED_PTX_VERSION')
      return e.message.split('\n').slice(0, 2).join(' ')
    })
  }
  return { checks: checks.list, kernels: [], recordings: [] }
}
