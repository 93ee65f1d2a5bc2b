// `pnpm bench`: runs every bench/*.bench.ts (each exports `run(): Promise<BenchResult[]>`), prints one
// table and writes bench/results.json (DESIGN.md, "Contracts"). Pass names to run only some:
// `pnpm bench offload toolchain`. With KP_BENCH_SMOKE=1 every file runs in smoke mode (bench/lib.ts); the
// suite runs each file so through the per-file mode below (test/bench/smoke.test.ts).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { fmt, printResults, writeResults, type BenchResult } from './lib.js'

const dir = import.meta.dirname

// Each bench file runs in a process of its own (this script again, with KP_BENCH_FILE set), so that no file's
// figures depend on which ran before it in the same process: after emulator-workers.bench.ts the single-worker
// reduction of emulator.bench.ts measured 0.32 where it measures 0.55-0.60 alone. The child writes its
// figures to KP_BENCH_OUT (a temp file, then renamed).
const child = process.env.KP_BENCH_FILE
if (child !== undefined) {
  const out = process.env.KP_BENCH_OUT
  if (!out) throw new Error('bench/run.ts: KP_BENCH_FILE is set but KP_BENCH_OUT (the JSON file to write the figures to) is not')
  const mod = (await import(pathToFileURL(join(dir, child)).href)) as { run: () => Promise<BenchResult[]> }
  const rs = await mod.run()
  writeResults(out, rs)
  process.exit(0)
}

const only = process.argv.slice(2)
const files = readdirSync(dir).filter((f) => f.endsWith('.bench.ts')).sort()
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
const results: BenchResult[] = []
let failed = 0
const tmp = mkdtempSync(join(tmpdir(), 'kp-bench-'))
try {
  for (const f of files) {
    console.error(`# ${f}`)
    const out = join(tmp, `${f}.json`)
    const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { stdio: 'inherit', env: { ...process.env, KP_BENCH_FILE: f, KP_BENCH_OUT: out } })
    if (r.status !== 0) {
      failed++
      console.error(`  ${f} failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`}; its error is above)`)
      continue
    }
    const rs = JSON.parse(readFileSync(out, 'utf8')) as BenchResult[]
    for (const x of rs) console.error(`  ${x.name}: ${fmt(x.value)} ${x.unit} (ref ${fmt(x.referenceValue)}, ratio ${fmt(x.ratio)}, target ${x.target})`)
    results.push(...rs)
  }
} finally {
  rmSync(tmp, { recursive: true, force: true })
}

printResults(results)
const out = join(dir, 'results.json')
writeResults(out, results)
console.log(`\nwrote ${out} (${results.length} figures${failed ? `, ${failed} bench file(s) failed` : ''})`)
process.exit(failed ? 1 : 0)
