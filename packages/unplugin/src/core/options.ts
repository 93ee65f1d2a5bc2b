// User options of unplugin-cuda with their defaults (documented here, on the type, with @default), and
// their resolution against the project root.
import { isAbsolute, join, resolve } from 'node:path'
import { createFilter, type FilterPattern } from '@rollup/pluginutils'
import { parseCacheSize } from '@kernelpack/toolchain'

/** Extra outputs beside the offload binary. */
export type EmitKind = 'offload' | 'wrapper-c' | 'hostrefs'

export interface Options {
  /**
   * GPU targets, in CMake CUDA_ARCHITECTURES or nvcc syntax (`'80-real;90'`, `'sm_90a'`, `['80', '90-virtual']`).
   * @default the toolchain's DEFAULT_ARCH (includes a PTX target, so the emulator can run it)
   */
  arch?: string | string[]
  /** `'nvcc'`, `'clang'` or a path to either. @default found by the toolchain: nvcc, then clang */
  compiler?: string
  /** Files the plugin compiles (matched on the path without the query). @default /\.cu$/ */
  include?: FilterPattern
  /** Files the plugin leaves alone. @default undefined */
  exclude?: FilterPattern
  /** Preprocessor macros, `{ N: 4, FAST: true, SLOW: false }` (`true` → -DFAST, `false` → -USLOW) or `['N=4', 'FAST']`. @default {} */
  defines?: Record<string, string | number | boolean> | string[]
  /** Extra `-I` directories, relative to the project root. @default [] */
  includeDirs?: string[]
  /** Extra compiler flags, passed as they are (no shell). @default [] */
  flags?: string[]
  /** C++ standard (`'c++17'`). @default the compiler's default */
  std?: string
  /** Relocatable device code (`-rdc`). @default false */
  rdc?: boolean
  /** Line info for profilers and the emulator's messages (`-lineinfo`). @default false */
  lineinfo?: boolean
  /** Compile cache directory, shared by every build in the project. @default $KERNELPACK_CACHE_DIR, else '<root>/node_modules/.cache/kernelpack' (as the toolchain and `kernelpack build`) */
  cacheDir?: string
  /** Size limit of the compile cache; least recently used entries are evicted beyond it (ccache's max_size):
   *  bytes, or `'500M'`, `'2G'`, `'1Gi'`; 0 for no limit. @default $KERNELPACK_CACHE_SIZE, else 1 GiB */
  cacheSize?: number | string
  /** Compiler launcher put in front of the compiler, as CMake's CUDA_COMPILER_LAUNCHER (`'ccache'`, `'sccache'`). @default undefined */
  launcher?: string
  /** Outputs per `.cu`: the offload binary always; `'wrapper-c'` and `'hostrefs'` add C files for native packages. @default ['offload'] */
  emit?: EmitKind[]
  /** Offload binaries up to this many bytes are inlined in the stub as base64 instead of emitted as an asset. @default 0 (never) */
  inline?: number
  /** Backend the stubs ask for when `module.load()` names none. @default 'auto' (cuda where a driver answers, else the emulator) */
  backend?: 'auto' | 'cuda' | 'emulator'
  /** Write `<file>.cu.d.ts` beside every `.cu` so TypeScript types the imports. @default true */
  dts?: boolean
  /** Folders scanned for `.cu` files at build start, so their .d.ts files exist before tsc runs (relative to the root;
   *  node_modules, dist and dot folders are skipped). Imported files get theirs on load anyway. @default ['src'] */
  dtsScan?: string[]
  /** Parallel compiler processes. @default the number of cores */
  jobs?: number
}

export interface ResolvedOptions {
  root: string
  arch?: string | string[]
  compiler?: string
  filter: (id: string) => boolean
  defines: Record<string, string | number | boolean>
  includeDirs: string[]
  flags: string[]
  std?: string
  rdc: boolean
  lineinfo: boolean
  cacheDir: string
  cacheSize?: number | string
  launcher?: string
  emit: Set<EmitKind>
  inline: number
  backend: 'auto' | 'cuda' | 'emulator'
  dts: boolean
  dtsScan: string[]
  jobs?: number
}

const EMIT_KINDS: EmitKind[] = ['offload', 'wrapper-c', 'hostrefs']

/** Fills in defaults and checks option types; throws a TypeError naming the option on bad input. */
export function resolveOptions(options: Options = {}, root = process.cwd()): ResolvedOptions {
  const emit = new Set<EmitKind>(['offload'])
  for (const e of options.emit ?? []) {
    if (!EMIT_KINDS.includes(e)) throw new TypeError(`unplugin-cuda: unknown emit kind ${JSON.stringify(e)}; use ${EMIT_KINDS.map((k) => `'${k}'`).join(', ')}`)
    emit.add(e)
  }
  const inline = options.inline ?? 0
  if (typeof inline !== 'number' || !(inline >= 0)) throw new TypeError(`unplugin-cuda: option inline must be a byte count >= 0, got ${JSON.stringify(inline)}`)
  const backend = options.backend ?? 'auto'
  if (!['auto', 'cuda', 'emulator'].includes(backend)) throw new TypeError(`unplugin-cuda: option backend must be 'auto', 'cuda' or 'emulator', got ${JSON.stringify(backend)}`)
  const filter = createFilter(options.include ?? /\.cu$/, options.exclude)
  if (options.cacheSize !== undefined) {
    try {
      parseCacheSize(options.cacheSize)
    } catch (err) {
      throw new TypeError(`unplugin-cuda: option cacheSize: ${(err as Error).message}`)
    }
  }
  return {
    root,
    arch: options.arch,
    compiler: options.compiler,
    filter: (id) => filter(stripQuery(id)),
    defines: normalizeDefines(options.defines),
    includeDirs: (options.includeDirs ?? []).map((d) => resolve(root, d)),
    flags: [...(options.flags ?? [])],
    std: options.std,
    rdc: options.rdc ?? false,
    lineinfo: options.lineinfo ?? false,
    cacheDir: resolveCacheDir(options.cacheDir ?? process.env.KERNELPACK_CACHE_DIR, root),
    cacheSize: options.cacheSize,
    launcher: options.launcher,
    emit,
    inline,
    backend,
    dts: options.dts ?? true,
    dtsScan: (options.dtsScan ?? ['src']).map((d) => resolve(root, d)),
    jobs: options.jobs,
  }
}

function normalizeDefines(d: Options['defines']): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {}
  if (!d) return out
  if (Array.isArray(d)) {
    for (const item of d) {
      const eq = item.indexOf('=')
      if (eq < 0) out[item] = true
      else out[item.slice(0, eq)] = item.slice(eq + 1)
    }
    return out
  }
  return { ...d }
}

/** `a/b.cu?url` → `a/b.cu`. */
export function stripQuery(id: string): string {
  const q = id.indexOf('?')
  return q < 0 ? id : id.slice(0, q)
}

/** The query form of an import: `?url`, `?manifest`, `?raw`, or none (the loader stub). */
export type ImportKind = 'stub' | 'url' | 'manifest' | 'raw'

export function parseImportKind(id: string): ImportKind {
  const q = id.indexOf('?')
  if (q < 0) return 'stub'
  const params = new URLSearchParams(id.slice(q + 1))
  if (params.has('url')) return 'url'
  if (params.has('manifest')) return 'manifest'
  if (params.has('raw')) return 'raw'
  return 'stub'
}

function resolveCacheDir(dir: string | undefined, root: string): string {
  if (!dir) return join(root, 'node_modules', '.cache', 'kernelpack')
  return isAbsolute(dir) ? dir : resolve(root, dir)
}
