// `pnpm bench`: runs every bench/*.bench.ts (each exports `run(): Promise<BenchResult[]>`), prints one
// table and writes bench/results.json (DESIGN.md, "Contracts"). Pass names to run only some:
// `pnpm bench offload toolchain`.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { fmt, printResults, writeResults, type BenchResult } from './lib.js'

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

printResults(results)
const out = join(dir, 'results.json')
writeResults(out, results)
console.log(`\nwrote ${out} (${results.length} figures${failed ? `, ${failed} bench file(s) failed` : ''})`)
process.exit(failed ? 1 : 0)
