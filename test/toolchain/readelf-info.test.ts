// How readelfInfo (the DWARF dump that by-value struct parameters are read from, param-types.ts) reports a
// readelf that is missing, fails, or is killed: each with its own message (a killed readelf once read as
// "not found (install binutils)"). The readelf run is a script of this test's, found first on PATH.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readelfInfo } from '../../packages/toolchain/src/compile.js'
import { tempDir } from '../helpers/tools.js'

const s = suite('readelfInfo: missing, failing and killed readelf')
const savedPath = process.env.PATH
const dirs: string[] = []

/** Runs readelfInfo with PATH holding only `bin` (and, with `system`, the system's folders after it). */
async function withReadelf(script: string | undefined, system = true): Promise<Error | string> {
  const dir = tempDir('kp-readelf-info-')
  dirs.push(dir)
  const bin = join(dir, 'bin')
  mkdirSync(bin, { recursive: true })
  if (script !== undefined) {
    writeFileSync(join(bin, 'readelf'), `#!/bin/sh\n${script}\n`)
    chmodSync(join(bin, 'readelf'), 0o755)
  }
  process.env.PATH = system ? `${bin}:/usr/bin:/bin` : bin
  try {
    return await readelfInfo('/nonexistent/object.o')
  } catch (e) {
    return e as Error
  } finally {
    process.env.PATH = savedPath
  }
}

s('a readelf that prints the dump: its output', async () => {
  const r = await withReadelf('echo "Contents of the .debug_info section:"')
  assert.is(r, 'Contents of the .debug_info section:\n')
})

s('no readelf on PATH: names binutils', async () => {
  const r = await withReadelf(undefined, false)
  assert.instance(r, Error)
  assert.match((r as Error).message, /^cannot run readelf: not found \(install binutils/)
})

s('a readelf that fails: its exit status and last lines', async () => {
  const r = await withReadelf('echo "readelf: Error: bad object" >&2; exit 1')
  assert.instance(r, Error)
  assert.match((r as Error).message, /^readelf --debug-dump=info failed \(exit 1\): readelf: Error: bad object$/)
})

s('a readelf killed by a signal: the signal, not "not found"', async () => {
  const r = await withReadelf('kill -KILL $$')
  assert.instance(r, Error)
  const m = (r as Error).message
  assert.match(m, /^readelf --debug-dump=info \/nonexistent\/object\.o: killed by SIGKILL$/)
  assert.not.match(m, /not found|binutils/)
})

s.after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

s.run()
