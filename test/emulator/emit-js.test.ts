// emit-js.ts: the emulator's code generator reads the IR and writes each piece of code once. No regex or
// marker rewriting of generated JavaScript (issue 12: the old generator patched `/*BR:…*/`, `/*SAVEn*/`,
// `/*H<*/…/*>H*/`, `LOCALSZ` into its output), no PTX text in the output, the same bytes for the same input.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { decodeModule, parsePtx } from '@kernelpack/ptx'
import { ModuleEmitter } from '../../packages/emulator/src/js/emit-js.js'
import { inlineSuspendingCalls } from '../../packages/emulator/src/inline.js'
import { repoRoot } from '../helpers/tools.js'

const src = join(repoRoot, 'packages', 'emulator', 'src')

const emit = suite('emit-js')

emit('no .replace() over generated JavaScript anywhere in the emulator', () => {
  const files = readdirSync(src, { recursive: true }).map(String).filter((f) => f.endsWith('.ts'))
  assert.ok(files.includes(join('js', 'emit-js.ts')) && files.includes(join('js', 'emit-instruction.ts')), files.join(' '))
  // printf.ts formats device printf output at run time (a format string, not code)
  const offenders = files.filter((f) => f !== 'printf.ts' && /\.replace(All)?\(/.test(readFileSync(join(src, f), 'utf8')))
  assert.equal(offenders, [])
})

const ptx = `.version 8.0
.target sm_80
.address_size 64
.visible .entry $weird.name$_kernel(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 tile[128];
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra $L__done;
  shl.b32 %r3, %r2, 2;
  st.shared.u32 [%r3], %r2;
  bar.sync 0;
  ld.shared.u32 %r4, [%r3];
  sub.s32 %r5, %r4, -7;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r5;
$L__done:
  ret;
}`

function source(text: string, threadLoops = true): string {
  const ir = inlineSuspendingCalls(decodeModule(parsePtx(text)))
  return new ModuleEmitter(ir, { globals: new Map(), shared: new Map([['tile', 0]]), sharedStatic: 128 }, threadLoops).compile().source
}

emit('the same PTX gives the same source; no PTX name or text reaches it; negative literals stay operands', () => {
  const a = source(ptx)
  assert.is(source(ptx), a)
  assert.not.match(a, /weird|\$L__done|tile|%r/)
  assert.not.match(a, /--\d/)
  assert.ok(a.includes('r8=(r7-(-7))|0;'), 'sub.s32 %r5, %r4, -7')
  // thread loops: of the registers live across the barrier, the shared address %r3 (r6) differs per thread
  // and, affine in %tid.x (4·tid.x), is recomputed from tx rather than kept in a slot; %rd1 (r12, the
  // parameter) is one value per block; %r2 is %tid.x, recomputed
  assert.not.match(a, /S\.pc|S\.st/)
  assert.ok(a.includes('r6=((0*4)+4*tx)|0;') && !/V6\b/.test(a), 'recomputed from tx')
  assert.not.match(a, /V12\b/)
  assert.ok(a.includes('r5=tx;'), 'tid.x recomputed')
  // the threads with tid.x >= n jump past the barrier to the return: they end there
  assert.ok(a.includes('if(r1){{ST[t]=-1;continue TH;}}'), 'exit')
  // the continuation scheme saves exactly the registers live across the barrier (liveness.ts): %r2 (tid.x),
  // %r3 (the shared address) and %rd1 (the parameter); %r1 (n) is dead after the comparison
  const c = source(ptx, false)
  assert.ok(c.includes('S.pc=2;S.st=1;RF[5]=r5;RF[6]=r6;R[12]=r12;continue TH;'), 'save')
  assert.ok(c.includes('if(pc===2){pc=0;r5=RF[5];r6=RF[6];r12=R[12];}'), 'restore')
  // the guarded branch over the body is an `if` of structure.ts, written as a block left by `break`
  assert.ok(c.includes('B0:{\nif(pc===0){\nif(r1){break B0;}'), 'structure')
})

emit('checks off: no sanitizer code in the module; checks on: a hook at every shared/global access, barrier and exit', () => {
  const ir = inlineSuspendingCalls(decodeModule(parsePtx(ptx)))
  const layout = { globals: new Map(), shared: new Map([['tile', 0]]), sharedStatic: 128 }
  const off = new ModuleEmitter(ir, layout).compile().source
  assert.not.match(off, /CK|E\.ck|fault\(i,a,what,t/)
  assert.ok(off.includes('function fault(i,a,what){E.fault(i,a,what)}'))
  const on = new ModuleEmitter(ir, layout, true, true).compile().source
  assert.ok(on.includes('const CK=E.ck;\nfunction fault(i,a,what,t,rw,n){E.fault(i,a,what,t,rw,n)}'))
  assert.is(on.match(/CK\.st\(/g)?.length, 2, 'st.shared, st.global')
  assert.is(on.match(/CK\.ld\(/g)?.length, 1, 'ld.shared (the parameter loads are not hooked)')
  assert.is(on.match(/if\(CK\.p\)CK\.fin\(\);/g)?.length, 2, 'after each store')
  assert.match(on, /CK\.bar\(\d+,t,0,-1\);/)
  assert.match(on, /CK\.blk\(b\);/)
  assert.match(on, /CK\.ex\(\d+,t\);S\.st=3;/)
  assert.match(on, /fault\(\d+,a,'shared',t,'w',4\)/)
})

emit.run()
