// Software binary64 through one call site per function (issue 26 item 3). Every f64 operation WebGPU computes
// is a call of one of wgsl-lib.ts's kp_f64_* functions (kp_f64_fma alone is ~90 WGSL operations), and a shader
// compiler that inlines every call (SwiftShader's does: its SPIR-V front end runs no function calls) compiles
// the function once per site: libdevice's double-precision math (exp, log, sin, cos, atan2, pow, cbrt of one
// thread, ~250 sites) made a pipeline SwiftShader did not finish in minutes.
//
// A kernel with more sites than SOFT_F64_LIMIT and no barrier or collective is written as a dispatcher over its
// basic blocks (emit-kernel.ts writeDispatcher) whose cases end at each call: the call's operands go to the
// function's argument variables, `kp_ret` names the case that goes on, and `kp_pc` jumps to the function's own
// case, which calls it (the one site the pipeline compiles) and jumps back. What goes on reads the result from
// the function's result variable. The operations and their order are unchanged; only where the code for the
// function sits moves.
//
// It works on the WGSL lines an instruction writes (emit-kernel.ts): a call in a statement at the case's own
// depth is taken out, the innermost first where calls nest; one inside a nested block (an `if` the instruction
// opened) stays inline, and so does one whose statement, or what follows it in the instruction, reads a `let`
// of the case before it (a `let` does not live across the split). Those left inline still count toward the limit.

/** The software binary64 functions that go through a shared site: their argument and result types. */
export const F64_SERVICES: Readonly<Record<string, { args: readonly string[]; result: string }>> = {
  kp_f64_fma: { args: ['vec2<u32>', 'vec2<u32>', 'vec2<u32>', 'u32'], result: 'vec2<u32>' },
  kp_f64_add: { args: ['vec2<u32>', 'vec2<u32>', 'u32'], result: 'vec2<u32>' },
  kp_f64_div: { args: ['vec2<u32>', 'vec2<u32>', 'u32'], result: 'vec2<u32>' },
  kp_f64_sqrt: { args: ['vec2<u32>', 'u32'], result: 'vec2<u32>' },
  kp_f64_cmp: { args: ['vec2<u32>', 'vec2<u32>', 'u32'], result: 'bool' },
  kp_f64_to_f32: { args: ['vec2<u32>', 'u32'], result: 'u32' },
  kp_f64_to_int: { args: ['vec2<u32>', 'u32', 'bool', 'bool'], result: 'vec2<u32>' },
  kp_f64_roundint: { args: ['vec2<u32>', 'u32'], result: 'vec2<u32>' },
  kp_f64_to_small: { args: ['vec2<u32>', 'u32', 'u32', 'u32', 'bool'], result: 'u32' },
  kp_int_to_f64: { args: ['bool', 'vec2<u32>', 'u32'], result: 'vec2<u32>' },
}

const CALL = new RegExp(`\\b(${Object.keys(F64_SERVICES).join('|')})\\(`, 'g')

/** How many calls of the shared functions `text` makes. */
export function serviceCalls(text: string): number {
  return text.match(CALL)?.length ?? 0
}

/** `s` split at its top-level commas (none inside parentheses or brackets). */
export function topLevelArgs(s: string): string[] {
  const out: string[] = []
  let depth = 0, start = 0
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]
    if (ch === '(' || ch === '[') depth++
    else if (ch === ')' || ch === ']') depth--
    else if (ch === ',' && depth === 0) { out.push(s.slice(start, i).trim()); start = i + 1 }
  }
  out.push(s.slice(start).trim())
  return out
}

/** The innermost call of a shared function in `line` (its arguments call none): where it starts and ends. */
export function innermostCall(line: string): { name: string; start: number; end: number; args: string[] } | undefined {
  for (const m of line.matchAll(CALL)) {
    const open = m.index! + m[0].length - 1
    let depth = 0, close = -1
    for (let i = open; i < line.length; i++) {
      if (line[i] === '(') depth++
      else if (line[i] === ')' && --depth === 0) { close = i; break }
    }
    if (close < 0) return undefined
    const inner = line.slice(open + 1, close)
    if (serviceCalls(inner)) continue
    return { name: m[1]!, start: m.index!, end: close + 1, args: topLevelArgs(inner) }
  }
  return undefined
}

const LET = /^\s*let ([A-Za-z_]\w*)\b/
const STATEMENT = /^(?!\s*(?:\}|if\b|for\b|loop\b|switch\b|while\b|else\b|case\b|default\b|return\b|break\b|continue\b))\s*\S.*;$/

/** What the dispatcher needs to write a split: a fresh case number, and the variables of a function's site. */
export interface ServiceHost {
  /** A case number not used yet. */
  newCase(): number
  /** The case of `name`'s shared site (made on first use). */
  serviceCase(name: string): number
  /** The function-scope variable for argument `k` of `name` (k = -1: its result); declared on first use. */
  serviceVar(name: string, k: number): string
  /** The dispatcher's program counter (kp_pc; per CUDA thread in rounds: rounds.ts). */
  pc: string
}

/**
 * An instruction's lines (written at the case's own indentation `indent`) with each call of a shared function
 * in a statement at that indentation taken out to the function's site. `lets` holds the `let`s the case has
 * declared so far (updated). Returns the lines (a split closes the case and opens the next) and how many calls
 * stay inline.
 */
export function splitServiceCalls(lines: readonly string[], indent: string, host: ServiceHost, lets: Set<string>): { lines: string[]; inline: number } {
  const out: string[] = []
  let inline = 0
  const top = (l: string) => l.startsWith(indent) && l[indent.length] !== ' '
  const reads = (rest: readonly string[]) => {
    if (!lets.size) return false
    for (const l of rest) for (const id of l.match(/\b[A-Za-z_]\w*\b/g) ?? []) if (lets.has(id)) return true
    return false
  }
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!
    if (!top(line) || !STATEMENT.test(line)) {
      inline += serviceCalls(line)
      out.push(line)
      const m = top(line) ? LET.exec(line) : null
      if (m) lets.add(m[1]!)
      continue
    }
    for (let call = innermostCall(line); call; call = innermostCall(line)) {
      const result = host.serviceVar(call.name, -1)
      const after = line.slice(0, call.start) + result + line.slice(call.end)
      // what goes on after the split may not read a let of the case before it
      if (reads([after, ...lines.slice(i + 1)])) break
      call.args.forEach((a, k) => out.push(`${indent}${host.serviceVar(call.name, k)} = ${a};`))
      const next = host.newCase()
      out.push(`${indent}kp_ret = ${next}u;`, `${indent}${host.pc} = ${host.serviceCase(call.name)}u;`)
      out.push(`${indent.slice(2)}}`, `${indent.slice(2)}case ${next}u: {`)
      lets.clear()
      line = after
    }
    inline += serviceCalls(line)
    out.push(line)
    const m = LET.exec(line)
    if (m) lets.add(m[1]!)
  }
  return { lines: out, inline }
}
