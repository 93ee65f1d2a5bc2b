// Runs corpus cases through the public runtime API (@kernelpack/runtime loadModule with backend 'emulator'):
// buffers are the runtime's DeviceBuffers, launches go through mod.kernel(name).launch, so the runtime's
// argument checks and parameter marshalling (from the manifest) are what the kernels see.
import { loadModule, resolveBackend, type Backend, type LoadModuleOptions, type Module } from '@kernelpack/runtime'
import type { KernelManifest } from '@kernelpack/offload'
import { pickEntry, type DeviceBuffer, type KernelArg, type KernelHost, type View, type ViewCtor } from './kernel-runner.js'
import type { Dim3 } from '../../packages/runtime/src/backend.js'

type RuntimeBuffer = DeviceBuffer & { download?: (into: Uint8Array) => Promise<Uint8Array>; write?: (d: ArrayBufferView) => Promise<void>; free?: () => Promise<void> }

let launching: RuntimeKernelHost | undefined
function printToLaunching(text: string): void {
  if (launching) launching.printed.push(text)
  else process.stdout.write(text)
}

export class RuntimeKernelHost implements KernelHost {
  readonly launched = new Set<string>()
  readonly printed: string[] = []
  /** Buffers made by upload/alloc since the last freeAll. */
  private readonly buffers: RuntimeBuffer[] = []
  private constructor(readonly mod: Module, readonly backend: Backend, readonly manifest: KernelManifest, readonly label: string) {}

  /** Loads `source` (an offload binary or raw PTX) for `manifest`, by default with `backend: 'emulator'`. */
  static async load(source: Uint8Array, manifest: KernelManifest, label: string, options: LoadModuleOptions = { backend: 'emulator' }): Promise<RuntimeKernelHost> {
    // one printer for every host, so hosts with the same options share an emulator: it writes to the host launching
    options = { print: printToLaunching, ...options }
    const mod = await loadModule(source, manifest, options)
    const { backend } = await resolveBackend(options)
    return new RuntimeKernelHost(mod, backend, manifest, label)
  }

  /** A host over a module made with the runtime's createModule on any Backend (the WebGPU tests' page backend). */
  static fromModule(mod: Module, backend: Backend, manifest: KernelManifest, label: string): RuntimeKernelHost {
    return new RuntimeKernelHost(mod, backend, manifest, label)
  }

  entry(name: string): string {
    return pickEntry(this.manifest.kernels.map((k) => k.name), name, this.label)
  }

  async upload(data: ArrayBufferView): Promise<DeviceBuffer> {
    const buf = await this.mod.upload(data)
    this.buffers.push(buf)
    return buf
  }

  async alloc(byteLength: number, byte = 0): Promise<DeviceBuffer> {
    const buf = await this.mod.alloc(byteLength)
    this.buffers.push(buf)
    await buf.fill(byte)
    return buf
  }

  /** Frees every buffer made since the last call (so a long corpus does not grow device memory). */
  async freeAll(): Promise<void> {
    for (const b of this.buffers.splice(0)) await b.free?.()
  }

  async read<T extends View>(buf: DeviceBuffer, ctor: ViewCtor<T>): Promise<T> {
    const bytes = new Uint8Array(buf.byteLength)
    const rb = buf as RuntimeBuffer
    if (rb.download) await rb.download(bytes)
    else await this.backend.copyFromDevice(bytes, buf.address) // a module variable: no DeviceBuffer for it
    return new ctor(bytes.buffer, 0, buf.byteLength / ctor.BYTES_PER_ELEMENT)
  }

  async write(buf: DeviceBuffer, data: ArrayBufferView): Promise<void> {
    const rb = buf as RuntimeBuffer
    if (rb.write) await rb.write(data)
    else await this.backend.copyToDevice(buf.address, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  }

  async launch(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes = 0): Promise<void> {
    return this.launchWith(name, grid, block, args, sharedBytes, {})
  }

  /** A launch with extra options: `maxDynamicSharedBytes` (cudaFuncSetAttribute), `cooperative`
   *  (cudaLaunchCooperativeKernel, issue 14; passed through to the runtime's launch options as it is). */
  async launchWith(name: string, grid: number | Dim3, block: number | Dim3, args: readonly KernelArg[], sharedBytes: number,
    { maxDynamicSharedBytes, ...extras }: { cooperative?: boolean; maxDynamicSharedBytes?: number }): Promise<void> {
    const entry = this.entry(name)
    if (maxDynamicSharedBytes !== undefined) this.mod.kernel(entry).setAttribute('maxDynamicSharedMemorySize', maxDynamicSharedBytes)
    this.launched.add(entry)
    // device printf of the emulator (the `print` option given at load) goes to the host that launches
    launching = this
    try {
      await this.mod.kernel(entry).launch({ grid, block, sharedBytes, ...extras }, ...args)
      await this.mod.synchronize()
    } finally {
      launching = undefined
    }
  }

  async variable(ident: string): Promise<DeviceBuffer> {
    const names = this.manifest.variables.map((v) => v.name)
    const hits = names.filter((n) => n === ident || new RegExp(`(^|\\d)${ident}$`).test(n))
    if (hits.length !== 1) throw new Error(`${this.label}: expected one variable named like ${ident} in the manifest, found ${hits.join(', ') || 'none'}`)
    return this.mod.global(hits[0]!)
  }
}
