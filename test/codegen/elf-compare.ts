// Small readers over `llvm-readelf -S/-s/-x` text, for comparing our objects with clang-22's field by field.
import { execFileSync } from 'node:child_process'
import { tool } from '../helpers/tools.js'

export interface Section { name: string; type: string; size: number; entsize: number; flags: string; align: number }
export interface Sym { name: string; value: number; size: number; type: string; bind: string; vis: string; ndx: string; section?: string }

const readelf = (args: string[]) => execFileSync(tool('llvm-readelf'), args, { encoding: 'utf8', maxBuffer: 64 << 20 })

export function readSections(obj: string): Section[] {
  const out: Section[] = []
  for (const line of readelf(['-S', '--wide', obj]).split('\n')) {
    // [Nr] Name Type Address Off Size ES Flg Lk Inf Al
    const m = /^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+[0-9a-f]{16}\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([A-Za-z]*)\s+\d+\s+\d+\s+(\d+)\s*$/.exec(line)
    if (m) out.push({ name: m[1]!, type: m[2]!, size: parseInt(m[3]!, 16), entsize: parseInt(m[4]!, 16), flags: m[5]!, align: Number(m[6]) })
  }
  return out
}

export function readSymbols(obj: string): Sym[] {
  const sections = readSections(obj)
  const byIndex = new Map<string, string>()
  // Section indices follow the -S listing order, starting at 1 after the NULL section.
  readelf(['-S', '--wide', obj]).split('\n').forEach((line) => {
    const m = /^\s*\[\s*(\d+)\]\s+(\S+)\s+\S+\s+[0-9a-f]{16}/.exec(line)
    if (m) byIndex.set(m[1]!, m[2]!)
  })
  void sections
  const out: Sym[] = []
  for (const line of readelf(['-s', '--wide', obj]).split('\n')) {
    const m = /^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$/.exec(line)
    if (m) out.push({ value: parseInt(m[1]!, 16), size: Number(m[2]), type: m[3]!, bind: m[4]!, vis: m[5]!, ndx: m[6]!, name: m[7]!, section: byIndex.get(m[6]!) })
  }
  return out
}

/** The bytes of a section as `llvm-readelf -x` prints them. */
export function readSectionBytes(obj: string, name: string): Uint8Array {
  const bytes: number[] = []
  for (const line of readelf(['-x', name, obj]).split('\n')) {
    // `0x%08x ` then four 8-digit groups padded to fixed columns, then the ASCII column.
    if (!/^0x[0-9a-f]{8} /.test(line)) continue
    const hex = line.slice(11, 11 + 36).replace(/\s+/g, '')
    for (let i = 0; i < hex.length; i += 2) bytes.push(parseInt(hex.slice(i, i + 2), 16))
  }
  return Uint8Array.from(bytes)
}
