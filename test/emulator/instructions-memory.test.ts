import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, EmulatorFault } from '../../packages/emulator/src/index.js'
import { download, marshal, ptxBytes, upload, type Arg } from './helpers.js'

const head = '.version 8.0\n.target sm_80\n.address_size 64\n'
const be = createEmulatorBackend()

function launch(ptx: string, kernel: string, grid: number, block: number, args: Arg[], sharedBytes = 0): void {
  const mod = be.loadModule(ptxBytes(head + ptx))
  be.launch(mod.getFunction(kernel), { grid: [grid, 1, 1], block: [block, 1, 1], sharedBytes }, marshal(args))
}

function fault(fn: () => void): EmulatorFault {
  try { fn() } catch (e) { assert.instance(e, EmulatorFault); return e as EmulatorFault }
  return assert.unreachable('expected an EmulatorFault') as never
}

// ---

const ldst = suite('ld / st')
ldst('vector loads and stores (.v2/.v4), .nc and .volatile forms', () => {
  const n = 64
  const src = new Float32Array(n * 4).map((_, i) => i * 1.25 - 7)
  const din = upload(be, src), dout = be.alloc(n * 16)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b) {
    .reg .b64 %rd<8>; .reg .b32 %r<4>; .reg .f32 %f<8>;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
    ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
    ld.volatile.global.v2.f32 {%f5, _}, [%rd4+8];
    st.global.v4.f32 [%rd5], {%f4, %f3, %f2, %f5};
    ret; }`, 'k', 1, n, [{ u64: din }, { u64: dout }])
  const out = download(be, dout, new Float32Array(n * 4))
  for (let t = 0; t < n; t++) {
    assert.equal(Array.from(out.subarray(4 * t, 4 * t + 4)), [src[4 * t + 3], src[4 * t + 2], src[4 * t + 1], src[4 * t + 2]])
  }
})
ldst('32-bit loads into 64-bit registers: .s32 sign-extends, .u32 and .b32 zero-extend (global and param)', () => {
  const din = upload(be, new Uint32Array([0x80000001])), dout = be.alloc(48)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b, .param .u32 c) {
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
    ld.global.s32 %rd3, [%rd1]; ld.global.u32 %rd4, [%rd1]; ld.global.b32 %rd5, [%rd1];
    ld.param.b32 %rd6, [c]; ld.param.s32 %rd7, [c];
    st.global.u64 [%rd2], %rd3; st.global.u64 [%rd2+8], %rd4; st.global.u64 [%rd2+16], %rd5;
    st.global.u64 [%rd2+24], %rd6; st.global.u64 [%rd2+32], %rd7;
    ret; }`, 'k', 1, 1, [{ u64: din }, { u64: dout }, { u32: 0xfffffffe }])
  const o = download(be, dout, new BigUint64Array(6))
  assert.is(o[0], 0xffffffff80000001n)
  assert.is(o[1], 0x80000001n)
  assert.is(o[2], 0x80000001n)
  assert.is(o[3], 0xfffffffen)
  assert.is(o[4], 0xfffffffffffffffen)
})
ldst('8/16-bit loads sign- or zero-extend into wider registers, stores truncate', () => {
  const bytes = new Uint8Array([0x80, 0x7f, 0xff, 0x01, 0x34, 0x92, 0, 0])
  const din = upload(be, bytes), dout = be.alloc(32)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b) {
    .reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .b16 %rs<2>;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
    ld.global.s8 %r1, [%rd1]; ld.global.u8 %r2, [%rd1]; ld.global.s16 %r3, [%rd1+4]; ld.global.u16 %r4, [%rd1+4];
    st.global.u32 [%rd2], %r1; st.global.u32 [%rd2+4], %r2; st.global.u32 [%rd2+8], %r3; st.global.u32 [%rd2+12], %r4;
    mov.u32 %r5, 0x12345678; st.global.u8 [%rd2+16], %r5; st.global.u16 [%rd2+18], %r5;
    ld.global.s8 %rs1, [%rd1+2]; st.global.u16 [%rd2+20], %rs1;
    ld.global.s16 %rd3, [%rd1+4]; st.global.u64 [%rd2+24], %rd3;
    ret; }`, 'k', 1, 1, [{ u64: din }, { u64: dout }])
  const o = download(be, dout, new Uint8Array(32))
  const dv = new DataView(o.buffer)
  assert.is(dv.getInt32(0, true), -128)
  assert.is(dv.getInt32(4, true), 128)
  assert.is(dv.getInt32(8, true), -28108) // 0x9234 as s16
  assert.is(dv.getInt32(12, true), 0x9234)
  assert.is(o[16], 0x78)
  assert.is(dv.getUint16(18, true), 0x5678)
  assert.is(dv.getUint16(20, true), 0xffff)
  assert.is(dv.getBigInt64(24, true), -28108n)
})
ldst('64-bit values round-trip exactly through memory', () => {
  const vals = new BigUint64Array([0n, 1n, (1n << 53n) + 1n, (1n << 64n) - 1n, 0x9e3779b97f4a7c15n, 1n << 63n])
  const din = upload(be, vals), dout = be.alloc(vals.byteLength)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b) {
    .reg .b64 %rd<8>; .reg .b32 %r1;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 8; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;
    ld.global.u64 %rd6, [%rd4]; xor.b64 %rd7, %rd6, 0x5555555555555555; st.global.u64 [%rd5], %rd7;
    ret; }`, 'k', 1, vals.length, [{ u64: din }, { u64: dout }])
  const out = download(be, dout, new BigUint64Array(vals.length))
  vals.forEach((v, i) => assert.is(out[i], v ^ 0x5555555555555555n))
})

ldst('cp.async copies global to shared (zero-filling past src-size); commit/wait are no-ops', () => {
  const src = new Uint32Array(32).map((_, i) => 0x1000 + i)
  const din = upload(be, src), dout = be.alloc(32 * 4)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b) {
    .shared .align 16 .b8 s[128];
    .reg .b64 %rd<8>; .reg .b32 %r<8>;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd1, %rd3;
    mov.u32 %r2, s; shl.b32 %r3, %r1, 4; add.s32 %r4, %r2, %r3;
    setp.eq.u32 %p1, %r1, 7;
    selp.u32 %r5, 8, 16, %p1;
    cp.async.cg.shared.global [%r4], [%rd4], 16, %r5;
    cp.async.commit_group;
    cp.async.wait_group 0;
    bar.sync 0;
    mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd2, %rd5; ld.shared.u32 %r6, [%r4+12]; st.global.u32 [%rd6], %r6;
    ret; }`.replace('.reg .b32 %r<8>;', '.reg .b32 %r<8>; .reg .pred %p1;'), 'k', 1, 8, [{ u64: din }, { u64: dout }])
  const out = download(be, dout, new Uint32Array(8))
  // the last word of each thread's 16-byte copy; thread 7 copied only 8 bytes, the rest is zero-filled
  for (let t = 0; t < 8; t++) assert.is(out[t], t === 7 ? 0 : 0x1000 + 4 * t + 3)
  launch(`.visible .entry k(.param .u64 a, .param .u64 b) {
    .shared .align 16 .b8 s[128];
    .reg .b64 %rd<4>; .reg .b32 %r<4>;
    ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; mov.u32 %r1, s;
    cp.async.ca.shared.global [%r1+16], [%rd1+16], 16, 8;
    cp.async.wait_all;
    ld.shared.v4.u32 {%r0, %r1, %r2, %r3}, [%r1+16];
    st.global.v4.u32 [%rd2], {%r0, %r1, %r2, %r3};
    ret; }`, 'k', 1, 1, [{ u64: din }, { u64: dout }])
  assert.equal(Array.from(download(be, dout, new Uint32Array(4))), [0x1004, 0x1005, 0, 0])
})

ldst('64-bit scalar parameters of any size stay exact (the speculative fast path checks its bounds)', () => {
  const dout = be.alloc(16 * 8)
  const ptx = `.visible .entry k(.param .u64 b, .param .u64 x) {
    .reg .b64 %rd<8>; .reg .b32 %r1;
    ld.param.u64 %rd1, [b]; ld.param.u64 %rd2, [x];
    mov.u32 %r1, %tid.x; mul.wide.s32 %rd3, %r1, 8; add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3; sub.s64 %rd6, %rd5, 1; add.s64 %rd7, %rd6, %rd2;
    st.global.u64 [%rd4], %rd7;
    ret; }`
  for (const x of [5n, (1n << 40n) + 3n, (1n << 60n) + 1n, (1n << 64n) - 7n]) {
    launch(ptx, 'k', 1, 16, [{ u64: dout }, { u64: x }])
    const out = download(be, dout, new BigUint64Array(16))
    for (let t = 0; t < 16; t++) assert.is(out[t], BigInt.asUintN(64, x + BigInt(8 * t) - 1n + x), `x=${x} t=${t}`)
  }
})

const spaces = suite('shared / local / const / param spaces')
spaces('static and dynamic (.extern) shared memory, cvta.shared round trip', () => {
  const n = 128
  const dout = be.alloc(n * 8)
  launch(`.extern .shared .align 16 .b8 dyn[];
  .visible .entry k(.param .u64 b) {
    .shared .align 4 .b32 stat[128];
    .reg .b64 %rd<8>; .reg .b32 %r<10>;
    ld.param.u64 %rd1, [b];
    mov.u32 %r1, %tid.x; shl.b32 %r2, %r1, 2;
    mov.u32 %r3, stat; add.s32 %r4, %r3, %r2; mul.lo.s32 %r5, %r1, 3; st.shared.u32 [%r4], %r5;
    mov.u64 %rd2, dyn; cvta.shared.u64 %rd3, %rd2; cvt.u64.u32 %rd4, %r2; add.s64 %rd5, %rd3, %rd4; st.u32 [%rd5], %r1;
    bar.sync 0;
    sub.s32 %r6, 127, %r1; shl.b32 %r7, %r6, 2; add.s32 %r8, %r3, %r7; ld.shared.u32 %r9, [%r8];
    mul.wide.u32 %rd6, %r1, 8; add.s64 %rd7, %rd1, %rd6; st.global.u32 [%rd7], %r9;
    cvta.to.shared.u64 %rd2, %rd5; cvt.u32.u64 %r8, %rd2; ld.shared.u32 %r9, [%r8]; st.global.u32 [%rd7+4], %r9;
    ret; }`, 'k', 2, n, [{ u64: dout }], n * 4)
  const out = download(be, dout, new Uint32Array(n * 2))
  for (let t = 0; t < n; t++) { assert.is(out[2 * t], (127 - t) * 3); assert.is(out[2 * t + 1], t) }
})
spaces('local memory is per thread; generic pointers from cvta.local', () => {
  const n = 64
  const dout = be.alloc(n * 4)
  launch(`.visible .entry k(.param .u64 b) {
    .local .align 8 .b8 depot[64];
    .reg .b64 %rd<8>; .reg .b32 %r<8>;
    ld.param.u64 %rd1, [b];
    mov.u32 %r1, %tid.x;
    st.local.u32 [depot], %r1; st.local.u32 [depot+60], 7;
    mov.u64 %rd2, depot; cvta.local.u64 %rd3, %rd2; ld.u32 %r2, [%rd3]; ld.u32 %r3, [%rd3+60];
    add.s32 %r4, %r2, %r3; mul.wide.u32 %rd4, %r1, 4; add.s64 %rd5, %rd1, %rd4; st.global.u32 [%rd5], %r4;
    ret; }`, 'k', 1, n, [{ u64: dout }])
  const out = download(be, dout, new Uint32Array(n))
  for (let t = 0; t < n; t++) assert.is(out[t], t + 7)
})
spaces('.const and .global variables with initializers; getGlobal', () => {
  const dout = be.alloc(32)
  const mod = be.loadModule(ptxBytes(`${head}
  .const .align 4 .b32 tbl[4] = {10, 20, 30, 0xffffffff};
  .global .align 4 .f32 fv[2] = {0f3FC00000, 0fC0200000};
  .global .align 8 .u64 ptr = generic(tbl);
  .global .align 1 .b8 str[4] = {104, 105, 0, 0};
  .visible .entry k(.param .u64 b) {
    .reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .f32 %f1;
    ld.param.u64 %rd1, [b];
    ld.const.u32 %r1, [tbl+12]; st.global.u32 [%rd1], %r1;
    ld.global.f32 %f1, [fv+4]; st.global.f32 [%rd1+4], %f1;
    ld.global.u64 %rd2, [ptr]; ld.u32 %r2, [%rd2+4]; st.global.u32 [%rd1+8], %r2;
    ld.global.u8 %r3, [str+1]; st.global.u32 [%rd1+12], %r3;
    ret; }`))
  be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0 }, marshal([{ u64: dout }]))
  const o = download(be, dout, new Uint8Array(16))
  const dv = new DataView(o.buffer)
  assert.is(dv.getUint32(0, true), 0xffffffff)
  assert.is(dv.getFloat32(4, true), -2.5)
  assert.is(dv.getUint32(8, true), 20)
  assert.is(dv.getUint32(12, true), 105)
  const g = mod.getGlobal('fv')
  assert.is(g.size, 8)
  const fv = download(be, g.address, new Float32Array(2))
  assert.equal(Array.from(fv), [1.5, -2.5])
})
spaces('struct parameters by value (.param .align 8 .b8 s[24]) and param addresses', () => {
  const dout = be.alloc(16)
  const st = new Uint8Array(24)
  const sv = new DataView(st.buffer)
  sv.setInt32(0, -9, true); sv.setFloat64(8, 0.75, true); st[17] = 200
  launch(`.visible .entry k(.param .align 8 .b8 s[24], .param .u64 b) {
    .reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .f64 %fd1; .reg .b16 %rs1;
    ld.param.u64 %rd1, [b];
    ld.param.u32 %r1, [s]; ld.param.f64 %fd1, [s+8]; ld.param.u8 %rs1, [s+17];
    st.global.u32 [%rd1], %r1; st.global.f64 [%rd1+8], %fd1;
    mov.b64 %rd2, s; ld.param.u8 %r2, [%rd2+17]; st.global.u8 [%rd1+4], %r2;
    ret; }`, 'k', 1, 1, [{ bytes: st, align: 8 }, { u64: dout }])
  const o = download(be, dout, new Uint8Array(16))
  const dv = new DataView(o.buffer)
  assert.is(dv.getInt32(0, true), -9)
  assert.is(o[4], 200)
  assert.is(dv.getFloat64(8, true), 0.75)
})

spaces('device printf (vprintf) formats from the argument buffer in local memory', () => {
  const lines: string[] = []
  const pbe = createEmulatorBackend({ print: (t) => lines.push(t) })
  const mod = pbe.loadModule(ptxBytes(`${head}
  .extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
  .global .align 1 .b8 $str[26] = {118, 61, 37, 100, 32, 37, 46, 50, 102, 32, 37, 115, 32, 37, 48, 56, 120, 32, 37, 108, 108, 100, 32, 37, 37, 0};
  .global .align 1 .b8 $str1[3] = {104, 105, 0};
  .visible .entry k() {
    .local .align 8 .b8 __local_depot0[40];
    .reg .b64 %SP, %SPL, %rd<8>; .reg .b32 %r<3>; .reg .f64 %fd1;
    mov.u64 %SPL, __local_depot0; cvta.local.u64 %SP, %SPL;
    add.u64 %rd1, %SP, 0; add.u64 %rd2, %SPL, 0;
    mov.u32 %r1, %tid.x; st.local.u32 [%rd2], %r1;
    mov.f64 %fd1, 0d3FF8000000000000; st.local.f64 [%rd2+8], %fd1;
    mov.u64 %rd3, $str1; cvta.global.u64 %rd4, %rd3; st.local.u64 [%rd2+16], %rd4;
    st.local.u32 [%rd2+24], 48879; st.local.u64 [%rd2+32], -5000000000;
    mov.u64 %rd5, $str; cvta.global.u64 %rd6, %rd5;
    { .param .b64 param0; .param .b64 param1; .param .b32 retval0;
      st.param.b64 [param0], %rd6; st.param.b64 [param1], %rd1;
      call.uni (retval0), vprintf, (param0, param1);
      ld.param.b32 %r2, [retval0]; }
    ret; }`))
  pbe.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [2, 1, 1], sharedBytes: 0 }, marshal([]))
  // print receives the text exactly as the device wrote it (issue 32): the format has no newline, so the two
  // threads' records run together, as a GPU prints them
  assert.equal(lines.join(''), 'v=0 1.50 hi 0000beef -5000000000 %v=1 1.50 hi 0000beef -5000000000 %')
})

const faults = suite('bounds checks')
const oobKernel = `.visible .entry oob(.param .u64 b, .param .u32 i) {
  .reg .b64 %rd<4>; .reg .b32 %r<3>;
  ld.param.u64 %rd1, [b]; ld.param.u32 %r1, [i];
  mul.wide.s32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], 77;
  ret; }`
faults('global stores past the end of an allocation fault and do not touch the neighbour', () => {
  const a = be.alloc(40), b = be.alloc(40)
  be.memset(b, 0, 40)
  const f = fault(() => launch(oobKernel, 'oob', 1, 1, [{ u64: a }, { s32: 10 }]))
  assert.is(f.kernel, 'oob')
  assert.match(f.instruction, /st\.global\.u32/)
  assert.is(f.address, a + 40n)
  assert.equal(Array.from(download(be, b, new Uint32Array(10))), new Array(10).fill(0))
  assert.is(fault(() => launch(oobKernel, 'oob', 1, 1, [{ u64: a }, { s32: -1 }])).address, a - 4n)
  assert.is(fault(() => launch(oobKernel, 'oob', 1, 1, [{ u64: 0n }, { s32: 0 }])).address, 0n)
  launch(oobKernel, 'oob', 1, 1, [{ u64: a }, { s32: 9 }])
  assert.is(download(be, a + 36n, new Uint32Array(1))[0], 77)
})
faults('misaligned, shared and local out-of-range accesses fault', () => {
  const a = be.alloc(64)
  const mis = fault(() => launch(`.visible .entry m(.param .u64 b) { .reg .b64 %rd<3>; .reg .b32 %r1;
    ld.param.u64 %rd1, [b]; add.s64 %rd2, %rd1, 2; ld.global.u32 %r1, [%rd2]; ret; }`, 'm', 1, 1, [{ u64: a }]))
  assert.is(mis.address, a + 2n)
  const sh = fault(() => launch(`.visible .entry s() { .shared .align 4 .b32 x[4]; .reg .b32 %r<3>;
    mov.u32 %r1, x; st.shared.u32 [%r1+16], 1; ret; }`, 's', 1, 1, []))
  assert.match(sh.message, /shared/)
  assert.is(sh.address, 16n)
  const lo = fault(() => launch(`.visible .entry l() { .local .align 4 .b8 d[8]; .reg .b32 %r<3>;
    st.local.u32 [d+8], 1; ret; }`, 'l', 1, 1, []))
  assert.match(lo.message, /local/)
  const tr = fault(() => launch('.visible .entry t() { trap; ret; }', 't', 1, 1, []))
  assert.match(tr.message, /trap/)
})
// nvcc's vecAdd addressing (mad.lo ctaid·ntid+tid, mul.wide, cvta, add.s64): the compiler checks such
// tid.x-affine addresses once per block (both ends inside one allocation) and falls back to per-thread
// checks for a block that fails, so faults must still name the first faulting thread's address.
const affineKernel = `.visible .entry va(.param .u64 a, .param .u64 b) {
  .reg .b64 %rd<8>; .reg .b32 %r<5>; .reg .f32 %f<3>;
  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  cvta.to.global.u64 %rd3, %rd1; cvta.to.global.u64 %rd4, %rd2;
  mul.wide.s32 %rd5, %r4, 4; add.s64 %rd6, %rd3, %rd5; add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f1, [%rd6]; add.f32 %f2, %f1, 0f3F800000; st.global.f32 [%rd7], %f2;
  ret; }`
function launch3(ptx: string, kernel: string, grid: [number, number, number], block: [number, number, number], args: Arg[]): void {
  const mod = be.loadModule(ptxBytes(head + ptx))
  be.launch(mod.getFunction(kernel), { grid, block, sharedBytes: 0 }, marshal(args))
}
faults('block-hoisted checks of tid.x-affine addresses: in-range grids run, the first address past the end faults', () => {
  const n = 100
  const src = Float32Array.from({ length: 128 }, (_, i) => i * 0.5 - 3)
  const a = upload(be, src.subarray(0, n)), after = be.alloc(64), b = be.alloc(4 * 128)
  be.memset(after, 0x5a, 64)
  be.memset(b, 0, 4 * 128)
  const f = fault(() => launch(affineKernel, 'va', 4, 32, [{ u64: a }, { u64: b }]))
  assert.is(f.kernel, 'va')
  assert.match(f.instruction, /ld\.global\.f32/)
  assert.is(f.address, a + BigInt(4 * n))
  const out = download(be, b, new Float32Array(128))
  // blocks run in order and a block's threads in order: everything before thread n was done
  for (let i = 0; i < 128; i++) assert.is(out[i], i < n ? Math.fround(src[i]! + 1) : 0, `b[${i}]`)
  assert.equal(Array.from(download(be, after, new Uint8Array(64))), new Array(64).fill(0x5a))
  // a grid that fits: every element once; with ntid.y = 2 each element is written twice, same value
  const full = upload(be, src), c = be.alloc(4 * 128)
  launch(affineKernel, 'va', 4, 32, [{ u64: full }, { u64: c }])
  assert.equal(Array.from(download(be, c, new Float32Array(128))), Array.from(src, (x) => Math.fround(x + 1)))
  be.memset(c, 0, 4 * 128)
  launch3(affineKernel, 'va', [8, 1, 1], [16, 2, 1], [{ u64: full }, { u64: c }])
  assert.equal(Array.from(download(be, c, new Float32Array(128))), Array.from(src, (x) => Math.fround(x + 1)))
  // the store side faults too (b one element short), naming the store
  const short = be.alloc(4 * 127)
  const g = fault(() => launch(affineKernel, 'va', 4, 32, [{ u64: full }, { u64: short }]))
  assert.match(g.instruction, /st\.global\.f32/)
  assert.is(g.address, short + 4n * 127n)
})
faults('block-hoisted checks: a base before the allocation or misaligned faults at thread 0', () => {
  const a = be.alloc(4 * 64), b = be.alloc(4 * 64)
  assert.is(fault(() => launch(affineKernel, 'va', 2, 32, [{ u64: a - 4n }, { u64: b }])).address, a - 4n)
  const mis = fault(() => launch(affineKernel, 'va', 2, 32, [{ u64: a + 2n }, { u64: b }]))
  assert.is(mis.address, a + 2n)
  assert.match(mis.message, /misaligned/)
})
faults('per-site range caches follow addresses from one allocation to another and still fault in the gap', () => {
  const gather = `.visible .entry g(.param .u64 p, .param .u64 o) {
    .reg .b64 %rd<8>; .reg .b32 %r<3>;
    ld.param.u64 %rd1, [p]; ld.param.u64 %rd2, [o];
    mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 8; add.s64 %rd4, %rd1, %rd3;
    ld.global.u64 %rd5, [%rd4];
    ld.global.u32 %r2, [%rd5];
    mul.wide.u32 %rd6, %r1, 4; add.s64 %rd7, %rd2, %rd6; st.global.u32 [%rd7], %r2;
    ret; }`
  const x = upload(be, Uint32Array.from({ length: 16 }, (_, i) => 1000 + i)), y = upload(be, Uint32Array.from({ length: 16 }, (_, i) => 2000 + i))
  const n = 64
  const ptrs = BigUint64Array.from({ length: n }, (_, t) => (t % 3 === 0 ? x : y) + BigInt(4 * ((t * 7) % 16)))
  const p = upload(be, ptrs), o = be.alloc(4 * n)
  launch(gather, 'g', 1, n, [{ u64: p }, { u64: o }])
  assert.equal(Array.from(download(be, o, new Uint32Array(n))), Array.from({ length: n }, (_, t) => (t % 3 === 0 ? 1000 : 2000) + (t * 7) % 16))
  ptrs[40] = x + 64n // one past the end of x: unmapped, though x and y are both cached by then
  const p2 = upload(be, ptrs)
  const f = fault(() => launch(gather, 'g', 1, n, [{ u64: p2 }, { u64: o }]))
  assert.match(f.instruction, /ld\.global\.u32/)
  assert.is(f.address, x + 64n)
})

const atomics = suite('atom / red')
atomics('every 32-bit operation on global and shared memory', () => {
  const n = 256
  const dout = be.alloc(4 * 16), dold = be.alloc(4 * n)
  be.memset(dout, 0, 64)
  const init = new Int32Array([0, 1000, -1000, 0, 0, 0, -1, 0, 0, 0x7fffffff, 0, 0, 0, 0, 0, 0])
  be.copyToDevice(dout, new Uint8Array(init.buffer))
  launch(`.visible .entry k(.param .u64 b, .param .u64 o) {
    .shared .align 4 .b32 sh[2];
    .reg .b64 %rd<6>; .reg .b32 %r<12>; .reg .pred %p1;
    ld.param.u64 %rd1, [b]; ld.param.u64 %rd2, [o];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0; @%p1 bra SKIP; mov.u32 %r2, sh; st.shared.u32 [%r2], 0; st.shared.u32 [%r2+4], 0;
  SKIP:
    bar.sync 0;
    atom.global.add.u32 %r3, [%rd1], 1;
    mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd2, %rd3; st.global.u32 [%rd4], %r3;
    sub.s32 %r4, %r1, 100;
    atom.global.min.s32 %r5, [%rd1+4], %r4;
    atom.global.max.s32 %r5, [%rd1+8], %r4;
    atom.global.max.u32 %r5, [%rd1+12], %r4;
    atom.global.inc.u32 %r5, [%rd1+16], 9;
    atom.global.dec.u32 %r5, [%rd1+20], 9;
    and.b32 %r6, %r1, 3; shl.b32 %r7, 1, %r6; not.b32 %r8, %r7;
    atom.global.and.b32 %r5, [%rd1+24], %r8;
    atom.global.or.b32 %r5, [%rd1+28], %r7;
    atom.global.xor.b32 %r5, [%rd1+32], %r1;
    atom.global.cas.b32 %r5, [%rd1+36], 0x7fffffff, %r1;
    atom.global.exch.b32 %r5, [%rd1+40], 5;
    red.global.add.u32 [%rd1+44], %r1;
    mov.u32 %r9, sh; atom.shared.add.u32 %r10, [%r9], 2; red.shared.max.u32 [%r9+4], %r1;
    bar.sync 0;
    @%p1 bra END; ld.shared.u32 %r11, [%r9]; st.global.u32 [%rd1+48], %r11; ld.shared.u32 %r11, [%r9+4]; st.global.u32 [%rd1+52], %r11;
  END:
    ret; }`, 'k', 1, n, [{ u64: dout }, { u64: dold }])
  const r = download(be, dout, new Int32Array(16))
  assert.is(r[0], n)
  assert.equal([...download(be, dold, new Int32Array(n))].sort((x, y) => x - y), Array.from({ length: n }, (_, i) => i))
  assert.is(r[1], -100)
  assert.is(r[2], n - 1 - 100)
  assert.is(r[3], -1) // unsigned max over tid - 100: tid 99 gives 0xffffffff
  // inc with wrap at 9 over 256 increments from 0: value = 256 mod 10
  assert.is(r[4], n % 10)
  // dec from 0 with limit 9: 0 → 9 → 8 … ; after 256 steps: (−256) mod 10 mapped into 0..9
  assert.is(r[5], ((-n % 10) + 10) % 10)
  assert.is(r[6], -1 & ~0xf)
  assert.is(r[7], 0xf)
  let x = 0; for (let t = 0; t < n; t++) x ^= t
  assert.is(r[8], x)
  assert.is(r[9], 0) // the first thread swaps in its tid (0); later compares fail
  assert.is(r[10], 5)
  assert.is(r[11], (n * (n - 1)) / 2)
  assert.is(r[12], 2 * n)
  assert.is(r[13], n - 1)
})
atomics('64-bit and floating-point atomics', () => {
  const n = 100
  const d = be.alloc(64)
  const init = new DataView(new ArrayBuffer(64))
  init.setBigUint64(0, (1n << 53n) - 50n, true)
  init.setBigInt64(8, 0n, true)
  init.setFloat32(16, 0.5, true)
  init.setFloat64(24, 0.25, true)
  init.setBigUint64(32, 0xffffffffffffffffn, true)
  init.setBigUint64(40, 7n, true)
  be.copyToDevice(d, new Uint8Array(init.buffer))
  launch(`.visible .entry k(.param .u64 b) {
    .reg .b64 %rd<6>; .reg .b32 %r<3>; .reg .f32 %f<3>; .reg .f64 %fd<3>;
    ld.param.u64 %rd1, [b]; mov.u32 %r1, %tid.x; cvt.u64.u32 %rd2, %r1;
    atom.global.add.u64 %rd3, [%rd1], 1;
    sub.s64 %rd4, 50, %rd2; atom.global.min.s64 %rd3, [%rd1+8], %rd4;
    cvt.rn.f32.u32 %f1, %r1; atom.global.add.f32 %f2, [%rd1+16], %f1;
    cvt.rn.f64.u32 %fd1, %r1; atom.global.add.f64 %fd2, [%rd1+24], %fd1;
    atom.global.and.b64 %rd3, [%rd1+32], 0xfffffffffffffff0;
    atom.global.cas.b64 %rd3, [%rd1+40], 7, 0x123456789abcdef0;
    ret; }`, 'k', 1, n, [{ u64: d }])
  const o = new DataView(download(be, d, new Uint8Array(64)).buffer)
  assert.is(o.getBigUint64(0, true), (1n << 53n) - 50n + BigInt(n))
  assert.is(o.getBigInt64(8, true), BigInt(50 - (n - 1)))
  assert.is(o.getFloat32(16, true), 0.5 + (n * (n - 1)) / 2)
  assert.is(o.getFloat64(24, true), 0.25 + (n * (n - 1)) / 2)
  assert.is(o.getBigUint64(32, true), 0xfffffffffffffff0n)
  assert.is(o.getBigUint64(40, true), 0x123456789abcdef0n)
})

ldst.run()
spaces.run()
faults.run()
atomics.run()
