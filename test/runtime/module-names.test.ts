// `mod.global(name)` and `mod.kernel(name)` (issue 17 item 10): a __constant__/__device__ variable as a
// buffer-like handle (cudaMemcpyToSymbol/FromSymbol) on the emulator and on the cuda backend (cuModuleGetGlobal,
// through the libcuda test double); kernels by PTX name, demangled signature and the stub's export name,
// with the candidates listed when none matches; names like __proto__ and constructor find only what they name.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { nameKernelExports } from '@kernelpack/codegen'
import { CudaError, loadModule } from '@kernelpack/runtime'
import { loadGlobalsFixture } from './globals-fixture.js'
import { rejects } from './rejects.js'

const { ptx, manifest, td } = await loadGlobalsFixture()

const emu = await loadModule(ptx, manifest, { backend: 'emulator' })
const cuda = await loadModule(ptx, manifest, { backend: 'cuda', libcudaPath: td.path })

// ---
const Globals = suite('mod.global(name): a DeviceBuffer-like handle')

for (const mod of [emu, cuda]) {
  Globals(`${mod.backend.name}: upload/download/fill/address/byteLength of __constant__ and __device__ variables`, async () => {
    const coeffs = await mod.global('coeffs')
    assert.is(coeffs.name, 'coeffs')
    assert.is(coeffs.space, 'const')
    assert.is(coeffs.byteLength, 16)
    assert.is(coeffs.size, 16)
    assert.is(typeof coeffs.address, 'bigint')
    await coeffs.upload(new Float32Array([2, 1, 0, 0]))
    assert.equal(Array.from(await coeffs.download(new Float32Array(4))), [2, 1, 0, 0])
    await coeffs.write(new Float32Array([3]))
    assert.equal(Array.from(await coeffs.download(new Float32Array(4))), [3, 1, 0, 0])
    const table = await mod.global('_ZN2ns5tableE')
    assert.is(table.space, 'global')
    assert.is(table.byteLength, 64)
    await table.fill(0xff)
    assert.equal(Array.from(await table.download()), new Array(64).fill(0xff))
    await table.fill(0)
    await rejects(() => coeffs.upload(new Float32Array(5)), (e) => e instanceof RangeError && /20 bytes do not fit in 16/.test(e.message))
    assert.is(await mod.global('coeffs'), coeffs, 'one handle per variable')
  })

  Globals(`${mod.backend.name}: an unknown name (or __proto__, constructor, toString) lists the module's variables`, async () => {
    for (const name of ['nope', '__proto__', 'constructor', 'toString']) {
      await rejects(() => mod.global(name), (e) => e.message.includes(`no variable ${JSON.stringify(name)} in the loaded image`) &&
        e.message.endsWith('variables: coeffs, counter, _ZN2ns5tableE'))
    }
  })
}

Globals('emulator: kernels read what upload wrote, write what download reads, and take the handle as a pointer', async () => {
  const coeffs = await emu.global('coeffs')
  await coeffs.upload(new Float32Array([2, 1, 0, 0]))
  const x = await emu.upload(new Float32Array([0, 1, 2, 3, 4]))
  await emu.kernel('scale<float>').launch({ grid: 1, block: 32 }, x, 5)
  await emu.synchronize()
  assert.equal(Array.from(await x.download(new Float32Array(5))), [1, 3, 5, 7, 9])
  const counter = await emu.global('counter')
  await counter.fill(0)
  await emu.kernel('count').launch({ grid: 3, block: 32 }, 20)
  await emu.synchronize()
  assert.equal(Array.from(await counter.download(new Int32Array(1))), [60])
  await emu.kernel('fill_table').launch({ grid: 1, block: 8 }, 0.5)
  await emu.synchronize()
  assert.equal(Array.from(await (await emu.global('_ZN2ns5tableE')).download(new Float64Array(8))), [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5])
  // the extern "C" kernel named `constructor` writes 7 through its pointer: here, into `counter`
  await emu.kernel('constructor').launch({ grid: 1, block: 1 }, counter)
  await emu.synchronize()
  assert.equal(Array.from(await counter.download(new Int32Array(1))), [7])
})

Globals('cuda: the handle is cuModuleGetGlobal\'s address and size; an unknown name is the driver\'s CUDA_ERROR_NOT_FOUND', async () => {
  td.clearLog()
  const counter = await cuda.global('counter')
  assert.match(td.log(), /^cuModuleGetGlobal counter$/m)
  await counter.upload(new Int32Array([41]))
  assert.equal(Array.from(await counter.download(new Int32Array(1))), [41])
  await rejects(() => cuda.global('missing'), (e) => e.cause instanceof CudaError && (e.cause as CudaError).codeName === 'CUDA_ERROR_NOT_FOUND' && /no variable "missing"/.test(e.message))
  await cuda.kernel('constructor').launch({ grid: 1, block: 1 }, counter)
  assert.match(td.log(), new RegExp(`param 0 addr%16=\\d+ ${Buffer.from(new BigUint64Array([counter.address]).buffer).toString('hex')}`), 'the handle passed as the pointer')
})

Globals.run()

// ---
const Kernels = suite('mod.kernel(name): PTX name, demangled signature, the stub\'s export name')

Kernels('every kernel answers to its PTX name, its signature and the name the stub exports it under: one Kernel for all', () => {
  const stubNames = nameKernelExports(manifest, 'globals.cu')
  for (const mod of [emu, cuda]) {
    for (const e of stubNames) {
      const k = mod.kernel(e.kernel.name)
      assert.is(k.exportName, e.exportName)
      assert.is(mod.kernel(e.kernel.demangled), k, e.kernel.demangled)
      assert.is(mod.kernel(e.exportName), k, e.exportName)
    }
    assert.is(mod.kernel('scale<double>').name, '_Z5scaleIdEvPT_i')
    assert.is(mod.kernel('scale_float').name, '_Z5scaleIfEvPT_i')
    assert.is(mod.kernel('void scale<float>(float*, int)').name, '_Z5scaleIfEvPT_i')
    assert.is(mod.kernel('count').name, '_Z5counti')
    assert.is(mod.kernel('constructor').name, 'constructor')
  }
})

Kernels('no match (or an ambiguous one) lists every kernel under all its names', () => {
  const list = '_Z5scaleIfEvPT_i (void scale<float>(float*, int); scale_float), _Z5scaleIdEvPT_i (void scale<double>(double*, int); scale_double), ' +
    '_Z5counti (count(int); count), _Z10fill_tabled (fill_table(double); fill_table), constructor, shared_rotate'
  assert.throws(() => emu.kernel('scale'), (e: Error) => e.message.endsWith(`no kernel "scale" (ambiguous: 2 overloads; use the PTX name, the full signature or the stub's export name); kernels (PTX name (signature; export name)): ${list}`))
  for (const name of ['nope', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    assert.throws(() => emu.kernel(name), (e: Error) => e.message.includes(`no kernel ${JSON.stringify(name)}; kernels (PTX name (signature; export name)): ${list}`), name)
    assert.throws(() => cuda.kernel(name), (e: Error) => e.message.includes(`no kernel ${JSON.stringify(name)};`), name)
  }
})

Kernels.run()

// ---
const Docs = suite('launch() resolves when queued, synchronize() waits: said in the API docs')

Docs('the runtime README and the JSDoc of Kernel.launch and Module.synchronize say so', () => {
  const readme = readFileSync(join(import.meta.dirname, '..', '..', 'packages', 'runtime', 'README.md'), 'utf8')
  assert.match(readme, /`launch\(\)` resolves when the launch is queued/)
  assert.match(readme, /`mod\.synchronize\(\)` waits/)
  const src = readFileSync(join(import.meta.dirname, '..', '..', 'packages', 'runtime', 'src', 'module.ts'), 'utf8')
  assert.match(src, /The promise resolves once the launch is queued, not when the kernel has finished/)
  assert.match(src, /Waits until all work queued so far/)
})

Docs.run()
