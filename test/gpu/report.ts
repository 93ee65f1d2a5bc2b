// The report of `pnpm test:gpu` (issue 18): every check with pass / FAIL / not run, the per-kernel table with
// the largest ULP difference between the GPU and the emulator, and the machine it ran on, as JSON and as text
// that can be pasted into a closing note.

export type Status = 'pass' | 'fail' | 'not-run'

export interface Check {
  section: string
  name: string
  status: Status
  detail: string
  ms?: number
}

/** One corpus case on the GPU. */
export interface KernelRow {
  case: string
  unit: string
  kernels: string[]
  status: Status
  /** The image the GPU ran (`cubin sm_90`). */
  image: string
  /** The case's reference check on the GPU: `pass`, or the failure. */
  reference: string
  /** The driver-JIT run of the PTX alone, compared with the cubin run. */
  jit: string
  /** The emulator, compared with the GPU: equal, within (…), differs (…), or why it did not run. */
  emulator: string
  /** Largest ULP difference GPU vs emulator over the float outputs (undefined: none compared). */
  maxUlp?: number
  /** Largest ULP difference JIT vs cubin. */
  maxUlpJit?: number
  latitude: string
  problems: string[]
  ms: number
}

export interface DeviceFacts {
  gpu: string
  computeCapability: string
  arch: string
  totalMemoryGiB: number
  multiProcessors: number
  /** The kernel driver's version (`580.159.04`). */
  driver: string
  /** CUDA version the driver supports (cuDriverGetVersion). */
  driverCuda: string
  /** The highest PTX ISA the driver JIT-compiles. */
  ptxIsa: string
  libcuda: string
}

export interface Report {
  title: string
  mode: 'hardware' | 'self-test'
  date: string
  command: string
  device: DeviceFacts
  toolkit: string
  host: { node: string; platform: string; cpus: number; koffi: string }
  summary: { checks: Record<Status, number>; kernels: Record<Status, number>; ok: boolean }
  checks: Check[]
  kernels: KernelRow[]
  fixtures?: { dir: string; arch: string; written: number }
}

export function summarize(checks: readonly Check[], kernels: readonly KernelRow[]): Report['summary'] {
  const count = (xs: readonly { status: Status }[]) => ({ pass: xs.filter((x) => x.status === 'pass').length, fail: xs.filter((x) => x.status === 'fail').length, 'not-run': xs.filter((x) => x.status === 'not-run').length })
  const c = count(checks)
  const k = count(kernels)
  return { checks: c, kernels: k, ok: c.fail === 0 && k.fail === 0 }
}

const mark: Record<Status, string> = { pass: 'ok  ', fail: 'FAIL', 'not-run': '--  ' }

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ').trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)]
}

const short = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s)

/** The report as text: header, summary, every check, the kernel table with ULP differences, the failures in full. */
export function renderReport(r: Report): string {
  const out: string[] = []
  out.push(`# ${r.title}`)
  if (r.mode === 'self-test') out.push('', '**SELF-TEST against the libcuda test double: NOT a proof on hardware.** Kernels ran on the emulator standing in for the device.')
  out.push('')
  out.push(`- GPU: ${r.device.gpu} (compute capability ${r.device.computeCapability}, ${r.device.arch}, ${r.device.multiProcessors} SMs, ${r.device.totalMemoryGiB.toFixed(1)} GiB)`)
  out.push(`- Driver: ${r.device.driver}, CUDA ${r.device.driverCuda} (PTX ISA up to ${r.device.ptxIsa}); libcuda: ${r.device.libcuda}`)
  out.push(`- Toolkit: ${r.toolkit}`)
  out.push(`- Host: Node ${r.host.node}, ${r.host.platform}, ${r.host.cpus} cores, koffi ${r.host.koffi}`)
  out.push(`- Date: ${r.date}; command: \`${r.command}\``)
  const s = r.summary
  out.push(`- Result: ${s.ok ? 'PASS' : 'FAIL'}: checks ${s.checks.pass} passed, ${s.checks.fail} failed, ${s.checks['not-run']} not run; kernels ${s.kernels.pass} passed, ${s.kernels.fail} failed, ${s.kernels['not-run']} not run`)
  if (r.fixtures) out.push(`- Fixtures: ${r.fixtures.written} written to ${r.fixtures.dir} (${r.fixtures.arch})`)
  out.push('', '## Checks', '', '```')
  let section = ''
  for (const c of r.checks) {
    if (c.section !== section) { section = c.section; out.push(`[${section}]`) }
    out.push(`${mark[c.status]} ${c.name}${c.detail ? ` — ${short(c.detail.split('\n')[0]!, 200)}` : ''}`)
  }
  out.push('```')
  if (r.kernels.length) {
    out.push('', '## Kernels (GPU vs TypeScript reference, driver JIT vs cubin, emulator vs GPU; max ULP = largest float difference GPU vs emulator)', '', '```')
    const rows = r.kernels.map((k) => [
      mark[k.status].trim() || '--', short(k.case, 60), short(k.reference === 'pass' ? 'pass' : k.reference, 24), short(k.jit, 16), short(k.emulator, 28),
      k.maxUlp === undefined ? '' : String(k.maxUlp), k.maxUlpJit === undefined ? '' : String(k.maxUlpJit), short(k.latitude, 40),
    ])
    out.push(...table(['', 'case', 'GPU vs ref', 'JIT', 'emulator', 'max ULP', 'JIT ULP', 'latitude'], rows))
    out.push('```')
  }
  const failed = [...r.checks.filter((c) => c.status === 'fail').map((c) => `[${c.section}] ${c.name}: ${c.detail}`), ...r.kernels.filter((k) => k.status === 'fail').map((k) => `${k.case}: ${k.problems.join(' | ')}`)]
  if (failed.length) out.push('', '## Failures', '', ...failed.map((f) => `- ${f}`))
  const notRun = [...r.checks.filter((c) => c.status === 'not-run').map((c) => `[${c.section}] ${c.name}: ${c.detail}`), ...r.kernels.filter((k) => k.status === 'not-run').map((k) => `${k.case}: ${k.problems.join(' | ')}`)]
  if (notRun.length) out.push('', '## Not run (and why)', '', ...notRun.map((f) => `- ${short(f, 400)}`))
  return out.join('\n') + '\n'
}
