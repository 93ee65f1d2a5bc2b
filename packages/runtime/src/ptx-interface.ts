// The manifest check against a PTX image (issue 17 item 8), with the PTX front end's interface reader: imported
// on demand by createModule (module.ts), so a page that loads WGSL translated at build time never loads the
// PTX parser (issue 25).
import type { KernelManifest, OffloadEntry } from '@kernelpack/offload'
import { ptxText, readPtxInterface, type PtxInterface } from '@kernelpack/ptx'

/**
 * Checks the manifest against the parameter lists of a PTX image of the binary (issue 17 item 8): the
 * manifest only repeats what the PTX declares, and a manifest from another build (types reordered at equal
 * offsets, sizes swapped) would otherwise pass arguments the kernel reads as something else. Types, sizes
 * and alignments must agree exactly; the offsets then agree too, as both come from @kernelpack/ptx's layout.
 * `ptx`: the image chosen to load when it is PTX, else the binary's first PTX image (module.ts).
 */
export function checkManifestAgainstPtx(manifest: KernelManifest, ptx: OffloadEntry, source: string): void {
  const arch = ptx.strings.get('arch') || 'PTX'
  let iface: PtxInterface
  try {
    iface = readPtxInterface(ptxText(ptx.image))
  } catch (err) {
    throw new Error(`${source}: the PTX image ${arch} cannot be read: ${(err as Error).message}`, { cause: err })
  }
  const bad = (where: string, what: string) => {
    throw new TypeError(`${source}: manifest ${where}: ${what} (is the manifest from another build? Use the <name>.manifest.json written with this binary)`)
  }
  const show = (p: { type: string; size: number; align: number }) => `.${p.type} of ${p.size} bytes aligned to ${p.align}`
  manifest.kernels.forEach((k, i) => {
    const pk = iface.kernels.find((x) => x.name === k.name)
    if (!pk) bad(`kernels[${i}] (${k.name})`, `the PTX image ${arch} has no .entry ${k.name} (it has ${iface.kernels.map((x) => x.name).join(', ') || 'none'})`)
    if (pk!.params.length !== k.params.length) bad(`kernels[${i}] (${k.name})`, `${k.params.length} parameters, but the PTX image ${arch} declares ${pk!.params.length}`)
    k.params.forEach((p, j) => {
      const q = pk!.params[j]!
      if (p.type !== q.type || p.size !== q.size || p.align !== q.align) {
        bad(`kernels[${i}] (${k.name}) params[${j}]${p.name ? ` (${p.name})` : ''}`, `${show(p)}, but the PTX image ${arch} declares ${q.name}: ${show(q)} (PTX line ${q.line})`)
      }
    })
  })
}
