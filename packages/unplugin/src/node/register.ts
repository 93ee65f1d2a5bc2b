// `node --import unplugin-cuda/register app.js`: `.cu` imports in plain Node ESM, `tsx` and `node --test`,
// with the options of `kernelpack.config.json` and the KERNELPACK_* environment (see ./config.ts).
import { registerCuda } from './index.js'

registerCuda()
