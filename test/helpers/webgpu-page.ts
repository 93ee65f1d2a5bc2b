// The WebGPU backend running in headless chromium, used from Node as a Backend (issue 15): a page
// (test/fixtures/webgpu/pages/rpc.ts) creates @kernelpack/webgpu's backend on the page's adapter, and every
// Backend call here is one `page.evaluate` of its `window.kpRpc`. Tests then drive chromium's WebGPU with
// the same KernelRunner / runtime code as the emulator, one page per corpus configuration. Errors keep
// their name and message (CannotTranslateError, WebGpuFault…).
import { join } from 'node:path'
import { suite, type Test } from 'uvu'
import type { Browser, Page } from 'playwright-core'
import type { Backend, BackendFunction, BackendModule, BackendStream, DeviceInfo, ImageToLoad, KernelParams, LaunchConfig } from '@kernelpack/ptx'
import { repoRoot } from './tools.js'
import { bundleForBrowser, launchChromium, modulePage, servePage, type PageServer } from './webgpu.js'

/** A kernel the backend refused (listed instead of failing the load: the backend's `partial` option). */
export interface Refusal { kernel?: string; line: number; instruction?: string; reason: string }

/** A Backend whose calls run in the page. */
export class PageBackend implements Backend {
  readonly name = 'webgpu' as const
  readonly imageKinds: ReadonlyArray<ImageToLoad['kind']> = ['ptx']
  /** Kernels the last loadModule refused (a page opened with `partial`). */
  refused: Refusal[] = []
  private info!: DeviceInfo
  constructor(readonly page: Page, readonly adapter: string) {}

  async init(): Promise<this> {
    this.info = await this.call<DeviceInfo>('device')
    return this
  }

  async call<T>(method: string, ...args: unknown[]): Promise<T> {
    const r = await this.page.evaluate(([m, a]) => (window as unknown as { kpRpc(m: string, a: unknown[]): Promise<{ ok?: unknown; error?: { name: string; message: string } }> }).kpRpc(m as string, a as unknown[]), [method, args] as const)
    if (r.error) throw Object.assign(new Error(r.error.message), { name: r.error.name })
    return r.ok as T
  }

  device(): DeviceInfo { return this.info }

  async loadModule(image: ImageToLoad, sourceName?: string): Promise<BackendModule> {
    const r = await this.call<{ id: number; refused: Refusal[] }>('loadModule', image.kind, image.arch, Buffer.from(image.bytes).toString('base64'), sourceName)
    this.refused = r.refused
    const call = this.call.bind(this)
    return {
      async getFunction(name: string) { return { name, id: await call<number>('getFunction', r.id, name) } as BackendFunction },
      async getGlobal(name: string) {
        const g = await call<{ address: string; size: number }>('getGlobal', r.id, name)
        return { address: BigInt(g.address), size: g.size }
      },
      async unload() { await call('unload', r.id) },
    }
  }

  async alloc(n: number): Promise<bigint> { return BigInt(await this.call<string>('alloc', n)) }
  async free(a: bigint): Promise<void> { await this.call('free', String(a)) }
  async copyToDevice(dst: bigint, src: Uint8Array, s?: BackendStream | null): Promise<void> {
    await this.call('copyToDevice', String(dst), Buffer.from(src.buffer, src.byteOffset, src.byteLength).toString('base64'), s?.id ?? null)
  }
  async copyFromDevice(dst: Uint8Array, src: bigint, s?: BackendStream | null): Promise<void> {
    const b = Buffer.from(await this.call<string>('copyFromDevice', String(src), dst.length, s?.id ?? null), 'base64')
    dst.set(b)
  }
  async memset(dst: bigint, byte: number, n: number, s?: BackendStream | null): Promise<void> { await this.call('memset', String(dst), byte, n, s?.id ?? null) }
  async createStream(): Promise<BackendStream> { return { id: await this.call<number>('createStream') } }
  async destroyStream(s: BackendStream): Promise<void> { await this.call('destroyStream', s.id) }
  async synchronize(s?: BackendStream | null): Promise<void> { await this.call('synchronize', s?.id ?? null) }
  async launch(fn: BackendFunction, config: LaunchConfig, params: KernelParams): Promise<void> {
    const { stream, ...rest } = config
    await this.call('launch', (fn as BackendFunction & { id: number }).id, { ...rest, stream: stream?.id ?? null }, Buffer.from(params.bytes).toString('base64'), [...params.offsets], [...params.sizes])
  }
  /** Device printf's text since the last call (what the page's backend printed at its synchronizations). */
  async printed(): Promise<string> { return this.call<string>('printed') }
  async dispose(): Promise<void> {}
}

/** One chromium with a WebGPU adapter and the RPC page; `open()` gives a fresh page (a fresh device). */
export interface WebGpuPages {
  /** `partial`: the backend loads what translates and lists the rest (PageBackend.refused). */
  open(opts?: { partial?: boolean }): Promise<PageBackend>
  close(): Promise<void>
}

/** Starts chromium (SwiftShader WebGPU) and serves the RPC page. */
export async function startWebGpuPages(): Promise<WebGpuPages> {
  const js = await bundleForBrowser(join(repoRoot, 'test', 'fixtures', 'webgpu', 'pages', 'rpc.ts'))
  const server: PageServer = await servePage({ '/': ['text/html', modulePage], '/page.js': ['text/javascript', js] })
  const browser: Browser = await launchChromium({ webgpu: true })
  return {
    async open(opts = {}) {
      const page = await browser.newPage()
      const errors: string[] = []
      page.on('pageerror', (e) => errors.push(String(e)))
      await page.goto(opts.partial ? `${server.url}?partial` : server.url)
      await page.waitForFunction(() => (window as unknown as { __kpResult?: unknown }).__kpResult !== undefined, undefined, { timeout: 60_000 })
      const r = await page.evaluate(() => (window as unknown as { __kpResult: { ready?: boolean; adapter?: string; error?: string } }).__kpResult)
      if (!r.ready) throw new Error(`the WebGPU page did not start: ${r.error ?? errors.join('; ')}`)
      return new PageBackend(page, r.adapter ?? '').init()
    },
    async close() {
      await browser.close()
      await server.close()
    },
  }
}

/** A uvu suite whose tests share one page of a chromium of their own (`ctx.gpu`, partial loads), opened before
 *  the first test and closed, with chromium, after the last. */
export async function webgpuPageSuite(title: string): Promise<Test<{ gpu?: PageBackend }>> {
  const pages = await startWebGpuPages()
  const s = suite<{ gpu?: PageBackend }>(title, {})
  s.before(async (ctx) => { ctx.gpu = await pages.open({ partial: true }) })
  s.after(async (ctx) => {
    await ctx.gpu?.page.close()
    await pages.close()
  })
  return s
}
