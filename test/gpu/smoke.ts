// GPU smoke test for the cuda backend (issue 5, item 6; section `smoke` of `pnpm test:gpu`, issue 18): the
// shortest end-to-end path a user takes. It compiles two kernels (vecAdd, and a kernel taking a struct by value
// plus every scalar width) with nvcc as a cubin for the GPU's arch and PTX for the virtual arch, packs them as
// an offload binary, loads it with backend 'cuda', launches, checks the results against JS, loads the PTX alone
// to exercise the JIT, and reports timings. Run it alone with `pnpm test:gpu --only smoke`.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ImageKind, OffloadKind, writeOffloadBinary } from '@kernelpack/offload'
import { readPtxManifest } from '@kernelpack/toolchain'
import { loadModule, t } from '@kernelpack/runtime'
import { tool } from '../helpers/tools.js'
import { Checks, deviceLoadOptions, type GpuOptions, type SectionOutput } from './session.js'

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

export async function runSmoke(o: GpuOptions): Promise<SectionOutput> {
  const checks = new Checks('smoke')
  if (o.mode !== 'hardware') {
    checks.notRun('vecAdd, affine (struct by value + scalars), launch rate, PTX JIT', 'needs a driver that runs kernels (self-test against the libcuda test double)')
    return { checks: checks.list, kernels: [], recordings: [] }
  }
  const arch = o.arch
  const virtualArch = arch.replace(/^sm_/, 'compute_').replace(/[af]$/, '')
  const dir = mkdtempSync(join(tmpdir(), 'kp-gpu-smoke-'))
  const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6
  try {
    writeFileSync(join(dir, 'smoke.cu'), source)
    let t0 = process.hrtime.bigint()
    execFileSync(tool('nvcc'), ['-cubin', `-arch=${arch}`, 'smoke.cu', '-o', 'smoke.cubin'], { cwd: dir, stdio: 'pipe' })
    execFileSync(tool('nvcc'), ['-ptx', `-arch=${virtualArch}`, 'smoke.cu', '-o', 'smoke.ptx'], { cwd: dir, stdio: 'pipe' })
    const nvccMs = ms(t0)
    const cubin = new Uint8Array(readFileSync(join(dir, 'smoke.cubin')))
    const ptx = new Uint8Array(readFileSync(join(dir, 'smoke.ptx')))
    const manifest = await readPtxManifest(new TextDecoder().decode(ptx), { demangle: false })
    const entry = (kind: number, a: string, image: Uint8Array) => ({ imageKind: kind, offloadKind: OffloadKind.CUDA, strings: { triple: 'nvptx64-nvidia-cuda', arch: a }, image })
    const packed = writeOffloadBinary([entry(ImageKind.Cubin, arch, cubin), entry(ImageKind.PTX, virtualArch, ptx)])

    t0 = process.hrtime.bigint()
    const mod = await loadModule(packed, manifest, deviceLoadOptions(o))
    const loadMs = ms(t0)
    const dev = mod.backend.device
    checks.add('loadModule picks the cuda backend and the cubin', mod.backend.name === 'cuda' && mod.image.kind === 'cubin' ? 'pass' : 'fail',
      `${mod.backend.name}, ${mod.image.kind} ${mod.image.arch} in ${loadMs.toFixed(1)} ms (nvcc: ${nvccMs.toFixed(0)} ms); ${dev.name}, CC ${dev.computeCapability.join('.')}`)

    const n = 1 << 20
    const a = Float32Array.from({ length: n }, (_, i) => i * 0.5)
    const b = Float32Array.from({ length: n }, (_, i) => (i % 1000) - 3.25)
    const [da, db, dc] = await Promise.all([mod.upload(a), mod.upload(b), mod.alloc(4 * n)])
    const vecAdd = mod.kernel('vecAdd')
    const [e0, e1] = [await mod.createEvent(), await mod.createEvent()]
    await e0.record()
    await vecAdd.launch({ grid: Math.ceil(n / 256), block: 256 }, da, db, dc, n)
    await e1.record()
    const kernelMs = await e1.elapsedSince(e0)
    const c = await dc.download(new Float32Array(n))
    let bad = 0
    for (let i = 0; i < n; i++) if (c[i] !== Math.fround(a[i]! + b[i]!)) bad++
    checks.add(`vecAdd over ${n} floats`, bad === 0 ? 'pass' : 'fail', `${bad} mismatches; ${kernelMs.toFixed(3)} ms (events)`)

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
      // the kernel's additions in its order: every term after the product is a small integer or a quarter
      const want = Math.fround(Math.fround(1.5) * x[i]!) + -0.25 + -1 + 2 + -3 + 0xf0 + -7 + 250 + 345
      if (Math.abs(y[i]! - want) > 1e-9) badY++
    }
    checks.add('affine(Affine by value, float*, double*, unsigned, short, uchar, long long)', badY === 0 ? 'pass' : 'fail', `${badY} of ${m} mismatches`)

    const tiny = 20000
    await mod.synchronize()
    t0 = process.hrtime.bigint()
    for (let i = 0; i < tiny; i++) void vecAdd.launch({ grid: 1, block: 32 }, da, db, dc, 32)
    const queued = ms(t0)
    await mod.synchronize()
    const total = ms(t0)
    checks.add(`${tiny} launches of a 4-argument kernel`, 'pass', `${((queued * 1e6) / tiny).toFixed(0)} ns/launch to queue, ${(tiny / (total / 1000)).toFixed(0)} launches/s including the synchronize`)

    const ptxOnly = writeOffloadBinary([entry(ImageKind.PTX, virtualArch, ptx)])
    t0 = process.hrtime.bigint()
    const jit = await loadModule(ptxOnly, manifest, deviceLoadOptions(o))
    const jitMs = ms(t0)
    const dc2 = await jit.alloc(4 * n)
    await jit.kernel('vecAdd').launch({ grid: Math.ceil(n / 256), block: 256 }, da, db, dc2, n)
    const c2 = await dc2.download(new Float32Array(n))
    checks.add('vecAdd from the JIT-compiled PTX gives the cubin\'s result', jit.image.kind === 'ptx' && c2.every((v, i) => v === c[i]) ? 'pass' : 'fail', `image ${jit.image.kind} ${jit.image.arch}, JIT load ${jitMs.toFixed(1)} ms`)

    await Promise.all([da.free(), db.free(), dc.free(), dx.free(), dy.free(), dc2.free(), e0.destroy(), e1.destroy()])
    await jit.unload()
    await mod.unload()
  } catch (err) {
    checks.add('smoke test', 'fail', (err as Error).stack ?? String(err))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return { checks: checks.list, kernels: [], recordings: [] }
}
