// How kernelpack starts the processes of a build (compilers, ptxas, gcc and readelf for the struct types).
//
// Through one small shell per thread, not through Node's spawn (issue 27). Node's spawn forks this whole
// process (libuv uses fork() on Linux), and the kernel copies its page tables: measured here, 1.0 ms of this
// process's CPU and 1.8 ms with the event loop stopped for a bare Node, 2.8 ms and 5.9 ms with 200 MB more in
// use (a bundler's process holds that and more), 12 ms and 24 ms with 800 MB. A command line written to a
// `/bin/sh` that forks it instead costs this process 0.18 ms whatever its size (dash is a 1 MB process).
//
// The shell is also what ties the build's processes to ours (issue 17 item 5: a killed `kernelpack build`
// left nvcc, cicc and ptxas running): it leads a process group of its own, every command runs in that group
// (nvcc's own children too), and the shell kills the whole group (`kill -KILL 0`) when
//   - our process (on Linux: the thread that started it) dies: the kernel tells it at once (prctl
//     PR_SET_PDEATHSIG, set by util-linux's `setpriv --pdeathsig TERM`); without setpriv it notices within a
//     second (`kill -0 <our pid>` polling);
//   - it is asked to stop (SIGTERM/SIGINT/SIGHUP).
// It ends when our end of its input closes (our exit, or closeProcessShell), after the commands it runs. It reads
// one command a line: an id, the files that receive its stdout and stderr (one file for both, interleaved as they
// came, unless asked apart), its folder, the call's NAME=value additions to the environment (exported in the
// command's subshell), and its argument vector, each single-quoted (a newline inside one
// as `'"$nl"'`), so that nothing the user wrote is ever parsed by the shell: `eval "set -- <line>"` only
// rebuilds the words. When the command ends, its shell writes `<id> <status>` back. Its environment is ours as
// it was when the shell started; when ours has changed since, the next command starts a new shell.
//
// Where there is no /bin/sh (Windows), Node's spawn runs the command, tied to nothing.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, unlinkSync } from 'node:fs'
import { constants } from 'node:os'
import { join } from 'node:path'
import { processWorkDir } from './scratch.js'

/** How a process ended and what it printed. */
export interface SpawnedOutput {
  exitCode: number | undefined
  signal: string | null
  /** stdout and stderr as they came, interleaved; where `stdout` was asked for, stdout then stderr. */
  text: string
  stdout?: string
  /** Why it did not start (ENOENT: not there). */
  errorCode?: string
}

export interface SpawnOptions {
  cwd?: string
  /** Set on top of this process's environment. */
  env: Record<string, string>
  /** Keep stdout apart (`SpawnedOutput.stdout`). */
  stdout?: boolean
}

/** Why a process that printed nothing failed: it did not start, a signal ended it, or its exit status. */
export function howItEnded(cmd: string, r: SpawnedOutput): string {
  return r.errorCode ? `cannot start ${cmd}: ${r.errorCode}` : r.signal ? `killed by ${r.signal}` : `exit status ${String(r.exitCode)}`
}

/** Shells started (a changed environment or a shell that died starts another): for tests that count them. */
export const spawnCounter = { servers: 0 }

let shellThere: boolean | undefined
/** Runs a process with no input and gathers what it printed (see the file comment for how it starts). */
export function spawnAll(file: string, args: string[], o: SpawnOptions): Promise<SpawnedOutput> {
  shellThere ??= process.platform !== 'win32' && existsSync('/bin/sh')
  const server = shellThere ? currentServer() : undefined
  return server ? server.run(file, args, o) : spawnDirect(file, args, o)
}

/** Node's spawn, stdout and stderr gathered as they came (execa's `all`, without its layers: about 3 ms of
 *  this process's CPU a process, measured here). */
function spawnDirect(file: string, args: string[], o: SpawnOptions): Promise<SpawnedOutput> {
  return new Promise((done) => {
    const chunks: Buffer[] = []
    const out: Buffer[] = []
    const err: Buffer[] = []
    let errorCode: string | undefined
    const child = spawn(file, args, { cwd: o.cwd, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true })
    child.stdout.on('data', (b: Buffer) => (o.stdout ? out : chunks).push(b))
    child.stderr.on('data', (b: Buffer) => (o.stdout ? err : chunks).push(b))
    child.on('error', (e: NodeJS.ErrnoException) => { errorCode ??= e.code ?? 'ERROR' })
    child.on('close', (code, signal) => done({
      exitCode: code ?? undefined, signal, errorCode,
      text: Buffer.concat(o.stdout ? [...out, ...err] : chunks).toString('utf8'),
      ...(o.stdout ? { stdout: Buffer.concat(out).toString('utf8') } : {}),
    }))
  })
}

/** The shell's program. $1: our pid, $2: `pdeathsig` or `poll`. */
const SERVER = [
  "trap 'kill -KILL 0' TERM INT HUP",
  'parent=$1 shell=$$',
  'if [ "$2" = pdeathsig ]; then',
  // started by setpriv, which executes us: our parent is the process whose death we are told of, or, if it
  // already died, init (and nothing will tell us)
  '  [ "$PPID" = "$parent" ] || exit 125',
  'else',
  // a watcher in our group that is not our child (the final wait is not for it), gone when we are
  '  ( (while kill -0 "$parent"; do kill -0 "$shell" || exit 0; sleep 1; done; kill -KILL 0) </dev/null >/dev/null 2>&1 & )',
  'fi',
  "nl='",
  "'",
  'while IFS= read -r line; do',
  '  eval "set -- $line"',
  '  id=$1 out=$2 err=$3 dir=$4 n=$5',
  '  shift 5',
  '  {',
  '    (',
  '      while [ "$n" -gt 0 ]; do',
  '        export "$1"',
  '        shift',
  '        n=$((n - 1))',
  '      done',
  '      cd "$dir" || exit 126',
  '      if [ -n "$err" ]; then exec "$@" >"$out" 2>"$err" </dev/null; else exec "$@" >"$out" 2>&1 </dev/null; fi',
  '    )',
  '    echo "$id $?"',
  '  } &',
  'done',
  // the commands' processes reaped here, so that their CPU time is counted in ours (closeProcessShell)
  'wait',
].join('\n')

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/
const quote = (v: string) => `'${v.replaceAll("'", `'\\''`).replaceAll('\n', `'"$nl"'`)}'`
/** Exit statuses 129–192 from a shell: the command died of signal status − 128 (a command that exits with
 *  such a status itself reads the same). */
const signalNames = new Map(Object.entries(constants.signals).map(([name, n]) => [n as number, name]))

function envKey(env: NodeJS.ProcessEnv): string {
  return JSON.stringify(Object.entries(env))
}

let active: Server | undefined
function currentServer(): Server | undefined {
  if (active && (!active.alive || active.envKey !== envKey(process.env))) {
    active.retire()
    active = undefined
  }
  active ??= new Server()
  return active.alive ? active : undefined
}

/** Ends the shell once the commands it runs have ended, and waits for it: then the CPU time of every process
 *  the build started is in this process's children's (/proc/self/stat's cutime and cstime), as it is for the
 *  processes Node's spawn starts. The next command starts a new shell. */
export async function closeProcessShell(): Promise<void> {
  const server = active
  active = undefined
  await server?.close()
}

let setprivPath: string | undefined | null = null
function findSetpriv(): string | undefined {
  if (setprivPath === null) setprivPath = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'].find((p) => existsSync(p))
  return setprivPath
}

class Server {
  readonly envKey: string
  alive = true
  /** close() waits for its end: the process must not exit meanwhile. */
  private closing = false
  private readonly child: ChildProcess
  private readonly pending = new Map<number, (status: number | undefined) => void>()
  private next = 0
  private buffered = ''
  private readonly base: NodeJS.ProcessEnv

  constructor() {
    this.base = { ...process.env }
    this.envKey = envKey(process.env)
    spawnCounter.servers++
    // KERNELPACK_PROCESS_GUARD=poll: the guard of systems without setpriv, on Linux (for its tests)
    const sp = process.platform === 'linux' && process.env.KERNELPACK_PROCESS_GUARD !== 'poll' ? findSetpriv() : undefined
    const argv = ['/bin/sh', '-c', SERVER, 'kernelpack-processes', String(process.pid), sp ? 'pdeathsig' : 'poll']
    // a process group of its own (detached), which its `kill -KILL 0` ends, never ours
    this.child = spawn(sp ?? argv[0]!, sp ? ['--pdeathsig', 'TERM', '--', ...argv] : argv.slice(1), { detached: true, stdio: ['pipe', 'pipe', 'ignore'], env: this.base })
    this.child.on('error', () => this.end())
    this.child.on('close', () => this.end())
    this.child.stdin!.on('error', () => this.end())
    this.child.stdout!.setEncoding('utf8')
    this.child.stdout!.on('data', (text: string) => {
      this.buffered += text
      for (let i; (i = this.buffered.indexOf('\n')) >= 0;) {
        const [id, status] = this.buffered.slice(0, i).split(' ')
        this.buffered = this.buffered.slice(i + 1)
        const done = this.pending.get(Number(id))
        this.pending.delete(Number(id))
        done?.(Number(status))
      }
      if (this.pending.size === 0 && !this.closing) this.idle()
    })
    this.idle()
  }

  /** While no command runs, the shell keeps nothing of ours waiting (the process may exit). */
  private idle(): void {
    this.child.unref()
    ;(this.child.stdout as unknown as { unref?: () => void }).unref?.()
    ;(this.child.stdin as unknown as { unref?: () => void }).unref?.()
  }

  private busy(): void {
    this.child.ref()
    ;(this.child.stdout as unknown as { ref?: () => void }).ref?.()
    ;(this.child.stdin as unknown as { ref?: () => void }).ref?.()
  }

  /** The shell is gone: the commands it was running report no status. */
  private end(): void {
    this.alive = false
    for (const done of this.pending.values()) done(undefined)
    this.pending.clear()
  }

  /** No more commands: the shell ends when those it runs have. */
  retire(): void {
    if (this.alive) this.child.stdin!.end()
  }

  close(): Promise<void> {
    if (!this.alive) return Promise.resolve()
    const closed = new Promise<void>((resolve) => this.child.once('close', () => resolve()))
    this.closing = true
    this.busy()
    this.retire()
    return closed
  }

  run(file: string, args: string[], o: SpawnOptions): Promise<SpawnedOutput> {
    const id = ++this.next
    const stem = join(processWorkDir(), `spawn-${id}-${this.child.pid ?? 0}`)
    const outFile = `${stem}.out`
    const errFile = o.stdout ? `${stem}.err` : ''
    const env: string[] = []
    for (const [k, v] of Object.entries(o.env)) {
      if (!identifier.test(k)) throw new Error(`internal: environment variable name ${JSON.stringify(k)}`)
      if (this.base[k] !== v) env.push(`${k}=${v}`)
    }
    const line = [String(id), outFile, errFile, o.cwd ?? process.cwd(), String(env.length), ...env, file, ...args].map(quote).join(' ')
    return new Promise((resolve) => {
      this.pending.set(id, (status) => resolve(this.collect(file, status, outFile, errFile)))
      this.busy()
      this.child.stdin!.write(`${line}\n`)
    })
  }

  private collect(file: string, status: number | undefined, outFile: string, errFile: string): SpawnedOutput {
    const read = (path: string) => {
      if (!path) return ''
      try {
        const text = readFileSync(path, 'utf8')
        unlinkSync(path)
        return text
      } catch {
        return ''
      }
    }
    const out = read(outFile)
    const err = read(errFile)
    const text = out + err
    if (status === undefined) {
      return { exitCode: undefined, signal: null, text: text || 'the shell that starts the build\'s processes ended', errorCode: 'ESRCH' }
    }
    // the shell's words when the command is not there (`exec: <file>: not found`, status 127)
    if (status === 127 && text.trimEnd().endsWith(`exec: ${file}: not found`)) return { exitCode: undefined, signal: null, text: '', errorCode: 'ENOENT' }
    const signal = status > 128 ? signalNames.get(status - 128) : undefined
    return { exitCode: signal ? undefined : status, signal: signal ?? null, text, ...(errFile ? { stdout: out } : {}) }
  }
}
