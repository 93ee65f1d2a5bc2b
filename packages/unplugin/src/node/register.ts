// `node --import unplugin-cuda/register app.js`: `.cu` imports in plain Node ESM, `tsx` and `node --test`,
// with the options of `kernelpack.config.json` and the KERNELPACK_* environment (see ./config.ts).
// Node runs `--import` modules again in every worker thread; registering there would start a hooks thread
// per worker (the emulator's workers import no `.cu`, and paid about 0.4 s each to start): the main thread
// only. A worker that imports a `.cu` calls registerCuda() from `unplugin-cuda/node` itself.
import { isMainThread } from 'node:worker_threads'
import { registerCuda } from './index.js'

if (isMainThread) registerCuda()
