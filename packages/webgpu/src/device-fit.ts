// Why a translated kernel does not fit the device it is loaded on (a feature it needs, a parameter block, shared
// memory or a `.reqntid` over the device's limits): loaded by the backend only for a module with such a kernel,
// which is then refused like an untranslatable one, so `auto` falls back instead of failing at the first launch.
import type { Untranslatable } from './errors.js'
import type { WgslKernel } from './translate.js'

const align16 = (n: number) => Math.ceil(n / 16) * 16

/** The refusals of the kernels that do not fit; `info` names the device. */
export function misfits(kernels: Iterable<WgslKernel>, features: ReadonlySet<string>, limit: (name: string) => number, info: string): Untranslatable[] {
  const refused: Untranslatable[] = []
  for (const k of kernels) {
    const missing = k.features.filter((f) => !features.has(f))
    if (missing.length) refused.push({ kernel: k.name, line: 0, reason: `needs the WebGPU feature(s) ${missing.join(', ')}, which ${info} lacks` })
    if (align16(k.paramBytes) > limit('maxUniformBufferBindingSize')) refused.push({ kernel: k.name, line: 0, reason: `its ${k.paramBytes}-byte parameter block exceeds maxUniformBufferBindingSize (${limit('maxUniformBufferBindingSize')})` })
    // (a kernel with its shared memory in the arena needs only its scratch in workgroup memory: arena-shared.ts)
    if ((k.sharedInArena ?? k).workgroupBytes > limit('maxComputeWorkgroupStorageSize')) refused.push({ kernel: k.name, line: 0, reason: `its ${k.workgroupBytes} bytes of shared memory exceed maxComputeWorkgroupStorageSize (${limit('maxComputeWorkgroupStorageSize')})` })
    if (k.requiredBlock && k.requiredBlock[0] * k.requiredBlock[1] * k.requiredBlock[2] > limit('maxComputeInvocationsPerWorkgroup')) {
      refused.push({ kernel: k.name, line: 0, reason: `.reqntid ${k.requiredBlock.join(',')} exceeds maxComputeInvocationsPerWorkgroup (${limit('maxComputeInvocationsPerWorkgroup')})` })
    }
  }
  return refused
}
