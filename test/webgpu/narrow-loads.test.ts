// Signed loads narrower than their register on WebGPU: `ld.s8` into a 16- or 32-bit register and `ld.s16` into a
// 32-bit one sign-extend (PTX ISA, "ld"); unsigned ones zero-extend. Found through device printf: a `char`
// argument of -5 (`ld.param.s8 %rs1` then `cvt.s32.s16`) printed 251. Compared with the emulator and by hand,
// in headless chromium (SwiftShader).
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { webgpuPageSuite } from '../helpers/webgpu-page.js'

const PTX = `.version 8.0
.target sm_80
.address_size 64
.visible .entry narrow(.param .u64 pin, .param .u64 pout, .param .s8 pc)
{
  .reg .b64 %rd<8>; .reg .b32 %r<12>; .reg .b16 %rs<6>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 2; add.s64 %rd4, %rd1, %rd3;
  ld.global.s8 %rs1, [%rd4]; cvt.s32.s16 %r2, %rs1;
  ld.global.s8 %r3, [%rd4];
  ld.global.s16 %r4, [%rd4];
  ld.global.u8 %r5, [%rd4];
  ld.global.u16 %rs2, [%rd4]; cvt.u32.u16 %r6, %rs2;
  ld.param.s8 %rs3, [pc]; cvt.s32.s16 %r7, %rs3;
  mul.wide.u32 %rd5, %r1, 24; add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r2; st.global.u32 [%rd6+4], %r3; st.global.u32 [%rd6+8], %r4;
  st.global.u32 [%rd6+12], %r5; st.global.u32 [%rd6+16], %r6; st.global.u32 [%rd6+20], %r7;
  ret;
}`

const bytes = Uint8Array.from({ length: 128 }, (_, i) => (i * 37 + 0x80) & 255)

async function run(k: KernelRunner): Promise<Int32Array> {
  const din = await k.upload(bytes), dout = await k.alloc(24 * 64)
  await k.launch('narrow', 1, 64, [din, dout, -5])
  return k.read(dout, Int32Array)
}

const s = await webgpuPageSuite('WebGPU: narrow signed loads sign-extend to the register')

s('ld.s8/ld.s16/ld.u8/ld.u16 into 16- and 32-bit registers: the emulator\'s values and the ISA\'s', async (ctx) => {
  const gpu = await run(await KernelRunner.load(ctx.gpu!, PTX, 'compute_80', 'narrow loads (WebGPU)'))
  const be = createEmulatorBackend({ workers: 0 })
  const emu = await run(await KernelRunner.load(be, PTX, 'compute_80', 'narrow loads (emulator)'))
  be.dispose()
  const dv = new DataView(bytes.buffer)
  for (let t = 0; t < 64; t++) {
    const s8 = dv.getInt8(2 * t), s16 = dv.getInt16(2 * t, true), u8 = dv.getUint8(2 * t), u16 = dv.getUint16(2 * t, true)
    const want = [s8, s8, s16, u8, u16, -5]
    assert.equal([...gpu.subarray(6 * t, 6 * t + 6)], want, `thread ${t} on WebGPU`)
    assert.equal([...emu.subarray(6 * t, 6 * t + 6)], want, `thread ${t} on the emulator`)
  }
})

s.run()
