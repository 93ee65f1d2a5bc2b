// shfl.sync from a source lane that is not in the member mask or not active reads 0, as on NVIDIA GPUs (issue
// 24 item 8): test/fixtures/emulator/shfl-inactive.cu (written here in the shape of cuda-samples' reduce7, whose
// final warp reads lanes outside its ballot mask: NVIDIA/cuda-samples#398), built by nvcc (compute_80, compute_90) and clang 22 (sm_80) with line information, run in thread loops (on
// the calling thread and on 2 workers), in the continuation scheme and through the interpreter; the
// sanitizer's synccheck reports the read as compute-sanitizer does for a shfl.sync with invalid arguments.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { basename } from 'node:path'
import { readFileSync } from 'node:fs'
import { createEmulatorBackend, loadInterpreter, type EmulatorBackendOptions } from '@kernelpack/emulator'
import { SanitizerError } from '@kernelpack/ptx'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { shflInactiveCases, shflInactiveSource, type ShflCase } from '../fixtures/emulator/shfl-inactive.js'

// line information; clang also needs the toolkit's CCCL headers for cooperative_groups.h (as the toolchain's
// clangCcclDir gives them; nvcc adds them itself)
const flags = (compiler: string) => (compiler === 'nvcc' ? ['-lineinfo'] : ['-gline-tables-only', '-isystem', '/usr/local/cuda/include/cccl'])
const groups: Array<{ source: string; cases: ShflCase[] }> = [{ source: shflInactiveSource, cases: shflInactiveCases }]
const texts = await compilePtxAll(corpusConfigs.flatMap((config) => groups.map((g) => ({ source: g.source, config, extraArgs: flags(config.compiler) }))))
const expectLine = readFileSync(shflInactiveSource, 'utf8').split('\n').findIndex((l) => l.includes('// expect: sync')) + 1

const paths: Array<{ name: string; options: () => Promise<EmulatorBackendOptions>; loops: boolean }> = [
  { name: 'thread loops', options: async () => ({ workers: 0 }), loops: true },
  { name: 'thread loops, 2 workers', options: async () => ({ workers: 2 }), loops: true },
  { name: 'continuation scheme', options: async () => ({ workers: 0, threadLoops: false }), loops: false },
  { name: 'interpreter', options: async () => ({ workers: 0, evaluate: await loadInterpreter() }), loops: true },
]

corpusConfigs.forEach((config, r) => {
  const ptx = texts[r * groups.length]!
  for (const path of paths) {
    groups.forEach((g, gi) => {
      const s = suite<{ k?: KernelRunner; dispose?: () => unknown }>(`shfl.sync from inactive lanes: ${basename(g.source)}, ${config.label}, ${path.name}`, {})
      s.before(async (ctx) => {
        const backend = createEmulatorBackend(await path.options())
        ctx.dispose = () => backend.dispose()
        ctx.k = await KernelRunner.load(backend, texts[r * groups.length + gi]!, config.target, `${basename(g.source)} (${config.label}, ${path.name})`)
      })
      s.after(async (ctx) => { await ctx.dispose?.() })
      for (const c of g.cases) {
        s(c.name, async (ctx) => {
          const k = ctx.k!
          // the path named is the one the kernels take
          const inspect = (k.module as unknown as { inspect(name: string): string }).inspect
          for (const name of c.kernels) assert.match(inspect(k.entry(name)), path.loops ? /: thread loops/ : /: continuation scheme/, name)
          await c.run(k)
        })
      }
      s.run()
    })
  }

  const san = suite(`shfl.sync from inactive lanes: the sanitizer (${config.label})`)
  const load = async (mode: 'throw' | 'collect') => {
    const backend = createEmulatorBackend({ check: { mode } })
    return { backend, k: await KernelRunner.load(backend, ptx, config.target, `${basename(shflInactiveSource)} (${config.label}, checked)`) }
  }
  const launch = async (k: KernelRunner, kernel: string) => {
    const x = Float32Array.from({ length: 256 }, (_, i) => (i % 7) - 3)
    await k.launch(kernel, 1, 256, [await k.upload(x), await k.alloc(4)])
  }

  san('reduce7\'s final warp: synccheck reports the read of lane 16 outside the ballot mask as Invalid arguments, at the .cu line', async () => {
    const { backend, k } = await load('collect')
    await launch(k, 'final_warp_sum')
    const reports = backend.sanitizerReports()
    backend.dispose()
    // one report per shfl instruction (clang unrolls the loop: five), each naming the first lane that read 0
    assert.ok(reports.length >= 1, 'no report')
    for (const r of reports) {
      assert.is(r.kind, 'sync', r.message)
      assert.is(r.hazard, 'invalid-arguments', r.message)
      assert.is(r.accesses[0]!.source?.line, expectLine, r.message)
    }
    const lines = reports[0]!.message.split('\n')
    assert.is(lines[0], '========= Barrier error detected. Invalid arguments')
    assert.match(lines[1]!, new RegExp(`^=========     at PTX line \\d+ \`shfl\\.sync\\.down\\.b32 [^\`]*\` in \\S*shfl-inactive\\.cu:${expectLine}\\b`))
    assert.is(lines[2], '=========     by thread (0,0,0) in block (0,0,0)')
    assert.is(lines[3], '=========     shuffle source lane 16, thread (16,0,0), is not in the member mask 0x000000ff: undefined in the PTX ISA; the emulator reads 0, as NVIDIA GPUs do')
    assert.is(lines[4], '=========     in kernel final_warp_sum')
  })

  san('in throw mode the report rejects the launch; the fixed kernel is clean', async () => {
    const { backend, k } = await load('throw')
    let thrown: unknown
    try { await launch(k, 'final_warp_sum') } catch (err) { thrown = err }
    assert.instance(thrown, SanitizerError)
    assert.is((thrown as SanitizerError).report.hazard, 'invalid-arguments')
    await launch(k, 'final_warp_sum_fixed')
    backend.dispose()
  })

  san('a full member mask over lanes that skipped the shuffle: the lane that did not arrive is named', async () => {
    const { backend, k } = await load('collect')
    const vals = await k.upload(new Int32Array(32)), out = await k.alloc(32 * 4)
    await k.launch('shfl_partial_down', 1, 32, [vals, out, out, 8, 0xffffffff, 4, 0x1f])
    const messages = backend.sanitizerReports().map((x) => x.message)
    backend.dispose()
    // the mask names lanes that never come (synccheck's Divergent thread(s) in warp), and lanes 4–7 read them
    assert.ok(messages.some((m) => m.includes('Divergent thread(s) in warp')), messages.join('\n'))
    assert.ok(messages.some((m) => m.includes('Invalid arguments') && m.includes('shuffle source lane 8, thread (8,0,0), exited')), messages.join('\n'))
  })
  san.run()
})
