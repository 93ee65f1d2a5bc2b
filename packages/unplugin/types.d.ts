// Ambient types for `.cu` imports (add "unplugin-cuda/types" to tsconfig `types`). `kernelpack types` and
// the plugin write a precise declaration file beside every .cu file, which TypeScript prefers over these.
declare module '*.cu' {
  import type { KernelModule, Launcher } from '@kernelpack/runtime'
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
  import type { KernelManifest } from '@kernelpack/runtime'
  const manifest: KernelManifest
  export default manifest
}

declare module '*.cu?raw' {
  const bytes: Uint8Array
  export default bytes
}
