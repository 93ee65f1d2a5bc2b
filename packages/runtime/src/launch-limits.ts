// The launch limits the CUDA driver enforces, checked by the runtime before any backend runs (issue 17
// item 7): the emulator would otherwise accept launches no GPU runs (grid y = 65536, block z = 65, a GiB of
// dynamic shared memory), and the cuda backend's errors would come later and vaguer. Failures are CudaErrors
// with the CUresult the driver returns for them (CUDA_ERROR_INVALID_VALUE), so callers handle one error
// whatever the backend.
//
// Sources: CUDA C++ Programming Guide (13.0), "Technical Specifications per Compute Capability": grid
// x ≤ 2^31−1, y and z ≤ 65535; block x and y ≤ 1024, z ≤ 64, x·y·z ≤ 1024; and "Maximum amount of shared
// memory per thread block", which beyond 48 KiB needs the opt-in attribute
// cudaFuncAttributeMaxDynamicSharedMemorySize (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
import { CudaError } from './errors.js'

export const CUDA_ERROR_INVALID_VALUE = 1

export interface LaunchLimits {
  /** Compute capability the limits are for. */
  computeCapability: [number, number]
  maxGrid: [number, number, number]
  maxBlock: [number, number, number]
  maxThreadsPerBlock: number
  /** Dynamic shared memory a kernel may use without the opt-in attribute (48 KiB on every architecture). */
  defaultDynamicShared: number
  /** The most shared memory one block may have with the opt-in (`sharedMemPerBlockOptin`). */
  maxSharedOptIn: number
}

const KiB = 1024

/** `sharedMemPerBlockOptin` by compute capability (the programming guide's table; 48 KiB before Volta). */
export function maxSharedOptInFor(cc: readonly [number, number]): number {
  const [major, minor] = cc
  if (major < 7) return 48 * KiB
  if (major === 7) return minor === 5 ? 64 * KiB : 96 * KiB
  if (major === 8) return minor === 0 || minor === 7 ? 163 * KiB : 99 * KiB
  if (major === 12) return 99 * KiB
  // 9.0 (Hopper), 10.x and 11.0 (Blackwell datacenter and Thor): 227 KiB
  return 227 * KiB
}

export function launchLimitsFor(cc: readonly [number, number], maxSharedOptIn?: number): LaunchLimits {
  return {
    computeCapability: [cc[0], cc[1]],
    maxGrid: [0x7fffffff, 65535, 65535],
    maxBlock: [1024, 1024, 64],
    maxThreadsPerBlock: 1024,
    defaultDynamicShared: 48 * KiB,
    maxSharedOptIn: maxSharedOptIn ?? maxSharedOptInFor(cc),
  }
}

/** `sm_90a` / `compute_80` / `sm_120f` → its compute capability; undefined for anything else. */
export function computeCapabilityOfArch(arch: string): [number, number] | undefined {
  const m = /^(?:sm|compute)_(\d+)(\d)[af]?$/.exec(arch)
  return m ? [Number(m[1]), Number(m[2])] : undefined
}

/** A CudaError as the driver would report the rejected call (the name written out, so that a page that never
 *  meets the driver does not carry errors.ts's table of CUresult names). */
export function invalidValue(call: string, why: string): CudaError {
  return new CudaError(call, CUDA_ERROR_INVALID_VALUE, 'CUDA_ERROR_INVALID_VALUE', why)
}

const axes = ['x', 'y', 'z'] as const

/**
 * Throws the driver's error for a launch configuration beyond `limits`; `maxDynamicShared` is the kernel's
 * opt-in attribute (48 KiB when never raised). Kept to comparisons: it runs on every launch.
 */
export function checkLaunchLimits(label: string, grid: readonly number[], block: readonly number[], sharedBytes: number, maxDynamicShared: number, limits: LaunchLimits): void {
  const g = limits.maxGrid
  const b = limits.maxBlock
  if (grid[0]! <= g[0] && grid[1]! <= g[1] && grid[2]! <= g[2] && block[0]! <= b[0] && block[1]! <= b[1] && block[2]! <= b[2] &&
    block[0]! * block[1]! * block[2]! <= limits.maxThreadsPerBlock && sharedBytes <= maxDynamicShared) return
  const call = `launch of kernel ${label}`
  const cc = `compute capability ${limits.computeCapability[0]}.${limits.computeCapability[1]}`
  for (let i = 0; i < 3; i++) {
    if (grid[i]! > g[i]!) throw invalidValue(call, `grid ${axes[i]} = ${grid[i]} exceeds the maximum of ${g[i]} (CUDA allows grid x up to 2^31-1, y and z up to 65535)`)
  }
  for (let i = 0; i < 3; i++) {
    if (block[i]! > b[i]!) throw invalidValue(call, `block ${axes[i]} = ${block[i]} exceeds the maximum of ${b[i]} (CUDA allows block x and y up to 1024, z up to 64)`)
  }
  const threads = block[0]! * block[1]! * block[2]!
  if (threads > limits.maxThreadsPerBlock) {
    throw invalidValue(call, `block [${block.join(', ')}] has ${threads} threads; at most ${limits.maxThreadsPerBlock} per block`)
  }
  if (maxDynamicShared === limits.defaultDynamicShared) {
    throw invalidValue(call, `sharedBytes = ${sharedBytes} exceeds the ${limits.defaultDynamicShared} bytes (48 KiB) of dynamic shared memory a kernel gets by default; ` +
      `opt in first with kernel.setAttribute('maxDynamicSharedMemorySize', ${sharedBytes}) (cudaFuncAttributeMaxDynamicSharedMemorySize), up to ${limits.maxSharedOptIn} bytes on ${cc}`)
  }
  throw invalidValue(call, `sharedBytes = ${sharedBytes} exceeds the kernel's maxDynamicSharedMemorySize attribute of ${maxDynamicShared} bytes; raise it with kernel.setAttribute('maxDynamicSharedMemorySize', ${sharedBytes}) (at most ${limits.maxSharedOptIn} bytes on ${cc})`)
}

/** Kernel attributes `kernel.setAttribute` takes, as cudaFuncSetAttribute's names without the prefix. */
export type KernelAttribute = 'maxDynamicSharedMemorySize'

/** Checks a value for `kernel.setAttribute(attr, value)` as cuFuncSetAttribute would. */
export function checkKernelAttribute(label: string, attr: string, value: unknown, limits: LaunchLimits): number {
  const call = `kernel ${label}: setAttribute(${JSON.stringify(attr)}, ${typeof value === 'number' ? value : JSON.stringify(value)})`
  if (attr !== 'maxDynamicSharedMemorySize') {
    throw new TypeError(`${call}: unknown attribute; kernels have 'maxDynamicSharedMemorySize' (cudaFuncAttributeMaxDynamicSharedMemorySize)`)
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw invalidValue(call, `maxDynamicSharedMemorySize must be a non-negative integer number of bytes`)
  }
  if (value > limits.maxSharedOptIn) {
    throw invalidValue(call, `maxDynamicSharedMemorySize = ${value} exceeds the ${limits.maxSharedOptIn} bytes of shared memory a block may have on compute capability ${limits.computeCapability[0]}.${limits.computeCapability[1]}`)
  }
  return value
}
