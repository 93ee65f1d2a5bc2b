// The interface between the backend and the PTX→WGSL code generator (emit-wgsl, issue 15). The backend owns
// devices, memory, parameters and dispatch; a translator owns the WGSL. It turns one PTX module into one
// WGSL module per kernel that follows the binding contract of layout.ts, or says which kernels it cannot
// translate and why (PTX line + reason), so loadModule fails early and `auto` can pick the emulator.
//
// The default translator is emit-wgsl (emit-wgsl.ts); tests also prove the backend's plumbing with
// hand-written WGSL through `createFixedTranslator`.
import type { Dim3, IrModule } from '@kernelpack/ptx'
import type { AccessSite, SiteTrip } from './access-sites.js'
import type { Untranslatable } from './errors.js'

export type { Dim3 }

/** What a translator reads. */
export interface TranslateInput {
  /** The typed IR of the image (@kernelpack/ptx parsePtx + decodeModule), decoded once by the backend:
   *  what emit-wgsl reads. Each instruction carries its PTX line for refusals. */
  module: IrModule
  /** The PTX text (trailing NUL padding removed), for messages that quote a line. */
  ptx: string
  /** `compute_80`… as the image declares it. */
  arch: string
  /** Where the module came from, for messages. */
  source: string
}

/** What the device offers the translator: it chooses subgroup or workgroup-memory collectives, f16 or
 *  conversions, and refuses what the limits cannot hold. */
export interface TranslateTarget {
  features: ReadonlySet<string>
  limits: Readonly<Record<string, number>>
  /** Subgroup sizes the adapter may use (GPUAdapterInfo); warp collectives use subgroups only when both are 32. */
  subgroupMinSize?: number
  subgroupMaxSize?: number
}

/** One translated kernel. */
export interface WgslKernel {
  /** The PTX `.entry` name. */
  name: string
  /** A complete WGSL module following layout.ts. */
  wgsl: string
  /** The `@compute` function in `wgsl`. */
  entryPoint: string
  /** Bytes of the .param block the kernel reads (kp_params holds at least this many, rounded up to 16). */
  paramBytes: number
  /** Offset of each parameter in the block; when given, launches whose layout differs are refused. */
  paramOffsets?: readonly number[]
  /** Bytes of workgroup memory the WGSL declares besides the dynamic .shared array (static .shared plus any
   *  scratch of the workgroup-memory collectives), for the maxComputeWorkgroupStorageSize check. */
  workgroupBytes: number
  /** Workgroup memory per CUDA thread of the block (the warp-collective scratch), on top of workgroupBytes. */
  workgroupBytesPerThread?: number
  /** The coarsened variant, for blocks with more threads than maxComputeInvocationsPerWorkgroup: each of
   *  `ceil(threads / k)` invocations runs k ≤ `factor` CUDA threads in turn (overrides kp_k, kp_wg). */
  coarse?: { wgsl: string; entryPoint: string; factor: number }
  /** The same kernel without checks on its global accesses, for launches in which the host proves every
   *  access inside the arena (`sites`, access-sites.ts); absent when an access has no affine form. */
  /** The kernel computes f64 in software binary64 (emit-ops.ts f64Arith): exact and slow; the build warns. */
  softF64?: boolean
  /** Its tensor-core products are computed in software binary64 (emit-tensor.ts: exact, slow; a build warning). */
  softTensor?: boolean
  /** Device printf's format strings, by call site (emit-printf.ts): the host formats the records with them. */
  printf?: readonly string[]
  /** A cooperative kernel split at its grid syncs (grid-sync.ts, emit-kernel.ts writePhases): `phases`
   *  dispatches in order, override kp_phase = 0, 1, …; the workspace that keeps what lives across a sync, per
   *  block `uniformWords + threads × threadWords + sharedWords` words (sharedWords: `fixed`, plus
   *  kp_dyn_shared_words when `dynamic`), its byte address written at `workspaceAt` in the parameter block.
   *  `branches`: phases that end with the branch of a loop or `if` around grid syncs (its back edge, its skip
   *  test); after one, the launch reads the word after the blocks' state (cleared before it): nonzero, the
   *  branch was taken and the launch goes on at phase `to`, else at the next phase. */
  gridSync?: { phases: number; workspaceAt: number; uniformWords: number; threadWords: number; sharedWords: { fixed: number; dynamic: boolean }; branches?: Array<{ phase: number; to: number }> }
  /** The variant whose shared memory is a slice of the arena per workgroup of a dispatch (emit-arena-shared.ts,
   *  arena-shared.ts), for launches whose shared memory exceeds the adapter's maxComputeWorkgroupStorageSize: a
   *  slice is `words.fixed` words, plus kp_dyn_shared_words when `dynamic`; the slices' byte address goes at
   *  `workspaceAt` in the parameter block; `workgroupBytes`: the workgroup memory it still declares (scratch). */
  sharedInArena?: { wgsl: string; entryPoint: string; workgroupBytes: number; workspaceAt: number; words: { fixed: number; dynamic: boolean } }
  unchecked?: { wgsl: string; sites: AccessSite[]; /** Loop bounds the sites' iteration terms use (loop → bound). */ trips?: Array<[number, SiteTrip]> }
  /** How kp_mem is declared: `array<u32>`, or `array<atomic<u32>>` when the kernel has atomics or sub-word
   *  stores (WGSL atomics need an atomic type, and a byte store must not race with its word's neighbours). */
  memory: 'u32' | 'atomic-u32'
  /** Device features the WGSL enables (`enable subgroups;`, `enable f16;`). */
  features: readonly string[]
  /** `.reqntid`: the only block shape the kernel accepts. */
  requiredBlock?: Dim3
  /** `.maxntid` as a thread count. */
  maxThreads?: number
  /** Indices (into WgslModule.variables) of the module variables this kernel addresses (override kp_var_<i>). */
  variables?: readonly number[]
  /** WGSL translated at build time only: the same kernel translated for an adapter whose subgroups are exactly
   *  32 wide (its warp collectives also in their subgroup form, taken where the kernel's start finds every warp
   *  to be one subgroup: emit-collective.ts), for kernels with warp collectives. The backend runs it on such a
   *  device (decodeWgslImage with the device); translation at load chooses for the adapter itself. */
  subgroups32?: WgslKernel
}

/** Whether warp collectives take their subgroup form on this target: its subgroups are exactly 32 wide. */
export function subgroupsAre32(target: Pick<TranslateTarget, 'features' | 'subgroupMinSize' | 'subgroupMaxSize'>): boolean {
  return target.features.has('subgroups') && target.subgroupMinSize === 32 && target.subgroupMaxSize === 32
}

/** A module-scope `.global`/`.const` variable: the backend allocates it in the arena and initializes it. */
export interface WgslVariable {
  name: string
  space: 'global' | 'const'
  size: number
  align: number
  /** Initial bytes (zero-filled when absent or shorter). */
  init?: Uint8Array
}

/** The translation of one PTX module. */
export interface WgslModule {
  /** Every translated `.entry`, by PTX name. */
  kernels: ReadonlyMap<string, WgslKernel>
  /** What cannot be translated; loadModule throws CannotTranslateError when this is not empty. */
  refused: readonly Untranslatable[]
  variables: readonly WgslVariable[]
}

export interface WgslTranslator {
  /** For messages and `auto`'s reason (`emit-wgsl`, `hand-written WGSL (tests)`). */
  readonly name: string
  translate(input: TranslateInput, target: TranslateTarget): WgslModule | Promise<WgslModule>
}

/**
 * TEST-ONLY HOOK (documented in README.md, "Testing the plumbing with hand-written WGSL"): a translator that
 * ignores the PTX's instructions and serves hand-written WGSL for the named entries. It proves the memory,
 * parameter and dispatch plumbing, not translation. An entry of the PTX without WGSL here is refused.
 */
export function createFixedTranslator(kernels: readonly WgslKernel[], variables: readonly WgslVariable[] = []): WgslTranslator {
  const byName = new Map(kernels.map((k) => [k.name, k]))
  return {
    name: 'hand-written WGSL (test hook)',
    translate(input) {
      const refused: Untranslatable[] = []
      const found = new Map<string, WgslKernel>()
      // the entries as @kernelpack/ptx decoded them (the one PTX front end)
      const lines = input.ptx.split('\n')
      for (const fn of input.module.functions) {
        if (fn.kind !== 'entry') continue
        const k = byName.get(fn.name)
        if (k) found.set(k.name, k)
        else refused.push({ kernel: fn.name, line: fn.line, instruction: lines[fn.line - 1] ?? `.entry ${fn.name}`, reason: 'no hand-written WGSL registered for this entry' })
      }
      return { kernels: found, refused, variables }
    },
  }
}
