// The plugin's state for one bundler instance, as plain functions over explicit inputs (unplugin's
// `createContext(options)` pattern): compile through the toolchain (which shares in-flight compiles and
// caches on disk, so Vite client + SSR and webpack multi-compiler builds compile each file once), remember
// results while their inputs are unchanged, write .d.ts files, and count what each build did.
import { readFileSync, rmSync, statSync } from 'node:fs'
import { isAbsolute, relative } from 'node:path'
import { buildCudaFile, CompileError, DEFAULT_ARCH, formatDiagnostic, listCudaSources, paramTypeNotes, resolveTargets, webgpuLockstepWarnings, type BuildResult } from '@kernelpack/toolchain'
import { emitLoaderDts, planDeclarationFiles, type LoaderImageInfo } from '@kernelpack/codegen'
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
  /** Finds the compiler and checks the arch spec against it (build start: a bad `compiler` or `arch` fails the
   *  build before any module is transformed); remembers the targets for progress lines. */
  checkToolchain(): Promise<void>
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

function archText(arch: string | string[] | undefined): string {
  return arch === undefined ? `arch ${DEFAULT_ARCH}` : `arch ${Array.isArray(arch) ? arch.join(';') : arch}`
}

function readText(path: string): string | undefined {
  try { return readFileSync(path, 'utf8') } catch { return undefined }
}

function mtime(path: string): number {
  try { return statSync(path).mtimeMs } catch { return -1 }
}

/** Image metadata for a stub's `module.images`. */
export function imageInfo(res: BuildResult): LoaderImageInfo[] {
  return res.images.map((i) => ({ target: i.target, arch: i.arch, kind: i.kind, size: i.bytes.byteLength }))
}

export function emptySummary(): BuildSummary {
  return { files: 0, kernels: 0, targets: new Set(), bytes: 0, compiles: 0, cacheHits: 0, ms: 0 }
}

const consoleLogger: Logger = {
  info: (m) => console.log(m),
  warn: (m) => console.warn(m),
}

/** How long a build runs before the plugin says it is compiling (cache hits take milliseconds; a compile
 *  seconds). $KERNELPACK_PROGRESS_DELAY_MS overrides it (0: a line for every build that is not a hit). */
function progressDelay(): number {
  const v = Number(process.env.KERNELPACK_PROGRESS_DELAY_MS)
  return Number.isFinite(v) && v >= 0 ? v : 1000
}

export function createContext(options: Options = {}, root = process.cwd()): PluginContext {
  const memo = new Map<string, Memo>()
  let checked: { for: ResolvedOptions; done: Promise<void> } | undefined
  let targetNames: string[] | undefined
  const ctx: PluginContext = {
    options,
    resolved: resolveOptions(options, root),
    logger: consoleLogger,
    summary: emptySummary(),
    setRoot(r) {
      if (r !== ctx.resolved.root) ctx.resolved = resolveOptions(options, r)
    },
    checkToolchain() {
      const r = ctx.resolved
      if (checked?.for !== r) {
        const done = resolveTargets({ arch: r.arch, compiler: r.compiler, cacheDir: r.cacheDir, cwd: r.root }).then(
          (t) => { targetNames = t.targets.map((x) => x.target) },
          (err: unknown) => {
            const e = err instanceof Error ? err : new Error(String(err))
            throw Object.assign(new Error(`unplugin-cuda: ${e.message}`), { name: e.name === 'Error' ? 'CudaConfigError' : e.name, plugin: 'unplugin-cuda' })
          },
        )
        checked = { for: r, done }
      }
      return checked.done
    },
    build(file) {
      const m = memo.get(file)
      if (m && [...m.stamps].every(([p, t]) => mtime(p) === t)) return m.result
      const stamps = new Map<string, number>([[file, mtime(file)]])
      const r = ctx.resolved
      const t0 = performance.now()
      // A start line for builds that take a while (a real compile; the summary line says when it is done).
      const slow = setTimeout(() => {
        ctx.logger.info(`unplugin-cuda: compiling ${relative(r.root, file) || file} for ${targetNames?.join(', ') ?? archText(r.arch)}…`)
      }, progressDelay())
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
        wgsl: r.wgsl,
      }).then((res) => {
        // kernels that cannot run on WebGPU: an error where WebGPU is the only backend asked for, else warnings
        const refused = res.webgpuRefused ?? []
        if (refused.length && r.backend === 'webgpu') {
          throw new CompileError(file, refused.map((d) => ({ ...d, severity: 'error' as const, message: `${d.message} (the plugin's backend is 'webgpu'; 'auto' runs such a module on the emulator)` })))
        }
        for (const d of refused) {
          const hint = ` (on WebGPU, 'auto' runs this module on the emulator; the plugin's wgsl: false stops translating at build time)`
          ctx.logger.warn(`unplugin-cuda: ${formatDiagnostic({ ...d, file: relative(r.root, d.file) || d.file, message: d.message + hint })}`)
        }
        if (res.stats.compiles > 0) {
          // Progress: one line per file that needed the compiler (cache hits stay quiet).
          const ms = Math.round(performance.now() - t0)
          ctx.logger.info(`unplugin-cuda: compiled ${relative(r.root, file) || file} → ${res.images.map((i) => i.target).join(', ')} (${res.stats.compiles} compiled, ${res.stats.cacheHits} cached) in ${ms} ms`)
        }
        for (const dep of res.dependencies) if (!stamps.has(dep)) stamps.set(dep, mtime(dep))
        // by-value structs whose layout could not be read from the compiler: they take bytes, and why
        for (const note of paramTypeNotes(res.manifest)) ctx.logger.warn(`unplugin-cuda: ${relative(r.root, file) || file}: ${note}`)
        // kernels whose lanes talk with no __syncwarp(): right on NVIDIA GPUs and the emulator, not promised on
        // WebGPU, which this build may run on (issue 33)
        const ptx = res.images.find((i) => i.kind === 'ptx')
        if (ptx && (r.backend === 'webgpu' || r.backend === 'auto')) {
          for (const w of webgpuLockstepWarnings(new TextDecoder().decode(ptx.bytes), res.manifest, relative(r.root, file) || file, (p) => (isAbsolute(p) && !relative(r.root, p).startsWith('..') ? relative(r.root, p) : p))) ctx.logger.warn(`unplugin-cuda: ${w.message}`)
        }
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
      result.then(() => clearTimeout(slow), () => clearTimeout(slow))
      memo.set(file, { result, stamps })
      // A failed build is never remembered: the next import compiles again (and never serves an old image).
      result.catch(() => { if (memo.get(file)?.result === result) memo.delete(file) })
      return result
    },
    writeDts(file, result) {
      if (!ctx.resolved.dts) return
      const text = emitLoaderDts({ manifest: result.manifest, name: relative(ctx.resolved.root, file) || file })
      const plan = planDeclarationFiles(file, text, ctx.resolved.dts, readText)
      try {
        if (plan.write) writeFileAtomic(plan.write, text)
        for (const p of plan.remove) rmSync(p, { force: true })
      } catch (err) {
        // A read-only source folder (a package in node_modules) costs the types, not the build.
        ctx.logger.warn(`unplugin-cuda: cannot write the declarations of ${file} (${(err as Error).message}); set dts: false to stop trying`)
      }
    },
    async writeAllDts() {
      if (!ctx.resolved.dts) return []
      const files: string[] = []
      for (const dir of ctx.resolved.dtsScan) files.push(...listCudaSources(dir, ctx.resolved.filter))
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

