// PTX text → AST (PTX ISA 9.x, "Syntax", "Directives"). Covers what nvcc 13 and clang 22 emit: module
// directives (.version, .target, .address_size, .file, debug .sections), .entry/.func with parameters,
// return parameters and performance directives (.maxntid, .reqntid, .minnctapersm, .maxnreg…),
// .reg/.shared/.local/.param declarations (nested `{ }` call sequences get their own scope), .global/.const
// variables with initializers, `.ptr .space .align N` parameter attributes, labels, guard predicates,
// vector/address/pair operands, call argument lists, and `.loc` line information, which stays on the
// instructions that follow it. Every error names the PTX line.
//
// The AST is syntax only: an instruction is its opcode split at dots and its operands as written. decode.ts
// turns it into the typed IR, checking every qualifier against the opcode.
import { PtxError } from './errors.js'
import { PtxLexer, type Token } from './tokenize.js'
import { isPtxType, typeSize, type PtxType, type VariableSpace } from './types.js'

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

/** A `.loc file line column` directive: the source position of the instructions after it. `inlinedAt`: where
 *  the function holding that position was inlined (nvcc's `, inlined_at file line column`; clang 22 writes the
 *  chain only in the line's comment, `// … @[ kernel.cu:12:5 ]`, whose outermost position is taken, by file
 *  name). The call site in the caller's code, which is what a message about user code should name. */
export interface SourceLoc { file: number; line: number; column: number; inlinedAt?: { file: number | string; line: number; column: number } }

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
  /** Source position from the last `.loc` before the instruction (nvcc -lineinfo / -G, clang -g). */
  loc?: SourceLoc
}

export interface PtxLabel { kind: 'label'; name: string; line: number }
export type PtxStatement = PtxInstruction | PtxLabel

export interface PtxVariable {
  name: string
  space: VariableSpace
  /** Element type without the dot (`b8`, `f32`, `u64`). */
  type: PtxType
  /** `.align N` before the name (the variable's own alignment), else the element size. */
  align: number
  /** Element count (1 for scalars; 0 for `.extern .shared x[]`). */
  count: number
  /** Array dimensions as written (`[3][5]` → [3, 5], `[]` → [0]); empty for a scalar. */
  dims: number[]
  /** Vector width (.v2/.v4/.v8), 1 otherwise. */
  vec: number
  /** Size in bytes. */
  size: number
  linkage: string
  extern: boolean
  /** `.ptr`: a kernel parameter that points into `pointerSpace` (PTX ISA, "Kernel Function Parameter
   *  Attributes"); `pointeeAlign` is the `.align` written after `.ptr`, the alignment of what it points to. */
  pointer?: boolean
  pointerSpace?: 'global' | 'shared' | 'local' | 'const'
  pointeeAlign?: number
  /** `.attribute(.managed)` → ['managed']. */
  attributes?: string[]
  /** `.texref` / `.surfref` / `.samplerref`: an opaque handle, not memory. */
  opaque?: 'texref' | 'surfref' | 'samplerref'
  /** Flattened initializer: numbers/bigints, or symbol names (address of a variable or function). */
  init?: Array<{ value?: bigint; fbits?: bigint; fwidth?: 32 | 64; dvalue?: number; sym?: string }>
  line: number
}

export interface PtxRegister { name: string; type: PtxType }

export interface PtxFunction {
  name: string
  kind: 'entry' | 'func'
  linkage: string
  params: PtxVariable[]
  returns: PtxVariable[]
  /** Absent for a prototype (`.extern .func foo(...);`) and when parsed with `bodies: false`. */
  body?: PtxStatement[]
  /** True when the function has a body (also with `bodies: false`, where it is skipped). */
  defined: boolean
  regs: PtxRegister[]
  /** Variables declared in the body (.shared, .local, .param of call sequences, .const). */
  vars: PtxVariable[]
  /** Header directives with their numbers: `.maxntid 256, 1, 1` → { maxntid: [256, 1, 1] }. */
  directives: Record<string, number[]>
  /** `name: .branchtargets L1, L2, …;` lists (the targets of `brx.idx`, clang's switch jump tables). */
  branchTargets?: Map<string, string[]>
  line: number
}

export interface PtxModule {
  version?: string
  target?: string[]
  addressSize?: number
  /** `.file N "name"` directives. */
  files: Map<number, string>
  functions: PtxFunction[]
  variables: PtxVariable[]
  /** `.alias a, b;`: a is another name of b. */
  aliases: Array<{ name: string; target: string; line: number }>
}

export interface ParseOptions {
  /** Parse function bodies (instructions, registers, local variables). Readers of the module interface
   *  (manifest, load-time checks) skip them by brace matching. @default true */
  bodies?: boolean
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

const LINKAGES = new Set(['.visible', '.weak', '.extern', '.common'])

class Parser {
  lexer: PtxLexer
  /** Tokens read ahead of `pos` (buf[0] is the current token). */
  buf: Token[] = []
  last: Token | undefined
  scopes: Array<Map<string, string>> = []
  scopeCounter = 0
  loc: SourceLoc | undefined
  /** nvcc's inline chains: each `.loc … inlined_at f l c` names the position of the enclosing inlined call,
   *  itself a `.loc` with its own `inlined_at`; by position, the outermost call site (the user's code) that a
   *  position inlined into resolves to. Reset per function body. */
  inlineOuter = new Map<string, { file: number; line: number; column: number }>()
  constructor(public text: string, public opts: ParseOptions) {
    this.lexer = new PtxLexer(text)
  }

  peek(o = 0): Token | undefined {
    while (this.buf.length <= o) {
      const t = this.lexer.next()
      if (!t) return undefined
      this.buf.push(t)
    }
    return this.buf[o]
  }
  line(): number { return this.peek()?.line ?? this.last?.line ?? 1 }
  next(): Token {
    const t = this.peek()
    if (!t) throw new PtxError('unexpected end of PTX', this.last?.line ?? 1)
    this.buf.shift()
    this.last = t
    return t
  }
  skip(n = 1): void { for (let i = 0; i < n; i++) this.next() }
  atEnd(): boolean { return this.peek() === undefined }
  isP(v: string, o = 0): boolean { const t = this.peek(o); return !!t && t.t === 'p' && t.v === v }
  isId(v: string, o = 0): boolean { const t = this.peek(o); return !!t && t.t === 'id' && t.v === v }
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
  skipToSemi(): void { while (!this.atEnd() && !this.isP(';')) this.next(); if (!this.atEnd()) this.next() }
  /** `.loc`/`.file` end at the end of their line (no semicolon in nvcc -lineinfo output). */
  skipLine(line: number): void {
    while (!this.atEnd() && this.peek()!.line === line && !this.isP(';')) this.next()
    if (this.isP(';')) this.next()
  }
  /** Skips a `{ … }` block whose `{` is the current token. */
  skipBlock(what: string, line: number): void {
    const open = this.next()
    if (this.buf.length) { this.lexer.rewind(this.buf[0]!); this.buf = [] }
    if (!this.lexer.skipBlock()) throw new PtxError(`unterminated ${what}`, line)
    void open
  }

  parseModule(): PtxModule {
    const mod: PtxModule = { files: new Map(), functions: [], variables: [], aliases: [] }
    while (!this.atEnd()) {
      const t = this.peek()!
      if (t.t === 'p' && t.v === ';') { this.next(); continue }
      if (t.t !== 'id') throw new PtxError(`unexpected \`${t.v}\` at module level`, t.line)
      if (t.v === '.version') { this.next(); mod.version = this.next().v; continue }
      if (t.v === '.target') {
        this.next()
        const list: string[] = [this.next().v]
        while (this.isP(',')) { this.next(); list.push(this.next().v) }
        mod.target = list
        continue
      }
      if (t.v === '.address_size') { this.next(); mod.addressSize = Number(this.next().v); continue }
      if (t.v === '.section') {
        // debug sections of -G / -lineinfo builds: `.section .debug_info { … }`
        this.next()
        while (!this.atEnd() && !this.isP('{')) this.next()
        if (!this.atEnd()) this.skipBlock('.section', t.line)
        continue
      }
      if (t.v === '.file') {
        this.next()
        const n = this.peek()
        const s = this.peek(1)
        if (n?.t === 'num' && s?.t === 'str' && n.line === t.line) mod.files.set(Number(n.v), s.v)
        this.skipLine(t.line)
        continue
      }
      if (t.v === '.loc' || t.v === '@@DWARF') { this.next(); this.skipLine(t.line); continue }
      if (t.v === '.pragma') { this.skipToSemi(); continue }
      if (t.v === '.alias') {
        this.next()
        const name = this.expectId().v
        this.expectP(',')
        const target = this.expectId().v
        mod.aliases.push({ name, target, line: t.line })
        if (this.isP(';')) this.next()
        continue
      }
      // linkage prefixes, then .entry / .func / a variable
      let linkage = ''
      let isExtern = false
      while (this.peek()?.t === 'id' && LINKAGES.has(this.peek()!.v)) {
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
    const space = spaceTok.slice(1) as VariableSpace
    let align = 0
    let vec = 1
    let type: PtxType | undefined
    let opaque: PtxVariable['opaque']
    const extra: Pick<PtxVariable, 'pointer' | 'pointerSpace' | 'pointeeAlign' | 'attributes'> = {}
    // PTX ISA, kernel parameter attribute `.ptr`: in `.param .u64 .ptr .global .align 1 p` the `.align` after
    // `.ptr` is the alignment of what p points to (clang writes it), not of the parameter itself.
    for (;;) {
      const t = this.peek()
      if (!t || t.t !== 'id' || !t.v.startsWith('.')) break
      this.next()
      const q = t.v.slice(1)
      if (q === 'align') {
        const at = this.next()
        const a = Number(at.v)
        if (at.t !== 'num' || !Number.isInteger(a) || a <= 0) throw new PtxError(`bad .align value \`${at.v}\``, at.line)
        if (extra.pointer) extra.pointeeAlign = a
        else align = a
      } else if (q === 'v2' || q === 'v4' || q === 'v8') vec = Number(q.slice(1))
      else if (q === 'ptr') extra.pointer = true
      else if (q === 'attribute') {
        if (this.isP('(')) {
          this.next()
          while (!this.atEnd() && !this.isP(')')) {
            const a = this.next()
            if (a.t === 'id') (extra.attributes ??= []).push(a.v.replace(/^\./, ''))
            else if (a.v === '(') { while (!this.atEnd() && !this.isP(')')) this.next(); this.next() }
          }
          this.next()
        }
      } else if (q === 'texref' || q === 'surfref' || q === 'samplerref') opaque = q
      else if (isPtxType(q)) { if (type === undefined) type = q }
      else if (q === 'global' || q === 'shared' || q === 'local' || q === 'const') { if (extra.pointer) extra.pointerSpace = q }
      else throw new PtxError(`unsupported variable qualifier \`${t.v}\``, t.line)
    }
    if (opaque && !type) type = 'b64'
    if (!type) throw new PtxError('variable declaration without a type', line)
    const nameTok = this.expectId()
    let count = 1
    const dims: number[] = []
    while (this.isP('[')) {
      this.next()
      if (this.isP(']')) { count = 0; dims.push(0); this.next(); continue }
      const n = Number(parseIntLiteral(this.next().v, line))
      dims.push(n)
      count *= n
      this.expectP(']')
    }
    const elem = typeSize(type) * vec
    const v: PtxVariable = {
      name: nameTok.v, space, type, align: align || elem, count, dims, vec, size: elem * count, linkage, extern: isExtern, line,
    }
    if (dims.length === 0) v.count = 1
    if (extra.pointer) v.pointer = true
    if (extra.pointerSpace) v.pointerSpace = extra.pointerSpace
    if (extra.pointeeAlign !== undefined) v.pointeeAlign = extra.pointeeAlign
    if (extra.attributes) v.attributes = extra.attributes
    if (opaque) v.opaque = opaque
    if (this.isP('=')) {
      this.next()
      v.init = []
      this.parseInit(v.init)
    }
    if (this.isP(';')) this.next()
    return v
  }

  parseInit(out: NonNullable<PtxVariable['init']>): void {
    if (this.isP('{')) {
      this.next()
      while (!this.isP('}')) {
        this.parseInit(out)
        if (this.isP(',')) this.next()
      }
      this.next()
      return
    }
    let neg = false
    if (this.isP('-')) { neg = true; this.next() }
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
        this.next()
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
      const t = this.peek()
      if (!t) throw new PtxError('unexpected end of PTX in a parameter list', line)
      if (t.v !== '.param' && t.v !== '.reg') throw new PtxError(`expected .param in a parameter list, found \`${t.v}\``, t.line)
      const v = this.parseVariable('param', false)
      v.space = 'param'
      v.line = line
      out.push(v)
      if (this.isP(',')) this.next()
    }
    this.next()
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
    const fn: PtxFunction = { name, kind, linkage, params, returns, defined: false, regs: [], vars: [], directives: {}, line }
    // performance directives until `{` or `;`
    while (!this.isP('{') && !this.isP(';')) {
      const t = this.next()
      if (t.t !== 'id') throw new PtxError(`unexpected \`${t.v}\` in the header of ${name}`, t.line)
      if (t.v === '.pragma') { while (!this.atEnd() && !this.isP(';')) this.next(); this.next(); continue }
      const nums: number[] = []
      while (this.peek()?.t === 'num') {
        nums.push(Number(this.next().v))
        if (this.isP(',')) this.next()
      }
      fn.directives[t.v.slice(1)] = nums
    }
    if (this.isP(';')) { this.next(); return fn }
    fn.defined = true
    if (this.opts.bodies === false) {
      this.skipBlock(`body of ${name}`, line)
      return fn
    }
    this.next()
    fn.body = []
    this.scopes = [new Map()]
    this.loc = undefined
    this.inlineOuter.clear()
    this.parseBody(fn)
    return fn
  }

  parseBody(fn: PtxFunction): void {
    const body = fn.body!
    for (;;) {
      const t = this.peek()
      if (!t) throw new PtxError(`unterminated body of ${fn.name}`, fn.line)
      if (t.t === 'p' && t.v === '}') {
        this.next()
        this.scopes.pop()
        if (this.scopes.length === 0) return
        continue
      }
      if (t.t === 'p' && t.v === '{') { this.next(); this.openScope(); continue }
      if (t.t === 'p' && t.v === ';') { this.next(); continue }
      if (t.t === 'id' && t.v === '.loc') { this.next(); this.readLoc(t); continue }
      if (t.t === 'id' && (t.v === '.file' || t.v === '.section')) { this.next(); this.skipLine(t.line); continue }
      if (t.t === 'id' && (t.v === '.pragma' || t.v === '.maxnreg' || t.v === '.callprototype')) { this.skipToSemi(); continue }
      if (t.t === 'id' && this.isP(':', 1)) {
        // label, or `prototype_0 : .callprototype ...`
        if (this.peek(2)?.v === '.callprototype') { this.skipToSemi(); continue }
        if (this.peek(2)?.v === '.branchtargets') { this.parseBranchTargets(fn); continue }
        this.skip(2)
        body.push({ kind: 'label', name: this.rename(t.v), line: t.line })
        continue
      }
      if (t.t === 'id' && t.v === '.reg') { this.parseRegDecl(fn); continue }
      if (t.t === 'id' && (t.v === '.shared' || t.v === '.local' || t.v === '.param' || t.v === '.const' || t.v === '.global' || t.v === '.extern')) {
        let isExtern = false
        if (t.v === '.extern') { isExtern = true; this.next() }
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

  /** A nested `{ … }` block (its `{` just read): a scope of its own for the registers, variables and labels it
   *  declares. Its labels are found first, as a branch may name one before it (inline PTX that CUTLASS-style
   *  headers inline many times into one function, each copy with the same `LAB_WAIT:` in its own braces). */
  openScope(): void {
    const scope = new Map<string, string>()
    this.scopes.push(scope)
    let depth = 0
    for (let k = 0; ; k++) {
      const t = this.peek(k)
      if (!t) return
      if (t.t === 'p' && t.v === '{') depth++
      else if (t.t === 'p' && t.v === '}') { if (depth-- === 0) return }
      else if (depth === 0 && t.t === 'id' && !t.v.startsWith('.') && this.isP(':', k + 1) && this.peek(k + 2)?.v !== '.callprototype' && this.peek(k + 2)?.v !== '.branchtargets') {
        const prev = k > 0 ? this.peek(k - 1) : undefined
        // (at the start of a statement or of a line: a .loc line ends without a semicolon)
        if (!prev || prev.line !== t.line || (prev.t === 'p' && (prev.v === ';' || prev.v === '{' || prev.v === '}' || prev.v === ':'))) scope.set(t.v, `${t.v}#${++this.scopeCounter}`)
      }
    }
  }

  /** `name: .branchtargets L1, L2, …;` (PTX ISA, "Control Flow Directives: .branchtargets"). */
  parseBranchTargets(fn: PtxFunction): void {
    const name = this.next()
    this.skip(2)
    const labels: string[] = []
    while (!this.isP(';')) {
      const t = this.next()
      if (t.t !== 'id') throw new PtxError(`expected a label in .branchtargets ${name.v}, found \`${t.v}\``, t.line)
      labels.push(this.rename(t.v))
      if (this.isP(',')) this.next()
      else if (!this.isP(';')) throw new PtxError(`unexpected \`${this.peek()?.v ?? 'end of PTX'}\` in .branchtargets ${name.v}`, this.line())
    }
    this.next()
    ;(fn.branchTargets ??= new Map()).set(name.v, labels)
  }

  /** `.loc file line column[, function_name label, inlined_at file line column]` (PTX ISA, ".loc"), and
   *  clang's inline chain in the line's comment. */
  readLoc(tok: Token): void {
    const line = tok.line
    const nums: number[] = []
    while (nums.length < 3 && this.peek()?.t === 'num' && this.peek()!.line === line) nums.push(Number(this.next().v))
    if (nums.length >= 2) {
      const loc: SourceLoc = { file: nums[0]!, line: nums[1]!, column: nums[2] ?? 0 }
      const text = this.lexer.text
      const eol = text.indexOf('\n', tok.at)
      const raw = text.slice(tok.at, eol < 0 ? text.length : eol)
      const nv = /\binlined_at\s+(\d+)\s+(\d+)\s+(\d+)/.exec(raw)
      if (nv) {
        // a chain through headers (cuda_pipeline_primitives.h → cuda_pipeline_helpers.h → …) ends at the call
        // in the user's code, as clang's comment chain does
        const at = { file: Number(nv[1]), line: Number(nv[2]), column: Number(nv[3]) }
        const outer = this.inlineOuter.get(`${at.file}:${at.line}:${at.column}`) ?? at
        loc.inlinedAt = outer
        this.inlineOuter.set(`${loc.file}:${loc.line}:${loc.column}`, outer)
      }
      else {
        const at = raw.indexOf('@[', raw.indexOf('//'))
        const sites = at < 0 || raw.indexOf('//') < 0 ? [] : [...raw.slice(at).matchAll(/([^\s@[\]]+):(\d+):(\d+)/g)]
        const outer = sites[sites.length - 1]
        if (outer) loc.inlinedAt = { file: outer[1]!, line: Number(outer[2]), column: Number(outer[3]) }
      }
      this.loc = loc
    }
    this.skipLine(line)
  }

  parseRegDecl(fn: PtxFunction): void {
    const line = this.line()
    this.next()
    let type: PtxType | undefined
    while (this.peek()?.t === 'id' && this.peek()!.v.startsWith('.')) {
      const v = this.next().v
      if (v === '.v2' || v === '.v4') throw new PtxError('vector registers are not supported', line)
      const q = v.slice(1)
      if (!isPtxType(q)) throw new PtxError(`unsupported register type \`${v}\``, line)
      type = q
    }
    if (!type) throw new PtxError('.reg without a type', line)
    for (;;) {
      const nameTok = this.expectId()
      if (this.isP('<')) {
        this.next()
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
      if (this.isP(',')) { this.next(); continue }
      break
    }
    this.expectP(';')
  }

  parseInstruction(): PtxInstruction {
    const line = this.line()
    const words: string[] = []
    const take = () => { const t = this.next(); words.push(t.t === 'str' ? JSON.stringify(t.v) : t.v); return t }
    let guard: PtxInstruction['guard']
    if (this.isP('@')) {
      take()
      let negate = false
      if (this.isP('!')) { negate = true; take() }
      const g = this.peek()
      if (!g || g.t !== 'id') throw new PtxError(`expected a name, found \`${g?.v ?? 'end of PTX'}\``, g?.line ?? line)
      guard = { reg: this.rename(take().v), negate }
    }
    const opTok = this.peek()
    if (!opTok || opTok.t !== 'id') throw new PtxError(`expected a name, found \`${opTok?.v ?? 'end of PTX'}\``, opTok?.line ?? line)
    take()
    const args: Operand[] = []
    while (!this.isP(';')) {
      args.push(this.parseOperand(take))
      if (this.isP(',')) take()
      else if (!this.isP(';')) throw new PtxError(`unexpected \`${this.peek()?.v ?? 'end of PTX'}\` in \`${opTok.v}\``, this.line())
    }
    this.next()
    const text = words.join(' ').replace(/ ([,\]\)}|])/g, '$1').replace(/([[({|]) /g, '$1').replace(/^@ (!)? ?/, '@$1')
    const ins: PtxInstruction = { kind: 'instr', op: opTok.v.split('.'), opcode: opTok.v, guard, args, line, text }
    if (this.loc) ins.loc = this.loc
    return ins
  }

  parseOperand(take: () => Token): Operand {
    const t = this.peek()
    if (!t) throw new PtxError('unexpected end of PTX', this.line())
    if (t.t === 'p') {
      // `{a, b}` (a vector) or `(a, b)` (a call's list)
      if (t.v === '{' || t.v === '(') {
        const close = t.v === '{' ? '}' : ')'
        take()
        const items: Operand[] = []
        while (!this.isP(close)) { items.push(this.parseOperand(take)); if (this.isP(',')) take() }
        take()
        return t.v === '{' ? { k: 'vec', items } : { k: 'list', items }
      }
      if (t.v === '[') {
        take()
        let base: Operand | undefined
        let offset = 0
        if (this.peek()?.t === 'id') base = { k: 'id', name: this.rename(take().v) }
        else if (this.peek()?.t === 'num') offset = Number(parseIntLiteral(take().v, t.line))
        while (this.isP('+') || this.isP('-')) {
          let sign = take().v === '-' ? -1 : 1
          if (this.isP('-')) { take(); sign = -sign }
          offset += sign * Number(parseIntLiteral(take().v, t.line))
        }
        if (!this.isP(']')) { const x = this.peek(); throw new PtxError(`expected \`]\`, found \`${x?.v ?? 'end of PTX'}\``, x?.line ?? t.line) }
        take()
        return { k: 'addr', base, offset }
      }
      if (t.v === '!') { take(); return { k: 'not', a: this.parseOperand(take) } }
      if (t.v === '-') {
        take()
        const n = this.peek()
        if (n?.t === 'num') { take(); return this.parseNumber(n.v, n.line, true) }
        return { k: 'neg', a: this.parseOperand(take) }
      }
      if (t.v === '_') { take(); return { k: 'id', name: '_' } }
      throw new PtxError(`unexpected \`${t.v}\` in an operand`, t.line)
    }
    if (t.t === 'num') { take(); return this.parseNumber(t.v, t.line, false) }
    if (t.t === 'id') {
      take()
      const a: Operand = { k: 'id', name: this.rename(t.v) }
      if (this.isP('|')) { take(); return { k: 'pair', a, b: this.parseOperand(take) } }
      return a
    }
    throw new PtxError(`unexpected \`${t.v}\` in an operand`, t.line)
  }
}

/** Parses PTX text into a module AST; throws PtxError naming the line on malformed input. */
export function parsePtx(text: string, options: ParseOptions = {}): PtxModule {
  return new Parser(text, options).parseModule()
}
