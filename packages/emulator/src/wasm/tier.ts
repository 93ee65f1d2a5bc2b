// The WebAssembly tier at run time (issue 24): binds a module's wasm kernels (emit-wasm.ts) to the heap's
// WebAssembly.Memory and puts them in the instance's function table in place of their JavaScript code, on
// the calling thread and in every worker alike. The instance's launch state reaches the wasm code through
// imported mutable globals, set where the JS tier sets its own (setLaunch, setBlock); the allocation ranges
// and the validity map reach `miss`, which does for a wasm access site what emit-js.ts's globalCheck and
// rng() do for a JS one, so both tiers fault alike and cache alike.
import type { LaunchState, ModuleInstance } from '../instance.js'
import { bf16ToNum, bfe32, bfe64, bfi32, bfi64, brev32, cvt32, f16ToNum, fma32, fma64, fmaB, fmaH, fop32, fop64, lop3, numToBf16, numToF16, prmt } from '../numeric.js'
import { formatPrintf, printfResult } from '../printf.js'
import { DIRECTED, LAUNCH_GLOBALS, NO_ADDRESS, PRMT_MODES, ROUND_OPS, SPACES, type TcSlot, type TensorOp } from './emit-wasm.js'
import { mmaLane, movmatrixLane } from '../tensor-core.js'

/** A compiled wasm module of kernels and where each lives in the instance's function table. */
export interface WasmCode {
  module: WebAssembly.Module
  /** Function-table index (CompiledFunction.index) → export name. */
  kernels: Array<[number, string]>
  /** The tensor-core collectives the module's `tc` import computes, by id (emit-wasm.ts TensorOp). */
  tensor?: TensorOp[]
}

const GSH = 2 ** 34, GLO = 2 ** 35, GPA = 2 ** 36

/** Which tier runs each kernel, and why not wasm (mod.inspect, KERNELPACK_EMULATOR_DEBUG). */
export type Codegen = 'auto' | 'wasm' | 'js'

/** The instance `inst` with the kernels of `code` running as wasm once the heap (a WebAssembly.Memory,
 *  `memory()`) is bound; `fault` throws the tier's fault for (row, address, kind). */
export function withWasmKernels(inst: ModuleInstance, code: WasmCode, memory: () => WebAssembly.Memory | undefined, fault: (i: number, a: number | undefined, what: string) => never, print: (text: string, t: number, b: number, site: number) => void): ModuleInstance {
  const G: Record<string, WebAssembly.Global> = {}
  for (const g of LAUNCH_GLOBALS) G[g] = new WebAssembly.Global({ value: 'i32', mutable: true }, 0)
  G.RL = new WebAssembly.Global({ value: 'f64', mutable: true }, 0)
  G.RH = new WebAssembly.Global({ value: 'f64', mutable: true }, 0)
  G.RD = new WebAssembly.Global({ value: 'i32', mutable: true }, 0)
  let ok: Uint8Array = new Uint8Array(0)
  let hn = 0
  let ar: Float64Array = new Float64Array(0)
  let st: LaunchState | undefined
  let sb = 0, lb0 = 0
  const jsFN = inst.FN
  const FN = jsFN.slice()
  let bound = false

  /** A site's miss: the full check of an n-byte access at `a` in `space` (emit-js.ts globalCheck), then the
   *  range the site may cache and where the bytes are. Throws the fault. */
  function miss(row: number, a: number, n: number, space: number): number {
    const what = SPACES[space]!
    const al = n >= 16 ? 15 : n - 1
    const aligned = (a % (al + 1)) === 0
    const mapped = a >= 0 && a < hn && ok[a >>> 2] === 1 && (n <= 4 || ok[(a + n - 4) >>> 2] === 1)
    if (mapped && aligned) {
      // the allocation holding a (rng in emit-js.ts): its start addresses for an n-byte access
      if (probe(a)) G.RH!.value = (G.RH!.value as number) - n
      else { G.RL!.value = 1; G.RH!.value = 0 }
      G.RD!.value = 0
      return a
    }
    if (what === 'generic' && st) {
      const windows: Array<[number, number, number]> = [[GSH, st.SHN, sb], [GLO, st.LN * st.NTX * st.NTY * st.NTZ, lb0], [GPA, st.PE - st.PB, st.PB]]
      for (const [base, size, at] of windows) {
        if (a >= base && a <= base + size - n) {
          if (!aligned) break
          G.RL!.value = base; G.RH!.value = base + size - n; G.RD!.value = at
          return a - base + at
        }
      }
    }
    return fault(row, a, what)
  }

  /** The allocation holding `a` (binary search over the launch's ranges): 1 and its [RL, RH = end), else 0;
   *  never faults (the hoisted-range test's lookup, emit-wasm.ts blockTest, and the miss's). */
  function probe(a: number): number {
    let lo = 0, hi = (ar.length >>> 1) - 1
    while (lo <= hi) {
      const m = (lo + hi) >>> 1
      if (a < ar[2 * m]!) hi = m - 1
      else if (a >= ar[2 * m + 1]!) lo = m + 1
      else { G.RL!.value = ar[2 * m]!; G.RH!.value = ar[2 * m + 1]!; return 1 }
    }
    return 0
  }

  function bind(): void {
    const mem = memory()
    if (!mem) return
    const imports = {
      e: {
        ...G, mem,
        // a trap, a call past the call stack and an assertion have no address (the JS tier passes none; emit-wasm.ts passes 0)
        fault: (row: number, a: number, space: number) => fault(row, NO_ADDRESS.has(SPACES[space]!) ? undefined : a, SPACES[space]!),
        miss, probe,
        fma32, fma64, fmaH, fmaB,
        // a warp's tensor-core collective (scheduler.ts resolveCollective, then each lane's own part as
        // emit-instruction.ts computes it): every lane's inputs from its slots (lane l's at base + l·stride),
        // for the lanes in `mask`; each such lane's results into its slots
        tc: (id: number, base: number, stride: number, mask: number) => {
          const op = code.tensor![id]!
          const dv = new DataView(mem.buffer)
          const get = (at: number, s: TcSlot) => (s.kind === 'f32' ? dv.getFloat32(at + s.off, true) : s.kind === 'f64' ? dv.getFloat64(at + s.off, true) : dv.getInt32(at + s.off, true))
          const put = (at: number, s: TcSlot, v: number) => { if (s.kind === 'f32') dv.setFloat32(at + s.off, v, true); else if (s.kind === 'f64') dv.setFloat64(at + s.off, v, true); else dv.setInt32(at + s.off, v, true) }
          if (op.kind === 'movmatrix') {
            const regs: Array<number | undefined> = new Array(32)
            for (let l = 0; l < 32; l++) if ((mask >>> l) & 1) regs[l] = get(base + l * stride, op.x)
            for (let l = 0; l < 32; l++) if ((mask >>> l) & 1) put(base + l * stride, op.d, movmatrixLane(regs, l))
            return
          }
          const frags: Array<[number[], number[], number[]] | undefined> = new Array(32)
          for (let l = 0; l < 32; l++) {
            if (!((mask >>> l) & 1)) continue
            const at = base + l * stride
            frags[l] = [op.a.map((s) => get(at, s)), op.b.map((s) => get(at, s)), op.c.map((s) => get(at, s))]
          }
          for (let l = 0; l < 32; l++) {
            if (!((mask >>> l) & 1)) continue
            const d = mmaLane(frags, op.key, l)
            op.d.forEach((s, j) => put(base + l * stride, s, d[j]!))
          }
        },
        // device printf (instance.ts vprintf): the text from the format and the argument buffer in the heap
        vprintf: (row: number, fmt: number, args: number, t: number, b: number) => {
          const h8 = new Uint8Array(mem.buffer), heapAt = (x: number) => inst.heapAt(x)
          print(formatPrintf(h8, fmt, args, heapAt), t, b, row)
          return printfResult(h8, fmt, heapAt)
        },
        sin: Math.sin, cos: Math.cos,
        brev32, bfi32, lop3, f16ToNum, bf16ToNum,
        bfe32u: (a: number, p: number, l: number) => bfe32(a, p, l, false),
        bfe32s: (a: number, p: number, l: number) => bfe32(a, p, l, true),
        // 64-bit values cross as BigInt both ways (the JS tier's helpers may answer a number)
        bfe64u: (a: bigint, p: number, l: number) => BigInt.asIntN(64, BigInt(bfe64(a, p, l, false))),
        bfe64s: (a: bigint, p: number, l: number) => BigInt.asIntN(64, BigInt(bfe64(a, p, l, true))),
        bfi64: (a: bigint, b: bigint, p: number, l: number) => BigInt.asIntN(64, BigInt(bfi64(a, b, p, l))),
        numToF16: (x: number) => numToF16(x), numToBf16: (x: number) => numToBf16(x),
        ...Object.fromEntries(PRMT_MODES.map((m) => [`prmt${m}`, (a: number, b: number, c: number) => prmt(a, b, c, m)])),
        ...Object.fromEntries(ROUND_OPS.flatMap((op) => DIRECTED.flatMap((m) => [
          [`fop32${op}${m}`, (a: number, b: number, c: number) => fop32(op, m, a, b, c)],
          [`fop64${op}${m}`, (a: number, b: number, c: number) => fop64(op, m, a, b, c)],
        ]))),
        ...Object.fromEntries(DIRECTED.map((m) => [`cvt32${m}`, (x: number) => cvt32(x, m)])),
      },
    }
    const wi = new WebAssembly.Instance(code.module, imports)
    for (const [index, name] of code.kernels) {
      const w = wi.exports[name] as (t0: number, t1: number, fb: number, b0: number, b1: number) => void
      FN[index] = ((_T: unknown, t0: number, t1: number, fb: number, b0: number, b1: number) => w(t0, t1, fb, b0, b1)) as unknown as (...args: never[]) => void
    }
    bound = true
  }

  const out: ModuleInstance = {
    FN,
    setHeap(buf, okMap) {
      inst.setHeap(buf, okMap)
      ok = okMap
      hn = buf.byteLength
      if (!bound) bind()
    },
    setLaunch(o) {
      inst.setLaunch(o)
      st = o
      for (const g of LAUNCH_GLOBALS) G[g]!.value = o[g]
      sb = o.SB; lb0 = o.LB0
    },
    setRanges(r) { inst.setRanges(r); ar = r },
    progress: () => inst.progress(),
    setBlock(s, l) { inst.setBlock(s, l); sb = s; lb0 = l; G.SB!.value = s; G.LB0!.value = l },
    heapAt: (a) => inst.heapAt(a),
  }
  return out
}
