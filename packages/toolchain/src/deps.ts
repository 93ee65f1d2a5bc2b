// Reads the Make-format dependency file that `-MD -MF` writes (gcc, clang and nvcc all use GCC's escaping:
// `\ ` for a space, `\#` for `#`, `$$` for `$`, a backslash-newline continues the line).
// The first rule's prerequisites are the compiled file followed by everything it included.

/** Prerequisites of the first rule in a `.d` file, unescaped, in order, without duplicates. */
export function parseDepFile(text: string): string[] {
  const body = text.replace(/\\\r?\n/g, ' ')
  const firstRule = body.split(/\r?\n/).find((l) => l.trim()) ?? ''
  // The target ends at the first ': ' that is not escaped (our targets are plain file names).
  const colon = firstRule.search(/:(\s|$)/)
  const rest = colon < 0 ? '' : firstRule.slice(colon + 1)
  const out: string[] = []
  let cur = ''
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!
    if (c === '\\' && (rest[i + 1] === ' ' || rest[i + 1] === '#' || rest[i + 1] === '\\')) { cur += rest[++i]; continue }
    if (c === '$' && rest[i + 1] === '$') { cur += '$'; i++; continue }
    if (c === ' ' || c === '\t') {
      if (cur) out.push(cur)
      cur = ''
      continue
    }
    cur += c
  }
  if (cur) out.push(cur)
  return [...new Set(out)]
}
