// Rollup build of the library (dist/index.js + dist/assets/window-sum-<hash>.offload) and of main.ts, a
// consumer that imports the library by package name. TypeScript is stripped by esbuild's transform.
import { transform } from 'esbuild'
import cuda from 'unplugin-cuda/rollup'

const typescript = {
  name: 'typescript',
  async transform(code, id) {
    if (!id.endsWith('.ts')) return null
    const out = await transform(code, { loader: 'ts', sourcefile: id, sourcemap: true })
    return { code: out.code, map: out.map }
  },
}

export default {
  input: { index: 'src/index.ts', main: 'main.ts' },
  // Dependencies (@kernelpack/runtime) and the library's own name stay imports.
  external: (id) => /^[@a-z]/.test(id) && !id.startsWith('\0'),
  output: { dir: 'dist', format: 'es', assetFileNames: 'assets/[name]-[hash][extname]' },
  // cacheDir: one compile cache for several projects (CI sets KERNELPACK_CACHE_DIR); default node_modules/.cache/kernelpack
  plugins: [typescript, cuda({ arch: '80', cacheDir: process.env.KERNELPACK_CACHE_DIR })],
}
