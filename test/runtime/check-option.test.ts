// loadModule's `check` (issue 19): the option and KERNELPACK_CHECK select the checked emulator, 'cuda' and
// 'webgpu' refuse an explicit check, reports reject the launch (SanitizerError) or are collected
// (mod.sanitizerReports()), `mod.alloc` memory counts as unwritten (cudaMalloc) until written, and resolveCheck
// reads the environment variable's syntax.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule, SanitizerError, type Module } from '@kernelpack/runtime'
import { resolveCheck } from '@kernelpack/ptx'
import { join } from 'node:path'
import { tempDir } from '../helpers/tools.js'
import { rejects } from './rejects.js'

// out[t] = in[t] + 1 for t < n (no barrier, no shared memory)
const ptx = `.version 8.0
.target sm_80
.address_size 64
.visible .entry add_one(.param .u64 in, .param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra $L__done;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r2, 4;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, 0f3F800000;
  add.s64 %rd7, %rd4, %rd5;
  st.global.f32 [%rd7], %f2;
$L__done:
  ret;
}`
const bytes = new TextEncoder().encode(ptx)
const manifest = await readPtxManifest(ptx, { demangle: false })
const missing = join(tempDir('kp-no-driver-'), 'libcuda.so.1')

async function withEnv<T>(value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.KERNELPACK_CHECK
  if (value === undefined) delete process.env.KERNELPACK_CHECK
  else process.env.KERNELPACK_CHECK = value
  try { return await fn() } finally {
    if (saved === undefined) delete process.env.KERNELPACK_CHECK
    else process.env.KERNELPACK_CHECK = saved
  }
}

async function run(mod: Module, n: number, input: Float32Array | number): Promise<Float32Array> {
  const inp = typeof input === 'number' ? await mod.alloc(input) : await mod.upload(input)
  const out = await mod.alloc(n * 4)
  await mod.kernel('add_one').launch({ grid: 1, block: 32 }, inp, out, n)
  await mod.synchronize()
  return out.download(new Float32Array(n))
}

// ---
const choice = suite('loadModule: check selects the checked emulator')

choice("'auto' with check runs the emulator and says why; KERNELPACK_CHECK does the same without code changes", async () => {
  const a = await loadModule(bytes, manifest, { backend: 'auto', libcudaPath: missing, check: true })
  assert.is(a.backend.name, 'emulator')
  assert.is(a.backend.reason, 'auto: checks were requested (check), which run on the PTX emulator; launches run on the calling thread: checks (the sanitizer) run there')
  const b = await withEnv('race,sync', () => loadModule(bytes, manifest, { backend: 'auto', libcudaPath: missing }))
  assert.is(b.backend.reason, 'auto: checks were requested (KERNELPACK_CHECK), which run on the PTX emulator; launches run on the calling thread: checks (the sanitizer) run there')
  const c = await withEnv('0', () => loadModule(bytes, manifest, { backend: 'auto', libcudaPath: missing }))
  assert.match(c.backend.reason, /^auto: using the PTX emulator because no NVIDIA driver was found/)
})

choice("an explicit check on 'cuda' or 'webgpu' is a TypeError; KERNELPACK_CHECK leaves them alone", async () => {
  await rejects(() => loadModule(bytes, manifest, { backend: 'cuda', check: true }), (e) => e instanceof TypeError && e.message === "loadModule: check runs on the PTX emulator, not on backend 'cuda'; use backend 'emulator' or 'auto' (on a GPU, run compute-sanitizer)")
  await rejects(() => loadModule(bytes, manifest, { backend: 'webgpu', check: { race: true } }), (e) => e instanceof TypeError && /not on backend 'webgpu'/.test(e.message))
  // the environment variable does not turn a cuda run into an error: it reaches the driver (none here)
  await withEnv('1', () => rejects(() => loadModule(bytes, manifest, { backend: 'cuda', libcudaPath: missing }), (e) => e.name === 'NoDriverError'))
  await rejects(() => withEnv('racecheck,typo', () => loadModule(bytes, manifest, { backend: 'emulator' })), (e) => e instanceof TypeError && e.message.startsWith('KERNELPACK_CHECK: unknown check "typo" in "racecheck,typo"'))
})

choice.run()

// ---
const reports = suite('loadModule: reports')

reports('a clean kernel runs checked with the right result and no report', async () => {
  const mod = await loadModule(bytes, manifest, { backend: 'emulator', check: { mode: 'collect' } })
  const got = await run(mod, 20, Float32Array.from({ length: 20 }, (_, i) => i))
  assert.equal(Array.from(got), Array.from({ length: 20 }, (_, i) => i + 1))
  assert.equal(mod.sanitizerReports(), [])
})

reports('mod.alloc memory reads as zeros but is unwritten (cudaMalloc): initcheck rejects the launch; fill() writes it', async () => {
  const mod = await loadModule(bytes, manifest, { backend: 'emulator', check: true })
  await rejects(() => run(mod, 8, 32), (e) => e instanceof SanitizerError && e.kind === 'init' && e.report.hazard === 'uninitialized' &&
    e.message.startsWith('========= Uninitialized __global__ memory read of size 4 bytes\n') && e.report.accesses[0]!.thread.join() === '0,0,0')
  const buf = await mod.alloc(32)
  assert.equal(Array.from(await buf.download(new Float32Array(8))), new Array(8).fill(0))
  await buf.fill(0)
  const out = await mod.alloc(32)
  await mod.kernel('add_one').launch({ grid: 1, block: 32 }, buf, out, 8)
  assert.equal(Array.from(await out.download(new Float32Array(8))), new Array(8).fill(1))
})

reports('collect mode: the launch goes on, the reports are read once; a memcheck report still rejects it', async () => {
  const mod = await loadModule(bytes, manifest, { backend: 'emulator', check: { init: true, memory: true, mode: 'collect' } })
  await run(mod, 8, 32)
  const [r, ...more] = mod.sanitizerReports()
  assert.is(more.length, 0, 'one report per check, classification and instruction')
  assert.is(r!.kind, 'init')
  assert.is(r!.count, 8, 'seen by each of the 8 threads')
  assert.equal(mod.sanitizerReports(), [], 'read once')
  const small = await mod.upload(new Float32Array(4))
  const out = await mod.alloc(32)
  await rejects(async () => { await mod.kernel('add_one').launch({ grid: 1, block: 32 }, small, out, 5) }, (e) => e instanceof SanitizerError && e.kind === 'memory' &&
    e.report.hazard === 'out-of-bounds' && /and is 0 bytes after the nearest allocation at 0x[0-9a-f]+ of size 16 bytes/.test(e.message))
  assert.is(mod.sanitizerReports()[0]?.kind, 'memory')
})

reports('use after free: a freed buffer is quarantined, and a launch reading it is a memcheck report naming it', async () => {
  const mod = await loadModule(bytes, manifest, { backend: 'emulator', check: true })
  const input = await mod.upload(new Float32Array(8))
  const out = await mod.alloc(32)
  const at = input.address
  await input.free()
  const next = await mod.upload(new Float32Array(8))
  assert.not.equal(next.address, at, 'not reused at once')
  await rejects(async () => { await mod.kernel('add_one').launch({ grid: 1, block: 32 }, at, out, 8) }, (e) => e instanceof SanitizerError && e.report.hazard === 'use-after-free' &&
    e.report.allocation?.base === at && e.report.allocation.state === 'freed' && e.message.includes('which was freed before this launch (use after free)'))
})

reports.run()

// ---
const syntax = suite('resolveCheck: the option and KERNELPACK_CHECK')

syntax('true, 1, all: every check; 0, false, empty: none; a list picks checks; collect sets the mode', () => {
  const all = { race: true, sync: true, init: true, memory: true, mode: 'throw' }
  assert.equal(resolveCheck(true), all)
  assert.equal(resolveCheck('1'), all)
  assert.equal(resolveCheck(' all '), all)
  assert.is(resolveCheck('0'), undefined)
  assert.is(resolveCheck(''), undefined)
  assert.is(resolveCheck(false), undefined)
  assert.is(resolveCheck(undefined), undefined)
  assert.equal(resolveCheck('race, synccheck'), { race: true, sync: true, init: false, memory: false, mode: 'throw' })
  assert.equal(resolveCheck('collect'), { ...all, mode: 'collect' })
  assert.equal(resolveCheck({ mode: 'collect' }), { ...all, mode: 'collect' })
  assert.equal(resolveCheck({ init: true }), { race: false, sync: false, init: true, memory: false, mode: 'throw' })
  assert.is(resolveCheck({ race: false }), undefined)
})

syntax('a bad value is a TypeError naming where it came from', () => {
  assert.throws(() => resolveCheck('races', 'KERNELPACK_CHECK'), /^KERNELPACK_CHECK: unknown check "races"/)
  assert.throws(() => resolveCheck({ racecheck: true } as never), /unknown option "racecheck"/)
  assert.throws(() => resolveCheck({ mode: 'log' } as never), /check\.mode: expected 'throw' or 'collect', got "log"/)
})

syntax.run()
