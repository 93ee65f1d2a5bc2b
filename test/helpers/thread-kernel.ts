// The frame of the per-thread PTX kernels that the WebGPU exactness tests run on both backends and compare bit
// for bit (exact-rounding, soft-f64, helpers-edges, nan-payloads): thread i = %ctaid.x · %ntid.x + %tid.x (in %r5)
// runs `body` when i < n (%r1); pin is in %rd1, pout in %rd2 and each extra pointer parameter in the register
// named with it, all as global addresses. `regs`: the kernel's register declarations (%rd1–%rd2, %r1–%r5 and
// %p1 included); `body`: its lines, indented, between the bounds check and `$done`.
export function threadKernel(entry: string, o: { target?: string; regs: string; body: string; pointers?: ReadonlyArray<readonly [param: string, reg: string]> }): string {
  const more = o.pointers ?? []
  return `.version 8.0
.target ${o.target ?? 'sm_80'}
.address_size 64
.visible .entry ${entry}(.param .u64 pin, .param .u64 pout, ${more.map(([p]) => `.param .u64 ${p}, `).join('')}.param .u32 n)
{
  ${o.regs}
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; ${more.map(([p, r]) => `ld.param.u64 ${r}, [${p}]; `).join('')}ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;${more.map(([, r]) => ` cvta.to.global.u64 ${r}, ${r};`).join('')}
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ctaid.x; mov.u32 %r4, %ntid.x; mad.lo.s32 %r5, %r3, %r4, %r2;
  setp.ge.u32 %p1, %r5, %r1; @%p1 bra $done;
${o.body}
$done:
  ret;
}`
}
