// Stands in for the `unplugin` package's types when TypeDoc reads unplugin-cuda's declarations (see
// ../tsconfig.json): the reference documents unplugin-cuda's own API, and these names stay opaque.
export type UnpluginFactory<Options> = (options: Options, meta: unknown) => unknown
export interface UnpluginInstance<Options, Nested extends boolean = boolean> {
  vite: (options?: Options) => unknown
  rollup: (options?: Options) => unknown
  esbuild: (options?: Options) => unknown
  webpack: (options?: Options) => unknown
  rspack: (options?: Options) => unknown
  raw: (options: Options, meta: unknown) => unknown
  /** unplugin's flag for plugins that return several; unused here */
  readonly nested?: Nested
}
export type UnpluginOptions = unknown
