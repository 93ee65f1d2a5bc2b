// Where an instruction came from, for messages: its PTX line and text, and the CUDA source position of the
// PTX's `.loc` line information (nvcc -lineinfo or -G, clang -g or -gline-tables-only), resolved through the
// module's `.file` table. The one place that turns `.loc` into `file:line` (sanitizer reports and fault
// messages share it).
import type { SourceLoc } from '@kernelpack/ptx'

/** A `.cu` position: the file as the PTX's `.file` directive names it, line and column. */
export interface SourcePosition { file: string; line: number; column: number }

/** The source position of a `.loc`, or undefined when the PTX has none for it (or names no such file). An
 *  inlined function's position is its call site in the caller (a CUDA header's `atomicAdd` or `__shfl_sync`
 *  is reported where the kernel calls it); `inlined` keeps the callee's own position. */
export function sourcePosition(files: ReadonlyMap<number, string>, loc: SourceLoc | undefined): (SourcePosition & { inlined?: SourcePosition }) | undefined {
  if (!loc || loc.line <= 0) return undefined
  const file = files.get(loc.file)
  if (file === undefined) return undefined
  const own = { file, line: loc.line, column: loc.column }
  const at = loc.inlinedAt
  if (!at) return own
  // clang names the caller's file in a comment, by the name it gave the .file directive or a suffix of it
  const callerFile = typeof at.file === 'number' ? files.get(at.file) : [...files.values()].find((f) => f === at.file || f.endsWith(`/${at.file}`)) ?? at.file
  return callerFile === undefined ? own : { file: callerFile, line: at.line, column: at.column, inlined: own }
}

/** `file:line` (compute-sanitizer prints no column). */
export function formatSourcePosition(p: SourcePosition): string {
  return `${p.file}:${p.line}`
}

/** `PTX line 42 \`st.shared.f32 [%r4], %f3;\`` and, with line information, ` in reduce.cu:17`. */
export function describeInstruction(where: { line: number; text: string }, source: SourcePosition | undefined): string {
  return `PTX line ${where.line} \`${where.text}\`${source ? ` in ${formatSourcePosition(source)}` : ''}`
}
