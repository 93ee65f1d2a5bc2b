// Errors the toolchain throws. Both carry `userError = true`, which the CLI maps to exit status 1 and the
// plugin to a build error without a stack trace (DESIGN.md, "What users must see").

/** One compiler message, located in the user's source (nvcc `file(line): error: …` with the column read
 *  from its caret line, clang/gcc `file:line:col: error: …`). `line`/`column` are 1-based; 0 when the
 *  compiler gave no place (ptxas, "At end of source"). */
export interface Diagnostic {
  file: string
  line: number
  column: number
  severity: 'error' | 'warning' | 'note'
  message: string
  /** nvcc's diagnostic number (`177-D`) or clang's warning flag (`-Wunused-variable`). */
  code?: string
  /** The source line and caret the compiler printed under the message. */
  frame?: string
}

/** `file:line:col: severity: message`, the form editors and terminals link. */
export function formatDiagnostic(d: Diagnostic): string {
  const place = d.line > 0 ? `${d.file}:${d.line}:${d.column > 0 ? d.column : 1}` : d.file
  return `${place}: ${d.severity}: ${d.message}${d.code ? ` [${d.code}]` : ''}`
}

/** A device compile failed; `diagnostics` holds every message the compiler printed. */
export class CompileError extends Error {
  override name = 'CompileError'
  readonly userError = true
  constructor(
    public file: string,
    public diagnostics: Diagnostic[],
    public details: { target?: string; command?: string[]; exitCode?: number; output?: string } = {},
  ) {
    super(compileMessage(file, diagnostics, details))
  }
}

function compileMessage(file: string, diagnostics: Diagnostic[], details: CompileError['details']): string {
  const errors = diagnostics.filter((d) => d.severity === 'error').length
  const head = `failed to compile ${file}${details.target ? ` for ${details.target}` : ''}` +
    (errors ? ` (${errors} error${errors === 1 ? '' : 's'})` : details.exitCode !== undefined ? ` (compiler exit status ${details.exitCode})` : '')
  const lines = diagnostics.map(formatDiagnostic)
  if (lines.length === 0 && details.output) lines.push(details.output.trim())
  return [head, ...lines].join('\n')
}

/** A problem with the setup rather than the source: no compiler found (the message says what was
 *  searched and how to install one), a bad arch spec, `native` without a GPU, an unusable path. */
export class ToolchainError extends Error {
  override name = 'ToolchainError'
  readonly userError = true
}
