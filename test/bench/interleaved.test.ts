// Benchmarks that compare A with B measure them interleaved (issue 17 item 13): the toolchain bench ran
// kernelpack and the reference one after the other, so load drift on a shared machine moved the ratio from
// 1.07 to 2.47. Here a steadily rising machine load is simulated: run one after the other, two equal sides
// differ; interleaved A B B A, their medians agree.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { interleaved, median } from '../../bench/lib.js'
import { repoRoot } from '../helpers/tools.js'

/** The same work on either side; every run costs a little more than the one before (the load grows). */
function driftingMachine() {
  let load = 1
  return () => {
    const cost = 10 * load
    load += 0.25
    return cost
  }
}

const order = suite('interleaved')

order('runs the sides A B, B A, A B, … and returns each side\'s measurements in run order', async () => {
  const log: string[] = []
  const r = await interleaved(3, ['a', 'b', 'c'] as const, (side, round) => { log.push(`${side}${round}`); return log.length })
  assert.equal(log, ['a0', 'b0', 'c0', 'c1', 'b1', 'a1', 'a2', 'b2', 'c2'])
  assert.equal(r, { a: [1, 6, 7], b: [2, 5, 8], c: [3, 4, 9] })
})

order('under a rising load two equal sides measure equal when interleaved, not when run one after the other', async () => {
  const sequential = driftingMachine()
  const a = [sequential(), sequential()]
  const b = [sequential(), sequential()]
  assert.ok(median(b) / median(a) > 1.3, 'one after the other, the drift shows up as a difference')
  const machine = driftingMachine()
  const r = await interleaved(2, ['a', 'b'] as const, () => machine())
  assert.is(median(r.b) / median(r.a), 1)
})

order('every bench comparing with a reference measures interleaved', () => {
  const dir = join(repoRoot, 'bench')
  const files = readdirSync(dir)
  for (const f of files.filter((n) => n.endsWith('.bench.ts'))) {
    // a bench may measure in a page of its own (webgpu.bench.ts → webgpu-page.ts)
    const page = f.replace('.bench.ts', '-page.ts')
    let text = readFileSync(join(dir, f), 'utf8') + (files.includes(page) ? readFileSync(join(dir, page), 'utf8') : '')
    // or in another bench file whose measuring function it runs (emulator-exact-fma.bench.ts → emulator.bench.ts)
    for (const m of text.matchAll(/from '\.\/([\w-]+\.bench)\.js'/g)) text += readFileSync(join(dir, `${m[1]}.ts`), 'utf8')
    // bench/lib.ts's interleaved(), or the order flipped every other round where a loop is written out
    assert.ok(/\binterleaved\(/.test(text) || /r % 2 === 0 \?/.test(text) || /if \(r % 2 === 0\)/.test(text), `${f} interleaves its sides`)
  }
})

order.run()
