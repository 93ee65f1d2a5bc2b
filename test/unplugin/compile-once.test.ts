// Vite client + SSR builds, a webpack multi-compiler and repeated builds in one process compile each
// .cu once (the toolchain shares in-flight compiles and caches on disk); the browser build pulls in no
// Node built-in and no koffi.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readOffloadBinaries } from '@kernelpack/offload'
import { processCounter } from '@kernelpack/toolchain'
import { build, copyFixture } from '../helpers/bundlers.js'
import { repoRoot, tempDir } from '../helpers/tools.js'

// The plugin's own import of @kernelpack/toolchain resolves like this one (tests run with the `source`
// condition), so this is the counter of the compiler processes the builds start.
const toolchain = { processCounter }
const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'vite.js'))).default
const root = copyFixture('app', 'compile-once')

const imagesIn = (file: string) => readOffloadBinaries(new Uint8Array(readFileSync(file))).length

// ---
const vite = suite('vite client + ssr')

vite('a client build and an SSR build of the same app compile the file once; the client has no Node code', async () => {
  const cacheDir = tempDir('kp-unplugin-once-')
  const { build: viteBuild } = await import('vite')
  const before = toolchain.processCounter.spawned
  const plansBefore = toolchain.processCounter.plans
  const out = await viteBuild({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [cuda({ cacheDir })],
    build: { outDir: join(root, '..', 'client'), emptyOutDir: true, minify: false },
  }) as { output: Array<{ type: string; fileName: string; code?: string; source?: unknown }> }
  const afterClient = toolchain.processCounter.spawned
  const chunks = out.output.filter((o) => o.type === 'chunk')
  const assets = out.output.filter((o) => o.fileName.endsWith('.offload'))
  assert.is(assets.length, 1, 'one offload asset in the client build')
  const images = imagesIn(join(root, '..', 'client', assets[0]!.fileName))
  // a file's first build is one nvcc process for all its images (issue 27: the front end per virtual
  // architecture and ptxas per real one, inside it); the third image is the WGSL translated from the PTX
  // (backend 'auto' ships it, issue 25), which runs no process; the process's first compile with these
  // arguments also asks nvcc for its plan (--dryrun, compile.ts nvccPlan)
  const plans = toolchain.processCounter.plans - plansBefore
  assert.ok(plans <= 1, `${plans} plans asked`)
  assert.equal([afterClient - before - plans, images], [1, 3], 'one compile of the file for its two device images (and the WGSL)')
  for (const c of chunks) {
    assert.not.match(c.code!, /koffi/, `${c.fileName} has no koffi`)
    assert.not.match(c.code!, /from\s*["']node:|require\(["'](node:)?(fs|path|url|module)["']\)/, `${c.fileName} imports no Node built-in`)
  }

  await build.vite({ root, entry: 'src/main.js', outDir: join(root, '..', 'ssr'), options: { cacheDir } })
  assert.is(toolchain.processCounter.spawned, afterClient, 'the SSR build compiles nothing')
  await build.vite({ root, entry: 'src/main.js', outDir: join(root, '..', 'ssr2'), options: { cacheDir } })
  assert.is(toolchain.processCounter.spawned, afterClient, 'a repeated build compiles nothing')
})

vite.run()

// ---
const multi = suite('webpack multi-compiler')

multi('two webpack compilers building the same .cu at once compile it once', async () => {
  const cacheDir = tempDir('kp-unplugin-once-')
  const webpack = (await import('webpack')).default
  const wp = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'webpack.js'))).default
  const config = (name: string) => ({
    name,
    mode: 'production' as const,
    context: root,
    entry: join(root, 'src', 'main.js'),
    target: 'node20',
    devtool: false as const,
    output: { path: join(root, '..', `multi-${name}`), filename: 'main.mjs', module: true, library: { type: 'module' }, chunkFormat: 'module' as const, clean: true },
    experiments: { outputModule: true },
    externalsType: 'module',
    externals: [({ request }: { request?: string }, cb: (e?: Error | null, r?: string) => void) => (request && !request.startsWith('.') && !request.startsWith('/') ? cb(null, request) : cb())],
    optimization: { minimize: false },
    infrastructureLogging: { level: 'error' as const },
    plugins: [wp({ cacheDir })],
  })
  const before = toolchain.processCounter.spawned
  const compiler = webpack([config('a'), config('b')] as never)
  await new Promise<void>((resolve, reject) => compiler.run((err, stats) => {
    compiler.close(() => (err ? reject(err) : stats!.hasErrors() ? reject(new Error(stats!.toString('errors-only'))) : resolve()))
  }))
  const asset = (await import('node:fs')).readdirSync(join(root, '..', 'multi-a')).find((f) => f.endsWith('.offload'))!
  assert.ok(asset, 'the offload asset is emitted')
  assert.equal([toolchain.processCounter.spawned - before, imagesIn(join(root, '..', 'multi-a', asset))], [1, 3], 'one compile of the file for its two device images (and the WGSL) across both compilers')
})

multi.run()
