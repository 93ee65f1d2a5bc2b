// PTX text → AST. Covers what nvcc 13 and clang 22 emit (PTX ISA 9.x, "Syntax" and "Directives" chapters):
// module directives, .entry/.func with params and return params, .reg/.shared/.local/.param declarations
// (nested `{ }` call sequences get their own scope), .global/.const with initializers, labels, guard
// predicates, vector/address/pair operands and call argument lists. Every error names the PTX line.
import { PtxError } from './errors.js'

export type Operand =
  | { k: 'id'; name: string }
  | { k: 'imm'; value: bigint }
  | { k: 'fimm'; bits: bigint; width: 32 | 64 }
  | { k: 'dimm'; value: number }
  | { k: 'addr'; base?: Operand; offset: number }
  | { k: 'vec'; items: Operand[] }
  | { k: 'pair'; a: Operand; b: Operand }
  | { k: 'not'; a: Operand }
  | { k: 'neg'; a: Operand }
  | { k: 'list'; items: Operand[] }

export interface PtxInstruction {
  kind: 'instr'
  /** Opcode split at dots: `ld.global.f32` → ['ld', 'global', 'f32']. */
  op: string[]
  /** The opcode as written. */
  opcode: string
  guard?: { reg: string; negate: boolean }
  args: Operand[]
  line: number
  /** The statement text, for messages. */
  text: string
}

export interface PtxLabel { kind: 'label'; name: string; line: number }
export type PtxStatement = PtxInstruction | PtxLabel

export interface PtxVariable {
  name: string
  space: 'global' | 'const' | 'shared' | 'local' | 'param'
  /** Element type without the dot (`b8`, `f32`, `u64`). */
  type: string
  align: number
  /** Element count (1 for scalars; 0 for `.extern .shared x[]`). */
  count: number
  /** Vector width (.v2/.v4), 1 otherwise. */
  vec: number
  /** Size in bytes. */
  size: number
  linkage: string
  extern: boolean
  /** Flattened initializer: numbers/bigints, or symbol names (address of a variable or function). */
  init?: Array<{ value?: bigint; fbits?: bigint; fwidth?: 32 | 64; dvalue?: number; sym?: string }>
  line: number
}

export interface PtxRegister { name: string; type: string }

export interface PtxFunction {
  name: string
  kind: 'entry' | 'func'
  linkage: string
  params: PtxVariable[]
  returns: PtxVariable[]
  /** Absent for a prototype (`.extern .func foo(...);`). */
  body?: PtxStatement[]
  regs: PtxRegister[]
  /** Variables declared in the body (.shared, .local, .param of call sequences, .const). */
  vars: PtxVariable[]
  directives: Record<string, number[]>
  line: number
}

export interface PtxModule {
  version?: string
  target?: string[]
  addressSize?: number
  functions: PtxFunction[]
  variables: PtxVariable[]
}

interface Token { t: 'id' | 'num' | 'str' | 'p'; v: string; line: number }

const identChar = /[A-Za-z0-9_$%.]/

function tokenize(text: string): Token[] {
  const out: Token[] = []
  let i = 0
  let line = 1
  const n = text.length
  while (i < n) {
    const c = text[i]!
    if (c === '\n') { line++; i++; continue }
    if (c === ' ' || c === '\t' || c === '\r') { i++; continue }
    if (c === '/' && text[i + 1] === '/') { while (i < n && text[i] !== '\n') i++; continue }
    if (c === '/' && text[i + 1] === '*') {
      i += 2
      while (i < n && !(text[i] === '*' && text[i + 1] === '/')) { if (text[i] === '\n') line++; i++ }
      i += 2
      continue
    }
    if (c === '"') {
      let j = i + 1
      while (j < n && text[j] !== '"') { if (text[j] === '\\') j++; j++ }
      out.push({ t: 'str', v: text.slice(i + 1, j), line })
      i = j + 1
      continue
    }
    if (c >= '0' && c <= '9') {
      let j = i + 1
      while (j < n && /[0-9A-Za-z.]/.test(text[j]!)) j++
      // 1e-5 style exponents
      if ((text[j] === '-' || text[j] === '+') && /[eE]$/.test(text.slice(i, j)) && !/^0[xXfFdD]/.test(text.slice(i, j))) {
        j++
        while (j < n && /[0-9]/.test(text[j]!)) j++
      }
      out.push({ t: 'num', v: text.slice(i, j), line })
      i = j
      continue
    }
    if (identChar.test(c)) {
      let j = i + 1
      for (;;) {
        while (j < n && identChar.test(text[j]!)) j++
        if (text[j] === ':' && text[j + 1] === ':') { j += 2; continue }
        break
      }
      out.push({ t: 'id', v: text.slice(i, j), line })
      i = j
      continue
    }
    out.push({ t: 'p', v: c, line })
    i++
  }
  return out
}

const typeSizes: Record<string, number> = {
  b8: 1, u8: 1, s8: 1, b16: 2, u16: 2, s16: 2, f16: 2, bf16: 2, b32: 4, u32: 4, s32: 4, f32: 4,
  f16x2: 4, bf16x2: 4, b64: 8, u64: 8, s64: 8, f64: 8, pred: 1, b128: 16, e4m3x2: 2, e5m2x2: 2, tf32: 4,
}

export function typeSize(type: string): number {
  return typeSizes[type] ?? 0
}

function parseIntLiteral(s: string, line: number): bigint {
  let t = s.replace(/[uU]$/, '')
  let neg = false
  if (t.startsWith('-')) { neg = true; t = t.slice(1) }
  let v: bigint
  if (/^0[xX][0-9a-fA-F]+$/.test(t)) v = BigInt(t)
  else if (/^0[bB][01]+$/.test(t)) v = BigInt(t)
  else if (/^0[0-7]+$/.test(t)) v = BigInt('0o' + t.slice(1))
  else if (/^[0-9]+$/.test(t)) v = BigInt(t)
  else throw new PtxError(`bad integer literal \`${s}\``, line)
  return neg ? -v : v
}

class Parser {
  toks: Token[]
  pos = 0
  scopes: Array<Map<string, string>> = []
  scopeCounter = 0
  constructor(public text: string) {
    this.toks = tokenize(text)
  }

  peek(o = 0): Token | undefined { return this.toks[this.pos + o] }
  line(): number { return this.peek()?.line ?? this.toks[this.toks.length - 1]?.line ?? 1 }
  next(): Token {
    const t = this.toks[this.pos++]
    if (!t) throw new PtxError('unexpected end of PTX', this.toks[this.toks.length - 1]?.line)
    return t
  }
  isP(v: string, o = 0): boolean { const t = this.peek(o); return !!t && t.t === 'p' && t.v === v }
  expectP(v: string): Token {
    const t = this.next()
    if (t.t !== 'p' || t.v !== v) throw new PtxError(`expected \`${v}\`, found \`${t.v}\``, t.line)
    return t
  }
  expectId(): Token {
    const t = this.next()
    if (t.t !== 'id') throw new PtxError(`expected a name, found \`${t.v}\``, t.line)
    return t
  }
  rename(name: string): string {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const r = this.scopes[i]!.get(name)
      if (r) return r
    }
    return name
  }
  skipToSemi(): void { while (this.pos < this.toks.length && !this.isP(';')) this.pos++; this.pos++ }
  /** `.loc`/`.file` end at the end of their line (no semicolon in nvcc -lineinfo output). */
  skipLine(line: number): void {
    while (this.pos < this.toks.length && this.peek()!.line === line && !this.isP(';')) this.pos++
    if (this.isP(';')) this.pos++
  }

  parseModule(): PtxModule {
    const mod: PtxModule = { functions: [], variables: [] }
    while (this.pos < this.toks.length) {
      const t = this.peek()!
      if (t.t === 'p' && t.v === ';') { this.pos++; continue }
      if (t.t !== 'id') throw new PtxError(`unexpected \`${t.v}\` at module level`, t.line)
      if (t.v === '.version') { this.pos++; mod.version = this.next().v; continue }
      if (t.v === '.target') {
        this.pos++
        const list: string[] = [this.next().v]
        while (this.isP(',')) { this.pos++; list.push(this.next().v) }
        mod.target = list
        continue
      }
      if (t.v === '.address_size') { this.pos++; mod.addressSize = Number(this.next().v); continue }
      if (t.v === '.section') {
        // debug sections of -G builds: `.section .debug_info { … }`
        this.pos++
        while (this.pos < this.toks.length && !this.isP('{')) this.pos++
        let depth = 0
        while (this.pos < this.toks.length) {
          const x = this.next()
          if (x.t === 'p' && x.v === '{') depth++
          else if (x.t === 'p' && x.v === '}' && --depth === 0) break
        }
        continue
      }
      if (t.v === '.file' || t.v === '.loc' || t.v === '@@DWARF') { this.pos++; this.skipLine(t.line); continue }
      // linkage prefixes, then .entry / .func / a variable
      let linkage = ''
      let isExtern = false
      while (this.peek()?.t === 'id' && ['.visible', '.weak', '.extern', '.common', '.alias'].includes(this.peek()!.v)) {
        const v = this.next().v
        if (v === '.extern') isExtern = true
        linkage = v.slice(1)
      }
      const k = this.peek()
      if (!k) break
      if (k.v === '.entry' || k.v === '.func') {
        mod.functions.push(this.parseFunction(linkage || 'internal'))
        continue
      }
      if (k.v === '.global' || k.v === '.const' || k.v === '.shared' || k.v === '.local') {
        mod.variables.push(this.parseVariable(linkage || 'internal', isExtern))
        continue
      }
      throw new PtxError(`unsupported module-level directive \`${k.v}\``, k.line)
    }
    return mod
  }

  parseVariable(linkage: string, isExtern: boolean): PtxVariable {
    const line = this.line()
    const spaceTok = this.next().v
    const space = spaceTok.slice(1) as PtxVariable['space']
    let align = 0
    let vec = 1
    let type = ''
    // PTX ISA, kernel parameter attribute `.ptr`: in `.param .u64 .ptr .global .align 1 p` the `.align` after
    // `.ptr` is the alignment of what p points to (clang writes it), not of the parameter itself.
    let afterPtr = false
    for (;;) {
      const t = this.peek()
      if (!t || t.t !== 'id' || !t.v.startsWith('.')) break
      this.pos++
      if (t.v === '.align') { const a = Number(this.next().v); if (!afterPtr) align = a }
      else if (t.v === '.v2') vec = 2
      else if (t.v === '.v4') vec = 4
      else if (t.v === '.v8') vec = 8
      else if (t.v === '.ptr') afterPtr = true
      else if (t.v === '.attribute') { if (this.isP('(')) { while (!this.isP(')')) this.pos++; this.pos++ } }
      else if (typeSizes[t.v.slice(1)] !== undefined) type = t.v.slice(1)
      else if (t.v === '.global' || t.v === '.shared' || t.v === '.local' || t.v === '.const') { /* .ptr.global */ }
      else throw new PtxError(`unsupported variable qualifier \`${t.v}\``, t.line)
    }
    if (!type) throw new PtxError('variable declaration without a type', line)
    const nameTok = this.expectId()
    let count = 1
    let dims = 0
    while (this.isP('[')) {
      this.pos++
      dims++
      if (this.isP(']')) { count = 0; this.pos++; continue }
      const n = Number(parseIntLiteral(this.next().v, line))
      count *= n
      this.expectP(']')
    }
    const elem = typeSize(type) * vec
    const v: PtxVariable = {
      name: nameTok.v, space, type, align: align || elem, count, vec, size: elem * count, linkage, extern: isExtern, line,
    }
    if (dims === 0) v.count = 1
    if (this.isP('=')) {
      this.pos++
      v.init = []
      this.parseInit(v.init)
    }
    if (this.isP(';')) this.pos++
    return v
  }

  parseInit(out: NonNullable<PtxVariable['init']>): void {
    if (this.isP('{')) {
      this.pos++
      while (!this.isP('}')) {
        this.parseInit(out)
        if (this.isP(',')) this.pos++
      }
      this.pos++
      return
    }
    let neg = false
    if (this.isP('-')) { neg = true; this.pos++ }
    const t = this.next()
    if (t.t === 'num') {
      const o = this.parseNumber(t.v, t.line, neg)
      if (o.k === 'imm') out.push({ value: o.value })
      else if (o.k === 'fimm') out.push({ fbits: o.bits, fwidth: o.width })
      else if (o.k === 'dimm') out.push({ dvalue: o.value })
      return
    }
    if (t.t === 'id') {
      // generic(sym) or sym, optionally sym+off (rare; offsets unsupported)
      if ((t.v === 'generic' || t.v === 'mask') && this.isP('(')) {
        this.pos++
        const s = this.expectId()
        this.expectP(')')
        out.push({ sym: s.v })
        return
      }
      out.push({ sym: t.v })
      return
    }
    throw new PtxError(`bad initializer \`${t.v}\``, t.line)
  }

  parseNumber(s: string, line: number, neg: boolean): Operand {
    if (/^0[fF][0-9a-fA-F]{8}$/.test(s)) {
      let bits = BigInt('0x' + s.slice(2))
      if (neg) bits ^= 0x80000000n
      return { k: 'fimm', bits, width: 32 }
    }
    if (/^0[dD][0-9a-fA-F]{16}$/.test(s)) {
      let bits = BigInt('0x' + s.slice(2))
      if (neg) bits ^= 0x8000000000000000n
      return { k: 'fimm', bits, width: 64 }
    }
    if (/^[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?$/.test(s) || /^[0-9]+[eE][-+]?[0-9]+$/.test(s)) {
      return { k: 'dimm', value: neg ? -Number(s) : Number(s) }
    }
    return { k: 'imm', value: parseIntLiteral(neg ? '-' + s : s, line) }
  }

  parseParamList(): PtxVariable[] {
    const out: PtxVariable[] = []
    this.expectP('(')
    while (!this.isP(')')) {
      const line = this.line()
      const t = this.next()
      if (t.v !== '.param' && t.v !== '.reg') throw new PtxError(`expected .param in a parameter list, found \`${t.v}\``, t.line)
      this.pos--
      const v = this.parseVariable('param', false)
      v.space = 'param'
      v.line = line
      out.push(v)
      if (this.isP(',')) this.pos++
    }
    this.pos++
    return out
  }

  parseFunction(linkage: string): PtxFunction {
    const line = this.line()
    const kind = this.next().v === '.entry' ? 'entry' : 'func'
    let returns: PtxVariable[] = []
    if (kind === 'func' && this.isP('(')) returns = this.parseParamList()
    const name = this.expectId().v
    let params: PtxVariable[] = []
    if (this.isP('(')) params = this.parseParamList()
    const fn: PtxFunction = { name, kind, linkage, params, returns, regs: [], vars: [], directives: {}, line }
    // performance directives until `{` or `;`
    while (!this.isP('{') && !this.isP(';')) {
      const t = this.next()
      if (t.t !== 'id') throw new PtxError(`unexpected \`${t.v}\` in the header of ${name}`, t.line)
      const nums: number[] = []
      while (this.peek()?.t === 'num') {
        nums.push(Number(this.next().v))
        if (this.isP(',')) this.pos++
      }
      fn.directives[t.v.slice(1)] = nums
    }
    if (this.isP(';')) { this.pos++; return fn }
    this.pos++
    fn.body = []
    this.scopes = [new Map()]
    this.parseBody(fn)
    return fn
  }

  parseBody(fn: PtxFunction): void {
    const body = fn.body!
    for (;;) {
      const t = this.peek()
      if (!t) throw new PtxError(`unterminated body of ${fn.name}`, fn.line)
      if (t.t === 'p' && t.v === '}') {
        this.pos++
        this.scopes.pop()
        if (this.scopes.length === 0) return
        continue
      }
      if (t.t === 'p' && t.v === '{') { this.pos++; this.scopes.push(new Map()); continue }
      if (t.t === 'p' && t.v === ';') { this.pos++; continue }
      if (t.t === 'id' && (t.v === '.loc' || t.v === '.file' || t.v === '.section')) { this.pos++; this.skipLine(t.line); continue }
      if (t.t === 'id' && (t.v === '.pragma' || t.v === '.maxnreg' || t.v === '.callprototype')) { this.skipToSemi(); continue }
      if (t.t === 'id' && this.isP(':', 1)) {
        // label, or `prototype_0 : .callprototype ...`
        if (this.peek(2)?.v === '.callprototype') { this.skipToSemi(); continue }
        this.pos += 2
        body.push({ kind: 'label', name: t.v, line: t.line })
        continue
      }
      if (t.t === 'id' && t.v === '.reg') { this.parseRegDecl(fn); continue }
      if (t.t === 'id' && (t.v === '.shared' || t.v === '.local' || t.v === '.param' || t.v === '.const' || t.v === '.global' || t.v === '.extern')) {
        let isExtern = false
        if (t.v === '.extern') { isExtern = true; this.pos++ }
        const v = this.parseVariable('internal', isExtern)
        if (this.scopes.length > 1) {
          const renamed = `${v.name}#${++this.scopeCounter}`
          this.scopes[this.scopes.length - 1]!.set(v.name, renamed)
          v.name = renamed
        }
        fn.vars.push(v)
        continue
      }
      body.push(this.parseInstruction())
    }
  }

  parseRegDecl(fn: PtxFunction): void {
    const line = this.line()
    this.pos++
    let type = ''
    while (this.peek()?.t === 'id' && this.peek()!.v.startsWith('.')) {
      const v = this.next().v
      if (v === '.v2' || v === '.v4') throw new PtxError('vector registers are not supported', line)
      type = v.slice(1)
    }
    if (!type) throw new PtxError('.reg without a type', line)
    for (;;) {
      const nameTok = this.expectId()
      if (this.isP('<')) {
        this.pos++
        const n = Number(this.next().v)
        this.expectP('>')
        for (let i = 0; i < n; i++) fn.regs.push({ name: nameTok.v + i, type })
      } else {
        let name = nameTok.v
        if (this.scopes.length > 1) {
          const renamed = `${name}#${++this.scopeCounter}`
          this.scopes[this.scopes.length - 1]!.set(name, renamed)
          name = renamed
        }
        fn.regs.push({ name, type })
      }
      if (this.isP(',')) { this.pos++; continue }
      break
    }
    this.expectP(';')
  }

  parseInstruction(): PtxInstruction {
    const start = this.pos
    const line = this.line()
    let guard: PtxInstruction['guard']
    if (this.isP('@')) {
      this.pos++
      let negate = false
      if (this.isP('!')) { negate = true; this.pos++ }
      guard = { reg: this.rename(this.expectId().v), negate }
    }
    const opTok = this.expectId()
    const args: Operand[] = []
    while (!this.isP(';')) {
      args.push(this.parseOperand())
      if (this.isP(',')) this.pos++
      else if (!this.isP(';')) throw new PtxError(`unexpected \`${this.peek()?.v}\` in \`${opTok.v}\``, this.line())
    }
    const end = this.pos
    this.pos++
    const text = this.toks.slice(start, end).map((t) => t.v).join(' ').replace(/ ([,\]\)}|])/g, '$1').replace(/([[({|]) /g, '$1')
    return { kind: 'instr', op: opTok.v.split('.'), opcode: opTok.v, guard, args, line, text }
  }

  parseOperand(): Operand {
    const t = this.peek()
    if (!t) throw new PtxError('unexpected end of PTX', this.line())
    if (t.t === 'p') {
      if (t.v === '{') {
        this.pos++
        const items: Operand[] = []
        while (!this.isP('}')) { items.push(this.parseOperand()); if (this.isP(',')) this.pos++ }
        this.pos++
        return { k: 'vec', items }
      }
      if (t.v === '(') {
        this.pos++
        const items: Operand[] = []
        while (!this.isP(')')) { items.push(this.parseOperand()); if (this.isP(',')) this.pos++ }
        this.pos++
        return { k: 'list', items }
      }
      if (t.v === '[') {
        this.pos++
        let base: Operand | undefined
        let offset = 0
        if (this.peek()?.t === 'id') base = { k: 'id', name: this.rename(this.next().v) }
        else if (this.peek()?.t === 'num') offset = Number(parseIntLiteral(this.next().v, t.line))
        while (this.isP('+') || this.isP('-')) {
          let sign = this.next().v === '-' ? -1 : 1
          if (this.isP('-')) { this.pos++; sign = -sign }
          offset += sign * Number(parseIntLiteral(this.next().v, t.line))
        }
        this.expectP(']')
        return { k: 'addr', base, offset }
      }
      if (t.v === '!') { this.pos++; return { k: 'not', a: this.parseOperand() } }
      if (t.v === '-') {
        this.pos++
        const n = this.peek()
        if (n?.t === 'num') { this.pos++; return this.parseNumber(n.v, n.line, true) }
        return { k: 'neg', a: this.parseOperand() }
      }
      if (t.v === '_') { this.pos++; return { k: 'id', name: '_' } }
      throw new PtxError(`unexpected \`${t.v}\` in an operand`, t.line)
    }
    if (t.t === 'num') { this.pos++; return this.parseNumber(t.v, t.line, false) }
    if (t.t === 'id') {
      this.pos++
      const a: Operand = { k: 'id', name: this.rename(t.v) }
      if (this.isP('|')) { this.pos++; return { k: 'pair', a, b: this.parseOperand() } }
      return a
    }
    throw new PtxError(`unexpected \`${t.v}\` in an operand`, t.line)
  }
}

/** Parses PTX text into a module AST; throws PtxError naming the line on malformed input. */
export function parsePtx(text: string): PtxModule {
  return new Parser(text).parseModule()
}
