// The sanitizer's reports as compute-sanitizer prints them (its user manual, "Understanding Memcheck Errors",
// "Understanding Racecheck Hazard Reports", "Understanding Synccheck Reports", "Initcheck Tool"): lines that
// start with `=========`, the first naming the error, the next ones the instruction(s), the thread and block,
// and the address. Where compute-sanitizer prints a SASS offset (`kernel()+0x2f0`), the emulator, which runs
// the PTX, prints the PTX line and statement; the `.cu` file:line follows when the PTX has `.loc` line
// information, as it does in compute-sanitizer's reports of a `-lineinfo` build.
import { formatSourcePosition, type SanitizerAccess, type SanitizerAllocation, type SanitizerReport } from '@kernelpack/ptx'

const P = '========= '
const I = '=========     '

/** `(x,y,z)`, compute-sanitizer's spelling of thread and block indices. */
export function formatDim(d: readonly number[]): string {
  return `(${d.join(',')})`
}

function hex(n: bigint | number): string {
  return `0x${n.toString(16)}`
}

/** `at PTX line 42 \`st.shared.f32 [%r4], %f3;\` in reduce.cu:17` (+ the function when it is not the kernel). */
export function formatSite(a: SanitizerAccess, kernel: string): string {
  const src = a.source ? ` in ${formatSourcePosition(a.source)}${a.inlinedFrom ? ` (inlined from ${formatSourcePosition(a.inlinedFrom)})` : ''}` : ''
  const fn = a.function !== kernel ? ` (function ${a.function})` : ''
  return `at PTX line ${a.ptxLine} \`${a.instruction}\`${src}${fn}`
}

/** Where an address lies, in words: its allocation (or variable) and the offset in it, as the line after
 *  `Address 0x… is …` (`and is 4 bytes after the nearest allocation at 0x… of size 400 bytes`). */
export function formatAllocation(al: SanitizerAllocation): string {
  const hexBase = hex(al.base)
  const what = (nearest: boolean) => al.variable
    ? `${al.space === 'shared' ? '__shared__' : al.space === 'local' ? '__local__' : '__device__'} variable ${al.variable} at ${hexBase} of size ${al.size} bytes`
    : al.space === 'shared' ? `the block's __shared__ memory (${al.size} bytes)` : `the ${nearest ? 'nearest ' : ''}allocation at ${hexBase} of size ${al.size} bytes`
  if (al.state === 'freed') return `and is inside ${what(false)}, which was freed before this launch (use after free)`
  if (al.offset < 0) return `and is ${-al.offset} bytes before ${what(true)}`
  if (al.offset >= al.size) return `and is ${al.offset - al.size} bytes after ${what(true)}`
  return `and is at offset ${al.offset} of ${what(false)}`
}

const spaceName = (s: string | undefined) => (s === 'shared' ? '__shared__' : s === 'local' ? '__local__' : '__global__')
const accessWord: Record<SanitizerAccess['kind'], string> = { read: 'Read', write: 'Write', atomic: 'Atomic', barrier: 'Barrier', collective: 'Collective', exit: 'Exit' }

/** The report's message: `r` without `message` and `count`. */
export function formatReport(r: Omit<SanitizerReport, 'message' | 'count'>, extra: { currentValue?: string; incomingValue?: string; detail?: string[]; warpLevel?: boolean } = {}): string {
  const lines: string[] = []
  const first = r.accesses[0]!
  const kernelLine = `${I}in kernel ${r.kernel}`
  switch (r.kind) {
    case 'race': {
      // racecheck's severities: hazards between lanes of one warp are warp-level programming warnings (still
      // races since Volta's independent thread scheduling), hazards across warps errors
      const severity = extra.warpLevel ? 'Warning: (Warp Level Programming)' : 'Error:'
      lines.push(`${P}${severity} Potential ${r.hazard} hazard detected at ${spaceName(r.space)} ${hex(r.address ?? 0n)} in block ${formatDim(first.block)} :`)
      for (const a of r.accesses) lines.push(`${I}${accessWord[a.kind]} Thread ${formatDim(a.thread)} ${formatSite(a, r.kernel)}`)
      if (extra.currentValue !== undefined) lines.push(`${I}Current Value : ${extra.currentValue}${extra.incomingValue !== undefined ? `, Incoming Value : ${extra.incomingValue}` : ''}`)
      if (r.allocation) lines.push(`${I}Address ${hex(r.address ?? 0n)} ${formatAllocation(r.allocation).slice('and '.length)}`)
      lines.push(kernelLine)
      break
    }
    case 'sync': {
      const cls = r.hazard === 'divergent-block' ? 'Divergent thread(s) in block' : r.hazard === 'divergent-warp' ? 'Divergent thread(s) in warp' : r.hazard === 'invalid-arguments' ? 'Invalid arguments' : 'Divergent thread(s) in block (different barriers)'
      lines.push(`${P}Barrier error detected. ${cls}`)
      lines.push(`${I}${formatSite(first, r.kernel)}`)
      lines.push(`${I}by thread ${formatDim(first.thread)} in block ${formatDim(first.block)}`)
      for (const d of extra.detail ?? []) lines.push(`${I}${d}`)
      lines.push(kernelLine)
      break
    }
    case 'init': {
      lines.push(`${P}Uninitialized ${spaceName(r.space)} memory read of size ${r.size} bytes`)
      lines.push(`${I}${formatSite(first, r.kernel)}`)
      lines.push(`${I}by thread ${formatDim(first.thread)} in block ${formatDim(first.block)}`)
      lines.push(`${I}Address ${hex(r.address ?? 0n)}${r.allocation ? ` ${formatAllocation(r.allocation).slice('and '.length)}` : ''}`)
      for (const d of extra.detail ?? []) lines.push(`${I}${d}`)
      lines.push(kernelLine)
      break
    }
    case 'memory': {
      const rw = first.kind === 'write' ? 'write' : first.kind === 'atomic' ? 'atomic' : 'read'
      lines.push(`${P}Invalid ${spaceName(r.space)} ${rw} of size ${r.size} bytes`)
      lines.push(`${I}${formatSite(first, r.kernel)}`)
      lines.push(`${I}by thread ${formatDim(first.thread)} in block ${formatDim(first.block)}`)
      const state = r.hazard === 'misaligned' ? 'is misaligned' : r.hazard === 'use-after-free' ? 'is in freed memory' : 'is out of bounds'
      lines.push(`${I}Address ${hex(r.address ?? 0n)} ${state}`)
      if (r.allocation) lines.push(`${I}${formatAllocation(r.allocation)}`)
      for (const d of extra.detail ?? []) lines.push(`${I}${d}`)
      lines.push(kernelLine)
      break
    }
  }
  return lines.join('\n')
}
