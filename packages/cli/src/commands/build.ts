// `kernelpack build FILE.cu… --arch SPEC -o DIR`: compiles each file for every target through
// @kernelpack/toolchain (shared pool, disk cache) and writes DIR/<name>.offload and DIR/<name>.manifest.json
// (DESIGN.md, "Contracts"); with `--emit wrapper-c,hostrefs` also DIR/<name>.wrapper.c (+ .wrapper.h) and
// DIR/<name>.hostrefs.c from @kernelpack/codegen. A compile error prints the compiler's diagnostics as
// file:line:col and exits 1; files that did compile are still written, and a file that failed has none of
// its outputs left in DIR (a previous build's would be a stale image for the next step: issue 17 item 9).
import { mkdirSync, rmSync } from 'node:fs'
import { writeFileAtomic } from '@kernelpack/toolchain/atomic-write'
import { basename, join, resolve } from 'node:path'
import { emitHostRefs, emitWrapperC, hostRefSymbolsFromManifest, type WrapperFlavor } from '@kernelpack/codegen'
import {
  buildCudaFile, BuildSession, CompileError, DEFAULT_ARCH, formatDiagnostic, parseCacheSize, Pool, type BuildOptions, type BuildResult, type Diagnostic,
} from '@kernelpack/toolchain'
import type { CliIO } from '../io.js'
import { parseCommandArgs } from '../parse-args.js'
import { UsageError, UserError } from '../errors.js'
import { buildFatbin } from '../fatbinary.js'
import { parseDefine, shown } from '../output.js'

export const help = `Usage: kernelpack build FILE.cu… -o DIR [options]

Compiles CUDA files for GPU targets and writes, per file, DIR/<name>.offload (an LLVM offload binary with
one image per target) and DIR/<name>.manifest.json (kernels, parameters and variables read from the PTX).

  -o, --out-dir DIR       where to write the outputs (created if missing)
  --arch SPEC             targets, CMake CUDA_ARCHITECTURES or nvcc syntax: 80 (sm_80 cubin + compute_80
                          PTX), 80-real, 90-virtual, sm_90a, compute_90, "80-real;90", all-major, native
                          (default ${DEFAULT_ARCH}); may be repeated
  --compiler C            nvcc, clang or the path of a compiler (default: nvcc if found, else clang)
  -I DIR                  include directory (repeatable)
  -D NAME[=VALUE]         macro definition (repeatable)
  --std STD               C++ standard, e.g. c++17
  --rdc                   relocatable device code (-rdc=true / -fgpu-rdc)
  --lineinfo              line information for profilers
  --wgsl                  also translate the PTX to WGSL and ship it in the offload binary (for WebGPU);
                          kernels that cannot run on WebGPU are warnings (at their .cu line with --lineinfo)
  -G, --debug             device debug information (no optimisation)
  -O, --optimize N        device optimisation level 0-3
  --flag ARG              pass ARG to the compiler as it is (repeatable)
  --launcher CMD          run the compiler through CMD (ccache, sccache), like CMAKE_CUDA_COMPILER_LAUNCHER
  --cache-dir DIR         compile cache (default $KERNELPACK_CACHE_DIR or node_modules/.cache/kernelpack)
  --cache-size SIZE       cache size limit, least recently used entries evicted beyond it: 500M, 2G, 1Gi,
                          0 for none (ccache's max_size syntax; default $KERNELPACK_CACHE_SIZE or 1 GiB)
  --no-cache              do not read or write the compile cache
  -j, --jobs N            compiler processes at once (default: the number of cores)
  --emit LIST             also write: wrapper-c (DIR/<name>.wrapper.c + .h, see kernelpack wrapper) and/or
                          hostrefs (DIR/<name>.hostrefs.c, cudafe++-style .nvHR* arrays, as C)
  --flavor F              wrapper-c flavour: offload (default), legacy or cuda
  -q, --quiet             do not print compiler warnings or the summary
`

function formatWithFrame(cwd: string, d: Diagnostic): string {
  const line = formatDiagnostic({ ...d, file: shown(cwd, d.file) })
  return d.frame ? `${line}\n${d.frame}` : line
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const parsed = parseCommandArgs({
    args: argv,
    options: {
      'out-dir': { type: 'string', short: 'o' },
      arch: { type: 'string', multiple: true },
      compiler: { type: 'string' },
      include: { type: 'string', short: 'I', multiple: true },
      define: { type: 'string', short: 'D', multiple: true },
      std: { type: 'string' },
      rdc: { type: 'boolean' },
      lineinfo: { type: 'boolean' },
      wgsl: { type: 'boolean' },
      debug: { type: 'boolean', short: 'G' },
      optimize: { type: 'string', short: 'O' },
      flag: { type: 'string', multiple: true },
      launcher: { type: 'string' },
      'cache-dir': { type: 'string' },
      'cache-size': { type: 'string' },
      'no-cache': { type: 'boolean' },
      jobs: { type: 'string', short: 'j' },
      emit: { type: 'string', multiple: true },
      flavor: { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  })
  const { values, positionals } = parsed
  if (values.help) {
    io.stdout(help)
    return 0
  }
  if (positionals.length === 0) throw new UsageError('no input: name one or more .cu files')
  if (!values['out-dir']) throw new UsageError('missing -o DIR: the directory for <name>.offload and <name>.manifest.json')
  const emit = new Set((values.emit ?? []).flatMap((e) => e.split(',')).map((e) => e.trim()).filter(Boolean))
  for (const e of emit) if (e !== 'wrapper-c' && e !== 'hostrefs') throw new UsageError(`--emit ${e}: expected wrapper-c and/or hostrefs`)
  const flavor = (values.flavor ?? 'offload') as WrapperFlavor
  if (!['offload', 'legacy', 'cuda'].includes(flavor)) throw new UsageError(`--flavor must be offload, legacy or cuda, not '${values.flavor}'`)
  if (values.flavor && !emit.has('wrapper-c')) throw new UsageError('--flavor applies to --emit wrapper-c')
  let optimize: BuildOptions['optimize']
  if (values.optimize !== undefined) {
    if (!/^[0-3]$/.test(values.optimize)) throw new UsageError(`--optimize must be 0, 1, 2 or 3, not '${values.optimize}'`)
    optimize = Number(values.optimize) as 0 | 1 | 2 | 3
  }
  let jobs: number | undefined
  if (values.jobs !== undefined) {
    jobs = Number(values.jobs)
    if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError(`--jobs must be a positive integer, not '${values.jobs}'`)
  }
  if (values['no-cache'] && values['cache-dir']) throw new UsageError('--no-cache and --cache-dir exclude each other')
  if (values['cache-size'] !== undefined) {
    try {
      parseCacheSize(values['cache-size'], '--cache-size')
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
  }

  const outDir = resolve(io.cwd, values['out-dir'])
  const names = new Map<string, string>()
  for (const f of positionals) {
    const name = basename(f).replace(/\.cu$/i, '')
    const other = names.get(name)
    if (other !== undefined) throw new UsageError(`${other} and ${f} would both write ${name}.offload; build them into different -o directories`)
    names.set(name, f)
  }

  const options: BuildOptions = {
    cwd: io.cwd,
    includeDirs: values.include ?? [],
    defines: Object.fromEntries((values.define ?? []).map(parseDefine)),
    flags: values.flag ?? [],
    rdc: values.rdc ?? false,
    lineinfo: values.lineinfo ?? false,
    wgsl: values.wgsl ?? false,
    debug: values.debug ?? false,
    session: new BuildSession(),
  }
  if (values.arch?.length) options.arch = values.arch
  if (values.compiler) options.compiler = values.compiler
  if (values.std) options.std = values.std
  if (optimize !== undefined) options.optimize = optimize
  if (values.launcher) options.launcher = values.launcher
  if (values['no-cache']) options.cacheDir = false
  else if (values['cache-dir']) options.cacheDir = values['cache-dir']
  if (values['cache-size'] !== undefined) options.cacheSize = values['cache-size']
  // One limiter for all the files: -j caps the whole command, not each file.
  if (jobs !== undefined) options.jobs = new Pool(jobs)

  const results = await Promise.allSettled(positionals.map((f) => buildCudaFile(f, options)))
  let failed = 0
  mkdirSync(outDir, { recursive: true })
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!
    const base = join(outDir, basename(positionals[i]!).replace(/\.cu$/i, ''))
    if (r.status === 'fulfilled') {
      try {
        await writeOutputs(r.value, outDir, emit, flavor, io, values.quiet ?? false)
        continue
      } catch (err) {
        removeOutputs(base)
        if (!(err instanceof UserError)) throw err
        failed++
        io.stderr(`kernelpack build: ${err.message}\n`)
        continue
      }
    }
    removeOutputs(base)
    const err = r.reason
    failed++
    if (err instanceof CompileError) {
      const list = err.diagnostics.map((d) => formatWithFrame(io.cwd, d)).join('\n')
      io.stderr(`kernelpack build: ${shown(io.cwd, err.file)}: compile failed${err.details.target ? ` (${err.details.target})` : ''}\n${list}\n`)
    } else if (err instanceof Error && (err as { userError?: boolean }).userError) {
      io.stderr(`kernelpack build: ${positionals[i]}: ${err.message}\n`)
    } else {
      throw err
    }
  }
  return failed ? 1 : 0
}

/** Every output `kernelpack build` may write for one file (the `--emit` ones too, whatever this run asked). */
const OUTPUT_SUFFIXES = ['.offload', '.manifest.json', '.wrapper.c', '.wrapper.h', '.hostrefs.c']

/** Removes a file's outputs from a previous build, so that a failed build leaves no stale image behind. */
function removeOutputs(base: string): void {
  for (const suffix of OUTPUT_SUFFIXES) rmSync(`${base}${suffix}`, { force: true })
}

async function writeOutputs(r: BuildResult, outDir: string, emit: Set<string>, flavor: WrapperFlavor, io: CliIO, quiet: boolean): Promise<void> {
  const base = join(outDir, r.name)
  writeFileAtomic(`${base}.offload`, r.offload)
  writeFileAtomic(`${base}.manifest.json`, JSON.stringify(r.manifest, null, 2) + '\n')
  const written = [`${base}.offload`, `${base}.manifest.json`]
  if (emit.has('wrapper-c')) {
    const fatbin = flavor === 'cuda' ? await buildFatbin(r.offload, `${base}.offload`) : undefined
    let out
    try {
      out = emitWrapperC({ name: r.name, offload: r.offload, manifest: r.manifest, ...(fatbin ? { fatbin } : {}) }, { flavor })
    } catch (err) {
      throw new UserError(`${r.file}: ${(err as Error).message}`)
    }
    writeFileAtomic(`${base}.wrapper.c`, out.c)
    written.push(`${base}.wrapper.c`)
    if (out.h !== undefined) {
      writeFileAtomic(`${base}.wrapper.h`, out.h)
      written.push(`${base}.wrapper.h`)
    }
  }
  if (emit.has('hostrefs')) {
    // Every kernel and variable the PTX defines (a build does not know which ones host code names);
    // the module id is read from nvcc's `__nv_static_` prefixes where there are any (RDC builds).
    let text
    try {
      text = emitHostRefs(hostRefSymbolsFromManifest(r.manifest), { dialect: 'c', missingModuleId: 'skip' })
    } catch (err) {
      throw new UserError(`${r.file}: ${(err as Error).message}`)
    }
    writeFileAtomic(`${base}.hostrefs.c`, text)
    written.push(`${base}.hostrefs.c`)
  }
  if (!quiet) {
    for (const w of [...r.warnings, ...(r.webgpuRefused ?? [])]) io.stderr(formatWithFrame(io.cwd, w) + '\n')
    const targets = r.images.map((i) => i.target).join(', ') + (r.webgpuRefused ? ', WGSL' : '')
    const cached = r.stats.compiles === 0 ? ', cached' : r.stats.cacheHits ? `, ${r.stats.cacheHits} cached` : ''
    io.stdout(`${shown(io.cwd, r.file)} → ${written.map((w) => shown(io.cwd, w)).join(', ')} (${targets}; ${r.manifest.kernels.length} kernel${r.manifest.kernels.length === 1 ? '' : 's'}${cached})\n`)
  }
}
