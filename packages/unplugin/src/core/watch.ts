// Which dependencies of a compile the bundler should watch. nvcc reports every header it read (~185 for a
// small kernel, nearly all from the CUDA toolkit and the C++ library); registering each one with the
// bundler's watcher on every load cost ~30 ms of each Vite HMR update. Like the compilers' own `-MMD`,
// system headers are left out: they do not change while a project is developed. The compile cache still
// keys on every file (see @kernelpack/toolchain), so a toolkit upgrade is never missed.
import { realpathSync } from 'node:fs'
import { sep } from 'node:path'

function dirPrefix(dir: string): string {
  return dir.endsWith(sep) ? dir : dir + sep
}

function toolchainDirs(env: NodeJS.ProcessEnv): string[] {
  const dirs = ['/usr/include', '/usr/lib', '/usr/lib64', '/usr/local/cuda', '/opt/cuda']
  for (const v of [env.CUDA_PATH, env.CUDA_HOME]) if (v) dirs.push(v)
  const out = new Set<string>()
  for (const d of dirs) {
    out.add(dirPrefix(d))
    try { out.add(dirPrefix(realpathSync(d))) } catch { /* not present */ }
  }
  return [...out]
}

let cached: string[] | undefined

/** True for a header of the toolchain or the system (`/usr/include`, `/usr/lib`, the CUDA toolkit). */
export function isSystemDependency(path: string, dirs: readonly string[] = (cached ??= toolchainDirs(process.env))): boolean {
  return dirs.some((d) => path.startsWith(d))
}

/** The dependencies worth watching: the project's own files, without `file` itself. */
export function watchedDependencies(file: string, dependencies: readonly string[], dirs?: readonly string[]): string[] {
  return dependencies.filter((d) => d !== file && !isSystemDependency(d, dirs))
}
