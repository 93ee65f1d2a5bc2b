// Issue 17 item 3: a launch's own memory (the block's shared window, the threads' local memory, the
// parameter frame and call stack) is not global memory. The repro: reads and writes 1 KB–65 KB past a
// 16-byte buffer, in a launch that has all three, neither faulted nor stayed inside user memory. Every such
// access must fault, naming the kernel, the PTX line, the address and the nearest allocation with its bounds;
// user memory around it stays untouched; shared and local memory stay reachable through their own spaces.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, EmulatorFault } from '../../packages/emulator/src/index.js'
import { download, marshal, ptxBytes, upload } from './helpers.js'

const head = '.version 8.0\n.target sm_80\n.address_size 64\n'

// `poke` reads or writes one word at p + off (global or generic), from a launch with 16 KiB of shared memory,
// 256 bytes of local memory per thread and a device-function call (a parameter frame and call stack)
const ptx = `${head}
.func (.param .b32 r) twice(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [x]; add.s32 %r2, %r1, %r1; st.param.b32 [r], %r2; ret;
}
.visible .entry poke(.param .u64 p, .param .u64 off, .param .u32 mode)
{
  .reg .b64 %rd<8>; .reg .b32 %r<12>; .reg .pred %p<4>;
  .shared .align 4 .b8 tile[16384];
  .local .align 4 .b8 depot[256];
  ld.param.u64 %rd1, [p]; ld.param.u64 %rd2, [off]; ld.param.u32 %r1, [mode];
  mov.u32 %r2, %tid.x; shl.b32 %r3, %r2, 2; mov.u32 %r4, tile; add.s32 %r5, %r4, %r3;
  st.shared.u32 [%r5], %r2;
  mov.u64 %rd5, depot; st.local.u32 [%rd5], %r2;
  { .param .b32 param0; .param .b32 retval0; st.param.b32 [param0], %r2; call.uni (retval0), twice, (param0); ld.param.b32 %r6, [retval0]; }
  bar.sync 0;
  setp.ne.u32 %p1, %r2, 0; @%p1 bra DONE;
  add.s64 %rd3, %rd1, %rd2;
  setp.eq.u32 %p2, %r1, 0; @%p2 ld.global.u32 %r7, [%rd3];
  setp.eq.u32 %p2, %r1, 1; @%p2 st.global.u32 [%rd3], %r6;
  setp.eq.u32 %p2, %r1, 2; @%p2 ld.u32 %r7, [%rd3];
  setp.eq.u32 %p2, %r1, 3; @%p2 st.u32 [%rd3], %r6;
DONE:
  ret;
}`

const lm = suite('launch-internal memory is not global memory')

lm('reads and writes 1 KB–65 KB past a 16-byte buffer fault, naming the kernel, PTX line, address and nearest allocation', () => {
  for (const threadLoops of [true, false]) {
    const be = createEmulatorBackend({ threadLoops })
    const mod = be.loadModule(ptxBytes(ptx))
    const before = upload(be, new Uint8Array(4096).fill(0x5a))
    const buf = upload(be, new Uint8Array(16).fill(7))
    const lines = ptx.split('\n')
    const lineOf = (text: string) => lines.findIndex((l) => l.includes(text)) + 1
    for (const mode of [0, 1, 2, 3]) {
      const what = ['ld.global', 'st.global', 'ld.u32', 'st.u32'][mode]!
      for (const kb of [1, 2, 4, 8, 16, 17, 24, 32, 33, 40, 48, 64, 65]) {
        const off = kb * 1024
        let err: unknown
        try {
          be.launch(mod.getFunction('poke'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: buf }, { u64: BigInt(off) }, { u32: mode }]))
        } catch (e) { err = e }
        const where = `${what} at +${kb} KiB (${threadLoops ? 'thread loops' : 'continuation scheme'})`
        assert.instance(err, EmulatorFault, `${where}: no fault`)
        const m = (err as Error).message
        assert.match(m, /kernel poke/, where)
        assert.match(m, new RegExp(`PTX line ${lineOf(`@%p2 ${what}`)}\\b`), where)
        assert.match(m, new RegExp(`address 0x${(buf + BigInt(off)).toString(16)}\\b`), where)
        assert.match(m, new RegExp(`nearest: allocation 0x${buf.toString(16)}–0x${(buf + 15n).toString(16)} \\(16 bytes\\); the address is at offset ${off} from its start`), where)
      }
    }
    // user memory around the buffer is untouched
    assert.ok(download(be, before, new Uint8Array(4096)).every((x) => x === 0x5a))
    assert.ok(download(be, buf, new Uint8Array(16)).every((x) => x === 7))
    // and in bounds the same kernel runs: shared, local and parameter memory work through their own spaces
    be.launch(mod.getFunction('poke'), { grid: [2, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: buf }, { u64: 8n }, { u32: 1 }]))
    assert.equal(Array.from(download(be, buf, new Uint32Array(4))), [0x07070707, 0x07070707, 0, 0x07070707])
    be.dispose()
  }
})

lm.run()
