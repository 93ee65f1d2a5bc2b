// Warp collectives' subgroup form (issue 26 item 8, emit-collective.ts): on an adapter whose subgroups are
// exactly 32 wide, shfl/vote/activemask/elect/match/redux are also written with subgroupShuffle/subgroupBallot,
// taken when the kernel's start finds every warp to be one subgroup (kp_sg_ok), else the workgroup-memory form.
// SwiftShader's subgroups are 4 wide, so here the translation is asked for as if they were 32 (a translator
// around emit-wgsl that says so), in Node on Dawn over SwiftShader: the WGSL enables subgroups and passes Tint's
// checks (uniformity included), the start's test finds the warps are not subgroups, and every result is the
// emulator's through the workgroup-memory form — a partial warp, inactive lanes and member masks included. The
// subgroup form itself runs here for blocks of at most 4 threads (one partial warp inside one 4-wide subgroup,
// the start's test widened by the test's translator); full warps take it only on a 32-wide adapter (the GPU
// kit's WebGPU section, on NVIDIA's Vulkan driver).
// WGSL translated at build time is written for no adapter in particular: a kernel with warp collectives ships a
// second translation for 32-wide subgroups (subgroups32), which the backend runs where the device has them.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { create } from 'webgpu'
import * as wg from '../../packages/webgpu/src/index.js'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { runUnderDawn } from '../helpers/webgpu.js'
import { decodeForTranslation, SUBGROUPS_32_TARGET } from '../../packages/webgpu/src/from-ptx.js'
import { threadKernel } from '../helpers/thread-kernel.js'
import { checkShflModes, SHFL_CASES, SHFL_MODES, shflModesPtx } from '../fixtures/emulator/shfl-modes.js'
import { WARP_OPS_PTX as PTX, warpOps, warpOpsInputs as inputs } from '../fixtures/webgpu/warp-ops.js'

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

const s = suite('WebGPU: warp collectives\' subgroup form (translated as for 32-wide subgroups; SwiftShader\'s are 4)')

/** The start's test of the subgroup form as emit-kernel.ts writes it, and what `partialWarps` makes of it. */
const SG_TEST = 'kp_sg_size == 32u && kp_sg_id == (kp_lidx & 31u)'
const SG_OK = 'let kp_sg_ok = workgroupUniformLoad(&kp_sg_bad) == 0u;'
/** as32, with the start's test widened to a block that is one partial warp inside one subgroup (kp_nt ≤
 *  subgroup_size, the lanes in order): on SwiftShader, blocks of at most 4 threads then run the subgroup form
 *  itself. A block that falls back records a fault at PTX line 1, so a launch that did not take the form fails. */
const partialWarps: wg.WgslTranslator = {
  name: 'emit-wgsl (subgroups as if 32 wide, a one-subgroup block taking them)',
  async translate(input, target) {
    const m = await as32.translate(input, target)
    for (const k of m.kernels.values()) {
      if (!k.wgsl.includes(SG_TEST) || !k.wgsl.includes(SG_OK)) throw new Error(`${k.name}: the subgroup form's start test is not the one this test widens`)
      k.wgsl = k.wgsl.replace(SG_TEST, `(kp_sg_size == 32u || kp_nt <= kp_sg_size) && kp_sg_id == (kp_lidx & 31u)`)
        .replace(SG_OK, `${SG_OK}\n  if (!kp_sg_ok) { kp_fault_at(1u, 0u, 0u); }`)
    }
    return m
  },
}

s('the subgroup form itself, on SwiftShader\'s 4-wide subgroups: blocks of 1 to 4 threads (one partial warp in one subgroup) give the emulator\'s results, inactive lanes, lanes past the block and member masks included', async () => {
  const be = await wg.createWebGpuBackend({ gpu: create([]), translator: partialWarps })
  const emu = createEmulatorBackend({ workers: 0 })
  try {
    const k = await KernelRunner.load(be, PTX, 'compute_80', 'warp ops (WebGPU, subgroup form)')
    const ke = await KernelRunner.load(emu, PTX, 'compute_80', 'warp ops (emulator)')
    for (const threads of [1, 2, 3, 4]) {
      for (const seed of [7, 8, 9, 10, 11, 12]) {
        const xs = inputs(seed)
        assert.equal([...await warpOps(k, xs, threads)], [...await warpOps(ke, xs, threads)], `${threads} threads, seed ${seed}`)
      }
    }
    // the form was taken: a block of 8 threads (two subgroups) falls back, and its start records the fault
    const fell = await warpOps(k, inputs(7), 8).then(() => undefined, (e: unknown) => e)
    assert.instance(fell, Error, 'a block of 8 threads did not fall back')
    assert.match((fell as Error).message, /line 1\b/)
    // shfl's four modes, every (b, c) case, over 3 and 4 threads: sources past the block among them
    const sk = await KernelRunner.load(be, shflModesPtx, 'compute_80', 'shfl modes (WebGPU, subgroup form)')
    const se = await KernelRunner.load(emu, shflModesPtx, 'compute_80', 'shfl modes (emulator)')
    for (const n of [3, 4]) {
      const vals = Int32Array.from({ length: n }, (_, i) => i * 7 + 1)
      for (const mode of SHFL_MODES) {
        for (const [b, c] of SHFL_CASES) {
          const run = async (r: KernelRunner) => {
            const din = await r.upload(vals), dout = await r.alloc(n * 8)
            await r.launch(`shfl_${mode}`, 1, n, [din, dout, b, c])
            return [...await r.read(dout, Int32Array)]
          }
          assert.equal(await run(sk), await run(se), `shfl.${mode} b=${b} c=0x${c.toString(16)}, ${n} threads`)
        }
      }
    }
  } finally {
    emu.dispose()
    await be.dispose()
  }
})

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

s('not for adapters whose subgroups are not 32 wide, nor for the coarsened variant: no subgroup code', async () => {
  const input = { ptx: PTX, module: decodeForTranslation(PTX, 'warp ops').module, arch: 'compute_80', source: 'warp ops' }
  const four = await wg.emitWgsl.translate(input, { features: new Set(['subgroups']), limits: {}, subgroupMinSize: 4, subgroupMaxSize: 4 })
  assert.not.match(four.kernels.get('warp_ops')!.wgsl, /subgroup/)
  assert.equal(four.kernels.get('warp_ops')!.features, [])
  // 32 wide, but blocks of 1024 threads on a 256-invocation limit: the coarsened variant runs 4 CUDA threads an
  // invocation, so only the plain one has the subgroup form
  const wide = await wg.emitWgsl.translate(input, { features: new Set(['subgroups']), limits: { maxComputeInvocationsPerWorkgroup: 256 }, subgroupMinSize: 32, subgroupMaxSize: 32 })
  const k = wide.kernels.get('warp_ops')!
  assert.match(k.wgsl, /subgroupShuffle/)
  assert.equal(k.features, ['subgroups'])
  assert.ok(k.coarse, 'a coarsened variant')
  assert.not.match(k.coarse!.wgsl, /subgroup/)
})

s('WGSL translated at build time: a kernel with warp collectives ships its subgroup form beside the plain one, taken where subgroups are 32 wide', async () => {
  const first = wg.translatePtxForShipping(PTX, 'warp ops')
  assert.equal(wg.translatePtxForShipping(PTX, 'warp ops').image, first.image, 'the same PTX gives the same image')
  const m = wg.decodeWgslImage(first.image, 'warp ops')
  const plain = m.kernels.get('warp_ops')!
  assert.not.match(plain.wgsl, /subgroup/)
  assert.equal(plain.features, [])
  const variant = plain.subgroups32!
  assert.ok(variant, 'a subgroups32 variant')
  assert.match(variant.wgsl, /^enable subgroups;/m)
  assert.equal(variant.features, ['subgroups'])
  assert.equal(variant.name, 'warp_ops')
  // its coarsened kernel (blocks over 256 threads) is the plain one's, so the image leaves it out of the variant
  assert.ok(plain.coarse, 'a coarsened kernel')
  assert.equal(variant.coarse, undefined)
  // as translated at load for a 32-wide adapter, without the comment lines
  const atLoad = await wg.emitWgsl.translate({ ptx: PTX, module: decodeForTranslation(PTX, 'warp ops').module, arch: 'compute_80', source: 'warp ops' }, SUBGROUPS_32_TARGET)
  assert.equal(variant.wgsl, wg.compactWgsl(atLoad.kernels.get('warp_ops')!.wgsl))
  // a module without warp collectives ships no variant (and is translated once)
  const plainPtx = threadKernel('copy_words', { regs: '.reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<2>;', body: '  mul.wide.u32 %rd3, %r5, 4; add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r6, [%rd4]; add.s64 %rd5, %rd2, %rd3; st.global.u32 [%rd5], %r6;' })
  assert.equal(wg.decodeWgslImage(wg.translatePtxForShipping(plainPtx, 'copy').image, 'copy').kernels.get('copy_words')!.subgroups32, undefined)
  // the choice the backend makes as it decodes the image for its device: the variant for 32-wide subgroups only
  const on32 = wg.decodeWgslImage(first.image, 'warp ops', { features: new Set(['subgroups']), subgroupMinSize: 32, subgroupMaxSize: 32 })
  assert.equal(on32.kernels.get('warp_ops')!.wgsl, variant.wgsl)
  assert.equal(on32.kernels.get('warp_ops')!.coarse, plain.coarse)
  for (const t of [{ min: 4, max: 4 }, { min: 32, max: 64 }, { min: 8, max: 32 }]) {
    assert.equal(wg.decodeWgslImage(first.image, 'warp ops', { features: new Set(['subgroups']), subgroupMinSize: t.min, subgroupMaxSize: t.max }).kernels.get('warp_ops')!.wgsl, plain.wgsl, `${t.min}-${t.max}`)
  }
  assert.equal(wg.decodeWgslImage(first.image, 'warp ops', { features: new Set(), subgroupMinSize: 32, subgroupMaxSize: 32 }).kernels.get('warp_ops')!.wgsl, plain.wgsl, 'no subgroups feature')
  // a variant record without its WGSL is a bad image, named
  const doc = JSON.parse(new TextDecoder().decode(first.image)) as { kernels: Array<Record<string, unknown>> }
  delete (doc.kernels[0]!.subgroups32 as Record<string, unknown>).wgsl
  assert.throws(() => wg.decodeWgslImage(new TextEncoder().encode(JSON.stringify(doc)), 'warp ops.offload'), /warp ops\.offload: the WGSL image has a kernel without its name, WGSL or sizes; rebuild it/)

  // on SwiftShader (4-wide): the image as shipped runs the plain kernel; an image made of the variants runs them
  // (their start's test falls back to workgroup memory here), both with the emulator's results
  const be = await wg.createWebGpuBackend({ gpu: create([]) })
  const emu = createEmulatorBackend({ workers: 0 })
  try {
    const ke = await KernelRunner.load(emu, PTX, 'compute_80', 'warp ops (emulator)')
    const forced = wg.encodeWgslImage(on32)
    for (const [label, bytes] of [['as shipped', first.image], ['its subgroups32 variants', forced]] as const) {
      const k = new KernelRunner(be, await be.loadModule({ kind: 'wgsl', arch: 'wgsl', bytes }, `warp ops (${label})`), PTX, `warp ops (WebGPU, ${label})`)
      for (const seed of [5, 6]) {
        const xs = inputs(seed)
        assert.equal([...await warpOps(k, xs)], [...await warpOps(ke, xs)], `${label}, seed ${seed}`)
      }
    }
  } finally {
    emu.dispose()
    await be.dispose()
  }
})

s.run()
