// Node module customization hooks (`module.register`, run on Node's hooks thread) that turn a `.cu` import
// into the same loader stub the bundler plugin returns: compiled through the same toolchain, cache and
// options, the offload binary staged under the cache directory (`<cacheDir>/assets`) and reached by a file:
// URL, the `.d.ts` written beside the `.cu` as the plugin writes it. The query forms (`?url`, `?raw`,
// `?manifest`) work as in the bundlers. It needs the compiler when the app runs: for development, tests and
// scripts; production code ships `kernelpack build` output or a bundle.
import { relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { emitLoaderStub, emitManifestStub, emitRawStub, emitUrlStub, jsString, nameKernelExports } from '@kernelpack/codegen'
import { createContext, imageInfo, type PluginContext } from '../core/context.js'
import { parseImportKind, stripQuery, type Options } from '../core/options.js'
import { assetFileName } from '../core/assets.js'
import { StagedAssets } from '../core/staged-assets.js'
import { toPluginError } from '../core/errors.js'
import { loadHookConfig } from './config.js'

/** What `register()` passes to the hooks thread. */
export interface HookData {
  /** The options (`register(options)`, else the config file's, with the environment's over them) and the
   *  project root, as loadHookConfig found them on the main thread. */
  options: Options
  root: string
}

let data: HookData | undefined
let ctx: PluginContext | undefined
let staged: StagedAssets | undefined

export function initialize(d: HookData | undefined): void {
  data = d
}

function context(): PluginContext {
  if (!ctx) {
    const cfg = data ?? loadHookConfig()
    ctx = createContext(cfg.options, cfg.root)
    // progress on stderr (stdout is the app's): a line per file the compiler ran for, none for cache hits
    ctx.logger = { info: (m) => process.stderr.write(m + '\n'), warn: (m) => process.stderr.write(m + '\n') }
  }
  return ctx
}

interface LoadContext { format?: string | null; conditions?: string[] }
interface LoadResult { format: string; source: string; shortCircuit?: boolean }
type NextLoad = (url: string, context?: LoadContext) => Promise<LoadResult> | LoadResult

/** The stub's JS for the `.cu` file at `url` (a file: URL, maybe with a query). */
export async function loadCuda(url: string): Promise<string> {
  const c = context()
  const file = fileURLToPath(stripQuery(url))
  const kind = parseImportKind(url)
  const root = c.resolved.root
  let res
  try {
    await c.checkToolchain()
    res = await c.build(file)
    nameKernelExports(res.manifest, relative(root, file) || file)
  } catch (err) {
    // Node prints the message: the place, the compiler's words and the code frame. A plain Error, so that
    // Node's report is that text (the bundlers' fields, loc and diagnostics, would be printed after it).
    const e = toPluginError(err, file, root, { frameInMessage: true })
    const plain = new Error(e.message)
    plain.name = e.name
    plain.stack = `${e.name}: ${e.message}`
    throw plain
  }
  c.writeDts(file, res)
  if (kind === 'manifest') return emitManifestStub(res.manifest)
  if (kind === 'raw') return emitRawStub({ bytes: res.offload })
  staged ??= new StagedAssets(c.resolved.cacheDir)
  const path = staged.stage(file, assetFileName(file, res.offload), res.offload)
  const asset = { kind: 'expression' as const, expression: `new URL(${jsString(pathToFileURL(path).href)})` }
  if (kind === 'url') return emitUrlStub({ asset })
  return emitLoaderStub({
    manifest: res.manifest,
    asset,
    name: relative(root, file) || file,
    images: imageInfo(res),
    backend: c.resolved.backend,
    ...(c.resolved.check === undefined ? {} : { check: c.resolved.check }),
  })
}

function isCudaUrl(url: string): boolean {
  if (!url.startsWith('file:')) return false
  let file: string
  try { file = fileURLToPath(stripQuery(url)) } catch { return false }
  return context().resolved.filter(file)
}

export async function load(url: string, context: LoadContext, nextLoad: NextLoad): Promise<LoadResult> {
  if (!isCudaUrl(url)) return nextLoad(url, context)
  return { format: 'module', source: await loadCuda(url), shortCircuit: true }
}
