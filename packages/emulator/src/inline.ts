// The emulator inlines calls to device functions that contain barriers or warp collectives (collectives.ts),
// directly or through their own calls: a suspension point must sit in the kernel's own thread loop (emit-js.ts),
// and nvcc -G (debug builds) keeps even __shfl_down_sync as a called function (@kernelpack/ptx inlineCalls).
import { calleeOf, collectiveOf, inlineCalls, type IrModule } from '@kernelpack/ptx'

/** The module with every call to a suspending function expanded in place (the same module when none). */
export function inlineSuspendingCalls(mod: IrModule): IrModule {
  const defined = mod.functions.filter((f) => f.defined)
  const susp = new Set(defined.filter((f) => f.instructions.some((s) => collectiveOf(s) !== undefined)).map((f) => f.name))
  for (let changed = true; changed;) {
    changed = false
    for (const f of defined) {
      if (susp.has(f.name)) continue
      if (f.instructions.some((s) => { const c = calleeOf(s); return c !== undefined && susp.has(c) })) { susp.add(f.name); changed = true }
    }
  }
  if (susp.size === 0) return mod
  return inlineCalls(mod, susp, (name) => `${name} is recursive and contains a barrier or warp collective; the emulator cannot run it`)
}
