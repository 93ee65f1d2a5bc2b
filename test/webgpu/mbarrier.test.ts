// mbarrier on WebGPU (packages/webgpu/src/emit-mbarrier.ts): the object in shared memory updated with workgroup
// atomics in the emulator's layout, each wait a workgroup barrier followed by the phase read. Checked against
// the emulator on hand-written kernels in the shapes cuda::barrier takes (arrive then wait, in a loop on
// test_wait; try_wait.parity; arrivals with a count; arrive_drop; cp.async.mbarrier.arrive.noinc), in a block
// of 64 threads and in one of 320 (more than SwiftShader's 256 invocations: two CUDA threads an invocation).
// A wait whose arrivals come later in the program, made by threads in code of their own (a role), runs in rounds
// (packages/webgpu/src/rounds.ts) as on the emulator; one that no thread will complete fails the launch with
// the deadlock fault, naming the wait; in a kernel with a warp collective (no rounds: a tensor-core operation) a wait whose arrivals come
// later fails with the fault that says so.
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { decodeForTranslation } from '../../packages/webgpu/src/from-ptx.js'
import { translateModule } from '../../packages/webgpu/src/emit-wgsl.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

// out[tid]           the neighbour's value after phase 0 (written before the arrivals)
// out[n + tid]       the pending count of this thread's phase-0 state (a permutation of 0..n-1)
// out[2n + tid]      after phase 1 (even threads arrive for 2 each, odd ones not at all; try_wait.parity 1):
//                    the value two threads on, written in between (to a second row of vals)
// out[3n + tid]      after phase 2 (thread 0 arrives with arrive_drop, so phase 3 expects n - 1) and phase 3
//                    (threads 1.. arrive, one of them through cp.async.mbarrier.arrive.noinc after a copy):
//                    the copied word plus the value of thread n - 1 - tid
/** Thread 0 waits (a role) for an mbarrier phase of `count` arrivals that thread 1 makes later in the program,
 *  then writes 1; `first`: an instruction at the start. */
function roleKernel(name: string, o: { first: string; count: number }): string {
  return `.visible .entry ${name}(.param .u64 o) {
  .reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [o];
  mov.u32 %r1, %tid.x;
${o.first}
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $ARRIVE;
  mbarrier.init.shared.b64 [bar], ${o.count};
$ARRIVE:
  bar.sync 0;
  @%p1 bra $SECOND;
$WAIT:
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra $WAIT;
  st.global.u32 [%rd1], 1;
  ret;
$SECOND:
  setp.ne.u32 %p3, %r1, 1;
  @%p3 bra $END;
  mbarrier.arrive.shared.b64 %rd2, [bar];
$END:
  ret;
}`
}

/** Thread 0 waits (mbarrier, a role: rounds) for thread 1's arrival, then (`clears`) clears a flag on which threads
 *  1.. spin: a wait on shared memory whose write comes later in the program, in rounds too; thread t writes t + 100. */
function spinKernel(name: string, clears: boolean): string {
  return `.visible .entry ${name}(.param .u64 o) {
  .reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 sflag;
  ld.param.u64 %rd1, [o];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $A;
  mbarrier.init.shared.b64 [bar], 1;
  st.shared.u32 [sflag], 1;
$A:
  bar.sync 0;
  @%p1 bra $SPIN;
$WAIT:
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra $WAIT;
${clears ? '  atom.shared.exch.b32 %r3, [sflag], 0;' : ''}
  bra.uni $OUT;
$SPIN:
  setp.ne.u32 %p3, %r1, 1;
  @%p3 bra $LOOP;
  mbarrier.arrive.shared.b64 %rd2, [bar];
$LOOP:
  ld.acquire.cta.shared.u32 %r2, [sflag];
  setp.ne.u32 %p3, %r2, 0;
  @%p3 bra $LOOP;
$OUT:
  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3;
  add.u32 %r4, %r1, 100;
  st.global.u32 [%rd4], %r4;
  ret;
}`
}

const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry mb(.param .u64 o, .param .u64 src) {
  .reg .b64 %rd<16>; .reg .b32 %r<40>; .reg .pred %p<8>;
  .shared .align 8 .b64 bar;
  .shared .align 4 .b32 vals[1024];
  .shared .align 16 .b32 copied[4];
  ld.param.u64 %rd1, [o]; ld.param.u64 %rd9, [src];
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ntid.x;
  mov.u32 %r4, vals; shl.b32 %r5, %r1, 2; add.u32 %r6, %r4, %r5;
  cvt.u64.u32 %rd2, %r5; add.s64 %rd3, %rd1, %rd2; mul.wide.u32 %rd4, %r2, 4;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $INIT_DONE;
  mbarrier.init.shared.b64 [bar], %r2;
$INIT_DONE:
  bar.sync 0;
  mad.lo.u32 %r3, %r1, 3, 1;
  st.shared.u32 [%r6], %r3;
  mbarrier.arrive.shared.b64 %rd5, [bar];
  mov.u64 %rd10, %globaltimer;
$W0:
  mbarrier.test_wait.shared.b64 %p2, [bar], %rd5;
  @%p2 bra $W0_DONE;
  mov.u64 %rd11, %globaltimer;
  sub.s64 %rd12, %rd11, %rd10;
  setp.lt.s64 %p6, %rd12, 40000;
  @%p6 bra $W0;
  nanosleep.u32 100;
  bra.uni $W0;
$W0_DONE:
  add.u32 %r7, %r1, 1; rem.u32 %r7, %r7, %r2; shl.b32 %r8, %r7, 2; add.u32 %r9, %r4, %r8;
  ld.shared.u32 %r10, [%r9];
  st.global.u32 [%rd3], %r10;
  mbarrier.pending_count.b64 %r11, %rd5;
  add.s64 %rd6, %rd3, %rd4; st.global.u32 [%rd6], %r11;
  // phase 1: write again, even threads arrive for two
  // (into a second row: a thread may still read the first)
  add.u32 %r12, %r3, 1000;
  shl.b32 %r24, %r2, 2; add.u32 %r25, %r6, %r24;
  st.shared.u32 [%r25], %r12;
  and.b32 %r13, %r1, 1;
  setp.ne.u32 %p3, %r13, 0;
  @%p3 bra $P1_WAIT;
  mbarrier.arrive.shared.b64 %rd7, [bar], 2;
$P1_WAIT:
  mbarrier.try_wait.parity.shared.b64 %p4, [bar], 1;
  @!%p4 bra $P1_WAIT;
  add.u32 %r14, %r1, 2; rem.u32 %r14, %r14, %r2; add.u32 %r14, %r14, %r2; shl.b32 %r15, %r14, 2; add.u32 %r16, %r4, %r15;
  ld.shared.u32 %r17, [%r16];
  add.s64 %rd8, %rd6, %rd4; st.global.u32 [%rd8], %r17;
  // phase 2: everyone arrives, thread 0 dropping out of the later phases
  @%p1 bra $P2_ARRIVE;
  mbarrier.arrive_drop.shared.b64 %rd13, [bar];
  bra.uni $P2_WAIT;
$P2_ARRIVE:
  mbarrier.arrive.shared.b64 %rd13, [bar];
$P2_WAIT:
  mbarrier.test_wait.parity.shared.b64 %p5, [bar], 0;
  @!%p5 bra $P2_WAIT;
  // phase 3: n - 1 arrivals; thread 1 copies a word from global memory and arrives through cp.async
  @!%p1 bra $P3_WAIT;
  setp.eq.u32 %p7, %r1, 1;
  @!%p7 bra $P3_PLAIN;
  mov.u32 %r18, copied;
  cp.async.ca.shared.global [%r18], [%rd9], 16;
  cp.async.mbarrier.arrive.noinc.shared.b64 [bar];
  bra.uni $P3_WAIT;
$P3_PLAIN:
  mbarrier.arrive.shared.b64 %rd14, [bar];
$P3_WAIT:
  mbarrier.try_wait.parity.shared.b64 %p5, [bar], 1;
  @!%p5 bra $P3_WAIT;
  mov.u32 %r19, copied; and.b32 %r20, %r1, 3; shl.b32 %r20, %r20, 2; add.u32 %r19, %r19, %r20;
  ld.shared.u32 %r21, [%r19];
  shl.b32 %r22, %r2, 1; sub.u32 %r22, %r22, 1; sub.u32 %r22, %r22, %r1; shl.b32 %r22, %r22, 2; add.u32 %r22, %r4, %r22;
  ld.shared.u32 %r23, [%r22];
  add.u32 %r21, %r21, %r23;
  add.s64 %rd15, %rd8, %rd4; st.global.u32 [%rd15], %r21;
  ret;
}

// an arrival that comes after the wait in program order (thread 0 waits before thread 1 arrives): roles, rounds
${roleKernel('late', { first: '', count: 1 })}
// the same with a movmatrix first (a warp collective the rounds do not hold: predicated code)
${roleKernel('late_warp', { first: '  movmatrix.sync.aligned.m8n8.trans.b16 %r2, %r1;', count: 1 })}
// thread 0 waits for two arrivals, of which only thread 1 makes one: no thread will complete the phase
${roleKernel('never', { first: '', count: 2 })}
${spinKernel('spin_roles', true)}
${spinKernel('spin_never', false)}
// %globaltimer and %clock64 grow from read to read of a thread (WebGPU: the count of its reads)
.visible .entry clocks(.param .u64 o) {
  .reg .b64 %rd<10>; .reg .b32 %r<4>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [o];
  mov.u64 %rd2, %globaltimer; mov.u64 %rd3, %globaltimer;
  mov.u64 %rd4, %clock64; mov.u64 %rd5, %clock64;
  setp.gt.u64 %p1, %rd3, %rd2; setp.ge.u64 %p2, %rd5, %rd4;
  and.pred %p1, %p1, %p2;
  selp.u32 %r1, 1, 0, %p1;
  mov.u32 %r2, %tid.x; mul.wide.u32 %rd6, %r2, 4; add.s64 %rd7, %rd1, %rd6;
  st.global.u32 [%rd7], %r1;
  ret;
}
`

const s = await webgpuPageSuite('WebGPU: mbarrier (cuda::barrier) as workgroup barriers over shared-memory atomics')

const SRC = [0x11, 0x22, 0x33, 0x44]

async function runMb(k: KernelRunner, n: number): Promise<number[]> {
  const out = await k.alloc(4 * 4 * n)
  const src = await k.upload(new Uint32Array(SRC))
  await k.launch('mb', 1, n, [out, src])
  return [...(await k.read(out, Uint32Array))]
}

for (const n of [64, 320]) {
  s(`arrive/wait in four phases, ${n} threads: the emulator's results`, async (ctx) => {
    const g = await runMb(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', `mbarrier ${n} (WebGPU)`), n)
    assert.equal(ctx.gpu!.refused.map((r) => r.reason), [], 'the kernels translate')
    const be = createEmulatorBackend({ workers: 0 })
    const e = await runMb(await KernelRunner.load(be, PTX, 'compute_80', `mbarrier ${n} (emulator)`), n)
    be.dispose()
    const at = (a: number[], part: number) => a.slice(part * n, (part + 1) * n)
    // what the kernel computes, whoever runs it
    const value = (t: number) => t * 3 + 1
    assert.equal(at(g, 0), Array.from({ length: n }, (_, t) => value((t + 1) % n)), 'phase 0: the neighbour\'s value')
    assert.equal([...at(g, 1)].sort((a, b) => a - b), Array.from({ length: n }, (_, t) => t), 'phase 0: the pending counts of the states')
    assert.equal(at(g, 2), Array.from({ length: n }, (_, t) => value((t + 2) % n) + 1000), 'phase 1: arrivals with a count')
    assert.equal(at(g, 3), Array.from({ length: n }, (_, t) => SRC[t & 3]! + value(n - 1 - t) + 1000), 'phase 3: after arrive_drop and cp.async.mbarrier.arrive.noinc')
    // the same as the emulator, but for the order in which threads arrived (which the pending counts show)
    assert.equal([...at(e, 1)].sort((a, b) => a - b), [...at(g, 1)].sort((a, b) => a - b))
    assert.equal([...at(e, 0), ...at(e, 2), ...at(e, 3)], [...at(g, 0), ...at(g, 2), ...at(g, 3)])
  })
}

/** The WGSL of kernel `name`. */
function wgslOf(name: string): string {
  const { module } = decodeForTranslation(PTX, 'mbarrier.ptx')
  const t = translateModule(module, { features: new Set(), limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 16384 } }, PTX)
  const k = t.kernels.get(name)
  if (!k) throw new Error(`${name} did not translate: ${JSON.stringify(t.refused)}`)
  return k.wgsl
}

/** The PTX line of the try_wait in kernel `name`. */
function waitLine(name: string): number {
  const lines = PTX.split('\n')
  const from = lines.findIndex((l) => l.startsWith(`.visible .entry ${name}(`))
  return lines.findIndex((l, i) => i > from && l.includes('try_wait.parity.shared.b64 %p2')) + 1
}

s('a wait whose arrival another thread makes later, in code of its own: rounds, the emulator\'s result', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'mbarrier late (WebGPU)')
  assert.match(wgslOf('late'), /var<workgroup> kp_sched/, 'the kernel runs in rounds')
  const out = await k.alloc(4)
  await k.launch('late', 1, 32, [out])
  assert.equal([...(await k.read(out, Uint32Array))], [1])
  const be = createEmulatorBackend({ workers: 0 })
  const e = await KernelRunner.load(be, PTX, 'compute_80', 'mbarrier late (emulator)')
  const eo = await e.alloc(4)
  await e.launch('late', 1, 32, [eo])
  assert.equal([...(await e.read(eo, Uint32Array))], [1])
  be.dispose()
})

s('a wait no thread will complete: the launch fails with the deadlock fault, naming the wait', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'mbarrier never (WebGPU)')
  const out = await k.alloc(4)
  const err = await k.launch('never', 1, 32, [out]).then(() => k.read(out, Uint32Array)).then(() => undefined, (x: Error) => x)
  assert.ok(err, 'the launch fails')
  assert.match(err!.message, new RegExp(`kernel never: deadlock: every thread of the block still running waits.*\\(PTX line ${waitLine('never')}\\)`))
  // the emulator finds the same deadlock
  const be = createEmulatorBackend({ workers: 0 })
  const e = await KernelRunner.load(be, PTX, 'compute_80', 'mbarrier never (emulator)')
  const eo = await e.alloc(4)
  const ee = await e.launch('never', 1, 32, [eo]).then(() => e.read(eo, Uint32Array)).then(() => undefined, (x: Error) => x)
  be.dispose()
  assert.match(ee?.message ?? '', /deadlock/)
})

s('with a warp collective (no rounds: a tensor-core operation), a wait whose arrival comes later in the program fails the launch, naming the wait', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'mbarrier late_warp (WebGPU)')
  assert.not.match(wgslOf('late_warp'), /kp_sched/, 'predicated code')
  const out = await k.alloc(4)
  const err = await k.launch('late_warp', 1, 32, [out]).then(() => k.read(out, Uint32Array)).then(() => undefined, (x: Error) => x)
  assert.ok(err, 'the launch fails')
  assert.match(err!.message, new RegExp(`kernel late_warp: an mbarrier wait cannot complete: its arrivals come later in the program.*\\(PTX line ${waitLine('late_warp')}\\)`))
})

s('in rounds, a spin on shared memory whose write another thread makes later runs; one nobody ends is a deadlock after 1000 rounds', async (ctx) => {
  assert.match(wgslOf('spin_roles'), /var<workgroup> kp_sched/, 'the kernel runs in rounds')
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'mbarrier spin_roles (WebGPU)')
  const out = await k.alloc(4 * 64)
  await k.launch('spin_roles', 1, 64, [out])
  assert.equal([...(await k.read(out, Uint32Array))], Array.from({ length: 64 }, (_, i) => i + 100))
  const out2 = await k.alloc(4 * 64)
  const err = await k.launch('spin_never', 1, 64, [out2]).then(() => k.read(out2, Uint32Array)).then(() => undefined, (x: Error) => x)
  assert.ok(err, 'the launch fails')
  const lines = PTX.split('\n')
  const from = lines.findIndex((l) => l.startsWith('.visible .entry spin_never('))
  const spin = lines.findIndex((l, i) => i > from && l.includes('ld.acquire.cta.shared.u32')) + 1
  assert.match(err!.message, new RegExp(`kernel spin_never: deadlock: .*\\(PTX line ${spin}\\)`))
})

s('%globaltimer and %clock64 grow from one read to the next', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'clocks (WebGPU)')
  const out = await k.alloc(4 * 64)
  await k.launch('clocks', 1, 64, [out])
  assert.equal([...(await k.read(out, Uint32Array))], new Array(64).fill(1))
})

s.run()
