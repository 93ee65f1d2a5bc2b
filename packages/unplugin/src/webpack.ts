// unplugin-cuda for Webpack: `plugins: [cuda(options)]`.
import { unplugin } from './index.js'

export default unplugin.webpack
