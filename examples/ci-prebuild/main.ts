// Loads the prebuilt kernels shipped in prebuilds/ (no compiler needed at run time): @kernelpack/runtime
// picks the image for the GPU (a cubin for its architecture, else the PTX, JIT-compiled), or runs the PTX
// on the emulator without one. Checks the result against JS.
import { readFileSync } from 'node:fs'
import { ImageKind, imageKindName, readOffloadBinaries } from '@kernelpack/offload'
import { loadModule } from '@kernelpack/runtime'

const kindName = (k: number) => (k === ImageKind.PTX ? 'ptx' : k === ImageKind.Cubin ? 'cubin' : imageKindName(k))
const offloadUrl = new URL('./prebuilds/sum-squares.offload', import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('./prebuilds/sum-squares.manifest.json', import.meta.url), 'utf8'))
const images = readOffloadBinaries(new Uint8Array(readFileSync(offloadUrl))).flatMap((b) => b.entries.map((e) => `${kindName(e.imageKind)} ${e.strings.get('arch')}`))

const mod = await loadModule(offloadUrl, manifest, { backend: 'auto' })
const n = 100_000
const x = Int32Array.from({ length: n }, (_, i) => (i % 2001) - 1000)
const dx = await mod.upload(x)
const dTotal = await mod.upload(new BigUint64Array(1))
await mod.kernel('sumSquares').launch({ grid: Math.ceil(n / 256), block: 256 }, dx, n, dTotal)
const [total] = await dTotal.download(new BigUint64Array(1))

console.log(`backend: ${mod.backend.name} (${mod.backend.reason})`)
console.log(`images: ${images.join(', ')}; ran ${mod.image.kind} ${mod.image.arch} (${mod.image.reason})`)
const expected = x.reduce((s, v) => s + BigInt(v) * BigInt(v), 0n)
if (total !== expected) {
  console.error(`sumSquares: wrong total ${total} (expected ${expected})`)
  process.exit(1)
}
console.log(`sumSquares: ${n} values OK, total = ${total}`)
