// GPU-recorded fixtures (issue 18): what the kernels of the corpora computed on real hardware, written by
// `pnpm test:gpu` as test/fixtures/gpu-recorded/<case>.<arch>.bin (every output of the case, concatenated) with
// manifest.<arch>.json (GPU, driver, CUDA, date, and per fixture: the case, its seed, the hash of its PTX and of
// everything it fed the device, and each output's type and place in the .bin). The normal suite runs each
// recorded case on the emulator with the same seeded inputs and compares (capture.ts: integers bit-exact, floats
// by value; differences only where the PTX leaves them open and both sides pass the case's reference).
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { compareCase, elemSize, latitudeOf, readLatitudes, type CaseComparison, type CaseRun, type ElemType, type Latitude, type Output } from './capture.js'
import { corpusUnits, ptxHash, slugOf, type CorpusUnit, type UnitCase } from './corpus.js'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { fixturesDir } from '../helpers/tools.js'

export const recordedDir = join(fixturesDir, 'gpu-recorded')
export const FORMAT = 'kernelpack gpu-recorded fixtures 1'

/** Where and how the fixtures of one manifest were recorded. */
export interface RecordingInfo {
  date: string
  gpu: string
  computeCapability: string
  /** The kernel driver's version (`580.159.04`), from /proc/driver/nvidia/version or nvidia-smi. */
  driver: string
  /** The CUDA version the driver supports (cuDriverGetVersion). */
  driverCuda: string
  /** The toolkit that built the PTX and cubins (`nvcc --version`'s release line). */
  cudaToolkit: string
  node: string
  command: string
}

export interface FixtureOutput {
  name: string
  type: ElemType
  /** Byte offset in the .bin. */
  offset: number
  /** Number of elements. */
  count: number
}

export interface FixtureEntry {
  case: string
  /** When this fixture was recorded (a run over some cases keeps the others' entries). */
  date: string
  file: string
  sha256: string
  unit: string
  ptxArch: string
  ptxSha256: string
  /** The image the GPU ran (`cubin sm_90`). */
  image: string
  seed: string
  /** sha256 of the inputs, launches and arguments (RecordingHost): equal on every backend for the same case. */
  trace: string
  kernels: string[]
  latitude: Latitude
  /** The case's own reference check on the GPU: `pass` or the failure. */
  referenceOnGpu: string
  /** How the emulator compared when the fixture was recorded, with the largest ULP difference. */
  emulatorAtRecording: string
  outputs: FixtureOutput[]
}

export interface FixtureManifest {
  format: string
  arch: string
  recorded: RecordingInfo
  fixtures: FixtureEntry[]
}

export const manifestName = (arch: string) => `manifest.${arch}.json`
export const fixtureName = (key: string, arch: string) => `${slugOf(key)}.${arch}.bin`

function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, data)
  renameSync(tmp, path)
}

/** One recorded case, as test:gpu hands it to writeFixtures. */
export interface Recording {
  c: UnitCase
  run: CaseRun
  ptx: string
  image: string
  latitude: Latitude
  emulatorAtRecording: string
}

/**
 * Writes the fixtures of one arch into `dir`: each .bin through a temp file and rename, then the manifest the
 * same way (a run killed half-way leaves the old manifest, which names only complete files). Fixtures of this
 * arch that the new manifest does not name are removed (with `merge`, the old manifest's other entries are
 * kept: a run over some cases only); other archs' are left alone.
 */
export function writeFixtures(dir: string, arch: string, recorded: RecordingInfo, recordings: readonly Recording[], { merge = false } = {}): FixtureManifest {
  mkdirSync(dir, { recursive: true })
  for (const f of readdirSync(dir)) if (/\.\d+\.tmp$/.test(f)) rmSync(join(dir, f), { force: true })
  const fixtures: FixtureEntry[] = []
  const files = new Set<string>()
  for (const r of [...recordings].sort((a, b) => (a.c.key < b.c.key ? -1 : a.c.key > b.c.key ? 1 : 0))) {
    const file = fixtureName(r.c.key, arch)
    if (files.has(file)) throw new Error(`two cases map to the fixture file ${file}: rename one (${r.c.key})`)
    files.add(file)
    const outputs: FixtureOutput[] = []
    let offset = 0
    for (const o of r.run.outputs) {
      outputs.push({ name: o.name, type: o.type, offset, count: o.bytes.length / elemSize(o.type) })
      offset += o.bytes.length
    }
    const bin = new Uint8Array(offset)
    r.run.outputs.forEach((o, i) => bin.set(o.bytes, outputs[i]!.offset))
    writeAtomic(join(dir, file), bin)
    fixtures.push({
      case: r.c.key,
      date: recorded.date,
      file,
      sha256: createHash('sha256').update(bin).digest('hex'),
      unit: r.c.unit.id,
      ptxArch: r.c.unit.ptxArch,
      ptxSha256: ptxHash(r.ptx),
      image: r.image,
      seed: r.c.seed,
      trace: r.run.trace,
      kernels: r.run.launched,
      latitude: r.latitude,
      referenceOnGpu: r.run.runError ? `run failed: ${r.run.runError}` : r.run.refError ? `fail: ${r.run.refError}` : 'pass',
      emulatorAtRecording: r.emulatorAtRecording,
      outputs,
    })
  }
  const old = join(dir, manifestName(arch))
  const before = existsSync(old) ? (JSON.parse(readFileSync(old, 'utf8')) as FixtureManifest).fixtures : []
  if (merge) for (const f of before) if (!files.has(f.file)) { fixtures.push(f); files.add(f.file) }
  fixtures.sort((a, b) => (a.case < b.case ? -1 : a.case > b.case ? 1 : 0))
  const manifest: FixtureManifest = { format: FORMAT, arch, recorded, fixtures }
  const stale = before.map((f) => f.file).filter((f) => !files.has(f))
  writeAtomic(old, JSON.stringify(manifest, null, 1) + '\n')
  for (const f of stale) rmSync(join(dir, f), { force: true })
  return manifest
}

/** Every manifest in `dir` (none when the folder or its manifests do not exist). */
export function readManifests(dir: string): FixtureManifest[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).filter((f) => /^manifest\..+\.json$/.test(f)).sort().map((f) => {
    const path = join(dir, f)
    let m: FixtureManifest
    try {
      m = JSON.parse(readFileSync(path, 'utf8')) as FixtureManifest
    } catch (err) {
      throw new Error(`${path}: not JSON (${(err as Error).message}); re-record with pnpm test:gpu or restore it from git`)
    }
    if (m.format !== FORMAT) throw new Error(`${path}: format ${JSON.stringify(m.format)}, expected ${JSON.stringify(FORMAT)}`)
    if (f !== manifestName(m.arch)) throw new Error(`${path}: names arch ${m.arch}, so it should be ${manifestName(m.arch)}`)
    return m
  })
}

/** The outputs of one fixture, read from its .bin (checked against the manifest's sha256 and layout). */
export function readFixtureOutputs(dir: string, f: FixtureEntry): Output[] {
  const path = join(dir, f.file)
  if (!existsSync(path)) throw new Error(`${path}: missing (named by the manifest)`)
  const bin = new Uint8Array(readFileSync(path))
  const sha = createHash('sha256').update(bin).digest('hex')
  if (sha !== f.sha256) throw new Error(`${path}: sha256 ${sha} differs from the manifest's ${f.sha256} (corrupt or edited)`)
  return f.outputs.map((o) => {
    const end = o.offset + o.count * elemSize(o.type)
    if (end > bin.length) throw new Error(`${path}: output ${o.name} ends at byte ${end}, past the file's ${bin.length} bytes`)
    return { name: o.name, type: o.type, bytes: bin.slice(o.offset, end) }
  })
}

export type FixtureStatus = 'pass' | 'fail' | 'stale' | 'not-compared'

export interface FixtureResult {
  arch: string
  case: string
  file: string
  status: FixtureStatus
  /** What was compared, or why it was not. */
  detail: string
  comparison?: CaseComparison
}

export interface FixtureCheck {
  /** Manifests found (empty: nothing was ever recorded). */
  arches: string[]
  results: FixtureResult[]
  /** Cases of the corpora with no fixture in any manifest (emulator-only cases are never recorded). */
  missing: string[]
}

/** The message the suite prints when some cases have no recording: names what is missing and how to make it. */
export function describeMissing(check: FixtureCheck, total: number): string {
  const where = check.arches.length ? `${check.arches.map(manifestName).join(', ')} name none for them` : 'test/fixtures/gpu-recorded holds no manifest.<arch>.json yet'
  const lines = [
    '',
    '!!! ================================================================================================ !!!',
    `!!!  NO GPU RECORDING for ${check.missing.length} of ${total} corpus cases (${where}):`,
    '!!!  the emulator is NOT being compared with real hardware for these kernels (issue 18). Record them on a machine with',
    '!!!  an NVIDIA GPU and driver:  pnpm test:gpu   (records into test/fixtures/gpu-recorded; commit them)',
    '!!!  Without pnpm there (a bare GPU machine): pnpm gpu:kit here, then run .gpu-kit/run-on-gpu.sh there',
    '!!!  (packages/runtime/README.md, "Verified on hardware").',
    `!!!  Missing: ${check.missing.slice(0, 6).join(', ')}${check.missing.length > 6 ? `, … (${check.missing.length - 6} more)` : ''}`,
    '!!! ================================================================================================ !!!',
    '',
  ]
  return lines.join('\n')
}

export interface CheckOptions {
  /** The corpora (default: every unit of corpusUnits()). */
  units?: CorpusUnit[]
}

/**
 * Checks every recorded fixture in `dir` against the emulator: the case runs on the emulator with the same
 * seeded inputs (the trace hash must match the recorded one, and the PTX hash too, else the fixture is stale:
 * it was recorded for a kernel or inputs that no longer exist) and its outputs are compared with the GPU's.
 */
export async function checkRecordedFixtures(dir: string, options: CheckOptions = {}): Promise<FixtureCheck> {
  const manifests = readManifests(dir)
  const units = options.units ?? corpusUnits()
  const cases = new Map(units.flatMap((u) => u.cases).map((c) => [c.key, c]))
  const results: FixtureResult[] = []
  const recorded = new Set<string>()
  const hosts = new Map<CorpusUnit, Promise<{ host: RuntimeKernelHost; ptx: string; latitudes: ReturnType<typeof readLatitudes> } | { error: string }>>()
  const hostFor = (u: CorpusUnit) => {
    let h = hosts.get(u)
    if (!h) {
      h = (async () => {
        const b = await u.build()
        if (!b.ok) return { error: `does not build: ${b.message}` }
        try {
          const host = await RuntimeKernelHost.load(new TextEncoder().encode(b.ptx), b.manifest, `${u.id} (emulator)`)
          return { host, ptx: b.ptx, latitudes: readLatitudes(b.ptx) }
        } catch (err) {
          return { error: `the emulator refuses the module: ${(err as Error).message.split('\n')[0]}` }
        }
      })()
      hosts.set(u, h)
    }
    return h
  }
  for (const m of manifests) {
    for (const f of m.fixtures) {
      recorded.add(f.case)
      const r = (status: FixtureStatus, detail: string, comparison?: CaseComparison) => results.push({ arch: m.arch, case: f.case, file: f.file, status, detail, comparison })
      const c = cases.get(f.case)
      if (!c) { r('stale', `the corpora have no case ${JSON.stringify(f.case)} any more: delete ${f.file} and its manifest entry, or re-record`); continue }
      let gpu: Output[]
      try {
        gpu = readFixtureOutputs(dir, f)
      } catch (err) {
        r('fail', (err as Error).message)
        continue
      }
      if (c.expectedEmulatorFailure) { r('not-compared', `an expected failure of the kernel corpus (${c.expectedEmulatorFailure}); compared once the emulator passes it`); continue }
      const h = await hostFor(c.unit)
      if ('error' in h) { r('fail', `${c.unit.id} ${h.error}`); continue }
      if (ptxHash(h.ptx) !== f.ptxSha256) { r('stale', `the PTX of ${c.unit.id} (${c.unit.ptxArch}) differs from the one recorded: the kernel source or the compiler changed; re-record on a GPU`); continue }
      const emu = await c.run(h.host)
      await h.host.freeAll()
      if (emu.trace !== f.trace) { r('stale', `the case's inputs or launches differ from the recorded ones (trace ${emu.trace.slice(0, 12)} vs ${f.trace.slice(0, 12)}): its seeds or sizes changed; re-record on a GPU`); continue }
      const lat = latitudeOf(emu.launched, h.latitudes)
      const emuOk = !emu.refError && !emu.runError
      if (emu.runError) { r('fail', `the emulator run failed: ${emu.runError}`); continue }
      const cmp = compareCase(emu.outputs, gpu, lat, { a: emuOk, b: f.referenceOnGpu === 'pass' })
      const ulp = cmp.maxUlp !== undefined ? `, max ${cmp.maxUlp} ulp` : ''
      if (cmp.agreement === 'differs') r('fail', `the emulator differs from ${m.recorded.gpu} (${m.arch}): ${cmp.note}`, cmp)
      else r('pass', `${cmp.agreement}${ulp}${cmp.agreement === 'within' ? `: ${cmp.note}` : ''}`, cmp)
    }
  }
  const missing = [...cases.values()].filter((c) => !c.emulatorOnly && !recorded.has(c.key)).map((c) => c.key)
  return { arches: manifests.map((m) => m.arch), results, missing }
}
