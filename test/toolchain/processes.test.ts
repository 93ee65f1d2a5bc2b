// The shell that starts a build's processes (packages/toolchain/src/processes.ts): every argument reaches the
// command as written (quotes, newlines, $, globs), the environment is ours with the call's additions and
// follows changes to ours, exit statuses, signals and missing commands read as Node's spawn reports them, many
// commands at once each get their own output, the compilers' CPU time is counted in ours once the shell ends,
// a shell killed from outside fails its commands and the next command starts another, and an idle shell does
// not keep a process alive.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { closeProcessShell, spawnAll, spawnCounter } from '../../packages/toolchain/src/processes.js'
import { tempDir } from '../helpers/tools.js'

const s = suite('processes: the shell that starts a build\'s processes')

/** The words a command received, as printf '%s\0' wrote them back. */
async function words(args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const r = await spawnAll('/usr/bin/printf', ['%s\\0', ...args], { env })
  assert.is(r.exitCode, 0, r.text)
  return r.text.split('\0').slice(0, -1)
}

s('every argument arrives as written, none parsed by a shell', async () => {
  const hard = ["it's", 'two words', 'a\nnew line', '$HOME', '`id`', '$(id)', '*', '"', '\\', "''", '-n', '', ' ', '\t', 'é\u2028', "'\n'"]
  assert.equal(await words(hard), hard)
})

s('the environment: ours, the call\'s additions, and ours again after it changes', async () => {
  const r = await spawnAll('/bin/sh', ['-c', 'printf "%s|%s|%s" "$KP_PROC_A" "$KP_PROC_B" "$LC_ALL"'], { env: { KP_PROC_B: "b 'quoted'\nline", LC_ALL: 'C' } })
  assert.is(r.text, "|b 'quoted'\nline|C")
  const before = spawnCounter.servers
  process.env.KP_PROC_A = 'set later'
  try {
    const again = await spawnAll('/bin/sh', ['-c', 'printf %s "$KP_PROC_A"'], { env: {} })
    assert.is(again.text, 'set later')
    assert.is(spawnCounter.servers, before + 1, 'a changed environment starts a new shell')
  } finally {
    delete process.env.KP_PROC_A
  }
  const gone = await spawnAll('/bin/sh', ['-c', 'printf %s "${KP_PROC_A-unset}"'], { env: {} })
  assert.is(gone.text, 'unset')
})

s('the folder it runs in', async () => {
  const dir = realpathSync(tempDir('kp-proc-cwd-'))
  const r = await spawnAll('/bin/pwd', [], { cwd: dir, env: {} })
  assert.is(r.text.trim(), dir)
})

s('exit status, death by a signal, a missing command, stdout apart', async () => {
  const three = await spawnAll('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3'], { env: {} })
  assert.equal([three.exitCode, three.signal, three.errorCode, three.text], [3, null, undefined, 'out\nerr\n'])
  const killed = await spawnAll('/bin/sh', ['-c', 'kill -KILL $$'], { env: {} })
  assert.equal([killed.exitCode, killed.signal], [undefined, 'SIGKILL'])
  const missing = await spawnAll('kp-no-such-command', ['x'], { env: {} })
  assert.equal([missing.exitCode, missing.errorCode, missing.text], [undefined, 'ENOENT', ''])
  const apart = await spawnAll('/bin/sh', ['-c', 'echo one; echo two >&2; echo three'], { env: {}, stdout: true })
  assert.is(apart.stdout, 'one\nthree\n')
  assert.is(apart.text, 'one\nthree\ntwo\n')
})

s('sixty commands at once, each with its own output and status', async () => {
  const rs = await Promise.all(Array.from({ length: 60 }, (_, i) => spawnAll('/bin/sh', ['-c', `sleep 0.0${i % 10}; printf %s ${i}; exit ${i % 7}`], { env: {} })))
  assert.equal(rs.map((r) => r.text), rs.map((_, i) => String(i)))
  assert.equal(rs.map((r) => r.exitCode), rs.map((_, i) => i % 7))
})

/** CPU seconds of this process's waited-for children (proc(5): cutime + cstime). */
function childrenCpu(): number {
  const f = readFileSync('/proc/self/stat', 'utf8')
  const x = f.slice(f.lastIndexOf(')') + 2).split(' ')
  return (Number(x[13]) + Number(x[14])) / 100
}

s('once the shell has ended, the CPU time of what it ran is counted in ours; ending it waits for its commands', async () => {
  await closeProcessShell()
  const c0 = childrenCpu()
  // about 0.3 s of CPU in a grandchild (the shell's child's child), still running when the shell is asked to end
  const running = spawnAll('/bin/sh', ['-c', 'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done; printf finished'], { env: {} })
  await new Promise((r) => setTimeout(r, 50))
  await closeProcessShell()
  const c1 = childrenCpu()
  const r = await running
  assert.equal([r.exitCode, r.text], [0, 'finished'])
  assert.ok(c1 - c0 >= 0.1, `children's CPU ${c0} → ${c1}`)
})

s('a shell killed from outside: its command fails, named; the next command starts a new one', async () => {
  const running = spawnAll('/bin/sh', ['-c', 'sleep 30'], { env: {} })
  const before = spawnCounter.servers
  // the shell is our child whose command line names it
  await new Promise((r) => setTimeout(r, 200))
  const ps = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).stdout
  const line = ps.split('\n').find((l) => l.includes('kernelpack-processes'))
  assert.ok(line, `the shell among our children:\n${ps}`)
  process.kill(-Number(line.trim().split(/\s+/)[0]), 'SIGKILL') // its whole group: the shell and the sleep
  const r = await running
  assert.is(r.errorCode, 'ESRCH')
  assert.match(r.text, /the shell that starts the build's processes ended/)
  const next = await spawnAll('/bin/sh', ['-c', 'printf ok'], { env: {} })
  assert.is(next.text, 'ok')
  assert.is(spawnCounter.servers, before + 1)
})

for (const guard of ['pdeathsig', 'poll'] as const) {
  s(`an idle shell keeps no process alive; a process that ends takes its commands with it (guard: ${guard})`, async () => {
    const dir = tempDir('kp-proc-exit-')
    const script = join(dir, 'child.mts')
    const src = join(import.meta.dirname, '..', '..', 'packages', 'toolchain', 'src', 'processes.ts')
    writeFileSync(script, [
      `import { closeProcessShell, spawnAll } from ${JSON.stringify(src)}`,
      `const r = await spawnAll('/bin/sh', ['-c', 'printf done'], { env: {} })`,
      'console.log(r.text)',
      // ending the shell returns (the poll guard's watcher is not waited for)
      `if (process.argv[2] === 'close') { await closeProcessShell(); console.log((await spawnAll('/bin/sh', ['-c', 'printf again'], { env: {} })).text) }`,
      // a command left running when the process exits: the shell's group is killed with it
      `if (process.argv[2] === 'leave') { void spawnAll('/bin/sh', ['-c', 'echo $$ > ${join(dir, 'pid')}; exec sleep 60'], { env: {} }); await new Promise((r) => setTimeout(r, 300)); process.exit(0) }`,
    ].join('\n'))
    const env = { ...process.env, KERNELPACK_PROCESS_GUARD: guard }
    const t0 = Date.now()
    const r = spawnSync(process.execPath, ['--import', 'tsx', script, 'close'], { encoding: 'utf8', timeout: 20_000, env })
    assert.is(r.status, 0, r.stderr)
    assert.is(r.stdout.trim(), 'done\nagain')
    assert.ok(Date.now() - t0 < 15_000, 'ended without waiting for the shell')
    const left = spawnSync(process.execPath, ['--import', 'tsx', script, 'leave'], { encoding: 'utf8', timeout: 20_000, env })
    assert.is(left.status, 0, left.stderr)
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'))
    let alive = true
    // the poll guard notices within a second
    for (let i = 0; i < 60 && alive; i++) {
      try { process.kill(pid, 0); await new Promise((r) => setTimeout(r, 50)) } catch { alive = false }
    }
    assert.not.ok(alive, 'the command left running died with the process')
  })
}

s.after(async () => { await closeProcessShell() })
s.run()
