// The sanitizer (issue 19) on the seeded-bug corpus (test/fixtures/sanitizer): every .cu file built by nvcc
// and by clang 22 with line information (-lineinfo / -gline-tables-only) through @kernelpack/toolchain, loaded
// with `loadModule(…, { backend: 'emulator', check })`. Each buggy kernel must be reported by the right check,
// with the right classification, naming the `.cu` lines marked `// expect:` (both accesses of a race); its
// fixed twin must be reported clean; in the default mode the first report rejects the launch with a
// SanitizerError.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { buildCudaFile, BuildSession, Pool } from '@kernelpack/toolchain'
import { SanitizerError, type SanitizerReport } from '@kernelpack/runtime'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { fixturesDir, repoRoot, tool } from '../helpers/tools.js'
import { compilers, type Compiler } from '../helpers/kernel-corpus.js'
import { seededBugs, type SeededBug, type SeededFile } from '../fixtures/sanitizer/cases.js'

const dir = join(fixturesDir, 'sanitizer')
const files: SeededFile[] = ['race.cu', 'sync.cu', 'init.cu', 'memory.cu']
const pool = new Pool(2)
const session = new BuildSession()

const builds = new Map<string, Awaited<ReturnType<typeof buildCudaFile>>>()
await Promise.all(files.flatMap((file) => compilers.map(async (compiler) => {
  builds.set(`${file}|${compiler}`, await buildCudaFile(join(dir, file), {
    arch: 'compute_80', compiler: tool(compiler === 'nvcc' ? 'nvcc' : 'clang++'), lineinfo: true,
    cacheDir: join(repoRoot, 'test', '.out', 'sanitizer-cache'), jobs: pool, session,
  }))
})))

/** The lines of `kernel` in `file` marked `// expect: <kind>`. */
function markedLines(file: SeededFile, kernel: string, kind: string): number[] {
  const lines = readFileSync(join(dir, file), 'utf8').split('\n')
  const start = lines.findIndex((l) => l.includes(`__global__ void ${kernel}(`))
  if (start < 0) throw new Error(`${file}: no kernel ${kernel}`)
  const out: number[] = []
  for (let i = start; i < lines.length && (i === start || !lines[i]!.startsWith('extern "C"')); i++) {
    if (lines[i]!.includes(`// expect: ${kind}`)) out.push(i + 1)
  }
  if (!out.length) throw new Error(`${file}: ${kernel} has no line marked // expect: ${kind}`)
  return out
}

async function hostFor(file: SeededFile, compiler: Compiler, mode: 'throw' | 'collect'): Promise<RuntimeKernelHost> {
  const b = builds.get(`${file}|${compiler}`)!
  return RuntimeKernelHost.load(b.offload, b.manifest, `${file} (${compiler})`, { backend: 'emulator', check: { mode } })
}

/** What a report must say about a case: its check, a right classification, the marked `.cu` lines. */
function checkReport(c: SeededBug, r: SanitizerReport, compiler: Compiler): void {
  const where = `${c.name} [${compiler}]: ${r.message}`
  assert.is(r.kind, c.kind, where)
  assert.ok(c.hazards.includes(r.hazard), `${where}\nexpected ${c.hazards.join(' or ')}`)
  const lines = markedLines(c.file, c.marked ?? c.name, c.kind)
  // a race names both accesses; the other checks the instruction that failed
  const named = c.kind === 'race' ? r.accesses : r.accesses.slice(0, 1)
  for (const a of named) {
    assert.ok(a.source, `${where}\nno .cu position (the PTX was built with line information)`)
    assert.is(basename(a.source!.file), c.file, where)
    assert.ok(lines.includes(a.source!.line), `${where}\n${a.kind} at ${c.file}:${a.source!.line}, expected one of lines ${lines.join(', ')}`)
  }
  assert.ok(r.message.startsWith('========= '), 'compute-sanitizer style')
  assert.ok(r.message.includes(`${c.file}:${named[0]!.source!.line}`), `${where}\nthe message names the .cu line`)
  if (r.kind === 'memory') assert.ok(r.allocation, `${where}\nmemcheck names the allocation`)
}

for (const compiler of compilers) {
  const s = suite(`sanitizer: seeded bugs (${compiler}, line information)`)
  for (const c of seededBugs) {
    s(`${c.name}: reported by ${c.kind}check (collect mode)`, async () => {
      const h = await hostFor(c.file, compiler, 'collect')
      h.mod.sanitizerReports()
      let thrown: unknown
      try { await c.run(h, false) } catch (err) { thrown = err }
      const reports = h.mod.sanitizerReports()
      await h.freeAll()
      // memcheck stops even a collecting launch: the access cannot be carried out
      if (c.kind === 'memory') assert.instance(thrown, SanitizerError, `${c.name}: memcheck rejects the launch`)
      else if (thrown) throw thrown
      const mine = reports.filter((r) => r.kind === c.kind)
      assert.ok(mine.length > 0, `${c.name} [${compiler}]: no ${c.kind} report; got ${reports.map((r) => r.message).join('\n') || 'none'}`)
      checkReport(c, mine[0]!, compiler)
    })
    s(`${c.name}: the fixed twin is clean`, async () => {
      const h = await hostFor(c.file, compiler, 'collect')
      h.mod.sanitizerReports()
      await c.run(h, true)
      const reports = h.mod.sanitizerReports()
      await h.freeAll()
      assert.equal(reports.map((r) => r.message), [], `${c.name}_fixed [${compiler}]`)
    })
    s(`${c.name}: the first report rejects the launch (throw mode)`, async () => {
      const h = await hostFor(c.file, compiler, 'throw')
      let thrown: unknown
      try { await c.run(h, false) } catch (err) { thrown = err }
      await h.freeAll()
      assert.instance(thrown, SanitizerError, `${c.name} [${compiler}]: ${String(thrown)}`)
      const e = thrown as SanitizerError
      assert.is(e.name, 'SanitizerError')
      assert.is(e.kind, e.report.kind)
      assert.is(e.message, e.report.message)
      checkReport(c, e.report, compiler)
    })
  }
  s.run()
}
