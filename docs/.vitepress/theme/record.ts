// Every run of a gallery example, on `window.__kpDocsRuns`: what a test (or a curious reader, in the
// console) reads to compare a page's output with its own reference.
import type { BackendChoice, RunResult } from './example.js'

export interface RecordedRun {
  example: string
  requested: BackendChoice
  params: Record<string, string>
  status: 'ok' | 'mismatch' | 'error'
  message: string
  result?: RunResult
}

declare global {
  interface Window { __kpDocsRuns?: RecordedRun[] }
}

export function recordRun(run: RecordedRun): void {
  ;(window.__kpDocsRuns ??= []).push(run)
}
