// buildCudaFile: every target of one .cu file through the shared pool and the disk cache, the kernel
// manifest from a PTX, and the images packed as an LLVM offload binary (DESIGN.md, "Data flow").
import { existsSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve, sep } from 'node:path'
import type { KernelManifest } from '@kernelpack/offload'
import { DEFAULT_ARCH, parseArchSpec, sortTargets, type Target } from './arch-spec.js'
import { BuildSession, CompileCache, hashDependency, sha256, type CacheEntry, type DepRecord } from './cache.js'
import { resolveCacheSize } from './cache-size.js'
import { assembleArgs, assembleCubin, assemblesFromPtx, compileFile, compileHostTypes, compileTarget, hostTypesArgs, keyArgs, nvccThreads, unreadableDepsWarning, type FileCompileOutput, type ResolvedCompileOptions } from './compile.js'
import { dedupeDiagnostics } from './diagnostics.js'
import { CompileError, ToolchainError, type Diagnostic } from './errors.js'
import { findCompiler, type CompilerInfo } from './find-compiler.js'
import { packImages, type WgslPackable } from './pack.js'
import { ptxText, readableName } from '@kernelpack/ptx'
import type { Untranslatable } from '@kernelpack/webgpu'
import { compilePool, Pool } from './pool.js'
import { readPtxManifest } from './ptx-manifest.js'
import { processWorkDir } from './scratch.js'
import { mayTakeAggregates, nameKernelParams } from './param-names.js'
import { droppedStaticVariables } from './static-variables.js'
import { parseReadelfInfo } from './dwarf-text.js'
import { deviceCMangledNames, hasAggregateParams, ParamTypeMismatch, paramTypeNotes, readParamTypes, withParamTypes, type DeviceCNames, type ParamTypes } from './param-types.js'
import { deviceCDebugInfo } from './device-c.js'
import { demangleNames } from './demangle.js'

export interface BuildOptions {
  /** GPU targets, CMake CUDA_ARCHITECTURES or nvcc syntax (`'80'`, `'80-real;90'`, `['sm_90a', 'compute_90']`).
   * @default DEFAULT_ARCH ('80': sm_80 cubin + compute_80 PTX) */
  arch?: string | string[]
  /** `'nvcc'`, `'clang'` or the path of a compiler executable.
   * @default nvcc when one is found, else clang */
  compiler?: 'nvcc' | 'clang' | (string & {})
  /** `-I` directories, relative to `cwd`. @default [] */
  includeDirs?: string[]
  /** `-D` macros: `true` → `-DNAME`, `false` → `-UNAME`, anything else → `-DNAME=value`. @default {} */
  defines?: Record<string, string | number | boolean>
  /** Extra compiler arguments, passed as they are (after the generated ones). @default [] */
  flags?: string[]
  /** C++ standard (`c++17`, `c++20`). @default the compiler's */
  std?: string
  /** Relocatable device code (`-rdc=true` / `-fgpu-rdc`). @default false */
  rdc?: boolean
  /** Line information for profilers (`-lineinfo` / `-gline-tables-only`). @default false */
  lineinfo?: boolean
  /** Device debug information, no optimisation (`-G` / `-g --cuda-noopt-device-debug`). @default false */
  debug?: boolean
  /** Device optimisation level (nvcc: `-Xptxas=-O<n>` for cubins; clang: `-O<n>`). @default 3 */
  optimize?: 0 | 1 | 2 | 3
  /** Cache directory, or `false` for none. @default $KERNELPACK_CACHE_DIR, else <cwd>/node_modules/.cache/kernelpack */
  cacheDir?: string | false
  /** Size limit of the compile cache, least recently used entries evicted beyond it (ccache's max_size): bytes,
   * or a string with a k/M/G/T or Ki/Mi/Gi/Ti suffix (`'500M'`, `'2G'`); 0 for no limit.
   * @default $KERNELPACK_CACHE_SIZE, else 1 GiB (DEFAULT_CACHE_SIZE) */
  cacheSize?: number | string
  /** A compiler launcher put in front of the compiler, like CMAKE_CUDA_COMPILER_LAUNCHER (`ccache`, `sccache`).
   * @default none */
  launcher?: string | string[]
  /** Compiler processes this build runs at once: a number for this call, or a Pool shared by several calls
   * (the CLI passes one for all its files). All builds of a process together run at most
   * os.availableParallelism() ($KERNELPACK_JOBS), unless a larger number is asked for here (for a
   * distributed launcher such as sccache), which raises that cap. @default os.availableParallelism() */
  jobs?: number | Pool
  /** Directory relative paths are resolved against; the compiler runs there. @default process.cwd() */
  cwd?: string
  /** Shares stat results among the builds of one run (see BuildSession); create one per build, never reuse
   * it across rebuilds. @default a new one per call */
  session?: BuildSession
  /** Compile only the PTX the kernel manifest is read from (the requested virtual target, else compute_XY of
   *  the lowest arch): what declaration files need (`kernelpack types`). The result then has no images and
   *  an empty offload binary. @default false */
  manifestOnly?: boolean
  /** Also translate the PTX to WGSL for the webgpu backend and ship it in the offload binary as an image of its
   *  own (issue 25; @kernelpack/webgpu's wgsl-image.ts): a page running WebGPU then loads neither the
   *  translator nor the PTX front end. The newest PTX image is translated (the manifest's PTX when the build has
   *  only cubins). Kernels that cannot run on WebGPU are in the result's `webgpuRefused`. @default false */
  wgsl?: boolean
  /** Called as each target finishes. */
  onProgress?: (e: { file: string; target: string; cached: boolean }) => void
}

export interface DeviceImage {
  /** The target built: `sm_90` (cubin), `compute_90` (PTX), `sm_90a`, … */
  target: string
  /** The GPU architecture (`sm_90` for both `sm_90` and `compute_90`): the image's `arch` string. */
  arch: string
  kind: 'cubin' | 'ptx'
  bytes: Uint8Array
  /** True when it came from the disk cache. */
  cached: boolean
}

export interface BuildResult {
  /** Absolute path of the source. */
  file: string
  /** Base name without `.cu` (`vecadd`). */
  name: string
  /** The LLVM offload binary (version 1, one binary per image, concatenated, in target order). */
  offload: Uint8Array
  manifest: KernelManifest
  images: DeviceImage[]
  /** The source and every file it includes, absolute (for watch mode). */
  dependencies: string[]
  /** Compiler warnings (and notes), deduplicated across targets. */
  warnings: Diagnostic[]
  /** With `wgsl`: each kernel that cannot run on WebGPU, as a warning at its `.cu` line (with line information)
   *  or at the file, naming the kernel, the PTX line and the reason. The plugin makes them errors for
   *  `backend: 'webgpu'`. */
  webgpuRefused?: Diagnostic[]
  stats: { compiles: number; cacheHits: number; ms: number }
}

interface TargetResult extends CacheEntry {
  cached: boolean
  /** The results this one was made from (a cubin's PTX). */
  steps?: TargetResult[]
}

/** Compiles in flight in this process, by input key: the same compile asked for twice runs once. */
const inFlight = new Map<string, Promise<TargetResult>>()

/** Cache lookups one build has already started (planFileCompile's), by input key, each for one taker. */
type Lookups = Map<string, Promise<CacheEntry | undefined>>
function take(lookups: Lookups | undefined, key: string): Promise<CacheEntry | undefined> | undefined {
  const p = lookups?.get(key)
  lookups?.delete(key)
  return p
}

/** Whole-file compiles in flight (compileFile), under the input key of each PTX they make. */
const fileCompiles = new Map<string, Promise<FileCompileOutput>>()

/** Each compile of planFileCompile to what the file's compiles share: when all of them have ended, and the
 *  dependency records taken then, by path (groupHash). */
const fileGroups = new WeakMap<Promise<FileCompileOutput>, { ended: Promise<unknown>; hashes: Map<string, ReturnType<typeof hashDependency>> }>()

/** hashDependency once per file compile and path, once every front end of the file has ended: their
 *  dependency lists share most files (the toolkit's headers), and a stat taken after them all serves each of
 *  their outputs alike. */
function groupHash(group: Promise<FileCompileOutput>, path: string): ReturnType<typeof hashDependency> {
  const g = fileGroups.get(group)!
  let h = g.hashes.get(path)
  if (!h) g.hashes.set(path, (h = g.ended.then(() => hashDependency(path))))
  return h
}

/** Environment variables that change what nvcc or clang compile. */
const keyEnv = ['NVCC_PREPEND_FLAGS', 'NVCC_APPEND_FLAGS', 'CPATH', 'CPLUS_INCLUDE_PATH', 'C_INCLUDE_PATH', 'NVCC_CCBIN']

function inputKeyOf(compiler: CompilerInfo, target: Target, o: ResolvedCompileOptions, file: string): string {
  return sha256(JSON.stringify({
    v: 1, compiler: compiler.identity, target: target.target, file, cwd: o.cwd,
    args: keyArgs(compiler, target, o, file), env: keyEnv.map((k) => process.env[k] ?? null),
  }))
}

function defaultCacheDir(cwd: string): string {
  return process.env.KERNELPACK_CACHE_DIR ? resolve(cwd, process.env.KERNELPACK_CACHE_DIR) : join(cwd, 'node_modules', '.cache', 'kernelpack')
}

/** Files whose stat changed after the compile started may have been read half-edited: not cached (as
 *  ccache does for files newer than the compile). */
function changedSince(start: number, deps: DepRecord[]): boolean {
  return deps.some((d) => {
    const [, mtime, ctime] = d.sig.split(':')
    return Number(mtime) >= start || Number(ctime) >= start
  })
}

async function buildTarget(
  compiler: CompilerInfo, target: Target, file: string, o: ResolvedCompileOptions, cache: CompileCache | undefined, wantManifest: boolean,
  session: BuildSession, limiter: Pool | undefined, lookups?: Lookups,
): Promise<TargetResult> {
  const key = inputKeyOf(compiler, target, o, file)
  let p = inFlight.get(key)
  if (!p) {
    p = (async (): Promise<TargetResult> => {
      const hit = cache ? await (take(lookups, key) ?? cache.lookup(key, session)) : undefined
      if (hit) {
        // a PTX cached by a build that did not read its manifest (it fed only a cubin): read it now, keep it
        if (wantManifest && target.kind === 'ptx' && !hit.manifest) {
          hit.manifest = await manifestOf(file, target, hit.bytes)
          const { records, ...entry } = hit
          if (records) await cache!.store(key, records, entry).catch(() => {})
        }
        return { ...hit, cached: true }
      }
      const start = Date.now() - 1 // mtimes have coarser clocks on some filesystems
      const group = fileCompiles.get(key)
      // the front ends of one whole-file compile read nearly the same files: each is stat'ed and hashed once for
      // all of them, after that compile (as fresh as a stat of each target's own would be)
      const hashOf = group ? (d: string) => groupHash(group, d) : (d: string) => hashDependency(d)
      const out = group ? await group.then((g) => ({ bytes: g.ptx.get(target.target)!, deps: g.deps.get(target.target)!, warnings: g.warnings }))
        : await inPools(limiter, 1, (release) => compileTarget(compiler, target, file, o, release))
      const entry: CacheEntry = { bytes: out.bytes, deps: out.deps, warnings: out.warnings }
      // The PTX the manifest is read from carries it, read once here, so that a warm build spawns no process
      // at all; a PTX that only feeds ptxas is not read (a parse and a c++filt process saved per file).
      if (target.kind === 'ptx' && wantManifest) entry.manifest = await manifestOf(file, target, out.bytes)
      // Hash what the compile read (fresh stats, not the session's: they must describe the files as they
      // are now). A listed file that does not exist means the list cannot be trusted: no cache entry.
      const records: DepRecord[] = []
      let complete = true
      for (const d of out.deps) {
        const h = cache ? await hashOf(d) : existsSync(d) ? { hash: '', sig: '' } : undefined
        if (!h) { complete = false; continue }
        records.push({ path: d, hash: h.hash, sig: h.sig })
      }
      entry.deps = records.map((r) => r.path)
      if (!complete) entry.warnings = [...entry.warnings, unreadableDepsWarning(compiler, file)]
      if (cache && complete && !changedSince(start, records)) await cache.store(key, records, entry).catch(() => {})
      return { ...entry, cached: false }
    })()
    inFlight.set(key, p)
    const clear = () => { if (inFlight.get(key) === p) inFlight.delete(key) }
    p.then(clear, clear)
  }
  const r = await p
  // shared with a build of another arch set that did not want this PTX's manifest
  if (wantManifest && !r.manifest) r.manifest = await manifestOf(file, target, r.bytes)
  return r
}

async function manifestOf(file: string, target: Target, ptx: Uint8Array): Promise<KernelManifest> {
  try {
    return await readPtxManifest(new TextDecoder().decode(ptx))
  } catch (err) {
    throw new ToolchainError(`${file}: cannot read the kernel manifest from the ${target.target} PTX the compiler wrote: ${(err as Error).message}. ` +
      'This is a kernelpack bug; please report it with the .cu file and the compiler version.')
  }
}

/** The virtual architecture whose PTX a real target's cubin is assembled from (`sm_90a` ← `compute_90a`). */
function virtualOf(t: Target): Target {
  return { target: `compute_${t.sm}${t.suffix}`, arch: t.arch, kind: 'ptx', sm: t.sm, suffix: t.suffix }
}

/**
 * A real target's cubin assembled from the PTX of its virtual architecture (nvcc's plan: one front end per
 * virtual architecture, ptxas per real one). The PTX is the same compile, with the same key and cache entry,
 * as that virtual target's own image, so `'90'` (sm_90 + compute_90) runs the front end once and a target
 * added to a warm cache runs only ptxas. The cubin is cached under the PTX's content hash and ptxas's
 * arguments: a source edit that leaves the PTX as it was (a comment) assembles nothing. Its dependencies and
 * warnings are the front end's (reported once however many real targets share it) plus ptxas's own.
 */
async function buildCubin(
  compiler: CompilerInfo, target: Target, file: string, o: ResolvedCompileOptions, cache: CompileCache | undefined,
  session: BuildSession, limiter: Pool | undefined, manifestTarget: Target, lookups: Lookups,
): Promise<TargetResult> {
  const virtual = virtualOf(target)
  const ptx = await buildTarget(compiler, virtual, file, o, cache, virtual.target === manifestTarget.target, session, limiter, lookups)
  const key = sha256(JSON.stringify({
    v: 1, step: 'ptxas', compiler: compiler.identity, target: target.target, ptx: sha256(ptx.bytes),
    args: compiler.kind === 'nvcc' ? assembleArgs(target, { ...o, launcher: undefined }, { input: '<in>', output: '<out>' }) : keyArgs(compiler, target, o, file),
    env: keyEnv.map((k) => process.env[k] ?? null),
  }))
  let p = inFlight.get(key)
  if (!p) {
    p = (async (): Promise<TargetResult> => {
      const hit = cache ? await cache.lookup(key, session, { contentKeyed: true }) : undefined
      if (hit) return { ...hit, deps: ptx.deps, warnings: dedupeDiagnostics([...ptx.warnings, ...hit.warnings]), cached: true, steps: [ptx] }
      // made by the whole-file compile that made this PTX
      const group = await fileCompiles.get(inputKeyOf(compiler, virtual, o, file))
      const made = group && sameBytes(group.ptx.get(virtual.target), ptx.bytes) ? group.cubins.get(target.target) : undefined
      const out = made ? { bytes: made, warnings: [] } : await inPools(limiter, 1, (release) => assembleCubin(compiler, target, file, ptx.bytes, o, release))
      const entry: CacheEntry = { bytes: out.bytes, deps: [], warnings: out.warnings }
      if (cache) await cache.store(key, [], entry).catch(() => {})
      return { ...entry, deps: ptx.deps, warnings: dedupeDiagnostics([...ptx.warnings, ...out.warnings]), cached: false, steps: [ptx] }
    })()
    inFlight.set(key, p)
    const clear = () => { if (inFlight.get(key) === p) inFlight.delete(key) }
    p.then(clear, clear)
  }
  return p
}

/** Runs a compile within the build's own bound (`jobs`), if it has one, and the pool every build shares;
 *  `release` frees both as soon as its process has ended (its outputs are read after). */
function inPools<T>(limiter: Pool | undefined, slots: number, task: (release: () => void) => Promise<T>): Promise<T> {
  const shared = (outer?: () => void) => compilePool.run((release) => task(() => { release(); outer?.() }), slots)
  return limiter ? limiter.run((release) => shared(release), slots) : shared()
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return !!a && a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
}

/**
 * A file none of whose PTX is cached or in flight is compiled by one nvcc process per virtual architecture
 * (compileFile: its front end, then ptxas for each real target of it, the steps `nvcc -fatbin` with every
 * -gencode runs one after another), side by side in the pool, or by one nvcc under --threads; the outputs go
 * through buildTarget/buildCubin as if each step had run, cached per step. Later builds that
 * add a target run only the steps it needs. Not for clang (one cc1 per arch either way), a launcher (it is
 * given one compile per step), -G (ptxas writes its temporary file's name into the cubin) or when only one
 * step is needed and the source declares no struct parameters (whose layouts come from the C the front end
 * of `manifestTarget` writes, device-c.ts). Returns the keys to release when the build is done. The cache
 * lookups it makes are left in `lookups` for the steps, which would otherwise make them again.
 */
async function planFileCompile(
  compiler: CompilerInfo, all: Target[], manifestTarget: Target, file: string, o: ResolvedCompileOptions, cache: CompileCache | undefined,
  session: BuildSession, limiter: Pool | undefined, lookups: Lookups,
): Promise<string[]> {
  if (compiler.kind !== 'nvcc' || o.launcher || o.debug || !file.endsWith('.cu') || processWorkDir().includes(',')) return []
  const reals = all.filter((t) => t.kind === 'cubin')
  const virtuals = sortTargets([...all.filter((t) => t.kind === 'ptx'), ...reals.map(virtualOf)])
  // one step alone is one process either way, unless the device front end's C is wanted (struct layouts)
  if (virtuals.length + reals.length < 2 && !mayTakeAggregates(file)) return []
  const keys = virtuals.map((v) => inputKeyOf(compiler, v, o, file))
  if (keys.some((k) => inFlight.has(k) || fileCompiles.has(k))) return []
  if (cache) {
    for (const k of keys) lookups.set(k, cache.lookup(k, session))
    if ((await Promise.all(keys.map((k) => lookups.get(k)))).some(Boolean)) return []
  }
  if (keys.some((k) => inFlight.has(k) || fileCompiles.has(k))) return [] // another build got there meanwhile
  // nvcc --threads N runs up to N of its steps at once: as many slots of the pool (issue 27 item 5)
  const slots = nvccThreads(o.flags, virtuals.length, (limiter ?? compilePool).limit)
  const compile = (vs: Target[], release: () => void) =>
    compileFile(compiler, vs, reals.filter((r) => vs.some((v) => v.target === virtualOf(r).target)), file, o, manifestTarget.target, release)
  // One process per virtual architecture (its front end, then ptxas for its real targets), each in a slot of
  // its own: what nvcc -fatbin runs one after another, the pool runs side by side, so that the last file of a
  // build is not one process on one core while the other cores idle. Under --threads, one nvcc runs them all.
  const pieces = slots > 1 ? [virtuals] : virtuals.map((v) => [v])
  const groups = pieces.map((vs) => inPools(limiter, slots, (release) => compile(vs, release)))
  // the dependencies of the file's front ends are hashed once all of them have ended (groupHash)
  const shared = { ended: Promise.allSettled(groups), hashes: new Map() }
  groups.forEach((group, i) => {
    group.catch(() => {}) // its steps report the error
    fileGroups.set(group, shared)
    for (const v of pieces[i]!) fileCompiles.set(keys[virtuals.indexOf(v)]!, group)
  })
  return keys
}

/** Where one build reads the layouts of by-value struct parameters from (param-types.ts): started early,
 *  finished once the manifest says which kernels take aggregates. */
interface TypesJob {
  /** The cached types (a warm build), or a DWARF dump made now (of the device front end's C, or of a host
   *  compile), or why there is none. */
  result: Promise<{ cached: ParamTypes } | { dump: string; deps: string[]; start: number; deviceC: boolean } | { note: string }>
  key: string
  /** The host compile, for device-front-end C whose layouts disagree with the PTX or that lacks a kernel. */
  fallback?: () => TypesJob
}

/** Type jobs in flight, by key. */
const typesInFlight = new Map<string, TypesJob['result']>()

function typesKey(step: string, compiler: CompilerInfo, target: Target, file: string, o: ResolvedCompileOptions, args: string[]): string {
  return sha256(JSON.stringify({ v: 2, step, compiler: compiler.identity, target: target.target, file, cwd: o.cwd, args, env: keyEnv.map((k) => process.env[k] ?? null) }))
}

/** One job per key and process: a cache lookup, else `make()`. */
function typesJob(key: string, cache: CompileCache | undefined, session: BuildSession, make: () => TypesJob['result']): TypesJob['result'] {
  let result = typesInFlight.get(key)
  if (!result) {
    result = (async () => {
      const hit = cache ? await cache.lookup(key, session) : undefined
      if (hit) return { cached: { kernels: new Map(JSON.parse(new TextDecoder().decode(hit.bytes)) as Array<[string, never]>) } as ParamTypes }
      return make()
    })()
    typesInFlight.set(key, result)
    const r = result
    const clear = () => { if (typesInFlight.get(key) === r) typesInFlight.delete(key) }
    r.then(clear, clear)
  }
  return result
}

/** A failed compile's first error, for a note. */
function firstError(err: unknown): string {
  const first = err instanceof CompileError ? err.diagnostics.find((d) => d.severity === 'error') : undefined
  return first ? `${first.file}:${first.line}:${first.column}: ${first.message}` : (err as Error).message
}

/**
 * Starts finding the C++ layouts of by-value struct/array parameters (param-types.ts), keyed by the compile's
 * inputs (the manifest the layouts are matched against is a function of the same inputs):
 *  - nvcc: from the C its device front end wrote for the manifest's virtual architecture (device-c.ts), taken
 *    from the whole-file compile `group` when the build runs one, else from a front-end-only compile of that
 *    architecture; the host compile stays the fallback;
 *  - clang: a host compile with -g.
 * buildCudaFile starts it beside the device compiles when the source may declare such parameters
 * (mayTakeAggregates) and no whole-file compile is at hand, else once the manifest shows some.
 */
function startTypes(
  compiler: CompilerInfo, target: Target, file: string, o: ResolvedCompileOptions, cache: CompileCache | undefined, session: BuildSession,
  group?: Promise<FileCompileOutput>,
): TypesJob {
  const host = () => startHostTypes(compiler, target, file, o, cache, session)
  if (compiler.kind !== 'nvcc') return host()
  const key = typesKey('device-c-types', compiler, target, file, o, keyArgs(compiler, target, o, file))
  const result = typesJob(key, cache, session, async () => {
    const start = Date.now() - 1
    let made = group ? await group.catch(() => undefined) : undefined
    try {
      if (!made?.deviceC.has(target.target)) {
        made = await compilePool.run((release) => compileFile(compiler, [target], [], file, { ...o, debug: false, launcher: undefined }, target.target, release))
      }
    } catch (err) {
      return { note: `the device front end's compile that the struct layouts are read from failed (${firstError(err)})` }
    }
    const deps = made.deps.get(target.target) ?? [file]
    // the toolkit's headers as the front end found them (nvcc includes cuda_runtime.h in every compile; an
    // nvcc on PATH may be a wrapper script away from its toolkit)
    const runtimeHeader = deps.find((d) => basename(d) === 'cuda_runtime.h')
    try {
      if (!runtimeHeader) throw new ToolchainError('the front end read no cuda_runtime.h')
      const dump = await deviceCDebugInfo(made.deviceC.get(target.target) ?? '', dirname(runtimeHeader), processWorkDir())
      return { dump, deps, start, deviceC: true }
    } catch {
      return host().result
    }
  })
  return { result, key, fallback: host }
}

/** The host compile with -g (hostTypesArgs) and its DWARF. */
function startHostTypes(
  compiler: CompilerInfo, target: Target, file: string, o: ResolvedCompileOptions, cache: CompileCache | undefined, session: BuildSession,
): TypesJob {
  const key = typesKey('host-types', compiler, target, file, o, hostTypesArgs(compiler, target, o, { input: file, output: '<out>', depfile: '<deps>', includeDirs: o.includeDirs }))
  const result = typesJob(key, cache, session, async () => {
    const start = Date.now() - 1
    try {
      const out = await compilePool.run((release) => compileHostTypes(compiler, target, file, o, release))
      return { dump: out.dump, deps: out.deps, start, deviceC: false }
    } catch (err) {
      return { note: `the host compile with -g that the struct layouts are read from failed (${firstError(err)})` }
    }
  })
  return { result, key }
}

/** The demangled names of a device-C object's types. */
async function deviceCNames(info: ReturnType<typeof parseReadelfInfo>): Promise<DeviceCNames> {
  const mangled = deviceCMangledNames(info)
  const plain = await demangleNames(mangled)
  return new Map(mangled.map((m, i) => [m, plain[i]!]))
}

/**
 * The manifest with the C++ layout of every by-value struct/array parameter, from `job` (startTypes).
 * Files without such parameters need nothing. A compile that failed leaves those parameters as bytes with a
 * note saying why; a layout that disagrees with the PTX is a ToolchainError naming the type (after the host
 * compile, where the device front end's C disagreed first: its C spells `__int128` as `long long`).
 */
async function withCompilerParamTypes(job: TypesJob, file: string, cache: CompileCache | undefined, manifest: KernelManifest): Promise<KernelManifest> {
  return withParamTypes(manifest, await paramTypesOf(job, file, cache, manifest))
}

async function paramTypesOf(job: TypesJob, file: string, cache: CompileCache | undefined, manifest: KernelManifest): Promise<ParamTypes | { note: string }> {
  const r = await job.result
  if ('cached' in r) return r.cached
  if ('note' in r) return r
  let types: ParamTypes
  try {
    const info = parseReadelfInfo(r.dump)
    types = readParamTypes(info, manifest, r.deviceC ? await deviceCNames(info) : undefined)
  } catch (err) {
    if (err instanceof ParamTypeMismatch && r.deviceC && job.fallback) {
      const host = await paramTypesOf(job.fallback(), file, cache, manifest)
      // the same answer for these inputs next time, without the device front end's C
      if ('kernels' in host) await storeTypes(job, r, cache, host)
      return host
    }
    if (err instanceof ParamTypeMismatch) throw new ToolchainError(`${file}: ${err.message}; the host and device compiles disagree on the type's layout (different macros or packing for the host?)`)
    throw err
  }
  await storeTypes(job, r, cache, types)
  return types
}

async function storeTypes(job: TypesJob, r: { deps: string[]; start: number }, cache: CompileCache | undefined, types: ParamTypes): Promise<void> {
  if (cache) {
    const records: DepRecord[] = []
    for (const d of r.deps) {
      const h = await hashDependency(d)
      if (h) records.push({ path: d, hash: h.hash, sig: h.sig })
    }
    if (records.length === r.deps.length && !changedSince(r.start, records)) {
      const bytes = new TextEncoder().encode(JSON.stringify([...types.kernels]))
      await cache.store(job.key, records, { bytes, deps: r.deps, warnings: [] }).catch(() => {})
    }
  }
}

/** Every compiler process behind these results, once each (a PTX shared by several cubins counts once). */
function stepsOf(results: TargetResult[]): TargetResult[] {
  const all = new Set<TargetResult>()
  const add = (r: TargetResult) => { all.add(r); r.steps?.forEach(add) }
  results.forEach(add)
  return [...all]
}

/** `sm_80` for the manifest when only real targets were asked for: PTX of the lowest one. */
function manifestTargetFor(targets: Target[]): { target: Target; extra: boolean } {
  const ptx = targets.find((t) => t.kind === 'ptx')
  if (ptx) return { target: ptx, extra: false }
  const low = targets[0]!
  const suffix = low.suffix
  return { target: { target: `compute_${low.sm}${suffix}`, arch: low.arch, kind: 'ptx', sm: low.sm, suffix }, extra: true }
}

/** Texts of the .cu file and the project's own headers (not the toolkit's or the system's), where the
 *  kernels' parameter names are read from (param-names.ts). */
function ownSources(file: string, dependencies: readonly string[], cwd: string, compiler: CompilerInfo): Array<[string, string]> {
  const under = (p: string, dir: string | undefined) => !!dir && p.startsWith(dir.endsWith(sep) ? dir : dir + sep)
  const own = dependencies.filter((d) => d === file || ((under(d, cwd) || under(d, dirname(file))) &&
    !under(d, '/usr') && !under(d, compiler.cudaPath) && !d.includes(`${sep}node_modules${sep}`)))
  return own.flatMap((d): Array<[string, string]> => { try { return [[d, readFileSync(d, 'utf8')]] } catch { return [] } })
}

/**
 * The compiler a build would use and the targets its arch spec means for that compiler; throws the
 * ToolchainError a build would (no compiler, an arch it does not support) without compiling anything.
 * For tools that check their configuration before the first file (the bundler plugin's build start).
 */
export async function resolveTargets(options: Pick<BuildOptions, 'arch' | 'compiler' | 'cacheDir' | 'cwd'> = {}): Promise<{ compiler: CompilerInfo; targets: Target[] }> {
  const cwd = resolve(options.cwd ?? process.cwd())
  const cacheDir = options.cacheDir === false ? undefined : resolve(cwd, options.cacheDir ?? defaultCacheDir(cwd))
  const compilerName = options.compiler && /[\\/]/.test(options.compiler) ? resolve(cwd, options.compiler) : options.compiler
  const compiler = await findCompiler(compilerName, cacheDir ? { cacheDir } : {})
  // nvcc reports what it supports (--list-gpu-code); clang's list depends on the toolkit it is paired
  // with, so clang itself judges the targets and its list only gives `all` / `all-major` a meaning.
  const targets = parseArchSpec(options.arch ?? DEFAULT_ARCH, compiler.kind === 'nvcc' ? { supported: compiler.archs } : { all: compiler.archs })
  return { compiler, targets }
}

/** Resolves options to absolute paths and defaults (shared by the CLI's messages and the cache key). */
export function resolveOptions(options: BuildOptions): ResolvedCompileOptions {
  const cwd = resolve(options.cwd ?? process.cwd())
  const launcher = options.launcher === undefined || options.launcher === '' ? undefined : Array.isArray(options.launcher) ? options.launcher : [options.launcher]
  const o: ResolvedCompileOptions = {
    cwd,
    includeDirs: (options.includeDirs ?? []).map((d) => resolve(cwd, d)),
    defines: Object.entries(options.defines ?? {}),
    flags: [...(options.flags ?? [])],
    rdc: options.rdc ?? false,
    lineinfo: options.lineinfo ?? false,
    debug: options.debug ?? false,
  }
  if (options.std) o.std = options.std
  if (options.optimize !== undefined) {
    if (![0, 1, 2, 3].includes(options.optimize)) throw new ToolchainError(`optimize must be 0, 1, 2 or 3, not ${String(options.optimize)}`)
    o.optimize = options.optimize
  }
  if (launcher && launcher.length) o.launcher = launcher
  return o
}

/**
 * Compiles one .cu file for every target (compiles shared with other builds in flight and cached on disk),
 * reads the kernel manifest from a PTX (the requested virtual target, else an extra cached PTX compile of
 * the lowest arch) and packs the images into an offload binary. Throws a CompileError with the compiler's
 * diagnostics, or a ToolchainError for setup problems.
 */
export async function buildCudaFile(file: string, options: BuildOptions = {}): Promise<BuildResult> {
  const t0 = performance.now()
  const o = resolveOptions(options)
  const abs = resolve(o.cwd, file)
  if (!existsSync(abs) || !statSync(abs).isFile()) throw new ToolchainError(`cannot read ${abs}: no such file`)
  let limiter: Pool | undefined
  if (options.jobs instanceof Pool) limiter = options.jobs
  else if (options.jobs !== undefined) {
    if (!Number.isInteger(options.jobs) || options.jobs < 1) throw new ToolchainError(`jobs must be a positive integer, not ${String(options.jobs)}`)
    limiter = new Pool(options.jobs)
  }
  if (limiter && limiter.limit > compilePool.limit) compilePool.limit = limiter.limit
  const cacheDir = options.cacheDir === false ? undefined : resolve(o.cwd, options.cacheDir ?? defaultCacheDir(o.cwd))
  const { compiler, targets } = await resolveTargets({ ...options, cacheDir: cacheDir ?? false })
  const cache = cacheDir ? new CompileCache(cacheDir, { maxSize: resolveCacheSize(options.cacheSize) }) : undefined
  const session = options.session ?? new BuildSession()
  const { target: mTarget, extra } = manifestTargetFor(targets)
  const all = options.manifestOnly ? [mTarget] : extra ? sortTargets([...targets, mTarget]) : targets
  const fromPtx = assemblesFromPtx(o)
  const lookups: Lookups = new Map()
  const grouped = fromPtx && !options.manifestOnly ? await planFileCompile(compiler, all, mTarget, abs, o, cache, session, limiter, lookups) : []
  // the whole-file compile, whose device front end's C has the struct layouts (nvcc); without one, the
  // layouts' own compile starts beside the device compiles when the source may need it
  const group = grouped.length ? fileCompiles.get(inputKeyOf(compiler, mTarget, o, abs)) : undefined
  const early = !group && mayTakeAggregates(abs) ? startTypes(compiler, mTarget, abs, o, cache, session) : undefined
  const settled = await Promise.allSettled(all.map(async (t) => {
    const r = t.kind === 'cubin' && fromPtx ? await buildCubin(compiler, t, abs, o, cache, session, limiter, mTarget, lookups)
      : await buildTarget(compiler, t, abs, o, cache, t === mTarget, session, limiter, lookups)
    options.onProgress?.({ file: abs, target: t.target, cached: r.cached })
    return r
  }))
  for (const k of grouped) fileCompiles.delete(k)
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) {
    const err = failed.reason
    if (err instanceof CompileError || err instanceof ToolchainError) throw err
    throw err instanceof Error ? err : new Error(String(err))
  }
  const results = settled.map((s) => (s as PromiseFulfilledResult<TargetResult>).value)
  const byTarget = new Map(all.map((t, i) => [t.target, results[i]!]))
  const images: DeviceImage[] = options.manifestOnly ? [] : targets.map((t) => {
    const r = byTarget.get(t.target)!
    return { target: t.target, arch: t.arch, kind: t.kind, bytes: r.bytes, cached: r.cached }
  })
  const producer = `${compiler.kind} ${compiler.version}`
  const read = byTarget.get(mTarget.target)!.manifest!
  const dependencies = [abs, ...[...new Set(results.flatMap((r) => r.deps))].filter((d) => d !== abs).sort()]
  const own = ownSources(abs, dependencies, o.cwd, compiler)
  const named: KernelManifest = nameKernelParams({
    version: 1,
    source: basename(abs),
    producer,
    targets: images.map((i) => ({ arch: i.target, kind: i.kind, size: i.bytes.length })),
    kernels: read.kernels,
    variables: read.variables,
  }, own.map(([, text]) => text))
  const manifest = hasAggregateParams(named)
    ? await withCompilerParamTypes(early ?? startTypes(compiler, mTarget, abs, o, cache, session, group), abs, cache, named)
    : named
  // started for nothing (the guess was wrong): remember that there is nothing to read, without waiting
  if (early && manifest === named) void withCompilerParamTypes(early, abs, cache, named).catch(() => {})
  const warnings = dedupeDiagnostics(results.flatMap((r) => r.warnings))
  // by-value aggregates whose C++ layout could not be read: they take bytes; say why
  for (const note of paramTypeNotes(manifest)) warnings.push({ file: abs, line: 0, column: 0, severity: 'note', message: note })
  // clang removes static device variables only host code writes: say which, where, and the fix
  if (compiler.kind === 'clang') warnings.push(...droppedStaticVariables(own, manifest))
  const steps = stepsOf(results)
  const compiles = steps.filter((r) => !r.cached).length
  const shipped = options.wgsl && images.length ? await wgslFor(images, byTarget.get(mTarget.target)!.bytes, mTarget.target, abs) : undefined
  // kernels WebGPU runs with f64 in software: a warning (they run, slowly)
  if (shipped) warnings.push(...shipped.notes)
  return {
    file: abs,
    name: basename(abs).replace(/\.cu$/i, ''),
    offload: images.length ? packImages(images, producer, shipped?.image) : new Uint8Array(0),
    manifest,
    images,
    dependencies,
    warnings,
    ...(shipped ? { webgpuRefused: shipped.refused } : {}),
    stats: { compiles, cacheHits: steps.length - compiles, ms: performance.now() - t0 },
  }
}

/** The latest translation of each file in this process, with its PTX's hash (watch-mode rebuilds of an
 *  unchanged file translate once; an edited file replaces its entry). */
const translations = new Map<string, { key: string; result: Promise<{ image: Uint8Array; refused: Untranslatable[]; softF64: string[]; softTensor: string[] }> }>()

/** The WGSL image of a build (the newest PTX image, else the manifest's PTX) and its refusals as diagnostics. */
async function wgslFor(images: DeviceImage[], manifestPtx: Uint8Array, manifestTarget: string, abs: string): Promise<{ image: WgslPackable; refused: Diagnostic[]; notes: Diagnostic[] }> {
  const ptxImages = images.filter((i) => i.kind === 'ptx')
  const newest = ptxImages[ptxImages.length - 1]
  const from = newest ? newest.target : manifestTarget
  const text = ptxText(newest ? newest.bytes : manifestPtx)
  const key = sha256(text)
  let t = translations.get(abs)
  if (t?.key !== key) {
    t = { key, result: import('@kernelpack/webgpu').then((m) => m.translatePtxForShipping(text, basename(abs))) }
    translations.set(abs, t)
  }
  const { image, refused, softF64, softTensor } = await t.result
  const diagnostics = refused.map((u): Diagnostic => {
    const at = u.line > 0 ? `PTX line ${u.line}${u.instruction ? ` (${u.instruction.trim()})` : ''}: ` : ''
    const message = `${u.kernel ? `kernel ${readableName(u.kernel)}` : 'this module'} cannot run on WebGPU: ${at}${u.reason}`
    return u.source
      ? { file: resolve(dirname(abs), u.source.file), line: u.source.line, column: u.source.column, severity: 'warning', message }
      : { file: abs, line: 0, column: 0, severity: 'warning', message }
  })
  const notes = [
    ...softF64.map((k): Diagnostic => ({ file: abs, line: 0, column: 0, severity: 'warning', message: `kernel ${readableName(k)} computes f64 in software binary64 on WebGPU (exact, and many times slower than f32: WGSL has no f64)` })),
    ...softTensor.map((k): Diagnostic => ({ file: abs, line: 0, column: 0, severity: 'warning', message: `kernel ${readableName(k)} computes its tensor-core products in software binary64 on WebGPU (exact, as the emulator, and many times slower than a GPU's tensor cores: WebGPU has no matrix units)` })),
  ]
  return { image: { bytes: image, from }, refused: diagnostics, notes }
}
