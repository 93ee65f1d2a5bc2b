// Device printf on WebGPU (issue 26 item 2). A `call vprintf, (fmt, args)` appends a record to the printf area
// of the fault-record buffer (binding 3, layout.ts PRINTF_*): which kernel launch, call site, block and thread
// made it, how many barriers and warp collectives the thread had passed and how many printfs it had made
// before (the order the host puts the records in), and the argument buffer's bytes. The format string is a
// constant of the module, found here (the value the call sequence stores into its first argument is a .global
// string's address): it goes into the kernel's translation (WgslKernel.printf, by site), and the host formats
// each record with @kernelpack/ptx's formatPrintf and orders them with PrintfOrder, as the emulator does.
import { printfArgBytes, printfConversions, type Instruction, type IrOperand, type PtxVariable } from '@kernelpack/ptx'
import type { KernelWriter } from './emit-kernel.js'
import { localWord } from './emit-memory.js'
import { PRINTF_HEADER_WORDS } from './layout.js'

/** The symbol `o` addresses (`[sym]` or `sym`). */
function symOf(o: IrOperand | undefined): string | undefined {
  if (o?.kind === 'sym') return o.name
  if (o?.kind === 'addr' && o.base?.kind === 'sym' && o.offset === 0) return o.base.name
  return undefined
}

/** The string a module variable's initializer holds, up to its NUL. */
function cString(v: PtxVariable): string | undefined {
  if (!v.init || (v.type !== 'b8' && v.type !== 'u8' && v.type !== 's8')) return undefined
  const bytes: number[] = []
  for (const e of v.init) {
    if (e.value === undefined) return undefined
    const b = Number(BigInt.asUintN(8, e.value))
    if (b === 0) break
    bytes.push(b)
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}

/** The format string of the vprintf call at `call`: what its call sequence stores into the first argument,
 *  a register holding (through `cvta.global` and `mov`) a .global string's address. */
function formatOf(w: KernelWriter, call: Instruction, fmtVar: string): string {
  const ins = w.fn.instructions
  let store: Instruction | undefined
  for (let i = call.index - 1; i >= 0 && !store; i--) {
    const x = ins[i]!
    if (x.op === 'st' && symOf(x.operands[0]) === fmtVar) store = x
  }
  let o = store?.operands[1]
  for (let hops = 0; o?.kind === 'reg' && hops < 8; hops++) {
    const id = o.id
    const defs = ins.filter((x) => x.operands[0]?.kind === 'reg' && x.operands[0].id === id && x.op !== 'st')
    if (defs.length !== 1) break
    const d = defs[0]!
    if ((d.op === 'cvta' && d.space === 'global' && !d.flags.to) || d.op === 'mov') o = d.operands[1]
    else break
  }
  const name = o?.kind === 'sym' ? o.name : undefined
  const v = name !== undefined ? w.env.module.variables.find((x) => x.name === name && x.space === 'global') : undefined
  const s = v ? cString(v) : undefined
  if (s === undefined) return w.refuse('printf with a format string that is not a constant of the module: WebGPU formats device printf on the host from the format it finds at translation')
  return s
}

/** Bytes of one `%s` string a record carries at most (the emulator prints any length; a longer string is
 *  cut here). */
export const PRINTF_STRING_CAP = 4096

/** The byte at generic address `a` (a WGSL expression), through the word that holds it. */
const byteAt = (a: string, line: number) => `((kp_gen_ldw((${a}) & ~3u, ${line}u) >> (((${a}) & 3u) * 8u)) & 0xffu)`

/** Writes a `call vprintf` (the module's format strings in `w.printf`, by site). A `%s` argument's string is
 *  read here, at the call, as the emulator reads it: its length and bytes follow the argument words in the
 *  record (printf-records.ts puts them back where the pointer points). */
export function emitPrintf(w: KernelWriter, ins: Instruction): void {
  if (w.coarse > 1) w.refuse('printf in a kernel whose blocks run coarsened (more threads than a workgroup holds)')
  const A = ins.operands
  const rets = A[0]?.kind === 'list' ? A[0].items : []
  const list = A[A[0]?.kind === 'list' ? 2 : 1]
  const args = list?.kind === 'list' ? list.items : []
  const fmtVar = symOf(args[0]), argVar = symOf(args[1])
  if (fmtVar === undefined || argVar === undefined) return w.refuse('a vprintf call without its two .param arguments')
  const fmt = formatOf(w, ins, fmtVar)
  const conversions = printfConversions(fmt)
  const strings = conversions.filter((c) => c.conv === 's').map((c) => c.at)
  const site = w.printf.length
  w.printf.push(fmt)
  const words = Math.ceil(printfArgBytes(fmt) / 4)
  const local = (name: string) => {
    const a = w.symbolAddress(name)
    if (a.space !== 'local') return w.refuse('a vprintf argument outside the call sequence')
    return localWord(w, `${a.expr} >> 2u`)
  }
  if (words) w.features.add('kp_gen_ldw')
  w.open('{')
  w.line(`// printf site ${site}: ${JSON.stringify(fmt).replace(/\*\//g, '* /')}`)
  if (words) w.line(`let kp_pa = ${local(argVar)};`)
  // each string's address (the pointer's low word: the arena is 32-bit) and length, up to its NUL
  strings.forEach((off, k) => {
    w.line(`let kp_sp${k} = kp_gen_ldw(kp_pa + ${off}u, ${ins.line}u);`)
    w.line(`var kp_sl${k} = 0u;`)
    w.line(`loop { if (kp_sl${k} >= ${PRINTF_STRING_CAP}u || ${byteAt(`kp_sp${k} + kp_sl${k}`, ins.line)} == 0u) { break; } kp_sl${k} += 1u; }`)
  })
  const n = [`${PRINTF_HEADER_WORDS + words + strings.length}u`, ...strings.map((_, k) => `(kp_sl${k} + 3u) / 4u`)].join(' + ')
  w.line(`let kp_pn = ${n};`)
  w.line('let kp_pr = atomicAdd(&kp_fault[4], kp_pn);')
  w.open('if (kp_pr + kp_pn <= arrayLength(&kp_fault) - 5u) {')
  w.line('let kp_pb = 5u + kp_pr;')
  const fields = [
    'kp_pn', `${site}u`, 'kp_launch.pad', 'kp_ctaid.x + kp_launch.nctaid.x * (kp_ctaid.y + kp_launch.nctaid.y * kp_ctaid.z)', 'kp_t',
    'kp_pbar', 'kp_pcol', 'kp_pseq',
  ]
  fields.forEach((f, k) => w.line(`atomicStore(&kp_fault[kp_pb + ${k}u], ${f});`))
  for (let k = 0; k < words; k++) w.line(`atomicStore(&kp_fault[kp_pb + ${PRINTF_HEADER_WORDS + k}u], kp_gen_ldw(kp_pa + ${4 * k}u, ${ins.line}u));`)
  if (strings.length) {
    w.line(`var kp_po = kp_pb + ${PRINTF_HEADER_WORDS + words}u;`)
    strings.forEach((_, k) => {
      w.line(`atomicStore(&kp_fault[kp_po], kp_sl${k}); kp_po += 1u;`)
      w.open(`for (var kp_i = 0u; kp_i < kp_sl${k}; kp_i += 4u) {`)
      w.line('var kp_x = 0u;')
      w.line(`for (var kp_j = 0u; kp_j < 4u && kp_i + kp_j < kp_sl${k}; kp_j += 1u) { kp_x |= ${byteAt(`kp_sp${k} + kp_i + kp_j`, ins.line)} << (8u * kp_j); }`)
      w.line('atomicStore(&kp_fault[kp_po], kp_x); kp_po += 1u;')
      w.close()
    })
  }
  w.close()
  w.line('kp_pseq += 1u;')
  // vprintf's result: the number of arguments (CUDA's documented return of printf)
  const ret = symOf(rets[0])
  if (ret !== undefined) w.line(`${local(ret)} = ${conversions.length}u;`)
  w.close()
}
