// Every example (but native-addon, the codegen one, and vitest, the testing one) has the shape the docs
// promise: a private @kernelpack-example/* package with dev/build/start scripts and workspace:* kernelpack
// deps, one .cu, a main.ts, and a three-line README whose Run line is what its test runs. vitest has
// test/test:check/test:node scripts instead, and its Run line is `pnpm test`.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../helpers/tools.js'
import { examplesDir, readmeCommand } from './run-example.js'

const examples = readdirSync(examplesDir).filter((n) => n !== 'native-addon' && n !== 'vitest' && statSync(join(examplesDir, n)).isDirectory()).sort()

function listCu(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.cu') && !f.includes('node_modules') && !f.startsWith('dist'))
}

const test = suite('examples layout')

test('the seven examples of the docs exist, each with a test file', () => {
  assert.equal(examples, ['ci-prebuild', 'esbuild-cli', 'rollup-node-lib', 'rspack-node', 'vite-browser', 'vite-ssr', 'webpack-node'])
  const tests = readdirSync(join(repoRoot, 'test', 'examples'))
  for (const e of examples) assert.ok(tests.includes(`${e === 'webpack-node' ? 'demo' : e}.test.ts`), `a test runs ${e}`)
})

test('package.json: private @kernelpack-example/<name>, dev/build/start scripts, workspace:* kernelpack deps', () => {
  for (const e of examples) {
    const pkg = JSON.parse(readFileSync(join(examplesDir, e, 'package.json'), 'utf8')) as {
      name: string; private: boolean; scripts: Record<string, string>; dependencies?: Record<string, string>; devDependencies?: Record<string, string>
    }
    assert.is(pkg.name, `@kernelpack-example/${e}`)
    assert.is(pkg.private, true, e)
    for (const s of ['dev', 'build', 'start']) assert.type(pkg.scripts[s], 'string', `${e}: script ${s}`)
    const deps = { ...pkg.dependencies, ...pkg.devDependencies }
    const ours = Object.entries(deps).filter(([n]) => n === 'kernelpack' || n === 'unplugin-cuda' || n.startsWith('@kernelpack/'))
    assert.ok(ours.length > 0, `${e} depends on a kernelpack package`)
    for (const [n, v] of ours) assert.is(v, 'workspace:*', `${e}: ${n}`)
  }
})

test('one .cu, a main.ts, and a three-line README (what, needs, run) whose command starts with pnpm build', () => {
  for (const e of examples) {
    const dir = join(examplesDir, e)
    assert.is(listCu(dir).length, 1, `${e}: one .cu file`)
    assert.ok(readdirSync(dir).includes('main.ts'), `${e}: main.ts`)
    const lines = readFileSync(join(dir, 'README.md'), 'utf8').trimEnd().split('\n')
    assert.is(lines.length, 3, `${e}: README has three lines`)
    assert.match(lines[0]!, new RegExp(`^# ${e}: `))
    assert.match(lines[1]!, /^Needs /)
    assert.match(readmeCommand(e), /^pnpm build && pnpm start/)
  }
})

test('vitest: the testing example — one .cu, test scripts for Vitest, the sanitizer and node --test, README run line pnpm test', () => {
  const dir = join(examplesDir, 'vitest')
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; private: boolean; scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> }
  assert.is(pkg.name, '@kernelpack-example/vitest')
  assert.is(pkg.private, true)
  assert.is(pkg.scripts.test, 'vitest run')
  assert.match(pkg.scripts['test:check']!, /^KERNELPACK_CHECK=1 vitest run$/)
  assert.match(pkg.scripts['test:node']!, /--import unplugin-cuda\/register --test /)
  assert.is(pkg.dependencies['@kernelpack/runtime'], 'workspace:*')
  assert.is(pkg.devDependencies['unplugin-cuda'], 'workspace:*')
  assert.is(listCu(dir).length, 1)
  const lines = readFileSync(join(dir, 'README.md'), 'utf8').trimEnd().split('\n')
  assert.is(lines.length, 3)
  assert.match(lines[0]!, /^# vitest: /)
  assert.match(lines[1]!, /^Needs /)
  assert.is(readmeCommand('vitest'), 'pnpm test')
})

test('the docs\' example apps page links every example, and the README links that page', () => {
  const page = readFileSync(join(repoRoot, 'docs', 'guide', 'example-apps.md'), 'utf8')
  for (const e of [...examples, 'native-addon', 'vitest']) assert.match(page, `](https://github.com/kernelpack/kernelpack/tree/main/examples/${e})`)
  assert.match(readFileSync(join(repoRoot, 'README.md'), 'utf8'), '](docs/guide/example-apps.md)')
})

test.run()
