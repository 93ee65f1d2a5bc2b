// analysis/affine.ts: addresses of the form inv + c·tid.x, with wrap checks for 32-bit arithmetic, the
// straight-line prefix, and a loop-carried (grid-stride) address.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeAffine, assignRegisterClasses, type InvExpr } from '@kernelpack/ptx'
import { at, kernel, reg } from '../helpers.js'

/** An InvExpr as text: params by name, specials by name, + and ·. */
function show(e: InvExpr): string {
  switch (e.kind) {
    case 'const': return String(e.value)
    case 'param': return `${e.name}:${e.type}`
    case 'special': return e.name
    case 'symbol': return `&${e.name}`
    case 'add': return `(${show(e.a)} + ${show(e.b)})`
    case 'mul': return `${show(e.a)}·${show(e.b)}`
  }
}

const vecAdd = `  ld.param.u64 %rd1, [k_a];
  ld.param.u32 %r1, [k_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra $end;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.s32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4+8];
$end:
  ret;`

const af = suite('analyzeAffine')

af('nvcc\'s global index: base + 4·ctaid·ntid + 4·tid.x, with the 32-bit index\'s wrap check', () => {
  const { fn, cfg } = kernel(vecAdd)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn), { wideParams: true })
  const idx = facts.register.get(reg(fn, '%r5'))!
  assert.equal([show(idx.inv), idx.c], ['(%ctaid.x·%ntid.x + 0)', 1])
  assert.equal(idx.conds.map((w) => [show(w.inv), w.c, w.lo]), [['(%ctaid.x·%ntid.x + 0)', 1, -2147483648]])
  const addr = facts.address(at(fn, 'ld.global.f32'))!
  assert.equal([show(addr.inv), addr.c], ['((k_a:u64 + (%ctaid.x·%ntid.x + 0)·4) + 8)', 4])
  // the straight-line prefix ends after the guarded branch? No: only an unguarded one ends it; the label does
  assert.is(facts.prefixEnd, at(fn, 'ret'))
})

af('64-bit parameters take part only when exact (wideParams); guarded and twice-written registers have no form', () => {
  const { fn, cfg } = kernel(`${vecAdd.replace('  ret;', '')}
  mov.u32 %r6, %tid.x;
  @%p1 mov.u32 %r7, %tid.x;
  mov.u32 %r8, %tid.x;
  add.s32 %r8, %r8, %r8;
  ret;`)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn))
  assert.is(facts.address(at(fn, 'ld.global.f32')), undefined)
  assert.ok(facts.register.has(reg(fn, '%r5')))
  assert.ok(facts.register.has(reg(fn, '%r6')))
  assert.not.ok(facts.register.has(reg(fn, '%r7')))
  assert.not.ok(facts.register.has(reg(fn, '%r8')))
})

af('a loop-carried address: a grid-stride loop reads base + 4·(ctaid·ntid + tid.x) + k·4·(ntid·nctaid)', () => {
  const { fn, cfg } = kernel(`  ld.param.u64 %rd1, [k_a];
  ld.param.u32 %r1, [k_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  mov.u32 %r6, %nctaid.x;
  mul.lo.s32 %r7, %r3, %r6;
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r10, %r5;
$loop:
  mul.wide.s32 %rd3, %r10, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.s32 %r10, %r10, %r7;
  mul.wide.s32 %rd5, %r10, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.f32 [%rd6], %f1;
  setp.lt.s32 %p1, %r10, %r1;
  @%p1 bra $loop;
  ret;`)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn), { wideParams: true })
  const iv = facts.inductions.get(reg(fn, '%r10'))!
  assert.equal([show(iv.inv), iv.c, show(iv.iv!.step), iv.iv!.loop], ['(%ctaid.x·%ntid.x + 0)', 1, '%ntid.x·%nctaid.x', 0])
  const ld = facts.address(at(fn, 'ld.global.f32'))!
  assert.equal([show(ld.inv), ld.c, show(ld.iv!.step), ld.iv!.next], ['(k_a:u64 + (%ctaid.x·%ntid.x + 0)·4)', 4, '%ntid.x·%nctaid.x·4', false])
  // the store comes after the increment: iteration k writes element k+1 of the stride
  const st = facts.address(at(fn, 'st.global.f32'))!
  assert.equal([st.c, st.iv!.next], [4, true])
  // nothing in a loop is in the straight-line prefix
  assert.is(facts.prefixEnd, at(fn, 'mul.wide.s32'))
})

af('a shared array index: &tile + (tid.x + n)·4 through shl; forms hold only where their definition dominates', () => {
  const { fn, cfg } = kernel(`  ld.param.u32 %r1, [k_n];
  mov.u32 %r2, %tid.x;
  add.s32 %r3, %r2, %r1;
  shl.b32 %r4, %r3, 2;
  mov.u32 %r5, tile;
  add.s32 %r6, %r5, %r4;
  st.shared.f32 [%r6], %f1;
  setp.eq.s32 %p1, %r2, 0;
  @%p1 bra $skip;
  shl.b32 %r7, %r2, 3;
  shl.b32 %r8, %r2, 17;
$skip:
  add.s32 %r9, %r7, 4;
  ld.shared.f32 %f2, [%r6+4];
  ret;`)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn))
  const st = facts.address(at(fn, 'st.shared.f32'))!
  assert.equal([show(st.inv), st.c], ['(&tile + (0 + k_n:u32)·4)', 4])
  // each 32-bit step carries its wrap check (the add, the shift, the sum with the array's address)
  assert.is(st.conds.length, 3)
  // after the label, %r6 (defined before the branch) still has its form; %r7 (defined on one path only)
  // has none there, though it has one where it is defined; a shift beyond 16 bits is no literal factor
  assert.equal(facts.address(at(fn, 'ld.shared.f32'))!.c, 4)
  assert.is(facts.formAt(reg(fn, '%r6'), at(fn, 'ld.shared.f32'))!.c, 4)
  assert.is(facts.formAt(reg(fn, '%r7'), at(fn, 'shl.b32 %r8'))!.c, 8)
  assert.is(facts.formAt(reg(fn, '%r7'), at(fn, 'add.s32 %r9')), undefined)
  assert.not.ok(facts.register.has(reg(fn, '%r9')))
  assert.not.ok(facts.register.has(reg(fn, '%r8')))
})

// nvcc's tiled matmul: tid.y and tid.x are both stepped by the tile loop (induction variables), and the tile
// rows' bases are computed from their initial values before the loop
const tiles = `  mov.u32 %r21, %tid.y;
  mov.u32 %r20, %tid.x;
  ld.param.u32 %r12, [k_n];
  setp.lt.s32 %p1, %r12, 1;
  @%p1 bra $end;
  shl.b32 %r17, %r21, 6;
  mov.u32 %r18, tile;
  add.s32 %r8, %r18, %r17;
  shl.b32 %r19, %r20, 2;
  add.s32 %r6, %r8, %r19;
$loop:
  ld.shared.f32 %f1, [%r6];
  add.s32 %r21, %r21, 16;
  add.s32 %r20, %r20, 16;
  setp.lt.s32 %p2, %r20, %r12;
  @%p2 bra $loop;
  shl.b32 %r23, %r20, 2;
$end:
  ret;`

af('an induction variable read before its loop has its initial value\'s form; after the loop, none', () => {
  const { fn, cfg } = kernel(tiles)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn))
  // 4·tid.x: %r20's first value, read on the way into the loop
  const f = facts.register.get(reg(fn, '%r19'))!
  assert.equal([show(f.inv), f.c, f.iv], ['0·4', 4, undefined])
  // read after the loop (the increment reaches it), %r20 has no form, so neither has %r23
  assert.not.ok(facts.register.has(reg(fn, '%r23')))
  // %r8 = &tile + 64·tid.y has no tid.x form: tid.y is a thread index
  assert.not.ok(facts.register.has(reg(fn, '%r8')))
})

af('rowInvariant: tid.y and tid.z are invariant terms, for strides along a row (tile[ty][k] is the same in a row)', () => {
  const { fn, cfg } = kernel(tiles)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn), { rowInvariant: true })
  const f = facts.register.get(reg(fn, '%r8'))!
  assert.equal([show(f.inv), f.c], ['(&tile + %tid.y·64)', 0])
  assert.is(facts.register.get(reg(fn, '%r6'))!.c, 4)
  // without the option, the same register has none
  assert.not.ok(analyzeAffine(fn, cfg, assignRegisterClasses(fn)).register.has(reg(fn, '%r8')))
})

// nvcc's tile loop: a counter from 0 stepped by 1 and compared after its increment with (K + 15) / 16 in
// shifts; an address stepped by 64 each trip, and a 32-bit index stepped by 16·N whose widening must not wrap
const tileLoop = `  ld.param.u32 %r12, [k_n];
  mov.u32 %r20, %tid.x;
  add.s32 %r14, %r12, 15;
  shr.s32 %r15, %r14, 31;
  shr.u32 %r16, %r15, 28;
  add.s32 %r17, %r14, %r16;
  shr.s32 %r11, %r17, 4;
  mov.u32 %r13, 0;
  mov.u32 %r21, %r20;
$loop:
  mul.wide.s32 %rd3, %r21, 4;
  ld.global.f32 %f1, [%rd3];
  shl.b32 %r18, %r12, 4;
  add.s32 %r21, %r21, %r18;
  add.s32 %r13, %r13, 1;
  setp.lt.s32 %p1, %r13, %r11;
  @%p1 bra $loop;
  ret;`

af('a loop\'s trip bound: the counter compared after its increment with a value computed from parameters', () => {
  const { fn, cfg } = kernel(tileLoop)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn))
  assert.equal([...facts.trips.keys()], [0])
  const t = facts.trips.get(0)!
  assert.equal([show(t.init.inv), t.init.c, show(t.step)], ['0', 0, '1'])
  // the bound as the kernel computes it: ((n + 15) + ((n + 15) >> 31 >>> 28)) >> 4
  const ev = (e: typeof t.bound, n: number): number => {
    switch (e.kind) {
      case 'const': return e.value
      case 'param': return n
      case 'special': throw new Error('no special here')
      default: {
        const a = ev(e.a, n), b = ev(e.b, n)
        return { add: (a + b) | 0, sub: (a - b) | 0, mul: Math.imul(a, b), shl: a << b, shr_s: a >> b, shr_u: (a >>> b) | 0, and: a & b, or: a | b, xor: a ^ b }[e.op]
      }
    }
  }
  assert.equal([0, 1, 16, 17, 192, -5].map((n) => ev(t.bound, n)), [0, 1, 1, 2, 12, 0])
  // the load's address carries the index's iteration term, and a check that the 32-bit index does not wrap in
  // any trip (its widening by sign)
  const ld = facts.address(at(fn, 'ld.global.f32'))!
  assert.equal([show(ld.inv), ld.c, show(ld.iv!.step)], ['0·4', 4, 'k_n:u32·16·4'])
  assert.ok(ld.conds.some((w) => w.iv && w.lo === -2147483648 && w.c === 1), JSON.stringify(ld.conds.map((w) => [show(w.inv), w.c, w.lo, !!w.iv])))
})

af('no trip bound where the loop has a second back edge, a negated guard or an unsigned compare', () => {
  for (const body of [
    tileLoop.replace('setp.lt.s32 %p1, %r13, %r11;\n  @%p1 bra $loop;', 'setp.ge.s32 %p1, %r13, %r11;\n  @!%p1 bra $loop;'),
    tileLoop.replace('setp.lt.s32 %p1', 'setp.lt.u32 %p1'),
    tileLoop.replace('  mul.wide.s32 %rd3', '  setp.eq.s32 %p2, %r21, 7;\n  @%p2 bra $loop;\n  mul.wide.s32 %rd3'),
  ]) {
    const { fn, cfg } = kernel(body)
    assert.is(analyzeAffine(fn, cfg, assignRegisterClasses(fn)).trips.size, 0, body)
  }
})

// a row of a matrix per block (layernorm's shape, as nvcc writes it): the row's base `ctaid.x · cols` as a
// 64-bit product of two block-invariant values, then block-stride loops over its columns; the first loop's
// counter starts from the register the last loop steps (nvcc keeps threadIdx.x in the last loop's counter),
// whose step is defined after the first loop
const rowLoops = `  ld.param.u64 %rd9, [k_a];
  ld.param.u32 %r14, [k_n];
  cvta.to.global.u64 %rd1, %rd9;
  mov.u32 %r15, %ctaid.x;
  cvt.u64.u32 %rd10, %r15;
  cvt.s64.s32 %rd11, %r14;
  mul.lo.s64 %rd2, %rd11, %rd10;
  mov.u32 %r21, %tid.x;
  setp.ge.s32 %p1, %r21, %r14;
  @%p1 bra $first_done;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r22, %r21;
$first:
  cvt.s64.s32 %rd12, %r22;
  add.s64 %rd13, %rd2, %rd12;
  shl.b64 %rd14, %rd13, 2;
  add.s64 %rd15, %rd1, %rd14;
  ld.global.f32 %f2, [%rd15];
  add.s32 %r22, %r22, %r2;
  setp.lt.s32 %p2, %r22, %r14;
  @%p2 bra $first;
$first_done:
  bar.sync 0;
  mov.u32 %r7, %ntid.x;
  @%p1 bra $end;
$last:
  cvt.s64.s32 %rd20, %r21;
  add.s64 %rd21, %rd2, %rd20;
  shl.b64 %rd22, %rd21, 2;
  add.s64 %rd23, %rd1, %rd22;
  st.global.f32 [%rd23], %f2;
  add.s32 %r21, %r21, %r7;
  setp.lt.s32 %p3, %r21, %r14;
  @%p3 bra $last;
$end:
  ret;`

af('exact64: a 64-bit product of two block-invariant values (a row\'s base) takes part, evaluated modulo 2^64', () => {
  const { fn, cfg } = kernel(rowLoops)
  const cls = assignRegisterClasses(fn)
  // in doubles such a product may pass 2^53: no form without exact64
  assert.is(analyzeAffine(fn, cfg, cls, { wideParams: true }).address(at(fn, 'st.global.f32')), undefined)
  const facts = analyzeAffine(fn, cfg, cls, { wideParams: true, exact64: true })
  for (const op of ['ld.global.f32', 'st.global.f32']) {
    const f = facts.address(at(fn, op))!
    assert.equal([show(f.inv), f.c, show(f.iv!.step)], ['(k_a:u64 + ((k_n:u32·%ctaid.x + 0))·4)'.replace('((k_n', '(k_n').replace('0))·4', '0)·4'), 4, '%ntid.x·4'], op)
    // the zero-extended ctaid.x is checked not negative, the counter's widening in every trip
    assert.ok(f.conds.some((w) => w.lo === 0 && show(w.inv) === '%ctaid.x'))
    assert.ok(f.conds.some((w) => w.iv && w.lo === -2147483648 && w.c === 1))
  }
})

af('a loop whose counter starts from another loop\'s counter, stepped by a value defined after it, has a trip bound', () => {
  const { fn, cfg } = kernel(rowLoops)
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn), { wideParams: true, exact64: true })
  // both loops: from tid.x, by ntid.x, while below k_n
  assert.equal(facts.trips.size, 2)
  for (const t of facts.trips.values()) assert.equal([show(t.init.inv), t.init.c, show(t.step), t.bound.kind === 'param' && t.bound.name], ['0', 1, '%ntid.x', 'k_n'])
  assert.ok(facts.address(at(fn, 'ld.global.f32'))?.iv)
})

af('no trip bound for a loop re-entered from an enclosing loop without its counter set again', () => {
  // the inner loop's counter is set once, before the outer loop: its second run goes on from where the first stopped
  const body = `  ld.param.u32 %r14, [k_n];
  mov.u32 %r21, %tid.x;
  mov.u32 %r7, %ntid.x;
  mov.u32 %r1, 0;
$outer:
  add.s32 %r3, %r1, 1;
$inner:
  mul.wide.s32 %rd3, %r21, 4;
  ld.global.f32 %f1, [%rd3];
  add.s32 %r21, %r21, %r7;
  setp.lt.s32 %p1, %r21, %r14;
  @%p1 bra $inner;
  add.s32 %r1, %r1, 1;
  setp.lt.s32 %p2, %r1, 4;
  @%p2 bra $outer;
  ret;`
  const { fn, cfg } = kernel(body)
  const trips = analyzeAffine(fn, cfg, assignRegisterClasses(fn)).trips
  // the outer loop has its bound (its counter set before it, once); the inner one none
  assert.equal([...trips.values()].map((t) => t.bound), [{ kind: 'const', value: 4 }])
  // set again inside the outer loop, the inner counter starts afresh each time: a bound
  const { fn: fn2, cfg: cfg2 } = kernel(body.replace('$outer:\n', '$outer:\n  mov.u32 %r21, %tid.x;\n').replace('  mov.u32 %r21, %tid.x;\n  mov.u32 %r7', '  mov.u32 %r7'))
  assert.is(analyzeAffine(fn2, cfg2, assignRegisterClasses(fn2)).trips.size, 2)
})

// nvcc reuses a register for blockDim.x and for a halving loop's counter (`for (half = blockDim.x / 2; …)`):
// before the loop only the first definition can reach a read of it
const reused = (first: string) => `  ld.param.u64 %rd1, [k_a];
  mov.u32 %r20, %ntid.x;
${first}
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r15, %r2, %r3;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
$loop:
  shr.u32 %r12, %r20, 1;
  add.s32 %r13, %r12, %r3;
  mov.u32 %r20, %r12;
  setp.gt.u32 %p1, %r20, 32;
  @%p1 bra $loop;
  ret;`

af('a register written twice: read where one definition dominates and the other cannot reach, that one\'s form', () => {
  const { fn, cfg } = kernel(reused('  shl.b32 %r15, %r20, 1;'))
  const facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn), { wideParams: true })
  // blockDim.x · 2 read before the loop: the index and the load's address are affine
  assert.not.ok(facts.register.has(reg(fn, '%r20')))
  const r15 = facts.formAt(reg(fn, '%r15'), at(fn, 'mad.lo.s32'))!
  assert.equal([show(r15.inv), r15.c], ['%ntid.x·2', 0])
  const addr = facts.address(at(fn, 'ld.global.f32'))!
  assert.equal([show(addr.inv), addr.c], ['(k_a:u64 + (%ntid.x·2·%ctaid.x + 0)·4)', 4])
  // in the loop both definitions reach its reads: no form there
  assert.is(facts.formAt(reg(fn, '%r20'), at(fn, 'shr.u32')), undefined)
  assert.is(facts.formAt(reg(fn, '%r12'), at(fn, 'add.s32')), undefined)
})

af('a register written twice: a read the second definition can reach (in the same block, or around a loop) has no form', () => {
  // the second definition before the read, in the same block
  let { fn, cfg } = kernel(reused('  mov.u32 %r20, %tid.x;\n  shl.b32 %r15, %r20, 1;'))
  let facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn), { wideParams: true })
  assert.is(facts.formAt(reg(fn, '%r20'), at(fn, 'shl.b32')), undefined)
  assert.is(facts.address(at(fn, 'ld.global.f32')), undefined)
  // the read inside the loop that redefines the register
  ;({ fn, cfg } = kernel(`  mov.u32 %r20, %ntid.x;
$top:
  shl.b32 %r15, %r20, 1;
  shr.u32 %r12, %r20, 1;
  mov.u32 %r20, %r12;
  setp.gt.u32 %p1, %r20, 32;
  @%p1 bra $top;
  ret;`))
  facts = analyzeAffine(fn, cfg, assignRegisterClasses(fn))
  assert.is(facts.formAt(reg(fn, '%r20'), at(fn, 'shl.b32')), undefined)
  assert.not.ok(facts.register.has(reg(fn, '%r15')))
})

af.run()
