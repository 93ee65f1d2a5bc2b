// Shared helpers of the emulator tests: compile CUDA source to PTX once per file (nvcc / clang 22), run
// hand-written PTX kernels, and marshal parameters in PTX .param layout.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { layoutParams } from '@kernelpack/ptx'
import { clangCurandShim, tool } from '../helpers/tools.js'
import { createEmulatorBackend, EmulatorFault, type EmulatorBackend, type EmulatorKernelParams, type EmulatorLaunchConfig, type EmulatorModule } from '../../packages/emulator/src/index.js'

export function nvccPtx(source: string, arch = 'compute_80', extra: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'kp-emu-'))
  writeFileSync(join(dir, 'k.cu'), source)
  execFileSync(tool('nvcc'), ['-ptx', `-arch=${arch}`, ...extra, join(dir, 'k.cu'), '-o', join(dir, 'k.ptx')], { stdio: 'pipe' })
  return readFileSync(join(dir, 'k.ptx'), 'utf8')
}

export function clangPtx(source: string, arch = 'sm_80'): string {
  const dir = mkdtempSync(join(tmpdir(), 'kp-emu-'))
  writeFileSync(join(dir, 'k.cu'), source)
  execFileSync(tool('clang++'), ['--cuda-device-only', '-S', `--cuda-gpu-arch=${arch}`, '--cuda-path=/usr/local/cuda', '-I', clangCurandShim(), '-O2', '-Wno-unknown-cuda-version', join(dir, 'k.cu'), '-o', join(dir, 'k.ptx')], { stdio: 'pipe' })
  return readFileSync(join(dir, 'k.ptx'), 'utf8')
}

export type Arg = { u64: bigint } | { u32: number } | { s32: number } | { f32: number } | { f64: number } | { bytes: Uint8Array; align: number }

/** Lays out kernel arguments as PTX .param space (each at its alignment). */
export function marshal(args: Arg[]): { bytes: Uint8Array; offsets: number[]; sizes: number[] } {
  const shapes = args.map((a) => {
    const size = 'u64' in a || 'f64' in a ? 8 : 'bytes' in a ? a.bytes.length : 4
    return { size, align: 'bytes' in a ? a.align : size }
  })
  const { offsets, sizes, end } = layoutParams(shapes)
  const parts = args.map((a, i): [number, Arg] => [offsets[i]!, a])
  const bytes = new Uint8Array(Math.max(end, 1))
  const dv = new DataView(bytes.buffer)
  for (const [o, a] of parts) {
    if ('u64' in a) dv.setBigUint64(o, a.u64, true)
    else if ('u32' in a) dv.setUint32(o, a.u32 >>> 0, true)
    else if ('s32' in a) dv.setInt32(o, a.s32, true)
    else if ('f32' in a) dv.setFloat32(o, a.f32, true)
    else if ('f64' in a) dv.setFloat64(o, a.f64, true)
    else bytes.set(a.bytes, o)
  }
  return { bytes, offsets, sizes }
}

export function upload(be: EmulatorBackend, data: ArrayBufferView): bigint {
  const d = be.alloc(data.byteLength)
  be.copyToDevice(d, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  return d
}

export function download<T extends ArrayBufferView>(be: EmulatorBackend, src: bigint, into: T): T {
  be.copyFromDevice(new Uint8Array(into.buffer, into.byteOffset, into.byteLength), src)
  return into
}

/** Launches `kernel` of `mod`; an EmulatorFault comes back instead of being thrown (tests compare the tiers'
 *  faults), anything else is thrown. */
export function launchOrFault(be: EmulatorBackend, mod: EmulatorModule, kernel: string, dims: EmulatorLaunchConfig, params: EmulatorKernelParams): EmulatorFault | undefined {
  try {
    be.launch(mod.getFunction(kernel), dims, params)
  } catch (e) {
    if (!(e instanceof EmulatorFault)) throw e
    return e
  }
  return undefined
}

export function ptxBytes(text: string): { kind: 'ptx'; arch: string; bytes: Uint8Array } {
  return { kind: 'ptx', arch: 'compute_80', bytes: new TextEncoder().encode(text) }
}

export { createEmulatorBackend }

/** PTX of a kernel `name(x, y)`, one thread an f32 element under an `if (i < 2^24)` as nvcc writes a bound:
 *  `line` computes %f2 from %f1 = x[i], y[i] = %f2, then `tail` (more PTX inside the if); `line` may use %f3 …
 *  %f15 and %p1, %p2 too. `guard: false`: no if. */
export function unaryF32Kernel(name: string, line: string, tail = '', guard = true): string {
  return `.version 8.0
.target sm_80
.address_size 64
.visible .entry ${name}(.param .u64 x, .param .u64 y)
{
  .reg .b32 %r<3>; .reg .f32 %f<16>; .reg .pred %p<4>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mad.lo.s32 %r1, %r1, %r2, %tid.x;
${guard ? `  setp.ge.u32 %p3, %r1, 16777216;
  @%p3 bra DONE;
` : ''}  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  ${line}
  st.global.f32 [%rd5], %f2;${tail}
DONE:
  ret;
}`
}

/** Runs kernel `name` of `ptx` (unaryF32Kernel's shape: y[i] = f(x[i])) over x on one tier, 256 threads a block,
 *  on the calling thread; returns y and the kernel's `inspect` text. */
export function runUnaryF32(codegen: 'wasm' | 'js', ptx: string, name: string, x: Float32Array): { y: Float32Array; inspect: string } {
  const be = createEmulatorBackend({ codegen, workers: 0 })
  try {
    const mod = be.loadModule(ptxBytes(ptx))
    const dx = upload(be, x), dy = upload(be, new Float32Array(x.length))
    const fault = launchOrFault(be, mod, name, { grid: [Math.ceil(x.length / 256), 1, 1], block: [256, 1, 1], sharedBytes: 0 }, marshal([{ u64: dx }, { u64: dy }]))
    if (fault) throw fault
    return { y: download(be, dy, new Float32Array(x.length)), inspect: mod.inspect(name) }
  } finally {
    be.dispose()
  }
}
