// Runs saxpy.cu's kernel (on the GPU when a driver answers, else on the emulator) and checks it against JS.
import { saxpy, module } from './saxpy.cu'

const n = 4096
const a = 2.5
const x = Float32Array.from({ length: n }, (_, i) => i)
const y = Float32Array.from({ length: n }, (_, i) => n - i)

const dx = await module.upload(x)
const dy = await module.upload(y)
await saxpy({ grid: Math.ceil(n / 256), block: 256 }, n, a, dx, dy)
const out = await dy.download(new Float32Array(n))

const loaded = await module.load()
console.log(`backend: ${loaded.backend.name} (${loaded.backend.reason})`)
console.log(`images: ${module.images.map((i) => i.target).join(', ')}; ran ${loaded.image.kind} ${loaded.image.arch}`)
// Every value here is exact in float32, so the GPU's fused multiply-add and JS agree bit for bit.
const wrong = out.findIndex((v, i) => v !== a * x[i]! + y[i]!)
if (wrong >= 0) {
  console.error(`saxpy: wrong result at ${wrong}: ${out[wrong]} (expected ${a * x[wrong]! + y[wrong]!})`)
  process.exit(1)
}
console.log(`saxpy: ${n} elements OK, sum = ${out.reduce((s, v) => s + v, 0)}`)
