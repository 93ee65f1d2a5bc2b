// Runs of exact fma.rn.f32 sites as one loop (issue 26). Where the adapter's fma() is not fused (SwiftShader:
// fma-probe.ts), every fma.rn.f32 is wgsl-lib.ts's kp_fma_rn, about 70 operations, and a shader compiler that
// inlines every call (SwiftShader does) compiles them once per site. A register-tiled GEMM's unrolled inner
// product is a thousand sites: sgemm_autotuned<128,128,16,8,8> of the kernel corpus, 1 089 of them in runs of 64
// and 4, took SwiftShader 25.3 s to compile with the exact fma against 5.4 s with fma().
//
// A run of consecutive sites that do not read each other's results (the accumulators of one k step of a GEMM)
// is written as: every site's operands stored in private arrays, one call of kp_fma_batch (a loop over them,
// whose body is compiled once), then the results read back, in the sites' order. Nothing else changes: the
// operands are read before any result is written, as the sites would read them (no site reads an earlier
// site's result, none writes a register another site of the run wrote), and each result is kp_fma_rn of the same
// operands. On an adapter whose fma() is fused the override kp_fma_exact is false and the other branch, the
// plain fma() of each site, is what the pipeline compiles (kp_fma_rn's own first line), with no arrays.
//
// It works on the kernel's WGSL lines as emit-kernel.ts writes them (`dst = kp_fma_rn(a, b, c);` one per line,
// each after its PTX comment line), after the kernel is written.

import { topLevelArgs } from './f64-services.js'

/** The length of kp_fma_batch's arrays (wgsl-lib.ts): longer runs are cut into runs of this many sites. */
export const FMA_BATCH_MAX = 64
/** Shorter runs stay as they are. */
export const FMA_BATCH_MIN = 4

const SITE = /^(\s*)([A-Za-z_]\w*(?:\[[A-Za-z_0-9]+\])?) = kp_fma_rn\((.*)\);$/
const COMMENT = /^\s*\/\//
const IDENT = /\b[A-Za-z_]\w*\b/g

interface Site { dst: string; base: string; args: [string, string, string] }

/** The kernel's lines with each run of at least FMA_BATCH_MIN independent exact-fma sites through kp_fma_batch. */
export function batchExactFma(lines: readonly string[]): string[] {
  const out: string[] = []
  let indent = ''
  let sites: Site[] = []
  // the run's lines as written: its sites and the comment lines among them
  let raw: string[] = []
  // comment lines after the run's last site (they belong to what follows)
  let trailing: string[] = []
  const written = new Set<string>()

  const flush = () => {
    if (sites.length >= FMA_BATCH_MIN) {
      const ind = indent
      for (const l of raw) if (COMMENT.test(l)) out.push(l)
      out.push(`${ind}// ${sites.length} independent fma.rn.f32 above: one loop over their operands where fma() is not fused (fma-batch.ts)`)
      out.push(`${ind}if (kp_fma_exact) {`)
      sites.forEach((s, k) => out.push(`${ind}  kp_fma_a[${k}] = ${s.args[0]}; kp_fma_b[${k}] = ${s.args[1]}; kp_fma_c[${k}] = ${s.args[2]};`))
      out.push(`${ind}  kp_fma_batch(${sites.length}u);`)
      sites.forEach((s, k) => out.push(`${ind}  ${s.dst} = kp_fma_c[${k}];`))
      out.push(`${ind}} else {`)
      for (const s of sites) out.push(`${ind}  ${s.dst} = fma(${s.args.join(', ')});`)
      out.push(`${ind}}`)
    } else out.push(...raw)
    out.push(...trailing)
    sites = []
    raw = []
    trailing = []
    written.clear()
  }

  for (const line of lines) {
    if (COMMENT.test(line)) {
      if (sites.length) trailing.push(line)
      else out.push(line)
      continue
    }
    const m = SITE.exec(line)
    const args = m ? topLevelArgs(m[3]!) : []
    if (!m || args.length !== 3) {
      flush()
      out.push(line)
      continue
    }
    const site: Site = { dst: m[2]!, base: m[2]!.replace(/\[.*$/, ''), args: args as [string, string, string] }
    const reads = new Set(m[3]!.match(IDENT) ?? [])
    const dependent = [...written].some((w) => reads.has(w)) || written.has(site.base)
    if (sites.length && (m[1] !== indent || dependent || sites.length === FMA_BATCH_MAX)) flush()
    if (!sites.length) indent = m[1]!
    // (the comment lines since the run's previous site are this site's)
    raw.push(...trailing, line)
    trailing = []
    sites.push(site)
    written.add(site.base)
  }
  flush()
  return out
}
