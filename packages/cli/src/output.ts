// Helpers the compiling commands (build, types) share: paths as the user typed them, -D.
import { isAbsolute, relative } from 'node:path'
import { UsageError } from './errors.js'

/** `-D NAME` / `-D NAME=VALUE` → [name, value]. */
export function parseDefine(text: string): [string, string | true] {
  const eq = text.indexOf('=')
  const name = eq < 0 ? text : text.slice(0, eq)
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`-D ${text}: '${name}' is not a macro name (use -D NAME or -D NAME=VALUE)`)
  return eq < 0 ? [name, true] : [name, text.slice(eq + 1)]
}

/** A path as the user would type it from the working directory. */
export function shown(cwd: string, file: string): string {
  if (!file) return file
  const rel = relative(cwd, file)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
}
