// Errors of the WebGPU backend. Each has a stable `name` so the runtime (which loads this package on demand
// and does not import its classes) can tell them apart: `auto` falls back to the emulator on
// CannotTranslateError and NoAdapterError only.

/** One kernel (or the whole module, `kernel` undefined) that cannot run on WebGPU. */
export interface Untranslatable {
  /** The PTX `.entry` name; undefined when the reason concerns the whole module. */
  kernel?: string
  /** 1-based line in the PTX text of the instruction or directive at fault; 0 when there is none. */
  line: number
  /** The PTX text at that line (`fma.rn.f64 %fd3, %fd1, %fd2, %fd3;`), when there is one. */
  instruction?: string
  /** Why, in words a user can act on (`f64 arithmetic: WGSL has no f64`). */
  reason: string
  /** The CUDA source position of that instruction, when the PTX has line information (`-lineinfo`); set by
   *  the build-time translation (translatePtxForShipping). */
  source?: { file: string; line: number; column: number }
}

/** How a message names a kernel: the demangled name (`@kernelpack/ptx/demangle`'s readableName), which the
 *  backend loads only when a module has kernels that cannot run. */
export type KernelNamer = (ptxName: string) => string

function describe(u: Untranslatable, name: KernelNamer): string {
  const at = u.source ? ` in ${u.source.file}:${u.source.line}` : ''
  const where = u.line > 0 ? `PTX line ${u.line}${u.instruction ? ` (${u.instruction.trim()})` : ''}${at}: ` : ''
  return `${u.kernel ? `kernel ${name(u.kernel)}: ` : ''}${where}${u.reason}`
}

/** The module's PTX has kernels that cannot be translated to WGSL; thrown by loadModule. */
export class CannotTranslateError extends Error {
  override name = 'CannotTranslateError'
  readonly refused: readonly Untranslatable[]
  constructor(source: string, refused: readonly Untranslatable[], name: KernelNamer = (k) => k) {
    super(`${source}: cannot run on WebGPU: ${refused.map((u) => describe(u, name)).join('; ')}`)
    this.refused = refused
  }
}

/** No WebGPU adapter: no `navigator.gpu`, no GPU object given, or requestAdapter() answered null. */
export class NoAdapterError extends Error {
  override name = 'NoAdapterError'
  /** One line without the advice, for `auto`'s reason. */
  readonly summary: string
  constructor(summary: string, advice: string) {
    super(`${summary}; ${advice}`)
    this.summary = summary
  }
}

/** A launch or allocation exceeds what the adapter allows; thrown before anything is queued. */
export class WebGpuLimitError extends RangeError {
  override name = 'WebGpuLimitError'
  /** The WebGPU limit that is exceeded (`maxComputeInvocationsPerWorkgroup`…). */
  readonly limit: string
  readonly value: number
  readonly allowed: number
  constructor(what: string, limit: string, value: number, allowed: number, advice: string) {
    super(`${what}: ${value} exceeds this adapter's ${limit} (${allowed}); ${advice}`)
    this.limit = limit
    this.value = value
    this.allowed = allowed
  }
}

/** The WebGPU implementation reported an error (validation, out of memory, device lost). */
export class WebGpuError extends Error {
  override name = 'WebGpuError'
}

/** What a fault record says happened (layout.ts FAULT_KIND, in its order). */
export const WEBGPU_FAULT_KINDS = ['access', 'trap', 'assert', 'mbarrier', 'spin', 'deadlock'] as const
export type WebGpuFaultKind = typeof WEBGPU_FAULT_KINDS[number]

/** A kernel recorded a fault (an out-of-bounds access it checked) in the fault record; see layout.ts. */
export class WebGpuFault extends Error {
  override name = 'WebGpuFault'
  readonly kernel: string
  readonly line: number
  readonly address: bigint
  /** What happened (layout.ts FAULT_KIND): an invalid access at `address`, a `trap`, a failed `assert()`, an
   *  mbarrier wait or a wait on shared memory that cannot complete on WebGPU, whose threads run together between
   *  barriers (emit-mbarrier.ts, spin-wait.ts), or a deadlock: every thread of a block still running waits, for
   *  a barrier or an arrival no thread will make (rounds.ts). */
  readonly kind: WebGpuFaultKind
  constructor(kernel: string, line: number, address: bigint, kind: WebGpuFaultKind = 'access') {
    // the emulator's wording for the same faults (packages/emulator/src/load-module.ts)
    const what = kind === 'trap' ? 'trap instruction executed' : kind === 'assert' ? 'device-side assertion failed'
      : kind === 'deadlock' ? 'deadlock: every thread of the block still running waits, and none of them can go on (a barrier or an mbarrier phase that no thread will complete)'
      : kind === 'mbarrier' || kind === 'spin' ? `a${kind === 'spin' ? ' wait on shared memory' : 'n mbarrier wait'} cannot complete: its ${kind === 'spin' ? 'write comes' : 'arrivals come'} later in the program`
      : `invalid memory access at 0x${address.toString(16)}`
    super(`kernel ${kernel}: ${what}${line > 0 ? ` (PTX line ${line})` : ''}`)
    this.kernel = kernel
    this.line = line
    this.address = address
    this.kind = kind
  }
}
