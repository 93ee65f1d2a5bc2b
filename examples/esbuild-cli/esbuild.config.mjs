// esbuild build of the CLI: `node esbuild.config.mjs` (`--watch` to rebuild on changes). One ESM file for
// Node with the offload binary beside it in dist/; packages stay external (@kernelpack/runtime, koffi).
import * as esbuild from 'esbuild'
import cuda from 'unplugin-cuda/esbuild'

const options = {
  absWorkingDir: import.meta.dirname,
  entryPoints: { cli: 'main.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'info',
  // cacheDir: one compile cache for several projects (CI sets KERNELPACK_CACHE_DIR); default node_modules/.cache/kernelpack
  plugins: [cuda({ arch: '80', cacheDir: process.env.KERNELPACK_CACHE_DIR })],
}

if (process.argv.includes('--watch')) await (await esbuild.context(options)).watch()
else await esbuild.build(options)
