// Tensor cores on WebGPU (issue 26 item 7, packages/webgpu/src/emit-tensor.ts): wmma.load/mma/store per shape,
// type, layout and state space, mma.sync per form, ldmatrix/stmatrix (.x1/.x2/.x4, .trans) and movmatrix, each
// kernel run on two warps of a block on the page's adapter (SwiftShader) and on the emulator, every output byte
// compared. The inputs are random bits of each element type (finite): with exponents spread over the whole
// range the products' binary64 sum is inexact, so the order of the additions and the single rounding at the
// end show; with exponents near 1 the sums are exact and the rounding to f32/f16 decides. The emulator's
// products are checked against independent GEMMs in test/emulator/tensor-cores.test.ts; agreeing with it bit
// for bit makes WebGPU's right in the same way.
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { KernelRunner, type KernelArg } from '../helpers/kernel-runner.js'
import { webgpuPageSuite, type PageBackend } from '../helpers/webgpu-page.js'
import { rng } from '../emulator/fma-cases.js'
import { translatePtxForShipping } from '../../packages/webgpu/src/index.js'

type T = 'f16' | 'bf16' | 'tf32' | 'f32' | 'f64' | 'u8' | 's8' | 's32'
const HEAD = '.version 8.0\n.target sm_90\n.address_size 64\n'
const WARPS = 2
const size = (t: T) => (t === 'f16' || t === 'bf16' ? 2 : t === 'u8' || t === 's8' ? 1 : t === 'f64' ? 8 : 4)
const per = (t: T) => (t === 'f16' || t === 'bf16' ? 2 : t === 'u8' || t === 's8' ? 4 : 1)

/** `n` finite elements of type t as bytes: random bits ('wide') or exponents near 1 ('narrow'). */
function elements(t: T, n: number, r: () => number, spread: 'wide' | 'narrow'): Uint8Array {
  const out = new Uint8Array(n * size(t))
  const dv = new DataView(out.buffer)
  const u32 = () => Math.floor(r() * 2 ** 32) >>> 0
  for (let i = 0; i < n; i++) {
    const x = u32()
    switch (t) {
      case 'f16': {
        // exponent field 31 is infinity/NaN; 'narrow' keeps it within 2^±3 of 1
        let h = x & 0xffff
        if (spread === 'narrow') h = (h & 0x83ff) | ((12 + (x >>> 16) % 7) << 10)
        else if (((h >> 10) & 31) === 31) h &= ~0x4000
        dv.setUint16(2 * i, h, true)
        break
      }
      case 'bf16': {
        let h = x & 0xffff
        if (spread === 'narrow') h = (h & 0x807f) | ((124 + (x >>> 16) % 7) << 7)
        else if (((h >> 7) & 255) === 255) h &= ~0x4000
        dv.setUint16(2 * i, h, true)
        break
      }
      case 'f32': case 'tf32': {
        let w = x
        if (spread === 'narrow') w = (w & 0x807fffff) | ((124 + (u32() % 7)) << 23)
        else if (((w >>> 23) & 255) === 255) w &= ~0x40000000
        dv.setUint32(4 * i, w >>> 0, true)
        break
      }
      case 'f64': {
        let hi = u32()
        if (spread === 'narrow') hi = (hi & 0x800fffff) | ((1020 + (x % 7)) << 20)
        else if (((hi >>> 20) & 0x7ff) === 0x7ff) hi &= ~0x40000000
        dv.setUint32(8 * i, x, true)
        dv.setUint32(8 * i + 4, hi >>> 0, true)
        break
      }
      case 'u8': case 's8': out[i] = x & 255; break
      default: dv.setUint32(4 * i, spread === 'narrow' ? (x % 2001) - 1000 : x, true)
    }
  }
  return out
}

/** Runs `ptx`'s kernel k on both backends with the same inputs; returns the outputs' bytes [WebGPU, emulator]. */
async function both(gpu: PageBackend, ptx: string, label: string, inputs: Uint8Array[], outBytes: number, warps = WARPS): Promise<[Uint8Array, Uint8Array]> {
  const run = async (k: KernelRunner) => {
    const bufs = await Promise.all(inputs.map((b) => k.upload(b)))
    const out = await k.alloc(outBytes, 0x55)
    await k.launch('k', 1, 32 * warps, [...bufs, out] as KernelArg[])
    return new Uint8Array((await k.read(out, Uint8Array)).slice().buffer)
  }
  const g = await run(await KernelRunner.load(gpu, HEAD + ptx, 'compute_90', `${label} (WebGPU)`))
  assert.equal(gpu.refused.map((x) => x.reason), [], `${label}: the kernel translates`)
  const be = createEmulatorBackend({ workers: 0 })
  try {
    return [g, await run(await KernelRunner.load(be, HEAD + ptx, 'compute_90', `${label} (emulator)`))]
  } finally {
    be.dispose()
  }
}

/** The first differing elements (of `esz` bytes), for the message. */
function differences(g: Uint8Array, e: Uint8Array, esz: number): string[] {
  const out: string[] = []
  for (let i = 0; i < g.length; i += esz) {
    const a = Buffer.from(g.subarray(i, i + esz)).toString('hex'), b = Buffer.from(e.subarray(i, i + esz)).toString('hex')
    if (a !== b) out.push(`element ${i / esz}: WebGPU ${a}, emulator ${b}`)
  }
  return out
}

const s = await webgpuPageSuite('WebGPU tensor cores (emit-tensor.ts): the emulator\'s bits')

interface WForm { shape: string; ab: T; acc: T; la: 'row' | 'col'; lb: 'row' | 'col'; space: 'global' | 'generic' | 'shared' }

/** wmma.load a, b, c; wmma.mma; wmma.store d, each warp on its own matrices, with leading dimensions wider
 *  than the matrices (the stride operand matters). */
function wmmaPtx(f: WForm, warps = WARPS): { ptx: string; m: number; n: number; k: number; lda: number; ldb: number; ldc: number } {
  const [m, n, k] = /^m(\d+)n(\d+)k(\d+)$/.exec(f.shape)!.slice(1).map(Number) as [number, number, number]
  const lda = (f.la === 'row' ? k : m) + 4, ldb = (f.lb === 'row' ? n : k) + 4, ldc = n + 2
  const regs = (t: T, rows: number, cols: number, mat: 'a' | 'b' | 'c') => (t === 'f16' && mat !== 'c' ? 8 : (rows * cols) / 32 / per(t))
  const na = regs(f.ab, m, k, 'a'), nb = regs(f.ab, k, n, 'b'), nc = regs(f.acc, m, n, 'c')
  const ab = f.ab === 'f64' ? '%fd' : '%r', acc = f.acc === 'f64' ? '%fd' : f.acc === 'f32' ? '%f' : '%r'
  const list = (p: string, from: number, count: number) => `{${Array.from({ length: count }, (_, j) => `${p}${from + j}`).join(', ')}}`
  const bytes = (rows: number, ld: number, t: T) => rows * ld * size(t)
  const aBytes = bytes(f.la === 'row' ? m : k, lda, f.ab), bBytes = bytes(f.lb === 'row' ? k : n, ldb, f.ab), cBytes = bytes(m, ldc, f.acc)
  const types = f.ab === 'f16' ? `${f.acc}.${f.acc}` : `${f.acc}.${f.ab}.${f.ab}.${f.acc}`
  const sp = f.space === 'generic' ? '' : `.${f.space}`
  // the shared variant copies each warp's A and B into shared memory word by word first
  const copy = (src: string, dst: string, len: number, label: string) => `mov.u32 %r90, %r97;
${label}: setp.ge.u32 %p1, %r90, ${len / 4}; @%p1 bra ${label}_end; mul.wide.u32 %rd9, %r90, 4; add.s64 %rd10, ${src}, %rd9; ld.global.u32 %r91, [%rd10];
  shl.b32 %r93, %r90, 2; add.u32 %r92, ${dst}, %r93; st.shared.u32 [%r92], %r91; add.u32 %r90, %r90, 32; bra ${label};
${label}_end:`
  const shared = f.space === 'shared'
  const ptx = `.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd) {
  .reg .b64 %rd<16>; .reg .b32 %r<100>; .reg .f32 %f<80>; .reg .f64 %fd<80>; .reg .pred %p<2>;
  .shared .align 16 .b8 sa[${f.space === 'shared' ? warps * aBytes : 16}]; .shared .align 16 .b8 sb[${f.space === 'shared' ? warps * bBytes : 16}];
  ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [pc]; ld.param.u64 %rd4, [pd];
  mov.u32 %r96, %tid.x; shr.u32 %r95, %r96, 5; and.b32 %r97, %r96, 31;
  mul.wide.u32 %rd11, %r95, ${aBytes}; add.s64 %rd1, %rd1, %rd11; mul.wide.u32 %rd11, %r95, ${bBytes}; add.s64 %rd2, %rd2, %rd11;
  mul.wide.u32 %rd11, %r95, ${cBytes}; add.s64 %rd3, %rd3, %rd11; add.s64 %rd4, %rd4, %rd11;
  ${shared ? `mov.u32 %r80, sa; mad.lo.u32 %r80, %r95, ${aBytes}, %r80; mov.u32 %r81, sb; mad.lo.u32 %r81, %r95, ${bBytes}, %r81; ${copy('%rd1', '%r80', aBytes, '$ca')} ${copy('%rd2', '%r81', bBytes, '$cb')} bar.sync 0;` : ''}
  wmma.load.a.sync.aligned.${f.la}.${f.shape}${sp}.${f.ab} ${list(ab, 0, na)}, [${shared ? '%r80' : '%rd1'}], ${lda};
  wmma.load.b.sync.aligned.${f.lb}.${f.shape}${sp}.${f.ab} ${list(ab, 20, nb)}, [${shared ? '%r81' : '%rd2'}], ${ldb};
  wmma.load.c.sync.aligned.row.${f.shape}.global.${f.acc} ${list(acc, 40, nc)}, [%rd3], ${ldc};
  wmma.mma.sync.aligned.${f.la}.${f.lb}.${f.shape}.${types}${f.ab === 'f64' ? '.rn' : ''} ${list(acc, 60, nc)}, ${list(ab, 0, na)}, ${list(ab, 20, nb)}, ${list(acc, 40, nc)};
  wmma.store.d.sync.aligned.row.${f.shape}.global.${f.acc} [%rd4], ${list(acc, 60, nc)}, ${ldc};
  ret; }`
  return { ptx, m, n, k, lda, ldb, ldc }
}

const WMMA: WForm[] = [
  { shape: 'm16n16k16', ab: 'f16', acc: 'f32', la: 'row', lb: 'col', space: 'global' },
  { shape: 'm16n16k16', ab: 'f16', acc: 'f16', la: 'row', lb: 'row', space: 'shared' },
  { shape: 'm32n8k16', ab: 'f16', acc: 'f32', la: 'col', lb: 'row', space: 'generic' },
  { shape: 'm8n32k16', ab: 'f16', acc: 'f32', la: 'row', lb: 'col', space: 'global' },
  { shape: 'm16n16k16', ab: 'bf16', acc: 'f32', la: 'col', lb: 'row', space: 'generic' },
  { shape: 'm16n16k8', ab: 'tf32', acc: 'f32', la: 'row', lb: 'row', space: 'global' },
  { shape: 'm16n16k16', ab: 's8', acc: 's32', la: 'row', lb: 'col', space: 'global' },
  { shape: 'm16n16k16', ab: 'u8', acc: 's32', la: 'col', lb: 'col', space: 'shared' },
  { shape: 'm8n8k4', ab: 'f64', acc: 'f64', la: 'row', lb: 'row', space: 'generic' },
]

for (const f of WMMA) {
  s(`wmma ${f.shape} ${f.ab} → ${f.acc} (${f.la}, ${f.lb}, ${f.space}): every element of D the emulator's, on wide and narrow inputs`, async (ctx) => {
    const { ptx, m, n, k, lda, ldb, ldc } = wmmaPtx(f)
    for (const spread of ['wide', 'narrow'] as const) {
      const r = rng(f.shape.length * 131 + f.ab.charCodeAt(0) + (spread === 'wide' ? 7 : 0))
      const a = elements(f.ab, WARPS * (f.la === 'row' ? m : k) * lda, r, spread)
      const b = elements(f.ab, WARPS * (f.lb === 'row' ? k : n) * ldb, r, spread)
      const c = elements(f.acc, WARPS * m * ldc, r, spread)
      const [g, e] = await both(ctx.gpu!, ptx, `wmma ${f.shape}.${f.ab}`, [a, b, c], c.length)
      const wrong = differences(g, e, size(f.acc))
      assert.is(wrong.length, 0, `${spread}: ${wrong.length} of ${c.length / size(f.acc)} elements differ:\n${wrong.slice(0, 8).join('\n')}`)
      // the store wrote D (the 0x55 fill is gone where D lies) and D is not C
      assert.not.equal(Buffer.from(g).toString('hex'), Buffer.from(c).toString('hex'), `${spread}: D differs from C`)
    }
  })
}

s('wmma with 10 warps in a block (320 threads: more than the adapter\'s 256 invocations, so each runs two CUDA threads): the emulator\'s bits', async (ctx) => {
  const f: WForm = { shape: 'm16n16k16', ab: 'f16', acc: 'f32', la: 'row', lb: 'col', space: 'global' }
  const warps = 10
  const { ptx, m, n, k, lda, ldb, ldc } = wmmaPtx(f, warps)
  const r = rng(99)
  const a = elements(f.ab, warps * m * lda, r, 'wide'), b = elements(f.ab, warps * n * ldb, r, 'wide'), c = elements(f.acc, warps * m * ldc, r, 'wide')
  assert.is(k, 16)
  const [g, e] = await both(ctx.gpu!, ptx, 'wmma, 10 warps', [a, b, c], c.length, warps)
  const wrong = differences(g, e, 4)
  assert.is(wrong.length, 0, `${wrong.length} differ:\n${wrong.slice(0, 8).join('\n')}`)
})

s('a build names the kernels whose products are computed in software binary64 (not as f64 kernels); integer products are not', () => {
  const f16 = translatePtxForShipping(HEAD + wmmaPtx(WMMA[0]!).ptx, 'wmma.cu')
  assert.equal([f16.softTensor, f16.softF64, f16.refused], [['k'], [], []])
  const int8 = translatePtxForShipping(HEAD + wmmaPtx(WMMA.find((f) => f.ab === 's8')!).ptx, 'wmma.cu')
  assert.equal([int8.softTensor, int8.softF64], [[], []])
})

interface MForm { shape: string; d: T; a: T; b: T; c: T; sat?: boolean }

/** mma.sync.aligned.<shape>.row.col of one form: each lane's A, B, C registers from its slot of the input,
 *  its D registers to its slot of the output. */
function mmaPtx(f: MForm, na: number, nb: number, nc: number, nd: number): string {
  const f64 = f.a === 'f64'
  const slot = na + nb + nc
  const w = f64 ? 8 : 4, ty = f64 ? 'f64' : 'b32', reg = f64 ? '%fd' : '%r'
  const regs = (from: number, count: number) => `{${Array.from({ length: count }, (_, j) => `${reg}${from + j}`).join(', ')}}`
  const loads = Array.from({ length: slot }, (_, j) => `ld.global.${ty} ${reg}${j}, [%rd3+${w * j}];`).join('\n  ')
  const stores = Array.from({ length: nd }, (_, j) => `st.global.${ty} [%rd4+${w * j}], ${reg}${slot + j};`).join('\n  ')
  return `.visible .entry k(.param .u64 pin, .param .u64 pout) {
  .reg .b64 %rd<8>; .reg .b32 %r<${slot + nd + 1}>; .reg .f64 %fd<${slot + nd + 1}>; .reg .b32 %t;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; mov.u32 %t, %tid.x;
  mul.wide.u32 %rd5, %t, ${w * slot}; add.s64 %rd3, %rd1, %rd5;
  mul.wide.u32 %rd6, %t, ${w * nd}; add.s64 %rd4, %rd2, %rd6;
  ${loads}
  mma.sync.aligned.${f.shape}.row.col${f.sat ? '.satfinite' : ''}.${f.d}.${f.a}.${f.b}.${f.c} ${regs(slot, nd)}, ${regs(0, na)}, ${regs(na, nb)}, ${regs(na + nb, nc)};
  ${stores}
  ret; }`
}

// [form, A registers, B registers, C registers, D registers] per lane (the PTX ISA's fragment tables)
const MMA: Array<[MForm, number, number, number, number]> = [
  [{ shape: 'm16n8k16', d: 'f32', a: 'f16', b: 'f16', c: 'f32' }, 4, 2, 4, 4],
  [{ shape: 'm16n8k16', d: 'f16', a: 'f16', b: 'f16', c: 'f16' }, 4, 2, 2, 2],
  [{ shape: 'm16n8k8', d: 'f32', a: 'bf16', b: 'bf16', c: 'f32' }, 2, 1, 4, 4],
  [{ shape: 'm16n8k8', d: 'f32', a: 'tf32', b: 'tf32', c: 'f32' }, 4, 2, 4, 4],
  [{ shape: 'm16n8k4', d: 'f32', a: 'tf32', b: 'tf32', c: 'f32' }, 2, 1, 4, 4],
  [{ shape: 'm16n8k32', d: 's32', a: 's8', b: 'u8', c: 's32', sat: true }, 4, 2, 4, 4],
  [{ shape: 'm8n8k4', d: 'f64', a: 'f64', b: 'f64', c: 'f64' }, 1, 1, 2, 2],
]

for (const [f, na, nb, nc, nd] of MMA) {
  s(`mma.sync ${f.shape}${f.sat ? '.satfinite' : ''} ${f.d}.${f.a}.${f.b}.${f.c}: every register of D the emulator's`, async (ctx) => {
    const ptx = mmaPtx(f, na, nb, nc, nd)
    for (const spread of ['wide', 'narrow'] as const) {
      const r = rng(na * 17 + nc + f.a.charCodeAt(0) + (spread === 'wide' ? 3 : 0))
      // each lane's slot: its A, B and C registers, as the element types pack them
      const lanes: Uint8Array[] = []
      for (let l = 0; l < 32 * WARPS; l++) {
        const regsOf = (t: T, count: number) => elements(t, count * per(t), r, spread)
        lanes.push(new Uint8Array([...regsOf(f.a, na), ...regsOf(f.b, nb), ...regsOf(f.c, nc)]))
      }
      const input = new Uint8Array(lanes.flatMap((x) => [...x]))
      const w = f.a === 'f64' ? 8 : 4
      const [g, e] = await both(ctx.gpu!, ptx, `mma ${f.shape}`, [input], 32 * WARPS * nd * w)
      const wrong = differences(g, e, f.d === 'f16' ? 2 : w)
      assert.is(wrong.length, 0, `${spread}: ${wrong.length} differ:\n${wrong.slice(0, 8).join('\n')}`)
    }
    if (f.sat) {
      // C near the int32 limits: the sum saturates (the emulator's clamp), on both
      const big = new Uint8Array(32 * WARPS * (na + nb + nc) * 4)
      const dv = new DataView(big.buffer)
      for (let l = 0; l < 32 * WARPS; l++) {
        for (let j = 0; j < na + nb; j++) dv.setUint32((l * (na + nb + nc) + j) * 4, 0x7f7f7f7f, true)
        for (let j = 0; j < nc; j++) dv.setInt32((l * (na + nb + nc) + na + nb + j) * 4, j % 2 ? -2147483000 : 2147483000, true)
      }
      const [g, e] = await both(ctx.gpu!, ptx, `mma ${f.shape} saturating`, [big], 32 * WARPS * nd * 4)
      assert.equal(differences(g, e, 4), [], 'saturated sums')
      const got = new Int32Array(g.buffer)
      assert.ok(got.includes(2147483647), 'a sum clamps at INT32_MAX')
    }
  })
}

/** ldmatrix (.x1/.x2/.x4, .trans) from shared memory whose rows each lane points at in a shuffled order, and
 *  stmatrix back to other rows; movmatrix on the loaded registers. */
function matrixPtx(num: 1 | 2 | 4, trans: boolean): string {
  const regs = (p: string) => `{${Array.from({ length: num }, (_, j) => `%${p}${j}`).join(', ')}}`
  const t = trans ? '.trans' : ''
  const rows = 8 * num
  return `.visible .entry k(.param .u64 pin, .param .u64 pout) {
  .reg .b64 %rd<12>; .reg .b32 %r<40>; .reg .b32 %a<4>; .reg .b32 %b<4>; .reg .pred %p<2>;
  .shared .align 16 .b8 sm[${WARPS * 2 * rows * 16}];
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout];
  mov.u32 %r1, %tid.x; shr.u32 %r2, %r1, 5; and.b32 %r3, %r1, 31;
  mov.u32 %r4, sm; mad.lo.u32 %r4, %r2, ${2 * rows * 16}, %r4;
  // the warp's ${rows} input rows of 16 bytes from global memory, word by word
  mov.u32 %r5, %r3;
$c: setp.ge.u32 %p1, %r5, ${rows * 4}; @%p1 bra $c_end;
  mad.lo.u32 %r6, %r2, ${rows * 4}, %r5; mul.wide.u32 %rd3, %r6, 4; add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r7, [%rd4];
  shl.b32 %r8, %r5, 2; add.u32 %r9, %r4, %r8; st.shared.u32 [%r9], %r7; add.u32 %r5, %r5, 32; bra $c;
$c_end:
  bar.sync 0;
  // lane l points at input row (5l + 3) mod ${rows}: the rows of each matrix come from scattered places
  mad.lo.u32 %r10, %r3, 5, 3; rem.u32 %r10, %r10, ${rows}; shl.b32 %r10, %r10, 4; add.u32 %r11, %r4, %r10;
  ldmatrix.sync.aligned.m8n8.x${num}${t}.shared.b16 ${regs('a')}, [%r11];
  ${Array.from({ length: num }, (_, j) => `movmatrix.sync.aligned.m8n8.trans.b16 %b${j}, %a${j};`).join('\n  ')}
  // stmatrix the moved registers to the second half, row (7l + 1) mod ${rows}
  mad.lo.u32 %r12, %r3, 7, 1; rem.u32 %r12, %r12, ${rows}; shl.b32 %r12, %r12, 4; add.u32 %r13, %r4, %r12; add.u32 %r13, %r13, ${rows * 16};
  stmatrix.sync.aligned.m8n8.x${num}${t}.shared.b16 [%r13], ${regs('b')};
  bar.sync 0;
  // out: each lane's loaded registers, then the warp's second half of shared memory
  mad.lo.u32 %r14, %r1, ${4 * num}, 0; cvt.u64.u32 %rd5, %r14; add.s64 %rd6, %rd2, %rd5;
  ${Array.from({ length: num }, (_, j) => `st.global.u32 [%rd6+${4 * j}], %a${j};`).join('\n  ')}
  mov.u32 %r5, %r3;
$o: setp.ge.u32 %p1, %r5, ${rows * 4}; @%p1 bra $o_end;
  shl.b32 %r8, %r5, 2; add.u32 %r9, %r4, %r8; ld.shared.u32 %r7, [%r9+${rows * 16}];
  mad.lo.u32 %r6, %r2, ${rows * 4}, %r5; add.u32 %r6, %r6, ${32 * WARPS * num}; mul.wide.u32 %rd3, %r6, 4; add.s64 %rd4, %rd2, %rd3; st.global.u32 [%rd4], %r7;
  add.u32 %r5, %r5, 32; bra $o;
$o_end:
  ret; }`
}

for (const num of [1, 2, 4] as const) {
  for (const trans of [false, true]) {
    s(`ldmatrix/stmatrix .x${num}${trans ? '.trans' : ''} and movmatrix: every word the emulator's`, async (ctx) => {
      const rows = 8 * num
      const r = rng(num * 10 + (trans ? 1 : 0))
      const input = elements('u8', WARPS * rows * 16, r, 'wide')
      const outBytes = 4 * (32 * WARPS * num + WARPS * rows * 4)
      const [g, e] = await both(ctx.gpu!, matrixPtx(num, trans), `ldmatrix x${num}`, [input], outBytes)
      const wrong = differences(g, e, 4)
      assert.is(wrong.length, 0, `${wrong.length} words differ:\n${wrong.slice(0, 8).join('\n')}`)
      // the registers hold input words (ldmatrix gathered rows, not zeros)
      assert.ok(new Uint32Array(g.buffer).slice(0, 32 * WARPS * num).every((x) => x !== 0x55555555), 'every register was loaded')
    })
  }
}

s.run()
