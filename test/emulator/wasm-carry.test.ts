// The carry flag in the wasm tier's 4-lane turns: a thread loop's turn runs an instruction without a 4-lane
// form lane by lane, an instruction at a time; add.cc / addc / sub.cc / subc / mad.cc / madc share one flag
// between the four lanes, so lane by lane the second lane's addc read the first's carry (a kernel with a
// barrier gave thread 0 the carry of thread 3). Such a turn now runs its threads one at a time. And the
// uniformity analysis (@kernelpack/ptx) read `addc.u32 d, 0, 0` as a value of the whole grid (immediates
// only), so both tiers kept one d for a block across a barrier: it now reads the carry as the thread's own.
// Checked against the JavaScript tier and a BigInt reference, in kernels with a barrier (block-level thread
// loops) and in one without whose threads loop (the writer's own thread loop).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { download, launchOrFault, marshal, ptxBytes, upload } from './helpers.js'

const HEAD = '.version 8.0\n.target sm_80\n.address_size 64\n'

/** Per thread t: a = x[2t], b = x[2t+1]; out[4t..4t+3] = the 64-bit sum of (a, b) and (b, a) as hi:lo words
 *  from carry chains, the borrow of a - b, and (a * b + a) >> 32 through mad.lo.cc / madc.hi. */
/** a = %r2, b = %r3 of the pair at index %r1. */
const PAIR = `
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd3, %rd1, %rd3;
  ld.global.u32 %r2, [%rd3];
  ld.global.u32 %r3, [%rd3+4];`
const BODY = `
  mov.u32 %r1, %tid.x;
  mad.lo.s32 %r1, %ctaid.x, %ntid.x, %r1;${PAIR}
  add.cc.u32 %r4, %r2, %r3;
  addc.u32 %r5, 0, 0;
  sub.cc.u32 %r6, %r2, %r3;
  subc.u32 %r6, 0, 0;
  mad.lo.cc.u32 %r7, %r2, %r3, %r2;
  madc.hi.u32 %r8, %r2, %r3, 0;
  mul.wide.u32 %rd4, %r1, 16;
  add.s64 %rd4, %rd2, %rd4;`
const STORE = `
  st.global.u32 [%rd4], %r4;
  st.global.u32 [%rd4+4], %r5;
  st.global.u32 [%rd4+8], %r6;
  st.global.u32 [%rd4+12], %r8;`

const WITH_BARRIER = `${HEAD}
.visible .entry chains_bar(.param .u64 x, .param .u64 out)
{
  .reg .b32 %r<10>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;${BODY}
  bar.sync 0;${STORE}
  ret;
}`

// the shape that showed it: a chain into one register, kept across a barrier
const KEPT = `${HEAD}
.visible .entry chain_kept(.param .u64 x, .param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;${PAIR}
  add.cc.u32 %r4, %r2, %r3;
  addc.u32 %r4, 0, 0;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r4;
  bar.sync 0;
  add.u32 %r4, %r4, 1;
  st.global.u32 [%rd6+1024], %r4;
  ret;
}`

// a block-stride loop over 2 elements a thread, no barrier
const LOOPING = `${HEAD}
.visible .entry chains_loop(.param .u64 x, .param .u64 out)
{
  .reg .b32 %r<12>; .reg .b64 %rd<6>; .reg .pred %p1;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r10, 0;
LOOP:${BODY.replace('mad.lo.s32 %r1, %ctaid.x, %ntid.x, %r1;', 'mad.lo.s32 %r1, %r10, %ntid.x, %r1;')}${STORE}
  add.u32 %r10, %r10, 1;
  setp.lt.u32 %p1, %r10, 2;
  @%p1 bra LOOP;
  ret;
}`

function reference(x: Uint32Array, threads: number): number[] {
  const out: number[] = []
  for (let t = 0; t < threads; t++) {
    const a = BigInt(x[2 * t]!), b = BigInt(x[2 * t + 1]!)
    const M = 0xffffffffn
    out.push(Number((a + b) & M), Number((a + b) >> 32n), Number((a < b ? -1n : 0n) & M), Number(((a * b + a) >> 32n) & M))
  }
  return out
}

function run(codegen: 'wasm' | 'js', ptx: string, kernel: string, grid: number, block: number, x: Uint32Array, threads: number): number[] {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    const dx = upload(be, x), dout = upload(be, new Uint32Array(threads * 4))
    const fault = launchOrFault(be, mod, kernel, { grid: [grid, 1, 1], block: [block, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dout }]))
    if (fault) throw fault
    assert.match(mod.inspect(kernel), codegen === 'wasm' ? /tier: WebAssembly$/ : /tier: JavaScript/)
    return [...download(be, dout, new Uint32Array(threads * 4))]
  } finally {
    be.dispose()
  }
}

const s = suite('wasm tier: carry chains in thread loops')

// sums that carry and that do not, in neighbouring threads, so that a carry handed from lane to lane shows
const x = Uint32Array.from({ length: 2 * 512 }, (_, i) => [0, 0xffffffff, 1, 0xfffffffe, 0x80000000, 0x80000000, 7, 3][i % 8]! ^ ((i * 2654435761) >>> 0 & (i % 3 === 0 ? 0 : 0xff)))

s('a kernel with a barrier: each thread its own carry, as the JavaScript tier and the reference', () => {
  for (const [grid, block] of [[4, 128], [3, 37], [1, 4], [2, 1]] as const) {
    const threads = grid * block
    const want = reference(x, threads)
    assert.equal(run('js', WITH_BARRIER, 'chains_bar', grid, block, x, threads), want, `js ${grid}x${block}`)
    assert.equal(run('wasm', WITH_BARRIER, 'chains_bar', grid, block, x, threads), want, `wasm ${grid}x${block}`)
  }
})

s('a carry kept in a register across a barrier: the same', () => {
  for (const block of [256, 64, 7]) {
    const be = (codegen: 'wasm' | 'js') => {
      const e = createEmulatorBackend({ codegen, workers: 0 })
      try {
        const mod = e.loadModule(ptxBytes(KEPT))
        const dx = upload(e, x), dout = upload(e, new Uint32Array(512))
        const fault = launchOrFault(e, mod, 'chain_kept', { grid: [1, 1, 1], block: [block, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dout }]))
        if (fault) throw fault
        return [...download(e, dout, new Uint32Array(512))]
      } finally {
        e.dispose()
      }
    }
    const want = new Array<number>(512).fill(0)
    reference(x, block).forEach((v, i) => { if (i % 4 === 1) { want[(i - 1) / 4] = v; want[256 + (i - 1) / 4] = v + 1 } })
    assert.equal(be('js'), want, `js ${block}`)
    assert.equal(be('wasm'), want, `wasm ${block}`)
  }
})

s('a kernel without barriers whose threads loop: the same', () => {
  for (const block of [256, 37, 4]) {
    const threads = 2 * block
    const want = reference(x, threads)
    assert.equal(run('js', LOOPING, 'chains_loop', 1, block, x, threads), want, `js ${block}`)
    assert.equal(run('wasm', LOOPING, 'chains_loop', 1, block, x, threads), want, `wasm ${block}`)
  }
})

s.run()
