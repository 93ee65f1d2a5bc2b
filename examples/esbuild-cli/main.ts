#!/usr/bin/env node
// collatz [COUNT]: the longest Collatz chain below COUNT, computed by collatz.cu's kernel (GPU or emulator)
// and checked against the same loop in JS.
import { collatz, module } from './collatz.cu'

const count = Number(process.argv[2] ?? 1000)
if (!Number.isInteger(count) || count < 1 || count > 1e6) {
  console.error('usage: collatz [COUNT]   (1 ≤ COUNT ≤ 1000000, default 1000)')
  process.exit(2)
}

const dSteps = await module.alloc(count * 4)
await collatz({ grid: Math.ceil(count / 128), block: 128 }, dSteps, count)
const steps = await dSteps.download(new Uint32Array(count))

const loaded = await module.load()
console.log(`backend: ${loaded.backend.name} (${loaded.backend.reason})`)
console.log(`images: ${module.images.map((i) => i.target).join(', ')}; ran ${loaded.image.kind} ${loaded.image.arch}`)
for (let i = 0; i < count; i++) {
  let n = i + 1
  let s = 0
  while (n !== 1) (n = n % 2 ? 3 * n + 1 : n / 2), s++
  if (steps[i] !== s) {
    console.error(`collatz: wrong step count for ${i + 1}: ${steps[i]} (expected ${s})`)
    process.exit(1)
  }
}
let best = 0
for (let i = 1; i < count; i++) if (steps[i]! > steps[best]!) best = i
console.log(`collatz: ${count} start values OK, longest chain starts at ${best + 1} (${steps[best]} steps)`)
