// Snapshot files for generated text: compares with test/fixtures/<dir>/<name>, or writes it when
// KP_UPDATE_SNAPSHOTS=1 (review the diff before committing; a missing snapshot is a failure otherwise).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import * as assert from 'uvu/assert'
import { fixturesDir } from './tools.js'

export function matchSnapshot(actual: string, path: string): void {
  const file = join(fixturesDir, path)
  if (process.env.KP_UPDATE_SNAPSHOTS === '1') {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, actual)
    return
  }
  if (!existsSync(file)) assert.unreachable(`snapshot ${path} is missing; run with KP_UPDATE_SNAPSHOTS=1 and review it`)
  assert.fixture(actual, readFileSync(file, 'utf8'))
}
