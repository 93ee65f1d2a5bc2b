// A GNU `ar` archive as LLVM's writeArchive(Deterministic, NormalSymtab) lays it out for
// llvm-offload-binary --archive: "!<arch>\n", a "/" symbol table, a "//" long-name table when a
// member name is longer than 15 bytes or holds a "/", then the members (60-byte headers, zero
// timestamps, uid/gid 0, mode 644, data padded to 2 bytes with "\n"). The symbol table exists only
// when some member is a symbolic file (ELF or bitcode magic) and lists the global defined symbols of
// ELF members (cubins), as LLVM's symbol reader does. Symbols of valid LLVM bitcode members are not
// computed (that needs an IR reader): for those the table differs from llvm-offload-binary's.
import { isBitcode } from '@kernelpack/offload/core'
import { readElfSymbols } from './elf-symbols.js'

export interface ArchiveMember {
  name: string
  data: Uint8Array
}

const enc = new TextEncoder()

function field(text: string, width: number): string {
  return text.length > width ? text.slice(0, width) : text.padEnd(width, ' ')
}

function header(name: string, size: number, mode: string): Uint8Array {
  const h = field(name, 16) + field('0', 12) + field('0', 6) + field('0', 6) + field(mode, 8) + field(String(size), 10) + '`\n'
  return enc.encode(h)
}

/** The "//" long-name table's header leaves timestamp, owner, group and mode blank. */
function longNamesHeader(size: number): Uint8Array {
  return enc.encode(field('//', 16) + ' '.repeat(32) + field(String(size), 10) + '`\n')
}

export function encodeArchive(members: ArchiveMember[]): Uint8Array {
  const parts: Uint8Array[] = []
  let longNames = ''
  const names: string[] = []
  const longAt = new Map<string, number>()
  for (const m of members) {
    const n = enc.encode(m.name)
    if (n.length > 15 || m.name.includes('/')) {
      // A name already in the table is reused (LLVM dedupes long names).
      let at = longAt.get(m.name)
      if (at === undefined) {
        longAt.set(m.name, (at = enc.encode(longNames).length))
        longNames += `${m.name}/\n`
      }
      names.push(`/${at}`)
    } else {
      names.push(`${m.name}/`)
    }
  }
  // Symbols per member, in member order.
  const symbols: [number, string][] = []
  members.forEach((m, i) => { for (const s of readElfSymbols(m.data)) symbols.push([i, s]) })
  const symNames = symbols.map(([, s]) => s + '\0').join('')
  const symBytes = enc.encode(symNames)
  // GNU symbol tables are padded to 2 bytes; an empty one is 8 zero bytes (observed with LLVM 22:
  // an ELF member without global symbols, or a member with the bitcode magic). Without any
  // symbolic member there is no table at all.
  const isElf = (d: Uint8Array) => d[0] === 0x7f && d[1] === 0x45 && d[2] === 0x4c && d[3] === 0x46
  const hasSymtab = members.some((m) => isElf(m.data) || isBitcode(m.data))
  const raw = 4 + 4 * symbols.length + symBytes.length
  const symSize = !hasSymtab ? 0 : symbols.length === 0 ? 8 : raw + (raw % 2)
  const longBytes = enc.encode(longNames)
  const start = 8 + (hasSymtab ? 60 + symSize : 0) + (longNames ? 60 + longBytes.length + (longBytes.length % 2) : 0)
  const offsets: number[] = []
  let at = start
  for (const m of members) {
    offsets.push(at)
    at += 60 + m.data.length + (m.data.length % 2)
  }
  parts.push(enc.encode('!<arch>\n'))
  if (hasSymtab) {
    parts.push(header('/', symSize, '0'))
    const table = new Uint8Array(symSize)
    const v = new DataView(table.buffer)
    v.setUint32(0, symbols.length, false)
    symbols.forEach(([i], j) => v.setUint32(4 + 4 * j, offsets[i]!, false))
    table.set(symBytes, 4 + 4 * symbols.length)
    parts.push(table)
  }
  if (longNames) {
    parts.push(longNamesHeader(longBytes.length))
    parts.push(longBytes)
    if (longBytes.length % 2) parts.push(enc.encode('\n'))
  }
  members.forEach((m, i) => {
    parts.push(header(names[i]!, m.data.length, '644'))
    parts.push(m.data)
    if (m.data.length % 2) parts.push(enc.encode('\n'))
  })
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) { out.set(p, o); o += p.length }
  return out
}
