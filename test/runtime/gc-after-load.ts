// Child script of cuda-lifetime.test.ts: opens the cuda backend on the libcuda at argv[2], lets the garbage
// collector run (node --expose-gc), then calls the driver. Prints `ok <address>` when the calls still work.
import { createCudaBackend } from '../../packages/runtime/src/cuda/cuda-backend.js'

const backend = await createCudaBackend({ libcudaPath: process.argv[2] })
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')
for (let i = 0; i < 5; i++) {
  gc()
  await new Promise((r) => setTimeout(r, 5))
}
const p = await backend.alloc(16)
await backend.free(p)
await backend.dispose()
console.log(`ok ${p}`)
