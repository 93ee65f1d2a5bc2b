// GPU smoke test for the cuda backend (issue 5, item 6). NOT part of the test suite (no GPU in CI): run it on a
// machine with an NVIDIA GPU, the driver and nvcc:
//
//   node --conditions=source --import tsx test/gpu/smoke.ts            # sm_90 + compute_90 (H100/H200)
//   KP_SMOKE_ARCH=sm_80 node --conditions=source --import tsx test/gpu/smoke.ts
//
// It compiles two kernels (vecAdd, and a kernel taking a struct by value plus every scalar width) with nvcc as
// a cubin for the GPU's arch and PTX for the virtual arch, packs them as an offload binary, loads it with
// backend 'cuda', launches, checks the results against JS, loads the PTX alone to exercise the JIT, and prints
// timings. Exit status 0 when every check passes.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ImageKind, OffloadKind, writeOffloadBinary } from '@kernelpack/offload'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule, t } from '@kernelpack/runtime'

const arch = process.env.KP_SMOKE_ARCH ?? 'sm_90'
const virtualArch = arch.replace(/^sm_/, 'compute_').replace(/[af]$/, '')
const nvcc = join(process.env.CUDA_PATH ?? '/usr/local/cuda', 'bin', 'nvcc')
const dir = mkdtempSync(join(tmpdir(), 'kp-gpu-smoke-'))
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6
let failures = 0
const check = (ok: boolean, what: string) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`)
  if (!ok) failures++
}

const source = `
#include <cstdint>
struct Affine { float scale; double offset; int8_t tag[3]; uint64_t id; };
extern "C" __global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void affine(Affine p, const float *x, double *y, unsigned n, short s, unsigned char u8, long long big)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (double)(p.scale * x[i]) + p.offset + p.tag[0] + p.tag[1] + p.tag[2] + (double)(p.id & 0xff) + s + u8 + (double)(big % 1000);
}
`
writeFileSync(join(dir, 'smoke.cu'), source)
let t0 = process.hrtime.bigint()
execFileSync(nvcc, ['-cubin', `-arch=${arch}`, 'smoke.cu', '-o', 'smoke.cubin'], { cwd: dir, stdio: 'inherit' })
execFileSync(nvcc, ['-ptx', `-arch=${virtualArch}`, 'smoke.cu', '-o', 'smoke.ptx'], { cwd: dir, stdio: 'inherit' })
console.log(`nvcc (cubin ${arch} + ptx ${virtualArch}): ${ms(t0).toFixed(0)} ms`)
const cubin = new Uint8Array(readFileSync(join(dir, 'smoke.cubin')))
const ptx = new Uint8Array(readFileSync(join(dir, 'smoke.ptx')))
const manifest = await readPtxManifest(new TextDecoder().decode(ptx), { demangle: false })
const entry = (kind: number, a: string, image: Uint8Array) => ({ imageKind: kind, offloadKind: OffloadKind.CUDA, strings: { triple: 'nvptx64-nvidia-cuda', arch: a }, image })
const packed = writeOffloadBinary([entry(ImageKind.Cubin, arch, cubin), entry(ImageKind.PTX, virtualArch, ptx)])

t0 = process.hrtime.bigint()
const mod = await loadModule(packed, manifest, { backend: 'cuda' })
console.log(`loadModule (driver init + cubin load): ${ms(t0).toFixed(1)} ms`)
console.log(`device: ${mod.backend.device.name}, CC ${mod.backend.device.computeCapability.join('.')}, ${(mod.backend.device.totalMemory / 2 ** 30).toFixed(1)} GiB, PTX ISA ≤ ${mod.backend.device.ptxVersion?.join('.')}`)
console.log(`backend: ${mod.backend.name} (${mod.backend.reason}); image: ${mod.image.kind} ${mod.image.arch} (${mod.image.reason})`)
check(mod.backend.name === 'cuda', 'backend is cuda')

// vecAdd
const n = 1 << 20
const a = Float32Array.from({ length: n }, (_, i) => i * 0.5)
const b = Float32Array.from({ length: n }, (_, i) => (i % 1000) - 3.25)
t0 = process.hrtime.bigint()
const [da, db, dc] = await Promise.all([mod.upload(a), mod.upload(b), mod.alloc(4 * n)])
console.log(`upload 2 × ${(4 * n) / 2 ** 20} MiB + alloc: ${ms(t0).toFixed(2)} ms`)
const vecAdd = mod.kernel('vecAdd')
const [e0, e1] = [await mod.createEvent(), await mod.createEvent()]
await e0.record()
await vecAdd.launch({ grid: Math.ceil(n / 256), block: 256 }, da, db, dc, n)
await e1.record()
console.log(`vecAdd over ${n} floats: ${(await e1.elapsedSince(e0)).toFixed(3)} ms (events)`)
t0 = process.hrtime.bigint()
const c = await dc.download(new Float32Array(n))
console.log(`download ${(4 * n) / 2 ** 20} MiB: ${ms(t0).toFixed(2)} ms`)
let bad = 0
for (let i = 0; i < n; i++) if (c[i] !== Math.fround(a[i]! + b[i]!)) bad++
check(bad === 0, `vecAdd over ${n} floats (${bad} mismatches)`)

// affine: struct by value + scalars of every width
const Affine = t.struct({ scale: t.f32, offset: t.f64, tag: t.array(t.i8, 3), id: t.u64 })
const m = 4096
const x = Float32Array.from({ length: m }, (_, i) => i / 7)
const dx = await mod.upload(x)
const dy = await mod.alloc(8 * m)
const p = { scale: 1.5, offset: -0.25, tag: [-1, 2, -3], id: 0x1234_5678_9abc_def0n }
await mod.kernel('affine').launch({ grid: Math.ceil(m / 128), block: 128 }, Affine.of(p), dx, dy, m, -7, 250, 123456789012345n)
const y = await dy.download(new Float64Array(m))
let badY = 0
for (let i = 0; i < m; i++) {
  const want = Math.fround(Math.fround(1.5) * x[i]!) + -0.25 + (-1 + 2 - 3) + 0xf0 + -7 + 250 + 345
  if (Math.abs(y[i]! - want) > 1e-9) badY++
}
check(badY === 0, `affine(Affine by value, float*, double*, unsigned, short, uchar, long long) over ${m} elements (${badY} mismatches)`)

// launch rate: queue many tiny launches, then synchronize
const tiny = 20000
await mod.synchronize()
t0 = process.hrtime.bigint()
for (let i = 0; i < tiny; i++) void vecAdd.launch({ grid: 1, block: 32 }, da, db, dc, 32)
const queued = ms(t0)
await mod.synchronize()
const total = ms(t0)
console.log(`${tiny} launches of a 4-arg kernel: ${((queued * 1e6) / tiny).toFixed(0)} ns/launch to queue, ${(tiny / (total / 1000)).toFixed(0)} launches/s incl. sync`)

// the PTX alone: forces the driver's JIT (cuModuleLoadDataEx on text)
const ptxOnly = writeOffloadBinary([entry(ImageKind.PTX, virtualArch, ptx)])
t0 = process.hrtime.bigint()
const jit = await loadModule(ptxOnly, manifest, { backend: 'cuda' })
console.log(`PTX JIT load: ${ms(t0).toFixed(1)} ms (image ${jit.image.kind} ${jit.image.arch})`)
const dc2 = await jit.alloc(4 * n)
await jit.kernel('vecAdd').launch({ grid: Math.ceil(n / 256), block: 256 }, da, db, dc2, n)
const c2 = await dc2.download(new Float32Array(n))
check(c2.every((v, i) => v === c[i]), 'vecAdd from the JIT-compiled PTX gives the same result')

await Promise.all([da.free(), db.free(), dc.free(), dx.free(), dy.free(), dc2.free()])
await jit.unload()
await mod.unload()
console.log(failures ? `${failures} check(s) FAILED` : 'all checks passed')
process.exit(failures ? 1 : 0)
