// User options of unplugin-cuda with their defaults (documented here, on the type, with @default), and
// their resolution against the project root.
import { statSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { createFilter, type FilterPattern } from '@rollup/pluginutils'
import { DECLARATION_FORMS, type DeclarationForm } from '@kernelpack/codegen'
import { parseArchSpec, parseCacheSize } from '@kernelpack/toolchain'

/** Extra outputs beside the offload binary. */
export type EmitKind = 'offload' | 'wrapper-c' | 'hostrefs'

/** Which of the emulator sanitizer's checks run, and whether a report throws or is collected. */
export interface CheckOptions {
  race?: boolean
  sync?: boolean
  init?: boolean
  memory?: boolean
  mode?: 'throw' | 'collect'
}
const CHECK_OPTION_KEYS = ['race', 'sync', 'init', 'memory', 'mode']

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
  /** Offload binaries up to this many bytes are inlined in the stub as base64 instead of emitted as an asset.
   *  @default Vite builds: `build.assetsInlineLimit` (Vite's 4096 unless set); other bundlers and Vite's dev server: 0 (never) */
  inline?: number
  /**
   * Output path of each offload binary, relative to the output folder: `[name]` is the .cu file's name without
   * `.cu`, `[hash]` 12 hex digits of the content's SHA-256 (`'kernels/[name].[hash].offload'`).
   * @default the bundler's asset naming: Vite/Rollup `assetFileNames` (`assets/[name]-[hash].offload`),
   * esbuild `[name].[hash].offload` beside the bundle, webpack/Rspack `output.assetModuleFilename`
   */
  fileName?: string
  /**
   * Backend the stubs ask for when `module.load()` names none. `'auto'`: in Node cuda where a driver answers,
   * else the emulator; in a browser WebGPU where the page has an adapter and every kernel translates, else the
   * emulator. `'webgpu'`: the page's GPU (`navigator.gpu`); in Node it needs the optional `webgpu` package
   * (Dawn) installed in the app. `mod.backend.reason` says which ran and why. @default 'auto'
   */
  backend?: BackendOption
  /**
   * Translate each file's PTX to WGSL at build time and ship it in the offload binary (issue 25): WebGPU then
   * loads neither the translator nor the PTX front end. A kernel that cannot run on WebGPU is a build warning
   * naming it, its `.cu` line (with `lineinfo`) or PTX line, and the reason; with `backend: 'webgpu'` it is an
   * error. @default true for `backend` `'webgpu'` and `'auto'` (without `check`), else false
   */
  wgsl?: boolean
  /**
   * The emulator's sanitizer for every stub's module (`loadModule`'s `check`, issue 19): `true` for racecheck,
   * synccheck, initcheck and memcheck, or `{ race, sync, init, memory, mode }`. It selects the emulator under
   * `'auto'`, and turns `lineinfo` on unless that is set, so reports name `.cu` lines. Without it,
   * `KERNELPACK_CHECK` decides when the app runs (Node). @default undefined
   */
  check?: boolean | CheckOptions
  /** Write each `.cu` file's declarations beside it so TypeScript types the imports: `true` or `'cu.d.ts'`
   *  writes `<name>.cu.d.ts` (moduleResolution `bundler`), `'d.cu.ts'` writes `<name>.d.cu.ts` (`node16`/`nodenext`,
   *  with `allowArbitraryExtensions`), `false` none. Same files as `kernelpack types [--form]`. @default true */
  dts?: boolean | DeclarationForm
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
  /** undefined: the bundler's default (Vite's assetsInlineLimit), else 0. */
  inline?: number
  fileName?: string
  backend: BackendOption
  wgsl: boolean
  check?: boolean | CheckOptions
  dts: DeclarationForm | false
  dtsScan: string[]
  jobs?: number
}

const EMIT_KINDS: EmitKind[] = ['offload', 'wrapper-c', 'hostrefs']

/** What `backend` takes: loadModule's backends (@kernelpack/runtime). */
export type BackendOption = 'auto' | 'cuda' | 'emulator' | 'webgpu'
const BACKENDS: BackendOption[] = ['auto', 'cuda', 'emulator', 'webgpu']

// Every key of Options (TypeScript checks the list is complete): anything else is a typo to report.
const OPTION_KEYS: Record<keyof Options, true> = {
  arch: true, compiler: true, include: true, exclude: true, defines: true, includeDirs: true, flags: true, std: true, rdc: true,
  lineinfo: true, cacheDir: true, cacheSize: true, launcher: true, emit: true, inline: true, fileName: true, backend: true, dts: true,
  dtsScan: true, jobs: true, check: true, wgsl: true,
}
const OPTION_NAMES = new Set(Object.keys(OPTION_KEYS))

function bad(option: string, what: string, got: unknown): TypeError {
  return new TypeError(`unplugin-cuda: option ${option} ${what}, got ${JSON.stringify(got)}`)
}

/** Checks what can be checked without running the compiler (issue 16: a bad option fails when the plugin is
 *  created, before any module is transformed): option names and types, the arch spec's syntax, a compiler
 *  path that does not exist, the fileName pattern. What needs the compiler (an arch it does not support) is
 *  checked at the start of the build (`checkToolchain` in context.ts). */
function validate(options: Options): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new TypeError(`unplugin-cuda: options must be an object, got ${JSON.stringify(options)}`)
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.has(key)) throw new TypeError(`unplugin-cuda: unknown option ${JSON.stringify(key)}; the options are ${[...OPTION_NAMES].join(', ')}`)
  }
  const { arch, compiler, fileName, launcher, jobs, dts } = options
  if (arch !== undefined) {
    if (!(typeof arch === 'string' || (Array.isArray(arch) && arch.every((a) => typeof a === 'string')))) throw bad('arch', 'must be a string or an array of strings', arch)
    // Syntax only: `native` is not probed here (that runs nvidia-smi), the compiler's own list comes at build start.
    try {
      parseArchSpec(arch, { native: () => [80] })
    } catch (err) {
      throw new TypeError(`unplugin-cuda: option arch: ${(err as Error).message}`)
    }
  }
  if (compiler !== undefined) {
    if (typeof compiler !== 'string' || compiler === '') throw bad('compiler', "must be 'nvcc', 'clang' or the path of one", compiler)
    // a relative path is checked at build start, against the bundler's root (not known yet)
    if (isAbsolute(compiler) && !isFile(compiler)) throw new TypeError(`unplugin-cuda: option compiler: '${compiler}' not found; pass 'nvcc', 'clang' or the path of one`)
  }
  if (fileName !== undefined) {
    if (typeof fileName !== 'string' || fileName === '') throw bad('fileName', "must be a path pattern such as 'kernels/[name].[hash].offload'", fileName)
    if (isAbsolute(fileName) || /^[A-Za-z]:/.test(fileName) || fileName.split(/[\\/]/).some((seg) => seg === '..' || seg === '')) {
      throw bad('fileName', 'must be a relative path inside the output folder, without .. or empty segments', fileName)
    }
  }
  if (launcher !== undefined && (typeof launcher !== 'string' || launcher === '')) throw bad('launcher', "must be a command such as 'ccache'", launcher)
  if (jobs !== undefined && (!Number.isInteger(jobs) || jobs < 1)) throw bad('jobs', 'must be a positive integer', jobs)
  const check = options.check
  if (check !== undefined && typeof check !== 'boolean') {
    if (check === null || typeof check !== 'object' || Array.isArray(check)) throw bad('check', 'must be true, false or { race, sync, init, memory, mode }', check)
    for (const [k, v] of Object.entries(check)) {
      if (!CHECK_OPTION_KEYS.includes(k)) throw bad('check', `has an unknown key ${JSON.stringify(k)} (use ${CHECK_OPTION_KEYS.join(', ')})`, check)
      if (k === 'mode' ? v !== 'throw' && v !== 'collect' : typeof v !== 'boolean') throw bad(`check.${k}`, k === 'mode' ? "must be 'throw' or 'collect'" : 'must be a boolean', v)
    }
  }
  if (dts !== undefined && typeof dts !== 'boolean' && !DECLARATION_FORMS.includes(dts)) throw bad('dts', `must be true, false, ${DECLARATION_FORMS.map((f) => `'${f}'`).join(' or ')}`, dts)
  for (const key of ['includeDirs', 'flags', 'dtsScan'] as const) {
    const v = options[key]
    if (v !== undefined && !(Array.isArray(v) && v.every((x) => typeof x === 'string'))) throw bad(key, 'must be an array of strings', v)
  }
}

function isFile(path: string): boolean {
  try { return statSync(path).isFile() } catch { return false }
}

/** Fills in defaults and checks option types; throws a TypeError naming the option on bad input. */
export function resolveOptions(options: Options = {}, root = process.cwd()): ResolvedOptions {
  validate(options)
  const emit = new Set<EmitKind>(['offload'])
  for (const e of options.emit ?? []) {
    if (!EMIT_KINDS.includes(e)) throw new TypeError(`unplugin-cuda: unknown emit kind ${JSON.stringify(e)}; use ${EMIT_KINDS.map((k) => `'${k}'`).join(', ')}`)
    emit.add(e)
  }
  const inline = options.inline
  if (inline !== undefined && (typeof inline !== 'number' || !(inline >= 0))) throw new TypeError(`unplugin-cuda: option inline must be a byte count >= 0, got ${JSON.stringify(inline)}`)
  const backend = options.backend ?? 'auto'
  if (!BACKENDS.includes(backend)) throw bad('backend', "must be 'auto', 'cuda', 'emulator' or 'webgpu' (loadModule's backends)", backend)
  const filter = createFilter(options.include ?? /\.cu$/, options.exclude)
  if (options.cacheSize !== undefined) {
    try {
      parseCacheSize(options.cacheSize)
    } catch (err) {
      throw new TypeError(`unplugin-cuda: option cacheSize: ${(err as Error).message}`)
    }
  }
  const dts = options.dts ?? true
  if (options.wgsl !== undefined && typeof options.wgsl !== 'boolean') throw bad('wgsl', 'must be true or false', options.wgsl)
  const checked = options.check !== undefined && options.check !== false
  return {
    root,
    arch: options.arch,
    compiler: options.compiler !== undefined && /[\\/]/.test(options.compiler) ? resolve(root, options.compiler) : options.compiler,
    filter: (id) => filter(stripQuery(id)),
    defines: normalizeDefines(options.defines),
    includeDirs: (options.includeDirs ?? []).map((d) => resolve(root, d)),
    flags: [...(options.flags ?? [])],
    std: options.std,
    rdc: options.rdc ?? false,
    // with checks on, reports name .cu lines: the PTX needs line information
    lineinfo: options.lineinfo ?? (options.check !== undefined && options.check !== false),
    cacheDir: resolveCacheDir(options.cacheDir ?? process.env.KERNELPACK_CACHE_DIR, root),
    cacheSize: options.cacheSize,
    launcher: options.launcher,
    emit,
    inline,
    fileName: options.fileName,
    backend,
    wgsl: options.wgsl ?? (backend === 'webgpu' || (backend === 'auto' && !checked)),
    ...(options.check === undefined ? {} : { check: options.check }),
    dts: dts === true ? 'cu.d.ts' : dts,
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
