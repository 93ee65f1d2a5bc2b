// The CUDA driver entry points the cuda backend uses, each with the ABI version its declaration was written
// for: the `_vNNNNN` suffix of the matching `PFN_<name>_vNNNNN` typedef in cudaTypedefs.h (CUDA 13.0), which
// is the `cudaVersion` argument cuGetProcAddress_v2 expects. A later ABI of the same name (cuMemAlloc_v2
// at 3020, cuCtxSynchronize_v2 at 13000 with a context argument) is a different declaration; asking for
// the version written here always gets the signature declared here.
//
// koffi prototypes: handles, device pointers and out-parameters are `uint64_t` (addresses into a native
// scratch block); host buffers are `void *` so typed arrays pass without a copy.

export interface EntryPoint {
  /** The name given to cuGetProcAddress (no `_v2` / `_ptsz` suffix). */
  name: string
  /** ABI version (CUDA x.y → x*1000 + y*10) of the PFN typedef this declaration matches. */
  version: number
  /** koffi prototype; parameter names follow cuda.h. */
  proto: string
}

export const entryPoints = [
  { name: 'cuGetErrorName', version: 6000, proto: 'int cuGetErrorName(int error, uint64_t pStr)' },
  { name: 'cuGetErrorString', version: 6000, proto: 'int cuGetErrorString(int error, uint64_t pStr)' },
  { name: 'cuInit', version: 2000, proto: 'int cuInit(unsigned int Flags)' },
  { name: 'cuDriverGetVersion', version: 2020, proto: 'int cuDriverGetVersion(uint64_t driverVersion)' },
  { name: 'cuDeviceGetCount', version: 2000, proto: 'int cuDeviceGetCount(uint64_t count)' },
  { name: 'cuDeviceGet', version: 2000, proto: 'int cuDeviceGet(uint64_t device, int ordinal)' },
  { name: 'cuDeviceGetAttribute', version: 2000, proto: 'int cuDeviceGetAttribute(uint64_t pi, int attrib, int dev)' },
  { name: 'cuDeviceGetName', version: 2000, proto: 'int cuDeviceGetName(uint64_t name, int len, int dev)' },
  { name: 'cuDeviceTotalMem', version: 3020, proto: 'int cuDeviceTotalMem(uint64_t bytes, int dev)' },
  { name: 'cuDevicePrimaryCtxRetain', version: 7000, proto: 'int cuDevicePrimaryCtxRetain(uint64_t pctx, int dev)' },
  { name: 'cuDevicePrimaryCtxRelease', version: 11000, proto: 'int cuDevicePrimaryCtxRelease(int dev)' },
  { name: 'cuCtxSetCurrent', version: 4000, proto: 'int cuCtxSetCurrent(uint64_t ctx)' },
  { name: 'cuCtxSynchronize', version: 2000, proto: 'int cuCtxSynchronize()' },
  { name: 'cuModuleLoadDataEx', version: 2010, proto: 'int cuModuleLoadDataEx(uint64_t module, uint64_t image, unsigned int numOptions, uint64_t options, uint64_t optionValues)' },
  { name: 'cuModuleUnload', version: 2000, proto: 'int cuModuleUnload(uint64_t hmod)' },
  { name: 'cuModuleGetFunction', version: 2000, proto: 'int cuModuleGetFunction(uint64_t hfunc, uint64_t hmod, const char *name)' },
  { name: 'cuModuleGetGlobal', version: 3020, proto: 'int cuModuleGetGlobal(uint64_t dptr, uint64_t bytes, uint64_t hmod, const char *name)' },
  { name: 'cuMemAlloc', version: 3020, proto: 'int cuMemAlloc(uint64_t dptr, size_t bytesize)' },
  { name: 'cuMemFree', version: 3020, proto: 'int cuMemFree(uint64_t dptr)' },
  { name: 'cuMemcpyHtoD', version: 3020, proto: 'int cuMemcpyHtoD(uint64_t dstDevice, const void *srcHost, size_t ByteCount)' },
  { name: 'cuMemcpyDtoH', version: 3020, proto: 'int cuMemcpyDtoH(void *dstHost, uint64_t srcDevice, size_t ByteCount)' },
  { name: 'cuMemcpyHtoDAsync', version: 3020, proto: 'int cuMemcpyHtoDAsync(uint64_t dstDevice, const void *srcHost, size_t ByteCount, uint64_t hStream)' },
  { name: 'cuMemcpyDtoHAsync', version: 3020, proto: 'int cuMemcpyDtoHAsync(void *dstHost, uint64_t srcDevice, size_t ByteCount, uint64_t hStream)' },
  { name: 'cuMemsetD8', version: 3020, proto: 'int cuMemsetD8(uint64_t dstDevice, uint8_t uc, size_t N)' },
  { name: 'cuMemsetD8Async', version: 3020, proto: 'int cuMemsetD8Async(uint64_t dstDevice, uint8_t uc, size_t N, uint64_t hStream)' },
  { name: 'cuStreamCreate', version: 2000, proto: 'int cuStreamCreate(uint64_t phStream, unsigned int Flags)' },
  { name: 'cuStreamDestroy', version: 4000, proto: 'int cuStreamDestroy(uint64_t hStream)' },
  { name: 'cuStreamSynchronize', version: 2000, proto: 'int cuStreamSynchronize(uint64_t hStream)' },
  { name: 'cuEventCreate', version: 2000, proto: 'int cuEventCreate(uint64_t phEvent, unsigned int Flags)' },
  { name: 'cuEventRecord', version: 2000, proto: 'int cuEventRecord(uint64_t hEvent, uint64_t hStream)' },
  { name: 'cuEventSynchronize', version: 2000, proto: 'int cuEventSynchronize(uint64_t hEvent)' },
  { name: 'cuEventElapsedTime', version: 2000, proto: 'int cuEventElapsedTime(uint64_t pMilliseconds, uint64_t hStart, uint64_t hEnd)' },
  { name: 'cuEventDestroy', version: 4000, proto: 'int cuEventDestroy(uint64_t hEvent)' },
  { name: 'cuFuncSetAttribute', version: 9000, proto: 'int cuFuncSetAttribute(uint64_t hfunc, int attrib, int value)' },
  { name: 'cuLaunchKernelEx', version: 11060, proto: 'int cuLaunchKernelEx(uint64_t config, uint64_t f, uint64_t kernelParams, uint64_t extra)' },
] as const satisfies readonly EntryPoint[]

export type EntryName = (typeof entryPoints)[number]['name']

/** `CUdriverProcAddress_flags` (cuda.h): which default-stream semantics the resolved symbols get. */
export const ProcAddressFlags = { default: 0, legacyStream: 1, perThreadDefaultStream: 2 } as const

/** `CUdriverProcAddressQueryResult` (cuda.h). */
export const ProcAddressStatus = { success: 0, symbolNotFound: 1, versionNotSufficient: 2 } as const

/** cuda.h enum values the backend passes. */
export const Attr = { warpSize: 10, multiProcessorCount: 16, computeCapabilityMajor: 75, computeCapabilityMinor: 76, maxSharedMemoryPerBlockOptin: 97 } as const
/** `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: launches with more than 48 KiB of dynamic shared memory need it raised first. */
export const FuncAttr = { maxDynamicSharedSizeBytes: 8 } as const
export const DEFAULT_MAX_DYNAMIC_SHARED = 48 * 1024
export const JitOption = { infoLogBuffer: 3, infoLogBufferSizeBytes: 4, errorLogBuffer: 5, errorLogBufferSizeBytes: 6, logVerbose: 12 } as const
export const Result = { success: 0, noDevice: 100, invalidPtx: 218, unsupportedPtxVersion: 222, noBinaryForGpu: 209 } as const

/**
 * `CUlaunchConfig` (cuda.h) on LP64: six u32 grid/block dims at 0…20, sharedMemBytes u32 at 24, hStream at
 * 32 (8-aligned), attrs at 40, numAttrs u32 at 48; 56 bytes.
 */
export const LaunchConfigLayout = { grid: 0, block: 12, sharedMemBytes: 24, hStream: 32, attrs: 40, numAttrs: 48, size: 56 } as const
/** CUlaunchAttribute (cuda.h): `{ CUlaunchAttributeID id; char pad[4]; CUlaunchAttributeValue value; }`, the
 *  value a 64-byte union. */
export const LaunchAttributeLayout = { id: 0, value: 8, size: 72 } as const
/** CUlaunchAttributeID values (cuda.h). */
export const LaunchAttribute = { cooperative: 2 } as const

/** Highest PTX ISA version each CUDA driver JIT-compiles (PTX ISA release notes: 8.0 = CUDA 12.0 … 9.0 = 13.0). */
export function ptxVersionForDriver(driverVersion: number): [number, number] {
  const major = Math.floor(driverVersion / 1000)
  const minor = Math.floor((driverVersion % 1000) / 10)
  if (major >= 13) return [9, minor]
  if (major === 12) return [8, Math.min(minor <= 5 ? minor : minor - 1, 8)]
  if (major === 11) return [7, Math.min(minor, 8)]
  if (major === 10) return [6, minor === 0 ? 4 : 5]
  return [6, 0]
}

export function cudaVersionText(v: number): string {
  return `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`
}
