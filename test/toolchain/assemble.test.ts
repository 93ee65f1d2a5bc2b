// Issue 27: nvcc's own plan for several targets. A real target's cubin is assembled by ptxas from the PTX of
// its virtual architecture, the same compile (and cache entry) as that virtual target's own image, so a
// build runs the front end once per virtual architecture and ptxas once per real one. Checked here against
// what a compile of each target from the source gives (compileTarget, the plan before): the same bytes over
// the reference corpus and the -rdc / -lineinfo / defines / -O variants, with nvcc and clang 22; the process
// plan counted through a logging launcher (cold, warm, a target added, a comment edited, a failed front end);
// -G cubins, which the old plan made different on every run, now the same every time.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile, CompileError, findCompiler, parseArchSpec, Pool, processCounter, resolveOptions, type BuildOptions } from '@kernelpack/toolchain'
import { assemblesFromPtx, compileTarget } from '../../packages/toolchain/src/compile.js'
import { countingScript, fixturesDir, loggingLauncher, tempDir, tool } from '../helpers/tools.js'
import { readCubinSymbols, readSectionContents } from './cubin.js'

tool('nvcc')
const clangPath = tool('clang++')
const cuDir = join(fixturesDir, 'reference-cu')
const nvcc = await findCompiler('nvcc')
const clang = await findCompiler(clangPath)
const eq = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b))

/** The sm_80 cubin of a build with `options` and the one compileTarget makes from the source. A first build of
 *  '80' (no cache) is one nvcc process for the file (compileFile, with nvcc, outside -G); `split` also builds
 *  the cubin from a cached compute_80 PTX, by ptxas alone (assembleCubin), and gives that too. */
async function both(compiler: typeof nvcc, file: string, options: BuildOptions, split = false) {
  const built = await buildCudaFile(join(cuDir, file), { arch: '80', compiler: compiler.path, cacheDir: false, ...options })
  const cubin = built.images.find((i) => i.target === 'sm_80')!
  const direct = await compileTarget(compiler, parseArchSpec('sm_80', {})[0]!, join(cuDir, file), resolveOptions(options))
  let assembled: Uint8Array | undefined
  if (split) {
    const cacheDir = tempDir('kp-assemble-split-')
    await buildCudaFile(join(cuDir, file), { arch: 'compute_80', compiler: compiler.path, cacheDir, ...options })
    const before = processCounter.spawned
    const again = await buildCudaFile(join(cuDir, file), { arch: '80', compiler: compiler.path, cacheDir, ...options })
    assert.is(processCounter.spawned - before, 1, 'ptxas alone')
    assembled = again.images.find((i) => i.target === 'sm_80')!.bytes
  }
  return { built, cubin: cubin.bytes, direct: direct.bytes, assembled }
}

const ident = suite('cubins assembled from the PTX of their virtual architecture')

const nvccCases: [string, BuildOptions][] = [
  ['structs.cu', {}], ['structs.cu', { lineinfo: true, defines: { KP_VARIANT: 2 } }], ['structs.cu', { rdc: true }], ['structs.cu', { optimize: 1 }],
  ['templates.cu', {}], ['templates.cu', { rdc: true }], ['static_kernels.cu', {}], ['static_kernels.cu', { rdc: true, lineinfo: true }],
]
for (const [file, options] of nvccCases) {
  ident(`nvcc ${file} ${JSON.stringify(options)}: the same bytes as a compile of sm_80 from the source`, async () => {
    const { cubin, direct, assembled } = await both(nvcc, file, options, file === 'structs.cu')
    assert.ok(eq(cubin, direct), `${file}: ${cubin.length} bytes from the whole-file compile, ${direct.length} compiled from the source`)
    if (assembled) assert.ok(eq(assembled, direct), `${file}: ${assembled.length} bytes assembled from compute_80's PTX, ${direct.length} compiled from the source`)
  })
}

ident('nvcc, a file\'s first build: one process per virtual architecture for 80-real;90 (compute_80\'s front end and sm_80\'s ptxas, compute_90\'s and sm_90\'s), the same PTX and cubins as each step alone', async () => {
  const file = join(cuDir, 'templates.cu')
  // the first whole-file compile of these arguments in the process asks nvcc for its plan (--dryrun, kept)
  let before = processCounter.spawned
  await buildCudaFile(file, { arch: '80-real;90', compiler: 'nvcc', cacheDir: false })
  assert.ok(processCounter.spawned - before <= 4, `${processCounter.spawned - before} processes`)
  before = processCounter.spawned
  const planned = processCounter.planned
  const r = await buildCudaFile(file, { arch: '80-real;90', compiler: 'nvcc', cacheDir: false })
  assert.is(processCounter.planned - planned, 2, 'nvcc\'s steps run from its plan')
  // a process per virtual architecture for the device code (nvcc's steps, compile.ts nvccPlan): no front end
  // twice, no host compile;
  // vec_sum's Vec<T, N> has its C++ layout from gcc -g on the C its device front end wrote and readelf
  // (device-c.ts, param-types.ts), which the first build ran and this process keeps by that C's text
  assert.is(processCounter.spawned - before, 2)
  assert.equal([r.stats.compiles, r.images.map((i) => i.target)], [4, ['sm_80', 'sm_90', 'compute_90']])
  const o = resolveOptions({})
  for (const img of r.images) {
    const alone = await compileTarget(nvcc, parseArchSpec(img.target, {})[0]!, file, o)
    assert.ok(eq(img.bytes, alone.bytes), img.target)
  }
  assert.ok(r.dependencies.some((d) => d.endsWith('/cuda_runtime.h')), 'the dependency list of the device passes')
})

ident('clang structs.cu and templates.cu: the same bytes as clang -c for sm_80 (ptxas run as clang -### says)', async () => {
  for (const file of ['structs.cu', 'templates.cu']) {
    const { cubin, direct } = await both(clang, file, {})
    assert.ok(eq(cubin, direct), file)
  }
})

ident('clang -fgpu-rdc: the cubin\'s static kernels have the names the manifest (the PTX) gives them; compiled apart, they did not', async () => {
  const { built, cubin, direct } = await both(clang, 'static_kernels.cu', { rdc: true })
  const names = (b: Uint8Array) => readCubinSymbols(b).filter((s) => s.entry).map((s) => s.name).sort()
  const manifest = built.manifest.kernels.map((k) => k.name).sort()
  assert.ok(manifest.some((n) => n.includes('__intern__')), `static kernels carry clang's per-compile suffix: ${manifest.join(' ')}`)
  assert.equal(names(cubin), manifest)
  // clang -c and clang -S of one file hash different command lines into the suffix (-fuse-cuid=hash)
  assert.not.equal(names(direct), manifest, 'a separate clang -c named them differently, so a launch by the manifest\'s name missed')
})

ident('nvcc -G: the same bytes in every build (nvcc\'s temporary file names, with its process id, reached the cubin); otherwise what a compile from the source gives', async () => {
  const file = 'scalars.cu'
  const a = await both(nvcc, file, { debug: true })
  const b = await both(nvcc, file, { debug: true })
  assert.ok(eq(a.cubin, b.cubin), 'two builds, the same bytes')
  assert.not.ok(eq(a.direct, b.direct), 'two compiles of the source differ (ptxas records its command line with the temporary file in .note.nv.tkinfo)')
  const sectionsOf = (bytes: Uint8Array) => readSectionContents(bytes).filter((s) => s.name !== '.note.nv.tkinfo')
  const ours = sectionsOf(a.cubin)
  const theirs = sectionsOf(a.direct)
  assert.equal(ours.map((s) => s.name), theirs.map((s) => s.name))
  for (let i = 0; i < ours.length; i++) assert.ok(eq(ours[i]!.bytes, theirs[i]!.bytes), `section ${ours[i]!.name}`)
  const note = (bytes: Uint8Array) => Buffer.from(readSectionContents(bytes).find((s) => s.name === '.note.nv.tkinfo')!.bytes).toString('latin1')
  assert.match(note(a.cubin), 'scalars.ptx -no-bb-merge')
  assert.match(note(a.direct), /tmpxft_[0-9a-f]+_[0-9a-f]+-\d+_scalars\.ptx/)
})

ident('ccache as the launcher keeps one compile of the source per cubin (it cannot cache a .ptx input); other launchers wrap each step', () => {
  const o = resolveOptions({})
  assert.ok(assemblesFromPtx(o))
  assert.not.ok(assemblesFromPtx({ ...o, launcher: ['ccache'] }))
  assert.not.ok(assemblesFromPtx({ ...o, launcher: ['/usr/bin/ccache', '--some-option'] }))
  assert.ok(assemblesFromPtx({ ...o, launcher: ['sccache'] }))
})

ident.run()

// --- the process plan, counted by a logging launcher (every process one line)

const plan = suite('one front end per virtual architecture, ptxas per real one')
const dir = tempDir('kp-assemble-')
const { launcher, log } = loggingLauncher(dir)
const cacheDir = join(dir, 'cache')
const src = join(dir, 'k.cu')
writeFileSync(src, '// version 1\nextern "C" __global__ void scale(float *p, float s, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= s; }\n')
const spawned = (): string[] => {
  const lines = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []
  writeFileSync(log, '')
  return lines
}
const frontEnds = (lines: string[]) => lines.filter((l) => / -ptx /.test(l)).map((l) => /-arch=(\S+)/.exec(l)![1]).sort()
const assemblies = (lines: string[]) => lines.filter((l) => / -cubin /.test(l) && /\.ptx$/.test(l)).map((l) => /-arch=(\S+)/.exec(l)![1]).sort()
const build = (arch: string) => buildCudaFile(src, { arch, compiler: 'nvcc', cacheDir, launcher })

plan('cold 80-real;90: compute_80 and compute_90 once each, ptxas for sm_80 and sm_90; warm: nothing', async () => {
  spawned()
  const cold = await build('80-real;90')
  const lines = spawned()
  assert.equal(frontEnds(lines), ['compute_80', 'compute_90'])
  assert.equal(assemblies(lines), ['sm_80', 'sm_90'])
  assert.is(lines.length, 4, lines.join('\n'))
  assert.equal(cold.stats.compiles, 4)
  assert.equal(cold.images.map((i) => i.target), ['sm_80', 'sm_90', 'compute_90'])
  const warm = await build('80-real;90')
  assert.equal(spawned(), [])
  assert.equal([warm.stats.compiles, warm.stats.cacheHits], [0, 4])
  assert.ok(eq(warm.offload, cold.offload))
})

plan('a target added to a warm cache runs only what it needs: sm_90a\'s front end and ptxas; sm_90 beside a cached compute_90 only ptxas', async () => {
  await build('90-virtual')
  spawned()
  await build('80-real;90a-real;90')
  let lines = spawned()
  assert.equal([frontEnds(lines), assemblies(lines)], [['compute_90a'], ['sm_90a']], lines.join('\n'))
  writeFileSync(src, readFileSync(src, 'utf8').replace('scale(', 'scale2('))
  await build('90-virtual')
  spawned()
  await build('90')
  lines = spawned()
  assert.equal([frontEnds(lines), assemblies(lines)], [[], ['sm_90']], 'the PTX is cached: ptxas alone')
})

plan('a comment edited: the front ends run again, ptxas does not (the PTX is the same)', async () => {
  await build('80-real;90')
  spawned()
  writeFileSync(src, readFileSync(src, 'utf8').replace('// version 1', '// version 2, a comment'))
  const r = await build('80-real;90')
  const lines = spawned()
  assert.equal([frontEnds(lines), assemblies(lines)], [['compute_80', 'compute_90'], []])
  assert.equal([r.stats.compiles, r.stats.cacheHits], [2, 2])
})

plan('a failed front end: one per virtual architecture runs, no ptxas, the error reported once', async () => {
  const bad = join(dir, 'bad.cu')
  writeFileSync(bad, '__global__ void k(int *p) { p[0] = undeclared_name; }\n')
  spawned()
  const err = await buildCudaFile(bad, { arch: '80-real;86-real;90', compiler: 'nvcc', cacheDir, launcher }).catch((e) => e)
  assert.instance(err, CompileError)
  const lines = spawned()
  assert.equal([frontEnds(lines), assemblies(lines)], [['compute_80', 'compute_86', 'compute_90'], []], lines.join('\n'))
  assert.is((err as Error).message.split('is undefined').length - 1, 1, (err as Error).message)
  assert.is((err as CompileError).diagnostics.filter((d) => d.severity === 'error').length, 1)
})

plan('a file\'s virtual architectures compile side by side, a slot each; nvcc --threads 2 in the flags: one nvcc for the file takes two slots of the jobs pool (the bound counts processes), with the same bytes', async () => {
  // an nvcc that counts how many of it run at once
  const counting = countingScript(tempDir('kp-threads-'), 'nvcc', `'${nvcc.path}' "$@"`, { passThrough: ['--version', '--list-gpu-code', '--dryrun'], hold: 0.3 })
  const files = ['scalars.cu', 'templates.cu'].map((f) => join(cuDir, f))
  const most = async (flags: string[], which = files) => {
    counting.reset()
    const jobs = new Pool(2)
    const rs = await Promise.all(which.map((f) => buildCudaFile(f, { arch: '80-real;90', compiler: counting.script, cacheDir: false, jobs, flags })))
    return { most: Math.max(...counting.counts()), runs: counting.counts().length, rs }
  }
  // nvcc itself, not its planned steps (compile.ts nvccPlan), which the counting script would not see
  process.env.KERNELPACK_NVCC_PLAN = '0'
  const plain = await most([]).finally(() => { delete process.env.KERNELPACK_NVCC_PLAN })
  assert.is(plain.most, 2, 'two processes at once')
  // one file: compute_80's process (its front end, sm_80's ptxas) beside compute_90's, not one after the other
  process.env.KERNELPACK_NVCC_PLAN = '0'
  const one = await most([], files.slice(0, 1)).finally(() => { delete process.env.KERNELPACK_NVCC_PLAN })
  assert.equal([one.most, one.runs], [2, 2], 'one file\'s two virtual architectures at once')
  const threaded = await most(['-t', '2'])
  assert.is(threaded.most, 1, 'each nvcc runs two steps at once: one file at a time')
  assert.equal(threaded.rs.map((r) => Buffer.from(r.offload).toString('hex')), plain.rs.map((r) => Buffer.from(r.offload).toString('hex')))
})

plan.run()
