// A consumer of the built library: imports it by its package name (Node resolves that to dist/index.js),
// so this checks what the package ships, kernels included.
import { backend, windowSum } from '@kernelpack-example/rollup-node-lib'

const n = 5000
const radius = 3
const data = Int32Array.from({ length: n }, (_, i) => ((i * 37) % 101) - 50)
const out = await windowSum(data, radius)

const b = await backend()
console.log(`backend: ${b.name} (${b.reason})`)
for (let i = 0; i < n; i++) {
  let sum = 0
  for (let j = Math.max(i - radius, 0); j <= Math.min(i + radius, n - 1); j++) sum += data[j]!
  if (out[i] !== sum) {
    console.error(`windowSum: wrong sum at ${i}: ${out[i]} (expected ${sum})`)
    process.exit(1)
  }
}
console.log(`windowSum: ${n} sums OK, checksum = ${out.reduce((s, v, i) => s + v * (i % 13), 0)}`)
