// Warp collectives' subgroup form (issue 26 item 8, emit-collective.ts): on an adapter whose subgroups are
// exactly 32 wide, shfl/vote/activemask/elect/match/redux are also written with subgroupShuffle/subgroupBallot,
// taken when the kernel's start finds every warp to be one subgroup (kp_sg_ok), else the workgroup-memory form.
// SwiftShader's subgroups are 4 wide, so here the translation is asked for as if they were 32 (a translator
// around emit-wgsl that says so), in Node on Dawn over SwiftShader: the WGSL enables subgroups and passes Tint's
// checks (uniformity included), the start's test finds the warps are not subgroups, and every result is the
// emulator's through the workgroup-memory form — a partial warp, inactive lanes and member masks included. The
// subgroup form itself runs only on a 32-wide adapter (the GPU kit's WebGPU section, on NVIDIA's Vulkan driver).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { create } from 'webgpu'
import * as wg from '../../packages/webgpu/src/index.js'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { runUnderDawn } from '../helpers/webgpu.js'
import { checkShflModes, shflModesPtx } from '../fixtures/emulator/shfl-modes.js'

runUnderDawn(import.meta.filename)

/** emit-wgsl, told the adapter's subgroups are 32 wide; the WGSL it wrote, by kernel. */
const written = new Map<string, string>()
const as32: wg.WgslTranslator = {
  name: 'emit-wgsl (subgroups as if 32 wide)',
  async translate(input, target) {
    const m = await wg.emitWgsl.translate(input, { ...target, subgroupMinSize: 32, subgroupMaxSize: 32 })
    for (const [name, k] of m.kernels) written.set(name, k.wgsl)
    return m
  },
}

/** Thread t (of a 48-thread block: a full warp and half of one) reads a = in[t]; threads with a & 1 take part
 *  (the others skip the collectives); the results of the collectives, in order, at 8·t words. */
const OUT = 8
const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry warp_ops(.param .u64 pin, .param .u64 pout)
{
  .reg .b64 %rd<8>; .reg .b32 %r<24>; .reg .pred %p<8>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r2, [%rd4];
  mul.wide.u32 %rd5, %r1, ${4 * OUT}; add.s64 %rd6, %rd2, %rd5;
  and.b32 %r3, %r2, 1; setp.eq.u32 %p1, %r3, 0; @%p1 bra $skip;
  and.b32 %r4, %r2, 6; setp.ne.u32 %p2, %r4, 0;
  shfl.sync.bfly.b32 %r5, %r2, 5, 31, -1;
  vote.sync.ballot.b32 %r6, %p2, -1;
  activemask.b32 %r7;
  shr.u32 %r8, %r2, 3; and.b32 %r8, %r8, 3;
  match.any.sync.b32 %r9, %r8, %r7;
  redux.sync.add.u32 %r10, %r2, %r7;
  redux.sync.min.s32 %r11, %r2, %r7;
  elect.sync %r12|%p3, %r7;
  selp.u32 %r13, 1, 0, %p3;
  st.global.u32 [%rd6], %r5; st.global.u32 [%rd6+4], %r6; st.global.u32 [%rd6+8], %r7; st.global.u32 [%rd6+12], %r9;
  st.global.u32 [%rd6+16], %r10; st.global.u32 [%rd6+20], %r11; st.global.u32 [%rd6+24], %r12; st.global.u32 [%rd6+28], %r13;
$skip:
  ret;
}`

const THREADS = 48
function inputs(seed: number): Uint32Array {
  let s = seed >>> 0
  return Uint32Array.from({ length: THREADS }, () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s })
}

async function warpOps(k: KernelRunner, xs: Uint32Array): Promise<Uint32Array> {
  const din = await k.upload(xs), dout = await k.upload(new Uint32Array(OUT * THREADS))
  await k.launch('warp_ops', 1, THREADS, [din, dout])
  return k.read(dout, Uint32Array)
}

const s = suite('WebGPU: warp collectives\' subgroup form (translated as for 32-wide subgroups; SwiftShader\'s are 4)')

s('the WGSL enables subgroups and the start\'s test; on SwiftShader the workgroup-memory form gives the emulator\'s results', async () => {
  const be = await wg.createWebGpuBackend({ gpu: create([]), translator: as32 })
  const emu = createEmulatorBackend({ workers: 0 })
  try {
    assert.equal(be.device().name.toLowerCase().includes('swiftshader'), true, be.device().name)
    const k = await KernelRunner.load(be, PTX, 'compute_80', 'warp ops (WebGPU)')
    const wgsl = written.get('warp_ops')!
    assert.match(wgsl, /^enable subgroups;/)
    for (const f of ['subgroupShuffle', 'subgroupBallot', 'kp_sg_ok', '@builtin(subgroup_size)']) assert.ok(wgsl.includes(f), f)
    const ke = await KernelRunner.load(emu, PTX, 'compute_80', 'warp ops (emulator)')
    for (const seed of [1, 2, 3, 4]) {
      const xs = inputs(seed)
      const g = await warpOps(k, xs), e = await warpOps(ke, xs)
      assert.equal([...g], [...e], `seed ${seed}`)
    }
    // shfl's four modes with register operands, as the ISA gives them
    await checkShflModes(await KernelRunner.load(be, shflModesPtx, 'compute_80', 'shfl modes (WebGPU)'))
    assert.ok(written.get('shfl_idx')!.includes('subgroupShuffle'))
  } finally {
    emu.dispose()
    await be.dispose()
  }
})

s('not for adapters whose subgroups are not 32 wide: no subgroup code', async () => {
  const be = await wg.createWebGpuBackend({ gpu: create([]) })
  try {
    const m = await wg.emitWgsl.translate({ ptx: PTX, module: (await import('../../packages/webgpu/src/from-ptx.js')).decodeForTranslation(PTX, 'warp ops').module, arch: 'compute_80', source: 'warp ops' },
      { features: new Set(['subgroups']), limits: {}, subgroupMinSize: 4, subgroupMaxSize: 4 })
    const wgsl = m.kernels.get('warp_ops')!.wgsl
    assert.not.match(wgsl, /subgroup/)
    assert.equal(m.kernels.get('warp_ops')!.features, [])
  } finally {
    await be.dispose()
  }
})

s.run()
