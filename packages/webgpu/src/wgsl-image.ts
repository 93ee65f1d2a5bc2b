// WGSL translated at build time, as an image of the offload binary (issue 25): the plugin and `kernelpack
// build` translate the PTX once and ship the result, so a page running WebGPU loads neither the translator nor
// the PTX front end. The image is one UTF-8 JSON document (the same WgslModule a translator returns at load:
// every kernel's WGSL and launch facts, the kernels that cannot run on WebGPU with their reasons, the module
// variables with their initial bytes in base64), in the offload binary with image kind None and the strings
// triple=wgsl, arch=wgsl (@kernelpack/offload's WGSL_TRIPLE; README.md, "WGSL translated at build time"). Keys are written in a fixed order, so the
// same PTX gives the same bytes. A kernel with warp collectives carries a second record, `subgroups32`: the same
// kernel translated for an adapter whose subgroups are 32 wide (a runtime without it reads the image as before).
import { WebGpuError, type Untranslatable } from './errors.js'
import { subgroupsAre32, type TranslateTarget, type WgslKernel, type WgslModule, type WgslVariable } from './translate.js'

const FORMAT = 'kernelpack-wgsl'
const VERSION = 1

/** The image's bytes for a translated module. */
export function encodeWgslImage(m: WgslModule): Uint8Array {
  const kernels = [...m.kernels.values()].map(kernelRecord)
  const refused = m.refused.map((u) => ({
    ...(u.kernel !== undefined ? { kernel: u.kernel } : {}),
    line: u.line,
    ...(u.instruction !== undefined ? { instruction: u.instruction } : {}),
    reason: u.reason,
    ...(u.source ? { source: { file: u.source.file, line: u.source.line, column: u.source.column } } : {}),
  }))
  const variables = m.variables.map((v) => ({ name: v.name, space: v.space, size: v.size, align: v.align, ...(v.init ? { init: toBase64(v.init) } : {}) }))
  return new TextEncoder().encode(JSON.stringify({ format: FORMAT, version: VERSION, kernels, refused, variables }))
}

/** One kernel's record, its keys in a fixed order (a subgroups32 variant last, as a record of its own). */
function kernelRecord(k: WgslKernel): Record<string, unknown> {
  return {
    name: k.name,
    entryPoint: k.entryPoint,
    paramBytes: k.paramBytes,
    ...(k.paramOffsets ? { paramOffsets: [...k.paramOffsets] } : {}),
    workgroupBytes: k.workgroupBytes,
    ...(k.workgroupBytesPerThread !== undefined ? { workgroupBytesPerThread: k.workgroupBytesPerThread } : {}),
    memory: k.memory,
    features: [...k.features],
    ...(k.requiredBlock ? { requiredBlock: [...k.requiredBlock] } : {}),
    ...(k.maxThreads !== undefined ? { maxThreads: k.maxThreads } : {}),
    ...(k.variables ? { variables: [...k.variables] } : {}),
    wgsl: k.wgsl,
    ...(k.printf?.length ? { printf: [...k.printf] } : {}),
    // (its keys in emit-kernel.ts's fixed order)
    ...(k.gridSync ? { gridSync: k.gridSync } : {}),
    ...(k.coarse ? { coarse: { factor: k.coarse.factor, entryPoint: k.coarse.entryPoint, wgsl: k.coarse.wgsl } } : {}),
    ...(k.sharedInArena ? { sharedInArena: { entryPoint: k.sharedInArena.entryPoint, workgroupBytes: k.sharedInArena.workgroupBytes, workspaceAt: k.sharedInArena.workspaceAt, words: { fixed: k.sharedInArena.words.fixed, dynamic: k.sharedInArena.words.dynamic }, wgsl: k.sharedInArena.wgsl } } : {}),
    ...(k.unchecked ? { unchecked: { sites: k.unchecked.sites, wgsl: k.unchecked.wgsl, ...(k.unchecked.trips?.length ? { trips: k.unchecked.trips } : {}) } } : {}),
    ...(k.subgroups32 ? { subgroups32: kernelRecord(k.subgroups32) } : {}),
  }
}

/** The translated module in an image; a WebGpuError naming `source` when the bytes are not such an image. With
 *  `device`, as that device runs it: each kernel's subgroups32 variant in its place where the device's subgroups
 *  are exactly 32 wide. */
export function decodeWgslImage(bytes: Uint8Array, source: string, device?: Pick<TranslateTarget, 'features' | 'subgroupMinSize' | 'subgroupMaxSize'>): WgslModule {
  const bad = (what: string): never => { throw new WebGpuError(`${source}: the WGSL image ${what}; rebuild it with this version of kernelpack`) }
  let doc: Record<string, unknown>
  try {
    doc = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>
  } catch (err) {
    return bad(`is not JSON (${(err as Error).message})`)
  }
  if (doc?.format !== FORMAT) bad(`has no "format": "${FORMAT}"`)
  if (doc.version !== VERSION) bad(`is version ${String(doc.version)}, this runtime reads version ${VERSION}`)
  if (!Array.isArray(doc.kernels) || !Array.isArray(doc.refused) || !Array.isArray(doc.variables)) bad('lacks kernels, refused or variables')
  const kernels = new Map<string, WgslKernel>()
  const kernel = (k: Record<string, unknown>): WgslKernel => {
    if (typeof k?.name !== 'string' || typeof k.wgsl !== 'string' || typeof k.entryPoint !== 'string' || typeof k.paramBytes !== 'number' || typeof k.workgroupBytes !== 'number') bad('has a kernel without its name, WGSL or sizes')
    // the record's fields as encodeWgslImage wrote them, the optional ones where present
    const { subgroups32, ...fields } = k
    return {
      ...fields,
      memory: k.memory === 'atomic-u32' ? 'atomic-u32' : 'u32',
      features: (k.features as string[] | undefined) ?? [],
      ...(subgroups32 ? { subgroups32: kernel(subgroups32 as Record<string, unknown>) } : {}),
    } as unknown as WgslKernel
  }
  const wide = device && subgroupsAre32(device)
  for (const k of doc.kernels as Array<Record<string, unknown>>) {
    const d = kernel(k), v = wide && d.subgroups32
    // (a variant whose coarsened kernel is the plain one's ships without it)
    kernels.set(d.name, v ? { ...v, coarse: v.coarse ?? d.coarse } : d)
  }
  const refused = doc.refused as Untranslatable[]
  const variables = (doc.variables as Array<Record<string, unknown>>).map((v): WgslVariable => ({
    name: v.name as string, space: v.space === 'const' ? 'const' : 'global', size: v.size as number, align: v.align as number,
    ...(typeof v.init === 'string' ? { init: fromBase64(v.init) } : {}),
  }))
  return { kernels, refused, variables }
}

function toBase64(bytes: Uint8Array): string {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}

function fromBase64(text: string): Uint8Array {
  const s = atob(text)
  const out = new Uint8Array(s.length)
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i)
  return out
}
