// The emulator corpus (issue 6, "Must show"): every kernel of the reference corpus (../shared/reference/cu
// minus bad.cu, copied to test/fixtures/reference-cu) and the emulator's own kernels
// (test/fixtures/emulator/kernels), compiled to PTX by nvcc for compute_80 and compute_90 and by clang 22 for
// sm_80, executed on the emulator backend and compared with plain TypeScript references. Each group is one
// translation unit (corpus-reference.cu, corpus-own.cu) compiled once per configuration, two compilers at a
// time, cached in test/.out/ptx-cache; each suite loads its module once and runs every case on it.
import { suite } from 'uvu'
import { basename } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { readPtxInterface } from '@kernelpack/ptx'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { ownCases, ownSource, type CorpusCase } from '../fixtures/emulator/cases-own.js'
import { referenceCases, referenceSource } from '../fixtures/emulator/cases-reference.js'

const groups: { source: string; cases: CorpusCase[] }[] = [
  { source: referenceSource, cases: referenceCases },
  { source: ownSource, cases: ownCases },
]
const requests = corpusConfigs.flatMap((config) => groups.map((g) => ({ source: g.source, config })))
const texts = await compilePtxAll(requests)

/** Cases that fail today because of an emulator defect, keyed `<config label>|<case name prefix>`, with the
 *  defect and the error it must fail with. Such a case still runs and passes only when it fails that way;
 *  once the emulator is fixed it fails with "now passes", and the entry has to go. */
const paramOffset = /misaligned parameter access/
// Cases that must fail with a named error until an emulator defect is fixed (none at present; the clang
// `.ptr .align` parameter-offset defect was fixed in parse.ts).
const knownEmulatorGaps: Record<string, { defect: string; error: RegExp }> = {}

requests.forEach(({ source, config }, r) => {
  const ptx = texts[r]!
  const group = groups.find((g) => g.source === source)!
  const s = suite<{ k?: KernelRunner; dispose?: () => unknown }>(`corpus: ${basename(source)}, ${config.label}`, {})

  s.before(async (ctx) => {
    const printed: string[] = []
    // on 2 worker threads (issue 13: the corpus passes with 1 worker in corpus-runtime.test.ts, with 2 here)
    const backend = createEmulatorBackend({ workers: 2, print: (text) => printed.push(text) })
    ctx.dispose = () => backend.dispose()
    ctx.k = await KernelRunner.load(backend, ptx, config.target, `${basename(source)} (${config.label})`, printed)
  })
  s.after(async (ctx) => {
    await ctx.dispose?.()
  })

  let gapsRan = 0
  for (const c of group.cases) {
    const gap = Object.entries(knownEmulatorGaps).find(([key]) => {
      const [label, prefix] = key.split('|') as [string, string]
      return label === config.label && c.name.startsWith(prefix)
    })
    s(`${c.file}: ${c.name}${gap ? ' [known emulator gap]' : ''}`, async (ctx) => {
      ctx.k!.printed.length = 0
      if (!gap) return c.run(ctx.k!)
      gapsRan++
      let passed = false
      try {
        await c.run(ctx.k!)
        passed = true
      } catch (err) {
        const message = (err as Error).message
        if (!gap[1].error.test(message)) throw new Error(`known emulator gap '${gap[0]}' failed differently than expected (${gap[1].error}): ${message}`)
        console.log(`  known emulator gap (${config.label}, ${c.name}): ${gap[1].defect}\n    fails with: ${message.split('\n')[0]}`)
      }
      if (passed) throw new Error(`known emulator gap '${gap[0]}' now passes: remove it from knownEmulatorGaps`)
    })
  }

  s('every .entry was launched', (ctx) => {
    const missing = readPtxInterface(ptx).kernels.map((k) => k.name).filter((name) => !ctx.k!.launched.has(name))
    // A case that stops at a known gap cannot reach its later kernels; those are named but not failed on.
    if (missing.length && gapsRan) console.log(`  not reached because of known gaps (${config.label}): ${missing.join(', ')}`)
    else if (missing.length) throw new Error(`kernels never launched by the corpus: ${missing.join(', ')}`)
  })

  s.run()
})
