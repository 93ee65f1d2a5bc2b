// One helper per bundler so one plugin test covers them all: `build.vite(input)`, `build.rollup(input)`, …
// Each builds the fixture entry for Node with unplugin-cuda (from its `default` export, i.e. dist/: run
// `node scripts/build.mjs` first) and returns the output file to import. Bare imports stay external so the
// output loads unplugin-cuda/runtime and @kernelpack/runtime from node_modules like an app would.
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Options } from 'unplugin-cuda'
import { repoRoot } from './tools.js'

export type BundlerName = 'vite' | 'rollup' | 'esbuild' | 'webpack' | 'rspack'
export const bundlers: BundlerName[] = ['vite', 'rollup', 'esbuild', 'webpack', 'rspack']

export interface BuildInput {
  /** Project root (the fixture copy). */
  root: string
  /** Entry, relative to root. */
  entry: string
  outDir: string
  options?: Options
  /** Output module format. @default 'esm' */
  format?: 'esm' | 'cjs'
  /** Vite only: more `build` options (`assetsInlineLimit`…). */
  viteBuild?: Record<string, unknown>
}

export interface BuildOutput {
  /** The entry chunk to import. */
  file: string
  /** Every emitted file, relative to outDir. */
  files: string[]
  /** Warnings and messages the bundler reported. */
  messages: string[]
}

const isBare = (id: string) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0') && !/^[A-Za-z]:/.test(id)

function listFiles(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...listFiles(p, base))
    else out.push(relative(base, p))
  }
  return out
}

// The plugin is imported from dist (the `default` condition), the way users get it; tests run with
// `--conditions=source`, so import the built files by path.
const dist = (entry: string) => import(join(repoRoot, 'packages', 'unplugin', 'dist', `${entry}.js`)).then((m) => m.default)

function finish(outDir: string, name: string, messages: string[]): BuildOutput {
  return { file: join(outDir, name), files: listFiles(outDir), messages }
}

async function buildVite(input: BuildInput): Promise<BuildOutput> {
  const { build } = await import('vite')
  const cuda = await dist('vite')
  rmSync(input.outDir, { recursive: true, force: true })
  const ext = input.format === 'cjs' ? 'cjs' : 'mjs'
  const messages: string[] = []
  await build({
    root: input.root,
    configFile: false,
    logLevel: 'silent',
    plugins: [cuda(input.options)],
    ssr: { external: true },
    build: {
      ssr: input.entry,
      outDir: input.outDir,
      emptyOutDir: true,
      minify: false,
      rollupOptions: { output: { format: input.format === 'cjs' ? 'cjs' : 'es', entryFileNames: `main.${ext}` } },
      ...input.viteBuild,
    },
  })
  return finish(input.outDir, `main.${ext}`, messages)
}

async function buildRollup(input: BuildInput): Promise<BuildOutput> {
  const { rollup } = await import('rollup')
  const cuda = await dist('rollup')
  rmSync(input.outDir, { recursive: true, force: true })
  const messages: string[] = []
  const bundle = await rollup({
    input: join(input.root, input.entry),
    plugins: [cuda(input.options)],
    external: isBare,
    onLog: (_level, log) => { messages.push(log.message) },
  })
  const ext = input.format === 'cjs' ? 'cjs' : 'mjs'
  await bundle.write({ dir: input.outDir, format: input.format === 'cjs' ? 'cjs' : 'es', entryFileNames: `main.${ext}` })
  await bundle.close()
  return finish(input.outDir, `main.${ext}`, messages)
}

async function buildEsbuild(input: BuildInput): Promise<BuildOutput> {
  const esbuild = await import('esbuild')
  const cuda = await dist('esbuild')
  rmSync(input.outDir, { recursive: true, force: true })
  const ext = input.format === 'cjs' ? 'cjs' : 'mjs'
  const r = await esbuild.build({
    absWorkingDir: input.root,
    entryPoints: { main: join(input.root, input.entry) },
    outdir: input.outDir,
    outExtension: { '.js': `.${ext}` },
    bundle: true,
    platform: 'node',
    format: input.format === 'cjs' ? 'cjs' : 'esm',
    packages: 'external',
    logLevel: 'silent',
    plugins: [cuda(input.options)],
  })
  return finish(input.outDir, `main.${ext}`, r.warnings.map((w) => w.text))
}

function webpackConfig(input: BuildInput, cuda: (o?: Options) => unknown) {
  const esm = input.format !== 'cjs'
  return {
    mode: 'production' as const,
    context: input.root,
    entry: join(input.root, input.entry),
    target: 'node20',
    devtool: false as const,
    output: esm
      ? { path: input.outDir, filename: 'main.mjs', module: true, library: { type: 'module' }, chunkFormat: 'module' as const, clean: true }
      : { path: input.outDir, filename: 'main.cjs', library: { type: 'commonjs2' }, clean: true },
    experiments: esm ? { outputModule: true } : {},
    externalsPresets: { node: true },
    externalsType: esm ? 'module' : 'import',
    externals: [({ request }: { request?: string }, cb: (err?: Error | null, result?: string) => void) => (request && isBare(request) && !request.startsWith('node:') ? cb(null, request) : cb())],
    optimization: { minimize: false },
    infrastructureLogging: { level: 'error' as const },
    plugins: [cuda(input.options)],
  }
}

function runCompiler(compiler: { run(cb: (err: Error | null, stats?: { hasErrors(): boolean; toJson(o: unknown): { errors?: Array<{ message: string }>; warnings?: Array<{ message: string }> } }) => void): void; close(cb: (err?: Error | null) => void): void }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    compiler.run((err, stats) => {
      compiler.close(() => {
        if (err) return reject(err)
        const json = stats!.toJson({ all: false, errors: true, warnings: true })
        if (stats!.hasErrors()) {
          const errors = (json.errors ?? []).map((e) => e.message)
          return reject(Object.assign(new Error(errors.join('\n')), { errors }))
        }
        resolve((json.warnings ?? []).map((w) => w.message))
      })
    })
  })
}

async function buildWebpack(input: BuildInput): Promise<BuildOutput> {
  const webpack = (await import('webpack')).default
  const cuda = await dist('webpack')
  const compiler = webpack(webpackConfig(input, cuda) as never)
  const messages = await runCompiler(compiler as never)
  return finish(input.outDir, input.format === 'cjs' ? 'main.cjs' : 'main.mjs', messages)
}

async function buildRspack(input: BuildInput): Promise<BuildOutput> {
  const { rspack } = await import('@rspack/core')
  const cuda = await dist('rspack')
  const compiler = rspack(webpackConfig(input, cuda) as never)
  const messages = await runCompiler(compiler as never)
  return finish(input.outDir, input.format === 'cjs' ? 'main.cjs' : 'main.mjs', messages)
}

export const build: Record<BundlerName, (input: BuildInput) => Promise<BuildOutput>> = {
  vite: buildVite,
  rollup: buildRollup,
  esbuild: buildEsbuild,
  webpack: buildWebpack,
  rspack: buildRspack,
}

/** A development webpack/Rspack config building `<root>/src/main.js` into `<outDir>/main.mjs` (ESM, bare
 *  imports external) with the plugin made by `cuda(options)`: for watch-mode tests. */
export function watchConfig(root: string, outDir: string, cuda: (o: Options) => unknown, options: Options) {
  return {
    mode: 'development',
    context: root,
    entry: join(root, 'src', 'main.js'),
    target: 'node20',
    devtool: false,
    output: { path: outDir, filename: 'main.mjs', module: true, library: { type: 'module' }, chunkFormat: 'module', clean: true },
    experiments: { outputModule: true },
    externalsType: 'module',
    externals: [({ request }: { request?: string }, cb: (e?: Error | null, r?: string) => void) => (request && !request.startsWith('.') && !request.startsWith('/') ? cb(null, request) : cb())],
    infrastructureLogging: { level: 'error' },
    plugins: [cuda(options)],
  }
}

/** Compile cache shared by every unplugin test file (the toolchain keys it by content, so sharing is safe). */
export const unpluginCacheDir = join(repoRoot, 'test', '.out', 'unplugin-cache')

/** A fresh copy of test/fixtures/unplugin/<name> under test/.out/unplugin/<label>/ (tests edit and build there). */
export function copyFixture(name: string, label: string): string {
  const dest = join(repoRoot, 'test', '.out', 'unplugin', label, name)
  rmSync(dest, { recursive: true, force: true })
  cpSync(join(repoRoot, 'test', 'fixtures', 'unplugin', name), dest, { recursive: true })
  return dest
}
