// Runs a reference tool for a test (argument array, no shell); rejects with its stderr on failure.
import { execFile } from 'node:child_process'

export function exec(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { cwd: opts.cwd, env: opts.env, maxBuffer: 256 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(new Error(`${cmd} ${args.join(' ')} failed: ${stderr || err.message}`), { stdout, stderr, code: err.code }))
      else resolve({ stdout, stderr })
    })
    if (opts.input !== undefined) child.stdin!.end(opts.input)
  })
}
