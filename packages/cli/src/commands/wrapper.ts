// `kernelpack wrapper`: wrapper C (+ header) that embeds a module's device images and registers them at
// start-up, in LLVM 22's layout, the legacy clang-offload-wrapper layout, or CUDA runtime registration.
import { readFileSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { emitWrapperC, hostRefSymbolsFromManifest, type WrapperFlavor } from '@kernelpack/codegen'
import type { KernelManifest } from '@kernelpack/offload'
import type { CliIO } from '../io.js'
import { parseCommandArgs } from '../parse-args.js'
import { UsageError, UserError } from '../errors.js'
import { buildFatbin } from '../fatbinary.js'
import { writeTextAtomically } from './hostrefs.js'

export const help = `Usage: kernelpack wrapper --offload F.offload --manifest F.manifest.json -o OUT.c [options]

Writes C that embeds the device images of a module and registers them when the program starts, plus a
header (OUT.h) declaring one exported host symbol per kernel and variable and a table of them.

  --flavor offload|legacy|cuda
        offload (default): LLVM 22 layout: 56-byte entries in llvm_offload_entries, offload binaries
                in .llvm.offloading, __tgt_register_lib / __tgt_unregister_lib (link with libomptarget)
        legacy: clang-offload-wrapper layout: 32-byte entries in omp_offloading_entries, raw images,
                .offload_arch_list and __tgt_image_info (__tgt_register_image_info)
        cuda:   CUDA runtime registration: fatbinary in .nv_fatbin, __cudaRegisterFatBinary,
                __cudaRegisterFunction / __cudaRegisterVar per entity (link with libcudart)
  --offload FILE       the module's offload binary (kernelpack build writes DIR/<name>.offload)
  --manifest FILE      its manifest (DIR/<name>.manifest.json)
  -o, --output OUT.c   the wrapper C
  --header OUT.h       the header (default: OUT.c with .h)
  --name NAME          module name used in C identifiers (default: the offload file's base name)
  --fatbin FILE        cuda: use this fatbinary (nvcc -fatbin) instead of running the toolkit's fatbinary
                       on the cubin and PTX images of --offload
  --hostrefs           also emit cudafe++-style .nvHR* host-reference arrays for every kernel and variable
  --hostrefs-symbols LIST   ... for the PTX names in LIST only (one per line)
  --module-id ID       module id for the host-reference arrays (see kernelpack hostrefs --help)
  --entry-kind N       Kind field of offload entries (1 OpenMP, 2 CUDA, 4 HIP; default: the images' kind)
`

function readBytes(io: CliIO, file: string, what: string): Uint8Array {
  try {
    return readFileSync(resolve(io.cwd, file))
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new UserError(`${what} '${file}': ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
}

function readManifest(io: CliIO, file: string): KernelManifest {
  const text = Buffer.from(readBytes(io, file, 'manifest')).toString('utf8')
  let m: KernelManifest
  try {
    m = JSON.parse(text) as KernelManifest
  } catch (err) {
    throw new UserError(`manifest '${file}' is not JSON: ${(err as Error).message}; pass the .manifest.json that kernelpack build wrote`)
  }
  if (!m || !Array.isArray(m.kernels) || !Array.isArray(m.variables)) {
    throw new UserError(`manifest '${file}' has no kernels/variables arrays; pass the .manifest.json that kernelpack build wrote`)
  }
  return m
}

/** `vecadd.1a2b3c4d.offload` → `vecadd`. */
export function moduleNameOf(file: string): string {
  return basename(file).replace(/\.offload$/, '').replace(/\.[0-9a-f]{8,}$/, '').replace(/\..*$/, '') || 'module'
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs({
    args: argv,
    options: {
      flavor: { type: 'string' },
      offload: { type: 'string' },
      manifest: { type: 'string' },
      output: { type: 'string', short: 'o' },
      header: { type: 'string' },
      name: { type: 'string' },
      fatbin: { type: 'string' },
      hostrefs: { type: 'boolean' },
      'hostrefs-symbols': { type: 'string' },
      'module-id': { type: 'string' },
      'entry-kind': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    io.stdout(help)
    return 0
  }
  const flavor = (values.flavor ?? 'offload') as WrapperFlavor
  if (!['offload', 'legacy', 'cuda'].includes(flavor)) throw new UsageError(`--flavor must be offload, legacy or cuda, not '${values.flavor}'`)
  if (!values.offload) throw new UsageError('missing --offload FILE (the module\'s .offload binary)')
  if (!values.manifest) throw new UsageError('missing --manifest FILE (the module\'s .manifest.json)')
  if (!values.output) throw new UsageError('missing -o OUT.c')
  let entryKind: number | undefined
  if (values['entry-kind'] !== undefined) {
    entryKind = Number(values['entry-kind'])
    if (!Number.isInteger(entryKind) || entryKind < 0 || entryKind > 0xffff) throw new UsageError(`--entry-kind must be an integer 0..65535, not '${values['entry-kind']}'`)
  }
  const offload = readBytes(io, values.offload, 'offload binary')
  const manifest = readManifest(io, values.manifest)
  const fatbin = flavor !== 'cuda' ? undefined : values.fatbin ? readBytes(io, values.fatbin, 'fatbinary') : await buildFatbin(offload, values.offload)
  let hostRefs
  if (values.hostrefs || values['hostrefs-symbols']) {
    const only = values['hostrefs-symbols']
      ? Buffer.from(readBytes(io, values['hostrefs-symbols'], 'symbol list')).toString('utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
      : undefined
    try {
      hostRefs = { symbols: hostRefSymbolsFromManifest(manifest, only), moduleId: values['module-id'] }
    } catch (err) {
      throw new UserError(`${values['hostrefs-symbols'] ?? values.manifest}: ${(err as Error).message}`)
    }
  }
  const name = values.name ?? moduleNameOf(values.offload)
  let out
  try {
    out = emitWrapperC({ name, offload, manifest, fatbin, hostRefs }, { flavor, entryKind })
  } catch (err) {
    throw new UserError(`${values.offload}: ${(err as Error).message}`)
  }
  const cPath = resolve(io.cwd, values.output)
  writeTextAtomically(cPath, out.c)
  if (out.h !== undefined) writeTextAtomically(resolve(io.cwd, values.header ?? cPath.replace(/\.c$/, '') + '.h'), out.h)
  return 0
}
