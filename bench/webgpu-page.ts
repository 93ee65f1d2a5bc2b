// Browser side of bench/webgpu.bench.ts: in one page, the same PTX (plumbing.cu, bench/kernels/exact.cu) runs on the PTX emulator and
// on the WebGPU backend, A/B interleaved, and the page reports the median time of each per workload.
//
// The WebGPU side runs the WGSL emit-wgsl generates from that PTX (the default translator; issue 15); a third
// side runs hand-written WGSL for the same kernels on the same device (./webgpu-hand.ts; issue 25).
import { createEmulatorBackend } from '../packages/emulator/src/index.js'
import { createWebGpuBackend, emitWgsl } from '../packages/webgpu/src/index.js'
import type { Backend } from '../packages/runtime/src/backend.js'
import { KernelRunner, type DeviceBuffer, type KernelArg } from '../test/helpers/kernel-runner.js'
import { setupHand } from './webgpu-hand.js'

declare const KP_DATA: { ptx: string; exactPtx: string; arch: string; reps: number; smoke: boolean }
const translator = emitWgsl

interface Workload {
  name: string
  entry: string
  grid: [number, number, number]
  block: [number, number, number]
  hand: 'vecAdd' | 'matmul' | 'reduce' | 'divSqrt'
  /** The PTX it is in: plumbing.cu's, or bench/kernels/exact.cu's. */
  module?: 'exact'
  /** The kernel's arrays are f64 (the inputs converted; the hand-written kernel adds them in f32). */
  f64?: true
  inputs(): { a: Float32Array; b?: Float32Array; outLength: number; scalars: number[] }
}

// smoke mode (webgpu.bench.ts): the smallest sizes
const N_ADD = KP_DATA.smoke ? 1 << 12 : 1 << 22
const MM = KP_DATA.smoke ? 32 : 192
const N_RED = KP_DATA.smoke ? 1 << 12 : 1 << 22
const workloads: Workload[] = [
  {
    name: `vecAdd 2^${Math.log2(N_ADD)}`, entry: 'vec_add', grid: [N_ADD / 256, 1, 1], block: [256, 1, 1], hand: 'vecAdd',
    inputs: () => ({
      a: Float32Array.from({ length: N_ADD }, (_, i) => (i % 1000) * 0.5),
      b: Float32Array.from({ length: N_ADD }, (_, i) => (i % 777) * 0.25),
      outLength: N_ADD, scalars: [N_ADD],
    }),
  },
  {
    name: `tiled matmul ${MM}x${MM}x${MM} (16x16 tiles)`, entry: 'matmul_tile16', grid: [MM / 16, MM / 16, 1], block: [16, 16, 1], hand: 'matmul',
    inputs: () => ({
      a: Float32Array.from({ length: MM * MM }, (_, i) => (i % 7) - 3),
      b: Float32Array.from({ length: MM * MM }, (_, i) => (i % 5) - 2),
      outLength: MM * MM, scalars: [MM, MM, MM],
    }),
  },
  {
    // 256 threads a block, two elements each, a tree in shared memory; one sum per block (exact: quarters)
    name: `shared-memory reduction 2^${Math.log2(N_RED)}`, entry: 'reduce_sum_shared', grid: [N_RED / 512, 1, 1], block: [256, 1, 1], hand: 'reduce',
    inputs: () => ({ a: Float32Array.from({ length: N_RED }, (_, i) => (i % 64) * 0.25), outLength: N_RED / 512, scalars: [N_RED] }),
  },
  {
    // sqrt.rn and div.rn a thread: exact integer routines on WebGPU, WGSL's sqrt and / in the hand-written kernel
    // (normal inputs and results, where SwiftShader's own are correctly rounded: the checksums agree)
    name: `sqrt and divide 2^${Math.log2(N_ADD)}`, entry: 'div_sqrt', grid: [N_ADD / 256, 1, 1], block: [256, 1, 1], hand: 'divSqrt', module: 'exact',
    inputs: () => ({
      a: Float32Array.from({ length: N_ADD }, (_, i) => 1 + (i % 1013) * 0.37),
      b: Float32Array.from({ length: N_ADD }, (_, i) => 0.5 + (i % 331) * 0.11),
      outLength: N_ADD, scalars: [N_ADD],
    }),
  },
  {
    // add.f64 a thread: software binary64 on WebGPU (WGSL has no f64), against the hand-written f32 vector add
    name: `vecAdd in f64 (software binary64) 2^${Math.log2(N_ADD)}`, entry: 'vec_add_f64', grid: [N_ADD / 256, 1, 1], block: [256, 1, 1], hand: 'vecAdd', module: 'exact', f64: true,
    inputs: () => ({
      a: Float32Array.from({ length: N_ADD }, (_, i) => (i % 1000) * 0.5),
      b: Float32Array.from({ length: N_ADD }, (_, i) => (i % 777) * 0.25),
      outLength: N_ADD, scalars: [N_ADD],
    }),
  },
]

/** The workload's buffers on a runner: its arguments (inputs, output, sizes) and the output. */
async function setup(k: KernelRunner, w: Workload): Promise<{ args: KernelArg[]; out: DeviceBuffer }> {
  const x = w.inputs()
  const arr = (a: Float32Array) => (w.f64 ? Float64Array.from(a) : a)
  const ins = [await k.upload(arr(x.a)), ...(x.b ? [await k.upload(arr(x.b))] : [])]
  const out = await k.alloc(x.outLength * (w.f64 ? 8 : 4))
  return { args: [...ins, out, ...x.scalars], out }
}

function sum(xs: Float32Array | Float64Array): number {
  let s = 0
  for (let i = 0; i < xs.length; i++) s += xs[i]!
  return s
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

async function main() {
  const emu: Backend = createEmulatorBackend()
  const gpu = await createWebGpuBackend({ translator })
  const web: Backend = gpu
  const [ke0, kw0, ke1, kw1] = await Promise.all([KernelRunner.load(emu, KP_DATA.ptx, KP_DATA.arch, 'emulator'), KernelRunner.load(web, KP_DATA.ptx, KP_DATA.arch, 'webgpu'),
    KernelRunner.load(emu, KP_DATA.exactPtx, KP_DATA.arch, 'emulator'), KernelRunner.load(web, KP_DATA.exactPtx, KP_DATA.arch, 'webgpu')])
  const results = []
  for (const w of workloads) {
    const [ke, kw] = w.module === 'exact' ? [ke1, kw1] : [ke0, kw0]
    const [se, sw] = [await setup(ke, w), await setup(kw, w)]
    const x = w.inputs()
    const hand = await setupHand(gpu.gpu.device, w.hand, { a: x.a, b: x.b, outLength: x.outLength, sizes: x.scalars, groups: w.grid })
    // one untimed launch each: the emulator compiles its JS, WebGPU creates the pipeline. Both WebGPU sides
    // wait for the queue (synchronize would add the fault record's read-back, which the hand-written side
    // does not have: a map of 16 bytes, about 1 ms here); the checksums below synchronize.
    const runEmu = async () => { await ke.launch(w.entry, w.grid, w.block, se.args); await emu.synchronize() }
    const runWeb = async () => { await kw.launch(w.entry, w.grid, w.block, sw.args); await gpu.gpu.device.queue.onSubmittedWorkDone() }
    await runEmu()
    await runWeb()
    await hand.run()
    const te: number[] = [], tw: number[] = [], th: number[] = []
    // A B C, C B A, … (issue 17 item 13): the order flips every round, so drift in load hits every side alike
    const sides = [[runEmu, te], [runWeb, tw], [() => hand.run(), th]] as const
    for (let r = 0; r < KP_DATA.reps; r++) {
      for (const [run, times] of r % 2 === 0 ? sides : [...sides].reverse()) {
        const t0 = performance.now()
        await run()
        times.push(performance.now() - t0)
      }
    }
    const out = (k: KernelRunner, b: DeviceBuffer) => (w.f64 ? k.read(b, Float64Array) : k.read(b, Float32Array))
    const [ce, cw, ch] = [sum(await out(ke, se.out)), sum(await out(kw, sw.out)), sum(await hand.read())]
    if (ce !== cw) throw new Error(`${w.name}: emulator checksum ${ce}, WebGPU ${cw}`)
    // (the f64 workload's hand-written kernel adds in f32: its sums agree here, the inputs' sums being exact in f32 too)
    if (ch !== cw) throw new Error(`${w.name}: hand-written WGSL checksum ${ch}, translated ${cw}`)
    hand.destroy()
    results.push({ name: w.name, emulatorMs: median(te), webgpuMs: median(tw), handMs: median(th), checksum: ce })
  }
  const adapter = gpu.device().name
  await gpu.dispose()
  return { adapter, translator: translator.name, results }
}

const w = window as unknown as { __kpResult?: unknown }
main().then((r) => { w.__kpResult = r }, (e) => { w.__kpResult = { error: String(e?.stack ?? e) } })
