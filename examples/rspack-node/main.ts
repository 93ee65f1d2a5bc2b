// Runs histogram.cu's kernel (on the GPU when a driver answers, else on the emulator) and checks it against JS.
import { histogram, module } from './histogram.cu'

const n = 10_000
const bins = 16
// A fixed pseudo-random sequence (32-bit LCG, high bits), so every run checks the same counts.
const data = new Uint32Array(n)
let s = 12345
for (let i = 0; i < n; i++) {
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0
  data[i] = s >>> 8
}

const dData = await module.upload(data)
const dCounts = await module.upload(new Uint32Array(bins))
await histogram({ grid: Math.ceil(n / 128), block: 128 }, dData, n, dCounts, bins)
const counts = await dCounts.download(new Uint32Array(bins))

const expected = new Uint32Array(bins)
for (const v of data) expected[v % bins]!++
const loaded = await module.load()
console.log(`backend: ${loaded.backend.name} (${loaded.backend.reason})`)
console.log(`images: ${module.images.map((i) => i.target).join(', ')}; ran ${loaded.image.kind} ${loaded.image.arch}`)
if (counts.some((c, i) => c !== expected[i])) {
  console.error(`histogram: wrong counts ${counts.join(' ')} (expected ${expected.join(' ')})`)
  process.exit(1)
}
console.log(`histogram: ${n} values in ${bins} bins OK, counts = ${counts.join(' ')}`)
