// unplugin-cuda figures, each beside its reference measured in the same run:
//  - Vite build of a 24-file project, cold (empty compile cache) and warm, against the toolchain's raw
//    buildCudaFile time for the same files (all at once, as the plugin's load hooks run them). Target: the
//    plugin and bundler add ≤ 10% cold.
//  - Vite dev HMR latency: from a .cu save to the updated stub being served, against the compile time inside
//    that same update. Target: compile time + ≤ 50 ms.
// Smoke mode (KP_BENCH_SMOKE=1, bench/lib.ts): 2 files, one cold and one warm build per side (the untimed
// warm-up compile first, as always), one HMR edit.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile } from '@kernelpack/toolchain'
import { interleaved, median, smoke, type BenchResult } from './lib.js'

const FILES = smoke ? 2 : 24
/** Builds per side, cold and warm (medians), and .cu edits timed through the dev server. */
const ROUNDS = smoke ? 1 : 2
const HMR_EDITS = smoke ? 1 : 5
const root = join(import.meta.dirname, '..')

function kernel(i: number, variant = 0): string {
  return `// bench kernel ${i}\nextern "C" __global__ void k${i}(float *x, int n)\n{\n    int j = blockIdx.x * blockDim.x + threadIdx.x;\n    if (j < n)\n        x[j] = x[j] * ${i + 1}.0f + ${variant}.0f;\n}\n`
}

function makeProject(dir: string): string[] {
  mkdirSync(join(dir, 'src'), { recursive: true })
  const files: string[] = []
  const imports: string[] = []
  for (let i = 0; i < FILES; i++) {
    const f = join(dir, 'src', `k${i}.cu`)
    writeFileSync(f, kernel(i))
    files.push(f)
    imports.push(`import { k${i} } from './k${i}.cu'`)
  }
  writeFileSync(join(dir, 'src', 'main.js'), `${imports.join('\n')}\nexport const all = [${files.map((_, i) => `k${i}`).join(', ')}]\n`)
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="/src/main.js"></script>\n')
  return files
}

async function rawCompile(files: string[], cwd: string, cacheDir: string): Promise<number> {
  const t0 = performance.now()
  await Promise.all(files.map((f) => buildCudaFile(f, { cacheDir, cwd })))
  return performance.now() - t0
}

async function viteBuild(dir: string, cacheDir: string): Promise<number> {
  const { build } = await import('vite')
  const cuda = (await import('unplugin-cuda/vite')).default
  const t0 = performance.now()
  await build({ root: dir, configFile: false, logLevel: 'silent', plugins: [cuda({ cacheDir })], build: { outDir: join(dir, 'dist'), emptyOutDir: true, minify: false } })
  return performance.now() - t0
}

// HMR: each round saves a new version of k0.cu and times save → the dev server answering with the new
// stub. The reference is the compile inside that same update, as the plugin timed its toolchain call
// (its progress line), so machine noise hits both figures alike; the difference is watcher + Vite + plugin.
async function hmrLatency(dir: string, files: string[], rounds: number): Promise<{ hmr: number[]; compile: number[] }> {
  const { createServer, createLogger } = await import('vite')
  const cuda = (await import('unplugin-cuda/vite')).default
  // the default place of a project's cache, which Vite's watcher ignores (node_modules)
  const cacheDir = join(dir, 'node_modules', '.cache', 'kernelpack-hmr')
  const compiled: number[] = []
  const logger = createLogger('info')
  logger.info = (msg: string) => {
    const m = /compiled src\/k0\.cu .* in (\d+) ms/.exec(msg)
    if (m) compiled.push(Number(m[1]))
  }
  const server = await createServer({ root: dir, configFile: false, customLogger: logger, plugins: [cuda({ cacheDir })], server: { host: '127.0.0.1', port: 0 } })
  await server.listen()
  const port = (server.httpServer!.address() as { port: number }).port
  const url = `http://127.0.0.1:${port}/src/k0.cu?import`
  const hmr: number[] = []
  const compile: number[] = []
  try {
    let previous = await (await fetch(url)).text()
    for (let r = 1; r <= rounds; r++) {
      const changed = new Promise<void>((resolve) => {
        const on = (p: string) => { if (p === files[0]) { server.watcher.off('change', on); resolve() } }
        server.watcher.on('change', on)
      })
      const seen = compiled.length
      const t0 = performance.now()
      writeFileSync(files[0]!, kernel(0, r))
      await changed
      let text = previous
      while (text === previous) {
        const res = await fetch(url)
        text = await res.text()
        if (text === previous) await new Promise((z) => setTimeout(z, 2))
      }
      hmr.push(performance.now() - t0)
      previous = text
      if (compiled.length !== seen + 1) throw new Error(`expected one compile of k0.cu per edit, saw ${compiled.length - seen}`)
      compile.push(compiled[seen]!)
    }
  } finally {
    await server.close()
  }
  return { hmr, compile }
}

export async function run(): Promise<BenchResult[]> {
  // Inside the repo so the stubs resolve unplugin-cuda/runtime from node_modules, as in a real project.
  mkdirSync(join(root, 'test', '.out'), { recursive: true })
  const dir = mkdtempSync(join(root, 'test', '.out', 'bench-unplugin-'))
  try {
    const files = makeProject(dir)
    // Warm-up outside the figures: compiler discovery and the OS file cache for nvcc and its headers.
    writeFileSync(join(dir, 'warmup.cu'), kernel(99))
    await buildCudaFile(join(dir, 'warmup.cu'), { cacheDir: join(dir, 'cache-warmup') })
    // Cold, in A-B-B-A order so drift in machine load hits both sides alike: every run gets its own empty
    // cache. Warm: the same caches again.
    const build = (side: 'raw' | 'vite', round: number) => side === 'raw' ? rawCompile(files, dir, join(dir, `cache-raw${round + 1}`)) : viteBuild(dir, join(dir, `cache-vite${round + 1}`))
    const cold = await interleaved(ROUNDS, ['raw', 'vite'] as const, build)
    const rawCold = median(cold.raw)
    const viteCold = median(cold.vite)
    const warm = await interleaved(ROUNDS, ['raw', 'vite'] as const, build)
    const rawWarm = median(warm.raw)
    const viteWarm = median(warm.vite)
    const { hmr, compile } = await hmrLatency(dir, files, HMR_EDITS)
    const hmrMs = median(hmr)
    const compileMs = median(compile)
    return [
      { name: `unplugin: vite build, ${FILES} .cu, cold (mean of ${ROUNDS})`, value: viteCold / 1000, unit: 's', reference: `toolchain buildCudaFile ×${FILES}, cold (mean of ${ROUNDS}, ABBA)`, referenceValue: rawCold / 1000, ratio: viteCold / rawCold, target: 'ratio <= 1.10' },
      { name: `unplugin: vite build, ${FILES} .cu, warm`, value: viteWarm / 1000, unit: 's', reference: `toolchain buildCudaFile ×${FILES}, warm`, referenceValue: rawWarm / 1000, ratio: viteWarm / rawWarm, target: 'report (bundler startup dominates)' },
      { name: 'unplugin: vite dev HMR, .cu save → updated stub', value: hmrMs, unit: 'ms', reference: 'toolchain compile inside that update', referenceValue: compileMs, ratio: hmrMs / compileMs, target: `value <= reference + 50 ms (overhead ${(hmrMs - compileMs).toFixed(0)} ms)` },
    ]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(await run())
