// The kernel parameter layout (PTX ISA, "Kernel Function Parameters" and "Parameter State Space"): each
// parameter at the next multiple of its alignment, in declaration order. The alignment is the `.align N`
// written before the type (`.param .align 8 .b8 s[24]`), else the element size; an `.align` after `.ptr`
// is the pointee's alignment and does not move the parameter (parse.ts keeps it apart). Computed here once,
// for the manifest (toolchain), the runtime's marshaller and the emulator's parameter frame, so the three
// cannot disagree; ptxas's EIATTR_KPARAM_INFO offsets are the reference (test/ptx/layout.test.ts).

/** What the layout needs of a parameter: a PTX declaration or a manifest ParamInfo. */
export interface ParamShape {
  size: number
  align: number
}

export interface ParamLayout {
  /** Byte offset of each parameter. */
  offsets: number[]
  sizes: number[]
  aligns: number[]
  /** End of the last parameter. */
  end: number
  /** Bytes of a parameter block holding them: `end` rounded up to 8, at least 8. */
  size: number
}

/** Offsets of consecutive parameters starting at `start`; an alignment below 1 counts as 1. */
export function layoutParams(params: readonly ParamShape[], start = 0): ParamLayout {
  let off = start
  const offsets: number[] = []
  const sizes: number[] = []
  const aligns: number[] = []
  for (const p of params) {
    const align = Math.max(1, p.align)
    off = alignTo(off, align)
    offsets.push(off)
    sizes.push(p.size)
    aligns.push(align)
    off += p.size
  }
  return { offsets, sizes, aligns, end: off, size: Math.max(8, alignTo(off, 8)) }
}

/** n rounded up to a multiple of a. */
export function alignTo(n: number, a: number): number {
  return Math.ceil(n / a) * a
}
