// What each PTX instruction does, as JavaScript: one statement (string) per instruction, or a Suspension for
// the collectives (collectives.ts) the scheduler resolves. Reads only the IR's typed fields (PTX ISA 9.x for
// the semantics; numeric.ts for the exact helpers); emit-js.ts decides where the code goes (structure,
// thread loops, variants) and how registers and memory are reached (rd/wr/addr/load/store).
import { collectiveOf, typeSize, type Instruction, type IrOperand } from '@kernelpack/ptx'
import type { InstructionEmitter as FunctionEmitter, Suspension } from './emitter.js'
import { kindOf, type Kind } from '../js-values.js'
import { fragKind, matrixOperands, mmaOperands, wmmaOperands, type ElemType } from '../tensor-core.js'

/** A suspension point: the code that suspends (inputs, resume pc, saved registers), the resume pc, and the
 *  code that takes the results on resume. */

/** `ftz(e)` when the instruction flushes subnormals. */
const ftzIf = (ftz: boolean, e: string) => (ftz ? `ftz(${e})` : e)

/** fma.rn.f32 of f32 expressions, inline where RN64(x·y + z) is not an f32 midpoint (numeric.ts fma32 returns
 *  fround of it then; it decides the rest): a call per fma cost a tiled matmul half its time once V8's
 *  inlining budget for the kernel ran out (issue 13). */
const fma32Expr = (x: string, y: string, z: string) => `(fs=${x}*${y}+${z},fg=fround(fs),(fg===fs||fround(2*fs-fg)!==2*fs-fg)&&fg-fg===0?fg:fma32(${x},${y},${z}))`
const satIf = (sat: boolean, e: string) => (sat ? `sat(${e})` : e)

const isInt = (o: IrOperand | undefined): o is Extract<IrOperand, { kind: 'imm' }> => o?.kind === 'imm' && o.imm.kind === 'int'
const intValue = (o: IrOperand | undefined): bigint => (o as Extract<IrOperand, { kind: 'imm' }>).imm.kind === 'int' ? ((o as Extract<IrOperand, { kind: 'imm' }>).imm as { value: bigint }).value : 0n
/** The destination and the optional predicate of a `d|p` operand. */
const split = (o: IrOperand): [IrOperand, IrOperand | undefined] => (o.kind === 'pair' ? [o.first, o.second] : [o, undefined])

export function emitInstruction(E: FunctionEmitter, ins: Instruction): string | Suspension {
  const A = ins.operands
  const types = ins.types
  const t = ins.type ?? ''
  // the emitter's helpers, bound once per function (no closures per instruction: this runs for every one)
  const { failOp: fail, rdOp: rd, wrOp: wr } = E
  const k: Kind = t ? kindOf(t, fail) : 'i32'
  const ftz = ins.flags.ftz === true
  const satf = ins.flags.sat === true
  const rnd = ins.rounding === 'rz' || ins.rounding === 'rm' || ins.rounding === 'rp' ? ins.rounding : 'rn'
  const is64 = t === 'u64' || t === 's64' || t === 'b64'
  const signed = t.startsWith('s')
  switch (ins.op) {
    case 'mov': {
      const src = A[1], dst = A[0]
      if (src?.kind === 'vec') {
        // pack: mov.b64 %rd, {%r1,%r2} / mov.b32 %r, {%rs1,%rs2}
        const it = src.items
        if (t === 'b64' && it.length === 2) return wr(dst, 'i64', `mk64(${rd(it[0], 'i32')},${rd(it[1], 'i32')})`)
        if (t === 'b32' && it.length === 2) return wr(dst, 'i32', `(${rd(it[0], 'u16')}|(${rd(it[1], 'u16')}<<16))`)
        if (t === 'b64' && it.length === 4) return wr(dst, 'i64', `mk64(${rd(it[0], 'u16')}|(${rd(it[1], 'u16')}<<16),${rd(it[2], 'u16')}|(${rd(it[3], 'u16')}<<16))`)
        if (t === 'b32' && it.length === 4) return wr(dst, 'i32', `(${rd(it[0], 'u8')}|(${rd(it[1], 'u8')}<<8)|(${rd(it[2], 'u8')}<<16)|(${rd(it[3], 'u8')}<<24))`)
        if (t === 'b128') return fail('128-bit mov is not supported')
        return fail('unsupported vector mov')
      }
      if (dst?.kind === 'vec') {
        const it = dst.items
        if (t === 'b64' && it.length === 2) return `x64=${rd(src, 'i64')};${wr(it[0], 'i32', 'lo32(x64)')}${wr(it[1], 'i32', 'hi32(x64)')}`
        if (t === 'b32' && it.length === 2) return `u=${rd(src, 'i32')};${wr(it[0], 'u16', 'u&65535')}${wr(it[1], 'u16', 'u>>>16')}`
        if (t === 'b64' && it.length === 4) return `x64=${rd(src, 'i64')};u=lo32(x64);v=hi32(x64);${wr(it[0], 'u16', 'u&65535')}${wr(it[1], 'u16', 'u>>>16')}${wr(it[2], 'u16', 'v&65535')}${wr(it[3], 'u16', 'v>>>16')}`
        if (t === 'b32' && it.length === 4) return `u=${rd(src, 'i32')};${it.map((x, i) => wr(x, 'u8', `(u>>>${8 * i})&255`)).join('')}`
        return fail('unsupported vector mov')
      }
      const d = E.cls(dst)
      if (!d) return fail('mov destination is not a register')
      let kk: Kind = k
      if (t === 'b32' || t === 'u32' || t === 's32') kk = d === 'f32' ? 'f32' : 'i32'
      if (t === 'b64' || t === 'u64' || t === 's64') kk = d === 'f64' ? 'f64' : 'i64'
      if (src?.kind === 'sym' && src.target === 'function') return fail('function pointers are not supported by the emulator')
      return wr(dst, kk, rd(src, kk))
    }
    case 'ld': case 'ldu': {
      const space = ins.space ?? 'generic'
      const vec = ins.vector ?? 1
      const sz = typeSize(t)
      if (!sz || t === 'b128') return fail(`unsupported load type .${t}`)
      const am = A[1]
      if (am?.kind !== 'addr') return fail('expected an address operand')
      const base = am.base
      if (space === 'param' && vec === 1 && E.fn.kind === 'entry' && base?.kind === 'sym' && E.fn.params.some((p) => p.name === base.name) && A[0]?.kind === 'reg') {
        // kernel parameters are read-only for the whole launch: load each once per block, before the thread loop
        const h = E.hoistParam(am, E.memType(t, A[0]), sz)
        return wr(A[0], h.kind, h.name)
      }
      let code = E.addr(am, space, sz * vec, 0, 'r', true)
      const dsts = vec > 1 ? (A[0]?.kind === 'vec' ? A[0].items : fail('vector load needs a vector destination')) : [A[0]!]
      dsts.forEach((dst, i) => {
        if (dst.kind === 'sink') return
        const l = E.load(E.memType(t, dst), i * sz)
        code += wr(dst, l.kind, l.e)
      })
      return spin(E, code, A[0]!)
    }
    case 'st': {
      const space = ins.space === 'const' ? 'generic' : ins.space ?? 'generic'
      const vec = ins.vector ?? 1
      const sz = typeSize(t)
      if (!sz || t === 'b128') return fail(`unsupported store type .${t}`)
      const srcs = vec > 1 ? (A[1]?.kind === 'vec' ? A[1].items : fail('vector store needs a vector source')) : [A[1]!]
      let code = E.addr(A[0]!, space, sz * vec, 0, 'w', true)
      srcs.forEach((src, i) => {
        const tt = E.memType(t, src)
        let vk: Kind = kindOf(tt, fail)
        if (tt === 'f32') vk = 'f32'
        if (tt === 'f64') vk = 'f64'
        let val = rd(src, vk === 'u8' || vk === 's8' || vk === 'u16' || vk === 's16' ? 'i32' : vk)
        if (src.kind === 'imm' && src.imm.kind !== 'real') val = rd(src, vk === 'u8' || vk === 's8' ? 'u8' : vk === 'u16' || vk === 's16' ? 'u16' : vk)
        code += E.store(tt, val, i * sz)
      })
      return code
    }
    case 'cvta': {
      const to = ins.flags.to === true
      const space = ins.space ?? 'global'
      const kk: Kind = t === 'u32' ? 'u32' : 'i64'
      const src = rd(A[1], kk)
      let e = src
      // generic addresses of the block's shared window, the thread's local window and the parameter frame
      // lie at GSH, GLO, GPA (2^34…), apart from device memory (emit-js.ts addr()); 32-bit ones (no such
      // window fits) stay heap addresses
      const wide = kk === 'i64'
      if (space === 'shared') e = to ? `sub64(${src},${wide ? 'GSH' : 'SB'})` : `add64(${src},${wide ? 'GSH' : 'SB'})`
      if (space === 'local') e = to ? `sub64(${src},${wide ? 'GLO+LB-LB0' : 'LB'})` : `add64(${src},${wide ? 'GLO+LB-LB0' : 'LB'})`
      if (space === 'param' && wide) e = to ? `add64(sub64(${src},GPA),PB)` : `add64(sub64(${src},PB),GPA)`
      return wr(A[0], kk === 'u32' ? 'u32' : 'i64', e)
    }
    case 'add': case 'sub': {
      const isSub = ins.op === 'sub'
      if (ins.flags.cc) return carry(E, ins)
      const fused = (t === 'f32' || t === 'f64') ? E.contracted() : undefined
      if (fused) {
        // ptxas computes this add and the product it reads as one fma (issue 32): add(p, c) = fma(a, b, c),
        // sub(p, c) = fma(a, b, -c), sub(c, p) = fma(-a, b, c); the negations are exact
        const fk: Kind = t === 'f32' ? 'f32' : 'f64'
        const [a, b] = [fused.mul.operands[1]!, fused.mul.operands[2]!].map((o) => ftzIf(ftz, rd(o, fk)))
        const c = ftzIf(ftz, rd(A[fused.operand === 1 ? 2 : 1]!, fk))
        const [x, z] = !isSub ? [a, c] : fused.operand === 1 ? [a, `(-(${c}))`] : [`(-(${a}))`, c]
        return t === 'f32' ? wr(A[0], 'f32', satIf(satf, ftzIf(ftz, fma32Expr(x!, b!, z)))) : wr(A[0], 'f64', `fma64(${x},${b},${z})`)
      }
      if (t === 'f32') {
        const e = rnd === 'rn' ? `fround(${ftzIf(ftz, rd(A[1]!, 'f32'))}${isSub ? '-' : '+'}${ftzIf(ftz, rd(A[2]!, 'f32'))})` : `fop32(${isSub ? "'sub'" : "'add'"},'${rnd}',${ftzIf(ftz, rd(A[1]!, 'f32'))},${ftzIf(ftz, rd(A[2]!, 'f32'))})`
        return wr(A[0], 'f32', satIf(satf, ftzIf(ftz, e)))
      }
      if (t === 'f64') {
        const e = rnd === 'rn' ? `(${rd(A[1], 'f64')}${isSub ? '-' : '+'}${rd(A[2], 'f64')})` : `fop64(${isSub ? "'sub'" : "'add'"},'${rnd}',${rd(A[1], 'f64')},${rd(A[2], 'f64')})`
        return wr(A[0], 'f64', satf ? `sat(${e})` : e)
      }
      if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return half(E, ins, isSub ? '-' : '+')
      if (is64) {
        // fast path inline (both numbers, exact result in range), helper otherwise
        const x = rd(A[1], 'i64'), y = rd(A[2], 'i64')
        const bd = (o: IrOperand) => (isInt(o) ? Math.abs(Number(BigInt.asIntN(64, intValue(o)))) : o.kind === 'reg' && E.classes[o.id] === 'i64' ? E.bounds?.get(o.id) ?? Infinity : Infinity)
        // both operands are numbers bounded so that the exact result stays within ±(2^53 - 1)
        if (E.bounds && bd(A[1]!) + bd(A[2]!) <= 2 ** 53 - 1) return wr(A[0], 'i64', `(${x}${isSub ? '-' : '+'}${y})`)
        return wr(A[0], 'i64', `${isSub ? 'sub64' : 'add64'}(${x},${y})`)
      }
      if (t === 's32' && satf) return wr(A[0], 'i32', `satS32(${rd(A[1], 'i32')}${isSub ? '-' : '+'}${rd(A[2], 'i32')})`)
      if (k === 'i32') return wr(A[0], 'i32', `(${rd(A[1], 'i32')}${isSub ? '-' : '+'}${rd(A[2], 'i32')})|0`)
      return wr(A[0], k, `(${rd(A[1], 'i32')}${isSub ? '-' : '+'}${rd(A[2], 'i32')})`)
    }
    case 'addc': case 'subc': return carry(E, ins)
    case 'mul': {
      if (t === 'f32') {
        const e = rnd === 'rn' ? `fround(${ftzIf(ftz, rd(A[1]!, 'f32'))}*${ftzIf(ftz, rd(A[2]!, 'f32'))})` : `fop32('mul','${rnd}',${ftzIf(ftz, rd(A[1]!, 'f32'))},${ftzIf(ftz, rd(A[2]!, 'f32'))})`
        return wr(A[0], 'f32', satIf(satf, ftzIf(ftz, e)))
      }
      if (t === 'f64') {
        const e = rnd === 'rn' ? `(${rd(A[1], 'f64')}*${rd(A[2], 'f64')})` : `fop64('mul','${rnd}',${rd(A[1], 'f64')},${rd(A[2], 'f64')})`
        return wr(A[0], 'f64', satf ? `sat(${e})` : e)
      }
      if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return half(E, ins, '*')
      if (ins.part === 'wide') {
        if (t === 's32' || t === 'u32') {
          // a 32-bit value times a small constant always stays within ±2^53: plain multiplication
          const imm = isInt(A[2]) ? Number(signed ? BigInt.asIntN(32, intValue(A[2])) : BigInt.asUintN(32, intValue(A[2]))) : undefined
          if (imm !== undefined && Math.abs(imm) <= 1 << 20) return wr(A[0], 'i64', `(${rd(A[1], signed ? 'i32' : 'u32')}*${imm}+0)`)
          return wr(A[0], 'i64', `mulwide32(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${signed})`)
        }
        if (t === 's16' || t === 'u16') return wr(A[0], 'i32', `(${rd(A[1], kindOf(t, fail))}*${rd(A[2], kindOf(t, fail))})|0`)
        return fail('unsupported mul.wide type')
      }
      const hi = ins.part === 'hi'
      if (is64) return wr(A[0], 'i64', hi ? `mulhi64(${rd(A[1], 'i64')},${rd(A[2], 'i64')},${signed})` : `mul64(${rd(A[1], 'i64')},${rd(A[2], 'i64')})`)
      if (t === 's32' || t === 'u32') return wr(A[0], 'i32', hi ? `mulhi32(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${signed})` : `Math.imul(${rd(A[1], 'i32')},${rd(A[2], 'i32')})`)
      if (t === 's16' || t === 'u16') {
        const p = `(${rd(A[1], kindOf(t, fail))}*${rd(A[2], kindOf(t, fail))})`
        return wr(A[0], 'u16', hi ? `(${p}>>16)&65535` : `${p}&65535`)
      }
      return fail('unsupported mul type')
    }
    case 'mul24': case 'mad24': {
      const s24 = (o: IrOperand) => (signed ? `(${rd(o, 'i32')}<<8>>8)` : `(${rd(o, 'i32')}&0xffffff)`)
      const p = ins.part === 'hi' ? `lo32(shrs64(mulwide32(${s24(A[1]!)},${s24(A[2]!)},${signed}),16))` : `Math.imul(${s24(A[1]!)},${s24(A[2]!)})`
      return wr(A[0], 'i32', ins.op === 'mad24' ? `(${p}+${rd(A[3], 'i32')})|0` : p)
    }
    case 'mad': case 'fma': {
      if (ins.flags.cc) return carry(E, ins)
      if (t === 'f32') {
        const [x, y, z] = [A[1]!, A[2]!, A[3]!].map((o) => ftzIf(ftz, rd(o, 'f32')))
        const e = rnd === 'rn' ? fma32Expr(x, y, z) : `fop32('fma','${rnd}',${x},${y},${z})`
        return wr(A[0], 'f32', satIf(satf, ftzIf(ftz, e)))
      }
      if (t === 'f64') {
        const e = rnd === 'rn' ? `fma64(${rd(A[1], 'f64')},${rd(A[2], 'f64')},${rd(A[3], 'f64')})` : `fop64('fma','${rnd}',${rd(A[1], 'f64')},${rd(A[2], 'f64')},${rd(A[3], 'f64')})`
        return wr(A[0], 'f64', satf ? `sat(${e})` : e)
      }
      if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return half(E, ins, 'fma')
      if (ins.part === 'wide') {
        if (t === 's32' || t === 'u32') return wr(A[0], 'i64', `add64(mulwide32(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${signed}),${rd(A[3], 'i64')})`)
        if (t === 's16' || t === 'u16') return wr(A[0], 'i32', `(${rd(A[1], kindOf(t, fail))}*${rd(A[2], kindOf(t, fail))}+${rd(A[3], 'i32')})|0`)
        return fail('unsupported mad.wide type')
      }
      const hi = ins.part === 'hi'
      if (is64) return wr(A[0], 'i64', hi ? `add64(mulhi64(${rd(A[1], 'i64')},${rd(A[2], 'i64')},${signed}),${rd(A[3], 'i64')})` : `add64(mul64(${rd(A[1], 'i64')},${rd(A[2], 'i64')}),${rd(A[3], 'i64')})`)
      if (t === 's32' || t === 'u32') {
        if (hi && satf) return wr(A[0], 'i32', `satS32(mulhi32(${rd(A[1], 'i32')},${rd(A[2], 'i32')},true)+${rd(A[3], 'i32')})`)
        return wr(A[0], 'i32', hi ? `(mulhi32(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${signed})+${rd(A[3], 'i32')})|0` : `(Math.imul(${rd(A[1], 'i32')},${rd(A[2], 'i32')})+${rd(A[3], 'i32')})|0`)
      }
      if (t === 's16' || t === 'u16') {
        const p = `(${rd(A[1], kindOf(t, fail))}*${rd(A[2], kindOf(t, fail))})`
        return wr(A[0], 'u16', hi ? `((${p}>>16)+${rd(A[3], 'i32')})&65535` : `(${p}+${rd(A[3], 'i32')})&65535`)
      }
      return fail('unsupported mad type')
    }
    case 'madc': return carry(E, ins)
    case 'div': {
      if (t === 'f32') {
        let e: string
        if (ins.flags.approx || ins.flags.full) e = `fround(${ftzIf(ftz, rd(A[1]!, 'f32'))}/${ftzIf(ftz, rd(A[2]!, 'f32'))})`
        else e = rnd === 'rn' ? `fround(${ftzIf(ftz, rd(A[1]!, 'f32'))}/${ftzIf(ftz, rd(A[2]!, 'f32'))})` : `fop32('div','${rnd}',${ftzIf(ftz, rd(A[1]!, 'f32'))},${ftzIf(ftz, rd(A[2]!, 'f32'))})`
        return wr(A[0], 'f32', ftzIf(ftz, e))
      }
      if (t === 'f64') return wr(A[0], 'f64', rnd === 'rn' ? `(${rd(A[1], 'f64')}/${rd(A[2], 'f64')})` : `fop64('div','${rnd}',${rd(A[1], 'f64')},${rd(A[2], 'f64')})`)
      if (is64) return wr(A[0], 'i64', `${signed ? 'divs64' : 'divu64'}(${rd(A[1], 'i64')},${rd(A[2], 'i64')})`)
      if (t === 's32' || t === 'u32') return wr(A[0], 'i32', `${signed ? 'divs32' : 'divu32'}(${rd(A[1], 'i32')},${rd(A[2], 'i32')})`)
      if (t === 's16' || t === 'u16') return wr(A[0], 'u16', `${signed ? 'divs32' : 'divu32'}(${rd(A[1], kindOf(t, fail))},${rd(A[2], kindOf(t, fail))})`)
      return fail('unsupported div type')
    }
    case 'rem': {
      if (is64) return wr(A[0], 'i64', `${signed ? 'rems64' : 'remu64'}(${rd(A[1], 'i64')},${rd(A[2], 'i64')})`)
      if (t === 's32' || t === 'u32') return wr(A[0], 'i32', `${signed ? 'rems32' : 'remu32'}(${rd(A[1], 'i32')},${rd(A[2], 'i32')})`)
      if (t === 's16' || t === 'u16') return wr(A[0], 'u16', `${signed ? 'rems32' : 'remu32'}(${rd(A[1], kindOf(t, fail))},${rd(A[2], kindOf(t, fail))})`)
      return fail('unsupported rem type')
    }
    case 'min': case 'max': {
      const mx = ins.op === 'max'
      const nan = ins.flags.nan ? 'NaN' : ''
      if (t === 'f32') return wr(A[0], 'f32', ftzIf(ftz, `${mx ? 'fmax' : 'fmin'}${nan}(${ftzIf(ftz, rd(A[1]!, 'f32'))},${ftzIf(ftz, rd(A[2]!, 'f32'))})`))
      if (t === 'f64') return wr(A[0], 'f64', `${mx ? 'fmax' : 'fmin'}${nan}(${rd(A[1], 'f64')},${rd(A[2], 'f64')})`)
      if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return half(E, ins, mx ? 'max' : 'min')
      if (is64) {
        const c = signed ? 'scmp64' : 'ucmp64'
        return `u=${c}(${rd(A[1], 'i64')},${rd(A[2], 'i64')});${wr(A[0], 'i64', `u${mx ? '>' : '<'}0?${rd(A[1], 'i64')}:${rd(A[2], 'i64')}`)}`
      }
      if (t === 'u32' || t === 's32' || t === 'b32') {
        const kk: Kind = signed ? 'i32' : 'u32'
        const e = `Math.${mx ? 'max' : 'min'}(${rd(A[1], kk)},${rd(A[2], kk)})`
        return wr(A[0], 'i32', signed ? e : `${e}|0`)
      }
      if (t === 'u16' || t === 's16') return wr(A[0], 'u16', `Math.${mx ? 'max' : 'min'}(${rd(A[1], kindOf(t, fail))},${rd(A[2], kindOf(t, fail))})`)
      return fail('unsupported min/max type')
    }
    case 'abs': case 'neg': {
      const ab = ins.op === 'abs'
      if (t === 'f32') return wr(A[0], 'f32', ftzIf(ftz, ab ? `Math.abs(${ftzIf(ftz, rd(A[1]!, 'f32'))})` : `(-${ftzIf(ftz, rd(A[1]!, 'f32'))})`))
      if (t === 'f64') return wr(A[0], 'f64', ab ? `Math.abs(${rd(A[1], 'f64')})` : `(-${rd(A[1], 'f64')})`)
      if (t === 'f16' || t === 'bf16') return wr(A[0], 'u16', ab ? `${rd(A[1], 'u16')}&0x7fff` : `${rd(A[1], 'u16')}^0x8000`)
      if (t === 'f16x2' || t === 'bf16x2') return wr(A[0], 'i32', ab ? `${rd(A[1], 'i32')}&0x7fff7fff` : `${rd(A[1], 'i32')}^0x80008000`)
      if (is64) return `x64=${rd(A[1], 'i64')};${wr(A[0], 'i64', ab ? 'x64<0?neg64(x64):x64' : 'neg64(x64)')}`
      if (t === 's32') return wr(A[0], 'i32', ab ? `Math.abs(${rd(A[1], 'i32')})|0` : `(-${rd(A[1], 'i32')})|0`)
      if (t === 's16') return wr(A[0], 'u16', ab ? `Math.abs(${rd(A[1], 's16')})` : `(-${rd(A[1], 's16')})`)
      return fail('unsupported abs/neg type')
    }
    case 'and': case 'or': case 'xor': {
      const o = ins.op === 'and' ? '&' : ins.op === 'or' ? '|' : '^'
      if (t === 'pred') return wr(A[0], 'pred', `${o === '^' ? '(' : ''}${rd(A[1], 'pred')}${o === '^' ? '!==' : o + o}${rd(A[2], 'pred')}${o === '^' ? ')' : ''}`)
      if (is64) return wr(A[0], 'i64', `${ins.op}64(${rd(A[1], 'i64')},${rd(A[2], 'i64')})`)
      if (t === 'b16' || t === 'u16' || t === 's16') return wr(A[0], 'u16', `${rd(A[1], 'u16')}${o}${rd(A[2], 'u16')}`)
      if (t === 'b8') return wr(A[0], 'u8', `(${rd(A[1], 'u8')}${o}${rd(A[2], 'u8')})&255`)
      return wr(A[0], 'i32', `${rd(A[1], 'i32')}${o}${rd(A[2], 'i32')}`)
    }
    case 'not': {
      if (t === 'pred') return wr(A[0], 'pred', `!${rd(A[1], 'pred')}`)
      if (is64) return wr(A[0], 'i64', `not64(${rd(A[1], 'i64')})`)
      if (t === 'b16' || t === 'u16' || t === 's16') return wr(A[0], 'u16', `(~${rd(A[1], 'u16')})&65535`)
      return wr(A[0], 'i32', `~${rd(A[1], 'i32')}`)
    }
    case 'cnot': {
      if (is64) return wr(A[0], 'i64', `(${rd(A[1], 'i64')}==0?1:0)`)
      return wr(A[0], k === 'i32' ? 'i32' : 'u16', `(${rd(A[1], k === 'i32' ? 'i32' : 'u16')}===0?1:0)`)
    }
    case 'shl': case 'shr': {
      const n = `(${rd(A[2], 'u32')})`
      if (is64) {
        const f = ins.op === 'shl' ? 'shl64' : signed ? 'shrs64' : 'shru64'
        return wr(A[0], 'i64', `${f}(${rd(A[1], 'i64')},${n})`)
      }
      if (t === 'b32' || t === 'u32' || t === 's32') {
        const a = rd(A[1], 'i32')
        const nn = isInt(A[2]) ? Number(BigInt.asUintN(32, intValue(A[2]))) : undefined
        if (nn !== undefined) {
          if (ins.op === 'shl') return wr(A[0], 'i32', nn >= 32 ? '0' : `${a}<<${nn}`)
          if (signed) return wr(A[0], 'i32', `${a}>>${Math.min(nn, 31)}`)
          return wr(A[0], 'i32', nn >= 32 ? '0' : `(${a}>>>${nn})|0`)
        }
        if (ins.op === 'shl') return `u=${n};${wr(A[0], 'i32', `u>=32?0:${a}<<u`)}`
        if (signed) return `u=${n};${wr(A[0], 'i32', `${a}>>(u>31?31:u)`)}`
        return `u=${n};${wr(A[0], 'i32', `u>=32?0:(${a}>>>u)|0`)}`
      }
      if (t === 'b16' || t === 'u16' || t === 's16') {
        const a = rd(A[1], signed ? 's16' : 'u16')
        if (ins.op === 'shl') return `u=${n};${wr(A[0], 'u16', `u>=16?0:(${a}<<u)&65535`)}`
        if (signed) return `u=${n};${wr(A[0], 'u16', `(${a}>>(u>15?15:u))&65535`)}`
        return `u=${n};${wr(A[0], 'u16', `u>=16?0:${a}>>>u`)}`
      }
      return fail('unsupported shift type')
    }
    case 'shf':
      return wr(A[0], 'i32', `shf(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},${ins.mode === 'l'},${ins.flags.clamp === true})`)
    case 'popc': return wr(A[0], 'i32', is64 ? `popc64(${rd(A[1], 'i64')})` : `popc32(${rd(A[1], 'i32')})`)
    case 'clz': return wr(A[0], 'i32', is64 ? `clz64(${rd(A[1], 'i64')})` : `Math.clz32(${rd(A[1], 'i32')})`)
    case 'brev': return is64 ? wr(A[0], 'i64', `brev64(${rd(A[1], 'i64')})`) : wr(A[0], 'i32', `brev32(${rd(A[1], 'i32')})`)
    case 'bfind': return wr(A[0], 'i32', is64 ? `bfind64(${rd(A[1], 'i64')},${signed},${ins.flags.shiftamt === true})` : `bfind32(${rd(A[1], 'i32')},${signed},${ins.flags.shiftamt === true})`)
    case 'bfe': return is64 ? wr(A[0], 'i64', `bfe64(${rd(A[1], 'i64')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},${signed})`) : wr(A[0], 'i32', `bfe32(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},${signed})`)
    case 'bfi': return is64 ? wr(A[0], 'i64', `bfi64(${rd(A[1], 'i64')},${rd(A[2], 'i64')},${rd(A[3], 'i32')},${rd(A[4], 'i32')})`) : wr(A[0], 'i32', `bfi32(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},${rd(A[4], 'i32')})`)
    case 'prmt': return wr(A[0], 'i32', `prmt(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},'${ins.mode ?? ''}')`)
    case 'lop3': {
      if (A[0]?.kind === 'pair') return fail('lop3 with a predicate output is not supported')
      return wr(A[0], 'i32', `lop3(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},${rd(A[4], 'i32')})`)
    }
    case 'dp4a': return wr(A[0], 'i32', `dp4a(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},${types[0] === 's32'},${types[1] === 's32'})`)
    case 'dp2a': return wr(A[0], 'i32', `dp2a(${rd(A[1], 'i32')},${rd(A[2], 'i32')},${rd(A[3], 'i32')},${types[0] === 's32'},${types[1] === 's32'},${ins.part === 'hi'})`)
    case 'sad': {
      const kk: Kind = signed ? 'i32' : 'u32'
      return wr(A[0], 'i32', `(Math.abs(${rd(A[1], kk)}-${rd(A[2], kk)})+${rd(A[3], 'i32')})|0`)
    }
    case 'szext': {
      const n = `(${rd(A[2], 'u32')})`
      const a = rd(A[1], 'i32')
      // szext.{clamp,wrap}.{s32,u32}: sign- (.s32) or zero-extend (.u32) the low b bits of a
      const width = ins.mode === 'wrap' ? 'u=u&31;' : 'u=u>32?32:u;'
      return `u=${n};${width}${wr(A[0], 'i32', signed ? `u===0?0:(${a}<<(32-u))>>(32-u)` : `u===0?0:u===32?${a}:${a}&((1<<u)-1)`)}`
    }
    case 'setp': return setp(E, ins)
    case 'set': return set(E, ins)
    case 'selp': {
      const d = E.cls(A[0])
      let kk: Kind = k
      if (t === 'b32' || t === 'u32' || t === 's32') kk = d === 'f32' ? 'f32' : 'i32'
      if (t === 'b64' || t === 'u64' || t === 's64') kk = d === 'f64' ? 'f64' : 'i64'
      return wr(A[0], kk, `${rd(A[3], 'pred')}?${rd(A[1], kk)}:${rd(A[2], kk)}`)
    }
    case 'slct': {
      const [dt, ct] = types
      const dk = kindOf(dt!, fail)
      const cond = ct === 'f32' ? `${ftzIf(ftz, rd(A[3], 'f32'))}>=0` : `${rd(A[3], 'i32')}>=0`
      const kk: Kind = dk === 'i32' && E.cls(A[0]) === 'f32' ? 'f32' : dk
      return wr(A[0], kk, `(${cond})?${rd(A[1], kk)}:${rd(A[2], kk)}`)
    }
    case 'cvt': return cvt(E, ins)
    case 'copysign': {
      if (t === 'f32') return wr(A[0], 'f32', `copysign(${rd(A[2], 'f32')},${rd(A[1], 'f32')})`)
      return wr(A[0], 'f64', `copysign(${rd(A[2], 'f64')},${rd(A[1], 'f64')})`)
    }
    case 'testp': {
      const m = ins.mode
      const x = t === 'f32' ? rd(A[1], 'f32') : rd(A[1], 'f64')
      const min = t === 'f32' ? '1.1754943508222875e-38' : '2.2250738585072014e-308'
      const e = m === 'finite' ? `Number.isFinite(u)` : m === 'infinite' ? `(u===Infinity||u===-Infinity)` : m === 'number' ? `(u===u)` : m === 'notanumber' ? `(u!==u)` : m === 'normal' ? `(Math.abs(u)>=${min}&&Number.isFinite(u))` : m === 'subnormal' ? `(u!==0&&Math.abs(u)<${min})` : fail('unsupported testp')
      return `u=${x};${wr(A[0], 'pred', e)}`
    }
    case 'rcp': case 'sqrt': case 'rsqrt': case 'sin': case 'cos': case 'lg2': case 'ex2': case 'tanh': {
      const approx = ins.flags.approx === true
      if (t === 'f64') {
        const x = rd(A[1], 'f64')
        const e = ins.op === 'rcp' ? (rnd !== 'rn' && !approx ? `fop64('div','${rnd}',1,${x})` : `(1/${x})`) : ins.op === 'sqrt' ? (rnd !== 'rn' && !approx ? `fop64('sqrt','${rnd}',${x},0)` : `Math.sqrt(${x})`) : ins.op === 'rsqrt' ? `(1/Math.sqrt(${x}))` : ins.op === 'ex2' ? `(2**${x})` : ins.op === 'lg2' ? `Math.log2(${x})` : ins.op === 'tanh' ? `Math.tanh(${x})` : `Math.${ins.op}(${x})`
        return wr(A[0], 'f64', e)
      }
      if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') return half(E, ins, ins.op)
      const x = ftzIf(ftz, rd(A[1]!, 'f32'))
      let e: string
      switch (ins.op) {
        case 'rcp': e = approx || rnd === 'rn' ? `fround(1/${x})` : `fop32('div','${rnd}',1,${x})`; break
        case 'sqrt': e = approx || rnd === 'rn' ? `fround(Math.sqrt(${x}))` : `fop32('sqrt','${rnd}',${x},0)`; break
        case 'rsqrt': e = `fround(1/Math.sqrt(${x}))`; break
        case 'sin': e = `fround(sincosf(${x},false))`; break
        case 'cos': e = `fround(sincosf(${x},true))`; break
        case 'lg2': e = `fround(lg2f(${x}))`; break
        case 'ex2': e = `fround(ex2f(${x}))`; break
        default: e = `fround(tanhf(${x}))`
      }
      return wr(A[0], 'f32', ftzIf(ftz, e))
    }
    case 'bra': {
      const target = A[0]
      if (target?.kind !== 'label' || !E.fn.labels.has(target.name)) return fail('unknown branch target')
      return E.branch(target.name)
    }
    case 'brx': {
      // brx.idx index, tlist (clang's switch jump tables): the index-th label of the .branchtargets list; an
      // index past its end is undefined in PTX and faults here. Such functions run on the dispatcher
      // (structure.ts leaves brx unstructured), where a branch is `pc=…;continue L`.
      const list = A[1]
      if (list?.kind !== 'list' || E.structure.kind !== 'fallback') return fail('brx.idx without a .branchtargets list')
      const cases = list.items.map((l, i) => (l.kind === 'label' ? `case ${i}:${E.branch(l.name)}` : fail('brx.idx target is not a label')))
      return `switch(${rd(A[0], 'u32')}){${cases.join('')}default:fault(${E.curIdx},${rd(A[0], 'u32')},'brx');}`
    }
    case 'ret': return E.ret()
    case 'exit': return E.fn.kind === 'entry' ? E.ret() : fail('exit inside a called function is not supported by the emulator')
    case 'trap': return `fault(${E.curIdx},undefined,'trap');`
    case 'createpolicy': return wr(A[0], 'i64', '0')
    case 'brkpt': case 'nanosleep': case 'pmevent': case 'prefetch': case 'prefetchu': case 'membar': case 'fence': case 'discard': case 'applypriority': case 'griddepcontrol': case 'setmaxnreg':
      return ''
    case 'call': return call(E, ins)
    // the collectives of @kernelpack/ptx's registry: what the scheduler resolves comes from collectiveOf;
    // each case says what goes in (S.c0…) and where the results (S.o0…) go
    case 'bar': case 'barrier': {
      const c = collectiveOf(ins)
      // bar.arrive: no wait
      if (!c) return ''
      if (ins.flags.cluster) return fail('cluster barriers are not supported')
      // __syncwarp() (bar.warp.sync): the lanes of the warp meet (warp-synchronous shared-memory code depends on it)
      // bar.warp.sync's member mask: the lanes it waits for (scheduler.ts)
      if (c.kind === 'warpsync') return E.suspend(c, [A[0] ? rd(A[0], 'i32') : '-1'], [])
      if (c.kind !== 'bar' || !c.red) return E.suspend(c, [], [])
      const out = c.red === 'popc' ? wr(A[0], 'i32', E.result(0)) : wr(A[0], 'pred', E.result(0))
      return E.suspend(c, [rd(A[A.length - 1], 'pred')], [out])
    }
    case 'shfl': {
      if (!ins.mode) return fail('shfl without a mode')
      const [dst, p] = split(A[0]!)
      const outs = [wr(dst, 'i32', E.result(0))]
      if (p) outs.push(wr(p, 'pred', E.result(1)))
      const mask = A.length > 4 ? rd(A[4], 'i32') : '-1'
      return E.suspend(collectiveOf(ins)!, [rd(A[1], 'i32'), rd(A[2], 'i32'), rd(A[3], 'i32'), mask], outs)
    }
    case 'vote': {
      const mask = A.length > 2 ? rd(A[2], 'i32') : '-1'
      const out = ins.mode === 'ballot' ? wr(A[0], 'i32', E.result(0)) : wr(A[0], 'pred', E.result(0))
      return E.suspend(collectiveOf(ins)!, [rd(A[1], 'pred'), mask], [out])
    }
    case 'match': {
      const [dst, p] = split(A[0]!)
      const outs = [wr(dst, 'i32', E.result(0))]
      if (p) outs.push(wr(p, 'pred', E.result(1)))
      return E.suspend(collectiveOf(ins)!, [rd(A[1], is64 ? 'i64' : 'i32'), rd(A[2], 'i32')], outs)
    }
    case 'activemask': return E.suspend(collectiveOf(ins)!, [], [wr(A[0], 'i32', E.result(0))])
    case 'elect': {
      // elect.sync d|p, membermask: the lowest lane of the group in membermask is the leader
      const [dst, p] = split(A[0]!)
      const outs = [wr(dst, 'i32', E.result(0))]
      if (p) outs.push(wr(p, 'pred', E.result(1)))
      return E.suspend(collectiveOf(ins)!, [rd(A[1], 'i32')], outs)
    }
    case 'redux': return E.suspend(collectiveOf(ins)!, [rd(A[1], 'i32'), rd(A[2], 'i32')], [wr(A[0], 'i32', E.result(0))])
    case 'bmsk': {
      // bmsk.{clamp,wrap}.b32 d, a, b: b ones starting at bit a
      const wrap = ins.mode === 'wrap'
      const a = rd(A[1], 'u32'), b = rd(A[2], 'u32')
      return `u=${wrap ? `${a}&31` : `Math.min(${a},32)`};v=${wrap ? `${b}&31` : `Math.min(${b},32)`};${wr(A[0], 'i32', 'u>=32?0:((u+v>=32?0:(1<<(u+v)))-(1<<u))|0')}`
    }
    case 'atom': case 'red': return ins.op === 'atom' ? spin(E, atom(E, ins), A[0]!) : atom(E, ins)
    case 'cp': {
      // cp.async.{ca,cg}.shared.global [dst], [src], size{, src-size}: copied at once, so the
      // commit/wait instructions have nothing left to wait for
      const opcode = [ins.op, ...ins.qualifiers].join('.')
      if (!ins.flags.async) return fail(`unsupported instruction ${opcode}`)
      // the checked variant tells the sanitizer which copies are still in flight (sanitizer/checker.ts cpa)
      if (ins.mode === 'commit_group') return E.checked ? 'CK.cpc(t);' : ''
      if (ins.mode === 'wait_group') return E.checked ? `CK.cpw(t,${isInt(A[0]) ? Number(intValue(A[0])) : fail('cp.async.wait_group needs an immediate')});` : ''
      if (ins.mode === 'wait_all') return E.checked ? 'CK.cpc(t);CK.cpw(t,0);' : ''
      if (ins.flags.bulk) return fail(`unsupported instruction ${opcode} (bulk copies, TMA)`)
      if (ins.hints?.includes('mbarrier')) {
        // cp.async.mbarrier.arrive{.noinc} [mbar]: an arrive-on once this thread's earlier cp.async are
        // complete, which they are. Without .noinc the pending count is raised first (no net change).
        const code = E.addr(A[0]!, ins.space === 'shared' ? 'shared' : 'generic', 8, 0, 'a') + (E.checked ? 'CK.cpm(t);' : '')
        return ins.hints.includes('noinc') ? `${code}mbarArrive(HI32,a>>>2,1,false);` : code
      }
      const size = isInt(A[2]) ? Number(intValue(A[2])) : fail('cp.async size must be an immediate')
      const srcSize = A[3] ? rd(A[3], 'u32') : String(size)
      let code = E.addr(A[0]!, 'shared', size, 0, 'w') + 'v=a;'
      code += E.addr(A[1]!, 'global', size, 1)
      return code + `u=${srcSize};for(let k=0;k<${size};k++)H8[v+k]=k<u?H8[a+k]:0;` + (E.checked ? `CK.cpa(${E.curIdx},v,${size},t);` : '')
    }
    case 'isspacep': {
      const space = ins.space
      const a = rd(A[1], 'i64')
      const e = space === 'shared' ? `(u>=GSH&&u<GSH+SHN)` : space === 'local' ? `(u>=GLO+LB-LB0&&u<GLO+LB-LB0+LN)` : space === 'global' ? `(u>=0&&u<HN)` : space === 'param' ? `(u>=GPA&&u<GPA+PE-PB)` : 'false'
      return `u=${a};${wr(A[0], 'pred', e)}`
    }
    case 'mbarrier': return mbarrier(E, ins)
    case 'wmma': return ins.mode === 'mma' ? mma(E, ins) : wmmaMove(E, ins)
    case 'mma': return mma(E, ins)
    case 'ldmatrix': case 'stmatrix': return matrixRows(E, ins)
    case 'movmatrix': {
      if (ins.shape?.[0] !== 'm8n8' || !ins.flags.trans || ins.type !== 'b16') return fail(`unsupported instruction ${[ins.op, ...ins.qualifiers].join('.')}`)
      return E.suspend(collectiveOf(ins)!, [rd(A[1], 'i32')], [wr(A[0], 'i32', `movmatrixLane(${E.result(0)},t&31)`)])
    }
  }
}

/** A load or atomic others may change under it, at a yield point (a spin-wait: emit-js.ts yieldIf): the
 *  thread steps aside when it reads the same value at the same place again, so that whoever it waits for
 *  runs; a new value counts as progress for the scheduler. */
function spin(E: FunctionEmitter, code: string, dst: IrOperand): string | Suspension {
  if (dst.kind !== 'reg') return code
  const v = E.regJs[dst.id]!
  return E.yieldIf(code, `S.sk===${E.curIdx}&&S.sv===${v}`, `S.sk=${E.curIdx};S.sv=${v};_PROG++;`)
}

// --- tensor cores (tensor-core.ts holds the fragment layouts and the product)


/** How a register of a fragment element type is read and written: packed types and s32 as int32 bits, f32
 *  and tf32 as numbers, f64 as a number. */

/** wmma.load.{a,b,c} / wmma.store.d: each lane moves its own fragment elements (the layout of tensor-core.ts)
 *  between registers and a row- or column-major matrix at the address with the given stride (in elements;
 *  without one, the matrix is contiguous). Every element access is checked (and reported to the sanitizer). */
function wmmaMove(E: FunctionEmitter, ins: Instruction): string {
  const A = ins.operands
  const w = wmmaOperands(ins)
  if (typeof w === 'string') return E.fail(w)
  const { f, matrix, t, per, esz, regs, store, rowMajor } = w
  const shape = ins.shape?.[0] ?? ''
  const space = ins.space ?? 'generic'
  const stride = A[2] ? E.rd(A[2], 'u32') : String(rowMajor ? f.cols : f.rows)
  const at = (e: number) => `TB+(${rowMajor ? `TP.row[TL+${e}]*TS+TP.col[TL+${e}]` : `TP.col[TL+${e}]*TS+TP.row[TL+${e}]`})*${esz}`
  const mem = esz === 1 ? 'u8' : esz === 2 ? 'u16' : t === 'f64' ? 'f64' : t === 'f32' || t === 'tf32' ? 'f32' : 's32'
  let code = `{const TP=tcLayout('${shape}:${matrix}:${t}'),TL=(t&31)*TP.count,TB=${E.addrExpr(store ? A[0]! : A[1]!)},TS=${stride};`
  regs.forEach((r, j) => {
    if (per === 1) {
      code += E.checkedAccess(at(j), space, esz, store ? 'w' : 'r')
      code += store ? E.store(mem, E.rd(r, fragKind(t))) + E.stored() : E.wr(r, fragKind(t), E.load(mem).e)
      return
    }
    const bits = esz * 8
    if (store) {
      code += `u=${E.rd(r, 'i32')};`
      for (let s = 0; s < per; s++) code += E.checkedAccess(at(j * per + s), space, esz, 'w') + E.store(mem, `(u>>>${bits * s})&${(1 << bits) - 1}`) + E.stored()
      return
    }
    const parts: string[] = []
    for (let s = 0; s < per; s++) {
      code += E.checkedAccess(at(j * per + s), space, esz, 'r') + `const TV${j}_${s}=${E.load(mem).e};`
      parts.push(s ? `(TV${j}_${s}<<${bits * s})` : `TV${j}_${s}`)
    }
    code += E.wr(r, 'i32', `(${parts.join('|')})`)
  })
  return code + '}'
}

/** wmma.mma / mma.sync: a warp collective; each lane gives its A, B and C registers and computes its part of
 *  D from every lane's (tensor-core.ts mmaLane). */
function mma(E: FunctionEmitter, ins: Instruction): Suspension | string {
  const m = mmaOperands(ins)
  if (typeof m === 'string') return E.fail(m)
  const { form: { key, a, b, c, d }, ra, rb, rc, rd: rd_ } = m
  const list = (rs: IrOperand[], t: ElemType) => `[${rs.map((r) => E.rd(r, fragKind(t))).join(',')}]`
  const post = `{const TD=mmaLane(${E.result(0)},'${key}',t&31);${rd_.map((r, i) => E.wr(r, fragKind(d), `TD[${i}]`)).join('')}}`
  return E.suspend(collectiveOf(ins)!, [list(ra, a), list(rb, b), list(rc, c)], [post])
}

/** ldmatrix / stmatrix .m8n8 .x1/.x2/.x4 {.trans} .b16: lane 8j + r gives the address of row r of matrix j;
 *  lane l holds row l>>2, columns 2(l&3) and 2(l&3)+1 of each matrix (of its transpose with .trans), PTX ISA
 *  "ldmatrix". A warp collective that gathers the row addresses; each lane then loads (stores) its own
 *  elements, every access checked. */
function matrixRows(E: FunctionEmitter, ins: Instruction): Suspension | string {
  const A = ins.operands
  const regs = matrixOperands(ins)
  if (typeof regs === 'string') return E.fail(regs)
  const store = ins.op === 'stmatrix'
  const space = ins.space ?? 'generic'
  let post = `{const TG=${E.result(0)},TL=t&31;`
  // a store's values travel with the suspension (input 1, handed back as result 1): its registers need not
  // live past it
  regs.forEach((r, j) => {
    const v = store ? `${E.result(1)}[${j}]` : ''
    if (!ins.flags.trans) {
      post += E.checkedAccess(`TG[${8 * j}+(TL>>2)]+4*(TL&3)`, space, 4, store ? 'w' : 'r')
      post += store ? E.store('b32', v) + E.stored() : E.wr(r, 'i32', E.load('b32').e)
      return
    }
    const rw = store ? 'w' : 'r'
    const lo = E.checkedAccess(`TG[${8 * j}+2*(TL&3)]+2*(TL>>2)`, space, 2, rw), hi = E.checkedAccess(`TG[${8 * j + 1}+2*(TL&3)]+2*(TL>>2)`, space, 2, rw)
    if (store) post += `u=${v};${lo}${E.store('u16', 'u&65535')}${E.stored()}${hi}${E.store('u16', 'u>>>16')}${E.stored()}`
    else post += `${lo}u=${E.load('u16').e};${hi}${E.wr(r, 'i32', `u|(${E.load('u16').e}<<16)`)}`
  })
  const inputs = [E.addrExpr(store ? A[0]! : A[1]!)]
  if (store) inputs.push(`[${regs.map((r) => E.rd(r, 'i32')).join(',')}]`)
  return E.suspend(collectiveOf(ins)!, inputs, [post + '}'])
}

/** mbarrier.* on the object of mbarrier.ts; a wait that is not complete yet is a yield point (the arrivals
 *  it waits for come from threads that run after it). */
function mbarrier(E: FunctionEmitter, ins: Instruction): string | Suspension {
  const A = ins.operands
  const space = ins.space === 'shared' ? 'shared' : 'generic'
  const opcode = [ins.op, ...ins.qualifiers].join('.')
  if (ins.flags.expect_tx || ins.mode === 'complete_tx') return E.fail(`unsupported instruction ${opcode} (transaction counts belong to cp.async.bulk/TMA, which the emulator does not run)`)
  if (ins.flags.cluster) return E.fail(`unsupported instruction ${opcode} (clusters)`)
  switch (ins.mode) {
    // the checked variant: init/inval write the object, the others update or read it atomically
    case 'init': return `${E.addr(A[0]!, space, 8, 0, 'w')}mbarInit(HI32,a>>>2,${E.rd(A[1]!, 'u32')});`
    case 'inval': return `${E.addr(A[0]!, space, 8, 0, 'w')}HI32[a>>>2]=0;HI32[(a>>>2)+1]=0;`
    case 'arrive': case 'arrive_drop': {
      const count = A[2] ? E.rd(A[2], 'u32') : '1'
      return `${E.addr(A[1]!, space, 8, 0, 'a')}${E.wr(A[0]!, 'i64', `mbarArrive(HI32,a>>>2,${count},${ins.mode === 'arrive_drop'})`)}`
    }
    case 'test_wait': case 'try_wait': {
      const test = ins.flags.parity ? `mbarTestParity(HI32,a>>>2,${E.rd(A[2]!, 'u32')})` : `mbarTestWait(HI32,a>>>2,${E.rd(A[2]!, 'i64')})`
      const code = `${E.addr(A[1]!, space, 8, 0, 'a')}u=${test};${E.wr(A[0]!, 'pred', 'u')}`
      const done = A[0]!.kind === 'reg' ? E.regJs[A[0]!.id]! : 'u'
      return E.yieldIf(code, `!${done}`, '_PROG++;')
    }
    case 'pending_count': return E.wr(A[0]!, 'i32', `mbarPending(${E.rd(A[1]!, 'i64')})`)
    default: return E.fail(`unsupported instruction ${opcode}`)
  }
}

function carry(E: FunctionEmitter, ins: Instruction): string {
  // add.cc / addc(.cc) / sub.cc / subc(.cc) / mad.lo.cc / madc.{lo,hi}(.cc): carry flag in CF
  const A = ins.operands
  const t = ins.type!
  const setCC = ins.flags.cc === true
  const useC = ins.op === 'addc' || ins.op === 'subc' || ins.op === 'madc'
  const c = useC ? '+CF' : ''
  const isSub = ins.op === 'sub' || ins.op === 'subc'
  if (t === 'u64' || t === 's64' || t === 'b64') {
    const big = (o: IrOperand | undefined) => `u64b(${E.rd(o!, 'i64')})`
    let e: string
    if (ins.op === 'add' || ins.op === 'addc') e = `${big(A[1])}+${big(A[2])}${useC ? '+BigInt(CF)' : ''}`
    else if (isSub) e = `${big(A[1])}-${big(A[2])}${useC ? '-BigInt(CF)' : ''}`
    else {
      const p = `${big(A[1])}*${big(A[2])}`
      e = `${ins.part === 'hi' ? `((${p})>>64n)` : `BigInt.asUintN(64,${p})`}+${big(A[3])}${useC ? '+BigInt(CF)' : ''}`
    }
    return `{const W=${e};${setCC ? (isSub ? 'CF=W<0n?1:0;' : 'CF=W>18446744073709551615n?1:0;') : ''}${E.wr(A[0]!, 'i64', 'n64(W)')}}`
  }
  const a = E.rd(A[1]!, 'u32')
  const b = E.rd(A[2]!, 'u32')
  let e: string
  if (ins.op === 'add' || ins.op === 'addc') e = `${a}+${b}${c}`
  else if (isSub) e = `${a}-${b}${useC ? '-CF' : ''}`
  else {
    const p = ins.part === 'hi' ? `(mulhi32(${E.rd(A[1]!, 'i32')},${E.rd(A[2]!, 'i32')},${t === 's32'})>>>0)` : `(Math.imul(${E.rd(A[1]!, 'i32')},${E.rd(A[2]!, 'i32')})>>>0)`
    e = `${p}+${E.rd(A[3]!, 'u32')}${c}`
  }
  return `u=${e};${setCC ? (isSub ? 'CF=u<0?1:0;' : 'CF=u>4294967295?1:0;') : ''}${E.wr(A[0]!, 'i32', 'u|0')}`
}

function cmpExpr(E: FunctionEmitter, cmp: string, t: string, a: string, b: string): string {
  const isF = t === 'f32' || t === 'f64' || t === 'f16' || t === 'bf16'
  if (isF) {
    const un = cmp.endsWith('u') && cmp !== 'nu'
    const base = un ? cmp.slice(0, -1) : cmp
    const opm: Record<string, string> = { eq: '===', ne: '!==', lt: '<', le: '<=', gt: '>', ge: '>=' }
    if (cmp === 'num') return `(${a}===${a}&&${b}===${b})`
    if (cmp === 'nan') return `(${a}!==${a}||${b}!==${b})`
    if (!opm[base]) E.fail(`unsupported comparison .${cmp}`)
    if (un) return `(u=${a},v=${b},u!==u||v!==v||u${opm[base]}v)`
    if (base === 'ne') return `(u=${a},v=${b},u===u&&v===v&&u!==v)`
    return `(${a}${opm[base]}${b})`
  }
  const is64 = t === 'u64' || t === 's64' || t === 'b64'
  const signed = t.startsWith('s')
  const m: Record<string, string> = { eq: '===', ne: '!==', lt: '<', le: '<=', gt: '>', ge: '>=', lo: '<', ls: '<=', hi: '>', hs: '>=' }
  const o = m[cmp]
  if (!o) E.fail(`unsupported integer comparison .${cmp}`)
  const uns = !signed || ['lo', 'ls', 'hi', 'hs'].includes(cmp)
  if (is64) {
    if (cmp === 'eq' || cmp === 'ne') return `(${a}${cmp === 'eq' ? '==' : '!='}${b})`
    return `(${uns ? 'ucmp64' : 'scmp64'}(${a},${b})${o}0)`
  }
  return `(${a}${o}${b})`
}

function operandKind(E: FunctionEmitter, t: string, signedCmp: boolean): Kind {
  if (t === 'f32' || t === 'f64') return t
  if (t === 'u32' || t === 'b32') return signedCmp ? 'i32' : 'u32'
  if (t === 's32') return 'i32'
  if (t === 'u16' || t === 'b16') return signedCmp ? 's16' : 'u16'
  return kindOf(t, E.failOp)
}

function setp(E: FunctionEmitter, ins: Instruction): string {
  const A = ins.operands
  const t = ins.type!
  const cmp = ins.cmp ?? E.fail('setp without a comparison')
  const boolOp = ins.boolOp
  const signedCmp = t.startsWith('s') && !['lo', 'ls', 'hi', 'hs'].includes(cmp)
  let a: string, b: string
  if (t === 'f16' || t === 'bf16') {
    const f = t === 'f16' ? 'f16ToNum' : 'bf16ToNum'
    a = `${f}(${E.rd(A[1]!, 'u16')})`; b = `${f}(${E.rd(A[2]!, 'u16')})`
  } else if (t === 'f16x2' || t === 'bf16x2') {
    return E.fail('setp on packed halves is not supported')
  } else {
    const kk = t === 'u64' || t === 's64' || t === 'b64' ? 'i64' : operandKind(E, t, signedCmp)
    a = E.rd(A[1]!, kk); b = E.rd(A[2]!, kk)
    if (ins.flags.ftz && t === 'f32') { a = `ftz(${a})`; b = `ftz(${b})` }
  }
  const c = cmpExpr(E, cmp, t, a, b)
  const [dst, q] = split(A[0]!)
  if (boolOp) {
    const pc = E.rd(A[3]!, 'pred')
    const j = boolOp === 'and' ? '&&' : boolOp === 'or' ? '||' : '!=='
    return `u=${c};v=${pc};${E.wr(dst, 'pred', `(u${j}v)`)}${q ? E.wr(q, 'pred', `(!u${j}v)`) : ''}`
  }
  if (q) return `u=${c};${E.wr(dst, 'pred', 'u')}${E.wr(q, 'pred', '!u')}`
  return E.wr(dst, 'pred', c)
}

function set(E: FunctionEmitter, ins: Instruction): string {
  const A = ins.operands
  const [dt, st] = ins.types as [string, string]
  const cmp = ins.cmp ?? E.fail('set without a comparison')
  const signedCmp = st.startsWith('s') && !['lo', 'ls', 'hi', 'hs'].includes(cmp)
  const kk = st === 'u64' || st === 's64' || st === 'b64' ? 'i64' : operandKind(E, st, signedCmp)
  let c = cmpExpr(E, cmp, st, E.rd(A[1]!, kk), E.rd(A[2]!, kk))
  const boolOp = ins.boolOp
  if (boolOp) c = `(${c}${boolOp === 'and' ? '&&' : boolOp === 'or' ? '||' : '!=='}${E.rd(A[3]!, 'pred')})`
  if (dt === 'f32') return E.wr(A[0]!, 'f32', `(${c}?1:0)`)
  return E.wr(A[0]!, 'i32', `(${c}?-1:0)`)
}

function cvt(E: FunctionEmitter, ins: Instruction): string {
  const A = ins.operands
  const types = ins.types
  const { failOp: fail, rdOp: rd } = E
  if (types.length < 2) return fail('cvt needs two types')
  const [dt, st] = types as [string, string]
  const irnd = ins.intRounding
  const frnd = ins.rounding ?? 'rn'
  const ftzF = ins.flags.ftz === true
  const satF = ins.flags.sat === true
  const isF = (x: string) => x === 'f32' || x === 'f64' || x === 'f16' || x === 'bf16'
  const isI = (x: string) => /^[sub](8|16|32|64)$/.test(x)
  const bits = (x: string) => Number(x.slice(1))
  const wr = (k: Kind, e: string) => E.wr(A[0]!, k, e)
  // source value as number (floats) or int expression
  const readF = (): string => {
    if (st === 'f32') return ftzF ? `ftz(${rd(A[1], 'f32')})` : rd(A[1], 'f32')
    if (st === 'f64') return rd(A[1], 'f64')
    if (st === 'f16') return `f16ToNum(${rd(A[1], 'u16')})`
    return `bf16ToNum(${rd(A[1], 'u16')})`
  }
  if (dt === 'tf32') {
    // cvt.{rna,rn,rz}{.satfinite}.tf32.f32: an f32 with its low 13 bits rounded off, in a .b32 register
    if (st !== 'f32' || ins.flags.relu) return fail(`unsupported conversion .${dt}.${st}`)
    return wr('f32', `numToTf32(${rd(A[1], 'f32')},'${ins.rounding ?? 'rna'}',${ins.flags.satfinite === true})`)
  }
  const fp8 = types.find((t) => t === 'e4m3x2' || t === 'e5m2x2')
  if (fp8) {
    const e4 = fp8 === 'e4m3x2'
    if (dt === fp8) {
      if (!ins.flags.satfinite) return fail(`cvt to .${fp8} needs .satfinite`)
      const enc = e4 ? 'numToE4m3' : 'numToE5m2'
      // two f32 sources: a → upper byte, b → lower byte; one f16x2 source: halves in place
      if (st === 'f32') return wr('u16', `(${enc}(${rd(A[2], 'f32')})|(${enc}(${rd(A[1], 'f32')})<<8))`)
      if (st === 'f16x2') return `u=${rd(A[1], 'i32')};${wr('u16', `(${enc}(f16ToNum(u&65535))|(${enc}(f16ToNum(u>>>16))<<8))`)}`
      return fail(`unsupported conversion .${dt}.${st}`)
    }
    if (dt === 'f16x2' && st === fp8) {
      const dec = e4 ? 'e4m3ToNum' : 'e5m2ToNum'
      return `u=${rd(A[1], 'u16')};${wr('i32', `(numToF16(${dec}(u&255))|(numToF16(${dec}(u>>>8))<<16))`)}`
    }
    return fail(`unsupported conversion .${dt}.${st}`)
  }
  const relu = ins.flags.relu === true
  const rl = (e: string, bf: boolean) => (relu ? `relu16(${e},${bf})` : e)
  if (types.includes('f16x2') || types.includes('bf16x2')) {
    // cvt.rn{.relu}{.satfinite}.f16x2.f32 d, a, b: d = {a→hi, b→lo}
    const bf = dt === 'bf16x2'
    const f = bf ? 'numToBf16' : 'numToF16'
    const sf = ins.flags.satfinite === true
    return wr('i32', `(${rl(`${f}(${rd(A[2], 'f32')},'${frnd}',${sf})`, bf)}|(${rl(`${f}(${rd(A[1], 'f32')},'${frnd}',${sf})`, bf)}<<16))`)
  }
  if (relu && dt !== 'f16' && dt !== 'bf16') return fail('.relu applies to half-precision results only')
  if (isF(dt) && isF(st)) {
    const x = readF()
    if (dt === 'f32') {
      let e = st === 'f64' ? (frnd === 'rn' ? `fround(${x})` : `cvt32(${x},'${frnd}')`) : x
      if (irnd) e = `fround(roundInt(${x},'${irnd}'))`
      if (ftzF) e = `ftz(${e})`
      if (satF) e = `sat(${e})`
      return wr('f32', e)
    }
    if (dt === 'f64') {
      let e = irnd ? `roundInt(${x},'${irnd}')` : x
      if (satF) e = `sat(${e})`
      return wr('f64', e)
    }
    let src = irnd ? `roundInt(${x},'${irnd}')` : x
    if (satF) src = `sat(${src})`
    const sf = ins.flags.satfinite === true
    if (dt === 'f16') return wr('u16', rl(`numToF16(${src},'${frnd}',${sf})`, false))
    return wr('u16', rl(`numToBf16(${src},'${frnd}',${sf})`, true))
  }
  if (isI(dt) && isF(st)) {
    const x = readF()
    const mode = irnd ?? 'rzi'
    const sg = dt.startsWith('s')
    if (bits(dt) === 64) return wr('i64', `f2i64(${x},'${mode}',${sg})`)
    if (bits(dt) === 32) return wr('i32', `f2i32(${x},'${mode}',${sg})`)
    return wr(bits(dt) === 16 ? 'u16' : 'u8', `f2iN(${x},'${mode}',${sg},${bits(dt)})`)
  }
  if (isF(dt) && isI(st)) {
    const sg = st.startsWith('s')
    let num: string
    if (bits(st) === 64) {
      num = dt === 'f32' ? `i64ToF(${rd(A[1], 'i64')},${!sg},true,'${frnd}')` : `i64ToF(${rd(A[1], 'i64')},${!sg},false,'${frnd}')`
    } else {
      const kk: Kind = bits(st) === 32 ? (sg ? 'i32' : 'u32') : bits(st) === 16 ? (sg ? 's16' : 'u16') : sg ? 's8' : 'u8'
      const v = rd(A[1], kk)
      num = dt === 'f32' ? (bits(st) === 32 ? `i32ToF32(${v},'${frnd}')` : `fround(${v})`) : v
    }
    if (satF) num = `sat(${num})`
    if (dt === 'f32') return wr('f32', num)
    if (dt === 'f64') return wr('f64', num)
    if (dt === 'f16') return wr('u16', `numToF16(${num},'${frnd}')`)
    return wr('u16', `numToBf16(${num},'${frnd}')`)
  }
  if (isI(dt) && isI(st)) {
    const sb = bits(st), db = bits(dt)
    const ss = st.startsWith('s'), ds = dt.startsWith('s')
    if (satF) {
      // clamp the source value into the destination range
      const lo = ds ? -(2 ** (db - 1)) : 0
      const hi = ds ? 2 ** (db - 1) - 1 : 2 ** db - 1
      if (sb === 64 || db === 64) {
        const v = ss ? `big(${rd(A[1], 'i64')})` : `u64b(${rd(A[1], 'i64')})`
        return `{const W=${v};${wr('i64', `n64(W<${BigInt(lo)}n?${BigInt(lo)}n:W>${BigInt(hi)}n?${BigInt(hi)}n:W)`)}}`
      }
      const kk: Kind = sb === 32 ? (ss ? 'i32' : 'u32') : sb === 16 ? (ss ? 's16' : 'u16') : ss ? 's8' : 'u8'
      const v = rd(A[1], kk)
      const e = `Math.min(Math.max(${v},${lo}),${hi})`
      return wr(db === 32 ? 'i32' : db === 16 ? 'u16' : 'u8', db === 32 ? `${e}|0` : `${e}&${2 ** db - 1}`)
    }
    // read source at its width (sign/zero extended), write to destination width
    let v: string
    let kk: Kind
    if (sb === 64) { v = rd(A[1], 'i64'); kk = 'i64' } else if (sb === 32) { kk = ss ? 'i32' : 'u32'; v = rd(A[1], kk) } else if (sb === 16) { kk = ss ? 's16' : 'u16'; v = rd(A[1], kk) } else { kk = ss ? 's8' : 'u8'; v = rd(A[1], kk) }
    if (db === 64) return wr('i64', v)
    if (db === 32) return wr('i32', kk === 'i64' ? `lo32(${v})` : `${v}|0`)
    const wv = kk === 'i64' ? `lo32(${v})` : v
    if (db === 16) return wr('u16', `${wv}&65535`)
    // 8-bit destination in a wider register: PTX sign-extends .s8 results to the register width
    if (ds) return wr('i32', `(${wv}<<24>>24)`)
    return wr('i32', `${wv}&255`)
  }
  return fail(`unsupported conversion .${dt}.${st}`)
}

function half(E: FunctionEmitter, ins: Instruction, what: string): string {
  const A = ins.operands
  const t = ins.type!
  const bf = t.startsWith('bf')
  const to = bf ? 'numToBf16' : 'numToF16'
  const from = bf ? 'bf16ToNum' : 'f16ToNum'
  const sat = ins.flags.sat === true
  const relu = ins.flags.relu === true
  if (relu && what !== 'fma') E.fail(`.relu is supported on fma only`)
  const one = (x: string[]): string => {
    let e: string
    switch (what) {
      case '+': case '-': case '*': e = `${to}(${x[0]}${what}${x[1]})`; break
      case 'fma': e = bf ? `fmaB(${x[0]},${x[1]},${x[2]})` : `fmaH(${x[0]},${x[1]},${x[2]})`; break
      case 'min': e = `${to}(fmin(${x[0]},${x[1]}))`; break
      case 'max': e = `${to}(fmax(${x[0]},${x[1]}))`; break
      case 'ex2': e = `${to}(2**${x[0]})`; break
      case 'tanh': e = `${to}(Math.tanh(${x[0]}))`; break
      case 'rcp': e = `${to}(1/${x[0]})`; break
      case 'sqrt': e = `${to}(Math.sqrt(${x[0]}))`; break
      case 'rsqrt': e = `${to}(1/Math.sqrt(${x[0]}))`; break
      case 'sin': e = `${to}(Math.sin(${x[0]}))`; break
      case 'cos': e = `${to}(Math.cos(${x[0]}))`; break
      case 'lg2': e = `${to}(Math.log2(${x[0]}))`; break
      default: return E.fail(`unsupported half-precision ${what}`)
    }
    if (sat) e = `${to}(sat(${from}(${e})))`
    if (relu) e = `relu16(${e},${bf})`
    return e
  }
  const n = what === 'fma' ? 3 : ['+', '-', '*', 'min', 'max'].includes(what) ? 2 : 1
  if (t === 'f16' || t === 'bf16') {
    const xs = A.slice(1, 1 + n).map((o) => `${from}(${E.rd(o, 'u16')})`)
    return E.wr(A[0]!, 'u16', one(xs))
  }
  const srcs = A.slice(1, 1 + n).map((o) => E.rd(o, 'i32'))
  const pre = srcs.map((s, i) => `const h${i}=${s};`).join('')
  const lo = one(srcs.map((_, i) => `${from}(h${i}&65535)`))
  const hi = one(srcs.map((_, i) => `${from}(h${i}>>>16)`))
  return `{${pre}${E.wr(A[0]!, 'i32', `(${lo})|((${hi})<<16)`)}}`
}

/**
 * atom/red. Global and generic addresses go through `Atomics` on the heap (issue 13 item 3): where worker
 * threads share the heap (a SharedArrayBuffer), blocks on other threads update the same words at the same
 * time, at every scope (.cta/.gpu/.sys alike: one device). Operations `Atomics` has (add, and, or, xor,
 * exchange, compare-exchange on 32 and 64 bits, 16-bit compare-exchange) are one call; the others (min, max,
 * inc, dec, floating-point add/min/max, half-precision add) a compare-exchange loop on the word's bits.
 * Shared memory belongs to one block, whose threads all run on one JavaScript thread, so plain reads and
 * writes are atomic there.
 */
function atom(E: FunctionEmitter, ins: Instruction): string {
  const A = ins.operands
  const isRed = ins.op === 'red'
  const space = ins.space === 'shared' ? 'shared' : ins.space === 'global' ? 'global' : 'generic'
  const t = ins.type!
  const opn = ins.atomOp
  if (!opn) return E.fail('unsupported atomic operation')
  if (ins.vector) return E.fail('vector atomics are not supported')
  const sz = typeSize(t)
  const addrOp = isRed ? A[0]! : A[1]!
  const b = isRed ? A[1]! : A[2]!
  const c = isRed ? undefined : A[3]
  let code = E.addr(addrOp, space, sz, 0, 'a')
  const dst = isRed ? undefined : A[0]!
  const out = (kind: Kind, e: string) => (dst ? E.wr(dst, kind, e) : '')
  const shared = space === 'shared'
  /** `u` = the old word of `view` at index i, `N` = the new one computed from it (by `next`), stored
   *  atomically: plain in shared memory, else a compare-exchange loop that retries when another thread
   *  changed the word in between. */
  const rmw = (view: string, i: string, next: string) => shared
    ? `u=${view}[${i}];{const N=${next};${view}[${i}]=N;}`
    : `for(;;){u=Atomics.load(${view},${i});const N=${next};if(Atomics.compareExchange(${view},${i},u,N)===u)break;}`
  if (t === 'f32') {
    const nv = opn === 'add' ? 'fround(w+v)' : opn === 'min' ? 'fmin(w,v)' : opn === 'max' ? 'fmax(w,v)' : opn === 'exch' ? 'v' : E.fail('unsupported f32 atomic')
    // on the bits (HI32): the old value as a float is w; NaN payloads are not kept (as before)
    code += `v=${E.rd(b, 'f32')};${rmw('HI32', 'a>>>2', `(w=FB32(u),BF32(${nv}))`)}`
    return `{let w=0;${code}${out('f32', 'FB32(u)')}}`
  }
  if (t === 'f64') {
    const nv = opn === 'add' ? '(w+v)' : opn === 'min' ? 'fmin(w,v)' : opn === 'max' ? 'fmax(w,v)' : opn === 'exch' ? 'v' : E.fail('unsupported f64 atomic')
    code += `v=${E.rd(b, 'f64')};${rmw('HB64', 'a>>>3', `(w=FB64(u),big(BF64(${nv})))`)}`
    return `{let w=0;${code}${out('f64', 'FB64(u)')}}`
  }
  if (t === 'f16' || t === 'bf16' || t === 'f16x2' || t === 'bf16x2') {
    if (opn !== 'add') return E.fail('unsupported half-precision atomic')
    const bf = t.startsWith('bf')
    const to = bf ? 'numToBf16' : 'numToF16', from = bf ? 'bf16ToNum' : 'f16ToNum'
    if (t === 'f16' || t === 'bf16') {
      code += `v=${E.rd(b, 'u16')};${rmw('HU16', 'a>>>1', `${to}(${from}(u)+${from}(v))`)}`
      return code + out('u16', 'u')
    }
    code += `v=${E.rd(b, 'i32')};${rmw('HI32', 'a>>>2', `${to}(${from}(u&65535)+${from}(v&65535))|(${to}(${from}(u>>>16)+${from}(v>>>16))<<16)`)}`
    return code + out('i32', 'u')
  }
  if (sz === 8) {
    const bv = E.rd(b, 'i64')
    const signed = t === 's64'
    // the old value as an i64 (number or BigInt) is x64
    if (!shared && (opn === 'add' || opn === 'exch' || opn === 'and' || opn === 'or' || opn === 'xor' || opn === 'cas')) {
      const fn = opn === 'exch' ? 'exchange' : opn === 'cas' ? 'compareExchange' : opn
      const args = opn === 'cas' ? `big(${bv}),big(${E.rd(c!, 'i64')})` : `big(${bv})`
      return code + `x64=n64(Atomics.${fn}(HB64,a>>>3,${args}));` + out('i64', 'x64')
    }
    let nv: string
    switch (opn) {
      case 'add': nv = `add64(x64,${bv})`; break
      case 'min': nv = `(${signed ? 'scmp64' : 'ucmp64'}(x64,${bv})<=0?x64:${bv})`; break
      case 'max': nv = `(${signed ? 'scmp64' : 'ucmp64'}(x64,${bv})>=0?x64:${bv})`; break
      case 'exch': nv = bv; break
      case 'cas': nv = `(x64==${bv}?${E.rd(c!, 'i64')}:x64)`; break
      case 'and': case 'or': case 'xor': nv = `${opn}64(x64,${bv})`; break
      case 'inc': case 'dec': nv = E.fail('64-bit atom.inc/dec does not exist in PTX'); break
    }
    if (shared) return code + `x64=mk64(HU32[a>>>2],HI32[(a>>>2)+1]);{const N=${nv!};HI32[a>>>2]=lo32(N);HI32[(a>>>2)+1]=hi32(N);}` + out('i64', 'x64')
    return code + `for(;;){const o=Atomics.load(HB64,a>>>3);x64=n64(o);if(Atomics.compareExchange(HB64,a>>>3,o,big(${nv!}))===o)break;}` + out('i64', 'x64')
  }
  if (sz === 4) {
    const signed = t === 's32'
    code += `v=${E.rd(b, 'i32')};`
    const one: Partial<Record<string, string>> = { add: 'add', exch: 'exchange', and: 'and', or: 'or', xor: 'xor' }
    if (!shared && one[opn]) return code + `u=Atomics.${one[opn]}(HI32,a>>>2,v);` + out('i32', 'u')
    if (!shared && opn === 'cas') return code + `u=Atomics.compareExchange(HI32,a>>>2,v,${E.rd(c!, 'i32')});` + out('i32', 'u')
    let nv: string
    switch (opn) {
      case 'add': nv = '(u+v)|0'; break
      case 'min': nv = signed ? 'Math.min(u,v)' : '(Math.min(u>>>0,v>>>0)|0)'; break
      case 'max': nv = signed ? 'Math.max(u,v)' : '(Math.max(u>>>0,v>>>0)|0)'; break
      case 'inc': nv = 'incWrap(u,v)'; break
      case 'dec': nv = 'decWrap(u,v)'; break
      case 'exch': nv = 'v'; break
      case 'cas': nv = `(u===v?${E.rd(c!, 'i32')}:u)`; break
      case 'and': nv = 'u&v'; break
      case 'or': nv = 'u|v'; break
      case 'xor': nv = 'u^v'; break
    }
    return code + rmw('HI32', 'a>>>2', nv!) + out('i32', 'u')
  }
  if (sz === 2 && opn === 'cas') {
    if (shared) code += `u=HU16[a>>>1];if(u===${E.rd(b, 'u16')})HU16[a>>>1]=${E.rd(c!, 'u16')};`
    else code += `u=Atomics.compareExchange(HU16,a>>>1,${E.rd(b, 'u16')},${E.rd(c!, 'u16')});`
    return code + out('u16', 'u')
  }
  return E.fail(`unsupported atomic type .${t}`)
}

function call(E: FunctionEmitter, ins: Instruction): string {
  // call(.uni) (ret), fname, (args)   |   call fname, (args)   |   call fname
  const A = ins.operands
  let i = 0
  let rets: IrOperand[] = []
  if (A[0]?.kind === 'list') { rets = A[0].items; i = 1 }
  const target = A[i]
  if (target?.kind !== 'sym' || target.target !== 'function') return E.fail('indirect calls are not supported by the emulator')
  const name = target.name
  const argList = A[i + 1]
  const args = argList?.kind === 'list' ? argList.items : []
  const argAddr = (o: IrOperand): string => {
    if (o.kind !== 'sym') return E.fail('call arguments must be .param variables')
    const v = E.frame.vars.get(o.name)
    if (!v || v.v.space !== 'param') return E.fail(`call argument ${o.name} is not a .param variable`)
    return E.symAddr(o.name)!
  }
  const idx = E.curIdx
  if (name === 'vprintf') {
    const out = rets.length ? `HI32[${argAddr(rets[0]!)}>>>2]=r_;` : ''
    return `{const r_=E.vprintf(H8,HU32,HI32,${args.length > 0 ? `mk64(HU32[${argAddr(args[0]!)}>>>2],HI32[(${argAddr(args[0]!)}>>>2)+1])` : 0},${args.length > 1 ? `mk64(HU32[${argAddr(args[1]!)}>>>2],HI32[(${argAddr(args[1]!)}>>>2)+1])` : 0},t,CX+NCX*(CY+NCY*CZ),${idx});${out}}`
  }
  if (name === '__assertfail') return `fault(${idx},undefined,'assert');`
  if (name === 'malloc' || name === 'free') return E.fail(`device ${name} is not supported by the emulator`)
  const ci = E.mc.fnIndex.get(name)
  const callee = ci === undefined ? undefined : E.mc.mod.functions[ci]
  if (!callee) return E.fail(`call to ${name}, which has no body in this module`)
  E.calls.add(name)
  // copy args into the callee frame (its param offsets from the module's FOFF/ROFF tables, laid out before emission)
  const cp = args.map((o, j) => `mcp(nf+FOFF[${ci}][${j}],${argAddr(o)},${E.mc.paramSize(callee, j)});`).join('')
  const rp = rets.map((o, j) => `mcp(${argAddr(o)},nf+ROFF[${ci}][${j}],${E.mc.retSize(callee, j)});`).join('')
  return `{const nf=PSP;PSP+=FSIZE[${ci}];if(PSP>PSEND)fault(${idx},undefined,'callstack');${cp}F${ci}(nf,LB,LF+${E.frame.localSize},t);${rp}PSP=nf;}`
}
