// Bad input gives one clear error at the import, in every bundler: a .cu that does not compile (the
// compiler's file:line:col), an extern "C" kernel whose name collides with a stub export, an unknown
// arch, a compiler that is not there.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { build, bundlers, copyFixture, unpluginCacheDir } from '../helpers/bundlers.js'

const root = copyFixture('errors', 'errors')

interface Case { name: string; entry: string; options: object; expect: Array<string | RegExp>; only?: string[] }

// bad.cu misses a `;` at the end of line 3; nvcc reports it at 4:5 (the next token).
const cases: Case[] = [
  { name: 'a .cu with a syntax error', entry: 'bad.js', options: {}, expect: ['bad.cu:4:5', 'expected a ";"'] },
  // The collision check runs before any bundler-specific code; two bundlers show it surfaces the same way.
  { name: 'a kernel name collision', entry: 'collide.js', options: {}, expect: ['collide.cu', 'extern "C" kernel "module" collides', 'rename the kernel'], only: ['rollup', 'webpack'] },
  { name: 'an unknown arch', entry: 'good.js', options: { arch: 'sm_999' }, expect: ['good.cu', 'sm_999'] },
  { name: 'a missing compiler', entry: 'good.js', options: { compiler: '/nonexistent/bin/nvcc' }, expect: ['good.cu', '/nonexistent/bin/nvcc', 'not found'] },
]

function errorCount(b: string, e: Error & { errors?: unknown[] }): number {
  if (Array.isArray(e.errors)) return e.errors.length
  const m = /Build failed with (\d+) error/.exec(e.message)
  return m ? Number(m[1]) : 1
}

for (const b of bundlers) {
  const test = suite(`build.${b} errors`)
  for (const c of cases) {
    if (c.only && !c.only.includes(b)) continue
    test(`${b}: ${c.name} fails the build with one error naming the .cu`, async () => {
      try {
        await build[b]({ root, entry: c.entry, outDir: join(root, '..', `out-${b}`), options: { cacheDir: unpluginCacheDir, dtsScan: [], ...c.options } })
        assert.unreachable('the build should fail')
      } catch (err) {
        const e = err as Error & { errors?: unknown[] }
        if (e.name === 'Assertion') throw e
        assert.is(errorCount(b, e), 1, `one error:\n${e.message}`)
        for (const x of c.expect) assert.match(e.message, x)
      }
    })
  }
  test.run()
}
