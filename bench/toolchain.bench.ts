// Toolchain build speed, measured side by side in one run:
//  1. cold: 24 kernel files × 3 targets (80-real;90 = sm_80 cubin, sm_90 cubin, compute_90 PTX) with an
//     empty cache through buildCudaFile, against the very same nvcc command lines run by
//     `xargs -P$(nproc)` (no cache, no manifest, no packing): the overhead of everything kernelpack adds.
//  2. warm: the same build again with everything cached, against the cold build.
// The sides run interleaved, A B B A (issue 17 item 13: one after the other, load drift on a shared machine
// moved the ratio from 1.07 to 2.47), each kernelpack cold build followed by warm builds on its cache;
// the figures are medians.
// Sources: the reference corpus (test/fixtures/reference-cu, bad.cu excepted), three copies of each with a
// distinct macro so that no two files are the same compile.
// Smoke mode (KP_BENCH_SMOKE=1, bench/lib.ts): one file (one copy), one round (A B): a cold build is a first
// run by definition, so no side has an untimed run; the warm builds follow their cold build as always.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  buildCudaFile, BuildSession, compileArgs, findCompiler, parseArchSpec, resolveOptions,
} from '@kernelpack/toolchain'
import { interleaved, median, smoke, type BenchResult } from './lib.js'

const arch = '80-real;90'
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
        writeFileSync(file, `#define KP_BENCH_COPY ${copy}\n${readFileSync(join(corpus, f), 'utf8')}`)
        files.push(file)
      }
    }
    const expected = smoke ? 1 : 24
    if (files.length !== expected) throw new Error(`expected ${expected} bench files from ${corpus}, found ${files.length}`)

    const compiler = await findCompiler('nvcc')
    const targets = parseArchSpec(arch, { supported: compiler.archs })
    const jobs = availableParallelism()

    // The reference: one nvcc command per file and target, exactly the arguments buildCudaFile uses.
    const refOut = join(root, 'ref')
    mkdirSync(refOut)
    const o = resolveOptions({})
    const lines = files.flatMap((file, i) => targets.map((t) => {
      const base = join(refOut, `${i}-${t.target}`)
      return compileArgs(compiler, t, o, { input: file, output: `${base}.out`, depfile: `${base}.d`, includeDirs: [] }).join(' ')
    }))
    const cmdFile = join(root, 'commands.txt')
    writeFileSync(cmdFile, lines.join('\n') + '\n')
    const runXargs = () => {
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
      const c1 = cpuSeconds()
      return { s, cpu: c1.self - c0.self + c1.children - c0.children, compiles: rs.reduce((n, r) => n + r.stats.compiles, 0) }
    }

    const warm: number[] = []
    const runs = await interleaved(rounds, ['xargs', 'kernelpack'] as const, async (side, round) => {
      if (side === 'xargs') return runXargs()
      const cache = join(root, `cache-${round}`)
      const r = await runOurs(cache)
      if (r.compiles !== files.length * targets.length) throw new Error(`cold build ran ${r.compiles} compiles, expected ${files.length * targets.length}`)
      // the warm builds right after their cold one: the same machine state as the cold figure
      for (let i = 0; i < 2; i++) {
        const w = await runOurs(cache)
        if (w.compiles !== 0) throw new Error(`warm build ran ${w.compiles} compiles`)
        warm.push(w.s)
      }
      return r
    })
    const coldS = median(runs.kernelpack.map((r) => r.s))
    const refS = median(runs.xargs.map((r) => r.s))
    const warmS = median(warm)
    const cpuS = median(runs.kernelpack.map((r) => r.cpu))
    const refCpuS = median(runs.xargs.map((r) => r.cpu))
    return [
      {
        name: `toolchain cold build, ${files.length} files x ${targets.length} targets (nvcc, ${jobs} jobs)`,
        value: coldS, unit: 's',
        reference: `the same ${lines.length} nvcc commands via xargs -P${jobs} (medians of ${rounds} runs each, ABBA)`,
        referenceValue: refS, ratio: coldS / refS, target: 'ratio <= 1.10',
      },
      {
        name: `toolchain cold build CPU time (kernelpack process + compilers), ${files.length} files x ${targets.length} targets`,
        value: cpuS, unit: 's CPU',
        reference: `the same ${lines.length} nvcc commands via xargs -P${jobs} (CPU time of the compilers)`,
        referenceValue: refCpuS, ratio: cpuS / refCpuS, target: 'ratio <= 1.10',
      },
      {
        name: `toolchain warm rebuild, ${files.length} files x ${targets.length} targets (all cached)`,
        value: warmS, unit: 's',
        reference: 'kernelpack cold build (same run)',
        referenceValue: coldS, ratio: warmS / coldS, target: 'ratio <= 0.03',
      },
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
