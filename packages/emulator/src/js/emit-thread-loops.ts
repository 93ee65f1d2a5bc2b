// Renders @kernelpack/ptx's thread-loop plan (analysis/thread-loops.ts) of a kernel as JavaScript: the code
// between barriers as loops over the block's threads, code with warp collectives warp by warp as loops over
// the lanes, control flow around barriers once per block and around collectives once per warp. It places
// code; what each instruction does comes from emit-instruction.ts (the per-instruction code emit-js.ts
// produced), and the plan says what is kept per thread.
//
// In the generated code: ST[t] is a thread's state (0 running, -1 ended, 1 left warp-level code by a
// block-wide decision, 2+2k / 3+2k waiting at the end / for the next trip of warp-level region k); V<r> is
// the per-thread slot array of register r; X is the block-wide decision a loop's threads took (a code per
// target, 0 none); a warp collective k collects each arriving lane's inputs in W<k>_<j>[lane] and its
// arrival in A<k> (bit per lane), and the lanes take their results in the next loop (q0, q1, then the
// instruction's own writes).
import { threadLoopTxRange, type TxEnd, type Collective, type Departure, type IrFunction, type IrOperand, type LockstepPoint, type ScheduleItem, type StructNode, type ThreadLoop, type ThreadLoopPlan, type ThreadLoopSchedule } from '@kernelpack/ptx'
import type { CollectiveUse, InstructionEmitter as FunctionEmitter } from './emitter.js'
import { usesName } from '../js-values.js'

/** A collective as emit-instruction.ts describes it: its inputs (JS expressions) and the statements that
 *  write its results (reading q0, q1). */

/** The tensor-core collectives: every lane reads every lane's inputs. */
const TENSOR_CORE = new Set(['mma', 'ldmatrix', 'stmatrix', 'movmatrix'])

const LEFT = 1
const DEAD = -1
const breakTag = (id: number) => 2 + 2 * id
const continueTag = (id: number) => 3 + 2 * id

/** A JS literal produced by js-values.ts (an immediate operand): it needs no slot. */
const isLiteral = (e: string) => /^\(?-?(\d+(\.\d+)?(e[+-]?\d+)?|true|false)\)?$/.test(e)

/** The JS label of a structure region: `L<id>` for loops, `B<id>` for blocks and ifs. */
export function regionLabel(kind: 'block' | 'loop' | 'if', id: number): string {
  return `${kind === 'loop' ? 'L' : 'B'}${id}`
}

export class ThreadLoopWriter {
  /** Codes of the block-wide decisions (X), by target. */
  private readonly codes = new Map<string, number>()
  /** Instructions that run in lane loops. */
  private readonly inWarp: Uint8Array
  /** Module-level declarations (collective buffers, the per-thread state allocator). */
  readonly decls: string[] = []
  /** Function-level variables the rendered code uses. */
  private readonly vars = new Set<string>()
  private readonly hasState: boolean
  /** JS names of the registers kept once per block. */
  private readonly perBlockJs: Set<string>

  constructor(private readonly E: FunctionEmitter, readonly plan: ThreadLoopSchedule) {
    this.perBlockJs = new Set(plan.perBlock.map((r) => E.regJs[r]!))
    this.inWarp = new Uint8Array(E.fn.instructions.length)
    const mark = (items: ScheduleItem[], warp: boolean) => {
      for (const it of items) {
        if (it.kind === 'threads' && warp) this.inWarp.fill(1, it.start, it.end)
        else if (it.kind === 'warps') mark(it.body, true)
        else if (it.kind === 'region') mark(it.body, warp)
      }
    }
    mark(plan.schedule, false)
    this.hasState = plan.warps || plan.threadsEnd
  }

  private get fi(): number { return this.E.index }

  /** The statement ending the current thread (kernel `ret`/`exit`). */
  end(): string {
    return this.hasState ? `ST[t]=${DEAD};continue TH;` : 'continue TH;'
  }

  private code(kind: 'break' | 'continue', node: number): number {
    const key = `${kind}:${node}`
    let c = this.codes.get(key)
    if (c === undefined) { c = this.codes.size + 1; this.codes.set(key, c) }
    return c
  }

  /** The code of a branch that leaves its thread loop (instruction i). */
  departure(d: Departure, i: number): string {
    switch (d.kind) {
      case 'uniform': return `X=${this.code(d.target.kind, d.target.node)};${this.inWarp[i] ? `ST[t]=${LEFT};` : ''}break R;`
      case 'park': return `ST[t]=${d.target.kind === 'break' ? breakTag(d.target.node) : continueTag(d.target.node)};break R;`
      case 'exit': {
        // the tail's own return ends the thread; one that falls off the end of the kernel needs the end here
        const last = d.tail[d.tail.length - 1]
        const ends = last?.kind === 'instr' && ['ret', 'exit'].includes(this.E.fn.instructions[last.index]!.op) && !this.E.fn.instructions[last.index]!.guard
        return `{${this.nodes(d.tail, this.E.bodyCode)}${ends ? '' : this.end()}}`
      }
    }
  }

  // --- rendering ---

  /** The kernel's per-block code. */
  render(): string {
    // a last loop that only returns has nothing to do
    const items = [...this.plan.schedule]
    const last = items[items.length - 1]
    const ins = this.E.fn.instructions
    if (last?.kind === 'threads' && last.scatter === undefined && last.gather === undefined && last.nodes.every((x) => x.kind === 'instr' && ['ret', 'exit'].includes(ins[x.index]!.op) && !ins[x.index]!.guard)) items.pop()
    return this.items(items)
  }

  /** Declarations the kernel function needs before its block loop. */
  prologue(): string {
    const p = this.plan
    const kept = p.perThread.filter((r) => this.rematerialized(r) === undefined)
    const fields = [`n`, `ST:new Int32Array(n)`, ...kept.map((r) => `V${r}:${this.slotArray(r)}`)]
    this.decls.push(`let KS${this.fi}=null;function mkKS${this.fi}(n){return{${fields.join(',')}}}`)
    const slots = kept.map((r) => `V${r}=K_.V${r}`)
    const vars = [...this.vars].map((v) => `${v}=0`)
    return `let K_=KS${this.fi};if(K_===null||K_.n<NT)K_=KS${this.fi}=mkKS${this.fi}(NT);const ST=K_.ST${slots.length ? ',' + slots.join(',') : ''};${vars.length ? `let ${vars.join(',')};` : ''}`
  }

  /** Per-block setup inside the block loop. */
  blockStart(): string {
    return this.hasState ? 'ST.fill(0,0,NT);' : ''
  }

  private slotArray(r: number): string {
    switch (this.E.classes[r]) {
      case 'i32': case 'i16': return 'new Int32Array(n)'
      case 'pred': return 'new Uint8Array(n)'
      case 'f32': case 'f64': return 'new Float64Array(n)'
      default: return 'new Array(n).fill(0)'
    }
  }

  /** Per-thread registers recomputed from tx where a loop needs them instead of kept in a slot (their
   *  affine forms: a shared-memory index `base + 4·tid.x` in a reduction), by register: the expression.
   *  Decided once the body is emitted (the forms name the hoisted parameters). */
  private remat?: Map<number, string>

  /** The expression that recomputes per-thread register r, if it has one. */
  rematerialized(r: number): string | undefined {
    if (!this.remat) {
      this.remat = new Map()
      for (const x of this.plan.perThread) {
        const e = this.plan.recomputed.has(x) ? undefined : this.E.rematerialize(x)
        if (e !== undefined) this.remat.set(x, e)
      }
    }
    return this.remat.get(r)
  }

  private load(r: number): string {
    const js = this.E.regJs[r]
    const tid = this.plan.recomputed.get(r)
    if (tid) return `${js}=${tid === '%tid.x' ? 'tx' : tid === '%tid.y' ? 'ty' : 'tz'};`
    const e = this.rematerialized(r)
    if (e !== undefined) return `${js}=${e};`
    return this.E.classes[r] === 'pred' ? `${js}=V${r}[t]!==0;` : `${js}=V${r}[t];`
  }

  private store(r: number): string {
    const js = this.E.regJs[r]
    if (this.rematerialized(r) !== undefined) return ''
    return this.E.classes[r] === 'pred' ? `V${r}[t]=${js}?1:0;` : `V${r}[t]=${js};`
  }

  private items(list: ScheduleItem[]): string {
    const out: string[] = []
    for (const it of list) {
      switch (it.kind) {
        case 'threads': out.push(this.threads(it)); break
        case 'warps': out.push(this.warps(it)); break
        case 'barrier': case 'collective': break
        case 'region': {
          const r = it.node
          const body = this.items(it.body)
          if (it.level === 'block') {
            const label = regionLabel(r.kind, r.id)
            out.push(r.kind === 'loop' ? `${label}:for(;;){\n${body}\nbreak;}` : `${label}:{\n${body}\n}`)
            break
          }
          // warp level: lanes that leave wait at the end (or for the next trip) until the warp gets there
          const brk = breakTag(r.id), cont = continueTag(r.id)
          const wake = `for(let t=W0;t<W1;t++)if(ST[t]===${brk})ST[t]=0;`
          if (r.kind === 'loop') { out.push(`for(;;){\n${body}\nlet c=0;for(let t=W0;t<W1;t++){const s=ST[t];if(s===0)ST[t]=${brk};else if(s===${cont}){ST[t]=0;c=1}}if(c===0)break;}${wake}`); break }
          // no lane enters an if or block after its first item (lanes only leave, to wait at its end or beyond):
          // a warp with none left running skips the rest (an `if (tid < 32)` region's other warps)
          const [first, ...rest] = it.body
          const head = this.items(first ? [first] : [])
          const tail = this.items(rest)
          out.push(`{\n${head}\n${tail ? `{let q=0;for(let t=W0;t<W1;t++)if(ST[t]===0){q=1;break}if(q!==0){\n${tail}\n}}` : ''}}${wake}`)
          break
        }
      }
    }
    return out.join('\n')
  }

  /** Structure nodes as structured JS (the code inside one thread's turn). */
  nodes(list: StructNode[], code: string[]): string {
    const out: string[] = []
    for (const node of list) {
      if (node.kind === 'instr') { out.push(code[node.index]!); continue }
      // jump nodes come only from structureFunction's re-layout, which the emulator does not ask for
      if (node.kind === 'jump') throw new Error('internal: a jump node without relayout')
      const label = regionLabel(node.kind, node.id)
      const body = this.nodes(node.body, code)
      out.push(node.kind === 'loop' ? `${label}:for(;;){\n${body}\nbreak;}` : `${label}:{\n${body}\n}`)
    }
    return out.join('\n')
  }

  /** The block-wide decisions taken in [s, e), as jumps after the loop. */
  private dispatch(s: number, e: number): string {
    const out = new Set<string>()
    for (let i = s; i < e; i++) {
      const d = this.plan.departures.get(i)
      if (d?.kind !== 'uniform') continue
      const r = this.E.structureRegions[d.target.node]!
      out.add(`if(X===${this.code(d.target.kind, d.target.node)})${d.target.kind === 'continue' ? 'continue' : 'break'} ${regionLabel(r.kind, r.id)};`)
    }
    return [...out].join('')
  }

  private hasUniformDeparture(s: number, e: number): boolean {
    for (let i = s; i < e; i++) if (this.plan.departures.get(i)?.kind === 'uniform') return true
    return false
  }

  private threads(it: ThreadLoop): string {
    const E = this.E
    const warp = it.level === 'warp'
    const pre: string[] = []
    const uniformDeps = this.hasUniformDeparture(it.start, it.end)
    if (uniformDeps && !warp) { this.vars.add('X'); pre.push('X=0;') }
    const body = this.nodes(it.nodes, E.bodyCode)
    const after = warp ? '' : this.dispatch(it.start, it.end)
    // code the same for every thread runs once
    if (it.once) return `{${pre.join('')}R:{\n${body}\n}${after}}`
    if (it.gather !== undefined) pre.push(this.gatherReset(it.gather))
    for (const r of it.restores) pre.push(`const Q${r}=${E.regJs[r]};`)
    const skip = warp || this.plan.threadsEnd ? 'if(ST[t]!==0)continue;' : ''
    const restores = it.restores.map((r) => `${E.regJs[r]}=Q${r};`).join('')
    const loads = it.loads.map((r) => this.load(r)).join('')
    const scatter = it.scatter !== undefined ? this.scatter(it.scatter) : ''
    const gather = it.gather !== undefined ? this.gather(it.gather) : ''
    const stores = it.stores.map((r) => this.store(r)).join('')
    const rest = `${restores}${loads}${scatter}\nR:{\n${body}\n${gather}}\n${stores}`
    const iteration = `${skip}${usesName(rest, 'LB') ? 'const LB=LB0+t*LN;' : ''}${rest}`
    if (warp) {
      return `{${pre.join('')}TH:for(let t=W0,tx=W0%NTX,ty=((W0/NTX)|0)%NTY,tz=(W0/(NTX*NTY))|0;t<W1;t++,(++tx===NTX&&(tx=0,++ty===NTY&&(ty=0,tz++)))){${iteration}}}`
    }
    // a whole block: tz, ty, tx nested; only the tx interval that does more than branch past the loop's code
    const range = this.narrow(it)
    if (range) pre.push(`const LO=Math.max(0,${range.lo}),HI=Math.min(NTX,${range.hi});`)
    const [lo, hi] = range ? ['LO', 'HI'] : ['0', 'NTX']
    return `{${pre.join('')}for(let tz=0;tz<NTZ;tz++)for(let ty=0;ty<NTY;ty++){const tb=(tz*NTY+ty)*NTX;TH:for(let tx=${lo};tx<${hi};tx++){const t=tb+tx;${iteration}}}${after}}`
  }

  /** The tx interval of a block-level loop whose first act is `@p bra` past the rest of its code, with p
   *  from `setp.cmp p, %tid.x, y` (y the same for the whole block, set before the loop): the other threads
   *  only compute that predicate (`if (tid < s) …` in a tree reduction, `if (tid == 0) …`). */
  private narrow(it: ThreadLoop): { lo: string; hi: string } | undefined {
    const E = this.E
    const r = threadLoopTxRange(E.fn, it, this.plan, E.structure, E.affine, E.cfg)
    if (!r) return undefined
    const Y = E.rd(r.y, r.signed ? 'i32' : 'u32')
    const end = (e: TxEnd) => (e === 'Y' ? Y : e === 'Y1' ? `${Y}+1` : e)
    return { lo: end(r.lo), hi: end(r.hi) }
  }

  private warps(it: Extract<ScheduleItem, { kind: 'warps' }>): string {
    const E = this.E
    const uniformDeps = this.hasUniformDeparture(it.start, it.end)
    const pre: string[] = []
    if (uniformDeps) { this.vars.add('X'); pre.push('X=0;') }
    for (const r of it.restores) pre.push(`const Q${r}=${E.regJs[r]};`)
    const restores = it.restores.map((r) => `${E.regJs[r]}=Q${r};`).join('')
    const body = this.items(it.body)
    const after = uniformDeps ? `for(let t=0;t<NT;t++)if(ST[t]===${LEFT})ST[t]=0;${this.dispatch(it.start, it.end)}` : ''
    return `{${pre.join('')}for(let W0=0;W0<NT;W0+=32){const W1=W0+32<NT?W0+32:NT;${restores}\n${body}\n}${after}}`
  }

  // --- collectives ---

  private use(i: number): CollectiveUse {
    const u = this.E.collectiveUses.get(i)
    if (!u) throw new Error(`internal error: no collective recorded at instruction ${i}`)
    return u
  }

  /** Whether a collective's input needs no per-lane slot: a literal, or a register the plan keeps once per
   *  block (the same in every lane, so the scatter, which runs right after the gathering loop of the same
   *  warp, reads the value the lanes gave; shfl's lane offset, clamp and member mask mostly are). */
  private direct(e: string): boolean {
    return isLiteral(e) || this.perBlockJs.has(e)
  }

  /** Input j of collective i as read in its scatter: a literal or per-block register as is, else the lane's slot. */
  private input(i: number, j: number, lane = 'l'): string {
    const e = this.use(i).inputs[j]!
    return this.direct(e) ? e : `W${this.fi}_${i}_${j}[${lane}]`
  }

  private buffers(i: number): void {
    const u = this.use(i)
    u.inputs.forEach((e, j) => {
      if (this.direct(e)) return
      // (tensor-core inputs are fragment lists and addresses that may pass 2^31: plain arrays)
      const wide = (u.c.kind === 'match' && this.E.fn.instructions[i]!.type?.endsWith('64')) || TENSOR_CORE.has(u.c.kind)
      const decl = `const W${this.fi}_${i}_${j}=${wide ? 'new Array(32).fill(0)' : 'new Int32Array(32)'};`
      if (!this.decls.includes(decl)) this.decls.push(decl)
    })
  }

  private gatherReset(i: number): string {
    const c = this.use(i).c
    if (c.kind === 'bar') { this.vars.add(`BR${i}`); this.vars.add(`BN${i}`); return `BR${i}=0;BN${i}=0;` }
    this.vars.add(`A${i}`)
    if (c.kind === 'vote') { this.vars.add(`VB${i}`); return `A${i}=0;VB${i}=0;` }
    if (c.kind === 'redux') { this.vars.add(`RM${i}`); this.vars.add(`RV${i}`); return `A${i}=0;RM${i}=0.5;` }
    if (TENSOR_CORE.has(c.kind)) { this.vars.add(`TQ${i}`); return `A${i}=0;TQ${i}=null;` }
    return `A${i}=0;`
  }

  /** What a thread that reaches collective i leaves for it. */
  private gather(i: number): string {
    const u = this.use(i)
    const ins = this.E.fn.instructions[i]!
    const g = ins.guard ? `${ins.guard.negate ? '!' : ''}${this.E.regJs[ins.guard.reg]}` : undefined
    let code: string
    if (u.c.kind === 'bar') code = `BN${i}++;if(${u.inputs[0]})BR${i}++;`
    else {
      this.buffers(i)
      const parts = [`A${i}|=1<<(t&31);`]
      u.inputs.forEach((e, j) => {
        if (u.c.kind === 'vote' && j === 0) { parts.push(`if(${e})VB${i}|=1<<(t&31);`); return }
        if (!this.direct(e)) parts.push(`W${this.fi}_${i}_${j}[t&31]=${e};`)
      })
      code = parts.join('')
    }
    return g ? `if(${g}){${code}}` : code
  }

  /** What a thread that took part in collective i gets from it (q0, q1, then the instruction's writes). */
  private scatter(i: number): string {
    const u = this.use(i)
    const c = u.c
    const out = u.outputs.join('')
    if (c.kind === 'bar') {
      const v = c.red === 'popc' ? `BR${i}` : c.red === 'and' ? `BR${i}===BN${i}` : `BR${i}!==0`
      return `q0=${v};${out}`
    }
    const A = `A${i}`
    let res: string
    switch (c.kind) {
      case 'shfl': {
        // PTX ISA shfl.sync: c packs the segment mask (bits 8–12) and the clamp lane (bits 0–4); in range
        // (pv), lane j's value, or 0 when lane j is not in membermask or did not arrive (scheduler.ts)
        const b = this.input(i, 1), cc = this.input(i, 2)
        const j = c.mode === 'up' ? `l-(${b}&31)` : c.mode === 'down' ? `l+(${b}&31)` : c.mode === 'bfly' ? `l^(${b}&31)` : `(l&sg)|(${b}&31&~sg)`
        const ok = c.mode === 'up' ? 'j>=mx' : 'j<=mx'
        res = `const sg=(${cc}>>>8)&31,mx=(l&sg)|(${cc}&31&~sg);const j=${j};const pv=${ok};q0=pv?((((${A}&${this.input(i, 3)})>>>j)&1)!==0?${this.input(i, 0, 'j')}:0):${this.input(i, 0)};q1=pv;`
        break
      }
      case 'vote': {
        const m = `(${this.input(i, 1)}&${A})`
        const bal = `(VB${i}&${m})`
        res = c.mode === 'ballot' ? `q0=${bal};` : c.mode === 'all' ? `q0=${bal}===${m};` : c.mode === 'any' ? `q0=${bal}!==0;` : `q0=${bal}===${m}||${bal}===0;`
        break
      }
      case 'match': {
        const v = (lane: string) => this.input(i, 0, lane)
        res = `const m=${this.input(i, 1)}&${A};let eq=0,all=true;for(let x=m;x!==0;x&=x-1){const k=31-Math.clz32(x&-x);if(${v('k')}===${v('l')})eq|=1<<k;else all=false}`
        res += c.mode === 'any' ? 'q0=eq;' : 'q0=all?m:0;q1=all;'
        break
      }
      case 'activemask': res = `q0=${A}|0;`; break
      case 'elect': res = `const m=${this.input(i, 0)}&${A};const k=m===0?-1:31-Math.clz32(m&-m);q0=k;q1=k===l;`; break
      case 'redux': {
        const v = this.input(i, 0, 'k')
        let f: string
        switch (c.mode) {
          case 'add': f = `s=(s+${v})|0`; break
          case 'min': f = c.signed ? `s=Math.min(s,${v})` : `s=Math.min(s>>>0,${v}>>>0)|0`; break
          case 'max': f = c.signed ? `s=Math.max(s,${v})` : `s=Math.max(s>>>0,${v}>>>0)|0`; break
          case 'and': f = `s&=${v}`; break
          case 'or': f = `s|=${v}`; break
          default: f = `s^=${v}`
        }
        // most lanes name the same members: the reduction is computed once per distinct mask
        res = `const m=${this.input(i, 1)}&${A};if(m!==RM${i}){RM${i}=m;let s=0,first=true;for(let x=m;x!==0;x&=x-1){const k=31-Math.clz32(x&-x);if(first){s=${v};first=false}else ${f}}RV${i}=s}q0=RV${i};`
        break
      }
      case 'mma': case 'ldmatrix': case 'stmatrix': case 'movmatrix': {
        // every arrived lane's inputs by lane (scheduler.ts resolveCollective), gathered once per warp and trip;
        // what a lane makes of them is its own code (emit-instruction.ts, tensor-core.ts)
        const item = c.kind === 'mma' ? `[${this.input(i, 0, 'k')},${this.input(i, 1, 'k')},${this.input(i, 2, 'k')}]` : this.input(i, 0, 'k')
        res = `if(TQ${i}===null){TQ${i}=new Array(32);for(let k=0;k<32;k++)if(((${A}>>>k)&1)!==0)TQ${i}[k]=${item}}q0=TQ${i};`
        if (c.kind === 'stmatrix') res += `q1=${this.input(i, 1)};`
        break
      }
      default: return ''
    }
    return `if(((${A}>>>(t&31))&1)!==0){const l=t&31;${res}${out}}`
  }
}

/** The plan as text (EmulatorModule.inspect, KERNELPACK_EMULATOR_DEBUG): how the kernel runs its threads,
 *  the loops with PTX lines, what is kept per thread and per block, or why it falls back. */
export function describeThreadLoops(fn: IrFunction, plan: ThreadLoopPlan | undefined, rematerialized: readonly number[] = [], lockstepNotRun?: Extract<ThreadLoopPlan, { kind: 'fallback' }>): string {
  const head = `kernel ${fn.name}`
  if (!plan && lockstepNotRun) {
    return [`${head}: no barriers or warp collectives; the whole grid runs as one loop over threads`,
      ...describeLockstep(fn, lockstepNotRun.lockstep ?? [], `lanes of a warp may talk through memory at these accesses, but they run one thread at a time: thread loops do not form, because ${lockstepNotRun.reason}`)].join('\n')
  }
  if (!plan) return `${head}: no barriers or warp collectives; the whole grid runs as one loop over threads`
  if (plan.kind === 'fallback') {
    return [`${head}: continuation scheme (threads suspend at barriers and collectives one by one), because ${plan.reason}`,
      ...describeLockstep(fn, plan.lockstep ?? [], 'lanes of a warp may talk through memory at these accesses, but in the continuation scheme they run one thread at a time')].join('\n')
  }
  const ins = fn.instructions
  const reg = (r: number) => fn.registers[r]!.name
  const regs = (rs: number[]) => (rs.length ? rs.map(reg).join(' ') : '-')
  const lines = (s: number, e: number) => {
    if (s >= e) return 'no code'
    // (inlined device functions keep their own lines)
    const ls = ins.slice(s, e).map((x) => x.line)
    const lo = Math.min(...ls), hi = Math.max(...ls)
    return lo === hi ? `PTX line ${lo}` : `PTX lines ${lo}–${hi}`
  }
  const out = [`${head}: thread loops`, `  kept per thread: ${regs(plan.perThread.filter((r) => !rematerialized.includes(r)))}`, `  kept per block: ${regs(plan.perBlock)}`]
  out.push(...describeLockstep(fn, plan.lockstep, 'lanes of a warp run these accesses in lockstep (each opens a lane loop: one instruction for all the warp\'s lanes, as a converged warp runs it)'))
  const lockAt = new Set(plan.lockstep.map((p) => p.index))
  if (plan.recomputed.size) out.push(`  recomputed: ${[...plan.recomputed].map(([r, s]) => `${reg(r)} (${s})`).join(' ')}`)
  if (rematerialized.length) out.push(`  recomputed from %tid.x (affine): ${regs([...rematerialized])}`)
  const walk = (items: ScheduleItem[], depth: number) => {
    const pad = '  '.repeat(depth)
    for (const it of items) {
      switch (it.kind) {
        case 'threads': {
          const what = it.once ? 'once per block (the same for every thread)' : it.level === 'block' ? 'loop over the block\'s threads' : lockAt.has(it.start) ? 'lockstep step: loop over the warp\'s lanes' : 'loop over the warp\'s lanes'
          const extra = [
            it.loads.length ? `loads ${regs(it.loads)}` : '', it.stores.length ? `stores ${regs(it.stores)}` : '',
            it.restores.length ? `restores ${regs(it.restores)}` : '',
            it.scatter !== undefined ? `results of line ${ins[it.scatter]!.line}` : '', it.gather !== undefined ? `inputs of line ${ins[it.gather]!.line}` : '',
          ].filter(Boolean)
          out.push(`${pad}${what} (${lines(it.start, it.end)})${extra.length ? ': ' + extra.join('; ') : ''}`)
          for (let i = it.start; i < it.end; i++) {
            const d = plan.departures.get(i)
            if (!d) continue
            const how = d.kind === 'uniform' ? 'taken alike by the whole block, decided after the loop' : d.kind === 'park' ? 'the lane waits for its warp there' : 'the thread runs the kernel\'s tail and ends'
            out.push(`${pad}  branch at line ${ins[i]!.line}: ${how}`)
          }
          break
        }
        case 'warps': out.push(`${pad}warp by warp (${lines(it.start, it.end)})${it.restores.length ? `: restores ${regs(it.restores)}` : ''}`); walk(it.body, depth + 1); break
        case 'barrier': out.push(`${pad}barrier \`${ins[it.index]!.text}\` (line ${ins[it.index]!.line})`); break
        case 'collective': out.push(`${pad}collective \`${ins[it.index]!.text}\` (line ${ins[it.index]!.line})`); break
        case 'region': {
          const r = it.node
          out.push(`${pad}${r.kind} ${r.label} (${lines(r.start, r.end)}), once per ${it.level}:`)
          walk(it.body, depth + 1)
          break
        }
      }
    }
  }
  walk(plan.schedule, 1)
  return out.join('\n')
}

/** The lockstep points (issue 33) as text: their PTX lines, with the first pair's reason. */
function describeLockstep(fn: IrFunction, points: readonly LockstepPoint[], what: string): string[] {
  if (!points.length) return []
  const lines = [...new Set(points.map((p) => fn.instructions[p.index]!.line))].sort((a, b) => a - b)
  return [`  lockstep: ${what}: PTX line${lines.length > 1 ? 's' : ''} ${lines.join(' ')}`, `    e.g. ${points[0]!.reason}`]
}
