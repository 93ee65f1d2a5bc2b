// WebGPU for tests and benches (issue 15), in two places:
//
// Chromium: Debian's chromium 15x gives headless pages a WebGPU adapter on SwiftShader (its bundled Vulkan
// ICD, a CPU) with `--enable-unsafe-webgpu` alone (Linux keeps WebGPU behind that flag); the other two flags
// pin the adapter to SwiftShader even where a GPU exists, so results do not depend on the machine.
// Measured on chromium 156 (Debian 12): `--headless=new`, `--use-angle=swiftshader`, `--enable-features=Vulkan`
// and `--disable-gpu` change nothing here; without `--enable-unsafe-webgpu` requestAdapter() answers null.
// WebGPU needs a secure context, so pages are served from 127.0.0.1 (loopback counts as secure). With
// `crossOriginIsolated: true` the server adds COOP/COEP headers, so the page has SharedArrayBuffer (issue 13).
//
// Node: the optional `webgpu` package (Dawn) needs a Vulkan loader; on a machine without a GPU driver the
// loader and SwiftShader ICD that chromium ships serve (`dawnEnvironment`). Both must be set before the process
// starts (the dynamic loader reads them once), so a test re-executes itself under them (`runUnderDawn`).
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, extname, join, relative } from 'node:path'
import { build } from 'esbuild'
import { chromium, type Browser } from 'playwright-core'
import { repoRoot, tool } from './tools.js'

export const webgpuFlags = ['--enable-unsafe-webgpu', '--enable-unsafe-swiftshader', '--use-webgpu-adapter=swiftshader'] as const
const quietFlags = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run']

/** A file the page server serves: content type and body. */
export type PageFile = [type: string, body: string | Uint8Array]

export interface PageServer { url: string; close(): Promise<void> }

/** Serves `files` (by URL path, `/` for the page) on 127.0.0.1; COOP/COEP headers when cross-origin isolated;
 *  `csp`: a Content-Security-Policy header on every response. */
export async function servePage(files: Record<string, PageFile>, opts: { crossOriginIsolated?: boolean; csp?: string } = {}): Promise<PageServer> {
  const isolation = {
    ...(opts.crossOriginIsolated ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {}),
    ...(opts.csp ? { 'content-security-policy': opts.csp } : {}),
  }
  const server = createServer((req, res) => {
    const f = files[(req.url ?? '/').split('?')[0]!]
    if (!f) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': f[0], ...isolation }).end(f[1])
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((ok) => server.close(() => ok())),
  }
}

/** Every file under `dir` (a bundler's output folder) as page files by URL path, `index.html` also as `/`. */
export function readPageFiles(dir: string): Record<string, PageFile> {
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.offload': 'application/octet-stream', '.css': 'text/css' }
  const files: Record<string, PageFile> = {}
  for (const d of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!d.isFile()) continue
    const f = relative(dir, join(d.parentPath, d.name))
    files['/' + f.split('\\').join('/')] = [types[extname(f)] ?? 'application/octet-stream', readFileSync(join(dir, f))]
  }
  if (files['/index.html']) files['/'] = files['/index.html']
  return files
}

/** Headless Debian chromium; with `webgpu` its WebGPU adapter is SwiftShader. */
export function launchChromium(opts: { webgpu?: boolean } = {}): Promise<Browser> {
  return chromium.launch({ executablePath: tool('chromium'), headless: true, args: [...quietFlags, ...(opts.webgpu ? webgpuFlags : ['--disable-gpu'])] })
}

/**
 * Serves `files`, opens `/` in headless chromium and waits for the page to set `window.__kpResult` (a page
 * that fails sets `{ error }`); returns it. Page errors fail the call, naming them.
 */
export async function runPage<T>(files: Record<string, PageFile>, opts: { webgpu?: boolean; crossOriginIsolated?: boolean; csp?: string; timeoutMs?: number } = {}): Promise<T> {
  const server = await servePage(files, opts)
  const browser = await launchChromium(opts)
  try {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(String(e)))
    await page.goto(server.url)
    await page.waitForFunction(() => (window as unknown as { __kpResult?: unknown }).__kpResult !== undefined, undefined, { timeout: opts.timeoutMs ?? 60_000 })
    const result = await page.evaluate(() => (window as unknown as { __kpResult: unknown }).__kpResult) as T & { error?: string }
    if (errors.length) throw new Error(`the page reported errors: ${errors.join('\n')}`)
    if (result && typeof result === 'object' && result.error) throw new Error(`the page failed: ${result.error}`)
    return result
  } finally {
    await browser.close()
    await server.close()
  }
}

/** A page that runs the module `/page.js` (served beside it). */
export const modulePage = '<!doctype html><meta charset="utf-8"><script type="module" src="./page.js"></script>'

/** Bundles `entry` (TypeScript) for browsers with the `source` condition; returns the JS text. A Node
 *  built-in anywhere in the graph is a build error (platform browser). */
export async function bundleForBrowser(entry: string, opts: { define?: Record<string, string> } = {}): Promise<string> {
  const r = await build({
    entryPoints: [entry], bundle: true, write: false, platform: 'browser', format: 'esm', target: 'es2022',
    conditions: ['source', 'browser'], absWorkingDir: repoRoot, logLevel: 'silent', define: opts.define,
  })
  return r.outputFiles[0]!.text
}

/** JSON for a `<script>` or a JS literal: `<` escaped so the text cannot close the element. */
export function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c')
}

/** Environment that lets Dawn (`webgpu` package) find a Vulkan loader and the SwiftShader ICD: chromium's. */
export function dawnEnvironment(): Record<string, string> {
  const candidates = [join(dirname(realpathSync(tool('chromium'))), '..', 'lib', 'chromium'), '/usr/lib/chromium']
  const dir = candidates.find((d) => existsSync(join(d, 'vk_swiftshader_icd.json')) && existsSync(join(d, 'libvulkan.so.1')))
  if (!dir) {
    throw new Error(`no Vulkan loader + SwiftShader ICD for Dawn: looked for libvulkan.so.1 and vk_swiftshader_icd.json in ${candidates.join(', ')}; install Debian's chromium (apt-get install -y chromium)`)
  }
  return {
    LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
    VK_ICD_FILENAMES: join(dir, 'vk_swiftshader_icd.json'),
  }
}

/**
 * Runs a WGSL compute shader once on `device` (Dawn in Node, under runUnderDawn): entry point `main`,
 * `@group(0) @binding(0)` a read-only storage buffer holding `input`, `@binding(1)` a read-write one of
 * `outBytes`, `groups` workgroups; returns the output's words. Fails with the compiler's messages when the WGSL
 * does not compile.
 */
export async function runCompute(device: GPUDevice, code: string, input: Uint32Array, outBytes: number, groups: number): Promise<Uint32Array> {
  // (GPUBufferUsage / GPUMapMode bits: STORAGE 0x80, COPY_SRC 0x4, COPY_DST 0x8, MAP_READ 0x1)
  const module = device.createShaderModule({ code })
  const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error')
  if (errors.length) throw new Error(`the WGSL does not compile: ${errors.map((m) => `line ${m.lineNum}: ${m.message}`).join('; ')}`)
  const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } })
  const inBuf = device.createBuffer({ size: Math.max(16, input.byteLength), usage: 0x80 | 0x8 })
  device.queue.writeBuffer(inBuf, 0, input as Uint32Array<ArrayBuffer>)
  const outBuf = device.createBuffer({ size: outBytes, usage: 0x80 | 0x4 })
  const read = device.createBuffer({ size: outBytes, usage: 0x1 | 0x8 })
  const enc = device.createCommandEncoder()
  const pass = enc.beginComputePass()
  pass.setPipeline(pipeline)
  pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: inBuf } }, { binding: 1, resource: { buffer: outBuf } }] }))
  pass.dispatchWorkgroups(groups)
  pass.end()
  enc.copyBufferToBuffer(outBuf, 0, read, 0, outBytes)
  device.queue.submit([enc.finish()])
  await read.mapAsync(0x1)
  const out = new Uint32Array(read.getMappedRange().slice(0))
  read.unmap()
  for (const b of [inBuf, outBuf, read]) b.destroy()
  return out
}

/**
 * Call first in a test file that uses Dawn: unless this process already runs under dawnEnvironment(), runs
 * the same file again under it (output passed through, same exit status) and exits.
 */
export function runUnderDawn(file: string): void {
  const env = dawnEnvironment()
  if (process.env.VK_ICD_FILENAMES === env.VK_ICD_FILENAMES) return
  const r = spawnSync(process.execPath, [...process.execArgv, file], { env: { ...process.env, ...env }, stdio: 'inherit' })
  if (r.error) throw r.error
  process.exit(r.status ?? 1)
}
