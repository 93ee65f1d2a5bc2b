// The emulator corpus on WebGPU in headless chromium (issue 15, "Must show"): every kernel of
// test/fixtures/emulator, compiled by nvcc (compute_80, compute_90) and clang 22 (sm_80), translated by
// emit-wgsl and run on the page's adapter (SwiftShader) beside the emulator in Node: each read compares
// WebGPU's data with the emulator's (integers exact, f32 within the case's stated tolerance,
// corpus-expectations.ts), and the case's own check against its TypeScript reference runs on top. The
// kernels that do not translate are asserted exactly, with their reasons, so the list can only shrink.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { basename } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { readableName, readPtxInterface } from '@kernelpack/ptx'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { DiffHost } from '../helpers/diff-host.js'
import { startWebGpuPages, type PageBackend } from '../helpers/webgpu-page.js'
import { ownCases, ownSource, type CorpusCase } from '../fixtures/emulator/cases-own.js'
import { referenceCases, referenceSource } from '../fixtures/emulator/cases-reference.js'
import { differs, onceForNvcc, orderDependent, refused as expectedRefused, tolerance, withinBounds, type Config } from '../fixtures/webgpu/corpus-expectations.js'

const groups: { source: string; cases: CorpusCase[] }[] = [
  { source: referenceSource, cases: referenceCases },
  { source: ownSource, cases: ownCases },
]
// (nvcc's compute_90 PTX of the reference group differs from its compute_80 PTX in the .target line only, so
// that pair runs once, to keep the suite's time; the own group's differs in its bf16 arithmetic, which sm_90
// has as add/mul/cvt.bf16)
const requests = corpusConfigs.flatMap((config) => groups
  .filter((g) => !(config.label === 'nvcc compute_90' && g.source === referenceSource))
  .map((g) => ({ source: g.source, config })))
const texts = await compilePtxAll(requests)
const pages = await startWebGpuPages()

requests.forEach(({ source, config }, r) => {
  const ptx = texts[r]!
  const label = config.label as Config
  const group = groups.find((g) => g.source === source)!
  const entries = readPtxInterface(ptx).kernels.map((k) => k.name)
  // (kernels run once for nvcc, on compute_80's PTX, where compute_90's is the same text: onceForNvcc)
  const nvcc80 = label === 'nvcc compute_90' ? texts[requests.findIndex((q) => q.source === source && q.config.label === 'nvcc compute_80')] : undefined
  const body = (text: string, name: string) => {
    const at = text.indexOf(`.entry ${name}(`)
    if (at < 0) return undefined
    const end = text.indexOf('\n.visible', at + 1)
    return text.slice(at, end < 0 ? undefined : end)
  }
  const ranOnCompute80 = new Set(nvcc80 === undefined ? [] : entries.filter((n) => onceForNvcc.some((k) => n.includes(k))))
  const s = suite<{ host?: DiffHost; gpu?: PageBackend }>(`WebGPU corpus: ${basename(source)}, ${label}`, {})

  s.before(async (ctx) => {
    // device printf: the emulator's text, and each read compares WebGPU's with it (DiffHost)
    const printed: string[] = []
    const emu = await KernelRunner.load(createEmulatorBackend({ print: (t) => { printed.push(t) } }), ptx, config.target, `${basename(source)} (${label}, emulator)`, printed)
    ctx.gpu = await pages.open({ partial: true })
    const gpu = await KernelRunner.load(ctx.gpu, ptx, config.target, `${basename(source)} (${label}, WebGPU)`)
    const backend = ctx.gpu
    ctx.host = new DiffHost(emu, Object.assign(gpu, { synchronize: () => backend.synchronize() }), `${basename(source)} (${label})`, () => backend.printed())
  })
  s.after(async (ctx) => {
    await ctx.gpu?.page.close()
    if (r === requests.length - 1) await pages.close()
  })

  s('the kernels emit-wgsl refuses are exactly the listed ones, with their reasons', (ctx) => {
    const got = ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`)
    const want = expectedRefused.filter((e) => e.configs.includes(label) && entries.some((n) => n.includes(e.kernel)))
    for (const e of want) assert.ok(got.some((g) => g.split(': ')[0]!.includes(e.kernel) && e.reason.test(g.slice(g.indexOf(': ') + 2))), `${e.kernel} should be refused (${e.reason}); refused: ${got.join(' | ') || 'none'}`)
    for (const g of got) assert.ok(want.some((e) => g.split(': ')[0]!.includes(e.kernel)), `refused but not listed in corpus-expectations.ts: ${g}`)
  })

  for (const c of group.cases) {
    const once = [...ranOnCompute80].find((n) => c.name.startsWith(n))
    if (once) {
      s(`${c.file}: ${c.name} [run on nvcc compute_80's PTX, which is this text]`, () => {
        const mine = body(ptx, once)
        assert.ok(mine, `${once} is in the PTX`)
        assert.is(mine, body(nvcc80!, once), `${once}: compute_90's PTX differs from compute_80's: run it here (remove it from onceForNvcc)`)
      })
      continue
    }
    const diff = differs.find((d) => c.name.startsWith(d.case) && d.configs.includes(label))
    s(`${c.file}: ${c.name}${diff ? ` [differs: ${diff.why}]` : ''}`, async (ctx) => {
      const host = ctx.host!
      host.tolerance = Object.entries(tolerance).find(([k]) => c.name.startsWith(k))?.[1]
      host.ownCheck = orderDependent.some((k) => c.name.startsWith(k)) || Object.keys(withinBounds).some((k) => c.name.startsWith(k))
      try {
        await c.run(host)
      } catch (err) {
        const message = (err as Error).message
        // launching a refused kernel throws CannotTranslateError naming it
        if ((err as Error).name === 'CannotTranslateError' && ctx.gpu!.refused.some((x) => message.includes(`kernel ${readableName(x.kernel ?? '')}:`))) return
        if (diff?.error.test(message)) return
        throw err
      }
      if (diff) assert.unreachable(`now behaves like the emulator: remove its entry from corpus-expectations.ts (${diff.why})`)
    })
  }

  s('every kernel that translates ran, and a read compared its results with the emulator\'s', (ctx) => {
    const refusedNames = new Set(ctx.gpu!.refused.map((x) => x.kernel))
    const notRun = entries.filter((n) => !refusedNames.has(n) && !ctx.host!.verified.has(n) && !ranOnCompute80.has(n))
    const allowed = entries.filter((n) => differs.some((d) => d.configs.includes(label) && group.cases.some((c) => c.name.startsWith(d.case) && c.name.includes(n))))
    assert.equal(notRun.filter((n) => !allowed.includes(n)), [], 'translated kernels no passing case ran')
  })

  s.run()
})
