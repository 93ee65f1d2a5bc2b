// Issue 17 items 1 and 6, the exact repros in a real Rollup build: a .cu in a folder whose name holds
// U+2028 followed by code, and kernels named `then` and `__proto__`. The built bundle must run without
// executing the path as code, `import()` must give the module, and `kernels` must map both names.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { build, unpluginCacheDir } from '../helpers/bundlers.js'
import { fixturesDir, repoRoot } from '../helpers/tools.js'

const evil = 'x\u2028globalThis.PWNED=1;console.log("PWNED");'
const root = join(repoRoot, 'test', '.out', 'unplugin', 'hostile', evil)
rmSync(join(repoRoot, 'test', '.out', 'unplugin', 'hostile'), { recursive: true, force: true })
mkdirSync(root, { recursive: true })
cpSync(join(fixturesDir, 'unplugin', 'hostile'), root, { recursive: true })

const runner = `
import { pathToFileURL } from 'node:url'
const m = await import(pathToFileURL(process.argv[1]).href)
process.stdout.write(JSON.stringify(await m.run()))
`

const t = suite('hostile names in a Rollup build')

t('a U+2028 in the path, kernels named then and __proto__', async () => {
  const out = await build.rollup({ root, entry: 'main.js', outDir: join(root, 'dist'), options: { cacheDir: unpluginCacheDir, dtsScan: [root] } })
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', runner, out.file], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
  assert.is(r.status, 0, r.stderr)
  assert.not.match(r.stdout + r.stderr, /PWNED"?\)?;?\s*$/m, 'the path did not run as code')
  const res = JSON.parse(r.stdout)
  assert.is(res.pwned, null)
  assert.equal(res.keys, ['__proto__', 'default', 'kernels', 'module', 'then_'])
  assert.equal(res.kernelKeys, ['__proto__', 'then'])
  assert.ok(res.protoIsNull, 'kernels has a null prototype')
  assert.equal(res.a, Array.from({ length: 32 }, (_, i) => i + 1))
  assert.equal(res.b, Array.from({ length: 32 }, (_, i) => 2 * i))
  // the declaration file beside the .cu parses, and says why `then` is exported as then_
  const dts = readFileSync(join(root, 'names.cu.d.ts'), 'utf8')
  const sf = ts.createSourceFile('names.cu.d.ts', dts, ts.ScriptTarget.ESNext, true, ts.ScriptKind.TS)
  assert.is((sf as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length, 0)
  assert.match(dts, /exported as `then_`, not `then`: an export named `then` would make this module a thenable/)
  assert.not.ok(dts.includes('\u2028'))
})

t.run()
