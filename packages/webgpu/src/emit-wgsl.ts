// emit-wgsl: the PTX→WGSL translator (issue 15), the default WgslTranslator of the WebGPU backend. It turns
// each `.entry` of the decoded IR (@kernelpack/ptx) into one WGSL module (emit-kernel.ts) and the module's
// `.global`/`.const` variables into arena allocations the backend initializes. A kernel that cannot be
// expressed is refused with its PTX line and the reason, so loadModule fails early and `auto` picks the
// emulator (README.md, "Refused at load").
import { typeSize, type IrModule, type PtxVariable } from '@kernelpack/ptx'
import type { Untranslatable } from './errors.js'
import { Refusal, writeKernel } from './emit-kernel.js'
import type { TranslateTarget, WgslKernel, WgslModule, WgslVariable } from './translate.js'

/** The initial bytes of a module variable; throws the reason when an initializer needs addresses. */
function initialBytes(v: PtxVariable): Uint8Array | undefined {
  if (!v.init) return undefined
  const out = new Uint8Array(v.size)
  const dv = new DataView(out.buffer)
  const es = typeSize(v.type)
  v.init.forEach((item, i) => {
    const off = i * es
    if (off + es > v.size) throw new Error(`the initializer of ${v.name} has more elements than the variable`)
    if (item.sym !== undefined) throw new Error(`the initializer of ${v.name} holds the address of ${item.sym}, which is known only when the backend places it`)
    if (item.fbits !== undefined && item.fwidth === 32 && v.type === 'f64') {
      dv.setFloat64(off, new Float32Array(new Uint32Array([Number(item.fbits)]).buffer)[0]!, true)
      return
    }
    if (item.dvalue !== undefined || (item.value !== undefined && (v.type === 'f32' || v.type === 'f64'))) {
      const x = item.dvalue ?? Number(item.value)
      if (v.type === 'f32') { dv.setFloat32(off, x, true); return }
      if (v.type === 'f64') { dv.setFloat64(off, x, true); return }
    }
    const bits = item.fbits ?? item.value ?? BigInt(Math.trunc(item.dvalue ?? 0))
    switch (es) {
      case 1: dv.setUint8(off, Number(BigInt.asUintN(8, bits))); break
      case 2: dv.setUint16(off, Number(BigInt.asUintN(16, bits)), true); break
      case 4: dv.setUint32(off, Number(BigInt.asUintN(32, bits)), true); break
      case 8: dv.setBigUint64(off, BigInt.asUintN(64, bits), true); break
      default: throw new Error(`cannot initialize ${v.name} of type .${v.type}`)
    }
  })
  return out
}

/** Translates a module for a device. */
export function translateModule(module: IrModule, target: TranslateTarget, ptx: string): WgslModule {
  const variables: WgslVariable[] = []
  const varIndex = new Map<string, number>()
  const badVars = new Map<string, string>()
  for (const v of module.variables) {
    if ((v.space !== 'global' && v.space !== 'const') || v.opaque) continue
    if (v.extern) { badVars.set(v.name, `the .extern variable ${v.name} is defined in another module`); continue }
    try {
      const init = initialBytes(v)
      varIndex.set(v.name, variables.length)
      variables.push({ name: v.name, space: v.space, size: v.size, align: v.align, ...(init ? { init } : {}) })
    } catch (e) {
      badVars.set(v.name, (e as Error).message)
    }
  }
  for (const v of module.variables) if (v.opaque) badVars.set(v.name, `textures and surfaces (.${v.opaque} ${v.name}): not translated to WGSL`)
  const kernels = new Map<string, WgslKernel>()
  const refused: Untranslatable[] = []
  const lines = ptx.split('\n')
  for (const fn of module.functions) {
    if (fn.kind !== 'entry' || !fn.defined) continue
    try {
      kernels.set(fn.name, writeKernel({ module, fn, target, varIndex, badVars }))
    } catch (e) {
      if (!(e instanceof Refusal)) throw e
      const text = e.instruction ?? (lines[e.line - 1] ?? '').trim()
      refused.push({ kernel: fn.name, line: e.line, ...(text ? { instruction: text } : {}), reason: e.reason })
    }
  }
  return { kernels, refused, variables }
}
