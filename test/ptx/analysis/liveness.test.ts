// analysis/liveness.ts: registers live across a barrier, through loops and guarded definitions.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { analyzeLiveness } from '@kernelpack/ptx'
import { at, kernel, reg } from '../helpers.js'

const lv = suite('analyzeLiveness')

lv('live across a barrier: what is read after it and not written by it', () => {
  const { fn, cfg } = kernel(`  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 7;
  mov.u32 %r3, 9;
  bar.sync 0;
  add.s32 %r4, %r1, %r2;
  mov.u32 %r3, 1;
  add.s32 %r5, %r4, %r3;
  ret;`)
  const l = analyzeLiveness(fn, cfg)
  const names = (ids: number[]) => ids.map((i) => fn.registers[i]!.name)
  // %r3 is overwritten before any read: dead across the barrier
  assert.equal(names(l.liveAcross(at(fn, 'bar.sync'))), ['%r1', '%r2'])
  assert.equal(names(l.liveIn(at(fn, 'add.s32 %r5'))), ['%r3', '%r4'])
  assert.equal(l.liveOut(at(fn, 'ret')), [])
})

lv('a loop keeps its induction variable and bound alive; a guarded write does not kill', () => {
  const { fn, cfg } = kernel(`  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  mov.u32 %r9, 5;
$loop:
  bar.sync 0;
  add.s32 %r2, %r2, 1;
  setp.lt.s32 %p1, %r2, %r1;
  @%p1 mov.u32 %r9, 6;
  @%p1 bra $loop;
  st.global.u32 [%rd1], %r9;
  ret;`)
  const l = analyzeLiveness(fn, cfg)
  const names = (ids: number[]) => ids.map((i) => fn.registers[i]!.name)
  assert.equal(names(l.liveAcross(at(fn, 'bar.sync'))), ['%r1', '%r2', '%r9', '%rd1'])
  assert.ok(l.liveIn(at(fn, '@%p1 mov')).includes(reg(fn, '%r9')), 'a guarded write leaves the old value live')
})

lv.run()
