// The kernel corpus on the emulator (issues 14, 31): kernels written for kernelpack in the shapes real CUDA code
// has (test/fixtures/kernels), built by nvcc (PTX for compute_80, compute_90 where a kernel needs sm_90) and by
// clang 22 through @kernelpack/toolchain, loaded with `loadModule(…, { backend: 'emulator' })` and checked
// against independent TypeScript references. Every (case, compiler) pair must pass, except those listed in
// the registry's expectedFailures, which must fail exactly as listed; the emulator README's figures and its
// feature coverage table are generated from the same registry.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { buildCorpusFile, type BuildOutcome } from '../helpers/kernel-corpus-build.js'
import { compilers, features, runAndCheck, type Compiler, type CorpusCase } from '../helpers/kernel-corpus.js'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { matchReadmeSection } from '../helpers/snapshot.js'
import { corpusCases, corpusFiles, expectedFailures, families } from '../fixtures/kernels/index.js'
import { renderCorpusSection, renderCoverageTable, type PairOutcome } from '../fixtures/kernels/readme.js'

const builds = new Map<string, BuildOutcome>()
await Promise.all(corpusFiles.flatMap((f) => compilers.map(async (c) => builds.set(`${f.file}|${c}`, await buildCorpusFile(f, c)))))

const hosts = new Map<string, Promise<RuntimeKernelHost>>()
function hostFor(file: string, compiler: Compiler): Promise<RuntimeKernelHost> {
  const key = `${file}|${compiler}`
  let h = hosts.get(key)
  if (!h) {
    const b = builds.get(key)!
    if (!b.ok) throw new Error('unreachable: not built')
    h = RuntimeKernelHost.load(b.offload, b.manifest, `${file} (${compiler})`)
    hosts.set(key, h)
  }
  return h
}

/** Builds, loads and runs one pair; a failure comes back as its stage and message. */
async function outcomeOf(c: CorpusCase, compiler: Compiler): Promise<PairOutcome> {
  const b = builds.get(`${c.file}|${compiler}`)
  if (!b) throw new Error(`${c.name}: its file ${c.file} is not in corpusFiles`)
  if (!b.ok) return { case: c.name, compiler, stage: 'build', message: b.message }
  let host: RuntimeKernelHost
  try {
    host = await hostFor(c.file, compiler)
  } catch (err) {
    return { case: c.name, compiler, stage: 'load', message: (err as Error).message }
  }
  try {
    await runAndCheck(c, host)
    return { case: c.name, compiler, stage: 'pass', message: '' }
  } catch (err) {
    const message = (err as Error).message
    return { case: c.name, compiler, stage: message.startsWith('wrong result: ') ? 'wrong' : 'run', message }
  } finally {
    await host.freeAll()
  }
}

const outcomes: PairOutcome[] = []
const s = suite('kernel corpus on the emulator (nvcc and clang 22)')

for (const compiler of compilers) {
  for (const c of corpusCases) {
    const expected = expectedFailures.find((e) => e.case === c.name && e.compiler === compiler)
    s(`${c.name} [${compiler}]${expected ? ` (expected to fail: ${expected.reason})` : ''}`, async () => {
      const o = await outcomeOf(c, compiler)
      outcomes.push(o)
      if (!expected) {
        if (o.stage !== 'pass') assert.unreachable(`${c.file}: ${o.stage} failure: ${o.message}`)
        return
      }
      if (o.stage === 'pass') assert.unreachable(`now passes: remove its entry (${expected.reason}) from the expected failures of its family (test/fixtures/kernels/cases-*.ts) and update the README (KP_UPDATE_SNAPSHOTS=1)`)
      if (o.stage !== expected.stage || !expected.error.test(o.message)) {
        assert.unreachable(`fails differently than listed (${expected.stage}, ${expected.error}): ${o.stage}: ${o.message}`)
      }
    })
  }
}

// The tensor-core cases run on the WebAssembly tier by default (its thread loops gather the fragments in each
// lane's slots); their JavaScript thread loops (the fragments in per-collective arrays) are run here as well.
const tensorCases = corpusCases.filter((c) => c.features.some((f) => f === 'wmma' || f === 'mma' || f === 'ldmatrix'))
s('the tensor-core cases also pass on the JavaScript tier\'s thread loops (codegen: \'js\')', async () => {
  assert.ok(tensorCases.length >= 9, `the tensor-core cases were found (${tensorCases.length})`)
  for (const compiler of compilers) {
    for (const c of tensorCases) {
      if (expectedFailures.some((e) => e.case === c.name && e.compiler === compiler)) continue
      const b = builds.get(`${c.file}|${compiler}`)!
      if (!b.ok) { assert.unreachable(`${c.file} (${compiler}) did not build: ${b.message}`); continue }
      const host = await RuntimeKernelHost.load(b.offload, b.manifest, `${c.file} (${compiler}, js)`, { backend: 'emulator', codegen: 'js' })
      try {
        await runAndCheck(c, host)
      } finally {
        await host.freeAll()
      }
    }
  }
})

s('the expected failures name only cases of the registry, each pair once', () => {
  const names = new Set(corpusCases.map((c) => c.name))
  assert.is(names.size, corpusCases.length, 'case names are unique')
  for (const e of expectedFailures) assert.ok(names.has(e.case), `an expected failure names an unknown case: ${e.case}`)
  const pairs = expectedFailures.map((e) => `${e.case}|${e.compiler}`)
  assert.is(new Set(pairs).size, pairs.length, 'a pair is listed twice')
})

s('every fixture file is used by a case and every case\'s file is registered', () => {
  for (const f of corpusFiles) assert.ok(corpusCases.some((c) => c.file === f.file), `${f.file} has no case`)
})

s('the emulator README states the figure and the failures of this run', () => {
  assert.is(outcomes.length, compilers.length * corpusCases.length, 'every pair ran')
  // KP_CORPUS_REPORT=<file>: every pair's outcome with its full message, for the expected-failure list.
  if (process.env.KP_CORPUS_REPORT) writeFileSync(process.env.KP_CORPUS_REPORT, JSON.stringify(outcomes, null, 1))
  matchReadmeSection('packages/emulator/README.md', 'kernel-corpus', 'test/emulator/kernel-corpus.test.ts', renderCorpusSection(families, expectedFailures))
})

s('the emulator README\'s coverage table is the registry\'s features × cases, and every feature is exercised', () => {
  for (const f of features) assert.ok(corpusCases.some((c) => c.features.includes(f)), `no case of the corpus exercises ${f}: write one`)
  matchReadmeSection('packages/emulator/README.md', 'kernel-corpus-coverage', 'test/emulator/kernel-corpus.test.ts', renderCoverageTable(families, features))
})

s.run()
