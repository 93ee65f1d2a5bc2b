// The emulator's WebAssembly tier (issue 24) against its JavaScript tier, which is the reference: both are
// writers of the same @kernelpack/ptx IR, and every result must be bit-identical between them and every fault
// the same (kernel, instruction, PTX line, .cu line, address).
//
// 1. A fast-check property: random straight-line sequences of the instructions the wasm tier lowers
//    (wasm-tier-programs.ts), each run as a kernel over 120 threads in 3 blocks with per-thread inputs from
//    memory, with codegen 'js' and with codegen 'wasm'; every register is stored at the end and every output
//    byte compared (fixed seed; KP_WASM_PROPERTY_RUNS / KP_WASM_PROPERTY_SEED run more or other programs).
//    Then every form the generator knows, each family in one kernel, on edge inputs.
// 2. Faults on the wasm tier (an nvcc -lineinfo build of test/fixtures/emulator/faults/wasm-tier.cu): loads
//    and stores just past the end of an allocation, a misaligned load, a shared store out of the window and
//    `trap`, each in a block after the first, give the same EmulatorFault on both tiers and leave the same
//    memory behind.
// 3. The emulator corpus (test/fixtures/emulator cases, as corpus.test.ts runs them) once with codegen 'js'
//    and once with codegen 'auto': every case passes on both, and every byte the cases read back, every
//    printf line and every launch error is the same (NaNs excepted, which must be NaN on both tiers: the JS
//    tier's numbers do not keep a NaN's payload, the wasm tier does; they are counted and printed); a line
//    says how many kernels got wasm.
// 4. codegen 'wasm' refuses a kernel without a lowering with a PtxError naming the instruction (the module's
//    other kernels run on wasm), codegen 'js' keeps every kernel on JavaScript, and 2 worker threads give the
//    same bytes as the calling thread on the wasm tier.
import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { readPtxInterface } from '@kernelpack/ptx'
import { createEmulatorBackend, EmulatorFault, PtxError, type EmulatorBackend, type EmulatorModule } from '@kernelpack/emulator'
import type { Codegen } from '../../packages/emulator/src/wasm/tier.js'
import { compilePtx, compilePtxAll, corpusConfigs, type PtxConfig } from '../helpers/ptx-cache.js'
import { KernelRunner, type DeviceBuffer, type KernelArg, type KernelHost, type View, type ViewCtor } from '../helpers/kernel-runner.js'
import { repoRoot } from '../helpers/tools.js'
import { ownCases, ownSource, type CorpusCase } from '../fixtures/emulator/cases-own.js'
import { referenceCases, referenceSource } from '../fixtures/emulator/cases-reference.js'
import type { Dim3 } from '../../packages/runtime/src/backend.js'
import { download, marshal, ptxBytes, upload, type Arg } from './helpers.js'
import { FAMILIES, OUT_BYTES, firstDifference, genProgram, inputs, instructionText, kernelText, type GenInstr, type GenProgram } from './wasm-tier-programs.js'

// Every compile first (from the PTX cache after the first run), before any suite runs.
const faultSource = join(repoRoot, 'test', 'fixtures', 'emulator', 'faults', 'wasm-tier.cu')
const nvcc80: PtxConfig = { label: 'nvcc compute_80', compiler: 'nvcc', arch: 'compute_80', target: 'compute_80' }
const faultPtx = await compilePtx({ source: faultSource, config: nvcc80, extraArgs: ['-lineinfo'] })
const groups: { source: string; cases: CorpusCase[] }[] = [
  { source: referenceSource, cases: referenceCases },
  { source: ownSource, cases: ownCases },
]
const requests = corpusConfigs.flatMap((config) => groups.map((g) => ({ source: g.source, config })))
const texts = await compilePtxAll(requests)

/** The tier a kernel runs on: the last line of mod.inspect(kernel). */
function tierOf(mod: EmulatorModule, kernel: string): string {
  const line = mod.inspect(kernel).split('\n').pop()!
  const m = /^ {2}tier: (WebAssembly|JavaScript)( \(not WebAssembly: (.*)\))?$/.exec(line)
  if (!m) throw new Error(`mod.inspect(${kernel}) does not end with a tier line: ${JSON.stringify(line)}`)
  return m[1]!
}

const hex = (v: bigint) => `0x${v.toString(16)}`

// --- 1. random instruction sequences ---

const GRID: Dim3 = [3, 1, 1], BLOCK: Dim3 = [40, 1, 1]
const THREADS = GRID[0] * BLOCK[0]
// workers: 0 — launches and copies answer synchronously on the calling thread
const tiers = { js: createEmulatorBackend({ codegen: 'js', workers: 0 }), wasm: createEmulatorBackend({ codegen: 'wasm', workers: 0 }) }

/** Runs program p on `be` over GRID × BLOCK threads; returns its outputs and the tier it ran on. */
function runProgram(be: EmulatorBackend, p: GenProgram, input: Uint8Array): { out: Uint8Array; tier: string } {
  const mod = be.loadModule(ptxBytes(kernelText(p)))
  try {
    const fn = mod.getFunction('prop')
    const din = upload(be, input), dout = be.alloc(THREADS * OUT_BYTES)
    be.memset(dout, 0, THREADS * OUT_BYTES)
    be.launch(fn, { grid: GRID, block: BLOCK, sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }]))
    const out = download(be, dout, new Uint8Array(THREADS * OUT_BYTES))
    be.free(din); be.free(dout)
    return { out, tier: tierOf(mod, 'prop') }
  } finally {
    mod.unload()
  }
}

/** Throws naming the first difference between the tiers on program p (with the program's instructions). */
function checkProgram(p: GenProgram): void {
  const input = inputs(p, THREADS)
  const js = runProgram(tiers.js, p, input)
  const wasm = runProgram(tiers.wasm, p, input)
  if (js.tier !== 'JavaScript' || wasm.tier !== 'WebAssembly') throw new Error(`tiers: codegen 'js' ran ${js.tier}, codegen 'wasm' ran ${wasm.tier}`)
  // every thread stored something (the outputs start as zeros; each thread stores 28 registers, twice)
  for (let t = 0; t < THREADS; t++) if (js.out.subarray(t * OUT_BYTES, (t + 1) * OUT_BYTES).every((x) => x === 0)) throw new Error(`thread ${t} stored nothing`)
  const d = firstDifference(input, js.out, wasm.out)
  if (d) {
    const body = p.body.map((g) => `    ${instructionText(g, p.untyped)}`).join('\n')
    throw new Error(`the tiers differ: thread ${d.thread}, ${d.reg} stored ${d.stored}: JS ${hex(d.js)}, wasm ${hex(d.wasm)} (its input ${hex(d.input)}), after${p.untyped ? ' (floats in .b32/.b64 registers)' : ''}\n${body}`)
  }
}

const prop = suite('wasm tier: random instruction sequences, bit for bit as the JS tier')

prop('fast-check: straight-line programs of the lowered instructions, every register of 120 threads', () => {
  fc.assert(fc.property(genProgram, checkProgram), { numRuns: Number(process.env.KP_WASM_PROPERTY_RUNS ?? 100), seed: Number(process.env.KP_WASM_PROPERTY_SEED ?? 24), includeErrorInReport: true })
})

prop('every instruction form of the generator, one kernel per family, typed and untyped registers', () => {
  let forms = 0
  FAMILIES.forEach((family, f) => {
    // each variant twice, with different registers and one of the two with an immediate where it takes one
    const body: GenInstr[] = family.flatMap((_, v) => [0, 1].map((j) => ({ family: f, variant: v, ops: [v + j, v + 2 * j + 1, v + 3, 2 * v + j, v + 5 * j, v + j], imm: j === 1 ? v % 25 : 50, guard: 99 })))
    for (const untyped of [false, true]) checkProgram({ untyped, seed: 1000 + f, body })
    forms += family.length
  })
  assert.ok(forms > 500, `${forms} forms`)
})

prop.run()

// --- 2. faults ---

const marker = (name: string): number => {
  const i = readFileSync(faultSource, 'utf8').split('\n').findIndex((l) => l.includes(`// line: ${name}`))
  if (i < 0) throw new Error(`${faultSource} has no "// line: ${name}" marker`)
  return i + 1
}

/** A launch that faults: its buffers (uploaded in order, so that both tiers see the same addresses), the
 *  arguments (a number n stands for buffer n's address), what the fault must say, and what memory the
 *  threads that ran before it must leave. */
interface FaultCase {
  kernel: string
  marker: string
  grid: Dim3
  block: Dim3
  sharedBytes?: number
  buffers: ArrayBufferView[]
  args: Array<{ buf: number } | Arg>
  message: RegExp
  /** The fault's address from the buffers' addresses (undefined: none, as for trap). */
  address?: (bufs: bigint[]) => bigint
  /** Index of the output buffer and its expected contents after the fault. */
  after: { buf: number; want: ArrayBufferView }
}

const N = 64
const floats = Float32Array.from({ length: N }, (_, i) => i * 0.75 - 9)
const SENTINEL = -12345
const filled = (n: number) => new Float32Array(n).fill(SENTINEL)
const faultCases: FaultCase[] = [
  {
    kernel: 'loadPast', marker: 'loadPast', grid: [2, 1, 1], block: [32, 1, 1],
    buffers: [floats.slice(0, N - 1), filled(N)], args: [{ buf: 0 }, { buf: 1 }],
    message: /^out-of-bounds or misaligned global memory access in kernel loadPast, instruction `ld\.global\.f32 /,
    address: (b) => b[0]! + BigInt(4 * (N - 1)),
    // block 0 (its range tested once) and the threads of block 1 before the last stored 2·in
    after: { buf: 1, want: Float32Array.from({ length: N }, (_, i) => (i < N - 1 ? Math.fround(floats[i]! * 2) : SENTINEL)) },
  },
  {
    kernel: 'storePast', marker: 'storePast', grid: [2, 1, 1], block: [32, 1, 1],
    buffers: [floats, filled(N - 1)], args: [{ buf: 0 }, { buf: 1 }, { f32: 3 }],
    message: /^out-of-bounds or misaligned global memory access in kernel storePast, instruction `st\.global\.f32 /,
    address: (b) => b[1]! + BigInt(4 * (N - 1)),
    after: { buf: 1, want: Float32Array.from({ length: N - 1 }, (_, i) => Math.fround(floats[i]! * 3)) },
  },
  {
    kernel: 'misaligned', marker: 'misaligned', grid: [2, 1, 1], block: [32, 1, 1],
    buffers: [Uint8Array.from({ length: 4 * N + 16 }, (_, i) => (i * 37 + 11) & 255), new Int32Array(N).fill(SENTINEL)], args: [{ buf: 0 }, { buf: 1 }, { s32: 2 }],
    message: /^out-of-bounds or misaligned global memory access in kernel misaligned, instruction `ld\.global\.u32 /,
    // thread 0 of block 1: bytes + 2·1 + 4·32
    address: (b) => b[0]! + 2n + 128n,
    after: { buf: 1, want: (() => { const w = new Int32Array(N).fill(SENTINEL); const bytes = Uint8Array.from({ length: 4 * N + 16 }, (_, i) => (i * 37 + 11) & 255); const dv = new DataView(bytes.buffer); for (let i = 0; i < 32; i++) w[i] = dv.getInt32(4 * i, true); return w })() },
  },
  {
    kernel: 'sharedPast', marker: 'sharedPast', grid: [2, 1, 1], block: [32, 1, 1], sharedBytes: 32 * 4,
    buffers: [floats, filled(N)], args: [{ buf: 0 }, { buf: 1 }, { s32: 1 }],
    message: /^out-of-bounds or misaligned shared memory access in kernel sharedPast, instruction `st\.shared\.f32 /,
    // block 1's last thread: the window's end (tile starts the dynamic shared memory)
    after: { buf: 1, want: Float32Array.from({ length: N }, (_, i) => (i < N - 1 ? Math.fround(floats[i]! + 1) : SENTINEL)) },
  },
  {
    kernel: 'trapOn', marker: 'trap', grid: [2, 1, 1], block: [32, 1, 1],
    buffers: [Int32Array.from({ length: N }, (_, i) => 3 * i), new Int32Array(N).fill(SENTINEL)], args: [{ buf: 0 }, { buf: 1 }, { s32: 3 * 45 }],
    message: /^trap instruction executed in kernel trapOn, instruction `(@!?%p\d+ )?trap;? \(PTX line \d+, at /,
    address: undefined,
    after: { buf: 1, want: Int32Array.from({ length: N }, (_, i) => (i < 45 ? 3 * i + 1 : SENTINEL)) },
  },
]

interface FaultRun { fault: EmulatorFault; bufs: bigint[]; after: Uint8Array; tier: string; workers: number }

/** Runs a fault case on a fresh backend (so that both tiers allocate the same addresses). */
async function runFault(c: FaultCase, codegen: Codegen, workers = 0): Promise<FaultRun> {
  const be = createEmulatorBackend({ codegen, workers })
  try {
    const mod = be.loadModule(ptxBytes(faultPtx))
    const bufs = c.buffers.map((b) => upload(be, b))
    const params = marshal(c.args.map((a) => ('buf' in a ? { u64: bufs[a.buf]! } : a)))
    let fault: unknown
    try {
      await be.launch(mod.getFunction(c.kernel), { grid: c.grid, block: c.block, sharedBytes: c.sharedBytes ?? 0 }, params)
    } catch (e) { fault = e }
    if (!(fault instanceof EmulatorFault)) throw new Error(`${c.kernel} (codegen '${codegen}', ${workers} workers): expected an EmulatorFault, got ${fault === undefined ? 'none' : String(fault)}`)
    const after = new Uint8Array(c.buffers[c.after.buf]!.byteLength)
    await be.copyFromDevice(after, bufs[c.after.buf]!)
    return { fault, bufs, after, tier: tierOf(mod, c.kernel), workers: be.workers }
  } finally {
    await be.dispose()
  }
}

const faults = suite('wasm tier: faults as the JS tier reports them')
const cuAt = (name: string) => `, at ${faultSource}:${marker(name)})`
const bytesOf = (v: ArrayBufferView) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength)

for (const c of faultCases) {
  faults(`${c.kernel}: the same EmulatorFault (message, instruction, PTX and .cu line, address) and memory on both tiers`, async () => {
    const js = await runFault(c, 'js')
    const wasm = await runFault(c, 'wasm')
    assert.is(js.tier, 'JavaScript')
    assert.is(wasm.tier, 'WebAssembly', `${c.kernel} must run on the wasm tier for this test to mean anything`)
    // what the fault must say, from the fixture and the buffers (not from either tier)
    assert.match(js.fault.message, c.message)
    assert.ok(js.fault.message.includes(cuAt(c.marker)), js.fault.message)
    assert.equal(js.fault.source && { file: js.fault.source.file, line: js.fault.source.line }, { file: faultSource, line: marker(c.marker) })
    if (c.address) assert.is(js.fault.address, c.address(js.bufs))
    else if (c.kernel === 'trapOn') assert.is(js.fault.address, undefined)
    assert.equal(wasm.bufs, js.bufs)
    // the wasm tier's fault, field by field
    assert.is(wasm.fault.message, js.fault.message)
    assert.is(wasm.fault.kernel, js.fault.kernel)
    assert.is(wasm.fault.instruction, js.fault.instruction)
    assert.is(wasm.fault.address, js.fault.address)
    assert.equal(wasm.fault.source, js.fault.source)
    // the threads before the faulting one (in block order) stored their results, on both tiers
    assert.equal(js.after, bytesOf(c.after.want), `${c.kernel}: memory after the fault (JS tier)`)
    assert.equal(wasm.after, js.after, `${c.kernel}: memory after the fault (wasm tier)`)
  })
}

faults('on 2 worker threads the wasm tier reports the same fault (storePast, loadPast, trapOn)', async () => {
  for (const kernel of ['storePast', 'loadPast', 'trapOn']) {
    const c = faultCases.find((x) => x.kernel === kernel)!
    const js = await runFault(c, 'js')
    const wasm = await runFault(c, 'wasm', 2)
    assert.is(wasm.workers, 2)
    assert.is(wasm.tier, 'WebAssembly')
    assert.is(wasm.fault.message, js.fault.message)
    assert.equal(wasm.fault.source, js.fault.source)
  }
})

faults.run()

// --- 3. the emulator corpus on both tiers ---

/** A KernelHost that records everything the cases observe: the bytes of every read, every printf line and
 *  every launch error (cases that expect a fault catch it themselves). */
class RecordingHost implements KernelHost {
  readonly log: string[] = []
  constructor(readonly k: KernelRunner) {}
  get label() { return this.k.label }
  get launched() { return this.k.launched }
  get printed() { return this.k.printed }
  entry(name: string) { return this.k.entry(name) }
  upload(data: ArrayBufferView) { return this.k.upload(data) }
  alloc(byteLength: number, byte?: number) { return this.k.alloc(byteLength, byte) }
  write(buf: DeviceBuffer, data: ArrayBufferView) { return this.k.write(buf, data) }
  variable(ident: string) { return this.k.variable(ident) }
  async read<T extends View>(buf: DeviceBuffer, ctor: ViewCtor<T>): Promise<T> {
    const v = await this.k.read(buf, ctor)
    this.log.push(`read ${ctor.name} ${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}`)
    return v
  }
  async launch(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes?: number): Promise<void> {
    try {
      await this.k.launch(name, grid, block, args, sharedBytes)
      this.log.push(`launch ${name}`)
    } catch (e) {
      this.log.push(`launch ${name} failed: ${(e as Error).message}`)
      throw e
    }
  }
}


/** Runs every case of a group on one tier; the log per case, and the module's tiers per kernel. */
/** NaN payloads the tiers wrote differently, by case: the JavaScript tier holds floats as numbers, which do
 *  not keep a NaN's bits (`0f7FFFFFFF`, libdevice's NaN, reads back as 0x7fc00000); the wasm tier keeps them
 *  as the PTX writes them. Every other bit must be the same. */
const nanPayloads = new Map<string, number>()

/** Whether two records are the same: equal, or reads of float arrays that differ only in the bits of NaNs
 *  (both sides NaN there; counted in nanPayloads). */
function sameRecord(a: string, b: string | undefined, where: string): boolean {
  if (a === b) return true
  const m = /^read (Float32Array|Float64Array) (.*)$/.exec(a), n = b === undefined ? null : /^read (Float32Array|Float64Array) (.*)$/.exec(b)
  if (!m || !n || m[1] !== n[1]) return false
  const x = Buffer.from(m[2]!, 'base64'), y = Buffer.from(n[2]!, 'base64')
  if (x.length !== y.length) return false
  const w = m[1] === 'Float32Array' ? 4 : 8
  let nans = 0
  for (let i = 0; i + w <= x.length; i += w) {
    if (x.subarray(i, i + w).equals(y.subarray(i, i + w))) continue
    const u = w === 4 ? x.readFloatLE(i) : x.readDoubleLE(i), v = w === 4 ? y.readFloatLE(i) : y.readDoubleLE(i)
    if (!(Number.isNaN(u) && Number.isNaN(v))) return false
    nans++
  }
  nanPayloads.set(where, (nanPayloads.get(where) ?? 0) + nans)
  return true
}

async function runCorpus(ptx: string, target: string, label: string, cases: CorpusCase[], codegen: Codegen): Promise<{ logs: string[][]; tiers: Map<string, string>; reasons: Map<string, string> }> {
  const printed: string[] = []
  // on the calling thread: with workers, cases whose result depends on the order of atomics (atomic_exch_cas)
  // may read other bytes from one run to the next on either tier
  const be = createEmulatorBackend({ codegen, workers: 0, print: (text) => printed.push(text) })
  try {
    const k = await KernelRunner.load(be, ptx, target, `${label} (codegen '${codegen}')`, printed)
    const logs: string[][] = []
    for (const c of cases) {
      const host = new RecordingHost(k)
      printed.length = 0
      try {
        await c.run(host)
      } catch (e) {
        throw new Error(`${label}, ${c.file}: ${c.name} fails with codegen '${codegen}': ${(e as Error).message}`)
      }
      logs.push([...host.log, ...printed.map((p) => `printed ${p}`)])
    }
    const mod = k.module as EmulatorModule
    const tiers = new Map<string, string>(), reasons = new Map<string, string>()
    for (const name of readPtxInterface(ptx).kernels.map((x) => x.name)) {
      tiers.set(name, tierOf(mod, name))
      const why = /not WebAssembly: (.*)\)$/.exec(mod.inspect(name))?.[1]
      if (why) reasons.set(name, why)
    }
    return { logs, tiers, reasons }
  } finally {
    await be.dispose()
  }
}

const corpus = suite('wasm tier: the emulator corpus with codegen \'js\' and codegen \'auto\'')
const coverage: string[] = []
const keptOut = new Map<string, number>()

requests.forEach(({ source, config }, r) => {
  const group = groups.find((g) => g.source === source)!
  const label = `${basename(source)}, ${config.label}`
  corpus(`${label}: every case passes on both tiers with the same bytes read back, printf output and launch errors`, async () => {
    const js = await runCorpus(texts[r]!, config.target, label, group.cases, 'js')
    const auto = await runCorpus(texts[r]!, config.target, label, group.cases, 'auto')
    for (const [name, tier] of js.tiers) assert.is(tier, 'JavaScript', `${name} with codegen 'js'`)
    for (const why of js.reasons.values()) assert.is(why, 'codegen: \'js\' was asked for')
    group.cases.forEach((c, i) => {
      const a = js.logs[i]!, b = auto.logs[i]!
      assert.ok(a.some((l) => l.startsWith('read ') || l.startsWith('printed ')), `${c.name}: the case reads nothing back`)
      const at = a.findIndex((l, j) => !sameRecord(l, b[j], `${label}, ${c.name}`))
      if (at >= 0 || a.length !== b.length) {
        const j = at >= 0 ? at : Math.min(a.length, b.length)
        throw new Error(`${label}, ${c.name}: the tiers differ at record ${j}: codegen 'js' ${a[j]?.slice(0, 200)}, codegen 'auto' ${b[j]?.slice(0, 200)}`)
      }
    })
    const wasm = [...auto.tiers].filter(([, t]) => t === 'WebAssembly').map(([n]) => n)
    coverage.push(`${label}: ${wasm.length}/${auto.tiers.size}`)
    for (const why of auto.reasons.values()) {
      // one key per reason: the instruction's opcode for its text, no line numbers or labels
      const key = why.replace(/`([^` .]+)[^`]*`/g, '`$1`').replace(/PTX line \d+/g, 'PTX line …').replace(/\$L__BB\d+_\d+/g, '$L…')
      keptOut.set(key, (keptOut.get(key) ?? 0) + 1)
    }
    assert.ok(wasm.length > 0, `${label}: no kernel of the corpus got WebAssembly`)
  })
})

corpus('coverage: the corpus\'s kernels on the wasm tier (printed)', () => {
  assert.is(coverage.length, requests.length)
  console.log(`  wasm tier coverage of the emulator corpus (kernels on WebAssembly / all): ${coverage.join('; ')}`)
  const top = [...keptOut].sort((a, b) => b[1] - a[1])
  if (nanPayloads.size) console.log(`  NaN payloads that differ (the JavaScript tier does not keep them): ${[...nanPayloads].map(([k, n]) => `${k}: ${n}`).join('; ')}`)
  console.log(`  kept on JavaScript (kernels × configurations, by reason):\n${top.map(([why, n]) => `    ${n} × ${why.slice(0, 160)}`).join('\n')}`)
})

corpus.run()

// --- 4. codegen 'wasm' and 'js', workers ---

// Two kernels: `plus` lowers; `stamp` reads %clock, which the wasm tier leaves to the JavaScript tier by design.
const twoKernels = `.version 8.0
.target sm_80
.address_size 64

.visible .entry plus(.param .u64 plus_p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [plus_p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  add.s32 %r3, %r2, 7;
  st.global.u32 [%rd4], %r3;
  ret;
}

.visible .entry stamp(.param .u64 stamp_p)
{
  .reg .b32 %r<5>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [stamp_p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r2, [%rd4];
  mov.u32 %r4, %clock;
  and.b32 %r4, %r4, 0;
  add.s32 %r3, %r2, %r4;
  xor.b32 %r3, %r3, 255;
  st.global.u32 [%rd4], %r3;
  ret;
}
`
const clockLine = twoKernels.split('\n').findIndex((l) => l.includes('%clock')) + 1

/** Runs kernel `name` of twoKernels over 32 threads on [0, 1, …, 31]; the results. */
function runTwo(be: EmulatorBackend, mod: EmulatorModule, name: string): number[] {
  const d = upload(be, Uint32Array.from({ length: 32 }, (_, i) => i))
  be.launch(mod.getFunction(name), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: d }]))
  const out = [...download(be, d, new Uint32Array(32))]
  be.free(d)
  return out
}

const choose = suite('wasm tier: codegen \'wasm\', \'js\' and \'auto\'; workers')

choose('codegen \'wasm\' refuses a kernel without a lowering with a PtxError naming the instruction and its line; the module\'s other kernel runs on wasm', () => {
  const be = createEmulatorBackend({ codegen: 'wasm', workers: 0 })
  const mod = be.loadModule(ptxBytes(twoKernels))
  let err: unknown
  try { mod.getFunction('stamp') } catch (e) { err = e }
  assert.instance(err, PtxError)
  const msg = (err as Error).message
  assert.ok(msg.includes('`mov.u32 %r4, %clock`'), msg)
  assert.ok(msg.includes(`PTX line ${clockLine}`), msg)
  assert.match(msg, /WebAssembly/)
  assert.is(tierOf(mod, 'plus'), 'WebAssembly')
  assert.equal(runTwo(be, mod, 'plus'), Array.from({ length: 32 }, (_, i) => i + 7))
})

choose('codegen \'auto\' keeps that kernel on JavaScript, naming the instruction in mod.inspect, with the JS tier\'s results', () => {
  const auto = createEmulatorBackend({ codegen: 'auto', workers: 0 }), js = createEmulatorBackend({ codegen: 'js', workers: 0 })
  const ma = auto.loadModule(ptxBytes(twoKernels)), mj = js.loadModule(ptxBytes(twoKernels))
  assert.is(tierOf(ma, 'plus'), 'WebAssembly')
  assert.is(tierOf(ma, 'stamp'), 'JavaScript')
  const why = ma.inspect('stamp').split('\n').pop()!
  assert.ok(why.includes('not WebAssembly: `mov.u32 %r4, %clock`') && why.includes(`PTX line ${clockLine}`), why)
  for (const name of ['plus', 'stamp']) {
    assert.is(tierOf(mj, name), 'JavaScript')
    assert.ok(mj.inspect(name).endsWith('tier: JavaScript (not WebAssembly: codegen: \'js\' was asked for)'), mj.inspect(name))
  }
  const want = Array.from({ length: 32 }, (_, i) => i ^ 255)
  assert.equal(runTwo(auto, ma, 'stamp'), want)
  assert.equal(runTwo(js, mj, 'stamp'), want)
  assert.equal(runTwo(auto, ma, 'plus'), runTwo(js, mj, 'plus'))
})

choose('2 worker threads give the same bytes as the calling thread on the wasm tier: a random program over 64 blocks, a histogram with global atomics', async () => {
  const [p] = fc.sample(genProgram.filter((x) => x.body.length >= 20), { numRuns: 1, seed: 7 })
  const grid: Dim3 = [64, 1, 1], block: Dim3 = [64, 1, 1]
  const threads = grid[0] * block[0]
  const input = inputs(p!, threads)
  const values = Uint32Array.from({ length: 50_000 }, (_, i) => Math.imul(i + 1, 0x9e3779b1) >>> 0)
  const results: Array<{ prog: Uint8Array; bins: Uint32Array }> = []
  for (const [codegen, workers] of [['wasm', 0], ['wasm', 2], ['js', 0]] as const) {
    const be = createEmulatorBackend({ codegen, workers })
    try {
      assert.is(be.workers, workers)
      const mod = be.loadModule(ptxBytes(kernelText(p!)))
      assert.is(tierOf(mod, 'prop'), codegen === 'wasm' ? 'WebAssembly' : 'JavaScript')
      const din = upload(be, input), dout = be.alloc(threads * OUT_BYTES)
      await be.memset(dout, 0, threads * OUT_BYTES)
      await be.launch(mod.getFunction('prop'), { grid, block, sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }]))
      const prog = new Uint8Array(threads * OUT_BYTES)
      await be.copyFromDevice(prog, dout)
      const fm = be.loadModule(ptxBytes(faultPtx))
      assert.is(tierOf(fm, 'histogram'), codegen === 'wasm' ? 'WebAssembly' : 'JavaScript')
      const dv = upload(be, values), dbins = be.alloc(64 * 4)
      await be.memset(dbins, 0, 64 * 4)
      await be.launch(fm.getFunction('histogram'), { grid: [Math.ceil(values.length / 128), 1, 1], block: [128, 1, 1], sharedBytes: 0 }, marshal([{ u64: dv }, { u64: dbins }, { s32: values.length }]))
      const bins = new Uint32Array(64)
      await be.copyFromDevice(new Uint8Array(bins.buffer), dbins)
      results.push({ prog, bins })
    } finally {
      await be.dispose()
    }
  }
  const want = new Uint32Array(64)
  for (const v of values) want[v & 63] += 1 + (v >>> 28)
  assert.equal([...results[0]!.bins], [...want], 'histogram, wasm tier, calling thread')
  assert.equal([...results[1]!.bins], [...want], 'histogram, wasm tier, 2 workers')
  assert.ok(Buffer.compare(results[1]!.prog, results[0]!.prog) === 0, 'the random program: 2 workers and the calling thread differ on the wasm tier')
  assert.is(firstDifference(input, results[2]!.prog, results[0]!.prog), undefined, 'the random program: the wasm tier differs from the JS tier')
})

choose.run()
