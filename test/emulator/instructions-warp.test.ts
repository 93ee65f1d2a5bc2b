import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '../../packages/emulator/src/index.js'
import { download, marshal, ptxBytes, upload, type Arg } from './helpers.js'

const head = '.version 8.0\n.target sm_80\n.address_size 64\n'

// Every suite runs twice: with the threads of kernels in loops between barriers and collectives (the
// default), and in the continuation scheme kernels fall back to (threadLoops: false).
for (const threadLoops of [true, false]) {
const be = createEmulatorBackend({ threadLoops })
const scheme = threadLoops ? 'thread loops' : 'continuation scheme'

function launch(ptx: string, grid: [number, number, number], block: [number, number, number], args: Arg[], sharedBytes = 0): void {
  const mod = be.loadModule(ptxBytes(head + ptx))
  be.launch(mod.getFunction('k'), { grid, block, sharedBytes }, marshal(args))
}

/** A kernel: out[tid] = <body result in %r9> for one block of n threads, input in[tid] in %r2. */
function perThread(body: string, input: Int32Array, n = input.length, extraDecl = ''): Int32Array {
  const din = upload(be, input), dout = be.alloc(n * 4)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b) {
    .reg .b64 %rd<8>; .reg .b32 %r<20>; .reg .pred %p<8>; ${extraDecl}
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
    ld.global.u32 %r2, [%rd4];
    ${body}
    st.global.u32 [%rd5], %r9;
    ret; }`, [1, 1, 1], [n, 1, 1], [{ u64: din }, { u64: dout }])
  return download(be, dout, new Int32Array(n))
}

/** PTX ISA shfl.sync semantics, written from the ISA's pseudo-code. */
function shflRef(mode: string, vals: Int32Array, b: number, c: number): Array<[number, boolean]> {
  return Array.from(vals, (_, t) => {
    const lane = t & 31, base = t - lane
    const segmask = (c >> 8) & 0x1f, maxLane = (lane & segmask) | (c & 0x1f & ~segmask), minLane = lane & segmask
    // bval[4:0] = b[4:0]: an offset of 33 is an offset of 1
    const bval = b & 0x1f
    let j = 0, pval = false
    if (mode === 'up') { j = lane - bval; pval = j >= maxLane }
    if (mode === 'down') { j = lane + bval; pval = j <= maxLane }
    if (mode === 'bfly') { j = lane ^ bval; pval = j <= maxLane }
    if (mode === 'idx') { j = minLane | (b & 0x1f & ~segmask); pval = j <= maxLane }
    return [pval ? vals[base + j]! : vals[t]!, pval]
  })
}

// ---

const shfl = suite(`${'shfl.sync'} (${scheme})`)
shfl('up / down / bfly / idx with widths and clamps', () => {
  const n = 64
  const vals = new Int32Array(n).map((_, i) => i * 7 + 1)
  for (const mode of ['up', 'down', 'bfly', 'idx']) {
    for (const [b, c] of [[1, mode === 'up' ? 0 : 0x1f], [5, mode === 'up' ? 0 : 0x1f], [3, mode === 'up' ? (32 - 8) << 8 : ((32 - 8) << 8) | 0x1f], [17, 0x1f], [0, 0x1f], [9, 0x05], [33, 0x1f], [2, 0x1e]] as const) {
      const got = perThread(`shfl.sync.${mode}.b32 %r9|%p1, %r2, ${b}, ${c}, -1;`, vals, n)
      const pred = perThread(`shfl.sync.${mode}.b32 %r10|%p1, %r2, ${b}, ${c}, -1; selp.u32 %r9, 1, 0, %p1;`, vals, n)
      const ref = shflRef(mode, vals, b, c)
      for (let t = 0; t < n; t++) {
        assert.is(got[t], ref[t]![0], `shfl.${mode} b=${b} c=${c} lane ${t}`)
        assert.is(pred[t], ref[t]![1] ? 1 : 0, `shfl.${mode} b=${b} c=${c} lane ${t} predicate`)
      }
    }
  }
})
shfl('register operands and the float reduction pattern nvcc emits', () => {
  const vals = new Int32Array(32).map((_, i) => i + 1)
  const got = perThread(`cvt.rn.f32.s32 %f1, %r2; mov.u32 %r3, 16; mov.u32 %r4, 31; mov.u32 %r5, -1;
  LOOP:
    mov.b32 %r6, %f1; shfl.sync.down.b32 %r7|%p1, %r6, %r3, %r4, %r5; mov.b32 %f2, %r7; add.f32 %f1, %f1, %f2;
    shr.u32 %r3, %r3, 1; setp.ne.u32 %p2, %r3, 0; @%p2 bra LOOP;
    cvt.rzi.s32.f32 %r9, %f1;`, vals, 32, '.reg .f32 %f<3>;')
  assert.is(got[0], (32 * 33) / 2)
})

const vote = suite(`${'vote.sync / match.sync / activemask / redux.sync'} (${scheme})`)
vote('ballot, all, any, uni over full and divergent warps', () => {
  const vals = new Int32Array(64).map((_, i) => (i * 37) % 11)
  const ballot = perThread('setp.gt.s32 %p1, %r2, 5; vote.sync.ballot.b32 %r9, %p1, -1;', vals)
  for (let t = 0; t < 64; t++) {
    let m = 0
    for (let l = 0; l < 32; l++) if (vals[(t & ~31) + l]! > 5) m |= 1 << l
    assert.is(ballot[t], m | 0)
  }
  const all = perThread('setp.lt.s32 %p1, %r2, 11; vote.sync.all.pred %p2, %p1, -1; selp.u32 %r9, 1, 0, %p2;', vals)
  assert.ok(all.every((x) => x === 1))
  const any = perThread('setp.eq.s32 %p1, %r2, 99; vote.sync.any.pred %p2, %p1, -1; selp.u32 %r9, 1, 0, %p2;', vals)
  assert.ok(any.every((x) => x === 0))
  const uni = perThread('setp.eq.s32 %p1, %r2, %r2; vote.sync.uni.pred %p2, %p1, -1; selp.u32 %r9, 1, 0, %p2;', vals)
  assert.ok(uni.every((x) => x === 1))
  // divergent: only even lanes vote; the ballot holds only their bits
  const div = perThread(`mov.u32 %r9, 0; and.b32 %r3, %r1, 1; setp.ne.u32 %p3, %r3, 0; @%p3 bra SKIP;
    setp.ge.s32 %p1, %r2, 0; vote.sync.ballot.b32 %r9, %p1, 0x55555555; activemask.b32 %r10; xor.b32 %r9, %r9, %r10;
  SKIP:`, vals)
  for (let t = 0; t < 64; t++) assert.is(div[t], t % 2 ? 0 : 0)
  const am = perThread(`and.b32 %r3, %r1, 3; setp.eq.u32 %p3, %r3, 0; @%p3 bra A; activemask.b32 %r9; bra.uni DONE; A: activemask.b32 %r9; DONE:`, vals)
  for (let t = 0; t < 64; t++) assert.is(am[t], t % 4 === 0 ? 0x11111111 : ~0x11111111)
})
vote('match.any / match.all and redux', () => {
  const vals = new Int32Array(32).map((_, i) => i % 3)
  const any = perThread('match.any.sync.b32 %r9, %r2, -1;', vals)
  for (let t = 0; t < 32; t++) {
    let m = 0
    for (let l = 0; l < 32; l++) if (vals[l] === vals[t]) m |= 1 << l
    assert.is(any[t], m | 0)
  }
  const all = perThread('match.all.sync.b32 %r9|%p1, %r2, -1;', vals)
  assert.ok(all.every((x) => x === 0))
  const same = perThread('match.all.sync.b32 %r9|%p1, 5, -1; @!%p1 mov.u32 %r9, 1;', vals)
  assert.ok(same.every((x) => x === -1))
  const v2 = new Int32Array(32).map((_, i) => (i * 2654435761) | 0)
  const ref: Record<string, (a: number[]) => number> = {
    add: (a) => a.reduce((x, y) => (x + y) | 0, 0), min: (a) => Math.min(...a), max: (a) => Math.max(...a),
    and: (a) => a.reduce((x, y) => x & y, -1), or: (a) => a.reduce((x, y) => x | y, 0), xor: (a) => a.reduce((x, y) => x ^ y, 0),
  }
  for (const [op, f] of Object.entries(ref)) {
    const t = op === 'min' || op === 'max' ? 's32' : op === 'add' ? 'u32' : 'b32'
    const got = perThread(`redux.sync.${op}.${t} %r9, %r2, -1;`, v2)
    assert.is(got[5], f(Array.from(v2)), `redux ${op}`)
  }
  const umin = perThread('redux.sync.min.u32 %r9, %r2, -1;', v2)
  assert.is(umin[0], Math.min(...Array.from(v2, (x) => x >>> 0)) | 0)
})

vote('divergent collectives in a grid-stride loop (binaryPartitionCG): a ballot, then redux.sync over the odd or even lanes', () => {
  // the continuation scheme once resolved the even lanes' next-trip ballot before the odd lanes reached it
  for (const n of [64, 48, 100]) {
    const input = new Int32Array(n).map((_, i) => (i * 7919) % 97)
    const din = upload(be, input), dout = be.alloc(32 * 4)
    launch(`.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 c) {
      .reg .b64 %rd<8>; .reg .b32 %r<20>; .reg .pred %p<8>;
      ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u32 %r11, [c];
      mov.u32 %r1, %tid.x; mov.u32 %r10, 0; mov.u32 %r3, %r1;
      setp.ge.u32 %p3, %r3, %r11; @%p3 bra DONE;
    LOOP:
      mul.wide.u32 %rd3, %r3, 4; add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r2, [%rd4];
      and.b32 %r4, %r2, 1; setp.ne.u32 %p1, %r4, 0;
      activemask.b32 %r8;
      vote.sync.ballot.b32 %r5, %p1, %r8;
      @!%p1 bra EVEN;
      redux.sync.add.u32 %r6, %r2, %r5;
      bra.uni NEXT;
    EVEN:
      not.b32 %r7, %r5; and.b32 %r7, %r7, %r8;
      redux.sync.add.u32 %r6, %r2, %r7;
    NEXT:
      add.s32 %r10, %r10, %r6;
      add.s32 %r3, %r3, 32;
      setp.lt.u32 %p2, %r3, %r11;
      @%p2 bra LOOP;
    DONE:
      mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd2, %rd5; st.global.u32 [%rd6], %r10;
      ret; }`, [1, 1, 1], [32, 1, 1], [{ u64: din }, { u64: dout }, { u32: n }])
    const got = download(be, dout, new Int32Array(32))
    const want = new Int32Array(32)
    for (let k = 0; k * 32 < n; k++) {
      const lanes = Array.from({ length: 32 }, (_, l) => l).filter((l) => l + 32 * k < n)
      const v = (l: number) => input[l + 32 * k]!
      const odd = lanes.filter((l) => v(l) & 1).reduce((x, l) => x + v(l), 0)
      const even = lanes.filter((l) => !(v(l) & 1)).reduce((x, l) => x + v(l), 0)
      for (const l of lanes) want[l] = want[l]! + (v(l) & 1 ? odd : even)
    }
    assert.equal(Array.from(got), Array.from(want), `n=${n}`)
  }
})
vote('elect.sync picks the lowest lane of the member mask', () => {
  const vals = new Int32Array(64)
  const got = perThread('elect.sync %r10|%p1, 0xfffffff0; selp.u32 %r11, 1, 0, %p1; shl.b32 %r9, %r10, 8; or.b32 %r9, %r9, %r11;', vals)
  for (let t = 0; t < 64; t++) assert.is(got[t], (4 << 8) | ((t & 31) === 4 ? 1 : 0))
})
vote('bar.warp.sync (__syncwarp) orders shared-memory exchange between the lanes of a warp', () => {
  const vals = new Int32Array(64).map((_, i) => i * 3)
  const got = perThread(`.shared .align 4 .b32 s[64];
    mov.u32 %r3, s; shl.b32 %r4, %r1, 2; add.s32 %r5, %r3, %r4; st.shared.u32 [%r5], %r2;
    bar.warp.sync -1;
    and.b32 %r6, %r1, 32; add.s32 %r7, %r1, 1; and.b32 %r7, %r7, 31; or.b32 %r7, %r7, %r6; shl.b32 %r7, %r7, 2; add.s32 %r8, %r3, %r7;
    ld.shared.u32 %r9, [%r8];`, vals)
  for (let t = 0; t < 64; t++) assert.is(got[t], ((t & 32) | ((t + 1) & 31)) * 3)
})

vote('special registers: lane masks, warp ids, grid sizes, dynamic shared size; exit', () => {
  const vals = new Int32Array(70)
  const eq = perThread('mov.u32 %r9, %lanemask_eq;', vals)
  const lt = perThread('mov.u32 %r9, %lanemask_lt;', vals)
  const le = perThread('mov.u32 %r9, %lanemask_le;', vals)
  const gt = perThread('mov.u32 %r9, %lanemask_gt;', vals)
  const ge = perThread('mov.u32 %r9, %lanemask_ge;', vals)
  for (let t = 0; t < 70; t++) {
    const l = t % 32
    let m = 0
    for (let i = 0; i < 32; i++) if (i < l) m |= 1 << i
    assert.is(eq[t], (1 << l) | 0)
    assert.is(lt[t], m | 0)
    assert.is(le[t], (m | (1 << l)) | 0)
    assert.is(gt[t], ~(m | (1 << l)))
    assert.is(ge[t], ~m)
  }
  const w = perThread('mov.u32 %r3, %warpid; mov.u32 %r4, %nwarpid; mov.u32 %r5, %nctaid.y; mad.lo.s32 %r9, %r3, 100, %r4; mad.lo.s32 %r9, %r5, 10000, %r9;', vals)
  for (let t = 0; t < 70; t++) assert.is(w[t], 10000 + (t >> 5) * 100 + 3)
  const ex = perThread('mov.u32 %r9, 5; st.global.u32 [%rd5], %r9; setp.lt.u32 %p1, %r1, 10; @%p1 exit; mov.u32 %r9, 6;', vals)
  for (let t = 0; t < 70; t++) assert.is(ex[t], t < 10 ? 5 : 6)
  const din = upload(be, vals), dout = be.alloc(4)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b) { .reg .b64 %rd<2>; .reg .b32 %r<2>;
    ld.param.u64 %rd1, [b]; mov.u32 %r1, %dynamic_smem_size; st.global.u32 [%rd1], %r1; ret; }`, [1, 1, 1], [1, 1, 1], [{ u64: din }, { u64: dout }], 1234)
  assert.is(download(be, dout, new Int32Array(1))[0], 1234)
})

const barrier = suite(`${'bar.sync / barrier.sync / bar.red'} (${scheme})`)
barrier('threads of all warps meet; loops with barriers; 3-D blocks and grids', () => {
  // block 8x4x2 = 64 threads; every thread writes shared[tid], then reads its mirror after a barrier, twice
  const dout = be.alloc(4 * 64 * 6)
  launch(`.visible .entry k(.param .u64 b) {
    .shared .align 4 .b32 s[64];
    .reg .b64 %rd<4>; .reg .b32 %r<24>; .reg .pred %p1;
    ld.param.u64 %rd1, [b];
    mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %tid.z; mov.u32 %r4, %ntid.x; mov.u32 %r5, %ntid.y;
    mad.lo.s32 %r6, %r3, %r5, %r2; mad.lo.s32 %r7, %r6, %r4, %r1;
    mov.u32 %r8, %ctaid.x; mov.u32 %r9, %ctaid.y; mov.u32 %r10, %nctaid.x; mad.lo.s32 %r11, %r9, %r10, %r8;
    mov.u32 %r12, s; shl.b32 %r13, %r7, 2; add.s32 %r14, %r12, %r13; sub.s32 %r15, 63, %r7; shl.b32 %r16, %r15, 2; add.s32 %r17, %r12, %r16;
    mov.u32 %r18, %r7; mov.u32 %r19, 0;
  L:
    st.shared.u32 [%r14], %r18;
    barrier.sync 0;
    ld.shared.u32 %r18, [%r17];
    bar.sync 0;
    add.s32 %r19, %r19, 1; setp.lt.u32 %p1, %r19, 3; @%p1 bra L;
    mad.lo.s32 %r20, %r11, 64, %r7; mul.wide.u32 %rd2, %r20, 4; add.s64 %rd3, %rd1, %rd2;
    mov.u32 %r21, %laneid; mov.u32 %r22, %warpid; shl.b32 %r22, %r22, 16; or.b32 %r21, %r21, %r22; shl.b32 %r18, %r18, 24; or.b32 %r18, %r18, %r21;
    st.global.u32 [%rd3], %r18;
    ret; }`, [3, 2, 1], [8, 4, 2], [{ u64: dout }])
  const out = download(be, dout, new Uint32Array(64 * 6))
  for (let blk = 0; blk < 6; blk++) {
    for (let t = 0; t < 64; t++) {
      const v = out[blk * 64 + t]!
      assert.is(v >>> 24, 63 - t, `block ${blk} thread ${t}: value after three mirror exchanges`)
      assert.is(v & 0xffff, t % 32)
      assert.is((v >>> 16) & 0xff, t >> 5)
    }
  }
})
barrier('barriers and shuffles in nested loops with early exits, guarded collectives, irreducible jumps', () => {
  const vals = new Int32Array(64).map((_, i) => i)
  // nested loops: outer i < 3, inner j < tid%4 with an early break when j == 2; a barrier and a guarded shfl inside
  const nested = perThread(`mov.u32 %r9, 0; mov.u32 %r3, 0; and.b32 %r8, %r1, 3;
  OUTER:
    mov.u32 %r4, 0;
  INNER:
    setp.ge.u32 %p1, %r4, %r8; @%p1 bra INNER_END;
    setp.eq.u32 %p2, %r4, 2; @%p2 bra INNER_END;
    add.s32 %r9, %r9, 1; add.s32 %r4, %r4, 1; bra.uni INNER;
  INNER_END:
    bar.sync 0;
    setp.lt.u32 %p3, %r1, 32;
    @%p3 shfl.sync.idx.b32 %r5, %r9, 0, 31, -1;
    @%p3 add.s32 %r9, %r9, %r5;
    add.s32 %r3, %r3, 1; setp.lt.u32 %p4, %r3, 3; @%p4 bra OUTER;`, vals)
  for (let t = 0; t < 64; t++) {
    let acc = 0
    const lane0 = t < 32 ? 0 : 32
    let acc0 = 0
    for (let i = 0; i < 3; i++) {
      const inc = (x: number) => Math.min(x & 3, 2)
      acc += inc(t); acc0 += inc(lane0)
      if (t < 32) { const shared = acc0; acc += shared; acc0 += shared }
    }
    assert.is(nested[t], acc, `thread ${t}`)
  }
  // a jump into the middle of a loop (irreducible: runs on the pc dispatcher) with a barrier in the loop
  const irr = perThread(`mov.u32 %r9, 100; mov.u32 %r3, 0; bra.uni MID;
  TOP:
    add.s32 %r9, %r9, 1;
  MID:
    bar.sync 0;
    add.s32 %r3, %r3, 1; setp.lt.u32 %p1, %r3, 4; @%p1 bra TOP;`, vals)
  assert.ok(irr.every((x) => x === 103))
})
barrier('bar.red.popc / .and / .or', () => {
  const vals = new Int32Array(96).map((_, i) => (i % 5 === 0 ? 1 : 0))
  const popc = perThread('setp.ne.s32 %p1, %r2, 0; bar.red.popc.u32 %r9, 0, %p1;', vals)
  assert.ok(popc.every((x) => x === vals.filter((v) => v).length))
  const and = perThread('setp.ne.s32 %p1, %r2, 0; bar.red.and.pred %p2, 0, %p1; selp.u32 %r9, 1, 0, %p2;', vals)
  assert.ok(and.every((x) => x === 0))
  const or = perThread('setp.ne.s32 %p1, %r2, 0; bar.red.or.pred %p2, 0, %p1; selp.u32 %r9, 1, 0, %p2;', vals)
  assert.ok(or.every((x) => x === 1))
})
barrier('threads that exit early do not block a barrier', () => {
  const vals = new Int32Array(64).map((_, i) => i)
  const got = perThread(`mov.u32 %r9, 1; setp.ge.u32 %p1, %r1, 40; @%p1 bra OUT; bar.sync 0; mov.u32 %r9, 2; OUT:`, vals)
  for (let t = 0; t < 64; t++) assert.is(got[t], t >= 40 ? 1 : 2)
})

const calls = suite(`${'call'} (${scheme})`)
calls('device functions with params and return values, recursion', () => {
  const mod = be.loadModule(ptxBytes(`${head}
  .func (.param .b32 ret) fact(.param .b32 n)
  {
    .reg .b32 %r<6>; .reg .pred %p1;
    ld.param.u32 %r1, [n];
    setp.lt.u32 %p1, %r1, 2;
    @%p1 bra BASE;
    sub.s32 %r2, %r1, 1;
    { .param .b32 param0; .param .b32 retval0;
      st.param.b32 [param0], %r2;
      call.uni (retval0), fact, (param0);
      ld.param.b32 %r3, [retval0]; }
    mul.lo.s32 %r4, %r3, %r1;
    st.param.b32 [ret], %r4;
    ret;
  BASE:
    st.param.b32 [ret], 1;
    ret;
  }
  .func (.param .align 8 .b8 out[16]) pair(.param .b64 a, .param .align 4 .b8 s[8])
  {
    .reg .b64 %rd<3>; .reg .b32 %r<3>;
    .local .align 8 .b8 depot[8];
    ld.param.u64 %rd1, [a]; ld.param.u32 %r1, [s]; ld.param.u32 %r2, [s+4];
    st.local.u32 [depot], %r1; ld.local.u32 %r1, [depot];
    add.s32 %r1, %r1, %r2; cvt.u64.u32 %rd2, %r1; add.s64 %rd2, %rd2, %rd1;
    st.param.b64 [out], %rd2; st.param.b64 [out+8], %rd1;
    ret;
  }
  .visible .entry k(.param .u64 b)
  {
    .reg .b64 %rd<6>; .reg .b32 %r<6>;
    ld.param.u64 %rd1, [b];
    mov.u32 %r1, %tid.x;
    { .param .b32 param0; .param .b32 retval0;
      st.param.b32 [param0], %r1;
      call.uni (retval0), fact, (param0);
      ld.param.b32 %r2, [retval0]; }
    mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    { .param .b64 param0; .param .align 4 .b8 param1[8]; .param .align 8 .b8 retval0[16];
      st.param.b64 [param0], 0x100000000;
      st.param.b32 [param1], %r1; st.param.b32 [param1+4], 1000;
      call.uni (retval0), pair, (param0, param1);
      ld.param.b64 %rd4, [retval0]; ld.param.b64 %rd5, [retval0+8]; }
    st.global.u64 [%rd3+8], %rd4;
    sub.s64 %rd4, %rd4, %rd5; cvt.u32.u64 %r3, %rd4; st.global.u32 [%rd3+4], %r3;
    ret;
  }`))
  const n = 13
  const dout = be.alloc(16 * n)
  be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [n, 1, 1], sharedBytes: 0 }, marshal([{ u64: dout }]))
  const o = new DataView(download(be, dout, new Uint8Array(16 * n)).buffer)
  let f = 1
  for (let t = 0; t < n; t++) {
    if (t > 1) f = Math.imul(f, t)
    assert.is(o.getInt32(16 * t, true), t < 2 ? 1 : f, `fact(${t})`)
    assert.is(o.getUint32(16 * t + 4, true), t + 1000)
    assert.is(o.getBigUint64(16 * t + 8, true), 0x100000000n + BigInt(t + 1000))
  }
})
calls('functions with barriers and shuffles are inlined, also under a guard and nested', () => {
  const mod = be.loadModule(ptxBytes(`${head}
  .func (.param .b32 ret) wsum(.param .b32 x)
  {
    .reg .b32 %r<4>; .reg .pred %p1;
    ld.param.u32 %r1, [x];
    mov.u32 %r2, 16;
  L:
    shfl.sync.bfly.b32 %r3, %r1, %r2, 31, -1; add.s32 %r1, %r1, %r3;
    shr.u32 %r2, %r2, 1; setp.ne.u32 %p1, %r2, 0; @%p1 bra L;
    st.param.b32 [ret], %r1;
    ret;
  }
  .func (.param .b32 ret) bsum(.param .b32 x)
  {
    .shared .align 4 .b32 part[2];
    .reg .b32 %r<8>; .reg .pred %p<2>;
    ld.param.u32 %r1, [x];
    { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0], %r1; call.uni (retval0), wsum, (param0); ld.param.b32 %r2, [retval0]; }
    mov.u32 %r3, %laneid; setp.ne.u32 %p1, %r3, 0; mov.u32 %r4, %warpid; shl.b32 %r5, %r4, 2; mov.u32 %r6, part; add.s32 %r6, %r6, %r5;
    @!%p1 st.shared.u32 [%r6], %r2;
    bar.sync 0;
    mov.u32 %r6, part; ld.shared.u32 %r7, [%r6]; ld.shared.u32 %r2, [%r6+4]; add.s32 %r7, %r7, %r2;
    st.param.b32 [ret], %r7;
    ret;
  }
  .visible .entry k(.param .u64 b)
  {
    .reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p1;
    ld.param.u64 %rd1, [b]; mov.u32 %r1, %tid.x; mov.u32 %r2, -1;
    setp.lt.u32 %p1, %r1, 64;
    { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0], %r1;
      @%p1 call.uni (retval0), bsum, (param0);
      @%p1 ld.param.b32 %r2, [retval0]; }
    mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r2;
    ret;
  }`))
  const dout = be.alloc(64 * 4)
  be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: dout }]))
  const out = download(be, dout, new Int32Array(64))
  for (let t = 0; t < 64; t++) assert.is(out[t], (63 * 64) / 2)
})
calls('unbounded recursion faults instead of hanging', () => {
  const mod = be.loadModule(ptxBytes(`${head}
  .func (.param .b32 ret) down(.param .b32 n)
  {
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [n]; add.s32 %r1, %r1, 1;
    { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0], %r1; call.uni (retval0), down, (param0); ld.param.b32 %r2, [retval0]; }
    st.param.b32 [ret], %r2; ret;
  }
  .visible .entry k() { .reg .b32 %r1; { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0], 0; call.uni (retval0), down, (param0); ld.param.b32 %r1, [retval0]; } ret; }`))
  assert.throws(() => be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0 }, marshal([])), /call stack overflow/)
})

shfl.run()
vote.run()
barrier.run()
calls.run()
}
