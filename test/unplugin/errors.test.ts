// Bad input gives one clear error, in every bundler: a .cu that does not compile (the compiler's
// file:line:col; esbuild's own `location` at the .cu line), an extern "C" kernel whose name collides with a
// stub export; and bad options before any module is transformed (issue 16): a malformed arch or a compiler
// path that does not exist when the plugin is created, an arch the compiler does not support at build start.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { build, bundlers, copyFixture, unpluginCacheDir } from '../helpers/bundlers.js'
import { repoRoot } from '../helpers/tools.js'

const root = copyFixture('errors', 'errors')

interface Case { name: string; entry: string; options: object; expect: Array<string | RegExp>; only?: string[] }

// bad.cu misses a `;` at the end of line 3; nvcc reports it at 4:5 (the next token).
const cases: Case[] = [
  { name: 'a .cu with a syntax error', entry: 'bad.js', options: {}, expect: ['expected a ";"'] },
  // The collision check runs before any bundler-specific code; two bundlers show it surfaces the same way.
  { name: 'a kernel name collision', entry: 'collide.js', options: {}, expect: ['collide.cu', 'extern "C" kernel "module" collides', 'rename the kernel'], only: ['rollup', 'webpack'] },
  { name: 'an arch the compiler does not support (at build start)', entry: 'good.js', options: { arch: 'sm_999' }, expect: ['sm_999', 'the compiler does not support sm_999'] },
]

function errorCount(b: string, e: Error & { errors?: unknown[] }): number {
  if (Array.isArray(e.errors)) return e.errors.length
  const m = /Build failed with (\d+) error/.exec(e.message)
  return m ? Number(m[1]) : 1
}

const plugin = (b: string) => import(join(repoRoot, 'packages', 'unplugin', 'dist', `${b}.js`)).then((m) => m.default as (o: object) => unknown)

for (const b of bundlers) {
  const test = suite(`build.${b} errors`)
  for (const c of cases) {
    if (c.only && !c.only.includes(b)) continue
    test(`${b}: ${c.name} fails the build with one error`, async () => {
      try {
        await build[b]({ root, entry: c.entry, outDir: join(root, '..', `out-${b}`), options: { cacheDir: unpluginCacheDir, dtsScan: [], ...c.options } })
        assert.unreachable('the build should fail')
      } catch (err) {
        const e = err as Error & { errors?: Array<{ location?: { file: string; line: number; column: number } }> }
        if (e.name === 'Assertion') throw e
        assert.is(errorCount(b, e), 1, `one error:\n${e.message}`)
        for (const x of c.expect) assert.match(e.message, x)
        if (c.entry === 'bad.js') {
          if (b === 'esbuild') {
            // esbuild's own location at the .cu line (its columns count from 0), not at the import
            assert.equal({ ...e.errors![0]!.location!, lineText: undefined, length: undefined, namespace: undefined, suggestion: undefined },
              { file: 'bad.cu', line: 4, column: 4, lineText: undefined, length: undefined, namespace: undefined, suggestion: undefined })
          } else assert.match(e.message, 'bad.cu:4:5')
        }
        if (c.entry === 'good.js') assert.not.ok(existsSync(join(root, 'good.cu.d.ts')), 'no module was transformed (the load hook writes good.cu.d.ts)')
      }
    })
  }

  test(`${b}: a malformed arch or a missing compiler path throws when the plugin is created`, async () => {
    const cuda = await plugin(b)
    assert.throws(() => cuda({ arch: 'sm_8x' }), (e: Error) => /option arch: bad GPU arch 'sm_8x'/.test(e.message))
    assert.throws(() => cuda({ compiler: '/nonexistent/bin/nvcc' }), (e: Error) => /option compiler: '\/nonexistent\/bin\/nvcc' not found; pass 'nvcc', 'clang' or the path of one/.test(e.message))
    assert.throws(() => cuda({ archs: '80' }), (e: Error) => /unknown option "archs"/.test(e.message))
    assert.throws(() => cuda({ fileName: '../out/[name].offload' }), (e: Error) => /option fileName must be a relative path/.test(e.message))
    assert.throws(() => cuda({ dts: 'd.ts' }), (e: Error) => /option dts must be true, false, 'cu.d.ts' or 'd.cu.ts'/.test(e.message))
  })
  test.run()
}
