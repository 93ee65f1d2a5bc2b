// The private scratch directory of kernelpack's compiles: `<tmp>/kernelpack-<uid>` (under /tmp when $TMPDIR
// itself is not shell-safe, since nvcc passes paths through a shell). Each process works in its own
// `work/<pid>/<thread>` folder: compiler outputs, dependency files, and the compilers' own temporary files
// (nvcc's and clang's, through TMPDIR). It is removed when the thread exits; the folder of a process that
// was killed (kill -9 runs no exit handler) is removed by the next process that starts compiling
// (issue 17 item 5).
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { isMainThread, threadId } from 'node:worker_threads'
import { isProcessAlive } from './atomic-write.js'

/** Characters nvcc passes through its internal shell unharmed. */
export const shellSafe = /^[A-Za-z0-9_./+,=@%:-]+$/

let rootDir: string | undefined
/** Private scratch root: `<tmp>/kernelpack-<user>`, under /tmp when $TMPDIR itself is not shell-safe. */
export function scratchRoot(): string {
  if (!rootDir) {
    let user = 'user'
    try { user = String(userInfo().uid) } catch { /* no passwd entry */ }
    const base = shellSafe.test(tmpdir()) ? tmpdir() : '/tmp'
    rootDir = join(base, `kernelpack-${user}`)
    mkdirSync(rootDir, { recursive: true, mode: 0o700 })
    // A predictable name in a shared /tmp: use it only if it is our own real directory, else a fresh one.
    const st = lstatSync(rootDir)
    if (!st.isDirectory() || (typeof process.getuid === 'function' && st.uid !== process.getuid()) || (st.mode & 0o022) !== 0) {
      rootDir = mkdtempSync(join(base, 'kernelpack-'))
    }
  }
  return rootDir
}

/** Entries of `work/` left by processes that no longer run: `<pid>` folders, and the `<pid>-<n>.<ext>` files of
 *  kernelpack versions that wrote there directly. */
export function removeDeadWork(workRoot: string): number {
  let names: string[]
  try {
    names = readdirSync(workRoot)
  } catch {
    return 0
  }
  let removed = 0
  for (const name of names) {
    const m = /^(\d+)(?:-\d+\.(?:cubin|ptx|d))?$/.exec(name)
    if (!m || isProcessAlive(Number(m[1]))) continue
    try {
      if (name.includes('-')) unlinkSync(join(workRoot, name))
      else rmSync(join(workRoot, name), { recursive: true, force: true })
      removed++
    } catch { /* raced with another process */ }
  }
  return removed
}

let workDir: string | undefined
/**
 * This thread's work folder, `<scratch>/work/<pid>/<main|t<threadId>>`, with a `tmp/` the compilers get as
 * TMPDIR. Created on first use, after removing what dead processes left; removed when the thread exits.
 */
export function processWorkDir(): string {
  if (workDir) {
    // cheap, and survives someone emptying the scratch directory under a long-running process
    mkdirSync(join(workDir, 'tmp'), { recursive: true })
  } else {
    const workRoot = join(scratchRoot(), 'work')
    mkdirSync(workRoot, { recursive: true })
    removeDeadWork(workRoot)
    const pidDir = join(workRoot, String(process.pid))
    const dir = join(pidDir, isMainThread ? 'main' : `t${threadId}`)
    mkdirSync(join(dir, 'tmp'), { recursive: true })
    workDir = dir
    process.once('exit', () => {
      rmSync(dir, { recursive: true, force: true })
      try { rmdirSync(pidDir) } catch { /* another thread still works there */ }
    })
  }
  return workDir
}
