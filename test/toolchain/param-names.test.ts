// Kernel parameter names (and pointer-ness) read from the CUDA source for the launcher types (issue 16 item 3):
// the reference corpus against nvcc's PTX, then the declarations a regex reader gets wrong.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KernelManifest } from '@kernelpack/offload'
import { mayTakeAggregates, nameKernelParams, parameterIsPointer, parameterName, readKernelDeclarations, readPtxManifest } from '@kernelpack/toolchain'
import { fixturesDir, referencePtxDir, tempDir } from '../helpers/tools.js'

async function named(name: string): Promise<Record<string, string>> {
  const manifest = await readPtxManifest(readFileSync(join(referencePtxDir, `${name}.sm_90.ptx`), 'utf8'))
  const out = nameKernelParams(manifest, [readFileSync(join(fixturesDir, 'reference-cu', `${name}.cu`), 'utf8')])
  const mark = (p: { sourceName?: string; pointer?: boolean }) => `${p.sourceName ?? '?'}${p.pointer === undefined ? '' : p.pointer ? '*' : ''}`
  return Object.fromEntries(out.kernels.map((k) => [k.demangled, k.params.map(mark).join(', ')]))
}

/** A one-kernel manifest whose PTX parameters are `.u64`/`.u32` by `types`. */
function manifestOf(name: string, types: string[], demangled = name): KernelManifest {
  return { kernels: [{ name, demangled, linkage: 'visible', params: types.map((t) => ({ type: t, size: t === 'u64' ? 8 : 4, align: t === 'u64' ? 8 : 4 })) }], variables: [] }
}

const names = (m: KernelManifest) => m.kernels[0]!.params.map((p) => p.sourceName)

// ---
const corpus = suite('nameKernelParams: reference corpus')

corpus('extern "C" kernels: names, and pointers told from size_t', async () => {
  const r = await named('extern_c')
  assert.is(r.saxpy, 'n, a, x*, y*')
  assert.is(r.fill_u32, 'out*, value, n')
})

corpus('templates: every instantiation named from the one definition, explicit instantiations ignored', async () => {
  const r = await named('templates')
  assert.is(r['void axpby<float>(float, float const*, float, float*, int)'], 'a, x*, b, y*, n')
  assert.is(r['void axpby<double>(double, double const*, double, double*, int)'], 'a, x*, b, y*, n')
  assert.is(r['void tiled_copy<short, 64, true>(short const*, short*, int, short, short)'], 'in*, out*, n, lo, hi')
  assert.is(r['void vec_sum<float, 4u>(Vec<float, 4u>, float*)'], 'in, out*')
})

corpus('structs by value, overloads that agree, namespaces and anonymous namespaces', async () => {
  assert.is((await named('structs'))['k_mixed_scalars(char, Mixed, short, Aligned16, bool, Arrays, double)'], 'c, m, s, a, b, arr, d')
  const s = await named('scalars')
  assert.is(s['k_over(int*)'], 'p*')
  assert.is(s['k_over(double*, int)'], 'p*, n')
  const u = await named('unreferenced')
  assert.is(u['void quiet::unrolled<4>(float*)'], 'v*')
  assert.is(u['(anonymous namespace)::lonely_anon(char*)'], 'c*')
})

corpus.run()

// ---
const reader = suite('readKernelDeclarations')

reader('attributes, comments, macros and strings do not confuse it', () => {
  const src = `
#define KERNEL(name) __global__ void name(int bogus)
// __global__ void commented(int nope)
const char *s = "__global__ void quoted(int nope)";
extern "C" __global__ void __launch_bounds__(256, 2) bounded(const float *__restrict__ in, float *out, size_t n) { }
template <typename T, int N = (3 > 2)>
__global__ static void tmpl(T *data, int count = 4) { }
__global__ void cb(void (*fn)(int), int arr[4], unsigned long long seed) {}
`
  const d = readKernelDeclarations(src)
  assert.equal([...d.keys()].sort(), ['bounded', 'cb', 'tmpl'])
  assert.equal(d.get('bounded')![0]!.params.map((p) => p.name), ['in', 'out', 'n'])
  assert.equal(d.get('tmpl')![0]!.params.map((p) => p.name), ['data', 'count'])
  assert.equal(d.get('cb')![0]!.params.map((p) => [p.name, p.pointer]), [['fn', true], ['arr', true], ['seed', false]])
})

reader('parameterName and parameterIsPointer on single declarations', () => {
  assert.is(parameterName('const float *__restrict__ x'), 'x')
  assert.is(parameterName('Vec<float, 4> v'), 'v')
  assert.is(parameterName('int'), undefined)
  assert.is(parameterName('const float *'), undefined)
  assert.is(parameterName('std::size_t n = 16'), 'n')
  assert.is(parameterIsPointer('float &r'), true)
  assert.is(parameterIsPointer('const unsigned long long n'), false)
  assert.is(parameterIsPointer('my_ptr_t p'), undefined, 'a typedef tells nothing')
})

reader.run()

// ---
const settle = suite('nameKernelParams: only what the source settles')

settle('a definition wins over its prototype', () => {
  const m = nameKernelParams(manifestOf('k', ['u64', 'u32']), ['__global__ void k(float *p, int q);\n__global__ void k(float *data, int count) {}'])
  assert.equal(names(m), ['data', 'count'])
})

settle('overloads with the same count that disagree, a count mismatch, or a missing kernel leave argN', () => {
  const two = '__global__ void k(float *a, int n) {}\n__global__ void k(double *b, int m) {}'
  assert.equal(names(nameKernelParams(manifestOf('_Z1kPfi', ['u64', 'u32'], 'k(float*, int)'), [two])), [undefined, undefined])
  assert.equal(names(nameKernelParams(manifestOf('k', ['u64']), ['__global__ void k(float *a, int n) {}'])), [undefined])
  assert.equal(names(nameKernelParams(manifestOf('other', ['u64']), ['__global__ void k(float *a) {}'])), [undefined])
})

settle('a pointer the PTX already marks stays marked; names never repeat', () => {
  const m = manifestOf('k', ['u64'])
  m.kernels[0]!.params[0]!.pointer = true
  assert.is(nameKernelParams(m, ['__global__ void k(my_ptr_t p) {}']).kernels[0]!.params[0]!.pointer, true)
  assert.equal(names(nameKernelParams(manifestOf('k', ['u32', 'u32']), ['__global__ void k(int a, int a) {}'])), [undefined, undefined])
})

settle.run()

const guess = suite('mayTakeAggregates: whether to start the host compile for struct layouts early')

guess('a struct, vector or typedef by value says yes; pointers, scalars and template type parameters no', () => {
  const dir = tempDir('kp-guess-')
  const may = (src: string) => { const f = join(dir, 'k.cu'); writeFileSync(f, src); return mayTakeAggregates(f) }
  assert.is(may('struct P { int n; };\n__global__ void k(P p, float *out) {}'), true)
  assert.is(may('__global__ void k(float2 v, int n) {}'), true)
  assert.is(may('extern "C" __global__ void k(const Params &p) {}'), false, 'a reference is a pointer')
  assert.is(may('__global__ void k(const float *x, unsigned long long n, int64_t m, bool b) {}'), false)
  assert.is(may('template <typename T, int N>\n__global__ void k(T *x, T s, int n) {}'), false, 'T is most often a scalar')
  assert.is(may('template <typename T>\n__global__ void k(Vec<T> v, T *out) {}'), true)
  assert.is(may('// __global__ void k(S s)\nint main() {}'), false, 'comments do not count')
  assert.is(mayTakeAggregates(join(dir, 'missing.cu')), false)
})

guess.run()
