// Section `webgpu` of `pnpm test:gpu` (issue 30): the WebGPU backend on the machine's own GPU through Dawn
// (the optional `webgpu` package, Vulkan underneath), beside the cuda backend on the same GPU. It names the
// adapter Dawn gives (a fallback adapter such as SwiftShader is no proof: the section then does not run,
// unless KP_GPU_WEBGPU_ANY_ADAPTER=1, which lets the kit's own check run it on SwiftShader), then runs every
// case of the emulator corpus and the kernel corpus on WebGPU from the same PTX (translated by emit-wgsl at
// load, `partial`: the kernels it refuses are listed, the others run) and compares each case's outputs with
// the cubin's on the GPU (integers exact, floats within the case's latitude) after the case's own check
// against its TypeScript reference. One check per case: pass, FAIL (wrong or failing), or not run (refused,
// with the translator's reason).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createModule, loadModule, type Module } from '@kernelpack/runtime'
import { packImages } from '@kernelpack/toolchain'
import { RuntimeKernelHost } from '../helpers/runtime-kernel-host.js'
import { repoRoot } from '../helpers/tools.js'
import { compareCase, latitudeOf, readLatitudes, type CaseRun } from './capture.js'
import { buildCubin } from './corpus.js'
import { selectUnits } from './check-corpus.js'
import { Checks, deviceLoadOptions, openDawn, type GpuOptions, type SectionOutput } from './session.js'

const ok = (r: CaseRun) => !r.refError && !r.runError
const failure = (r: CaseRun) => r.runError ? `run failed: ${r.runError}` : r.refError ? `wrong: ${r.refError}` : 'pass'
/** A case that launched a kernel the translator refused (CannotTranslateError's message). */
const refusal = /cannot run on WebGPU: (.*)/s
/** WebGPU errors after which the device is lost: the rest runs in a fresh process. */
const lost = /device (was )?lost|DeviceLost|GPU device lost/i
const CASE_MS = 45_000

export async function checkWebgpu(o: GpuOptions, resumeAfter?: string): Promise<SectionOutput> {
  const checks = new Checks('webgpu')
  const out: SectionOutput = { checks: checks.list, kernels: [], recordings: [] }
  const gpu = await openDawn()
  if (typeof gpu === 'string') {
    checks.notRun('WebGPU on this machine (Dawn)', gpu)
    return out
  }
  const wg = await import('@kernelpack/webgpu')
  let device: Awaited<ReturnType<typeof wg.requestWebGpuDevice>>
  try {
    device = await wg.requestWebGpuDevice({ gpu, powerPreference: 'high-performance' })
  } catch (err) {
    checks.notRun('WebGPU on this machine (Dawn)', `no adapter: ${(err as Error).message}`)
    return out
  }
  const adapter = wg.describeAdapter(device.info)
  const hardware = !device.info.cpu
  if (!resumeAfter) {
    checks.add('WebGPU adapter (Dawn)', hardware ? 'pass' : 'not-run',
      `${adapter}; subgroups ${device.features.has('subgroups') ? 'yes' : 'no'}, shader-f16 ${device.features.has('shader-f16') ? 'yes' : 'no'}; ` +
      `maxComputeWorkgroupStorageSize ${device.limits.maxComputeWorkgroupStorageSize}, maxComputeInvocationsPerWorkgroup ${device.limits.maxComputeInvocationsPerWorkgroup}, ` +
      `maxStorageBufferBindingSize ${device.limits.maxStorageBufferBindingSize}`)
  }
  if (!hardware && process.env.KP_GPU_WEBGPU_ANY_ADAPTER !== '1') {
    checks.notRun('the corpus on WebGPU', `Dawn offers no hardware adapter (${adapter}): a CPU adapter proves nothing about the GPU`)
    device.device.destroy()
    return out
  }
  if (!resumeAfter) {
    // how fma.rn.f32 runs here (issue 26 item 4): WGSL's fma() where the probe finds it fused, else the exact sequence
    await checks.run('fma() on this adapter (fma-probe.ts): fused, or fma.rn.f32 takes the exact sequence', async () => {
      const probe = await import('../../packages/webgpu/src/fma-probe.js')
      const got = await probe.probeFma(device.device)
      const fused = probe.FMA_PROBE.map(([a, b, c]) => probe.fusedF32(a, b, c))
      return `${probe.fmaIsFused(got, fused) ? 'fused: fma.rn.f32 is fma()' : 'not fused: fma.rn.f32 is the exact sequence'} (results ${[...got].map((x) => `0x${x.toString(16)}`).join(' ')}; fused ${fused.map((x) => `0x${x.toString(16)}`).join(' ')})`
    })
    // warp collectives (issue 26 item 8): the subgroup form where the adapter's subgroups are 32 wide and each warp
    // is one subgroup (found per workgroup at a kernel's start), else workgroup memory; the emulator's results either way
    await checks.run('warp collectives on this adapter (subgroups where they are 32 wide and each warp is one): the emulator\'s results', async () => {
      const min = device.info.subgroupMinSize, max = device.info.subgroupMaxSize
      const mapped = device.features.has('subgroups') ? await subgroupsAreWarps(device.device) : false
      const form = min === 32 && max === 32 && device.features.has('subgroups')
        ? (mapped ? 'the subgroup form (each warp of a 96-invocation workgroup is one subgroup)' : 'workgroup memory (warps are not subgroups here)')
        : 'workgroup memory (subgroups not 32 wide)'
      const { KernelRunner } = await import('../helpers/kernel-runner.js')
      const { createEmulatorBackend } = await import('@kernelpack/emulator')
      const { WARP_OPS_PTX, warpOps, warpOpsInputs } = await import('../fixtures/webgpu/warp-ops.js')
      const be = await wg.createWebGpuBackend({ webgpu: device })
      const emu = createEmulatorBackend({ workers: 0 })
      try {
        const ke = await KernelRunner.load(emu, WARP_OPS_PTX, 'compute_80', 'warp ops (emulator)')
        // translated here from the PTX, and as shipped (WGSL translated at build time: its subgroups32 variant on
        // a 32-wide adapter)
        const shipped = wg.translatePtxForShipping(WARP_OPS_PTX, 'warp ops').image
        const runners = [
          ['translated at load', await KernelRunner.load(be, WARP_OPS_PTX, 'compute_80', 'warp ops (WebGPU)')],
          ['shipped', new KernelRunner(be, await be.loadModule({ kind: 'wgsl', arch: 'wgsl', bytes: shipped }, 'warp ops (shipped)'), WARP_OPS_PTX, 'warp ops (WebGPU, shipped)')],
        ] as const
        for (const [how, k] of runners) {
          for (const seed of [1, 2, 3, 4]) {
            const xs = warpOpsInputs(seed)
            const g = await warpOps(k, xs), e = await warpOps(ke, xs)
            const at = g.findIndex((x, i) => x !== e[i])
            if (at >= 0) throw new Error(`${form}, ${how}: word ${at} (thread ${Math.floor(at / 8)}) of seed ${seed} is 0x${g[at]!.toString(16)}, the emulator's 0x${e[at]!.toString(16)}`)
          }
        }
      } finally {
        emu.dispose()
        await be.dispose()
      }
      return `subgroup sizes ${min ?? '?'}–${max ?? '?'}; ${form}; shfl, vote, activemask, match, redux, elect right for 4 inputs, translated at load and as shipped`
    })
    // auto in Node without a CUDA driver: the driver, then WebGPU on a hardware adapter (Dawn), then the emulator
    await checks.run('auto without a CUDA driver takes WebGPU on a hardware adapter, never a fallback (CPU) one', async () => {
      const { compilePtx, corpusConfigs } = await import('../helpers/ptx-cache.js')
      const { readPtxManifest } = await import('@kernelpack/toolchain')
      const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
      const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'plumbing.cu'), config })
      const mod = await loadModule(new TextEncoder().encode(ptx), await readPtxManifest(ptx), { backend: 'auto', libcudaPath: '/nonexistent/libcuda.so.1', workers: 0 })
      const n = 1000
      const [da, db, dc] = await Promise.all([mod.upload(new Float32Array(n).fill(0.25)), mod.upload(new Float32Array(n).fill(2)), mod.alloc(n * 4)])
      await mod.kernel('vec_add').launch({ grid: Math.ceil(n / 128), block: 128 }, da, db, dc, n)
      const out = await dc.download(new Float32Array(n))
      const { name, reason } = mod.backend
      await mod.unload()
      if (out.some((v) => v !== 2.25)) throw new Error(`vec_add on ${name} gave a wrong sum`)
      if (hardware && name !== 'webgpu') throw new Error(`auto chose ${name}: ${reason}`)
      if (!hardware && (name !== 'emulator' || !/is a fallback \(CPU\) adapter/.test(reason))) throw new Error(`auto on a fallback adapter: ${name}: ${reason}`)
      return `${name}: ${reason}`
    })
  }
  const backend = await wg.createWebGpuBackend({ webgpu: device, partial: true })
  const units = selectUnits(o)
  let skipping = resumeAfter !== undefined
  const cc = Number(o.arch.replace(/^sm_/, '').replace(/[af]$/, ''))
  const selfTest = o.mode === 'self-test'
  for (const unit of units) {
    if (skipping && !unit.cases.some((c) => c.key === resumeAfter)) continue
    const pending = skipping ? unit.cases.slice(unit.cases.findIndex((c) => c.key === resumeAfter) + 1) : unit.cases
    skipping = false
    if (!pending.length) continue
    if (cc < unit.minArch) {
      for (const c of pending) checks.notRun(`${c.key} on WebGPU`, `needs compute capability ${unit.minArch / 10}.${unit.minArch % 10} on the cuda side`)
      continue
    }
    const b = await unit.build()
    if (!b.ok) {
      for (const c of pending) checks.add(`${c.key} on WebGPU`, 'fail', `${unit.id} does not build with nvcc: ${b.message}`)
      continue
    }
    const ptxBytes = new TextEncoder().encode(b.ptx)
    const t0 = performance.now()
    let wgHost: RuntimeKernelHost | string
    try {
      const mod: Module = await createModule(backend, packImages([{ arch: unit.ptxArch, kind: 'ptx', bytes: ptxBytes }], 'kernelpack test:gpu'), b.manifest, { sourceName: unit.id, reason: 'test:gpu webgpu' })
      wgHost = RuntimeKernelHost.fromModule(mod, backend, b.manifest, `${unit.id} (WebGPU)`)
    } catch (err) {
      wgHost = (err as Error).message.split('\n')[0]!
    }
    const loadMs = performance.now() - t0
    // the same GPU through CUDA (the cubin), for the comparison; the emulator stands in for it in self-test mode
    let devHost: RuntimeKernelHost | string
    try {
      devHost = selfTest
        ? await RuntimeKernelHost.load(ptxBytes, b.manifest, `${unit.id} (emulator, self-test)`, { backend: 'emulator' })
        : await RuntimeKernelHost.load(packImages([{ arch: o.arch, kind: 'cubin', bytes: await buildCubin(b.ptx, o.arch) }], 'kernelpack test:gpu'), b.manifest, `${unit.id} (cubin)`, deviceLoadOptions(o))
    } catch (err) {
      devHost = (err as Error).message.split('\n')[0]!
    }
    checks.add(`${unit.id}: the module loads on WebGPU (translate + pipelines)`, typeof wgHost === 'string' ? 'fail' : 'pass',
      typeof wgHost === 'string' ? wgHost : `${b.manifest.kernels.length} kernels (refused ones are named by their cases)`, loadMs)
    const latitudes = readLatitudes(b.ptx)
    for (const c of pending) {
      const name = `${c.key} on WebGPU`
      if (c.emulatorOnly) { checks.notRun(name, `emulator-only: ${c.emulatorOnly}`); continue }
      if (typeof wgHost === 'string') { checks.add(name, 'fail', `the module did not load: ${wgHost}`); continue }
      if (process.env.KP_GPU_PROGRESS) writeFileSync(process.env.KP_GPU_PROGRESS, `webgpu:${c.key}`)
      const started = performance.now()
      const timeout = new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), CASE_MS).unref())
      const w = await Promise.race([c.run(wgHost), timeout])
      if (w === 'timeout') {
        checks.add(name, 'fail', `no result within ${CASE_MS / 1000} s (a kernel that never ends on WebGPU?); the rest runs in a fresh process`)
        return { ...out, resumeAfter: c.key }
      }
      await wgHost.freeAll().catch(() => {})
      const ms = performance.now() - started
      const why = refusal.exec(w.runError ?? w.refError ?? '')
      if (why) { checks.notRun(name, `refused: ${why[1]!.split('\n')[0]}`); continue }
      if (!ok(w)) {
        checks.add(name, 'fail', failure(w), ms)
        if (lost.test(failure(w))) return { ...out, resumeAfter: c.key }
        continue
      }
      if (typeof devHost === 'string') { checks.add(name, 'pass', `right against its reference; not compared with CUDA (the cubin did not load: ${devHost})`, ms); continue }
      const d = await c.run(devHost)
      await devHost.freeAll().catch(() => {})
      const cmp = compareCase(d.outputs, w.outputs, latitudeOf(w.launched, latitudes), { a: ok(d), b: true })
      const ulp = cmp.maxUlp !== undefined ? `, max ${cmp.maxUlp} ulp` : ''
      if (w.trace !== d.trace) checks.add(name, 'fail', 'the inputs differ from the CUDA run (harness fault)', ms)
      else if (cmp.agreement === 'differs' && cmp.outputs.every((x) => !x.differing || (x.maxUlp !== undefined && !x.shape))) {
        // floats only: WGSL leaves fma's fusing and some roundings to the implementation (issue 26), so a right
        // answer in other bits is reported as such, not as a failure
        checks.add(name, 'pass', `right against its reference; NOT bit-equal to CUDA (floats${ulp}): ${cmp.note.replace(/^.*?must agree: /, '')}`, ms)
      } else if (cmp.agreement === 'differs') checks.add(name, 'fail', `right against its reference, but differs from CUDA: ${cmp.note}`, ms)
      else checks.add(name, 'pass', `right; ${cmp.agreement === 'equal' ? 'equal to CUDA' : 'within latitude of CUDA'}${ulp}`, ms)
    }
    if (typeof wgHost !== 'string') await wgHost.mod.unload().catch(() => {})
    if (typeof devHost !== 'string') await devHost.mod.unload().catch(() => {})
  }
  const cases = checks.list.filter((c) => c.name.endsWith(' on WebGPU'))
  const count = (s: string) => cases.filter((c) => c.status === s).length
  checks.add(`the corpus on WebGPU (${adapter})`, count('fail') ? 'fail' : 'pass',
    `${count('pass')} right (${cases.filter((c) => c.status === 'pass' && /NOT bit-equal/.test(c.detail)).length} of them not bit-equal to CUDA), ${count('fail')} wrong or failing, ${count('not-run')} not run (refused or emulator-only)${resumeAfter ? ', counting from a resumed process' : ''}`)
  await backend.dispose()
  return out
}

/** Whether every invocation of a 96-invocation workgroup has subgroup_size 32 and subgroup_invocation_id equal to
 *  its index's low 5 bits: the test the subgroup form makes at a kernel's start (emit-kernel.ts kp_sg_ok). */
async function subgroupsAreWarps(device: GPUDevice): Promise<boolean> {
  const n = 96
  const code = `enable subgroups;
@group(0) @binding(0) var<storage, read_write> v: array<u32, ${n}>;
@compute @workgroup_size(${n})
fn main(@builtin(local_invocation_index) i: u32, @builtin(subgroup_invocation_id) id: u32, @builtin(subgroup_size) size: u32) {
  v[i] = select(0u, 1u, size == 32u && id == (i & 31u));
}`
  const { runProbe } = await import('../../packages/webgpu/src/fma-probe.js')
  const got = await runProbe(device, 'kernelpack subgroup probe', code, new Uint32Array(n), 0, n)
  return got.every((x) => x === 1)
}
