// The interface of a PTX module, what a host needs to call it: every kernel (.entry) with its linkage,
// parameters (type, size, alignment, offset from layout.ts, `.ptr` attributes) and performance directives
// (PTX ISA, "Performance-Tuning Directives"), and every module-scope .global/.const variable. The toolchain
// writes its manifest from this and the runtime checks a manifest against it at load. Function bodies are
// skipped (parsePtx with `bodies: false`), so reading the interface of a large module is cheap.
import { layoutParams, type ParamLayout } from './layout.js'
import { parsePtx, type PtxModule, type PtxVariable } from './parse.js'
import type { PtxType } from './types.js'

export type PtxLinkage = 'visible' | 'weak' | 'extern' | 'internal' | 'common'

export interface PtxParamInterface {
  name: string
  type: PtxType
  size: number
  /** The parameter's own alignment (`.align N` before the type, else the element size). */
  align: number
  /** Byte offset in the parameter block (layout.ts). */
  offset: number
  /** Element count of an array parameter (`.b8 s[24]` → 24); absent for a scalar. */
  count?: number
  /** `.ptr`, with the state space and the pointee alignment written after it. */
  pointer?: boolean
  pointerSpace?: 'global' | 'shared' | 'local' | 'const'
  pointeeAlign?: number
  line: number
}

export interface PtxKernelInterface {
  name: string
  linkage: PtxLinkage
  params: PtxParamInterface[]
  layout: ParamLayout
  /** `.maxntid x[, y[, z]]` with the missing dimensions 1. */
  maxntid?: [number, number, number]
  reqntid?: [number, number, number]
  /** `.minnctapersm` (or its old spelling `.minnctasm`). */
  minnctapersm?: number
  maxnreg?: number
  /** Every header directive as written (`noreturn`, `explicitcluster`, …). */
  directives: Record<string, number[]>
  line: number
}

export interface PtxVariableInterface {
  name: string
  space: 'global' | 'const'
  type: PtxType
  size: number
  align: number
  linkage: PtxLinkage
  count?: number
  /** `.attribute(.managed)`. */
  managed?: boolean
  line: number
}

export interface PtxInterface {
  version?: string
  target?: string[]
  addressSize?: number
  kernels: PtxKernelInterface[]
  variables: PtxVariableInterface[]
}

function triple(nums: number[] | undefined): [number, number, number] | undefined {
  if (!nums || nums.length === 0) return undefined
  return [nums[0]!, nums[1] ?? 1, nums[2] ?? 1]
}

function paramInterface(p: PtxVariable, offset: number): PtxParamInterface {
  const out: PtxParamInterface = { name: p.name, type: p.type, size: p.size, align: p.align, offset, line: p.line }
  if (p.dims.length) out.count = p.count
  if (p.pointer) out.pointer = true
  if (p.pointerSpace) out.pointerSpace = p.pointerSpace
  if (p.pointeeAlign !== undefined) out.pointeeAlign = p.pointeeAlign
  return out
}

/** The interface of a parsed module (bodies may or may not have been parsed). */
export function moduleInterface(mod: PtxModule): PtxInterface {
  const kernels: PtxKernelInterface[] = []
  // clang declares a kernel before its definition when a variable names it first (`-fgpu-rdc` keeps a
  // static template kernel through `__clang_gpu_used_external`): one kernel, described where it is defined
  const defined = new Set(mod.functions.filter((f) => f.kind === 'entry' && f.defined).map((f) => f.name))
  const seen = new Set<string>()
  for (const f of mod.functions) {
    if (f.kind !== 'entry') continue
    if ((!f.defined && defined.has(f.name)) || seen.has(f.name)) continue
    seen.add(f.name)
    const layout = layoutParams(f.params)
    const k: PtxKernelInterface = {
      name: f.name, linkage: f.linkage as PtxLinkage, params: f.params.map((p, i) => paramInterface(p, layout.offsets[i]!)), layout,
      directives: f.directives, line: f.line,
    }
    const maxntid = triple(f.directives.maxntid)
    const reqntid = triple(f.directives.reqntid)
    const minnctapersm = (f.directives.minnctapersm ?? f.directives.minnctasm)?.[0]
    const maxnreg = f.directives.maxnreg?.[0]
    if (maxntid) k.maxntid = maxntid
    if (reqntid) k.reqntid = reqntid
    if (minnctapersm !== undefined) k.minnctapersm = minnctapersm
    if (maxnreg !== undefined) k.maxnreg = maxnreg
    kernels.push(k)
  }
  const variables: PtxVariableInterface[] = []
  for (const v of mod.variables) {
    // `.global .texref t;` and the like are opaque handles, not memory the runtime sizes
    if ((v.space !== 'global' && v.space !== 'const') || v.opaque) continue
    const out: PtxVariableInterface = { name: v.name, space: v.space, type: v.type, size: v.size, align: v.align, linkage: v.linkage as PtxLinkage, line: v.line }
    if (v.dims.length) out.count = v.count
    if (v.attributes?.includes('managed')) out.managed = true
    variables.push(out)
  }
  const out: PtxInterface = { kernels, variables }
  if (mod.version !== undefined) out.version = mod.version
  if (mod.target !== undefined) out.target = mod.target
  if (mod.addressSize !== undefined) out.addressSize = mod.addressSize
  return out
}

/** Reads the interface of a PTX text (bodies skipped); throws PtxError naming the line on malformed input. */
export function readPtxInterface(text: string): PtxInterface {
  return moduleInterface(parsePtx(text, { bodies: false }))
}
