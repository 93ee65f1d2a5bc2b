// A small Itanium C++ demangler for the names messages print (a device function a kernel calls, a kernel a
// translator refuses) where no system demangler can run: in a browser, the WebGPU backend translates at load
// time. It reads function names whose parts are plain or nested (`ns::f`), with parameters of the built-in
// types, pointers, references, const/volatile and class types, and substitutions (`S_`, `S0_`); anything
// else (templates, operators, special names, function types) is left to the build's demangler, c++filt in
// @kernelpack/toolchain: `demangleFunctionName` then returns undefined. The output is c++filt's
// (`f(float const*, unsigned int)`), so the two agree where both answer.

const BUILTIN: Record<string, string> = {
  v: 'void', w: 'wchar_t', b: 'bool', c: 'char', a: 'signed char', h: 'unsigned char', s: 'short', t: 'unsigned short',
  i: 'int', j: 'unsigned int', l: 'long', m: 'unsigned long', x: 'long long', y: 'unsigned long long',
  n: '__int128', o: 'unsigned __int128', f: 'float', d: 'double', e: 'long double', g: '__float128', z: '...',
}

class Reader {
  at = 0
  readonly subs: string[] = []
  constructor(readonly s: string) {}
  peek(): string { return this.s[this.at] ?? '' }
  next(): string { return this.s[this.at++] ?? '' }
  fail(): never { throw new Unsupported() }

  sourceName(): string {
    const m = /^\d+/.exec(this.s.slice(this.at))
    if (!m) this.fail()
    const len = Number(m[0])
    this.at += m[0].length
    const id = this.s.slice(this.at, this.at + len)
    if (id.length !== len || !/^[A-Za-z_$][\w$]*$/.test(id)) this.fail()
    this.at += len
    // the compiler's name of an anonymous namespace
    return id.startsWith('_GLOBAL__N') ? '(anonymous namespace)' : id
  }

  /** `N [K|V] <source-name>+ E` or one source name; a nested name's prefixes are substitution candidates. */
  name(addSubs: boolean): string {
    if (this.peek() !== 'N') return this.sourceName()
    this.next()
    while (this.peek() === 'K' || this.peek() === 'V') this.next()
    const parts: string[] = []
    // a prefix may start with a substitution (`NS_1SE`: the first substitution, then S)
    if (this.peek() === 'S') parts.push(this.substitution())
    while (this.peek() !== 'E') {
      if (!/\d/.test(this.peek())) this.fail()
      parts.push(this.sourceName())
      if (addSubs || this.peek() !== 'E') this.subs.push(parts.join('::'))
    }
    this.next()
    return parts.join('::')
  }

  /** `S_`, `S0_`, `S1_`…: an earlier component (the `St`/`Sa`… abbreviations of std are not read). */
  substitution(): string {
    this.next()
    const m = /^([0-9A-Z]*)_/.exec(this.s.slice(this.at))
    if (!m) this.fail()
    this.at += m[0].length
    const t = this.subs[m[1] === '' ? 0 : parseInt(m[1]!, 36) + 1]
    if (t === undefined) this.fail()
    return t
  }

  type(): string {
    const c = this.peek()
    if (c in BUILTIN) { this.next(); return BUILTIN[c]! }
    if (c === 'D') {
      // of the D codes only half (IEEE 754r half precision, `Dh`)
      if (this.s.slice(this.at, this.at + 2) !== 'Dh') this.fail()
      this.at += 2
      return 'half'
    }
    if (c === 'P' || c === 'R' || c === 'O') {
      this.next()
      const t = this.type()
      const r = `${t}${c === 'P' ? '*' : c === 'R' ? '&' : '&&'}`
      this.subs.push(r)
      return r
    }
    if (c === 'K' || c === 'V' || c === 'r') {
      const quals: string[] = []
      while ('rVK'.includes(this.peek()) && this.peek()) quals.push({ r: 'restrict', V: 'volatile', K: 'const' }[this.next()]!)
      const t = this.type()
      const r = `${t} ${quals.reverse().join(' ')}`
      this.subs.push(r)
      return r
    }
    if (c === 'S') return this.substitution()
    if (c === 'N' || /\d/.test(c)) {
      const n = this.name(true)
      if (c !== 'N') this.subs.push(n)
      return n
    }
    this.fail()
  }
}

class Unsupported extends Error {}

/** `_Z13collatz_stepsj` → `collatz_steps(unsigned int)`; undefined for a name this reader does not cover
 *  (or one that is not mangled). */
export function demangleFunctionName(mangled: string): string | undefined {
  if (!mangled.startsWith('_Z')) return undefined
  const r = new Reader(mangled.slice(2))
  try {
    const name = r.name(false)
    if (r.peek() === 'I' || r.at >= r.s.length) return undefined
    const params: string[] = []
    while (r.at < r.s.length) params.push(r.type())
    const list = params.length === 1 && params[0] === 'void' ? '' : params.join(', ')
    return `${name}(${list})`
  } catch (err) {
    if (err instanceof Unsupported) return undefined
    throw err
  }
}

/** The name as messages print it, the runtime's way: `_Z13collatz_stepsj (collatz_steps(unsigned int))` for a
 *  mangled name this reader covers; other names as they are. */
export function readableName(name: string): string {
  const d = demangleFunctionName(name)
  return d ? `${name} (${d})` : name
}
