// create-kernelpack's questions (a terminal): the folder and the template are asked for when not given,
// an answer that is no template is asked again. (The tarball, the templates and their projects:
// test/packaging/create-kernelpack.test.ts.)
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { main, packageName, TEMPLATES } from 'create-kernelpack'
import { tempDir } from '../helpers/tools.js'

const ask = suite('create-kernelpack: asking')

function io(cwd: string, answers: string[]) {
  const out: string[] = []
  const err: string[] = []
  const questions: string[] = []
  return {
    out, err, questions,
    io: { cwd, interactive: true, stdout: (t: string) => { out.push(t) }, stderr: (t: string) => { err.push(t) }, ask: async (q: string) => { questions.push(q); return answers.shift() ?? '' } },
  }
}

ask('asks for the folder and the template; a wrong template is asked again; empty answers take the defaults', async () => {
  const cwd = tempDir('kp-create-ask-')
  const a = io(cwd, ['My App!', 'svelte', 'node'])
  assert.is(await main([], a.io), 0, a.err.join(''))
  assert.equal(a.questions, ['Project folder: (kernelpack-app) ', 'Template (vite, node, library): (vite) ', 'Template (vite, node, library): (vite) '])
  assert.equal(a.err, ['not a template: svelte\n'])
  assert.is(JSON.parse(readFileSync(join(cwd, 'My App!', 'package.json'), 'utf8')).name, 'my-app')
  const b = io(cwd, ['', ''])
  assert.is(await main([], b.io), 0, b.err.join(''))
  assert.ok(existsSync(join(cwd, 'kernelpack-app', 'vite.config.ts')), 'kernelpack-app from the vite template')
  assert.equal(TEMPLATES, ['vite', 'node', 'library'])
  assert.is(packageName('/x/@Scope Name__'), 'scope-name')
})

ask('--help lists the templates; an unknown option is an error', async () => {
  const a = io(tempDir('kp-create-ask-'), [])
  assert.is(await main(['--help'], a.io), 0)
  assert.match(a.out.join(''), /--template <vite\|node\|library>[\s\S]*library\s+a package built by Rollup/)
  assert.is(await main(['--templat', 'vite'], a.io), 2)
  assert.match(a.err.join(''), 'unknown option --templat')
})

ask.run()
