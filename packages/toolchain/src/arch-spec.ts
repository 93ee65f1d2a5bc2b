// GPU target specs: CMake's CUDA_ARCHITECTURES syntax (`80`, `80-real`, `90-virtual`, `90a`, lists with `;`,
// `all`, `all-major`, `native`) and nvcc's arch names (`sm_90`, `sm_90a`, `sm_100f`, `compute_90`).
// Each target is one device compile: a cubin for a real arch (`sm_XY`), PTX for a virtual one
// (`compute_XY`). CMake: https://cmake.org/cmake/help/latest/prop_tgt/CUDA_ARCHITECTURES.html;
// nvcc: "GPU Compilation" / "Virtual Architectures" in the CUDA Compiler Driver manual.
import { execFileSync } from 'node:child_process'
import { ToolchainError } from './errors.js'

/** One device compile. */
export interface Target {
  /** What is built: `sm_90` (cubin), `compute_90` (PTX), `sm_90a`, `compute_100f`, … */
  target: string
  /** The GPU architecture it is for, always spelled `sm_…` (`sm_90` for both `sm_90` and `compute_90`);
   *  the `arch` string of the offload image, as LLVM writes it. */
  arch: string
  kind: 'cubin' | 'ptx'
  /** Architecture number: 90 for sm_90, 100 for sm_100. */
  sm: number
  /** '' plain, 'a' architecture-specific (sm_90a), 'f' family-specific (sm_100f). */
  suffix: '' | 'a' | 'f'
}

/**
 * The arch spec used when none is given: `80`, CMake's meaning of a bare number, i.e. an sm_80 cubin plus
 * compute_80 PTX. The cubin runs natively on every Ampere-or-newer GPU of major 8 and the PTX is
 * JIT-compiled by the driver on anything newer (Hopper, Blackwell); the PTX is also what the CPU emulator
 * runs where there is no GPU, and what the kernel manifest is read from.
 */
export const DEFAULT_ARCH = '80'

/** Real architectures nvcc 13.0 accepts (`nvcc --list-gpu-code`); used for `all`/`all-major` when the
 *  caller does not pass the compiler's own list. */
export const NVCC_13_ARCHS = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121]

export interface ParseArchOptions {
  /** Real architecture numbers the compiler supports: every target is checked against them, and they are
   *  what `all` / `all-major` mean. */
  supported?: number[]
  /** What `all` / `all-major` mean when no `supported` list is given (no validation then). @default NVCC_13_ARCHS */
  all?: number[]
  /** Compute capabilities of the local GPUs for `native` (e.g. `[86]`); by default nvidia-smi is asked. */
  native?: () => number[]
}

const suffixRank = { '': 0, f: 1, a: 2 } as const

function make(sm: number, suffix: '' | 'a' | 'f', kind: 'cubin' | 'ptx'): Target {
  const name = `${sm}${suffix}`
  return { target: `${kind === 'cubin' ? 'sm' : 'compute'}_${name}`, arch: `sm_${name}`, kind, sm, suffix }
}

/** Sorts targets by architecture, then suffix, cubin before PTX: the order images take in the offload
 *  binary, so the same set of targets gives the same bytes whatever order the spec listed them in. */
export function sortTargets(targets: Target[]): Target[] {
  const seen = new Map<string, Target>()
  for (const t of targets) seen.set(t.target, t)
  return [...seen.values()].sort((a, b) => a.sm - b.sm || suffixRank[a.suffix] - suffixRank[b.suffix] || (a.kind === b.kind ? 0 : a.kind === 'cubin' ? -1 : 1))
}

function bad(item: string, spec: string, why: string): ToolchainError {
  return new ToolchainError(
    `bad GPU arch '${item}' in '${spec}': ${why}. Use CMake CUDA_ARCHITECTURES syntax (80, 80-real, 90-virtual, 90a, ` +
      `"80;90", all, all-major, native) or nvcc names (sm_90, sm_90a, sm_100f, compute_90).`,
  )
}

function checkNumber(sm: number, suffix: string, item: string, spec: string, supported?: number[]): void {
  if (!Number.isInteger(sm) || sm < 10 || sm > 999) throw bad(item, spec, 'the architecture number must have 2 or 3 digits (major and minor)')
  if (suffix === 'a' && sm < 90) throw bad(item, spec, `the 'a' suffix exists from sm_90 on`)
  if (suffix === 'f' && sm < 100) throw bad(item, spec, `the 'f' suffix exists from sm_100 on`)
  if (supported && !supported.includes(sm)) {
    throw bad(item, spec, `the compiler does not support sm_${sm} (it supports ${supported.map((n) => `sm_${n}`).join(', ')})`)
  }
}

/** Compute capabilities of the GPUs on this machine, from nvidia-smi; empty when there is none. */
export function detectNativeArchs(): number[] {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=compute_cap', '--format=csv,noheader'], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'ignore'] })
    const caps = out.split('\n').map((l) => l.trim()).filter((l) => /^\d+\.\d+$/.test(l)).map((l) => {
      const [major, minor] = l.split('.').map(Number) as [number, number]
      return major * 10 + minor
    })
    return [...new Set(caps)].sort((a, b) => a - b)
  } catch {
    return []
  }
}

/**
 * Parses an arch spec into the device compiles it means, sorted and deduplicated. Items are separated by
 * `;` (CMake), `,` or spaces; an array is a list of items. `NN` = cubin + PTX (CMake), `NN-real` = cubin,
 * `NN-virtual` = PTX, `sm_NN` = cubin, `compute_NN` = PTX, `all`/`all-major` = every supported (major)
 * real arch plus PTX for the newest, `native` = a cubin for each local GPU (a ToolchainError without one).
 */
export function parseArchSpec(spec: string | string[], options: ParseArchOptions = {}): Target[] {
  const text = Array.isArray(spec) ? spec.join(';') : spec
  const items = text.split(/[;,\s]+/).filter(Boolean)
  if (items.length === 0) throw bad(text, text, 'no architecture given')
  const out: Target[] = []
  for (const item of items) {
    const lower = item.toLowerCase()
    if (lower === 'all' || lower === 'all-major') {
      const list = (options.supported ?? options.all ?? NVCC_13_ARCHS).filter((n) => lower === 'all' || n % 10 === 0)
      if (list.length === 0) throw bad(item, text, 'the compiler reports no supported architectures')
      for (const n of list) out.push(make(n, '', 'cubin'))
      out.push(make(Math.max(...list), '', 'ptx'))
      continue
    }
    if (lower === 'native') {
      const caps = (options.native ?? detectNativeArchs)()
      if (caps.length === 0) {
        throw new ToolchainError(
          `GPU arch 'native' needs a GPU, and none was found (nvidia-smi reports no device). ` +
            `Name the targets instead, e.g. --arch 80 (sm_80 cubin + compute_80 PTX, which also runs on the emulator).`,
        )
      }
      for (const n of caps) {
        checkNumber(n, '', item, text, options.supported)
        out.push(make(n, '', 'cubin'))
      }
      continue
    }
    let m = /^(\d+)([af]?)(?:-(real|virtual))?$/.exec(lower)
    if (m) {
      const sm = Number(m[1])
      const suffix = m[2] as '' | 'a' | 'f'
      checkNumber(sm, suffix, item, text, options.supported)
      if (m[3] !== 'virtual') out.push(make(sm, suffix, 'cubin'))
      if (m[3] !== 'real') out.push(make(sm, suffix, 'ptx'))
      continue
    }
    m = /^(sm|compute)_(\d+)([af]?)$/.exec(lower)
    if (m) {
      const sm = Number(m[2])
      const suffix = m[3] as '' | 'a' | 'f'
      checkNumber(sm, suffix, item, text, options.supported)
      out.push(make(sm, suffix, m[1] === 'sm' ? 'cubin' : 'ptx'))
      continue
    }
    if (/^lto_/.test(lower)) throw bad(item, text, 'LTO intermediate targets (lto_NN) are not device images a runtime can load')
    throw bad(item, text, 'not an architecture')
  }
  return sortTargets(out)
}
