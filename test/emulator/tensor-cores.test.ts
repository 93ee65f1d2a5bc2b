// Tensor cores (issue 14): mma.sync per shape and type with the fragment-to-lane mapping of the PTX ISA's
// tables, wmma per shape, type, layout and state space against a plain JS GEMM, ldmatrix/stmatrix/movmatrix
// against the ISA's ldmatrix fragment. The tables below are written again from the PTX ISA 9.x text
// (section 9.7.14.5, "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k4 / m16n8k32 / m8n8k4"; section
// 9.7.14.5.15 "ldmatrix"), not taken from the emulator: each lane's registers are filled by the test from
// them, the kernel only moves registers, and D is read back through them, so a lane mapping that differs
// from the ISA's gives a wrong product.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '../../packages/emulator/src/index.js'
import { download, marshal, ptxBytes, upload } from './helpers.js'
import { fromBf16Bits, fromHalfBits, toBf16Bits, toHalfBits } from '../fixtures/emulator/reference.js'

const head = '.version 8.0\n.target sm_90\n.address_size 64\n'
// every test runs in both schemes: thread loops (warp by warp, each tensor-core instruction's inputs gathered
// from the warp's lanes between two lane loops) and the continuation scheme (the scheduler gathers them)
const schemes = [
  { label: 'thread loops', be: createEmulatorBackend({ workers: 0, threadLoops: true, codegen: 'js' }), plan: /: thread loops\n/ },
  { label: 'continuation scheme', be: createEmulatorBackend({ workers: 0, threadLoops: false }), plan: /: continuation scheme .*thread loops are turned off/ },
  // the WebAssembly tier's thread loops: fragments through slots in each lane's local memory, the product by
  // the tier's tc import; wmma.load/store and ldmatrix/stmatrix as wasm accesses
  { label: 'WebAssembly tier', be: createEmulatorBackend({ workers: 0, codegen: 'wasm' }), plan: /: thread loops\n[\s\S]*tier: WebAssembly/ },
]
let be = schemes[0]!.be
let plan = schemes[0]!.plan

type T = 'f16' | 'bf16' | 'tf32' | 'f32' | 'f64' | 'u8' | 's8' | 's32'
type Pos = (g: number, q: number, i: number) => [number, number]

/** [rows, cols, elements per lane, position] of each ISA fragment, by `shape:matrix:kind` (kind: half for
 *  f16/bf16, tf32, int8, f64; acc for every C/D but f64's). */
const ISA: Record<string, [number, number, number, Pos]> = {
  // 9.7.14.5.8: "row = groupID for ai where 0 <= i < 2 || 4 <= i < 6, groupID + 8 otherwise; col =
  // (threadID_in_group * 2) + (i & 0x1) for ai where i < 4, … + 8 for ai where i >= 4"
  'm16n8k16:a:half': [16, 16, 8, (g, q, i) => [(i < 2 || (i >= 4 && i < 6)) ? g : g + 8, q * 2 + (i & 1) + (i >= 4 ? 8 : 0)]],
  // "row = (threadID_in_group * 2) + (i & 0x1) for bi where i < 2, … + 8 for bi where i >= 2; col = groupID"
  'm16n8k16:b:half': [16, 8, 4, (g, q, i) => [q * 2 + (i & 1) + (i >= 2 ? 8 : 0), g]],
  // "row = groupID for ci where i < 2, groupID + 8 for ci where i >= 2; col = (threadID_in_group * 2) + (i & 0x1)"
  'm16n8k16:c:acc': [16, 8, 4, (g, q, i) => [i < 2 ? g : g + 8, q * 2 + (i & 1)]],
  'm16n8k8:c:acc': [16, 8, 4, (g, q, i) => [i < 2 ? g : g + 8, q * 2 + (i & 1)]],
  'm16n8k4:c:acc': [16, 8, 4, (g, q, i) => [i < 2 ? g : g + 8, q * 2 + (i & 1)]],
  'm16n8k32:c:acc': [16, 8, 4, (g, q, i) => [i < 2 ? g : g + 8, q * 2 + (i & 1)]],
  // 9.7.14.5.7: f16/bf16 "row = groupID for a0 and a1, groupID + 8 for a2 and a3; col = threadID_in_group * 2 + (i & 0x1)"
  'm16n8k8:a:half': [16, 8, 4, (g, q, i) => [i < 2 ? g : g + 8, q * 2 + (i & 1)]],
  // "row = (threadID_in_group * 2) + i for bi where i = {0,1}; col = groupID"
  'm16n8k8:b:half': [8, 8, 2, (g, q, i) => [q * 2 + i, g]],
  // tf32: "row = groupID for a0 and a2, groupID + 8 for a1 and a3; col = threadID_in_group for a0 and a1,
  // threadID_in_group + 4 for a2 and a3"; B "row = threadID_in_group for b0, threadID_in_group + 4 for b1"
  'm16n8k8:a:tf32': [16, 8, 4, (g, q, i) => [i === 0 || i === 2 ? g : g + 8, i < 2 ? q : q + 4]],
  'm16n8k8:b:tf32': [8, 8, 2, (g, q, i) => [i === 0 ? q : q + 4, g]],
  // 9.7.14.5.6 m16n8k4 tf32: "row = groupID for a0, groupID + 8 for a1; col = threadID_in_group"; B "row = threadID_in_group"
  'm16n8k4:a:tf32': [16, 4, 2, (g, q, i) => [i === 0 ? g : g + 8, q]],
  'm16n8k4:b:tf32': [4, 8, 1, (g, q) => [q, g]],
  // 9.7.14.5.9 integer m16n8k16: "row = groupID for ai where i < 4, groupID + 8 for ai where i >= 4;
  // col = (threadID_in_group * 4) + (i & 0x3)"; B "row = (threadID_in_group * 4) + i; col = groupID"
  'm16n8k16:a:int8': [16, 16, 8, (g, q, i) => [i < 4 ? g : g + 8, q * 4 + (i & 3)]],
  'm16n8k16:b:int8': [16, 8, 4, (g, q, i) => [q * 4 + i, g]],
  // m16n8k32: "row = groupID for ai where i < 4 || 8 <= i < 12, groupID + 8 otherwise; col = (threadID_in_group
  // * 4) + (i & 0x3) for ai where i < 8, … + 16 for ai where i >= 8"; B "row = (threadID_in_group * 4) + (i & 0x3)
  // for bi where i < 4, … + 16 for bi where i >= 4"
  'm16n8k32:a:int8': [16, 32, 16, (g, q, i) => [(i < 4 || (i >= 8 && i < 12)) ? g : g + 8, q * 4 + (i & 3) + (i >= 8 ? 16 : 0)]],
  'm16n8k32:b:int8': [32, 8, 8, (g, q, i) => [q * 4 + (i & 3) + (i >= 4 ? 16 : 0), g]],
  // 9.7.14.5.2 m8n8k4 .f64: A "row = groupID, col = threadID_in_group"; B "row = threadID_in_group, col = groupID";
  // C "row = groupID, col = (threadID_in_group * 2) + (i & 0x1)"
  'm8n8k4:a:f64': [8, 4, 1, (g, q) => [g, q]],
  'm8n8k4:b:f64': [4, 8, 1, (g, q) => [q, g]],
  'm8n8k4:c:f64': [8, 8, 2, (g, q, i) => [g, q * 2 + (i & 1)]],
}

const kindOf = (t: T, m: 'a' | 'b' | 'c') => (m === 'c' ? (t === 'f64' ? 'f64' : 'acc') : t === 'f16' || t === 'bf16' ? 'half' : t === 'u8' || t === 's8' ? 'int8' : t)
const per = (t: T) => (t === 'f16' || t === 'bf16' ? 2 : t === 'u8' || t === 's8' ? 4 : 1)

/** One element's bits in its register (packed types at their lane of the .b32). */
function encode(t: T, x: number): number {
  switch (t) {
    case 'f16': return toHalfBits(x)
    case 'bf16': return toBf16Bits(x)
    case 'u8': case 's8': return x & 255
    default: return x
  }
}
function decode(t: T, bits: number): number {
  switch (t) {
    case 'f16': return fromHalfBits(bits & 0xffff)
    case 'bf16': return fromBf16Bits(bits & 0xffff)
    default: return bits
  }
}

/** Every lane's registers of a matrix (row-major `m`) as the ISA distributes it. */
function toRegisters(m: number[], t: T, f: [number, number, number, Pos]): number[][] {
  const [, cols, count, pos] = f
  return Array.from({ length: 32 }, (_, l) => {
    const regs: number[] = []
    for (let i = 0; i < count; i++) {
      const [r, c] = pos(l >> 2, l & 3, i)
      const v = m[r * cols + c]!
      const p = per(t)
      if (p === 1) { regs.push(v); continue }
      const bits = 32 / p
      regs[Math.floor(i / p)] = ((regs[Math.floor(i / p)] ?? 0) | (encode(t, v) << (bits * (i % p)))) | 0
    }
    return regs
  })
}

/** The matrix the lanes' registers hold under the ISA's distribution. */
function fromRegisters(regs: number[][], t: T, f: [number, number, number, Pos]): number[] {
  const [rows, cols, count, pos] = f
  const out = new Array<number>(rows * cols).fill(NaN)
  regs.forEach((rs, l) => {
    for (let i = 0; i < count; i++) {
      const [r, c] = pos(l >> 2, l & 3, i)
      const p = per(t)
      out[r * cols + c] = p === 1 ? rs[i]! : decode(t, rs[Math.floor(i / p)]! >>> ((32 / p) * (i % p)))
    }
  })
  return out
}

/** D = A·B + C in binary64, row-major. */
function gemm(a: number[], b: number[], c: number[], m: number, n: number, k: number): number[] {
  const d: number[] = []
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0
    for (let p = 0; p < k; p++) s += a[i * k + p]! * b[p * n + j]!
    d.push(s + c[i * n + j]!)
  }
  return d
}

/** cvt.rna.tf32.f32 written from the ISA ("round to nearest, ties away from zero" to 10 fraction bits). */
function rnaTf32(x: number): number {
  const f = new Float32Array([x]), u = new Uint32Array(f.buffer)
  const low = u[0]! & 0x1fff
  u[0] = (u[0]! - low + (low >= 0x1000 ? 0x2000 : 0)) >>> 0
  return f[0]!
}

let seed = 12345
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32)
const ints = (n: number, lo: number, hi: number) => Array.from({ length: n }, () => lo + Math.floor(rand() * (hi - lo + 1)))

interface Form { shape: string; d: T; a: T; b: T; c: T; sat?: boolean }

/** Runs `mma.sync` of one form on one warp whose registers come from the ISA tables; D as a matrix. */
function runMma(f: Form, A: number[], B: number[], C: number[]): number[] {
  const [m, n, k] = /^m(\d+)n(\d+)k(\d+)$/.exec(f.shape)!.slice(1).map(Number) as [number, number, number]
  const fa = ISA[`${f.shape}:a:${kindOf(f.a, 'a')}`]!, fb = ISA[`${f.shape}:b:${kindOf(f.b, 'b')}`]!, fc = ISA[`${f.shape}:c:${kindOf(f.c, 'c')}`]!
  assert.is(fa[0] * fa[1], m * k)
  const f64 = f.a === 'f64'
  const [ra, rb, rc] = [toRegisters(A, f.a, fa), toRegisters(B, f.b, fb), toRegisters(C, f.c, fc)]
  const cnt = (t: T, fr: [number, number, number, Pos]) => fr[2] / per(t)
  const na = cnt(f.a, fa), nb = cnt(f.b, fb), nc = cnt(f.c, fc), nd = cnt(f.d, fc)
  const slot = na + nb + nc
  const host = f64 ? new Float64Array(32 * slot) : new Int32Array(32 * slot)
  const asF32 = (t: T) => t === 'f32' || t === 'tf32'
  const f32 = new Float32Array(1), i32 = new Int32Array(f32.buffer)
  const put = (t: T, v: number) => { if (asF32(t)) { f32[0] = v; return i32[0]! } return v }
  for (let l = 0; l < 32; l++) [...ra[l]!.map((v) => put(f.a, v)), ...rb[l]!.map((v) => put(f.b, v)), ...rc[l]!.map((v) => put(f.c, v))].forEach((v, j) => { host[l * slot + j] = v })
  const w = f64 ? 8 : 4, ty = f64 ? 'f64' : 'b32', reg = f64 ? '%fd' : '%r'
  const regs = (from: number, count: number) => `{${Array.from({ length: count }, (_, j) => `${reg}${from + j}`).join(', ')}}`
  const loads = Array.from({ length: slot }, (_, j) => `ld.global.${ty} ${reg}${j}, [%rd3+${w * j}];`).join('\n  ')
  const stores = Array.from({ length: nd }, (_, j) => `st.global.${ty} [%rd4+${w * j}], ${reg}${slot + j};`).join('\n  ')
  // tf32 operands go through cvt.rna.tf32.f32 first, as wmma::__float_to_tf32 / CUTLASS do
  const cvts = f.a === 'tf32' ? Array.from({ length: na + nb }, (_, j) => `cvt.rna.tf32.f32 %r${j}, %r${j};`).join('\n  ') : ''
  const ptx = `.visible .entry k(.param .u64 pin, .param .u64 pout) {
  .reg .b64 %rd<8>; .reg .b32 %r<${slot + nd + 1}>; .reg .f64 %fd<${slot + nd + 1}>; .reg .b32 %lane;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; mov.u32 %lane, %laneid;
  mul.wide.u32 %rd5, %lane, ${w * slot}; add.s64 %rd3, %rd1, %rd5;
  mul.wide.u32 %rd6, %lane, ${w * nd}; add.s64 %rd4, %rd2, %rd6;
  ${loads}
  ${cvts}
  mma.sync.aligned.${f.shape}.row.col${f.sat ? '.satfinite' : ''}.${f.d}.${f.a}.${f.b}.${f.c} ${regs(slot, nd)}, ${regs(0, na)}, ${regs(na, nb)}, ${regs(na + nb, nc)};
  ${stores}
  ret; }`
  const mod = be.loadModule(ptxBytes(head + ptx))
  // the kernel runs in the scheme under test
  assert.match(mod.inspect('k'), plan)
  const din = upload(be, host), dout = be.alloc(32 * nd * w)
  be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: din }, { u64: dout }]))
  const out = download(be, dout, f64 ? new Float64Array(32 * nd) : new Int32Array(32 * nd))
  const back = (v: number) => { if (asF32(f.d)) { i32[0] = v; return f32[0]! } return v }
  const rd = Array.from({ length: 32 }, (_, l) => Array.from(out.subarray(l * nd, l * nd + nd), back))
  return fromRegisters(rd, f.d, fc)
}

for (const scheme of schemes) {
const wmmaSuite = suite(`wmma (${scheme.label}): load, mma, store per shape, type, layout and state space against a JS GEMM`)
const ldm = suite(`ldmatrix / stmatrix / movmatrix (${scheme.label}) against the ISA's ldmatrix fragment`)
// ---
const mmaSuite = suite(`mma.sync (${scheme.label}): every form, registers distributed by the ISA tables, against a JS GEMM`)
for (const x of [mmaSuite, wmmaSuite, ldm]) x.before(() => { be = scheme.be; plan = scheme.plan })

mmaSuite('f16 and bf16 (m16n8k16, m16n8k8) into f32 and f16; small dyadic inputs make every sum exact', () => {
  for (const f of [
    { shape: 'm16n8k16', d: 'f32', a: 'f16', b: 'f16', c: 'f32' }, { shape: 'm16n8k16', d: 'f16', a: 'f16', b: 'f16', c: 'f16' },
    { shape: 'm16n8k16', d: 'f32', a: 'bf16', b: 'bf16', c: 'f32' }, { shape: 'm16n8k8', d: 'f32', a: 'f16', b: 'f16', c: 'f32' },
    { shape: 'm16n8k8', d: 'f16', a: 'f16', b: 'f16', c: 'f16' }, { shape: 'm16n8k8', d: 'f32', a: 'bf16', b: 'bf16', c: 'f32' },
  ] as Form[]) {
    const k = Number(f.shape.split('k')[1]), half = f.d === 'f16'
    const A = ints(16 * k, -8, 8).map((x) => x / (half ? 2 : 8)), B = ints(k * 8, -8, 8).map((x) => x / (half ? 2 : 8)), C = ints(16 * 8, -16, 16).map((x) => x / 4)
    assert.equal(runMma(f, A, B, C), gemm(A, B, C, 16, 8, k), `${f.shape} .${f.d}.${f.a}.${f.b}.${f.c}`)
  }
})

mmaSuite('tf32 (m16n8k8, m16n8k4): inputs rounded by cvt.rna.tf32.f32 first, then within f32 accumulation error', () => {
  for (const shape of ['m16n8k8', 'm16n8k4']) {
    const k = Number(shape.split('k')[1])
    const A = Array.from({ length: 16 * k }, () => Math.fround(rand() * 2 - 1)), B = Array.from({ length: k * 8 }, () => Math.fround(rand() * 2 - 1)), C = Array.from({ length: 128 }, () => Math.fround(rand()))
    const got = runMma({ shape, d: 'f32', a: 'tf32', b: 'tf32', c: 'f32' }, A, B, C)
    const ref = gemm(A.map(rnaTf32), B.map(rnaTf32), C, 16, 8, k)
    const abs = gemm(A.map((x) => Math.abs(rnaTf32(x))), B.map((x) => Math.abs(rnaTf32(x))), C.map(Math.abs), 16, 8, k)
    got.forEach((x, i) => assert.ok(Math.abs(x - ref[i]!) <= (k + 1) * 2 ** -24 * abs[i]!, `${shape} [${i}] ${x} vs ${ref[i]}`))
    // and the rounding mattered: truncating instead would miss the reference
    const trunc = gemm(A.map((x) => { const u = new Uint32Array(new Float32Array([x]).buffer); u[0]! &= ~0x1fff; return new Float32Array(u.buffer)[0]! }), B, C, 16, 8, k)
    assert.ok(got.some((x, i) => Math.abs(x - trunc[i]!) > (k + 1) * 2 ** -24 * abs[i]!), `${shape}: cvt.rna changed the inputs`)
  }
})

mmaSuite('s8/u8 (m16n8k16, m16n8k32) into s32, exact; .satfinite clamps', () => {
  for (const f of [
    { shape: 'm16n8k16', d: 's32', a: 's8', b: 's8', c: 's32' }, { shape: 'm16n8k16', d: 's32', a: 'u8', b: 'u8', c: 's32' },
    { shape: 'm16n8k32', d: 's32', a: 's8', b: 'u8', c: 's32' }, { shape: 'm16n8k32', d: 's32', a: 'u8', b: 's8', c: 's32' },
  ] as Form[]) {
    const k = Number(f.shape.split('k')[1])
    const A = ints(16 * k, f.a === 's8' ? -128 : 0, f.a === 's8' ? 127 : 255), B = ints(k * 8, f.b === 's8' ? -128 : 0, f.b === 's8' ? 127 : 255), C = ints(128, -1e6, 1e6)
    assert.equal(runMma(f, A, B, C), gemm(A, B, C, 16, 8, k), `${f.shape} .${f.a}.${f.b}`)
  }
  const A = new Array(16 * 16).fill(127), B = new Array(16 * 8).fill(127), C = new Array(128).fill(2147483647 - 1000)
  assert.ok(runMma({ shape: 'm16n8k16', d: 's32', a: 's8', b: 's8', c: 's32', sat: true }, A, B, C).every((x) => x === 2147483647))
  assert.ok(runMma({ shape: 'm16n8k16', d: 's32', a: 's8', b: 's8', c: 's32' }, A, B, C).every((x) => x === ((2147483647 - 1000 + 16 * 127 * 127) | 0)), 'without .satfinite it wraps')
})

mmaSuite('f64 (m8n8k4): IEEE binary64 within fma-chain error', () => {
  const A = Array.from({ length: 32 }, () => rand() - 0.5), B = Array.from({ length: 32 }, () => rand() - 0.5), C = Array.from({ length: 64 }, () => rand())
  const got = runMma({ shape: 'm8n8k4', d: 'f64', a: 'f64', b: 'f64', c: 'f64' }, A, B, C)
  const ref = gemm(A, B, C, 8, 8, 4)
  got.forEach((x, i) => assert.ok(Math.abs(x - ref[i]!) <= 8 * 2 ** -53 * 4, `[${i}] ${x} vs ${ref[i]}`))
})

// ---

interface WForm { shape: string; ab: T; acc: T; layoutA: 'row' | 'col'; layoutB: 'row' | 'col'; space: 'global' | 'shared' | 'generic' }

/** Bytes of `m` (row-major rows×cols) stored with `layout` and leading dimension `ld`. */
function store(m: number[], rows: number, cols: number, layout: 'row' | 'col', ld: number, t: T): Uint8Array {
  const esz = t === 'f16' || t === 'bf16' ? 2 : t === 'u8' || t === 's8' ? 1 : t === 'f64' ? 8 : 4
  const n = layout === 'row' ? rows * ld : cols * ld
  const dv = new DataView(new ArrayBuffer(n * esz))
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const at = (layout === 'row' ? r * ld + c : c * ld + r) * esz, v = m[r * cols + c]!
    if (esz === 1) dv.setUint8(at, v & 255)
    else if (esz === 2) dv.setUint16(at, encode(t, v), true)
    else if (t === 'f64') dv.setFloat64(at, v, true)
    else if (t === 's32') dv.setInt32(at, v, true)
    else dv.setFloat32(at, v, true)
  }
  return new Uint8Array(dv.buffer)
}

function runWmma(f: WForm): void {
  const [m, n, k] = /^m(\d+)n(\d+)k(\d+)$/.exec(f.shape)!.slice(1).map(Number) as [number, number, number]
  const int = f.ab === 'u8' || f.ab === 's8'
  const gen = (len: number) => (int ? ints(len, f.ab === 's8' ? -100 : 0, 100) : f.ab === 'f64' ? Array.from({ length: len }, () => rand() - 0.5) : ints(len, -8, 8).map((x) => x / 4))
  const A = gen(m * k), B = gen(k * n), C = int ? ints(m * n, -1000, 1000) : f.ab === 'f64' ? gen(m * n) : ints(m * n, -8, 8).map((x) => x / 2)
  // leading dimensions wider than the matrix: the stride operand matters
  const lda = (f.layoutA === 'row' ? k : m) + 8, ldb = (f.layoutB === 'row' ? n : k) + 8, ldc = n + 4
  const bytesA = store(A, m, k, f.layoutA, lda, f.ab), bytesB = store(B, k, n, f.layoutB, ldb, f.ab), bytesC = store(C, m, n, 'row', ldc, f.acc)
  const regs = (t: T, rows: number, cols: number, mat: 'a' | 'b' | 'c') => (t === 'f16' && mat !== 'c' ? 8 : (rows * cols) / 32 / per(t))
  const na = regs(f.ab, m, k, 'a'), nb = regs(f.ab, k, n, 'b'), nc = regs(f.acc, m, n, 'c')
  const f64 = f.ab === 'f64', accReg = f64 ? '%fd' : '%r'
  const list = (p: string, from: number, count: number) => `{${Array.from({ length: count }, (_, j) => `${p}${from + j}`).join(', ')}}`
  const sp = f.space === 'generic' ? '' : `.${f.space}`
  const types = f.ab === 'f16' ? `${f.acc}.${f.acc}` : `${f.acc}.${f.ab}.${f.ab}.${f.acc}`
  const abReg = f64 ? '%fd' : '%r'
  // the shared variant copies A and B into shared memory first (lane-strided bytes), then loads from there
  const copy = (src: string, dst: string, len: number, label: string) => `mov.u32 %r90, %laneid;
${label}: setp.ge.u32 %p1, %r90, ${len}; @%p1 bra ${label}_end; cvt.u64.u32 %rd9, %r90; add.s64 %rd10, ${src}, %rd9; ld.global.u8 %r91, [%rd10];
  add.u32 %r92, ${dst}, %r90; st.shared.u8 [%r92], %r91; add.u32 %r90, %r90, 32; bra ${label};
${label}_end:`
  const shared = f.space === 'shared'
  const ptx = `.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd) {
  .reg .b64 %rd<12>; .reg .b32 %r<100>; .reg .f64 %fd<80>; .reg .pred %p<2>;
  .shared .align 16 .b8 sa[${bytesA.length}]; .shared .align 16 .b8 sb[${bytesB.length}];
  ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [pc]; ld.param.u64 %rd4, [pd];
  ${shared ? `mov.u32 %r80, sa; mov.u32 %r81, sb; ${copy('%rd1', '%r80', bytesA.length, '$ca')} ${copy('%rd2', '%r81', bytesB.length, '$cb')} bar.sync 0;` : ''}
  wmma.load.a.sync.aligned.${f.layoutA}.${f.shape}${sp}.${f.ab} ${list(abReg, 0, na)}, [${shared ? '%r80' : '%rd1'}], ${lda};
  wmma.load.b.sync.aligned.${f.layoutB}.${f.shape}${sp}.${f.ab} ${list(abReg, 20, nb)}, [${shared ? '%r81' : '%rd2'}], ${ldb};
  wmma.load.c.sync.aligned.row.${f.shape}.global.${f.acc} ${list(accReg, 40, nc)}, [%rd3], ${ldc};
  wmma.mma.sync.aligned.${f.layoutA}.${f.layoutB}.${f.shape}.${types}${f64 ? '.rn' : ''} ${list(accReg, 60, nc)}, ${list(abReg, 0, na)}, ${list(abReg, 20, nb)}, ${list(accReg, 40, nc)};
  wmma.store.d.sync.aligned.row.${f.shape}.global.${f.acc} [%rd4], ${list(accReg, 60, nc)}, ${ldc};
  ret; }`
  const mod = be.loadModule(ptxBytes(head + ptx))
  const [da, db, dc] = [upload(be, bytesA), upload(be, bytesB), upload(be, bytesC)]
  const dd = upload(be, new Uint8Array(bytesC.length).fill(0x55))
  be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: da }, { u64: db }, { u64: dc }, { u64: dd }]))
  const out = download(be, dd, new Uint8Array(bytesC.length))
  const dv = new DataView(out.buffer)
  const ref = gemm(A, B, C, m, n, k)
  const what = `wmma ${f.shape} .${f.ab}→.${f.acc} ${f.layoutA}/${f.layoutB} ${f.space}`
  for (let r = 0; r < m; r++) for (let c = 0; c < n; c++) {
    const at = r * ldc + c, want = ref[r * n + c]!
    const got = f.acc === 'f16' ? fromHalfBits(dv.getUint16(at * 2, true)) : f.acc === 's32' ? dv.getInt32(at * 4, true) : f.acc === 'f64' ? dv.getFloat64(at * 8, true) : dv.getFloat32(at * 4, true)
    if (f.acc === 'f64') assert.ok(Math.abs(got - want) <= k * 2 ** -52, `${what} [${r},${c}] ${got} vs ${want}`)
    else assert.is(got, want, `${what} [${r},${c}]`)
  }
  // the padding between rows of D is untouched
  assert.is(out[n * (f.acc === 'f16' ? 2 : f.acc === 'f64' ? 8 : 4)], 0x55, `${what}: store stays in its rows`)
}

wmmaSuite('f16 and bf16: m16n16k16, m32n8k16, m8n32k16 into f32 and f16, every layout pair, global/shared/generic', () => {
  for (const shape of ['m16n16k16', 'm32n8k16', 'm8n32k16']) {
    for (const [la, lb] of [['row', 'col'], ['row', 'row'], ['col', 'col'], ['col', 'row']] as const) {
      runWmma({ shape, ab: 'f16', acc: 'f32', layoutA: la, layoutB: lb, space: 'global' })
    }
    runWmma({ shape, ab: 'f16', acc: 'f16', layoutA: 'row', layoutB: 'col', space: 'shared' })
    runWmma({ shape, ab: 'bf16', acc: 'f32', layoutA: 'col', layoutB: 'row', space: 'generic' })
  }
})

wmmaSuite('tf32 m16n16k8, u8/s8 (m16n16k16, m32n8k16, m8n32k16) into s32, f64 m8n8k4', () => {
  runWmma({ shape: 'm16n16k8', ab: 'tf32', acc: 'f32', layoutA: 'row', layoutB: 'col', space: 'shared' })
  runWmma({ shape: 'm16n16k8', ab: 'tf32', acc: 'f32', layoutA: 'col', layoutB: 'row', space: 'global' })
  for (const shape of ['m16n16k16', 'm32n8k16', 'm8n32k16']) {
    runWmma({ shape, ab: 's8', acc: 's32', layoutA: 'row', layoutB: 'col', space: 'global' })
    runWmma({ shape, ab: 'u8', acc: 's32', layoutA: 'col', layoutB: 'row', space: 'shared' })
  }
  runWmma({ shape: 'm8n8k4', ab: 'f64', acc: 'f64', layoutA: 'row', layoutB: 'col', space: 'global' })
  runWmma({ shape: 'm8n8k4', ab: 'f64', acc: 'f64', layoutA: 'col', layoutB: 'row', space: 'shared' })
})

wmmaSuite('an element outside the allocation faults with the instruction', () => {
  const a = be.alloc(15 * 16 * 2) // one row short
  const mod = be.loadModule(ptxBytes(head + `.visible .entry k(.param .u64 pa) { .reg .b64 %rd<2>; .reg .b32 %r<8>;
  ld.param.u64 %rd1, [pa]; wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}, [%rd1], 16; ret; }`))
  assert.throws(() => be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: a }])),
    (e: Error) => /out-of-bounds or misaligned global memory access in kernel k, instruction `wmma\.load\.a/.test(e.message))
})

// ---

// PTX ISA "ldmatrix": threads 8j..8j+7 give the addresses of rows 0–7 of matrix j; each thread receives, per
// matrix, row (laneid >> 2), elements 2·(laneid % 4) and 2·(laneid % 4) + 1 (low, high half); .trans
// delivers the matrix transposed
const fragmentOf = (mat: number[][], lane: number, trans: boolean) => {
  const r = lane >> 2, c = 2 * (lane & 3)
  return trans ? [mat[c]![r]!, mat[c + 1]![r]!] : [mat[r]![c]!, mat[r]![c + 1]!]
}

ldm('ldmatrix .x1/.x2/.x4 (.trans), rows at scattered addresses', () => {
  for (const num of [1, 2, 4]) for (const trans of [false, true]) {
    // matrix j, row r lives at row slot (7·(8j + r)) mod 32 of a 32×16-byte shared area: rows are not contiguous
    const mats = Array.from({ length: num }, (_, j) => Array.from({ length: 8 }, (_, r) => Array.from({ length: 8 }, (_, c) => (j << 12) | (r << 8) | (c << 4) | 1)))
    const area = new Uint16Array(32 * 8)
    mats.forEach((mt, j) => mt.forEach((row, r) => area.set(row, ((7 * (8 * j + r)) % 32) * 8)))
    const out = be.alloc(32 * num * 4)
    const regs = `{${Array.from({ length: num }, (_, j) => `%r${10 + j}`).join(', ')}}`
    const mod = be.loadModule(ptxBytes(head + `.visible .entry k(.param .u64 pin, .param .u64 pout) {
  .reg .b64 %rd<8>; .reg .b32 %r<20>; .reg .pred %p<2>; .shared .align 16 .b8 area[512];
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; mov.u32 %r1, %laneid;
  mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd1, %rd3; ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];
  shl.b32 %r6, %r1, 4; mov.u32 %r7, area; add.u32 %r8, %r7, %r6; st.shared.v4.u32 [%r8], {%r2, %r3, %r4, %r5};
  bar.sync 0;
  mul.lo.u32 %r9, %r1, 7; rem.u32 %r9, %r9, 32; shl.b32 %r9, %r9, 4; add.u32 %r9, %r7, %r9;
  ldmatrix.sync.aligned.m8n8.x${num}${trans ? '.trans' : ''}.shared.b16 ${regs}, [%r9];
  mul.wide.u32 %rd5, %r1, ${4 * num}; add.s64 %rd6, %rd2, %rd5;
  ${Array.from({ length: num }, (_, j) => `st.global.u32 [%rd6+${4 * j}], %r${10 + j};`).join(' ')}
  ret; }`))
    be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: upload(be, area) }, { u64: out }]))
    const got = download(be, out, new Uint32Array(32 * num))
    for (let l = 0; l < 32; l++) for (let j = 0; j < num; j++) {
      const [lo, hi] = fragmentOf(mats[j]!, l, trans)
      assert.is(got[l * num + j], ((hi! << 16) | lo!) >>> 0, `x${num}${trans ? '.trans' : ''} lane ${l} matrix ${j}`)
    }
  }
})

ldm('stmatrix .x4 (.trans) writes what ldmatrix reads; movmatrix transposes the fragment', () => {
  for (const trans of [false, true]) {
    const mats = Array.from({ length: 4 }, (_, j) => Array.from({ length: 8 }, (_, r) => Array.from({ length: 8 }, (_, c) => (j << 12) | (r << 8) | (c << 4) | 2)))
    const frags = new Uint32Array(32 * 4)
    for (let l = 0; l < 32; l++) for (let j = 0; j < 4; j++) { const [lo, hi] = fragmentOf(mats[j]!, l, false); frags[l * 4 + j] = ((hi! << 16) | lo!) >>> 0 }
    const out = be.alloc(512)
    const mod = be.loadModule(ptxBytes(head + `.visible .entry k(.param .u64 pin, .param .u64 pout) {
  .reg .b64 %rd<8>; .reg .b32 %r<20>; .shared .align 16 .b8 area[512];
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; mov.u32 %r1, %laneid;
  mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd1, %rd3; ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];
  mov.u32 %r7, area; shl.b32 %r6, %r1, 4; add.u32 %r8, %r7, %r6;
  stmatrix.sync.aligned.m8n8.x4${trans ? '.trans' : ''}.shared.b16 [%r8], {%r2, %r3, %r4, %r5};
  bar.sync 0;
  ld.shared.v4.u32 {%r2, %r3, %r4, %r5}, [%r8];
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd2, %rd5; st.global.v4.u32 [%rd6], {%r2, %r3, %r4, %r5};
  ret; }`))
    be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: upload(be, frags) }, { u64: out }]))
    const area = download(be, out, new Uint16Array(256))
    // lane 8j + r gave row r of matrix j the address of 16-byte slot 8j + r
    for (let j = 0; j < 4; j++) for (let r = 0; r < 8; r++) for (let c = 0; c < 8; c++) {
      assert.is(area[(8 * j + r) * 8 + c], trans ? mats[j]![c]![r] : mats[j]![r]![c], `stmatrix${trans ? '.trans' : ''} matrix ${j} [${r},${c}]`)
    }
  }
  const mat = Array.from({ length: 8 }, (_, r) => Array.from({ length: 8 }, (_, c) => (r << 8) | (c << 4) | 3))
  const frag = Uint32Array.from({ length: 32 }, (_, l) => { const [lo, hi] = fragmentOf(mat, l, false); return ((hi! << 16) | lo!) >>> 0 })
  const out = be.alloc(128)
  const mod = be.loadModule(ptxBytes(head + `.visible .entry k(.param .u64 pin, .param .u64 pout) {
  .reg .b64 %rd<8>; .reg .b32 %r<8>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout]; mov.u32 %r1, %laneid; mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3; ld.global.u32 %r2, [%rd4]; movmatrix.sync.aligned.m8n8.trans.b16 %r3, %r2;
  add.s64 %rd5, %rd2, %rd3; st.global.u32 [%rd5], %r3; ret; }`))
  be.launch(mod.getFunction('k'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: upload(be, frag) }, { u64: out }]))
  const got = download(be, out, new Uint32Array(32))
  for (let l = 0; l < 32; l++) { const [lo, hi] = fragmentOf(mat, l, true); assert.is(got[l], ((hi! << 16) | lo!) >>> 0, `movmatrix lane ${l}`) }
})

mmaSuite.run()
wmmaSuite.run()
ldm.run()
}
