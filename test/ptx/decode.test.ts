// decode.ts: AST → typed IR. Qualifiers become typed fields under per-opcode rules, literals typed values,
// operand names registers / special registers / labels / symbols.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeModule, parsePtx, operandRegisters, PtxError, type Instruction, type IrFunction } from '@kernelpack/ptx'

/** Decodes one kernel whose body is `body` (registers %r, %rd, %f, %fd, %h, %p declared). */
function kernel(body: string): IrFunction {
  const m = decodeModule(parsePtx(`.version 8.0
.target sm_80
.address_size 64
.global .align 4 .u32 counter;
.func helper(.param .b32 x) { ret; }
.visible .entry k(.param .u64 k_p, .param .u32 k_n)
{
  .reg .pred %p<8>;
  .reg .b16 %h<8>;
  .reg .b32 %r<20>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<8>;
  .reg .f64 %fd<4>;
  .shared .align 4 .b8 tile[64];
${body}
}`))
  return m.functions.find((f) => f.name === 'k')!
}
const one = (text: string): Instruction => kernel(text).instructions[0]!

function refuses(body: string, re: RegExp, line = 15): void {
  try {
    kernel(body)
    assert.unreachable('should throw')
  } catch (e) {
    assert.instance(e, PtxError)
    assert.is((e as PtxError).line, line)
    assert.match((e as Error).message, re)
  }
}

const fields = suite('decode: typed fields')

fields('types, rounding, flags, comparison and boolean ops', () => {
  const cvt = one('cvt.rn.ftz.sat.f32.f64 %f1, %fd1;')
  assert.equal([cvt.op, cvt.types, cvt.type, cvt.rounding, cvt.flags], ['cvt', ['f32', 'f64'], 'f64', 'rn', { ftz: true, sat: true }])
  const setp = one('setp.ltu.and.ftz.f32 %p1|%p2, %f1, %f2, %p3;')
  assert.equal([setp.cmp, setp.boolOp, setp.flags, setp.type], ['ltu', 'and', { ftz: true }, 'f32'])
  assert.equal(setp.operands[0], { kind: 'pair', first: { kind: 'reg', id: 0 + 1 }, second: { kind: 'reg', id: 2 } })
  const cvti = one('cvt.rzi.s32.f32 %r1, %f1;')
  assert.equal([cvti.intRounding, cvti.rounding], ['rzi', undefined])
  assert.equal(one('mul.wide.u32 %rd1, %r1, 4;').part, 'wide')
  assert.equal(one('min.NaN.f32 %f1, %f2, %f3;').flags, { nan: true })
})

fields('memory: state space, vector width, semantics, scope, hints', () => {
  const ld = one('ld.global.nc.L1::no_allocate.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];')
  assert.equal([ld.space, ld.vector, ld.flags, ld.hints], ['global', 4, { nc: true }, ['L1::no_allocate']])
  assert.equal(ld.operands[1], { kind: 'addr', base: { kind: 'reg', id: 44 + 1 }, offset: 16 })
  const atom = one('atom.acq_rel.gpu.global.add.u32 %r1, [%rd1], 1;')
  assert.equal([atom.sem, atom.scope, atom.space, atom.atomOp, atom.type], ['acq_rel', 'gpu', 'global', 'add', 'u32'])
  const cp = one('cp.async.ca.shared.global [%r1], [%rd1], 16;')
  assert.equal([cp.flags, cp.space, cp.srcSpace, cp.hints], [{ async: true }, 'shared', 'global', ['ca']])
  assert.equal(one('st.shared::cta.u32 [tile], %r1;').space, 'shared')
  assert.equal(one('ld.param.u32 %r1, [k_n];').operands[1], { kind: 'addr', base: { kind: 'sym', name: 'k_n', target: 'variable' }, offset: 0 })
})

fields('collectives: modes and reductions', () => {
  assert.equal([one('shfl.sync.bfly.b32 %r1|%p1, %r2, 16, 31, -1;').mode, one('vote.sync.ballot.b32 %r1, %p1, -1;').mode], ['bfly', 'ballot'])
  const red = one('bar.red.popc.u32 %r1, 0, %p1;')
  assert.equal([red.op, red.mode, red.reduction], ['bar', 'red', 'popc'])
  const warp = one('bar.warp.sync -1;')
  assert.equal([warp.mode, warp.flags], ['sync', { warp: true }])
  assert.equal([one('redux.sync.min.u32 %r1, %r2, -1;').reduction, one('match.any.sync.b64 %r1, %rd1, -1;').mode], ['min', 'any'])
})

fields('variable-length operands: mma.sync.m16n8k16 takes 14 registers per lane', () => {
  const mma = one('mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f0};')
  assert.equal([mma.shape, mma.layouts, mma.types, mma.flags], [['m16n8k16'], ['row', 'col'], ['f32', 'f16', 'f16', 'f32'], { sync: true, aligned: true }])
  assert.is(mma.operands.reduce((n, o) => n + operandRegisters(o).length, 0), 14)
})

fields('tensor cores and mbarriers: wmma\'s operation and matrix, movmatrix, mbarrier modes and flags', () => {
  const ld = one('wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;')
  assert.equal([ld.op, ld.mode, ld.fragment, ld.layouts, ld.shape, ld.space, ld.type], ['wmma', 'load', 'a', ['row'], ['m16n16k16'], 'global', 'f16'])
  const st = one('wmma.store.d.sync.aligned.row.m16n16k16.f32 [%rd1], {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f0}, %r9;')
  assert.equal([st.mode, st.fragment, st.space], ['store', 'd', undefined])
  const mma = one('wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64.rn {%fd1, %fd2}, {%fd3}, {%fd0}, {%fd1, %fd2};')
  assert.equal([mma.mode, mma.layouts, mma.types, mma.rounding], ['mma', ['row', 'col'], ['f64', 'f64', 'f64', 'f64'], 'rn'])
  const mv = one('movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;')
  assert.equal([mv.shape, mv.flags], [['m8n8'], { sync: true, aligned: true, trans: true }])
  const w = one('mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r1], %r2;')
  assert.equal([w.mode, w.flags, w.sem, w.scope, w.space], ['try_wait', { parity: true }, 'acquire', 'cta', 'shared'])
  assert.equal(one('mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r1], 16;').flags, { expect_tx: true })
  assert.equal(one('cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];').hints, ['mbarrier', 'arrive', 'noinc'])
})

fields('WARP_SZ is the constant 32; %envreg and %reserved_smem_offset_* are special registers', () => {
  assert.equal(one('mov.u32 %r1, WARP_SZ;').operands[1], { kind: 'imm', imm: { kind: 'int', value: 32n } })
  assert.equal(one('mov.u32 %r1, %envreg2;').operands[1], { kind: 'special', name: '%envreg2' })
  assert.equal(one('mov.u32 %r1, %reserved_smem_offset_1;').operands[1], { kind: 'special', name: '%reserved_smem_offset_1' })
})

fields('brx.idx reads its .branchtargets list as labels', () => {
  const f = kernel(`  $L_brx_0: .branchtargets $a, $b;
  brx.idx %r1, $L_brx_0;
$a:
  ret;
$b:
  ret;`)
  assert.equal(f.instructions[0]!.operands[1], { kind: 'list', items: [{ kind: 'label', name: '$a' }, { kind: 'label', name: '$b' }] })
  assert.equal([...f.labels.keys()], ['$a', '$b'])
  refuses('  brx.idx %r1, $nowhere;', /unknown register or symbol \$nowhere/)
})

fields.run()

// ---
const imms = suite('decode: immediates are typed values')

imms('negative, hex-float, oversized and decimal literals', () => {
  assert.equal(one('sub.f32 %f2, %f1, 0fBF800000;').operands[2], { kind: 'imm', imm: { kind: 'f32', bits: 0xbf800000n } })
  assert.equal(one('sub.f32 %f2, %f1, -0f3F800000;').operands[2], { kind: 'imm', imm: { kind: 'f32', bits: 0xbf800000n } })
  assert.equal(one('sub.s32 %r8, %r7, -7;').operands[2], { kind: 'imm', imm: { kind: 'int', value: -7n } })
  assert.equal(one('neg.s32 %r3, -5;').operands[1], { kind: 'imm', imm: { kind: 'int', value: -5n } })
  assert.equal(one('add.u32 %r1, %r2, 4294967295;').operands[2], { kind: 'imm', imm: { kind: 'int', value: 4294967295n } })
  assert.equal(one('add.f64 %fd1, %fd2, 0dBFF0000000000000;').operands[2], { kind: 'imm', imm: { kind: 'f64', bits: 0xbff0000000000000n } })
  assert.equal(one('mov.f64 %fd1, 1.5;').operands[1], { kind: 'imm', imm: { kind: 'real', value: 1.5 } })
})

imms.run()

// ---
const names = suite('decode: operand names')

names('registers, special registers, labels, symbols, the sink; labels as positions', () => {
  const f = kernel(`  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, counter;
  mov.u64 %rd2, tile;
$L1:
  @%p1 bra $L1;
  { .param .b32 a; st.param.b32 [a], %r1; call.uni helper, (a); }
  shfl.sync.idx.b32 _|%p2, %r1, 0, 31, -1;
  ret;
$end:`)
  const [mov, g, s, bra, , call, shfl] = f.instructions as Instruction[]
  assert.equal(mov!.operands[1], { kind: 'special', name: '%tid.x' })
  assert.equal(g!.operands[1], { kind: 'sym', name: 'counter', target: 'variable' })
  assert.equal(s!.operands[1], { kind: 'sym', name: 'tile', target: 'variable' })
  assert.equal([bra!.operands[0], bra!.guard], [{ kind: 'label', name: '$L1' }, { reg: 1, negate: false }])
  assert.equal(call!.operands[0], { kind: 'sym', name: 'helper', target: 'function' })
  assert.equal(shfl!.operands[0], { kind: 'pair', first: { kind: 'sink' }, second: { kind: 'reg', id: 2 } })
  assert.equal([...f.labels], [['$L1', 3], ['$end', 8]])
  assert.is(f.registers[f.instructions[0]!.operands[0]!.kind === 'reg' ? (f.instructions[0]!.operands[0] as { id: number }).id : -1]!.name, '%r1')
})

names.run()

// ---
const rules = suite('decode: per-opcode qualifier rules')

rules('a qualifier is legal only on the opcodes that take it; refusals name the line', () => {
  one('fma.rn.relu.f16 %h1, %h2, %h3, %h4;')
  refuses('  add.relu.f32 %f1, %f2, %f3;', /unsupported qualifier \.relu of add in `add\.relu\.f32 %f1, %f2, %f3`/)
  one('add.sat.s32 %r1, %r2, %r3;')
  refuses('  and.sat.b32 %r1, %r2, %r3;', /unsupported qualifier \.sat of and/)
  refuses('  fma.rn.xorsign.f16 %h1, %h2, %h3, %h4;', /\.xorsign/)
  refuses('  add.rn.rz.f32 %f1, %f2, %f3;', /\.rz conflicts with an earlier one of add/)
  refuses('  frobnicate.b32 %r1, %r2;', /unsupported instruction frobnicate/)
  refuses('  add.s32 %r1, %r2, %nope;', /unknown register or symbol %nope/)
  refuses('  @%r1 bra $x;', /guard %r1 is not a predicate register/)
})

rules('perFunction: a function that cannot be decoded is kept with its error, the others decode', () => {
  const m = decodeModule(parsePtx(`.version 8.0
.target sm_80
.address_size 64
.visible .entry ok() { ret; }
.visible .entry bad() {
  wgmma.fence.sync.aligned;
  ret;
}`), { perFunction: true })
  const [ok, bad] = m.functions
  assert.equal([ok!.instructions.length, ok!.refused], [1, undefined])
  assert.equal([bad!.defined, bad!.instructions.length, bad!.refused?.line], [true, 0, 6])
  assert.match(bad!.refused!.message, /unsupported instruction wgmma\.fence\.sync\.aligned/)
})

rules.run()
