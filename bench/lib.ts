// Shared helpers for bench/*.bench.ts.
import { spawnSync } from 'node:child_process'
import { renameSync, writeFileSync } from 'node:fs'

/**
 * Smoke mode (`KP_BENCH_SMOKE=1`, issue 34): every bench file runs its smallest sizes with one untimed and one
 * timed run per side and checks no target, so that test/bench/smoke.test.ts can run each file in the suite
 * and see that it still produces all its entries (same names) with finite values beside a reference. The
 * figures of a smoke run mean nothing; `pnpm bench` without it measures.
 */
export const smoke = process.env.KP_BENCH_SMOKE === '1'

/** One figure of `bench/results.json` (DESIGN.md, "Contracts"). */
export interface BenchResult {
  name: string
  value: number
  unit: string
  /** The reference tool or baseline measured in the same run. */
  reference: string
  referenceValue: number
  /** value / referenceValue (for "lower is better" units) as the target states it. */
  ratio: number
  /** The target in words, e.g. "ratio <= 1.0". */
  target: string
}

/** The part of koffi the launch benches call (runtime.bench.ts on the test double, gpu.bench.ts on libcuda). */
export interface KoffiBench {
  load(path: string): { func(decl: string): (...args: unknown[]) => number }
  alloc(type: string, n: number): bigint
  view(ptr: bigint, n: number): ArrayBuffer
  proto(decl: string): unknown
  decode(ptr: bigint, type: unknown): (...args: unknown[]) => number
}

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/**
 * Runs each side `rounds` times, interleaved so that a drift in machine load hits every side alike: the
 * order is reversed every other round (A B, B A, A B, … : ABBA for two sides, ABC CBA for three), as
 * issue 17 item 13 asks of every bench that compares A with B. `run(side, round)` returns one measurement;
 * the result has each side's measurements in run order (report their medians).
 */
export async function interleaved<K extends string, T>(rounds: number, sides: readonly K[], run: (side: K, round: number) => T | Promise<T>): Promise<Record<K, T[]>> {
  const out = Object.fromEntries(sides.map((s) => [s, [] as T[]])) as Record<K, T[]>
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse()
    for (const side of order) out[side].push(await run(side, r))
  }
  return out
}

/** Runs a command under GNU time (`/usr/bin/time -f %M`, Debian package `time`): wall seconds and the
 *  child's peak resident memory in bytes. */
export function measureCommand(cmd: string, args: string[], opts: { cwd?: string } = {}): { seconds: number; peakBytes: number; status: number | null; stderr: string } {
  const t0 = process.hrtime.bigint()
  const r = spawnSync('/usr/bin/time', ['-f', '%M', cmd, ...args], { cwd: opts.cwd, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] })
  const t1 = process.hrtime.bigint()
  if (r.error) throw new Error(`cannot run /usr/bin/time (apt-get install -y time): ${r.error.message}`)
  const lines = r.stderr.trim().split('\n')
  const kb = Number(lines[lines.length - 1])
  return { seconds: Number(t1 - t0) / 1e9, peakBytes: kb * 1024, status: r.status, stderr: lines.slice(0, -1).join('\n') }
}

/** A figure for the table: 4 significant digits, exponent notation when very large or small, `-` for none. */
export function fmt(v: number | null | undefined): string {
  if (v == null || Number.isNaN(v)) return '-'
  if (Math.abs(v) >= 1e6 || (Math.abs(v) < 1e-3 && v !== 0)) return v.toExponential(3)
  return Number(v.toPrecision(4)).toString()
}

/** Prints the `pnpm bench` table (DESIGN.md, "Contracts"). */
export function printResults(results: readonly BenchResult[]): void {
  const cols = ['name', 'value', 'unit', 'reference', 'referenceValue', 'ratio', 'target'] as const
  const rows = results.map((r) => [r.name, fmt(r.value), r.unit, r.reference, fmt(r.referenceValue), fmt(r.ratio), r.target])
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((row) => String(row[i]).length)))
  const line = (cells: readonly string[]) => cells.map((c, i) => String(c).padEnd(widths[i]!)).join('  ')
  console.log(line(cols))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const row of rows) console.log(line(row))
}

/** Writes results.json (temp file, then rename). */
export function writeResults(file: string, results: readonly BenchResult[]): void {
  writeFileSync(file + '.tmp', JSON.stringify(results, null, 2) + '\n')
  renameSync(file + '.tmp', file)
}

