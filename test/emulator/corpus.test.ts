// The emulator corpus (issue 6, "Must show"): every kernel of the reference corpus (../shared/reference/cu
// minus bad.cu, copied to test/fixtures/emulator/reference-cu) and the emulator's own kernels
// (test/fixtures/emulator/kernels), compiled to PTX by nvcc for compute_80 and compute_90 and by clang 22 for
// sm_80, executed on the emulator backend and compared with plain TypeScript references. Each group is one
// translation unit (corpus-reference.cu, corpus-own.cu) compiled once per configuration, two compilers at a
// time, cached in test/.out/ptx-cache.
import { suite } from 'uvu'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { ownCases, ownSource, type CorpusCase } from '../fixtures/emulator/cases-own.js'
import { referenceCases, referenceSource } from '../fixtures/emulator/cases-reference.js'
import { basename } from 'node:path'

const groups: { source: string; cases: CorpusCase[] }[] = [
  { source: referenceSource, cases: referenceCases },
  { source: ownSource, cases: ownCases },
]
const requests = corpusConfigs.flatMap((config) => groups.map((g) => ({ source: g.source, config })))
const texts = await compilePtxAll(requests)

/** Kernels the corpus does not launch (by PTX name fragment), with the reason. */
const notLaunched: Record<string, string> = {}

requests.forEach(({ source, config }, r) => {
  const ptx = texts[r]!
  const group = groups.find((g) => g.source === source)!
  const s = suite(`corpus: ${basename(source)}, ${config.label}`)
  const launched = new Set<string>()

  for (const c of group.cases) {
    s(`${c.file}: ${c.name}`, async () => {
      const backend = createEmulatorBackend()
      try {
        const k = await KernelRunner.load(backend, ptx, config.target, `${c.file} (${config.label})`)
        try {
          await c.run(k)
        } finally {
          for (const e of k.launched) launched.add(e)
        }
      } finally {
        await backend.dispose()
      }
    })
  }

  s('every .entry was launched', () => {
    const missing = [...ptx.matchAll(/\.entry\s+([\w$.]+)/g)].map((m) => m[1]!)
      .filter((name) => !launched.has(name) && !Object.keys(notLaunched).some((n) => name.includes(n)))
    if (missing.length) throw new Error(`kernels never launched by the corpus: ${missing.join(', ')}`)
  })

  s.run()
})
