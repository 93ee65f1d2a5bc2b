// dist/index.js and the kernels' offload binary (dist/assets/*.offload), which the package ships; the
// library's users import it by package name and need no compiler. TypeScript is stripped by esbuild.
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
  input: 'src/index.ts',
  // dependencies (@kernelpack/runtime) stay imports
  external: (id) => /^[@a-z]/.test(id) && !id.startsWith('\0'),
  output: { dir: 'dist', format: 'es', assetFileNames: 'assets/[name]-[hash][extname]' },
  plugins: [typescript, cuda({ arch: '80' })],
}
