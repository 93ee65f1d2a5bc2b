// The site's VitePress config as a function, so that test/docs/site.test.ts can check what it sets (dead
// links fail the build) and build a tiny site with it. The .cu files of the gallery are compiled by
// unplugin-cuda itself, as in any Vite app: PTX only (the browser backends run PTX), with line info so the
// sanitizer page names .cu lines.
import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { Plugin } from 'vite'
import { defineConfig, type DefaultTheme, type UserConfig } from 'vitepress'
import cuda from 'unplugin-cuda/vite'

/** COOP/COEP: the page gets SharedArrayBuffer, and the emulator runs blocks on Web Workers. A host that
 *  serves the built site should send the same two headers (`vitepress preview`'s server cannot: there the
 *  pages say they are not isolated). */
export const crossOriginIsolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } as const

/** The dev server's responses with the COOP/COEP headers. Vite's `server.headers` do not reach the pages:
 *  VitePress answers page requests with a middleware of its own, after this one. */
function crossOriginIsolated(): Plugin {
  return {
    name: 'kernelpack-docs:cross-origin-isolation',
    configureServer(server) {
      server.middlewares.use((_req, res, next) => {
        for (const [name, value] of Object.entries(crossOriginIsolation)) res.setHeader(name, value)
        next()
      })
    },
  }
}

const repository = 'https://github.com/kernelpack/kernelpack'

export const guide: DefaultTheme.SidebarItem[] = [
  {
    text: 'Introduction',
    items: [
      { text: 'Getting started', link: '/guide/getting-started' },
      { text: 'Example apps', link: '/guide/example-apps' },
    ],
  },
  {
    text: 'Bundlers',
    items: [
      { text: 'Vite', link: '/guide/vite' },
      { text: 'Rollup', link: '/guide/rollup' },
      { text: 'esbuild', link: '/guide/esbuild' },
      { text: 'webpack', link: '/guide/webpack' },
      { text: 'Rspack', link: '/guide/rspack' },
      { text: 'Plugin options', link: '/guide/options' },
    ],
  },
  {
    text: 'Without a bundler',
    items: [
      { text: 'The Node import hook', link: '/guide/node' },
      { text: 'Testing kernels', link: '/guide/testing' },
    ],
  },
  {
    text: 'Running',
    items: [
      { text: 'Backends and auto', link: '/guide/backends' },
      { text: 'Finding bugs without a GPU', link: '/guide/sanitizer' },
      { text: 'Troubleshooting', link: '/guide/troubleshooting' },
    ],
  },
  {
    text: 'Shipping',
    items: [
      { text: 'Native packages and CI', link: '/guide/native-and-ci' },
      { text: 'The kernelpack command', link: '/guide/cli' },
    ],
  },
  {
    text: 'Project',
    items: [
      { text: 'Packages', link: '/guide/packages' },
      { text: 'Development', link: '/guide/development' },
    ],
  },
]

export const examples: DefaultTheme.SidebarItem[] = [
  {
    text: 'Gallery',
    items: [
      { text: 'Overview', link: '/examples/' },
      { text: 'saxpy', link: '/examples/saxpy' },
      { text: 'Mandelbrot', link: '/examples/mandelbrot' },
      { text: 'Image convolution', link: '/examples/convolution' },
      { text: 'Histogram (atomics)', link: '/examples/histogram' },
      { text: 'Reduction (shared memory)', link: '/examples/reduction' },
      { text: 'Tiled matrix multiply', link: '/examples/matmul' },
      { text: 'Warp-shuffle scan', link: '/examples/scan' },
      { text: 'The sanitizer', link: '/examples/sanitizer' },
    ],
  },
]

/** The generated API pages (scripts/api.mjs writes them before VitePress starts). */
function apiSidebar(srcDir: string): DefaultTheme.SidebarItem[] {
  const dir = join(srcDir, 'reference', 'api')
  const pages = existsSync(dir)
    ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md') && f !== 'index.md').sort()
    : []
  return [
    {
      text: 'API reference',
      items: [
        { text: 'Overview', link: '/reference/' },
        ...pages.map((f) => {
          const path = relative(srcDir, join(dir, f)).split('\\').join('/').replace(/\.md$/, '')
          const name = f.replace(/\.md$/, '').split('\\').join('/')
          return { text: name === 'runtime' ? '@kernelpack/runtime' : name, link: `/${path}` }
        }),
      ],
    },
  ]
}

export interface SiteOptions {
  /** The folder of the pages. @default the folder above .vitepress */
  srcDir?: string
}

export function siteConfig(options: SiteOptions = {}): UserConfig<DefaultTheme.Config> {
  const srcDir = options.srcDir ?? join(import.meta.dirname, '..')
  return defineConfig({
    title: 'kernelpack',
    description: 'Import CUDA kernels from JavaScript: build them with your bundler, run them on the GPU, WebGPU or a CPU emulator.',
    lang: 'en-US',
    srcDir,
    // the TypeDoc entry files and the scripts are not pages
    srcExclude: ['reference/entries/**', 'scripts/**'],
    // a link to a page that does not exist fails the build (VitePress's default; test/docs/site.test.ts checks it stays so)
    ignoreDeadLinks: false,
    lastUpdated: false,
    head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/logo.svg' }]],
    themeConfig: {
      logo: '/logo.svg',
      nav: [
        { text: 'Guide', link: '/guide/getting-started' },
        { text: 'Examples', link: '/examples/' },
        { text: 'API', link: '/reference/' },
      ],
      sidebar: {
        '/guide/': guide,
        '/examples/': examples,
        '/reference/': apiSidebar(srcDir),
      },
      socialLinks: [{ icon: 'github', link: repository }],
      search: { provider: 'local' },
      outline: [2, 3],
    },
    vite: {
      plugins: [cuda({ arch: '80-virtual', lineinfo: true, dtsScan: [], cacheDir: process.env.KERNELPACK_CACHE_DIR }), crossOriginIsolated()],
      build: { target: 'es2022', chunkSizeWarningLimit: 2048 },
    },
  })
}
