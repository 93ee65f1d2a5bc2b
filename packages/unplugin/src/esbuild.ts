// unplugin-cuda for Esbuild: `plugins: [cuda(options)]`.
import { unplugin } from './index.js'

export default unplugin.esbuild
