// kill -9 leftovers (issue 17 item 5), with real processes: a `kernelpack build` SIGKILLed while nvcc's
// sub-tools run leaves no compiler process of that build alive, and its work files (ours and nvcc's own
// temporaries) are gone after the next run; a `kernelpack unpack` SIGKILLed mid-write leaves its temp file,
// which the next run writing into that directory removes (and a live process's temp file is kept).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, watch, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { writeOffloadBinary } from '@kernelpack/offload'
import { fixturesDir, repoRoot, tempDir, tool } from '../helpers/tools.js'

const bin = join(repoRoot, 'packages', 'cli', 'bin', 'kernelpack.mjs')
tool('nvcc')

interface Proc { pid: number; comm: string }

/** Live (non-zombie) processes whose environment carries `KP_KILL_MARK=<mark>`: everything a run started. */
function marked(mark: string): Proc[] {
  const needle = `KP_KILL_MARK=${mark}\0`
  const out: Proc[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue
      if (!readFileSync(`/proc/${name}/environ`, 'latin1').includes(needle)) continue
      out.push({ pid: Number(name), comm: readFileSync(`/proc/${name}/comm`, 'utf8').trim() })
    } catch { /* gone, or not ours */ }
  }
  return out
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function run(args: string[], cwd: string, env: Record<string, string>): { child: ChildProcess; done: Promise<{ code: number | null; signal: string | null; stderr: string }> } {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  child.stdout!.resume()
  const done = new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })))
  return { child, done }
}

// ---
const build = suite('kernelpack build killed with SIGKILL mid-compile')

build('no compiler process of the build survives it, and the next run removes its work files', async () => {
  const work = tempDir('kp-killed-build-')
  // TMPDIR of its own: the scratch directory (<TMPDIR>/kernelpack-<uid>) is this test's alone
  const tmp = tempDir('kp-killed-tmp-')
  copyFileSync(join(fixturesDir, 'toolchain', 'slow-compile.cu'), join(work, 'slow.cu'))
  writeFileSync(join(work, 'quick.cu'), 'extern "C" __global__ void quick(int *p) { p[0] = 1; }\n')
  const mark = `kill-${process.pid}-${Date.now()}`
  const env = { TMPDIR: tmp, KP_KILL_MARK: mark }
  const { child, done } = run(['build', 'slow.cu', '--arch', 'compute_80', '-o', 'out', '--no-cache'], work, env)
  const seen = new Map<number, string>()
  try {
    // wait until nvcc's own children run (gcc/cudafe++/cicc): the processes that outlived a killed build
    const t0 = Date.now()
    for (;;) {
      for (const p of marked(mark)) seen.set(p.pid, p.comm)
      if ([...seen.values()].some((c) => /^(cicc|cudafe\+\+|gcc|cc1plus|ptxas)$/.test(c))) break
      if (Date.now() - t0 > 120_000) assert.unreachable(`nvcc's sub-tools never started (seen: ${[...seen.values()].join(', ') || 'nothing'})`)
      if (child.exitCode !== null) assert.unreachable(`the build ended before it could be killed: ${(await done).stderr}`)
      await sleep(10)
    }
    for (const p of marked(mark)) seen.set(p.pid, p.comm)
    assert.ok([...seen.values()].includes('nvcc'), `nvcc runs under the build (seen: ${[...seen.values()].join(', ')})`)
    child.kill('SIGKILL')
    assert.is((await done).signal, 'SIGKILL')
    let left = marked(mark)
    for (let i = 0; i < 100 && left.length; i++) {
      await sleep(50)
      left = marked(mark)
    }
    assert.equal(left, [], `compiler processes of the killed build still run (seen while it ran: ${[...seen.values()].join(', ')})`)
  } finally {
    for (const p of marked(mark)) try { process.kill(p.pid, 'SIGKILL') } catch { /* gone */ }
  }

  // What the killed build could not remove: its work folder, which also held nvcc's own temporaries.
  const workRoot = join(tmp, `kernelpack-${userInfo().uid}`, 'work')
  assert.ok(existsSync(join(workRoot, String(child.pid))), 'the killed build worked in its own folder')
  assert.equal(readdirSync(tmp).filter((n) => n.startsWith('tmpxft')), [], 'nvcc kept its temporary files in that folder, not in TMPDIR')
  const next = run(['build', 'quick.cu', '--arch', 'compute_80', '-o', 'out', '--no-cache'], work, env)
  const r = await next.done
  assert.is(r.code, 0, r.stderr)
  assert.equal(readdirSync(workRoot), [], 'the next run removed the dead build\'s folder, and its own at exit')
  assert.ok(existsSync(join(work, 'out', 'quick.offload')))
  assert.not.ok(existsSync(join(work, 'out', 'slow.offload')))
})

build.run()

// ---
const unpack = suite('kernelpack unpack killed with SIGKILL mid-write')

unpack('its temp file is removed by the next run writing there; a live process\'s temp file is kept', async () => {
  const work = tempDir('kp-killed-unpack-')
  // 96 MiB copied in chunks: the temp file lives long enough to be seen and the process killed
  const image = new Uint8Array(96 << 20)
  for (let i = 0; i < image.length; i += 4096) image[i] = i & 0xff
  const input = join(work, 'big.offload')
  writeFileSync(input, writeOffloadBinary([{ imageKind: 2, offloadKind: 2, flags: 0, strings: new Map([['triple', 'nvptx64-nvidia-cuda'], ['arch', 'sm_90']]), image }]))
  const outDir = join(work, 'out')
  mkdirSync(outDir)
  const live = `.other.bin.kernelpack-${process.pid}-x.tmp`
  writeFileSync(join(outDir, live), 'a live writer')
  let leftover: string | undefined
  let killedPid = 0
  for (let attempt = 0; attempt < 5 && !leftover; attempt++) {
    const { child, done } = run(['unpack', input, `--image=file=${join(outDir, 'out.bin')},arch=sm_90`], work, {})
    const watcher = watch(outDir, (_e, name) => {
      if (name && name.startsWith(`.out.bin.kernelpack-${child.pid}-`)) child.kill('SIGKILL')
    })
    const r = await done
    watcher.close()
    if (r.signal !== 'SIGKILL') continue // it finished first: try again
    killedPid = child.pid!
    leftover = readdirSync(outDir).find((n) => n.startsWith(`.out.bin.kernelpack-${killedPid}-`) && n.endsWith('.tmp'))
  }
  assert.ok(leftover, 'a killed unpack left its temp file (the state the next run must clean up)')
  const again = run(['unpack', input, `--image=file=${join(outDir, 'second.bin')},arch=sm_90`], work, {})
  const r = await again.done
  assert.is(r.code, 0, r.stderr)
  const names = readdirSync(outDir).sort()
  assert.not.ok(names.includes(leftover!), `the dead process's ${leftover} was removed`)
  assert.ok(names.includes(live), 'the temp file of a live process is kept')
  assert.ok(names.includes('second.bin'))
  assert.equal(names.filter((n) => n.endsWith('.tmp')), [live])
})

unpack.run()
