// Builds and drives bench/native/emulator-ref.c, the native C reference of emulator.bench.ts (issue 24): one
// build per bench run with `gcc -O2 -ffp-contract=off` into a temp dir, one long-lived child per kernel that
// answers `t` (run once, print that run's CPU time in ns) and `s` (print the output checksum) on its stdin.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const nativeSource = join(import.meta.dirname, 'emulator-ref.c')
/** The flags the reference is built with: float math stays IEEE float, no fma contraction (x86-64 gcc
 *  contracts a*b+c by default where the target has fma), so its outputs equal the JS loop's bit for bit. */
export const nativeFlags = ['-O2', '-ffp-contract=off', '-std=c11']

/** Compiles emulator-ref.c; `dispose()` removes the temp dir. */
export function buildNativeRef(): { exe: string; compiler: string; dispose(): void } {
  const gcc = process.env.CC ?? 'gcc'
  const dir = mkdtempSync(join(tmpdir(), 'kp-bench-native-'))
  const exe = join(dir, 'emulator-ref')
  const r = spawnSync(gcc, [...nativeFlags, '-o', exe, nativeSource, '-lm'], { encoding: 'utf8' })
  if (r.error || r.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    if (r.error) throw new Error(`cannot run ${gcc} to build the native reference ${nativeSource} (${r.error.message}): install gcc (apt-get install -y gcc) or set CC`)
    throw new Error(`${gcc} ${nativeFlags.join(' ')} ${nativeSource} failed (exit ${r.status}):\n${r.stderr}`)
  }
  const v = spawnSync(gcc, ['-dumpfullversion'], { encoding: 'utf8' })
  return { exe, compiler: `${gcc} ${v.stdout.trim()}`, dispose: () => rmSync(dir, { recursive: true, force: true }) }
}

/** One kernel of the native reference, set up with its inputs, waiting for commands. */
export class NativeKernel {
  private lines: string[] = []
  private waiting: Array<(line: string) => void> = []
  private stderr = ''
  private exited: string | null = null

  private constructor(private child: ChildProcessWithoutNullStreams, private what: string) {
    let buf = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (d: string) => {
      buf += d
      let nl
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl)
        buf = buf.slice(nl + 1)
        const w = this.waiting.shift()
        if (w) w(line)
        else this.lines.push(line)
      }
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (d: string) => { this.stderr += d })
    child.on('exit', (code, signal) => {
      this.exited = `exited (${code ?? signal})${this.stderr ? `: ${this.stderr.trim()}` : ''}`
      for (const w of this.waiting.splice(0)) w('')
    })
  }

  /** Starts `exe kernel sizes…` and waits for its `ready`. */
  static async start(exe: string, kernel: string, sizes: readonly number[]): Promise<NativeKernel> {
    const child = spawn(exe, [kernel, ...sizes.map(String)], { stdio: ['pipe', 'pipe', 'pipe'] })
    const k = new NativeKernel(child, `${exe} ${kernel} ${sizes.join(' ')}`)
    const first = await k.next()
    if (first !== 'ready') throw new Error(`native reference ${k.what}: expected "ready", got ${JSON.stringify(first)} ${k.exited ?? ''}`)
    return k
  }

  private next(): Promise<string> {
    const l = this.lines.shift()
    if (l !== undefined) return Promise.resolve(l)
    if (this.exited) return Promise.resolve('')
    return new Promise((resolve) => this.waiting.push(resolve))
  }

  private async ask(cmd: string): Promise<number> {
    if (this.exited) throw new Error(`native reference ${this.what} ${this.exited}`)
    this.child.stdin.write(cmd + '\n')
    const line = await this.next()
    const v = Number(line)
    if (line === '' || !Number.isFinite(v)) throw new Error(`native reference ${this.what}: answered ${JSON.stringify(line)} to "${cmd}" ${this.exited ?? ''}`)
    return v
  }

  /** Runs the kernel once; the CPU seconds of that run alone, measured inside the child. */
  async time(): Promise<number> {
    return (await this.ask('t')) / 1e9
  }

  /** The checksum of the outputs (sum in double, as the bench's sum()). */
  checksum(): Promise<number> {
    return this.ask('s')
  }

  async close(): Promise<void> {
    if (this.exited) return
    const done = new Promise<void>((resolve) => this.child.once('exit', () => resolve()))
    this.child.stdin.end('q\n')
    await done
  }
}
