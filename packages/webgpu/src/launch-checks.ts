// Why a launch cannot run (backend.ts checks cheaply whether one of these holds, and loads this module then):
// a block or grid past the adapter's limits, the kernel's .reqntid/.maxntid, shared memory past the workgroup
// storage, a parameter block that does not match the kernel's. The first that holds, in this order, with
// what to do about it. And why an allocation cannot be served (alloc, likewise), and the messages of other
// mistakes a page rarely makes (an image of another kind, a launch's signal or timeoutMs that is not one), and why
// there is no adapter (device.ts).
import { NoAdapterError, WebGpuLimitError } from './errors.js'
import type { Dim3, WgslKernel } from './translate.js'

const align4 = (n: number) => Math.ceil(n / 4) * 4

/** `inArena`: the kernel's variant with shared memory in the arena, where that runs (its workgroup memory is
 *  only its scratch). */
export function launchProblem(what: string, k: WgslKernel, block: Dim3, grid: Dim3, threads: number, shared: number,
  params: { bytes: Uint8Array; offsets?: readonly number[] }, coarse: boolean, limit: (name: string) => number, inArena?: WgslKernel['sharedInArena']): Error {
  const fallback = 'the emulator backend has no such limit'
  if (!coarse) {
    for (const [i, axis] of (['X', 'Y', 'Z'] as const).entries()) {
      const max = limit(`maxComputeWorkgroupSize${axis}`)
      if (block[i]! > max) return new WebGpuLimitError(`${what}: block.${axis.toLowerCase()}`, `maxComputeWorkgroupSize${axis}`, block[i]!, max, `launch with smaller blocks, or use the emulator (${fallback})`)
    }
    const maxInvocations = limit('maxComputeInvocationsPerWorkgroup')
    if (threads > maxInvocations) {
      return new WebGpuLimitError(`${what}: ${block.join('×')} threads per block`, 'maxComputeInvocationsPerWorkgroup', threads, maxInvocations, `launch with at most ${maxInvocations} threads per block, or use the emulator (${fallback})`)
    }
  }
  if (k.requiredBlock && k.requiredBlock.some((v, i) => v !== block[i])) return new RangeError(`${what}: the kernel requires block ${k.requiredBlock.join('×')} (.reqntid), got ${block.join('×')}`)
  if (k.maxThreads !== undefined && threads > k.maxThreads) return new RangeError(`${what}: the kernel allows at most ${k.maxThreads} threads per block (.maxntid), got ${threads}`)
  if (!Number.isInteger(shared) || shared < 0) return new RangeError(`${what}: sharedBytes must be a non-negative integer`)
  const staticBytes = (inArena ?? k).workgroupBytes + (k.workgroupBytesPerThread ?? 0) * threads
  const workgroupBytes = staticBytes + (inArena ? 0 : align4(shared))
  if (workgroupBytes > limit('maxComputeWorkgroupStorageSize')) {
    return new WebGpuLimitError(`${what}: ${staticBytes} bytes of static shared memory (and scratch) and ${shared} of dynamic shared memory`, 'maxComputeWorkgroupStorageSize', workgroupBytes, limit('maxComputeWorkgroupStorageSize'), `use less shared memory per block, or the emulator (${fallback})`)
  }
  const perDim = limit('maxComputeWorkgroupsPerDimension')
  for (const [i, axis] of (['y', 'z'] as const).entries()) {
    if (grid[i + 1]! > perDim) return new WebGpuLimitError(`${what}: grid.${axis}`, 'maxComputeWorkgroupsPerDimension', grid[i + 1]!, perDim, 'only grid.x is split into several dispatches')
  }
  if (params.bytes.length < k.paramBytes) return new TypeError(`${what}: the parameter block has ${params.bytes.length} bytes, the kernel reads ${k.paramBytes}`)
  if (k.paramOffsets && params.offsets) {
    if (params.offsets.length !== k.paramOffsets.length) return new TypeError(`${what}: ${params.offsets.length} parameter offsets given, the kernel declares ${k.paramOffsets.length} parameters (is the manifest from another build?)`)
    for (const [i, o] of params.offsets.entries()) {
      if (o !== k.paramOffsets[i]) return new TypeError(`${what}: parameter ${i} is at offset ${o} in the block but at ${k.paramOffsets[i]} in the PTX's .param layout (is the manifest from another build?)`)
    }
  }
  return new Error(`internal: ${what} failed a launch check that launch-checks.ts does not explain`)
}

/** An image of another kind than the backend loads. */
export function badImage(kind: string, arch: string): TypeError {
  return new TypeError(`the webgpu backend loads WGSL translated at build time or PTX; got a ${kind} image for ${arch}`)
}

/** A launch's signal or timeoutMs that is not one. */
export function badStop(what: string, signal: unknown, timeoutMs: unknown): TypeError {
  if (signal !== undefined && !(typeof signal === 'object' && signal !== null && 'aborted' in signal)) return new TypeError(`${what}: signal must be an AbortSignal`)
  return new TypeError(`${what}: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`)
}

/** One allocation larger than the arena may ever be (`bound` names the limit that says so). */
export function allocTooBig(byteLength: number, bound: string, max: number): Error {
  return new WebGpuLimitError(`alloc of ${byteLength} bytes`, bound, byteLength, max,
    'the arena holds every allocation in one storage buffer: split the data over several launches, or use the emulator (no such limit)')
}

/** The device refused the bigger arena an allocation needs (the arena stays as it was). */
export function allocGrowthFailed(byteLength: number, size: number, capacity: number, inUse: number, memoryLimit: number, deviceMessage: string): Error {
  return new RangeError(`alloc: ${byteLength} bytes: the WebGPU device could not grow its memory to ${size} bytes ` +
    `(it holds ${capacity}, ${inUse} in use; the adapter's limit is ${memoryLimit}): ${deviceMessage.split('\n')[0]!.replace(/\.?$/, '.')} Free memory, or allocate less.`)
}

/** No WebGPU (`answered` false: no navigator.gpu), or an adapter request answered null. */
export function noAdapter(answered: boolean): NoAdapterError {
  return answered
    ? new NoAdapterError('WebGPU answered no adapter (requestAdapter() gave null)',
      'the browser may have WebGPU disabled on this system (Chromium on Linux needs --enable-unsafe-webgpu), or there is no GPU and no software adapter')
    : new NoAdapterError('WebGPU is not available (no navigator.gpu)',
      "in Node install the optional `webgpu` package (Dawn) and pass its GPU: loadModule(…, { backend: 'webgpu', webgpu: { gpu: create([]) } })")
}
