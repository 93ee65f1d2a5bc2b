import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { parsePtx, PtxError, tokenizePtx, type PtxInstruction } from '@kernelpack/ptx'
import { fixturesDir } from '../helpers/tools.js'

const parse = suite('parsePtx')

parse('module directives, entries with params and performance directives, functions with return params', () => {
  const m = parsePtx(`//
// comment
.version 9.0
.target sm_90a, debug
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
.global .align 4 .b32 g[3] = {1, -2, 0x10};
.const .align 8 .f64 c = 0d3FF0000000000000;
.extern .shared .align 16 .b8 dyn[];
/* block
   comment */
.visible .entry k(
\t.param .u64 .ptr .align 1 k_param_0,
\t.param .align 8 .b8 k_param_1[24]
)
.maxntid 256, 1, 1
.minnctapersm 2
{
\t.reg .pred \t%p<3>;
\t.reg .b32 \t%r<10>;
\t.local .align 4 .b8 \t__local_depot0[16];
$L__BB0_1:
\t@!%p1 bra \t$L__BB0_1;
\tld.global.v4.f32 {%r1, %r2, _, %r3}, [%rd1+-8];
\tshfl.sync.down.b32 %r4|%p2, %r1, 16, 31, -1;
\tmov.f32 %r5, 0fBF800000;
\tret;
}
.weak .func (.param .align 16 .b8 out[32]) f(.param .b32 x) .noreturn;
`)
  assert.is(m.version, '9.0')
  assert.equal(m.target, ['sm_90a', 'debug'])
  assert.is(m.addressSize, 64)
  assert.equal(m.variables.map((v) => [v.name, v.space, v.size, v.extern]), [['g', 'global', 12, false], ['c', 'const', 8, false], ['dyn', 'shared', 0, true]])
  assert.equal(m.variables[0]!.init!.map((x) => x.value), [1n, -2n, 16n])
  assert.is(m.variables[1]!.init![0]!.fbits, 0x3ff0000000000000n)
  const k = m.functions.find((f) => f.name === 'k')!
  assert.is(k.kind, 'entry')
  assert.is(k.linkage, 'visible')
  // `.u64 .ptr .align 1`: the 1 is the pointee's alignment (PTX ISA, kernel parameter attributes); the
  // parameter itself is 8-aligned like any .u64
  assert.equal(k.params.map((p) => [p.name, p.type, p.size, p.align]), [['k_param_0', 'u64', 8, 8], ['k_param_1', 'b8', 24, 8]])
  assert.equal(k.directives, { maxntid: [256, 1, 1], minnctapersm: [2] })
  assert.is(k.regs.length, 13)
  assert.equal(k.vars.map((v) => [v.name, v.space, v.size]), [['__local_depot0', 'local', 16]])
  const body = k.body!
  assert.equal(body[0], { kind: 'label', name: '$L__BB0_1', line: 22 })
  const bra = body[1] as PtxInstruction
  assert.equal(bra.guard, { reg: '%p1', negate: true })
  assert.equal(bra.op, ['bra'])
  const ld = body[2] as PtxInstruction
  assert.equal(ld.op, ['ld', 'global', 'v4', 'f32'])
  assert.equal(ld.args[1], { k: 'addr', base: { k: 'id', name: '%rd1' }, offset: -8 })
  assert.is((ld.args[0] as { items: unknown[] }).items.length, 4)
  const shfl = body[3] as PtxInstruction
  assert.equal(shfl.args[0], { k: 'pair', a: { k: 'id', name: '%r4' }, b: { k: 'id', name: '%p2' } })
  assert.equal(shfl.args[4], { k: 'imm', value: -1n })
  assert.equal((body[4] as PtxInstruction).args[1], { k: 'fimm', bits: 0xbf800000n, width: 32 })
  const vp = m.functions.find((f) => f.name === 'vprintf')!
  assert.is(vp.body, undefined)
  assert.is(vp.returns.length, 1)
  const f = m.functions.find((x) => x.name === 'f')!
  assert.equal(f.returns.map((r) => [r.name, r.size, r.align]), [['out', 32, 16]])
})

parse('call sequences get their own scope: repeated param names stay distinct', () => {
  const m = parsePtx(`.version 9.0
.target sm_80
.address_size 64
.func (.param .b32 r) g(.param .b32 x) { ret; }
.visible .entry k() {
  .reg .b32 %r<3>;
  { .param .b32 param0; .param .b32 retval0;
    st.param.b32 [param0], %r1;
    call.uni (retval0), g, (param0);
    ld.param.b32 %r2, [retval0]; }
  { .param .b32 param0; .param .b32 retval0;
    st.param.b32 [param0+0], %r2;
    call.uni (retval0),
    g,
    (
    param0
    );
    ld.param.b32 %r1, [retval0+0]; }
  ret;
}`)
  const k = m.functions[1]!
  const names = k.vars.map((v) => v.name)
  assert.is(new Set(names).size, 4)
  const calls = k.body!.filter((s): s is PtxInstruction => s.kind === 'instr' && s.op[0] === 'call')
  assert.is(calls.length, 2)
  const argName = (c: PtxInstruction) => ((c.args[2] as { items: Array<{ name: string }> }).items[0]!.name)
  assert.not.equal(argName(calls[0]!), argName(calls[1]!))
})

parse('every PTX file of the fixtures parses, with and without bodies', () => {
  const list = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => d.isDirectory() ? list(join(dir, d.name)) : d.name.endsWith('.ptx') ? [join(dir, d.name)] : [])
  const files = list(fixturesDir)
  assert.ok(files.length >= 20)
  for (const f of files) {
    const text = readFileSync(f, 'utf8')
    const m = parsePtx(text)
    assert.ok(m.functions.length > 0, f)
    assert.equal(parsePtx(text, { bodies: false }).functions.map((x) => [x.name, x.params, x.directives]), m.functions.map((x) => [x.name, x.params, x.directives]), f)
  }
})

parse('errors name the line', () => {
  const bad = (text: string, line: number, re: RegExp) => {
    try { parsePtx(text); assert.unreachable('should throw') } catch (e) {
      assert.instance(e, PtxError)
      assert.is((e as PtxError).line, line)
      assert.match((e as Error).message, re)
    }
  }
  bad('.version 9.0\n.target sm_80\n.entry k() {\n  add.s32 %r1, %r2 %r3;\n}', 4, /unexpected `%r3`/)
  bad('.version 9.0\n\n.bogus 1\n', 3, /\.bogus/)
  bad('.version 9.0\n.entry k() {\n  ret;\n', 2, /unterminated body of k/)
  bad('.version 9.0\n.global .b32 x[zz];\n', 2, /integer literal/)
  bad('.version 9.0\n.entry k() {\n  .reg .q32 %r;\n}', 3, /unsupported register type `\.q32`/)
  bad('.version 9.0\n.visible .entry k(\n  .param .u32 .align x p\n) { ret; }', 3, /bad \.align value `x`/)
})

parse('.loc line information stays on the instructions after it; .file names the sources', () => {
  const m = parsePtx(`.version 9.0
.target sm_80
.address_size 64
.file 1 "/src/k.cu"
.file 2 "/usr/local/cuda/include/cuda_fp16.hpp", 1700000000, 1234
.visible .entry k() {
  .reg .b32 %r<3>;
  mov.u32 %r1, 1;
  .loc 1 12 5
  add.s32 %r2, %r1, 1;
  .loc 2 300 1, function_name $L__info_string0, inlined_at 1 13 7
  mul.lo.s32 %r2, %r2, 3;
  ret;
}`)
  assert.equal([...m.files], [[1, '/src/k.cu'], [2, '/usr/local/cuda/include/cuda_fp16.hpp']])
  const ins = m.functions[0]!.body!.filter((s): s is PtxInstruction => s.kind === 'instr')
  const inlined = { file: 2, line: 300, column: 1, inlinedAt: { file: 1, line: 13, column: 7 } }
  assert.equal(ins.map((i) => i.loc), [undefined, { file: 1, line: 12, column: 5 }, inlined, inlined])
})

parse(".loc: nvcc's inline chain through several headers resolves to the user's call site", () => {
  // nvcc names only the enclosing inlined call in each inlined_at; that call's own .loc names the next one out
  // (__pipeline_memcpy_async: cuda_pipeline_primitives.h → cuda_pipeline_helpers.h → helpers.h again)
  const m = parsePtx(`.version 8.8
.target sm_80
.address_size 64
.file 1 "/src/k.cu"
.file 5 "/cuda/include/cuda_pipeline_primitives.h"
.file 6 "/cuda/include/cuda_pipeline_helpers.h"
.visible .entry k() {
  .reg .b32 %r<3>;
  .loc 1 182 3
  mov.u32 %r1, 1;
  .loc 5 103 9, function_name $L__info_string4, inlined_at 1 182 3
  .loc 6 292 5, function_name $L__info_string5, inlined_at 5 103 9
  .loc 6 219 9, function_name $L__info_string6, inlined_at 6 292 5
  add.s32 %r2, %r1, 1;
  .loc 6 225 9, function_name $L__info_string7, inlined_at 1 183 3
  mul.lo.s32 %r2, %r2, 3;
  ret;
}`)
  const ins = m.functions[0]!.body!.filter((s): s is PtxInstruction => s.kind === 'instr')
  assert.equal(ins.map((i) => i.loc), [
    { file: 1, line: 182, column: 3 },
    { file: 6, line: 219, column: 9, inlinedAt: { file: 1, line: 182, column: 3 } },
    { file: 6, line: 225, column: 9, inlinedAt: { file: 1, line: 183, column: 3 } },
    { file: 6, line: 225, column: 9, inlinedAt: { file: 1, line: 183, column: 3 } },
  ])
})

parse(".loc: clang 22's inline chain comes from the line's comment, outermost call site last", () => {
  const m = parsePtx(`.version 8.8
.target sm_80
.address_size 64
.visible .entry k() {
  .reg .b32 %r<3>;
  .loc 2 53 27 // /usr/lib/llvm-22/lib/clang/22/include/__clang_cuda_builtin_vars.h:53:27 @[ k.cu:9:16 ]
  mov.u32 %r1, %tid.x;
  .loc 3 7 1 // b.h:7:1 @[ a.h:3:2 @[ k.cu:21:4 ] ]
  add.s32 %r2, %r1, 1;
  .loc 1 30 3 // k.cu:30:3
  ret;
}
.file 1 "/src/k.cu"
.file 2 "/usr/lib/llvm-22/lib/clang/22/include/__clang_cuda_builtin_vars.h"
.file 3 "/src/b.h"`)
  const ins = m.functions[0]!.body!.filter((s): s is PtxInstruction => s.kind === 'instr')
  assert.equal(ins.map((i) => i.loc), [
    { file: 2, line: 53, column: 27, inlinedAt: { file: 'k.cu', line: 9, column: 16 } },
    { file: 3, line: 7, column: 1, inlinedAt: { file: 'k.cu', line: 21, column: 4 } },
    { file: 1, line: 30, column: 3 },
  ])
})

parse('declarations only (bodies: false): headers, .ptr attributes, opaque handles, aliases', () => {
  const text = `.version 9.0
.target sm_80
.address_size 64
.global .texref tex;
.global .attribute(.managed) .align 4 .u32 m;
.visible .func f(.param .b32 x) { // a body with { nested } braces and "strings {"
  { .reg .b32 %r; }
  ret;
}
.alias g, f;
.visible .entry k(.param .u64 .ptr .shared .align 8 p, .param .u32 n) .maxntid 64 { ret; }`
  const m = parsePtx(text, { bodies: false })
  assert.equal(m.functions.map((f) => [f.name, f.defined, f.body]), [['f', true, undefined], ['k', true, undefined]])
  const p = m.functions[1]!.params[0]!
  assert.equal([p.pointer, p.pointerSpace, p.pointeeAlign, p.align], [true, 'shared', 8, 8])
  assert.equal(m.variables.map((v) => [v.name, v.opaque, v.attributes]), [['tex', 'texref', undefined], ['m', undefined, ['managed']]])
  assert.equal(m.aliases, [{ name: 'g', target: 'f', line: 10 }])
  assert.equal(m.functions[1]!.directives, { maxntid: [64] })
  // the full parse reads the same declarations
  const full = parsePtx(text)
  assert.equal(full.functions[1]!.params, m.functions[1]!.params)
  assert.is(full.functions[0]!.body!.length, 1)
})

parse('a label in braces is the block\'s own: inline PTX inlined twice (CUTLASS\'s barrier wait), a branch before its label', () => {
  const wait = (bar: string) => `{
 .reg .pred p;
 bra.uni DONE;
 LAB_WAIT:
 .loc 1 7 3
 DONE:
 mbarrier.try_wait.parity.shared.b64 p, [${bar}], 0;
 @!p bra LAB_WAIT;
}`
  const m = parsePtx(`.version 8.0
.target sm_80
.address_size 64
.visible .entry k() {
  .shared .align 8 .b64 a;
  .shared .align 8 .b64 b;
${wait('a')}
${wait('b')}
LAB_WAIT:
  ret;
}
`)
  const body = m.functions[0]!.body!
  const labels = body.filter((s) => s.kind === 'label').map((s) => s.name)
  assert.is(new Set(labels).size, labels.length, `each label once: ${labels.join(', ')}`)
  assert.ok(labels.includes('LAB_WAIT'), 'the function\'s own label keeps its name')
  const branches = body.filter((s): s is PtxInstruction => s.kind === 'instr' && s.opcode.startsWith('bra')).map((s) => (s.args[0] as { name: string }).name)
  // each copy's branches name that copy's labels (the forward one too)
  assert.equal(branches.length, 4)
  const copy = (k: number) => labels.slice(2 * k, 2 * k + 2)
  assert.equal([branches[0], branches[1]], [copy(0)[1], copy(0)[0]])
  assert.equal([branches[2], branches[3]], [copy(1)[1], copy(1)[0]])
  assert.not.equal(copy(0)[0], copy(1)[0])
})

parse.run()

// ---
const tokens = suite('tokenizePtx')

tokens('identifiers with :: and dots, numbers with exponents, strings, punctuation, lines', () => {
  const t = tokenizePtx('ld.shared::cta.L2::128B.f32 %f1, [%rd1+-8]; // c\n/* x\n */ mov.f32 %f2, 0fBF800000;\n.file 1 "a//b\\"c";\n1.5e-3 1e+4 0x1F')
  assert.equal(t.map((x) => [x.t, x.v, x.line]), [
    ['id', 'ld.shared::cta.L2::128B.f32', 1], ['id', '%f1', 1], ['p', ',', 1], ['p', '[', 1], ['id', '%rd1', 1], ['p', '+', 1], ['p', '-', 1],
    ['num', '8', 1], ['p', ']', 1], ['p', ';', 1], ['id', 'mov.f32', 3], ['id', '%f2', 3], ['p', ',', 3], ['num', '0fBF800000', 3], ['p', ';', 3],
    ['id', '.file', 4], ['num', '1', 4], ['str', 'a//b\\"c', 4], ['p', ';', 4], ['num', '1.5e-3', 5], ['num', '1e+4', 5], ['num', '0x1F', 5],
  ])
})

tokens.run()

