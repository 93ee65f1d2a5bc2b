// Waiting for other threads outside collectives (issue 14): mbarrier objects, spin-waits on memory (yield points),
// cooperative launches with a grid-wide barrier, and the load-time side: one refused kernel leaves its
// neighbours usable, WARP_SZ, the reserved shared memory, brx.idx jump tables. Hand-written PTX in the forms
// nvcc and clang emit; expected values from the PTX ISA's definitions.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, EmulatorFault, PtxError } from '../../packages/emulator/src/index.js'
import { download, marshal, ptxBytes, upload, type Arg } from './helpers.js'
import { brxSwitchKernel } from '../fixtures/emulator/brx-switch.js'

const head = '.version 8.0\n.target sm_80\n.address_size 64\n'
const be = createEmulatorBackend()

function run(ptx: string, grid: number, block: number, args: Arg[], extra: { cooperative?: boolean; sharedBytes?: number } = {}, name = 'k'): void {
  const mod = be.loadModule(ptxBytes(head + ptx))
  be.launch(mod.getFunction(name), { grid: [grid, 1, 1], block: [block, 1, 1], sharedBytes: extra.sharedBytes ?? 0, cooperative: extra.cooperative }, marshal(args))
}

function throwsLike(fn: () => unknown, type: new (...a: never[]) => Error, re: RegExp): Error {
  try {
    fn()
  } catch (e) {
    assert.instance(e, type)
    assert.match((e as Error).message, re, (e as Error).message)
    return e as Error
  }
  assert.unreachable('should throw')
  throw new Error('unreachable')
}

// ---
const load = suite('per-kernel refusal, WARP_SZ, brx.idx, reserved shared memory')

const mixed = `
.func (.param .b32 r) helper(.param .b32 x) { .reg .b32 %r<3>; ld.param.b32 %r1, [x]; wgmma.fence.sync.aligned; st.param.b32 [r], %r1; ret; }
.visible .entry good(.param .u64 o) { .reg .b64 %rd<3>; .reg .b32 %r<3>; ld.param.u64 %rd1, [o]; mov.u32 %r1, WARP_SZ; st.global.u32 [%rd1], %r1; ret; }
.visible .entry bad(.param .u64 o) {
  .reg .b32 %r<3>;
  wgmma.fence.sync.aligned;
  ret;
}
.visible .entry caller(.param .u64 o) { .reg .b32 %r<3>; { .param .b32 p; .param .b32 q; st.param.b32 [p], 1; call.uni (q), helper, (p); } ret; }`

load('one kernel the emulator cannot run is refused when it is looked up, with its PTX line; its neighbours run', () => {
  const mod = be.loadModule(ptxBytes(head + mixed))
  const out = be.alloc(4)
  be.launch(mod.getFunction('good'), { grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }]))
  assert.is(download(be, out, new Uint32Array(1))[0], 32, 'WARP_SZ is the warp size')
  const e = throwsLike(() => mod.getFunction('bad'), PtxError, /kernel bad cannot run on the emulator: unsupported instruction wgmma\.fence\.sync\.aligned/)
  assert.is((e as PtxError).line, 9)
  throwsLike(() => mod.getFunction('caller'), PtxError, /kernel caller cannot run on the emulator: calls helper, which the emulator cannot run \(PTX line 5: unsupported instruction wgmma/)
})

load('brx.idx jumps through a .branchtargets table (clang\'s switch); an index past its end faults', () => {
  const ptx = brxSwitchKernel
  const out = be.alloc(4 * 8)
  run(ptx, 1, 8, [{ u64: out }, { u32: 3 }])
  assert.equal([...download(be, out, new Uint32Array(8))], [100, 200, 300, 100, 200, 300, 100, 200])
  const tooFew = 4 // table entries for rem 4 (the list has 3)
  throwsLike(() => run(ptx, 1, 8, [{ u64: out }, { u32: tooFew }]), EmulatorFault, /brx\.idx index past the end of its \.branchtargets list in kernel k, instruction `brx\.idx %r2, \$L_brx_0 \(PTX line 8\)` \(address 0x3\)/)
})

load('%reserved_smem_offset_1 is a zeroed window of shared memory after the kernel\'s own (cg::block_tile_memory)', () => {
  const out = be.alloc(4 * 4)
  run(`.visible .entry k(.param .u64 o) {
  .reg .b64 %rd<4>; .reg .b32 %r<8>; .shared .align 4 .b8 own[64];
  ld.param.u64 %rd1, [o]; mov.u32 %r1, %reserved_smem_offset_1; mov.u32 %r2, %reserved_smem_offset_begin; mov.u32 %r3, %reserved_smem_offset_cap;
  ld.shared.u32 %r4, [%r1+284]; atom.shared.add.u32 %r5, [%r1], 1;
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4}; ret; }`, 1, 32, [{ u64: out }])
  // own ends at 64; the 1 KiB reserved window starts at the next 16 bytes, its second half at +512
  assert.equal([...download(be, out, new Uint32Array(4))], [64 + 512, 64, 1024, 0])
})

// ---
const mbar = suite('mbarrier and yield points')

mbar('mbarrier: init, arrive (state), test_wait in a loop, pending_count, parity waits, phases', () => {
  const n = 64
  const out = be.alloc(4 * n * 4)
  run(`.visible .entry k(.param .u64 o) {
  .reg .b64 %rd<8>; .reg .b32 %r<12>; .reg .pred %p<4>; .shared .align 8 .b64 bar; .shared .align 4 .b32 vals[64];
  ld.param.u64 %rd1, [o]; mov.u32 %r1, %tid.x; mov.u32 %r10, bar;
  setp.ne.u32 %p1, %r1, 0; @%p1 bra $W;
  mbarrier.init.shared.b64 [%r10], 64;
$W: bar.sync 0;
  shl.b32 %r2, %r1, 2; mov.u32 %r3, vals; add.u32 %r4, %r3, %r2; add.u32 %r5, %r1, 1000; st.shared.u32 [%r4], %r5;
  mbarrier.arrive.shared.b64 %rd2, [%r10];
  mbarrier.pending_count.b64 %r6, %rd2;
$SPIN:
  mbarrier.test_wait.shared.b64 %p2, [%r10], %rd2;
  @!%p2 bra $SPIN;
  xor.b32 %r7, %r1, 63; shl.b32 %r7, %r7, 2; add.u32 %r7, %r3, %r7; ld.shared.u32 %r8, [%r7];
  mbarrier.test_wait.parity.shared.b64 %p3, [%r10], 0; selp.u32 %r9, 1, 0, %p3;
  mbarrier.test_wait.parity.shared.b64 %p3, [%r10], 1; selp.u32 %r11, 1, 0, %p3;
  mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd1, %rd3; st.global.v4.u32 [%rd4], {%r6, %r8, %r9, %r11}; ret; }`, 1, n, [{ u64: out }])
  const got = download(be, out, new Uint32Array(4 * n))
  for (let t = 0; t < n; t++) {
    // thread t is the (t+1)-th arrival: 63 - t pending after it; every thread saw the others' stores after the wait;
    // phase 0 completed (parity 0 done), phase 1 not
    assert.equal([...got.subarray(4 * t, 4 * t + 4)], [63 - t, 1000 + (t ^ 63), 1, 0], `thread ${t}`)
  }
})

mbar('a spin-wait on shared memory (ld.volatile in a loop) lets the thread it waits for run', () => {
  const out = be.alloc(4 * 64)
  run(`.visible .entry k(.param .u64 o) {
  .reg .b64 %rd<6>; .reg .b32 %r<8>; .reg .pred %p<3>; .shared .align 4 .b32 flag;
  ld.param.u64 %rd1, [o]; mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 63; @%p1 bra $WAIT;
  st.volatile.shared.u32 [flag], 7;
$WAIT:
  ld.volatile.shared.u32 %r2, [flag];
  setp.eq.u32 %p2, %r2, 0; @%p2 bra $WAIT;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r2; ret; }`, 1, 64, [{ u64: out }])
  assert.ok(download(be, out, new Uint32Array(64)).every((x) => x === 7))
})

mbar('a spin-wait nobody ends is a deadlock fault naming the kernel, the thread, the block and the PTX line', () => {
  throwsLike(() => run(`.visible .entry k(.param .u64 o) {
  .reg .b32 %r<4>; .reg .pred %p<3>; .shared .align 4 .b32 flag;
  mov.u32 %r1, %tid.x;
$WAIT:
  ld.volatile.shared.u32 %r2, [flag];
  setp.eq.u32 %p2, %r2, 0; @%p2 bra $WAIT;
  ret; }`, 2, 32, [{ u64: 0n }]), EmulatorFault, /^deadlock: thread \(0, 0, 0\) of block \(0, 0, 0\) keeps waiting and no thread of its block changes what it waits for; blocks run one after another, so a kernel whose blocks wait for each other needs a cooperative launch \(\{ cooperative: true \}\) in kernel k, instruction `ld\.volatile\.shared\.u32 %r2, \[flag\] \(PTX line 8\)`$/)
})

// ---
const coop = suite('cooperative launches')

// cg::this_grid().sync() as nvcc emits it (cooperative_groups/details/sync.h): the grid workspace from
// %envreg1:%envreg2, one arrival per block (atom.add.release.gpu), a spin on ld.acquire.gpu
const gridSync = `.visible .entry k(.param .u64 a, .param .u64 b) {
  .reg .b64 %rd<10>; .reg .b32 %r<14>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
  mov.u32 %r1, %envreg2; mov.u32 %r2, %envreg1; cvt.u64.u32 %rd3, %r1; cvt.u64.u32 %rd4, %r2; bfi.b64 %rd5, %rd4, %rd3, 32, 32;
  setp.ne.s64 %p3, %rd5, 0; @%p3 bra $OK;
  trap;
$OK:
  mov.u32 %r3, %ctaid.x; mov.u32 %r4, %tid.x; mov.u32 %r5, %nctaid.x;
  setp.ne.u32 %p1, %r4, 0; @%p1 bra $SYNC;
  mul.wide.u32 %rd6, %r3, 4; add.s64 %rd7, %rd1, %rd6; add.u32 %r6, %r3, 1; st.global.u32 [%rd7], %r6;
$SYNC:
  bar.sync 0;
  @%p1 bra $AFTER;
  atom.add.release.gpu.u32 %r7, [%rd5], 1;
$SPIN:
  ld.acquire.gpu.u32 %r8, [%rd5];
  setp.lt.u32 %p2, %r8, %r5; @%p2 bra $SPIN;
$AFTER:
  bar.sync 0;
  add.u32 %r9, %r3, 1; rem.u32 %r9, %r9, %r5; mul.wide.u32 %rd6, %r9, 4; add.s64 %rd7, %rd1, %rd6; ld.global.u32 %r10, [%rd7];
  mov.u32 %r11, %ntid.x; mad.lo.s32 %r12, %r3, %r11, %r4; mul.wide.u32 %rd8, %r12, 4; add.s64 %rd9, %rd2, %rd8; st.global.u32 [%rd9], %r10;
  ret; }`

coop('a grid-wide barrier: every block writes, all wait, each reads its neighbour\'s value', () => {
  const grid = 8, block = 64
  const a = be.alloc(4 * grid), b = be.alloc(4 * grid * block)
  run(gridSync, grid, block, [{ u64: a }, { u64: b }], { cooperative: true })
  const got = download(be, b, new Uint32Array(grid * block))
  for (let i = 0; i < grid * block; i++) assert.is(got[i], ((Math.floor(i / block) + 1) % grid) + 1, `thread ${i}`)
})

coop('without cooperative: true the launch is refused, naming the grid workspace read; a grid that cannot be resident at once is refused', () => {
  throwsLike(() => run(gridSync, 2, 32, [{ u64: upload(be, new Uint32Array(2)) }, { u64: be.alloc(256) }]), Error,
    /^launch k: the kernel synchronizes the whole grid \(cg::this_grid\(\)\.sync\(\): PTX line 7 reads the grid workspace, `mov\.u32 %r1, %envreg2`\), which only a cooperative launch provides: launch it with \{ cooperative: true \} \(cudaLaunchCooperativeKernel\)$/)
  throwsLike(() => run(gridSync, 17, 128, [{ u64: be.alloc(4 * 17) }, { u64: be.alloc(4 * 17 * 128) }], { cooperative: true }), RangeError,
    /cooperative launch of 17 blocks of 128 threads does not fit on the emulated device at once \(at most 16 blocks; CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\)/)
})

load.run()
mbar.run()
coop.run()
