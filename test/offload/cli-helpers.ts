import { main } from '../../packages/cli/src/main.js'

export interface Run { code: number; stdout: string; stderr: string }

/** Runs the kernelpack CLI in-process (no spawn) with `cwd` as its working directory. */
export async function kernelpack(args: string[], cwd: string): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await main(args, { cwd, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) })
  return { code, stdout, stderr }
}

/** A small deterministic PRNG (mulberry32), so every run generates the same cases. */
export function prng(seed: number): { int: (lo: number, hi: number) => number; pick: <T>(xs: readonly T[]) => T; chance: (p: number) => boolean; bytes: (n: number) => Uint8Array } {
  let s = seed >>> 0
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1))
  return {
    int,
    pick: (xs) => xs[int(0, xs.length - 1)]!,
    chance: (p) => next() < p,
    bytes: (n) => {
      const b = new Uint8Array(n)
      for (let i = 0; i < n; i++) b[i] = int(0, 255)
      return b
    },
  }
}

/** Runs commands with at most `limit` at a time; resolves to their exit codes and stderr. */
export async function spawnAll(jobs: { cmd: string; args: string[]; cwd: string }[], limit = 6): Promise<{ status: number | null; stderr: string }[]> {
  const { spawn } = await import('node:child_process')
  const results: { status: number | null; stderr: string }[] = new Array(jobs.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++
      const job = jobs[i]!
      results[i] = await new Promise((resolve) => {
        const child = spawn(job.cmd, job.args, { cwd: job.cwd, stdio: ['ignore', 'ignore', 'pipe'] })
        let stderr = ''
        child.stderr.on('data', (d) => (stderr += d))
        child.on('error', (err) => resolve({ status: null, stderr: String(err) }))
        child.on('close', (status) => resolve({ status, stderr }))
      })
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker))
  return results
}
