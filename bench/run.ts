// `pnpm bench`: runs every bench/*.bench.ts (each exports `run(): Promise<BenchResult[]>`), prints one
// table and writes bench/results.json (DESIGN.md, "Contracts"). Pass names to run only some:
// `pnpm bench offload toolchain`.
import { readdirSync, writeFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { BenchResult } from './lib.js'

const dir = import.meta.dirname
const only = process.argv.slice(2)
const files = readdirSync(dir).filter((f) => f.endsWith('.bench.ts')).sort()
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
const results: BenchResult[] = []
let failed = 0
for (const f of files) {
  console.error(`# ${f}`)
  try {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as { run: () => Promise<BenchResult[]> }
    const rs = await mod.run()
    for (const r of rs) console.error(`  ${r.name}: ${fmt(r.value)} ${r.unit} (ref ${fmt(r.referenceValue)}, ratio ${fmt(r.ratio)}, target ${r.target})`)
    results.push(...rs)
  } catch (err) {
    failed++
    console.error(`  ${f} failed: ${(err as Error).stack ?? err}`)
  }
}

function fmt(v: number | null | undefined): string {
  if (v == null || Number.isNaN(v)) return '-'
  if (Math.abs(v) >= 1e6 || (Math.abs(v) < 1e-3 && v !== 0)) return v.toExponential(3)
  return Number(v.toPrecision(4)).toString()
}

const cols = ['name', 'value', 'unit', 'reference', 'referenceValue', 'ratio', 'target'] as const
const rows = results.map((r) => [r.name, fmt(r.value), r.unit, r.reference, fmt(r.referenceValue), fmt(r.ratio), r.target])
const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((row) => String(row[i]).length)))
const line = (cells: readonly string[]) => cells.map((c, i) => String(c).padEnd(widths[i]!)).join('  ')
console.log(line(cols))
console.log(widths.map((w) => '-'.repeat(w)).join('  '))
for (const row of rows) console.log(line(row))
const out = join(dir, 'results.json')
writeFileSync(out + '.tmp', JSON.stringify(results, null, 2) + '\n')
renameSync(out + '.tmp', out)
console.log(`\nwrote ${out} (${results.length} figures${failed ? `, ${failed} bench file(s) failed` : ''})`)
process.exit(failed ? 1 : 0)
