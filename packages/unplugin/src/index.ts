// unplugin-cuda: `import { vecAdd } from './kernels.cu'` in Vite, Rollup, esbuild, webpack and Rspack.
// One unplugin factory; the hooks only route, the work lives in core/ (options, context, assets, errors)
// and in @kernelpack/codegen (stub and .d.ts text) and @kernelpack/toolchain (compiles).
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createUnplugin, type UnpluginFactory, type UnpluginOptions } from 'unplugin'
import type { BuildResult } from '@kernelpack/toolchain'
import { emitHostRefs, emitLoaderStub, emitManifestStub, emitRawStub, emitUrlStub, emitWrapperC, hostRefSymbolsFromManifest, jsString, nameKernelExports, type LoaderAsset } from '@kernelpack/codegen'
import { createContext, imageInfo, type Logger, type PluginContext } from './core/context.js'
import { watchedDependencies } from './core/watch.js'
import { parseImportKind, resolveOptions, stripQuery, type Options } from './core/options.js'
import { assetFileName, hashBytes, writeFileAtomic } from './core/assets.js'
import { StagedAssets } from './core/staged-assets.js'
import { PLUGIN_NAME, toPluginError, type PluginError } from './core/errors.js'

export type { Options, EmitKind, ResolvedOptions, ImportKind, BackendOption } from './core/options.js'
export { resolveOptions, parseImportKind, stripQuery } from './core/options.js'
export { createContext } from './core/context.js'
export type { PluginContext, Logger, BuildSummary } from './core/context.js'
export { toPluginError, PLUGIN_NAME } from './core/errors.js'
export type { PluginError, Diagnostic } from './core/errors.js'
export { assetFileName, hashBytes, writeFileAtomic } from './core/assets.js'

// Marks an SSR asset reference in a Vite SSR chunk until renderChunk knows the chunk's place: the marker
// is called with the JSON string of the asset's output path.
const SSR_PLACEHOLDER = '__KERNELPACK_SSR_ASSET__'
const SSR_PLACEHOLDER_RE = /__KERNELPACK_SSR_ASSET__\(\s*("[^"\\]*")\s*\)/g

/** Path prefix under which the Vite dev server serves offload binaries. */
export const DEV_ASSET_PREFIX = '__kernelpack/'

interface EsbuildTarget { outdir: string; format: 'esm' | 'cjs' | 'iife' }

type Framework = 'vite' | 'rollup' | 'rolldown' | 'esbuild' | 'webpack' | 'rspack' | string

interface EmitContext {
  emitFile?: (file: { type: 'asset'; name?: string; fileName?: string; source: Uint8Array | string }) => string | void
  addWatchFile?: (id: string) => void
}

export const unpluginFactory: UnpluginFactory<Options | undefined> = (options = {}, meta) => {
  const ctx: PluginContext = createContext(options)
  const framework: Framework = meta.framework
  let viteCommand: 'serve' | 'build' | undefined
  let viteBase = '/'
  const devAssets = new Map<string, Uint8Array>()
  // The dev server keeps only the newest asset of each .cu (older hashes 404 instead of serving stale images).
  const devAssetOf = new Map<string, string>()
  let esbuildTarget: EsbuildTarget | undefined
  let logLevelInfo = true
  const ssrAssets = new Map<string, Uint8Array>()
  // Assets webpack/Rspack and Vite dev SSR read from <cacheDir>/assets; created with the first one (the root,
  // and so the cache directory, is known by then).
  let staged: StagedAssets | undefined
  const stage = (file: string, fileName: string, bytes: Uint8Array): string => {
    if (staged && staged.dir !== join(ctx.resolved.cacheDir, 'assets')) { staged.dispose(); staged = undefined }
    staged ??= new StagedAssets(ctx.resolved.cacheDir)
    return staged.stage(file, fileName, bytes)
  }
  // Vite's build.assetsInlineLimit, used when the `inline` option is not set (issue 16).
  let viteInlineLimit: number | ((file: string, content: Buffer) => boolean | undefined) | undefined
  // webpack/Rspack: the `fileName` path of each cached asset (by its cached name), for the asset rule's generator.
  const webpackNames = new Map<string, string>()

  /** Whether the offload binary goes into the stub as base64: the `inline` option, else Vite's assetsInlineLimit
   *  in Vite builds (as Vite inlines its own assets), else never. */
  function shouldInline(file: string, bytes: Uint8Array): boolean {
    const limit = ctx.resolved.inline
    if (limit !== undefined) return limit > 0 && bytes.byteLength <= limit
    if (framework !== 'vite' || viteCommand !== 'build' || viteInlineLimit === undefined) return false
    if (typeof viteInlineLimit === 'function') {
      const answer = viteInlineLimit(file, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
      if (answer !== undefined) return answer
      return bytes.byteLength < 4096
    }
    // Vite inlines files strictly smaller than the limit
    return bytes.byteLength < viteInlineLimit
  }

  /** The JS expression a stub uses to reach its offload binary, emitting the asset the bundler's way. */
  function assetFor(this: EmitContext, file: string, res: BuildResult, ssr: boolean): LoaderAsset {
    const bytes = res.offload
    if (shouldInline(file, bytes)) return { kind: 'inline', bytes }
    const fileName = assetFileName(file, bytes)
    // The `fileName` option's path (relative to the output folder), where this plugin names the file itself.
    const named = ctx.resolved.fileName !== undefined ? expandFileName(ctx.resolved.fileName, file, bytes) : undefined
    if (framework === 'vite' && viteCommand === 'serve') {
      if (!ssr) {
        const old = devAssetOf.get(file)
        if (old && old !== fileName) devAssets.delete(old)
        devAssetOf.set(file, fileName)
        devAssets.set(fileName, bytes)
        return { kind: 'expression', expression: `new URL(${jsString(viteBase + DEV_ASSET_PREFIX + fileName)}, import.meta.url)` }
      }
      const abs = stage(file, fileName, bytes)
      return { kind: 'expression', expression: `new URL(${jsString(pathToFileURL(abs).href)})` }
    }
    if (framework === 'vite' && ssr) {
      // Vite drops assets from SSR builds and renders ROLLUP_FILE_URL against `base` (a browser path), so
      // SSR output gets its own placeholder, replaced in renderChunk by a path relative to the chunk, and
      // the file written in writeBundle.
      const out = named ?? `assets/${fileName}`
      ssrAssets.set(out, bytes)
      return { kind: 'expression', expression: `${SSR_PLACEHOLDER}(${jsString(out)})` }
    }
    if (framework === 'vite' || framework === 'rollup' || framework === 'rolldown') {
      const ref = this.emitFile!(named !== undefined
        ? { type: 'asset', fileName: named, source: bytes }
        : { type: 'asset', name: `${basename(file).replace(/\.cu$/i, '')}.offload`, source: bytes })
      return { kind: 'expression', expression: `import.meta.ROLLUP_FILE_URL_${ref}` }
    }
    if (framework === 'esbuild') {
      const target = esbuildTarget ?? { outdir: resolve(ctx.resolved.root, 'dist'), format: 'esm' as const }
      const out = named ?? fileName
      writeFileAtomic(join(target.outdir, out), bytes)
      if (target.format === 'cjs') return { kind: 'expression', expression: `__dirname + ${jsString('/' + out)}` }
      if (target.format === 'iife') return { kind: 'expression', eager: true, expression: `new URL(${jsString('./' + out)}, typeof document !== 'undefined' && document.currentScript ? document.currentScript.src : location.href)` }
      return { kind: 'expression', expression: `new URL(${jsString('./' + out)}, import.meta.url)` }
    }
    // webpack and Rspack: `new URL('<relative file>', import.meta.url)` is their own asset syntax; they emit
    // the file under a content-hashed name and rewrite the URL for the output's target (node or web).
    const abs = stage(file, fileName, bytes)
    // a dependency of the stub: if the staged file goes (pruned by another build), a persistent cache
    // rebuilds the stub, which stages it again, instead of resolving a missing file
    this.addWatchFile?.(abs)
    if (named !== undefined) webpackNames.set(fileName, named)
    let rel = relative(dirname(file), abs).split('\\').join('/')
    if (!rel.startsWith('.')) rel = './' + rel
    return { kind: 'expression', expression: `new URL(${jsString(rel)}, import.meta.url)` }
  }

  /** C files for native packages (`emit: ['wrapper-c', 'hostrefs']`), named like `kernelpack build --emit`
   *  writes them: `<name>.wrapper.c` (+ `.wrapper.h`) in LLVM 22's offload layout, `<name>.hostrefs.c`. */
  function emitNativeFiles(this: EmitContext, file: string, res: BuildResult): void {
    const stem = basename(file).replace(/\.cu$/i, '')
    const files: Array<[string, string]> = []
    if (ctx.resolved.emit.has('wrapper-c')) {
      const out = emitWrapperC({ name: stem, offload: res.offload, manifest: res.manifest })
      files.push([`${stem}.wrapper.c`, out.c])
      if (out.h) files.push([`${stem}.wrapper.h`, out.h])
    }
    if (ctx.resolved.emit.has('hostrefs')) {
      files.push([`${stem}.hostrefs.c`, emitHostRefs(hostRefSymbolsFromManifest(res.manifest), { dialect: 'c', missingModuleId: 'skip' })])
    }
    for (const [name, text] of files) {
      if (framework === 'esbuild') writeFileAtomic(join(esbuildTarget?.outdir ?? resolve(ctx.resolved.root, 'dist'), name), text)
      else if (framework === 'vite' && viteCommand === 'serve') writeFileAtomic(join(ctx.resolved.cacheDir, 'native', name), text)
      else this.emitFile!({ type: 'asset', fileName: name, source: text })
    }
  }

  const plugin: UnpluginOptions = {
    name: PLUGIN_NAME,
    enforce: 'pre',

    async buildStart() {
      ctx.resetSummary()
      if (framework === 'rollup' || framework === 'rolldown') {
        // Rollup's logger (onLog), which prefixes `[plugin unplugin-cuda]` itself.
        const rc = this as unknown as { info?: (m: string) => void; warn: (m: string) => void }
        if (typeof rc.info === 'function') ctx.logger = { info: (m) => rc.info!(m.replace(/^unplugin-cuda: /, '')), warn: (m) => rc.warn(m.replace(/^unplugin-cuda: /, '')) }
      }
      // A compiler that is not there, an arch it does not know: one error before any module is transformed.
      await ctx.checkToolchain()
      const typing = ctx.writeAllDts()
      // The dev server need not wait: the .d.ts files land while it starts, imports compile on request.
      if (!(framework === 'vite' && viteCommand === 'serve')) await typing
    },

    resolveId(source, importer) {
      // Only the query forms need help: `./k.cu?url` is no file on disk for Rollup and esbuild.
      if (framework === 'webpack' || framework === 'rspack') return null
      const q = source.indexOf('?')
      if (q < 0 || !ctx.resolved.filter(source)) return null
      const path = source.slice(0, q)
      const abs = isAbsolute(path) ? path : resolve(importer ? dirname(stripQuery(importer)) : ctx.resolved.root, path)
      return abs + source.slice(q)
    },

    loadInclude(id) {
      return ctx.resolved.filter(id)
    },

    async load(id, loadOptions?: { ssr?: boolean }) {
      const file = stripQuery(id)
      const kind = parseImportKind(id)
      // esbuild goes on loading modules after a failed onStart: the error was reported there, once.
      if (framework === 'esbuild' && await ctx.checkToolchain().then(() => false, () => true)) return ''
      let res: BuildResult
      try {
        res = await ctx.build(file)
        // Name collisions are the import's error too: check before anything is emitted.
        nameKernelExports(res.manifest, relative(ctx.resolved.root, file) || file)
      } catch (err) {
        const e = toPluginError(err, file, ctx.resolved.root, { frameInMessage: framework !== 'vite' && framework !== 'rollup' && framework !== 'rolldown' })
        if (framework === 'esbuild' && e.loc) {
          // esbuild reports a thrown error at the import statement; an error with a location is shown at the
          // .cu line instead (unplugin passes this.error's `loc` on as esbuild's `location`; esbuild counts
          // columns from 0, compilers from 1). The stub is empty: the build fails on the error.
          const { message, loc } = esbuildMessage(e, ctx.resolved.root)
          this.error({ message, loc } as never)
          return ''
        }
        throw e
      }
      for (const dep of watchedDependencies(file, res.dependencies)) this.addWatchFile(dep)
      ctx.writeDts(file, res)
      if (kind === 'manifest') return emitManifestStub(res.manifest)
      if (kind === 'raw') return emitRawStub({ bytes: res.offload })
      const ssr = !!loadOptions?.ssr
      const asset = assetFor.call(this as EmitContext, file, res, ssr)
      if (kind === 'url') return emitUrlStub({ asset })
      try {
        emitNativeFiles.call(this as EmitContext, file, res)
      } catch (err) {
        throw toPluginError(err, file, ctx.resolved.root)
      }
      return emitLoaderStub({
        manifest: res.manifest,
        asset,
        name: relative(ctx.resolved.root, file) || basename(file),
        images: imageInfo(res),
        backend: ctx.resolved.backend,
        ...(ctx.resolved.check === undefined ? {} : { check: ctx.resolved.check }),
        hot: framework === 'vite' && viteCommand === 'serve' && !ssr,
      })
    },

    watchChange(id) {
      ctx.invalidate(id)
    },

    buildEnd() {
      const line = ctx.formatSummary()
      if (line && logLevelInfo) ctx.logger.info(line)
      // staged assets that no running build refers to any more (older edits, other builds that ended)
      staged?.prune()
    },

    vite: {
      configResolved(config) {
        ctx.setRoot(config.root)
        viteCommand = config.command
        viteBase = config.base.endsWith('/') ? config.base : config.base + '/'
        viteInlineLimit = config.build.assetsInlineLimit
        ctx.logger = { info: (m) => config.logger.info(m, { timestamp: true }), warn: (m) => config.logger.warn(m, { timestamp: true }) }
      },
      renderChunk(code, chunk, outputOptions) {
        if (!code.includes(SSR_PLACEHOLDER)) return null
        const from = dirname(chunk.fileName)
        const cjs = outputOptions.format === 'cjs'
        return code.replace(SSR_PLACEHOLDER_RE, (_m, json: string) => {
          let rel = relative(from, JSON.parse(json) as string).split('\\').join('/')
          if (!rel.startsWith('.')) rel = './' + rel
          return cjs ? `require('node:path').join(__dirname, ${jsString(rel)})` : `new URL(${jsString(rel)}, import.meta.url)`
        })
      },
      writeBundle(outputOptions) {
        if (!outputOptions.dir) return
        for (const [name, bytes] of ssrAssets) writeFileAtomic(join(outputOptions.dir, name), bytes)
      },
      configureServer(server) {
        server.middlewares.use((req, res, next) => {
          const url = (req.url ?? '').split('?')[0]!
          const at = url.indexOf(DEV_ASSET_PREFIX)
          const bytes = at >= 0 ? devAssets.get(decodeURIComponent(url.slice(at + DEV_ASSET_PREFIX.length))) : undefined
          if (!bytes) return next()
          res.setHeader('Content-Type', 'application/octet-stream')
          res.setHeader('Cache-Control', 'no-cache')
          res.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
        })
      },
    },

    esbuild: {
      config(initial) {
        if (initial.absWorkingDir) ctx.setRoot(initial.absWorkingDir)
        const outdir = initial.outdir ?? (initial.outfile ? dirname(initial.outfile) : undefined)
        const format = initial.format ?? (initial.platform === 'node' ? 'cjs' : 'iife')
        esbuildTarget = outdir ? { outdir: resolve(ctx.resolved.root, outdir), format: format as EsbuildTarget['format'] } : undefined
        logLevelInfo = ['info', 'debug', 'verbose'].includes(initial.logLevel ?? '')
        // esbuild has no plugin logger: stderr, at the build's logLevel.
        ctx.logger = { info: (m) => { if (logLevelInfo) console.error(m) }, warn: (m) => { if (initial.logLevel !== 'silent' && initial.logLevel !== 'error') console.error(m) } }
      },
    },

    webpack(compiler) {
      ctx.setRoot(compiler.context)
      ctx.logger = webpackLogger(compiler.getInfrastructureLogger(PLUGIN_NAME))
      compiler.hooks.shutdown.tap(PLUGIN_NAME, () => staged?.dispose())
      if (ctx.resolved.fileName !== undefined) compiler.options.module.rules.push(assetRule(ctx.resolved.cacheDir, webpackNames) as never)
    },

    rspack(compiler) {
      ctx.setRoot(compiler.context)
      ctx.logger = webpackLogger(compiler.getInfrastructureLogger(PLUGIN_NAME))
      compiler.hooks.shutdown.tap(PLUGIN_NAME, () => staged?.dispose())
      if (ctx.resolved.fileName !== undefined) compiler.options.module.rules.push(assetRule(ctx.resolved.cacheDir, webpackNames) as never)
    },
  }
  return plugin
}

/** `[name]` → the .cu file's name without `.cu`, `[hash]` → 12 hex digits of the content's SHA-256. */
export function expandFileName(pattern: string, file: string, bytes: Uint8Array): string {
  const name = basename(file).replace(/\.cu$/i, '')
  return pattern.replace(/\[(name|hash)\]/g, (_m, key: string) => (key === 'name' ? name : hashBytes(bytes)))
}

/** webpack/Rspack name assets by `output.assetModuleFilename`; with the `fileName` option, a rule for the
 *  plugin's cached offload files names each one by the pattern instead. */
function assetRule(cacheDir: string, names: Map<string, string>) {
  const dir = join(cacheDir, 'assets') + sep
  return {
    test: (resource: string) => resource.startsWith(dir) && resource.endsWith('.offload'),
    type: 'asset/resource',
    // pathData.filename is relative to the compiler's context; the cached name (`<name>.<hash>.offload`) is unique
    generator: { filename: (pathData: { filename?: string }) => names.get(basename(pathData.filename ?? '')) ?? '[hash][ext]' },
  }
}

/** An esbuild message for a compile error: the first diagnostic's place (file relative to the working
 *  directory, as esbuild prints its own; column from 0) and the message without that place, which esbuild
 *  prints in front (the code frame and further diagnostics follow on their own lines). */
function esbuildMessage(e: PluginError, root: string): { message: string; loc: { file: string; line: number; column: number } } {
  const loc = e.loc!
  const message = e.message.replace(/^[^\n]*?:\d+:\d+: /, '')
  return { message, loc: { file: relative(root, loc.file) || loc.file, line: loc.line, column: Math.max(0, loc.column - 1) } }
}

function webpackLogger(l: { info(...a: unknown[]): void; warn(...a: unknown[]): void }): Logger {
  return { info: (m) => l.info(m), warn: (m) => l.warn(m) }
}

/**
 * Writes `<file>.cu.d.ts` for every .cu under `options.dtsScan` (default `src`) of `root`, compiling as the
 * plugin does: for a `typecheck` script that runs before any bundler (`tsc --noEmit` then passes first time).
 * Returns the .cu files it typed; a file that does not compile is skipped (its import reports the error).
 */
export async function writeCudaTypes(options: Options = {}, root = process.cwd()): Promise<string[]> {
  const ctx = createContext({ ...options, dts: true }, root)
  return ctx.writeAllDts()
}

/** Checks `options` (throws the TypeError resolveOptions would, naming the option) and returns them: the
 *  bundler entries call it when the plugin is created, before any bundler runs (issue 16). */
export function checkOptions(options: Options | undefined): Options | undefined {
  resolveOptions(options ?? {})
  return options
}

export const unplugin = /* #__PURE__ */ createUnplugin(unpluginFactory)
export default unplugin
