// The .cu files of a project folder, for the commands that handle every kernel at once (`kernelpack types`,
// the plugin's `dtsScan`): dependencies, build outputs and dot folders are left out.
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', '.cache'])

/** Every `.cu` file under `dir` (sorted, depth ≤ 12) that `filter` accepts; none when `dir` cannot be read. */
export function listCudaSources(dir: string, filter: (path: string) => boolean = () => true, depth = 0): string[] {
  if (depth > 12) return []
  let names: string[]
  try { names = readdirSync(dir).sort() } catch { return [] }
  const out: string[] = []
  for (const name of names) {
    if (name.startsWith('.') || SKIP_DIRS.has(name)) continue
    const p = join(dir, name)
    let st
    try { st = statSync(p) } catch { continue }
    if (st.isDirectory()) out.push(...listCudaSources(p, filter, depth + 1))
    else if (name.endsWith('.cu') && filter(p)) out.push(p)
  }
  return out
}
