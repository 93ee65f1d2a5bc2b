// Tensor cores (PTX ISA 9.x, "Warp Level Matrix Multiply-Accumulate Instructions"): which element of a matrix
// each lane's fragment holds, and the matrix product a warp computes. One table of fragment layouts serves
// every writer: the emulator's (wmma.load/store move a lane's own elements; the product, mmaLane in
// @kernelpack/emulator, from every lane's fragments) and the WGSL translator's (@kernelpack/webgpu).
//
// mma.sync layouts are the ISA's fragment tables, "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32 /
// m8n8k4" (section 9.7.14.5): with groupID g = laneid >> 2 and threadID_in_group q = laneid % 4,
//   f16/bf16 m16n8k16  A a0..a7: row g (+8 for a2,a3,a6,a7), col 2q + (i & 1) (+8 for i ≥ 4)
//                      B b0..b3: row 2q + (i & 1) (+8 for i ≥ 2), col g
//                      C c0..c3: row g (+8 for i ≥ 2), col 2q + (i & 1)
//   f16/bf16 m16n8k8   A a0..a3: row g (+8 for i ≥ 2), col 2q + (i & 1);  B b0,b1: row 2q + i, col g
//   tf32 m16n8k8       A a0..a3: row g (+8 for a1,a3), col q (+4 for a2,a3);  B b0,b1: row q + 4i, col g
//   tf32 m16n8k4       A a0,a1: row g + 8i, col q;  B b0: row q, col g
//   s8/u8 m16n8k16     A a0..a7: row g (+8 for i ≥ 4), col 4q + (i & 3);  B b0..b3: row 4q + i, col g
//   s8/u8 m16n8k32     A a0..a15: row g (+8 for 4 ≤ i%8), col 4q + (i & 3) (+16 for i ≥ 8);
//                      B b0..b7: row 4q + (i & 3) (+16 for i ≥ 4), col g
//   f64 m8n8k4         A a0: row g, col q;  B b0: row q, col g;  C c0,c1: row g, col 2q + i
// wmma fragments are unspecified by the ISA ("the mapping of matrix elements into fragments is unspecified"):
// every writer builds them from the same tables, tiled over the wmma shape (C of m16n16k16 is two m16n8 C
// tiles, elements 0–3 columns 0–7 and 4–7 columns 8–15), as the hardware does on sm_80; the f16 A and B
// fragments have twice the slots the matrix needs and repeat it. Shapes the tables do not tile (m8n32k16's
// A, m32n8k16's B) spread the matrix linearly (element i of lane l is element (32i + l) mod size, row-major).
import type { Instruction, Operand as IrOperand } from './ir.js'

export type ElemType = 'f16' | 'bf16' | 'tf32' | 'f32' | 'f64' | 'u8' | 's8' | 's32'
export type Matrix = 'a' | 'b' | 'c'

/** Elements per register: f16/bf16 pack two in a .b32 (.f16x2), u8/s8 four, the rest one. */
export function perRegister(t: ElemType): number {
  return t === 'f16' || t === 'bf16' ? 2 : t === 'u8' || t === 's8' ? 4 : 1
}

/** Bytes of one element in memory. */
export function elemBytes(t: ElemType): number {
  return t === 'f16' || t === 'bf16' ? 2 : t === 'u8' || t === 's8' ? 1 : t === 'f64' ? 8 : 4
}

export interface FragmentLayout {
  rows: number
  cols: number
  /** Elements per lane. */
  count: number
  /** Row and column of element i of lane l, at [l * count + i]. */
  row: Int16Array
  col: Int16Array
}

type Pos = (g: number, q: number, i: number) => [number, number]

function layout(rows: number, cols: number, count: number, pos: Pos): FragmentLayout {
  const row = new Int16Array(32 * count), col = new Int16Array(32 * count)
  for (let l = 0; l < 32; l++) {
    for (let i = 0; i < count; i++) {
      const [r, c] = pos(l >> 2, l & 3, i)
      row[l * count + i] = r
      col[l * count + i] = c
    }
  }
  return { rows, cols, count, row, col }
}

/** The ISA's mma fragment of `matrix` for a shape and element type (see the table above); undefined for a
 *  form the emulator does not know. */
export function mmaFragment(shape: string, matrix: Matrix, t: ElemType): FragmentLayout | undefined {
  const half = t === 'f16' || t === 'bf16', int8 = t === 'u8' || t === 's8'
  if (matrix === 'c') {
    if (shape === 'm8n8k4') return t === 'f64' ? layout(8, 8, 2, (g, q, i) => [g, 2 * q + i]) : undefined
    if (!/^m16n8k/.test(shape)) return undefined
    return layout(16, 8, 4, (g, q, i) => [g + 8 * (i >> 1), 2 * q + (i & 1)])
  }
  const a = matrix === 'a'
  switch (shape) {
    case 'm16n8k16':
      if (half) return a ? layout(16, 16, 8, (g, q, i) => [g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2)]) : layout(16, 8, 4, (g, q, i) => [2 * q + (i & 1) + 8 * (i >> 1), g])
      if (int8) return a ? layout(16, 16, 8, (g, q, i) => [g + 8 * (i >> 2), 4 * q + (i & 3)]) : layout(16, 8, 4, (g, q, i) => [4 * q + i, g])
      return undefined
    case 'm16n8k8':
      if (half) return a ? layout(16, 8, 4, (g, q, i) => [g + 8 * (i >> 1), 2 * q + (i & 1)]) : layout(8, 8, 2, (g, q, i) => [2 * q + i, g])
      if (t === 'tf32') return a ? layout(16, 8, 4, (g, q, i) => [g + 8 * (i & 1), q + 4 * (i >> 1)]) : layout(8, 8, 2, (g, q, i) => [q + 4 * i, g])
      return undefined
    case 'm16n8k4':
      if (t === 'tf32') return a ? layout(16, 4, 2, (g, q, i) => [g + 8 * i, q]) : layout(4, 8, 1, (g, q) => [q, g])
      return undefined
    case 'm16n8k32':
      if (int8) return a ? layout(16, 32, 16, (g, q, i) => [g + 8 * ((i >> 2) & 1), 4 * q + (i & 3) + 16 * (i >> 3)]) : layout(32, 8, 8, (g, q, i) => [4 * q + (i & 3) + 16 * (i >> 2), g])
      return undefined
    case 'm8n8k4':
      if (t === 'f64') return a ? layout(8, 4, 1, (g, q) => [g, q]) : layout(4, 8, 1, (g, q) => [q, g])
      return undefined
    default: return undefined
  }
}

const WMMA_SHAPES: Record<string, [number, number, number]> = { m16n16k16: [16, 16, 16], m32n8k16: [32, 8, 16], m8n32k16: [8, 32, 16], m16n16k8: [16, 16, 8], m8n8k4: [8, 8, 4] }

/** Registers of a wmma fragment (PTX ISA, "Matrix Fragments for WMMA"): f16 A/B take eight .f16x2 whatever
 *  the shape; the other types exactly the matrix's elements over 32 lanes. */
function wmmaRegisters(rows: number, cols: number, matrix: Matrix, t: ElemType): number {
  if (t === 'f16' && matrix !== 'c') return 8
  return (rows * cols) / 32 / perRegister(t)
}

/** The emulator's wmma fragment (see the file comment); undefined for a shape/type wmma does not have. */
export function wmmaFragment(shape: string, matrix: Matrix, t: ElemType): FragmentLayout | undefined {
  const mnk = WMMA_SHAPES[shape]
  if (!mnk) return undefined
  const [m, n, k] = mnk
  const ok = shape === 'm8n8k4' ? t === 'f64' : shape === 'm16n16k8' ? (matrix === 'c' ? t === 'f32' : t === 'tf32')
    : matrix === 'c' ? t === 'f32' || t === 'f16' || t === 's32' : t === 'f16' || t === 'bf16' || t === 'u8' || t === 's8'
  if (!ok) return undefined
  const rows = matrix === 'b' ? k : m, cols = matrix === 'a' ? k : n
  const count = wmmaRegisters(rows, cols, matrix, t) * perRegister(t)
  // the mma.sync tile of this element type, tiled row-major over the matrix
  const atomShape = t === 'f64' ? 'm8n8k4' : t === 'tf32' ? 'm16n8k8' : 'm16n8k16'
  const atom = mmaFragment(atomShape, matrix, matrix === 'c' ? (t === 'f64' ? 'f64' : 'f32') : t)!
  if (rows % atom.rows === 0 && cols % atom.cols === 0) {
    const tr = rows / atom.rows, tc = cols / atom.cols, unique = tr * tc * atom.count
    if (count % unique === 0) {
      return layout(rows, cols, count, (g, q, i) => {
        const e = i % unique, tile = Math.floor(e / atom.count), j = e % atom.count, l = 4 * g + q
        return [Math.floor(tile / tc) * atom.rows + atom.row[l * atom.count + j]!, (tile % tc) * atom.cols + atom.col[l * atom.count + j]!]
      })
    }
  }
  return layout(rows, cols, count, (g, q, i) => {
    const p = (32 * i + 4 * g + q) % (rows * cols)
    return [Math.floor(p / cols), p % cols]
  })
}

export interface MmaSpec {
  m: number; n: number; k: number
  a: ElemType; b: ElemType; c: ElemType; d: ElemType
  la: FragmentLayout; lb: FragmentLayout; lc: FragmentLayout; ld: FragmentLayout
  /** (lane, element) of each matrix element of A (row-major), B and C, for the product. */
  ia: Int32Array; ib: Int32Array; ic: Int32Array
  satfinite: boolean
}

/** Where each element of a matrix is first held: lane·count + element, row-major over the matrix. */
function inverse(f: FragmentLayout): Int32Array {
  const out = new Int32Array(f.rows * f.cols).fill(-1)
  for (let x = 0; x < 32 * f.count; x++) {
    const at = f.row[x]! * f.cols + f.col[x]!
    if (out[at] === -1) out[at] = x
  }
  return out
}

const specs = new Map<string, MmaSpec | string>()

/** The product a wmma.mma or mma.sync computes, by a key `wmma|mma:shape:d:a:b:c[:satfinite]` (types as the
 *  instruction names them, atype/btype f16 for wmma's two-type f16 form); a string says why not. */
export function mmaSpec(key: string): MmaSpec | string {
  let s = specs.get(key)
  if (s !== undefined) return s
  const [kind, shape, d, a, b, c, sat] = key.split(':') as [string, string, ElemType, ElemType, ElemType, ElemType, string | undefined]
  const frag = kind === 'wmma' ? wmmaFragment : mmaFragment
  const mnk = /^m(\d+)n(\d+)k(\d+)$/.exec(shape)
  const la = frag(shape, 'a', a), lb = frag(shape, 'b', b), lc = frag(shape, 'c', c), ld = frag(shape, 'c', d)
  const int = a === 'u8' || a === 's8'
  const accOk = int ? c === 's32' && d === 's32' : a === 'f64' ? c === 'f64' && d === 'f64' : (c === 'f32' || c === 'f16') && (d === 'f32' || d === 'f16')
  if (!mnk || !la || !lb || !lc || !ld || a !== b && !(int && (b === 'u8' || b === 's8')) || !accOk) s = `unsupported ${kind} form .${shape} .${d}.${a}.${b}.${c}`
  else s = { m: +mnk[1]!, n: +mnk[2]!, k: +mnk[3]!, a, b, c, d, la, lb, lc, ld, ia: inverse(la), ib: inverse(lb), ic: inverse(lc), satfinite: sat === 'satfinite' }
  specs.set(key, s)
  return s
}

/** The layout of one wmma fragment, by a key `shape:matrix:type` (cached; emit-instruction.ts's code reads
 *  row[lane·count + i] and col[…]). */
export function tcLayout(key: string): FragmentLayout {
  const [shape, matrix, t] = key.split(':') as [string, Matrix, ElemType]
  const f = wmmaFragment(shape, matrix, t)
  if (!f) throw new Error(`no wmma fragment ${key}`)
  return f
}

/** The element types tensor-core instructions name. */
export const TC_TYPES: ReadonlySet<string> = new Set(['f16', 'bf16', 'tf32', 'f32', 'f64', 'u8', 's8', 's32'])

/** How a fragment register of element type t is read (the writers' kinds): f32 and tf32 as f32, f64 as
 *  f64, packed and integer types as 32-bit words. */
export function fragKind(t: ElemType): 'i32' | 'f32' | 'f64' {
  return t === 'f32' || t === 'tf32' ? 'f32' : t === 'f64' ? 'f64' : 'i32'
}

/** What a wmma.mma or mma.sync instruction computes: its key (mmaSpec, mmaLane), the product's spec and the
 *  element types of D, A, B, C; a string says why the form is not run. `op`, `shape`, `types`, `layout`
 *  (the first layout qualifier) and `satfinite` come from the instruction. */
export function mmaForm(op: string, shape: string, types: ReadonlyArray<string | undefined>, layout: string | undefined, satfinite: boolean): { key: string; spec: MmaSpec; d: ElemType; a: ElemType; b: ElemType; c: ElemType } | string {
  // wmma's f16 form names only D and C (.f32.f32); its other forms and mma.sync name D, A, B, C
  const ty = op === 'wmma' && types.length === 2 ? [types[0], 'f16', 'f16', types[1]] : types
  if (ty.length !== 4 || !ty.every((x) => x !== undefined && TC_TYPES.has(x))) return ''
  if (op === 'mma' && (layout ?? 'row') !== 'row' && shape !== 'm8n8k4') return ''
  const [d, a, b, c] = ty as ElemType[]
  const key = `${op}:${shape}:${d}:${a}:${b}:${c}${satfinite ? ':satfinite' : ''}`
  const spec = mmaSpec(key)
  return typeof spec === 'string' ? spec : { key, spec, d: d!, a: a!, b: b!, c: c! }
}

/** Which element of a wmma fragment's matrix lane l's element e holds, as two bit-affine functions of the
 *  lane: row(l, e) = row0[e] + Σ rowBit[j]·bit j of l, and col likewise, with the lane parts the same for
 *  every element (every layout of wmmaFragment has that form: the ISA's tables are affine in groupID and
 *  threadID_in_group, the linear spread is 32·e + l). Undefined for a layout that has not. */
export function laneAffine(f: FragmentLayout): { row0: number[]; col0: number[]; rowBit: number[]; colBit: number[] } | undefined {
  const at = (m: Int16Array, l: number, e: number) => m[l * f.count + e]!
  const row0 = Array.from({ length: f.count }, (_, e) => at(f.row, 0, e)), col0 = Array.from({ length: f.count }, (_, e) => at(f.col, 0, e))
  const rowBit = [0, 1, 2, 3, 4].map((j) => at(f.row, 1 << j, 0) - row0[0]!), colBit = [0, 1, 2, 3, 4].map((j) => at(f.col, 1 << j, 0) - col0[0]!)
  for (let l = 0; l < 32; l++) {
    let dr = 0, dc = 0
    for (let j = 0; j < 5; j++) if ((l >> j) & 1) { dr += rowBit[j]!; dc += colBit[j]! }
    for (let e = 0; e < f.count; e++) if (at(f.row, l, e) !== row0[e]! + dr || at(f.col, l, e) !== col0[e]! + dc) return undefined
  }
  return { row0, col0, rowBit, colBit }
}

// --- the operands of the instructions, for every writer (the emulator's two tiers, the WGSL translator) ---

const opcodeOf = (ins: Instruction) => [ins.op, ...ins.qualifiers].join('.')

/** The registers of vector operand `o` (or `o` alone), or why not: it must have n. */
function registers(o: IrOperand | undefined, n: number, what: string): IrOperand[] | string {
  const items = o?.kind === 'vec' ? o.items : o ? [o] : []
  return items.length === n ? items : `${what} needs ${n} registers, got ${items.length}`
}

/** A wmma.mma / mma.sync instruction's form and its D, A, B, C registers; a string says why not. */
export function mmaOperands(ins: Instruction): { form: Exclude<ReturnType<typeof mmaForm>, string>; rd: IrOperand[]; ra: IrOperand[]; rb: IrOperand[]; rc: IrOperand[] } | string {
  const A = ins.operands
  const opcode = opcodeOf(ins)
  const form = mmaForm(ins.op, ins.shape?.[0] ?? '', ins.types, ins.layouts?.[0], ins.flags.satfinite === true)
  if (typeof form === 'string') return `unsupported instruction ${opcode}${form ? ` (${form})` : ''}`
  const { spec } = form
  const ra = registers(A[1], spec.la.count / perRegister(form.a), `${opcode} A`)
  const rb = registers(A[2], spec.lb.count / perRegister(form.b), `${opcode} B`)
  const rc = registers(A[3], spec.lc.count / perRegister(form.c), `${opcode} C`)
  const rd = registers(A[0], spec.ld.count / perRegister(form.d), `${opcode} D`)
  for (const r of [ra, rb, rc, rd]) if (typeof r === 'string') return r
  return { form, ra: ra as IrOperand[], rb: rb as IrOperand[], rc: rc as IrOperand[], rd: rd as IrOperand[] }
}

/** ldmatrix/stmatrix .m8n8 .x1/.x2/.x4 .b16: the registers (one per matrix); a string says why not. */
export function matrixOperands(ins: Instruction): IrOperand[] | string {
  const num = Number(ins.shape?.find((x) => /^x[124]$/.test(x))?.slice(1) ?? 0)
  if (!ins.shape?.includes('m8n8') || !num || ins.type !== 'b16') return `unsupported instruction ${opcodeOf(ins)}`
  return registers(ins.operands[ins.op === 'stmatrix' ? 1 : 0], num, opcodeOf(ins))
}

/** wmma.load.{a,b,c} / wmma.store.d: the fragment, the element type and its sizes, the registers, the layout;
 *  a string says why not. */
export function wmmaOperands(ins: Instruction): { f: FragmentLayout; matrix: Matrix; t: ElemType; per: number; esz: number; regs: IrOperand[]; store: boolean; rowMajor: boolean } | string {
  const t = ins.type as ElemType
  const store = ins.mode === 'store'
  const matrix = store ? 'c' : ins.fragment === 'd' ? undefined : ins.fragment
  const f = matrix && TC_TYPES.has(t) ? wmmaFragment(ins.shape?.[0] ?? '', matrix, t) : undefined
  if (!f || !matrix) return `unsupported instruction ${opcodeOf(ins)}`
  const per = perRegister(t)
  const regs = registers(ins.operands[store ? 1 : 0], f.count / per, opcodeOf(ins))
  if (typeof regs === 'string') return regs
  return { f, matrix, t, per, esz: elemBytes(t), regs, store, rowMajor: (ins.layouts?.[0] ?? 'row') === 'row' }
}
