// The kernel corpus's PTX, built ahead for a GPU machine (issue 30): `pnpm gpu:kit` writes every kernel-corpus
// unit's nvcc PTX and manifest into one gzipped JSON file (`node --conditions=source --import tsx
// test/gpu/write-prebuilt.ts FILE`), so the kit carries exactly what `pnpm test:gpu` compiles there instead of
// the suite's whole build cache (which also holds clang's builds and stale entries, and with Node and Dawn
// would not fit the 64 MiB a device call carries). On the GPU machine, KP_GPU_PREBUILT names that file and the
// corpus takes a unit's PTX from it when the kernel corpus's sources hash as they did when it was written;
// otherwise it compiles as usual. The PTX is the very text the suite's cache holds, so the outcome is the same.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import type { KernelManifest } from '@kernelpack/offload'
import { fixturesDir } from '../helpers/tools.js'

interface PrebuiltFile {
  format: 'kernelpack gpu prebuilt 1'
  /** sha256 over every file under test/fixtures/kernels (path and content), when the file was written. */
  sourcesHash: string
  units: Record<string, { ptx: string; manifest: KernelManifest }>
}

const kernelsDir = join(fixturesDir, 'kernels')

/** sha256 over every file of the kernel corpus (sorted paths and contents). */
export function kernelSourcesHash(): string {
  const h = createHash('sha256')
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else h.update(relative(kernelsDir, p) + '\0').update(readFileSync(p)).update('\0')
    }
  }
  walk(kernelsDir)
  return h.digest('hex')
}

/** The prebuilt file's units, or why it cannot be used (another format, other sources). */
export function readPrebuilt(file: string): PrebuiltFile['units'] | string {
  const data = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as PrebuiltFile
  if (data.format !== 'kernelpack gpu prebuilt 1') return `${file}: not a kernelpack gpu prebuilt file (format ${JSON.stringify(data.format)})`
  if (data.sourcesHash !== kernelSourcesHash()) return `${file} was built from other kernel-corpus sources than these`
  return data.units
}

let loaded: PrebuiltFile['units'] | null | undefined

/** The prebuilt PTX of a kernel-corpus unit (`kernels/basics/basics_family.cu`), where KP_GPU_PREBUILT names a
 *  file written from these same sources. */
export function prebuiltUnit(id: string): { ptx: string; manifest: KernelManifest } | undefined {
  if (loaded === undefined) {
    const file = process.env.KP_GPU_PREBUILT
    const r = file && existsSync(file) ? readPrebuilt(file) : undefined
    if (typeof r === 'string') console.warn(`test:gpu: ${r}: compiling instead`)
    loaded = typeof r === 'object' ? r : null
  }
  return loaded?.[id]
}

/** Writes every kernel-corpus unit that builds (temp file, then rename). */
export async function writePrebuilt(file: string, corpusUnits: () => { id: string; group: string; build(): Promise<{ ok: true; ptx: string; manifest: KernelManifest } | { ok: false }> }[]): Promise<number> {
  const data: PrebuiltFile = { format: 'kernelpack gpu prebuilt 1', sourcesHash: kernelSourcesHash(), units: {} }
  for (const u of corpusUnits().filter((x) => x.group === 'kernels')) {
    const b = await u.build()
    if (b.ok) data.units[u.id] = { ptx: b.ptx, manifest: b.manifest }
  }
  writeFileSync(file + '.tmp', gzipSync(JSON.stringify(data), { level: 9 }))
  renameSync(file + '.tmp', file)
  return Object.keys(data.units).length
}
