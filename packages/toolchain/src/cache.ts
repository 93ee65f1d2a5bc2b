// Content-addressed compile cache on disk, in the manner of ccache's direct mode:
//   <dir>/v1/deps/<ab>/<inputKey>.json   the files the last compile of this input read, each with its
//                                        content hash and a stat signature (size, mtime, ctime, inode)
//   <dir>/v1/obj/<ab>/<resultKey>.kpc    the output: "KPC1", u32 header length, JSON header, bytes
// inputKey = hash(compiler identity, target, flags, defines, include dirs, source path); resultKey =
// hash(inputKey, every dependency's path and content hash). A lookup re-hashes only files whose stat
// signature changed, so a warm lookup costs a few stat calls. Entries are written to a temporary file and
// renamed into place (atomic on POSIX), and every read checks the key, the length and a sha256 of the
// bytes, so a concurrent writer or a process killed mid-write can never make a corrupt entry be used.
// The cache has a size limit with least-recently-used eviction (cache-size.ts): a hit touches its files.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { readFile, utimes } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { KernelManifest } from '@kernelpack/offload'
import type { Diagnostic } from './errors.js'
import { tempPathFor } from './atomic-write.js'
import { DEFAULT_CACHE_SIZE, evictLeastRecentlyUsed, noteCacheGrowth } from './cache-size.js'

const MAGIC = 'KPC1'

/** One file a compile read, with the content hash that went into the result key. */
export interface DepRecord { path: string; hash: string; sig: string }

export interface CacheEntry {
  bytes: Uint8Array
  /** Files the compile read (source first), as the user names them. */
  deps: string[]
  warnings: Diagnostic[]
  /** Kernel manifest read from this entry's PTX (kept so a warm build runs no process at all). */
  manifest?: KernelManifest
  /** Set by a lookup: the dependency records the entry was found under (to store it again, amended). */
  records?: DepRecord[]
}

export function sha256(...parts: (string | Uint8Array)[]): string {
  const h = createHash('sha256')
  for (const p of parts) h.update(p).update('\0')
  return h.digest('hex')
}

/** A change to content, a touch, a rename over the file or a copy changes at least one of these.
 *  (Synchronous, number-valued stat: a warm build stats hundreds of headers, and the promise/bigint
 *  variants cost ten times more.) */
function signature(path: string): string | undefined {
  try {
    const s = statSync(path)
    return `${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.ino}`
  } catch {
    return undefined
  }
}

/**
 * Stat results shared by the builds of one session (one CLI run, one bundler build): a header included by
 * 24 files is stat'ed once, not 72 times. A session must not outlive the build it serves, or it would
 * hide edits made after it started; without one, every lookup stats afresh.
 */
export class BuildSession {
  readonly stats = new Map<string, string | undefined>()
  signature(path: string): string | undefined {
    if (this.stats.has(path)) return this.stats.get(path)
    const sig = signature(path)
    this.stats.set(path, sig)
    return sig
  }
}

/** Content hashes, remembered per stat signature for the life of the process (shared by every target). */
const hashes = new Map<string, { sig: string; hash: Promise<string> }>()

/** Content hash and stat signature of a file, or undefined when it is gone. */
export async function hashDependency(path: string, known?: { sig: string; hash: string }, session?: BuildSession): Promise<{ sig: string; hash: string } | undefined> {
  const sig = session ? session.signature(path) : signature(path)
  if (!sig) return undefined
  if (known && known.sig === sig) return known
  const memo = hashes.get(path)
  if (memo && memo.sig === sig) return { sig, hash: await memo.hash }
  const hash = readFile(path).then((b) => sha256(b))
  hashes.set(path, { sig, hash })
  try {
    return { sig, hash: await hash }
  } catch {
    hashes.delete(path)
    return undefined
  }
}

/** Writes a file atomically: a unique temporary name in the same directory, then rename. The calls are the
 *  synchronous ones: a cache entry is a few small files, and fs/promises' write and rename cost this process
 *  about 230 µs of CPU a file against 60 µs (2 000 files of 20 KB here), where a build writes several a
 *  source file; the event loop waits that long. */
export async function writeAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = tempPathFor(path)
  try {
    // the folder exists but for the first write into it (a mkdir each time cost a store a third of its time)
    try {
      writeFileSync(tmp, data)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(tmp, data)
    }
    renameSync(tmp, path)
  } catch (err) {
    try { unlinkSync(tmp) } catch { /* not written */ }
    throw err
  }
}

export function resultKeyOf(inputKey: string, deps: DepRecord[]): string {
  return sha256(inputKey, ...deps.flatMap((d) => [d.path, d.hash]))
}

export interface CompileCacheOptions {
  /** Size limit in bytes, 0 for none (see cache-size.ts). @default DEFAULT_CACHE_SIZE (1 GiB) */
  maxSize?: number
}

export class CompileCache {
  readonly maxSize: number
  constructor(public readonly dir: string, options: CompileCacheOptions = {}) {
    this.maxSize = options.maxSize ?? DEFAULT_CACHE_SIZE
  }

  /** When the cache is over its limit, removes the least recently used entries down to 80 % of it.
   *  Returns the size left and the number of files removed. */
  evict(): Promise<{ size: number; removed: number }> {
    return evictLeastRecentlyUsed(this.dir, this.maxSize, writeAtomic)
  }

  private depsPath(inputKey: string): string {
    return join(this.dir, 'v1', 'deps', inputKey.slice(0, 2), `${inputKey}.json`)
  }

  private objPath(resultKey: string): string {
    return join(this.dir, 'v1', 'obj', resultKey.slice(0, 2), `${resultKey}.kpc`)
  }

  /** The cached output for this input, if every recorded dependency still hashes to what it did. */
  async lookup(inputKey: string, session?: BuildSession, options: { contentKeyed?: boolean } = {}): Promise<CacheEntry | undefined> {
    let record: { inputKey: string; deps: DepRecord[] }
    try {
      // synchronously, as the writes: a cold build's lookups are misses, and a failed open through fs/promises
      // cost this process about 0.2 ms of CPU each here, one per target and file
      record = JSON.parse(readFileSync(this.depsPath(inputKey), 'utf8'))
    } catch {
      return undefined
    }
    // A compile reads at least its source; only an input key that holds the content itself (ptxas's: the
    // PTX's hash) may have no dependencies.
    if (record.inputKey !== inputKey || !Array.isArray(record.deps) || (record.deps.length === 0 && !options.contentKeyed)) return undefined
    const now = await Promise.all(record.deps.map((d) => hashDependency(d.path, d, session)))
    if (now.some((d) => !d)) return undefined
    const deps = record.deps.map((d, i) => ({ path: d.path, hash: now[i]!.hash, sig: now[i]!.sig }))
    const resultKey = resultKeyOf(inputKey, deps)
    const entry = await this.readEntry(resultKey)
    if (!entry) return undefined
    const usedAt = new Date()
    if (deps.some((d, i) => d.sig !== record.deps[i]!.sig)) {
      // Touched but unchanged files: remember the new signatures so the next lookup does not re-hash them.
      await writeAtomic(this.depsPath(inputKey), JSON.stringify({ inputKey, deps })).catch(() => {})
    } else {
      await utimes(this.depsPath(inputKey), usedAt, usedAt).catch(() => {})
    }
    // a use: least-recently-used eviction goes by mtime (as ccache's does)
    await utimes(this.objPath(resultKey), usedAt, usedAt).catch(() => {})
    entry.records = deps
    return entry
  }

  private async readEntry(resultKey: string): Promise<CacheEntry | undefined> {
    let buf: Buffer
    try {
      buf = readFileSync(this.objPath(resultKey))
    } catch {
      return undefined
    }
    try {
      if (buf.length < 8 || buf.toString('latin1', 0, 4) !== MAGIC) return undefined
      const headerLength = buf.readUInt32LE(4)
      if (8 + headerLength > buf.length) return undefined
      const header = JSON.parse(buf.toString('utf8', 8, 8 + headerLength)) as {
        key: string; size: number; sha256: string; deps: string[]; warnings: Diagnostic[]; manifest?: KernelManifest
      }
      const bytes = new Uint8Array(buf.buffer, buf.byteOffset + 8 + headerLength, buf.length - 8 - headerLength)
      if (header.key !== resultKey || header.size !== bytes.length || header.sha256 !== sha256(bytes)) return undefined
      const entry: CacheEntry = { bytes, deps: header.deps, warnings: header.warnings }
      if (header.manifest) entry.manifest = header.manifest
      return entry
    } catch {
      return undefined
    }
  }

  /** Stores an output under the key its dependencies give, then records the dependencies for lookups. */
  async store(inputKey: string, deps: DepRecord[], entry: CacheEntry): Promise<void> {
    const resultKey = resultKeyOf(inputKey, deps)
    const header = Buffer.from(JSON.stringify({
      key: resultKey, size: entry.bytes.length, sha256: sha256(entry.bytes), deps: entry.deps, warnings: entry.warnings, manifest: entry.manifest,
    }))
    const prefix = Buffer.alloc(8)
    prefix.write(MAGIC, 0, 'latin1')
    prefix.writeUInt32LE(header.length, 4)
    // The output first: a lookup that finds the new deps record must also find its output.
    const obj = Buffer.concat([prefix, header, entry.bytes])
    const record = JSON.stringify({ inputKey, deps })
    await writeAtomic(this.objPath(resultKey), obj)
    await writeAtomic(this.depsPath(inputKey), record)
    await noteCacheGrowth(this.dir, obj.length + Buffer.byteLength(record), this.maxSize, writeAtomic)
  }
}
