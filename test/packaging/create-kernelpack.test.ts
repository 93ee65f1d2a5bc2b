// `npm create kernelpack` (issue 29): the create-kernelpack tarball outside the repository scaffolds each
// template (no prompt when a folder and a template are given), refuses a non-empty folder unless --force,
// says what to pass where it cannot ask; then each scaffolded project, with the packed kernelpack tarballs
// installed, builds (`kernelpack types`, then `tsc`: the type check) and passes its own test.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from '../helpers/tools.js'
import { installIn, output, userEnv } from './install.js'
import { packAll } from './pack.js'

tool('nvcc')
const packed = packAll()
const create = packed.find((p) => p.name === 'create-kernelpack')!
const bin = join(create.root, 'bin', 'create-kernelpack.mjs')
const ws = join(tempDir('kp-create-'), 'ws')
mkdirSync(ws, { recursive: true })
const cacheDir = tempDir('kp-create-cache-')

function createIn(cwd: string, args: string[]) {
  // stdin not a terminal: no prompt
  return spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
}

// (scaffolded here, before the install below, which uvu's tests run after)
const TEMPLATE_OF = [['web', 'vite'], ['app', 'node'], ['lib', 'library']] as const
const scaffolded = TEMPLATE_OF.map(([folder, template]) => createIn(ws, [folder, '--template', template]))

const cli = suite('create-kernelpack: the command')

cli('scaffolds each template into a new folder without asking, with the package name and kernelpack\'s version filled in', () => {
  for (const [i, [folder, template]] of TEMPLATE_OF.entries()) {
    const r = scaffolded[i]!
    assert.is(r.status, 0, output(r))
    assert.match(r.stdout, `Created ${folder} from the ${template} template`)
    const pkg = JSON.parse(readFileSync(join(ws, folder, 'package.json'), 'utf8')) as { name: string; scripts: Record<string, string>; dependencies: Record<string, string> }
    assert.is(pkg.name, folder)
    assert.is(pkg.dependencies['@kernelpack/runtime'], `^${create.pkg.version}`)
    assert.match(pkg.scripts.typecheck!, /^kernelpack types src && tsc --noEmit$/)
    assert.ok(existsSync(join(ws, folder, '.gitignore')), `${folder}: .gitignore (shipped as _gitignore)`)
    assert.ok(existsSync(join(ws, folder, 'src', 'saxpy.cu')))
    assert.match(readFileSync(join(ws, folder, 'README.md'), 'utf8'), new RegExp(`^# ${folder}\n`))
  }
})

cli('refuses a folder that is not empty unless --force; an unknown template or no template (no terminal) says what to pass', () => {
  const again = createIn(ws, ['app', '--template', 'node'])
  assert.is(again.status, 1)
  assert.match(again.stderr, /create-kernelpack: \S+app is not empty; choose a new folder, or pass --force/)
  const d = tempDir('kp-create-cli-')
  writeFileSync(join(d, 'keep.txt'), 'mine')
  const forced = createIn(d, ['.', '--template', 'node', '--force'])
  assert.is(forced.status, 0, output(forced))
  assert.is(readFileSync(join(d, 'keep.txt'), 'utf8'), 'mine')
  const unknown = createIn(d, ['x', '--template', 'svelte'])
  assert.is(unknown.status, 1)
  assert.match(unknown.stderr, 'unknown template "svelte"; the templates are vite, node, library')
  const none = createIn(d, ['y'])
  assert.is(none.status, 2)
  assert.match(none.stderr, /a template is needed \(no terminal to ask on\)[\s\S]*--template <vite\|node\|library>/)
  assert.not.ok(existsSync(join(d, 'y')))
})

cli.run()

const projects = suite('create-kernelpack: the scaffolded projects, installed from the packed tarballs')

// one pnpm workspace over the three, so one install serves them all; kernelpack's packages from their tarballs
writeFileSync(join(ws, 'pnpm-workspace.yaml'), 'packages:\n  - web\n  - app\n  - lib\n')
writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'kp-create-ws', private: true, pnpm: { overrides: Object.fromEntries(packed.map((p) => [p.name, `file:${p.tarball}`])) } }, null, 2))
const root = installIn(ws)
const env = { KERNELPACK_CACHE_DIR: cacheDir, KERNELPACK_LIBCUDA: join(ws, 'no-libcuda.so.1') }
const run = (folder: string, script: string) => {
  const r = root.pnpm(['--dir', folder, 'run', script], { env })
  assert.is(r.status, 0, `${folder}: pnpm run ${script}\n${output(r)}`)
  return r
}

projects('vite: builds (types, tsc, vite build) and its Vitest test passes', () => {
  run('web', 'build')
  assert.ok(readdirSync(join(ws, 'web', 'dist', 'assets')).some((f) => f.endsWith('.offload')), 'the offload binary is in the build')
  assert.ok(existsSync(join(ws, 'web', 'src', 'saxpy.cu.d.ts')))
  assert.match(run('web', 'test').stdout, /Tests\s+1 passed/)
})

projects('node: its node --test test passes through the Node hook, which writes the .d.ts its type check reads', () => {
  // (its `build`/`typecheck` is `kernelpack types src && tsc --noEmit`, as the vite template's build runs it)
  assert.match(run('app', 'test').stdout, /^# pass 1$/m)
  assert.ok(existsSync(join(ws, 'app', 'src', 'saxpy.cu.d.ts')))
})

projects('library: builds (types, tsc\'s declarations, rollup) and its test of dist/ passes', () => {
  run('lib', 'build')
  assert.ok(existsSync(join(ws, 'lib', 'dist', 'index.d.ts')))
  assert.ok(readdirSync(join(ws, 'lib', 'dist', 'assets')).some((f) => f.endsWith('.offload')))
  assert.match(run('lib', 'test').stdout, /^# pass 1$/m)
})

projects.run()
