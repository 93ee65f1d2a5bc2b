// `kernelpack unpack IN --image=[file=F,]key=value… …`: the extracting mode of llvm-offload-binary
// (LLVM 22). Each --image selects the images whose strings equal every given key (a missing key reads
// as "", as LLVM's StringMap lookup does; `kind=` compares the offload kind; `file=` is the output).
// With file=, the last match is written there (several matches warn, as the tool does); without it,
// every match is written to `<stem>-<triple>-<arch>.<n>.<ext>` in the working directory, n counting
// from 0 per --image. With --archive the matches go into a GNU ar archive at file=. With no --image,
// nothing is extracted (LLVM 22 behaviour). Large images are copied in chunks from the input.
import { closeSync, openSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { imageKindName, offloadKindFromName, stemOf } from '@kernelpack/offload/core'
import type { CliIO } from '../io.js'
import { UsageError, UserError } from '../errors.js'
import { parseImageArgs, parseOptions } from '../image-args.js'
import { extractImage, imageBytes, scanOffloadFile, writeAll, writeAtomically } from '../offload-file.js'
import type { ScannedEntry } from '../offload-file.js'

export const help = `Usage: kernelpack unpack IN --image=[file=F,]key=value… [--image=…] [--archive]

Extracts images from an LLVM offload binary, exactly as llvm-offload-binary IN --image=… does.
  --image=k=v,…   select images whose strings match every k=v (kind= matches the offload kind);
                  file=F writes the (last) match to F, else each match goes to
                  <stem>-<triple>-<arch>.<n>.<ext> in the current directory
  --archive       write all matches of an --image into a static archive at its file=
Without --image nothing is extracted (use kernelpack inspect to list the images).
`

/** Whether `part`, a string from the binary's own metadata, can be one piece of a file name. */
function unsafeNamePart(part: string): string | undefined {
  if (/[/\\]/.test(part)) return 'contains a path separator'
  if (part.includes('\0')) return 'contains a NUL byte'
  if (part.includes('..')) return 'contains ".."'
  return undefined
}

/**
 * The default output name `<stem>-<triple>-<arch>.<n>.<ext>`. Triple and arch come from the binary, not the
 * user, so they must not steer the file elsewhere (a triple `x/../../tmp/E` would write /tmp/E-…):
 * a separator, NUL or `..` in them is refused (llvm-offload-binary fails on such a binary too), and the
 * name must resolve to a file directly inside the working directory.
 */
function defaultOutputName(input: string, e: ScannedEntry, n: number, cwd: string, text: string): string {
  for (const key of ['triple', 'arch'] as const) {
    const value = e.strings.get(key) ?? ''
    const why = unsafeNamePart(value)
    if (why) {
      throw new UserError(`${input}: image ${e.binary} has ${key} ${JSON.stringify(value)}, which ${why}; the default output name is built from it, so it is refused. Name the output yourself: --image=${text},file=NAME`)
    }
  }
  const name = `${stemOf(input)}-${e.strings.get('triple') ?? ''}-${e.strings.get('arch') ?? ''}.${n}.${imageKindName(e.imageKind)}`
  const out = resolve(cwd, name)
  if (dirname(out) !== resolve(cwd)) throw new UserError(`${input}: the default output name ${JSON.stringify(name)} would leave the working directory; name the output with --image=${text},file=NAME`)
  return out
}

function matches(e: ScannedEntry, args: Map<string, string>): boolean {
  for (const [k, v] of args) {
    if (k === 'file') continue
    if (k === 'kind') {
      if (e.offloadKind !== offloadKindFromName(v)) return false
    } else if ((e.strings.get(k) ?? '') !== v) {
      return false
    }
  }
  return true
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const opts = parseOptions(argv, { output: true, image: true, archive: true })
  if (opts.help) {
    io.stdout(help)
    return 0
  }
  if (opts.output !== undefined) {
    throw new UsageError('unpack takes no -o: packaging to an output file and extracting from an input file are mutually exclusive (use kernelpack pack -o)')
  }
  if (opts.inputs.length !== 1) throw new UsageError(opts.inputs.length === 0 ? 'missing the offload binary to extract from' : `one input file expected, got ${opts.inputs.length}`)
  const input = opts.inputs[0]!
  let fd: number
  try {
    fd = openSync(resolve(io.cwd, input), 'r')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new UserError(`'${input}': ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
  try {
    const entries = (await scanOffloadFile(fd, input)).flatMap((b) => b.entries)
    if (opts.images.length === 0) {
      io.stderr(`kernelpack unpack: no --image given, nothing extracted (${entries.length} image${entries.length === 1 ? '' : 's'} in ${input}; list them with kernelpack inspect ${input})\n`)
      return 0
    }
    for (const text of opts.images) {
      const { args } = parseImageArgs(text)
      const extracted = entries.filter((e) => matches(e, args))
      if (extracted.length === 0) continue
      const file = args.get('file')
      if (opts.archive) {
        if (file === undefined) throw new UserError(`--image=${text}: --archive needs a file= argument naming the archive`)
        const { encodeArchive } = await import('../archive.js')
        const archive = encodeArchive(extracted.map((e) => ({ name: input, data: imageBytes(fd, e) })))
        writeAtomically(resolve(io.cwd, file), (out) => writeAll(out, archive))
      } else if (file !== undefined) {
        if (extracted.length > 1) io.stderr(`kernelpack unpack: warning: Multiple inputs match to a single file, '${file}'\n`)
        extractImage(fd, extracted[extracted.length - 1]!, resolve(io.cwd, file))
      } else {
        // every name is checked before anything is written, so a refused image leaves no partial output
        const outs = extracted.map((e, i) => defaultOutputName(input, e, i, io.cwd, text))
        extracted.forEach((e, i) => extractImage(fd, e, outs[i]!))
      }
    }
  } finally {
    closeSync(fd)
  }
  return 0
}
