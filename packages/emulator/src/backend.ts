// The `emulator` execution backend: implements the Backend contract of @kernelpack/ptx (backend.ts; the
// runtime re-exports it) over the emulated heap, type-checked against it.
// Launches run synchronously on the calling thread, block after block; see emit-js.ts for how a block's
// threads are run and scheduler.ts for how barriers and warp collectives are resolved.
import type { Backend, BackendFunction, BackendModule, BackendStream, DeviceInfo, Dim3, ImageToLoad, KernelParams, LaunchConfig } from '@kernelpack/ptx'
import { EmulatorFault, PtxError } from './errors.js'
import type { CompiledFunction } from './emit-js.js'
import { Heap } from './heap.js'
import { loadPtxModule, type LoadedModule } from './load-module.js'
import { newThreadStates, runBlock, type KernelFn, type ThreadState } from './scheduler.js'

export type { Dim3 }

export interface EmulatorBackendOptions {
  /** Worker threads to spread blocks over. Accepted for forward compatibility; launches run on the calling thread. @default 0 */
  workers?: number
  /** Initial size of the emulated device memory in bytes (it grows on demand). @default 16 MiB */
  initialMemory?: number
  /** Upper limit of emulated device memory in bytes. @default 2 GiB */
  memoryLimit?: number
  /** Where device printf output goes. @default console.log */
  print?: (text: string) => void
}

export type EmulatorFunction = BackendFunction
export type EmulatorLaunchConfig = LaunchConfig
export type EmulatorKernelParams = KernelParams
export type EmulatorDeviceInfo = DeviceInfo

/** A loaded PTX module; its methods answer synchronously. */
export interface EmulatorModule extends BackendModule {
  getFunction(name: string): EmulatorFunction
  getGlobal(name: string): { address: bigint; size: number }
  unload(): void
}

/** The emulator's implementation of the Backend contract (@kernelpack/ptx, backend.ts). Every method
 *  answers synchronously (launches run on the calling thread), which the contract allows. */
export interface EmulatorBackend extends Backend {
  readonly name: 'emulator'
  readonly imageKinds: ReadonlyArray<'ptx'>
  device(): EmulatorDeviceInfo
  loadModule(image: ImageToLoad): EmulatorModule
  alloc(byteLength: number): bigint
  free(address: bigint): void
  copyToDevice(dst: bigint, src: Uint8Array, stream?: BackendStream | null): void
  copyFromDevice(dst: Uint8Array, src: bigint, stream?: BackendStream | null): void
  memset(dst: bigint, byte: number, byteLength: number, stream?: BackendStream | null): void
  createStream(): BackendStream
  destroyStream(stream: BackendStream): void
  synchronize(stream?: BackendStream | null): void
  launch(fn: EmulatorFunction, config: EmulatorLaunchConfig, params: EmulatorKernelParams): void
  dispose(): void
}


class KernelHandle implements EmulatorFunction {
  constructor(readonly name: string, readonly mod: LoadedModule, readonly cf: CompiledFunction) {}
}

const CALL_STACK = 1 << 16

function addr(a: bigint, what: string): number {
  if (typeof a !== 'bigint') throw new TypeError(`${what}: device address must be a bigint`)
  if (a < 0n || a > 0xffffffffn) throw new RangeError(`${what}: 0x${a.toString(16)} is not an emulated device address`)
  return Number(a)
}

function dim(d: unknown, what: string): Dim3 {
  if (!Array.isArray(d) || d.length !== 3 || !d.every((x) => Number.isInteger(x) && x >= 1)) throw new TypeError(`launch: ${what} must be [x, y, z] of positive integers, got ${JSON.stringify(d)}`)
  return d as Dim3
}

/** Creates the PTX emulator backend. */
export function createEmulatorBackend(options: EmulatorBackendOptions = {}): EmulatorBackend {
  const heap = new Heap(options.initialMemory ?? 1 << 24, options.memoryLimit ?? 2 ** 31)
  const modules = new Set<LoadedModule>()
  let nextStream = 1
  let disposed = false
  const live = () => { if (disposed) throw new Error('the emulator backend was disposed') }

  const backend: EmulatorBackend = {
    name: 'emulator',
    imageKinds: ['ptx'],
    device() {
      return {
        name: 'kernelpack PTX emulator', computeCapability: [12, 0], totalMemory: options.memoryLimit ?? 2 ** 31,
        ptxVersion: [9, 1], multiProcessorCount: 1, warpSize: 32,
      }
    },
    loadModule(image) {
      live()
      if (image.kind !== 'ptx') throw new PtxError(`the emulator runs PTX only; got a ${image.kind} image for ${image.arch}`)
      let end = image.bytes.length
      while (end > 0 && image.bytes[end - 1] === 0) end--
      const text = new TextDecoder().decode(image.bytes.subarray(0, end))
      const lm = loadPtxModule(text, heap, { print: options.print })
      modules.add(lm)
      return {
        getFunction(name: string) {
          const cf = lm.functions.get(name)
          if (!cf || cf.kind !== 'entry') {
            const names = [...lm.functions.values()].filter((f) => f.kind === 'entry').map((f) => f.name)
            throw new Error(`kernel ${name} is not in this PTX module (kernels: ${names.join(', ') || 'none'})`)
          }
          return new KernelHandle(name, lm, cf)
        },
        getGlobal(name: string) {
          const g = lm.globals.get(name)
          if (!g) throw new Error(`variable ${name} is not a .global/.const variable of this PTX module`)
          return { address: BigInt(g.address), size: g.size }
        },
        unload() {
          if (!modules.delete(lm)) return
          for (const at of lm.owned) heap.free(at)
        },
      }
    },
    alloc(byteLength) {
      live()
      return BigInt(heap.alloc(byteLength))
    },
    free(address) {
      live()
      heap.free(addr(address, 'free'))
    },
    copyToDevice(dst, src) {
      live()
      const at = addr(dst, 'copyToDevice')
      heap.check(at, src.length, 'copyToDevice')
      new Uint8Array(heap.buffer, at, src.length).set(src)
    },
    copyFromDevice(dst, src) {
      live()
      const at = addr(src, 'copyFromDevice')
      heap.check(at, dst.length, 'copyFromDevice')
      dst.set(new Uint8Array(heap.buffer, at, dst.length))
    },
    memset(dst, byte, byteLength) {
      live()
      const at = addr(dst, 'memset')
      heap.check(at, byteLength, 'memset')
      new Uint8Array(heap.buffer, at, byteLength).fill(byte & 0xff)
    },
    createStream() { return { id: nextStream++ } },
    destroyStream() {},
    synchronize() {},
    launch(fn, config, params) {
      live()
      if (!(fn instanceof KernelHandle)) throw new TypeError('launch: not a function of an emulator module')
      const { mod, cf } = fn
      if (!modules.has(mod)) throw new Error(`launch: the module of ${fn.name} was unloaded`)
      const grid = dim(config.grid, 'grid')
      const block = dim(config.block, 'block')
      const nthreads = block[0] * block[1] * block[2]
      if (nthreads > 1024) throw new RangeError(`launch ${fn.name}: ${nthreads} threads per block exceed the limit of 1024`)
      const dyn = config.sharedBytes ?? 0
      if (!Number.isInteger(dyn) || dyn < 0) throw new RangeError(`launch ${fn.name}: sharedBytes must be a non-negative integer`)
      const paramEnd = cf.paramEnd
      if (params.bytes.length < paramEnd) throw new TypeError(`launch ${fn.name}: the parameter block has ${params.bytes.length} bytes, the kernel's .param space needs ${paramEnd}`)
      const shn = mod.layout.sharedStatic + dyn
      const ln = Math.ceil(cf.stackNeed / 16) * 16
      const regions: number[] = []
      try {
        const sb = heap.alloc(Math.max(shn, 4)); regions.push(sb)
        const lb0 = heap.alloc(Math.max(ln * nthreads, 4)); regions.push(lb0)
        const frame = Math.max(cf.frameSize, params.bytes.length)
        const fb = heap.alloc(frame + CALL_STACK); regions.push(fb)
        new Uint8Array(heap.buffer, fb, params.bytes.length).set(params.bytes)
        const inst = mod.inst
        if (mod.generation !== heap.generation) { inst.setHeap(heap.buffer, heap.ok); mod.generation = heap.generation }
        inst.setLaunch({ SB: sb, SHN: shn, DYN: dyn, LB0: lb0, LN: ln, LSZ: cf.stackNeed, PSP: fb + Math.ceil(frame / 16) * 16, PSEND: fb + frame + CALL_STACK, NTX: block[0], NTY: block[1], NTZ: block[2], NCX: grid[0], NCY: grid[1], NCZ: grid[2] })
        inst.setRanges(heap.ranges())
        mod.running = fn.name
        const K = inst.FN[cf.index] as unknown as KernelFn
        let states: ThreadState[] = []
        if (cf.hasSuspend) {
          states = newThreadStates(nthreads, cf.regCount)
        }
        const nblocks = grid[0] * grid[1] * grid[2]
        if (!cf.hasSuspend) K(null, 0, nthreads, fb, 0, nblocks)
        else for (let b = 0; b < nblocks; b++) runBlock(K, cf, states, nthreads, fb, b)
      } catch (e) {
        // deep device recursion exhausts the JS stack before the emulated call stack: same fault
        if (e instanceof RangeError && /call stack/i.test(e.message)) throw new EmulatorFault('call stack overflow (device recursion too deep)', fn.name, 'call')
        throw e
      } finally {
        mod.running = undefined
        for (const r of regions) heap.free(r)
      }
    },
    dispose() {
      disposed = true
      modules.clear()
    },
  }
  return backend
}
