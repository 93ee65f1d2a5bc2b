// Runs mandelbrot.cu in the browser, checks every pixel against the same loop in JS, and draws the iteration
// counts on the canvas. `?backend=` (the select on the page) picks where the kernel runs: `auto` (WebGPU where
// the page has an adapter and the kernel translates to WGSL, else kernelpack's PTX emulator), `webgpu` (the
// page's GPU; an error without an adapter) or `emulator`. The line under the result says which ran and why.
import { mandelbrot, module } from './mandelbrot.cu'

const backends = ['auto', 'webgpu', 'emulator'] as const
type Backend = (typeof backends)[number]

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

/** The backend named by `?backend=`; `auto` when none. */
function requestedBackend(): Backend {
  const b = new URLSearchParams(location.search).get('backend') ?? 'auto'
  if (!(backends as readonly string[]).includes(b)) throw new Error(`?backend=${b}: use one of ${backends.join(', ')}`)
  return b as Backend
}

async function run(backend: Backend): Promise<string> {
  // the first load decides the backend of the module (launches and buffers use it)
  const loaded = await module.load({ backend })
  document.getElementById('backend')!.textContent = `${loaded.backend.name}: ${loaded.backend.reason}`
  const dIters = await module.alloc(width * height)
  await mandelbrot({ grid: [width / 16, height / 16], block: [16, 16] }, dIters, width, height, maxIter)
  const iters = await dIters.download(new Uint8Array(width * height))

  const canvas = document.getElementById('canvas') as HTMLCanvasElement
  const ctx = canvas.getContext('2d')!
  const image = ctx.createImageData(width, height)
  iters.forEach((n, i) => image.data.set([...colour(n), 255], i * 4))
  ctx.putImageData(image, 0, 0)

  const want = referenceIters()
  const wrong = iters.findIndex((n, i) => n !== want[i])
  if (wrong >= 0) throw new Error(`mandelbrot: wrong count at pixel ${wrong}: ${iters[wrong]} (expected ${want[wrong]})`)
  const inside = iters.reduce((s, n) => s + (n >= maxIter ? 1 : 0), 0)
  return `mandelbrot: ${width}x${height} pixels OK on ${loaded.backend.name}, ${inside} inside the set`
}

const select = document.getElementById('backend-select') as HTMLSelectElement
const result = document.getElementById('result')!
// a new backend is a new page load: the module keeps the backend it loaded with
select.addEventListener('change', () => { location.search = `?backend=${select.value}` })
Promise.resolve().then(() => {
  const backend = requestedBackend()
  select.value = backend
  return run(backend)
}).then(
  (text) => { result.textContent = text; result.dataset.status = 'ok'; console.log(text) },
  (err: Error) => { result.textContent = err.message; result.dataset.status = 'error'; console.error(err) },
)
