import { defineConfig } from 'vitest/config'
import cuda from 'unplugin-cuda/vite'

export default defineConfig({
  // arch: the GPUs to build for; its PTX target also runs on WebGPU and the emulator
  plugins: [cuda({ arch: '80' })],
})
