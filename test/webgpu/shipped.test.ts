// WGSL translated at build time (issue 25): buildCudaFile({ wgsl }) and the plugin ship the translation in the
// offload binary; the runtime loads it on WebGPU (Dawn in Node, SwiftShader) without translating; a kernel
// that cannot run on WebGPU is a warning at its .cu line, an error with the plugin's backend 'webgpu' (the
// error Vite's overlay shows); and the vite-browser example built with backend 'webgpu' loads neither the
// translator nor the PTX front end before its kernel runs. test/fixtures/webgpu/ship.cu has the kernels.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { buildCudaFile, type BuildResult } from '@kernelpack/toolchain'
import { ImageKind, OffloadKind, readOffloadEntries } from '@kernelpack/offload'
import { decodeModule, parsePtx } from '@kernelpack/ptx'
import { compactWgsl, decodeWgslImage, SHIPPING_TARGET, translateModule } from '../../packages/webgpu/src/index.js'
import { loadModule } from '../../packages/runtime/src/index.js'
import { repoRoot, tempDir, tool } from '../helpers/tools.js'
import { runUnderDawn } from '../helpers/webgpu.js'

// Dawn finds Vulkan at create(): re-run this file under chromium's loader + SwiftShader ICD first.
runUnderDawn(import.meta.filename)

const source = join(repoRoot, 'test', 'fixtures', 'webgpu', 'ship.cu')
const sourceLines = readFileSync(source, 'utf8').split('\n')
/** The line of axpy_f64's f64 atomic add (its instruction without a WebGPU form). */
const f64Line = sourceLines.findIndex((l, i) => l.includes('atomicAdd(&y[i], a * x[i])') && i > sourceLines.findIndex((d) => d.includes('void axpy_f64('))) + 1
const cacheDir = tempDir('kp-shipped-')
const build = (extra: { defines?: Record<string, boolean>; wgsl?: boolean; cacheDir?: string } = {}) =>
  buildCudaFile(source, { arch: '80', compiler: tool('nvcc'), lineinfo: true, wgsl: extra.wgsl ?? true, cacheDir: extra.cacheDir ?? cacheDir, defines: extra.defines ?? {} })
const wgslEntry = (r: BuildResult) => readOffloadEntries(r.offload).find((e) => e.strings.get('triple') === 'wgsl')
const never = { name: 'a translator that must not run', translate(): never { throw new Error('translated at load') } }

async function caught(f: () => Promise<unknown>): Promise<Error> {
  try { await f() } catch (e) { return e as Error }
  throw new Error('expected an error')
}

// ---
const Build = suite('buildCudaFile({ wgsl: true })')

Build('ships the WGSL of the PTX as an image of its own: kind None, triple and arch wgsl, the PTX target it came from; the same WGSL emit-wgsl writes', async () => {
  const r = await build()
  const entries = readOffloadEntries(r.offload)
  assert.equal(entries.map((e) => e.strings.get('triple')), ['nvptx64-nvidia-cuda', 'nvptx64-nvidia-cuda', 'wgsl'])
  const e = wgslEntry(r)!
  assert.is(e.imageKind, ImageKind.None)
  assert.is(e.offloadKind, OffloadKind.None)
  assert.is(e.strings.get('arch'), 'wgsl')
  assert.is(e.strings.get('kernelpack-from'), 'compute_80')
  const shipped = decodeWgslImage(e.image, 'ship.offload')
  const ptx = new TextDecoder().decode(r.images.find((i) => i.kind === 'ptx')!.bytes)
  const fresh = translateModule(decodeModule(parsePtx(ptx), { perFunction: true }), SHIPPING_TARGET, ptx)
  assert.equal([...shipped.kernels.keys()], ['saxpy'])
  // the same WGSL without emit-wgsl's comment lines (the PTX above each statement)
  const full = fresh.kernels.get('saxpy')!.wgsl
  assert.is(shipped.kernels.get('saxpy')!.wgsl, compactWgsl(full))
  assert.ok(compactWgsl(full).length < full.length && !/^\s*\/\/ ld\.global/m.test(compactWgsl(full)) && /^\s*\/\/ ld\.global/m.test(full), 'comment lines left out')
  assert.equal(shipped.kernels.get('saxpy')!.paramOffsets, fresh.kernels.get('saxpy')!.paramOffsets)
  assert.equal(shipped.refused.map((u) => [u.kernel, u.line, u.source?.line]), [['axpy_f64', fresh.refused[0]!.line, f64Line]])
})

Build('a kernel that cannot run on WebGPU is a warning at its .cu line, naming it, the PTX line and the reason', async () => {
  const r = await build()
  assert.is(r.webgpuRefused?.length, 1)
  const d = r.webgpuRefused![0]!
  assert.equal([d.file, d.line, d.severity], [source, f64Line, 'warning'])
  assert.match(d.message, /^kernel axpy_f64 cannot run on WebGPU: PTX line \d+ \([a-z.]+f64 [^)]*\): f64 atomics/)
})

Build('the same inputs give the same bytes (a second build with its own cache); without wgsl nothing is shipped', async () => {
  const a = await build()
  const b = await build({ cacheDir: tempDir('kp-shipped-again-') })
  assert.ok(Buffer.from(a.offload).equals(Buffer.from(b.offload)), 'byte-identical offload binaries')
  const plain = await build({ wgsl: false })
  assert.is(wgslEntry(plain), undefined)
  assert.is(plain.webgpuRefused, undefined)
})

Build('kernelpack build --wgsl ships it too and prints the refusal as a warning at the .cu line', async () => {
  const { main } = await import('../../packages/cli/src/main.js')
  const work = tempDir('kp-shipped-cli-')
  cpSync(source, join(work, 'ship.cu'))
  let stderr = '', stdout = ''
  const code = await main(['build', 'ship.cu', '--arch', '80', '--lineinfo', '--wgsl', '-o', 'out', '--cache-dir', cacheDir], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: work })
  assert.is(code, 0, stderr)
  assert.match(stdout, /\(sm_80, compute_80, WGSL; 2 kernels/)
  assert.match(stderr, new RegExp(`ship\\.cu:${f64Line}:\\d+: warning: kernel axpy_f64 cannot run on WebGPU: PTX line \\d+`))
  const entries = readOffloadEntries(new Uint8Array(readFileSync(join(work, 'out', 'ship.offload'))))
  assert.is(entries.at(-1)!.strings.get('triple'), 'wgsl')
})

Build.run()

// ---
const Runtime = suite('the runtime on WebGPU (Dawn) with shipped WGSL')

Runtime('loads the shipped WGSL without translating (a translator that throws is never called) and runs it', async () => {
  const r = await build({ defines: { F32_ONLY: true } })
  const mod = await loadModule(r.offload, r.manifest, { backend: 'webgpu', webgpu: { translator: never } })
  assert.match(mod.image.reason, /^WGSL translated at build time from compute_80/)
  const n = 1000
  const x = Float32Array.from({ length: n }, (_, i) => i), y = Float32Array.from({ length: n }, (_, i) => 1 - i)
  const [dx, dy] = await Promise.all([mod.upload(x), mod.upload(y)])
  await mod.kernel('saxpy').launch({ grid: Math.ceil(n / 128), block: 128 }, 2, dx, dy, n)
  const got = await dy.download(new Float32Array(n))
  for (let i = 0; i < n; i++) if (got[i] !== Math.fround(Math.fround(2 * i) + (1 - i))) assert.unreachable(`y[${i}] = ${got[i]}`)
  await mod.unload()
})

Runtime("a shipped refusal fails backend 'webgpu' at load with the kernel, PTX line, .cu line and reason; auto runs the emulator and says why", async () => {
  const r = await build()
  const err = await caught(() => loadModule(r.offload, r.manifest, { backend: 'webgpu', webgpu: { translator: never } }))
  assert.is(err.name, 'CannotTranslateError')
  assert.match(err.message, new RegExp(`kernel axpy_f64: PTX line \\d+ \\([^)]*\\) in \\S*ship\\.cu:${f64Line}: f64 atomics`))
  const auto = await loadModule(r.offload, r.manifest, { backend: 'auto', workers: 0, webgpu: { translator: never, allowFallbackAdapter: true } })
  assert.is(auto.backend.name, 'emulator')
  assert.match(auto.backend.reason, /cannot run this module: kernel axpy_f64: PTX line \d+ .*f64 atomics/)
  await auto.unload()
})

Runtime.run()

// ---
const Plugin = suite("the plugin: refusals at build time, and a page's chunks with backend 'webgpu'")

/** A Vite project whose entry imports ship.cu. */
function project(label: string): string {
  // inside the repository, so the stub's @kernelpack/runtime resolves from the workspace's node_modules
  const root = join(repoRoot, 'test', '.out', 'shipped', label)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(join(root, 'src'), { recursive: true })
  cpSync(source, join(root, 'src', 'ship.cu'))
  writeFileSync(join(root, 'src', 'main.ts'), "import { saxpy } from './ship.cu'\nconsole.log(typeof saxpy)\n")
  writeFileSync(join(root, 'index.html'), '<!doctype html><script type="module" src="/src/main.ts"></script>\n')
  return root
}

async function cudaPlugin(options: Record<string, unknown>): Promise<import('vite').PluginOption> {
  const cuda = (await import(join(repoRoot, 'packages', 'unplugin', 'dist', 'vite.js'))).default as (o: unknown) => import('vite').PluginOption
  return cuda({ arch: '80', lineinfo: true, cacheDir, dts: false, ...options })
}

Plugin("backend 'webgpu': vite build fails at the kernel's .cu line with a code frame; 'auto' builds and warns", async () => {
  const { build: viteBuild } = await import('vite')
  const root = project('build')
  const webgpuOnly = await cudaPlugin({ backend: 'webgpu' })
  type PluginError = Error & { loc?: { line: number }; frame?: string; plugin?: string }
  const thrown = await caught(() => viteBuild({ root, configFile: false, logLevel: 'silent', plugins: [webgpuOnly], build: { outDir: join(root, 'dist'), write: false } })) as PluginError & { errors?: PluginError[] }
  // Vite 8 (rolldown) rejects with the plugin's errors in `errors`
  const err = thrown.errors?.[0] ?? thrown
  assert.match(err.message, new RegExp(`src/ship\\.cu:${f64Line}:\\d+: error: kernel axpy_f64 cannot run on WebGPU: PTX line \\d+ .*f64 atomics.*the plugin's backend is 'webgpu'`))
  assert.is(err.plugin, 'unplugin-cuda')
  assert.is(err.loc?.line, f64Line)
  assert.match(err.frame ?? '', new RegExp(`> ${f64Line} \\| +if \\(i < n\\) atomicAdd\\(&y\\[i\\], a \\* x\\[i\\]\\);`))
  const warnings: string[] = []
  const logger = { info() {}, warn: (m: string) => warnings.push(m), warnOnce: (m: string) => warnings.push(m), error() {}, clearScreen() {}, hasErrorLogged: () => false, hasWarned: false }
  await viteBuild({ root, configFile: false, customLogger: logger as never, plugins: [await cudaPlugin({ backend: 'auto' })], build: { outDir: join(root, 'dist'), write: false } })
  assert.ok(warnings.some((w) => new RegExp(`src/ship\\.cu:${f64Line}:\\d+: warning: kernel axpy_f64 cannot run on WebGPU: .*f64 atomics.* \\(on WebGPU, 'auto' runs this module on the emulator; the plugin's wgsl: false stops translating at build time\\)`).test(w)), warnings.join('\n'))
})

Plugin("backend 'webgpu' on the dev server: the import fails with the file, line, frame and plugin that Vite's overlay shows", async () => {
  const { createServer } = await import('vite')
  const root = project('dev')
  const plugin = await cudaPlugin({ backend: 'webgpu' })
  const server = await createServer({ root, configFile: false, logLevel: 'silent', plugins: [plugin], server: { middlewareMode: true }, optimizeDeps: { noDiscovery: true, include: [] } })
  try {
    const err = await caught(() => server.transformRequest('/src/ship.cu')) as Error & { loc?: { file: string; line: number }; frame?: string; plugin?: string }
    assert.is(err.plugin, 'unplugin-cuda')
    assert.equal([err.loc?.file, err.loc?.line], [join(root, 'src', 'ship.cu'), f64Line])
    assert.match(err.frame ?? '', /atomicAdd\(&y\[i\], a \* x\[i\]\)/)
    assert.match(err.message, /kernel axpy_f64 cannot run on WebGPU/)
  } finally {
    await server.close()
  }
})

Plugin("examples/vite-browser with backend 'webgpu': the chunks a page loads before its kernel runs hold no translator and no PTX front end", async () => {
  const { build: viteBuild } = await import('vite')
  const root = join(repoRoot, 'examples', 'vite-browser')
  const out = await viteBuild({
    root, configFile: false, logLevel: 'silent',
    plugins: [await cudaPlugin({ backend: 'webgpu', lineinfo: false })],
    build: { target: 'es2022', outDir: tempDir('kp-shipped-vite-'), write: false },
  }) as { output: Array<{ type: string; fileName: string; isEntry?: boolean; imports?: string[]; moduleIds?: string[]; code?: string; source?: Uint8Array | string }> }
  const chunks = new Map(out.output.filter((o) => o.type === 'chunk').map((c) => [c.fileName, c]))
  const backendChunk = [...chunks.values()].find((c) => c.moduleIds!.some((m) => /packages\/webgpu\/(dist|src)\/backend\.(js|ts)$/.test(m)))
  assert.ok(backendChunk, 'a chunk holds the webgpu backend')
  // what the page loads: the entry, the backend's chunk (imported when WebGPU runs), and what they import statically
  const loaded = new Set<string>()
  const visit = (name: string) => { if (loaded.has(name)) return; loaded.add(name); for (const i of chunks.get(name)?.imports ?? []) visit(i) }
  for (const c of chunks.values()) if (c.isEntry) visit(c.fileName)
  visit(backendChunk!.fileName)
  const modules = [...loaded].flatMap((n) => chunks.get(n)!.moduleIds!)
  const heavy = modules.filter((m) => /packages\/webgpu\/(dist|src)\/(emit-|from-ptx)|packages\/ptx\/(dist|src)\/(parse|tokenize|decode|structure)\./.test(m))
  assert.equal(heavy, [], 'no translator or PTX front end in the chunks loaded before the first kernel')
  assert.ok([...chunks.values()].some((c) => c.moduleIds!.some((m) => /webgpu\/(dist|src)\/emit-kernel/.test(m))), 'the translator is still there, in a chunk of its own, for PTX-only binaries')
  // what only some modules or launches need is loaded then: struct codecs (schema), the emulator's adapter, the
  // sanitizer's settings, the demangler (refused kernels), C++ export naming, raw images, stoppable launches,
  // cooperative launches of kernels with grid syncs, the explanation of a launch past a limit, the fma probe
  const lazy = modules.filter((m) => /packages\/runtime\/(dist|src)\/(schema|emulator|images)\.|packages\/ptx\/(dist|src)\/(sanitizer|demangle)\.|packages\/offload\/(dist|src)\/(kernel-names|inflate)\.|packages\/webgpu\/(dist|src)\/(stoppable|grid-launch|launch-checks|fma-probe)\./.test(m))
  assert.equal(lazy, [], 'only what every WebGPU page needs is loaded before the first kernel')
  const gz = [...loaded].reduce((n, name) => n + gzipSync(chunks.get(name)!.code!, { level: 9 }).length, 0)
  console.log(`  vite-browser, backend 'webgpu': ${loaded.size} chunks before the first kernel, ${gz} bytes (${(gz / 1024).toFixed(1)} KiB) gzipped`)
  // issue 25's budget for the page (entry, backend and what they import), gzip level 9 per chunk
  assert.ok(gz <= 25_000, `the page loads ${gz} bytes of gzipped JS before its first kernel; the budget is 25,000`)
  const offload = out.output.find((o) => o.fileName.endsWith('.offload'))!
  assert.ok(readOffloadEntries(new Uint8Array(offload.source as Uint8Array)).some((e) => e.strings.get('triple') === 'wgsl'), 'the offload asset ships the WGSL')
})

Plugin.run()
