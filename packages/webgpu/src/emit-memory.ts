// Memory instructions: ld/ldu/st in every state space and width, atom/red, cvta, isspacep, cp.async, over the
// pointer model of README.md ("Pointer model", "Memory"): global and const memory are byte offsets into the
// arena `kp_mem: array<u32>`, shared memory offsets into `kp_smem` (static variables first, the dynamic
// `extern` array after them), local memory offsets into the per-invocation `kp_lmem`, kernel parameters
// offsets into the uniform `kp_params`. A generic address picks its space by window (layout.ts). Accesses
// of 1 and 2 bytes work on their word: loads extract, stores write the bytes with atomicAnd/atomicOr (a
// kernel with such stores declares its memory atomic, so a byte store never loses a neighbour's). Global
// and generic accesses are checked: below the reserved page or past the arena writes the fault record and
// uses the reserved page instead.
import { typeSize, type Instruction, type IrOperand as Operand, type PtxType } from '@kernelpack/ptx'
import type { KernelWriter } from './emit-kernel.js'
import { FAULT_KIND, LOCAL_WINDOW, RESERVED_BYTES, SHARED_WINDOW, WINDOW_BYTES } from './layout.js'
import { u32Lit } from './wgsl-text.js'

export interface MemoryPlan {
  /** Byte offset of each shared variable in kp_smem (dynamic ones at dynBase). */
  sharedOffset: Map<string, number | string>
  localOffset: Map<string, number>
  /** Bytes of static shared variables, rounded to words. */
  staticShared: number
  /** Where the dynamic (extern) shared array starts. */
  dynBase: number
  usesShared: boolean
  hasDynamic: boolean
  /** The kernel reads %reserved_smem_offset_*: RESERVED_SMEM bytes of zeroed shared memory after its own. */
  reserved: boolean
  localBytes: number
  /** kp_mem is `array<atomic<u32>>` (atomics, or sub-word stores, on global or generic memory). */
  globalAtomic: boolean
  sharedAtomic: boolean
  /** The kernel writes global memory. */
  globalStores: boolean
  /** The block barriers that must also order global memory (storageBarrier; globalBarriers). */
  storageBarriers: ReadonlySet<Instruction>
  /** Barriers (instruction indices) whose loop gets the storageBarrier on its exit instead (globalBarriers). */
  storageBarrierAfterLoop: ReadonlySet<number>
}

export type Space = 'global' | 'shared' | 'local' | 'param' | 'generic'

/** An expression safe to put next to an operator (WGSL requires parentheses when operators mix). */
const par = (e: string) => (/^[\w.]+$/.test(e) ? e : `(${e})`)

/** The state space an access goes to, from its qualifier (`.const` lives in the arena like `.global`). */
export function spaceOf(ins: Instruction): Space {
  switch (ins.space) {
    case 'global': case 'const': return 'global'
    case 'shared': return 'shared'
    case 'local': return 'local'
    case 'param': return 'param'
    default: return 'generic'
  }
}

/** The address an operand `[base+offset]` names, in the space of `space` (a symbol base fixes the space). */
export function address(w: KernelWriter, o: Operand, space: Space): { at: string; space: Space } {
  if (o.kind !== 'addr') return w.refuse(`expected an address operand, got a ${o.kind}`)
  const off = BigInt.asUintN(32, BigInt(o.offset))
  let base: string | undefined
  let sp = space
  if (o.base?.kind === 'sym') {
    const s = w.symbolAddress(o.base.name)
    base = s.expr
    if (space === 'generic') sp = s.space === 'const' ? 'global' : s.space
  } else if (o.base) base = w.u32(o.base)
  const at = base === undefined ? u32Lit(off) : off === 0n ? base : `(${base} + ${u32Lit(off)})`
  return { at, space: sp }
}

/** Word `i` of the thread's local memory: a coarsened kernel's invocation keeps its CUDA threads' local memory
 *  side by side, the current one's from kp_lc (set by KernelWriter.perThread). */
export function localWord(w: KernelWriter, i: string): string {
  return w.coarse > 1 ? `kp_lmem[kp_lc + ${par(i)}]` : `kp_lmem[${i}]`
}

/** WGSL that reads word `i` of a space. */
export function loadWord(w: KernelWriter, space: Space, i: string): string {
  switch (space) {
    case 'global': return w.mem.globalAtomic ? `atomicLoad(&kp_mem[${i}])` : `kp_mem[${i}]`
    case 'shared': return w.mem.sharedAtomic ? `atomicLoad(&kp_smem[${i}])` : `kp_smem[${i}]`
    case 'local': return localWord(w, i)
    case 'param': return /^\d+u$/.test(i) ? `kp_params[${Number(i.slice(0, -1)) >> 2}].${'xyzw'[Number(i.slice(0, -1)) & 3]}` : `kp_params[${par(i)} >> 2u][${par(i)} & 3u]`
    default: w.features.add('kp_gen_ldw'); return `kp_gen_ldw(${par(i)} << 2u, ${w.ins!.line}u)`
  }
}

export function storeWord(w: KernelWriter, space: Space, i: string, v: string): void {
  switch (space) {
    case 'global': w.line(w.mem.globalAtomic ? `atomicStore(&kp_mem[${i}], ${v});` : `kp_mem[${i}] = ${v};`); return
    case 'shared': w.line(w.mem.sharedAtomic ? `atomicStore(&kp_smem[${i}], ${v});` : `kp_smem[${i}] = ${v};`); return
    case 'local': w.line(`${localWord(w, i)} = ${v};`); return
    case 'param': return w.refuse('a store to kernel parameter space')
    default: w.features.add('kp_gen_stw'); w.line(`kp_gen_stw(${par(i)} << 2u, ${v}, ${w.ins!.line}u);`)
  }
}

/** Stores the low `bytes` (1 or 2) bytes of v at byte address a. */
export function storeBytes(w: KernelWriter, space: Space, a: string, v: string, bytes: number): void {
  const mask = bytes === 1 ? '0xffu' : '0xffffu'
  const sh = w.tmp(`(${par(a)} & 3u) * 8u`)
  const i = `${par(a)} >> 2u`
  switch (space) {
    case 'global': case 'shared': {
      const arr = space === 'global' ? 'kp_mem' : 'kp_smem'
      w.line(`atomicAnd(&${arr}[${i}], ~(${mask} << ${sh}));`)
      w.line(`atomicOr(&${arr}[${i}], ((${v}) & ${mask}) << ${sh});`)
      return
    }
    case 'local': w.line(`${localWord(w, i)} = (${localWord(w, i)} & ~(${mask} << ${sh})) | (((${v}) & ${mask}) << ${sh});`); return
    case 'param': return w.refuse('a store to kernel parameter space')
    default: w.features.add('kp_gen_stb'); w.line(`kp_gen_stb(${a}, ${v}, ${mask}, ${w.ins!.line}u);`)
  }
}

/** A checked global byte address: `a`, or the reserved page after recording a fault. `op`: the address
 *  operand, whose affine form (if any) lets a launch prove the access in range (access-sites.ts). */
export function checked(w: KernelWriter, space: Space, a: string, n: number, op?: Operand): string {
  if (space !== 'global') return a
  w.noteAccess(op, n)
  w.features.add('kp_gchk')
  return `kp_gchk(${a}, ${n}u, ${w.ins!.line}u)`
}

/** Reads `size` bytes (1, 2, 4, 8) at byte address `a`: u32 (zero-extended) or vec2<u32>. */
export function loadBits(w: KernelWriter, space: Space, a: string, size: number): string {
  if (size === 8) return `vec2<u32>(${loadWord(w, space, `${par(a)} >> 2u`)}, ${loadWord(w, space, `(${par(a)} >> 2u) + 1u`)})`
  const word = loadWord(w, space, /^\d+u$/.test(a) ? `${Number(a.slice(0, -1)) >> 2}u` : `${par(a)} >> 2u`)
  if (size === 4) return word
  const mask = size === 1 ? '0xffu' : '0xffffu'
  if (/^\d+u$/.test(a)) return `((${word} >> ${(Number(a.slice(0, -1)) & 3) * 8}u) & ${mask})`
  return `((${word} >> ((${par(a)} & 3u) * 8u)) & ${mask})`
}

/** The element type a load or store moves (`.b16` of a half etc. are all bits). */
function elementSize(w: KernelWriter, t: PtxType | undefined): number {
  const n = typeSize(t ?? '')
  if (!n) return w.refuse('a memory access without a type')
  if (n > 8) return w.refuse(`${t} accesses (128-bit registers)`)
  return n
}

function emitLoad(w: KernelWriter, ins: Instruction): void {
  const t = ins.type!
  const es = elementSize(w, t)
  const n = ins.vector ?? 1
  const dsts = n > 1 ? (ins.operands[0]?.kind === 'vec' ? ins.operands[0].items : w.refuse('a vector load needs a vector destination')) : [ins.operands[0]!]
  const { at, space } = address(w, ins.operands[1]!, spaceOf(ins))
  const a = w.tmp(checked(w, space, at, es * n, ins.operands[1]))
  dsts.forEach((d, k) => {
    if (d.kind === 'sink') return
    const ak = k === 0 ? a : `(${a} + ${es * k}u)`
    const bits = loadBits(w, space, space === 'param' && /^\d+u$/.test(at) ? u32Lit(Number(at.slice(0, -1)) + es * k) : ak, es)
    if (es === 8) w.setU64(d, bits)
    else w.setU32(d, bits, t)
  })
}

function emitStore(w: KernelWriter, ins: Instruction): void {
  const t = ins.type!
  const es = elementSize(w, t)
  const n = ins.vector ?? 1
  const srcs = n > 1 ? (ins.operands[1]?.kind === 'vec' ? ins.operands[1].items : w.refuse('a vector store needs a vector source')) : [ins.operands[1]!]
  const { at, space } = address(w, ins.operands[0]!, spaceOf(ins))
  // sources first: a store never changes its own operands, but keep the reads ahead of the writes
  const vals = srcs.map((s) => w.tmp(es === 8 ? w.u64(s) : w.u32(s, es === 4 ? 'b32' : t)))
  const a = w.tmp(checked(w, space, at, es * n, ins.operands[0]))
  vals.forEach((v, k) => {
    const ak = k === 0 ? a : w.tmp(`${a} + ${es * k}u`)
    if (es === 8) {
      storeWord(w, space, `${ak} >> 2u`, `${v}.x`)
      storeWord(w, space, `(${ak} >> 2u) + 1u`, `${v}.y`)
    } else if (es === 4) storeWord(w, space, `${ak} >> 2u`, v)
    else storeBytes(w, space, ak, v, es)
  })
}

// --- atomics ---

/** The word-level read-modify-write a (32-bit or narrower) atomic performs: a WGSL builtin, or a CAS loop. */
type AtomKind = 'add' | 'and' | 'or' | 'xor' | 'exch' | 'minu' | 'maxu' | 'mins' | 'maxs' | 'inc' | 'dec' | 'fadd' | 'fmin' | 'fmax' | 'hadd' | 'h2add' | 'bfadd' | 'bf2add' | 'cas16'

const NATIVE: Partial<Record<AtomKind, string>> = { add: 'atomicAdd', and: 'atomicAnd', or: 'atomicOr', xor: 'atomicXor', exch: 'atomicExchange', minu: 'atomicMin', maxu: 'atomicMax' }

/** New word from the old word `o` and operand `b` (and `c`, `sh` for 16-bit cases). */
function combine(kind: AtomKind): string {
  switch (kind) {
    case 'mins': return 'bitcast<u32>(min(bitcast<i32>(o), bitcast<i32>(b)))'
    case 'maxs': return 'bitcast<u32>(max(bitcast<i32>(o), bitcast<i32>(b)))'
    case 'inc': return 'kp_inc_wrap(o, b)'
    case 'dec': return 'kp_dec_wrap(o, b)'
    case 'fadd': return 'bitcast<u32>(bitcast<f32>(o) + bitcast<f32>(b))'
    case 'fmin': return 'bitcast<u32>(kp_fmin(bitcast<f32>(o), bitcast<f32>(b)))'
    case 'fmax': return 'bitcast<u32>(kp_fmax(bitcast<f32>(o), bitcast<f32>(b)))'
    case 'hadd': return '(o & ~(0xffffu << sh)) | (kp_f2h(kp_h2f((o >> sh) & 0xffffu) + kp_h2f(b)) << sh)'
    case 'bfadd': return '(o & ~(0xffffu << sh)) | (kp_f2bf(kp_bf2f((o >> sh) & 0xffffu) + kp_bf2f(b)) << sh)'
    case 'h2add': return 'kp_f2h(kp_h2f(o & 0xffffu) + kp_h2f(b & 0xffffu)) | (kp_f2h(kp_h2f(o >> 16u) + kp_h2f(b >> 16u)) << 16u)'
    case 'bf2add': return 'kp_f2bf(kp_bf2f(o & 0xffffu) + kp_bf2f(b & 0xffffu)) | (kp_f2bf(kp_bf2f(o >> 16u) + kp_bf2f(b >> 16u)) << 16u)'
    case 'cas16': return 'select(o, (o & ~(0xffffu << sh)) | ((c & 0xffffu) << sh), ((o >> sh) & 0xffffu) == (b & 0xffffu))'
    default: throw new Error(`internal: ${kind} is native`)
  }
}

/** A CAS-loop helper for `kind` on a space's words; returns its name. Each iteration re-reads, so the result
 *  is that of some order of the operations, as on the GPU (README.md, "Atomics"). */
function casHelper(w: KernelWriter, kind: AtomKind, space: 'global' | 'shared'): string {
  const name = `kp_atom_${kind}_${space[0]}`
  if (!w.helpers.has(name)) {
    const arr = space === 'global' ? 'kp_mem' : 'kp_smem'
    w.helpers.set(name, `fn ${name}(i: u32, b: u32, c: u32, sh: u32) -> u32 {
  var o = atomicLoad(&${arr}[i]);
  loop {
    let r = atomicCompareExchangeWeak(&${arr}[i], o, ${combine(kind)});
    if (r.exchanged) { return o; }
    o = r.old_value;
  }
}`)
  }
  return name
}

/** atom.cas.b32: WGSL's weak exchange may fail spuriously, so retry while the word still equals b. */
function casWordHelper(w: KernelWriter, space: 'global' | 'shared'): string {
  const name = `kp_atom_cas_${space[0]}`
  if (!w.helpers.has(name)) {
    const arr = space === 'global' ? 'kp_mem' : 'kp_smem'
    w.helpers.set(name, `fn ${name}(i: u32, b: u32, c: u32, sh: u32) -> u32 {
  loop {
    let r = atomicCompareExchangeWeak(&${arr}[i], b, c);
    if (r.exchanged || r.old_value != b) { return r.old_value; }
  }
}`)
  }
  return name
}

/** Expression of a 32-bit word atomic at byte address `a` in `space`; its value is the old word. */
function atomicWord(w: KernelWriter, space: Space, kind: AtomKind | 'cas', a: string, b: string, c: string, sh: string): string {
  if (space === 'generic') {
    const g = `kp_gen_atom_${kind}`
    if (!w.helpers.has(g)) {
      const sharedCall = w.mem.usesShared ? `if (a >= ${u32Lit(SHARED_WINDOW)} && a < ${u32Lit(SHARED_WINDOW + WINDOW_BYTES)}) { return ${atomicWordCall(w, 'shared', kind, `(a - ${u32Lit(SHARED_WINDOW)}) >> 2u`, 'b', 'c', 'sh')}; }\n  ` : ''
      w.features.add('kp_gchk')
      w.helpers.set(g, `fn ${g}(a: u32, b: u32, c: u32, sh: u32, line: u32) -> u32 {
  ${sharedCall}let g = kp_gchk(a, 4u, line);
  return ${atomicWordCall(w, 'global', kind, 'g >> 2u', 'b', 'c', 'sh')};
}`)
    }
    return `${g}(${a}, ${b}, ${c}, ${sh}, ${w.ins!.line}u)`
  }
  if (space !== 'global' && space !== 'shared') return w.refuse(`atomics on ${space} memory`)
  return atomicWordCall(w, space, kind, `${par(checked(w, space, a, 4))} >> 2u`, b, c, sh)
}

function atomicWordCall(w: KernelWriter, space: 'global' | 'shared', kind: AtomKind | 'cas', i: string, b: string, c: string, sh: string): string {
  const arr = space === 'global' ? 'kp_mem' : 'kp_smem'
  if (kind === 'cas') return `${casWordHelper(w, space)}(${i}, ${b}, ${c}, 0u)`
  const native = NATIVE[kind]
  if (native) return `${native}(&${arr}[${i}], ${b})`
  return `${casHelper(w, kind, space)}(${i}, ${b}, ${c}, ${sh})`
}

function emitAtomic(w: KernelWriter, ins: Instruction): void {
  const red = ins.op === 'red'
  const A = ins.operands
  const t = ins.type!
  const op = ins.atomOp
  if (!op) return w.refuse('an atomic without an operation')
  if (ins.vector) return w.refuse('vector atomics (.v2/.v4)')
  if (ins.scope === 'sys' || ins.scope === 'cluster') {
    // system scope (host-visible) and cluster scope: within one WebGPU dispatch, device scope is what exists
  }
  const { at, space } = address(w, red ? A[0]! : A[1]!, spaceOf(ins))
  const d = red ? undefined : A[0]
  const bOp = red ? A[1]! : A[2]!
  const cOp = red ? undefined : A[3]
  const used = d?.kind === 'reg' && w.reads(d.id) > 0
  const size = typeSize(t)
  if (t === 'f64') return w.refuse('f64 atomics: WGSL has no f64 and no 64-bit atomics')
  if (size === 8) {
    // u64 add whose old value nobody reads: two 32-bit atomics, the carry of the low word into the high one
    if (op === 'add' && !used) {
      const a = w.tmp(space === 'generic' ? at : checked(w, space, at, 8))
      const b = w.tmp(w.u64(bOp))
      const lo = w.tmp(atomicWord(w, space, 'add', a, `${b}.x`, '0u', '0u'))
      w.line(`${atomicWord(w, space, 'add', `(${a} + 4u)`, `${b}.y + select(0u, 1u, ${lo} + ${b}.x < ${lo})`, '0u', '0u')};`)
      return
    }
    // and/or/xor whose old value nobody reads: each 32-bit half on its own (bitwise operations never carry)
    if ((op === 'and' || op === 'or' || op === 'xor') && !used) {
      const a = w.tmp(space === 'generic' ? at : checked(w, space, at, 8))
      const b = w.tmp(w.u64(bOp))
      w.line(`${atomicWord(w, space, op, a, `${b}.x`, '0u', '0u')};`)
      w.line(`${atomicWord(w, space, op, `(${a} + 4u)`, `${b}.y`, '0u', '0u')};`)
      return
    }
    return w.refuse(`64-bit atom.${op}${['add', 'and', 'or', 'xor'].includes(op) ? ' whose old value is used' : ''}: WGSL has no 64-bit atomics, and a lock would have no forward-progress guarantee`)
  }
  let kind: AtomKind | 'cas'
  const isF = t === 'f32'
  const half = t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2'
  switch (op) {
    case 'add': kind = isF ? 'fadd' : t === 'f16' ? 'hadd' : t === 'bf16' ? 'bfadd' : t === 'f16x2' ? 'h2add' : t === 'bf16x2' ? 'bf2add' : 'add'; break
    case 'min': kind = isF ? 'fmin' : t === 's32' ? 'mins' : 'minu'; break
    case 'max': kind = isF ? 'fmax' : t === 's32' ? 'maxs' : 'maxu'; break
    case 'and': case 'or': case 'xor': kind = op; break
    case 'exch': kind = 'exch'; break
    case 'inc': case 'dec': kind = op; break
    case 'cas': kind = size === 2 ? 'cas16' : 'cas'; break
    default: return w.refuse(`atom.${op}`)
  }
  if (half && op !== 'add') return w.refuse(`atom.${op}.${t}`)
  if ((isF || half) && ['and', 'or', 'xor', 'inc', 'dec', 'cas'].includes(op)) return w.refuse(`atom.${op}.${t}`)
  if (size === 2 && kind !== 'hadd' && kind !== 'bfadd' && kind !== 'cas16') return w.refuse(`16-bit atom.${op}`)
  if (size === 1) return w.refuse('8-bit atomics')
  const a = w.tmp(at)
  const b = w.tmp(isF ? `bitcast<u32>(${w.f32(bOp)})` : w.u32(bOp, size === 2 ? 'b16' : 'b32'))
  const c = cOp ? w.tmp(w.u32(cOp, size === 2 ? 'b16' : 'b32')) : '0u'
  if (size === 2) {
    const word = w.tmp(`${a} & ~3u`)
    const sh = w.tmp(`(${a} & 2u) * 8u`)
    const old = w.tmp(atomicWord(w, space, kind, word, b, c, sh))
    if (d) w.setU32(d, `(${old} >> ${sh}) & 0xffffu`, t)
    return
  }
  const old = w.tmp(atomicWord(w, space, kind, a, b, c, '0u'))
  if (!d) return
  if (isF) w.setF32(d, `bitcast<f32>(${old})`)
  else w.setU32(d, old, t)
}

/** Whether the kernel checks global accesses (kp_gchk): its threads then record their first fault when they end. */
export function checksGlobal(w: KernelWriter): boolean {
  const f = w.features
  return f.has('kp_gchk') || f.has('kp_gen_ldw') || f.has('kp_gen_stw') || f.has('kp_gen_stb')
}

/** Helpers the kernel's generic accesses and checks use. */
export function memoryHelpers(w: KernelWriter, unchecked = false): string[] {
  const out: string[] = []
  const f = w.features
  // the record is written by the checks of the checked variant and by trap and assert
  if ((checksGlobal(w) && !unchecked) || f.has('kp_trap')) {
    // one atomicMax, no compare-exchange loop: the invocation that finds the word 0 owns the record (the
    // loop cost about 5 % of a vector add on SwiftShader even when no thread faulted)
    out.push(`// the first fault of a launch wins the record (layout.ts): kernel id + 1, PTX line, address, kind
fn kp_fault_at(line: u32, a: u32, kind: u32) {
  if (atomicMax(&kp_fault[0], kp_launch.kernel_id + 1u) == 0u) { atomicStore(&kp_fault[1], line); atomicStore(&kp_fault[2], a); atomicStore(&kp_fault[3], kind); }
}`)
  }
  // a trap or failed assert records the thread's earlier access fault first (kp_fault_flush), as it came first
  if (f.has('kp_trap') && (!checksGlobal(w) || unchecked)) out.push('fn kp_fault_flush() {}')
  // the variant a launch runs when every access is proven inside the arena (access-sites.ts)
  if (checksGlobal(w) && unchecked) out.push(`// every access of this launch is inside the arena (checked on the host: access-sites.ts)
fn kp_gchk(a: u32, n: u32, line: u32) -> u32 { return a; }`)
  if (checksGlobal(w) && !unchecked) {
    // No branch per access: a branch around the record's atomics made every checked access several times
    // slower on SwiftShader (vector add 2^22: 83 ms against 44 without it); selects keep the access straight.
    // Which fault a thread keeps: the one at the lowest PTX line (the first in time among those at that line).
    // Keeping the first in time (a select on "no fault yet") made SwiftShader's pipeline compile of a loop with
    // 16 checked accesses (clang's scan_uniform_add, unrolled by 8) run for minutes and lose the device: its
    // optimizer threads the jumps of that chain of conditions, one path per state; a running minimum compiles
    // in 0.15 s. For a thread that faults at one place, the two are the same.
    out.push(`// a global access of n bytes at a: inside the arena and past the reserved page; else it goes to the
// reserved page and the thread's fault at the lowest PTX line is kept (the first at that line), to be
// recorded when the thread ends (kp_main) or traps (kp_fault_flush)
var<private> kp_fault_line: u32 = 0xffffffffu;
var<private> kp_fault_addr: u32;
fn kp_gchk(a: u32, n: u32, line: u32) -> u32 {
  let bad = a < ${RESERVED_BYTES}u || a > arrayLength(&kp_mem) * 4u - n;
  let key = select(0xffffffffu, line, bad);
  kp_fault_addr = select(kp_fault_addr, a, key < kp_fault_line);
  kp_fault_line = min(kp_fault_line, key);
  return select(a, 0u, bad);
}
fn kp_fault_flush() {
  if (kp_fault_line != 0xffffffffu) { kp_fault_at(kp_fault_line, kp_fault_addr, ${FAULT_KIND.access}u); }
}`)
  }
  const g = w.mem.globalAtomic
  const s = w.mem.sharedAtomic
  const local = w.mem.localBytes > 0
  const shared = w.mem.usesShared
  const winCase = (body: (space: 'shared' | 'local', idx: string) => string) => [
    local ? `if (a >= ${u32Lit(LOCAL_WINDOW)}) { ${body('local', `(a - ${u32Lit(LOCAL_WINDOW)}) >> 2u`)} }` : '',
    shared ? `if (a >= ${u32Lit(SHARED_WINDOW)} && a < ${u32Lit(SHARED_WINDOW + WINDOW_BYTES)}) { ${body('shared', `(a - ${u32Lit(SHARED_WINDOW)}) >> 2u`)} }` : '',
  ].filter(Boolean).join('\n  ')
  const rd = (space: 'shared' | 'local', i: string) => space === 'local' ? localWord(w, i) : s ? `atomicLoad(&kp_smem[${i}])` : `kp_smem[${i}]`
  if (f.has('kp_gen_ldw')) {
    out.push(`// the word holding generic address a (PTX ISA, "Generic Addressing"; windows in layout.ts)
fn kp_gen_ldw(a: u32, line: u32) -> u32 {
  ${winCase((sp, i) => `return ${rd(sp, i)};`)}
  let i = kp_gchk(a & ~3u, 4u, line) >> 2u;
  return ${g ? 'atomicLoad(&kp_mem[i])' : 'kp_mem[i]'};
}`.replace('\n  \n', '\n'))
  }
  if (f.has('kp_gen_stw')) {
    out.push(`fn kp_gen_stw(a: u32, v: u32, line: u32) {
  ${winCase((sp, i) => sp === 'local' ? `${localWord(w, i)} = v; return;` : s ? `atomicStore(&kp_smem[${i}], v); return;` : `kp_smem[${i}] = v; return;`)}
  let i = kp_gchk(a & ~3u, 4u, line) >> 2u;
  ${g ? 'atomicStore(&kp_mem[i], v);' : 'kp_mem[i] = v;'}
}`)
  }
  if (f.has('kp_gen_stb')) {
    out.push(`fn kp_gen_stb(a: u32, v: u32, mask: u32, line: u32) {
  let sh = (a & 3u) * 8u;
  ${winCase((sp, i) => sp === 'local' ? `${localWord(w, i)} = (${localWord(w, i)} & ~(mask << sh)) | ((v & mask) << sh); return;` : `atomicAnd(&kp_smem[${i}], ~(mask << sh)); atomicOr(&kp_smem[${i}], (v & mask) << sh); return;`)}
  let i = kp_gchk(a & ~3u, 4u, line) >> 2u;
  atomicAnd(&kp_mem[i], ~(mask << sh));
  atomicOr(&kp_mem[i], (v & mask) << sh);
}`)
  }
  return out
}

/** Writes `ins` when it is a memory instruction; false otherwise. */
export function emitMemoryOp(w: KernelWriter, ins: Instruction): boolean {
  switch (ins.op) {
    case 'ld': case 'ldu':
      emitLoad(w, ins)
      return true
    case 'st': {
      // an argument of a call (st.param into the callseq's own .param variable): the call decides, and the only
      // call that translates (__assertfail, emit-ops.ts) reads none of its arguments
      const a = ins.operands[0]
      const sym = a?.kind === 'addr' && a.base?.kind === 'sym' ? a.base.name : undefined
      if (ins.space === 'param' && sym !== undefined && w.fn.vars.some((v) => v.space === 'param' && v.name === sym)) {
        w.line(`// ${ins.text.replace(/\s+/g, ' ')} (a call argument)`)
        return true
      }
      emitStore(w, ins)
      return true
    }
    case 'atom': case 'red':
      emitAtomic(w, ins)
      return true
    case 'cvta': {
      // cvta.{space}: space address → generic; cvta.to.{space}: generic → space address (windows in layout.ts)
      const wide = ins.type !== 'u32'
      const src = wide ? w.u64(ins.operands[1]!) : `vec2<u32>(${w.u32(ins.operands[1]!)}, 0u)`
      const win = ins.space === 'shared' ? SHARED_WINDOW : ins.space === 'local' ? LOCAL_WINDOW : 0
      if (ins.space === 'param') return w.refuse('generic addresses of kernel parameters (cvta.param)')
      let e = src
      if (win) e = ins.flags.to ? `vec2<u32>(${src}.x - ${u32Lit(win)}, 0u)` : `vec2<u32>(${src}.x + ${u32Lit(win)}, 0u)`
      if (wide) w.setU64(ins.operands[0], e)
      else w.setU32(ins.operands[0], `${e}.x`)
      return true
    }
    case 'isspacep': {
      const a = w.tmp(w.u64(ins.operands[1]!))
      const inWin = (base: number) => `(${a}.y == 0u && ${a}.x >= ${u32Lit(base)} && ${a}.x < ${u32Lit(base + WINDOW_BYTES)})`
      let e: string
      switch (ins.space) {
        case 'shared': e = inWin(SHARED_WINDOW); break
        case 'local': e = inWin(LOCAL_WINDOW); break
        case 'global': e = `(${a}.y == 0u && ${a}.x >= ${RESERVED_BYTES}u && ${a}.x < ${u32Lit(SHARED_WINDOW)})`; break
        default: e = 'false'
      }
      w.setPred(ins.operands[0], e)
      return true
    }
    case 'cp': {
      if (!ins.flags.async) return w.refuse(`cp without .async`)
      if (ins.mode) return true // commit_group / wait_group / wait_all: the copies were done synchronously
      if (ins.flags.bulk || (ins.hints ?? []).some((h) => h.startsWith('complete_tx'))) return w.refuse('bulk asynchronous copies (TMA, mbarrier completion)')
      // cp.async.mbarrier.arrive: an mbarrier operation (emit-mbarrier.ts, through emit-ops.ts)
      if ((ins.hints ?? []).includes('mbarrier')) return false
      // cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}: copied now, zero-filled past src-size
      const sizeOp = ins.operands[2]
      const size = sizeOp?.kind === 'imm' && sizeOp.imm.kind === 'int' ? Number(sizeOp.imm.value) : w.refuse('cp.async with a size that is not an immediate')
      if (size % 4 !== 0) return w.refuse(`cp.async of ${size} bytes`)
      const dst = address(w, ins.operands[0]!, 'shared')
      const src = address(w, ins.operands[1]!, 'global')
      const d = w.tmp(dst.at)
      const s = w.tmp(checked(w, src.space, src.at, size, ins.operands[1]))
      const n = ins.operands[3] ? w.tmp(w.u32(ins.operands[3])) : undefined
      for (let k = 0; k < size / 4; k++) {
        let v = loadWord(w, src.space, `(${s} >> 2u) + ${k}u`)
        if (n) v = `select(select(0u, ${v} & ((1u << ((${n} - ${4 * k}u) * 8u)) - 1u), ${n} > ${4 * k}u), ${v}, ${n} >= ${4 * k + 4}u)`
        storeWord(w, dst.space, `(${d} >> 2u) + ${k}u`, v)
      }
      return true
    }
    default:
      return false
  }
}
