// unplugin-cuda for Vite: `plugins: [cuda(options)]`.
import { unplugin } from './index.js'

export default unplugin.vite
