// Ambient types for `.cu` imports (add "unplugin-cuda/types" to tsconfig `types`). The plugin also writes
// a precise `<file>.cu.d.ts` beside every .cu file, which TypeScript prefers over these.
declare module '*.cu' {
  import type { KernelModule, Launcher } from 'unplugin-cuda/runtime'
  export const module: KernelModule
  export const kernels: Readonly<Record<string, Launcher<unknown[]>>>
  const _default: typeof kernels
  export default _default
}

declare module '*.cu?url' {
  const url: string
  export default url
}

declare module '*.cu?manifest' {
  import type { Manifest } from 'unplugin-cuda/runtime'
  const manifest: Manifest
  export default manifest
}

declare module '*.cu?raw' {
  const bytes: Uint8Array
  export default bytes
}
