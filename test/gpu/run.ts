// `pnpm test:gpu` (issue 18): the proof on a real GPU in one command. It opens the NVIDIA driver (failing at
// once, exit status 1, where there is none), then runs each section in its own Node process (a sticky CUDA
// error or a hang ends only that process; the corpus resumes after the case that caused it):
//   smoke         test/gpu/smoke.ts: vecAdd, a struct by value, launch rate, the PTX JIT
//   images        cubin chosen over PTX, PTX alone through the driver's JIT, NoImageError, the driver's refusals
//   api           by-value structs of every layout, every scalar width, mod.global(), streams, events, async copies
//   errors        a block too large, dynamic shared memory past the limit, an illegal address (sticky)
//   after-sticky  a fresh process after the sticky error works
//   corpus        the emulator corpus and the kernel corpus: GPU (cubin) vs the TypeScript references, the
//                 driver's JIT vs the cubin, the emulator vs the GPU with the largest ULP difference per kernel
//   webgpu        both corpora on WebGPU through Dawn (the optional `webgpu` package) on the machine's own GPU,
//                 each case against its reference and the cubin's outputs (test/gpu/check-webgpu.ts); not run
//                 where Dawn offers only a fallback (CPU) adapter
// It writes the report (report.md, report.json) and the GPU's outputs as fixtures with a manifest
// (test/fixtures/gpu-recorded), which the normal suite compares the emulator with (test/gpu/recorded-fixtures.test.ts).
//
// Options: --only <section,…>  --cases <substring,…>  --arch sm_XY  --device N  --libcuda PATH  --out DIR
//          --record DIR | --no-record  --timeout-s N (a section)  --case-timeout-s N (a corpus case, default 120)
//          --self-test (the libcuda test double: orchestration only)
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { NoDriverError, resolveBackend } from '@kernelpack/runtime'
import { NVCC_13_ARCHS } from '@kernelpack/toolchain'
import { repoRoot } from '../helpers/tools.js'
import { checkApi } from './check-api.js'
import { checkCorpus } from './check-corpus.js'
import { checkAfterSticky, checkErrors } from './check-errors.js'
import { checkImages } from './check-images.js'
import { checkWebgpu } from './check-webgpu.js'
import { corpusCases, readNvccVersion } from './corpus.js'
import { recordedDir, writeFixtures, type Recording } from './recorded.js'
import { renderReport, summarize, type Check, type DeviceFacts, type KernelRow, type Report } from './report.js'
import { readDriverRelease, readKoffiVersion, type GpuOptions, type RecordingData, type SectionOutput } from './session.js'
import { runSmoke } from './smoke.js'

const sections: Record<string, (o: GpuOptions, resumeAfter?: string) => Promise<SectionOutput>> = {
  smoke: runSmoke,
  images: checkImages,
  api: checkApi,
  errors: checkErrors,
  'after-sticky': checkAfterSticky,
  corpus: checkCorpus,
  webgpu: checkWebgpu,
}
const sectionOrder = ['smoke', 'images', 'api', 'errors', 'after-sticky', 'corpus', 'webgpu']

const usage = `usage: pnpm test:gpu [--only ${sectionOrder.join(',')}] [--cases SUBSTRING,…] [--arch sm_XY] [--device N]
                     [--libcuda PATH] [--out DIR] [--record DIR | --no-record] [--timeout-s N] [--case-timeout-s N] [--self-test]`

interface Cli {
  only: string[]
  cases: string[]
  arch?: string
  device: number
  libcudaPath?: string
  out: string
  record?: string | false
  timeoutS?: number
  caseTimeoutS?: number
  selfTest: boolean
}

function parseArgs(argv: string[]): Cli {
  const cli: Cli = { only: [], cases: [], device: 0, out: join(repoRoot, 'test', '.out', 'gpu-report'), selfTest: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const value = () => {
      const v = argv[++i]
      if (v === undefined) usageError(`${a} needs a value`)
      return v
    }
    if (a === '--only') cli.only = value().split(',').filter(Boolean)
    else if (a === '--cases') cli.cases = value().split(',').filter(Boolean)
    else if (a === '--arch') cli.arch = value()
    else if (a === '--device') cli.device = Number(value())
    else if (a === '--libcuda') cli.libcudaPath = resolve(value())
    else if (a === '--out') cli.out = resolve(value())
    else if (a === '--record') cli.record = resolve(value())
    else if (a === '--no-record') cli.record = false
    else if (a === '--timeout-s') cli.timeoutS = Number(value())
    else if (a === '--case-timeout-s') cli.caseTimeoutS = Number(value())
    else if (a === '--self-test') cli.selfTest = true
    else if (a === '--help' || a === '-h') { console.log(usage); process.exit(0) }
    else usageError(`unknown argument ${a}`)
  }
  for (const s of cli.only) if (!sections[s]) usageError(`unknown section ${s} (sections: ${sectionOrder.join(', ')})`)
  if (!Number.isInteger(cli.device) || cli.device < 0) usageError('--device must be a device ordinal (0, 1, …)')
  if (cli.arch !== undefined && !/^sm_\d+[af]?$/.test(cli.arch)) usageError(`--arch must be sm_XY (sm_90, sm_100a…), got ${cli.arch}`)
  if (cli.timeoutS !== undefined && !(cli.timeoutS > 0)) usageError('--timeout-s must be a positive number of seconds')
  if (cli.caseTimeoutS !== undefined && !(cli.caseTimeoutS > 0)) usageError('--case-timeout-s must be a positive number of seconds')
  return cli
}

function usageError(message: string): never {
  console.error(`test:gpu: ${message}\n${usage}`)
  process.exit(2)
}

/** The child command that runs one section: this same entry (source with tsx, or the bundled kit). */
function sectionCommand(name: string, optionsFile: string, resultFile: string, resumeAfter?: string): string[] {
  return [...process.execArgv, process.argv[1]!, '--section', name, optionsFile, resultFile, ...(resumeAfter ? [resumeAfter] : [])]
}

interface ChildOutcome { result?: SectionOutput; code: number | null; signal: string | null; timedOut: boolean; progress?: string }

/**
 * Runs one section in a child process. It is killed past `timeoutMs`, or when the case it writes to its
 * progress file has been running for `caseTimeoutMs` (a kernel that never ends blocks the child's only thread
 * in the driver: only the parent can stop it, and the corpus then resumes after that case).
 */
function runSection(name: string, optionsFile: string, dir: string, timeoutMs: number, caseTimeoutMs: number, resumeAfter?: string): Promise<ChildOutcome> {
  const resultFile = join(dir, `${name}.${Date.now()}.json`)
  const progressFile = join(dir, `${name}.progress`)
  rmSync(progressFile, { force: true })
  return new Promise((done) => {
    const child = spawn(process.execPath, sectionCommand(name, optionsFile, resultFile, resumeAfter), {
      cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, KP_GPU_PROGRESS: progressFile },
    })
    let timedOut = false
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL') }, timeoutMs)
    let seen = ''
    let since = Date.now()
    const watch = setInterval(() => {
      const now = existsSync(progressFile) ? readFileSync(progressFile, 'utf8') : ''
      if (now !== seen) { seen = now; since = Date.now() } else if (now && Date.now() - since > caseTimeoutMs) { timedOut = true; child.kill('SIGKILL') }
    }, 1000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      clearInterval(watch)
      const progress = existsSync(progressFile) ? readFileSync(progressFile, 'utf8') : undefined
      const result = existsSync(resultFile) ? (JSON.parse(readFileSync(resultFile, 'utf8')) as SectionOutput) : undefined
      done({ result, code, signal, timedOut, progress })
    })
  })
}

/** Opens the driver; where there is none, says so and exits 1 at once. */
async function probe(cli: Cli): Promise<{ facts: DeviceFacts; cc: number }> {
  let backend
  try {
    backend = (await resolveBackend({ backend: 'cuda', device: cli.device, libcudaPath: cli.libcudaPath })).backend as Awaited<ReturnType<typeof resolveBackend>>['backend'] & { driverVersion?: number }
  } catch (err) {
    const e = err as Error
    const what = e instanceof NoDriverError ? 'no NVIDIA driver' : `the NVIDIA driver could not be opened (${e.name})`
    console.error(`test:gpu: ${what}: ${e.message.replace(/^no NVIDIA driver was found: /, '')}\n` +
      'test:gpu proves the cuda backend on real hardware and needs a machine with an NVIDIA GPU and its driver (libcuda.so.1). ' +
      'Nothing was run. On a machine without one, `pnpm test` covers everything that can be checked; the fixtures recorded on a GPU ' +
      '(test/fixtures/gpu-recorded) keep the emulator compared with hardware there.')
    process.exit(1)
  }
  const d = backend.device()
  const isDouble = /kernelpack libcuda test double/.test(d.name)
  if (isDouble && !cli.selfTest) {
    console.error(`test:gpu: ${d.name} is the libcuda test double, not a GPU: run with --self-test to check the orchestration, or point --libcuda / KERNELPACK_LIBCUDA at the real driver.`)
    process.exit(1)
  }
  if (!isDouble && cli.selfTest) {
    console.error(`test:gpu: --self-test is for the libcuda test double, but the driver answered with ${d.name}: drop --self-test for the real proof.`)
    process.exit(2)
  }
  const cc = d.computeCapability[0] * 10 + d.computeCapability[1]
  const dv = (backend as { driverVersion?: number }).driverVersion ?? 0
  return {
    cc,
    facts: {
      gpu: d.name,
      computeCapability: d.computeCapability.join('.'),
      arch: cli.arch ?? `sm_${cc}`,
      totalMemoryGiB: d.totalMemory / 2 ** 30,
      multiProcessors: d.multiProcessorCount ?? 0,
      driver: isDouble ? 'libcuda test double (test/fixtures/runtime/libcuda-test-double.c)' : readDriverRelease(),
      driverCuda: `${Math.floor(dv / 1000)}.${Math.floor((dv % 1000) / 10)}`,
      ptxIsa: d.ptxVersion ? d.ptxVersion.join('.') : 'unknown',
      libcuda: cli.libcudaPath ?? process.env.KERNELPACK_LIBCUDA ?? 'libcuda.so.1',
    },
  }
}

function toRecording(d: RecordingData, byKey: Map<string, ReturnType<typeof corpusCases>[number]>): Recording | undefined {
  const c = byKey.get(d.key)
  if (!c) return undefined
  return {
    c, ptx: d.ptx, image: d.image, latitude: d.latitude, emulatorAtRecording: d.emulatorAtRecording,
    run: { ...d.run, outputs: d.run.outputs.map((o) => ({ name: o.name, type: o.type, bytes: new Uint8Array(Buffer.from(o.base64, 'base64')) })) },
  }
}

async function main(argv: string[]): Promise<void> {
  const cli = parseArgs(argv)
  const t0 = Date.now()
  const { facts, cc } = await probe(cli)
  if (!cli.arch && !NVCC_13_ARCHS.includes(cc)) {
    console.error(`test:gpu: the device has compute capability ${facts.computeCapability}, which nvcc 13 does not list (${NVCC_13_ARCHS.join(', ')}); pass --arch sm_XY for the newest one of the same major.`)
    process.exit(2)
  }
  const options: GpuOptions = { mode: cli.selfTest ? 'self-test' : 'hardware', libcudaPath: cli.libcudaPath, device: cli.device, arch: facts.arch, cases: cli.cases }
  const work = join(tmpdir(), `kp-test-gpu-${process.pid}`)
  mkdirSync(work, { recursive: true })
  const optionsFile = join(work, 'options.json')
  writeFileSync(optionsFile, JSON.stringify(options))
  console.log(`test:gpu: ${facts.gpu} (CC ${facts.computeCapability}, ${facts.arch}), driver ${facts.driver}, CUDA ${facts.driverCuda}${cli.selfTest ? ' [SELF-TEST]' : ''}`)

  const checks: Check[] = []
  const kernels: KernelRow[] = []
  const recordings: RecordingData[] = []
  const wanted = cli.only.length ? sectionOrder.filter((s) => cli.only.includes(s)) : sectionOrder
  for (const name of wanted) {
    const started = Date.now()
    console.log(`test:gpu: section ${name}…`)
    let resumeAfter: string | undefined
    for (let attempt = 0; attempt < 200; attempt++) {
      const timeoutMs = (cli.timeoutS ?? (name === 'corpus' || name === 'webgpu' ? 3600 : 600)) * 1000
      const r = await runSection(name, optionsFile, work, timeoutMs, (cli.caseTimeoutS ?? 120) * 1000, resumeAfter)
      if (r.result) {
        checks.push(...r.result.checks)
        kernels.push(...r.result.kernels)
        recordings.push(...r.result.recordings)
      }
      if (r.result?.resumeAfter) { resumeAfter = r.result.resumeAfter; continue }
      if (!r.result) {
        const how = r.timedOut ? `was stopped (past the section's ${timeoutMs / 1000} s or a case's ${cli.caseTimeoutS ?? 120} s)` : `exited with ${r.signal ?? `status ${r.code}`} without a result`
        if (name === 'corpus' && r.progress && r.progress !== resumeAfter) {
          kernels.push({ case: r.progress, unit: '', kernels: [], status: 'fail', image: '', reference: `the process ${how} while running it`, jit: '', emulator: '', latitude: '', problems: [`the section's process ${how} while running this case`], ms: 0 })
          resumeAfter = r.progress
          continue
        }
        const wgCase = r.progress?.replace(/^webgpu:/, '')
        if (name === 'webgpu' && wgCase && wgCase !== resumeAfter) {
          checks.push({ section: name, name: `${wgCase} on WebGPU`, status: 'fail', detail: `the section's process ${how} while running this case` })
          resumeAfter = wgCase
          continue
        }
        checks.push({ section: name, name: `section ${name}`, status: 'fail', detail: `the section's process ${how}${r.progress ? ` (last case: ${r.progress})` : ''}` })
      }
      break
    }
    console.log(`test:gpu: section ${name} done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }

  const report: Report = {
    title: `kernelpack test:gpu on ${facts.gpu}`,
    mode: options.mode,
    date: new Date().toISOString(),
    command: `pnpm test:gpu${argv.length ? ' ' + argv.join(' ') : ''}`,
    device: facts,
    toolkit: (await readNvccVersion()).split('\n').find((l) => /release/.test(l))?.trim() ?? 'nvcc (version unknown)',
    host: { node: process.version, platform: `${process.platform} ${process.arch}`, cpus: cpus().length, koffi: readKoffiVersion() },
    summary: summarize(checks, kernels),
    checks,
    kernels,
  }

  const recordTo = cli.record === false ? undefined : cli.record ?? (cli.selfTest ? undefined : recordedDir)
  if (recordTo) {
    const byKey = new Map(corpusCases().map((c) => [c.key, c]))
    const good = recordings.filter((d) => !d.run.refError && !d.run.runError).map((d) => toRecording(d, byKey)).filter((r): r is Recording => !!r)
    if (good.length) {
      const m = writeFixtures(recordTo, facts.arch, {
        date: report.date, gpu: facts.gpu, computeCapability: facts.computeCapability, driver: facts.driver, driverCuda: facts.driverCuda,
        cudaToolkit: report.toolkit, node: process.version, command: report.command,
      }, good, { merge: cli.cases.length > 0 })
      report.fixtures = { dir: relative(repoRoot, recordTo).startsWith('..') ? recordTo : relative(repoRoot, recordTo), arch: facts.arch, written: m.fixtures.length }
    }
  }

  mkdirSync(cli.out, { recursive: true })
  const text = renderReport(report)
  for (const [file, data] of [['report.json', JSON.stringify(report, null, 1) + '\n'], ['report.md', text]] as const) {
    writeFileSync(join(cli.out, file) + '.tmp', data)
    renameSync(join(cli.out, file) + '.tmp', join(cli.out, file))
  }
  rmSync(work, { recursive: true, force: true })
  console.log('\n' + text)
  console.log(`test:gpu: report written to ${join(cli.out, 'report.md')} and report.json (${((Date.now() - t0) / 1000).toFixed(0)} s)`)
  process.exit(report.summary.ok ? 0 : 1)
}

/** A child: runs one section and writes its result (temp file, then rename). */
async function section(name: string, optionsFile: string, resultFile: string, resumeAfter?: string): Promise<void> {
  const options = JSON.parse(readFileSync(optionsFile, 'utf8')) as GpuOptions
  let out: SectionOutput
  try {
    out = await sections[name]!(options, resumeAfter)
  } catch (err) {
    out = { checks: [{ section: name, name: `section ${name}`, status: 'fail', detail: (err as Error).stack ?? String(err) }], kernels: [], recordings: [] }
  }
  writeFileSync(resultFile + '.tmp', JSON.stringify(out))
  renameSync(resultFile + '.tmp', resultFile)
  process.exit(0)
}

const args = process.argv.slice(2)
if (args[0] === '--section') await section(args[1]!, args[2]!, args[3]!, args[4])
else await main(args)
