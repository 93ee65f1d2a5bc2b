// The kernel corpus on WebGPU in headless chromium (issues 15, 31): the kernels of test/fixtures/kernels,
// built by nvcc and clang 22 exactly as the emulator's run builds them (test/emulator/kernel-corpus.test.ts),
// translated by emit-wgsl and run on the page's adapter (SwiftShader). Each
// case is checked against the same independent TypeScript reference within the same tolerance as on the
// emulator (integers exact), or within the wider WGSL bound expected-webgpu.ts states for it; the emulator
// passes the same checks, so the two agree within those bounds. Every (case, compiler) pair must pass except
// those listed in test/fixtures/kernels/expected-webgpu.ts, which must fail exactly as listed (the kernels
// emit-wgsl refuses, with their reasons), so the list can only shrink; packages/webgpu/README.md states the
// figure generated from it.
//
// Time goes to SwiftShader compiling pipelines (a few seconds for the large kernels), not to running them,
// so each compiler's run has one browser and one page (one device), loads each module once, and the two runs
// go on side by side. A watchdog per case turns a pipeline SwiftShader never finishes, a lost device or a
// crashed browser into that case's outcome (stage `lost`) and restarts that browser for the next case,
// instead of ending the run.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { createModule } from '@kernelpack/runtime'
import { buildCorpusFile, type BuildOutcome } from '../helpers/kernel-corpus-build.js'
import { compilers, runAndCheck, type Bounded, type Compiler, type Expected, type CorpusCase } from '../helpers/kernel-corpus.js'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { matchReadmeSection } from '../helpers/snapshot.js'
import { startWebGpuPages, type PageBackend, type WebGpuPages } from '../helpers/webgpu-page.js'
import { corpusCases, corpusFiles } from '../fixtures/kernels/index.js'
import { expectedOnWebGpu, renderWebGpuFigure, webgpuTolerance, type WebGpuOutcome } from '../fixtures/kernels/expected-webgpu.js'

/** The watchdog: a case that runs must finish within this (SwiftShader's largest compile here takes ~6 s on
 *  a loaded 2-core machine); a case listed as `lost` gets the short fuse, so its expected loss costs little. */
const FUSE_MS = 120_000
const LISTED_LOST_FUSE_MS = 5_000
/** How a lost device or a gone browser reads in the errors that reach the test. */
const LOST = /the WebGPU device was lost|Target page, context or browser has been closed|Browser has been closed|Instance reference no longer exists/

// Both compilers' halves run (KP_WEBGPU_CLANG=0 leaves clang 22's out, saying so, for a quicker local run).
// SwiftShader's pipeline compiles of both halves were the suite's largest cost, about 250 s of CPU on the 2-core
// CI machine, and clang's half was opt-in until runs of exact fma sites compiled once per run
// (packages/webgpu/src/fma-batch.ts): both halves took about 210 s of CPU and 120 s of wall time alone, and on
// 2026-11-30's slower host 330 s and 190 s before the directed-rounding f32 and the software f64 routines and the
// small helpers were written without branches (wgsl-lib.ts), 200 s and 110 s after.
const runClang = process.env.KP_WEBGPU_CLANG !== '0'
const webgpuCompilers: readonly Compiler[] = runClang ? compilers : compilers.filter((c) => c === 'nvcc')
if (!runClang) console.log('!!! kernel corpus on WebGPU: clang 22\'s PTX not run (KP_WEBGPU_CLANG=0)')

const builds = new Map<string, BuildOutcome>()
await Promise.all(corpusFiles.flatMap((f) => webgpuCompilers.map(async (c) => builds.set(`${f.file}|${c}`, await buildCorpusFile(f, c)))))

function sleep(ms: number): Promise<void> {
  return new Promise((ok) => setTimeout(ok, ms).unref())
}

class LoadError extends Error {}

/** Each pair's milliseconds from its start to its outcome (KP_CORPUS_REPORT writes them beside the outcomes; a
 *  pair that does not build has none). */
const timings = new Map<string, number>()

/** One compiler's run: its own browser and one page (one device), started again after a loss; the module of
 *  the fixture its cases are on (cases of a file run one after another), unloaded when they move on. */
class Session {
  private pages: WebGpuPages | undefined
  private page: PageBackend | undefined
  private current: { key: string; host: RuntimeKernelHost } | undefined
  constructor(readonly compiler: Compiler) {}

  async restart(): Promise<void> {
    const p = this.pages
    this.pages = undefined
    this.page = undefined
    this.current = undefined
    // a browser whose GPU process is stuck in a compile may not answer: close what can be closed, then go on
    if (p) await Promise.race([p.close().catch(() => {}), sleep(10_000)])
  }

  private async hostFor(file: string): Promise<RuntimeKernelHost> {
    const key = `${file}|${this.compiler}`
    if (this.current?.key === key) return this.current.host
    if (this.current) await this.current.host.mod.unload().catch(() => {})
    this.current = undefined
    const b = builds.get(key)!
    if (!b.ok) throw new Error('unreachable: not built')
    this.pages ??= await startWebGpuPages()
    const page = (this.page ??= await this.pages.open({ partial: true }))
    try {
      const mod = await createModule(page, b.offload, b.manifest, { sourceName: file, reason: 'test' })
      this.current = { key, host: RuntimeKernelHost.fromModule(mod, page, b.manifest, `${file} (${this.compiler}, WebGPU)`) }
    } catch (err) {
      throw Object.assign(new LoadError((err as Error).message), { cause: err })
    }
    return this.current.host
  }

  /** Runs one case under the watchdog; every failure comes back as its stage and message. */
  async outcomeOf(c: CorpusCase, fuseMs: number): Promise<WebGpuOutcome> {
    const compiler = this.compiler
    const b = builds.get(`${c.file}|${compiler}`)
    if (!b) throw new Error(`${c.name}: its file ${c.file} is not in corpusFiles`)
    if (!b.ok) return { case: c.name, compiler, stage: 'build', message: b.message }
    const t0 = performance.now()
    const work = (async () => {
      const host = await this.hostFor(c.file)
      try {
        await runAndCheck(onWebGpu(c), host)
      } finally {
        await host.freeAll().catch(() => {})
      }
    })()
    const r = await Promise.race([work.then(() => undefined, (e: Error) => e), sleep(fuseMs).then(() => 'timeout' as const)])
    timings.set(`${c.name}|${compiler}`, Math.round(performance.now() - t0))
    if (r === 'timeout') {
      await this.restart()
      return { case: c.name, compiler, stage: 'lost', message: `no result within ${fuseMs / 1000} s (the watchdog restarted the browser)` }
    }
    if (!r) return { case: c.name, compiler, stage: 'pass', message: '' }
    if (LOST.test(r.message)) {
      await this.restart()
      return { case: c.name, compiler, stage: 'lost', message: r.message }
    }
    if (r instanceof LoadError) return { case: c.name, compiler, stage: 'load', message: r.message }
    const stage = r.name === 'CannotTranslateError' ? 'refused' : r.message.startsWith('wrong result: ') ? 'wrong' : 'run'
    return { case: c.name, compiler, stage, message: r.message }
  }
}

/** The case with the wider WebGPU bound of expected-webgpu.ts, where it states one. */
function onWebGpu(c: CorpusCase): CorpusCase {
  const w = webgpuTolerance[c.name]
  if (!w) return c
  const t = c.tolerance
  const scale = (x?: number) => (x === undefined ? undefined : x * w.scale)
  return {
    ...c,
    tolerance: { abs: scale(t.abs), rel: scale(t.rel), ulps: scale(t.ulps), why: w.why },
    reference(input) {
      const e = c.reference(input)
      const out: Expected = {}
      for (const [k, v] of Object.entries(e)) {
        const b = v as Bounded
        out[k] = typeof v === 'object' && v !== null && 'bound' in v ? { values: b.values, bound: Array.from(b.bound, (x) => x * w.scale) } : v
      }
      return out
    },
  }
}

const expectedOf = (c: CorpusCase, compiler: Compiler) => expectedOnWebGpu.find((e) => e.case === c.name && e.compiler === compiler)
/** The cases file by file, so each module is loaded once. */
const ordered = corpusFiles.flatMap((f) => corpusCases.filter((x) => x.file === f.file))

// The compilers' runs go on side by side from the start, each in its own browser (pipeline compiles are
// single-threaded in SwiftShader, so two streams use both cores when the machine has them); the tests below
// report their outcomes in order. Each run is a chain of cases; outcomeOf never throws for a case.
const results = new Map<string, Promise<WebGpuOutcome>>()
const sessions = webgpuCompilers.map((compiler) => {
  const session = new Session(compiler)
  let chain: Promise<unknown> = Promise.resolve()
  for (const c of ordered) {
    const r = chain.then(() => session.outcomeOf(c, expectedOf(c, compiler)?.stage === 'lost' ? LISTED_LOST_FUSE_MS : FUSE_MS))
    results.set(`${c.name}|${compiler}`, r)
    chain = r
  }
  return { session, done: chain }
})

const outcomes: WebGpuOutcome[] = []
const s = suite(`kernel corpus on WebGPU (chromium, SwiftShader): ${runClang ? 'nvcc and clang 22' : 'nvcc (clang 22 left out: KP_WEBGPU_CLANG=0)'}`)

for (const compiler of webgpuCompilers) {
  for (const c of ordered) {
    const expected = expectedOf(c, compiler)
    s(`${c.name} [${compiler}]${expected ? ` (expected: ${expected.stage}, ${expected.reason})` : ''}`, async () => {
      const o = await results.get(`${c.name}|${compiler}`)!
      outcomes.push(o)
      if (!expected) {
        if (o.stage !== 'pass') assert.unreachable(`${c.file}: ${o.stage}: ${o.message}`)
        return
      }
      if (o.stage === 'pass') assert.unreachable(`now passes on WebGPU: remove its entry (${expected.reason}) from test/fixtures/kernels/expected-webgpu.ts and update the figure (KP_UPDATE_SNAPSHOTS=1)`)
      if (o.stage !== expected.stage || !expected.error.test(o.message)) assert.unreachable(`fails differently than listed (${expected.stage}, ${expected.error}): ${o.stage}: ${o.message}`)
    })
  }
}

s('expected-webgpu.ts names only cases of the registry, each pair once', () => {
  const names = new Set(corpusCases.map((c) => c.name))
  for (const e of expectedOnWebGpu) assert.ok(names.has(e.case), `expected-webgpu.ts names an unknown case: ${e.case}`)
  for (const k of Object.keys(webgpuTolerance)) assert.ok(names.has(k), `webgpuTolerance names an unknown case: ${k}`)
  const pairs = expectedOnWebGpu.map((e) => `${e.case}|${e.compiler}`)
  assert.is(new Set(pairs).size, pairs.length, 'a pair is listed twice')
})

s('the webgpu README states the figure and the refusals of this run', async () => {
  await Promise.all(sessions.map(async (x) => { await x.done; await x.session.restart() }))
  assert.is(outcomes.length, webgpuCompilers.length * corpusCases.length, 'every pair ran')
  // KP_CORPUS_REPORT=<file>: every pair's outcome with its full message, for the expected list.
  if (process.env.KP_CORPUS_REPORT) writeFileSync(process.env.KP_CORPUS_REPORT, JSON.stringify(outcomes.map((o) => ({ ...o, ms: timings.get(`${o.case}|${o.compiler}`) })), null, 1))
  matchReadmeSection('packages/webgpu/README.md', 'kernel-corpus-webgpu', 'test/webgpu/kernel-corpus.test.ts', renderWebGpuFigure(corpusCases, expectedOnWebGpu))
})

s.run()
