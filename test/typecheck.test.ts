// The whole workspace type-checks (strict): packages, tests and benches, as `pnpm typecheck` runs it. In the
// suite so that a type error fails CI like any other test.
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from './helpers/tools.js'

test('tsc --noEmit -p tsconfig.json reports no error', () => {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(repoRoot, 'tsconfig.json')], { cwd: repoRoot, encoding: 'utf8' })
  assert.is(r.error, undefined)
  const errors = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l))
  assert.equal(errors, [], `type errors:\n${errors.join('\n')}`)
  assert.is(r.status, 0, r.stdout + r.stderr)
})

test.run()
