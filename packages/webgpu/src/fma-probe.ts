// Whether this device's WGSL `fma()` is fused (issue 26 item 4). PTX's fma.rn.f32 rounds a·b + c once; WGSL
// lets `fma()` round the product first (SwiftShader's does; HLSL's `mad`, which Tint writes for Direct3D, may
// or may not fuse). The translation computes fma.rn.f32 as `kp_fma_rn` (wgsl-lib.ts), which takes `fma()` when
// the override kp_fma_exact is 0 and an emulated exact fma otherwise; the backend sets the override from this
// probe, run once per device before the first pipeline that needs it: a dispatch of `fma()` on triples whose
// product lies exactly halfway between two f32 values (or a hair from it) with an addend that cancels most of
// it, read from a buffer so that no compiler folds them. Only a device that gives the fused result for every
// triple is taken as fused; one that fails or cannot run the probe gets the exact sequence. Loaded on demand
// (not every page has a kernel with fma.rn.f32).
import { MAP_READ, USAGE_COPY_DST, USAGE_COPY_SRC, USAGE_MAP_READ, USAGE_STORAGE } from './layout.js'

/** Triples (a, b, c) whose fused a·b + c differs from the one that rounds a·b first, as f32 bits; each addend
 *  takes the rounded part of the product away, so that what is left is the bits a first rounding loses. */
export const FMA_PROBE: ReadonlyArray<readonly [number, number, number]> = [
  [0x3f800800, 0x3f800800, 0xbf801000], // (1 + 2^-12)² − (1 + 2^-11) = 2^-24 (the product a tie); rounded first: 0
  [0x3f800800, 0xbf800800, 0x3f801000], // the same negated: −2^-24
  [0x3f800800, 0x3f801800, 0xbf802000], // (1 + 2^-12)(1 + 3·2^-12) − (1 + 2^-10) = 3·2^-24; rounded first: 2^-22
  [0x3f800001, 0x3f800001, 0xbf800002], // (1 + 2^-23)² − (1 + 2^-22) = 2^-46; rounded first: 0
]

const PROBE_WGSL = `
@group(0) @binding(0) var<storage, read_write> v: array<f32, ${FMA_PROBE.length * 4}>;
@compute @workgroup_size(1)
fn main() {
  for (var i = 0u; i < ${FMA_PROBE.length}u; i = i + 1u) { v[${FMA_PROBE.length * 3}u + i] = fma(v[3u * i], v[3u * i + 1u], v[3u * i + 2u]); }
}
`

/** Whether the results (f32 bits, one per FMA_PROBE triple) are the fused ones (`fused`: the exact results). */
export function fmaIsFused(results: ArrayLike<number>, fused: ArrayLike<number>): boolean {
  if (results.length !== fused.length) return false
  for (let i = 0; i < fused.length; i++) if (results[i]! >>> 0 !== fused[i]! >>> 0) return false
  return true
}

/** a·b + c rounded once to f32, from f32 bits: the product of two f32 values is exact in binary64, and the sum
 *  of it and an f32 addend near its size (as in FMA_PROBE) is too, so one f32 rounding of the double sum is
 *  the fused result. */
export function fusedF32(a: number, b: number, c: number): number {
  const f = new Float32Array(1), u = new Uint32Array(f.buffer)
  const v = (bits: number) => { u[0] = bits; return f[0]! }
  f[0] = v(a) * v(b) + v(c)
  return u[0]!
}

/** Runs a probe shader (entry `main`, one workgroup) whose binding 0 is one storage buffer holding `words`, and
 *  reads back `count` of its words from word `from` (the fma probe here; the GPU kit's subgroup probe). */
export async function runProbe(device: GPUDevice, label: string, code: string, words: Uint32Array<ArrayBuffer>, from: number, count: number): Promise<Uint32Array> {
  const buf = device.createBuffer({ label, size: words.byteLength, usage: USAGE_STORAGE | USAGE_COPY_SRC | USAGE_COPY_DST })
  const read = device.createBuffer({ label: `${label} (read)`, size: count * 4, usage: USAGE_MAP_READ | USAGE_COPY_DST })
  try {
    device.queue.writeBuffer(buf, 0, words)
    const module = device.createShaderModule({ label, code })
    const pipeline = await device.createComputePipelineAsync({ label, layout: 'auto', compute: { module, entryPoint: 'main' } })
    const enc = device.createCommandEncoder()
    const pass = enc.beginComputePass()
    pass.setPipeline(pipeline)
    pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] }))
    pass.dispatchWorkgroups(1)
    pass.end()
    enc.copyBufferToBuffer(buf, from * 4, read, 0, count * 4)
    device.queue.submit([enc.finish()])
    await read.mapAsync(MAP_READ)
    const got = new Uint32Array(read.getMappedRange().slice(0))
    read.unmap()
    return got
  } finally {
    read.destroy()
    buf.destroy()
  }
}

/** The device's `fma()` of each FMA_PROBE triple, as f32 bits. */
export async function probeFma(device: GPUDevice): Promise<Uint32Array> {
  const n = FMA_PROBE.length
  const words = new Uint32Array(n * 4)
  FMA_PROBE.forEach((t, i) => words.set(t, 3 * i))
  return runProbe(device, 'kernelpack fma probe', PROBE_WGSL, words, n * 3, n)
}

/** Whether fma.rn.f32 needs the exact sequence on `device`: its `fma()` is not fused, or the probe failed. */
export async function needsExactFma(device: GPUDevice): Promise<boolean> {
  try {
    return !fmaIsFused(await probeFma(device), FMA_PROBE.map(([a, b, c]) => fusedF32(a, b, c)))
  } catch {
    return true
  }
}
