// `kernelpack hostrefs --ptx FILE.ptx [--symbols LIST] [--module-id ID] [--c] [-o OUT]`: cudafe++'s six
// `.nvHR*` host-reference blocks for PTX symbols, kind and linkage read from the PTX (FINDINGS.md §1).
import { readFileSync } from 'node:fs'
import { writeFileAtomic } from '@kernelpack/toolchain/atomic-write'
import { resolve } from 'node:path'
import { emitHostRefs, hostRefSymbolsFromManifest } from '@kernelpack/codegen'
import { readPtxManifest } from '@kernelpack/toolchain'
import type { CliIO } from '../io.js'
import { parseCommandArgs } from '../parse-args.js'
import { UsageError, UserError } from '../errors.js'

export const help = `Usage: kernelpack hostrefs --ptx FILE.ptx [--symbols LIST] [--module-id ID] [--c] [-o OUT]

Prints the six host-reference arrays (.nvHRKI .nvHRKE .nvHRDI .nvHRDE .nvHRCI .nvHRCE) that cudafe++
writes in relocatable-device-code mode, byte for byte, for the kernels and variables of a PTX file.

  --ptx FILE        PTX of the module (nvcc -rdc=true -ptx); kind and linkage come from it
  --symbols LIST    file with the host-referenced PTX names, one per line (default: every kernel and
                    variable the PTX defines)
  --module-id ID    the module id (nvcc -keep writes X.module_id); needed for external template kernels
                    and for internal names without the __nv_static_ prefix
  --c               emit plain C (no extern "C", no extern on the definitions) for a C object
  -o, --output OUT  write to OUT (through a temporary file) instead of stdout
`

function readText(io: CliIO, file: string, what: string): string {
  try {
    return readFileSync(resolve(io.cwd, file), 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new UserError(`${what} '${file}': ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
}

/** Writes text to path through a temporary file in the same directory, then renames it. */
export function writeTextAtomically(path: string, text: string): void {
  writeFileAtomic(path, text)
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs({
    args: argv,
    options: {
      ptx: { type: 'string' },
      symbols: { type: 'string' },
      'module-id': { type: 'string' },
      c: { type: 'boolean' },
      output: { type: 'string', short: 'o' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    io.stdout(help)
    return 0
  }
  if (!values.ptx) throw new UsageError('missing --ptx FILE.ptx')
  const ptx = readText(io, values.ptx, 'PTX file')
  let manifest
  try {
    manifest = await readPtxManifest(ptx, { demangle: false })
  } catch (err) {
    throw new UserError(`${values.ptx}: ${(err as Error).message}`)
  }
  manifest.source = values.ptx
  const only = values.symbols === undefined
    ? undefined
    : readText(io, values.symbols, 'symbol list').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
  let text: string
  try {
    text = emitHostRefs(hostRefSymbolsFromManifest(manifest, only), { moduleId: values['module-id'], dialect: values.c ? 'c' : 'cudafe' })
  } catch (err) {
    throw new UserError(`${values.symbols ?? values.ptx}: ${(err as Error).message}`)
  }
  if (values.output) writeTextAtomically(resolve(io.cwd, values.output), text)
  else io.stdout(text)
  return 0
}
