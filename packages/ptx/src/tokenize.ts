// THE one PTX tokenizer (PTX ISA 9.x, "Syntax": identifiers, constants, comments, punctuation). Every reader
// of PTX text in the repository goes through it: the parser (parse.ts) for the emulator, the manifest and the
// runtime's load-time checks. Tokens are produced on demand, so a reader that needs only declarations can
// skip function bodies by brace matching (skipBlock) without creating their tokens.

export interface Token {
  /** id: identifiers, directives (`.entry`), registers (`%r1`), labels; num: numeric literals (`0f3F800000`,
   *  `1.5e-3`); str: a string literal's contents; p: one punctuation character. */
  t: 'id' | 'num' | 'str' | 'p'
  v: string
  /** 1-based line of the token's first character. */
  line: number
  /** Offset of the token's first character in the text. */
  at: number
}

const identChar = /[A-Za-z0-9_$%.]/

export class PtxLexer {
  private i = 0
  private ln = 1
  constructor(readonly text: string) {}

  /** Line of the next character to scan. */
  get line(): number { return this.ln }

  /** Moves back to a token's start (it is scanned again). */
  rewind(tok: Token): void {
    this.i = tok.at
    this.ln = tok.line
  }

  /** Skips whitespace and comments. */
  private skipSpace(): void {
    const text = this.text
    const n = text.length
    while (this.i < n) {
      const c = text[this.i]!
      if (c === '\n') { this.ln++; this.i++; continue }
      if (c === ' ' || c === '\t' || c === '\r') { this.i++; continue }
      if (c === '/' && text[this.i + 1] === '/') { while (this.i < n && text[this.i] !== '\n') this.i++; continue }
      if (c === '/' && text[this.i + 1] === '*') {
        this.i += 2
        while (this.i < n && !(text[this.i] === '*' && text[this.i + 1] === '/')) { if (text[this.i] === '\n') this.ln++; this.i++ }
        this.i += 2
        continue
      }
      break
    }
  }

  /** The next token, or undefined at the end of the text. */
  next(): Token | undefined {
    this.skipSpace()
    const text = this.text
    const n = text.length
    if (this.i >= n) return undefined
    const i = this.i
    const line = this.ln
    const c = text[i]!
    if (c === '"') {
      let j = i + 1
      while (j < n && text[j] !== '"') {
        if (text[j] === '\\') j++
        if (text[j] === '\n') this.ln++
        j++
      }
      this.i = j + 1
      return { t: 'str', v: text.slice(i + 1, j), line, at: i }
    }
    if (c >= '0' && c <= '9') {
      let j = i + 1
      while (j < n && /[0-9A-Za-z.]/.test(text[j]!)) j++
      // 1e-5 style exponents (not inside 0x / 0f / 0d literals)
      if ((text[j] === '-' || text[j] === '+') && /[eE]$/.test(text.slice(i, j)) && !/^0[xXfFdD]/.test(text.slice(i, j))) {
        j++
        while (j < n && /[0-9]/.test(text[j]!)) j++
      }
      this.i = j
      return { t: 'num', v: text.slice(i, j), line, at: i }
    }
    if (identChar.test(c)) {
      let j = i + 1
      for (;;) {
        while (j < n && identChar.test(text[j]!)) j++
        // `shared::cta`, `L2::cache_hint`: one identifier
        if (text[j] === ':' && text[j + 1] === ':') { j += 2; continue }
        break
      }
      this.i = j
      return { t: 'id', v: text.slice(i, j), line, at: i }
    }
    this.i = i + 1
    return { t: 'p', v: c, line, at: i }
  }

  /** Skips to just past the `}` that closes a block whose `{` was already read (nested braces, comments and
   *  strings honoured). Returns false when the text ends first. */
  skipBlock(): boolean {
    let depth = 1
    for (;;) {
      const t = this.next()
      if (!t) return false
      if (t.t !== 'p') continue
      if (t.v === '{') depth++
      else if (t.v === '}' && --depth === 0) return true
    }
  }
}

/** All tokens of a PTX text. */
export function tokenizePtx(text: string): Token[] {
  const lx = new PtxLexer(text)
  const out: Token[] = []
  for (let t = lx.next(); t; t = lx.next()) out.push(t)
  return out
}
