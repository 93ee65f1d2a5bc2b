// Emulator throughput (issue 6, "Must show"; issue 13 items 1-2): thread-instructions per second on vector add
// (2^22 elements), a shared-memory tree reduction, a 16×16-tiled matmul, a warp-shuffle reduction, a block scan,
// a layernorm (warp shuffles + shared memory) and a warp-synchronous reduction (issue 33: the last warp over
// volatile shared memory, run in lockstep; test/fixtures/emulator/lockstep.cu), each beside a plain JavaScript
// loop doing the same work in the same run.
//
// Counting: the PTX of each kernel (nvcc -ptx -arch=compute_80, test/fixtures/emulator/kernels) is copied with
// one `red.global.add.u64 [__kp_icount], N;` at the start of every basic block, N being the number of PTX
// instructions in that block (labels and directives are not instructions; a predicated instruction counts as
// issued whether or not its predicate holds, as on the GPU). One run of that copy gives the exact number of
// thread-instructions the real kernel executes for the given launch; the timed runs use the unmodified PTX.
// The emulator runs on one worker thread (one core; emulator-workers.bench.ts has 2 workers beside 1). Times
// are the process's CPU time (the calling thread sleeps while the worker runs), medians of interleaved runs.
// Ratio = JS loop time / emulator time (issue 24 asks ≥ 2.0 for every kernel; issue 13 asked ≥ 0.3 for the
// reduction, ≥ 0.5 for vector add and matmul).
//
// Native reference (issue 24): each kernel also runs as single-threaded C with the JS loop's algorithm and
// order of operations (bench/native/emulator-ref.c, built here with gcc -O2 -ffp-contract=off), on the same
// inputs; its outputs' checksum must equal the JS loop's. One child process per kernel runs it on request and
// reports the CPU time of each run alone; the three sides run interleaved (emulator, JS, native; then
// reversed). `emulator vs native: <kernel>` has ratio = native time / emulator time (issue 24 asks ≥ 0.5 for
// vector add, the reduction, the matmul and the scan, ≥ 0.25 for the warp-shuffle reduction and layernorm).
//
// Smoke mode (KP_BENCH_SMOKE=1, bench/lib.ts): the smallest sizes below, one untimed and one timed run per side.
//
// Sanitizer overhead (issue 19): the reduction and the matmul also run on a backend with all four checks on
// (createEmulatorBackend({ check: true }), on the calling thread as checked launches do), interleaved with an
// unchecked backend on the calling thread (workers: 0); ratio = unchecked time / checked time (the checked
// run's throughput as a fraction of the unchecked one's).
import { createEmulatorBackend } from '@kernelpack/emulator'
import { parsePtx } from '@kernelpack/ptx'
import type { BenchResult } from './lib.js'
import { fmt, interleaved, median, smoke } from './lib.js'
import { buildNativeRef, nativeFlags, NativeKernel } from './native/native-ref.js'
import { compilePtx, corpusConfigs } from '../test/helpers/ptx-cache.js'
import { KernelRunner, type KernelArg } from '../test/helpers/kernel-runner.js'
import { ownSource } from '../test/fixtures/emulator/cases-own.js'
import { lockstepSource } from '../test/fixtures/emulator/lockstep.js'
import { refLayernorm } from '../test/fixtures/emulator/reference.js'

const COUNTER = '__kp_icount'
/** Timed repetitions of each side (the median is reported). */
const REPS = smoke ? 1 : 9
/** Untimed runs of each side before the timed ones. */
const WARMUP = smoke ? 1 : 4

/** Copy of `ptx` whose `entry` adds each basic block's instruction count to the u64 global __kp_icount
 *  (statements and their lines from @kernelpack/ptx's parser; nvcc writes one statement per line). */
export function instrumentInstructionCount(ptx: string, entry: string): string {
  const mod = parsePtx(ptx)
  const fn = mod.functions.find((f) => f.name === entry && f.kind === 'entry')
  if (!fn?.body) throw new Error(`no .entry ${entry} with a body in the PTX`)
  // Basic blocks: a block starts at the first instruction, after a label and after a branch/ret/exit.
  const inserts = new Map<number, number>() // line → instruction count of the block starting there
  let blockStart = -1
  let count = 0
  const close = () => { if (blockStart >= 0 && count) inserts.set(blockStart, count); blockStart = -1; count = 0 }
  for (const st of fn.body) {
    if (st.kind === 'label') { close(); continue }
    if (blockStart < 0) blockStart = st.line
    count++
    if (['bra', 'brx', 'ret', 'exit'].includes(st.op[0]!)) close()
  }
  close()
  // the counter is declared before the first module-level declaration (after .version/.target/.address_size)
  const first = Math.min(...mod.functions.map((f) => f.line), ...mod.variables.map((v) => v.line))
  const out: string[] = []
  ptx.split('\n').forEach((l, i) => {
    if (i + 1 === first) out.push(`.global .align 8 .u64 ${COUNTER};`)
    const n = inserts.get(i + 1)
    if (n) out.push(`\tred.global.add.u64 [${COUNTER}], ${n};`)
    out.push(l)
  })
  return out.join('\n')
}

export interface Workload {
  name: string
  entry: string
  grid: [number, number, number]
  block: [number, number, number]
  /** Dynamic shared memory bytes of the launch. */
  shared?: number
  /** Allocates the inputs and returns the kernel arguments. */
  setup(k: KernelRunner): Promise<KernelArg[]>
  /** The same computation as a plain JavaScript loop over typed arrays (timed: the work only). */
  js(): void
  /** Checksum of the JS loop's output (not timed, like the emulator's check). */
  jsSum(): number
  /** Reads the emulator's result and returns the same checksum. */
  check(k: KernelRunner, args: KernelArg[]): Promise<number>
  target: string
  /** The arguments of bench/native/emulator-ref.c after the entry name: the sizes of this workload. */
  native: number[]
  /** Target of the `emulator vs native` entry. */
  nativeTarget: string
  /** Also measured with the sanitizer's checks on. */
  sanitizer?: boolean
  /** The kernel is in test/fixtures/emulator/lockstep.cu (not cases-own's source). */
  lockstep?: boolean
}

function sum(xs: ArrayLike<number>): number {
  let s = 0
  for (let i = 0; i < xs.length; i++) s += xs[i]!
  return s
}

const N_ADD = smoke ? 1 << 12 : 1 << 22
const addA = Float32Array.from({ length: N_ADD }, (_, i) => (i % 1000) * 0.5)
const addB = Float32Array.from({ length: N_ADD }, (_, i) => (i % 777) * 0.25)
const addC = new Float32Array(N_ADD) // outputs preallocated, as the emulator's device buffers are

const N_RED = smoke ? 1 << 12 : 1 << 21
const RED_BLOCK = 256
const redIn = Float32Array.from({ length: N_RED }, (_, i) => (i % 13) - 6)
const redBlocks = N_RED / (2 * RED_BLOCK)
const redOut = new Float32Array(redBlocks)
const redScratch = new Float32Array(RED_BLOCK)

const MM = smoke ? 32 : 192
const mmA = Float32Array.from({ length: MM * MM }, (_, i) => (i % 7) - 3)
const mmB = Float32Array.from({ length: MM * MM }, (_, i) => (i % 5) - 2)
const mmC = new Float32Array(MM * MM)

const N_WARP = smoke ? 1 << 12 : 1 << 22
const WARP_BLOCK = 256
const warpIn = Int32Array.from({ length: N_WARP }, (_, i) => ((i * 7919) % 2001) - 1000)
const warpOut = new Int32Array(N_WARP / 32)
const warpLanes = new Int32Array(32)

const N_SCAN = smoke ? 1 << 12 : 1 << 20
const SCAN_BLOCK = 256
const scanIn = Int32Array.from({ length: N_SCAN }, (_, i) => ((i * 104729) % 201) - 100)
const scanOut = new Int32Array(N_SCAN)
const scanSums = new Int32Array(N_SCAN / SCAN_BLOCK)
const scanBuf = new Int32Array(2 * SCAN_BLOCK)

const N_WSR = smoke ? 1 << 12 : 1 << 21
const WSR_BLOCK = 256
const wsrIn = Int32Array.from({ length: N_WSR }, (_, i) => (i % 13) - 6)
const wsrBlocks = N_WSR / (2 * WSR_BLOCK)
const wsrOut = new Int32Array(wsrBlocks)
const wsrScratch = new Int32Array(WSR_BLOCK)

const LN_ROWS = smoke ? 8 : 2048
const LN_COLS = smoke ? 256 : 1024
const LN_BLOCK = 256
const LN_EPS = Math.fround(1e-5)
const lnX = Float32Array.from({ length: LN_ROWS * LN_COLS }, (_, i) => (((i * 2654435761) >>> 0) % 8001 - 4000) / 256)
const lnGamma = Float32Array.from({ length: LN_COLS }, (_, i) => (1 + (i % 300)) / 128)
const lnBeta = Float32Array.from({ length: LN_COLS }, (_, i) => ((i % 401) - 200) / 64)
const lnY = new Float32Array(LN_ROWS * LN_COLS)

type Buf = { address: bigint; byteLength: number }

const JS_TARGET = 'ratio >= 2.0 (issue 24: every kernel >= 2x the plain JS loop)'
const NATIVE_HALF = 'native/emulator >= 0.5 (issue 24)'
const NATIVE_QUARTER = 'native/emulator >= 0.25 (issue 24)'

export const workloads: Workload[] = [
  {
    name: `vecAdd 2^${Math.log2(N_ADD)}`, entry: 'vec_add', grid: [N_ADD / 256, 1, 1], block: [256, 1, 1],
    async setup(k) { return [await k.upload(addA), await k.upload(addB), await k.alloc(N_ADD * 4), N_ADD] },
    js() {
      const c = addC
      for (let i = 0; i < N_ADD; i++) c[i] = addA[i]! + addB[i]!
    },
    jsSum: () => sum(addC),
    async check(k, args) { return sum(await k.read(args[2] as { address: bigint; byteLength: number }, Float32Array)) },
    target: JS_TARGET, native: [N_ADD], nativeTarget: NATIVE_HALF,
  },
  {
    name: `shared-memory reduction 2^${Math.log2(N_RED)} (${RED_BLOCK}-thread blocks)`, entry: 'reduce_sum_shared', grid: [redBlocks, 1, 1], block: [RED_BLOCK, 1, 1],
    async setup(k) { return [await k.upload(redIn), await k.alloc(redBlocks * 4), N_RED] },
    js() {
      // The kernel's algorithm: per block, 2 loads per thread into a scratch array, then a halving tree.
      const out = redOut
      const s = redScratch
      for (let b = 0; b < redBlocks; b++) {
        const base = b * 2 * RED_BLOCK
        for (let t = 0; t < RED_BLOCK; t++) s[t] = redIn[base + t]! + redIn[base + t + RED_BLOCK]!
        for (let st = RED_BLOCK >> 1; st > 0; st >>= 1) for (let t = 0; t < st; t++) s[t] = s[t]! + s[t + st]!
        out[b] = s[0]!
      }
    },
    jsSum: () => sum(redOut),
    async check(k, args) { return sum(await k.read(args[1] as { address: bigint; byteLength: number }, Float32Array)) },
    target: JS_TARGET, native: [N_RED, RED_BLOCK], nativeTarget: NATIVE_HALF,
    sanitizer: true,
  },
  {
    name: `tiled matmul ${MM}x${MM}x${MM} (16x16 tiles)`, entry: 'matmul_tile16', grid: [MM / 16, MM / 16, 1], block: [16, 16, 1],
    async setup(k) { return [await k.upload(mmA), await k.upload(mmB), await k.alloc(MM * MM * 4), MM, MM, MM] },
    js() {
      const c = mmC
      for (let r = 0; r < MM; r++)
        for (let col = 0; col < MM; col++) {
          let acc = 0
          for (let t = 0; t < MM; t++) acc = Math.fround(acc + mmA[r * MM + t]! * mmB[t * MM + col]!)
          c[r * MM + col] = acc
        }
    },
    jsSum: () => sum(mmC),
    async check(k, args) { return sum(await k.read(args[2] as { address: bigint; byteLength: number }, Float32Array)) },
    target: JS_TARGET, native: [MM], nativeTarget: NATIVE_HALF,
    sanitizer: true,
  },
  {
    name: `warp-shuffle reduction 2^${Math.log2(N_WARP)} (shfl.down, ${WARP_BLOCK}-thread blocks)`, entry: 'warp_reduce_down', grid: [N_WARP / WARP_BLOCK, 1, 1], block: [WARP_BLOCK, 1, 1],
    async setup(k) { return [await k.upload(warpIn), await k.alloc(N_WARP / 32 * 4), N_WARP] },
    js() {
      // The kernel's algorithm: per warp, 5 shuffle-down steps over 32 lanes (a lane past the end keeps its value).
      const v = warpLanes
      for (let w = 0; w < N_WARP / 32; w++) {
        for (let l = 0; l < 32; l++) v[l] = warpIn[w * 32 + l]!
        for (let off = 16; off > 0; off >>= 1) for (let l = 0; l < 32; l++) v[l] = (v[l]! + v[l + off < 32 ? l + off : l]!) | 0
        warpOut[w] = v[0]!
      }
    },
    jsSum: () => sum(warpOut),
    async check(k, args) { return sum(await k.read(args[1] as Buf, Int32Array)) },
    target: JS_TARGET, native: [N_WARP], nativeTarget: NATIVE_QUARTER,
  },
  {
    name: `block scan 2^${Math.log2(N_SCAN)} (Hillis-Steele in shared memory, ${SCAN_BLOCK}-thread blocks)`, entry: 'scan_block', grid: [N_SCAN / SCAN_BLOCK, 1, 1], block: [SCAN_BLOCK, 1, 1], shared: 2 * SCAN_BLOCK * 4,
    async setup(k) { return [await k.upload(scanIn), await k.alloc(N_SCAN * 4), await k.alloc(N_SCAN / SCAN_BLOCK * 4), N_SCAN] },
    js() {
      // The kernel's algorithm: per block, log2(256) double-buffered passes over the block's 256 values.
      const buf = scanBuf, nt = SCAN_BLOCK
      for (let b = 0; b < N_SCAN / nt; b++) {
        for (let t = 0; t < nt; t++) buf[t] = scanIn[b * nt + t]!
        let pout = 0
        for (let off = 1; off < nt; off <<= 1) {
          pout = 1 - pout
          const pin = 1 - pout
          for (let t = 0; t < nt; t++) buf[pout * nt + t] = t >= off ? (buf[pin * nt + t]! + buf[pin * nt + t - off]!) | 0 : buf[pin * nt + t]!
        }
        for (let t = 0; t < nt; t++) scanOut[b * nt + t] = buf[pout * nt + t]!
        scanSums[b] = buf[pout * nt + nt - 1]!
      }
    },
    jsSum: () => sum(scanOut) + sum(scanSums),
    async check(k, args) { return sum(await k.read(args[1] as Buf, Int32Array)) + sum(await k.read(args[2] as Buf, Int32Array)) },
    target: JS_TARGET, native: [N_SCAN, SCAN_BLOCK], nativeTarget: NATIVE_HALF,
  },
  {
    name: `layernorm ${LN_ROWS}x${LN_COLS} (shfl.bfly block sums through shared memory, ${LN_BLOCK}-thread blocks)`, entry: 'layernorm_rows', grid: [LN_ROWS, 1, 1], block: [LN_BLOCK, 1, 1],
    async setup(k) { return [await k.upload(lnX), await k.upload(lnGamma), await k.upload(lnBeta), await k.alloc(LN_ROWS * LN_COLS * 4), LN_COLS, LN_EPS] },
    // the kernel's algorithm and summation order (test/fixtures/emulator/reference.ts)
    js() { refLayernorm(lnX, lnGamma, lnBeta, LN_ROWS, LN_COLS, LN_BLOCK, LN_EPS, lnY) },
    jsSum: () => sum(lnY),
    async check(k, args) { return sum(await k.read(args[3] as Buf, Float32Array)) },
    target: JS_TARGET, native: [LN_ROWS, LN_COLS, LN_BLOCK], nativeTarget: NATIVE_QUARTER,
  },
  {
    // issue 33: the last warp over volatile shared memory with no __syncwarp(), run in lockstep
    name: `warp-synchronous reduction 2^${Math.log2(N_WSR)} (volatile last warp in lockstep, ${WSR_BLOCK}-thread blocks)`, entry: 'reduce_unroll_last', grid: [wsrBlocks, 1, 1], block: [WSR_BLOCK, 1, 1], shared: WSR_BLOCK * 4,
    async setup(k) { return [await k.upload(wsrIn), await k.alloc(wsrBlocks * 4), N_WSR] },
    js() {
      // The kernel's algorithm: the halving tree down to 64 elements, then the last warp's six steps; in
      // ascending lane order each lane reads an element this step has not written yet, as the warp does
      const out = wsrOut
      const s = wsrScratch
      for (let b = 0; b < wsrBlocks; b++) {
        const base = b * 2 * WSR_BLOCK
        for (let t = 0; t < WSR_BLOCK; t++) s[t] = wsrIn[base + t]! + wsrIn[base + t + WSR_BLOCK]!
        for (let st = WSR_BLOCK >> 1; st > 32; st >>= 1) for (let t = 0; t < st; t++) s[t] = s[t]! + s[t + st]!
        for (let off = 32; off > 0; off >>= 1) for (let t = 0; t < 32; t++) s[t] = s[t]! + s[t + off]!
        out[b] = s[0]!
      }
    },
    jsSum: () => sum(wsrOut),
    async check(k, args) { return sum(await k.read(args[1] as Buf, Int32Array)) },
    target: JS_TARGET, native: [N_WSR, WSR_BLOCK], nativeTarget: NATIVE_HALF, lockstep: true,
  },
]

/** Wall and CPU seconds of one run (CPU: the whole process, the emulator's worker thread included; the
 *  calling thread sleeps while it waits). */
interface Timing { wall: number; cpu: number }

async function timeRun(fn: () => void | Promise<void>): Promise<Timing> {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  await fn()
  const wall = Number(process.hrtime.bigint() - t0) / 1e9
  const c = process.cpuUsage(c0)
  return { wall, cpu: (c.user + c.system) / 1e6 }
}

export async function run(): Promise<BenchResult[]> {
  const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
  const ptx = await compilePtx({ source: ownSource, config })
  const lockstepPtx = await compilePtx({ source: lockstepSource, config })
  const results: BenchResult[] = []
  const native = buildNativeRef()
  try {
    for (const w of workloads) await measure(w, w.lockstep ? lockstepPtx : ptx, config.target, native, results)
  } finally {
    native.dispose()
  }
  return results
}

/** Measures workload `w` (its PTX compiled for `target`) and adds its figures to `results`; `who` names the
 *  emulator side in them (emulator-exact-fma.bench.ts measures the same on the exact fma path). */
export async function measure(w: Workload, ptx: string, target: string, native: { exe: string; compiler: string }, results: BenchResult[], who = 'emulator'): Promise<void> {
  // 1. Exact thread-instruction count from the instrumented copy.
  const counted = createEmulatorBackend({ workers: 1 })
  const kc = await KernelRunner.load(counted, instrumentInstructionCount(ptx, w.entry), target, `${w.entry} (counting)`)
  const counter = await kc.variable(COUNTER)
  await kc.write(counter, new BigUint64Array(1))
  await kc.launch(w.entry, w.grid, w.block, await w.setup(kc), w.shared)
  const threadInstr = Number((await kc.read(counter, BigUint64Array))[0])
  counted.dispose()

  // 2. Timed runs of the unmodified kernel (first launch compiles and warms up), and of the JS loop.
  const be = createEmulatorBackend({ workers: 1 })
  const k = await KernelRunner.load(be, ptx, target, w.entry)
  const args = await w.setup(k)
  // the JavaScript tier beside it (issue 24: the tiers' figures in the same run), also on 1 worker
  const beJs = createEmulatorBackend({ workers: 1, codegen: 'js' })
  const kj = await KernelRunner.load(beJs, ptx, target, `${w.entry} (JS tier)`)
  const argsJs = await w.setup(kj)
  const nk = await NativeKernel.start(native.exe, w.entry, w.native)
  // a few untimed runs of each side first, so V8 has tiered both up (a 5-10 ms launch is a handful of calls
  // of the kernel; with one warm-up the reduction's median was 0.32 in one run in five, 0.55-0.64 otherwise)
  // and the native side has its pages touched and its caches warm
  for (let i = 0; i < WARMUP; i++) {
    await k.launch(w.entry, w.grid, w.block, args, w.shared)
    await kj.launch(w.entry, w.grid, w.block, argsJs, w.shared)
    w.js()
    await nk.time()
  }
  // interleaved A B C, C B A, … (bench/lib.ts) so load drift hits every side alike; the checksum passes run
  // outside the timed region on every side. The native side's time is measured in its own process, around
  // the kernel's loop only (CLOCK_PROCESS_CPUTIME_ID).
  const times = await interleaved(REPS, ['emulator', 'jsTier', 'js', 'native'] as const, async (side) =>
    side === 'emulator' ? timeRun(() => k.launch(w.entry, w.grid, w.block, args, w.shared))
      : side === 'jsTier' ? timeRun(() => kj.launch(w.entry, w.grid, w.block, argsJs, w.shared))
      : side === 'js' ? timeRun(() => w.js())
        : { wall: NaN, cpu: await nk.time() })
  // The figure is CPU time: on this project's shared 2-core machine a 10 ms launch is preempted where a 2 ms
  // JS loop often is not, so wall time measured the scheduler (wall ratio 0.04 beside CPU ratio 0.20 in one
  // run at load 16); the wall-clock ratio is printed beside it.
  const emuTimes = times.emulator.map((t) => t.cpu)
  const jsTimes = times.js.map((t) => t.cpu)
  const nativeTimes = times.native.map((t) => t.cpu)
  const jsTierTimes = times.jsTier.map((t) => t.cpu)
  console.error(`    ${w.entry}: JS tier ${fmt(median(jsTierTimes) * 1e3)} ms, ${k.tier(w.entry)}`)
  console.error(`    ${w.entry}: CPU-time ratio ${fmt(median(jsTimes) / median(emuTimes))}, wall-clock ratio ${fmt(median(times.js.map((t) => t.wall)) / median(times.emulator.map((t) => t.wall)))}; native/emulator CPU time ${fmt(median(nativeTimes) / median(emuTimes))} (native ${fmt(median(nativeTimes) * 1e3)} ms, emulator ${fmt(median(emuTimes) * 1e3)} ms, JS ${fmt(median(jsTimes) * 1e3)} ms)`)
  const got = await w.check(k, args)
  const gotJs = await w.check(kj, argsJs)
  be.dispose()
  beJs.dispose()
  if (gotJs !== got) throw new Error(`${w.name}: JS-tier checksum ${gotJs}, default tiers ${got}`)
  const nativeSum = await nk.checksum()
  await nk.close()
  const want = w.jsSum()
  if (got !== want) throw new Error(`${w.name}: emulator checksum ${got}, JS loop ${want}`)
  if (nativeSum !== want) throw new Error(`${w.name}: native reference checksum ${nativeSum}, JS loop ${want} (bench/native/emulator-ref.c must do the JS loop's work in its order of operations, on the same inputs)`)

  const emu = median(emuTimes)
  const js = median(jsTimes)
  results.push({
    name: `${who} ${w.name} (${(threadInstr / 1e6).toFixed(1)} M thread-instr)`,
    value: threadInstr / emu,
    unit: 'thread-instr/s',
    reference: 'plain JS loop, same work (same instruction count / its CPU time), interleaved; emulator on 1 worker, CPU time',
    referenceValue: threadInstr / js,
    ratio: js / emu,
    target: w.target,
  })
  const jt = median(jsTierTimes)
  results.push({
    name: `${who} default tiers vs JS tier: ${w.name}`,
    value: threadInstr / emu,
    unit: 'thread-instr/s',
    reference: "the same kernel with codegen: 'js' (the JavaScript tier), interleaved; both on 1 worker, CPU time",
    referenceValue: threadInstr / jt,
    ratio: jt / emu,
    target: 'report (issue 24: the JS tier\'s figures beside the WebAssembly tier\'s)',
  })
  const nat = median(nativeTimes)
  results.push({
    name: `${who} vs native: ${w.name}`,
    value: threadInstr / emu,
    unit: 'thread-instr/s',
    reference: `single-threaded C, the JS loop's algorithm and order of operations (bench/native/emulator-ref.c, ${native.compiler} ${nativeFlags.join(' ')}; same instruction count / its CPU time), interleaved; emulator on 1 worker, CPU time`,
    referenceValue: threadInstr / nat,
    ratio: nat / emu,
    target: w.nativeTarget,
  })
  if (w.sanitizer && who === 'emulator') results.push(await measureSanitizer(w, ptx, target, threadInstr))
}

/** The same launch with all four checks on and off, A/B interleaved on two backends. */
async function measureSanitizer(w: Workload, ptx: string, target: string, threadInstr: number): Promise<BenchResult> {
  const sides = { off: createEmulatorBackend({ workers: 0 }), on: createEmulatorBackend({ check: true }) }
  const runners = { off: await KernelRunner.load(sides.off, ptx, target, w.entry), on: await KernelRunner.load(sides.on, ptx, target, `${w.entry} (checked)`) }
  const args = { off: await w.setup(runners.off), on: await w.setup(runners.on) }
  for (const side of ['off', 'on'] as const) await runners[side].launch(w.entry, w.grid, w.block, args[side], w.shared)
  // both sides run on the calling thread: CPU time, as above
  const timed = await interleaved(REPS, ['off', 'on'] as const, (side) => timeRun(() => runners[side].launch(w.entry, w.grid, w.block, args[side], w.shared)))
  const times = { off: timed.off.map((t) => t.cpu), on: timed.on.map((t) => t.cpu) }
  const sums = { off: await w.check(runners.off, args.off), on: await w.check(runners.on, args.on) }
  sides.off.dispose()
  sides.on.dispose()
  if (sums.on !== sums.off) throw new Error(`${w.name}: checked checksum ${sums.on}, unchecked ${sums.off}`)
  const on = median(times.on), off = median(times.off)
  return {
    name: `emulator sanitizer, all checks: ${w.name} (${(off > 0 ? on / off : 0).toFixed(1)}x slower)`,
    value: threadInstr / on,
    unit: 'thread-instr/s',
    reference: 'the same launch with checks off (A/B interleaved, both on the calling thread, CPU time)',
    referenceValue: threadInstr / off,
    ratio: off / on,
    target: 'report (issue 19: the overhead of checks, stated)',
  }
}
