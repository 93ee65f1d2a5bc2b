// A KernelHost that runs every step on two hosts, the emulator (the reference) and WebGPU, and compares
// what each read returns (issue 15: "results equal to the emulator's"). The case sees the emulator's data,
// so its own check against the TypeScript reference still runs; a WebGPU result that differs beyond the
// case's stated tolerance fails the read, naming the element. Buffers of the WebGPU side are found by the
// emulator address they mirror (a pointer into the middle of a buffer maps to the same offset).
import type { DeviceBuffer, KernelArg, KernelHost, View, ViewCtor } from './kernel-runner.js'
import type { Dim3 } from '../../packages/runtime/src/backend.js'

/** How far WebGPU's f32 results may be from the emulator's, and why (PTX ISA and WGSL accuracy rules). */
export interface F32Tolerance {
  /** Allowed distance in f32 ulps of the emulator's value. */
  ulps?: number
  /** Absolute distance allowed. */
  abs?: number
  /** WGSL lets an implementation flush f32 subnormals (WGSL spec, "Floating Point Accuracy"); SwiftShader
   *  does: a subnormal emulator value may be ±0 here, and values computed from subnormals may differ. */
  subnormalsFlushed?: true
  why: string
}

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)
function ulpOf(x: number): number {
  const a = Math.abs(x)
  if (a < 2 ** -126) return 2 ** -149
  return 2 ** (Math.floor(Math.log2(a)) - 23)
}

/** Element-wise comparison; returns the first mismatches (empty when within tolerance). */
export function compareWithEmulator(what: string, emu: ArrayLike<number | bigint>, gpu: ArrayLike<number | bigint>, isF32: boolean, tol?: F32Tolerance): string[] {
  const bad: string[] = []
  let count = 0
  for (let i = 0; i < emu.length; i++) {
    const e = emu[i]!, g = gpu[i]!
    let ok: boolean
    if (typeof e === 'bigint' || typeof g === 'bigint') ok = e === g
    else if (Object.is(e, g) || (Number.isNaN(e) && Number.isNaN(g))) ok = true
    else if (!isF32 || !tol) ok = false
    else {
      const flushed = tol.subnormalsFlushed && Math.abs(e) < 2 ** -126 && (g === 0 || Math.abs(g) < 2 ** -126)
      ok = flushed || Math.abs(e - g) <= Math.max(tol.abs ?? 0, (tol.ulps ?? 0) * ulpOf(e))
    }
    if (!ok) {
      count++
      if (bad.length < 6) {
        f32[0] = Number(g)
        bad.push(`[${i}] WebGPU ${g}${isF32 ? ` (0x${u32[0]!.toString(16)})` : ''}, emulator ${e}`)
      }
    }
  }
  return count ? [`${what}: ${count} of ${emu.length} elements differ from the emulator${tol ? ` beyond ${tol.ulps ?? 0} ulps` : ''}: ${bad.join('; ')}`] : []
}

interface Mirror { emu: bigint; gpu: bigint; byteLength: number }

export class DiffHost implements KernelHost {
  private readonly mirrors: Mirror[] = []
  /** The tolerance for f32 reads of the running case (set by the test per case). */
  tolerance: F32Tolerance | undefined
  /** Kernels whose results a read has compared since they were launched. */
  readonly verified = new Set<string>()
  private pending = new Set<string>()
  /** How much of the emulator's device printf text the WebGPU side has been compared with. */
  private printedSeen = 0
  /** `gpuPrinted`: the WebGPU side's device printf text since the last call; each read then compares it with
   *  what the emulator printed since the last read. */
  constructor(readonly emu: KernelHost, readonly gpu: KernelHost & { synchronize(): Promise<void> }, readonly label: string, readonly gpuPrinted?: () => Promise<string>) {}

  get launched(): Set<string> { return this.emu.launched }
  get printed(): string[] { return this.emu.printed }
  entry(name: string): string { return this.emu.entry(name) }

  private mirror(buf: DeviceBuffer): DeviceBuffer {
    const m = this.mirrors.find((x) => buf.address >= x.emu && buf.address < x.emu + BigInt(Math.max(x.byteLength, 1)))
    if (!m) throw new Error(`${this.label}: no WebGPU buffer mirrors emulator address 0x${buf.address.toString(16)}`)
    return { address: m.gpu + (buf.address - m.emu), byteLength: buf.byteLength }
  }

  /** A struct passed by value with the WebGPU addresses of the device pointers in it: every 8-byte aligned
   *  field whose value lies inside a mirrored emulator buffer (the corpus's structs hold pointers there). */
  private mirrorStruct(bytes: Uint8Array): Uint8Array {
    const out = bytes.slice()
    const dv = new DataView(out.buffer)
    for (let at = 0; at + 8 <= out.length; at += 8) {
      const v = dv.getBigUint64(at, true)
      const m = this.mirrors.find((x) => v >= x.emu && v < x.emu + BigInt(Math.max(x.byteLength, 1)))
      if (m) dv.setBigUint64(at, m.gpu + (v - m.emu), true)
    }
    return out
  }

  /** Cases whose results depend on the order in which threads run (atomic exchange chains), or come from
   *  `.approx` instructions the PTX ISA bounds but does not fix bit for bit: the case's own check (order-
   *  independent; the functions' bounds) reads WebGPU's data instead of comparing it with the emulator's. */
  ownCheck = false

  private record(e: DeviceBuffer, g: DeviceBuffer): DeviceBuffer {
    this.mirrors.push({ emu: e.address, gpu: g.address, byteLength: e.byteLength })
    return e
  }

  async upload(data: ArrayBufferView): Promise<DeviceBuffer> {
    return this.record(await this.emu.upload(data), await this.gpu.upload(data))
  }

  async alloc(byteLength: number, byte = 0): Promise<DeviceBuffer> {
    return this.record(await this.emu.alloc(byteLength, byte), await this.gpu.alloc(byteLength, byte))
  }

  async write(buf: DeviceBuffer, data: ArrayBufferView): Promise<void> {
    await this.emu.write(buf, data)
    await this.gpu.write(this.mirror(buf), data)
  }

  async read<T extends View>(buf: DeviceBuffer, ctor: ViewCtor<T>): Promise<T> {
    const e = await this.emu.read(buf, ctor)
    const g = await this.gpu.read(this.mirror(buf), ctor)
    if (this.gpuPrinted) {
      const all = this.emu.printed.join('')
      const want = all.slice(this.printedSeen)
      this.printedSeen = all.length
      const got = await this.gpuPrinted()
      if (got !== want) throw new Error(`device printf on WebGPU printed ${JSON.stringify(got.slice(0, 300))}, the emulator ${JSON.stringify(want.slice(0, 300))}`)
    }
    if (this.ownCheck) {
      for (const k of this.pending) this.verified.add(k)
      this.pending.clear()
      return g
    }
    const problems = compareWithEmulator(`${ctor.name} at 0x${buf.address.toString(16)}`, e as unknown as ArrayLike<number>, g as unknown as ArrayLike<number>, (ctor as unknown) === Float32Array, this.tolerance)
    if (problems.length) throw new Error(problems.join('; '))
    for (const k of this.pending) this.verified.add(k)
    this.pending.clear()
    return e
  }

  async variable(ident: string): Promise<DeviceBuffer> {
    return this.record(await this.emu.variable(ident), await this.gpu.variable(ident))
  }

  /** Both launch; a fault must happen on both (WebGPU reports it at the next synchronize, like CUDA), and
   *  then WebGPU's message is the one the case checks. */
  async launch(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes = 0): Promise<void> {
    const gArgs = args.map((a) => (a instanceof Uint8Array ? this.mirrorStruct(a) : typeof a === 'object' ? this.mirror(a) : a))
    let emuError: Error | undefined
    try { await this.emu.launch(name, grid, block, args, sharedBytes) } catch (e) { emuError = e as Error }
    let gpuError: Error | undefined
    try {
      await this.gpu.launch(name, grid, block, gArgs, sharedBytes)
      await this.gpu.synchronize()
    } catch (e) { gpuError = e as Error }
    if (emuError && !gpuError) throw new Error(`WebGPU ran ${name} without the fault the emulator reports (${emuError.name})`)
    if (gpuError) throw gpuError
    this.pending.add(this.emu.entry(name))
  }
}
