// Section `corpus` of `pnpm test:gpu` (issue 18 item 1b/1c): every case of the emulator corpus and the
// kernel corpus on the GPU. Each unit's PTX (the one the emulator suite runs) goes to the GPU twice: as a
// cubin ptxas made from it for the device's arch (packed with the PTX; the runtime must choose the cubin) and
// as the PTX alone (the driver's JIT compiles it). Every case runs on both with its seeded inputs and is checked
// against its TypeScript reference; the JIT run is compared with the cubin run and the emulator's run of the
// same PTX with the GPU's (integers exact, floats with the largest ULP difference reported).
import { writeFileSync } from 'node:fs'
import { packImages } from '@kernelpack/toolchain'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { compareCase, describeLatitude, latitudeOf, readLatitudes, type CaseComparison, type CaseRun } from './capture.js'
import { buildCubin, corpusUnits, type CorpusUnit, type UnitCase } from './corpus.js'
import type { KernelRow } from './report.js'
import { Checks, declareDoubleKernels, deviceLoadOptions, type GpuOptions, type RecordingData, type SectionOutput } from './session.js'

/** CUresults after which the context is unusable (CUDA Programming Guide, "Error checking": sticky errors). */
const sticky = /CUDA_ERROR_(ILLEGAL_ADDRESS|HARDWARE_STACK_ERROR|ILLEGAL_INSTRUCTION|MISALIGNED_ADDRESS|INVALID_ADDRESS_SPACE|INVALID_PC|LAUNCH_FAILED|LAUNCH_TIMEOUT|UNKNOWN)\b/

const ok = (r: CaseRun) => !r.refError && !r.runError
const failure = (r: CaseRun) => r.runError ? `run failed: ${r.runError}` : r.refError ? `wrong: ${r.refError}` : 'pass'
const agreementText = (c: CaseComparison) => c.agreement === 'equal' ? 'equal' : c.agreement === 'within' ? 'within (latitude)' : 'DIFFERS'

function toData(c: UnitCase, run: CaseRun, ptx: string, image: string, latitude: RecordingData['latitude'], emulatorAtRecording: string): RecordingData {
  return {
    key: c.key, ptx, image, latitude, emulatorAtRecording,
    run: { ...run, outputs: run.outputs.map((o) => ({ name: o.name, type: o.type, base64: Buffer.from(o.bytes).toString('base64') })) },
  }
}

export function selectUnits(o: GpuOptions): CorpusUnit[] {
  const units = corpusUnits()
  if (!o.cases.length) return units
  for (const u of units) u.cases = u.cases.filter((c) => o.cases.some((f) => c.key.includes(f)))
  return units.filter((u) => u.cases.length)
}

export async function checkCorpus(o: GpuOptions, resumeAfter?: string): Promise<SectionOutput> {
  const checks = new Checks('corpus')
  const kernels: KernelRow[] = []
  const recordings: RecordingData[] = []
  const cc = Number(o.arch.replace(/^sm_/, '').replace(/[af]$/, ''))
  const units = selectUnits(o)
  let skipping = resumeAfter !== undefined
  const selfTest = o.mode === 'self-test'
  for (const unit of units) {
    if (skipping) {
      if (!unit.cases.some((c) => c.key === resumeAfter)) continue
    }
    const row = (c: UnitCase, status: KernelRow['status'], problems: string[], extra: Partial<KernelRow> = {}): KernelRow => {
      const r: KernelRow = { case: c.key, unit: unit.id, kernels: [], status, image: '', reference: '', jit: '', emulator: '', latitude: '', problems, ms: 0, ...extra }
      kernels.push(r)
      return r
    }
    const pending = skipping ? unit.cases.slice(unit.cases.findIndex((c) => c.key === resumeAfter) + 1) : unit.cases
    skipping = false
    if (cc < unit.minArch) {
      for (const c of pending) row(c, 'not-run', [`needs compute capability ${unit.minArch / 10}.${unit.minArch % 10}, the device is ${o.arch}`])
      continue
    }
    const b = await unit.build()
    if (!b.ok) {
      for (const c of pending) row(c, 'fail', [`${unit.id} does not build with nvcc: ${b.message}`])
      continue
    }
    const ptxBytes = new TextEncoder().encode(b.ptx)
    let cubin: Uint8Array
    try {
      cubin = await buildCubin(b.ptx, o.arch)
    } catch (err) {
      for (const c of pending) row(c, 'fail', [(err as Error).message])
      continue
    }
    const producer = 'kernelpack test:gpu'
    const both = packImages([{ arch: o.arch, kind: 'cubin', bytes: cubin }, { arch: unit.ptxArch, kind: 'ptx', bytes: ptxBytes }], producer)
    const ptxOnly = packImages([{ arch: unit.ptxArch, kind: 'ptx', bytes: ptxBytes }], producer)
    const latitudes = readLatitudes(b.ptx)
    const label = (what: string) => `${unit.id} (${what})`
    const load = async (bytes: Uint8Array, what: string, opts = deviceLoadOptions(o)) => {
      try {
        return await RuntimeKernelHost.load(bytes, b.manifest, label(what), opts)
      } catch (err) {
        return (err as Error).message.split('\n')[0]!
      }
    }
    // the device: the cubin (checked to be the runtime's choice) and the PTX alone through the driver's JIT;
    // in self-test mode the double loads the module (image choice) and the emulator runs the kernels
    await declareDoubleKernels(o, b.manifest)
    const cubinHost = await load(both, `cubin ${o.arch}`)
    const cubinImage = typeof cubinHost === 'string' ? '' : `${cubinHost.mod.image.kind} ${cubinHost.mod.image.arch}`
    checks.add(`${unit.id}: the runtime loads the cubin ${o.arch} (not the PTX) from an offload binary holding both`,
      cubinImage === `cubin ${o.arch}` ? 'pass' : 'fail', typeof cubinHost === 'string' ? cubinHost : `loaded ${cubinImage}: ${cubinHost.mod.image.reason}`)
    const deviceHost = selfTest ? await load(ptxBytes, 'emulator standing in for the device', { backend: 'emulator' }) : cubinHost
    const jitHost = selfTest ? undefined : await load(ptxOnly, `PTX ${unit.ptxArch}, driver JIT`)
    if (jitHost && typeof jitHost !== 'string' && jitHost.mod.image.kind !== 'ptx') checks.add(`${unit.id}: PTX-only image loads as PTX`, 'fail', `loaded ${jitHost.mod.image.kind}`)
    const emuHost = await load(ptxBytes, 'emulator', { backend: 'emulator' })
    const launchedOnDevice = new Set<string>()
    for (const c of pending) {
      if (c.emulatorOnly && !selfTest) { row(c, 'not-run', [`emulator-only: ${c.emulatorOnly}`]); continue }
      // the parent resumes after this case if the process dies or hangs in it
      if (process.env.KP_GPU_PROGRESS) writeFileSync(process.env.KP_GPU_PROGRESS, c.key)
      // test-gpu.test.ts stands in for a kernel that never ends: the thread blocks as in a driver call
      if (process.env.KP_GPU_HANG_AT === c.key) for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
      if (typeof deviceHost === 'string') {
        if (selfTest && c.expectedEmulatorFailure) row(c, 'not-run', [`the emulator stands in for the device and refuses the module, as expected-failures.ts lists (${c.expectedEmulatorFailure})`])
        else row(c, 'fail', [`the device refused the module: ${deviceHost}`])
        continue
      }
      const t0 = performance.now()
      const dev = await c.run(deviceHost)
      await deviceHost.freeAll().catch(() => {})
      dev.launched.forEach((k) => launchedOnDevice.add(k))
      if (selfTest && c.expectedEmulatorFailure && !ok(dev)) {
        row(c, 'not-run', [`the emulator stands in for the device and fails it, as expected-failures.ts lists (${c.expectedEmulatorFailure})`])
        continue
      }
      const problems: string[] = []
      const lat = latitudeOf(dev.launched, latitudes)
      const r = row(c, 'pass', problems, { kernels: dev.launched, image: selfTest ? 'emulator (self-test)' : cubinImage, reference: failure(dev), latitude: describeLatitude(lat) })
      if (!ok(dev)) problems.push(`GPU: ${failure(dev)}`)
      if (dev.runError && sticky.test(dev.runError)) {
        r.status = 'fail'
        r.ms = performance.now() - t0
        await emitStop(c)
        return { checks: checks.list, kernels, recordings, resumeAfter: c.key }
      }
      // the driver-JIT run of the PTX alone against the cubin run
      if (!jitHost) r.jit = selfTest ? 'not run (self-test)' : ''
      else if (typeof jitHost === 'string') { r.jit = 'load failed'; problems.push(`JIT load: ${jitHost}`) }
      else {
        const jit = await c.run(jitHost)
        await jitHost.freeAll().catch(() => {})
        const cmp = compareCase(jit.outputs, dev.outputs, lat, { a: ok(jit), b: ok(dev) })
        r.jit = agreementText(cmp)
        r.maxUlpJit = cmp.maxUlp
        if (!ok(jit)) problems.push(`JIT: ${failure(jit)}`)
        if (jit.trace !== dev.trace) problems.push('JIT: the inputs differ from the cubin run (harness fault)')
        if (cmp.agreement === 'differs') problems.push(`JIT vs cubin: ${cmp.note}`)
        if (jit.runError && sticky.test(jit.runError)) {
          r.status = 'fail'
          await emitStop(c)
          return { checks: checks.list, kernels, recordings, resumeAfter: c.key }
        }
      }
      // the emulator against the GPU
      let emulatorAtRecording: string
      if (typeof emuHost === 'string') {
        r.emulator = c.expectedEmulatorFailure ? 'expected failure' : 'load failed'
        emulatorAtRecording = `not run: the emulator refuses the module: ${emuHost}`
        if (!c.expectedEmulatorFailure) problems.push(`emulator load: ${emuHost}`)
      } else {
        const emu = await c.run(emuHost)
        await emuHost.freeAll().catch(() => {})
        const cmp = compareCase(dev.outputs, emu.outputs, lat, { a: ok(dev), b: ok(emu) })
        r.maxUlp = cmp.maxUlp
        emulatorAtRecording = `${cmp.agreement}${cmp.maxUlp !== undefined ? `, max ${cmp.maxUlp} ulp` : ''}${ok(emu) ? '' : `; emulator ${failure(emu)}`}`
        if (emu.trace !== dev.trace) problems.push('emulator: the inputs differ from the GPU run (harness fault)')
        if (c.expectedEmulatorFailure && !ok(emu)) r.emulator = `expected failure (${c.expectedEmulatorFailure.split(':')[0]})`
        else {
          r.emulator = agreementText(cmp)
          if (!ok(emu)) problems.push(`emulator: ${failure(emu)}`)
          if (cmp.agreement === 'differs') problems.push(`emulator vs GPU: ${cmp.note}`)
          else if (cmp.agreement === 'within') r.emulator = `within (${cmp.outputs.filter((x) => x.differing).length} outputs differ)`
        }
      }
      r.status = problems.length ? 'fail' : 'pass'
      r.ms = performance.now() - t0
      if (dev.outputs.length) recordings.push(toData(c, dev, b.ptx, selfTest ? 'emulator (self-test)' : cubinImage, lat, emulatorAtRecording))
    }
    for (const h of new Set([cubinHost, deviceHost, jitHost, emuHost])) if (h && typeof h !== 'string') await h.mod.unload().catch(() => {})
    // every .entry of the unit ran, unless some of its cases did not run (emulator-only, filtered, refused)
    // (a corpus kernel no case declares has no inputs or reference yet: a gap of the corpus, named)
    const missing = b.manifest.kernels.map((k) => k.name).filter((k) => !launchedOnDevice.has(k))
    const unclaimed = unit.group === 'kernels' ? missing.filter((k) => !unit.cases.some((c) => c.declaredKernels?.some((id) => k.includes(id)))) : []
    const unitRows = kernels.filter((k) => k.unit === unit.id)
    const incomplete = unitRows.some((k) => k.status === 'not-run') || o.cases.length > 0 || resumeAfter !== undefined
    const name = `${unit.id}: every kernel ran on the ${selfTest ? 'device (the emulator, self-test)' : 'GPU'}`
    const unclaimedText = unclaimed.length ? `; no case of the corpus launches ${unclaimed.join(', ')} (no inputs or reference yet: add cases under test/fixtures/kernels)` : ''
    const claimedMissing = missing.filter((k) => !unclaimed.includes(k))
    if (!missing.length) checks.add(name, 'pass', `${b.manifest.kernels.length} kernels`)
    else if (!claimedMissing.length) checks.add(name, 'not-run', unclaimedText.slice(2))
    else if (incomplete) checks.add(name, 'not-run', `not launched: ${claimedMissing.join(', ')}; some cases of the unit did not run (see the kernel table)${unclaimedText}`)
    else checks.add(name, 'fail', `never launched, though a case declares them: ${claimedMissing.join(', ')}${unclaimedText}`)
  }
  return { checks: checks.list, kernels, recordings }

  async function emitStop(c: UnitCase) {
    checks.add(`sticky error in ${c.key}`, 'fail', 'the context is unusable after it; the remaining cases run in a fresh process')
  }
}
