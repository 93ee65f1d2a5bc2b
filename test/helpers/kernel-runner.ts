// Drives one PTX module on an execution backend for tests and benches: finds entries by name, packs kernel
// arguments into PTX `.param` layout (each parameter at an offset aligned to its PTX alignment, pointers as
// 8-byte device addresses, scalars little-endian: PTX ISA "Kernel Function Parameters"), moves typed arrays
// to and from device memory, and compares results with the element index of the first mismatches.
import { layoutParams, readPtxInterface } from '@kernelpack/ptx'
import type { Backend, BackendModule, Dim3 } from '../../packages/runtime/src/backend.js'

/** One `.param` of a PTX `.entry`, as declared (read by @kernelpack/ptx, the one PTX front end). */
export interface PtxParam {
  name: string
  /** Element type without the dot: `u64`, `f32`, `b8`… */
  type: string
  size: number
  align: number
}

/** Every `.entry` of a PTX text with its parameter list. */
export function readPtxEntries(ptx: string): Map<string, PtxParam[]> {
  return new Map(readPtxInterface(ptx).kernels.map((k) => [k.name, k.params.map((p) => ({ name: p.name, type: p.type, size: p.size, align: p.align }))]))
}

/** A module-scope `.global`/`.const` variable's PTX name containing `ident` (nvcc keeps `s_scale`, clang says `_ZL7s_scale`). */
export function findPtxVariable(ptx: string, ident: string): string {
  const names = readPtxInterface(ptx).variables.map((v) => v.name)
  const hits = [...new Set(names.filter((n) => n === ident || new RegExp(`(^|\\d)${ident}$`).test(n)))]
  if (hits.length !== 1) throw new Error(`expected one PTX variable named like ${ident}, found ${hits.length ? hits.join(', ') : 'none'} among ${names.join(', ')}`)
  return hits[0]!
}

/** Device memory the runner allocated. */
export interface DeviceBuffer {
  address: bigint
  byteLength: number
}

/** A kernel argument: a buffer for a pointer, a number/bigint for a scalar, bytes for a struct by value. */
export type KernelArg = DeviceBuffer | number | bigint | boolean | Uint8Array

/** Packs arguments for `params` into one `.param`-layout buffer. */
export function packParams(entry: string, params: readonly PtxParam[], args: readonly KernelArg[]): { bytes: Uint8Array; offsets: number[]; sizes: number[] } {
  if (args.length !== params.length) throw new Error(`${entry}: expected ${params.length} arguments, got ${args.length}`)
  const { offsets, end } = layoutParams(params)
  const bytes = new Uint8Array(Math.max(end, 1))
  const dv = new DataView(bytes.buffer)
  params.forEach((p, i) => {
    const a = args[i]!
    const off = offsets[i]!
    if (a instanceof Uint8Array) {
      if (a.length !== p.size) throw new Error(`${entry}: parameter ${i} (${p.name}) is ${p.size} bytes, got ${a.length}`)
      bytes.set(a, off)
      return
    }
    let v: number | bigint
    if (typeof a === 'object') v = a.address
    else if (typeof a === 'boolean') v = a ? 1 : 0
    else v = a
    if (p.type === 'f32') dv.setFloat32(off, Number(v), true)
    else if (p.type === 'f64') dv.setFloat64(off, Number(v), true)
    else {
      const big = BigInt.asUintN(p.size * 8, typeof v === 'bigint' ? v : BigInt(Math.trunc(v)))
      for (let b = 0; b < p.size; b++) bytes[off + b] = Number((big >> BigInt(8 * b)) & 0xffn)
    }
  })
  return { bytes, offsets, sizes: params.map((p) => p.size) }
}

export type View = ArrayBufferView & { length: number }
export type ViewCtor<T extends View> = { new (buffer: ArrayBuffer, byteOffset?: number, length?: number): T; BYTES_PER_ELEMENT: number }

/** What corpus cases use to run kernels: a module loaded on a backend directly (KernelRunner) or through
 *  the runtime API (RuntimeKernelHost in runtime-kernel-host.ts). */
export interface KernelHost {
  readonly label: string
  /** Entries launched so far (so a corpus can check that it ran every kernel of a module). */
  readonly launched: Set<string>
  /** Device printf output of the launches, for cases that check it. */
  readonly printed: string[]
  /** The one entry whose name equals `name` or contains it (a C++ kernel's identifier inside its mangled name). */
  entry(name: string): string
  upload(data: ArrayBufferView): Promise<DeviceBuffer>
  /** A buffer of `byteLength` bytes, each set to `byte`. */
  alloc(byteLength: number, byte?: number): Promise<DeviceBuffer>
  read<T extends View>(buf: DeviceBuffer, ctor: ViewCtor<T>): Promise<T>
  write(buf: DeviceBuffer, data: ArrayBufferView): Promise<void>
  launch(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes?: number): Promise<void>
  /** A module variable found by identifier (see findPtxVariable). */
  variable(ident: string): Promise<DeviceBuffer>
}

/** The one name in `names` equal to `name` or containing it; throws listing the candidates otherwise. */
export function pickEntry(names: readonly string[], name: string, label: string): string {
  if (names.includes(name)) return name
  let hits = names.filter((e) => e.includes(name))
  // `cg_reduce` is in both _Z9cg_reduce… and _Z20multi_warp_cg_reduce…: prefer the Itanium-mangled name itself
  if (hits.length > 1 && /^[A-Za-z_]\w*$/.test(name)) {
    const mangled = hits.filter((e) => new RegExp(`(^|[^0-9])${name.length}${name}`).test(e))
    if (mangled.length === 1) hits = mangled
  }
  if (hits.length !== 1) throw new Error(`${label}: expected one .entry matching ${name}, found ${hits.length ? hits.join(', ') : 'none'} (entries: ${names.join(', ')})`)
  return hits[0]!
}

/** One loaded PTX module on a backend. */
export class KernelRunner implements KernelHost {
  readonly entries: Map<string, PtxParam[]>
  /** Entries launched so far (so a corpus can check that it ran every kernel of a module). */
  readonly launched = new Set<string>()
  /** `printed`: where the backend was told to put device printf output, for cases that check it. */
  constructor(readonly backend: Backend, readonly module: BackendModule, readonly ptx: string, readonly label: string, readonly printed: string[] = []) {
    this.entries = readPtxEntries(ptx)
  }

  static async load(backend: Backend, ptx: string, arch: string, label: string, printed: string[] = []): Promise<KernelRunner> {
    const module = await backend.loadModule({ kind: 'ptx', arch, bytes: new TextEncoder().encode(ptx) })
    return new KernelRunner(backend, module, ptx, label, printed)
  }

  /** The tier line of an emulator kernel (`tier: WebAssembly`, or `tier: JavaScript (…)`), from its module's
   *  inspect(); '-' for another backend. */
  tier(name: string): string {
    const m = this.module as BackendModule & { inspect?: (k: string) => string }
    return m.inspect ? (m.inspect(this.entry(name)).split('\n').find((l) => l.includes('tier:'))?.trim() ?? '-') : '-'
  }

  entry(name: string): string {
    return pickEntry([...this.entries.keys()], name, this.label)
  }

  async upload(data: ArrayBufferView): Promise<DeviceBuffer> {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    const address = await this.backend.alloc(Math.max(bytes.length, 1))
    await this.backend.copyToDevice(address, bytes)
    return { address, byteLength: bytes.length }
  }

  async alloc(byteLength: number, byte = 0): Promise<DeviceBuffer> {
    const address = await this.backend.alloc(Math.max(byteLength, 1))
    await this.backend.memset(address, byte, byteLength)
    return { address, byteLength }
  }

  async read<T extends View>(buf: DeviceBuffer, ctor: ViewCtor<T>): Promise<T> {
    const bytes = new Uint8Array(buf.byteLength)
    await this.backend.copyFromDevice(bytes, buf.address)
    return new ctor(bytes.buffer, 0, buf.byteLength / ctor.BYTES_PER_ELEMENT)
  }

  async launch(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes = 0, options: { cooperative?: boolean; timeoutMs?: number } = {}): Promise<void> {
    const entry = this.entry(name)
    this.launched.add(entry)
    const fn = await this.module.getFunction(entry)
    const dim = (d: number | Dim3): Dim3 => (typeof d === 'number' ? [d, 1, 1] : d)
    await this.backend.launch(fn, { grid: dim(grid), block: dim(block), sharedBytes, ...(options.cooperative ? { cooperative: true } : {}), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) }, packParams(entry, this.entries.get(entry)!, args))
  }

  /** Address of a module variable found by identifier (see findPtxVariable); needs backend getGlobal. */
  async variable(ident: string): Promise<DeviceBuffer> {
    const name = findPtxVariable(this.ptx, ident)
    if (!this.module.getGlobal) throw new Error(`${this.backend.name} backend has no getGlobal; cannot reach ${name}`)
    const g = await this.module.getGlobal(name)
    return { address: g.address, byteLength: g.size }
  }

  async write(buf: DeviceBuffer, data: ArrayBufferView): Promise<void> {
    await this.backend.copyToDevice(buf.address, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  }
}

/** Deterministic PRNG (mulberry32) so every run feeds the kernels the same inputs. */
export function createRng(seed: number): { u32(): number; int(lo: number, hi: number): number; u64(): bigint } {
  let s = seed >>> 0
  const u32 = () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
  return {
    u32,
    /** Integer in [lo, hi]. */
    int: (lo, hi) => lo + (u32() % (hi - lo + 1)),
    u64: () => (BigInt(u32()) << 32n) | BigInt(u32()),
  }
}

type Numeric = ArrayLike<number> | ArrayLike<bigint>

/** Throws listing the first mismatches when `actual` differs from `expected` (bit-exact for integers; for
 *  floats Object.is-equal, or within `relTol` relative / `absTol` absolute error when given). */
export function expectEqualArrays(what: string, actual: Numeric, expected: Numeric, tol: { relTol?: number; absTol?: number } = {}): void {
  if (actual.length !== expected.length) throw new Error(`${what}: length ${actual.length}, expected ${expected.length}`)
  const bad: string[] = []
  let count = 0
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!
    const e = expected[i]!
    let ok: boolean
    if (typeof a === 'bigint' || typeof e === 'bigint') ok = a === e
    else if (Object.is(a, e) || a === e) ok = true
    else if (tol.relTol !== undefined || tol.absTol !== undefined) ok = Math.abs(a - e) <= Math.max(tol.absTol ?? 0, (tol.relTol ?? 0) * Math.abs(e))
    else ok = false
    if (!ok) {
      count++
      if (bad.length < 8) bad.push(`[${i}] got ${a}, expected ${e}`)
    }
  }
  if (count) throw new Error(`${what}: ${count} of ${actual.length} elements differ: ${bad.join('; ')}`)
}
