// Issue 13 item 1: the kernel's choice is visible. mod.inspect(kernel) (and KERNELPACK_EMULATOR_DEBUG at
// load) shows the thread loops with their PTX lines and what is kept per thread, or why a kernel falls
// back to the continuation scheme; a kernel that falls back still runs correctly.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend } from '../../packages/emulator/src/index.js'
import { Heap } from '../../packages/emulator/src/heap.js'
import { loadPtxModule } from '../../packages/emulator/src/load-module.js'
import { download, marshal, ptxBytes } from './helpers.js'

const head = '.version 8.0\n.target sm_80\n.address_size 64\n'

// out[tid] = sum of tid·k over a uniform k-loop, through shared memory and two barriers per trip
const formable = `${head}
.visible .entry tiles(.param .u64 out, .param .u32 trips)
{
  .reg .b64 %rd<4>; .reg .b32 %r<12>; .reg .pred %p<2>;
  .shared .align 4 .b8 s[1024];
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [trips];
  mov.u32 %r2, %tid.x; shl.b32 %r3, %r2, 2; mov.u32 %r4, s; add.s32 %r5, %r4, %r3;
  mov.u32 %r6, 0; mov.u32 %r7, 0;
$k:
  mul.lo.s32 %r8, %r2, %r6; st.shared.u32 [%r5], %r8;
  bar.sync 0;
  ld.shared.u32 %r9, [%r5]; add.s32 %r7, %r7, %r9;
  bar.sync 0;
  add.s32 %r6, %r6, 1; setp.lt.u32 %p1, %r6, %r1; @%p1 bra $k;
  mul.wide.u32 %rd2, %r2, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r7;
  ret;
}`

// the same sum, but threads with tid.x >= 64 skip the loop to a last barrier: a branch around barriers that
// differs per thread (the blocks here have 64 threads, which all take it alike, so the result is defined)
const divergent = formable.replace('.entry tiles', '.entry skip').replace('  mov.u32 %r6, 0; mov.u32 %r7, 0;\n', '  mov.u32 %r6, 0; mov.u32 %r7, 0;\n  setp.lt.u32 %p0, %r2, 64; @!%p0 bra $store;\n').replace('  mul.wide.u32 %rd2', '$store:\n  bar.sync 0;\n  mul.wide.u32 %rd2')

const tl = suite('thread loops: inspect and fallback')

tl('inspect shows the loops, the PTX lines and the values kept per thread; the result is right', () => {
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(formable))
  const text = mod.inspect('tiles')
  const line = (s: string) => formable.split('\n').findIndex((l) => l.includes(s)) + 1
  assert.match(text, /^kernel tiles: thread loops/)
  // %r2 is a copy of %tid.x: recomputed in each loop, not kept
  assert.match(text, /kept per thread: %r5 %r7\n/)
  assert.match(text, /recomputed: %r2 \(%tid.x\)/)
  assert.match(text, /kept per block: .*%r6/)
  assert.match(text, new RegExp(`loop \\$k \\(PTX lines ${line('$k:') + 1}–${line('@%p1 bra $k')}\\), once per block:`))
  assert.match(text, new RegExp(`barrier \`bar.sync 0\` \\(line ${line('bar.sync 0')}\\)`))
  assert.match(text, /branch at line \d+: taken alike by the whole block, decided after the loop/)
  const out = be.alloc(64 * 4)
  be.launch(mod.getFunction('tiles'), { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }, { u32: 5 }]))
  assert.equal(Array.from(download(be, out, new Int32Array(64))), Array.from({ length: 64 }, (_, t) => t * 10))
})

tl('a branch around barriers that differs between threads falls back to the continuation scheme and says why', () => {
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(divergent))
  const at = divergent.split('\n').findIndex((l) => l.includes('@!%p0 bra $store')) + 1
  assert.match(mod.inspect('skip'), new RegExp(`^kernel skip: continuation scheme .*because the branch at PTX line ${at} \\(\`@!%p0 bra \\$store\`\\) goes around a barrier`))
  const out = be.alloc(64 * 4)
  be.launch(mod.getFunction('skip'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }, { u32: 5 }]))
  assert.equal(Array.from(download(be, out, new Int32Array(64))), Array.from({ length: 64 }, (_, t) => t * 10))
  assert.throws(() => mod.inspect('nope'), /kernel nope is not in this PTX module/)
})

tl('KERNELPACK_EMULATOR_DEBUG prints every kernel\'s plan at load', () => {
  const lines: string[] = []
  const error = console.error
  process.env.KERNELPACK_EMULATOR_DEBUG = '1'
  console.error = (s: string) => { lines.push(s) }
  try {
    createEmulatorBackend().loadModule(ptxBytes(formable + divergent.slice(head.length)))
  } finally {
    console.error = error
    delete process.env.KERNELPACK_EMULATOR_DEBUG
  }
  assert.is(lines.length, 2)
  assert.match(lines[0]!, /^\[kernelpack emulator\] kernel tiles: thread loops/)
  assert.match(lines[1]!, /^\[kernelpack emulator\] kernel skip: continuation scheme/)
})

// a shfl.down whose lane offset is the same in every lane (a per-block loop variable) and a shfl.idx whose
// source lane differs per lane: only the per-lane inputs go through per-lane slots
const shuffles = `${head}
.visible .entry shflmix(.param .u64 out)
{
  .reg .b64 %rd<4>; .reg .b32 %r<8>; .reg .pred %p<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x; mov.u32 %r2, 1; mov.u32 %r3, %r1;
$l:
  shfl.sync.down.b32 %r4|%p1, %r3, %r2, 31, -1;
  add.s32 %r3, %r3, %r4;
  shl.b32 %r2, %r2, 1; setp.lt.u32 %p2, %r2, 32; @%p2 bra $l;
  and.b32 %r5, %r1, 3;
  shfl.sync.idx.b32 %r6|%p1, %r3, %r5, 31, -1;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r6;
  ret;
}`

tl('a collective input kept once per block needs no per-lane slot; per-lane inputs keep theirs; the result is right', () => {
  const lm = loadPtxModule(shuffles, new Heap(), {})
  // slots: the value of each shuffle and the idx source lane, not the down offset %r2
  assert.is(lm.source.match(/=new Int32Array\(32\);/g)?.length, 3)
  assert.match(createEmulatorBackend().loadModule(ptxBytes(shuffles)).inspect('shflmix'), /kept per block: .*%r2/)
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(shuffles))
  const out = be.alloc(64 * 4)
  be.launch(mod.getFunction('shflmix'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: out }]))
  const want = new Int32Array(64)
  for (let w = 0; w < 64; w += 32) {
    let v = Array.from({ length: 32 }, (_, l) => w + l)
    for (let off = 1; off < 32; off <<= 1) v = v.map((x, l) => x + (l + off <= 31 ? v[l + off]! : x))
    for (let l = 0; l < 32; l++) want[w + l] = v[l & 3]!
  }
  assert.equal(Array.from(download(be, out, new Int32Array(64))), Array.from(want))
})

tl.run()
