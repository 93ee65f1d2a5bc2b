// The convolution page: a 5×5 filter over examples/images/scene.png (made by scripts/make-image.mjs), the
// weights written to the kernel's __constant__ array with module.global.
import type { Example } from '../../.vitepress/theme/example.js'
import { loadsFrom, param } from '../../.vitepress/theme/example.js'
import { drawGreyImages } from '../../.vitepress/theme/draw.js'
import { convolveReference, filters, firstMismatch, type Filter } from './reference.js'
import { convolve, module } from './convolve.cu'
import imageUrl from '../images/scene.png?url'

interface Grey { pixels: Uint8Array; width: number; height: number }
let image: Promise<Grey> | undefined

/** The picture's grey levels (its red channel: the PNG is grey, so R = G = B). */
function loadImage(): Promise<Grey> {
  image ??= (async () => {
    const res = await fetch(imageUrl)
    if (!res.ok) throw new Error(`${imageUrl}: HTTP ${res.status}`)
    const bitmap = await createImageBitmap(await res.blob(), { colorSpaceConversion: 'none', premultiplyAlpha: 'none' })
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
    const ctx = canvas.getContext('2d')!
    ctx.drawImage(bitmap, 0, 0)
    const rgba = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data
    const pixels = new Uint8Array(bitmap.width * bitmap.height)
    for (let i = 0; i < pixels.length; i++) pixels[i] = rgba[4 * i]!
    return { pixels, width: bitmap.width, height: bitmap.height }
  })()
  image.catch(() => { image = undefined })
  return image
}

const filter = (params: Readonly<Record<string, string>>): Filter => filters[param(params, 'filter') as keyof typeof filters]

export default {
  title: 'image convolution',
  controls: [{ name: 'filter', label: 'filter', options: Object.entries(filters).map(([value, f]) => ({ value, label: f.label })) }],
  ...loadsFrom(module),
  async prepare(mod, params) {
    const f = filter(params)
    const { pixels, width, height } = await loadImage()
    await (await mod.global('weights')).write(new Int32Array(f.weights))
    const input = await module.upload(pixels), out = await module.alloc(width * height)
    return {
      launches: 1,
      launch: () => convolve({ grid: [Math.ceil(width / 16), Math.ceil(height / 16)], block: [16, 16] }, input, out, width, height, f.shift, f.bias),
      read: async () => ({ out: await out.download(new Uint8Array(width * height)), input: pixels, width, height }),
      free: async () => { await Promise.all([input.free(), out.free()]) },
    }
  },
  check(output, params) {
    const { input, width, height } = output as { input: Uint8Array; width: number; height: number }
    return firstMismatch(output.out as Uint8Array, convolveReference(input, width, height, filter(params)))
  },
  show(view, output, params) {
    const { input, width, height } = output as { input: Uint8Array; width: number; height: number }
    drawGreyImages(view.canvas, [{ label: 'scene.png', pixels: input }, { label: filter(params).label, pixels: output.out as Uint8Array }], width, height)
    view.caption(`${width}×${height} pixels, 25 multiply-adds each`)
  },
} satisfies Example
