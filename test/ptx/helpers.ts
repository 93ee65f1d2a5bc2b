// Small hand-written PTX for the front end's unit tests: one kernel (or device function) around a body,
// decoded, with its CFG.
import { buildCfg, decodeModule, parsePtx, type Cfg, type IrFunction } from '@kernelpack/ptx'

export const PTX_HEAD = '.version 8.0\n.target sm_80\n.address_size 64\n'

/** Registers every helper kernel declares. */
export const REGS = `  .reg .pred %p<8>;
  .reg .b16 %h<8>;
  .reg .b32 %r<32>;
  .reg .f32 %f<16>;
  .reg .b64 %rd<32>;
  .reg .f64 %fd<8>;`

/** `body` as the kernel `k(.param .u64 k_a, .param .u64 k_b, .param .u32 k_n)` with REGS declared. */
export function kernel(body: string, extra = ''): { fn: IrFunction; cfg: Cfg } {
  const m = decodeModule(parsePtx(`${PTX_HEAD}${extra}
.visible .entry k(.param .u64 k_a, .param .u64 k_b, .param .u32 k_n)
{
${REGS}
  .shared .align 4 .b8 tile[1024];
${body}
}`))
  const fn = m.functions.find((f) => f.name === 'k')!
  return { fn, cfg: buildCfg(fn) }
}

/** The id of a register by name. */
export function reg(fn: IrFunction, name: string): number {
  const i = fn.registers.findIndex((r) => r.name === name)
  if (i < 0) throw new Error(`no register ${name}`)
  return i
}

/** The index of the first instruction whose text starts with `prefix`. */
export function at(fn: IrFunction, prefix: string, nth = 0): number {
  const hits = fn.instructions.filter((i) => i.text.startsWith(prefix))
  if (!hits[nth]) throw new Error(`no instruction ${prefix} (#${nth})`)
  return hits[nth]!.index
}
