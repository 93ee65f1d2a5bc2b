// The corpora `pnpm test:gpu` runs on the GPU and the recorded-fixture check runs on the emulator, read from
// their registries generically (issue 18): the emulator corpus (test/fixtures/emulator: its own kernels and
// the reference corpus, one translation unit each) and the kernel corpus (test/fixtures/kernels/index.ts,
// one unit per fixture file). Each unit is built to the very PTX the emulator suite runs (nvcc, compute_80 for
// the emulator corpus, compute_<arch the file needs> for the kernel corpus); the GPU runs a cubin that ptxas
// makes from that same PTX, so both sides execute one program.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import type { KernelManifest } from '@kernelpack/offload'
import { readPtxManifest } from '@kernelpack/toolchain'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { caseRng, caseSeed, compareOutputs, type CorpusHost } from '../helpers/kernel-corpus.js'
import { buildCorpusFile } from '../helpers/kernel-corpus-build.js'
import { repoRoot, tool } from '../helpers/tools.js'
import { ownCases, ownSource, type CorpusCase } from '../fixtures/emulator/cases-own.js'
import { referenceCases, referenceSource } from '../fixtures/emulator/cases-reference.js'
import { corpusCases as kernelCases, corpusFiles, expectedFailures } from '../fixtures/kernels/index.js'
import { RecordingHost, toOutput, type CaseRun } from './capture.js'
import { prebuiltUnit } from './prebuilt.js'

export type Group = 'emulator-own' | 'emulator-reference' | 'kernels'

export type UnitBuild = { ok: true; ptx: string; manifest: KernelManifest } | { ok: false; message: string }

export interface CorpusUnit {
  /** `emulator/corpus-own.cu`, `kernels/basics/tiled_matmul.cu`. */
  id: string
  group: Group
  /** The compute capability its kernels need (80: any GPU from the A100 on). */
  minArch: number
  /** The virtual architecture of its PTX (`compute_80`). */
  ptxArch: string
  cases: UnitCase[]
  /** The PTX (from the suite's caches) and its manifest; a compile error is an outcome. */
  build(): Promise<UnitBuild>
}

export interface UnitCase {
  /** Unique over all corpora: `emulator-own/vec_add`. */
  key: string
  name: string
  unit: CorpusUnit
  /** Where the case's inputs come from (recorded with each fixture). */
  seed: string
  /** Set for the cases that cannot run on hardware as written, with the reason. */
  emulatorOnly?: string
  /** The kernels the case says it launches (identifiers in the PTX names; kernel-corpus cases declare them). */
  declaredKernels?: string[]
  /** The kernel corpus's expected emulator failure for nvcc (the registry's expectedFailures). */
  expectedEmulatorFailure?: string
  /** Runs the case on a host, recording its outputs and checking them against the case's reference. */
  run(host: CorpusHost): Promise<CaseRun>
}

/**
 * Emulator-corpus cases that test the emulator itself rather than the kernel, keyed `<group>/<case name prefix>`.
 * They still run on the emulator in the normal suite; on hardware they would report a false failure.
 */
export const emulatorOnlyCases: Record<string, string> = {
  'emulator-own/oob_store, null_load':
    "checks the emulator's memory checker: on hardware a store a few bytes past an allocation does not fault, and the null load is a sticky CUDA_ERROR_ILLEGAL_ADDRESS that ends the context (the error-path checks run that in a child process)",
  'emulator-reference/k_mixed_scalars':
    "checks the emulator's device printf text: on hardware the driver writes printf to the process's stdout when the context synchronizes, where the harness cannot attribute it to a launch",
}

/** A file-safe slug of a case key (`kernels-vector_add`); past 64 characters, cut and made unique by a
 *  hash of the whole key. */
export function slugOf(key: string): string {
  const slug = key.replace(/[^A-Za-z0-9_]+/g, '-').replace(/^-+|-+$/g, '')
  if (slug.length <= 64) return slug
  return `${slug.slice(0, 56).replace(/-+$/, '')}-${createHash('sha256').update(key).digest('hex').slice(0, 7)}`
}

const nvccPtx = corpusConfigs.find((c) => c.compiler === 'nvcc' && c.arch === 'compute_80')!

function emulatorUnit(group: 'emulator-own' | 'emulator-reference', source: string, cases: CorpusCase[]): CorpusUnit {
  const unit: CorpusUnit = {
    id: `emulator/${basename(source)}`,
    group,
    minArch: 80,
    ptxArch: nvccPtx.arch,
    cases: [],
    async build() {
      const ptx = await compilePtx({ source, config: nvccPtx })
      return { ok: true, ptx, manifest: await readPtxManifest(ptx) }
    },
  }
  unit.cases = cases.map((c) => {
    const key = `${group}/${c.name}`
    const only = Object.entries(emulatorOnlyCases).find(([k]) => key.startsWith(k))
    return {
      key,
      name: c.name,
      unit,
      seed: `createRng seeds written in test/fixtures/emulator/${group === 'emulator-own' ? 'cases-own.ts' : 'cases-reference.ts'} (${c.file})`,
      emulatorOnly: only?.[1],
      async run(host) {
        const rec = new RecordingHost(host)
        const t0 = performance.now()
        let refError: string | undefined
        try {
          await c.run(rec)
        } catch (err) {
          refError = (err as Error).message
        }
        return { outputs: rec.reads, refError, trace: rec.digest(), launched: [...rec.launchedHere], ms: performance.now() - t0 }
      },
    }
  })
  return unit
}

function kernelUnits(): CorpusUnit[] {
  return corpusFiles.map((f) => {
    const unit: CorpusUnit = {
      id: `kernels/${f.file}`,
      group: 'kernels',
      minArch: f.arch,
      ptxArch: `compute_${f.arch}`,
      cases: [],
      async build() {
        // a kit built ahead for a GPU machine carries the PTX (test/gpu/prebuilt.ts)
        const pre = prebuiltUnit(unit.id)
        if (pre) return { ok: true, ptx: pre.ptx, manifest: pre.manifest }
        const b = await buildCorpusFile(f, 'nvcc')
        return b.ok ? { ok: true, ptx: b.ptx, manifest: b.manifest } : { ok: false, message: b.message }
      },
    }
    unit.cases = kernelCases.filter((c) => c.file === f.file).map((c) => {
      const expected = expectedFailures.find((e) => e.case === c.name && e.compiler === 'nvcc')
      return {
        key: `kernels/${c.name}`,
        name: c.name,
        unit,
        seed: `caseRng(${JSON.stringify(c.name)}) = mulberry32 seeded with ${caseSeed(c.name)} (test/helpers/kernel-corpus.ts)`,
        declaredKernels: c.kernels,
        expectedEmulatorFailure: expected ? `${expected.stage}: ${expected.reason}` : undefined,
        async run(host) {
          const rec = new RecordingHost(host)
          const t0 = performance.now()
          const input = c.inputs(caseRng(c.name))
          let outputs: CaseRun['outputs'] = []
          let refError: string | undefined
          let runError: string | undefined
          try {
            const actual = await c.run(rec, input)
            outputs = Object.entries(actual).map(([name, v]) => toOutput(name, v))
            const problems = compareOutputs(c, actual, c.reference(input))
            if (problems.length) refError = `wrong result: ${problems.join(' | ')}`
          } catch (err) {
            runError = (err as Error).message
          }
          return { outputs, refError, runError, trace: rec.digest(), launched: [...rec.launchedHere], ms: performance.now() - t0 }
        },
      }
    })
    return unit
  })
}

/** Every unit of every corpus, in a fixed order. */
export function corpusUnits(): CorpusUnit[] {
  return [emulatorUnit('emulator-own', ownSource, ownCases), emulatorUnit('emulator-reference', referenceSource, referenceCases), ...kernelUnits()]
}

/** Every case of every corpus. */
export function corpusCases(): UnitCase[] {
  return corpusUnits().flatMap((u) => u.cases)
}

// --- cubins

const run = promisify(execFile)
export const gpuCacheDir = join(repoRoot, 'test', '.out', 'gpu-cache')
let nvccVersion: Promise<string> | undefined

/** `nvcc --version`'s last line (`Build cuda_13.0.r13.0/compiler.36424714_0`), once per process. */
export function readNvccVersion(): Promise<string> {
  nvccVersion ??= run(tool('nvcc'), ['--version']).then((r) => r.stdout.trim())
  return nvccVersion
}

/**
 * The cubin ptxas makes of `ptx` for `arch` (`sm_90`): `nvcc -cubin -arch=<arch>` on the PTX text, cached under
 * test/.out/gpu-cache by the hash of the PTX, the arch and the nvcc version (temp file, then rename).
 */
export async function buildCubin(ptx: string, arch: string): Promise<Uint8Array> {
  const version = await readNvccVersion()
  const key = createHash('sha256').update(ptx).update('\0' + arch + '\0' + version).digest('hex').slice(0, 32)
  const file = join(gpuCacheDir, `${key}.${arch}.cubin`)
  if (existsSync(file)) return new Uint8Array(readFileSync(file))
  mkdirSync(gpuCacheDir, { recursive: true })
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
  try {
    writeFileSync(`${tmp}.ptx`, ptx)
    await run(tool('nvcc'), ['-cubin', `-arch=${arch}`, `${tmp}.ptx`, '-o', `${tmp}.cubin`], { maxBuffer: 64 << 20 })
    renameSync(`${tmp}.cubin`, file)
  } catch (err) {
    const e = err as Error & { stderr?: string }
    throw new Error(`nvcc -cubin -arch=${arch} failed on the PTX: ${e.stderr || e.message}`)
  } finally {
    rmSync(`${tmp}.ptx`, { force: true })
    rmSync(`${tmp}.cubin`, { force: true })
  }
  return new Uint8Array(readFileSync(file))
}

/** sha256 of a PTX text without its comment lines (nvcc writes its build and date there). */
export function ptxHash(ptx: string): string {
  return createHash('sha256').update(ptx.replace(/^\s*\/\/.*$/gm, '')).digest('hex')
}
