import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { main, type CliIO } from '../../packages/cli/src/main.js'

function io() {
  const out = { stdout: '', stderr: '' }
  const cli: CliIO = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), cwd: process.cwd() }
  return { out, cli }
}

const dispatch = suite('main')

dispatch('no command prints usage and exits 2', async () => {
  const { out, cli } = io()
  assert.is(await main([], cli), 2)
  assert.match(out.stdout, /Usage: kernelpack <command>/)
})

dispatch('help exits 0 and lists every command', async () => {
  const { out, cli } = io()
  assert.is(await main(['help'], cli), 0)
  for (const c of ['pack', 'unpack', 'inspect', 'build', 'hostrefs', 'wrapper']) assert.match(out.stdout, new RegExp(`\\n  ${c} `))
})

dispatch('unknown command exits 2 and names it', async () => {
  const { out, cli } = io()
  assert.is(await main(['frobnicate'], cli), 2)
  assert.match(out.stderr, /unknown command 'frobnicate'/)
})

dispatch.run()

const entry = suite('package entry')

entry('`kernelpack` exports main() that runs a command in-process', async () => {
  const mod = await import('kernelpack')
  const out = { stdout: '', stderr: '' }
  const code = await mod.main(['--version'], { stdout: (t: string) => (out.stdout += t), stderr: (t: string) => (out.stderr += t), cwd: process.cwd() })
  assert.is(code, 0)
  assert.match(out.stdout, /^kernelpack \d+\.\d+\.\d+/)
})

entry.run()
