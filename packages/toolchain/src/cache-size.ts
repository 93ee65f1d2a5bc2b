// The compile cache's size limit (issue 17 item 12), modelled on ccache's max_size: a limit with a sensible
// default, the `cacheSize` option and `KERNELPACK_CACHE_SIZE`; least-recently-used eviction (a hit touches
// its files, so mtime is the last use) down to 80 % of the limit (ccache's limit_multiple), so that one
// eviction buys room for many stores.
//
// Accounting is cheap and approximate, as ccache's per-directory counters are: `v1/stats.json` holds the
// size found by the last full scan plus what stores added since (a lost update between two processes only
// undercounts); a full scan runs when that estimate passes the limit, and at least hourly. Eviction is safe
// against concurrent builds: entries are replaced by rename and read whole, every read checks a sha256,
// and a file removed under a reader is a cache miss (the build compiles again), never a wrong output; the
// temporary file of a live writer is never removed.
import { readdir, readFile, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { isProcessAlive, tempOwner, writeFileAtomic } from './atomic-write.js'
import { ToolchainError } from './errors.js'

/** 1 GiB: about 40,000 compiled targets of a typical kernel file. */
export const DEFAULT_CACHE_SIZE = 1024 ** 3

/** Eviction stops at this fraction of the limit (ccache's limit_multiple). */
const LIMIT_MULTIPLE = 0.8
/** A full scan at least this often, so undercounted concurrent stores are caught up with. */
const RESCAN_MS = 3600_000

const UNITS: Record<string, number> = { '': 1e9, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }

/**
 * A cache size as ccache writes max_size: a number with an optional suffix k, M, G, T (powers of 1000) or
 * Ki, Mi, Gi, Ti (powers of 1024), G when there is none (`5G`, `500M`, `1.5Gi`, `10`); `0` means no limit.
 * A number is a byte count. Returns bytes (0 = unlimited).
 */
export function parseCacheSize(value: string | number, what = 'cache size'): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new ToolchainError(`${what} must be a byte count >= 0 (0 for no limit), not ${value}`)
    return Math.floor(value)
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(|k|K|M|G|T|Ki|Mi|Gi|Ti)B?\s*$/.exec(value)
  if (!m) throw new ToolchainError(`${what} ${JSON.stringify(value)} is not a size: write it as ccache's max_size, e.g. 5G, 500M, 2Gi, or 0 for no limit`)
  return Math.floor(Number(m[1]) * UNITS[m[2]!]!)
}

/** The limit a build uses: the option, else $KERNELPACK_CACHE_SIZE, else DEFAULT_CACHE_SIZE. */
export function resolveCacheSize(option: string | number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  if (option !== undefined) return parseCacheSize(option, 'cacheSize')
  const fromEnv = env.KERNELPACK_CACHE_SIZE
  if (fromEnv !== undefined && fromEnv !== '') return parseCacheSize(fromEnv, 'KERNELPACK_CACHE_SIZE')
  return DEFAULT_CACHE_SIZE
}

interface CacheFile { path: string; size: number; mtimeMs: number }

/** The files eviction may remove: outputs (v1/obj) and dependency records (v1/deps). Temporary files of
 *  dead writers are removed on the way; those of live ones count but stay. */
async function scanEntries(dir: string): Promise<{ files: CacheFile[]; pinned: number }> {
  const files: CacheFile[] = []
  let pinned = 0
  for (const kind of ['obj', 'deps']) {
    const root = join(dir, 'v1', kind)
    let subdirs: string[]
    try {
      subdirs = await readdir(root)
    } catch {
      continue
    }
    for (const sub of subdirs) {
      let names: string[]
      try {
        names = await readdir(join(root, sub))
      } catch {
        continue
      }
      for (const name of names) {
        const path = join(root, sub, name)
        // ours (`.x.kernelpack-<pid>-….tmp`) and those of earlier kernelpack versions (`x.tmp-<pid>-…`)
        const owner = tempOwner(name) ?? (/\.tmp-(\d+)-[0-9a-z]+$/.exec(name) ? Number(/\.tmp-(\d+)-/.exec(name)![1]) : undefined)
        try {
          const st = await stat(path)
          if (!st.isFile()) continue
          if (owner !== undefined) {
            if (isProcessAlive(owner)) pinned += st.size
            else await unlink(path)
            continue
          }
          files.push({ path, size: st.size, mtimeMs: st.mtimeMs })
        } catch { /* removed by another process meanwhile */ }
      }
    }
  }
  return { files, pinned }
}

/** stats.json's text for `a`. */
const statsText = (a: Pick<Accounting, 'size' | 'scannedAt'>) => JSON.stringify({ size: a.size, scannedAt: a.scannedAt })

async function writeStats(dir: string, size: number, write: (path: string, data: string) => Promise<void>): Promise<void> {
  await write(join(dir, 'v1', 'stats.json'), statsText({ size, scannedAt: Date.now() })).catch(() => {})
}

/**
 * Removes the least recently used entries until the cache holds at most `target` bytes (default 80 % of
 * `maxSize`), and records the size found. Returns the size left and how many files went.
 */
export async function evictLeastRecentlyUsed(dir: string, maxSize: number, write: (path: string, data: string) => Promise<void>, target = Math.floor(maxSize * LIMIT_MULTIPLE)): Promise<{ size: number; removed: number }> {
  const { files, pinned } = await scanEntries(dir)
  let size = pinned + files.reduce((n, f) => n + f.size, 0)
  let removed = 0
  if (maxSize > 0 && size > maxSize) {
    files.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : 1))
    for (const f of files) {
      if (size <= target) break
      try {
        await unlink(f.path)
        removed++
      } catch { /* another process evicted it first */ }
      size -= f.size
    }
  }
  await writeStats(dir, size, write)
  return { size, removed }
}

/** A process's view of one cache's accounting: stats.json as last read or written here, re-read when older
 *  than FRESH_MS (other processes' stores), written by one writer at a time with the latest figure (a burst
 *  of stores in one build writes it a few times, not once each). */
interface Accounting {
  size: number
  scannedAt: number
  readAt: number
  /** A store came after the write in flight began. */
  pending: boolean
  writing?: Promise<void>
  /** When this process last wrote stats.json for it, and the write waiting its turn (flush). */
  writtenAt?: number
  timer?: NodeJS.Timeout
}
const accounts = new Map<string, Accounting>()
/** Full scans in flight, by cache folder. */
const scans = new Map<string, Promise<void>>()
const FRESH_MS = 2000

async function readAccounting(dir: string): Promise<Accounting | undefined> {
  try {
    const stats = JSON.parse(await readFile(join(dir, 'v1', 'stats.json'), 'utf8')) as { size?: unknown; scannedAt?: unknown }
    if (typeof stats.size !== 'number' || typeof stats.scannedAt !== 'number') return undefined
    return { size: stats.size, scannedAt: stats.scannedAt, readAt: Date.now(), pending: false }
  } catch {
    return undefined // never scanned
  }
}

/** stats.json is written at most this often by one process: a cold build stores an entry or two a file, and
 *  replacing stats.json cost about 1 ms of this process's CPU each time here (a rename over the old one), 70 times
 *  in a 24-file build; other processes re-read it only after FRESH_MS anyway. */
const WRITE_MS = 500
/** Accounts with bytes not yet written, for the exit hook. */
const unwritten = new Map<string, Accounting>()
let exitHook = false


/** Writes the latest figure: at once when the last write is WRITE_MS old (after the event loop's turn, so that
 *  the stores of one burst share it, and the caller waits for it), else once when it is, on a timer that does
 *  not hold the process open; a process that ends first writes it on exit. */
function flush(dir: string, a: Accounting, write: (path: string, data: string) => Promise<void>): Promise<void> {
  a.pending = true
  unwritten.set(dir, a)
  if (!exitHook) {
    exitHook = true
    // (synchronously: a process that ends before its trailing write)
    process.once('exit', () => {
      for (const [d, acc] of unwritten) {
        if (acc.pending) try { writeFileAtomic(join(d, 'v1', 'stats.json'), statsText(acc)) } catch { /* a later scan counts it */ }
      }
    })
  }
  if (a.writing) return a.writing
  if (a.timer) return Promise.resolve()
  const wait = (a.writtenAt ?? -Infinity) + WRITE_MS - Date.now()
  if (wait > 0) {
    a.timer = setTimeout(() => { a.timer = undefined; void flush(dir, a, write) }, wait)
    a.timer.unref()
    return Promise.resolve()
  }
  a.writing = (async () => {
    await new Promise<void>((r) => setImmediate(r))
    a.pending = false
    a.writtenAt = Date.now()
    await write(join(dir, 'v1', 'stats.json'), statsText(a)).catch(() => {})
    a.writing = undefined
    // stores that came meanwhile: their write waits its turn
    if (a.pending) void flush(dir, a, write)
    else if (unwritten.get(dir) === a) unwritten.delete(dir)
  })()
  return a.writing
}

/** After a store of `bytes`: updates the running estimate and evicts when it passes the limit. */
export async function noteCacheGrowth(dir: string, bytes: number, maxSize: number, write: (path: string, data: string) => Promise<void>): Promise<void> {
  if (maxSize <= 0) return
  let a = accounts.get(dir)
  if (!a || Date.now() - a.readAt > FRESH_MS) {
    const disk = await readAccounting(dir)
    const now = accounts.get(dir)
    if (disk && now && disk.scannedAt === now.scannedAt) {
      // the same scan's figure: what this process knows and has not written yet stays (kept in place, so that a
      // write in flight goes on with it)
      now.size = Math.max(now.size, disk.size)
      now.readAt = disk.readAt
      a = now
    } else {
      // another process scanned since (its figure), or this process knows nothing yet
      a = disk ?? now
      if (a) accounts.set(dir, a)
    }
  }
  if (!a || Date.now() - a.scannedAt > RESCAN_MS || a.size + bytes > maxSize) {
    // one scan at a time per cache in this process (a cold cache's first stores all find no stats.json)
    let scan = scans.get(dir)
    if (!scan) {
      scan = evictLeastRecentlyUsed(dir, maxSize, write).then((r) => {
        // the scan's figure replaces the estimate, and a write of the old one still waiting its turn
        const old = accounts.get(dir)
        if (old) { old.pending = false; clearTimeout(old.timer); old.timer = undefined }
        if (unwritten.get(dir) === old) unwritten.delete(dir)
        accounts.set(dir, { size: r.size, scannedAt: Date.now(), readAt: Date.now(), pending: false })
      }).finally(() => scans.delete(dir))
      scans.set(dir, scan)
    }
    await scan
    return
  }
  a.size += bytes
  await flush(dir, a, write)
}
