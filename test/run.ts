// Runs every test/**/*.test.ts file in its own Node process (uvu suites), a few at a time, and sums
// uvu's totals. Ends with the plain line `N passed, N failed` that CI reads; lines a passing file prints starting
// with `!!!` are shown anyway, and again above the totals.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { cpus } from 'node:os'

const root = join(import.meta.dirname, '..')
const filters = process.argv.slice(2)
const timeoutMs = Number(process.env.KP_TEST_TIMEOUT_MS ?? 600_000)
const jobs = Number(process.env.KP_TEST_JOBS ?? Math.max(2, cpus().length))

function list(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    if (name === 'fixtures' || name === 'node_modules' || name.startsWith('.')) continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...list(p))
    else if (name.endsWith('.test.ts')) out.push(p)
  }
  return out
}

// Longest first (from test/durations.json: each file's seconds in a cold CI run), so that no long file starts
// last and runs alone at the end; files it does not list count as 10 s. KP_TEST_DURATIONS_OUT=<path> writes
// this run's figures in the same form.
const durationsFile = join(root, 'test', 'durations.json')
const durations: Record<string, number> = existsSync(durationsFile) ? JSON.parse(readFileSync(durationsFile, 'utf8')) : {}
const expected = (f: string) => durations[relative(root, f)] ?? 10
const files = list(join(root, 'test'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort((a, b) => expected(b) - expected(a) || (a < b ? -1 : 1))
// eslint-disable-next-line no-control-regex
const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '')

interface Result { file: string; passed: number; failed: number; skipped: number; ms: number; output: string; code: number | null }

function runOne(file: string): Promise<Result> {
  const t0 = Date.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const timer = setTimeout(() => {
      output += `\n[runner] ${relative(root, file)} ran past ${timeoutMs} ms and was killed\n`
      try { process.kill(-child.pid!, 'SIGKILL') } catch { child.kill('SIGKILL') }
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      const text = strip(output)
      const num = (label: string) => {
        const all = [...text.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'gm'))]
        return all.reduce((n, m) => n + Number(m[1]), 0)
      }
      const total = num('Total')
      let passed = num('Passed')
      const skipped = num('Skipped')
      let failed = total - passed - skipped
      if (code !== 0 && failed === 0) failed = 1 // crashed, timed out, or failed outside a test
      if (total === 0 && code === 0) { failed = 1; output += '\n[runner] this file ran no test\n' }
      resolve({ file, passed, failed, skipped, ms: Date.now() - t0, output, code })
    })
  })
}

const results: Result[] = []
let next = 0
async function worker() {
  while (next < files.length) {
    const file = files[next++]!
    const r = await runOne(file)
    results.push(r)
    const rel = relative(root, file)
    const status = r.failed > 0 ? 'FAIL' : 'ok  '
    console.log(`${status} ${rel}  (${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped, ${(r.ms / 1000).toFixed(1)} s)`)
    if (r.failed > 0 || process.env.KP_TEST_VERBOSE) console.log(r.output.split('\n').map((l) => '    ' + l).join('\n'))
    else {
      // Notices a passing file must not hide (lines starting `!!!`: e.g. no GPU-recorded fixtures, issue 18)
      const loud = strip(r.output).split('\n').filter((l) => l.startsWith('!!!'))
      if (loud.length) {
        console.log(loud.map((l) => '    ' + l).join('\n'))
        notices.push(`${rel}:`, ...loud)
      }
    }
  }
}
const notices: string[] = []
const t0 = Date.now()
await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker))
if (process.env.KP_TEST_DURATIONS_OUT) {
  const out = Object.fromEntries([...results].sort((a, b) => b.ms - a.ms).map((r) => [relative(root, r.file), Math.round(r.ms / 1000)]))
  writeFileSync(process.env.KP_TEST_DURATIONS_OUT, JSON.stringify(out, null, 1) + '\n')
}
const passed = results.reduce((n, r) => n + r.passed, 0)
const failed = results.reduce((n, r) => n + r.failed, 0)
const skipped = results.reduce((n, r) => n + r.skipped, 0)
console.log('')
if (notices.length) console.log([...notices, ''].join('\n'))
console.log(`Test files: ${results.length}, failing files: ${results.filter((r) => r.failed > 0).map((r) => relative(root, r.file)).join(', ') || 'none'}, ${((Date.now() - t0) / 1000).toFixed(1)} s`)
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(failed > 0 || files.length === 0 ? 1 : 0)
