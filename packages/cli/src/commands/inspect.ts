// `kernelpack inspect FILE… [--json]`: every binary and image of offload binaries, with image kind,
// offload kind, flags, sizes and strings. Human table by default; --json prints one JSON document
// ({ files: [{ file, binaries: [{ offset, size, version, compressed, entries: […] }] }] }).
// Large images are not read (scanOffloadFile reads only metadata).
import { closeSync, openSync } from 'node:fs'
import { resolve } from 'node:path'
import { imageKindName, offloadKindName } from '@kernelpack/offload/core'
import type { CliIO } from '../io.js'
import { UsageError, UserError } from '../errors.js'
import { parseOptions } from '../image-args.js'
import { scanOffloadFile } from '../offload-file.js'
import type { ScannedBinary } from '../offload-file.js'

export const help = `Usage: kernelpack inspect FILE… [--json]

Lists every image in LLVM offload binaries (as written by llvm-offload-binary, clang's .llvm.offloading
section, or kernelpack pack): binary offset and version, image kind, offload kind, flags, image size and
every key=value string. --json prints the same as JSON.
`

const imageKindLabels: Record<number, string> = { 0: 'none', 1: 'object', 2: 'bitcode', 3: 'cubin', 4: 'fatbin', 5: 'ptx', 6: 'spirv' }

/** Human name of an image kind (LLVM's extension names are terse: "s" for PTX). */
export function imageKindLabel(kind: number): string {
  return imageKindLabels[kind] ?? `unknown(${kind})`
}

function toJson(file: string, binaries: ScannedBinary[]): unknown {
  return {
    file,
    binaries: binaries.map((b) => ({
      offset: b.offset,
      size: b.size,
      version: b.version,
      compressed: b.compressed,
      entries: b.entries.map((e) => ({
        imageKind: e.imageKind,
        imageKindName: imageKindLabel(e.imageKind),
        extension: imageKindName(e.imageKind),
        offloadKind: e.offloadKind,
        offloadKindName: offloadKindName(e.offloadKind),
        flags: e.flags,
        imageSize: e.imageSize,
        ...(e.imageOffset !== undefined ? { imageOffset: e.imageOffset } : {}),
        strings: Object.fromEntries(e.strings),
      })),
    })),
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ').trimEnd()).join('\n') + '\n'
}

function toText(file: string, binaries: ScannedBinary[]): string {
  const count = binaries.reduce((n, b) => n + b.entries.length, 0)
  const rows = [['#', 'offset', 'ver', 'image', 'offload', 'flags', 'size', 'strings']]
  let i = 0
  for (const b of binaries) {
    for (const e of b.entries) {
      rows.push([
        String(i++),
        `0x${b.offset.toString(16)}`,
        `${b.version}${b.compressed ? 'z' : ''}`,
        imageKindLabel(e.imageKind),
        offloadKindName(e.offloadKind),
        `0x${e.flags.toString(16)}`,
        String(e.imageSize),
        [...e.strings].map(([k, v]) => `${k}=${JSON.stringify(v).slice(1, -1)}`).join(' '),
      ])
    }
  }
  return `${file}: ${binaries.length} binar${binaries.length === 1 ? 'y' : 'ies'}, ${count} image${count === 1 ? '' : 's'}\n` + table(rows)
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const opts = parseOptions(argv, { json: true })
  if (opts.help) {
    io.stdout(help)
    return 0
  }
  if (opts.inputs.length === 0) throw new UsageError('missing FILE: the offload binary to inspect')
  const results: { file: string; binaries: ScannedBinary[] }[] = []
  for (const file of opts.inputs) {
    let fd: number
    try {
      fd = openSync(resolve(io.cwd, file), 'r')
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      throw new UserError(`'${file}': ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
    }
    try {
      results.push({ file, binaries: await scanOffloadFile(fd, file) })
    } finally {
      closeSync(fd)
    }
  }
  if (opts.json) io.stdout(JSON.stringify({ files: results.map((r) => toJson(r.file, r.binaries)) }, null, 2) + '\n')
  else io.stdout(results.map((r) => toText(r.file, r.binaries)).join('\n'))
  return 0
}
