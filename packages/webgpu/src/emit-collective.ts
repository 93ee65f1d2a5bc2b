// Block barriers and warp collectives (collectives.ts lists them) in predicated code: every invocation of
// the workgroup executes them; `active` says whether the CUDA thread takes part (README.md, "Warp
// collectives"). Warp collectives go through workgroup memory: each thread writes its value and whether it
// is active into a scratch row, one workgroupBarrier, then each thread reads the lanes of its warp (warp =
// local_invocation_index / 32). The scratch has two halves used in turn, so one barrier per collective is
// enough: a half is written again only after a later collective's barrier, which every reader of the
// earlier one has passed. This path serves every adapter. Where the adapter's subgroups are exactly 32 wide
// (subgroupMinSize = subgroupMaxSize = 32, NVIDIA's Vulkan driver; SwiftShader's are 4) shfl, vote, activemask,
// elect, match and redux also have a subgroup form (subgroupShuffle, subgroupBallot), taken when the kernel's
// start found every warp to be one subgroup (kp_sg_ok: subgroup_size 32 and subgroup_invocation_id the lane
// for every invocation, which WGSL leaves to the implementation), else the workgroup-memory form.
import { matrixOperands, type Instruction } from '@kernelpack/ptx'
import { address, checked, loadBits, spaceOf, storeBytes, storeWord } from './emit-memory.js'
import type { KernelWriter } from './emit-kernel.js'
import { emitMbarrierWait } from './emit-mbarrier.js'
import { emitMma, TC_SCRATCH, TC_WORDS } from './emit-tensor.js'

export interface ModuleDecl { code: string; bytes: number }

const SCRATCH = 'kp_ws'

/** Module-scope declarations the kernel's collectives need (workgroup scratch, the block counter). */
export function syncDeclarations(w: KernelWriter): Map<string, ModuleDecl> {
  const out = new Map<string, ModuleDecl>()
  if (w.features.has('kp_block_count')) {
    out.set('kp_red', { code: 'var<workgroup> kp_red: atomic<u32>;', bytes: 4 })
    w.helpers.set('kp_block_count', `// how many threads of the block count themselves (n from each invocation): a workgroup atomic counter
// that only grows, read with workgroupUniformLoad (a barrier, the load, a barrier: WGSL knows the result is
// uniform); *base is the total at the previous call, so the counter is never reset
fn kp_block_count(n: u32, base: ptr<function, u32>) -> u32 {
  if (n != 0u) { atomicAdd(&kp_red, n); }
  let v = workgroupUniformLoad(&kp_red);
  let d = v - *base;
  *base = v;
  return d;
}`)
  }
  if (w.tcWords) {
    // the tensor cores' matrices, per warp (emit-tensor.ts)
    out.set(TC_SCRATCH, { code: `const ${TC_WORDS}: u32 = ${w.tcWords}u;\nvar<workgroup> ${TC_SCRATCH}: array<u32, ((kp_nt + 31u) / 32u) * ${TC_WORDS}>;`, bytes: 0 })
  }
  if (w.features.has(SCRATCH)) {
    // two halves of one row per thread: (value, active) and, for 64-bit match, the high word
    out.set(SCRATCH, { code: `var<workgroup> ${SCRATCH}: array<vec2<u32>, 2u * kp_nt>;`, bytes: 0 })
    if (w.features.has('kp_ws_hi')) out.set('kp_ws_hi', { code: 'var<workgroup> kp_ws_hi: array<u32, 2u * kp_nt>;', bytes: 0 })
    w.helpers.set('kp_warp_gather', `// the lanes of thread t's warp that are active (x) and those of them whose value is not zero (y)
fn kp_warp_gather(half: u32, t: u32) -> vec2<u32> {
  let base = t & ~31u;
  var act = 0u; var bits = 0u;
  for (var l = 0u; l < 32u; l = l + 1u) {
    if (base + l >= kp_nt) { break; }
    let e = ${SCRATCH}[half + base + l];
    if (e.y != 0u) { act = act | (1u << l); if (e.x != 0u) { bits = bits | (1u << l); } }
  }
  return vec2<u32>(act, bits);
}`)
  }
  return out
}

/** Bytes of workgroup memory the scratch takes for a block of `threads` (for the limits check). */
export function scratchBytesPerThread(w: KernelWriter): number {
  const tc = Math.ceil((w.tcWords * 4) / 32)
  if (!w.features.has(SCRATCH)) return tc
  return tc + 2 * 8 + (w.features.has('kp_ws_hi') ? 2 * 4 : 0)
}

/** Publishes (value, active) of every thread in the next scratch half and waits; returns the half's offset.
 *  `value`, `active` and `hi` are evaluated per thread. */
function publish(w: KernelWriter, value: () => string, active: () => string, hi?: () => string): string {
  w.features.add(SCRATCH)
  const half = w.declare('kp_half', 'u32', false)
  w.line(`${half} = kp_nt - ${half};`)
  w.perThread(() => {
    w.line(`${SCRATCH}[${half} + kp_t] = vec2<u32>(${value()}, select(0u, 1u, ${active()}));`)
    if (hi) {
      w.features.add('kp_ws_hi')
      w.line(`kp_ws_hi[${half} + kp_t] = ${hi()};`)
    }
  })
  w.line('workgroupBarrier();')
  return half
}

/** How a collective reads its warp's published (value, active) pairs: from the scratch half, or by subgroup
 *  operations on each invocation's own pair (where kp_sg_ok). `pair(lane)`: the pair of this thread's warp's
 *  lane `lane` (a lane past the block's threads reads the last thread's, never used); `gather()`: (the active
 *  lanes, those of them whose value is not zero). */
interface Exchange {
  pair(lane: string): string
  hi(lane: string): string
  gather(): string
}

function scratchExchange(half: string): Exchange {
  const at = (lane: string) => `${half} + min((kp_t & ~31u) + ${lane}, kp_nt - 1u)`
  return {
    pair: (lane) => `${SCRATCH}[${at(lane)}]`,
    hi: (lane) => `kp_ws_hi[${at(lane)}]`,
    gather: () => `kp_warp_gather(${half}, kp_t)`,
  }
}

/** The collective for every invocation: its subgroup form where the kernel has one (w.subgroups) and kp_sg_ok
 *  holds at run time, else (and always where it has none) the workgroup-memory form. `body` reads through the
 *  Exchange it is given, in code every invocation runs (the subgroup operations need uniform control flow). */
function exchanged(w: KernelWriter, value: () => string, active: () => string, body: (x: Exchange) => void, hi?: () => string): void {
  if (!w.subgroups) {
    body(scratchExchange(publish(w, value, active, hi)))
    return
  }
  w.features.add('kp_sg')
  w.open('if (kp_sg_ok) {')
  const pr = w.tmp(`vec2<u32>(${value()}, select(0u, 1u, ${active()}))`)
  const h = hi ? w.tmp(hi()) : undefined
  body({
    pair: (lane) => `subgroupShuffle(${pr}, ${lane})`,
    hi: (lane) => `subgroupShuffle(${h ?? '0u'}, ${lane})`,
    gather: () => `vec2<u32>(subgroupBallot(${pr}.y != 0u).x, subgroupBallot(${pr}.y != 0u && ${pr}.x != 0u).x)`,
  })
  w.close()
  w.open('else {')
  body(scratchExchange(publish(w, value, active, hi)))
  w.close()
}

/** The operand index of a collective's membermask (absent: all lanes). */
export function maskOf(w: KernelWriter, ins: Instruction, at: number): string {
  const o = ins.operands[at]
  return o ? w.u32(o) : '0xffffffffu'
}

export function dstOf(ins: Instruction): { d: Instruction['operands'][number] | undefined; p: Instruction['operands'][number] | undefined } {
  const o = ins.operands[0]
  if (o?.kind === 'pair') return { d: o.first, p: o.second }
  return { d: o, p: undefined }
}

/** How many threads of the block have `cond` (evaluated per thread); the count is uniform. */
function countBlock(w: KernelWriter, cond: () => string): string {
  w.features.add('kp_block_count')
  const n = w.declare('kp_n', 'u32', false)
  const base = w.declare('kp_rbase', 'u32', false)
  w.line(`${n} = 0u;`)
  w.perThread(() => w.line(`${n} = ${n} + select(0u, 1u, ${cond()});`))
  return w.tmp(`kp_block_count(${n}, &${base})`)
}

/** The lane shfl.sync `ins` (mode up/down/bfly/idx) reads for lane `lane` with operands b and c (`let`s), and
 *  whether it is in range (PTX ISA "shfl.sync"); out of range the lane reads itself. */
export function shflSource(w: KernelWriter, ins: Instruction, lane: string, b: string, c: string): { srcLane: string; pv: string } {
  const seg = w.tmp(`(${c} >> 8u) & 0x1fu`)
  const maxLane = w.tmp(`(${lane} & ${seg}) | (${c} & 0x1fu & ~${seg})`)
  let j: string, pv: string
  switch (ins.mode) {
    // (b's low 5 bits: the PTX ISA's bval = b[4:0], so an offset of 33 reads the lane 1 away)
    case 'up': j = w.tmp(`${lane} - (${b} & 31u)`); pv = w.tmp(`bitcast<i32>(${lane}) - bitcast<i32>(${b} & 31u) >= bitcast<i32>(${maxLane})`); break
    case 'down': j = w.tmp(`${lane} + (${b} & 31u)`); pv = w.tmp(`${j} <= ${maxLane}`); break
    case 'bfly': j = w.tmp(`${lane} ^ (${b} & 31u)`); pv = w.tmp(`${j} <= ${maxLane}`); break
    default: j = w.tmp(`(${lane} & ${seg}) | (${b} & 0x1fu & ~${seg})`); pv = w.tmp(`${j} <= ${maxLane}`)
  }
  return { srcLane: w.tmp(`select(${lane}, ${j}, ${pv} && ${j} < 32u)`), pv }
}

/** redux.sync `ins`'s operation on `acc` and `v` (u32 expressions; .s32 min/max signed). */
export function reduxCombine(w: KernelWriter, ins: Instruction, acc: string, v: string): string {
  const signed = ins.type === 's32'
  switch (ins.reduction) {
    case 'add': return `${acc} + ${v}`
    case 'min': return signed ? `bitcast<u32>(min(bitcast<i32>(${acc}), bitcast<i32>(${v})))` : `min(${acc}, ${v})`
    case 'max': return signed ? `bitcast<u32>(max(bitcast<i32>(${acc}), bitcast<i32>(${v})))` : `max(${acc}, ${v})`
    case 'and': return `${acc} & ${v}`
    case 'or': return `${acc} | ${v}`
    case 'xor': return `${acc} ^ ${v}`
    default: return w.refuse(`redux.${ins.reduction}`)
  }
}

/** Writes the collective `ins` for every invocation; `active` gives a thread's participation (per thread). */
export function emitSync(w: KernelWriter, ins: Instruction, active: () => string): void {
  w.line(`// ${ins.text.replace(/\s+/g, ' ').replace(/\*\//g, '* /')}`)
  const A = ins.operands
  switch (ins.op) {
    case 'mbarrier':
      return emitMbarrierWait(w, ins, active)
    case 'membar': case 'fence':
      // A device-scope fence (__threadfence(): membar.gl, fence.sc/acq_rel.gpu, and clang's fence.sc.sys around
      // atomicCAS) orders a thread's memory accesses for every thread of the device: in the threadfence
      // reduction a block's partial sum is visible before its ticket (an atomic) is drawn, and the block that
      // draws the last ticket reads the partials after it. WGSL has no device-scope fence: its atomics are
      // relaxed, and storageBarrier (a control barrier ordering storage memory, acquire and release) is scoped
      // to the workgroup in WGSL's memory model. The fence is written as that storageBarrier where every
      // invocation reaches it (the code around it predicated, as around a barrier), in a kernel whose global
      // accesses are all atomics (the memory plan): the strongest ordering WGSL has. It is the ordering the
      // pattern needs where a storage barrier completes the workgroup's device-memory accesses (Tint writes it
      // for Metal as threadgroup_barrier(mem_flags::mem_device); SwiftShader has one coherent memory); WGSL
      // itself does not promise it. Waiting for another block's write (a spin) stays refused: no forward progress.
      w.line('storageBarrier();')
      return
    case 'bar': case 'barrier': {
      if (ins.flags.cluster) return w.refuse('cluster barriers: WebGPU has no thread-block clusters')
      if (ins.flags.warp) {
        // __syncwarp(): the warp's lanes meet; a block barrier is a superset
        w.line('workgroupBarrier();')
        return
      }
      if (ins.mode === 'arrive') return w.refuse('bar.arrive (producer/consumer named barriers): WGSL has only whole-workgroup barriers')
      if (ins.mode === 'red') {
        // bar.red.{popc,and,or}{.u32,.pred} d, id, {count,} {!}p
        if (A.length > 3) return w.refuse('bar.red with a thread count: WGSL has only whole-workgroup barriers')
        // (shared memory in the arena is storage memory: emit-arena-shared.ts)
        if (w.mem.storageBarriers.has(ins) || (w.sharedInArena && w.mem.usesShared)) w.line('storageBarrier();')
        const p = () => w.pred(A[A.length - 1]!)
        const n = countBlock(w, ins.reduction === 'and' ? () => `${active()} && !(${p()})` : () => `${active()} && ${p()}`)
        w.perThread(() => {
          w.open(`if (${active()}) {`)
          if (ins.reduction === 'popc') w.setU32(A[0], n)
          else w.setPred(A[0], ins.reduction === 'and' ? `${n} == 0u` : `${n} != 0u`)
          w.close()
        })
        return
      }
      // a named barrier without a thread count still waits for the whole block
      if (A.length > 1) return w.refuse('named barriers with a thread count (bar.sync id, count): WGSL has only whole-workgroup barriers')
      // CUDA's barrier also orders the block's global memory accesses (PTX ISA, "bar"): storageBarrier
      // where global accesses on both sides need it (globalBarriers)
      if (w.mem.storageBarriers.has(ins)) w.line('storageBarrier();')
      w.line('workgroupBarrier();')
      return
    }
    case 'shfl': {
      // shfl.sync.{up,down,bfly,idx}.b32 d{|p}, a, b, c, membermask (PTX ISA "shfl.sync")
      const { d, p } = dstOf(ins)
      exchanged(w, () => w.u32(A[1]!), active, (x) => w.perThread(() => {
        const a = w.tmp(w.u32(A[1]!))
        const b = w.tmp(w.u32(A[2]!))
        const c = w.tmp(w.u32(A[3]!))
        const lane = w.tmp('kp_t & 31u')
        const { srcLane, pv } = shflSource(w, ins, lane, b, c)
        const src = w.tmp(`(kp_t & ~31u) + ${srcLane}`)
        const e = w.tmp(x.pair(srcLane))
        const m = w.tmp(maskOf(w, ins, 4))
        w.open(`if (${active()}) {`)
        // in range, a source lane that is not in membermask or not taking part gives 0, as NVIDIA GPUs do
        // (the PTX ISA leaves it undefined; the emulator's scheduler.ts); out of range, the lane's own value
        w.setU32(d, `select(${a}, select(0u, ${e}.x, ${e}.y != 0u && ${src} < kp_nt && ((${m} >> (${src} & 31u)) & 1u) != 0u), ${pv})`)
        if (p) w.setPred(p, pv)
        w.close()
      }))
      return
    }
    case 'vote': {
      // vote.sync.{all,any,uni,ballot} d, {!}p, membermask
      exchanged(w, () => `select(0u, 1u, ${w.pred(A[1]!)})`, active, (x) => w.perThread(() => {
        const g = w.tmp(x.gather())
        const m = w.tmp(`${maskOf(w, ins, 2)} & ${g}.x`)
        const bal = w.tmp(`${g}.y & ${m}`)
        w.open(`if (${active()}) {`)
        switch (ins.mode) {
          case 'ballot': w.setU32(A[0], bal); break
          case 'all': w.setPred(A[0], `${bal} == ${m}`); break
          case 'any': w.setPred(A[0], `${bal} != 0u`); break
          default: w.setPred(A[0], `(${bal} == ${m}) || (${bal} == 0u)`)
        }
        w.close()
      }))
      return
    }
    case 'activemask': {
      exchanged(w, () => '0u', active, (x) => w.perThread(() => {
        const g = w.tmp(x.gather())
        w.open(`if (${active()}) {`)
        w.setU32(A[0], `${g}.x`)
        w.close()
      }))
      return
    }
    case 'elect': {
      // elect.sync d|p, membermask: the lowest active lane of the mask leads
      const { d, p } = dstOf(ins)
      exchanged(w, () => '0u', active, (x) => w.perThread(() => {
        const m = w.tmp(`${maskOf(w, ins, 1)} & ${x.gather()}.x`)
        const leader = w.tmp(`select(firstTrailingBit(${m}), 0xffffffffu, ${m} == 0u)`)
        w.open(`if (${active()}) {`)
        w.setU32(d, leader)
        if (p) w.setPred(p, `${leader} == (kp_t & 31u)`)
        w.close()
      }))
      return
    }
    case 'match': {
      // match.{any,all}.sync.{b32,b64} d{|p}, a, membermask
      const { d, p } = dstOf(ins)
      const wide = ins.type === 'b64'
      const m = w.declare('kp_match_m', 'u32')
      const eq = w.declare('kp_match_all', 'bool')
      exchanged(w, () => (wide ? `${w.u64(A[1]!)}.x` : w.u32(A[1]!)), active, (x) => w.perThread(() => {
        const a = w.tmp(wide ? w.u64(A[1]!) : w.u32(A[1]!))
        const act = w.tmp(`${maskOf(w, ins, 2)} & ${x.gather()}.x`)
        w.line(`${m} = 0u;`)
        w.line(`${eq} = true;`)
        w.open('for (var l = 0u; l < 32u; l = l + 1u) {')
        // every lane's value read before the lanes go their ways (a subgroup operation needs them all)
        const v = w.tmp(`${x.pair('l')}.x`)
        const vh = wide ? w.tmp(x.hi('l')) : undefined
        const same = wide ? `${v} == ${a}.x && ${vh} == ${a}.y` : `${v} == ${a}`
        // (an if, not a continue: after a continue that differs between the lanes WGSL's uniformity analysis
        // takes the rest of the loop for divergent, and the next iteration's shuffle with it)
        w.line(`if (((${act} >> l) & 1u) != 0u) { if (${same}) { ${m} = ${m} | (1u << l); } else { ${eq} = false; } }`)
        w.close()
        w.open(`if (${active()}) {`)
        if (ins.mode === 'all') {
          w.setU32(d, `select(0u, ${act}, ${eq})`)
          if (p) w.setPred(p, eq)
        } else w.setU32(d, m)
        w.close()
      }), wide ? () => `${w.u64(A[1]!)}.y` : undefined)
      return
    }
    case 'redux': {
      // redux.sync.{add,min,max,and,or,xor}.{u32,s32,b32} d, a, membermask
      const acc = w.declare('kp_redux', 'u32')
      const first = w.declare('kp_redux_first', 'bool')
      exchanged(w, () => w.u32(A[1]!), active, (x) => w.perThread(() => {
        const act = w.tmp(`${maskOf(w, ins, 2)} & ${x.gather()}.x`)
        w.line(`${acc} = 0u;`)
        w.line(`${first} = true;`)
        w.open('for (var l = 0u; l < 32u; l = l + 1u) {')
        // every lane's value read before the lanes go their ways (a subgroup operation needs them all)
        const v = w.tmp(`${x.pair('l')}.x`)
        const comb = reduxCombine(w, ins, acc, v)
        // (an if, not a continue, as in match)
        w.line(`if (((${act} >> l) & 1u) != 0u) { if (${first}) { ${acc} = ${v}; ${first} = false; } else { ${acc} = ${comb}; } }`)
        w.close()
        w.open(`if (${active()}) {`)
        w.setU32(A[0], acc)
        w.close()
      }))
      return
    }
    case 'mma': case 'wmma':
      return emitMma(w, ins, active)
    case 'ldmatrix': case 'stmatrix': {
      // ldmatrix/stmatrix .m8n8 .x1/.x2/.x4 {.trans} .b16 (PTX ISA "ldmatrix"): lane 8j + r gives the address
      // of row r of matrix j; lane l holds row l>>2, columns 2(l&3) and 2(l&3)+1 of each matrix (of its
      // transpose with .trans). The row addresses go through the scratch; each lane then moves its own words.
      const regs = matrixOperands(ins)
      if (typeof regs === 'string') return w.refuse(regs)
      const store = ins.op === 'stmatrix'
      const op = A[store ? 0 : 1]!
      const space = spaceOf(ins)
      if (space === 'param') return w.refuse(`${ins.op} in parameter space`)
      const half = publish(w, () => address(w, op, space).at, active)
      w.perThread(() => {
        w.open(`if (${active()}) {`)
        const lane = w.tmp('kp_t & 31u')
        const row = (src: string) => `${SCRATCH}[${half} + (kp_t & ~31u) + ${src}].x`
        regs.forEach((r, j) => {
          const v = store ? w.tmp(w.u32(r)) : undefined
          if (!ins.flags.trans) {
            const a = w.tmp(checked(w, space, `${row(`${8 * j}u + (${lane} >> 2u)`)} + 4u * (${lane} & 3u)`, 4))
            if (v) storeWord(w, space, `${a} >> 2u`, v)
            else w.setU32(r, loadBits(w, space, a, 4))
            return
          }
          const lo = w.tmp(checked(w, space, `${row(`${8 * j}u + 2u * (${lane} & 3u)`)} + 2u * (${lane} >> 2u)`, 2))
          const hi = w.tmp(checked(w, space, `${row(`${8 * j + 1}u + 2u * (${lane} & 3u)`)} + 2u * (${lane} >> 2u)`, 2))
          if (v) {
            storeBytes(w, space, lo, v, 2)
            storeBytes(w, space, hi, `${v} >> 16u`, 2)
          } else w.setU32(r, `${loadBits(w, space, lo, 2)} | (${loadBits(w, space, hi, 2)} << 16u)`)
        })
        w.close()
      })
      return
    }
    case 'movmatrix': {
      // movmatrix.sync.aligned.m8n8.trans.b16 d, a: lane l holds row l>>2, columns 2(l&3), 2(l&3)+1 of an 8×8
      // matrix and gets the same elements of its transpose: element (c, r) is in lane 4c + (r>>1), half r&1
      const half = publish(w, () => w.u32(A[1]!), active)
      w.perThread(() => {
        w.open(`if (${active()}) {`)
        const lane = w.tmp('kp_t & 31u')
        const at = (c: string) => `((${SCRATCH}[${half} + (kp_t & ~31u) + 4u * (${c}) + ((${lane} >> 2u) >> 1u)].x >> (16u * ((${lane} >> 2u) & 1u))) & 0xffffu)`
        w.setU32(A[0], `${at(`2u * (${lane} & 3u)`)} | (${at(`2u * (${lane} & 3u) + 1u`)} << 16u)`)
        w.close()
      })
      return
    }
    default:
      return w.refuse(`internal: ${ins.op} is not a collective`)
  }
}
