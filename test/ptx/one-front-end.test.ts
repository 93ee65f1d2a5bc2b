// Issue 12, "Must show": the repository has ONE PTX tokenizer and ONE table of PTX type sizes, both in
// @kernelpack/ptx; nobody else reads PTX declarations with regular expressions. Scans every tracked
// TypeScript file, so it stays true.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../helpers/tools.js'

const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', '*.ts', '*.mjs'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter((f) => f && !f.startsWith('test/fixtures/'))
const text = new Map(files.map((f) => [f, readFileSync(join(repoRoot, f), 'utf8')]))
const self = 'test/ptx/one-front-end.test.ts'

/** Files (other than this test) whose text matches `re`. */
function filesMatching(re: RegExp): string[] {
  return files.filter((f) => f !== self && re.test(text.get(f)!))
}

const one = suite('one PTX front end')

one('one tokenizer: packages/ptx/src/tokenize.ts', () => {
  assert.ok(files.length > 100, `${files.length} files scanned`)
  assert.equal(filesMatching(/\b(function|class)\s+\w*(tokeni[sz]e|Lexer)\w*/i), ['packages/ptx/src/tokenize.ts'])
  // the identifier character class of PTX (`%r1`, `$L__BB0_1`, `.param`) is scanned in one place
  assert.equal(filesMatching(/\[A-Za-z0-9_\$%\.\]/), ['packages/ptx/src/tokenize.ts'])
})

one('one type-size table: packages/ptx/src/types.ts', () => {
  assert.equal(filesMatching(/\b(u32|f32|b32)\s*:\s*4\b/), ['packages/ptx/src/types.ts'])
  assert.equal(filesMatching(/\b(u64|f64|b64)\s*:\s*8\b/), ['packages/ptx/src/types.ts'])
})

one('no regular expression reads PTX declarations outside @kernelpack/ptx', () => {
  // `\.entry`, `\.param`…: an escaped dot before a declaration keyword is a regular expression over PTX text
  const decl = /\\\.(entry|param|reg|func|global|const|shared|local)\b/
  // (test files' own assertions on messages such as /st\.global\.f32/ are not PTX readers)
  assert.equal(filesMatching(decl).filter((f) => !f.startsWith('packages/ptx/') && !f.endsWith('.test.ts')), [])
})

one.run()
