// Inlines calls to device functions: a transformation of the IR into new functions (the decoded module is
// left as it is). The callee's registers, labels and local/param variables get a per-call-site suffix; its
// parameters become the caller's argument variables and its return parameters the caller's return variables
// (the same .param bytes a real call would pass); `ret` becomes a branch to the end of the inlined body.
// The emulator inlines the functions that contain barriers or warp collectives (a suspension point must sit in
// the kernel's own thread loop; nvcc -G keeps even __shfl_down_sync as a called function), the WebGPU
// translator every call (WGSL functions cannot take pointers into the arena's state spaces as PTX passes them).
import { PtxError } from './errors.js'
import type { Instruction, IrFunction, IrModule, Operand as IrOperand } from './ir.js'
import type { PtxVariable } from './parse.js'

/** The function a direct `call` names; undefined for other instructions and calls through a pointer. */
export function calleeOf(ins: Instruction): string | undefined {
  if (ins.op !== 'call') return undefined
  const t = ins.operands[0]?.kind === 'list' ? ins.operands[1] : ins.operands[0]
  return t?.kind === 'sym' && t.target === 'function' ? t.name : undefined
}

const callee = calleeOf

interface Renaming { reg: (id: number) => number; name: (n: string) => string; label: (n: string) => string }

function mapOperand(o: IrOperand, m: Renaming): IrOperand {
  switch (o.kind) {
    case 'reg': return { kind: 'reg', id: m.reg(o.id) }
    case 'sym': return o.target === 'variable' ? { ...o, name: m.name(o.name) } : o
    case 'label': return { kind: 'label', name: m.label(o.name) }
    case 'addr': return o.base ? { kind: 'addr', base: mapOperand(o.base, m), offset: o.offset } : o
    case 'vec': return { kind: 'vec', items: o.items.map((x) => mapOperand(x, m)) }
    case 'list': return { kind: 'list', items: o.items.map((x) => mapOperand(x, m)) }
    case 'pair': return { kind: 'pair', first: mapOperand(o.first, m), second: mapOperand(o.second, m) }
    case 'not': return { kind: 'not', operand: mapOperand(o.operand, m) }
    case 'neg': return { kind: 'neg', operand: mapOperand(o.operand, m) }
    default: return o
  }
}

/** A `bra` to `label` standing in for `from` (a guarded call, or a ret), with its text and line. */
function branchTo(from: Instruction, label: string, guard: Instruction['guard']): Instruction {
  const out: Instruction = { index: 0, op: 'bra', qualifiers: [], types: [], flags: {}, operands: [{ kind: 'label', name: label }], line: from.line, text: from.text }
  if (guard) out.guard = guard
  if (from.loc) out.loc = from.loc
  return out
}

/** The module with every call to a function of `inlined` (defined functions, by name) expanded in place, in
 *  every function that makes one (the same module when there is none). A function whose expansion reaches
 *  itself is refused alone (IrFunction.refused, with `recursive(name)` as the message), as is a call whose
 *  arguments do not match its callee's parameters. */
export function inlineCalls(mod: IrModule, inlined: ReadonlySet<string>, recursive: (name: string) => string): IrModule {
  const byName = new Map(mod.functions.filter((f) => f.defined).map((f) => [f.name, f]))
  const susp = new Set([...inlined].filter((n) => byName.has(n)))
  if (susp.size === 0) return mod
  let site = 0
  const expanded = new Map<string, IrFunction>()
  const expanding = new Set<string>()
  const expand = (f: IrFunction): IrFunction => {
    const done = expanded.get(f.name)
    if (done) return done
    if (expanding.has(f.name)) throw new PtxError(recursive(f.name), f.line)
    expanding.add(f.name)
    const registers = [...f.registers]
    const vars: PtxVariable[] = [...f.vars]
    const out: Instruction[] = []
    const labels = new Map<string, number>()
    const labelsAt = new Map<number, string[]>()
    for (const [name, at] of f.labels) (labelsAt.get(at) ?? labelsAt.set(at, []).get(at)!).push(name)
    const place = (names: readonly string[] | undefined) => { for (const n of names ?? []) labels.set(n, out.length) }
    f.instructions.forEach((s, i) => {
      place(labelsAt.get(i))
      const name = callee(s)
      const g0 = name !== undefined ? byName.get(name) : undefined
      if (!g0 || !susp.has(g0.name)) { out.push(s); return }
      const g = expand(g0)
      const k = ++site
      const rets = s.operands[0]?.kind === 'list' ? s.operands[0].items : []
      const argList = s.operands[s.operands[0]?.kind === 'list' ? 2 : 1]
      const args = argList?.kind === 'list' ? argList.items : []
      if (args.length !== g.params.length || rets.length !== g.returns.length) throw new PtxError(`call to ${g.name} does not match its parameters`, s.line)
      const paramMap = new Map<string, string>()
      g.params.forEach((p, j) => { const a = args[j]!; if (a.kind !== 'sym') throw new PtxError(`call argument ${j} of ${g.name} is not a .param variable`, s.line); paramMap.set(p.name, a.name) })
      g.returns.forEach((p, j) => { const r = rets[j]!; if (r.kind !== 'sym') throw new PtxError(`return value ${j} of ${g.name} is not a .param variable`, s.line); paramMap.set(p.name, r.name) })
      const regBase = registers.length
      for (const r of g.registers) registers.push({ name: `${r.name}$i${k}`, type: r.type })
      const varMap = new Map<string, string>()
      for (const v of g.vars) {
        if (v.space === 'shared' || v.space === 'global' || v.space === 'const') continue // module-wide by name
        const n = `${v.name}$i${k}`
        varMap.set(v.name, n)
        vars.push({ ...v, name: n })
      }
      const end = `$inline_end${k}`
      const m: Renaming = {
        reg: (id) => regBase + id,
        name: (n) => paramMap.get(n) ?? varMap.get(n) ?? n,
        label: (n) => (g.labels.has(n) ? `${n}$i${k}` : n),
      }
      // a guarded call: skip the inlined body when the guard fails
      if (s.guard) out.push(branchTo(s, end, { reg: s.guard.reg, negate: !s.guard.negate }))
      const gLabelsAt = new Map<number, string[]>()
      for (const [n, at] of g.labels) (gLabelsAt.get(at) ?? gLabelsAt.set(at, []).get(at)!).push(`${n}$i${k}`)
      g.instructions.forEach((st, j) => {
        place(gLabelsAt.get(j))
        const guard = st.guard ? { reg: m.reg(st.guard.reg), negate: st.guard.negate } : undefined
        if (st.op === 'ret') { out.push(branchTo(st, end, guard)); return }
        const copy: Instruction = { ...st, operands: st.operands.map((a) => mapOperand(a, m)) }
        if (guard) copy.guard = guard
        else delete copy.guard
        out.push(copy)
      })
      place(gLabelsAt.get(g.instructions.length))
      labels.set(end, out.length)
    })
    place(labelsAt.get(f.instructions.length))
    const result: IrFunction = { ...f, registers, vars, instructions: out.map((s, index) => ({ ...s, index })), labels }
    expanding.delete(f.name)
    expanded.set(f.name, result)
    return result
  }
  // a function that cannot be expanded (recursion, a call that does not match) is
  // refused alone, as the decoder refuses one it cannot read
  const tryExpand = (f: IrFunction): IrFunction => {
    try {
      return expand(f)
    } catch (err) {
      if (!(err instanceof PtxError)) throw err
      expanding.clear()
      return { ...f, instructions: [], labels: new Map(), refused: err }
    }
  }
  const functions = mod.functions.map((f) => (f.defined && f.instructions.some((s) => { const c = callee(s); return c !== undefined && susp.has(c) }) ? tryExpand(f) : f))
  return { ...mod, functions }
}
