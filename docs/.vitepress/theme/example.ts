// What a gallery example is (docs/examples/kernels/<name>.ts) and how the page runs one: load the kernels
// on the backend the reader picked, run once and check the output against the JS reference, then time a
// few more runs with the runtime's events (or the clock around synchronize where a backend has none).
// No Vue here: KernelExample.vue calls runExample and shows what it returns.
import type { KernelModule, Module } from '@kernelpack/runtime'

/** The backends a page offers: a browser has no CUDA driver. */
export type BackendChoice = 'auto' | 'webgpu' | 'emulator'
export const backendChoices: readonly BackendChoice[] = ['auto', 'webgpu', 'emulator']

/** A select on the page besides the backend: a view, a size, a filter. */
export interface Control {
  name: string
  label: string
  options: ReadonlyArray<{ value: string; label: string }>
}

/** The arrays and numbers a run produced, by name: shown, checked, and exposed to tests. */
export type Output = Record<string, ArrayLike<number> | number | string | readonly string[]>

/** Where an example draws: the canvas of the page, a line of text under it, and a block of preformatted
 *  text (reports, tables). Text goes in as `textContent`, never as HTML. */
export interface View {
  canvas: HTMLCanvasElement
  caption(text: string): void
  details(text: string): void
}

/** The inputs of one run, on the device. */
export interface Prepared {
  /** Kernel launches in one run (for the readout: time per run of N launches). */
  launches: number
  /** Queues the launches of one run. Runs are repeatable: the same inputs give the same output. */
  launch(): Promise<void>
  read(): Promise<Output>
  /** Frees what prepare allocated. */
  free(): Promise<void>
}

export interface Example {
  title: string
  /** The backends the page offers. @default backendChoices */
  backends?: readonly BackendChoice[]
  controls?: readonly Control[]
  /** What a run that passes `check` shows. @default 'the output matches the JavaScript reference' */
  verdict?: string
  /** false: the output is text (`view.details`), the page shows no canvas. @default true */
  canvas?: boolean
  /** Loads the example's module on `backend`, replacing a module loaded before on another one. */
  load(backend: BackendChoice): Promise<Module>
  /** Frees the loaded module (the page is left). */
  unload(): Promise<void>
  /** Uploads the inputs for `params` (one value per control). */
  prepare(mod: Module, params: Readonly<Record<string, string>>): Promise<Prepared>
  /** Why `output` is wrong for `params`, or null when it matches the JS reference. */
  check(output: Output, params: Readonly<Record<string, string>>): string | null
  show(view: View, output: Output, params: Readonly<Record<string, string>>): void
  /** Work per run, for a GFLOP/s (arithmetic) or GB/s (memory traffic) readout. */
  work?(params: Readonly<Record<string, string>>): Work
}

export interface Work { amount: number; unit: 'FLOP' | 'byte' }

export interface RunResult {
  backend: string
  reason: string
  output: Output
  /** null: the output matches the reference. */
  problem: string | null
  /** Milliseconds per run, averaged over `timedRuns`. */
  msPerRun: number
  timedRuns: number
  launches: number
  timing: 'events' | 'clock'
  rate?: { value: number; unit: 'GFLOP/s' | 'GB/s' }
}

/** Runs of the timed part: enough to average out a timer tick, few enough for a page on the emulator. */
const timedRuns = 3

/** Loads, runs once (checked), then times `timedRuns` more runs. */
export async function runExample(example: Example, backend: BackendChoice, params: Readonly<Record<string, string>>): Promise<RunResult> {
  const mod = await example.load(backend)
  const job = await example.prepare(mod, params)
  try {
    // the first run also compiles the kernels for the backend (WGSL pipelines, emulator code): untimed
    await job.launch()
    await mod.synchronize()
    const output = await job.read()
    const problem = example.check(output, params)
    const { ms, timing } = await time(mod, job)
    const work = example.work?.(params)
    return {
      backend: mod.backend.name,
      reason: mod.backend.reason,
      output,
      problem,
      msPerRun: ms / timedRuns,
      timedRuns,
      launches: job.launches,
      timing,
      // amount per run / (ms per run · 1e-3 s) / 1e9
      ...(work === undefined ? {} : { rate: { value: work.amount / (ms / timedRuns) / 1e6, unit: work.unit === 'FLOP' ? 'GFLOP/s' : 'GB/s' } }),
    }
  } finally {
    await job.free()
  }
}

async function time(mod: Module, job: Prepared): Promise<{ ms: number; timing: 'events' | 'clock' }> {
  let events: [Awaited<ReturnType<Module['createEvent']>>, Awaited<ReturnType<Module['createEvent']>>] | undefined
  try {
    events = [await mod.createEvent(), await mod.createEvent()]
  } catch {
    // a backend without events: the clock around the launches and a synchronize
  }
  if (events) {
    const [start, end] = events
    try {
      await start.record()
      for (let i = 0; i < timedRuns; i++) await job.launch()
      await end.record()
      const ms = await end.elapsedSince(start)
      // (WebGPU's events are the host's clock when the queue reports the work before them done: two reports
      // delivered together read 0, so the clock below measures instead)
      if (ms > 0) return { ms, timing: 'events' }
    } finally {
      await start.destroy()
      await end.destroy()
    }
  }
  const t0 = performance.now()
  for (let i = 0; i < timedRuns; i++) await job.launch()
  await mod.synchronize()
  return { ms: performance.now() - t0, timing: 'clock' }
}

/** `load` and `unload` for an example whose kernels are one stub's module: a new backend is a new load. */
export function loadsFrom(module: KernelModule): Pick<Example, 'load' | 'unload'> {
  return {
    async load(backend) {
      await module.unload()
      return module.load({ backend })
    },
    unload: () => module.unload(),
  }
}

/** The first value of each control. */
export function defaultParams(example: Example): Record<string, string> {
  return Object.fromEntries((example.controls ?? []).map((c) => [c.name, c.options[0]!.value]))
}

/** `name` from `params`, which must be one of the control's values (a page can only pass those). */
export function param(params: Readonly<Record<string, string>>, name: string): string {
  const v = params[name]
  if (v === undefined) throw new Error(`the example has no control named ${JSON.stringify(name)}`)
  return v
}
