// Builds a CUDA fatbinary from the cubin and PTX images of an offload binary with the toolkit's own
// `fatbinary` (`--create OUT -64 --image3=kind=elf|ptx,sm=NN,file=F`, the call nvcc makes; see
// `nvcc -dryrun -fatbin`). The `cuda` wrapper flavour embeds its output in `.nv_fatbin`.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { ImageKind, readOffloadEntries } from '@kernelpack/offload'
import { processWorkDir } from '@kernelpack/toolchain'
import { UserError } from './errors.js'

const run = promisify(execFile)

/** Path of `fatbinary`: $CUDA_PATH/bin, /usr/local/cuda/bin, then $PATH. */
export function findFatbinary(): string {
  const searched: string[] = []
  for (const root of [process.env.CUDA_PATH, process.env.CUDA_HOME, '/usr/local/cuda'].filter(Boolean) as string[]) {
    const p = join(root, 'bin', 'fatbinary')
    searched.push(p)
    if (existsSync(p)) return p
  }
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const p = join(dir, 'fatbinary')
    if (dir && existsSync(p)) return p
  }
  throw new UserError(`the CUDA toolkit's fatbinary was not found (searched ${searched.join(', ')} and $PATH); install the CUDA toolkit or set CUDA_PATH, or pass --fatbin FILE made by nvcc -fatbin`)
}

/** `sm_90a` → `90a`, `compute_90` → `90`. */
function smOf(arch: string, file: string): string {
  const m = /^(?:sm|compute)_(\d+[a-z]?)$/.exec(arch)
  if (!m) throw new UserError(`${file}: image arch ${JSON.stringify(arch)} is not an NVIDIA sm_XY/compute_XY target; the cuda flavour embeds NVIDIA images only`)
  return m[1]!
}

/** The fatbinary holding every cubin (kind=elf) and PTX (kind=ptx) image of `offload`; a single
 * fatbinary image is returned as it is. */
export async function buildFatbin(offload: Uint8Array, file: string): Promise<Uint8Array> {
  const entries = readOffloadEntries(offload)
  const fatbins = entries.filter((e) => e.imageKind === ImageKind.Fatbinary)
  if (fatbins.length === 1 && entries.length === 1) return fatbins[0]!.image
  // in this process's work folder: removed at exit, and by the next run if this one is killed
  const dir = mkdtempSync(join(processWorkDir(), 'fatbin-'))
  try {
    const args = ['--create', join(dir, 'out.fatbin'), '-64']
    entries.forEach((e, i) => {
      const arch = e.strings.get('arch') ?? ''
      let kind: string
      if (e.imageKind === ImageKind.Cubin || e.imageKind === ImageKind.Object) kind = 'elf'
      else if (e.imageKind === ImageKind.PTX) kind = 'ptx'
      else throw new UserError(`${file}: image ${i} (${arch}) is of kind ${e.imageKind}; a fatbinary takes cubin and PTX images only (rebuild with --arch sm_XY or compute_XY)`)
      const path = join(dir, `${i}.${kind === 'elf' ? 'cubin' : 'ptx'}`)
      writeFileSync(path, e.image)
      args.push(`--image3=kind=${kind},sm=${smOf(arch, file)},file=${path}`)
    })
    if (entries.length === 0) throw new UserError(`${file}: no images to put in a fatbinary`)
    try {
      await run(findFatbinary(), args)
    } catch (err) {
      const e = err as { stderr?: string; message: string }
      throw new UserError(`${file}: fatbinary failed: ${(e.stderr || e.message).trim()}`)
    }
    return readFileSync(join(dir, 'out.fatbin'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
