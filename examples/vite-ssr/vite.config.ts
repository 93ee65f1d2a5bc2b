// Vite SSR build of main.ts for Node: dist/main.js plus dist/assets/matmul-<hash>.offload.
import { defineConfig } from 'vite'
import cuda from 'unplugin-cuda/vite'

export default defineConfig({
  // cacheDir: one compile cache for several projects (CI sets KERNELPACK_CACHE_DIR); default node_modules/.cache/kernelpack
  plugins: [cuda({ arch: '80', cacheDir: process.env.KERNELPACK_CACHE_DIR })],
  ssr: { external: true },
  build: { ssr: 'main.ts', outDir: 'dist', target: 'node20' },
})
