// The fallback for contexts that refuse code generation from strings (issue 14 item 3): a page whose
// Content-Security-Policy has `script-src 'self'` without 'unsafe-eval' makes `new Function` throw, so the
// module's code (emit-js.ts: exactly the text `new Function` would have compiled) is run by this interpreter
// instead. The same code means the same semantics: every instruction, bounds check and fault is the code
// generator's own, nothing about PTX is written twice; only the speed differs (closures instead of machine
// code: slower, by how much depends on the kernel).
//
// It reads the JavaScript subset the emitters write (emit-js.ts, emit-instruction.ts and the module prologue):
// declarations (let/const, object destructuring of names), function declarations and expressions, if, for,
// while, do-while, switch, labelled statements, break/continue/return/throw, and every operator but `delete`.
// The text is parsed to a small tree once, and the tree compiled to closures: each variable gets a slot of
// its function's frame at compile time (a function call allocates one frame; inner functions keep their
// parent's), each statement returns its completion (normal, break, continue, return). Anything outside the
// subset (this, arrow functions, classes, try, for-in/of, regular expressions, template literals, closures
// created inside loops, which would need a binding per iteration) is a SyntaxError naming it and its offset,
// so a new construct in the emitters fails loudly in the interpreter test rather than running wrong.

import type { Evaluate } from '../instance.js'

/** `evaluate(param, body)` of instance.ts: the function `function (param) { body }`, interpreted. */
export const interpretFactory: Evaluate = (param, body) => {
  const program = new Parser(body).program()
  const fn = new FnScope(undefined)
  const scope = new Scope(fn, undefined)
  const slot = scope.declare(param)
  const run = compileBody(program, scope, 0)
  return (arg: unknown) => {
    const f: Frame = { s: new Array<unknown>(fn.slots), p: undefined }
    f.s[slot] = arg
    return run(f) === RETURN ? takeReturn() : undefined
  }
}

// ---------------------------------------------------------------------------------------------- tokens

interface Token { t: 'id' | 'num' | 'str' | 'p' | 'eof'; v: string; value?: unknown; at: number; nl: boolean }

const PUNCT = ['>>>=', '...', '===', '!==', '**=', '<<=', '>>=', '>>>', '&&=', '||=', '??=', '=>', '==', '!=', '<=', '>=', '&&', '||', '??', '?.',
  '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<', '>>', '**', '{', '}', '(', ')', '[', ']', ';', ',', '<', '>', '+', '-', '*',
  '/', '%', '&', '|', '^', '!', '~', '?', ':', '=', '.']

function unsupported(what: string, at: number): never {
  throw new SyntaxError(`the emulator's interpreter does not support ${what} (offset ${at} of the module's code)`)
}

function scanJavaScript(src: string): Token[] {
  const out: Token[] = []
  let i = 0
  let nl = false
  const n = src.length
  while (i < n) {
    const c = src[i]!
    if (c === '\n') { nl = true; i++; continue }
    if (c === ' ' || c === '\t' || c === '\r') { i++; continue }
    if (c === '/' && src[i + 1] === '/') { while (i < n && src[i] !== '\n') i++; continue }
    if (c === '/' && src[i + 1] === '*') {
      const e = src.indexOf('*/', i + 2)
      if (src.slice(i, e).includes('\n')) nl = true
      i = e < 0 ? n : e + 2
      continue
    }
    const at = i
    if (/[A-Za-z_$]/.test(c)) {
      while (i < n && /[\w$]/.test(src[i]!)) i++
      out.push({ t: 'id', v: src.slice(at, i), at, nl })
    } else if (/\d/.test(c) || (c === '.' && /\d/.test(src[i + 1] ?? ''))) {
      const m = /^(?:0[xX][\da-fA-F]+|0[bB][01]+|0[oO][0-7]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(n?)/.exec(src.slice(i, i + 400))!
      i += m[0].length
      const text = m[1] ? m[0].slice(0, -1) : m[0]
      out.push({ t: 'num', v: m[0], value: m[1] ? BigInt(text) : Number(text), at, nl })
    } else if (c === '"' || c === "'") {
      i++
      let s = ''
      while (i < n && src[i] !== c) {
        if (src[i] !== '\\') { s += src[i++]; continue }
        const e = src[i + 1]!
        i += 2
        if (e === 'n') s += '\n'
        else if (e === 't') s += '\t'
        else if (e === 'r') s += '\r'
        else if (e === 'b') s += '\b'
        else if (e === 'f') s += '\f'
        else if (e === 'v') s += '\v'
        else if (e === '0' && !/\d/.test(src[i] ?? '')) s += '\0'
        else if (e === 'x') { s += String.fromCharCode(parseInt(src.slice(i, i + 2), 16)); i += 2 }
        else if (e === 'u' && src[i] === '{') { const end = src.indexOf('}', i); s += String.fromCodePoint(parseInt(src.slice(i + 1, end), 16)); i = end + 1 }
        else if (e === 'u') { s += String.fromCharCode(parseInt(src.slice(i, i + 4), 16)); i += 4 }
        else if (e === '\n') { /* line continuation */ } else s += e
      }
      if (i >= n) unsupported('an unterminated string', at)
      i++
      out.push({ t: 'str', v: s, at, nl })
    } else if (c === '`') unsupported('template literals', at)
    else {
      const p = PUNCT.find((q) => src.startsWith(q, i) && !(q === '?.' && /\d/.test(src[i + 2] ?? '')))
      if (!p) unsupported(`the character ${JSON.stringify(c)}`, at)
      i += p.length
      out.push({ t: 'p', v: p, at, nl })
    }
    nl = false
  }
  out.push({ t: 'eof', v: '', at: n, nl: true })
  return out
}

// ------------------------------------------------------------------------------------------------- tree

type Node =
  | { k: 'num' | 'str'; value: unknown }
  | { k: 'id'; name: string; at: number }
  | { k: 'arr'; items: Node[] }
  | { k: 'obj'; props: Array<{ key: string; value: Node }> }
  | { k: 'fn'; name?: string; params: string[]; body: Stmt[]; at: number }
  | { k: 'unary'; op: string; a: Node }
  | { k: 'update'; op: '++' | '--'; prefix: boolean; a: Node }
  | { k: 'bin'; op: string; a: Node; b: Node }
  | { k: 'logic'; op: '&&' | '||' | '??'; a: Node; b: Node }
  | { k: 'assign'; op: string; a: Node; b: Node }
  | { k: 'cond'; c: Node; a: Node; b: Node }
  | { k: 'seq'; items: Node[] }
  | { k: 'member'; o: Node; key: Node }
  | { k: 'call'; callee: Node; args: Node[] }
  | { k: 'new'; callee: Node; args: Node[] }

type Stmt =
  | { k: 'expr'; e: Node }
  | { k: 'decl'; items: Array<{ names: string[]; pattern: boolean; init?: Node }> }
  | { k: 'fndecl'; fn: Extract<Node, { k: 'fn' }> & { name: string } }
  | { k: 'block'; body: Stmt[] }
  | { k: 'if'; c: Node; a: Stmt; b?: Stmt }
  | { k: 'for'; init?: Stmt; test?: Node; update?: Node; body: Stmt }
  | { k: 'while'; test: Node; body: Stmt }
  | { k: 'do'; test: Node; body: Stmt }
  | { k: 'switch'; d: Node; cases: Array<{ test?: Node; body: Stmt[] }> }
  | { k: 'label'; label: string; body: Stmt }
  | { k: 'break' | 'continue'; label?: string }
  | { k: 'return'; e?: Node }
  | { k: 'throw'; e: Node }
  | { k: 'empty' }

const BINARY: Record<string, number> = {
  '??': 1, '||': 2, '&&': 3, '|': 4, '^': 5, '&': 6, '==': 7, '!=': 7, '===': 7, '!==': 7,
  '<': 8, '>': 8, '<=': 8, '>=': 8, instanceof: 8, in: 8, '<<': 9, '>>': 9, '>>>': 9, '+': 10, '-': 10, '*': 11, '/': 11, '%': 11,
}
const ASSIGN = new Set(['=', '+=', '-=', '*=', '/=', '%=', '**=', '<<=', '>>=', '>>>=', '&=', '|=', '^=', '&&=', '||=', '??='])

class Parser {
  private readonly toks: Token[]
  private i = 0
  constructor(src: string) { this.toks = scanJavaScript(src) }

  private get tok(): Token { return this.toks[this.i]! }
  private is(v: string): boolean { const t = this.tok; return (t.t === 'p' || t.t === 'id') && t.v === v }
  private eat(v: string): boolean { if (this.is(v)) { this.i++; return true } return false }
  private expect(v: string): Token {
    if (!this.is(v)) unsupported(`\`${this.tok.v || 'end of text'}\` where \`${v}\` was expected`, this.tok.at)
    return this.toks[this.i++]!
  }
  private ident(): string {
    const t = this.tok
    if (t.t !== 'id') unsupported(`\`${t.v}\` where a name was expected`, t.at)
    this.i++
    return t.v
  }
  /** Automatic semicolon insertion where the emitters rely on it: before `}`, a new line or the end. */
  private semi(): void {
    if (this.eat(';')) return
    if (this.is('}') || this.tok.t === 'eof' || this.tok.nl) return
    unsupported(`\`${this.tok.v}\` where \`;\` was expected`, this.tok.at)
  }

  program(): Stmt[] {
    const out: Stmt[] = []
    while (this.tok.t !== 'eof') out.push(this.statement())
    return out
  }

  private statement(): Stmt {
    const t = this.tok
    if (t.t === 'p' && t.v === '{') { this.i++; return { k: 'block', body: this.until('}') } }
    if (t.t === 'p' && t.v === ';') { this.i++; return { k: 'empty' } }
    if (t.t === 'id') {
      switch (t.v) {
        case 'const': case 'let': case 'var': { const d = this.declaration(); this.semi(); return d }
        case 'function': {
          const fn = this.functionExpr()
          if (!fn.name) unsupported('a function declaration without a name', t.at)
          return { k: 'fndecl', fn: fn as Extract<Node, { k: 'fn' }> & { name: string } }
        }
        case 'if': {
          this.i++; this.expect('(')
          const c = this.expression(); this.expect(')')
          const a = this.statement()
          return this.eat('else') ? { k: 'if', c, a, b: this.statement() } : { k: 'if', c, a }
        }
        case 'for': {
          this.i++; this.expect('(')
          let init: Stmt | undefined
          if (this.is('const') || this.is('let') || this.is('var')) init = this.declaration()
          else if (!this.is(';')) init = { k: 'expr', e: this.expression() }
          if (this.is('of') || this.is('in')) unsupported(`for-${this.tok.v} loops`, this.tok.at)
          this.expect(';')
          const test = this.is(';') ? undefined : this.expression()
          this.expect(';')
          const update = this.is(')') ? undefined : this.expression()
          this.expect(')')
          return { k: 'for', init, test, update, body: this.statement() }
        }
        case 'while': {
          this.i++; this.expect('(')
          const test = this.expression(); this.expect(')')
          return { k: 'while', test, body: this.statement() }
        }
        case 'do': {
          this.i++
          const body = this.statement()
          this.expect('while'); this.expect('(')
          const test = this.expression(); this.expect(')'); this.eat(';')
          return { k: 'do', test, body }
        }
        case 'switch': {
          this.i++; this.expect('(')
          const d = this.expression(); this.expect(')'); this.expect('{')
          const cases: Array<{ test?: Node; body: Stmt[] }> = []
          while (!this.eat('}')) {
            let test: Node | undefined
            if (this.eat('default')) test = undefined
            else { this.expect('case'); test = this.expression() }
            this.expect(':')
            const body: Stmt[] = []
            while (!this.is('case') && !this.is('default') && !this.is('}')) body.push(this.statement())
            cases.push(test ? { test, body } : { body })
          }
          return { k: 'switch', d, cases }
        }
        case 'break': case 'continue': {
          this.i++
          const label = this.tok.t === 'id' && !this.tok.nl ? this.ident() : undefined
          this.semi()
          return label ? { k: t.v, label } : { k: t.v }
        }
        case 'return': {
          this.i++
          const e = this.is(';') || this.is('}') || this.tok.nl || this.tok.t === 'eof' ? undefined : this.expression()
          this.semi()
          return e ? { k: 'return', e } : { k: 'return' }
        }
        case 'throw': { this.i++; const e = this.expression(); this.semi(); return { k: 'throw', e } }
        case 'try': case 'class': case 'with': case 'import': case 'export': case 'yield': case 'async': case 'await':
          return unsupported(`\`${t.v}\``, t.at)
      }
      if (this.toks[this.i + 1]?.v === ':' && this.toks[this.i + 1]?.t === 'p') {
        this.i += 2
        return { k: 'label', label: t.v, body: this.statement() }
      }
    }
    const e = this.expression()
    this.semi()
    return { k: 'expr', e }
  }

  private until(close: string): Stmt[] {
    const out: Stmt[] = []
    while (!this.eat(close)) {
      if (this.tok.t === 'eof') unsupported(`the end of text where \`${close}\` was expected`, this.tok.at)
      out.push(this.statement())
    }
    return out
  }

  private declaration(): Stmt {
    this.i++
    const items: Array<{ names: string[]; pattern: boolean; init?: Node }> = []
    do {
      if (this.eat('{')) {
        // object destructuring of plain names: const {a,b}=E.h
        const names: string[] = []
        while (!this.eat('}')) {
          const name = this.ident()
          if (this.is(':') || this.is('=')) unsupported('renaming or defaults in destructuring', this.tok.at)
          names.push(name)
          if (!this.is('}')) this.expect(',')
        }
        this.expect('=')
        items.push({ names, pattern: true, init: this.assignment() })
      } else {
        if (this.is('[')) unsupported('array destructuring', this.tok.at)
        const name = this.ident()
        items.push(this.eat('=') ? { names: [name], pattern: false, init: this.assignment() } : { names: [name], pattern: false })
      }
    } while (this.eat(','))
    return { k: 'decl', items }
  }

  private functionExpr(): Extract<Node, { k: 'fn' }> {
    const at = this.expect('function').at
    if (this.is('*')) unsupported('generators', at)
    const name = this.tok.t === 'id' ? this.ident() : undefined
    return this.functionRest(name, at)
  }

  private functionRest(name: string | undefined, at: number): Extract<Node, { k: 'fn' }> {
    this.expect('(')
    const params: string[] = []
    while (!this.eat(')')) {
      if (this.is('...') || this.is('{') || this.is('[')) unsupported('rest or destructured parameters', this.tok.at)
      params.push(this.ident())
      if (this.is('=')) unsupported('default parameters', this.tok.at)
      if (!this.is(')')) this.expect(',')
    }
    this.expect('{')
    const body = this.until('}')
    return name === undefined ? { k: 'fn', params, body, at } : { k: 'fn', name, params, body, at }
  }

  expression(): Node {
    const first = this.assignment()
    if (!this.is(',')) return first
    const items = [first]
    while (this.eat(',')) items.push(this.assignment())
    return { k: 'seq', items }
  }

  private assignment(): Node {
    const at = this.tok.at
    const a = this.conditional()
    if (this.is('=>')) unsupported('arrow functions', at)
    const t = this.tok
    if (t.t === 'p' && ASSIGN.has(t.v)) {
      if (a.k !== 'id' && a.k !== 'member') unsupported('assignment to something other than a name or a property', t.at)
      this.i++
      return { k: 'assign', op: t.v, a, b: this.assignment() }
    }
    return a
  }

  private conditional(): Node {
    const c = this.binary(1)
    if (!this.eat('?')) return c
    const a = this.assignment()
    this.expect(':')
    return { k: 'cond', c, a, b: this.assignment() }
  }

  private binary(min: number): Node {
    let left = this.exponent()
    for (;;) {
      const t = this.tok
      const prec = (t.t === 'p' || t.t === 'id') ? BINARY[t.v] : undefined
      if (prec === undefined || prec < min) return left
      this.i++
      const right = this.binary(prec + 1)
      left = t.v === '&&' || t.v === '||' || t.v === '??' ? { k: 'logic', op: t.v, a: left, b: right } : { k: 'bin', op: t.v, a: left, b: right }
    }
  }

  private exponent(): Node {
    const base = this.unary()
    if (!this.eat('**')) return base
    return { k: 'bin', op: '**', a: base, b: this.exponent() }
  }

  private unary(): Node {
    const t = this.tok
    if (t.t === 'p' && (t.v === '!' || t.v === '~' || t.v === '+' || t.v === '-')) { this.i++; return { k: 'unary', op: t.v, a: this.unary() } }
    if (t.t === 'id' && (t.v === 'typeof' || t.v === 'void')) { this.i++; return { k: 'unary', op: t.v, a: this.unary() } }
    if (t.t === 'id' && (t.v === 'delete' || t.v === 'await')) unsupported(`\`${t.v}\``, t.at)
    if (t.t === 'p' && (t.v === '++' || t.v === '--')) {
      this.i++
      const a = this.unary()
      if (a.k !== 'id' && a.k !== 'member') unsupported(`${t.v} of something other than a name or a property`, t.at)
      return { k: 'update', op: t.v, prefix: true, a }
    }
    const e = this.postfix()
    const p = this.tok
    if (p.t === 'p' && (p.v === '++' || p.v === '--') && !p.nl) {
      if (e.k !== 'id' && e.k !== 'member') unsupported(`${p.v} of something other than a name or a property`, p.at)
      this.i++
      return { k: 'update', op: p.v, prefix: false, a: e }
    }
    return e
  }

  private postfix(): Node {
    let e: Node
    if (this.is('new')) {
      this.i++
      const callee = this.memberOnly()
      const args = this.is('(') ? this.args() : []
      e = { k: 'new', callee, args }
    } else e = this.primary()
    for (;;) {
      if (this.eat('.')) e = { k: 'member', o: e, key: { k: 'str', value: this.ident() } }
      else if (this.eat('[')) { const key = this.expression(); this.expect(']'); e = { k: 'member', o: e, key } }
      else if (this.is('(')) e = { k: 'call', callee: e, args: this.args() }
      else if (this.is('?.')) unsupported('optional chaining', this.tok.at)
      else return e
    }
  }

  /** The callee of `new`: a name and its properties, without calls. */
  private memberOnly(): Node {
    let e = this.primary()
    for (;;) {
      if (this.eat('.')) e = { k: 'member', o: e, key: { k: 'str', value: this.ident() } }
      else if (this.eat('[')) { const key = this.expression(); this.expect(']'); e = { k: 'member', o: e, key } }
      else return e
    }
  }

  private args(): Node[] {
    this.expect('(')
    const out: Node[] = []
    while (!this.eat(')')) {
      if (this.is('...')) unsupported('spread arguments', this.tok.at)
      out.push(this.assignment())
      if (!this.is(')')) this.expect(',')
    }
    return out
  }

  private primary(): Node {
    const t = this.tok
    if (t.t === 'num' || t.t === 'str') { this.i++; return { k: t.t, value: t.t === 'num' ? t.value : t.v } }
    if (t.t === 'p' && t.v === '(') {
      this.i++
      if (this.is(')')) unsupported('arrow functions', t.at)
      const e = this.expression()
      this.expect(')')
      return e
    }
    if (t.t === 'p' && t.v === '[') {
      this.i++
      const items: Node[] = []
      while (!this.eat(']')) {
        if (this.is(',') || this.is('...')) unsupported('holes or spread in array literals', this.tok.at)
        items.push(this.assignment())
        if (!this.is(']')) this.expect(',')
      }
      return { k: 'arr', items }
    }
    if (t.t === 'p' && t.v === '{') {
      this.i++
      const props: Array<{ key: string; value: Node }> = []
      while (!this.eat('}')) {
        const kt = this.tok
        if (kt.t !== 'id' && kt.t !== 'str' && kt.t !== 'num') unsupported(`\`${kt.v}\` as a property name`, kt.at)
        this.i++
        const key = kt.t === 'num' ? String(kt.value) : kt.v
        if (kt.t === 'id' && (key === 'get' || key === 'set') && this.tok.t === 'id') unsupported('getters and setters', kt.at)
        if (this.eat(':')) props.push({ key, value: this.assignment() })
        else if (this.is('(')) props.push({ key, value: this.functionRest(undefined, kt.at) })
        else if (kt.t === 'id') props.push({ key, value: { k: 'id', name: key, at: kt.at } })
        else unsupported(`\`${this.tok.v}\` in an object literal`, this.tok.at)
        if (!this.is('}')) this.expect(',')
      }
      return { k: 'obj', props }
    }
    if (t.t === 'id') {
      if (t.v === 'function') return this.functionExpr()
      if (t.v === 'this' || t.v === 'class' || t.v === 'super' || t.v === 'arguments' || t.v === 'yield') unsupported(`\`${t.v}\``, t.at)
      this.i++
      if (t.v === 'true') return { k: 'num', value: true }
      if (t.v === 'false') return { k: 'num', value: false }
      if (t.v === 'null') return { k: 'num', value: null }
      return { k: 'id', name: t.v, at: t.at }
    }
    if (t.t === 'p' && t.v === '/') unsupported('regular expressions', t.at)
    return unsupported(`\`${t.v || 'end of text'}\` where an expression was expected`, t.at)
  }
}

// ---------------------------------------------------------------------------------------------- compile

/** A function call's variables: slots by compile-time index; `p`, the frame the function was created in. */
interface Frame { s: unknown[]; p: Frame | undefined }
type Ev = (f: Frame) => unknown
type Ex = (f: Frame) => number

// Completions: a statement returns NORMAL or how it ends abruptly; the label of a break/continue and the
// value of a return wait in these two variables until the statement that handles them takes them (nothing
// runs in between: evaluation is synchronous and propagation runs no code).
const NORMAL = 0, BREAK = 1, CONTINUE = 2, RETURN = 3
let pendingLabel: string | undefined
let pendingValue: unknown
function takeReturn(): unknown { const v = pendingValue; pendingValue = undefined; return v }

class FnScope {
  slots = 0
  /** Inside a loop (a function created there would need a binding per iteration). */
  loops = 0
  constructor(readonly parent: FnScope | undefined) {}
}

class Scope {
  readonly names = new Map<string, number>()
  constructor(readonly fn: FnScope, readonly parent: Scope | undefined) {}
  declare(name: string): number {
    let s = this.names.get(name)
    if (s === undefined) { s = this.fn.slots++; this.names.set(name, s) }
    return s
  }
  /** [functions up, slot], or undefined for a global of the host (Math, typed arrays, BigInt…). */
  resolve(name: string): [number, number] | undefined {
    let depth = 0
    for (let s: Scope | undefined = this; s; s = s.parent) {
      const slot = s.names.get(name)
      if (slot !== undefined) return [depth, slot]
      if (s.parent && s.parent.fn !== s.fn) depth++
    }
    return undefined
  }
}

function frameAt(f: Frame, depth: number): Frame {
  for (let d = 0; d < depth; d++) f = f.p!
  return f
}

/** Declares the block's own names first (let/const/functions are visible in the whole block), then compiles
 *  its statements; function declarations are created on entry. */
function compileBody(body: Stmt[], scope: Scope, loops: number): Ex {
  for (const s of body) {
    if (s.k === 'decl') for (const it of s.items) for (const n of it.names) scope.declare(n)
    if (s.k === 'fndecl') scope.declare(s.fn.name)
  }
  const fns: Array<[number, Ev]> = body.filter((s): s is Extract<Stmt, { k: 'fndecl' }> => s.k === 'fndecl')
    .map((s) => [scope.names.get(s.fn.name)!, compileFunction(s.fn, scope, loops)])
  const list = body.filter((s) => s.k !== 'fndecl' && s.k !== 'empty').map((s) => compileStmt(s, scope, loops))
  const n = list.length
  const run: Ex = n === 1 ? list[0]! : (f) => {
    for (let i = 0; i < n; i++) { const c = list[i]!(f); if (c !== NORMAL) return c }
    return NORMAL
  }
  if (!fns.length) return run
  return (f) => {
    for (const [slot, make] of fns) f.s[slot] = make(f)
    return run(f)
  }
}

function compileFunction(node: Extract<Node, { k: 'fn' }>, outer: Scope, loops: number): Ev {
  if (loops > 0) unsupported('a function created inside a loop', node.at)
  const fn = new FnScope(outer.fn)
  let scope = new Scope(fn, outer)
  // a named function expression sees its own name
  let selfSlot = -1
  if (node.name !== undefined) { selfSlot = scope.declare(node.name); scope = new Scope(fn, scope) }
  const params = node.params.map((p) => scope.declare(p))
  const body = compileBody(node.body, scope, 0)
  const np = params.length
  return (parent) => {
    const self = function (...args: unknown[]): unknown {
      const f: Frame = { s: new Array<unknown>(fn.slots), p: parent }
      if (selfSlot >= 0) f.s[selfSlot] = self
      for (let i = 0; i < np; i++) f.s[params[i]!] = args[i]
      return body(f) === RETURN ? takeReturn() : undefined
    }
    return self
  }
}

/** Runs a loop body's completion: true to leave the loop (break), a completion to pass on, or NORMAL. */
function loopControl(c: number, labels: ReadonlySet<string>): number | true {
  if (c === BREAK) {
    if (pendingLabel === undefined || labels.has(pendingLabel)) { pendingLabel = undefined; return true }
    return c
  }
  if (c === CONTINUE) {
    if (pendingLabel === undefined || labels.has(pendingLabel)) { pendingLabel = undefined; return NORMAL }
    return c
  }
  return c
}

function compileStmt(s: Stmt, scope: Scope, loops: number, labels: ReadonlySet<string> = new Set()): Ex {
  switch (s.k) {
    case 'expr': {
      const e = compileExpr(s.e, scope, loops)
      return (f) => { e(f); return NORMAL }
    }
    case 'decl': {
      const parts: Ex[] = s.items.map((it) => {
        const slots = it.names.map((n) => scope.declare(n))
        if (!it.init) return (f) => { f.s[slots[0]!] = undefined; return NORMAL }
        const init = compileExpr(it.init, scope, loops)
        if (!it.pattern) { const slot = slots[0]!; return (f) => { f.s[slot] = init(f); return NORMAL } }
        const names = it.names
        return (f) => {
          const o = init(f) as Record<string, unknown>
          for (let i = 0; i < names.length; i++) f.s[slots[i]!] = o[names[i]!]
          return NORMAL
        }
      })
      return parts.length === 1 ? parts[0]! : (f) => { for (const p of parts) p(f); return NORMAL }
    }
    case 'block': return compileBody(s.body, new Scope(scope.fn, scope), loops)
    case 'if': {
      const c = compileExpr(s.c, scope, loops)
      const a = compileStmt(s.a, new Scope(scope.fn, scope), loops)
      if (!s.b) return (f) => (c(f) ? a(f) : NORMAL)
      const b = compileStmt(s.b, new Scope(scope.fn, scope), loops)
      return (f) => (c(f) ? a(f) : b(f))
    }
    case 'for': {
      const inner = new Scope(scope.fn, scope)
      const init = s.init ? compileStmt(s.init, inner, loops) : undefined
      const test = s.test ? compileExpr(s.test, inner, loops + 1) : undefined
      const update = s.update ? compileExpr(s.update, inner, loops + 1) : undefined
      const body = compileStmt(s.body, new Scope(scope.fn, inner), loops + 1)
      return (f) => {
        if (init) init(f)
        for (;;) {
          if (test && !test(f)) return NORMAL
          const c = body(f)
          if (c !== NORMAL) { const r = loopControl(c, labels); if (r === true) return NORMAL; if (r !== NORMAL) return r }
          if (update) update(f)
        }
      }
    }
    case 'while': case 'do': {
      const test = compileExpr(s.test, scope, loops + 1)
      const body = compileStmt(s.body, new Scope(scope.fn, scope), loops + 1)
      const first = s.k === 'do'
      return (f) => {
        for (let once = first; once || test(f); once = false) {
          const c = body(f)
          if (c !== NORMAL) { const r = loopControl(c, labels); if (r === true) return NORMAL; if (r !== NORMAL) return r }
        }
        return NORMAL
      }
    }
    case 'switch': {
      const d = compileExpr(s.d, scope, loops)
      const inner = new Scope(scope.fn, scope)
      for (const c of s.cases) for (const st of c.body) {
        if (st.k === 'decl') for (const it of st.items) for (const n of it.names) inner.declare(n)
        if (st.k === 'fndecl') unsupported('a function declared in a switch case', st.fn.at)
      }
      const tests = s.cases.map((c) => (c.test ? compileExpr(c.test, inner, loops) : undefined))
      const bodies = s.cases.map((c) => compileBody(c.body, inner, loops))
      const def = s.cases.findIndex((c) => !c.test)
      const n = bodies.length
      return (f) => {
        const v = d(f)
        let from = -1
        for (let i = 0; i < n; i++) { const t = tests[i]; if (t && t(f) === v) { from = i; break } }
        if (from < 0) from = def
        if (from < 0) return NORMAL
        for (let i = from; i < n; i++) {
          const c = bodies[i]!(f)
          if (c === NORMAL) continue
          if (c === BREAK && pendingLabel === undefined) return NORMAL
          return c
        }
        return NORMAL
      }
    }
    case 'label': {
      const all = new Set(labels).add(s.label)
      const isLoop = s.body.k === 'for' || s.body.k === 'while' || s.body.k === 'do'
      const body = compileStmt(s.body, scope, loops, isLoop ? all : new Set())
      const label = s.label
      return (f) => {
        const c = body(f)
        if (c === BREAK && pendingLabel === label) { pendingLabel = undefined; return NORMAL }
        return c
      }
    }
    case 'break': case 'continue': {
      const code = s.k === 'break' ? BREAK : CONTINUE
      const label = s.label
      return () => { pendingLabel = label; return code }
    }
    case 'return': {
      const e = s.e ? compileExpr(s.e, scope, loops) : undefined
      return (f) => { pendingValue = e ? e(f) : undefined; return RETURN }
    }
    case 'throw': {
      const e = compileExpr(s.e, scope, loops)
      return (f) => { throw e(f) }
    }
    case 'empty': return () => NORMAL
    case 'fndecl': return unsupported('a function declaration here', s.fn.at)
  }
}

/** Reads and writes of an assignable expression: a variable or a property. */
interface Place { get: (f: Frame) => [unknown, unknown]; read: (o: unknown, k: unknown) => unknown; write: (o: unknown, k: unknown, v: unknown) => void }

function placeOf(n: Node, scope: Scope, loops: number): Place {
  if (n.k === 'id') {
    const r = scope.resolve(n.name)
    const name = n.name
    if (!r) {
      return {
        get: () => [globalThis, name],
        read: (o, k) => {
          if (!(name in globalThis)) throw new ReferenceError(`${name} is not defined`)
          return (o as Record<string, unknown>)[k as string]
        },
        write: () => { throw new ReferenceError(`${name} is not defined`) },
      }
    }
    const [depth, slot] = r
    return { get: (f) => [frameAt(f, depth).s, slot], read: (o, k) => (o as unknown[])[k as number], write: (o, k, v) => { (o as unknown[])[k as number] = v } }
  }
  if (n.k !== 'member') return unsupported('assignment to this kind of expression', 0)
  const o = compileExpr(n.o, scope, loops)
  const k = compileExpr(n.key, scope, loops)
  return {
    get: (f) => { const ov = o(f); return [ov, k(f)] },
    read: (ov, kv) => (ov as Record<PropertyKey, unknown>)[kv as PropertyKey],
    write: (ov, kv, v) => { (ov as Record<PropertyKey, unknown>)[kv as PropertyKey] = v },
  }
}

/* eslint-disable @typescript-eslint/no-explicit-any -- the operators take whatever JavaScript gives them */
function binaryOp(op: string): (a: any, b: any) => unknown {
  switch (op) {
    case '+': return (a, b) => a + b
    case '-': return (a, b) => a - b
    case '*': return (a, b) => a * b
    case '/': return (a, b) => a / b
    case '%': return (a, b) => a % b
    case '**': return (a, b) => a ** b
    case '<<': return (a, b) => a << b
    case '>>': return (a, b) => a >> b
    case '>>>': return (a, b) => a >>> b
    case '&': return (a, b) => a & b
    case '|': return (a, b) => a | b
    case '^': return (a, b) => a ^ b
    case '==': return (a, b) => a == b // eslint-disable-line eqeqeq
    case '!=': return (a, b) => a != b // eslint-disable-line eqeqeq
    case '===': return (a, b) => a === b
    case '!==': return (a, b) => a !== b
    case '<': return (a, b) => a < b
    case '>': return (a, b) => a > b
    case '<=': return (a, b) => a <= b
    case '>=': return (a, b) => a >= b
    case 'instanceof': return (a, b) => a instanceof b
    case 'in': return (a, b) => a in b
  }
  return unsupported(`the operator ${op}`, 0)
}

function compileExpr(n: Node, scope: Scope, loops: number): Ev {
  switch (n.k) {
    case 'num': case 'str': { const v = n.value; return () => v }
    case 'id': {
      const r = scope.resolve(n.name)
      if (!r) {
        // the host's globals the code reads are its built-ins (Math, typed arrays, BigInt): read once
        const name = n.name
        let found = false, value: unknown
        return () => {
          if (found) return value
          if (!(name in globalThis)) throw new ReferenceError(`${name} is not defined`)
          value = (globalThis as Record<string, unknown>)[name]
          found = true
          return value
        }
      }
      const [depth, slot] = r
      if (depth === 0) return (f) => f.s[slot]
      if (depth === 1) return (f) => f.p!.s[slot]
      return (f) => frameAt(f, depth).s[slot]
    }
    case 'arr': {
      const items = n.items.map((x) => compileExpr(x, scope, loops))
      return (f) => items.map((x) => x(f))
    }
    case 'obj': {
      const props = n.props.map((p) => [p.key, compileExpr(p.value, scope, loops)] as const)
      return (f) => {
        const o: Record<string, unknown> = {}
        for (const [k, v] of props) o[k] = v(f)
        return o
      }
    }
    case 'fn': return compileFunction(n, scope, loops)
    case 'unary': {
      if (n.op === 'typeof' && n.a.k === 'id' && !scope.resolve(n.a.name)) {
        const name = n.a.name
        return () => typeof (globalThis as Record<string, unknown>)[name]
      }
      const a = compileExpr(n.a, scope, loops)
      switch (n.op) {
        case '!': return (f) => !a(f)
        case '~': return (f) => ~(a(f) as any)
        case '-': return (f) => -(a(f) as any)
        case '+': return (f) => +(a(f) as any)
        case 'typeof': return (f) => typeof a(f)
        case 'void': return (f) => { a(f); return undefined }
      }
      return unsupported(`the operator ${n.op}`, 0)
    }
    case 'update': {
      const p = placeOf(n.a, scope, loops)
      const inc = n.op === '++'
      const prefix = n.prefix
      return (f) => {
        const [o, k] = p.get(f)
        let v = p.read(o, k) as any
        const old = inc ? v++ : v--
        p.write(o, k, v)
        return prefix ? v : old
      }
    }
    case 'bin': {
      const a = compileExpr(n.a, scope, loops), b = compileExpr(n.b, scope, loops)
      switch (n.op) {
        // the frequent ones without the extra call
        case '+': return (f) => (a(f) as any) + (b(f) as any)
        case '-': return (f) => (a(f) as any) - (b(f) as any)
        case '*': return (f) => (a(f) as any) * (b(f) as any)
        case '&': return (f) => (a(f) as any) & (b(f) as any)
        case '|': return (f) => (a(f) as any) | (b(f) as any)
        case '>>>': return (f) => (a(f) as any) >>> (b(f) as any)
        case '<': return (f) => (a(f) as any) < (b(f) as any)
        case '===': return (f) => a(f) === b(f)
        case '!==': return (f) => a(f) !== b(f)
      }
      const op = binaryOp(n.op)
      return (f) => op(a(f), b(f))
    }
    case 'logic': {
      const a = compileExpr(n.a, scope, loops), b = compileExpr(n.b, scope, loops)
      if (n.op === '&&') return (f) => a(f) && b(f)
      if (n.op === '||') return (f) => a(f) || b(f)
      return (f) => a(f) ?? b(f)
    }
    case 'assign': {
      const p = placeOf(n.a, scope, loops)
      const b = compileExpr(n.b, scope, loops)
      if (n.op === '=') {
        if (n.a.k === 'id') {
          const r = scope.resolve(n.a.name)
          if (r && r[0] === 0) { const slot = r[1]; return (f) => (f.s[slot] = b(f)) }
        }
        if (n.a.k === 'member') {
          // a store: no temporaries
          const o = compileExpr(n.a.o, scope, loops), k = compileExpr(n.a.key, scope, loops)
          return (f) => { const ov = o(f) as any; const kv = k(f) as PropertyKey; return (ov[kv] = b(f)) }
        }
        return (f) => { const [o, k] = p.get(f); const v = b(f); p.write(o, k, v); return v }
      }
      if (n.op === '&&=' || n.op === '||=' || n.op === '??=') {
        const op = n.op
        return (f) => {
          const [o, k] = p.get(f)
          const cur = p.read(o, k)
          if (op === '&&=' ? !cur : op === '||=' ? cur : cur !== undefined && cur !== null) return cur
          const v = b(f)
          p.write(o, k, v)
          return v
        }
      }
      const op = binaryOp(n.op.slice(0, -1))
      return (f) => { const [o, k] = p.get(f); const v = op(p.read(o, k), b(f)); p.write(o, k, v); return v }
    }
    case 'cond': {
      const c = compileExpr(n.c, scope, loops), a = compileExpr(n.a, scope, loops), b = compileExpr(n.b, scope, loops)
      return (f) => (c(f) ? a(f) : b(f))
    }
    case 'seq': {
      const items = n.items.map((x) => compileExpr(x, scope, loops))
      return (f) => { let v: unknown; for (const x of items) v = x(f); return v }
    }
    case 'member': {
      const o = compileExpr(n.o, scope, loops), k = compileExpr(n.key, scope, loops)
      return (f) => (o(f) as any)[k(f) as PropertyKey]
    }
    case 'call': {
      const args = n.args.map((x) => compileExpr(x, scope, loops))
      const na = args.length
      if (n.callee.k === 'member') {
        // a method call: `this` is the object
        const o = compileExpr(n.callee.o, scope, loops), k = compileExpr(n.callee.key, scope, loops)
        return (f) => {
          const ov = o(f) as any
          const m = ov[k(f) as PropertyKey] as (...a: unknown[]) => unknown
          if (na === 1) return m.call(ov, args[0]!(f))
          const vals = new Array<unknown>(na)
          for (let i = 0; i < na; i++) vals[i] = args[i]!(f)
          return m.apply(ov, vals)
        }
      }
      const c = compileExpr(n.callee, scope, loops)
      const a0 = args[0], a1 = args[1], a2 = args[2]
      if (na === 0) return (f) => (c(f) as () => unknown)()
      if (na === 1) return (f) => (c(f) as (x: unknown) => unknown)(a0!(f))
      if (na === 2) return (f) => (c(f) as (x: unknown, y: unknown) => unknown)(a0!(f), a1!(f))
      if (na === 3) return (f) => (c(f) as (x: unknown, y: unknown, z: unknown) => unknown)(a0!(f), a1!(f), a2!(f))
      return (f) => {
        const fn = c(f) as (...a: unknown[]) => unknown
        const vals = new Array<unknown>(na)
        for (let i = 0; i < na; i++) vals[i] = args[i]!(f)
        return fn(...vals)
      }
    }
    case 'new': {
      const c = compileExpr(n.callee, scope, loops)
      const args = n.args.map((x) => compileExpr(x, scope, loops))
      return (f) => Reflect.construct(c(f) as new (...a: unknown[]) => unknown, args.map((x) => x(f)))
    }
  }
}
/* eslint-enable @typescript-eslint/no-explicit-any */
