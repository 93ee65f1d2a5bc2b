// The symbols LLVM's archive writer lists for an ELF member (ArchiveWriter.cpp, isArchiveSymbol):
// every symbol-table entry that is global or weak, defined, and not a section or file symbol, in
// symbol-table order. Only 64-bit little-endian ELF is read (cubins and host objects); anything else
// has no symbols. Malformed ELF yields no symbols rather than an error: the archive stays valid.

export function readElfSymbols(bytes: Uint8Array): string[] {
  if (bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) return []
  if (bytes[4] !== 2 || bytes[5] !== 1) return []
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const num = (at: number): number => Number(v.getBigUint64(at, true))
  try {
    const shoff = num(0x28)
    const shentsize = v.getUint16(0x3a, true)
    const shnum = v.getUint16(0x3c, true)
    if (shentsize < 64 || shoff + shnum * shentsize > bytes.length) return []
    const out: string[] = []
    for (let i = 0; i < shnum; i++) {
      const sh = shoff + i * shentsize
      if (v.getUint32(sh + 4, true) !== 2) continue // SHT_SYMTAB
      const off = num(sh + 0x18)
      const size = num(sh + 0x20)
      const link = v.getUint32(sh + 0x28, true)
      const entsize = num(sh + 0x38) || 24
      if (link >= shnum || off + size > bytes.length) return []
      const strsh = shoff + link * shentsize
      const stroff = num(strsh + 0x18)
      const strsize = num(strsh + 0x20)
      if (stroff + strsize > bytes.length) return []
      for (let s = off + entsize; s + 24 <= off + size; s += entsize) {
        const name = v.getUint32(s, true)
        const info = bytes[s + 4]!
        const shndx = v.getUint16(s + 6, true)
        const bind = info >> 4
        const type = info & 0xf
        if (bind === 0 || shndx === 0 || type === 3 || type === 4) continue // local, undefined, section, file
        if (name >= strsize) continue
        const start = stroff + name
        const end = bytes.indexOf(0, start)
        out.push(new TextDecoder().decode(bytes.subarray(start, end === -1 ? stroff + strsize : end)))
      }
    }
    return out
  } catch {
    return []
  }
}
