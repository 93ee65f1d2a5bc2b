// Runs saxpy.cu's kernel in the page: on the GPU through WebGPU where the browser has it, else on
// kernelpack's emulator.
import { module, saxpy } from './saxpy.cu'

const n = 1 << 16
const dx = await module.upload(Float32Array.from({ length: n }, (_, i) => i))
const dy = await module.upload(new Float32Array(n).fill(1))
await saxpy({ grid: Math.ceil(n / 256), block: 256 }, n, 2, dx, dy)
const out = await dy.download(new Float32Array(n))
const { backend } = await module.load()
document.querySelector('#result')!.textContent = `y[10] = ${out[10]} on ${backend.name} (${backend.reason})`
