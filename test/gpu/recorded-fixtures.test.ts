// The emulator against real hardware without a GPU (issue 18): every fixture `pnpm test:gpu` recorded on a GPU
// (test/fixtures/gpu-recorded) is run on the emulator with the same seeded inputs and compared (integers
// bit-exact, floats by value; a difference only where the PTX allows it and both sides pass the case's
// reference). Cases without a recording are named in a loud `!!!` notice, with the command that makes them;
// that is the one thing this file does not fail on (the issue's own rule). The comparison logic is proven on
// synthetic fixtures in test/gpu/test-gpu.test.ts.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { checkRecordedFixtures, describeMissing, recordedDir } from './recorded.js'
import { corpusCases } from './corpus.js'

const check = await checkRecordedFixtures(recordedDir)
const total = corpusCases().filter((c) => !c.emulatorOnly).length

const Recorded = suite('GPU-recorded fixtures (test/fixtures/gpu-recorded) against the emulator')

for (const r of check.results) {
  Recorded(`${r.arch} ${r.case}`, () => {
    if (r.status === 'fail') assert.unreachable(`${r.file}: ${r.detail}`)
    if (r.status === 'stale' || r.status === 'not-compared') console.log(`!!! ${r.arch} ${r.case} not compared: ${r.detail}`)
  })
}

Recorded('every corpus case has a recording, or the missing ones are announced with the command that records them', () => {
  const recorded = new Set(check.results.map((r) => r.case))
  for (const c of corpusCases().filter((x) => !x.emulatorOnly)) {
    assert.is(recorded.has(c.key) !== check.missing.includes(c.key), true, `${c.key}: recorded and missing are exclusive and cover every case`)
  }
  if (check.missing.length) {
    const notice = describeMissing(check, total)
    assert.match(notice, /pnpm test:gpu/)
    console.log(notice)
  }
})

Recorded.run()
