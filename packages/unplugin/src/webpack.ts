// unplugin-cuda for webpack: `plugins: [cuda(options)]`. Options are checked here, when the plugin is created
// (unplugin's webpack-like adapters run the factory only when the compiler applies the plugin).
import { checkOptions, unplugin } from './index.js'

export default ((options) => unplugin.webpack(checkOptions(options))) as typeof unplugin.webpack
