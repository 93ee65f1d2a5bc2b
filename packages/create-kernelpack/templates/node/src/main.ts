// Runs saxpy.cu's kernel: on the GPU where an NVIDIA driver answers, else on kernelpack's emulator.
import { module, saxpy } from './saxpy.cu'

const n = 1 << 16
const x = Float32Array.from({ length: n }, (_, i) => i)
const y = new Float32Array(n).fill(1)
const dx = await module.upload(x)
const dy = await module.upload(y)
await saxpy({ grid: Math.ceil(n / 256), block: 256 }, n, 2, dx, dy)
const out = await dy.download(new Float32Array(n))
const { backend } = await module.load()
console.log(`saxpy on ${backend.name}: y[10] = ${out[10]} (${backend.reason})`)
