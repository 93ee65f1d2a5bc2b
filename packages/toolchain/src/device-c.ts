// The types of a .cu file from nvcc's device front end, for param-types.ts. Beside every PTX it writes, cicc
// (EDG) writes the device side of the translation unit lowered to C (`--gen_device_file_name`, the
// `<stem>.cudafe1.gpu` that `nvcc --keep` leaves): every type the device code uses, with the layout EDG chose
// spelled out, and every function, each kernel named by its PTX entry. Its types and kernels, without the
// function bodies (which hold PTX `asm` and device built-ins no host C compiler takes), compiled by gcc with -g
// give the same DWARF description of the kernels' parameters as a host compile of the .cu, in a C compile of a
// few hundred lines instead of a second C++ front end (cudafe++ and a host g++, about 0.4 s a file).
//
// What is kept, statement by statement at file level: struct, union and enum definitions and declarations,
// typedefs, and each `__global__` function's head with an empty body. The rest (device functions, variables,
// preprocessor lines) is dropped. The file's own macros (`__global__`, `___device__(…)`, `__val_param(x)`)
// are defined by a prelude of ours; the toolkit's builtin_types.h (plain C) declares the types the front end
// takes as built in (float4, dim3, cudaError_t).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ToolchainError } from './errors.js'
import { processCounter, readelfInfo, removeQuietly } from './compile.js'
import { sha256 } from './cache.js'
import { howItEnded, spawnAll } from './processes.js'

/** The prelude of the C compile: the toolkit's C declarations of the built-in types, then the device
 *  front end's own macros as nothing (or their argument). */
const PRELUDE = [
  '#include <stddef.h>',
  '#include "builtin_types.h"',
  '#undef __global__',
  '#define __global__',
  '#undef __launch_bounds__',
  '#define __launch_bounds__(...)',
  '#undef __device_builtin__',
  '#define __device_builtin__',
  '#define __var_used__',
  '#define __val_param(x) x',
  '#define ___device__(...) __VA_ARGS__',
  '#define __no_sc__',
].join('\n')

/** Index just past the string or character literal that opens at `i` (C escapes). */
function skipLiteral(src: string, i: number): number {
  const quote = src[i]
  for (i++; i < src.length && src[i] !== quote; i++) if (src[i] === '\\') i++
  return i + 1
}

/** Index just past the `}` that closes the `{` at `i`. */
function skipBlock(src: string, i: number): number {
  let depth = 0
  while (i < src.length) {
    const c = src[i]!
    if (c === '"' || c === "'") { i = skipLiteral(src, i); continue }
    if (c === '{') depth++
    else if (c === '}' && --depth === 0) return i + 1
    i++
  }
  return i
}

/**
 * The C compile's source for the device front end's C `gpu`: the prelude, then the file's type statements and
 * its kernels with empty bodies, in the file's order. A function definition is a `{` at file level right
 * after a `)`; a kernel is one whose head says `__global__`.
 */
export function deviceCTypesSource(gpu: string): string {
  // preprocessor lines (line markers, `#if !defined(__CUDABE__)` around device declarations, #include)
  const src = gpu.split('\n').map((l) => (/^\s*#/.test(l) ? '' : l)).join('\n')
  const out: string[] = [PRELUDE]
  let start = 0
  let depth = 0
  let i = 0
  while (i < src.length) {
    const c = src[i]!
    if (c === '"' || c === "'") { i = skipLiteral(src, i); continue }
    if (c === '{') {
      const head = src.slice(start, i).trim()
      if (depth === 0 && head.endsWith(')')) {
        if (/\b__global__\b/.test(head)) out.push(`${head} {}`)
        i = skipBlock(src, i)
        start = i
        continue
      }
      depth++
    } else if (c === '}') {
      depth--
    } else if (c === ';' && depth === 0) {
      const stmt = src.slice(start, i + 1).trim()
      if (/^(?:struct|union|enum|typedef)\b/.test(stmt)) out.push(stmt)
      start = i + 1
    }
    i++
  }
  return out.join('\n') + '\n'
}

let counter = 0

/** The dumps of the C compiles this process made, by their inputs: files whose types and kernel heads are the
 *  same (a kernel body edited in a dev server's rebuild, copies of one file) compile once. */
const dumps = new Map<string, Promise<string>>()
const MAX_DUMPS = 64

/** Compiles `deviceCTypesSource(gpu)` with gcc -g (C) and returns `readelf --debug-dump=info` of the object;
 *  `cudaInclude` is the toolkit's include folder (builtin_types.h). Throws a ToolchainError with gcc's last
 *  lines when it fails. The same source, folder and PATH give the dump of the first such compile. */
export function deviceCDebugInfo(gpu: string, cudaInclude: string, workDir: string): Promise<string> {
  const source = deviceCTypesSource(gpu)
  const key = sha256(source, '\0', cudaInclude, '\0', process.env.PATH ?? '')
  let dump = dumps.get(key)
  if (!dump) {
    dump = compileTypes(source, cudaInclude, workDir)
    dumps.set(key, dump)
    if (dumps.size > MAX_DUMPS) dumps.delete(dumps.keys().next().value!)
    // a failed compile is tried again next time
    const d = dump
    d.catch(() => { if (dumps.get(key) === d) dumps.delete(key) })
  }
  return dump
}

async function compileTypes(text: string, cudaInclude: string, workDir: string): Promise<string> {
  const dir = join(workDir, `device-c-${process.pid}-${++counter}`)
  mkdirSync(dir, { recursive: true })
  try {
    const source = join(dir, 'types.c')
    const object = join(dir, 'types.o')
    writeFileSync(source, text)
    processCounter.spawned++
    const cc = await spawnAll('gcc', ['-x', 'c', '-std=gnu11', '-g', '-c', '-w', '-I', cudaInclude, '-o', object, source], { env: { LC_ALL: 'C' } })
    if (cc.exitCode !== 0) throw new ToolchainError(`gcc could not compile the device front end's types: ${(cc.text.trim() || howItEnded('gcc', cc)).split('\n').slice(-5).join('\n')}`)
    return await readelfInfo(object)
  } finally {
    removeQuietly(dir)
  }
}
