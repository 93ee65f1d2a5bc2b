import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { nameKernelParams, readPtxManifest } from '@kernelpack/toolchain'
import { declarationPath, emitLoaderDts, isGeneratedDeclaration, paramLabels, paramTsType } from '@kernelpack/codegen'
import { fixturesDir } from '../helpers/tools.js'
import { matchSnapshot } from '../helpers/snapshot.js'

// Manifests read from nvcc 13.0's PTX (reference/nvcc/*.sm_90.ptx, copied to test/fixtures/unplugin/ptx/).
const manifest = async (name: string) => readPtxManifest(readFileSync(join(fixturesDir, 'unplugin', 'ptx', `${name}.sm_90.ptx`), 'utf8'))

// ---
const param = suite('paramTsType')

param('maps PTX scalars, pointers and by-value aggregates', () => {
  assert.is(paramTsType({ type: 'u32', size: 4, align: 4 }), 'number')
  assert.is(paramTsType({ type: 'f64', size: 8, align: 8 }), 'number')
  assert.is(paramTsType({ type: 'u64', size: 8, align: 8 }, 'long'), 'bigint | number')
  assert.is(paramTsType({ type: 'u64', size: 8, align: 8 }, 'float const*'), 'DevicePointer')
  assert.is(paramTsType({ type: 'u64', size: 8, align: 8, pointer: true }), 'DevicePointer')
  assert.is(paramTsType({ type: 'u64', size: 8, align: 8 }), 'DevicePointer | bigint | number')
  assert.is(paramTsType({ type: 'b8', size: 32, align: 8, count: 32 }), 'StructArg')
})

param.run()

// ---
const dts = suite('emitLoaderDts')

dts('templates.cu, extern_c.cu and structs.cu match their snapshots', async () => {
  for (const n of ['templates', 'extern_c', 'structs']) {
    matchSnapshot(emitLoaderDts({ manifest: await manifest(n), name: `${n}.cu` }), `unplugin/snapshots/${n}.cu.d.ts`)
  }
})

dts('types each argument of a template instantiation from the PTX and its C++ signature', async () => {
  const text = emitLoaderDts({ manifest: await manifest('templates'), name: 'templates.cu' })
  assert.match(text, 'export declare const axpby_float: Launcher<[arg0: number, arg1: DevicePointer, arg2: number, arg3: DevicePointer, arg4: number]>;')
  assert.match(text, 'export declare const tiled_copy_long_256_false: Launcher<[arg0: DevicePointer, arg1: DevicePointer, arg2: number, arg3: bigint | number, arg4: bigint | number]>;')
  assert.match(text, 'export declare const vec_sum: Launcher<[arg0: StructArg, arg1: DevicePointer]>;')
})

dts('launchers carry the parameter names of the .cu source where the manifest has them', async () => {
  const source = readFileSync(join(fixturesDir, 'reference-cu', 'extern_c.cu'), 'utf8')
  const text = emitLoaderDts({ manifest: nameKernelParams(await manifest('extern_c'), [source]), name: 'extern_c.cu' })
  assert.match(text, 'export declare const saxpy: Launcher<[n: number, a: number, x: DevicePointer, y: DevicePointer]>;')
  // size_t is no pointer although its PTX type (.u64) is a pointer's
  assert.match(text, 'export declare const fill_u32: Launcher<[out: DevicePointer, value: number, n: bigint | number]>;')
})

dts('labels: reserved words get a `_`, repeats and non-identifiers fall back to argN', () => {
  const p = (sourceName?: string) => ({ type: 'u32', size: 4, align: 4, ...(sourceName ? { sourceName } : {}) })
  assert.equal(paramLabels([p('n'), p('new'), p(), p('x'), p('x'), p('a-b')]), ['n', 'new_', 'arg2', 'arg3', 'arg4', 'arg5'])
})

dts('declarationPath: <name>.cu.d.ts (bundler) or <name>.d.cu.ts (allowArbitraryExtensions: node16/nodenext)', () => {
  assert.is(declarationPath('/p/src/saxpy.cu'), '/p/src/saxpy.cu.d.ts')
  assert.is(declarationPath('/p/src/saxpy.cu', 'd.cu.ts'), '/p/src/saxpy.d.cu.ts')
  assert.is(declarationPath('C:\\p\\k.v2.cu', 'd.cu.ts'), 'C:\\p\\k.v2.d.cu.ts')
  assert.ok(isGeneratedDeclaration(emitLoaderDts({ manifest: { kernels: [], variables: [] }, name: 'k.cu' })))
  assert.not.ok(isGeneratedDeclaration('// my own types\n'))
})

dts.run()
