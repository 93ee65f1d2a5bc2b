// `pnpm test:gpu` without a GPU (issue 18 item 4): its driver script against the libcuda test double
// (test/fixtures/runtime/libcuda-test-double.c) in --self-test mode, where the double answers the driver
// calls and the emulator stands in for the device's kernels, through the same code path (sections in child
// processes, case runs, comparisons, report, fixture writing); the fail-fast path without a driver; and the
// recorded-fixture check on fixtures this run recorded, untouched and tampered with, so it is shown to catch
// a difference between the emulator and the "hardware".
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { repoRoot, tempDir } from '../helpers/tools.js'
import { dawnEnvironment } from '../helpers/webgpu.js'
import { buildTestDouble } from '../runtime/libcuda-double.js'
import { checkRecordedFixtures, describeMissing, manifestName, type FixtureManifest } from './recorded.js'
import type { Report } from './report.js'

const td = buildTestDouble()
const runTs = join(repoRoot, 'test', 'gpu', 'run.ts')
/** `pnpm test:gpu` from its sources (tsx), as the package script runs it. */
const cliSource = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', runTs, ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env } })
// The same entry bundled as the GPU kit bundles it (scripts/gpu-kit.mjs --bundle-only), where its bare imports
// (koffi, webgpu) resolve from packages/runtime/node_modules: each section's child process then starts in a
// fraction of tsx's time. Most runs below use it; the first check runs the sources.
const bundle = join(repoRoot, 'packages', 'runtime', 'node_modules', '.cache', `kp-test-gpu-${process.pid}`, 'test-gpu.mjs')
process.on('exit', () => rmSync(join(bundle, '..'), { recursive: true, force: true }))
const bundled = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'gpu-kit.mjs'), '--bundle-only', bundle], { cwd: repoRoot, encoding: 'utf8' })
if (bundled.status !== 0) throw new Error(`gpu-kit.mjs --bundle-only failed: ${bundled.stderr}`)
const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [bundle, ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, KP_REPO_ROOT: repoRoot, ...env } })

// One float kernel and one 64-bit integer kernel with no latitude, one with approximate math, one kernel-corpus case.
const cases = ['emulator-own/vec_add', 'emulator-own/hash64', 'emulator-own/math_f32', 'kernels/vector_add']
const temps: string[] = []
process.on('exit', () => { for (const d of temps) rmSync(d, { recursive: true, force: true }) })
const temp = (prefix: string) => { const d = tempDir(prefix); temps.push(d); return d }
const rec = temp('kp-gpu-rec-')
const out = temp('kp-gpu-out-')
const selfTest = cli(['--self-test', '--libcuda', td.path, '--cases', cases.join(','), '--record', rec, '--out', out])
const report = existsSync(join(out, 'report.json')) ? (JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report) : undefined

// ---
const Cli = suite('pnpm test:gpu: the command')

Cli('without a driver it fails at once: exit status 1, "no NVIDIA driver: …", nothing run (from the sources, as `pnpm test:gpu` runs)', () => {
  const r = cliSource([], { KERNELPACK_LIBCUDA: '/nonexistent/libcuda.so.1' })
  assert.is(r.status, 1)
  assert.match(r.stderr, /^test:gpu: no NVIDIA driver: could not load \/nonexistent\/libcuda\.so\.1/)
  assert.match(r.stderr, /needs a machine with an NVIDIA GPU and its driver/)
  assert.not.match(r.stdout, /section/)
})

Cli('the test double is refused as hardware (no fake proof), and --self-test is refused on anything but the double', () => {
  const r = cli(['--libcuda', td.path])
  assert.is(r.status, 1)
  assert.match(r.stderr, /is the libcuda test double, not a GPU: run with --self-test/)
})

Cli('bad usage exits 2 naming the problem', () => {
  const r = cli(['--only', 'nope'])
  assert.is(r.status, 2)
  assert.match(r.stderr, /unknown section nope \(sections: smoke, images, api, errors, after-sticky, corpus, webgpu\)/)
})

Cli('a case that never ends is stopped after --case-timeout-s, reported, and the corpus goes on after it', () => {
  const out2 = temp('kp-gpu-hang-')
  const r = cli(['--self-test', '--libcuda', td.path, '--only', 'corpus', '--cases', 'emulator-own/vec_add,emulator-reference/saxpy', '--case-timeout-s', '2', '--no-record', '--out', out2],
    { KP_GPU_HANG_AT: 'emulator-own/vec_add' })
  assert.is(r.status, 1, r.stderr)
  const rep = JSON.parse(readFileSync(join(out2, 'report.json'), 'utf8')) as Report
  const vec = rep.kernels.find((k) => k.case === 'emulator-own/vec_add')!
  assert.is(vec.status, 'fail')
  assert.match(vec.problems.join(' '), /the section's process was stopped \(past the section's 3600 s or a case's 2 s\) while running this case/)
  assert.is(rep.kernels.find((k) => k.case === 'emulator-reference/saxpy')?.status, 'pass')
})

Cli('section webgpu: a CPU adapter is no proof (not run, naming it); allowed for this check, cases run on WebGPU and are compared with the device', () => {
  const dawn = dawnEnvironment()
  const args = ['--self-test', '--libcuda', td.path, '--only', 'webgpu', '--cases', 'emulator-own/vec_add,emulator-own/atomic_families,emulator-reference/saxpy', '--no-record']
  const refusedOut = temp('kp-gpu-wg-')
  const r0 = cli([...args, '--out', refusedOut], dawn)
  assert.is(r0.status, 0, r0.stderr)
  const rep0 = JSON.parse(readFileSync(join(refusedOut, 'report.json'), 'utf8')) as Report
  assert.is(rep0.checks.find((c) => c.name === 'WebGPU adapter (Dawn)')?.status, 'not-run')
  assert.match(rep0.checks.find((c) => c.name === 'the corpus on WebGPU')?.detail ?? '', /no hardware adapter \(google swiftshader.*fallback adapter\)/)
  const wgOut = temp('kp-gpu-wg-')
  const r = cli([...args, '--out', wgOut], { ...dawn, KP_GPU_WEBGPU_ANY_ADAPTER: '1' })
  const rep = JSON.parse(readFileSync(join(wgOut, 'report.json'), 'utf8')) as Report
  const by = (name: string) => rep.checks.find((c) => c.name === name || (c.name.startsWith(name.replace(/ on WebGPU$/, ' ')) && c.name.endsWith(' on WebGPU')))
  assert.is(by('emulator-own/vec_add on WebGPU')?.status, 'pass', r.stdout)
  assert.match(by('emulator-own/vec_add on WebGPU')!.detail, /^right; equal to CUDA/)
  assert.is(by('emulator-reference/saxpy on WebGPU')?.status, 'pass')
  // the fma probe reports SwiftShader's fma() as not fused, with its results
  const fma = rep.checks.find((c) => c.name.startsWith('fma() on this adapter'))
  assert.is(fma?.status, 'pass', rep.checks.map((c) => c.name).join(' | '))
  assert.match(fma!.detail, /^not fused: fma\.rn\.f32 is the exact sequence \(results 0x/)
  // warp collectives: SwiftShader's subgroups are 4 wide, so the workgroup-memory form, with the emulator's results
  const warps = rep.checks.find((c) => c.name.startsWith('warp collectives on this adapter'))
  assert.is(warps?.status, 'pass', warps?.detail)
  assert.match(warps!.detail, /^subgroup sizes 4–4; workgroup memory \(subgroups not 32 wide\); shfl, vote, activemask, match, redux, elect right for 4 inputs, translated at load and as shipped$/)
  // atomic_families has a 64-bit atom.min, which WGSL cannot express (no 64-bit atomics): not run, with the
  // translator's reason
  assert.is(by('emulator-own/atomic_families on WebGPU')?.status, 'not-run')
  assert.match(by('emulator-own/atomic_families on WebGPU')!.detail, /^refused: kernel atomic_families: PTX line \d+.*: 64-bit atom\.min: WGSL has no 64-bit atomics/)
  assert.match(by('the corpus on WebGPU (google swiftshader SwiftShader driver 5.0.0 (fallback adapter))')?.detail ?? rep.checks.map((c) => c.name).join(' | '), /^2 right \(0 of them not bit-equal to CUDA\), 0 wrong or failing, 1 not run/)
  assert.is(r.status, 0, r.stderr)
})

Cli.run()

// ---
const Self = suite('pnpm test:gpu --self-test against the libcuda test double')

Self('runs every section, passes, and reports the double as a self-test, never as hardware', () => {
  assert.is(selfTest.status, 0, `${selfTest.stdout}\n${selfTest.stderr}`)
  assert.ok(report)
  assert.is(report!.mode, 'self-test')
  assert.match(report!.device.gpu, /kernelpack libcuda test double/)
  assert.is(report!.device.arch, 'sm_90')
  assert.is(report!.device.driverCuda, '13.0')
  assert.equal(report!.summary.checks.fail + report!.summary.kernels.fail, 0)
  assert.equal([...new Set(report!.checks.map((c) => c.section))], ['smoke', 'images', 'api', 'errors', 'corpus', 'webgpu'])
  // no Vulkan driver here (the suite's process is not under chromium's SwiftShader ICD): the section says why
  const wg = report!.checks.filter((c) => c.section === 'webgpu')
  assert.ok(wg.length >= 1 && wg.every((c) => c.status === 'not-run'), JSON.stringify(wg))
  assert.match(wg.map((c) => c.detail).join(' '), /no adapter|no hardware adapter|did not load/)
  const md = readFileSync(join(out, 'report.md'), 'utf8')
  assert.match(md, /\*\*SELF-TEST against the libcuda test double: NOT a proof on hardware\.\*\*/)
  assert.match(md, /## Kernels .*max ULP/)
  assert.match(md, /## Not run \(and why\)/)
})

Self('the checks the double can answer pass; those that need kernels on a real driver are listed as not run, with the reason', () => {
  const by = (s: string, re: RegExp) => report!.checks.filter((c) => c.section === s && re.test(c.name))
  assert.is(by('images', /the runtime loads the cubin/)[0]?.status, 'pass')
  assert.is(by('images', /NoImageError naming the device/)[0]?.status, 'pass')
  assert.is(by('api', /^struct \w+ .* by value/).filter((c) => c.status === 'pass').length, 16)
  assert.is(by('api', /async copies/)[0]?.status, 'pass')
  assert.is(by('errors', /the runtime refuses/).filter((c) => c.status === 'pass').length, 2)
  for (const c of [...by('smoke', /./), ...by('errors', /driver refuses|illegal address|sticky/), ...by('images', /JIT|driver itself/)]) {
    assert.is(c.status, 'not-run', c.name)
    assert.match(c.detail, /needs a driver that runs kernels/)
  }
})

Self('every selected corpus case ran through the device path and was compared with the emulator', () => {
  assert.equal(report!.kernels.map((k) => cases.find((c) => k.case.startsWith(c))).sort(), [...cases].sort())
  for (const k of report!.kernels) {
    assert.is(k.status, 'pass', `${k.case}: ${k.problems.join(' | ')}`)
    assert.is(k.reference, 'pass')
    assert.is(k.emulator, 'equal')
  }
  const row = (prefix: string) => report!.kernels.find((k) => k.case.startsWith(prefix))!
  assert.is(row('emulator-own/vec_add').maxUlp, 0)
  assert.match(row('emulator-own/math_f32').latitude, /approximate: .*ex2\.approx/)
  assert.match(row('emulator-own/vec_add').latitude, /^none/)
})

Self('fixtures are written with a manifest naming the device, the seeds, the PTX and every output', () => {
  const m = JSON.parse(readFileSync(join(rec, manifestName('sm_90')), 'utf8')) as FixtureManifest
  assert.is(m.arch, 'sm_90')
  assert.match(m.recorded.gpu, /test double/)
  assert.match(m.recorded.driver, /test double/)
  assert.match(m.recorded.cudaToolkit, /release 13\.\d/)
  assert.equal(m.fixtures.map((f) => cases.find((c) => f.case.startsWith(c))), [...cases].sort())
  const vec = m.fixtures.find((f) => f.case === 'kernels/vector_add')!
  assert.match(vec.seed, /caseRng\("vector_add"\) = mulberry32 seeded with \d+/)
  assert.is(vec.file, 'kernels-vector_add.sm_90.bin')
  for (const f of m.fixtures) {
    const bin = readFileSync(join(rec, f.file))
    assert.is(createHash('sha256').update(bin).digest('hex'), f.sha256)
    assert.ok(f.outputs.length > 0 && f.trace.length === 64 && f.ptxSha256.length === 64)
  }
})

Self.run()

// ---
const Check = suite('the recorded-fixture check, on the fixtures the self-test recorded')

/** A copy of the recorded fixtures with `edit` applied to the manifest (and the .bin of `file`, the sha256 fixed unless `keepSha`). */
function tampered(edit: (m: FixtureManifest, bins: Map<string, Buffer>) => void, keepSha = false): string {
  const dir = temp('kp-gpu-tamper-')
  cpSync(rec, dir, { recursive: true })
  const path = join(dir, manifestName('sm_90'))
  const m = JSON.parse(readFileSync(path, 'utf8')) as FixtureManifest
  const bins = new Map(m.fixtures.map((f) => [f.file, readFileSync(join(dir, f.file))]))
  const before = new Map([...bins].map(([k, v]) => [k, Buffer.from(v)]))
  edit(m, bins)
  for (const f of m.fixtures) {
    const b = bins.get(f.file)!
    if (b.equals(before.get(f.file)!)) continue
    writeFileSync(join(dir, f.file), b)
    if (!keepSha) f.sha256 = createHash('sha256').update(b).digest('hex')
  }
  writeFileSync(path, JSON.stringify(m))
  return dir
}
/** The entry / result of the case whose key starts with `prefix`. */
const entry = (m: FixtureManifest, prefix: string) => m.fixtures.find((f) => f.case.startsWith(prefix))!
const resultOf = async (dir: string, prefix: string) => (await checkRecordedFixtures(dir)).results.find((r) => r.case.startsWith(prefix))!

Check('the untouched recording agrees with the emulator, and the cases without one are announced', async () => {
  const c = await checkRecordedFixtures(rec)
  assert.equal(c.arches, ['sm_90'])
  assert.equal(c.results.map((r) => [cases.find((k) => r.case.startsWith(k)), r.status]), [...cases].sort().map((k) => [k, 'pass']))
  assert.ok(c.missing.length > 100 && !c.missing.some((m) => cases.some((k) => m.startsWith(k))))
  assert.match(describeMissing(c, c.missing.length + cases.length), new RegExp(`NO GPU RECORDING for ${c.missing.length} of `))
})

Check('one float one ulp off in a kernel without latitude (vec_add) fails, naming the element and the ulps', async () => {
  const dir = tampered((m, bins) => {
    const f = entry(m, 'emulator-own/vec_add')
    const b = bins.get(f.file)!
    b.writeUInt32LE(b.readUInt32LE(f.outputs[0]!.offset + 4 * 7) + 1, f.outputs[0]!.offset + 4 * 7)
  })
  const r = await resultOf(dir, 'emulator-own/vec_add')
  assert.is(r.status, 'fail')
  assert.match(r.detail, /no approximate instruction, atomic or scheduling-dependent read, so the bits must agree: read0 \(#2\): 1 of 1234 differ \(max 1 ulp\); \[7\]/)
})

Check('a 64-bit integer off by one fails (hash64)', async () => {
  const dir = tampered((m, bins) => {
    const f = entry(m, 'emulator-own/hash64')
    const b = bins.get(f.file)!
    b.writeBigUInt64LE(b.readBigUInt64LE(f.outputs[0]!.offset + 8) ^ 1n, f.outputs[0]!.offset + 8)
  })
  const r = await resultOf(dir, 'emulator-own/hash64')
  assert.is(r.status, 'fail')
  assert.match(r.detail, /1 of \d+ differ; \[1\]/)
})

Check('approximate math (math_f32): one ulp off passes as within while the GPU passed its reference, and fails when it did not', async () => {
  const bump = (m: FixtureManifest, bins: Map<string, Buffer>) => {
    const f = entry(m, 'emulator-own/math_f32')
    const b = bins.get(f.file)!
    const at = f.outputs[0]!.offset + 4 * 40
    b.writeUInt32LE(b.readUInt32LE(at) + 1, at)
  }
  const within = await resultOf(tampered(bump), 'emulator-own/math_f32')
  assert.is(within.status, 'pass')
  assert.match(within.detail, /^within, max 1 ulp: both pass the case's reference; the difference is allowed by the PTX \(approximate: /)
  const failed = await resultOf(tampered((m, bins) => { bump(m, bins); entry(m, 'emulator-own/math_f32').referenceOnGpu = 'fail: wrong' }), 'emulator-own/math_f32')
  assert.is(failed.status, 'fail')
  assert.match(failed.detail, /the other side fails the reference/)
})

Check('a .bin that does not match its sha256 fails as corrupt', async () => {
  const dir = tampered((m, bins) => { bins.get(entry(m, 'kernels/vector_add').file)![0] ^= 1 }, true)
  const r = await resultOf(dir, 'kernels/vector_add')
  assert.is(r.status, 'fail')
  assert.match(r.detail, /sha256 .* differs from the manifest's .* \(corrupt or edited\)/)
})

Check('a fixture of a changed kernel, changed inputs or a removed case is stale: announced, not compared', async () => {
  const ptx = await resultOf(tampered((m) => { entry(m, 'emulator-own/vec_add').ptxSha256 = '0'.repeat(64) }), 'emulator-own/vec_add')
  assert.is(ptx.status, 'stale')
  assert.match(ptx.detail, /the PTX of emulator\/corpus-own\.cu \(compute_80\) differs from the one recorded/)
  const trace = await resultOf(tampered((m) => { entry(m, 'emulator-own/hash64').trace = '0'.repeat(64) }), 'emulator-own/hash64')
  assert.is(trace.status, 'stale')
  assert.match(trace.detail, /inputs or launches differ from the recorded ones/)
  const gone = await resultOf(tampered((m) => { entry(m, 'emulator-own/hash64').case = 'emulator-own/no such case' }), 'emulator-own/no such case')
  assert.is(gone.status, 'stale')
  assert.match(gone.detail, /the corpora have no case "emulator-own\/no such case" any more/)
})

Check('without a manifest nothing is compared and every case is missing', async () => {
  const c = await checkRecordedFixtures(temp('kp-gpu-empty-'))
  assert.equal(c.arches, [])
  assert.equal(c.results, [])
  assert.ok(c.missing.length > 100)
  assert.match(describeMissing(c, c.missing.length), /holds no manifest\.<arch>\.json yet/)
})

Check.run()
