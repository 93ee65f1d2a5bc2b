// Rspack config for a Node ESM app. Run it with `node rspack.config.mjs` (`--watch` to rebuild on changes),
// or pass it to @rspack/cli. Bare imports stay external: unplugin-cuda/runtime and koffi load from node_modules.
import { fileURLToPath } from 'node:url'
import { rspack } from '@rspack/core'
import cuda from 'unplugin-cuda/rspack'

const config = {
  mode: 'production',
  target: 'node20',
  context: fileURLToPath(new URL('.', import.meta.url)),
  entry: './main.ts',
  devtool: false,
  output: { path: fileURLToPath(new URL('dist', import.meta.url)), filename: 'main.mjs', module: true, chunkFormat: 'module', clean: true },
  experiments: { outputModule: true },
  externalsType: 'module',
  externals: [({ request }, cb) => (/^[@a-z]/.test(request ?? '') && !request.startsWith('node:') ? cb(null, request) : cb())],
  externalsPresets: { node: true },
  resolve: { extensions: ['.ts', '.js'] },
  module: { rules: [{ test: /\.ts$/, loader: 'builtin:swc-loader', options: { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } } }] },
  optimization: { minimize: false },
  // cacheDir: one compile cache for several projects (CI sets KERNELPACK_CACHE_DIR); default node_modules/.cache/kernelpack
  plugins: [cuda({ arch: '80', cacheDir: process.env.KERNELPACK_CACHE_DIR })],
}
export default config

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const compiler = rspack(config)
  const done = (err, stats) => {
    if (err) throw err
    console.log(stats.toString({ colors: false, modules: false, assets: true }))
    if (!compiler.watching) compiler.close(() => { process.exitCode = stats.hasErrors() ? 1 : 0 })
  }
  if (process.argv.includes('--watch')) compiler.watch({}, done)
  else compiler.run(done)
}
