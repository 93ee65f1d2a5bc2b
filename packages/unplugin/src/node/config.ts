// Options of the Node import hook (`node --import unplugin-cuda/register`): the plugin's own options (see
// ../core/options.ts), read from `kernelpack.config.json` (the nearest one from the working directory up, or
// the file $KERNELPACK_CONFIG names), then a few environment variables over them, so a test run or a CI job
// can change the arch or the backend without editing a file. The folder of the config file is the project
// root (include dirs, the cache and the compiler path are resolved against it); without one, the working
// directory is.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { resolveOptions, type BackendOption, type Options } from '../core/options.js'

/** The config file the hook looks for, from the working directory up. */
export const CONFIG_FILE = 'kernelpack.config.json'

/** Environment variables the hook reads over the config file (besides the toolchain's own
 *  KERNELPACK_CACHE_DIR, KERNELPACK_CACHE_SIZE and KERNELPACK_JOBS, and the runtime's KERNELPACK_CHECK). */
export const HOOK_ENV: Record<string, keyof Options> = {
  KERNELPACK_ARCH: 'arch',
  KERNELPACK_COMPILER: 'compiler',
  KERNELPACK_BACKEND: 'backend',
}

export interface NodeHookConfig {
  options: Options
  root: string
  /** The config file read, if any. */
  configFile?: string
}

function findConfig(from: string): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const f = join(dir, CONFIG_FILE)
    if (existsSync(f)) return f
    if (dirname(dir) === dir) return undefined
  }
}

/**
 * The hook's options: `explicit` (from `register(options)`) if given, else the config file's; the
 * environment's KERNELPACK_ARCH / KERNELPACK_COMPILER / KERNELPACK_BACKEND over either. A config file that
 * is not JSON, or an option the plugin does not take, is a TypeError naming the file and the fix.
 */
export function loadHookConfig(cwd = process.cwd(), env: NodeJS.ProcessEnv = process.env, explicit?: Options): NodeHookConfig {
  let options: Options = {}
  let root = cwd
  let configFile: string | undefined
  if (explicit) options = { ...explicit }
  else {
    configFile = env.KERNELPACK_CONFIG ? resolve(cwd, env.KERNELPACK_CONFIG) : findConfig(cwd)
    if (configFile) {
      let text: string
      try { text = readFileSync(configFile, 'utf8') } catch (err) {
        throw new TypeError(`unplugin-cuda: cannot read ${configFile} (${(err as Error).message}); KERNELPACK_CONFIG must name a JSON file of the plugin's options`)
      }
      let parsed: unknown
      try { parsed = JSON.parse(text) } catch (err) {
        throw new TypeError(`unplugin-cuda: ${configFile} is not JSON (${(err as Error).message}); write the plugin's options as a JSON object, e.g. {"arch": "80"}`)
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new TypeError(`unplugin-cuda: ${configFile} must hold a JSON object of the plugin's options, e.g. {"arch": "80"}`)
      options = parsed as Options
      root = dirname(configFile)
    }
  }
  for (const [name, key] of Object.entries(HOOK_ENV)) {
    const v = env[name]
    if (v !== undefined && v !== '') (options as Record<string, unknown>)[key] = key === 'backend' ? (v as BackendOption) : v
  }
  try {
    resolveOptions(options, root)
  } catch (err) {
    throw new TypeError(configFile ? `${configFile}: ${(err as Error).message}` : (err as Error).message)
  }
  return { options, root, ...(configFile ? { configFile } : {}) }
}
