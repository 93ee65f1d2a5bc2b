// Reads the kernel manifest (packages/offload/src/manifest.ts) from PTX text through @kernelpack/ptx, the one
// PTX front end: its module interface gives every `.entry` with its linkage, parameters (sizes and alignments
// from the same layout the runtime and the emulator use) and performance directives, and every module-scope
// `.global` / `.const` variable. This file adds what only the toolchain knows: demangled names (c++filt)
// and pointer flags from the C++ signature.
import type { KernelInfo, KernelManifest, ParamInfo, VariableInfo } from '@kernelpack/offload'
import { PtxError, readPtxInterface } from '@kernelpack/ptx'
import { demangleNames } from './demangle.js'

export interface ReadPtxManifestOptions {
  /** Fill `demangled` through c++filt / llvm-cxxfilt (one process for all names).
   * @default true */
  demangle?: boolean
}

/** A PTX text that cannot be read as a module (the PTX front end's error; carries the 1-based line). */
export { PtxError as PtxParseError }

/** Splits a demangled signature's parameter list at top-level commas: `f<a, b>(int, S<c, d>*)` →
 *  [`int`, `S<c, d>*`]. Undefined when the name has no parameter list (extern "C"). */
function signatureParams(demangled: string): string[] | undefined {
  if (!demangled.endsWith(')')) return undefined
  let depth = 0
  let open = -1
  for (let i = demangled.length - 1; i >= 0; i--) {
    const c = demangled[i]
    if (c === ')') depth++
    else if (c === '(') { depth--; if (depth === 0) { open = i; break } }
  }
  if (open < 0) return undefined
  const inner = demangled.slice(open + 1, -1).trim()
  if (inner === '' || inner === 'void') return []
  const parts: string[] = []
  let cur = ''
  depth = 0
  for (const c of inner) {
    if (c === '<' || c === '(' || c === '[') depth++
    else if (c === '>' || c === ')' || c === ']') depth--
    if (c === ',' && depth === 0) { parts.push(cur.trim()); cur = ''; continue }
    cur += c
  }
  parts.push(cur.trim())
  return parts
}

/** A C++ parameter type that is passed as a pointer: `T*`, `T* const`, `T* __restrict`, `void (*)(…)`. */
function isPointerType(t: string): boolean {
  const s = t.replace(/(?:\s+(?:const|volatile|__restrict|restrict))+$/, '')
  return s.endsWith('*') || /\(\*+\)/.test(s)
}

/**
 * Reads the kernel manifest from PTX text (nvcc's or clang's). `demangled` comes from one c++filt process
 * for all names; pointer parameters are marked from `.ptr` (clang) or from the demangled C++ signature when
 * its parameter count matches the PTX's (zero-sized parameters vanish from PTX, so a mismatch means unknown).
 */
export async function readPtxManifest(ptx: string, options: ReadPtxManifestOptions = {}): Promise<KernelManifest> {
  const iface = readPtxInterface(ptx)
  // Key order is part of the manifest's bytes (reproducible builds): name, demangled, linkage, params, directives.
  const kernels: KernelInfo[] = iface.kernels.map((k) => {
    const params = k.params.map((p) => {
      const info: ParamInfo = { name: p.name, type: p.type, size: p.size, align: p.align }
      if (p.count !== undefined) info.count = p.count
      if (p.pointer) info.pointer = true
      return info
    })
    const out: KernelInfo = { name: k.name, demangled: k.name, linkage: k.linkage, params }
    if (k.maxntid) out.maxntid = k.maxntid
    if (k.reqntid) out.reqntid = k.reqntid
    if (k.minnctapersm !== undefined) out.minnctapersm = k.minnctapersm
    if (k.maxnreg !== undefined) out.maxnreg = k.maxnreg
    return out
  })
  const variables: VariableInfo[] = iface.variables.map((v) => {
    const out: VariableInfo = { name: v.name, space: v.space, size: v.size, linkage: v.linkage, align: v.align }
    const extra = out as VariableInfo & { type?: string; count?: number; managed?: boolean }
    extra.type = v.type
    if (v.count !== undefined) extra.count = v.count
    if (v.managed) extra.managed = true
    return out
  })
  if (options.demangle !== false && kernels.length > 0) {
    const names = await demangleNames(kernels.map((k) => k.name))
    kernels.forEach((k, i) => {
      k.demangled = names[i]!
      const sig = signatureParams(k.demangled)
      if (sig && sig.length === k.params.length) {
        k.params.forEach((p, j) => { if (isPointerType(sig[j]!)) p.pointer = true })
      }
    })
  }
  return { version: 1, kernels, variables }
}
