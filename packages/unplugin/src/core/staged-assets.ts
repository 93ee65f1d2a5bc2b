// Offload binaries staged under <cacheDir>/assets for bundlers that read the asset from disk: webpack and
// Rspack (`new URL('<staged file>', import.meta.url)`, which they emit under a content-hashed name) and the
// Vite dev server's SSR modules (a file: URL). Names are content-hashed (`kernels.<hash>.offload`), so every
// edit stages a new file; without pruning they only grow (issue 17 item 12).
//
// Each plugin instance records the assets it refers to now in `assets/.refs/<pid>-<thread>-<n>.json`, BEFORE
// it makes sure the asset is there. Pruning removes every staged asset that no live instance (its pid runs)
// refers to, and the records of dead processes. A candidate is first renamed away, then the records are read
// again: one that a build recorded meanwhile is put back, and a build that records an asset after that finds
// it missing and writes it again. So a build never loses an asset it refers to, whatever other builds (in
// this process or another) prune at the same time.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { threadId } from 'node:worker_threads'
import { isProcessAlive, tempPathFor, writeFileAtomic, writeFileIfChanged } from '@kernelpack/toolchain/atomic-write'

let instances = 0

export class StagedAssets {
  readonly dir: string
  private readonly refsDir: string
  private readonly refFile: string
  /** .cu file → the asset file name this instance refers to for it now. */
  private readonly current = new Map<string, string>()
  private recorded = ''

  constructor(cacheDir: string) {
    this.dir = join(cacheDir, 'assets')
    this.refsDir = join(this.dir, '.refs')
    this.refFile = join(this.refsDir, `${process.pid}-${threadId}-${++instances}.json`)
  }

  /** Stages `bytes` as `fileName` for the .cu `file` and returns its path; an asset it supersedes for that
   *  file is pruned when no other build refers to it. */
  stage(file: string, fileName: string, bytes: Uint8Array): string {
    const previous = this.current.get(file)
    this.current.set(file, fileName)
    this.record()
    const path = join(this.dir, fileName)
    writeFileIfChanged(path, bytes)
    if (previous !== undefined && previous !== fileName) this.prune()
    return path
  }

  /** The assets this instance refers to. */
  referenced(): string[] {
    return [...new Set(this.current.values())].sort()
  }

  /** Forgets this instance's references (its bundler shut down). */
  dispose(): void {
    this.current.clear()
    this.recorded = ''
    rmSync(this.refFile, { force: true })
  }

  private record(): void {
    const text = JSON.stringify(this.referenced())
    if (text === this.recorded) return
    mkdirSync(this.refsDir, { recursive: true })
    writeFileAtomic(this.refFile, text)
    this.recorded = text
  }

  /** What live instances refer to; the records of dead processes are removed on the way. */
  private liveReferences(): Set<string> {
    const live = new Set<string>()
    let names: string[]
    try {
      names = readdirSync(this.refsDir)
    } catch {
      return live
    }
    for (const name of names) {
      const m = /^(\d+)-\d+-\d+\.json$/.exec(name)
      if (!m) continue
      const path = join(this.refsDir, name)
      if (!isProcessAlive(Number(m[1]))) {
        rmSync(path, { force: true })
        continue
      }
      try {
        for (const a of JSON.parse(readFileSync(path, 'utf8')) as unknown[]) if (typeof a === 'string') live.add(a)
      } catch { /* replaced or removed meanwhile: its writer is alive and records again before staging */ }
    }
    return live
  }

  /** Removes the staged assets no live build refers to; returns their names. */
  prune(): string[] {
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch {
      return []
    }
    const live = this.liveReferences()
    const moved: Array<[string, string, string]> = []
    for (const name of names) {
      if (name.startsWith('.') || !name.endsWith('.offload') || live.has(name)) continue
      const path = join(this.dir, name)
      const away = tempPathFor(path)
      try {
        renameSync(path, away)
        moved.push([name, path, away])
      } catch { /* removed by another build meanwhile */ }
    }
    if (moved.length === 0) return []
    const again = this.liveReferences()
    const removed: string[] = []
    for (const [name, path, away] of moved) {
      try {
        if (again.has(name)) renameSync(away, path)
        else {
          unlinkSync(away)
          removed.push(name)
        }
      } catch { /* nothing left to do */ }
    }
    return removed
  }
}
