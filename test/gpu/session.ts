// What every section of `pnpm test:gpu` shares (issue 18): the options the parent hands each child process,
// the shape of a child's result, the device the sections run on, and small check helpers.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { KernelManifest } from '@kernelpack/offload'
import { CudaError, resolveBackend, type Backend, type LoadModuleOptions } from '@kernelpack/runtime'
import { repoRoot } from '../helpers/tools.js'
import type { Check, KernelRow, Status } from './report.js'
import type { Output } from './capture.js'

export interface GpuOptions {
  /** `hardware`: a real driver. `self-test`: the libcuda test double; kernels run on the emulator instead. */
  mode: 'hardware' | 'self-test'
  /** libcuda to load (default: KERNELPACK_LIBCUDA, else libcuda.so.1). */
  libcudaPath?: string
  device: number
  /** The cubin arch (`sm_90`): the device's compute capability unless --arch says otherwise. */
  arch: string
  /** Substrings: only corpus cases whose key contains one of them (all when empty). */
  cases: string[]
}

/** A recording as a child hands it to the parent (outputs base64). */
export interface RecordingData {
  key: string
  ptx: string
  image: string
  latitude: { approx: string[]; atomics: string[]; schedule: string[] }
  emulatorAtRecording: string
  run: { outputs: { name: string; type: Output['type']; base64: string }[]; refError?: string; runError?: string; trace: string; launched: string[]; ms: number }
}

export interface SectionOutput {
  checks: Check[]
  kernels: KernelRow[]
  recordings: RecordingData[]
  /** Set when the section stopped early (a sticky CUDA error ended its context): the parent starts it again
   *  in a fresh process, after this case. */
  resumeAfter?: string
}

/** The load options of the device under test. */
export function deviceLoadOptions(o: GpuOptions): LoadModuleOptions {
  return { backend: 'cuda', device: o.device, libcudaPath: o.libcudaPath }
}

/** The cuda backend of the device under test (the same instance loadModule uses). */
export async function openDevice(o: GpuOptions): Promise<Backend & { driverVersion?: number }> {
  return (await resolveBackend(deviceLoadOptions(o))).backend as Backend & { driverVersion?: number }
}

/** Collects the checks of one section. */
export class Checks {
  readonly list: Check[] = []
  constructor(readonly section: string) {}

  add(name: string, status: Status, detail = '', ms?: number): void {
    this.list.push({ section: this.section, name, status, detail, ms })
  }

  notRun(name: string, why: string): void {
    this.add(name, 'not-run', why)
  }

  /** Runs `body`; a throw is a failure with its message, a returned string the detail of a pass. */
  async run(name: string, body: () => Promise<string | void>): Promise<boolean> {
    const t0 = performance.now()
    try {
      const detail = await body()
      this.add(name, 'pass', detail ?? '', performance.now() - t0)
      return true
    } catch (err) {
      this.add(name, 'fail', (err as Error).message, performance.now() - t0)
      return false
    }
  }
}

/** Throws unless `body` rejects with a CudaError named `codeName` (one of them, when several are allowed). */
export async function expectCudaError(what: string, body: () => Promise<unknown>, codeName: string | string[]): Promise<CudaError> {
  const names = Array.isArray(codeName) ? codeName : [codeName]
  let err: unknown
  try {
    await body()
  } catch (e) {
    err = e
  }
  if (err === undefined) throw new Error(`${what}: succeeded, expected ${names.join(' or ')}`)
  if (!(err instanceof CudaError)) throw new Error(`${what}: threw ${(err as Error).name}: ${(err as Error).message}, expected a CudaError ${names.join(' or ')}`)
  if (!names.includes(err.codeName)) throw new Error(`${what}: ${err.codeName} (${err.code}), expected ${names.join(' or ')}: ${err.message}`)
  return err
}

export function assert(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message)
}

/** The kernel driver's version (`580.159.04`): /proc/driver/nvidia/version, else nvidia-smi, else `unknown`. */
export function readDriverRelease(): string {
  try {
    const m = /Kernel Module\s+(?:for\s+\S+\s+)?([0-9.]+)/.exec(readFileSync('/proc/driver/nvidia/version', 'utf8'))
    if (m) return m[1]!
  } catch { /* not there (containers, gVisor) */ }
  try {
    return execFileSync('nvidia-smi', ['--query-gpu=driver_version', '--format=csv,noheader'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n')[0]!
  } catch {
    return 'unknown (no /proc/driver/nvidia/version, no nvidia-smi)'
  }
}

/** Where `koffi` resolves: as the runtime package resolves it in the workspace, else from beside this file
 *  (the bundled kit of scripts/gpu-kit.mjs carries koffi in .gpu-kit/node_modules). */
function resolveKoffi(): string {
  const errors: string[] = []
  for (const from of [join(repoRoot, 'packages', 'runtime', 'package.json'), fileURLToPath(import.meta.url)]) {
    try {
      return createRequire(from).resolve('koffi')
    } catch (err) {
      errors.push((err as Error).message.split('\n')[0]!)
    }
  }
  throw new Error(`koffi not found: ${errors.join('; ')}`)
}

/** koffi, loaded through its CommonJS entry (it shares the native module, and so the dlopen handles, with the
 *  runtime's import). */
export function requireKoffi<T = unknown>(): T {
  return createRequire(import.meta.url)(resolveKoffi()) as T
}

/** koffi's version (its package.json beside the resolved entry; the file is not in koffi's exports). */
export function readKoffiVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(dirname(resolveKoffi()), 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

/** Self-test mode only: tells the libcuda test double the kernels of a manifest (it answers
 *  cuModuleGetFunction only for declared names), through its kptd_define_kernel control function. */
export async function declareDoubleKernels(o: GpuOptions, manifest: KernelManifest): Promise<void> {
  if (o.mode !== 'self-test') return
  if (!o.libcudaPath || !existsSync(o.libcudaPath)) throw new Error('self-test mode needs --libcuda pointing at the test double')
  const koffi = requireKoffi<{ load(p: string): { func(d: string): (...a: unknown[]) => unknown } }>()
  const define = koffi.load(o.libcudaPath).func('void kptd_define_kernel(const char *name, int n, const uint64_t *sizes)')
  for (const k of manifest.kernels) define(k.name, k.params.length, new BigUint64Array(k.params.map((p) => BigInt(p.size))))
}

/** Dawn's GPU object from the optional `webgpu` package, or why there is none (test:gpu's webgpu section and
 *  the GPU bench; the runtime has its own, for `auto`). */
export async function openDawn(): Promise<GPU | string> {
  const name = 'webgpu'
  try {
    return ((await import(/* @vite-ignore */ name)) as { create(flags: string[]): GPU }).create([])
  } catch (err) {
    return `the optional \`webgpu\` package (Dawn) did not load: ${(err as Error).message.split('\n')[0]}`
  }
}
