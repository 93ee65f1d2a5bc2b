// A counting semaphore for compiler processes: at most `limit` run at once in this process, whatever
// number of files and bundler instances ask for compiles. The default limit is the machine's parallelism.
import { availableParallelism } from 'node:os'

export class Pool {
  private active = 0
  private readonly waiting: (() => void)[] = []
  constructor(public limit: number = availableParallelism()) {}

  /** Runs `task` when a slot is free; the slot is released when it settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= Math.max(1, this.limit)) await new Promise<void>((resolve) => this.waiting.push(resolve))
    this.active++
    try {
      return await task()
    } finally {
      this.active--
      this.waiting.shift()?.()
    }
  }
}

/** The pool every build in this process shares: os.availableParallelism() slots, or $KERNELPACK_JOBS. */
export const compilePool = new Pool(Number(process.env.KERNELPACK_JOBS) > 0 ? Math.floor(Number(process.env.KERNELPACK_JOBS)) : availableParallelism())
