// The docs site (docs/, VitePress): built once with the root's `pnpm docs:build` into a temporary folder —
// TypeDoc's API pages from the packages' declarations, the gallery's .cu files compiled by unplugin-cuda
// in the site's own Vite config — then served over loopback with COOP/COEP and opened in one headless
// Chromium with a SwiftShader WebGPU adapter. Every gallery page runs on each backend its switch offers
// (`auto` when the page opens, then the others through the select and the Run button), and what the page
// exposes (`window.__kpDocsRuns`) is checked against the JS references of docs/examples/kernels/reference.ts,
// here in Node; the scene.png the convolution page decoded is compared with pngjs's decoding of the file.
// No page may log a console error. Also: the config keeps VitePress's dead-link check (a tiny site built
// with the same config function and one dead link fails), the plugin's options table is the same in the
// package README and on the site, and the site's TypeScript type-checks against the .cu.d.ts the build wrote.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { extname, join, relative } from 'node:path'
import { PNG } from 'pngjs'
import type { Browser, Page } from 'playwright-core'
import { repoRoot } from '../helpers/tools.js'
import { launchChromium, servePage, type PageFile, type PageServer } from '../helpers/webgpu.js'
import { checkBuilt, examplesCacheDir, runShell } from '../examples/run-example.js'
import * as ref from '../../docs/examples/kernels/reference.js'

const docsDir = join(repoRoot, 'docs')
const outDir = mkdtempSync(join(tmpdir(), 'kp-docs-site-'))

/** The gallery pages and the example each one runs. */
const galleryPages: Record<string, string> = {
  saxpy: 'saxpy', mandelbrot: 'mandelbrot', convolution: 'convolve', histogram: 'histogram',
  reduction: 'reduction', matmul: 'matmul', scan: 'scan', sanitizer: 'sanitizer',
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.woff2': 'font/woff2', '.offload': 'application/octet-stream',
}

/** The built site by URL path; `dir/index.html` also as `dir/`. */
function siteFiles(dir: string): Record<string, PageFile> {
  const files: Record<string, PageFile> = {}
  for (const d of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!d.isFile()) continue
    const path = join(d.parentPath, d.name)
    const url = '/' + relative(dir, path).split('\\').join('/')
    files[url] = [contentTypes[extname(d.name)] ?? 'application/octet-stream', readFileSync(path)]
    if (url.endsWith('/index.html')) files[url.slice(0, -'index.html'.length)] = files[url]!
  }
  return files
}

/** The cells of the first Markdown table after `heading` (a line of the file), row by row. */
function markdownTable(text: string, heading: string): string[][] {
  const lines = text.split('\n')
  const at = lines.indexOf(heading)
  assert.ok(at >= 0, `no line ${JSON.stringify(heading)}`)
  const rows: string[][] = []
  for (const line of lines.slice(at + 1)) {
    if (line.startsWith('|')) rows.push(line.replace(/\\\|/g, '\u0000').split('|').slice(1, -1).map((c) => c.trim().replace(/\u0000/g, '|')))
    else if (rows.length > 0) break
  }
  return rows.filter((r) => !r.every((c) => /^-+$/.test(c)))
}

/** Markdown cell text as the site renders it: code spans and links as their text. */
function cellText(cell: string): string {
  return cell.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1').replace(/`([^`]*)`/g, '$1')
}

interface Run {
  example: string
  requested: string
  params: Record<string, string>
  status: string
  message: string
  result?: { backend: string; reason: string; msPerRun: number; timing: string; launches: number; rate?: { value: number; unit: string }; output: Record<string, unknown> }
}

/** Runs so far, typed arrays as plain arrays. */
function readRuns(page: Page): Promise<Run[]> {
  return page.evaluate(() => ((window as unknown as { __kpDocsRuns?: Run[] }).__kpDocsRuns ?? []).map((r) => ({
    ...r,
    result: r.result && {
      ...r.result,
      output: Object.fromEntries(Object.entries(r.result.output).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v])),
    },
  })))
}

async function waitForRuns(page: Page, n: number): Promise<void> {
  await page.waitForFunction((k) => Number(document.querySelector('.kp-example')?.getAttribute('data-runs')) >= k, n, { timeout: 90_000 })
}

/** What the test expects of each example's output, from the references in Node. */
function checkOutput(example: string, output: Record<string, unknown>, params: Record<string, string>): string | null {
  const arr = (k: string) => output[k] as number[]
  switch (example) {
    case 'saxpy': {
      const { x, y } = ref.saxpyData()
      return ref.firstMismatch(arr('out'), ref.saxpyReference(ref.saxpyInput.a, x, y), ref.saxpyTolerance)
    }
    case 'mandelbrot': return ref.firstMismatch(arr('counts'), ref.mandelbrotReference(ref.mandelbrotViews[Number(params.view)]!))
    case 'convolve': {
      const png = PNG.sync.read(readFileSync(join(docsDir, 'examples', 'images', 'scene.png')))
      // pngjs gives RGBA; the file is grey, so every channel holds the level
      const grey = Uint8Array.from({ length: png.width * png.height }, (_, i) => png.data[4 * i]!)
      return ref.firstMismatch(arr('input'), grey) ?? ref.firstMismatch(arr('out'), ref.convolveReference(grey, png.width, png.height, ref.filters[params.filter as 'blur']))
    }
    case 'histogram': return ref.firstMismatch(arr('bins'), ref.histogramReference(ref.histogramData()))
    case 'reduction': {
      const want = ref.reductionReference(ref.reductionData())
      return ref.firstMismatch(arr('partials'), want.partials) ?? ref.firstMismatch([output.total as number], [want.total])
    }
    case 'matmul': {
      const n = Number(params.n)
      const { a, b } = ref.matmulData(n)
      return ref.firstMismatch(arr('c'), ref.matmulReference(a, b, n))
    }
    case 'scan': return ref.firstMismatch(arr('sums'), ref.scanReference(ref.scanData()))
    case 'sanitizer': {
      const racy = output.racyReports as string[], fixed = output.fixedReports as string[]
      if (racy.length === 0) return 'no report for sumRacy'
      if (!racy.every((m) => /Potential (RAW|WAR|WAW) hazard|Uninitialized __shared__ memory read/.test(m) && /sumRacy/.test(m) && /sanitizer\.cu:\d+/.test(m))) return `unexpected report: ${racy.join('\n')}`
      if (fixed.length > 0) return `sumFixed reported: ${fixed.join('\n')}`
      return ref.firstMismatch(arr('fixed'), ref.blockSumsReference(ref.sanitizerData()))
    }
  }
  return `no reference for ${example}`
}

const test = suite('docs site')
let server: PageServer | undefined
let browser: Browser | undefined
test.after(async () => {
  await browser?.close()
  await server?.close()
  rmSync(outDir, { recursive: true, force: true })
})

test('the config keeps the dead-link check on, and a dead link fails a build with it', async () => {
  checkBuilt()
  const { siteConfig } = await import('../../docs/.vitepress/site-config.js')
  const config = siteConfig()
  assert.is.not(config.ignoreDeadLinks, true)
  assert.not.ok(config.ignoreDeadLinks, 'ignoreDeadLinks is unset or false')
  // inside docs/ so that the config resolves vitepress and unplugin-cuda as the site's does
  const site = join(docsDir, '.vitepress', 'cache', 'dead-link-site')
  rmSync(site, { recursive: true, force: true })
  mkdirSync(join(site, '.vitepress', 'theme'), { recursive: true })
  writeFileSync(join(site, 'index.md'), '# A page\n\n[a page that does not exist](./missing.md)\n')
  writeFileSync(join(site, '.vitepress', 'config.mts'), `import { siteConfig } from ${JSON.stringify(join(docsDir, '.vitepress', 'site-config.ts'))}\nexport default siteConfig({ srcDir: ${JSON.stringify(site)} })\n`)
  // a theme of nothing: the client bundle is a few modules, and the build gets to the link check in seconds
  writeFileSync(join(site, '.vitepress', 'theme', 'index.mjs'), 'export default { Layout: () => null }\n')
  const r = spawnSync(process.execPath, [join(docsDir, 'node_modules', 'vitepress', 'bin', 'vitepress.js'), 'build', site, '--outDir', join(site, 'dist')], { cwd: docsDir, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  rmSync(site, { recursive: true, force: true })
  assert.is.not(r.status, 0, 'the build with a dead link fails')
  assert.match(r.stdout + r.stderr, /1 dead link\(s\) found/)
  assert.match(r.stdout + r.stderr, /missing/)
})

test('pnpm docs:build builds the site: guides, gallery pages with their kernels, the API reference from TypeDoc', async () => {
  const r = await runShell(`pnpm docs:build --outDir ${JSON.stringify(outDir)}`, repoRoot, { KERNELPACK_CACHE_DIR: examplesCacheDir })
  assert.is(r.code, 0, `pnpm docs:build failed:\n${r.stdout}\n${r.stderr}`)
  for (const p of Object.keys(galleryPages)) assert.ok(existsSync(join(outDir, 'examples', `${p}.html`)), `examples/${p}.html`)
  for (const p of ['getting-started', 'vite', 'rollup', 'esbuild', 'webpack', 'rspack', 'node', 'testing', 'native-and-ci', 'backends', 'sanitizer', 'troubleshooting', 'options']) {
    assert.ok(existsSync(join(outDir, 'guide', `${p}.html`)), `guide/${p}.html`)
  }
  // TypeDoc read the declarations: loadModule and its options are documented
  const api = readFileSync(join(outDir, 'reference', 'api', 'runtime.html'), 'utf8')
  assert.match(api, /loadModule/)
  assert.match(api, /LoadModuleOptions/)
  assert.match(readFileSync(join(outDir, 'reference', 'api', 'unplugin-cuda.html'), 'utf8'), /cacheSize/)
  const assets = readdirSync(join(outDir, 'assets'))
  assert.ok(assets.some((f) => /^web-worker-.+\.js$/.test(f)), 'Vite bundled the emulator\'s worker script')
  assert.ok(assets.some((f) => f.endsWith('.offload')), 'offload binaries are site assets')
})

test('the options table of unplugin-cuda\'s README is the table on the site\'s options page, row for row', async () => {
  const readme = readFileSync(join(repoRoot, 'packages', 'unplugin', 'README.md'), 'utf8')
  const want = markdownTable(readme, '<!-- #region options -->').map((row) => row.map(cellText))
  assert.ok(want.length > 15, 'the README table has a row per option')
  const html = readFileSync(join(outDir, 'guide', 'options.html'), 'utf8')
  const table = [...html.matchAll(/<table[^>]*>([\s\S]*?)<\/table>/g)].map((m) => m[1]!).find((t) => /<th[^>]*>option<\/th>/.test(t)) ?? ''
  const text = (s: string) => s.replace(/<[^>]+>/g, '').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim()
  const got = [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => text(c[1]!)))
  assert.equal(got, want)
  // and every option of the Options type has its row (the type is where options are documented)
  const source = readFileSync(join(repoRoot, 'packages', 'unplugin', 'src', 'core', 'options.ts'), 'utf8')
  const body = /export interface Options \{([\s\S]*?)\n\}/.exec(source)![1]!
  const keys = [...body.matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]!).sort()
  assert.equal(want.slice(1).map((r) => r[0]!).sort(), keys)
})

test('every gallery page runs on each backend it offers in Chromium (WebGPU on SwiftShader), matching the JS references, with no console error', async () => {
  server = await servePage(siteFiles(outDir), { crossOriginIsolated: true })
  browser = await launchChromium({ webgpu: true })
  const page = await browser.newPage()
  const errors: string[] = []
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`) })
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`))
  for (const [file, example] of Object.entries(galleryPages)) {
    await page.goto(`${server.url}examples/${file}.html`)
    await waitForRuns(page, 1)
    const offered = await page.$$eval('.kp-backend option', (os) => os.map((o) => (o as HTMLOptionElement).value))
    assert.equal(offered, example === 'sanitizer' ? ['auto', 'emulator'] : ['auto', 'webgpu', 'emulator'], `${file}: the backend switch`)
    for (const [i, backend] of offered.slice(1).entries()) {
      await page.selectOption('.kp-backend', backend)
      await page.click('.kp-run')
      await waitForRuns(page, i + 2)
    }
    const runs = await readRuns(page)
    assert.equal(runs.map((r) => r.requested), offered, `${file}: one run per backend`)
    assert.ok(await page.evaluate(() => crossOriginIsolated), `${file} is cross-origin isolated`)
    for (const run of runs) {
      const where = `${file} on ${run.requested}`
      assert.is(run.status, 'ok', `${where}: ${run.message}`)
      assert.is(run.example, example)
      const r = run.result!
      assert.is(checkOutput(example, r.output, run.params), null, where)
      assert.is(r.backend, run.requested === 'webgpu' ? 'webgpu' : 'emulator', `${where}: ${r.reason}`)
      // SwiftShader is a software adapter: auto leaves it for the emulator and says so
      if (run.requested === 'auto') assert.match(r.reason, example === 'sanitizer' ? /^auto: checks were requested/ : /^auto: .*fallback \(CPU\) adapter/, where)
      if (r.backend === 'emulator' && example !== 'sanitizer') assert.match(r.reason, /Web Workers/, `${where}: the isolated page runs blocks on workers`)
      assert.ok(r.msPerRun > 0 && Number.isFinite(r.msPerRun), `${where}: time per run ${r.msPerRun}`)
      if (example === 'matmul') assert.is(r.rate?.unit, 'GFLOP/s', where)
    }
    assert.match(await page.textContent('.kp-status') ?? '', /^\s*✓ .*JavaScript reference/, file)
    assert.match(await page.textContent('.kp-isolation') ?? '', /cross-origin isolated \(crossOriginIsolated is true\)/, file)
    if (example === 'sanitizer') assert.match(await page.textContent('.kp-details') ?? '', /Potential (RAW|WAR|WAW) hazard detected at __shared__[\s\S]* in sanitizer\.cu:\d+/, 'the report is on the page')
  }
  for (const p of ['index.html', 'guide/options.html', 'reference/api/runtime.html']) await page.goto(server.url + p, { waitUntil: 'load' })
  assert.equal(errors, [])
})

test('the site\'s TypeScript type-checks against the declarations the build wrote beside each .cu', () => {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(docsDir, 'tsconfig.json')], { cwd: docsDir, encoding: 'utf8' })
  assert.is(r.status, 0, r.stdout + r.stderr)
  for (const f of readdirSync(join(docsDir, 'examples', 'kernels')).filter((f) => f.endsWith('.cu'))) {
    assert.ok(existsSync(join(docsDir, 'examples', 'kernels', `${f}.d.ts`)), `${relative(repoRoot, join(docsDir, 'examples', 'kernels', f))}.d.ts`)
  }
})

test.run()
