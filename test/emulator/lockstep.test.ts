// Warps that behave like warps (issue 33): the implicit warp-synchronous kernels of
// test/fixtures/emulator/lockstep.cu — the shared-memory reduction's last warp unrolled over volatile memory
// (Harris's "unroll the last warp", "completely unrolled" and "multiple elements per thread" steps, written
// here), a warp scan over volatile memory, a neighbour read, one element stored by every lane — built by nvcc
// (compute_80) and clang 22 (sm_80), give what a GPU's converged warps give on both tiers of the emulator,
// on the calling thread and on 2 workers; `inspect` names their lockstep accesses, and a kernel whose lanes
// keep to their own elements, and the bench's six kernels, have none (they keep their thread loops). The
// sanitizer still reports the warp-level hazard; with thread loops off (the continuation scheme) the lanes
// run one at a time and the reduction comes out as it did before lockstep.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { createEmulatorBackend, type EmulatorBackendOptions } from '@kernelpack/emulator'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { fixturesDir } from '../helpers/tools.js'
import { lockstepCases, lockstepSource } from '../fixtures/emulator/lockstep.js'

const configs = corpusConfigs.filter((c) => c.label !== 'nvcc compute_90')
const flags = (compiler: string) => (compiler === 'nvcc' ? ['-lineinfo'] : ['-gline-tables-only'])
const benchSources = ['shared.cu', 'warp.cu', 'misc.cu'].map((f) => join(fixturesDir, 'emulator', 'kernels', f))
const texts = await compilePtxAll([
  ...configs.map((config) => ({ source: lockstepSource, config, extraArgs: flags(config.compiler) })),
  ...benchSources.map((source) => ({ source, config: corpusConfigs[0]! })),
])

const paths: Array<{ name: string; options: EmulatorBackendOptions; tier: RegExp }> = [
  { name: 'JavaScript', options: { workers: 0, codegen: 'js' }, tier: /tier: JavaScript/ },
  { name: 'JavaScript, 2 workers', options: { workers: 2, codegen: 'js' }, tier: /tier: JavaScript/ },
  { name: 'WebAssembly', options: { workers: 0, codegen: 'wasm' }, tier: /tier: WebAssembly/ },
  { name: 'WebAssembly, 2 workers', options: { workers: 2, codegen: 'wasm' }, tier: /tier: WebAssembly/ },
]
const LOCKSTEP = /\n {2}lockstep: lanes of a warp run these accesses in lockstep .*: PTX lines? \d+/
const inspectOf = (k: KernelRunner) => (k.module as unknown as { inspect(name: string): string }).inspect

configs.forEach((config, r) => {
  for (const path of paths) {
    const s = suite<{ k?: KernelRunner; dispose?: () => unknown }>(`lockstep warps: lockstep.cu, ${config.label}, ${path.name}`, {})
    s.before(async (ctx) => {
      const backend = createEmulatorBackend(path.options)
      ctx.dispose = () => backend.dispose()
      ctx.k = await KernelRunner.load(backend, texts[r]!, config.target, `lockstep.cu (${config.label}, ${path.name})`)
    })
    s.after(async (ctx) => { await ctx.dispose?.() })
    for (const c of lockstepCases) {
      s(c.name, async (ctx) => {
        const k = ctx.k!
        const text = inspectOf(k)(k.entry(c.kernel))
        assert.match(text, /: thread loops/, text)
        assert.match(text, path.tier, text)
        if (c.talks) assert.match(text, LOCKSTEP, text)
        else assert.not.match(text, /lockstep/, text)
        await c.run(k)
      })
    }
    s.run()
  }
})

const plans = suite('lockstep warps: the plan')

plans('the bench\'s six kernels have no lockstep point (their lanes keep to their own elements)', async () => {
  const backend = createEmulatorBackend({ workers: 0 })
  try {
    const kernels: Record<string, string[]> = { 'shared.cu': ['reduce_sum_shared', 'matmul_tile16', 'scan_block'], 'warp.cu': ['warp_reduce_down', 'layernorm_rows'], 'misc.cu': ['vec_add'] }
    for (const [i, source] of benchSources.entries()) {
      const k = await KernelRunner.load(backend, texts[configs.length + i]!, corpusConfigs[0]!.target, source)
      for (const name of kernels[source.split('/').pop()!]!) {
        const text = inspectOf(k)(k.entry(name))
        assert.not.match(text, /lockstep/, text)
      }
    }
  } finally {
    backend.dispose()
  }
})

plans('inspect names the accesses that talk and why (nvcc: the neighbour read)', async () => {
  const backend = createEmulatorBackend({ workers: 0 })
  try {
    const k = await KernelRunner.load(backend, texts[0]!, configs[0]!.target, 'lockstep.cu')
    const text = inspectOf(k)(k.entry('neighbour_read'))
    assert.match(text, /lockstep: .*PTX lines \d+ \d+\n {4}e\.g\. line \d+ \(`st\.shared\.u32 [^`]*`\) and line \d+ \(`ld\.shared\.u32 [^`]*`\): addresses whose distance differs from lane to lane/, text)
    assert.match(text, /lockstep step: loop over the warp's lanes/, text)
  } finally {
    backend.dispose()
  }
})

plans('with thread loops off, lanes run one at a time: the reduction sums as lanes in order would (issue 33\'s figures)', async () => {
  const backend = createEmulatorBackend({ workers: 0, threadLoops: false })
  try {
    const k = await KernelRunner.load(backend, texts[0]!, configs[0]!.target, 'lockstep.cu')
    const text = inspectOf(k)(k.entry('reduce_unroll_last'))
    assert.match(text, /continuation scheme/, text)
    const v = Int32Array.from({ length: 1024 }, (_, i) => 1 + ((i * 5 + 3) % 7))
    const out = await k.alloc(16)
    await k.launch('reduce_unroll_last', 4, 128, [await k.upload(v), out, 1024], 512)
    const got = await k.read(out, Int32Array)
    const want = [0, 1, 2, 3].map((b) => v.slice(b * 256, b * 256 + 256).reduce((a, x) => a + x, 0))
    assert.ok(got.every((x, b) => x < want[b]!), `lanes in order lose the neighbours' partial sums: ${[...got]} against ${want}`)
  } finally {
    backend.dispose()
  }
})

plans('the sanitizer still reports the warp-level hazard of the unrolled last warp', async () => {
  for (const [r, config] of configs.entries()) {
    const backend = createEmulatorBackend({ check: { mode: 'collect' } })
    try {
      const k = await KernelRunner.load(backend, texts[r]!, config.target, `lockstep.cu (${config.label}, checked)`)
      const v = Int32Array.from({ length: 512 }, (_, i) => 1 + (i % 7))
      await k.launch('reduce_unroll_last', 2, 128, [await k.upload(v), await k.alloc(8), 512], 512)
      const reports = backend.sanitizerReports()
      assert.ok(reports.length > 0, `${config.label}: no report`)
      const warp = reports.filter((x) => x.kind === 'race' && x.message.includes('Warning: (Warp Level Programming)'))
      assert.ok(warp.length > 0, `${config.label}: ${reports.map((x) => x.message).join('\n')}`)
      assert.match(warp[0]!.message, /lockstep\.cu:1[0-9]\b/, warp[0]!.message)
    } finally {
      backend.dispose()
    }
  }
})

plans.run()
