// Compiler processes die with the process that started them, even when it is killed with SIGKILL (issue 17
// item 5: a killed `kernelpack build` left nvcc, cicc and ptxas running). nvcc runs its sub-tools (gcc,
// cicc, ptxas) as children of its own, so killing nvcc alone is not enough: each compile runs in a process
// group of its own, led by a small POSIX sh that kills the whole group (`kill -KILL 0`) when
//   - our process dies: on Linux the kernel tells it at once (prctl PR_SET_PDEATHSIG, set by util-linux's
//     `setpriv --pdeathsig TERM`), elsewhere it notices within a second (`kill -0 <parent pid>` polling);
//   - it is asked to stop (SIGTERM/SIGINT/SIGHUP from execa's timeout or cancel, or a user).
// The compiler's exit status, stdout and stderr pass through unchanged; the user's arguments are never
// parsed by the shell ("$@").
import { existsSync } from 'node:fs'

// $1: our pid (the parent the script must have; if it is already gone, start nothing), then the command.
const GUARD_PDEATHSIG = [
  "trap 'kill -KILL 0' TERM INT HUP",
  '[ "$PPID" = "$1" ] || exit 125',
  'shift',
  '"$@" &',
  'wait $!',
].join('\n')

const GUARD_POLL = [
  "trap 'kill -KILL 0' TERM INT HUP",
  'parent=$1',
  'shift',
  '"$@" &',
  'child=$!',
  '(while kill -0 "$parent" 2>/dev/null; do sleep 1; done; kill -KILL 0) </dev/null >/dev/null 2>&1 &',
  'watcher=$!',
  'wait $child',
  'status=$?',
  'kill $watcher 2>/dev/null',
  'exit $status',
].join('\n')

let setpriv: string | undefined | null = null
function findSetpriv(): string | undefined {
  if (setpriv === null) setpriv = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'].find((p) => existsSync(p))
  return setpriv
}

export interface GuardedCommand {
  file: string
  args: string[]
  /** Spawn in a new process group (and session): the guard kills that group, never ours. */
  detached: boolean
  /** How the compile is tied to our life: `pdeathsig` (Linux, setpriv), `poll`, or `none` (Windows). */
  guard: 'pdeathsig' | 'poll' | 'none'
}

/** The command line that runs `file args…` tied to this process's life (see the file comment). A tool that
 *  starts no processes of its own (`leaf`: ptxas) needs no group to kill: on Linux setpriv executes it
 *  directly with the death signal set, one fork and no shell. */
export function guardCommand(file: string, args: string[], options: { leaf?: boolean } = {}): GuardedCommand {
  if (process.platform === 'win32' || !existsSync('/bin/sh')) return { file, args, detached: false, guard: 'none' }
  const sp = process.platform === 'linux' ? findSetpriv() : undefined
  if (sp && options.leaf) return { file: sp, args: ['--pdeathsig', 'KILL', '--', file, ...args], detached: false, guard: 'pdeathsig' }
  if (sp) {
    return { file: sp, args: ['--pdeathsig', 'TERM', '--', '/bin/sh', '-c', GUARD_PDEATHSIG, 'kernelpack-compile', String(process.pid), file, ...args], detached: true, guard: 'pdeathsig' }
  }
  return { file: '/bin/sh', args: ['-c', GUARD_POLL, 'kernelpack-compile', String(process.pid), file, ...args], detached: true, guard: 'poll' }
}
