// Device printf (`vprintf(fmt, args)` as nvcc and clang lower it): the format string is a NUL-terminated
// string in device memory, the arguments a packed buffer where each value sits at its natural alignment
// (ints 4 bytes, long/pointers/doubles 8 bytes; floats were promoted to double). The emulator and the WebGPU
// backend format and order device printf alike, with these functions.

/** The conversions formatPrintf reads (flags, width, precision, length, conversion). */
const CONVERSION = /%([-+ #0]*)(\d+|\*)?(?:\.(\d+))?(hh|h|ll|l|z|j|t)?([diouxXeEfFgGcspa%])/g

/** The conversions a format reads arguments for, in order (`%%` reads none), as formatPrintf finds them: the
 *  conversion letter, the size of its argument in the argument buffer (4 or 8 bytes) and where it sits there
 *  (`at`, bytes: each argument at its own alignment). */
export function printfConversions(fmt: string): Array<{ conv: string; size: 4 | 8; at: number }> {
  const out: Array<{ conv: string; size: 4 | 8; at: number }> = []
  let p = 0
  for (const m of fmt.matchAll(CONVERSION)) {
    const len = m[4], conv = m[5]!
    if (conv === '%') continue
    const wide = len === 'l' || len === 'll' || len === 'z' || len === 'j' || len === 't'
    const size = conv === 'c' ? 4 : 'diouxX'.includes(conv) ? (wide ? 8 : 4) : 8
    const at = Math.ceil(p / size) * size
    p = at + size
    out.push({ conv, size, at })
  }
  return out
}

/** Bytes of the argument buffer a format reads (its last argument's end, alignment included). */
export function printfArgBytes(fmt: string): number {
  const last = printfConversions(fmt).at(-1)
  return last ? last.at + last.size : 0
}

function readCString(h8: Uint8Array, at: number): string {
  let end = at
  while (end < h8.length && h8[end] !== 0) end++
  // a copy: TextDecoder refuses views of a SharedArrayBuffer (the heap of worker threads)
  return new TextDecoder().decode(h8.slice(at, end))
}

/** What device printf returns (`int n = printf(…)`): the number of arguments its format reads, as CUDA
 *  documents it ("returns the number of arguments parsed"; 0 without any), not the length of the text. */
export function printfResult(h8: Uint8Array, fmtAt: number, heapAt: (a: number) => number = (a) => a): number {
  return printfConversions(readCString(h8, heapAt(fmtAt))).length
}

/** `heapAt` maps a generic address (the format, the argument buffer in local memory, a `%s` string) to
 *  its place in device memory (emit-js.ts keeps shared and local memory at their own generic addresses). */
export function formatPrintf(h8: Uint8Array, fmtAt: number, argsAt: number, heapAt: (a: number) => number = (a) => a): string {
  fmtAt = heapAt(fmtAt)
  argsAt = heapAt(argsAt)
  const fmt = readCString(h8, fmtAt)
  const dv = new DataView(h8.buffer, h8.byteOffset, h8.byteLength)
  let p = argsAt
  const take = (n: number): number | bigint => {
    p = Math.ceil(p / n) * n
    const v = n === 8 ? dv.getBigUint64(p, true) : dv.getUint32(p, true)
    p += n
    return v
  }
  return fmt.replace(CONVERSION, (_m, flags: string, width: string | undefined, prec: string | undefined, len: string | undefined, conv: string) => {
    if (conv === '%') return '%'
    const wide = len === 'l' || len === 'll' || len === 'z' || len === 'j' || len === 't'
    let s: string
    switch (conv) {
      case 'd': case 'i': {
        const v = wide ? BigInt.asIntN(64, take(8) as bigint) : BigInt((take(4) as number) | 0)
        s = v.toString()
        if (flags.includes('+') && v >= 0n) s = '+' + s
        break
      }
      case 'u': s = (wide ? BigInt.asUintN(64, take(8) as bigint) : BigInt(take(4) as number)).toString(); break
      case 'x': case 'X': case 'o': {
        const v = wide ? BigInt.asUintN(64, take(8) as bigint) : BigInt(take(4) as number)
        s = v.toString(conv === 'o' ? 8 : 16)
        if (conv === 'X') s = s.toUpperCase()
        if (flags.includes('#') && v !== 0n) s = (conv === 'o' ? '0' : conv === 'x' ? '0x' : '0X') + s
        break
      }
      case 'p': s = '0x' + (take(8) as bigint).toString(16); break
      case 'c': s = String.fromCharCode((take(4) as number) & 0xff); break
      case 's': s = readCString(h8, heapAt(Number(take(8) as bigint))); break
      default: {
        p = Math.ceil(p / 8) * 8
        const v = dv.getFloat64(p, true)
        p += 8
        const pr = prec === undefined ? 6 : Number(prec)
        if (!Number.isFinite(v)) s = v !== v ? 'nan' : v > 0 ? 'inf' : '-inf'
        else if (conv === 'f' || conv === 'F') s = v.toFixed(pr)
        else if (conv === 'e' || conv === 'E') s = v.toExponential(pr).replace(/e([+-])(\d)$/, 'e$10$2')
        else if (conv === 'a') s = v.toString()
        else {
          const P = pr === 0 ? 1 : pr
          const exp = v === 0 ? 0 : Math.floor(Math.log10(Math.abs(v)))
          s = exp < -4 || exp >= P ? v.toExponential(P - 1).replace(/e([+-])(\d)$/, 'e$10$2') : v.toFixed(Math.max(0, P - 1 - exp))
          if (!flags.includes('#')) s = s.replace(/\.?0+(e|$)/, '$1')
        }
        if (conv === 'E' || conv === 'G') s = s.toUpperCase()
        if (flags.includes('+') && v >= 0) s = '+' + s
      }
    }
    if (width && width !== '*') {
      const w = Number(width)
      if (s.length < w) s = flags.includes('-') ? s.padEnd(w) : flags.includes('0') && conv !== 's' && conv !== 'c' ? (s.startsWith('-') ? '-' + s.slice(1).padStart(w - 1, '0') : s.padStart(w, '0')) : s.padStart(w)
    }
    return s
  })
}

/** Orders one lane's device printf records as a GPU prints them (issue 32): a warp runs each printf statement
 *  for all its active lanes before the next, so the calls a warp's lanes make at one `call vprintf` (`site`)
 *  for the k-th time form a group, printed where the first of them was made, lanes in order within it;
 *  blocks one after the other. Where the lanes of a warp run the same code, that is each lane's k-th call;
 *  where they diverge, a statement only some lanes reach is a group of its own, as on a GPU. Records wait
 *  for their block's end (a new block, or flush()) and go out as one text per block. */
export class PrintfOrder {
  private block = -1
  /** The block's groups in the order they were opened: lane → text. */
  private groups: Array<Array<string | undefined>> = []
  private groupOf = new Map<string, Array<string | undefined>>()
  /** Calls made so far in the block, per thread (block-linear id) and site. */
  private calls = new Map<string, number>()

  /** `out` receives each block's text, tagged with the block's linear index. */
  constructor(private readonly out: (text: string, block: number) => void) {}

  /** Thread t (block-linear id) of block b printed `text` at call site `site`. */
  add(text: string, t: number, b: number, site: number): void {
    if (b !== this.block) { this.flush(); this.block = b }
    const at = `${site}:${t}`
    const k = this.calls.get(at) ?? 0
    this.calls.set(at, k + 1)
    const key = `${site}:${t >>> 5}:${k}`
    let g = this.groupOf.get(key)
    if (!g) { g = []; this.groupOf.set(key, g); this.groups.push(g) }
    g[t & 31] = text
  }

  /** Sends the current block's records. */
  flush(): void {
    const b = this.block
    this.block = -1
    if (!this.groups.length) return
    let text = ''
    for (const g of this.groups) for (const s of g) if (s !== undefined) text += s
    this.groups = []
    this.groupOf.clear()
    this.calls.clear()
    this.out(text, b)
  }
}

/** Where device printf text goes unless the caller says: Node's process.stdout as it is, or in browsers one
 *  console.log per completed line (console.log adds a newline of its own). */
export function defaultPrint(): (text: string) => void {
  const stdout = (globalThis as { process?: { stdout?: { write?: (s: string) => unknown } } }).process?.stdout
  if (typeof stdout?.write === 'function') return (text) => { stdout.write!(text) }
  let line = ''
  return (text) => {
    line += text
    for (let nl = line.indexOf('\n'); nl >= 0; nl = line.indexOf('\n')) {
      console.log(line.slice(0, nl))
      line = line.slice(nl + 1)
    }
  }
}
