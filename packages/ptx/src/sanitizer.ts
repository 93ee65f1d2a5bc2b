// The sanitizer's part of the execution contract (issue 19): which checks a backend runs, and what it reports
// when one fails. The emulator implements the checks (@kernelpack/emulator, src/sanitizer/); the runtime passes
// the option through (`loadModule(…, { check })`, `KERNELPACK_CHECK`) and re-exports SanitizerError. The
// vocabulary is NVIDIA compute-sanitizer's: four tools — memcheck (out-of-bounds, misaligned, freed memory),
// racecheck (RAW/WAR/WAW hazards between threads of a block), synccheck (barriers and warp collectives that
// not every thread they name reaches) and initcheck (reads of memory nothing wrote) — and reports naming
// both accesses with their thread and block, in compute-sanitizer's message style.

/** The four checks, by compute-sanitizer's tool names without the `check` suffix. */
export type CheckKind = 'race' | 'sync' | 'init' | 'memory'
export const CHECK_KINDS: readonly CheckKind[] = ['race', 'sync', 'init', 'memory']

/** `check` of loadModule / createEmulatorBackend: `true` for all four checks, or each one by name. */
export interface CheckOptions {
  /** racecheck: RAW, WAR and WAW hazards between threads of a block within a barrier interval, in shared
   *  and in global memory (atomics are not hazards with each other). @default true when `check` is given */
  race?: boolean
  /** synccheck: a barrier not every thread of the block reaches (or threads waiting at different barriers),
   *  a warp collective whose member mask names lanes that did not arrive. @default true when `check` is given */
  sync?: boolean
  /** initcheck: reads of global memory neither the host nor a kernel wrote, and of shared memory not written
   *  in this block. @default true when `check` is given */
  init?: boolean
  /** memcheck: out-of-bounds (to the byte) and misaligned accesses, accesses to freed buffers, each naming
   *  the allocation. @default true when `check` is given */
  memory?: boolean
  /** `throw`: the first report stops the launch with a SanitizerError. `collect`: reports are collected (read
   *  them with `mod.sanitizerReports()`) and the launch goes on; a memcheck report still stops it, since the
   *  access cannot be carried out. @default 'throw' */
  mode?: 'throw' | 'collect'
}

/** CheckOptions with every field decided. */
export interface ResolvedCheck {
  race: boolean
  sync: boolean
  init: boolean
  memory: boolean
  mode: 'throw' | 'collect'
}

/** `check` as loadModule takes it: true/false, the options, or the text of `KERNELPACK_CHECK`. */
export type CheckSetting = boolean | CheckOptions | string

/**
 * The checks a setting asks for, or undefined for none. A string is the `KERNELPACK_CHECK` syntax: `1`,
 * `true` or `all` for every check, `0`, `false` or empty for none, or a comma-separated list of check names
 * (`race,sync`), optionally with `collect`. `source` names where a bad value came from.
 */
export function resolveCheck(setting: CheckSetting | undefined, source = 'check'): ResolvedCheck | undefined {
  if (setting === undefined || setting === false) return undefined
  if (setting === true) return { race: true, sync: true, init: true, memory: true, mode: 'throw' }
  if (typeof setting === 'string') {
    const words = setting.split(',').map((w) => w.trim().toLowerCase()).filter(Boolean)
    if (words.length === 0 || (words.length === 1 && (words[0] === '0' || words[0] === 'false' || words[0] === 'off'))) return undefined
    const out: ResolvedCheck = { race: false, sync: false, init: false, memory: false, mode: 'throw' }
    let any = false
    for (const w of words) {
      if (w === '1' || w === 'true' || w === 'all' || w === 'on') { out.race = out.sync = out.init = out.memory = true; any = true; continue }
      if (w === 'collect' || w === 'throw') { out.mode = w; continue }
      const k = w.endsWith('check') ? w.slice(0, -'check'.length) : w
      if (!(CHECK_KINDS as readonly string[]).includes(k)) {
        throw new TypeError(`${source}: unknown check ${JSON.stringify(w)} in ${JSON.stringify(setting)}; use 1 (all checks), 0, or a comma-separated list of ${CHECK_KINDS.join(', ')} (and collect)`)
      }
      out[k as CheckKind] = true
      any = true
    }
    if (!any) { out.race = out.sync = out.init = out.memory = true }
    return out
  }
  if (typeof setting !== 'object' || setting === null) throw new TypeError(`${source}: expected true, false or { race, sync, init, memory, mode }, got ${typeof setting}`)
  for (const key of Object.keys(setting)) {
    if (!(CHECK_KINDS as readonly string[]).includes(key) && key !== 'mode') throw new TypeError(`${source}: unknown option ${JSON.stringify(key)}; expected ${CHECK_KINDS.join(', ')} or mode`)
  }
  const mode = setting.mode ?? 'throw'
  if (mode !== 'throw' && mode !== 'collect') throw new TypeError(`${source}.mode: expected 'throw' or 'collect', got ${JSON.stringify(mode)}`)
  // naming some checks selects those; naming none (only `mode`) selects all
  const named = CHECK_KINDS.filter((k) => setting[k] !== undefined)
  const pick = (k: CheckKind) => (named.length === 0 ? true : setting[k] === true)
  const out: ResolvedCheck = { race: pick('race'), sync: pick('sync'), init: pick('init'), memory: pick('memory'), mode }
  return out.race || out.sync || out.init || out.memory ? out : undefined
}

/** One side of a report: an access (or a barrier / collective) by one thread. */
export interface SanitizerAccess {
  /** What the thread did. */
  kind: 'read' | 'write' | 'atomic' | 'barrier' | 'collective' | 'exit'
  /** threadIdx and blockIdx. */
  thread: [number, number, number]
  block: [number, number, number]
  /** The function the instruction is in (the kernel, or a device function it calls). */
  function: string
  /** PTX line and statement text of the instruction. */
  ptxLine: number
  instruction: string
  /** The CUDA source position from the PTX's `.loc` (nvcc -lineinfo or -G, clang -g / -gline-tables-only); for
   *  code inlined from a header (`atomicAdd`, `__shfl_down_sync`), the call site. */
  source?: { file: string; line: number; column: number }
  /** The inlined function's own position, when `source` is its call site. */
  inlinedFrom?: { file: string; line: number; column: number }
}

/** The allocation an address falls in. */
export interface SanitizerAllocation {
  /** `global` (a device buffer or a module variable), `shared` (the block's shared memory, offsets from 0). */
  space: 'global' | 'shared' | 'local'
  /** Device address (global) or offset in the block's shared memory (shared). */
  base: bigint
  size: number
  /** Offset of the reported address from `base` (negative before it, ≥ size past its end). */
  offset: number
  /** A module variable (`.global`/`.const`/`.shared`) by its PTX name, when the allocation is one. */
  variable?: string
  /** `freed`: the buffer was freed before the access (use after free). */
  state: 'live' | 'freed'
}

export interface SanitizerReport {
  /** Which check found it. */
  kind: CheckKind
  /** compute-sanitizer's classification: `RAW`/`WAR`/`WAW` (race), `divergent-block`, `divergent-warp`,
   *  `invalid-arguments`, `barrier-mismatch` (sync), `uninitialized` (init), `out-of-bounds`, `misaligned`,
   *  `use-after-free` (memory). */
  hazard: 'RAW' | 'WAR' | 'WAW' | 'divergent-block' | 'divergent-warp' | 'invalid-arguments' | 'barrier-mismatch' | 'uninitialized' | 'out-of-bounds' | 'misaligned' | 'use-after-free'
  /** The PTX entry name of the launched kernel. */
  kernel: string
  /** Memory space of the access (none for sync reports). */
  space?: 'global' | 'shared' | 'local'
  /** The address (global: device address; shared: offset in the block's shared memory) and access size. */
  address?: bigint
  size?: number
  allocation?: SanitizerAllocation
  /** The accesses: for a race the earlier one first, then the later one; one for the other checks (sync: the
   *  barrier or collective, then a thread that did not arrive when there is one). */
  accesses: SanitizerAccess[]
  /** How many times the same report (same check, hazard and instructions) was seen in this launch. */
  count: number
  /** The report as compute-sanitizer would print it (lines starting with `=========`). */
  message: string
}

/** A check failed (issue 19); `report` says which, where, and what each thread did. */
export class SanitizerError extends Error {
  readonly kind: CheckKind
  readonly report: SanitizerReport
  constructor(report: SanitizerReport) {
    super(report.message)
    this.name = 'SanitizerError'
    this.kind = report.kind
    this.report = report
  }
}
