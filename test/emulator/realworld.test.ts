// The real-world corpus on the emulator (issue 14): public kernels nobody here wrote (test/fixtures/realworld),
// built by nvcc (PTX for compute_80, compute_90 where the kernel needs sm_90) and by clang 22 through
// @kernelpack/toolchain, loaded with `loadModule(…, { backend: 'emulator' })` and checked against independent
// TypeScript references. Every (case, compiler) pair must pass, except those listed in expected-failures.ts,
// which must fail exactly as listed; the emulator README's figure is generated from the same list.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { buildRealworld, type BuildOutcome } from '../helpers/realworld-build.js'
import { compilers, runAndCheck, type Compiler, type RealworldCase } from '../helpers/realworld.js'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { matchReadmeSection } from '../helpers/snapshot.js'
import { expectedFailures, realworldCases, realworldFiles } from '../fixtures/realworld/index.js'
import { renderRealworldSection, type PairOutcome } from '../fixtures/realworld/readme.js'

const builds = new Map<string, BuildOutcome>()
await Promise.all(realworldFiles.flatMap((f) => compilers.map(async (c) => builds.set(`${f.file}|${c}`, await buildRealworld(f, c)))))

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
async function outcomeOf(c: RealworldCase, compiler: Compiler): Promise<PairOutcome> {
  const b = builds.get(`${c.file}|${compiler}`)
  if (!b) throw new Error(`${c.name}: its file ${c.file} is not in realworldFiles`)
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
const s = suite('real-world corpus: public kernels on the emulator (nvcc and clang 22)')

for (const compiler of compilers) {
  for (const c of realworldCases) {
    const expected = expectedFailures.find((e) => e.case === c.name && e.compiler === compiler)
    s(`${c.name} [${compiler}]${expected ? ` (expected to fail: ${expected.reason})` : ''}`, async () => {
      const o = await outcomeOf(c, compiler)
      outcomes.push(o)
      if (!expected) {
        if (o.stage !== 'pass') assert.unreachable(`${c.file}: ${o.stage} failure: ${o.message}`)
        return
      }
      if (o.stage === 'pass') assert.unreachable(`now passes: remove its entry (${expected.reason}) from test/fixtures/realworld/expected-failures.ts and update the README (KP_UPDATE_SNAPSHOTS=1)`)
      if (o.stage !== expected.stage || !expected.error.test(o.message)) {
        assert.unreachable(`fails differently than listed (${expected.stage}, ${expected.error}): ${o.stage}: ${o.message}`)
      }
    })
  }
}

s('expected-failures.ts lists only cases of the registry, each pair once', () => {
  const names = new Set(realworldCases.map((c) => c.name))
  assert.is(names.size, realworldCases.length, 'case names are unique')
  for (const e of expectedFailures) assert.ok(names.has(e.case), `expected-failures.ts names an unknown case: ${e.case}`)
  const pairs = expectedFailures.map((e) => `${e.case}|${e.compiler}`)
  assert.is(new Set(pairs).size, pairs.length, 'a pair is listed twice')
})

s('every fixture file is used by a case and every case\'s file is registered', () => {
  for (const f of realworldFiles) assert.ok(realworldCases.some((c) => c.file === f.file), `${f.file} has no case`)
})

s('the emulator README states the figure and the failures of this run', () => {
  assert.is(outcomes.length, compilers.length * realworldCases.length, 'every pair ran')
  // KP_REALWORLD_REPORT=<file>: every pair's outcome with its full message, for the expected-failure list.
  if (process.env.KP_REALWORLD_REPORT) writeFileSync(process.env.KP_REALWORLD_REPORT, JSON.stringify(outcomes, null, 1))
  matchReadmeSection('packages/emulator/README.md', 'realworld-corpus', 'test/emulator/realworld.test.ts', renderRealworldSection(realworldCases, realworldFiles, expectedFailures))
})

s.run()
