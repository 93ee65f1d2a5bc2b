// emit-wgsl's refusal reasons for what WGSL cannot express (issue 15): each special register without a WGSL
// counterpart names its own cause (a timer, the grid workspace of a cooperative launch, reserved shared memory,
// a driver register, a performance counter), and tensor-core instructions, collective (ldmatrix) or not
// (wmma.load), say so. Translation only: no device.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeModule, parsePtx, readableName } from '@kernelpack/ptx'
import { CannotTranslateError, translateModule } from '../../packages/webgpu/src/index.js'

const target = { features: new Set<string>(), limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 32768 } }

/** The refusal reasons of a one-kernel module whose body is `body`. */
function refusalOf(body: string, decls = ''): string[] {
  const ptx = `.version 8.0
.target sm_80
.address_size 64
${decls}
.visible .entry k(.param .u64 k_param_0)
{
  .reg .b32 %r<9>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
${body}
  st.global.u32 [%rd2], %r1;
  ret;
}
`
  return translateModule(decodeModule(parsePtx(ptx)), target, ptx).refused.map((u) => u.reason)
}

const s = suite('emit-wgsl refusal reasons')

for (const [reg, why] of [
  ['%envreg7', /^the special register %envreg7: a driver-defined environment register/],
] as const) {
  s(`${reg}: ${why.source.split(': ').slice(1).join(': ').slice(0, 40)}…`, () => {
    assert.equal(refusalOf(`  mov.u32 %r1, ${reg};`).length, 1)
    assert.match(refusalOf(`  mov.u32 %r1, ${reg};`)[0]!, why)
  })
}

s('%envreg2 read for anything but a grid sync (cg::this_grid().sync(), which translates: grid-sync.test.ts) is refused by name', () => {
  assert.equal(refusalOf('  mov.u32 %r1, %envreg2;').length, 1)
  assert.match(refusalOf('  mov.u32 %r1, %envreg2;')[0]!, /^the grid workspace of a cooperative launch \(%envreg1\/%envreg2\) used for something other than cg::this_grid\(\)\.sync\(\)/)
})

s('%clock/%globaltimer read a count of the thread\'s reads (WGSL has no clock), not refused', () => {
  for (const reg of ['%clock', '%clock_hi', '%clock64', '%globaltimer', '%globaltimer_lo', '%globaltimer_hi']) {
    assert.equal(refusalOf(`  mov.u32 %r1, ${reg};`), [], reg)
  }
})

s('mbarrier: transaction counts (TMA) and generic addresses are refused by name; a cluster of one block is the block', () => {
  assert.equal(refusalOf('  mbarrier.arrive.shared.b64 %rd1, [%r2];'), [])
  assert.equal(refusalOf('  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r2];'), [])
  assert.match(refusalOf('  mbarrier.arrive.expect_tx.shared.b64 %rd1, [%r2], %r3;')[0] ?? '', /mbarrier transaction counts \(expect_tx\/complete_tx\)/)
  assert.match(refusalOf('  mbarrier.arrive.b64 %rd1, [%rd2];')[0] ?? '', /an mbarrier named by a generic address/)
})

s('%reserved_smem_offset_*: the block\'s reserved shared memory is allocated now (cg::block_tile_memory), not refused', () => {
  for (const reg of ['%reserved_smem_offset_begin', '%reserved_smem_offset_0', '%reserved_smem_offset_1', '%reserved_smem_offset_end', '%reserved_smem_offset_cap']) {
    assert.equal(refusalOf(`  mov.u32 %r1, ${reg};`), [], reg)
  }
})

s('tensor cores translate (issue 26 item 7: ldmatrix, wmma.load); a form the fragment tables do not know is refused by name', () => {
  assert.equal(refusalOf('  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [%r2];'), [])
  assert.equal(refusalOf('  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd2], %r3;'), [])
  // f16 A fragments take 8 registers
  assert.equal(refusalOf('  wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4}, [%rd2], %r3;'), ['wmma.load.a.sync.aligned.row.m16n16k16.global.f16 needs 8 registers, got 4'])
  // ldmatrix of 8-bit elements (.b8, sm_100) is not in the tables
  assert.match(refusalOf('  ldmatrix.sync.aligned.m8n8.x1.shared.b8 {%r1}, [%r2];')[0] ?? '', /unsupported instruction ldmatrix/)
})

s('a device-function call is refused at the call\'s own line, naming the callee demangled (issue 25)', () => {
  // a kernel named like a WGSL keyword calling `let(unsigned int)`, as the adversarial pass wrote it
  const ptx = `.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 func_retval0) _Z3letj(.param .b32 _Z3letj_param_0)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [_Z3letj_param_0];
  add.s32 %r2, %r1, 1;
  st.param.b32 [func_retval0], %r2;
  ret;
}
.visible .entry _Z8call_letPj(.param .u64 _Z8call_letPj_param_0)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [_Z8call_letPj_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  { // callseq 0
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call.uni (retval0), _Z3letj, (param0);
  ld.param.b32 %r2, [retval0];
  } // callseq 0
  st.global.u32 [%rd2], %r2;
  ret;
}
`
  const r = translateModule(decodeModule(parsePtx(ptx), { perFunction: true }), target, ptx).refused
  const callLine = ptx.split('\n').findIndex((l) => l.includes('call.uni')) + 1
  assert.equal(r.map((u) => [u.kernel, u.line]), [['_Z8call_letPj', callLine]])
  assert.match(r[0]!.instruction ?? '', /^call\.uni \(retval0\), _Z3letj, \(param0\)/)
  assert.match(r[0]!.reason, /^a call to _Z3letj \(let\(unsigned int\)\): device function calls are not translated yet/)
  // the backend passes the demangler (loaded for a module with refused kernels) to name kernels
  const err = new CannotTranslateError('call.ptx', r, readableName)
  assert.match(err.message, new RegExp(`^call\\.ptx: cannot run on WebGPU: kernel _Z8call_letPj \\(call_let\\(unsigned int\\*\\)\\): PTX line ${callLine} \\(call\\.uni`))
})

s.run()
