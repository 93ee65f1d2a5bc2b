// A user's clone has only the repository (issue 16 item 5): no test, bench or script may read a file outside
// it, such as the `../shared/reference` corpus the fixtures were copied from (their READMEs say so; comments
// may name it). Checks every string literal of the code under test/, bench/ and scripts/.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { repoRoot } from '../helpers/tools.js'

const CODE = /\.(ts|mts|mjs|js|cjs|sh)$/

function listCode(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) listCode(p, out)
    else if (CODE.test(name)) out.push(p)
  }
  return out
}

/** String literals of a source file (quotes and template literals), comments dropped. */
function stringLiterals(text: string): string[] {
  const out: string[] = []
  const re = /\/\/[^\n]*|\/\*[\s\S]*?\*\/|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g
  for (const m of text.matchAll(re)) if (!m[0].startsWith('/')) out.push(m[0])
  return out
}

/** Why a piece of code reaches outside the repository, or undefined. */
export function outsideReference(text: string): string | undefined {
  const lits = stringLiterals(text)
  for (const s of lits) {
    if (/(^|[^.\w])\.\.\/(\.\.\/)*shared\b/.test(s) || /\/work\/(shared|main|wt)\b/.test(s)) return `path literal ${s}`
    if (/KERNELPACK_SHARED/.test(s)) return `variable ${s}`
  }
  // join(root, '..', 'shared') and the like: a '..' segment followed by 'shared'
  if (/['"]\.\.['"]\s*,\s*['"]shared['"]/.test(text)) return "path segments '..', 'shared'"
  return undefined
}

const test = suite('self-contained repository')

test('the check finds the patterns it looks for, and ignores comments', () => {
  assert.ok(outsideReference("const d = join(repoRoot, '..', 'shared', 'reference')"))
  assert.ok(outsideReference("readFileSync('../shared/reference/nvcc/x.ptx')"))
  assert.ok(outsideReference('const p = `${root}/../shared/reference`'))
  assert.ok(outsideReference("process.env.KERNELPACK_SHARED ?? 'x'".replace('process.env.', "env['") + "']"))
  assert.is(outsideReference('// copied from ../shared/reference/cu\nconst x = 1'), undefined)
  assert.is(outsideReference("const a = 'shared'; const b = sharedBytes"), undefined)
})

test('nothing under test/, bench/ or scripts/ reads outside the repository', () => {
  // this file holds the patterns as test data
  const files = ['test', 'bench', 'scripts'].flatMap((d) => listCode(join(repoRoot, d))).filter((f) => f !== import.meta.filename)
  assert.ok(files.length > 50, `found ${files.length} files`)
  const bad = files.map((f) => [relative(repoRoot, f), outsideReference(readFileSync(f, 'utf8'))] as const).filter(([, why]) => why)
  assert.equal(bad, [], `these read outside the repository (copy the file into test/fixtures/ with a README line on its origin): ${bad.map(([f, w]) => `${f}: ${w}`).join('; ')}`)
})

test.run()
