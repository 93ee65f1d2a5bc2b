// Every bench file runs in the suite in smoke mode (issue 34): `pnpm bench` is a contract (DESIGN.md,
// "Contracts": a table and bench/results.json, one figure per entry beside its reference), and a bench that
// throws (as `pnpm bench runtime` did once the manifest-against-PTX check landed) or loses an entry must fail
// CI, not wait for someone to run the benches. Each file runs through bench/run.ts's per-file mode (its own
// process, as `pnpm bench` runs it) with KP_BENCH_SMOKE=1: smallest sizes, one untimed and one timed run per
// side, no target checked. The test checks the entries by name (numbers in names are sizes and counts, which
// smoke mode makes small) and that each has a finite value, reference value and ratio beside a named
// reference. Timings are never asserted: a smoke run's figures mean nothing.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BenchResult } from '../../bench/lib.js'
import { repoRoot } from '../helpers/tools.js'

const benchDir = join(repoRoot, 'bench')

/** Bench files the suite cannot run, and why; each must still say so itself when run where it cannot measure. */
const excluded: Record<string, string> = {
  'gpu.bench.ts': 'needs an NVIDIA GPU and driver, which CI does not have, and refuses the libcuda test double by design ' +
    '(runtime.bench.ts measures that); without a driver it returns every figure as "no GPU" with no number, and its ' +
    'launch loops run against the test double, both checked by test/bench/gpu-bench.test.ts; on a GPU machine run ' +
    '`KP_BENCH_SMOKE=1 pnpm bench gpu`',
}

/**
 * The entries each bench file produces, in order. In a pattern `#` stands for a number (sizes, counts, and
 * figures some names carry) and `*` for any text (a machine's adapter name); everything else must match
 * exactly. A bench that adds or renames an entry updates its list here.
 */
const expected: Record<string, string[]> = {
  'emulator-workers.bench.ts': [
    'emulator workers: vecAdd #^#, # workers vs #',
    'emulator workers: shared-memory reduction #^# (#-thread blocks), # workers vs #',
    'emulator workers: tiled matmul #x#x# (#x# tiles), # workers vs #',
    'emulator workers: warp-shuffle reduction #^# (__shfl_down_sync, #-thread blocks), # workers vs #',
    'emulator workers: block scan #^# (Hillis-Steele in shared memory, #-thread blocks), # workers vs #',
    'emulator workers: launch cost, one block on # worker vs the calling thread',
  ],
  'emulator.bench.ts': [
    'emulator vecAdd #^# (# M thread-instr)',
    'emulator default tiers vs JS tier: vecAdd #^#',
    'emulator vs native: vecAdd #^#',
    'emulator shared-memory reduction #^# (#-thread blocks) (# M thread-instr)',
    'emulator default tiers vs JS tier: shared-memory reduction #^# (#-thread blocks)',
    'emulator vs native: shared-memory reduction #^# (#-thread blocks)',
    'emulator sanitizer, all checks: shared-memory reduction #^# (#-thread blocks) (#x slower)',
    'emulator tiled matmul #x#x# (#x# tiles) (# M thread-instr)',
    'emulator default tiers vs JS tier: tiled matmul #x#x# (#x# tiles)',
    'emulator vs native: tiled matmul #x#x# (#x# tiles)',
    'emulator sanitizer, all checks: tiled matmul #x#x# (#x# tiles) (#x slower)',
    'emulator warp-shuffle reduction #^# (shfl.down, #-thread blocks) (# M thread-instr)',
    'emulator default tiers vs JS tier: warp-shuffle reduction #^# (shfl.down, #-thread blocks)',
    'emulator vs native: warp-shuffle reduction #^# (shfl.down, #-thread blocks)',
    'emulator block scan #^# (Hillis-Steele in shared memory, #-thread blocks) (# M thread-instr)',
    'emulator default tiers vs JS tier: block scan #^# (Hillis-Steele in shared memory, #-thread blocks)',
    'emulator vs native: block scan #^# (Hillis-Steele in shared memory, #-thread blocks)',
    'emulator layernorm #x# (shfl.bfly block sums through shared memory, #-thread blocks) (# M thread-instr)',
    'emulator default tiers vs JS tier: layernorm #x# (shfl.bfly block sums through shared memory, #-thread blocks)',
    'emulator vs native: layernorm #x# (shfl.bfly block sums through shared memory, #-thread blocks)',
    'emulator warp-synchronous reduction #^# (volatile last warp in lockstep, #-thread blocks) (# M thread-instr)',
    'emulator default tiers vs JS tier: warp-synchronous reduction #^# (volatile last warp in lockstep, #-thread blocks)',
    'emulator vs native: warp-synchronous reduction #^# (volatile last warp in lockstep, #-thread blocks)',
  ],
  'emulator-exact-fma.bench.ts': [
    'emulator (exact fma path) tiled matmul #x#x# (#x# tiles) (# M thread-instr)',
    'emulator (exact fma path) default tiers vs JS tier: tiled matmul #x#x# (#x# tiles)',
    'emulator (exact fma path) vs native: tiled matmul #x#x# (#x# tiles)',
  ],
  'offload.bench.ts': [
    'offload pack # MiB: time',
    'offload pack # MiB: peak RSS / image size',
    'offload pack # MiB: peak RSS',
    'offload: node startup alone (floor of the times above)',
    'offload unpack # MiB: time',
    'offload unpack # MiB: peak RSS / image size',
    'offload unpack # MiB: peak RSS',
    'offload pack # MiB: time',
    'offload pack # MiB: peak RSS / image size',
    'offload pack # MiB: peak RSS',
    'offload unpack # MiB: time',
    'offload unpack # MiB: peak RSS / image size',
    'offload unpack # MiB: peak RSS',
  ],
  'runtime.bench.ts': [
    'runtime: Kernel.launch, # args (check + pack + cuLaunchKernelEx), test double (CPU ns/launch)',
    'runtime: Kernel.launch awaited, # args, test double (CPU ns/launch)',
    'runtime: launches per second (# args, test double)',
  ],
  'toolchain.bench.ts': [
    'toolchain cold build, # files x # targets (nvcc, # jobs)',
    'toolchain cold build CPU time (kernelpack process + compilers), # files x # targets',
    "toolchain cold build vs nvcc -fatbin, # files, arch '#-real;#' (nvcc, # jobs)",
    "toolchain cold build CPU time vs nvcc -fatbin, # files, arch '#-real;#'",
    'toolchain warm rebuild, # files x # targets (all cached)',
  ],
  'unplugin.bench.ts': [
    'unplugin: vite build, # .cu, cold (mean of #)',
    'unplugin: vite build, # .cu, warm',
    'unplugin: vite dev HMR, .cu save → updated stub',
  ],
  'webgpu.bench.ts': [
    'webgpu vecAdd #^# (chromium, *; WGSL by emit-wgsl)',
    'webgpu translated vs hand-written WGSL: vecAdd #^# (chromium, *)',
    'webgpu tiled matmul #x#x# (#x# tiles) (chromium, *; WGSL by emit-wgsl)',
    'webgpu translated vs hand-written WGSL: tiled matmul #x#x# (#x# tiles) (chromium, *)',
    'webgpu shared-memory reduction #^# (chromium, *; WGSL by emit-wgsl)',
    'webgpu translated vs hand-written WGSL: shared-memory reduction #^# (chromium, *)',
    'webgpu sqrt and divide #^# (chromium, *; WGSL by emit-wgsl)',
    'webgpu translated vs hand-written WGSL: sqrt and divide #^# (chromium, *)',
    'webgpu vecAdd in f64 (software binary64) #^# (chromium, *; WGSL by emit-wgsl)',
    'webgpu translated vs hand-written WGSL: vecAdd in f64 (software binary64) #^# (chromium, *)',
  ],
}

/** A name pattern as a regular expression: `#` a number, `*` any text, the rest literal. */
function namePattern(p: string): RegExp {
  const body = p.split(/([#*])/).map((part) => part === '#' ? '\\d+(?:\\.\\d+)?' : part === '*' ? '.+' : part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('')
  return new RegExp(`^${body}$`)
}

/** Problems with one bench file's entries (none: it produced exactly the expected entries, each complete). */
function checkEntries(file: string, rs: unknown, want: readonly string[]): string[] {
  if (!Array.isArray(rs)) return [`${file}: run() returned ${typeof rs}, not an array of figures`]
  const bad: string[] = []
  const names = rs.map((r: Partial<BenchResult>) => r?.name)
  if (rs.length !== want.length) bad.push(`${file}: ${rs.length} entries, expected ${want.length}: got ${JSON.stringify(names)}`)
  want.forEach((p, i) => {
    const n = names[i]
    if (typeof n !== 'string' || !namePattern(p).test(n)) bad.push(`${file}: entry ${i} is ${JSON.stringify(n)}, expected one named like "${p}"`)
  })
  for (const r of rs as Array<Partial<BenchResult>>) {
    const what = `${file}: "${r?.name}"`
    for (const k of ['value', 'referenceValue', 'ratio'] as const) {
      if (typeof r?.[k] !== 'number' || !Number.isFinite(r[k])) bad.push(`${what}: ${k} is ${r?.[k]}, not a finite number`)
    }
    for (const k of ['unit', 'reference', 'target'] as const) {
      if (typeof r?.[k] !== 'string' || r[k].trim() === '') bad.push(`${what}: no ${k}`)
    }
  }
  return bad
}

/** Runs one bench file as `pnpm bench` runs it (bench/run.ts, its per-file mode) in smoke mode. */
function runSmoke(file: string): Promise<{ code: number | null; output: string; results?: unknown; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'kp-bench-smoke-'))
  const out = join(dir, 'results.json')
  const t0 = Date.now()
  return new Promise((resolve) => {
    execFile(process.execPath, ['--conditions=source', '--import', 'tsx', join(benchDir, 'run.ts')], {
      cwd: repoRoot,
      env: { ...process.env, KP_BENCH_SMOKE: '1', KP_BENCH_FILE: file, KP_BENCH_OUT: out },
      encoding: 'utf8', maxBuffer: 64 << 20, timeout: 300_000, killSignal: 'SIGKILL',
    }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0
      const results = code === 0 && existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) as unknown : undefined
      rmSync(dir, { recursive: true, force: true })
      resolve({ code, output: `${stdout}${stderr}${err && code === null ? `\n(${err.message})` : ''}`, results, seconds: (Date.now() - t0) / 1000 })
    })
  })
}

const benchFiles = readdirSync(benchDir).filter((f) => f.endsWith('.bench.ts')).sort()

const Smoke = suite('bench smoke (KP_BENCH_SMOKE=1)')

Smoke('every bench file is run here or excluded with a reason, and the lists name no file that is gone', () => {
  for (const f of benchFiles) assert.ok((f in expected) !== (f in excluded), `${f}: add its entries to \`expected\` in test/bench/smoke.test.ts (or, if CI cannot run it, to \`excluded\` with the reason)`)
  for (const f of [...Object.keys(expected), ...Object.keys(excluded)]) assert.ok(benchFiles.includes(f), `${f} is listed in test/bench/smoke.test.ts but bench/${f} does not exist`)
})

Smoke('the entry check fails a bench that loses an entry, renames one, or reports a figure without a number', () => {
  const want = expected['runtime.bench.ts']!
  const entry = (name: string): BenchResult => ({ name, value: 300, unit: 'ns', reference: 'bare', referenceValue: 200, ratio: 1.5, target: 't' })
  const good = [
    entry('runtime: Kernel.launch, 6 args (check + pack + cuLaunchKernelEx), test double (CPU ns/launch)'),
    entry('runtime: Kernel.launch awaited, 6 args, test double (CPU ns/launch)'),
    entry('runtime: launches per second (6 args, test double)'),
  ]
  assert.equal(checkEntries('runtime.bench.ts', good, want), [])
  assert.ok(checkEntries('runtime.bench.ts', good.slice(0, 2), want).some((m) => /2 entries, expected 3/.test(m)))
  assert.ok(checkEntries('runtime.bench.ts', [good[0], entry('runtime: launches per second'), good[2]], want).some((m) => /entry 1 is/.test(m)))
  assert.ok(checkEntries('runtime.bench.ts', [good[0], { ...good[1]!, ratio: NaN }, good[2]], want).some((m) => /ratio is NaN/.test(m)))
  assert.ok(checkEntries('runtime.bench.ts', [good[0], { ...good[1]!, referenceValue: null as unknown as number }, good[2]], want).some((m) => /referenceValue is null/.test(m)))
  assert.ok(checkEntries('runtime.bench.ts', [good[0], good[1], { ...good[2]!, reference: '' }], want).some((m) => /no reference/.test(m)))
})

const timings: string[] = []
for (const f of benchFiles.filter((x) => x in expected)) {
  Smoke(`bench/${f} runs in smoke mode and produces its entries, each with finite figures beside a reference`, async () => {
    const r = await runSmoke(f)
    timings.push(`${f} ${r.seconds.toFixed(1)} s`)
    assert.ok(r.code === 0, `bench/${f} failed in smoke mode (exit ${r.code}); its output ends:\n${r.output.slice(-4000)}`)
    const bad = checkEntries(f, r.results, expected[f]!)
    assert.ok(bad.length === 0, bad.join('\n'))
  })
}

Smoke.after(() => console.log(`smoke runs: ${timings.join(', ')}; not run here: ${Object.keys(excluded).map((f) => `${f} (${excluded[f]})`).join('; ')}`))

Smoke.run()
