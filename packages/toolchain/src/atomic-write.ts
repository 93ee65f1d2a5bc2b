// Writing a file so that no reader ever sees half of it: a temporary file in the same directory, then a
// rename (atomic on POSIX). The temporary name carries the writer's pid, `.<name>.kernelpack-<pid>-<stamp>.tmp`,
// so that the temp files of a process killed before its rename (kill -9 leaves them; issue 17 item 5) are
// recognised and removed by the next kernelpack process that writes into the same directory. A temp file
// of a live process is never touched.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'

const TEMP_RE = /^\..*\.kernelpack-(\d+)-[0-9a-z]+\.tmp$/

let counter = 0

/** The temporary path a write of `path` goes through: same directory, hidden, named after the writer's pid. */
export function tempPathFor(path: string): string {
  const stamp = `${Date.now().toString(36)}${(counter++).toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`
  return join(dirname(path), `.${basename(path)}.kernelpack-${process.pid}-${stamp}.tmp`)
}

/** The writer's pid when `name` is one of our temporary names. */
export function tempOwner(name: string): number | undefined {
  const m = TEMP_RE.exec(name)
  return m ? Number(m[1]) : undefined
}

/** Whether a process with this pid exists (a pid of another user's process counts as alive). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const swept = new Set<string>()

/**
 * Removes the temporary files that processes which no longer exist left in `dir` (once per directory and
 * process: later writes into the same directory skip the scan). Returns how many it removed.
 */
export function removeStaleTemps(dir: string, options: { again?: boolean } = {}): number {
  if (swept.has(dir) && !options.again) return 0
  swept.add(dir)
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return 0
  }
  let removed = 0
  for (const name of names) {
    const pid = tempOwner(name)
    if (pid === undefined || isProcessAlive(pid)) continue
    try {
      unlinkSync(join(dir, name))
      removed++
    } catch { /* removed by another process meanwhile, or not a file */ }
  }
  return removed
}

/** Writes `path` through a temporary file that `write(fd)` fills, then renames it into place. */
export function writeFileAtomicWith(path: string, write: (fd: number) => void, mode = 0o644): void {
  removeStaleTemps(dirname(path))
  const tmp = tempPathFor(path)
  let fd: number | undefined
  try {
    fd = openSync(tmp, 'wx', mode)
    write(fd)
    closeSync(fd)
    fd = undefined
    renameSync(tmp, path)
  } catch (err) {
    if (fd !== undefined) try { closeSync(fd) } catch { /* already failing */ }
    rmSync(tmp, { force: true })
    throw err
  }
}

/** Writes `data` to `path` atomically. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  writeFileAtomicWith(path, (fd) => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data
    let off = 0
    while (off < bytes.byteLength) off += writeSync(fd, bytes, off, bytes.byteLength - off)
  })
}

/** Writes `data` to `path` atomically (creating its directory) unless the file holds exactly these bytes
 *  already (watchers see no change, mtimes stay put). Returns true when it wrote. */
export function writeFileIfChanged(path: string, data: string | Uint8Array): boolean {
  try {
    const old = readFileSync(path)
    const next = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    if (old.equals(next)) return false
  } catch { /* absent: write it */ }
  mkdirSync(dirname(path), { recursive: true })
  writeFileAtomic(path, data)
  return true
}
