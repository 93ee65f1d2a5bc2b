// node:util's parseArgs for the commands with their own option sets (build, hostrefs, wrapper): an unknown
// or malformed option is a UsageError (exit status 2). pack/unpack/inspect take llvm-offload-binary's
// syntax instead (image-args.ts).
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { UsageError } from './errors.js'

export function parseCommandArgs<const T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}
