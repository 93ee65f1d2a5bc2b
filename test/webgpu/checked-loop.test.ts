// Checked global accesses (emit-memory.ts kp_gchk) in a loop: a kernel whose loop body has 16 of them compiles
// and runs on SwiftShader (keeping the thread's first fault in time, a select on "no fault yet" after each
// access, made the pipeline compile run for minutes and lose the device: clang's scan_uniform_add in the kernel
// corpus), and the fault a thread keeps is the one at the lowest PTX line, at its first occurrence there.
import * as assert from 'uvu/assert'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

const HEAD = '.version 8.0\n.target sm_80\n.address_size 64\n'

// the array's address is read from memory, so no launch proves the accesses in range: the checked WGSL runs
const LOOP16 = `${HEAD}.visible .entry loop16(.param .u64 pp, .param .u32 n)
{
  .reg .b64 %rd<6>; .reg .b32 %r<24>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [pp]; ld.param.u32 %r1, [n];
  ld.global.u64 %rd2, [%rd1];
  mov.u32 %r2, %tid.x; mul.wide.u32 %rd3, %r2, 4; add.s64 %rd4, %rd2, %rd3;
  mov.u32 %r3, 0;
$L:
${Array.from({ length: 8 }, (_, j) => `  ld.global.u32 %r${4 + j}, [%rd4+${256 * j}]; add.u32 %r${4 + j}, %r${4 + j}, ${j + 1}; st.global.u32 [%rd4+${256 * j}], %r${4 + j};`).join('\n')}
  add.s64 %rd4, %rd4, 2048; add.u32 %r3, %r3, 1; setp.lt.u32 %p1, %r3, %r1; @%p1 bra $L;
  ret;
}`

// iteration 0 stores out of bounds (the higher line), iteration 1 loads out of bounds (the lower line)
const TWO_FAULTS = `${HEAD}.visible .entry two_faults(.param .u64 pgood, .param .u64 pbad)
{
  .reg .b64 %rd<6>; .reg .b32 %r<4>; .reg .pred %p<4>;
  ld.param.u64 %rd1, [pgood]; ld.param.u64 %rd2, [pbad];
  mov.u32 %r1, 0;
$L:
  setp.eq.u32 %p1, %r1, 1; selp.b64 %rd3, %rd2, %rd1, %p1;
  ld.global.u32 %r2, [%rd3];
  setp.eq.u32 %p2, %r1, 0; selp.b64 %rd4, %rd2, %rd1, %p2;
  st.global.u32 [%rd4+4], %r2;
  add.u32 %r1, %r1, 1; setp.lt.u32 %p3, %r1, 2; @%p3 bra $L;
  ret;
}`

const s = await webgpuPageSuite('WebGPU: checked global accesses in loops')

s('a loop with 16 checked accesses compiles and runs (each thread adds 1..8 to its column, n rounds)', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, LOOP16, 'compute_80', 'loop16 (WebGPU)')
  assert.equal(ctx.gpu!.refused.map((r) => r.reason), [], 'the kernel translates')
  const rounds = 3, threads = 64
  const data = await k.alloc(4 * threads * 512 * rounds)
  const ptr = await k.upload(new BigUint64Array([data.address]))
  await k.launch('loop16', 1, threads, [ptr, rounds])
  const out = await k.read(data, Uint32Array)
  for (let r = 0; r < rounds; r++) for (let j = 0; j < 8; j++) for (let t = 0; t < threads; t++) assert.is(out[r * 512 + j * 64 + t], j + 1, `round ${r}, access ${j}, thread ${t}`)
})

s('a thread that faults at two places reports the lower PTX line, with that access\'s address', async (ctx) => {
  const k = await KernelRunner.load(ctx.gpu!, TWO_FAULTS, 'compute_80', 'two faults (WebGPU)')
  const good = await k.alloc(64)
  const bad = 0x7ff0_0000
  const err = await k.launch('two_faults', 1, 1, [good, BigInt(bad)]).then(() => k.read(good, Uint32Array)).then(() => undefined, (e: Error) => e)
  assert.ok(err, 'the launch fails')
  const lineOf = (re: RegExp) => TWO_FAULTS.split('\n').findIndex((l) => re.test(l)) + 1
  assert.match(err!.message, new RegExp(`invalid memory access at 0x${bad.toString(16)} \\(PTX line ${lineOf(/^\s+ld\.global\.u32 %r2/)}\\)`))
})

s.run()
