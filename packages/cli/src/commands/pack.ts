// `kernelpack pack -o OUT --image=file=F,triple=T,arch=A[,kind=K][,key=value…] …`: the packing mode of
// llvm-offload-binary (LLVM 22), byte for byte. Each file of each --image becomes one version-1 binary;
// they are concatenated in argument order. The image kind comes from the bitcode magic or the file
// extension, `kind=` sets the offload kind, every other key except `file` is stored as a string, in
// llvm-offload-binary's order. With no --image the output is an empty file, as the tool writes.
// Images are streamed from their files into a temporary output (never all in memory), then renamed.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { resolve } from 'node:path'
import { encodeV1Prefix, imageKindOfFile, offloadKindFromName } from '@kernelpack/offload/core'
import type { CliIO } from '../io.js'
import { UsageError, UserError } from '../errors.js'
import { parseImageArgs, parseOptions } from '../image-args.js'
import { CHUNK, copyRange, newBuffer, writeAll, writeAtomically } from '../offload-file.js'

export const help = `Usage: kernelpack pack -o OUT --image=file=F[,triple=T][,arch=A][,kind=K][,key=value…] …

Packs device images into an LLVM offload binary, exactly as llvm-offload-binary -o does.
  -o OUT              the offload binary to write
  --image=k=v,…       one image: file= (required; repeat it for several files with the same metadata),
                      kind= (openmp, cuda, hip, sycl: the offload kind), any other key is stored as a
                      string (triple, arch, feature, producer…); a repeated key joins its values with ","
The image kind comes from the extension: .o object, .bc bitcode, .cubin, .fatbin, .s PTX,
anything else none (a file with the bitcode magic is always bitcode).
`

interface PlannedImage {
  file: string
  path: string
  size: number
  prefix: Uint8Array
  total: number
}

function openImage(path: string, file: string, text: string): number {
  try {
    return openSync(path, 'r')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (err as Error).message
    throw new UserError(`cannot read image file '${file}': ${why} (in --image=${text}); check the file= path`)
  }
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const opts = parseOptions(argv, { output: true, image: true })
  if (opts.help) {
    io.stdout(help)
    return 0
  }
  if (opts.inputs.length > 0) {
    throw new UsageError(`pack takes no input file (got '${opts.inputs[0]}'); packaging to an output file and extracting from an input file are mutually exclusive: use kernelpack unpack to extract`)
  }
  if (opts.output === undefined || opts.output === '') throw new UsageError('missing -o OUT: the offload binary to write')
  const output = resolve(io.cwd, opts.output)

  const planned: PlannedImage[] = []
  const fds: number[] = []
  try {
    for (const text of opts.images) {
      const { args } = parseImageArgs(text)
      const files = args.get('file')
      if (files === undefined) throw new UserError(`--image=${text}: 'file' is a required image argument (e.g. --image=file=k.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90)`)
      const strings = new Map<string, string>()
      let offloadKind = 0
      for (const [k, v] of args) {
        if (k === 'kind') offloadKind = offloadKindFromName(v)
        else if (k !== 'file') strings.set(k, v)
      }
      for (const file of files.split(',')) {
        const path = resolve(io.cwd, file)
        const fd = openImage(path, file, text)
        fds.push(fd)
        const st = fstatSync(fd)
        if (!st.isFile()) throw new UserError(`cannot read image file '${file}': not a regular file (in --image=${text})`)
        const head = new Uint8Array(4)
        const n = readSync(fd, head, 0, 4, 0)
        const imageKind = imageKindOfFile(file, head.subarray(0, n))
        const { prefix, size } = encodeV1Prefix({ imageKind, offloadKind, strings }, st.size)
        planned.push({ file, path, size: st.size, prefix, total: size })
      }
    }
    const buffer = newBuffer(Math.min(CHUNK, Math.max(1, ...planned.map((p) => p.size))))
    writeAtomically(output, (out) => {
      planned.forEach((p, i) => {
        writeAll(out, p.prefix)
        copyRange(fds[i]!, 0, p.size, out, buffer, p.file)
        const pad = p.total - p.prefix.length - p.size
        if (pad > 0) writeAll(out, new Uint8Array(pad))
      })
    })
  } finally {
    for (const fd of fds) closeSync(fd)
  }
  return 0
}
