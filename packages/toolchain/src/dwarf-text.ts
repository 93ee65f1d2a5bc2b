// The debugging information entries of an object file, read from the text `readelf --debug-dump=info`
// (binutils) prints: every entry's section offset, tag and attributes, and its children. readelf applies the
// object's relocations and resolves string forms (.debug_str, .debug_line_str, DWARF 5 string offsets), so
// gcc's and clang's objects read the same. Only what the parameter types need is interpreted (param-types.ts).

export interface Die {
  offset: number
  tag: string
  /** Attribute name (`DW_AT_name`) → readelf's text of its value, string forms already resolved. */
  attrs: Map<string, string>
  children: Die[]
  parent?: Die
}

export interface DebugInfo {
  /** Entries by section offset (what `DW_AT_type : <0x31c3>` refers to). */
  byOffset: Map<number, Die>
  /** Top-level entries of every compilation unit. */
  roots: Die[]
}

const DIE_HEAD = /^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: (\d+)(?: \((\w+)\))?/
const ATTR = /^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s?(.*)$/
// `(indirect string, offset: 0x1fc0): Params`, `(indexed string: 0x1d4): k1`, `(indirect line string, …): …`
const STRING_FORM = /^\((?:indirect|indexed|alt indirect)[^)]*\):\s?/

export function parseReadelfInfo(text: string): DebugInfo {
  const byOffset = new Map<number, Die>()
  const roots: Die[] = []
  // the open entry at each depth
  const stack: Die[] = []
  let current: Die | undefined
  for (const line of text.split('\n')) {
    const h = DIE_HEAD.exec(line)
    if (h) {
      const depth = Number(h[1])
      const abbrev = Number(h[3])
      stack.length = depth
      if (abbrev === 0 || !h[4]) { current = undefined; continue }
      const die: Die = { offset: parseInt(h[2]!, 16), tag: h[4], attrs: new Map(), children: [] }
      const parent = depth > 0 ? stack[depth - 1] : undefined
      if (parent) { die.parent = parent; parent.children.push(die) } else roots.push(die)
      stack[depth] = die
      byOffset.set(die.offset, die)
      current = die
      continue
    }
    if (!current) continue
    const a = ATTR.exec(line)
    if (a) current.attrs.set(a[1]!, a[2]!.replace(STRING_FORM, '').trimEnd())
  }
  return { byOffset, roots }
}

/** `<0x31c3>` → 0x31c3. */
export function refOf(die: Die, attr: string): number | undefined {
  const v = die.attrs.get(attr)
  const m = v && /^<0x([0-9a-f]+)>/.exec(v)
  return m ? parseInt(m[1]!, 16) : undefined
}

/** A constant attribute (`48`, `0x30`, or a location block `2 byte block: 23 8 (DW_OP_plus_uconst: 8)`). */
export function numberOf(die: Die, attr: string): number | undefined {
  const v = die.attrs.get(attr)
  if (v === undefined) return undefined
  let m = /^(0x[0-9a-f]+|-?\d+)(?:\s|$)/.exec(v)
  if (m) return Number(m[1])
  m = /\(DW_OP_plus_uconst: (\d+)\)/.exec(v)
  return m ? Number(m[1]) : undefined
}

/** An entry's name, through DW_AT_specification / DW_AT_abstract_origin when it has none itself. */
export function nameOf(info: DebugInfo, die: Die, attr = 'DW_AT_name'): string | undefined {
  for (let d: Die | undefined = die, hops = 0; d && hops < 8; hops++) {
    const v = d.attrs.get(attr)
    if (v !== undefined) return v
    const next: number | undefined = refOf(d, 'DW_AT_specification') ?? refOf(d, 'DW_AT_abstract_origin')
    d = next === undefined ? undefined : info.byOffset.get(next)
  }
  return undefined
}
