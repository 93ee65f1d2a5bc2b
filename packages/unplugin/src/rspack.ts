// unplugin-cuda for Rspack: `plugins: [cuda(options)]`.
import { unplugin } from './index.js'

export default unplugin.rspack
