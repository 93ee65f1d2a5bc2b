// A create-vite TypeScript app outside the repository with the packed tarballs (issue 16, "Must show"):
// pnpm's strict layout, the plugin a devDependency and @kernelpack/runtime the one run-time dependency;
// `kernelpack types && tsc -b && vite build` passes on the fresh checkout (strict, moduleResolution bundler,
// tsconfig.node.json checking vite.config.ts against the compiled declarations), and the built page shows
// the kernel's checked result in headless Chromium.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { launchChromium, readPageFiles, servePage } from '../helpers/webgpu.js'
import { repoRoot, tool } from '../helpers/tools.js'
import { installProject, output } from './install.js'
import { packAll } from './pack.js'

tool('nvcc')
const app = installProject('vite-app', packAll())
// compiles go through a cache the suite keeps (the project's own default would be a fresh one every run)
const env = { KERNELPACK_CACHE_DIR: join(repoRoot, 'test', '.out', 'packaging-cache') }

const vite = suite('packaging: create-vite TypeScript app')

vite('pnpm strict layout: the app sees its own dependencies only; the plugin is a devDependency', () => {
  const pkg = JSON.parse(readFileSync(join(app.dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> }
  assert.equal(Object.keys(pkg.dependencies), ['@kernelpack/runtime'])
  assert.ok('unplugin-cuda' in pkg.devDependencies)
  for (const hidden of ['@kernelpack/offload', '@kernelpack/emulator', '@kernelpack/toolchain', 'unplugin', 'koffi']) {
    assert.not.ok(existsSync(join(app.dir, 'node_modules', hidden)), `${hidden} is not hoisted`)
  }
  assert.ok(existsSync(join(app.dir, 'node_modules', '.pnpm')), 'pnpm layout')
  // what the app resolves for the stub's import is the compiled runtime, not sources
  assert.not.ok(existsSync(join(app.dir, 'node_modules', '@kernelpack', 'runtime', 'src')))
})

vite('`kernelpack types && tsc -b && vite build` passes on the fresh project', () => {
  assert.not.ok(existsSync(join(app.dir, 'src', 'saxpy.cu.d.ts')), 'no declaration before the first build')
  const r = app.pnpm(['run', 'build'], { env })
  assert.is(r.status, 0, output(r))
  assert.match(r.stdout, 'src/saxpy.cu → src/saxpy.cu.d.ts (1 kernel)')
  const dts = readFileSync(join(app.dir, 'src', 'saxpy.cu.d.ts'), 'utf8')
  assert.match(dts, 'export declare const saxpy: Launcher<[n: number, a: number, x: DevicePointer, y: DevicePointer]>;')
  assert.ok(existsSync(join(app.dir, 'dist', 'index.html')))
})

vite('tsc fails on a wrong kernel argument (the types are the .cu\'s, not any)', () => {
  const main = join(app.dir, 'src', 'main.ts')
  const text = readFileSync(main, 'utf8')
  try {
    const bad = text.replace('n, 2.5, dx, dy)', "n, '2.5', dx, dy)")
    assert.is.not(bad, text)
    writeFileSync(main, bad)
    const r = app.run(process.execPath, [join(app.dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-b'])
    assert.is.not(r.status, 0, 'tsc rejects a string for a float')
    assert.match(r.stdout, /src\/main\.ts\(\d+,\d+\): error TS2345/)
  } finally {
    writeFileSync(main, text)
  }
})

vite('the built page shows the kernel\'s result in headless Chromium', async () => {
  const dist = join(app.dir, 'dist')
  const files = readPageFiles(dist)
  const js = Object.keys(files).filter((f) => f.endsWith('.js'))
  assert.ok(js.length > 0)
  for (const f of js) assert.not.match(files[f]![1].toString(), 'koffi.node', `${f}: no native module in the browser bundle`)
  const server = await servePage(files)
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    await page.goto(server.url)
    await page.waitForFunction(() => (document.querySelector('#app')?.textContent ?? '') !== '', undefined, { timeout: 60_000 })
    const text = await page.textContent('#app')
    assert.equal(errors, [])
    assert.is(text, 'saxpy: 1000 elements OK on emulator')
  } finally {
    await browser.close()
    await server.close()
  }
  assert.ok(relative(repoRoot, app.dir).startsWith('..'), 'the project lives outside the repository')
})

vite.run()
