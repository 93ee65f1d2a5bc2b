// Issue 27: a file's first build runs nvcc's own steps from its plan (compile.ts nvccPlan: what `nvcc --dryrun`
// prints for the whole-file compile, asked once per compiler, arguments and environment, the file and its folder
// filled in), one `sh -e` per virtual architecture of a file (its front end and the ptxas of its real targets)
// instead of nvcc. Checked against nvcc itself (KERNELPACK_NVCC_PLAN=0) on the
// reference corpus and the -rdc / -lineinfo / defines / -O variants: the same offload binary, manifest,
// dependencies and warnings; the same diagnostics for a file that does not compile; a file whose name is not
// shell-safe (staged, compile.ts stage); and a plan nvcc says anything else beside (a warning of its own) left to
// nvcc, so that the warning still reaches the build.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile, CompileError, findCompiler, parseArchSpec, processCounter, type BuildOptions, type BuildResult } from '@kernelpack/toolchain'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'

tool('nvcc')
const nvcc = await findCompiler('nvcc')
const cuDir = join(fixturesDir, 'reference-cu')

/** The processes a plan runs for an arch set: one per virtual architecture. */
const pieces = (arch: string) => new Set(parseArchSpec(arch, { supported: nvcc.archs }).map((t) => `${t.sm}${t.suffix}`)).size

/** A build of `file` with its plan (counted) and one with nvcc itself. */
async function both(file: string, options: BuildOptions = {}): Promise<{ planned: BuildResult; nvcc: BuildResult; plans: number }> {
  const o: BuildOptions = { arch: '80-real;90', compiler: nvcc.path, cacheDir: false, ...options }
  const before = processCounter.planned
  const planned = await buildCudaFile(file, o)
  const plans = processCounter.planned - before
  process.env.KERNELPACK_NVCC_PLAN = '0'
  try {
    return { planned, nvcc: await buildCudaFile(file, o), plans }
  } finally {
    delete process.env.KERNELPACK_NVCC_PLAN
  }
}

function same(a: BuildResult, b: BuildResult, what: string): void {
  assert.ok(Buffer.from(a.offload).equals(Buffer.from(b.offload)), `${what}: the offload binaries differ`)
  assert.equal(a.images.map((i) => i.target), b.images.map((i) => i.target), what)
  assert.equal(a.manifest, b.manifest, `${what}: manifest`)
  assert.equal(a.dependencies, b.dependencies, `${what}: dependencies`)
  assert.equal(a.warnings, b.warnings, `${what}: warnings`)
}

const plan = suite('nvcc\'s planned steps against nvcc itself')

const files = readdirSync(cuDir).filter((n) => n.endsWith('.cu') && n !== 'bad.cu').sort()
plan(`the reference corpus (${files.length} files), '80-real;90': the same outputs, each from its plan`, async () => {
  for (const f of files) {
    const r = await both(join(cuDir, f))
    assert.is(r.plans, 2, `${f}: built from nvcc's plan, one process for compute_80 and sm_80, one for compute_90 and sm_90`)
    same(r.planned, r.nvcc, f)
  }
})

const variants: [string, BuildOptions][] = [
  ['templates.cu', { rdc: true }], ['structs.cu', { lineinfo: true, defines: { KP_VARIANT: 2 } }], ['static_kernels.cu', { optimize: 1 }],
  ['templates.cu', { arch: '75-real;80-real;86-real;89-real;90' }],
]
plan('-rdc, -lineinfo with defines, -O1, five targets: the same outputs', async () => {
  for (const [f, options] of variants) {
    const r = await both(join(cuDir, f), options)
    assert.is(r.plans, pieces(String(options.arch ?? '80-real;90')), `${f} ${JSON.stringify(options)}: built from nvcc's plan`)
    same(r.planned, r.nvcc, `${f} ${JSON.stringify(options)}`)
  }
})

plan('a file that does not compile: the same diagnostics', async () => {
  const fail = async (env: boolean): Promise<CompileError> => {
    if (env) process.env.KERNELPACK_NVCC_PLAN = '0'
    try {
      await buildCudaFile(join(cuDir, 'bad.cu'), { arch: '80-real;90', compiler: nvcc.path, cacheDir: false })
    } catch (err) {
      if (err instanceof CompileError) return err
      throw err
    } finally {
      delete process.env.KERNELPACK_NVCC_PLAN
    }
    throw new Error('bad.cu compiled')
  }
  const before = processCounter.planned
  const a = await fail(false)
  assert.is(processCounter.planned - before, 2, 'failed from nvcc\'s plan (both virtual architectures)')
  const b = await fail(true)
  assert.ok(a.diagnostics.some((d) => d.severity === 'error'), 'an error')
  assert.equal(a.diagnostics, b.diagnostics)
  assert.is(a.message, b.message)
  // nvcc's arguments, each compile in a folder of its own
  const cmd = (e: CompileError) => e.details.command?.map((x) => x.replace(/\/file-\d+/g, '/file-N'))
  assert.equal(cmd(a), cmd(b), 'the command named is nvcc\'s')
  assert.is(a.details.command![0], nvcc.path)
})

plan('a file whose name is not shell-safe (staged for nvcc): the same outputs from the plan', async () => {
  const dir = tempDir('kp-plan-name-')
  const file = join(dir, 'my "kernel" $x.cu')
  writeFileSync(file, 'extern "C" __global__ void k(float *p, float s) { p[threadIdx.x] *= s; }\n')
  const r = await both(file)
  assert.is(r.plans, 2, 'built from nvcc\'s plan')
  same(r.planned, r.nvcc, 'the staged file')
  assert.is(r.planned.dependencies[0], file)
})

plan('nvcc printing a warning of its own beside the plan: nvcc runs, and the warning reaches the build', async () => {
  const dir = tempDir('kp-plan-warn-')
  const script = join(dir, 'nvcc')
  writeFileSync(script, `#!/bin/sh\necho 'nvcc warning : a warning of the driver (test)' >&2\nexec '${nvcc.path}' "$@"\n`)
  chmodSync(script, 0o755)
  const file = join(dir, 'k.cu')
  writeFileSync(file, 'extern "C" __global__ void k(int *p) { p[0] = 1; }\n')
  const before = processCounter.planned
  const r = await buildCudaFile(file, { arch: '80-real;90', compiler: script, cacheDir: false })
  assert.is(processCounter.planned - before, 0, 'not built from a plan')
  assert.ok(r.warnings.some((w) => /a warning of the driver \(test\)/.test(w.message)), JSON.stringify(r.warnings))
})

plan.run()
