// Constant operands of f32 adds, products and fmas are kept opaque in the WGSL (emit-ops.ts fk, kp_nc), so that a
// device's shader compiler cannot simplify the arithmetic by algebra IEEE 754 does not allow: NVIDIA's Vulkan
// driver folds x · 0 to 0, and libdevice's sinf/cosf make their NaN for ±∞ as x · 0 (`mov.f32 %f36, 0f00000000;
// mul.rn.f32 %f69, %f1, %f36`), so sinf(∞) came out 0 and cosf(∞) 1 on an H200 through Dawn until this (the
// corpus's math_f32 case, 2026-11-30). SwiftShader keeps IEEE there, so a run here cannot tell: this checks the
// WGSL; the corpus on hardware (`pnpm test:gpu`) runs the kernels. Translation only.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeModule, parsePtx } from '@kernelpack/ptx'
import { translateModule } from '../../packages/webgpu/src/index.js'

/** A one-kernel module: %f1 (and %f7) loaded from the parameter's address %rd2, then `body`. */
const kernel = (body: string) => `.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{
  .reg .f32 %f<12>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [k_param_0];
  cvta.to.global.u64 %rd2, %rd1;
  ld.global.f32 %f1, [%rd2];
  ld.global.f32 %f7, [%rd2+4];
${body}
  ret;
}
`

/** The kernel's WGSL, and its line assigning register `reg` (trimmed). */
function translated(ptx: string): { wgsl: string; line: (reg: string) => string } {
  const r = translateModule(decodeModule(parsePtx(ptx)), target, ptx)
  assert.equal(r.refused, [])
  const wgsl = r.kernels.get('k')!.wgsl
  return { wgsl, line: (reg) => wgsl.split('\n').find((l) => l.trimStart().startsWith(`r_${reg} =`))?.trim() ?? `(no assignment to r_${reg})` }
}

const PTX = kernel(`  mov.f32 %f2, 0f00000000;
  mul.rn.f32 %f3, %f1, %f2;
  add.rn.f32 %f4, %f1, 0f00000000;
  fma.rn.f32 %f5, %f1, %f2, %f4;
  mul.f32 %f6, %f1, %f7;
  mul.f32 %f8, %f1, 0f80000000;
  add.f32 %f9, %f8, %f7;
  st.global.f32 [%rd2], %f3;
  st.global.f32 [%rd2+4], %f4;
  st.global.f32 [%rd2+8], %f5;
  st.global.f32 [%rd2+12], %f6;
  st.global.f32 [%rd2+16], %f9;`)

const target = { features: new Set<string>(), limits: { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 32768 } }

const s = suite('constant operands of f32 arithmetic stay opaque in the WGSL')

s('x · 0 (a register set to 0), x + 0, fma(x, 0, c) and a fused x · −0 + c read their constants through kp_nc; x · y does not', () => {
  const { line } = translated(PTX)
  assert.match(line('f3'), /^r_f3 = kp_nc\(r_f1 \* kp_nc\(r_f2\)\);$/)
  assert.match(line('f4'), /^r_f4 = r_f1 \+ kp_nc\(0\.0f\);$/)
  assert.match(line('f5'), /^r_f5 = kp_fma_rn\(r_f1, kp_nc\(r_f2\), r_f4\);$/)
  // a product of two loaded values: nothing for a compiler to fold (only the product kept from fusing)
  assert.match(line('f6'), /^r_f6 = kp_nc\(r_f1 \* r_f7\);$/)
  // ptxas fuses mul.f32 + add.f32: the fma's constant operand opaque too
  assert.match(line('f9'), /^r_f9 = kp_fma_rn\(r_f1, kp_nc\(bitcast<f32>\(0x80000000u\)\), r_f7\);$/)
})

// Subnormal operands where the device would read them as 0 (NVIDIA's Vulkan driver and SwiftShader flush f32
// subnormal operands of arithmetic): libdevice's logf/log2f scale a subnormal argument by 2^23 first, rsqrtf is
// rsqrt.approx of it. The product by a power of two of at least 2^23 takes a subnormal factor from its bits
// (kp_mul_up), and rcp/sqrt/rsqrt.approx scale one by 2^64 from its bits (kp_up64); .ftz keeps WGSL's own.
// On the H200 math_f32 went from 6 wrong results (logf, rsqrtf, log2f of 1e-40 and 3e-39) to right.
const SUB_PTX = kernel(`  mul.f32 %f2, %f1, 0f4B000000;
  mul.rn.f32 %f3, %f1, 0f3F000000;
  rsqrt.approx.f32 %f4, %f1;
  rsqrt.approx.ftz.f32 %f5, %f1;
  rcp.approx.f32 %f6, %f1;
  sqrt.approx.f32 %f8, %f1;
  st.global.f32 [%rd2], %f2;
  st.global.f32 [%rd2+4], %f3;
  st.global.f32 [%rd2+8], %f4;
  st.global.f32 [%rd2+12], %f5;
  st.global.f32 [%rd2+16], %f6;
  st.global.f32 [%rd2+20], %f8;`)

s('a subnormal operand of x · 2^23 and of rsqrt/rcp/sqrt.approx is taken from its bits (not .ftz, not x · 0.5)', () => {
  const { wgsl, line } = translated(SUB_PTX)
  // c = 2^23, c·2^-149 = 2^-126
  assert.match(line('f2'), /^r_f2 = kp_mul_up\(r_f1, kp_nc\(8388608\.0f\), 1\.1754943508222875e-38f\);$/)
  assert.match(line('f3'), /^r_f3 = kp_nc\(r_f1 \* kp_nc\(0\.5f\)\);$/)
  assert.match(line('f4'), /^r_f4 = kp_rsqrt_a\(r_f1\);$/)
  assert.match(line('f5'), /^r_f5 = kp_ftz\(inverseSqrt\(kp_ftz\(r_f1\)\)\);$/)
  assert.match(line('f6'), /^r_f6 = kp_rcp_a\(r_f1\);$/)
  assert.match(line('f8'), /^r_f8 = kp_sqrt_a\(r_f1\);$/)
  assert.match(wgsl, /fn kp_up64\(x: f32\) -> f32/)
})

s.run()
