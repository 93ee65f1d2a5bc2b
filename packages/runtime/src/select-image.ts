// Picks the image to load for a device from the entries of an offload binary (DESIGN.md "Image choice"):
//   cubin sm_XY  runs on compute capability X.Z with Z >= Y (same major: SASS is binary compatible within a major)
//   cubin sm_XYa only on X.Y exactly (architecture-specific features, not forward compatible)
//   cubin sm_XYf on the same family: major X, minor >= Y (CUDA 12.9 family-specific targets)
//   PTX compute_XY JIT-compiles on any device >= X.Y whose driver knows the PTX `.version`
//   (compute_XYa / compute_XYf PTX keep the a/f rule).
// A matching cubin is preferred (the newest arch that fits; a > f > plain at the same arch), then the newest PTX.
import type { OffloadEntry } from '@kernelpack/offload'
import { ImageKind, WGSL_TRIPLE } from '@kernelpack/offload/core'
import type { ImageToLoad } from './backend.js'

export interface SelectDevice {
  computeCapability: [number, number]
  /** Highest PTX ISA version the driver can JIT ([9, 0] for CUDA 13.0). PTX newer than this is skipped. */
  ptxVersion?: [number, number]
  name?: string
}

export interface ParsedArch {
  major: number
  minor: number
  /** '' (plain), 'a' (arch-specific) or 'f' (family-specific). */
  suffix: '' | 'a' | 'f'
  virtual: boolean
}

/** `sm_90a` → { major 9, minor 0, suffix 'a', virtual false }; `compute_100f` → { 10, 0, 'f', true }. */
export function parseArch(arch: string): ParsedArch | undefined {
  const m = /^(sm|compute)_(\d+)([af]?)$/.exec(arch)
  if (!m) return undefined
  const n = Number(m[2])
  // Two-digit numbers are X.Y (sm_90); three digits are XX.Y (sm_100, sm_120).
  return { major: Math.floor(n / 10), minor: n % 10, suffix: m[3] as '' | 'a' | 'f', virtual: m[1] === 'compute' }
}

/** Image kind of an entry: from ImageKind, or sniffed from the bytes when the kind is None (`.ptx` files). */
export function entryKind(e: OffloadEntry): ImageToLoad['kind'] | undefined {
  switch (e.imageKind) {
    case ImageKind.Cubin: return 'cubin'
    case ImageKind.PTX: return 'ptx'
    case ImageKind.Fatbinary: return 'fatbin'
    case ImageKind.Object: return 'object'
    case ImageKind.None: return e.strings.get('triple') === WGSL_TRIPLE ? 'wgsl' : sniffKind(e.image)
    default: return undefined
  }
}

/** ELF magic → cubin; fatbin magic 0xBA55ED50 → fatbin; text with `.version`/`.target` → PTX. */
export function sniffKind(bytes: Uint8Array): ImageToLoad['kind'] | undefined {
  if (bytes.length >= 4 && bytes[0] === 0x7f && bytes[1] === 0x45 && bytes[2] === 0x4c && bytes[3] === 0x46) return 'cubin'
  if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0xed && bytes[2] === 0x55 && bytes[3] === 0xba) return 'fatbin'
  const head = new TextDecoder().decode(bytes.subarray(0, 4096))
  if (/^\s*\.version\s+\d+\.\d+/m.test(head) || /^\s*\.target\s+/m.test(head)) return 'ptx'
  return undefined
}

/** The `.version X.Y` of a PTX image, or the `+ptxXY` feature string of its entry. */
export function ptxVersionOf(e: OffloadEntry): [number, number] | undefined {
  const m = /^\s*\.version\s+(\d+)\.(\d+)/m.exec(new TextDecoder().decode(e.image.subarray(0, 4096)))
  if (m) return [Number(m[1]), Number(m[2])]
  const f = /\+ptx(\d+)(\d)\b/.exec(e.strings.get('feature') ?? '')
  return f ? [Number(f[1]), Number(f[2])] : undefined
}

const cmp = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1]

function archRuns(a: ParsedArch, cc: [number, number]): boolean {
  if (a.suffix === 'a') return a.major === cc[0] && a.minor === cc[1]
  if (!a.virtual || a.suffix === 'f') return a.major === cc[0] && cc[1] >= a.minor
  return cmp(cc, [a.major, a.minor]) >= 0
}

export interface ImageChoice {
  entry: OffloadEntry
  kind: ImageToLoad['kind']
  arch: string
  /** Why this image was chosen, in words. */
  reason: string
}

export class NoImageError extends Error {
  override name = 'NoImageError'
}

/** An image's target name: PTX by its virtual target (`compute_90`), as the build's manifest and `kernelpack
 *  inspect` name it, although LLVM's offload entries label PTX with the real arch (`arch=sm_90`). */
function targetName(kind: string | undefined, arch: string): string {
  return kind === 'ptx' ? arch.replace(/^sm_/, 'compute_') : arch
}

function describeEntry(e: OffloadEntry): string {
  const kind = entryKind(e)
  return `${kind ?? `kind ${e.imageKind}`} ${targetName(kind, e.strings.get('arch') ?? '') || '(no arch)'}`
}

/**
 * Chooses the entry to load on `device` among those whose kind the backend loads (`kinds`); throws a
 * NoImageError listing the images present and the device when none fits.
 */
export function selectImage(entries: readonly OffloadEntry[], device: SelectDevice, kinds: readonly string[]): ImageChoice {
  const cc = device.computeCapability
  const ccText = `${cc[0]}.${cc[1]}`
  let best: { entry: OffloadEntry; arch: ParsedArch; archName: string; kind: ImageToLoad['kind']; rank: number } | undefined
  const skipped: string[] = []
  for (const entry of entries) {
    const kind = entryKind(entry)
    const archName = entry.strings.get('arch') ?? ''
    // A fatbin without an arch (a raw `nvcc -fatbin` output) holds its own list: the driver picks from it.
    // WGSL translated at build time runs on any WebGPU device (its limits are checked at load).
    const arch = parseArch(archName) ?? (kind === 'fatbin' || kind === 'wgsl' ? { major: 0, minor: 0, suffix: '' as const, virtual: true } : undefined)
    if (!kind || !kinds.includes(kind) || !arch) continue
    if (kind === 'ptx' && !arch.virtual) {
      // nvcc/clang label PTX with the real arch it was generated for (sm_90 → .target sm_90): same rule as compute_90.
      arch.virtual = true
    }
    if (!archRuns(arch, cc)) continue
    if (kind === 'ptx' && device.ptxVersion) {
      const v = ptxVersionOf(entry)
      if (v && cmp(v, device.ptxVersion) > 0) {
        skipped.push(`ptx ${archName} needs PTX ISA ${v[0]}.${v[1]} but the driver supports up to ${device.ptxVersion[0]}.${device.ptxVersion[1]}`)
        continue
      }
    }
    // rank: WGSL translated at build time above all (only the webgpu backend loads it), binaries above PTX,
    // then newer arch, then a > f > plain
    const rank = (kind === 'wgsl' ? 2 : kind === 'ptx' ? 0 : 1) * 1e6 + (arch.major * 100 + arch.minor) * 10 + (arch.suffix === 'a' ? 2 : arch.suffix === 'f' ? 1 : 0)
    if (!best || rank > best.rank) best = { entry, arch, archName, kind, rank }
  }
  if (!best) {
    const present = entries.length ? entries.map(describeEntry).join(', ') : 'none'
    throw new NoImageError(
      `no image in this module runs on ${device.name ? `${device.name} (compute capability ${ccText})` : `a device of compute capability ${ccText}`}` +
        ` with a backend that loads ${kinds.join('/')}; images present: ${present}` +
        (skipped.length ? `; skipped: ${skipped.join('; ')}` : '') +
        `. Rebuild with an arch for this device, e.g. --arch sm_${cc[0]}${cc[1]} or compute_${cc[0]}${cc[1]} (PTX runs on every newer GPU).`,
    )
  }
  const a = best.arch
  best.archName = targetName(best.kind, best.archName)
  const reason = best.kind === 'wgsl'
    ? `WGSL translated at build time${best.entry.strings.get('kernelpack-from') ? ` from ${best.entry.strings.get('kernelpack-from')}` : ''} (no translation at load)`
    : best.kind === 'fatbin' && a.major === 0
    ? `fatbin ${best.archName || '(archs inside)'}: the driver picks the image for compute capability ${ccText}`
    : best.kind === 'ptx'
    ? `newest PTX that runs on compute capability ${ccText}: ${best.archName} (${kinds.includes('cubin') ? 'JIT-compiled by the driver' : kinds.includes('wgsl') ? 'translated to WGSL at load' : 'executed by the PTX emulator'})`
    : a.suffix === 'a'
      ? `cubin ${best.archName} built for exactly compute capability ${ccText}`
      : a.suffix === 'f'
        ? `cubin ${best.archName} for the ${a.major}.x family runs on ${ccText}`
        : `cubin ${best.archName} runs on compute capability ${ccText} (same major, minor ${a.minor} <= ${cc[1]})`
  return { entry: best.entry, kind: best.kind, arch: best.archName, reason }
}
