// Runs mandelbrot.cu in the browser (kernelpack's PTX emulator; no GPU API in browsers), checks every
// pixel against the same loop in JS, and draws the iteration counts on the canvas.
import { mandelbrot, module } from './mandelbrot.cu'

const width = 256
const height = 256
const maxIter = 64

/** The kernel's loop in JS (int32 arithmetic, as the .cu). */
function referenceIters(): Uint8Array {
  const out = new Uint8Array(width * height)
  const one = 1 << 12
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      const cx = ((col * 3 * one / width) | 0) - 5 * one / 2
      const cy = ((row * 3 * one / height) | 0) - 3 * one / 2
      let x = 0, y = 0, n = 0
      while (n < maxIter) {
        const x2 = Math.imul(x, x) >> 12, y2 = Math.imul(y, y) >> 12
        if (x2 + y2 > 4 * one) break
        y = (Math.imul(2 * x, y) >> 12) + cy
        x = x2 - y2 + cx
        n++
      }
      out[row * width + col] = n
    }
  }
  return out
}

/** Iteration count → colour: black inside the set, a blue-to-gold ramp outside. */
function colour(n: number): [number, number, number] {
  if (n >= maxIter) return [0, 0, 0]
  const t = n / maxIter
  return [Math.round(255 * Math.min(1, 2.5 * t)), Math.round(255 * Math.sqrt(t)), Math.round(255 * (1 - t) * 0.8 + 40 * t)]
}

async function run(): Promise<string> {
  const dIters = await module.alloc(width * height)
  await mandelbrot({ grid: [width / 16, height / 16], block: [16, 16] }, dIters, width, height, maxIter)
  const iters = await dIters.download(new Uint8Array(width * height))
  const loaded = await module.load()

  const canvas = document.getElementById('canvas') as HTMLCanvasElement
  const ctx = canvas.getContext('2d')!
  const image = ctx.createImageData(width, height)
  iters.forEach((n, i) => image.data.set([...colour(n), 255], i * 4))
  ctx.putImageData(image, 0, 0)

  const want = referenceIters()
  const wrong = iters.findIndex((n, i) => n !== want[i])
  if (wrong >= 0) throw new Error(`mandelbrot: wrong count at pixel ${wrong}: ${iters[wrong]} (expected ${want[wrong]})`)
  const inside = iters.reduce((s, n) => s + (n >= maxIter ? 1 : 0), 0)
  document.getElementById('backend')!.textContent = loaded.backend.reason
  return `mandelbrot: ${width}x${height} pixels OK on ${loaded.backend.name}, ${inside} inside the set`
}

const result = document.getElementById('result')!
run().then(
  (text) => { result.textContent = text; result.dataset.status = 'ok'; console.log(text) },
  (err: Error) => { result.textContent = err.message; result.dataset.status = 'error'; console.error(err) },
)
