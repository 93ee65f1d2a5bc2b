// Reads what a test needs from a CUDA cubin (ELF64, little-endian; System V gABI "Sections" and "Symbol
// Table"): symbols with binding, type, size and section, and each kernel's EIATTR_KPARAM_INFO records from
// its `.nv.info.<kernel>` section (ptxas's layout of the kernel parameter buffer: ordinal, offset, size).
// Used as an independent check of the manifest read from the PTX text.
import type { KernelInfo } from '@kernelpack/offload'
import { layoutParams } from '@kernelpack/ptx'

export interface CubinSymbol { name: string; entry: boolean; bind: 'LOCAL' | 'GLOBAL' | 'WEAK' | number; type: 'FUNC' | 'OBJECT' | number; size: number; section: string }
export interface KernelParamLayout { ordinal: number; offset: number; size: number }

interface Section { name: string; type: number; offset: number; size: number; link: number; entsize: number }

function cstr(b: Uint8Array, at: number): string {
  let end = at
  while (end < b.length && b[end] !== 0) end++
  return new TextDecoder().decode(b.subarray(at, end))
}

function sections(b: Uint8Array): Section[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
  if (v.getUint32(0, false) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) throw new Error('not an ELF64 little-endian file')
  const shoff = Number(v.getBigUint64(0x28, true))
  const shentsize = v.getUint16(0x3a, true)
  const shnum = v.getUint16(0x3c, true)
  const shstrndx = v.getUint16(0x3e, true)
  const raw = Array.from({ length: shnum }, (_, i) => {
    const o = shoff + i * shentsize
    return {
      nameOff: v.getUint32(o, true),
      type: v.getUint32(o + 4, true),
      offset: Number(v.getBigUint64(o + 0x18, true)),
      size: Number(v.getBigUint64(o + 0x20, true)),
      link: v.getUint32(o + 0x28, true),
      entsize: Number(v.getBigUint64(o + 0x38, true)),
    }
  })
  const strtab = raw[shstrndx]!
  return raw.map((s) => ({ ...s, name: cstr(b, strtab.offset + s.nameOff) }))
}

/** Each section's name and contents, in section-header order. */
export function readSectionContents(b: Uint8Array): { name: string; bytes: Uint8Array }[] {
  return sections(b).map((s) => ({ name: s.name, bytes: s.type === 8 ? new Uint8Array(0) : b.subarray(s.offset, s.offset + s.size) })) // SHT_NOBITS has none
}

export function readCubinSymbols(b: Uint8Array): CubinSymbol[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const secs = sections(b)
  const symtab = secs.find((s) => s.type === 2)
  if (!symtab) return []
  const strtab = secs[symtab.link]!
  const out: CubinSymbol[] = []
  for (let o = symtab.offset; o < symtab.offset + symtab.size; o += 24) {
    const info = b[o + 4]!
    const shndx = v.getUint16(o + 6, true)
    const bindN = info >> 4
    const typeN = info & 15
    out.push({
      name: cstr(b, strtab.offset + v.getUint32(o, true)),
      // st_other bit 0x10 marks a kernel entry point in cubins (STO_CUDA_ENTRY).
      entry: (b[o + 5]! & 0x10) !== 0,
      bind: bindN === 0 ? 'LOCAL' : bindN === 1 ? 'GLOBAL' : bindN === 2 ? 'WEAK' : bindN,
      // 13 is STT_CUDA_OBJECT, which `ptxas -c` writes for variables.
      type: typeN === 2 ? 'FUNC' : typeN === 1 || typeN === 13 ? 'OBJECT' : typeN,
      size: Number(v.getBigUint64(o + 16, true)),
      section: shndx > 0 && shndx < secs.length ? secs[shndx]!.name : '',
    })
  }
  return out
}

/** EIATTR_KPARAM_INFO (attribute 0x17, format EIFMT_SVAL 0x04): u32 index, u16 ordinal, u16 offset,
 *  u32 flags whose top 14 bits are the size in bytes. Sorted by ordinal. */
export function readKernelParams(b: Uint8Array, kernel: string): KernelParamLayout[] | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const sec = sections(b).find((s) => s.name === `.nv.info.${kernel}`)
  if (!sec) return undefined
  const out: KernelParamLayout[] = []
  let o = sec.offset
  const end = sec.offset + sec.size
  while (o < end) {
    const format = b[o]!
    const attr = b[o + 1]!
    if (format === 0x04) {
      const len = v.getUint16(o + 2, true)
      if (attr === 0x17) {
        out.push({ ordinal: v.getUint16(o + 8, true), offset: v.getUint16(o + 10, true), size: v.getUint32(o + 12, true) >>> 18 })
      }
      o += 4 + len
    } else if (format === 0x03 || format === 0x02) o += 4
    else if (format === 0x01) o += 4
    else throw new Error(`unknown .nv.info format 0x${format.toString(16)} at 0x${(o - sec.offset).toString(16)}`)
  }
  return out.sort((a, b2) => a.ordinal - b2.ordinal)
}

/** Every EIFMT_SVAL attribute of a kernel's `.nv.info.<kernel>` as u32 words (0x05 MAX_THREADS,
 *  0x10 REQNTID: three words each), plus EIFMT_HVAL ones as one word (0x1b MAXREG_COUNT). */
export function readKernelAttributes(b: Uint8Array, kernel: string): Map<number, number[]> {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const sec = sections(b).find((s) => s.name === `.nv.info.${kernel}`)
  const out = new Map<number, number[]>()
  if (!sec) return out
  let o = sec.offset
  while (o < sec.offset + sec.size) {
    const format = b[o]!
    const attr = b[o + 1]!
    if (format === 0x04) {
      const len = v.getUint16(o + 2, true)
      if (attr !== 0x17) out.set(attr, Array.from({ length: len >> 2 }, (_, i) => v.getUint32(o + 4 + 4 * i, true)))
      o += 4 + len
    } else {
      if (format === 0x03) out.set(attr, [v.getUint16(o + 2, true)])
      o += 4
    }
  }
  return out
}

/** Offsets of each parameter in the parameter buffer, laid out from the manifest's sizes and alignments by
 *  @kernelpack/ptx (the expectation the cubin's KPARAM_INFO offsets are compared with). */
export function layout(k: KernelInfo): number[] {
  return layoutParams(k.params).offsets
}

/** The ELF symbol binding ptxas gives each PTX linkage. */
export const bindOf = { visible: 'GLOBAL', weak: 'WEAK', internal: 'LOCAL', common: 'GLOBAL', extern: 'GLOBAL' } as const
