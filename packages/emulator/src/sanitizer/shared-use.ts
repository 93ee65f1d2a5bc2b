// Which static `.shared` variables a kernel can reach (memcheck, checker.ts). The emulator lays out the shared
// variables of all a module's kernels in one window (load-module.ts), so an index past the end of one kernel's
// array lands in another kernel's and the window check cannot see it; on a GPU each kernel gets only its own.
// A kernel reaches the variables its instructions, or those of the device functions it calls, name.
import type { IrModule, IrOperand } from '@kernelpack/ptx'

export interface SharedVariable { name: string; offset: number; size: number }

function symbols(o: IrOperand | undefined, out: Set<string>): void {
  if (!o) return
  switch (o.kind) {
    case 'sym': out.add(o.name); break
    case 'addr': symbols(o.base, out); break
    case 'vec': case 'list': for (const x of o.items) symbols(x, out); break
    case 'pair': symbols(o.first, out); symbols(o.second, out); break
    case 'not': case 'neg': symbols(o.operand, out); break
    default: break
  }
}

/** The shared variables of `all` that `kernel` or a function it calls names. */
export function sharedVariablesOf(ir: IrModule, kernel: string, all: readonly SharedVariable[]): SharedVariable[] {
  const byName = new Map(ir.functions.filter((f) => f.defined).map((f) => [f.name, f]))
  const names = new Set<string>()
  const seen = new Set<string>()
  const visit = (name: string) => {
    if (seen.has(name)) return
    seen.add(name)
    const f = byName.get(name)
    if (!f) return
    for (const ins of f.instructions) for (const o of ins.operands) symbols(o, names)
  }
  visit(kernel)
  // functions are named by call operands: visit every defined function a kernel's code names, transitively
  for (let grew = true; grew;) {
    grew = false
    for (const n of [...names]) if (byName.has(n) && !seen.has(n)) { visit(n); grew = true }
  }
  return all.filter((v) => names.has(v.name))
}
