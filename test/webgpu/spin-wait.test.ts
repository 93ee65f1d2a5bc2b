// A wait in a loop on a word of the block's shared memory (issue 26, packages/webgpu/src/spin-wait.ts), in the shape
// cooperative groups' tiles wider than a warp sync with: each warp's lane 0 sets the warp's bit with an atomic and
// shares the old mask with a shuffle; the warp whose bit completes the mask sums the warps' partials and clears the
// bits; the others spin on ld.acquire until their bit is clear, then every thread reads the sum. On WebGPU the wait
// is a barrier and one read, moved past the write where the compiler laid the loop out first (as clang does); a wait
// whose write comes later in the program faults, naming it; a spin on global memory stays refused. In headless
// chromium (SwiftShader), against the emulator.
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'
import { decodeForTranslation } from '../../packages/webgpu/src/from-ptx.js'
import { translateModule } from '../../packages/webgpu/src/emit-wgsl.js'
import { sharedPointers } from '../../packages/webgpu/src/spin-wait.js'

/** The kernel: `work` and `spin` are the two sides of the arrival, laid out in `order`; `space` holds the flags. */
function tilePtx(order: 'work first' | 'spin first' | 'spin first, falling out', space: 'shared' | 'global' = 'shared'): string {
  const work = `$work:
  @%p1 bra $release;
  ld.shared.u32 %r14, [spart]; ld.shared.u32 %r15, [spart+4]; add.u32 %r14, %r14, %r15;
  ld.shared.u32 %r15, [spart+8]; add.u32 %r14, %r14, %r15; ld.shared.u32 %r15, [spart+12]; add.u32 %r14, %r14, %r15;
  st.shared.u32 [stotal], %r14;
$release:
  bar.warp.sync -1;
  @%p1 bra $met;
  red.and.release.cta.b32 [%rd3], -16;
  bra.uni $met;`
  // (clang's shape: the loop falls out when the bit is clear, and a jump takes the thread past the work)
  const spin = order === 'spin first, falling out' ? `$spin:
  ld.acquire.cta.u32 %r17, [%rd3];
  and.b32 %r18, %r17, %r5;
  setp.ne.u32 %p3, %r18, 0;
  @%p3 bra $spin;
  bra.uni $met;` : `$spin:
  ld.acquire.cta.u32 %r17, [%rd3];
  and.b32 %r18, %r17, %r5;
  setp.eq.u32 %p3, %r18, 0;
  @%p3 bra $met;
  bra.uni $spin;`
  return `.version 8.0
.target sm_80
.address_size 64
${space === 'global' ? '.global .align 4 .b32 gflags;' : ''}
.visible .entry spin_tile(.param .u64 pout)
{
  .reg .b64 %rd<8>; .reg .b32 %r<24>; .reg .pred %p<6>;
  .shared .align 4 .b32 sflags;
  .shared .align 4 .b8 spart[16];
  .shared .align 4 .b32 stotal;
  ld.param.u64 %rd1, [pout]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; shr.u32 %r2, %r1, 5; and.b32 %r3, %r1, 31;
  mov.u32 %r4, 1; shl.b32 %r5, %r4, %r2;
  setp.ne.u32 %p1, %r3, 0;
  mov.u32 %r9, %ctaid.x;
  @%p1 bra $stored;
  mov.u32 %r6, spart; shl.b32 %r7, %r2, 2; add.u32 %r8, %r6, %r7;
  add.u32 %r10, %r2, 1; mul.lo.u32 %r10, %r10, 10; add.u32 %r10, %r10, %r9;
  st.shared.u32 [%r8], %r10;
$stored:
  ${space === 'global' ? 'mov.u64 %rd3, gflags;' : 'mov.u64 %rd6, sflags; cvta.shared.u64 %rd2, %rd6; add.s64 %rd3, %rd2, 0;'}
  bar.warp.sync -1;
  mov.u32 %r11, 0;
  @%p1 bra $arrived;
  atom.or.acq_rel.cta.b32 %r11, [%rd3], %r5;
$arrived:
  shfl.sync.idx.b32 %r12, %r11, 0, 31, -1;
  or.b32 %r13, %r12, %r5;
  setp.eq.u32 %p2, %r13, 15;
  @%p2 bra $work;
${order === 'spin first, falling out' ? '' : '  bra.uni $spin;'}
${order === 'work first' ? `${work}\n${spin}` : `${spin}\n${work}`}
$met:
  ld.shared.u32 %r19, [stotal];
  mov.u32 %r20, %ntid.x; mad.lo.s32 %r21, %r9, %r20, %r1;
  mul.wide.u32 %rd4, %r21, 4; add.s64 %rd5, %rd1, %rd4;
  st.global.u32 [%rd5], %r19;
  ret;
}
`
}

const translate = (ptx: string) => {
  const { module } = decodeForTranslation(ptx, 'spin.cu')
  return translateModule(module, { features: new Set(), limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 16384 } }, ptx)
}

const BLOCKS = 6

async function run(k: KernelRunner): Promise<Uint32Array> {
  const out = await k.alloc(4 * 128 * BLOCKS)
  await k.launch('spin_tile', BLOCKS, 128, [out])
  return k.read(out, Uint32Array)
}

const s = await webgpuPageSuite('WebGPU: a wait in a loop on the block\'s shared memory')

s('the generic address made by cvta.shared and an offset is known to be shared memory; one stepped in a loop is not', () => {
  const entry = (ptx: string) => [...decodeForTranslation(ptx, 'spin.cu').module.functions.values()][0]!
  const fn = entry(tilePtx('work first'))
  const names = [...sharedPointers(fn)].map((id) => fn.registers[id]!.name).sort()
  assert.equal(names, ['%rd2', '%rd3'])
  const stepped = entry(`.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b64 %rd<4>; .reg .pred %p<2>;\n .shared .align 4 .b8 buf[64];\n mov.u64 %rd1, buf; cvta.shared.u64 %rd2, %rd1;\n$l:\n add.s64 %rd2, %rd2, 4; setp.lt.u64 %p1, %rd2, 100; @%p1 bra $l;\n ret;\n}\n`)
  assert.equal([...sharedPointers(stepped)], [])
})

s('the wait runs where its write comes first in the program: every thread reads the sum, as on the emulator', async (ctx) => {
  const ptx = tilePtx('work first')
  assert.equal(translate(ptx).refused, [])
  const gk = await KernelRunner.load(ctx.gpu!, ptx, 'compute_80', 'spin (WebGPU)')
  const gpu = await run(gk)
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await run(await KernelRunner.load(be, ptx, 'compute_80', 'spin (emulator)'))
  be.dispose()
  assert.equal([...gpu], [...emu])
  // block b's partials are 10 + b, 20 + b, 30 + b, 40 + b
  for (let b = 0; b < BLOCKS; b++) for (let t = 0; t < 128; t++) assert.is(gpu[b * 128 + t], 100 + 4 * b, `block ${b} thread ${t}`)
})

for (const order of ['spin first', 'spin first, falling out'] as const) {
  s(`the loop laid out before the write (${order}${order.endsWith('out') ? ', clang\'s layout' : ''}): the wait moves past it, to where the thread goes on; the same sums`, async (ctx) => {
    const ptx = tilePtx(order)
    const wgsl = translate(ptx).kernels.get('spin_tile')!.wgsl
    assert.ok(wgsl.lastIndexOf('= kp_gen_ldw(') > wgsl.lastIndexOf('= kp_gen_atom_and('), 'the wait is written after the write')
    const gpu = await run(await KernelRunner.load(ctx.gpu!, ptx, 'compute_80', `${order} (WebGPU)`))
    const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
    const emu = await run(await KernelRunner.load(be, ptx, 'compute_80', `${order} (emulator)`))
    be.dispose()
    assert.equal([...gpu], [...emu])
    for (let b = 0; b < BLOCKS; b++) assert.is(gpu[b * 128 + 127], 100 + 4 * b, `block ${b}`)
  })
}

/** Threads 1.. wait for thread 0 to clear a flag, which it does only after the point where they go on. */
const LATE_PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry late(.param .u64 pout)
{
  .reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<4>;
  .shared .align 4 .b32 sflag;
  ld.param.u64 %rd1, [pout]; cvta.to.global.u64 %rd1, %rd1;
  mov.u64 %rd6, sflag; cvta.shared.u64 %rd2, %rd6;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra $set;
  st.shared.u32 [sflag], 1;
$set:
  bar.sync 0;
  @%p2 bra $spin;
  bra.uni $met;
$spin:
  ld.acquire.cta.u32 %r2, [%rd2];
  setp.eq.u32 %p3, %r2, 0;
  @%p3 bra $met;
  bra.uni $spin;
$met:
  @%p2 bra $out;
  atom.shared.exch.b32 %r3, [sflag], 0;
$out:
  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r1;
  ret;
}
`

s('a wait whose write comes later in the program faults, naming the wait\'s line', async (ctx) => {
  assert.equal(translate(LATE_PTX).refused, [])
  const line = LATE_PTX.split('\n').findIndex((l) => l.includes('ld.acquire.cta.u32')) + 1
  const launch = async (k: KernelRunner) => {
    const out = await k.alloc(4 * 64)
    await k.launch('late', 1, 64, [out])
    return k.read(out, Uint32Array)
  }
  let err: Error | undefined
  try {
    await launch(await KernelRunner.load(ctx.gpu!, LATE_PTX, 'compute_80', 'late (WebGPU)'))
  } catch (e) {
    err = e as Error
  }
  assert.ok(err, 'the launch fails')
  assert.match(err!.message, new RegExp(`kernel late: a wait on shared memory cannot complete: its write comes later in the program.*\\(PTX line ${line}\\)`))
  // the emulator, like a GPU, runs it
  const be = createEmulatorBackend({ workers: 0, codegen: 'js' })
  const emu = await launch(await KernelRunner.load(be, LATE_PTX, 'compute_80', 'late (emulator)'))
  be.dispose()
  assert.is(emu[63], 63)
})

s('a spin on global memory (another block\'s flag) stays refused, with the reason', () => {
  const t = translate(tilePtx('work first', 'global'))
  assert.is(t.refused.length, 1)
  assert.match(t.refused[0]!.reason, /a thread waits in a loop for memory another thread writes \(ld\.acquire\.cta\.u32 at PTX line \d+; the memory is not known to be the block's shared memory\): WGSL promises no forward progress/)
})

s.run()
