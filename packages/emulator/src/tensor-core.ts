// Tensor cores in the emulator: the product a warp computes (mmaLane: one lane's part of D from every lane's
// fragments, gathered by the scheduler) and movmatrix. The fragment layouts, the product's spec and the
// instructions' operands are @kernelpack/ptx's (tensor-core.ts there, with the ISA's tables), shared with
// the WGSL translator.
import { mmaSpec, perRegister, type ElemType, type FragmentLayout } from '@kernelpack/ptx'
import { bf16ToNum, bitsFromF32, f16ToNum, f32FromBits, fma64, numToF16 } from './numeric.js'

export {
  elemBytes, fragKind, laneAffine, matrixOperands, mmaForm, mmaFragment, mmaOperands, mmaSpec, perRegister, tcLayout, TC_TYPES, wmmaFragment, wmmaOperands,
  type ElemType, type FragmentLayout, type Matrix, type MmaSpec,
} from '@kernelpack/ptx'

/** Element i of a fragment given as its registers (raw: .b32 bit patterns for packed types, numbers for
 *  f32/tf32/f64). tf32 keeps the upper 19 bits of the f32 (the tensor core reads no more). */
function element(regs: ArrayLike<number>, t: ElemType, i: number): number {
  const per = perRegister(t)
  const r = regs[Math.floor(i / per)] ?? 0
  switch (t) {
    case 'f16': return f16ToNum((r >>> (16 * (i & 1))) & 0xffff)
    case 'bf16': return bf16ToNum((r >>> (16 * (i & 1))) & 0xffff)
    case 'u8': return (r >>> (8 * (i & 3))) & 255
    case 's8': return ((r >>> (8 * (i & 3))) << 24) >> 24
    case 'tf32': return f32FromBits(bitsFromF32(r) & ~0x1fff)
    default: return r
  }
}

/** One lane's registers of D = A·B + C, from every lane's A, B and C registers (`frags[lane]`: [a, b, c]; a
 *  lane that is not there counts as zeros). Products of f16/bf16/tf32 are exact in binary64 and summed there,
 *  then C is added and the sum rounded once to f32 or f16 (the hardware's order and internal width are
 *  unspecified); f64 chains fma in k order; integers are exact, wrapped to 32 bits (clamped with .satfinite). */
export function mmaLane(frags: ReadonlyArray<[ArrayLike<number>, ArrayLike<number>, ArrayLike<number>] | undefined>, key: string, lane: number): number[] {
  const s = mmaSpec(key)
  if (typeof s === 'string') throw new Error(s)
  const { k, la, lb, lc, ld } = s
  const pick = (inv: Int32Array, at: number, which: 0 | 1 | 2, t: ElemType, f: FragmentLayout): number => {
    const x = inv[at]!
    const src = frags[Math.floor(x / f.count)]
    return src ? element(src[which], t, x % f.count) : 0
  }
  const out: number[] = []
  for (let i = 0; i < ld.count; i++) {
    const r = ld.row[lane * ld.count + i]!, cc = ld.col[lane * ld.count + i]!
    const c = pick(s.ic, r * lc.cols + cc, 2, s.c, lc)
    let v: number
    if (s.d === 'f64') {
      v = c
      for (let p = 0; p < k; p++) v = fma64(pick(s.ia, r * la.cols + p, 0, s.a, la), pick(s.ib, p * lb.cols + cc, 1, s.b, lb), v)
    } else {
      let sum = 0
      for (let p = 0; p < k; p++) sum += pick(s.ia, r * la.cols + p, 0, s.a, la) * pick(s.ib, p * lb.cols + cc, 1, s.b, lb)
      v = sum + c
      if (s.d === 's32') v = s.satfinite ? Math.max(-2147483648, Math.min(2147483647, v)) | 0 : v | 0
      else if (s.d === 'f32') v = Math.fround(v)
    }
    out.push(v)
  }
  if (s.d !== 'f16') return out
  // two f16 per register, the lower-indexed element in the low half
  const regs: number[] = []
  for (let i = 0; i < out.length; i += 2) regs.push((numToF16(out[i]!) | (numToF16(out[i + 1] ?? 0) << 16)) | 0)
  return regs
}

/** movmatrix.sync.aligned.m8n8.trans.b16: lane l holds row l>>2, columns 2(l&3) and 2(l&3)+1 of an 8×8
 *  b16 matrix (the ldmatrix fragment, PTX ISA "movmatrix"); it gets the same elements of the transpose. */
export function movmatrixLane(regs: ReadonlyArray<number | undefined>, lane: number): number {
  const at = (r: number, c: number) => ((regs[4 * r + (c >> 1)] ?? 0) >>> (16 * (c & 1))) & 0xffff
  const r = lane >> 2, c = 2 * (lane & 3)
  return (at(c, r) | (at(c + 1, r) << 16)) | 0
}
