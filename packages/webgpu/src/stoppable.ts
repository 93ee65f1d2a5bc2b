// A WebGPU launch with a signal or timeoutMs (issue 25), loaded by the backend for the first such launch: a
// page whose launches have neither never loads it.
import { launchAbortError, timeoutReason } from '@kernelpack/ptx'
import { LAUNCH_RECORD_STRIDE } from './layout.js'
import type { Dim3 } from './translate.js'

/** What the slices need of the backend (backend.ts's closure). */
export interface SliceContext {
  device: GPUDevice
  limit(name: string): number
  submitChecked(what: string, encode: (enc: GPUCommandEncoder) => void): void
  /** Throws when the device is gone. */
  live(): void
  /** Destroys the device on purpose: every later call fails with `why`. */
  killDevice(why: string): void
}

/** The kernel's part: its name, id in the launch record, and the buffers and bind group of the launch. */
export interface SlicedKernel {
  readonly name: string
  readonly id: number
  readonly launchBuffer: GPUBuffer | undefined
  readonly bindGroup: GPUBindGroup | undefined
}

/** A stoppable launch's first slice, in blocks (whole grid.x columns, at least one); later slices are sized to
 *  take about SLICE_MS each. */
const FIRST_SLICE_BLOCKS = 1024
const SLICE_MS = 50
/** How long a stopped launch waits for its running slice to end before it destroys the device (at least; four
 *  times the last slice's time where that is longer). A slice sized for 50 ms took over 250 ms on SwiftShader
 *  under a loaded 2-core machine (the suite): with 250 ms of grace a signal there destroyed the device a
 *  slice boundary would have kept. */
const GRACE_MS = 1000
const sleep = (ms: number) => new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms))

/** The AbortError of a launch whose signal was aborted before it was queued. */
export function notRun(name: string, signal: AbortSignal): Error {
  return launchAbortError(name, 'the signal was aborted before it ran', signal.reason)
}

/**
 * A launch with a signal or timeoutMs (issue 25): WebGPU cannot stop a dispatch, so the grid runs in slices
 * of whole grid.x columns (about SLICE_MS each, sized from the previous slice's time), one submit at a time,
 * and the signal and the deadline are looked at between them: a launch stopped there (or whose slice ends
 * within the grace time after) rejects with an AbortError and leaves the device as it is (the blocks that
 * ran have run). A slice that runs on is stopped the only way WebGPU has: the device is destroyed on purpose
 * (as a CUDA context dies with a killed kernel). Every later call of this backend then fails, naming the
 * kernel; the runtime opens a new device for the next loadModule. Resolves when the last slice has finished.
 */
export async function runStoppable(ctx: SliceContext, h: SlicedKernel, p: GPUComputePipeline, grid: Dim3, stop: {
  signal: AbortSignal | undefined; timeoutMs: number | undefined
  /** The launch's number (KpLaunch.pad: device printf's records carry it). */ launch?: number
  /** When the launch started (performance.now()): its later dispatches (a grid-sync kernel's phases and rounds)
   *  share its timeout; now by default. */ startedAt?: number
}): Promise<void> {
  const { device, limit, submitChecked, live, killDevice } = ctx
  const { signal, timeoutMs } = stop
  const started = stop.startedAt ?? performance.now()
  const deadline = timeoutMs === undefined ? Infinity : started + timeoutMs
  const perSlice = grid[1] * grid[2]
  const record = new Uint32Array(LAUNCH_RECORD_STRIDE / 4)
  let done = 0
  let lastMs = 0
  let columns = Math.max(1, Math.min(limit('maxComputeWorkgroupsPerDimension'), Math.floor(FIRST_SLICE_BLOCKS / perSlice)))
  const stopped = (): 'abort' | 'timeout' | undefined => (signal?.aborted ? 'abort' : performance.now() >= deadline ? 'timeout' : undefined)
  const abortError = (why: 'abort' | 'timeout', detail: string) => why === 'timeout'
    ? launchAbortError(h.name, `it ran longer than timeoutMs (${timeoutMs} ms); ${detail}`, timeoutReason(timeoutMs!))
    : launchAbortError(h.name, `the signal was aborted; ${detail}`, signal?.reason)
  while (done < grid[0]) {
    const n = Math.min(columns, grid[0] - done)
    record.set([grid[0], grid[1], grid[2], h.id, done, 0, 0, stop.launch ?? 0])
    device.queue.writeBuffer(h.launchBuffer!, 0, record)
    const t0 = performance.now()
    submitChecked(`launch ${h.name}`, (enc) => {
      const pass = enc.beginComputePass({ label: h.name })
      pass.setPipeline(p)
      pass.setBindGroup(0, h.bindGroup!, [0])
      pass.dispatchWorkgroups(n, grid[1], grid[2])
      pass.end()
    })
    let timer: ReturnType<typeof setTimeout> | undefined
    let onAbort: (() => void) | undefined
    const interrupted = new Promise<'abort' | 'timeout'>((resolve) => {
      onAbort = () => resolve('abort')
      signal?.addEventListener('abort', onAbort, { once: true })
      if (deadline !== Infinity) timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - performance.now()))
    })
    const finished = device.queue.onSubmittedWorkDone().then(() => 'finished' as const)
    const r = await Promise.race([finished, interrupted])
    clearTimeout(timer)
    if (onAbort) signal?.removeEventListener('abort', onAbort)
    // a slice that ends soon after the signal or deadline (within GRACE_MS or four times the last slice's
    // time) counts as stopped between slices; only one that runs on is stopped by destroying the device
    if (r !== 'finished' && (await Promise.race([finished, sleep(Math.max(GRACE_MS, 4 * lastMs))])) !== 'finished') {
      killDevice(`kernel ${h.name} was stopped while it ran (${r === 'timeout' ? `past timeoutMs, ${timeoutMs} ms` : 'its signal was aborted'}) by destroying the device`)
      throw abortError(r, 'WebGPU cannot stop a running dispatch, so the device was destroyed: the device memory of every module on it is gone; load the module again (a new device)')
    }
    done += n
    live()
    const why = r !== 'finished' ? r : done < grid[0] ? stopped() : undefined
    if (why) throw abortError(why, `stopped between slices of the grid after ${done * perSlice} of ${grid[0] * perSlice} blocks; the device and its memory are kept`)
    lastMs = performance.now() - t0
    columns = Math.max(1, Math.min(limit('maxComputeWorkgroupsPerDimension'), Math.floor(lastMs > 0 ? (n * SLICE_MS) / lastMs : n * 2), n * 4))
  }
}
