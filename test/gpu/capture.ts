// What a corpus case produced on one backend, and how two such results are compared (issue 18): every output
// as typed bytes, a hash of everything the case fed the device (its seeded inputs, launch configurations and
// arguments, with buffers named by their order instead of their addresses), and the kernels it launched.
// Comparison rules: integers bit-exact; floats by value, with the largest distance in units in the last place
// (ULPs) reported; where the kernels' PTX holds instructions whose results the ISA leaves to the hardware
// (`.approx` math, tensor-core `mma`) or to the order threads run in (atomics), a difference is accepted only
// when both sides pass the case's own reference check.
import { createHash } from 'node:crypto'
import { parsePtx, typeSize, type PtxFunction } from '@kernelpack/ptx'
import type { DeviceBuffer, KernelArg, View, ViewCtor } from '../helpers/kernel-runner.js'
import type { CorpusHost, LaunchExtras, Numeric } from '../helpers/kernel-corpus.js'
import type { Dim3 } from '../../packages/runtime/src/backend.js'

/** Element type of an output, as stored in a recorded fixture (PTX type names; sizes from @kernelpack/ptx). */
export type ElemType = 's8' | 'u8' | 's16' | 'u16' | 's32' | 'u32' | 's64' | 'u64' | 'f32' | 'f64'

export interface Output {
  name: string
  type: ElemType
  bytes: Uint8Array
}

const ctorTypes = new Map<unknown, ElemType>([
  [Int8Array, 's8'], [Uint8Array, 'u8'], [Uint8ClampedArray, 'u8'], [Int16Array, 's16'], [Uint16Array, 'u16'],
  [Int32Array, 's32'], [Uint32Array, 'u32'], [BigInt64Array, 's64'], [BigUint64Array, 'u64'], [Float32Array, 'f32'], [Float64Array, 'f64'],
])

export const isFloat = (t: ElemType) => t === 'f32' || t === 'f64'
export const elemSize = (t: ElemType) => typeSize(t)

/** One output as typed bytes: a typed array keeps its type; a plain array of numbers is stored as f64, of
 *  bigints as u64 (two's complement). */
export function toOutput(name: string, v: Numeric): Output {
  if (ArrayBuffer.isView(v)) {
    const type = ctorTypes.get(v.constructor)
    if (!type) throw new Error(`output ${name}: unsupported ${v.constructor.name}`)
    return { name, type, bytes: new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)) }
  }
  const xs = Array.from(v as ArrayLike<number | bigint>)
  if (xs.some((x) => typeof x === 'bigint')) {
    return { name, type: 'u64', bytes: new Uint8Array(BigUint64Array.from(xs, (x) => BigInt.asUintN(64, BigInt(x))).buffer) }
  }
  return { name, type: 'f64', bytes: new Uint8Array(Float64Array.from(xs as number[]).buffer) }
}

/** The elements of an output (numbers, or bigints for 64-bit integers). */
export function elements(o: Output): ArrayLike<number> | ArrayLike<bigint> {
  const b = o.bytes.buffer.slice(o.bytes.byteOffset, o.bytes.byteOffset + o.bytes.byteLength)
  switch (o.type) {
    case 's8': return new Int8Array(b)
    case 'u8': return new Uint8Array(b)
    case 's16': return new Int16Array(b)
    case 'u16': return new Uint16Array(b)
    case 's32': return new Int32Array(b)
    case 'u32': return new Uint32Array(b)
    case 's64': return new BigInt64Array(b)
    case 'u64': return new BigUint64Array(b)
    case 'f32': return new Float32Array(b)
    case 'f64': return new Float64Array(b)
  }
}

/** Position of a float's bit pattern on the number line of its type: adjacent values differ by 1, +0 and -0
 *  by 1 (so a sign-of-zero difference counts as one ULP). */
function ordinal32(bits: number): bigint {
  const mag = bits & 0x7fffffff
  return BigInt(bits < 0 ? -mag - 1 : mag)
}
function ordinal64(bits: bigint): bigint {
  const mag = bits & 0x7fffffffffffffffn
  return bits >> 63n ? -mag - 1n : mag
}

export interface OutputDiff {
  name: string
  type: ElemType
  count: number
  /** Elements whose bits differ (NaNs with different payloads not counted: they are equal as values). */
  differing: number
  /** Largest ULP distance between the two sides over the non-NaN elements (floats only). */
  maxUlp: number | undefined
  /** NaN on one side only. */
  nanMismatch: number
  /** NaN on both sides with different bits (canonical NaN 0x7fffffff on the GPU, 0x7fc00000 from V8…). */
  nanPayload: number
  /** The first differences, `[i] a vs b`. */
  examples: string[]
  /** A length or type difference, which makes the elements incomparable. */
  shape?: string
}

/** Compares two captures of the same output; `a` is the side under test, `b` the one it is compared with. */
export function diffOutput(a: Output, b: Output): OutputDiff {
  const d: OutputDiff = { name: a.name, type: a.type, count: a.bytes.length / elemSize(a.type), differing: 0, maxUlp: isFloat(a.type) ? 0 : undefined, nanMismatch: 0, nanPayload: 0, examples: [] }
  if (a.type !== b.type || a.bytes.length !== b.bytes.length) {
    d.shape = `${a.type}[${a.bytes.length / elemSize(a.type)}] vs ${b.type}[${b.bytes.length / elemSize(b.type)}]`
    d.differing = d.count
    return d
  }
  const ea = elements(a)
  const eb = elements(b)
  const dva = new DataView(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength)
  const dvb = new DataView(b.bytes.buffer, b.bytes.byteOffset, b.bytes.byteLength)
  let maxUlp = 0n
  for (let i = 0; i < d.count; i++) {
    const x = ea[i]!
    const y = eb[i]!
    if (!isFloat(a.type)) {
      if (x !== y) {
        d.differing++
        if (d.examples.length < 6) d.examples.push(`[${i}] ${x} vs ${y}`)
      }
      continue
    }
    const nx = Number.isNaN(x as number)
    const ny = Number.isNaN(y as number)
    const ulp = a.type === 'f32'
      ? ordinal32(dva.getInt32(4 * i, true)) - ordinal32(dvb.getInt32(4 * i, true))
      : ordinal64(dva.getBigUint64(8 * i, true)) - ordinal64(dvb.getBigUint64(8 * i, true))
    if (nx && ny) {
      if (ulp !== 0n) d.nanPayload++
      continue
    }
    if (nx !== ny) {
      d.nanMismatch++
      d.differing++
      if (d.examples.length < 6) d.examples.push(`[${i}] ${x} vs ${y}`)
      continue
    }
    if (ulp !== 0n) {
      d.differing++
      const abs = ulp < 0n ? -ulp : ulp
      if (abs > maxUlp) maxUlp = abs
      if (d.examples.length < 6) d.examples.push(`[${i}] ${x} vs ${y} (${abs} ulp)`)
    }
  }
  if (d.maxUlp !== undefined) d.maxUlp = maxUlp > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(maxUlp)
  if (d.nanMismatch) d.maxUlp = Infinity
  return d
}

/** Why a kernel's results may legitimately differ between two correct implementations of PTX. */
export interface Latitude {
  /** Approximate instructions and tensor-core products the kernels execute (PTX ISA: their error is bounded,
   *  not specified bit for bit). */
  approx: string[]
  /** Atomics (the order threads reach them is not specified). */
  atomics: string[]
  /** Reads of %clock, %smid, %warpid, %globaltimer or activemask (scheduling-dependent values). */
  schedule: string[]
}

const approxOp = /\.approx\b|^rsqrt\b|^ex2\b|^lg2\b|^sin\b|^cos\b|^tanh\b|^div\.full\b|^w?mma\b|^wgmma\b/
const atomicOp = /^(atom|red)\b/
const scheduleText = /%(clock|clock64|globaltimer|globaltimer_lo|globaltimer_hi|smid|nsmid|warpid|nwarpid)\b|\bactivemask\b/

/** Latitude of every `.entry` of a PTX module, including what it calls (transitively). */
export function readLatitudes(ptx: string): Map<string, Latitude> {
  const mod = parsePtx(ptx)
  const fns = new Map(mod.functions.map((f) => [f.name, f]))
  const own = new Map<string, { lat: Latitude; calls: string[] }>()
  for (const f of mod.functions) own.set(f.name, scan(f, fns))
  const out = new Map<string, Latitude>()
  for (const f of mod.functions) {
    if (f.kind !== 'entry') continue
    const lat: Latitude = { approx: [], atomics: [], schedule: [] }
    const seen = new Set<string>()
    const visit = (name: string) => {
      if (seen.has(name)) return
      seen.add(name)
      const o = own.get(name)
      if (!o) return
      lat.approx.push(...o.lat.approx)
      lat.atomics.push(...o.lat.atomics)
      lat.schedule.push(...o.lat.schedule)
      o.calls.forEach(visit)
    }
    visit(f.name)
    out.set(f.name, { approx: [...new Set(lat.approx)].sort(), atomics: [...new Set(lat.atomics)].sort(), schedule: [...new Set(lat.schedule)].sort() })
  }
  return out
}

function scan(f: PtxFunction, fns: Map<string, PtxFunction>): { lat: Latitude; calls: string[] } {
  const lat: Latitude = { approx: [], atomics: [], schedule: [] }
  const calls: string[] = []
  for (const s of f.body ?? []) {
    if (s.kind !== 'instr') continue
    if (approxOp.test(s.opcode)) lat.approx.push(s.opcode)
    if (atomicOp.test(s.opcode)) lat.atomics.push(s.opcode)
    const sched = scheduleText.exec(s.text)
    if (sched) lat.schedule.push(sched[0])
    if (s.op[0] === 'call') {
      for (const a of s.args) if (a.k === 'id' && fns.has(a.name)) calls.push(a.name)
    }
  }
  return { lat, calls }
}

/** The union of the latitudes of `entries`. */
export function latitudeOf(entries: Iterable<string>, all: Map<string, Latitude>): Latitude {
  const lat: Latitude = { approx: [], atomics: [], schedule: [] }
  for (const e of entries) {
    const l = all.get(e)
    if (!l) continue
    lat.approx.push(...l.approx)
    lat.atomics.push(...l.atomics)
    lat.schedule.push(...l.schedule)
  }
  return { approx: [...new Set(lat.approx)].sort(), atomics: [...new Set(lat.atomics)].sort(), schedule: [...new Set(lat.schedule)].sort() }
}

export const hasLatitude = (l: Latitude) => l.approx.length + l.atomics.length + l.schedule.length > 0

export function describeLatitude(l: Latitude): string {
  const parts: string[] = []
  if (l.approx.length) parts.push(`approximate: ${l.approx.slice(0, 4).join(', ')}${l.approx.length > 4 ? ', …' : ''}`)
  if (l.atomics.length) parts.push(`atomics: ${l.atomics.slice(0, 3).join(', ')}${l.atomics.length > 3 ? ', …' : ''}`)
  if (l.schedule.length) parts.push(`scheduling: ${l.schedule.join(', ')}`)
  return parts.join('; ') || 'none (every instruction is specified bit for bit)'
}

export type Agreement = 'equal' | 'within' | 'differs'

export interface CaseComparison {
  agreement: Agreement
  /** Largest ULP distance over the float outputs (undefined: no float output). */
  maxUlp: number | undefined
  outputs: OutputDiff[]
  /** Why `within` was accepted or what `differs` means. */
  note: string
}

/**
 * Compares the outputs of one case on two sides. Bit-equal (floats: equal as values) → `equal`. Otherwise, a
 * kernel without latitude must give the same bits on every correct implementation of PTX → `differs`; one
 * with latitude is `within` when both sides pass the case's reference (`refOk`), `differs` when not.
 */
export function compareCase(a: readonly Output[], b: readonly Output[], lat: Latitude, refOk: { a: boolean; b: boolean }): CaseComparison {
  const outputs: OutputDiff[] = []
  const names = new Set([...a.map((o) => o.name), ...b.map((o) => o.name)])
  for (const name of names) {
    const x = a.find((o) => o.name === name)
    const y = b.find((o) => o.name === name)
    if (!x || !y) {
      outputs.push({ name, type: (x ?? y)!.type, count: 0, differing: 1, maxUlp: undefined, nanMismatch: 0, nanPayload: 0, examples: [], shape: x ? 'missing on the other side' : 'missing on this side' })
      continue
    }
    outputs.push(diffOutput(x, y))
  }
  const floats = outputs.filter((o) => o.maxUlp !== undefined)
  const maxUlp = floats.length ? Math.max(...floats.map((o) => o.maxUlp!)) : undefined
  const differing = outputs.filter((o) => o.differing > 0)
  if (!differing.length) return { agreement: 'equal', maxUlp, outputs, note: '' }
  const where = differing.map((o) => `${o.name}: ${o.shape ?? `${o.differing} of ${o.count} differ${o.maxUlp ? ` (max ${o.maxUlp} ulp)` : ''}; ${o.examples.slice(0, 3).join(', ')}`}`).join(' | ')
  if (!hasLatitude(lat)) return { agreement: 'differs', maxUlp, outputs, note: `the kernels have no approximate instruction, atomic or scheduling-dependent read, so the bits must agree: ${where}` }
  if (refOk.a && refOk.b) return { agreement: 'within', maxUlp, outputs, note: `both pass the case's reference; the difference is allowed by the PTX (${describeLatitude(lat)}): ${where}` }
  return { agreement: 'differs', maxUlp, outputs, note: `${refOk.a ? '' : 'this side fails the reference; '}${refOk.b ? '' : 'the other side fails the reference; '}${where}` }
}

// --- recording

/** A run of one case on one host. */
export interface CaseRun {
  outputs: Output[]
  /** The case's own check against its TypeScript reference: undefined when it passed. */
  refError?: string
  /** An error that stopped the run before it could be checked (load, launch, driver). */
  runError?: string
  /** sha256 of everything fed to the device (see RecordingHost). */
  trace: string
  /** PTX entry names launched. */
  launched: string[]
  ms: number
}

/**
 * Wraps a host: forwards every call, keeps each `read` (as an output named `read<N>`) and hashes what goes in.
 * Buffers are named `#<n>` in the order they were made, so the hash is the same on every backend.
 */
export class RecordingHost implements CorpusHost {
  readonly reads: Output[] = []
  /** Entries launched through this recorder (the inner host's `launched` spans every case run on it). */
  readonly launchedHere = new Set<string>()
  private readonly hash = createHash('sha256')
  private readonly buffers: DeviceBuffer[] = []
  private readonly variables = new Map<DeviceBuffer, string>()
  constructor(readonly inner: CorpusHost) {}

  get label() { return this.inner.label }
  get launched() { return this.inner.launched }
  get printed() { return this.inner.printed }
  entry(name: string) { return this.inner.entry(name) }

  private note(line: string) { this.hash.update(line + '\n') }
  private nameOf(b: DeviceBuffer): string {
    const v = this.variables.get(b)
    if (v) return `var:${v}`
    const i = this.buffers.indexOf(b)
    return i >= 0 ? `#${i}` : `?${b.byteLength}`
  }
  private argText(a: KernelArg): string {
    if (a instanceof Uint8Array) {
      // a struct by value may hold device pointers, whose values differ between backends: each aligned 8-byte
      // slot that points into a buffer of this run is named (buffer and offset) and hashed as zero
      const copy = a.slice()
      const dv = new DataView(copy.buffer)
      const pointers: string[] = []
      for (let at = 0; at + 8 <= copy.length; at += 8) {
        const v = dv.getBigUint64(at, true)
        const b = v === 0n ? undefined : this.buffers.find((x) => v >= x.address && v < x.address + BigInt(Math.max(1, x.byteLength)))
        if (!b) continue
        pointers.push(`@${at}=${this.nameOf(b)}+${v - b.address}`)
        dv.setBigUint64(at, 0n, true)
      }
      return `bytes:${createHash('sha256').update(copy).digest('hex').slice(0, 16)}${pointers.join('')}`
    }
    if (typeof a === 'object') return this.nameOf(a)
    if (typeof a === 'bigint') {
      // a raw address inside a buffer (an offset pointer) is named by the buffer and offset
      const b = this.buffers.find((x) => a >= x.address && a < x.address + BigInt(Math.max(1, x.byteLength)))
      if (b && a !== 0n) return `${this.nameOf(b)}+${a - b.address}`
      return `${a}n`
    }
    return String(a)
  }

  async upload(data: ArrayBufferView) {
    const b = await this.inner.upload(data)
    this.buffers.push(b)
    this.note(`upload ${this.nameOf(b)} ${data.constructor.name} ${createHash('sha256').update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest('hex')}`)
    return b
  }
  async alloc(byteLength: number, byte?: number) {
    const b = await this.inner.alloc(byteLength, byte)
    this.buffers.push(b)
    this.note(`alloc ${this.nameOf(b)} ${byteLength} ${byte ?? 0}`)
    return b
  }
  async read<T extends View>(buf: DeviceBuffer, ctor: ViewCtor<T>): Promise<T> {
    const v = await this.inner.read(buf, ctor)
    this.note(`read ${this.nameOf(buf)} ${ctor.name}`)
    this.reads.push(toOutput(`read${this.reads.length} (${this.nameOf(buf)})`, v as unknown as Numeric))
    return v
  }
  async write(buf: DeviceBuffer, data: ArrayBufferView) {
    this.note(`write ${this.nameOf(buf)} ${createHash('sha256').update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest('hex')}`)
    return this.inner.write(buf, data)
  }
  async launch(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes = 0) {
    return this.launchWith(name, grid, block, args, sharedBytes, {})
  }
  async launchWith(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes: number, extras: LaunchExtras) {
    this.launchedHere.add(this.inner.entry(name))
    this.note(`launch ${this.inner.entry(name)} ${JSON.stringify(grid)} ${JSON.stringify(block)} ${sharedBytes} ${JSON.stringify(extras)} ${args.map((a) => this.argText(a)).join(' ')}`)
    return this.inner.launchWith(name, grid, block, args, sharedBytes, extras)
  }
  async variable(ident: string) {
    const v = await this.inner.variable(ident)
    this.variables.set(v, ident)
    return v
  }

  digest(): string {
    return this.hash.copy().digest('hex')
  }
}
