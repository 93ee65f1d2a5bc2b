// The gallery's examples by name, each loaded when its page needs it (its kernels and their offload binary
// are a chunk of their own): `<KernelExample name="saxpy" />` in a page.
import type { Example } from './example.js'

export const gallery = {
  saxpy: () => import('../../examples/kernels/saxpy.js'),
  mandelbrot: () => import('../../examples/kernels/mandelbrot.js'),
  convolve: () => import('../../examples/kernels/convolve.js'),
  histogram: () => import('../../examples/kernels/histogram.js'),
  reduction: () => import('../../examples/kernels/reduction.js'),
  matmul: () => import('../../examples/kernels/matmul.js'),
  scan: () => import('../../examples/kernels/scan.js'),
  sanitizer: () => import('../../examples/kernels/sanitizer.js'),
} satisfies Record<string, () => Promise<{ default: Example }>>

export type GalleryName = keyof typeof gallery

export function isGalleryName(name: string): name is GalleryName {
  return Object.hasOwn(gallery, name)
}
