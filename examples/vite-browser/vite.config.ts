// Vite app: the .cu import becomes a loader stub plus dist/assets/mandelbrot-<hash>.offload, fetched by the page.
// The stubs' backend is 'auto' (the plugin's `backend` option): WebGPU where the page has an adapter, else the
// emulator; the page's `?backend=` overrides it per load. WebGPU needs a secure context: HTTPS, or the loopback
// address `vite preview` listens on here. The page is served cross-origin isolated (COOP/COEP), so it has
// SharedArrayBuffer and the emulator runs the kernel's blocks on Web Workers (Vite bundles the emulator's
// worker script); without these headers it runs them on the page's thread and `mod.backend.reason` says why.
// A production server must send the same two headers; the line under the result on the page says where the
// launches ran.
import { defineConfig } from 'vite'
import cuda from 'unplugin-cuda/vite'

const crossOriginIsolated = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' }

export default defineConfig({
  // cacheDir: one compile cache for several projects (CI sets KERNELPACK_CACHE_DIR); default node_modules/.cache/kernelpack
  plugins: [cuda({ arch: '80', cacheDir: process.env.KERNELPACK_CACHE_DIR })],
  build: { target: 'es2022' },
  server: { headers: crossOriginIsolated },
  preview: { host: '127.0.0.1', headers: crossOriginIsolated },
})
