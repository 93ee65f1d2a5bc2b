// Vitest runs the Vite plugin, so tests import .cu files as an app does. The options live in
// kernelpack.config.json, which the Node hook (`pnpm test:node`) reads too: one place for both runners.
import { readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'
import cuda from 'unplugin-cuda/vite'
import type { Options } from 'unplugin-cuda'

const options = JSON.parse(readFileSync(new URL('./kernelpack.config.json', import.meta.url), 'utf8')) as Options

export default defineConfig({
  plugins: [cuda(options)],
  test: { include: ['stencil.test.ts'] },
})
