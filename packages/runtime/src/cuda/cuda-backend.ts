// The `cuda` backend: the CUDA driver API through koffi. libcuda is dlopen'ed once; only cuGetProcAddress_v2
// is looked up by name, every other entry point is resolved through it at the ABI version its declaration
// was written for (driver-api.ts) with the default-stream flag, as cudaGetDriverEntryPoint does. Each device
// uses its primary context, made current on the calling (JS) thread. All calls are synchronous koffi calls.
import type {
  Backend, BackendEvent, BackendFunction, BackendModule, BackendStream, DeviceInfo, ImageToLoad, KernelParams, LaunchConfig,
  PreparedLaunch, ParamBlockLayout,
} from '../backend.js'
import { CudaError, NoDriverError, fallbackErrorName } from '../errors.js'
import {
  Attr, DEFAULT_MAX_DYNAMIC_SHARED, FuncAttr, JitOption, LaunchAttribute, LaunchAttributeLayout, LaunchConfigLayout, ProcAddressFlags, ProcAddressStatus, Result, cudaVersionText, entryPoints,
  ptxVersionForDriver, type EntryName,
} from './driver-api.js'

type Koffi = typeof import('koffi')
type Fn = (...args: unknown[]) => number

export interface CudaBackendOptions {
  /** Device ordinal. @default 0 */
  device?: number
  /** Path of the driver library. @default `KERNELPACK_LIBCUDA`, else `libcuda.so.1` (`nvcuda.dll` on Windows) */
  libcudaPath?: string
  /** Resolve entry points with per-thread default-stream semantics (`CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`)
   * instead of the legacy default stream. @default false */
  perThreadDefaultStream?: boolean
}

interface CudaFunction extends BackendFunction {
  readonly handle: bigint
}

interface CudaStream extends BackendStream {
  readonly handle: bigint
}

interface CudaEvent extends BackendEvent {
  readonly handle: bigint
}

let koffiPromise: Promise<Koffi> | undefined
// The context current on the JS thread, as this module last set it: several backends (devices) may share the
// thread, so each makes its primary context current before it calls the driver (one comparison when it is).
// Contexts are compared by a small number given to each handle: a number comparison on the launch path, where
// comparing two bigints is a runtime call.
let currentContext = 0
const contextIds = new Map<bigint, number>()

// koffi registers prototypes by name, once per process.
const protos = new Map<string, unknown>()
const entryFunctions = new Map<string, Fn>()
// The loaded driver libraries, for the life of the process. koffi unloads a library (dlclose) once its object
// is garbage-collected, but the entry points come from cuGetProcAddress as raw addresses that do not keep it:
// without this, the first GC after createCudaBackend unmapped libcuda and the next driver call crashed
// (found by `pnpm test:gpu --self-test`, issue 18; test/runtime/cuda-lifetime.test.ts).
const loadedLibraries = new Set<unknown>()
// koffi is an optional dependency (issue 16): browser-only apps never need it, and a native module cannot be
// bundled. Its name goes through a variable and the bundlers' ignore comments, so webpack, Rspack, esbuild,
// Rollup and Vite leave the import to Node at run time instead of bundling koffi's loader (which then dies
// with "Cannot find the native Koffi module"). Whatever stops it loading is a NoDriverError: `auto` runs the
// emulator and says why; `cuda` says what to install.
const KOFFI = 'koffi'

function loadKoffi(): Promise<Koffi> {
  koffiPromise ??= import(/* webpackIgnore: true */ /* @vite-ignore */ KOFFI).then(
    (m) => ((m as { default?: Koffi }).default ?? m) as Koffi,
    (err: unknown) => { throw koffiError(err) },
  )
  return koffiPromise
}

/** Why koffi did not load, as a NoDriverError naming what to install. */
export function koffiError(err: unknown): NoDriverError {
  const text = err instanceof Error ? err.message : String(err)
  const first = text.split('\n')[0]!.trim()
  const missing = (err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' || (err as { code?: string }).code === 'MODULE_NOT_FOUND' || /Cannot find (module|package) ['"]koffi['"]/.test(text)
  const summary = missing
    ? 'koffi, the optional dependency the cuda backend calls the driver through, was not found'
    : `koffi, the native module the cuda backend calls the driver through, could not be loaded (${first})`
  const fix = missing
    ? 'Install it in the app that runs (`npm install koffi` or `pnpm add koffi`): npm and pnpm install it with @kernelpack/runtime unless optional dependencies are omitted, but a bundled app finds it only in its own dependencies'
    : 'Reinstall it (`npm install koffi`); in a bundled app keep koffi out of the bundle (an external) and in the app\'s own dependencies, so Node loads it from node_modules'
  return new NoDriverError(`${summary}. ${fix}, or load with { backend: 'emulator' } (or 'auto') to run the PTX on the CPU emulator.`, summary)
}

function defaultLibraryNames(): string[] {
  if (process.platform === 'win32') return ['nvcuda.dll']
  return ['libcuda.so.1', 'libcuda.so']
}

const noDriverHelp =
  'Install the NVIDIA driver (it provides libcuda.so.1; check with `nvidia-smi`), point KERNELPACK_LIBCUDA or the ' +
  "libcudaPath option at libcuda, or load with { backend: 'emulator' } (or 'auto') to run the PTX on the CPU emulator."

/** Opens libcuda, resolves the entry points, initialises the driver and retains the device's primary context. */
export async function createCudaBackend(options: CudaBackendOptions = {}): Promise<Backend & CudaBackendExtras> {
  const koffi = await loadKoffi()
  const names = options.libcudaPath ? [options.libcudaPath] : process.env.KERNELPACK_LIBCUDA ? [process.env.KERNELPACK_LIBCUDA] : defaultLibraryNames()
  let lib: ReturnType<Koffi['load']> | undefined
  const failures: string[] = []
  for (const name of names) {
    try {
      lib = koffi.load(name)
      break
    } catch (err) {
      failures.push(`${name}: ${(err as Error).message}`)
    }
  }
  if (!lib) throw new NoDriverError(`no NVIDIA driver was found: could not load ${failures.join('; ')}. ${noDriverHelp}`, `no NVIDIA driver was found (could not load ${names.join(' or ')})`)
  loadedLibraries.add(lib)

  let getProcAddress: Fn
  try {
    getProcAddress = lib.func('int cuGetProcAddress_v2(const char *symbol, uint64_t pfn, int cudaVersion, uint64_t flags, uint64_t symbolStatus)') as Fn
  } catch {
    throw new NoDriverError(`the NVIDIA driver at ${names[0]} has no cuGetProcAddress_v2 (it predates CUDA 12.0); update the NVIDIA driver to one that supports CUDA 12.0 or newer.`)
  }

  // One scratch block for out-parameters: [0,8) and [8,16) outs, [64,320) a name buffer.
  const scratch = koffi.alloc('uint8_t', 1024) as bigint
  const scratchView = new DataView(koffi.view(scratch, 1024))
  const flags = options.perThreadDefaultStream ? ProcAddressFlags.perThreadDefaultStream : ProcAddressFlags.legacyStream

  const cu = {} as Record<EntryName, Fn>
  for (const ep of entryPoints) {
    scratchView.setBigUint64(0, 0n, true)
    scratchView.setInt32(8, -1, true)
    const r = getProcAddress(ep.name, scratch, ep.version, BigInt(flags), scratch + 8n)
    const status = scratchView.getInt32(8, true)
    const pfn = scratchView.getBigUint64(0, true)
    if (status === ProcAddressStatus.symbolNotFound) {
      throw new NoDriverError(`the NVIDIA driver has no ${ep.name} (cuGetProcAddress: CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND); update the NVIDIA driver.`)
    }
    if (status === ProcAddressStatus.versionNotSufficient) {
      throw new NoDriverError(
        `the NVIDIA driver is too old for ${ep.name} as declared for CUDA ${cudaVersionText(ep.version)} (cuGetProcAddress: CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT); update the NVIDIA driver.`,
      )
    }
    if (r !== 0 || status !== ProcAddressStatus.success || pfn === 0n) {
      throw new NoDriverError(`cuGetProcAddress_v2(${JSON.stringify(ep.name)}, version ${ep.version}) failed: ${fallbackErrorName(r)} (${r}), status ${status}`)
    }
    let proto = protos.get(ep.proto)
    if (!proto) protos.set(ep.proto, (proto = koffi.proto(ep.proto)))
    // One JS function per entry point and address in the process: every backend (module) calls the same
    // function object, so the launch call site stays monomorphic and V8 calls the native function directly
    // (a second function object at that site makes it polymorphic: about 40 ns more per launch).
    const key = `${pfn}:${ep.proto}`
    let f = entryFunctions.get(key)
    if (!f) entryFunctions.set(key, (f = (koffi.decode as (ptr: unknown, type: unknown) => unknown)(pfn, proto) as Fn))
    cu[ep.name] = f
  }

  const readCString = (ptr: bigint): string => (ptr === 0n ? '' : String(koffi.decode(ptr, 'char', -1)))

  function errorText(code: number): { name: string; text: string } {
    let name = fallbackErrorName(code)
    let text = 'unknown error'
    if (cu.cuGetErrorName(code, scratch + 16n) === 0) name = readCString(scratchView.getBigUint64(16, true)) || name
    if (cu.cuGetErrorString(code, scratch + 16n) === 0) text = readCString(scratchView.getBigUint64(16, true)) || text
    return { name, text }
  }

  function check(call: string, code: number, more?: string): void {
    if (code === 0) return
    const { name, text } = errorText(code)
    throw new CudaError(call, code, name, text, more)
  }

  const outU64 = (): bigint => scratchView.getBigUint64(0, true)
  const outI32 = (): number => scratchView.getInt32(0, true)

  check('cuInit', cu.cuInit(0))
  check('cuDriverGetVersion', cu.cuDriverGetVersion(scratch))
  const driverVersion = outI32()
  check('cuDeviceGetCount', cu.cuDeviceGetCount(scratch))
  const count = outI32()
  if (count === 0) throw new NoDriverError(`the NVIDIA driver (CUDA ${cudaVersionText(driverVersion)}) reports no CUDA device. ${noDriverHelp}`, 'the NVIDIA driver reports no CUDA device')
  const ordinal = options.device ?? 0
  if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= count) {
    throw new RangeError(`device ${ordinal} does not exist: the driver reports ${count} device(s) (0…${count - 1})`)
  }
  check('cuDeviceGet', cu.cuDeviceGet(scratch, ordinal))
  const dev = outI32()
  const attr = (a: number, what: string) => {
    check(`cuDeviceGetAttribute(${what})`, cu.cuDeviceGetAttribute(scratch, a, dev))
    return outI32()
  }
  const cc: [number, number] = [attr(Attr.computeCapabilityMajor, 'COMPUTE_CAPABILITY_MAJOR'), attr(Attr.computeCapabilityMinor, 'COMPUTE_CAPABILITY_MINOR')]
  const sms = attr(Attr.multiProcessorCount, 'MULTIPROCESSOR_COUNT')
  const warp = attr(Attr.warpSize, 'WARP_SIZE')
  // The launch limits' opt-in shared memory size; a driver that does not answer leaves it to the runtime's table.
  const optin = cu.cuDeviceGetAttribute(scratch, Attr.maxSharedMemoryPerBlockOptin, dev) === 0 ? outI32() : undefined
  check('cuDeviceGetName', cu.cuDeviceGetName(scratch + 64n, 256, dev))
  const nameBytes = new Uint8Array(scratchView.buffer, 64, 256)
  const name = new TextDecoder().decode(nameBytes.subarray(0, Math.max(0, nameBytes.indexOf(0))))
  check('cuDeviceTotalMem', cu.cuDeviceTotalMem(scratch, dev))
  const totalMemory = Number(outU64())
  check('cuDevicePrimaryCtxRetain', cu.cuDevicePrimaryCtxRetain(scratch, dev))
  const ctx = outU64()
  check('cuCtxSetCurrent', cu.cuCtxSetCurrent(ctx))
  if (!contextIds.has(ctx)) contextIds.set(ctx, contextIds.size + 1)
  const ctxId = contextIds.get(ctx)!
  currentContext = ctxId
  const cur = () => {
    if (currentContext !== ctxId) {
      check('cuCtxSetCurrent', cu.cuCtxSetCurrent(ctx))
      currentContext = ctxId
    }
  }

  const info: DeviceInfo = { name, computeCapability: cc, totalMemory, ptxVersion: ptxVersionForDriver(driverVersion), multiProcessorCount: sms, warpSize: warp }
  if (optin !== undefined && optin > 0) info.maxSharedMemoryPerBlockOptin = optin
  const nativeBlocks = new Set<bigint>()
  let disposed = false
  let nextStreamId = 1
  let nextEventId = 1
  const streamHandle = (s?: BackendStream | null): bigint => (s ? (s as CudaStream).handle : 0n)

  function prepareLaunch(fn: BackendFunction, layout: ParamBlockLayout): PreparedLaunch {
    // [CUlaunchConfig 64][CUlaunchAttribute 72][void* kernelParams[n]][param block, 16-aligned]
    const n = layout.offsets.length
    const attrOff = 64
    const ptrOff = attrOff + LaunchAttributeLayout.size
    const paramOff = Math.ceil((ptrOff + 8 * n) / 16) * 16
    const total = paramOff + Math.max(16, layout.size)
    const base = koffi.alloc('uint8_t', total) as bigint
    nativeBlocks.add(base)
    const ab = koffi.view(base, total)
    new Uint8Array(ab).fill(0)
    const cfg32 = new Uint32Array(ab, 0, 16)
    const cfg64 = new BigUint64Array(ab, 0, 8)
    const ptrs = new BigUint64Array(ab, ptrOff, n)
    for (let i = 0; i < n; i++) ptrs[i] = base + BigInt(paramOff + layout.offsets[i]!)
    // the one launch attribute, CU_LAUNCH_ATTRIBUTE_COOPERATIVE with value 1 (cudaLaunchCooperativeKernel), counted only
    // in cooperative launches
    cfg64[LaunchConfigLayout.attrs / 8] = base + BigInt(attrOff)
    const attr = new Int32Array(ab, attrOff, LaunchAttributeLayout.size / 4)
    attr[LaunchAttributeLayout.id / 4] = LaunchAttribute.cooperative
    attr[LaunchAttributeLayout.value / 4] = 1
    const bytes = new Uint8Array(ab, paramOff, layout.size)
    const handle = (fn as CudaFunction).handle
    const ptrsAddr = base + BigInt(ptrOff)
    const launchEx = cu.cuLaunchKernelEx
    let maxShared = DEFAULT_MAX_DYNAMIC_SHARED
    let lastStream: BackendStream | null = null
    return {
      bytes,
      launch(config: LaunchConfig) {
        const g = config.grid
        const b = config.block
        cfg32[0] = g[0]; cfg32[1] = g[1]; cfg32[2] = g[2]
        cfg32[3] = b[0]; cfg32[4] = b[1]; cfg32[5] = b[2]
        cfg32[LaunchConfigLayout.sharedMemBytes / 4] = config.sharedBytes
        cfg32[LaunchConfigLayout.numAttrs / 4] = config.cooperative ? 1 : 0
        const stream = config.stream ?? null
        if (stream !== lastStream) {
          // a BigInt store costs a conversion: write the stream handle only when it changes
          cfg64[LaunchConfigLayout.hStream / 8] = stream ? (stream as CudaStream).handle : 0n
          lastStream = stream
        }
        if (currentContext !== ctxId) cur()
        if (config.sharedBytes > maxShared) {
          // the kernel opted in to more than 48 KiB of dynamic shared memory (kernel.setAttribute, which the
          // runtime checked): cudaFuncSetAttribute's cuFuncSetAttribute, once per new value
          const value = Math.max(config.maxDynamicSharedBytes ?? 0, config.sharedBytes)
          check(`cuFuncSetAttribute(${fn.name}, MAX_DYNAMIC_SHARED_SIZE_BYTES, ${value})`,
            cu.cuFuncSetAttribute(handle, FuncAttr.maxDynamicSharedSizeBytes, value))
          maxShared = value
        }
        const r = launchEx(base, handle, ptrsAddr, 0n)
        if (r !== 0) check(`cuLaunchKernelEx(${fn.name}, grid [${g.join(', ')}], block [${b.join(', ')}], ${config.sharedBytes} B shared${config.cooperative ? ', cooperative' : ''})`, r)
      },
      dispose() {
        if (nativeBlocks.delete(base)) koffi.free(base)
      },
    }
  }

  const generic = new WeakMap<BackendFunction, PreparedLaunch>()

  const backend: Backend & CudaBackendExtras = {
    name: 'cuda',
    imageKinds: ['cubin', 'ptx', 'fatbin'],
    driverVersion,
    device: () => info,
    loadModule(image: ImageToLoad): BackendModule {
      cur()
      // PTX must be NUL-terminated text; cubin/fatbin are passed as they are.
      const size = image.bytes.byteLength + 1
      const img = koffi.alloc('uint8_t', size) as bigint
      const logSize = 16384
      const logs = koffi.alloc('uint8_t', 2 * logSize + 64) as bigint
      try {
        const imgView = new Uint8Array(koffi.view(img, size))
        imgView.set(image.bytes)
        imgView[size - 1] = 0
        const lv = new DataView(koffi.view(logs, 2 * logSize + 64))
        // options (int[4]) at 0, values (void*[4]) at 16, error log at 64, info log at 64+logSize
        const opts = [JitOption.errorLogBuffer, JitOption.errorLogBufferSizeBytes, JitOption.infoLogBuffer, JitOption.infoLogBufferSizeBytes]
        opts.forEach((o, i) => lv.setInt32(i * 4, o, true))
        lv.setBigUint64(16, logs + 64n, true)
        lv.setBigUint64(24, BigInt(logSize), true)
        lv.setBigUint64(32, logs + 64n + BigInt(logSize), true)
        lv.setBigUint64(40, BigInt(logSize), true)
        const r = cu.cuModuleLoadDataEx(scratch, img, 4, logs, logs + 16n)
        if (r !== 0) {
          const errLog = readCString(logs + 64n).trim()
          let more = errLog ? `JIT error log:\n${errLog}` : ''
          if (r === Result.unsupportedPtxVersion) {
            more = `The ${image.kind} ${image.arch} image was built by a newer CUDA toolkit than this driver supports (driver: CUDA ${cudaVersionText(driverVersion)}, PTX ISA up to ${info.ptxVersion![0]}.${info.ptxVersion![1]}). Update the NVIDIA driver, or build a cubin for this GPU (--arch sm_${cc[0]}${cc[1]}) or PTX with an older toolkit.${more ? '\n' + more : ''}`
          } else if (r === Result.noBinaryForGpu) {
            more = `The ${image.kind} ${image.arch} image does not run on ${name} (compute capability ${cc[0]}.${cc[1]}).${more ? '\n' + more : ''}`
          }
          check(`cuModuleLoadDataEx(${image.kind} ${image.arch}, ${image.bytes.byteLength} bytes)`, r, more)
        }
        const hmod = outU64()
        const launches: PreparedLaunch[] = []
        const functions = new Map<string, CudaFunction>()
        return {
          getFunction(fname: string): CudaFunction {
            cur()
            let f = functions.get(fname)
            if (f) return f
            check(`cuModuleGetFunction(${JSON.stringify(fname)})`, cu.cuModuleGetFunction(scratch, hmod, fname))
            f = { name: fname, handle: outU64() }
            functions.set(fname, f)
            return f
          },
          getGlobal(gname: string) {
            cur()
            check(`cuModuleGetGlobal(${JSON.stringify(gname)})`, cu.cuModuleGetGlobal(scratch, scratch + 8n, hmod, gname))
            return { address: outU64(), size: Number(scratchView.getBigUint64(8, true)) }
          },
          prepareLaunch(fn: BackendFunction, layout: ParamBlockLayout) {
            const p = prepareLaunch(fn, layout)
            launches.push(p)
            return p
          },
          unload() {
            cur()
            for (const p of launches) p.dispose?.()
            check('cuModuleUnload', cu.cuModuleUnload(hmod))
          },
        } as BackendModule
      } finally {
        koffi.free(img)
        koffi.free(logs)
      }
    },
    alloc(byteLength: number): bigint {
      cur()
      if (byteLength === 0) return 0n
      check(`cuMemAlloc(${byteLength} bytes)`, cu.cuMemAlloc(scratch, byteLength))
      return outU64()
    },
    free(address: bigint): void {
      cur()
      if (address !== 0n) check('cuMemFree', cu.cuMemFree(address))
    },
    copyToDevice(dst: bigint, src: Uint8Array, stream?: BackendStream | null): void {
      cur()
      if (src.byteLength === 0) return
      if (stream) {
        // The host memory is a JS buffer that may move once we return: wait for the copy.
        check('cuMemcpyHtoDAsync', cu.cuMemcpyHtoDAsync(dst, src, src.byteLength, streamHandle(stream)))
        check('cuStreamSynchronize', cu.cuStreamSynchronize(streamHandle(stream)))
      } else check('cuMemcpyHtoD', cu.cuMemcpyHtoD(dst, src, src.byteLength))
    },
    copyFromDevice(dst: Uint8Array, src: bigint, stream?: BackendStream | null): void {
      cur()
      if (dst.byteLength === 0) return
      if (stream) {
        check('cuMemcpyDtoHAsync', cu.cuMemcpyDtoHAsync(dst, src, dst.byteLength, streamHandle(stream)))
        check('cuStreamSynchronize', cu.cuStreamSynchronize(streamHandle(stream)))
      } else check('cuMemcpyDtoH', cu.cuMemcpyDtoH(dst, src, dst.byteLength))
    },
    memset(dst: bigint, byte: number, byteLength: number, stream?: BackendStream | null): void {
      cur()
      if (byteLength === 0) return
      if (stream) check('cuMemsetD8Async', cu.cuMemsetD8Async(dst, byte & 0xff, byteLength, streamHandle(stream)))
      else check('cuMemsetD8', cu.cuMemsetD8(dst, byte & 0xff, byteLength))
    },
    createStream(): CudaStream {
      cur()
      check('cuStreamCreate', cu.cuStreamCreate(scratch, 0))
      return { id: nextStreamId++, handle: outU64() }
    },
    destroyStream(stream: BackendStream): void {
      cur()
      check('cuStreamDestroy', cu.cuStreamDestroy(streamHandle(stream)))
    },
    synchronize(stream?: BackendStream | null): void {
      cur()
      if (stream) check('cuStreamSynchronize', cu.cuStreamSynchronize(streamHandle(stream)))
      else check('cuCtxSynchronize', cu.cuCtxSynchronize())
    },
    launch(fn: BackendFunction, config: LaunchConfig, params: KernelParams): void {
      let p = generic.get(fn)
      if (!p || p.bytes.byteLength < params.bytes.byteLength) {
        p?.dispose?.()
        p = prepareLaunch(fn, { size: params.bytes.byteLength, offsets: params.offsets, sizes: params.sizes })
        generic.set(fn, p)
      }
      p.bytes.set(params.bytes)
      return p.launch(config) as void
    },
    createEvent(): CudaEvent {
      cur()
      check('cuEventCreate', cu.cuEventCreate(scratch, 0))
      return { id: nextEventId++, handle: outU64() }
    },
    recordEvent(event: BackendEvent, stream?: BackendStream | null): void {
      cur()
      check('cuEventRecord', cu.cuEventRecord((event as CudaEvent).handle, streamHandle(stream)))
    },
    elapsedMs(start: BackendEvent, end: BackendEvent): number {
      cur()
      check('cuEventSynchronize', cu.cuEventSynchronize((end as CudaEvent).handle))
      check('cuEventElapsedTime', cu.cuEventElapsedTime(scratch, (start as CudaEvent).handle, (end as CudaEvent).handle))
      return scratchView.getFloat32(0, true)
    },
    destroyEvent(event: BackendEvent): void {
      cur()
      check('cuEventDestroy', cu.cuEventDestroy((event as CudaEvent).handle))
    },
    dispose(): void {
      if (disposed) return
      disposed = true
      cur()
      for (const b of nativeBlocks) koffi.free(b)
      nativeBlocks.clear()
      check('cuDevicePrimaryCtxRelease', cu.cuDevicePrimaryCtxRelease(dev))
    },
  }
  return backend
}

/** What the cuda backend offers beyond the Backend interface. */
export interface CudaBackendExtras {
  /** `cuDriverGetVersion` (CUDA x.y → x*1000 + y*10). */
  readonly driverVersion: number
}
