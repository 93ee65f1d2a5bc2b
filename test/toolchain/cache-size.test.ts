// The compile cache's size limit (issue 17 item 12): ccache's max_size syntax for the option and
// KERNELPACK_CACHE_SIZE, least-recently-used eviction (a hit counts as a use), eviction while other
// processes read and write the same cache (no failure, no wrong bytes), and real builds under a tiny limit
// giving the same outputs as without a cache.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile, CompileCache, DEFAULT_CACHE_SIZE, parseCacheSize, resolveCacheSize, ToolchainError } from '@kernelpack/toolchain'
import { hashDependency, sha256 } from '../../packages/toolchain/src/cache.js'
import { repoRoot, tempDir, tool } from '../helpers/tools.js'
import { entryBytes, KEYS } from './cache-stress-data.js'

/** Bytes of every cache entry file (outputs and dependency records). */
function cacheBytes(dir: string): number {
  let n = 0
  for (const kind of ['obj', 'deps']) {
    const root = join(dir, 'v1', kind)
    if (!existsSync(root)) continue
    for (const f of readdirSync(root, { recursive: true }).map(String)) {
      const st = statSync(join(root, f))
      if (st.isFile()) n += st.size
    }
  }
  return n
}

function runChild(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    p.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

// ---
const size = suite('cache size: option and KERNELPACK_CACHE_SIZE')

size('sizes are written as ccache\'s max_size: k/M/G/T, Ki/Mi/Gi/Ti, G by default, 0 for no limit', () => {
  assert.is(parseCacheSize('5G'), 5e9)
  assert.is(parseCacheSize('500M'), 500e6)
  assert.is(parseCacheSize('1.5k'), 1500)
  assert.is(parseCacheSize('2Gi'), 2 * 2 ** 30)
  assert.is(parseCacheSize('64Ki'), 65536)
  assert.is(parseCacheSize('10'), 10e9)
  assert.is(parseCacheSize('0'), 0)
  assert.is(parseCacheSize(12345), 12345)
  assert.throws(() => parseCacheSize('lots'), (e: Error) => e instanceof ToolchainError && /"lots" is not a size: write it as ccache's max_size, e\.g\. 5G, 500M, 2Gi, or 0 for no limit/.test(e.message))
  assert.throws(() => parseCacheSize(-1), /byte count >= 0/)
  assert.is(resolveCacheSize(undefined, {}), DEFAULT_CACHE_SIZE)
  assert.is(DEFAULT_CACHE_SIZE, 2 ** 30)
  assert.is(resolveCacheSize(undefined, { KERNELPACK_CACHE_SIZE: '200M' }), 200e6)
  assert.is(resolveCacheSize('1M', { KERNELPACK_CACHE_SIZE: '200M' }), 1e6, 'the option wins')
  assert.throws(() => resolveCacheSize(undefined, { KERNELPACK_CACHE_SIZE: 'x' }), /KERNELPACK_CACHE_SIZE "x" is not a size/)
})

size.run()

// ---
const lru = suite('least-recently-used eviction')

lru('past the limit the least recently used entries go, down to 80 % of it; a hit counts as a use', async () => {
  const dir = tempDir('kp-cache-lru-')
  const src = join(dir, 'src.cu')
  writeFileSync(src, '// a dependency\n')
  const h = (await hashDependency(src))!
  const dep = [{ path: src, hash: h.hash, sig: h.sig }]
  const cache = new CompileCache(join(dir, 'cache'), { maxSize: 30_000 })
  const key = (name: string) => sha256('lru', name)
  const store = (name: string, k: number) => cache.store(key(name), dep, { bytes: entryBytes(k).subarray(0, 8192).slice(), deps: [src], warnings: [] })
  // one store after another, each with an older timestamp than the next, whatever the clock's resolution
  const t0 = Date.now() / 1000 - 1000
  const age = (t: number) => {
    for (const kind of ['obj', 'deps']) {
      for (const f of readdirSync(join(dir, 'cache', 'v1', kind), { recursive: true }).map(String)) {
        const p = join(dir, 'cache', 'v1', kind, f)
        const st = statSync(p)
        if (st.isFile() && st.mtimeMs / 1000 > t0 + 100) utimesSync(p, t, t)
      }
    }
  }
  await store('a', 1)
  age(t0)
  await store('b', 2)
  age(t0 + 1)
  await store('c', 3)
  age(t0 + 2)
  assert.ok(await cache.lookup(key('a')), 'a is used again: now the most recent')
  await store('d', 4)
  assert.ok(await cache.lookup(key('a')), 'a survived: it was used')
  assert.ok(await cache.lookup(key('d')), 'd survived: just stored')
  assert.not.ok(await cache.lookup(key('b')), 'b went: least recently used')
  assert.not.ok(await cache.lookup(key('c')), 'c went: down to 80 % of the limit')
  assert.ok(cacheBytes(join(dir, 'cache')) <= 30_000 * 0.8)
  assert.equal(JSON.parse(readFileSync(join(dir, 'cache', 'v1', 'stats.json'), 'utf8')).size, cacheBytes(join(dir, 'cache')))
})

lru('temporary files of dead writers are removed by a scan, those of live ones are kept', async () => {
  const dir = tempDir('kp-cache-tmp-')
  const cache = new CompileCache(dir, { maxSize: 1000 })
  const obj = join(dir, 'v1', 'obj', 'ab')
  mkdirSync(obj, { recursive: true })
  writeFileSync(join(obj, `.${'ab'.repeat(32)}.kpc.kernelpack-999999999-x.tmp`), 'dead')
  writeFileSync(join(obj, `${'ab'.repeat(32)}.kpc.tmp-999999999-y`), 'dead, older naming')
  writeFileSync(join(obj, `.${'cd'.repeat(32)}.kpc.kernelpack-${process.pid}-z.tmp`), 'live')
  await cache.evict()
  assert.equal(readdirSync(obj), [`.${'cd'.repeat(32)}.kpc.kernelpack-${process.pid}-z.tmp`])
})

lru('stats.json: a burst of stores rewrites it a few times, not once each, and it holds every store once their turn comes and when the process ends', async () => {
  const dir = tempDir('kp-cache-stats-')
  const src = join(dir, 'src.cu')
  writeFileSync(src, '// a dependency\n')
  const h = (await hashDependency(src))!
  const cache = new CompileCache(join(dir, 'cache'), { maxSize: 100_000_000 })
  const stats = join(dir, 'cache', 'v1', 'stats.json')
  const inodes = new Set<number>()
  for (let k = 0; k < 30; k++) {
    await cache.store(sha256('stats', String(k)), [{ path: src, hash: h.hash, sig: h.sig }], { bytes: entryBytes(k).subarray(0, 2048).slice(), deps: [src], warnings: [] })
    if (existsSync(stats)) inodes.add(statSync(stats).ino)
  }
  // each write replaces the file (a new inode): one store after another, 30 writes before (cache-size.ts writes
  // one at most every 500 ms)
  assert.ok(inodes.size <= 5, `${inodes.size} writes of stats.json for 30 stores`)
  await new Promise((r) => setTimeout(r, 700))
  assert.is(JSON.parse(readFileSync(stats, 'utf8')).size, cacheBytes(join(dir, 'cache')), 'the trailing write')
  // a process that ends right after its stores writes the figure on exit
  const cacheDir = join(dir, 'child-cache'), srcDir = join(dir, 'src')
  mkdirSync(srcDir)
  for (let k = 0; k < KEYS; k++) writeFileSync(join(srcDir, `k${k}.cu`), `// key ${k}\n`)
  const r = await runChild([join(repoRoot, 'test', 'toolchain', 'cache-stress-child.ts'), cacheDir, srcDir, '100000000', '7', '40'])
  assert.is(r.code, 0, r.stderr)
  assert.is(JSON.parse(readFileSync(join(cacheDir, 'v1', 'stats.json'), 'utf8')).size, cacheBytes(cacheDir), 'written on exit')
})

lru.run()

// ---
const concurrent = suite('eviction under concurrent processes')

concurrent('four processes storing and reading one cache that evicts all the time: no error, never other bytes', async () => {
  const dir = tempDir('kp-cache-stress-')
  const srcDir = join(dir, 'src')
  mkdirSync(srcDir)
  for (let k = 0; k < KEYS; k++) writeFileSync(join(srcDir, `k${k}.cu`), `// key ${k}\n`)
  const cacheDir = join(dir, 'cache')
  const max = 10 * 8400 // room for about ten of the 24 entries: eviction on most stores
  const runs = await Promise.all([1, 2, 3, 4].map((seed) => runChild([join(repoRoot, 'test', 'toolchain', 'cache-stress-child.ts'), cacheDir, srcDir, String(max), String(seed), '150'])))
  for (const r of runs) assert.is(r.code, 0, r.stderr)
  const totals = runs.map((r) => JSON.parse(r.stdout) as { hits: number; stores: number })
  assert.ok(totals.every((t) => t.hits > 0 && t.stores > 0), JSON.stringify(totals))
  assert.ok(totals.reduce((n, t) => n + t.stores, 0) > KEYS, 'entries were evicted and stored again')
  await new CompileCache(cacheDir, { maxSize: max }).evict()
  assert.ok(cacheBytes(cacheDir) <= max, `${cacheBytes(cacheDir)} bytes left, limit ${max}`)
})

concurrent('real builds in two processes under KERNELPACK_CACHE_SIZE=20k: outputs identical to a build without eviction', async () => {
  tool('nvcc')
  // sources at a stable path, so that the reference comes from a cache kept between runs
  const src = join(repoRoot, 'test', '.out', 'cache-size-src')
  mkdirSync(src, { recursive: true })
  const files = ['a', 'b'].map((n, i) => {
    const f = join(src, `${n}.cu`)
    writeFileSync(f, `extern "C" __global__ void k${n}(int *p) { p[threadIdx.x] = ${i + 1}; }\n`)
    return f
  })
  // the reference from a cache kept between runs (the sources never change): the same bytes as an uncached build
  const reference = await Promise.all(files.map((f) => buildCudaFile(f, { arch: 'compute_80', compiler: 'nvcc', cacheDir: join(repoRoot, 'test', '.out', 'cache-size-reference') })))
  const cacheDir = join(tempDir('kp-cache-size-'), 'cache')
  const child = join(repoRoot, 'test', 'toolchain', 'build-child.ts')
  const runs = await Promise.all([0, 1].map(() => runChild([child, cacheDir, 'compute_80', ...files], { KERNELPACK_CACHE_SIZE: '20k' })))
  const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')
  for (const r of runs) {
    assert.is(r.code, 0, r.stderr)
    const lines = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { offload: string })
    assert.equal(lines.map((l) => l.offload), reference.map((x) => sha(x.offload)))
  }
  assert.ok(cacheBytes(cacheDir) <= 20_000, `${cacheBytes(cacheDir)} bytes in a 20 kB cache`)
})

concurrent.run()
