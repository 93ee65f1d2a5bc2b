// Toolchain build speed, measured side by side in one run:
//  1. cold: 24 kernel files × 3 targets (80-real;90 = sm_80 cubin, sm_90 cubin, compute_90 PTX) with an
//     empty cache through buildCudaFile, against one nvcc command per file and target (what kernelpack ran
//     before issue 27) run by `xargs -P$(nproc)` (no cache, no manifest, no packing);
//  2. cold against what CMake runs (issue 27): one `nvcc -fatbin` per file with every -gencode, files in
//     parallel by `xargs -P$(nproc)`, for '80-real;90' and '75-real;80-real;86-real;89-real;90';
//  3. warm: the same build again with everything cached, against the cold build.
// The sides run interleaved, A B B A (issue 17 item 13: one after the other, load drift on a shared machine
// moved the ratio from 1.07 to 2.47), each kernelpack cold build followed by warm builds on its cache;
// the figures are medians.
// Sources: the reference corpus (test/fixtures/reference-cu, bad.cu excepted), three copies of each with a
// distinct macro and device variable so that no two files are the same compile or give the same PTX.
// Smoke mode (KP_BENCH_SMOKE=1, bench/lib.ts): one file (one copy), one round (A B): a cold build is a first
// run by definition, so no side has an untimed run; the warm builds follow their cold build as always.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  buildCudaFile, BuildSession, closeProcessShell, compileArgs, findCompiler, parseArchSpec, resolveOptions, type Target,
} from '@kernelpack/toolchain'
import { interleaved, median, smoke, type BenchResult } from './lib.js'

/** The arch sets measured: the first also against the per-target commands and for the warm rebuild. */
const archSets = smoke ? ['80-real;90'] : ['80-real;90', '75-real;80-real;86-real;89-real;90']

/** nvcc's -gencode arguments for these targets, one per virtual architecture (`arch=compute_90,code=[sm_90,compute_90]`). */
function fatbinArgs(targets: Target[]): string[] {
  const byVirtual = new Map<string, string[]>()
  for (const t of targets) {
    const v = `compute_${t.sm}${t.suffix}`
    byVirtual.set(v, [...(byVirtual.get(v) ?? []), t.target])
  }
  return ['-fatbin', ...[...byVirtual].flatMap(([v, codes]) => ['-gencode', `arch=${v},code=${codes.length > 1 ? `[${codes.join(',')}]` : codes[0]}`])]
}
// Rounds of the interleaving: 2 (A B, B A) runs each side twice, about 5 minutes on the 2-core CI machine;
// KP_BENCH_ROUNDS=4 for steadier medians.
const rounds = smoke ? 1 : Math.max(2, Number(process.env.KP_BENCH_ROUNDS ?? 2))
/** Copies of each corpus file (distinct compiles) and how many corpus files: 8 x 3 = 24, smoke 1 x 1. */
const copies = smoke ? 1 : 3
const corpusFiles = smoke ? 1 : Infinity

function seconds(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e9
}

/** CPU seconds (user + system) of this process and of its waited-for children, from /proc/self/stat
 *  (utime, stime, cutime, cstime in clock ticks; proc(5)). On a shared machine the wall clock depends on
 *  what else runs; CPU time measures the work each side did. */
function cpuSeconds(): { self: number; children: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields after the command name start at field 3 (state); utime is field 14.
  const tick = 100
  return { self: (Number(f[11]) + Number(f[12])) / tick, children: (Number(f[13]) + Number(f[14])) / tick }
}

export async function run(): Promise<BenchResult[]> {
  const root = mkdtempSync(join(tmpdir(), 'kp-bench-toolchain-'))
  try {
    const corpus = join(import.meta.dirname, '..', 'test', 'fixtures', 'reference-cu')
    const srcDir = join(root, 'src')
    mkdirSync(srcDir)
    const files: string[] = []
    for (const f of readdirSync(corpus).filter((n) => n.endsWith('.cu') && n !== 'bad.cu').sort().slice(0, corpusFiles)) {
      for (let copy = 0; copy < copies; copy++) {
        const file = join(srcDir, f.replace(/\.cu$/, `_${copy}.cu`))
        // a device variable of its own, so that no two copies give the same PTX (ptxas's work is cached by the
        // PTX's content: identical PTX would be assembled once for all copies)
        writeFileSync(file, `#define KP_BENCH_COPY ${copy}\n__device__ int kp_bench_copy_${copy} = ${copy};\n${readFileSync(join(corpus, f), 'utf8')}`)
        files.push(file)
      }
    }
    const expected = smoke ? 1 : 24
    if (files.length !== expected) throw new Error(`expected ${expected} bench files from ${corpus}, found ${files.length}`)

    const compiler = await findCompiler('nvcc')
    const jobs = availableParallelism()
    // Untimed: one build into a throwaway cache, which loads the modules a build uses (the PTX front end,
    // c++filt's first start) as any process that has built once, a bundler's or a watcher's, has them.
    await buildCudaFile(files[0]!, { arch: archSets[0], compiler: 'nvcc', cacheDir: join(root, 'cache-warm-up') })
    await closeProcessShell() // its compilers' CPU counted now, not in the first timed side's
    const o = resolveOptions({})
    const results: BenchResult[] = []
    for (const arch of archSets) {
      const targets = parseArchSpec(arch, { supported: compiler.archs })
      const first = arch === archSets[0]
      const tag = arch.replace(/[^0-9a-z]+/gi, '-')

      // Reference 1 (the first arch set): one nvcc command per file and target, exactly the arguments of
      // compileArgs (what kernelpack ran per target before issue 27).
      const refOut = join(root, `ref-${tag}`)
      mkdirSync(refOut)
      const lines = files.flatMap((file, i) => targets.map((t) => {
        const base = join(refOut, `${i}-${t.target}`)
        return compileArgs(compiler, t, o, { input: file, output: `${base}.out`, depfile: `${base}.d`, includeDirs: [] }).join(' ')
      }))
      // Reference 2: what a CMake build runs, one `nvcc -fatbin` per file with every -gencode (nvcc runs the
      // front end once per virtual architecture and ptxas once per real one), files in parallel.
      const fatbinLines = files.map((file, i) => [...fatbinArgs(targets), '-o', join(refOut, `${i}.fatbin`), file].join(' '))
      const runXargs = (commands: string[]) => {
        const cmdFile = join(root, 'commands.txt')
        writeFileSync(cmdFile, commands.join('\n') + '\n')
        const c0 = cpuSeconds()
        const t0 = process.hrtime.bigint()
        const r = spawnSync('xargs', ['-P', String(jobs), '-L', '1', compiler.path], { stdio: ['pipe', 'ignore', 'pipe'], input: readFileSync(cmdFile) })
        const s = seconds(t0)
        const c1 = cpuSeconds()
        if (r.status !== 0) throw new Error(`xargs nvcc failed: ${r.stderr}`)
        return { s, cpu: c1.children - c0.children }
      }

      const runOurs = async (cacheDir: string) => {
        const session = new BuildSession()
        const c0 = cpuSeconds()
        const t0 = process.hrtime.bigint()
        const rs = await Promise.all(files.map((f) => buildCudaFile(f, { arch, compiler: 'nvcc', cacheDir, session, jobs })))
        const s = seconds(t0)
        // the compilers ran under the shell that starts the build's processes: once it has ended, their CPU is
        // in this process's children's
        await closeProcessShell()
        const c1 = cpuSeconds()
        return { s, cpu: c1.self - c0.self + c1.children - c0.children, compiles: rs.reduce((n, r) => n + r.stats.compiles, 0) }
      }
      // nvcc's plan: a front end per virtual architecture, ptxas per real one
      const virtuals = new Set(targets.map((t) => `compute_${t.sm}${t.suffix}`)).size
      const expected = files.length * (virtuals + targets.filter((t) => t.kind === 'cubin').length)

      const warm: number[] = []
      const sides = first ? (['xargs', 'fatbin', 'kernelpack'] as const) : (['fatbin', 'kernelpack'] as const)
      const runs = await interleaved(rounds, sides as readonly ('xargs' | 'fatbin' | 'kernelpack')[], async (side, round) => {
        if (side === 'xargs') return runXargs(lines)
        if (side === 'fatbin') return runXargs(fatbinLines)
        const cache = join(root, `cache-${tag}-${round}`)
        const r = await runOurs(cache)
        if (r.compiles !== expected) throw new Error(`cold build ran ${r.compiles} compiler processes, expected ${expected}`)
        // the warm builds right after their cold one: the same machine state as the cold figure
        for (let i = 0; i < 2; i++) {
          const w = await runOurs(cache)
          if (w.compiles !== 0) throw new Error(`warm build ran ${w.compiles} compiles`)
          warm.push(w.s)
        }
        return r
      })
      const coldS = median(runs.kernelpack.map((r) => r.s))
      const cpuS = median(runs.kernelpack.map((r) => r.cpu))
      const fatS = median(runs.fatbin.map((r) => r.s))
      const fatCpuS = median(runs.fatbin.map((r) => r.cpu))
      const order = first ? 'ABCCBA' : 'ABBA'
      if (first) {
        const refS = median(runs.xargs.map((r) => r.s))
        const refCpuS = median(runs.xargs.map((r) => r.cpu))
        results.push({
          name: `toolchain cold build, ${files.length} files x ${targets.length} targets (nvcc, ${jobs} jobs)`,
          value: coldS, unit: 's',
          reference: `the same ${lines.length} per-target nvcc commands via xargs -P${jobs} (medians of ${rounds} runs each, ${order})`,
          referenceValue: refS, ratio: coldS / refS, target: 'ratio <= 1.10',
        }, {
          name: `toolchain cold build CPU time (kernelpack process + compilers), ${files.length} files x ${targets.length} targets`,
          value: cpuS, unit: 's CPU',
          reference: `the same ${lines.length} per-target nvcc commands via xargs -P${jobs} (CPU time of the compilers)`,
          referenceValue: refCpuS, ratio: cpuS / refCpuS, target: 'ratio <= 1.10',
        })
      }
      results.push({
        name: `toolchain cold build vs nvcc -fatbin, ${files.length} files, arch '${arch}' (nvcc, ${jobs} jobs)`,
        value: coldS, unit: 's',
        reference: `one nvcc -fatbin per file with every -gencode (${fatbinArgs(targets).filter((a) => a !== '-gencode').join(' ')}), xargs -P${jobs} (medians of ${rounds} runs each, ${order})`,
        referenceValue: fatS, ratio: coldS / fatS, target: 'ratio <= 1.0',
      }, {
        name: `toolchain cold build CPU time vs nvcc -fatbin, ${files.length} files, arch '${arch}'`,
        value: cpuS, unit: 's CPU',
        reference: 'one nvcc -fatbin per file with every -gencode (CPU time of the compilers)',
        referenceValue: fatCpuS, ratio: cpuS / fatCpuS, target: 'ratio <= 1.0 (informative: the CPU the cold build spends)',
      })
      if (first) {
        results.push({
          name: `toolchain warm rebuild, ${files.length} files x ${targets.length} targets (all cached)`,
          value: median(warm), unit: 's',
          reference: 'kernelpack cold build (same run)',
          referenceValue: coldS, ratio: median(warm) / coldS, target: 'ratio <= 0.03',
        })
      }
    }
    return results
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
