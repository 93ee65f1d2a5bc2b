// `.cu` imports without a bundler: Node's module customization hooks (`module.register`), as tsx uses them.
// `registerCuda(options?)` installs them from code; `node --import unplugin-cuda/register` from the command line.
// For development, tests and scripts: the compiler runs when the app imports a `.cu` (cached on disk after
// the first time). Production code ships `kernelpack build` output with @kernelpack/runtime, or a bundle.
import { register } from 'node:module'
import type { Options } from '../core/options.js'
import type { HookData } from './hooks.js'
import { loadHookConfig } from './config.js'

export { loadHookConfig, CONFIG_FILE, HOOK_ENV, type NodeHookConfig } from './config.js'

/** Installs the `.cu` import hooks for modules imported after this call. `options` are the plugin's; without
 *  them `kernelpack.config.json` (from the working directory up) and KERNELPACK_ARCH / KERNELPACK_COMPILER /
 *  KERNELPACK_BACKEND decide. */
export function registerCuda(options?: Options): void {
  // a bad config file or option fails here, before the app imports anything
  const cfg = loadHookConfig(process.cwd(), process.env, options)
  const data: HookData = { options: cfg.options, root: cfg.root }
  // the hooks module sits beside this one, in src/ (run through tsx) as in dist/
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js'
  register(`./hooks${ext}`, import.meta.url, { data })
}
