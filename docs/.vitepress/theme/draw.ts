// Canvas drawing for the gallery: pictures (grey or coloured by a palette), line plots and bar charts.
// Small on purpose: each example shows its output as a person wants to see it, with no chart library.

export type Rgb = readonly [number, number, number]

/** A dark-blue → orange → pale-yellow ramp for t in [0, 1]. */
export function heat(t: number): Rgb {
  const u = Math.min(1, Math.max(0, t))
  return [Math.round(255 * Math.min(1, 1.8 * u)), Math.round(255 * u * u), Math.round(255 * (0.35 + 0.65 * Math.max(0, 1 - 3 * u) + 0.8 * Math.max(0, u - 0.75)))]
}

/** Sizes the canvas to `width`×`height` pixels, shown `scale` times as large (pixelated, see style.css). */
function context(canvas: HTMLCanvasElement, width: number, height: number, scale = 1): CanvasRenderingContext2D {
  canvas.width = width
  canvas.height = height
  canvas.style.width = `${Math.round(width * scale)}px`
  const ctx = canvas.getContext('2d')
  if (!ctx) throw new Error('this browser gives the canvas no 2D context')
  return ctx
}

/** One pixel per value: `colour(value)` gives its RGB. */
export function drawPixels(canvas: HTMLCanvasElement, values: ArrayLike<number>, width: number, height: number, colour: (v: number) => Rgb): void {
  // small pictures at a whole multiple of their size, up to about 512 pixels wide
  const ctx = context(canvas, width, height, Math.max(1, Math.floor(512 / width)))
  const image = ctx.createImageData(width, height)
  for (let i = 0; i < width * height; i++) {
    const [r, g, b] = colour(values[i]!)
    image.data[4 * i] = r
    image.data[4 * i + 1] = g
    image.data[4 * i + 2] = b
    image.data[4 * i + 3] = 255
  }
  ctx.putImageData(image, 0, 0)
}

/** Several grey images side by side, each with a label above it. */
export function drawGreyImages(canvas: HTMLCanvasElement, images: ReadonlyArray<{ label: string; pixels: ArrayLike<number> }>, width: number, height: number): void {
  const gap = 12, top = 18
  const ctx = context(canvas, images.length * width + (images.length - 1) * gap, height + top, 1.5)
  ctx.fillStyle = '#fff'
  ctx.fillRect(0, 0, canvas.width, canvas.height)
  images.forEach(({ label, pixels }, k) => {
    const image = ctx.createImageData(width, height)
    for (let i = 0; i < width * height; i++) {
      const v = pixels[i]!
      image.data.set([v, v, v, 255], 4 * i)
    }
    const x = k * (width + gap)
    ctx.putImageData(image, x, top)
    ctx.fillStyle = '#333'
    ctx.font = '12px system-ui, sans-serif'
    ctx.fillText(label, x, 13)
  })
}

export interface Series { label: string; values: ArrayLike<number>; colour: string }

const plotSize = { width: 640, height: 260, left: 52, right: 12, top: 24, bottom: 24 }

function frame(ctx: CanvasRenderingContext2D, lo: number, hi: number, xLabel: string): (v: number) => number {
  const { width, height, left, right, top, bottom } = plotSize
  ctx.fillStyle = '#fff'
  ctx.fillRect(0, 0, width, height)
  ctx.strokeStyle = '#bbb'
  ctx.strokeRect(left, top, width - left - right, height - top - bottom)
  ctx.fillStyle = '#555'
  ctx.font = '11px system-ui, sans-serif'
  const y = (v: number) => top + (height - top - bottom) * (1 - (v - lo) / (hi - lo || 1))
  for (const v of [lo, (lo + hi) / 2, hi]) ctx.fillText(formatTick(v), 4, y(v) + 4)
  ctx.fillText(xLabel, left, height - 6)
  return y
}

function formatTick(v: number): string {
  return Math.abs(v) >= 1e4 ? v.toExponential(1) : String(Math.round(v * 100) / 100)
}

function range(series: ReadonlyArray<Series>): [number, number] {
  let lo = Infinity, hi = -Infinity
  for (const s of series) for (let i = 0; i < s.values.length; i++) { const v = s.values[i]!; if (v < lo) lo = v; if (v > hi) hi = v }
  return [Math.min(lo, 0), hi]
}

/** Line plot of each series over its index, with a legend. */
export function drawLines(canvas: HTMLCanvasElement, series: ReadonlyArray<Series>, xLabel: string): void {
  const { width, height, left, right, top } = plotSize
  const ctx = context(canvas, width, height)
  const [lo, hi] = range(series)
  const y = frame(ctx, lo, hi, xLabel)
  let legend = left
  for (const s of series) {
    const n = s.values.length
    const x = (i: number) => left + ((width - left - right) * i) / Math.max(1, n - 1)
    ctx.strokeStyle = s.colour
    ctx.lineWidth = 1.5
    ctx.beginPath()
    // at most one point per pixel column: the plot stays cheap for long arrays
    const stride = Math.max(1, Math.floor(n / (width - left - right)))
    for (let i = 0; i < n; i += stride) (i === 0 ? ctx.moveTo : ctx.lineTo).call(ctx, x(i), y(s.values[i]!))
    ctx.stroke()
    ctx.fillStyle = s.colour
    ctx.fillRect(legend, top - 14, 10, 10)
    ctx.fillStyle = '#333'
    ctx.fillText(s.label, legend + 14, top - 5)
    legend += 24 + ctx.measureText(s.label).width
  }
}

/** Bar chart of the values, one bar per index. */
export function drawBars(canvas: HTMLCanvasElement, values: ArrayLike<number>, colour: string, xLabel: string): void {
  const { width, height, left, right } = plotSize
  const ctx = context(canvas, width, height)
  const [lo, hi] = range([{ label: '', values, colour }])
  const y = frame(ctx, lo, hi, xLabel)
  const w = (width - left - right) / values.length
  ctx.fillStyle = colour
  for (let i = 0; i < values.length; i++) {
    const top = y(Math.max(0, values[i]!)), base = y(Math.min(0, values[i]!))
    ctx.fillRect(left + i * w, top, Math.max(1, w - (w > 3 ? 1 : 0)), Math.max(1, base - top))
  }
}
