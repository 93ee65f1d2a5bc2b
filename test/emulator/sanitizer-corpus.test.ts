// No false positives (issue 19): every kernel of the emulator corpus (test/fixtures/reference-cu and
// test/fixtures/emulator/kernels, as corpus.test.ts builds them: nvcc for compute_80 and compute_90, clang 22
// for sm_80) runs with all four checks on and must give the right result with no report.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { basename } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { ownCases, ownSource, type CorpusCase } from '../fixtures/emulator/cases-own.js'
import { referenceCases, referenceSource } from '../fixtures/emulator/cases-reference.js'

const groups: { source: string; cases: CorpusCase[] }[] = [
  { source: referenceSource, cases: referenceCases },
  { source: ownSource, cases: ownCases },
]
/** Cases that make out-of-bounds accesses on purpose (and expect the fault): under memcheck each fault is a
 *  report of its own. */
const deliberateFaults = ['oob_store, null_load']
const requests = corpusConfigs.flatMap((config) => groups.map((g) => ({ source: g.source, config })))
const texts = await compilePtxAll(requests)

requests.forEach(({ source, config }, r) => {
  const group = groups.find((g) => g.source === source)!
  const s = suite<{ k?: KernelRunner; backend?: ReturnType<typeof createEmulatorBackend> }>(`sanitizer, all checks: ${basename(source)}, ${config.label}`, {})
  s.before(async (ctx) => {
    const printed: string[] = []
    ctx.backend = createEmulatorBackend({ check: { mode: 'collect' }, print: (text) => printed.push(text) })
    ctx.k = await KernelRunner.load(ctx.backend, texts[r]!, config.target, `${basename(source)} (${config.label}, checked)`, printed)
  })
  s.after((ctx) => ctx.backend?.dispose())
  for (const c of group.cases) {
    s(`${c.file}: ${c.name}`, async (ctx) => {
      ctx.k!.printed.length = 0
      await c.run(ctx.k!)
      const reports = ctx.backend!.sanitizerReports()
      if (!deliberateFaults.some((d) => c.name.startsWith(d))) return assert.equal(reports.map((x) => x.message), [])
      assert.ok(reports.length > 0 && reports.every((x) => x.kind === 'memory' && x.hazard === 'out-of-bounds'), reports.map((x) => x.message).join('\n'))
    })
  }
  s.run()
})
