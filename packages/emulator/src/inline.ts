// Inlines calls to device functions that contain barriers or warp collectives (directly or through their
// own calls). A suspension point must sit in the kernel's own state machine (compile.ts), and nvcc -G
// (debug builds) keeps even __shfl_down_sync as a called function. Registers, labels and local/param
// variables of the callee get a per-call-site suffix; the callee's parameters become the caller's
// argument variables and its return parameters the caller's return variables (the same .param bytes a
// real call would pass); `ret` becomes a branch to the end of the inlined body.
import { PtxError } from './errors.js'
import type { Operand, PtxFunction, PtxInstruction, PtxModule, PtxStatement } from '@kernelpack/ptx'

const SUSPENDING = new Set(['shfl', 'vote', 'match', 'activemask', 'redux', 'elect'])

function suspendsItself(f: PtxFunction): boolean {
  return (f.body ?? []).some((s) => s.kind === 'instr' && (SUSPENDING.has(s.op[0]!) || ((s.op[0] === 'bar' || s.op[0] === 'barrier') && !s.op.includes('arrive'))))
}

function callee(s: PtxStatement): string | undefined {
  if (s.kind !== 'instr' || s.op[0] !== 'call') return undefined
  const t = s.args[0]?.k === 'list' ? s.args[1] : s.args[0]
  return t?.k === 'id' ? t.name : undefined
}

function mapOperand(o: Operand, m: (name: string) => string): Operand {
  switch (o.k) {
    case 'id': return { k: 'id', name: m(o.name) }
    case 'addr': return { k: 'addr', base: o.base ? mapOperand(o.base, m) : undefined, offset: o.offset }
    case 'vec': return { k: 'vec', items: o.items.map((x) => mapOperand(x, m)) }
    case 'list': return { k: 'list', items: o.items.map((x) => mapOperand(x, m)) }
    case 'pair': return { k: 'pair', a: mapOperand(o.a, m), b: mapOperand(o.b, m) }
    case 'not': return { k: 'not', a: mapOperand(o.a, m) }
    case 'neg': return { k: 'neg', a: mapOperand(o.a, m) }
    default: return o
  }
}

export function inlineSuspendingCalls(mod: PtxModule): void {
  const byName = new Map(mod.functions.filter((f) => f.body).map((f) => [f.name, f]))
  const susp = new Set<string>()
  for (const f of byName.values()) if (suspendsItself(f)) susp.add(f.name)
  for (let changed = true; changed;) {
    changed = false
    for (const f of byName.values()) {
      if (susp.has(f.name)) continue
      if (f.body!.some((s) => { const c = callee(s); return c !== undefined && susp.has(c) })) { susp.add(f.name); changed = true }
    }
  }
  if (susp.size === 0) return
  let site = 0
  const expanded = new Set<string>()
  const expanding = new Set<string>()
  const expand = (f: PtxFunction): void => {
    if (expanded.has(f.name)) return
    if (expanding.has(f.name)) throw new PtxError(`${f.name} is recursive and contains a barrier or warp collective; the emulator cannot run it`, f.line)
    expanding.add(f.name)
    const out: PtxStatement[] = []
    for (const s of f.body!) {
      const name = callee(s)
      const g = name !== undefined ? byName.get(name) : undefined
      if (!g || !susp.has(g.name)) { out.push(s); continue }
      expand(g)
      const call = s as PtxInstruction
      const k = ++site
      const rets = call.args[0]?.k === 'list' ? call.args[0].items : []
      const argList = call.args[call.args[0]?.k === 'list' ? 2 : 1]
      const args = argList?.k === 'list' ? argList.items : []
      if (args.length !== g.params.length || rets.length !== g.returns.length) throw new PtxError(`call to ${g.name} does not match its parameters`, call.line)
      const paramMap = new Map<string, string>()
      g.params.forEach((p, i) => { const a = args[i]!; if (a.k !== 'id') throw new PtxError(`call argument ${i} of ${g.name} is not a .param variable`, call.line); paramMap.set(p.name, a.name) })
      g.returns.forEach((p, i) => { const r = rets[i]!; if (r.k !== 'id') throw new PtxError(`return value ${i} of ${g.name} is not a .param variable`, call.line); paramMap.set(p.name, r.name) })
      const regMap = new Map<string, string>()
      for (const r of g.regs) { const n = `${r.name}$i${k}`; regMap.set(r.name, n); f.regs.push({ name: n, type: r.type }) }
      const varMap = new Map<string, string>()
      for (const v of g.vars) {
        if (v.space === 'shared' || v.space === 'global' || v.space === 'const') continue // module-wide by name
        const n = `${v.name}$i${k}`
        varMap.set(v.name, n)
        f.vars.push({ ...v, name: n })
      }
      const labelMap = new Map<string, string>()
      for (const st of g.body!) if (st.kind === 'label') labelMap.set(st.name, `${st.name}$i${k}`)
      const end = `$inline_end${k}`
      const m = (n: string) => regMap.get(n) ?? paramMap.get(n) ?? varMap.get(n) ?? labelMap.get(n) ?? n
      if (call.guard) {
        // a guarded call: skip the inlined body when the guard fails
        out.push({ ...call, op: ['bra'], opcode: 'bra', guard: { reg: call.guard.reg, negate: !call.guard.negate }, args: [{ k: 'id', name: end }] })
      }
      for (const st of g.body!) {
        if (st.kind === 'label') { out.push({ ...st, name: labelMap.get(st.name)! }); continue }
        const guard = st.guard ? { reg: m(st.guard.reg), negate: st.guard.negate } : undefined
        if (st.op[0] === 'ret') { out.push({ ...st, op: ['bra'], opcode: 'bra', guard, args: [{ k: 'id', name: end }] }); continue }
        out.push({ ...st, guard, args: st.args.map((a) => mapOperand(a, m)) })
      }
      out.push({ kind: 'label', name: end, line: call.line })
    }
    f.body = out
    expanding.delete(f.name)
    expanded.add(f.name)
  }
  for (const f of byName.values()) if (f.body!.some((s) => { const c = callee(s); return c !== undefined && susp.has(c) })) expand(f)
}
