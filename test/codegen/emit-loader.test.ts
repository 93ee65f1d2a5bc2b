import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { readPtxManifest } from '@kernelpack/toolchain'
import type { KernelManifest } from '@kernelpack/offload'
import { emitLoaderStub, emitManifestStub, emitRawStub, emitUrlStub, nameKernelExports, splitSignature, KernelNameCollisionError } from '@kernelpack/codegen'
import { fixturesDir, repoRoot } from '../helpers/tools.js'
import { matchSnapshot } from '../helpers/snapshot.js'

// Manifests read from nvcc 13.0's PTX of ../shared/reference/cu/{templates,extern_c,structs}.cu
// (copied from reference/nvcc/*.sm_90.ptx into test/fixtures/unplugin/ptx/).
const ptx = (name: string) => readFileSync(join(fixturesDir, 'unplugin', 'ptx', `${name}.sm_90.ptx`), 'utf8')
const manifests: Record<string, KernelManifest> = {}
for (const n of ['templates', 'extern_c', 'structs']) manifests[n] = await readPtxManifest(ptx(n))

const urlAsset = { kind: 'expression' as const, expression: 'new URL("./k.0123.offload", import.meta.url)' }

// ---
const split = suite('splitSignature')

split('drops the return type of a function template and splits parameters at top level', () => {
  assert.equal(splitSignature('void tiled_copy<unsigned char, 128, true>(unsigned char const*, unsigned char*, int)'), {
    qualified: 'tiled_copy<unsigned char, 128, true>',
    params: ['unsigned char const*', 'unsigned char*', 'int'],
  })
  assert.equal(splitSignature('ns::k(Vec<float, 4u>, float*)'), { qualified: 'ns::k', params: ['Vec<float, 4u>', 'float*'] })
  assert.equal(splitSignature('k()'), { qualified: 'k', params: [] })
})

split.run()

// ---
const names = suite('nameKernelExports')

names('extern "C" kernels keep their C name', () => {
  assert.equal(nameKernelExports(manifests.extern_c!).map((e) => e.exportName), ['saxpy', 'fill_u32', 'scale_inplace'])
})

names('overloads and template instantiations get unique readable names', () => {
  const got = nameKernelExports(manifests.templates!).map((e) => e.exportName)
  assert.equal(got, ['axpby_float', 'axpby_double', 'axpby_int', 'tiled_copy_unsigned_char_128_true', 'tiled_copy_long_256_false', 'tiled_copy_short_64_true', 'vec_sum'])
  assert.equal(new Set(got).size, got.length)
})

names('a single mangled kernel gets its plain function name', () => {
  assert.equal(nameKernelExports(manifests.structs!).map((e) => e.exportName), ['k_mixed', 'k_arrays', 'k_nested', 'k_params', 'k_mixed_scalars'])
})

names('a mangled kernel yields its name to an extern "C" kernel of the same name', () => {
  const m: KernelManifest = { kernels: [
    { name: '_Z5scalePfi', demangled: 'scale(float*, int)', linkage: 'visible', params: [] },
    { name: 'scale', demangled: 'scale', linkage: 'visible', params: [] },
  ], variables: [] }
  assert.equal(nameKernelExports(m).map((e) => e.exportName), ['scale_float_ptr_int', 'scale'])
})

names('an extern "C" kernel named like a stub export is a collision error naming the file', () => {
  const m: KernelManifest = { kernels: [{ name: 'module', demangled: 'module', linkage: 'visible', params: [] }], variables: [] }
  try {
    nameKernelExports(m, 'src/k.cu')
    assert.unreachable('should throw')
  } catch (e) {
    assert.instance(e, KernelNameCollisionError)
    assert.match((e as Error).message, 'src/k.cu')
    assert.match((e as Error).message, '"module"')
  }
})

names('a name unsafe for JS is escaped in the kernels map', () => {
  const m: KernelManifest = { kernels: [{ name: '_Z1kv', demangled: 'k<"*/">()', linkage: 'visible', params: [] }], variables: [] }
  const stub = emitLoaderStub({ manifest: m, asset: urlAsset, name: 'x.cu' })
  assert.ok(stub.includes(JSON.stringify('k<"*/">()')))
  assert.not.ok(stub.includes('/** k<"*/">() */'))
})

names.run()

// ---
const stub = suite('emitLoaderStub')

stub('templates.cu stub matches its snapshot', () => {
  matchSnapshot(emitLoaderStub({ manifest: manifests.templates!, asset: urlAsset, name: 'templates.cu', images: [{ target: 'sm_90', arch: 'sm_90', kind: 'cubin', size: 100 }] }), 'unplugin/snapshots/templates.stub.js')
})

stub('extern_c.cu stub with inlined bytes and HMR glue matches its snapshot', () => {
  matchSnapshot(emitLoaderStub({ manifest: manifests.extern_c!, asset: { kind: 'inline', bytes: new Uint8Array([0x10, 0xff, 0x10, 0xad]) }, name: 'extern_c.cu', backend: 'emulator', hot: true }), 'unplugin/snapshots/extern_c.inline-hot.stub.js')
})

stub('check: the stub passes the sanitizer setting to loadModule; without it the stub has no check line', () => {
  const on = emitLoaderStub({ manifest: manifests.extern_c!, asset: urlAsset, name: 'e.cu', check: { race: true, mode: 'collect' } })
  assert.match(on, '  backend: "auto",\n  check: {"race":true,"mode":"collect"},\n')
  assert.not.match(emitLoaderStub({ manifest: manifests.extern_c!, asset: urlAsset, name: 'e.cu' }), 'check')
})

stub("backend 'webgpu' (issue 15): the stub's module asks loadModule for it; load({ backend }) still overrides it", async () => {
  const dir = join(repoRoot, 'test', '.out', 'emit-loader')
  mkdirSync(dir, { recursive: true })
  // the stub's runtime: the real createKernelModule over a loadModule that records what it is asked
  writeFileSync(join(dir, 'recording-runtime.mjs'), [
    `import { createKernelModule } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'packages', 'runtime', 'src', 'kernel-module.ts')).href)}`,
    'export const asked = []',
    'export const defineKernelModule = (spec) => createKernelModule(spec, async (_source, _manifest, options) => (asked.push(options), { backend: { name: options.backend }, unload: async () => {} }))',
    '',
  ].join('\n'))
  const text = emitLoaderStub({ manifest: manifests.extern_c!, asset: urlAsset, name: 'e.cu', backend: 'webgpu', runtime: './recording-runtime.mjs' })
  assert.match(text, '  name: "e.cu",\n  backend: "webgpu",\n  manifest: ')
  writeFileSync(join(dir, 'webgpu.stub.mjs'), text)
  const mod = await import(pathToFileURL(join(dir, 'webgpu.stub.mjs')).href)
  const runtime = await import(pathToFileURL(join(dir, 'recording-runtime.mjs')).href)
  assert.is((await mod.module.load()).backend.name, 'webgpu')
  await mod.module.unload()
  assert.is((await mod.module.load({ backend: 'emulator' })).backend.name, 'emulator')
  assert.equal(runtime.asked, [{ backend: 'webgpu' }, { backend: 'emulator' }])
})

stub('an eager asset expression is evaluated when the stub runs, a lazy one at first load', () => {
  const eager = emitLoaderStub({ manifest: manifests.extern_c!, asset: { kind: 'expression', expression: 'here()', eager: true }, name: 'e.cu' })
  assert.match(eager, '  source: ((source) => () => source)(here()),')
  const lazy = emitLoaderStub({ manifest: manifests.extern_c!, asset: { kind: 'expression', expression: 'here()' }, name: 'e.cu' })
  assert.match(lazy, '  source: () => here(),')
})

stub('same inputs give byte-identical stubs', () => {
  const a = emitLoaderStub({ manifest: manifests.structs!, asset: urlAsset, name: 'structs.cu' })
  const b = emitLoaderStub({ manifest: structuredClone(manifests.structs!), asset: urlAsset, name: 'structs.cu' })
  assert.is(a, b)
})

stub('module.types: a stub passes the runtime\'s namedValueTypes only where the manifest names a struct (a page without one never loads the schema codecs)', async () => {
  const dir = join(repoRoot, 'test', '.out', 'emit-loader')
  mkdirSync(dir, { recursive: true })
  // k_params(Params) with the compiler's layout of Params, as the build adds it (param-types.ts)
  const typed = structuredClone(manifests.structs!)
  const k = typed.kernels.find((x) => x.name === '_Z8k_params6Params')!
  k.params[0]!.valueType = { kind: 'struct', name: 'Params', size: 48, align: 16, fields: [{ name: 'scale', offset: 0, type: { kind: 'scalar', name: 'f32' } }, { name: 'n', offset: 4, type: { kind: 'scalar', name: 'i32' } }] }
  const runtime = pathToFileURL(join(repoRoot, 'packages', 'runtime', 'src', 'browser.ts')).href
  const withTypes = emitLoaderStub({ manifest: typed, asset: urlAsset, name: 's.cu', runtime })
  assert.match(withTypes, /^import \{ defineKernelModule, namedValueTypes \} from /m)
  assert.match(withTypes, '\n  valueTypes: namedValueTypes,\n});')
  const without = emitLoaderStub({ manifest: manifests.structs!, asset: urlAsset, name: 's.cu', runtime })
  assert.not.match(without, 'namedValueTypes')
  writeFileSync(join(dir, 'types.stub.mjs'), withTypes)
  writeFileSync(join(dir, 'no-types.stub.mjs'), without)
  const a = await import(pathToFileURL(join(dir, 'types.stub.mjs')).href)
  assert.equal(Object.keys(a.module.types), ['Params'])
  assert.is(a.module.types.Params.decode(a.module.types.Params.encode({ scale: 1.5, n: -3 })).n, -3)
  const b = await import(pathToFileURL(join(dir, 'no-types.stub.mjs')).href)
  assert.equal(Object.keys(b.module.types), [])
  // a stub from before valueTypes over a manifest that names one: a clear error, not an empty list
  const { defineKernelModule } = await import(runtime)
  const old = defineKernelModule({ name: 'old.cu', manifest: typed, images: [], backend: 'auto', source: () => new Uint8Array() })
  assert.throws(() => old.types, /old\.cu: module\.types needs valueTypes, which older stubs lack: rebuild the app/)
})

stub('the stub evaluates: launchers per kernel, kernels map by full name, module info', async () => {
  const dir = join(repoRoot, 'test', '.out', 'emit-loader')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'templates.stub.mjs')
  writeFileSync(file, emitLoaderStub({ manifest: manifests.templates!, asset: urlAsset, name: 'templates.cu', images: [{ target: 'compute_90', arch: 'sm_90', kind: 'ptx', size: 7 }] }))
  const mod = await import(pathToFileURL(file).href)
  assert.is(mod.axpby_float.entry, '_Z5axpbyIfEvT_PKS0_S0_PS0_i')
  assert.is(mod.kernels['void axpby<double>(double, double const*, double, double*, int)'], mod.axpby_double)
  assert.is(Object.keys(mod.kernels).length, 7)
  assert.is(mod.default, mod.kernels)
  assert.is(mod.module.name, 'templates.cu')
  assert.equal(mod.module.images, [{ target: 'compute_90', arch: 'sm_90', kind: 'ptx', size: 7 }])
})

stub.run()

// ---
const queries = suite('query stubs')

queries('?manifest is the manifest as JSON, ?raw and inline ?url decode to the same bytes', async () => {
  const dir = join(repoRoot, 'test', '.out', 'emit-loader')
  mkdirSync(dir, { recursive: true })
  const bytes = new Uint8Array([0x10, 0xff, 0x10, 0xad, 1, 0, 0, 0, 255])
  writeFileSync(join(dir, 'm.mjs'), emitManifestStub(manifests.extern_c!))
  writeFileSync(join(dir, 'r.mjs'), emitRawStub({ bytes }))
  writeFileSync(join(dir, 'u.mjs'), emitUrlStub({ asset: { kind: 'inline', bytes } }))
  const m = await import(pathToFileURL(join(dir, 'm.mjs')).href)
  const r = await import(pathToFileURL(join(dir, 'r.mjs')).href)
  const u = await import(pathToFileURL(join(dir, 'u.mjs')).href)
  assert.equal(m.default, manifests.extern_c)
  assert.equal([...r.default], [...bytes])
  assert.equal([...Buffer.from(u.default.split(',')[1], 'base64')], [...bytes])
})

queries.run()
