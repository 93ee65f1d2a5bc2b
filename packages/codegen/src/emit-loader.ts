// The ESM loader stub a bundler plugin returns for `import { vecAdd } from './kernels.cu'`, and the export
// names it gives each kernel. Pure functions from a manifest and an asset reference to source text, so the
// stub is reproducible and snapshot-tested. Every string that came from a user file goes through the one
// serializer (serialize.ts: jsString/jsValue, safe in code and in comments); export names are checked to
// be plain identifiers before they are written.
//
// The stub is thin on purpose (vite-plugin-wasm's rule: runtime helpers are real modules, never template
// text): it builds one `defineKernelModule` (from @kernelpack/runtime, the app's run-time dependency) and exports one launcher per
// kernel, a `kernels` map by full C++ name, and `module`.
import type { KernelInfo, KernelManifest } from '@kernelpack/offload'
import { hasValueTypes, nameKernels, SEMANTIC_EXPORTS } from '@kernelpack/offload/core'
import { jsComment, jsString, jsValue } from './serialize.js'

/** One kernel and the name the stub exports it under. */
export interface KernelExport {
  /** JS identifier exported by the stub (`vecAdd`, `axpby_float`). */
  exportName: string
  /** Key in the stub's `kernels` map: the demangled C++ signature (or the entry name for extern "C"). */
  fullName: string
  kernel: KernelInfo
  /** Why the export is not the kernel's own name, when that name would change what the module means. */
  note?: string
}

/** Where the stub finds the offload binary at run time. */
export type LoaderAsset =
  /** A JavaScript expression, written by the plugin (never from user text), that evaluates to a URL, URL
   *  string or file path: `import.meta.ROLLUP_FILE_URL_x`, `new URL("./a.offload", import.meta.url)`.
   *  `eager`: evaluate it when the stub module runs, not at first load (`document.currentScript` is only
   *  set while a classic script runs). */
  | { kind: 'expression'; expression: string; eager?: boolean }
  /** The bytes themselves, inlined as base64 (the plugin's `inline` threshold). */
  | { kind: 'inline'; bytes: Uint8Array }

/** Size and target of one image in the offload binary, for `module.images`. */
export interface LoaderImageInfo {
  /** The target built: `sm_90` (cubin), `compute_90` (PTX). */
  target: string
  /** The image's `arch` string (`sm_90` for both). */
  arch: string
  kind: string
  size: number
}

export interface EmitLoaderOptions {
  manifest: KernelManifest
  asset: LoaderAsset
  /** Source file name used in messages (basename of the `.cu`). */
  name: string
  images?: LoaderImageInfo[]
  /** Backend the stub's module asks for when `module.load()` gets none. @default 'auto' */
  backend?: 'auto' | 'cuda' | 'emulator' | 'webgpu'
  /** The emulator's sanitizer for the stub's module (issue 19; `loadModule`'s `check`); omitted: none is
   *  written and `KERNELPACK_CHECK` decides at run time. @default undefined */
  check?: boolean | { race?: boolean; sync?: boolean; init?: boolean; memory?: boolean; mode?: 'throw' | 'collect' }
  /** Module specifier of the runtime helper that defines `defineKernelModule`. @default '@kernelpack/runtime' */
  runtime?: string
  /** Emit Vite HMR glue (`import.meta.hot`): swap the kernels in place for modules with `onUpdate`
   *  listeners, else let Vite update the importers. @default false */
  hot?: boolean
}

/** Thrown when two kernels (or a kernel and a stub export) would need the same export name. */
export class KernelNameCollisionError extends Error {
  readonly names: string[]
  constructor(message: string, names: string[]) {
    super(message)
    this.name = 'KernelNameCollisionError'
    this.names = names
  }
}

export { RESERVED_EXPORTS, SEMANTIC_EXPORTS, splitSignature, kernelParamTypes } from '@kernelpack/offload/core'

function semanticNote(name: string, exportName: string): string {
  return `exported as \`${exportName}\`, not \`${name}\`: an export named \`${name}\` would make this module a thenable (\`await import()\` would call the kernel instead of returning the module)`
}

/**
 * Export names for every kernel, in manifest order (@kernelpack/offload's nameKernels, which the runtime's
 * `mod.kernel(name)` also reads): extern "C" kernels keep their C name, and it is a KernelNameCollisionError
 * naming `source` when that name is not a usable identifier or takes a reserved export; mangled kernels get
 * the shortest readable name that is unique (`vecAdd`, `axpby_float`, then with parameter types, then an
 * index suffix).
 */
export function nameKernelExports(manifest: KernelManifest, source = manifest.source ?? 'the .cu file'): KernelExport[] {
  return nameKernels(manifest).map((n) => {
    const k = n.kernel
    if (n.problem === 'not-an-identifier') {
      throw new KernelNameCollisionError(`${source}: kernel ${JSON.stringify(k.name)} is not a valid JavaScript export name; rename the kernel`, [k.name])
    }
    if (n.problem === 'reserved-export') {
      throw new KernelNameCollisionError(`${source}: extern "C" kernel ${JSON.stringify(k.name)} collides with the stub's own \`${k.name}\` export; rename the kernel (the stub exports module, kernels and default)`, [k.name])
    }
    if (n.problem === 'duplicate') throw new KernelNameCollisionError(`${source}: two kernels are both named ${JSON.stringify(k.name)}; rename one`, [k.name])
    const e: KernelExport = { exportName: n.exportName!, fullName: k.demangled, kernel: k }
    if (SEMANTIC_EXPORTS.has(n.wanted) && n.exportName !== n.wanted) e.note = semanticNote(n.wanted, n.exportName!)
    return e
  })
}

function encodeBase64(bytes: Uint8Array): string {
  let s = ''
  const chunk = 0x8000
  for (let i = 0; i < bytes.length; i += chunk) s += String.fromCharCode(...bytes.subarray(i, i + chunk))
  return btoa(s)
}

/** The source expression for an asset: the plugin's expression, or the inlined bytes. */
function emitSource(asset: LoaderAsset): string {
  if (asset.kind === 'inline') return `() => decodeBase64(${jsString(encodeBase64(asset.bytes))})`
  if (asset.eager) return `((source) => () => source)(${asset.expression})`
  return `() => ${asset.expression}`
}

/** The loader stub (ESM source) for one `.cu` file. */
export function emitLoaderStub(options: EmitLoaderOptions): string {
  const { manifest, asset, name } = options
  const runtime = options.runtime ?? '@kernelpack/runtime'
  const exports = nameKernelExports(manifest, name)
  // module.types needs the runtime's struct codecs only where a parameter has the compiler's layout
  const valueTypes = hasValueTypes(manifest)
  const imports = [asset.kind === 'inline' ? 'decodeBase64' : '', 'defineKernelModule', valueTypes ? 'namedValueTypes' : ''].filter(Boolean).join(', ')
  const lines: string[] = [
    `// Generated by unplugin-cuda from ${jsString(name)}. Do not edit.`,
    `import { ${imports} } from ${jsString(runtime)};`,
    '',
    `export const module = /*#__PURE__*/ defineKernelModule({`,
    `  name: ${jsString(name)},`,
    `  backend: ${jsString(options.backend ?? 'auto')},`,
    ...(options.check === undefined ? [] : [`  check: ${jsValue(options.check)},`]),
    `  manifest: ${jsValue(manifest)},`,
    `  images: ${jsValue(options.images ?? [])},`,
    `  source: ${emitSource(asset)},`,
    ...(valueTypes ? ['  valueTypes: namedValueTypes,'] : []),
    `});`,
    '',
  ]
  for (const e of exports) {
    lines.push(`/** ${jsComment(e.fullName)} */`)
    lines.push(`export const ${e.exportName} = /*#__PURE__*/ module.launcher(${jsString(e.kernel.name)});`)
  }
  lines.push('')
  // a null-prototype object with computed keys: `{ "__proto__": f }` would set the prototype instead
  lines.push('export const kernels = /*#__PURE__*/ Object.freeze(Object.assign(Object.create(null), {')
  for (const e of exports) lines.push(`  [${jsString(e.fullName)}]: ${e.exportName},`)
  lines.push('}));')
  lines.push('export default kernels;')
  if (options.hot) {
    lines.push('')
    lines.push('if (import.meta.hot) {')
    lines.push('  // A new build of this .cu: swap its kernels into the running module (launchers and buffers stay')
    lines.push('  // valid) when the app listens with module.onUpdate; otherwise update the importers.')
    lines.push('  import.meta.hot.accept((next) => {')
    lines.push('    if (!next || !module.hotReplace(next.module)) import.meta.hot.invalidate();')
    lines.push('  });')
    lines.push('}')
  }
  return lines.join('\n') + '\n'
}

/** Stub for `?url`: the asset URL as a string (a `data:` URL when the bytes are inlined). */
export function emitUrlStub(options: { asset: LoaderAsset; runtime?: string }): string {
  const runtime = options.runtime ?? '@kernelpack/runtime'
  const imports = options.asset.kind === 'inline' ? 'decodeBase64, toAssetHref' : 'toAssetHref'
  return `import { ${imports} } from ${jsString(runtime)};\nexport default toAssetHref((${emitSource(options.asset)})());\n`
}

/** Stub for `?manifest`: the manifest as a JSON value. */
export function emitManifestStub(manifest: KernelManifest): string {
  return `export default ${jsValue(manifest)};\n`
}

/** Stub for `?raw`: the offload bytes (a Uint8Array), inlined. */
export function emitRawStub(options: { bytes: Uint8Array; runtime?: string }): string {
  const runtime = options.runtime ?? '@kernelpack/runtime'
  return `import { decodeBase64 } from ${jsString(runtime)};\nexport default decodeBase64(${jsString(encodeBase64(options.bytes))});\n`
}
