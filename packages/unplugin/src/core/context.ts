// The plugin's state for one bundler instance, as plain functions over explicit inputs (unplugin's
// `createContext(options)` pattern): compile through the toolchain (which shares in-flight compiles and
// caches on disk, so Vite client + SSR and webpack multi-compiler builds compile each file once), remember
// results while their inputs are unchanged, write .d.ts files, and count what each build did.
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { buildCudaFile, type BuildResult } from '@kernelpack/toolchain'
import { emitLoaderDts } from '@kernelpack/codegen'
import { resolveOptions, type Options, type ResolvedOptions } from './options.js'
import { writeFileAtomic } from './assets.js'

/** Where the plugin reports progress and summaries (the bundler's logger). */
export interface Logger {
  info(message: string): void
  warn(message: string): void
}

export interface BuildSummary {
  files: number
  kernels: number
  targets: Set<string>
  bytes: number
  compiles: number
  cacheHits: number
  ms: number
}

interface Memo {
  result: Promise<BuildResult>
  stamps: Map<string, number>
}

export interface PluginContext {
  readonly options: Options
  resolved: ResolvedOptions
  logger: Logger
  summary: BuildSummary
  /** Sets the project root (Vite's `root`, webpack's `context`, esbuild's `absWorkingDir`). */
  setRoot(root: string): void
  /** Builds one .cu file, reusing the last result while the file and every header it includes are unchanged. */
  build(file: string): Promise<BuildResult>
  /** Writes `<file>.d.ts` for a build result (when `dts` is on). */
  writeDts(file: string, result: BuildResult): void
  /** Compiles every .cu under the scan folders and writes their .d.ts files (buildStart); returns the typed files. */
  writeAllDts(): Promise<string[]>
  /** Forgets results that depend on a changed file (watch mode). */
  invalidate(changed: string): void
  resetSummary(): void
  formatSummary(): string | undefined
}

function mtime(path: string): number {
  try { return statSync(path).mtimeMs } catch { return -1 }
}

export function emptySummary(): BuildSummary {
  return { files: 0, kernels: 0, targets: new Set(), bytes: 0, compiles: 0, cacheHits: 0, ms: 0 }
}

const consoleLogger: Logger = {
  info: (m) => console.log(m),
  warn: (m) => console.warn(m),
}

export function createContext(options: Options = {}, root = process.cwd()): PluginContext {
  const memo = new Map<string, Memo>()
  const ctx: PluginContext = {
    options,
    resolved: resolveOptions(options, root),
    logger: consoleLogger,
    summary: emptySummary(),
    setRoot(r) {
      if (r !== ctx.resolved.root) ctx.resolved = resolveOptions(options, r)
    },
    build(file) {
      const m = memo.get(file)
      if (m && [...m.stamps].every(([p, t]) => mtime(p) === t)) return m.result
      const stamps = new Map<string, number>([[file, mtime(file)]])
      const r = ctx.resolved
      const t0 = performance.now()
      const result = buildCudaFile(file, {
        arch: r.arch,
        compiler: r.compiler,
        includeDirs: r.includeDirs,
        defines: r.defines,
        flags: r.flags,
        std: r.std,
        rdc: r.rdc,
        lineinfo: r.lineinfo,
        cacheDir: r.cacheDir,
        cacheSize: r.cacheSize,
        launcher: r.launcher,
        jobs: r.jobs,
        cwd: r.root,
      }).then((res) => {
        if (res.stats.compiles > 0) {
          // Progress: one line per file that needed the compiler (cache hits stay quiet).
          const ms = Math.round(performance.now() - t0)
          ctx.logger.info(`unplugin-cuda: compiled ${relative(r.root, file) || file} → ${res.images.map((i) => i.target).join(', ')} (${res.stats.compiles} compiled, ${res.stats.cacheHits} cached) in ${ms} ms`)
        }
        for (const dep of res.dependencies) if (!stamps.has(dep)) stamps.set(dep, mtime(dep))
        const s = ctx.summary
        s.files++
        s.kernels += res.manifest.kernels.length
        for (const img of res.images) s.targets.add(img.target)
        s.bytes += res.offload.byteLength
        s.compiles += res.stats.compiles
        s.cacheHits += res.stats.cacheHits
        s.ms += performance.now() - t0
        return res
      })
      memo.set(file, { result, stamps })
      // A failed build is never remembered: the next import compiles again (and never serves an old image).
      result.catch(() => { if (memo.get(file)?.result === result) memo.delete(file) })
      return result
    },
    writeDts(file, result) {
      if (!ctx.resolved.dts) return
      const text = emitLoaderDts({ manifest: result.manifest, name: relative(ctx.resolved.root, file) || file })
      try {
        writeFileAtomic(`${file}.d.ts`, text)
      } catch (err) {
        // A read-only source folder (a package in node_modules) costs the types, not the build.
        ctx.logger.warn(`unplugin-cuda: cannot write ${file}.d.ts (${(err as Error).message}); set dts: false to stop trying`)
      }
    },
    async writeAllDts() {
      if (!ctx.resolved.dts) return []
      const files: string[] = []
      for (const dir of ctx.resolved.dtsScan) scanCu(dir, ctx.resolved.filter, files)
      const typed = await Promise.all(files.map(async (f) => {
        // A file that does not compile gets no .d.ts now; its import reports the error at build time.
        try { ctx.writeDts(f, await ctx.build(f)); return f } catch { return undefined }
      }))
      return typed.filter((f): f is string => f !== undefined)
    },
    invalidate(changed) {
      for (const [file, m] of memo) if (file === changed || m.stamps.has(changed)) memo.delete(file)
    },
    resetSummary() { ctx.summary = emptySummary() },
    formatSummary() {
      const s = ctx.summary
      if (s.files === 0) return undefined
      const kib = (s.bytes / 1024).toFixed(1)
      return `unplugin-cuda: ${s.files} .cu file${s.files === 1 ? '' : 's'}, ${s.kernels} kernel${s.kernels === 1 ? '' : 's'}, targets ${[...s.targets].sort().join(' ') || '-'}, ${kib} KiB of images, ${s.compiles} compile${s.compiles === 1 ? '' : 's'}, ${s.cacheHits} cache hit${s.cacheHits === 1 ? '' : 's'}`
    },
  }
  return ctx
}

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', '.cache'])

function scanCu(dir: string, filter: (id: string) => boolean, out: string[], depth = 0): void {
  if (depth > 12) return
  let names: string[]
  try { names = readdirSync(dir).sort() } catch { return }
  for (const name of names) {
    if (name.startsWith('.') || SKIP_DIRS.has(name)) continue
    const p = join(dir, name)
    let st
    try { st = statSync(p) } catch { continue }
    if (st.isDirectory()) scanCu(p, filter, out, depth + 1)
    else if (name.endsWith('.cu') && filter(p)) out.push(p)
  }
}
