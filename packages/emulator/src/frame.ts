// A function's frame (emit-js.ts and wasm/emit-wasm.ts lay out memory from it): its parameters, return values
// and call-sequence .param variables in the parameter frame, its .local variables in the thread's local memory.
import { alignTo, layoutParams, type IrFunction, type PtxVariable } from '@kernelpack/ptx'

/** Where a function's variables are: offsets in its parameter frame or its local memory. */
export interface Frame {
  vars: Map<string, { v: PtxVariable; off: number }>
  paramOffsets: number[]
  paramEnd: number
  retOffsets: number[]
  /** Bytes of the parameter frame (16-aligned). */
  frameSize: number
  /** Bytes of local memory (16-aligned), and as declared. */
  localSize: number
  localExact: number
  /** `.param` variables of the body (call sequences) kept in the thread's local memory instead of the
   *  parameter frame, which all threads of a launch share: a kernel that runs its threads in loops writes
   *  an argument in one loop and reads it (in an inlined callee) in another. */
  localParams: Set<string>
}

/** The frame of fn; `paramsPerThread`: call-sequence variables in each thread's local memory (a kernel whose
 *  threads run in loops). */
export function layoutFrame(fn: IrFunction, paramsPerThread = false): Frame {
  const localParams = new Set<string>()
  const vars = new Map<string, { v: PtxVariable; off: number }>()
  const pl = layoutParams(fn.params)
  fn.params.forEach((p, i) => vars.set(p.name, { v: p, off: pl.offsets[i]! }))
  let off = pl.end
  const retOffsets: number[] = []
  for (const p of fn.returns) {
    off = alignTo(off, Math.max(1, p.align))
    vars.set(p.name, { v: p, off })
    retOffsets.push(off)
    off += p.size
  }
  let loff = 0
  for (const v of fn.vars) {
    if (v.space === 'param' && !paramsPerThread) {
      off = alignTo(off, Math.max(1, v.align))
      vars.set(v.name, { v, off })
      off += v.size
    } else if (v.space === 'local' || v.space === 'param') {
      if (v.space === 'param') localParams.add(v.name)
      loff = alignTo(loff, Math.max(1, v.align))
      vars.set(v.name, { v, off: loff })
      loff += v.size
    } else if (v.space === 'shared') {
      // laid out module-wide (load-module.ts)
    } else vars.set(v.name, { v, off: 0 })
  }
  return { vars, paramOffsets: pl.offsets, paramEnd: pl.end, retOffsets, frameSize: alignTo(off, 16), localSize: alignTo(loff, 16), localExact: loff, localParams }
}
