// Device printf (`vprintf(fmt, args)` as nvcc and clang lower it): the format string is a NUL-terminated
// string in device memory, the arguments a packed buffer where each value sits at its natural alignment
// (ints 4 bytes, long/pointers/doubles 8 bytes; floats were promoted to double).

function readCString(h8: Uint8Array, at: number): string {
  let end = at
  while (end < h8.length && h8[end] !== 0) end++
  // a copy: TextDecoder refuses views of a SharedArrayBuffer (the heap of worker threads)
  return new TextDecoder().decode(h8.slice(at, end))
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
  return fmt.replace(/%([-+ #0]*)(\d+|\*)?(?:\.(\d+))?(hh|h|ll|l|z|j|t)?([diouxXeEfFgGcspa%])/g, (_m, flags: string, width: string | undefined, prec: string | undefined, len: string | undefined, conv: string) => {
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
