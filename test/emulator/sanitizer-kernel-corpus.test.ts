// The sanitizer (issue 19) over the kernel corpus (test/fixtures/kernels): every (case, compiler) pair the
// emulator runs (all but the registry's expected failures, skipped and counted below) runs through
// `loadModule(…, { backend: 'emulator', check: { mode: 'collect' } })` and must still pass its reference; it
// must report nothing, except the bugs seeded on purpose (the registry's sanitizerFindings: the kinds the
// sanitizer found in public code), which must be reported as listed.
//
// clang 22's half is opt-in (KP_SANITIZER_CLANG=1), as the WebGPU corpus's is: the checked runs of both halves
// were about 140 s of CPU on the 2-core CI machine, whose 15-minute limit the suite nears. The suite runs every
// case of nvcc's PTX here, clang's PTX of the same cases unchecked (test/emulator/kernel-corpus.test.ts), and
// the seeded-bug corpus checked on both compilers (test/emulator/sanitizer.test.ts); clang's seeded findings of
// the registry are still checked here (those cases run on both compilers).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { buildCorpusFile, type BuildOutcome } from '../helpers/kernel-corpus-build.js'
import { compilers, runAndCheck, type Compiler } from '../helpers/kernel-corpus.js'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { corpusCases, corpusFiles, expectedFailures, sanitizerFindings } from '../fixtures/kernels/index.js'
import type { SanitizerReport } from '@kernelpack/runtime'

const runClang = process.env.KP_SANITIZER_CLANG === '1'
/** Whether this run checks the pair: every nvcc case; clang's cases that carry a seeded finding, or all with KP_SANITIZER_CLANG=1. */
const checked = (name: string, compiler: Compiler) => compiler === 'nvcc' || runClang || sanitizerFindings.some((f) => f.case === name && f.compilers.includes(compiler))
if (!runClang) console.log("!!! sanitizer over the kernel corpus: clang 22's PTX checked only for its seeded findings (KP_SANITIZER_CLANG=1 checks every case, about 60 s more)")

const builds = new Map<string, BuildOutcome>()
await Promise.all(corpusFiles.flatMap((f) => compilers.map(async (c) => builds.set(`${f.file}|${c}`, await buildCorpusFile(f, c)))))

const hosts = new Map<string, Promise<RuntimeKernelHost>>()
function hostFor(file: string, compiler: Compiler): Promise<RuntimeKernelHost> {
  const key = `${file}|${compiler}`
  let h = hosts.get(key)
  if (!h) {
    const b = builds.get(key)!
    if (!b.ok) throw new Error(`${file} does not build with ${compiler}: ${b.message} (not an expected failure)`)
    h = RuntimeKernelHost.load(b.offload, b.manifest, `${file} (${compiler}, checked)`, { backend: 'emulator', check: { mode: 'collect' } })
    hosts.set(key, h)
  }
  return h
}

const s = suite('sanitizer, all checks: the kernel corpus')
const skipped: string[] = []
for (const compiler of compilers) {
  for (const c of corpusCases) {
    const expected = expectedFailures.find((e) => e.case === c.name && e.compiler === compiler)
    if (expected) { skipped.push(`${c.name} [${compiler}] (${expected.reason})`); continue }
    if (!checked(c.name, compiler)) continue
    const finding = sanitizerFindings.find((f) => f.case === c.name && f.compilers.includes(compiler))
    s(`${c.name} [${compiler}]${finding ? ` (a ${finding.hazards.join('/')} ${finding.kind} seeded on purpose)` : ''}`, async () => {
      const host = await hostFor(c.file, compiler)
      host.mod.sanitizerReports()
      try {
        await runAndCheck(c, host)
      } finally {
        await host.freeAll()
      }
      const reports = host.mod.sanitizerReports()
      if (!finding) { assert.equal(reports.map((r) => r.message), [], `${c.name} [${compiler}]`); return }
      assert.ok(reports.length > 0, `${c.name} [${compiler}]: the listed ${finding.kind} is not reported any more (${finding.evidence})`)
      for (const r of reports) checkFinding(r, finding)
    })
  }
}

function checkFinding(r: SanitizerReport, f: (typeof sanitizerFindings)[number]): void {
  assert.is(r.kind, f.kind, r.message)
  assert.ok(f.hazards.includes(r.hazard), r.message)
  assert.is(r.space, f.space, r.message)
  if (f.variable) assert.ok(r.allocation?.variable?.includes(f.variable), r.message)
  if (r.kind === 'race') assert.not.equal(r.accesses[0]!.thread, r.accesses[1]!.thread, 'two threads')
}

s('the findings name cases of the registry; the skipped pairs are exactly the expected failures', () => {
  for (const f of sanitizerFindings) assert.ok(corpusCases.some((c) => c.name === f.case), `unknown case ${f.case}`)
  assert.is(skipped.length, expectedFailures.length)
  console.log(`  not run under the sanitizer (expected failures of the registry): ${skipped.length} pairs`)
})

s.run()
