// Writes examples/images/scene.png, the picture the convolution example filters: a 192×128 grey landscape
// drawn from a few formulas here (sky, sun, ridges, a lake with ripples, a checkerboard sign), so the
// site ships no photograph and the file can be made again byte for byte: `node scripts/make-image.mjs`.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PNG } from 'pngjs'

const width = 192, height = 128
const horizon = 84

function ridge(x, height0, amp, f1, f2, phase) {
  return height0 + amp * (0.6 * Math.sin(x * f1 + phase) + 0.4 * Math.sin(x * f2 + 2 * phase))
}

function grey(x, y) {
  // checkerboard sign on a post, sharp edges for the filters to find
  if (x >= 150 && x < 178 && y >= 56 && y < 76) return ((x - 150) >> 2) + ((y - 56) >> 2) & 1 ? 235 : 30
  if (x >= 162 && x < 166 && y >= 76 && y < horizon + 20) return 40
  if (y < horizon) {
    const sun = Math.hypot(x - 48, y - 30)
    if (sun < 13) return 250
    const far = ridge(x, 58, 9, 0.071, 0.19, 0.4), near = ridge(x, 70, 7, 0.043, 0.13, 1.7)
    if (y > near) return 70 + ((x * 5 + y * 3) % 11)
    if (y > far) return 120 + ((x + y) % 7)
    return Math.round(200 - 0.9 * y + Math.max(0, 30 - sun) * 1.5)
  }
  // the lake: darker, with ripples that get closer towards the horizon
  const depth = y - horizon
  const ripple = Math.sin(x * 0.35 + 40 / (depth + 2)) * 18 * Math.exp(-depth / 30)
  return Math.round(95 + depth * 0.8 + ripple)
}

const png = new PNG({ width, height, colorType: 0, inputColorType: 0, bitDepth: 8, inputHasAlpha: false })
const data = Buffer.alloc(width * height)
for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data[y * width + x] = Math.max(0, Math.min(255, grey(x, y)))
png.data = data
const out = join(import.meta.dirname, '..', 'examples', 'images', 'scene.png')
writeFileSync(out, PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false }))
console.log(`wrote ${out} (${width}×${height}, 8-bit grey)`)
