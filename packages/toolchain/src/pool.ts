// A counting semaphore for compiler processes: at most `limit` run at once in this process, whatever
// number of files and bundler instances ask for compiles. The default limit is the machine's parallelism.
// A task may take several slots (an nvcc that runs its per-architecture steps in parallel, `--threads N`),
// so that the bound counts processes, not nvcc invocations. Waiting tasks start in the order they came.
import { availableParallelism } from 'node:os'

export class Pool {
  private active = 0
  private readonly waiting: Array<{ slots: number; start: () => void }> = []
  constructor(public limit: number = availableParallelism()) {}

  private get capacity(): number {
    return Math.max(1, this.limit)
  }

  /** Runs `task` when `slots` slots are free (at most the whole pool); they are released when it settles, or
   *  earlier when the task calls `release` (its process has ended; what remains is reading its outputs). */
  async run<T>(task: (release: () => void) => Promise<T>, slots = 1): Promise<T> {
    const n = Math.max(1, Math.min(Math.floor(slots) || 1, this.capacity))
    if (this.waiting.length === 0 && this.active + n <= this.capacity) this.active += n
    else await new Promise<void>((start) => this.waiting.push({ slots: n, start }))
    let held = true
    const release = () => {
      if (!held) return
      held = false
      this.active -= n
      this.grant()
    }
    try {
      return await task(release)
    } finally {
      release()
    }
  }

  /** Starts waiting tasks, first come first served, while their slots are free. */
  private grant(): void {
    while (this.waiting.length > 0) {
      const next = this.waiting[0]!
      if (this.active > 0 && this.active + next.slots > this.capacity) return
      this.waiting.shift()
      this.active += next.slots
      next.start()
    }
  }
}

/** The pool every build in this process shares: os.availableParallelism() slots, or $KERNELPACK_JOBS. */
export const compilePool = new Pool(Number(process.env.KERNELPACK_JOBS) > 0 ? Math.floor(Number(process.env.KERNELPACK_JOBS)) : availableParallelism())
