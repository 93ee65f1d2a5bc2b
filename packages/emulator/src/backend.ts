// The `emulator` execution backend: implements the Backend contract of @kernelpack/ptx (backend.ts; the
// runtime re-exports it) over the emulated heap, type-checked against it.
// Launches run synchronously on the calling thread, block after block; see emit-js.ts for how a block's
// threads are run and scheduler.ts for how barriers and warp collectives are resolved.
import type { Backend, BackendFunction, BackendModule, BackendStream, DeviceInfo, Dim3, ImageToLoad, KernelParams, LaunchConfig } from '@kernelpack/ptx'
import { EmulatorFault, PtxError } from './errors.js'
import type { CompiledFunction } from './emit-js.js'
import { Heap } from './heap.js'
import { loadPtxModule, type LoadedModule } from './load-module.js'
import { StalledBlock, newThreadStates, runBlock, type KernelFn } from './scheduler.js'
import { coResidentBlocks, runCooperative } from './cooperative.js'
import { RESERVED_SMEM } from './js-values.js'

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


/** Whether a kernel or a function it calls reads the reserved shared memory. */
function usesReservedSmem(mod: LoadedModule, cf: CompiledFunction, seen = new Set<string>()): boolean {
  if (cf.reservedSmem) return true
  seen.add(cf.name)
  for (const c of cf.calls) {
    const g = mod.functions.get(c)
    if (g && !seen.has(c) && usesReservedSmem(mod, g, seen)) return true
  }
  return false
}

/** The fault of a launch whose threads wait for each other forever (scheduler.ts StalledBlock). */
function deadlock(mod: LoadedModule, cf: CompiledFunction, kernel: string, e: StalledBlock, grid: Dim3, block: Dim3, cooperative: boolean): EmulatorFault {
  const row = cf.suspendAt.get(e.pc)
  const info = row === undefined ? undefined : mod.instrs[row]
  const at = (i: number, d: Dim3) => [i % d[0], Math.floor(i / d[0]) % d[1], Math.floor(i / (d[0] * d[1]))].join(', ')
  const why = cooperative
    ? 'no thread of any block changes what it waits for'
    : 'no thread of its block changes what it waits for; blocks run one after another, so a kernel whose blocks wait for each other needs a cooperative launch ({ cooperative: true })'
  return new EmulatorFault(`deadlock: thread (${at(e.thread, block)}) of block (${at(e.block, grid)}) keeps waiting and ${why}`, kernel, info ? `${info.text} (PTX line ${info.line})` : 'a wait')
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
          const why = lm.refused.get(name)
          if (why && lm.ir.functions.some((f) => f.name === name && f.kind === 'entry')) {
            // one kernel the emulator cannot run leaves its neighbours usable (issue 14)
            const reason = why.line === undefined ? why.message : why.message.slice(`PTX line ${why.line}: `.length)
            throw new PtxError(`kernel ${name} cannot run on the emulator: ${reason}`, why.line)
          }
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
      // the reserved shared memory (%reserved_smem_offset_*) follows the kernel's own, when it reads it
      const reserved = usesReservedSmem(mod, cf)
      const own = mod.layout.sharedStatic + dyn
      const rsv = reserved ? Math.ceil(own / 16) * 16 : 0
      const shn = reserved ? rsv + RESERVED_SMEM : own
      const ln = Math.ceil(cf.stackNeed / 16) * 16
      const nblocks = grid[0] * grid[1] * grid[2]
      const cooperative = config.cooperative === true
      if (cf.gridSync && !cooperative) {
        throw new Error(`launch ${fn.name}: the kernel synchronizes the whole grid (cg::this_grid().sync(): PTX line ${cf.gridSync.line} reads the grid workspace, \`${cf.gridSync.text}\`), which only a cooperative launch provides: launch it with { cooperative: true } (cudaLaunchCooperativeKernel)`)
      }
      if (cooperative) {
        const fit = coResidentBlocks(nthreads, shn, backend.device().multiProcessorCount ?? 1)
        if (nblocks > fit) throw new RangeError(`launch ${fn.name}: a cooperative launch of ${nblocks} blocks of ${nthreads} threads${shn ? ` and ${shn} bytes of shared memory` : ''} does not fit on the emulated device at once (at most ${fit} blocks; CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)`)
      }
      // a cooperative launch keeps every block's shared and local memory; other launches reuse one block's
      const resident = cooperative ? nblocks : 1
      const shStride = Math.ceil(Math.max(shn, 4) / 16) * 16
      const lnStride = Math.ceil(Math.max(ln * nthreads, 4) / 16) * 16
      const regions: number[] = []
      try {
        const sb = heap.alloc(shStride * resident); regions.push(sb)
        const lb0 = heap.alloc(lnStride * resident); regions.push(lb0)
        const frame = Math.max(cf.frameSize, params.bytes.length)
        const fb = heap.alloc(frame + CALL_STACK); regions.push(fb)
        // the grid workspace of cg::this_grid().sync() (%envreg1:%envreg2): a zeroed barrier counter
        const gws = cooperative ? heap.alloc(16) : 0
        if (cooperative) { regions.push(gws); new Uint8Array(heap.buffer, gws, 16).fill(0) }
        new Uint8Array(heap.buffer, fb, params.bytes.length).set(params.bytes)
        const inst = mod.inst
        if (mod.generation !== heap.generation) { inst.setHeap(heap.buffer, heap.ok); mod.generation = heap.generation }
        inst.setLaunch({ SB: sb, SHN: shn, DYN: dyn, LB0: lb0, LN: ln, LSZ: cf.stackNeed, PSP: fb + Math.ceil(frame / 16) * 16, PSEND: fb + frame + CALL_STACK, NTX: block[0], NTY: block[1], NTZ: block[2], NCX: grid[0], NCY: grid[1], NCZ: grid[2], RSV: rsv, GWS: gws })
        inst.setRanges(heap.ranges())
        mod.running = fn.name
        const K = inst.FN[cf.index] as unknown as KernelFn
        const progress = () => inst.progress()
        // the reserved shared memory starts zeroed in every block (cg's scratch barriers count from 0)
        const enter = (b: number) => {
          const at = sb + (cooperative ? b * shStride : 0)
          inst.setBlock(at, lb0 + (cooperative ? b * lnStride : 0))
          if (reserved) new Uint8Array(heap.buffer, at + rsv, RESERVED_SMEM).fill(0)
        }
        try {
          if (cooperative) {
            for (let b = 0; b < nblocks; b++) enter(b)
            runCooperative(K, cf, nblocks, nthreads, fb, enter, progress)
          } else if (!cf.hasSuspend && !reserved) K(null, 0, nthreads, fb, 0, nblocks)
          else {
            const states = newThreadStates(nthreads, cf.regCount)
            for (let b = 0; b < nblocks; b++) {
              enter(b)
              if (cf.hasSuspend) runBlock(K, cf, states, nthreads, fb, b, progress)
              else K(null, 0, nthreads, fb, b, b + 1)
            }
          }
        } catch (e) {
          if (e instanceof StalledBlock) throw deadlock(mod, cf, fn.name, e, grid, block, cooperative)
          throw e
        }
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
