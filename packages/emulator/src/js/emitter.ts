// What the instruction writer (emit-instruction.ts) and the thread-loop writer (emit-thread-loops.ts) need of
// the function writer (emit-js.ts FunctionEmitter, which implements it): its facts, frame and operand
// helpers. Its own module, so that those two and emit-js.ts import it and not each other.
import type { AffineFacts, Cfg, Collective, Instruction, IrFunction, IrModule, IrOperand, RegisterClass, StructRegion, Structure } from '@kernelpack/ptx'
import type { Frame } from '../frame.js'
import type { Kind } from '../js-values.js'

/** A memory access: read, write, or atomic read-modify-write (the sanitizer's kinds). */
export type AccessKind = 'r' | 'w' | 'a'

/** Where a thread suspends (a collective or a yield point): its resume pc, and the code before and after. */
export interface Suspension { pc: number; pre: string; post: string }

/** A collective of a thread-loop kernel: what it takes from each thread and gives back. */
export interface CollectiveUse { c: Collective; inputs: string[]; outputs: string[] }

/** A kernel parameter loaded once per call: `check` (the parameter window check), then `name` = `e`. */
export interface Hoisted { name: string; check: string; e: string; kind: Kind }

/** The module's facts the instruction writer reads (emit-js.ts ModuleEmitter). */
export interface ModuleFacts {
  readonly fnIndex: ReadonlyMap<string, number>
  readonly mod: IrModule
  paramSize(f: IrFunction, j: number): number
  retSize(f: IrFunction, j: number): number
}

export interface InstructionEmitter {
  readonly fn: IrFunction
  readonly mc: ModuleFacts
  readonly classes: RegisterClass[]
  readonly regJs: string[]
  readonly frame: Frame
  /** The function's control-flow graph (the analyses' and the thread loops' intervals). */
  readonly cfg: Cfg
  readonly structure: Structure
  readonly structureRegions: StructRegion[]
  readonly affine?: AffineFacts
  readonly bounds?: Map<number, number>
  readonly calls: Set<string>
  readonly collectiveUses: Map<number, CollectiveUse>
  bodyCode: string[]
  curIdx: number
  fail(msg: string, ins?: Instruction): never
  readonly failOp: (msg: string) => never
  readonly rdOp: (o: IrOperand | undefined, k: Kind) => string
  readonly wrOp: (o: IrOperand | undefined, k: Kind, e: string) => string
  /** The function's index in the module. */
  readonly index: number
  cls(o: IrOperand | undefined): RegisterClass | undefined
  rd(o: IrOperand, k: Kind): string
  wr(o: IrOperand, k: Kind, e: string): string
  symAddr(name: string): string | undefined
  addrExpr(o: IrOperand): string
  /** The checked variant (the sanitizer's hooks) is being written. */
  readonly checked: boolean
  checkAt(w: string, space: string, n: number, rw?: AccessKind): string
  /** checkAt, and in the checked variant the sanitizer's hook for the access (shared/global/generic), for the
   *  element accesses of one instruction that moves several (wmma.load/store, ldmatrix, stmatrix). A store's
   *  code goes between this and `stored()`. */
  checkedAccess(w: string, space: string, n: number, rw: 'r' | 'w'): string
  /** After a store of checkedAccess: the checked variant decides its value-dependent hazard. */
  stored(): string
  addr(o: IrOperand, space: string, n: number, slot?: number, rw?: AccessKind, indexed?: boolean): string
  contracted(): { mul: Instruction; operand: 1 | 2 } | undefined
  rematerialize(r: number): string | undefined
  load(t: string, k?: number): { e: string; kind: Kind }
  store(t: string, v: string, k?: number): string
  memType(t: string, o: IrOperand): string
  hoistParam(am: Extract<IrOperand, { kind: 'addr' }>, tt: string, size: number): Hoisted
  ret(): string
  branch(label: string): string
  result(slot: 0 | 1): string
  suspend(kind: Collective, inputs: string[], outputs: string[]): Suspension | string
  yieldIf(code: string, waiting: string, passed: string): Suspension | string
}
