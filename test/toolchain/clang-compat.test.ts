// clang 22 next to nvcc (issue 14): the force-included compatibility header (cache-hint stores), the warning
// for a static device variable clang removes, and the note on a __shared__ variable clang refuses.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { buildCudaFile, clangCompatHeader, CompileError, compileArgs, findCompiler, parseArchSpec, resolveOptions } from '@kernelpack/toolchain'
import { loadModule } from '@kernelpack/runtime'
import { fixturesDir, tool } from '../helpers/tools.js'

const dir = join(fixturesDir, 'toolchain', 'clang-compat')
const cudaPath = join(tool('nvcc'), '..', '..')
const clang = tool('clang++')
const ptxOf = (r: Awaited<ReturnType<typeof buildCudaFile>>) => new TextDecoder().decode(r.images[0]!.bytes)

// ---
const compat = suite('clang compatibility header')

compat('__stcs/__stcg/__stwb build with clang as with nvcc, into the cache-hint stores', async () => {
  const file = join(dir, 'cache-hints.cu')
  const ptx = ptxOf(await buildCudaFile(file, { arch: 'compute_80', compiler: clang, cacheDir: false }))
  assert.match(ptx, /st\.global\.cs\.f32/)
  assert.match(ptx, /st\.global\.cg\.v4\.f32/)
  assert.match(ptx, /st\.global\.wb\.s32/)
  await buildCudaFile(file, { arch: 'compute_80', compiler: 'nvcc', cacheDir: false })
})

compat('the header is what makes them build: KERNELPACK_NO_CLANG_COMPAT leaves it out', async () => {
  try {
    await buildCudaFile(join(dir, 'cache-hints.cu'), { arch: 'compute_80', compiler: clang, cacheDir: false, defines: { KERNELPACK_NO_CLANG_COMPAT: true } })
    assert.unreachable('should not build')
  } catch (e) {
    assert.instance(e, CompileError)
    const errors = (e as CompileError).diagnostics.filter((d) => d.severity === 'error')
    assert.match(errors[0]!.message, /use of undeclared identifier '__stcs'/)
  }
})

compat('force-included for clang only, under a name that changes with its text; not a dependency of the build', async () => {
  const [target] = parseArchSpec('compute_80')
  const io = { input: 'k.cu', output: '<out>', depfile: '<deps>', includeDirs: [] }
  const cl = compileArgs(await findCompiler(clang, { cudaPath }), target!, resolveOptions({}), io)
  const at = cl.indexOf('-include')
  assert.ok(at > 0 && /kernelpack-clang-compat-[0-9a-f]{12}\.h$/.test(cl[at + 1]!), cl.join(' '))
  assert.not.ok(compileArgs(await findCompiler('nvcc'), target!, resolveOptions({}), io).includes('-include'))
  assert.match(clangCompatHeader(), /#if defined\(__clang__\) && defined\(__CUDA__\)/)
  const r = await buildCudaFile(join(dir, 'cache-hints.cu'), { arch: 'compute_80', compiler: clang, cacheDir: false })
  assert.not.ok(r.dependencies.some((d) => d.includes('kernelpack-clang-compat')), r.dependencies.join('\n'))
})

// ---
const statics = suite('static device variables clang removes')

statics('a build warning names the variable, its line and the fix; nvcc keeps the variable and does not warn', async () => {
  const file = join(dir, 'statics.cu')
  const r = await buildCudaFile(file, { arch: 'compute_80', compiler: clang, cacheDir: false })
  const w = r.warnings.filter((d) => d.code === 'kernelpack')
  assert.equal(w.map((d) => [d.file, d.line, d.column]), [[file, 3, 27]])
  assert.match(w[0]!.message, /^static __constant__ variable 'coeffs' is not in the device code clang built: .*declare it without 'static'/)
  // clang kept the others (the kernel writes `counter`; `kept` has external linkage)
  assert.ok(r.manifest.variables.some((v) => v.name === 'kept') && r.manifest.variables.some((v) => /counter/.test(v.name)), JSON.stringify(r.manifest.variables))
  const n = await buildCudaFile(file, { arch: 'compute_80', compiler: 'nvcc', cacheDir: false })
  assert.equal(n.warnings.filter((d) => d.code === 'kernelpack'), [])
  assert.ok(n.manifest.variables.some((v) => /coeffs/.test(v.name)))
})

statics('mod.global() of such a variable says why it is missing', async () => {
  const r = await buildCudaFile(join(dir, 'statics.cu'), { arch: 'compute_80', compiler: clang, cacheDir: false })
  const mod = await loadModule(r.offload, r.manifest, { backend: 'emulator' })
  try {
    await mod.global('_ZL6coeffs')
    assert.unreachable('should throw')
  } catch (e) {
    assert.match((e as Error).message, /is not a \.global\/\.const variable of this PTX module \(clang removes a static __constant__ or __device__ variable that no device code writes: declare it without 'static'\)/)
  }
})

// ---
const shared = suite('__shared__ variables clang refuses')

shared('a __shared__ cuda::barrier: clang\'s error is followed by a note with the cause and what to write instead', async () => {
  try {
    await buildCudaFile(join(dir, 'shared-barrier.cu'), { arch: 'compute_80', compiler: clang, cacheDir: false })
    assert.unreachable('clang should refuse it')
  } catch (e) {
    assert.instance(e, CompileError)
    const [err, note] = (e as CompileError).diagnostics
    assert.equal([err!.severity, err!.line, note!.severity, note!.line, note!.code], ['error', 4, 'note', 4, 'kernelpack'])
    assert.match(err!.message, /initialization is not supported for __shared__ variables/)
    assert.match(note!.message, /empty constructor and an empty destructor .*reinterpret_cast<T \*>\(storage\)/)
  }
  await buildCudaFile(join(dir, 'shared-barrier.cu'), { arch: 'compute_80', compiler: 'nvcc', cacheDir: false })
})

compat.run()
statics.run()
shared.run()
