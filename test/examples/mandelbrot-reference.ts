// The image examples/vite-browser should draw, computed here without the kernel: the escape-time loop in
// 20.12 fixed point (as mandelbrot.cu) and the page's colour ramp. `node --import tsx
// test/examples/mandelbrot-reference.ts` rewrites test/fixtures/examples/vite-browser-mandelbrot.png.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PNG } from 'pngjs'
import { fixturesDir } from '../helpers/tools.js'

export const referencePng = join(fixturesDir, 'examples', 'vite-browser-mandelbrot.png')
export const size = 256
const maxIter = 64

function iterations(col: number, row: number): number {
  const one = 4096
  const cx = Math.trunc((col * 3 * one) / size) - 2.5 * one
  const cy = Math.trunc((row * 3 * one) / size) - 1.5 * one
  let x = 0
  let y = 0
  let n = 0
  for (; n < maxIter; n++) {
    const x2 = Math.floor((x * x) / one)
    const y2 = Math.floor((y * y) / one)
    if (x2 + y2 > 4 * one) break
    y = Math.floor((2 * x * y) / one) + cy
    x = x2 - y2 + cx
  }
  return n
}

/** RGBA pixels, row-major, `size` x `size`. */
export function mandelbrotRgba(): Uint8Array {
  const out = new Uint8Array(size * size * 4)
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      const n = iterations(col, row)
      const t = n / maxIter
      const rgb = n >= maxIter ? [0, 0, 0] : [Math.round(255 * Math.min(1, 2.5 * t)), Math.round(255 * Math.sqrt(t)), Math.round(255 * (1 - t) * 0.8 + 40 * t)]
      out.set([...rgb, 255], (row * size + col) * 4)
    }
  }
  return out
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const png = new PNG({ width: size, height: size })
  png.data = Buffer.from(mandelbrotRgba())
  writeFileSync(referencePng, PNG.sync.write(png))
  console.log(`wrote ${referencePng}`)
}
