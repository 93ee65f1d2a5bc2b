import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { clangPtx, createEmulatorBackend, download, marshal, nvccPtx, ptxBytes, upload } from './helpers.js'
import { EmulatorFault, PtxError } from '../../packages/emulator/src/index.js'
import type { Backend } from '../../packages/runtime/src/backend.js'

const vecAddCu = `
extern "C" __global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__device__ __noinline__ float sq(float x) { return x * x; }
extern "C" __global__ void sumSquares(const float* in, float* out, int n) {
  __shared__ float s[32];
  int t = threadIdx.x; int i = blockIdx.x * blockDim.x + t;
  float v = i < n ? sq(in[i]) : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((t & 31) == 0) s[t >> 5] = v;
  __syncthreads();
  if (t == 0) { float x = 0; for (int k = 0; k < blockDim.x / 32; k++) x += s[k]; atomicAdd(out, x); }
}
`
// nvcc -G keeps __shfl_down_sync as a called function: exercises inlining of suspending callees
const compiled = { nvcc80: nvccPtx(vecAddCu, 'compute_80'), nvcc90debug: nvccPtx(vecAddCu, 'compute_90', ['-G']), clang: clangPtx(vecAddCu) }

const createEmulatorBackendSuite = suite('createEmulatorBackend')

for (const [who, ptx] of Object.entries(compiled)) {
  createEmulatorBackendSuite(`vecAdd and a shuffle/barrier/atomic reduction (${who})`, () => {
    const be = createEmulatorBackend()
    const mod = be.loadModule(ptxBytes(ptx))
    const n = 1000
    const a = new Float32Array(n).map((_, i) => i * 0.5)
    const b = new Float32Array(n).map((_, i) => 1 / (i + 1))
    const da = upload(be, a), db = upload(be, b), dc = be.alloc(n * 4)
    be.launch(mod.getFunction('vecAdd'), { grid: [Math.ceil(n / 128), 1, 1], block: [128, 1, 1], sharedBytes: 0 },
      marshal([{ u64: da }, { u64: db }, { u64: dc }, { s32: n }]))
    const c = download(be, dc, new Float32Array(n))
    for (let i = 0; i < n; i++) assert.is(c[i], Math.fround(a[i]! + b[i]!), `c[${i}]`)

    const out = be.alloc(4)
    const ints = new Float32Array(n).map((_, i) => i % 7)
    const di = upload(be, ints)
    be.launch(mod.getFunction('sumSquares'), { grid: [Math.ceil(n / 256), 1, 1], block: [256, 1, 1], sharedBytes: 0 },
      marshal([{ u64: di }, { u64: out }, { s32: n }]))
    let ref = 0
    for (let i = 0; i < n; i++) ref += (i % 7) ** 2
    assert.is(download(be, out, new Float32Array(1))[0], ref)
  })
}

createEmulatorBackendSuite('an out-of-bounds store faults naming kernel, instruction and address', () => {
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(compiled.nvcc80))
  const n = 64
  const da = be.alloc(n * 4), db = be.alloc(n * 4), dc = be.alloc(n * 4 - 4)
  try {
    be.launch(mod.getFunction('vecAdd'), { grid: [1, 1, 1], block: [64, 1, 1], sharedBytes: 0 }, marshal([{ u64: da }, { u64: db }, { u64: dc }, { s32: n }]))
    assert.unreachable('should fault')
  } catch (e) {
    assert.instance(e, EmulatorFault)
    const f = e as EmulatorFault
    assert.is(f.kernel, 'vecAdd')
    assert.match(f.instruction, /st\.global\.f32/)
    assert.is(f.address, dc + BigInt(n * 4 - 4))
  }
})

createEmulatorBackendSuite('a kernel with an unsupported opcode is refused when it is looked up, with the opcode and the line', () => {
  const be = createEmulatorBackend()
  const ptx = '.version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tfrobnicate.b32 %r1, %r0;\n\tret;\n}\n'
  const mod = be.loadModule(ptxBytes(ptx))
  try {
    mod.getFunction('k')
    assert.unreachable('should throw')
  } catch (e) {
    assert.instance(e, PtxError)
    assert.is((e as PtxError).line, 7)
    assert.match((e as Error).message, /frobnicate/)
  }
})

createEmulatorBackendSuite('a kernel with an unknown qualifier that could change results is refused when it is looked up', () => {
  const be = createEmulatorBackend()
  const ptx = '.version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b16 %h<4>;\n\tfma.rn.xorsign.f16 %h1, %h2, %h3, %h0;\n\tret;\n}\n'
  const mod = be.loadModule(ptxBytes(ptx))
  try {
    mod.getFunction('k')
    assert.unreachable('should throw')
  } catch (e) {
    assert.instance(e, PtxError)
    assert.is((e as PtxError).line, 7)
    assert.match((e as Error).message, /\.xorsign/)
  }
})

createEmulatorBackendSuite('implements the runtime Backend interface; memory operations check their ranges', async () => {
  const be: Backend = createEmulatorBackend() // type-checked against packages/runtime/src/backend.ts
  assert.is(be.name, 'emulator')
  assert.equal(be.imageKinds, ['ptx'])
  const dev = be.device()
  assert.equal(dev.computeCapability, [12, 0])
  const a = await be.alloc(16)
  await be.memset(a, 0xab, 16)
  const out = new Uint8Array(16)
  await be.copyFromDevice(out, a)
  assert.ok(out.every((x) => x === 0xab))
  assert.throws(() => be.copyToDevice(a, new Uint8Array(17)), /outside|not inside/)
  assert.throws(() => be.copyFromDevice(new Uint8Array(4), a + 16n), /outside|not inside/)
  await be.free(a)
  assert.throws(() => be.free(a), /not an allocation/)
  assert.throws(() => be.loadModule({ kind: 'cubin', arch: 'sm_80', bytes: new Uint8Array(4) }), /PTX only/)
  const mod = await be.loadModule(ptxBytes(compiled.nvcc80))
  assert.throws(() => mod.getFunction('nope'), /vecAdd/)
  const fn = await mod.getFunction('vecAdd')
  assert.throws(() => be.launch(fn, { grid: [1, 1, 1], block: [2048, 1, 1], sharedBytes: 0 }, marshal([{ u64: 0n }, { u64: 0n }, { u64: 0n }, { s32: 0 }])), /1024/)
  assert.throws(() => be.launch(fn, { grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0 }, marshal([{ u64: 0n }])), /parameter block/)
  await be.dispose()
})

createEmulatorBackendSuite('memoryLimit past 4 GiB is refused by name (the heap is a 32-bit WebAssembly memory); 4 GiB itself works', () => {
  assert.throws(() => createEmulatorBackend({ memoryLimit: 2 ** 32 + 65536, workers: 0 }), (e: Error) => e instanceof RangeError && e.message === `memoryLimit: at most 4 GiB (2^32 bytes: 32-bit device addresses), got ${2 ** 32 + 65536}`)
  const be = createEmulatorBackend({ memoryLimit: 2 ** 32, workers: 0 })
  const a = be.alloc(1 << 20)
  assert.ok(typeof a === 'bigint' && a > 0n)
  be.dispose()
})

createEmulatorBackendSuite.run()
