// Parses compiler output into Diagnostic records.
//   nvcc (EDG front end):  `file(LINE): error: message` / `file(LINE): warning #177-D: message`, then the
//                          source line indented by two spaces and a caret line (tabs count as one column),
//                          `At end of source: error: …`, `nvcc fatal   : …`, `ptxas fatal   : …`.
//   clang and gcc (nvcc runs gcc to preprocess): `file:LINE:COL: error: message [-Wflag]`, then a code
//                          frame (`    8 | source`, `      |   ^`).
import type { Diagnostic } from './errors.js'

export interface ParseDiagnosticsOptions {
  /** The file that was compiled: messages without a place are attributed to it. */
  file: string
  /** Rewrites a path the compiler printed (staged copies → the user's path). */
  mapPath?: (path: string) => string
  /** Line count of `file`, for nvcc's "At end of source" (placed on the last line). */
  lineCount?: number
}

type Severity = Diagnostic['severity']

function severityOf(word: string): Severity {
  if (word === 'warning') return 'warning'
  if (word === 'note' || word === 'remark') return 'note'
  return 'error'
}

const nvccLine = /^(.+?)\((\d+)\): (error|warning|remark|note|catastrophic error)(?: #(\d+(?:-[A-Z])?))?: (.*)$/
const endOfSource = /^At end of source: (error|warning|remark|note)(?: #(\d+(?:-[A-Z])?))?: (.*)$/
const gccLine = /^(.+?):(\d+):(?:(\d+):)? (fatal error|error|warning|note|remark): (.*?)(?: \[(-W[^\]]+|-R[^\]]+)\])?$/
const toolLine = /^(nvcc|ptxas|nvlink|cicc|fatbinary|cudafe\+\+|clang\+\+(?:-\d+)?|clang(?:-\d+)?)(?: [^:]*?)?\s*(fatal|error|warning|info)\s*: (.*)$/
const noise = /^(?:In file included from |\s+from |compilation terminated\.|\d+ errors? (?:detected|generated)|\d+ warnings? (?:and \d+ errors? )?generated|Remark: The warnings can be suppressed|\d+ warnings? generated)/

/** Reads every diagnostic in `output` (stderr, or stdout+stderr), in order. */
export function parseDiagnostics(output: string, options: ParseDiagnosticsOptions): Diagnostic[] {
  const map = options.mapPath ?? ((p: string) => p)
  const lines = output.replace(/\r\n/g, '\n').split('\n')
  const out: Diagnostic[] = []
  let frame: string[] | undefined
  let current: (Diagnostic & { nvcc?: boolean }) | undefined
  const close = () => {
    if (!current) return
    const f = frame ?? []
    while (f.length && !f[f.length - 1]!.trim()) f.pop()
    if (f.length) {
      current.frame = f.join('\n')
      // nvcc prints no column: it is the caret's position in the echoed line (indented by 2 spaces).
      if (current.nvcc && current.column === 0) {
        const caret = f.find((l) => /^\s*\^\s*$/.test(l))
        if (caret) current.column = Math.max(1, caret.indexOf('^') - 1)
      }
    }
    delete current.nvcc
    out.push(current)
    current = undefined
    frame = undefined
  }
  for (const line of lines) {
    let m = nvccLine.exec(line)
    if (m) {
      close()
      current = { file: map(m[1]!), line: Number(m[2]), column: 0, severity: severityOf(m[3]!), message: m[5]!.trim(), nvcc: true }
      if (m[4]) current.code = m[4]
      frame = []
      continue
    }
    m = endOfSource.exec(line)
    if (m) {
      close()
      const last = options.lineCount ?? 0
      current = { file: options.file, line: last, column: last > 0 ? 1 : 0, severity: severityOf(m[1]!), message: `${m[3]!.trim()} (at end of source)`, nvcc: true }
      if (m[2]) current.code = m[2]
      frame = []
      continue
    }
    m = gccLine.exec(line)
    if (m && !/^\s/.test(line)) {
      close()
      current = { file: map(m[1]!), line: Number(m[2]), column: m[3] ? Number(m[3]) : 0, severity: severityOf(m[4]!), message: m[5]!.trim() }
      if (m[6]) current.code = m[6]
      frame = []
      continue
    }
    m = toolLine.exec(line)
    if (m) {
      close()
      const sev = m[2] === 'warning' ? 'warning' : m[2] === 'info' ? 'note' : 'error'
      out.push({ file: options.file, line: 0, column: 0, severity: sev, message: `${m[1]}: ${m[3]!.trim()}` })
      continue
    }
    if (noise.test(line)) { close(); continue }
    if (current && frame) {
      if (line.trim() === '' && current.nvcc) { close(); continue }
      frame.push(line)
    }
  }
  close()
  return out
}

/** Removes repeats (the same message from the compiles of several targets), keeping the first. */
export function dedupeDiagnostics(list: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>()
  return list.filter((d) => {
    const k = `${d.file}\0${d.line}\0${d.column}\0${d.severity}\0${d.message}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}
