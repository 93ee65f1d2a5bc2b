// Tensor cores on WebGPU (issue 26 item 7): wmma.load/store, wmma.mma and mma.sync, with the fragment layouts
// of @kernelpack/ptx (tensor-core.ts, the emulator's tables) and the emulator's arithmetic, bit for bit.
//
// wmma.load/store: each lane moves its own elements; which matrix element a lane's element e is, is
// row0[e] + (a bit-affine function of the lane), col likewise (laneAffine), so the WGSL computes the lane
// part once and adds per-element constants. A global fragment is checked at its two ends, a generic one finds
// its space once (emitWmmaMemory).
//
// wmma.mma / mma.sync: the lanes of a warp exchange fragments through workgroup memory laid out as the
// matrices (`kp_tc`: per warp, A row-major m×k then B row-major k×n, one word an element, two for f64). Each
// element of A and B is written by the lane the emulator reads it from (the first holder: f16 fragments hold
// every element twice), one workgroupBarrier, then each lane computes its elements of D from the rows and
// columns it needs and its own C (the C and D fragments place elements alike), and a second barrier keeps the
// next product from overwriting a matrix another lane still reads. The arithmetic is mmaLane's: products of
// f16/bf16/tf32 (exact in binary64) summed in binary64 in k order, then C added and the sum rounded once to
// f32 or f16, all in software binary64 (wgsl-lib.ts kp_f64_fma); f64 chains fma in k order; integers exact
// in i32, wrapped (clamped with .satfinite). One helper function per form computes a lane's elements in a
// loop, so a kernel with several products keeps one copy of the arithmetic per product site.
import { laneAffine, mmaOperands, perRegister, wmmaOperands, type ElemType, type FragmentLayout, type Instruction, type MmaSpec } from '@kernelpack/ptx'
import type { KernelWriter } from './emit-kernel.js'
import { address, checked, loadBits, spaceOf, storeBytes, storeWord, type Space } from './emit-memory.js'
import { LOCAL_WINDOW, SHARED_WINDOW, WINDOW_BYTES } from './layout.js'
import { F64_ONE, u32Lit } from './wgsl-text.js'

/** The workgroup scratch of the products, and the WGSL constant of its words per warp (the largest form's A and B:
 *  KernelWriter.tcWords). */
export const TC_SCRATCH = 'kp_tc'
export const TC_WORDS = 'kp_tcw'

/** The lane's part of a fragment's row and column (laneAffine), as WGSL of `lane`; refuses a layout that is
 *  not bit-affine in the lane. */
function lanePart(w: KernelWriter, f: FragmentLayout, lane: string): { row0: number[]; col0: number[]; lr: string; lc: string } {
  const a = laneAffine(f)
  if (!a) return w.refuse('a tensor-core fragment whose layout is not affine in the lane')
  const sum = (bits: number[]) => {
    const terms = bits.flatMap((k, j) => (k === 0 ? [] : [`(((${lane}) >> ${j}u) & 1u) * ${k}u`]))
    return terms.length ? w.tmp(terms.join(' + ')) : '0u'
  }
  return { row0: a.row0, col0: a.col0, lr: sum(a.rowBit), lc: sum(a.colBit) }
}

/** wmma.load.{a,b,c} / wmma.store.d: each lane its own elements, at base + (row·stride + col)·size (column
 *  major: col·stride + row), stride in elements (default: the matrix's leading dimension). */
export function emitWmmaMemory(w: KernelWriter, ins: Instruction): void {
  const o = wmmaOperands(ins)
  if (typeof o === 'string') return w.refuse(o)
  const { f, t, per, esz, regs, store, rowMajor } = o
  const A = ins.operands
  const { at, space } = address(w, store ? A[0]! : A[1]!, spaceOf(ins))
  const base = w.tmp(at)
  const stride = w.tmp(A[2] ? w.u32(A[2]) : `${rowMajor ? f.cols : f.rows}u`)
  const { row0, col0, lr, lc } = lanePart(w, f, 'kp_t & 31u')
  // The lane's elements lie between its smallest row and column and its largest ones (offset = row·stride +
  // col, stride ≥ 0; column major col·stride + row): the two ends are checked, and the arena is contiguous
  // between them. One check per element made SwiftShader's pipeline compile of a wmma GEMM run past 80 s
  // and lose the device; two per fragment keep it at the size of any kernel's. A fragment partly outside
  // the arena records the fault at its first end outside, and all its elements go to the reserved page.
  const offset = (r: string, c: string) => (rowMajor ? `${r} * ${stride} + ${c}` : `${c} * ${stride} + ${r}`)
  const rel = (e: number) => `(${offset(`(${row0[e]}u + ${lr})`, `(${col0[e]}u + ${lc})`)}) * ${esz}u`
  const lo = w.tmp(`${base} + (${offset(`(${Math.min(...row0)}u + ${lr})`, `(${Math.min(...col0)}u + ${lc})`)}) * ${esz}u`)
  const hi = w.tmp(`${base} + (${offset(`(${Math.max(...row0)}u + ${lr})`, `(${Math.max(...col0)}u + ${lc})`)}) * ${esz}u`)
  /** The elements in `sp`, the fragment starting at byte `b` of it (`ok`: its ends are inside the arena). */
  const move = (sp: Space, b: string, ok?: string) => {
    const addr = (e: number) => w.tmp(ok ? `select(0u, ${b} + ${rel(e)}, ${ok})` : `${b} + ${rel(e)}`)
    regs.forEach((r, j) => {
      if (store) {
        if (esz === 8) {
          const v = w.tmp(w.u64(r))
          const a = addr(j)
          storeWord(w, sp, `${a} >> 2u`, `${v}.x`)
          storeWord(w, sp, `(${a} >> 2u) + 1u`, `${v}.y`)
          return
        }
        const v = w.tmp(w.u32(r))
        if (per === 1) { storeWord(w, sp, `${addr(j)} >> 2u`, v); return }
        for (let x = 0; x < per; x++) storeBytes(w, sp, addr(j * per + x), `${v} >> ${(32 / per) * x}u`, esz)
        return
      }
      if (esz === 8) return w.setU64(r, loadBits(w, sp, addr(j), 8))
      if (per === 1) return w.setU32(r, loadBits(w, sp, addr(j), 4), t === 'f32' || t === 'tf32' ? 'f32' : 'b32')
      const parts = Array.from({ length: per }, (_, x) => `(${loadBits(w, sp, addr(j * per + x), esz)} << ${(32 / per) * x}u)`)
      w.setU32(r, parts.join(' | '))
    })
  }
  const global = () => move('global', base, w.tmp(`${checked(w, 'global', lo, esz)} == ${lo} && ${checked(w, 'global', hi, esz)} == ${hi}`))
  if (space === 'global') return global()
  if (space !== 'generic') return move(space, base)
  // a generic fragment: its space from the window its first element is in (PTX ISA, "Generic Addressing";
  // layout.ts), once for the fragment instead of once per element
  const windows: Array<[Space, number]> = []
  if (w.mem.usesShared) windows.push(['shared', SHARED_WINDOW])
  if (w.mem.localBytes > 0) windows.push(['local', LOCAL_WINDOW])
  for (const [sp, win] of windows) {
    w.open(`if (${lo} >= ${u32Lit(win)} && ${lo} < ${u32Lit(win + WINDOW_BYTES)}) {`)
    move(sp, w.tmp(`${base} - ${u32Lit(win)}`))
    w.close()
    w.open('else {')
  }
  global()
  for (let i = 0; i < windows.length; i++) w.close()
}

/** Words of scratch one element of type t takes. */
const wordsOf = (t: ElemType) => (t === 'f64' ? 2 : 1)

/** For element e of fragment f, the lanes that write it to the scratch: those the emulator reads the
 *  matrix element from (MmaSpec.ia/ib: its first holder). */
function firstHolders(f: FragmentLayout, inv: Int32Array, e: number): number {
  let mask = 0
  for (let l = 0; l < 32; l++) {
    const x = l * f.count + e
    if (inv[f.row[x]! * f.cols + f.col[x]!] === x) mask |= 1 << l
  }
  return mask >>> 0
}

/** WGSL of a scratch element of type t (its u32 bits) as binary64 (vec2<u32>); f64 elements are already. */
function asF64(t: ElemType, x: string): string {
  switch (t) {
    case 'f16': return `kp_f32_to_f64(bitcast<u32>(kp_h2f(${x})))`
    case 'bf16': return `kp_f32_to_f64(${x} << 16u)`
    // the tensor core reads tf32's upper 19 bits of the f32
    case 'tf32': return `kp_f32_to_f64(${x} & 0xffffe000u)`
    case 'f32': return `kp_f32_to_f64(${x})`
    default: return x
  }
}

/** The helper computing one lane's elements of D for form `key`: its name (added to the kernel's helpers). */
function productHelper(w: KernelWriter, key: string, s: MmaSpec, offB: number): string {
  const name = `kp_mma_${key.replace(/[^a-z0-9]+/g, '_')}`
  if (w.helpers.has(name)) return name
  const { k, n, ld } = s
  const a = laneAffine(ld)!
  const cnt = ld.count
  const f64 = s.d === 'f64'
  const int = s.d === 's32'
  const ct = s.c === 'f64' ? 'vec2<u32>' : 'u32', dt = f64 ? 'vec2<u32>' : 'u32'
  const ew = wordsOf(s.a)
  const el = (at: string, t: ElemType) => (t === 'f64' ? `vec2<u32>(${TC_SCRATCH}[${at}], ${TC_SCRATCH}[${at} + 1u])` : `${TC_SCRATCH}[${at}]`)
  const aAt = `tb + (r * ${k}u + p) * ${ew}u`, bAt = `tb + ${offB}u + (p * ${n}u + cc) * ${ew}u`
  const lines = [
    `// one lane's elements of D for ${key} (emit-tensor.ts): row rows[i] + lr, column cols[i] + lc of D; A and B`,
    `// from the warp's matrices in ${TC_SCRATCH} at tb; c: the lane's own C elements`,
    `fn ${name}(tb: u32, lr: u32, lc: u32, c: array<${ct}, ${cnt}>) -> array<${dt}, ${cnt}> {`,
    `  var rows = array<u32, ${cnt}>(${a.row0.map((x) => `${x}u`).join(', ')});`,
    `  var cols = array<u32, ${cnt}>(${a.col0.map((x) => `${x}u`).join(', ')});`,
    `  var cv = c;`,
    `  var out: array<${dt}, ${cnt}>;`,
    `  for (var i = 0u; i < ${cnt}u; i = i + 1u) {`,
    '    let r = rows[i] + lr;',
    '    let cc = cols[i] + lc;',
  ]
  if (int) {
    const dec = (t: ElemType, x: string) => (t === 's8' ? `(bitcast<i32>(${x} << 24u) >> 24u)` : `bitcast<i32>(${x} & 0xffu)`)
    lines.push(
      '    var sum = 0i;',
      `    for (var p = 0u; p < ${k}u; p = p + 1u) { sum = sum + ${dec(s.a, el(aAt, s.a))} * ${dec(s.b, el(bAt, s.b))}; }`,
      // |sum| < 2^20 (k ≤ 32 products of 8-bit values): only the addition of C can overflow
      '    let cs = bitcast<i32>(cv[i]);',
      '    let v = sum + cs;',
    )
    if (s.satfinite) lines.push('    let over = ((sum ^ v) & (cs ^ v)) < 0i;', '    out[i] = bitcast<u32>(select(v, select(-2147483647i - 1i, 2147483647i, cs > 0i), over));')
    else lines.push('    out[i] = bitcast<u32>(v);')
  } else if (f64) {
    lines.push(
      '    var v = cv[i];',
      `    for (var p = 0u; p < ${k}u; p = p + 1u) { v = kp_f64_fma(${el(aAt, 'f64')}, ${el(bAt, 'f64')}, v, 0u); }`,
      '    out[i] = v;',
    )
  } else {
    lines.push(
      '    var sum = vec2<u32>(0u, 0u);',
      `    for (var p = 0u; p < ${k}u; p = p + 1u) { sum = kp_f64_fma(${asF64(s.a, el(aAt, s.a))}, ${asF64(s.b, el(bAt, s.b))}, sum, 0u); }`,
      `    let v = kp_f64_fma(${asF64(s.c === 'f16' ? 'f16' : 'f32', 'cv[i]')}, ${F64_ONE}, sum, 0u);`,
      // rounded once: to f32, or (f16 D) straight from binary64 to f16
      `    out[i] = ${s.d === 'f16' ? 'kp_f64_to_small(v, 10u, 5u, 0u, false)' : 'kp_f64_to_f32(v, 0u)'};`,
    )
  }
  lines.push('  }', '  return out;', '}')
  w.helpers.set(name, lines.join('\n'))
  return name
}

/** wmma.mma / mma.sync for every invocation (a collective: emit-collective.ts calls it); `active` gives a
 *  thread's participation (a lane that is not there counts as zeros, as in the emulator). */
export function emitMma(w: KernelWriter, ins: Instruction, active: () => string): void {
  const m = mmaOperands(ins)
  if (typeof m === 'string') return w.refuse(m)
  const { form: { key, spec: s }, ra, rb, rc, rd } = m
  const { la, lb, lc, ld } = s
  if (s.ia.includes(-1) || s.ib.includes(-1)) return w.refuse(`${key}: a matrix element no lane holds`)
  if (lc.count !== ld.count || lc.row.some((x, i) => x !== ld.row[i]) || lc.col.some((x, i) => x !== ld.col[i])) return w.refuse(`${key}: C and D fragments that place elements differently`)
  const ew = wordsOf(s.a)
  const offB = s.m * s.k * ew
  w.tcWords = Math.max(w.tcWords, offB + s.k * s.n * ew)
  if (s.d !== 's32') w.softTensor++
  const helper = productHelper(w, key, s, offB)
  // 1. each lane writes the elements of A and B it is the first holder of, as the matrices lie
  w.perThread(() => {
    const lane = w.tmp('kp_t & 31u')
    const tb = w.tmp(`(kp_t >> 5u) * ${TC_WORDS}`)
    const on = w.tmp(active())
    const write = (f: FragmentLayout, inv: Int32Array, regs: typeof ra, t: ElemType, off: number, cols: number) => {
      const { row0, col0, lr, lc } = lanePart(w, f, lane)
      const pr = perRegister(t)
      regs.forEach((r, j) => {
        const v = t === 'f64' ? w.tmp(`select(vec2<u32>(0u), ${w.u64(r)}, ${on})`) : w.tmp(`select(0u, ${w.u32(r)}, ${on})`)
        for (let x = 0; x < pr; x++) {
          const e = j * pr + x
          const mask = firstHolders(f, inv, e)
          if (mask === 0) continue
          const at = w.tmp(`${tb} + ${off}u + ((${row0[e]}u + ${lr}) * ${cols}u + ${col0[e]}u + ${lc}) * ${wordsOf(t)}u`)
          const bits = pr === 1 ? v : `((${v} >> ${(32 / pr) * x}u) & ${pr === 2 ? '0xffffu' : '0xffu'})`
          const stores = t === 'f64' ? `${TC_SCRATCH}[${at}] = ${v}.x; ${TC_SCRATCH}[${at} + 1u] = ${v}.y;` : `${TC_SCRATCH}[${at}] = ${bits};`
          w.line(mask === 0xffffffff ? stores : `if (((0x${mask.toString(16)}u >> ${lane}) & 1u) != 0u) { ${stores} }`)
        }
      })
    }
    write(la, s.ia, ra, s.a, 0, s.k)
    write(lb, s.ib, rb, s.b, offB, s.n)
  })
  w.line('workgroupBarrier();')
  // 2. each lane its elements of D
  w.perThread(() => {
    w.open(`if (${active()}) {`)
    const lane = w.tmp('kp_t & 31u')
    const tb = w.tmp(`(kp_t >> 5u) * ${TC_WORDS}`)
    const { lr, lc: lcol } = lanePart(w, ld, lane)
    const pc = perRegister(s.c)
    const cElems = Array.from({ length: lc.count }, (_, e) => {
      const r = rc[Math.floor(e / pc)]!
      if (s.c === 'f64') return w.u64(r)
      const v = w.u32(r)
      return pc === 1 ? v : `((${v} >> ${16 * (e % pc)}u) & 0xffffu)`
    })
    const out = w.tmp(`${helper}(${tb}, ${lr}, ${lcol}, array<${s.c === 'f64' ? 'vec2<u32>' : 'u32'}, ${lc.count}>(${cElems.join(', ')}))`)
    const pd = perRegister(s.d)
    rd.forEach((r, j) => {
      if (s.d === 'f64') return w.setU64(r, `${out}[${j}]`)
      if (pd === 1) return w.setU32(r, `${out}[${j}]`, s.d === 'f32' ? 'f32' : 'b32')
      w.setU32(r, `${out}[${2 * j}] | (${out}[${2 * j + 1}] << 16u)`)
    })
    w.close()
  })
  // 3. nobody writes the matrices again before every lane has read them
  w.line('workgroupBarrier();')
}
