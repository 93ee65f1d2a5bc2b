// Turns toolchain failures into the error shape bundlers show best (Rollup's RollupError: `id`, `loc`,
// `frame`, `plugin`), which Vite's overlay prints as `file:line:col` with the code frame, and webpack and
// esbuild print through their message. One error per failed import, naming the .cu file and the fix.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'

export interface Diagnostic {
  file: string
  line: number
  column: number
  severity: string
  message: string
  frame?: string
}

export interface PluginError extends Error {
  id: string
  plugin: string
  loc?: { file: string; line: number; column: number }
  frame?: string
  /** The compiler's diagnostics, when a compile failed. */
  diagnostics?: Diagnostic[]
}

export const PLUGIN_NAME = 'unplugin-cuda'

function isDiagnosticList(x: unknown): x is Diagnostic[] {
  return Array.isArray(x) && x.every((d) => d && typeof d === 'object' && typeof (d as Diagnostic).message === 'string')
}

/**
 * A code frame in the format Rollup and Vite print (and Vite's overlay recognises: `> 8 |  code` lines and
 * a `   |  ^` caret line), two lines of context each side. Falls back to `fallback` (the compiler's own
 * frame) when the file cannot be read or the line is out of range.
 */
export function codeFrame(file: string, line: number, column: number, fallback?: string): string | undefined {
  let lines: string[]
  try { lines = readFileSync(file, 'utf8').split(/\r?\n/) } catch { return fallback }
  // a file ending in a newline has no empty line after it
  if (lines.length > 1 && lines.at(-1) === '') lines.pop()
  if (line < 1 || line > lines.length) return fallback
  const first = Math.max(1, line - 2)
  const last = Math.min(lines.length, line + 2)
  const width = String(last).length
  const out: string[] = []
  for (let n = first; n <= last; n++) {
    const text = lines[n - 1]!.replace(/\t/g, '  ')
    out.push(`${n === line ? '>' : ' '} ${String(n).padStart(width)} | ${text}`)
    if (n === line) out.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, column - 1))}^`)
  }
  return out.join('\n')
}

/** A PluginError for a failure while building `file`. `frameInMessage` appends the code frame to the message,
 *  for bundlers that print only the message (esbuild, webpack, Rspack); Rollup and Vite print `frame`. */
export function toPluginError(err: unknown, file: string, root: string, options: { frameInMessage?: boolean } = {}): PluginError {
  const e = err instanceof Error ? err : new Error(String(err))
  const rel = relative(root, file) || file
  const diags = (e as { diagnostics?: unknown }).diagnostics
  let out: PluginError
  if (isDiagnosticList(diags) && diags.length > 0) {
    const errors = diags.filter((d) => d.severity === 'error' || d.severity === 'fatal')
    const shown = errors.length ? errors : diags
    const first = shown[0]!
    const at = (d: Diagnostic) => `${relative(root, d.file) || d.file}:${d.line}:${d.column}`
    const frame = codeFrame(first.file, first.line, first.column, first.frame)
    const lines = [`${at(first)}: ${first.severity}: ${first.message}`]
    if (options.frameInMessage && frame) lines.push(frame)
    for (const d of shown.slice(1)) lines.push(`${at(d)}: ${d.severity}: ${d.message}`)
    out = Object.assign(new Error(lines.join('\n')), {
      id: file,
      plugin: PLUGIN_NAME,
      loc: { file: first.file, line: first.line, column: first.column },
      frame,
      diagnostics: diags,
    }) as PluginError
  } else {
    const msg = e.message.includes(rel) || e.message.includes(file) ? e.message : `${rel}: ${e.message}`
    out = Object.assign(new Error(msg), { id: file, plugin: PLUGIN_NAME }) as PluginError
  }
  out.name = e.name === 'Error' ? 'CudaBuildError' : e.name
  out.stack = `${out.name}: ${out.message}`
  return out
}
