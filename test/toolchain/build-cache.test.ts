// Cache behaviour of buildCudaFile with real nvcc compiles, counted through a logging compiler launcher
// (every compiler process is one line in the log): warm builds run nothing, an edited header recompiles
// exactly its includers, concurrent processes share one cache, killed writers leave it valid, ccache works
// as a launcher, outputs are byte-identical whatever the cache state. One PTX target keeps compiles short.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { buildCudaFile, BuildSession, CompileError, Pool, type BuildOptions, type BuildResult } from '@kernelpack/toolchain'
import { countingScript, loggingLauncher, repoRoot, tempDir, tool } from '../helpers/tools.js'
import { exec } from './exec.js'

const arch = 'compute_80'
const src = tempDir('kp-cache-src-')
const { launcher, log } = loggingLauncher(src, 'count-launcher')
tool('nvcc')

writeFileSync(join(src, 'one.h'), '#define SCALE 2\n')
writeFileSync(join(src, 'two.h'), '#define OFFSET 1\n')
writeFileSync(join(src, 'a.cu'), '#include "one.h"\nextern "C" __global__ void ka(int *p) { p[threadIdx.x] = SCALE; }\n')
writeFileSync(join(src, 'b.cu'), '#include "two.h"\nextern "C" __global__ void kb(int *p) { p[threadIdx.x] = OFFSET; }\n')
writeFileSync(join(src, 'c.cu'), '#include "one.h"\n#include "two.h"\n__global__ void kc(float *p, int n) { if (threadIdx.x < n) p[threadIdx.x] = SCALE + OFFSET; }\n')
const files = ['a.cu', 'b.cu', 'c.cu'].map((f) => join(src, f))

function spawned(): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []
}
function resetLog(): void {
  writeFileSync(log, '')
}
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

function buildAll(cacheDir: string | false, extra: BuildOptions = {}): Promise<BuildResult[]> {
  const session = new BuildSession()
  return Promise.all(files.map((f) => buildCudaFile(f, { arch, compiler: 'nvcc', cacheDir, launcher, session, ...extra })))
}

/** Runs test/toolchain/build-child.ts; resolves with its exit code and output lines. */
function child(cacheDir: string, env: Record<string, string> = {}, onSpawn?: (pid: number) => void): Promise<{ code: number | null; signal: string | null; lines: { name: string; offload: string; manifest: unknown; compiles: number }[]; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join(repoRoot, 'test', 'toolchain', 'build-child.ts'), cacheDir, arch, ...files], {
      cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    })
    onSpawn?.(p.pid!)
    let out = ''
    let err = ''
    p.stdout.on('data', (d) => (out += d))
    p.stderr.on('data', (d) => (err += d))
    p.on('close', (code, signal) => resolve({ code, signal, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)), stderr: err }))
  })
}

const cacheDir = tempDir('kp-cache-main-')
resetLog()
const cold = await buildAll(cacheDir)
const coldSpawns = spawned()

// ---

const cache = suite('buildCudaFile cache')

cache('a cold build runs one compiler process per file and target', () => {
  assert.is(coldSpawns.length, 3)
  for (const f of files) assert.ok(coldSpawns.some((l) => l.endsWith(f)), f)
  assert.equal(cold.map((r) => r.stats.compiles), [1, 1, 1])
  assert.equal(cold.map((r) => r.manifest.kernels.map((k) => k.name)), [['ka'], ['kb'], ['_Z2kcPfi']])
  assert.equal(cold[2]!.dependencies.slice(0, 1), [files[2]])
  assert.ok(cold[2]!.dependencies.includes(join(src, 'one.h')) && cold[2]!.dependencies.includes(join(src, 'two.h')))
})

cache('a second build with nothing changed runs no compiler process and gives identical bytes', async () => {
  resetLog()
  const warm = await buildAll(cacheDir)
  assert.equal(spawned(), [])
  assert.equal(warm.map((r) => r.stats), warm.map((r) => ({ ...r.stats, compiles: 0, cacheHits: 1 })))
  assert.equal(warm.map((r) => sha(r.offload)), cold.map((r) => sha(r.offload)))
  assert.equal(warm.map((r) => r.manifest), cold.map((r) => r.manifest))
  assert.ok(warm.every((r) => r.images.every((i) => i.cached)))
})

cache('without a cache the bytes are the same too', async () => {
  const none = await buildAll(false, { launcher: undefined })
  assert.equal(none.map((r) => sha(r.offload)), cold.map((r) => sha(r.offload)))
})

cache('editing a header recompiles exactly the files that include it', async () => {
  writeFileSync(join(src, 'one.h'), '#define SCALE 3\n')
  resetLog()
  const after = await buildAll(cacheDir)
  const lines = spawned()
  assert.is(lines.length, 2)
  assert.ok(lines.some((l) => l.endsWith(files[0]!)) && lines.some((l) => l.endsWith(files[2]!)), lines.join('\n'))
  assert.equal(after.map((r) => r.stats.compiles), [1, 0, 1])
  assert.ok(sha(after[0]!.offload) !== sha(cold[0]!.offload), 'a.cu changed with SCALE')
  assert.is(sha(after[1]!.offload), sha(cold[1]!.offload))
  // Back to the old content: the old outputs are still in the (content-addressed) cache.
  writeFileSync(join(src, 'one.h'), '#define SCALE 2\n')
  resetLog()
  const back = await buildAll(cacheDir)
  assert.equal(spawned(), [])
  assert.equal(back.map((r) => sha(r.offload)), cold.map((r) => sha(r.offload)))
})

cache('touching a header without changing it recompiles nothing (the key is content, not mtime)', async () => {
  const past = new Date(Date.now() - 60_000)
  utimesSync(join(src, 'two.h'), past, past)
  resetLog()
  await buildAll(cacheDir)
  assert.equal(spawned(), [])
})

cache('two builds of the same file at once run the compiler once', async () => {
  const d = join(src, 'd.cu')
  writeFileSync(d, 'extern "C" __global__ void kd(int *p) { p[0] = 4; }\n')
  resetLog()
  const [x, y] = await Promise.all([
    buildCudaFile(d, { arch, compiler: 'nvcc', cacheDir: false, launcher }),
    buildCudaFile(d, { arch, compiler: 'nvcc', cacheDir: false, launcher }),
  ])
  assert.is(spawned().length, 1)
  assert.is(sha(x!.offload), sha(y!.offload))
})

cache('a shared jobs pool bounds the compiler processes running at once; onProgress reports each target', async () => {
  const counting = countingScript(tempDir('kp-cache-jobs-'), 'counting.sh', '"$@"')
  const jobs = new Pool(1)
  const events: string[] = []
  const rs = await Promise.all(files.map((f) => buildCudaFile(f, {
    arch, compiler: 'nvcc', cacheDir: false, launcher: counting.script, jobs, onProgress: (e) => events.push(`${e.file}:${e.target}:${e.cached}`),
  })))
  const seen = counting.counts()
  assert.is(seen.length, 3)
  assert.equal(seen, [1, 1, 1], 'never two compilers at once with jobs = Pool(1)')
  assert.equal(events.sort(), files.map((f) => `${f}:${arch}:false`).sort())
  assert.equal(rs.map((r) => sha(r.offload)), cold.map((r) => sha(r.offload)))
})

cache('four processes building the same files with one new cache directory all succeed with identical outputs', async () => {
  const shared = tempDir('kp-cache-shared-')
  const runs = await Promise.all([0, 1, 2, 3].map(() => child(shared)))
  for (const r of runs) assert.is(r.code, 0, r.stderr)
  for (const r of runs) assert.equal(r.lines.map((l) => l.offload), cold.map((c) => sha(c.offload)))
  for (const r of runs) assert.equal(r.lines.map((l) => l.manifest), cold.map((c) => c.manifest))
  resetLog()
  const after = await buildAll(shared)
  assert.equal(spawned(), [], 'the shared cache is complete and valid')
  assert.equal(after.map((r) => sha(r.offload)), cold.map((r) => sha(r.offload)))
})

cache('a build killed mid-compile, leftover temporary files and a truncated entry leave the cache valid', async () => {
  const k = tempDir('kp-cache-killed-')
  const { launcher: killLauncher, log: killLog } = loggingLauncher(k)
  const cacheK = join(k, 'cache')
  // Kill the child (SIGKILL, no clean-up) as soon as its first compiler process has started.
  const r = await child(cacheK, { KP_TEST_LAUNCHER: killLauncher }, (pid) => {
    const timer = setInterval(() => {
      if (existsSync(killLog) && readFileSync(killLog, 'utf8').length > 0) {
        clearInterval(timer)
        process.kill(pid, 'SIGKILL')
      }
    }, 5)
  })
  assert.is(r.signal, 'SIGKILL')
  // What a writer killed between write and rename leaves behind, and an entry cut short.
  mkdirSync(join(cacheK, 'v1', 'obj', 'ab'), { recursive: true })
  writeFileSync(join(cacheK, 'v1', 'obj', 'ab', `${'ab'.repeat(32)}.kpc.tmp-999-x`), 'KPC1 partial')
  const warm = await buildAll(cacheK)
  assert.equal(warm.map((x) => sha(x.offload)), cold.map((x) => sha(x.offload)))
  const objs = readdirSync(join(cacheK, 'v1', 'obj'), { recursive: true }).map(String).filter((f) => f.endsWith('.kpc')).map((f) => join(cacheK, 'v1', 'obj', f))
  assert.is(objs.length, 3)
  for (const f of objs) truncateSync(f, Math.floor(statSync(f).size / 2))
  resetLog()
  const rebuilt = await buildAll(cacheK)
  assert.is(spawned().length, 3, 'truncated entries are detected and rebuilt')
  assert.equal(rebuilt.map((x) => sha(x.offload)), cold.map((x) => sha(x.offload)))
})

cache('ccache as the launcher: a fresh kernelpack cache with a warm ccache gets ccache hits', async () => {
  const ccache = tool('ccache')
  const ccacheDir = tempDir('kp-ccache-')
  const saved = process.env.CCACHE_DIR
  process.env.CCACHE_DIR = ccacheDir
  try {
    const stats = async () => {
      const text = (await exec(ccache, ['--print-stats'], { env: { ...process.env, CCACHE_DIR: ccacheDir } })).stdout
      const get = (k: string) => Number(new RegExp(`^${k}\\t(\\d+)$`, 'm').exec(text)?.[1] ?? 0)
      return { hits: get('direct_cache_hit') + get('preprocessed_cache_hit'), misses: get('cache_miss') }
    }
    const first = await buildAll(tempDir('kp-cache-cc1-'), { launcher: ccache })
    assert.equal(await stats(), { hits: 0, misses: 3 })
    const second = await buildAll(tempDir('kp-cache-cc2-'), { launcher: ccache })
    assert.equal(await stats(), { hits: 3, misses: 3 })
    assert.equal(second.map((x) => x.stats.compiles), [1, 1, 1], 'kernelpack\'s own cache was cold')
    assert.equal(second.map((x) => sha(x.offload)), first.map((x) => sha(x.offload)))
    assert.equal(second.map((x) => sha(x.offload)), cold.map((x) => sha(x.offload)))
    assert.equal(second.map((x) => x.dependencies), first.map((x) => x.dependencies))
  } finally {
    if (saved === undefined) delete process.env.CCACHE_DIR
    else process.env.CCACHE_DIR = saved
  }
})

cache('paths with spaces, quotes, $() and non-ASCII characters, with nvcc and clang', async () => {
  const dir = join(src, `we ird 'q' "dq" $(touch pwned) ü`)
  const inc = join(src, `inc $(touch pwned2) ä`)
  mkdirSync(dir)
  mkdirSync(inc)
  writeFileSync(join(dir, 'local $(x).h'), '#define LOCAL 5\n')
  writeFileSync(join(inc, "other 'h' $(y).h"), '#define OTHER 6\n')
  const file = join(dir, `kernel 'é' $(touch pwned3).cu`)
  writeFileSync(file, `#include "local $(x).h"\n#include <other 'h' $(y).h>\n__global__ void weird(int *p) { p[0] = LOCAL + OTHER; }\n`)
  for (const compiler of ['nvcc', tool('clang++')]) {
    const r = await buildCudaFile(file, { arch, compiler, includeDirs: [inc], cacheDir: join(src, 'cache dir $(x) ö') })
    assert.equal(r.manifest.kernels.map((k) => k.name), ['_Z5weirdPi'], compiler)
    assert.is(r.dependencies[0], file)
    assert.ok(r.dependencies.includes(join(dir, 'local $(x).h')), `${compiler}: ${r.dependencies.slice(0, 4).join(', ')}`)
    assert.ok(r.dependencies.includes(join(inc, "other 'h' $(y).h")), compiler)
    assert.equal(r.warnings, [], compiler)
    assert.ok(!r.dependencies.some((d) => d.includes('/kernelpack-')), `${compiler}: staged paths leak into dependencies`)
  }
  for (const f of ['pwned', 'pwned2', 'pwned3', 'pwned4']) {
    assert.not.ok(existsSync(join(repoRoot, f)) || existsSync(join(src, f)) || existsSync(join(dir, f)), `a shell ran $(touch ${f})`)
  }
  // nvcc's own dependency output (-MD, what a launcher gets) cannot spell a '"' in a file name: such a file
  // still builds, uncached, with a warning. gcc's, on nvcc's device pass (no launcher), can: cached.
  const quoted = join(dir, `say "hi" $(touch pwned4).cu`)
  writeFileSync(quoted, '#include "local $(x).h"\nextern "C" __global__ void hi(int *p) { p[0] = LOCAL; }\n')
  const q = await buildCudaFile(quoted, { arch, compiler: 'nvcc', cacheDir: join(src, 'cache dir $(x) ö'), launcher })
  assert.equal(q.manifest.kernels.map((k) => k.name), ['hi'])
  assert.match(q.warnings.map((w) => w.message).join('\n'), /not cached/)
  for (let i = 0; i < 2; i++) {
    const g = await buildCudaFile(quoted, { arch, compiler: 'nvcc', cacheDir: join(src, 'cache dir $(x) ö') })
    assert.equal([g.warnings, g.dependencies.slice(0, 2), g.stats.cacheHits], [[], [quoted, join(dir, 'local $(x).h')], i])
  }
  writeFileSync(file, '#include "local $(x).h"\n__global__ void weird(int *p) { p[0] = LOCAL\n}\n')
  for (const compiler of ['nvcc', tool('clang++')]) {
    try {
      await buildCudaFile(file, { arch, compiler, cacheDir: false })
      assert.unreachable('should fail')
    } catch (err) {
      assert.instance(err, CompileError)
      const first = (err as CompileError).diagnostics.find((d) => d.severity === 'error')!
      assert.is(first.file, file, compiler)
      assert.is(first.line, compiler === 'nvcc' ? 3 : 2, `${compiler}: ${(err as Error).message}`)
    }
  }
})

cache.run()
