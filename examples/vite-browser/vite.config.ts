// Vite app: the .cu import becomes a loader stub plus dist/assets/mandelbrot-<hash>.offload, fetched by the page.
import { defineConfig } from 'vite'
import cuda from 'unplugin-cuda/vite'

export default defineConfig({
  // cacheDir: one compile cache for several projects (CI sets KERNELPACK_CACHE_DIR); default node_modules/.cache/kernelpack
  plugins: [cuda({ arch: '80', cacheDir: process.env.KERNELPACK_CACHE_DIR })],
  build: { target: 'es2022' },
  preview: { host: '127.0.0.1' },
})
