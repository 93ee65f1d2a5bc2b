// structure.ts: branches as a tree of blocks, loops and ifs, each branch resolved; fallback when ranges cross.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { lowerIndirectBranches, relayoutFunction, structureFunction, type StructNode } from '@kernelpack/ptx'
import { kernel } from './helpers.js'

/** The tree in a compact notation: instruction indices, `if#id(…)`, `block#id(…)`, `loop#id(…)`, added jumps as
 *  `jump→break#id` / `jump→continue#id`. */
function show(nodes: StructNode[]): string {
  return nodes.map((x) => (x.kind === 'instr' ? String(x.index) : x.kind === 'jump' ? `jump→${x.target.kind}#${x.target.node}` : `${x.kind}#${x.id}(${show(x.body)})`)).join(' ')
}

const st = suite('structureFunction')

st('a guarded branch over code is an if; a backward branch a loop; branches resolved', () => {
  const { fn } = kernel(`  mov.u32 %r1, %tid.x;
  setp.ge.s32 %p1, %r1, 10;
  @%p1 bra $end;
  mov.u32 %r2, 0;
$loop:
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p2, %r2, %r1;
  @%p2 bra $loop;
$end:
  ret;`)
  const s = structureFunction(fn)
  if (s.kind !== 'structured') throw new Error(s.reason)
  assert.is(show(s.body), '0 1 if#0(2 3 loop#1(4 5 6)) 7')
  assert.equal(s.regions.map((r) => [r.kind, r.label, r.start, r.end, r.branch]), [['if', '$end', 2, 7, 2], ['loop', '$loop', 4, 7, undefined]])
  assert.equal([...s.branches], [[2, { kind: 'break', node: 0 }], [6, { kind: 'continue', node: 1 }]])
})

st('a break out of a loop widens its block around the loop; two exits to one label stay a block', () => {
  const { fn } = kernel(`  mov.u32 %r1, 0;
$loop:
  add.s32 %r1, %r1, 1;
  setp.eq.s32 %p1, %r1, 5;
  @%p1 bra $out;
  setp.lt.s32 %p2, %r1, 10;
  @%p2 bra $loop;
  @%p2 bra $out;
  add.s32 %r1, %r1, 2;
$out:
  ret;`)
  const s = structureFunction(fn)
  if (s.kind !== 'structured') throw new Error(s.reason)
  // the block for $out starts where the loop does, so `break` leaves both
  assert.is(show(s.body), '0 block#0(loop#1(1 2 3 4 5) 6 7) 8')
  assert.equal([...s.branches], [[3, { kind: 'break', node: 0 }], [5, { kind: 'continue', node: 1 }], [6, { kind: 'break', node: 0 }]])
})

/** A rotated loop (clang's layout): the header after the latch, entered by a jump into the middle. */
const ROTATED = `  mov.u32 %r1, 0;
  bra.uni $head;
$latch:
  bar.sync 0;
  add.s32 %r1, %r1, 1;
$head:
  setp.lt.s32 %p1, %r1, 10;
  @%p1 bra $body;
  bra.uni $out;
$body:
  add.s32 %r2, %r2, %r1;
  bra.uni $latch;
$out:
  ret;`

st('a rotated loop (entered by a jump into its middle, as clang lays it out) is laid out again, header first', () => {
  const { fn } = kernel(ROTATED)
  assert.is(structureFunction(fn).kind, 'fallback', 'the written order does not nest')
  const s = structureFunction(fn, { relayout: true })
  if (s.kind !== 'structured') throw new Error(s.reason)
  // blocks in loop order: entry, head (its fall-through to the exit now a jump), body, latch (its fall-through
  // back to the head a jump), exit, return
  assert.equal(s.order, [{ index: 0 }, { index: 1 }, { index: 4 }, { index: 5 }, { jump: '$kp.block3' }, { index: 7 }, { index: 8 }, { index: 2 }, { index: 3 }, { jump: '$head' }, { index: 6 }, { index: 9 }])
  // the exit jump leaves a block that ends where the loop ends, so it falls off the loop
  assert.is(show(s.body), '0 block#0(1) loop#1(4 block#2(if#3(5 jump→break#2) 7 block#4(8) 2 3 jump→continue#1)) block#5(6) 9')
  assert.equal([...s.branches], [[1, { kind: 'break', node: 0 }], [5, { kind: 'break', node: 3 }], [8, { kind: 'break', node: 4 }], [6, { kind: 'break', node: 5 }]])
})

st('relayoutFunction: the rotated loop as plain IR, in loop order, with the jumps as bra.uni; nesting code is left alone', () => {
  const { fn } = kernel(ROTATED)
  const g = relayoutFunction(fn)
  if (!g) throw new Error('expected a re-laid-out function')
  // the order of structureFunction's re-layout, each added jump a bra.uni to its label, renumbered
  assert.equal(g.instructions.map((x) => x.text), [0, 1, 4, 5, 'bra.uni $kp.block3', 7, 8, 2, 3, 'bra.uni $head', 6, 9].map((x) => (typeof x === 'number' ? fn.instructions[x]!.text : x)))
  assert.equal(g.instructions.map((x) => x.index), g.instructions.map((_, i) => i))
  // labels moved with their blocks (the block without one named), lines kept
  assert.equal([...g.labels].sort(), [['$kp.block0', 0], ['$head', 2], ['$body', 5], ['$latch', 7], ['$kp.block3', 10], ['$out', 11], ['$kp.end', 12]].sort())
  assert.is(g.instructions[4]!.line, fn.instructions[5]!.line)
  const s = structureFunction(g)
  assert.is(s.kind, 'structured', 'as written, the new function nests')
  assert.is(fn.instructions.length, 10, 'the function it came from is unchanged')
  // written order that nests: nothing to do
  const { fn: plain } = kernel(`  mov.u32 %r1, %tid.x;
  setp.ge.s32 %p1, %r1, 10;
  @%p1 bra $end;
  add.s32 %r1, %r1, 2;
$end:
  ret;`)
  assert.is(relayoutFunction(plain), undefined)
})

st('crossing ranges (a jump into a loop) fall back, saying why', () => {
  const { fn } = kernel(`  mov.u32 %r1, %tid.x;
  setp.eq.s32 %p1, %r1, 0;
  @%p1 bra $inside;
$loop:
  add.s32 %r1, %r1, 1;
$inside:
  setp.lt.s32 %p2, %r1, 10;
  @%p2 bra $loop;
  ret;`)
  const s = structureFunction(fn)
  assert.is(s.kind, 'fallback')
  assert.match((s as { reason: string }).reason, /cross|nest/)
})

st('lowerIndirectBranches: brx.idx as a compare chain (then trap, exit), labels moved, the result nests', () => {
  const { fn } = kernel(`  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, 3;
  $L_brx_0: .branchtargets $C0, $C1, $C2;
  brx.idx %r2, $L_brx_0;
$C0:
  mov.u32 %r3, 100;
  bra.uni $END;
$C2:
  mov.u32 %r3, 300;
  bra.uni $END;
$C1:
  mov.u32 %r3, 200;
$END:
  ret;`)
  assert.is(structureFunction(fn).kind, 'fallback', 'as written: an indirect branch')
  const g = lowerIndirectBranches(fn)
  const p = g.registers.length - 1
  assert.is(g.registers[p]!.type, 'pred')
  const chain = g.instructions.slice(2, 10)
  assert.equal(chain.map((x) => [x.op, x.guard?.reg, x.operands[x.op === 'bra' ? 0 : 2]]), [
    ['setp', undefined, { kind: 'imm', imm: { kind: 'int', value: 0n } }], ['bra', p, { kind: 'label', name: '$C0' }],
    ['setp', undefined, { kind: 'imm', imm: { kind: 'int', value: 1n } }], ['bra', p, { kind: 'label', name: '$C1' }],
    ['setp', undefined, { kind: 'imm', imm: { kind: 'int', value: 2n } }], ['bra', p, { kind: 'label', name: '$C2' }],
    ['trap', undefined, undefined], ['exit', undefined, undefined],
  ])
  // every compare reads the index register, every instruction keeps the brx's line
  assert.ok(chain.filter((x) => x.op === 'setp').every((x) => x.operands[1]!.kind === 'reg' && x.operands[0]!.kind === 'reg' && (x.operands[0] as { id: number }).id === p))
  assert.ok(chain.every((x) => x.line === fn.instructions[2]!.line))
  // labels follow their instructions; indices renumbered
  for (const [l, i] of fn.labels) assert.is(g.instructions[g.labels.get(l)!]!.text, fn.instructions[i]?.text, l)
  assert.equal(g.instructions.map((x) => x.index), g.instructions.map((_, i) => i))
  assert.is(structureFunction(g, { relayout: true }).kind, 'structured')
  // nothing to lower: the same function
  const { fn: plain } = kernel('  mov.u32 %r1, %tid.x;\n  ret;')
  assert.is(lowerIndirectBranches(plain), plain)
})

st.run()
