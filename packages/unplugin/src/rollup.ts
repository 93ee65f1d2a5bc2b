// unplugin-cuda for Rollup: `plugins: [cuda(options)]`.
import { unplugin } from './index.js'

export default unplugin.rollup
