// PTX in, for translation: the one PTX front end (@kernelpack/ptx) parses and decodes the image; an entry it
// cannot decode is listed (the translator never sees it, so a kernel calling it is refused there as calling
// an unknown function). Used by loadModule for a PTX image (imported on demand) and by the build-time
// translation (translatePtxForShipping), which also gives each refusal its .cu position.
import { decodeModule, inlineCalls, lowerIndirectBranches, parsePtx, PtxError, readableName, sourcePosition, type IrFunction, type IrModule, type IrOperand } from '@kernelpack/ptx'
import { CannotTranslateError, type Untranslatable } from './errors.js'
import { translateModule } from './emit-wgsl.js'
import { encodeWgslImage } from './wgsl-image.js'
import { foldWorkspaceChecks } from './grid-sync.js'
import type { TranslateTarget, WgslKernel } from './translate.js'

/** The PTX text of an image (for the backend, which loads this file only for a PTX image). */
export { ptxText } from '@kernelpack/ptx'

/** The decoded IR of `ptx` without the entries the front end cannot read (listed in `undecodable`). */
export function decodeForTranslation(ptx: string, source: string): { module: IrModule; undecodable: Untranslatable[] } {
  const undecodable: Untranslatable[] = []
  try {
    const decoded = decodeModule(parsePtx(ptx), { perFunction: true })
    for (const f of decoded.functions) {
      if (f.refused && f.kind === 'entry') undecodable.push({ kernel: f.name, line: f.refused.line ?? 0, reason: `the PTX front end cannot read it: ${f.refused.message}` })
    }
    const readable = { ...decoded, functions: decoded.functions.filter((f) => !f.refused) }
    // device-function calls are expanded in place (issue 26 item 1): a callee reads and writes its parameters
    // and locals in the caller's state spaces, which WGSL functions cannot take pointers into; recursion has no
    // WGSL form and refuses the kernel, naming the function
    const defined = new Set(readable.functions.filter((f) => f.defined && f.kind !== 'entry' && f.instructions.length).map((f) => f.name))
    const inlined = defined.size ? inlineCalls(readable, defined, (name) => `${readableName(name)} calls itself (recursion): WGSL functions cannot recurse, and WebGPU runs device functions inlined`) : readable
    for (const f of inlined.functions) {
      // (the line is the refusal's own field: not repeated in its reason)
      if (f.refused && f.kind === 'entry') undecodable.push({ kernel: f.name, line: f.refused.line ?? 0, reason: f.refused.message.replace(/^PTX line \d+: /, '') })
    }
    // clang's switches (brx.idx through a .branchtargets list) as compare chains: WGSL has no indirect branch
    return { module: { ...inlined, functions: inlined.functions.filter((f) => !f.refused).map((f) => callParamsAsLocal(foldWorkspaceChecks(lowerIndirectBranches(f)))) }, undecodable }
  } catch (e) {
    if (!(e instanceof PtxError)) throw e
    throw new CannotTranslateError(source, [{ line: e.line ?? 0, reason: `the PTX front end cannot read it: ${e.message}` }])
  }
}

/** A function with its call sequences' `.param` variables (the arguments and return values a call passes, and
 *  after inlining what the callee reads and writes as its parameters) as `.local` ones: per-thread memory the
 *  caller and the inlined callee share, as the .param bytes of a real call are. The kernel's own parameters stay. */
function callParamsAsLocal(f: IrFunction): IrFunction {
  const own = new Set(f.params.map((p) => p.name))
  const names = new Set(f.vars.filter((v) => v.space === 'param' && !own.has(v.name)).map((v) => v.name))
  if (!names.size) return f
  const named = (o: IrOperand | undefined) => o?.kind === 'addr' && o.base?.kind === 'sym' && names.has(o.base.name)
  return {
    ...f,
    vars: f.vars.map((v) => (names.has(v.name) ? { ...v, space: 'local' as const } : v)),
    instructions: f.instructions.map((ins) => (ins.space === 'param' && ins.operands.some(named) ? { ...ins, space: 'local' as const } : ins)),
  }
}

/**
 * The target of build-time translation: what every WebGPU adapter guarantees. emit-wgsl reads only
 * maxComputeInvocationsPerWorkgroup from it (for the coarsened variant of blocks over 256 threads, which
 * covers every adapter's limit from 256 up); features and the device's other limits are checked at load, as
 * for WGSL translated there.
 */
export const SHIPPING_TARGET: TranslateTarget = { features: new Set(), limits: { maxComputeInvocationsPerWorkgroup: 256 } }

/** The target of a shipped kernel's subgroups32 variant: SHIPPING_TARGET on an adapter whose subgroups are
 *  exactly 32 wide (NVIDIA's, for one). */
export const SUBGROUPS_32_TARGET: TranslateTarget = { ...SHIPPING_TARGET, features: new Set(['subgroups']), subgroupMinSize: 32, subgroupMaxSize: 32 }

/** The PTX instructions emit-collective.ts writes in a subgroup form. */
const WARP_COLLECTIVES = new Set(['shfl', 'vote', 'match', 'activemask', 'elect', 'redux'])

/** WGSL translated at build time from one PTX image: the offload image's bytes (wgsl-image.ts) and the
 *  kernels that cannot run on WebGPU, with their .cu positions where the PTX has line information. */
export function translatePtxForShipping(ptx: string, source: string): { image: Uint8Array; refused: Untranslatable[]; /** Kernels that compute f64 in software binary64 (a build warning). */ softF64: string[]; /** Kernels whose tensor-core products are computed in software binary64 (a build warning). */ softTensor: string[] } {
  let decoded: { module: IrModule; undecodable: Untranslatable[] }
  try {
    decoded = decodeForTranslation(ptx, source)
  } catch (e) {
    if (!(e instanceof CannotTranslateError)) throw e
    return { image: encodeWgslImage({ kernels: new Map(), refused: e.refused, variables: [] }), refused: [...e.refused], softF64: [], softTensor: [] }
  }
  const { module, undecodable } = decoded
  const translated = translateModule(module, SHIPPING_TARGET, ptx)
  const refused = [...undecodable, ...translated.refused].map((u) => withSource(module, u))
  // kernels with warp collectives also as an adapter with 32-wide subgroups runs them (subgroups32)
  const withCollectives = module.functions.some((f) => f.instructions.some((i) => WARP_COLLECTIVES.has(i.op)))
  const wide = withCollectives ? translateModule(module, SUBGROUPS_32_TARGET, ptx).kernels : undefined
  const compact = (k: WgslKernel): WgslKernel => ({
    ...k,
    wgsl: compactWgsl(k.wgsl),
    ...(k.coarse ? { coarse: { ...k.coarse, wgsl: compactWgsl(k.coarse.wgsl) } } : {}),
    ...(k.unchecked ? { unchecked: { ...k.unchecked, wgsl: compactWgsl(k.unchecked.wgsl) } } : {}),
  })
  const kernels = new Map([...translated.kernels].map(([name, k]) => {
    const w = wide?.get(name)
    if (!w?.features.includes('subgroups')) return [name, compact(k)]
    // the coarsened kernel runs one CUDA thread an invocation at most, never in the subgroup form: where it is the
    // plain kernel's, the variant leaves it out (decodeWgslImage takes the plain one's)
    const sameCoarse = w.coarse?.wgsl === k.coarse?.wgsl && w.coarse?.entryPoint === k.coarse?.entryPoint && w.coarse?.factor === k.coarse?.factor
    const { coarse: _coarse, ...variant } = w
    return [name, { ...compact(k), subgroups32: compact(sameCoarse ? variant : w) }]
  }))
  const softF64 = [...translated.kernels.values()].filter((k) => k.softF64).map((k) => k.name)
  const softTensor = [...translated.kernels.values()].filter((k) => k.softTensor).map((k) => k.name)
  return { image: encodeWgslImage({ ...translated, kernels, refused }), refused, softF64, softTensor }
}

/** WGSL as shipped: emit-wgsl's comment lines (the PTX instruction above each statement, about a third of the
 *  text) left out, the first line (which kernel, translated by what) kept. A kernel's WGSL with its comments
 *  is what loading its PTX gives (`wgsl: false`, or `mod.inspect`). */
export function compactWgsl(wgsl: string): string {
  const lines = wgsl.split('\n')
  return [lines[0]!, ...lines.slice(1).filter((l) => !/^\s*\/\//.test(l))].join('\n')
}

function withSource(module: IrModule, u: Untranslatable): Untranslatable {
  if (!u.kernel || u.line <= 0) return u
  const fn = module.functions.find((f) => f.name === u.kernel)
  const ins = fn?.instructions.find((i) => i.line === u.line)
  const pos = ins ? sourcePosition(module.files, ins.loc) : undefined
  return pos ? { ...u, source: { file: pos.file, line: pos.line, column: pos.column } } : u
}
