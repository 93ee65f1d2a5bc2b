// @kernelpack/ptx: the one PTX front end (tokenize → parse → decode to a typed IR → CFG, structure,
// analyses), the kernel parameter layout, the module interface and the Backend contract. Imports nothing,
// uses no Node APIs: it runs in browsers.
export { PtxError, launchAbortError, timeoutReason } from './errors.js'
export { demangleFunctionName, readableName } from './demangle.js'
export { PtxLexer, tokenizePtx, type Token } from './tokenize.js'
export { PTX_TYPES, isPtxType, typeSize, isFloatType, isSignedType, isIntegerType, type PtxType, type StateSpace, type VariableSpace } from './types.js'
export { parsePtx, type ParseOptions, type PtxModule, type PtxFunction, type PtxInstruction, type PtxLabel, type PtxStatement, type PtxVariable, type PtxRegister, type Operand, type SourceLoc } from './parse.js'
export { layoutParams, alignTo, type ParamLayout, type ParamShape } from './layout.js'
export { moduleInterface, readPtxInterface, type PtxInterface, type PtxKernelInterface, type PtxParamInterface, type PtxVariableInterface, type PtxLinkage } from './interface.js'
export type * from './backend.js'
export { CHECK_KINDS, SanitizerError, resolveCheck, type CheckKind, type CheckOptions, type CheckSetting, type ResolvedCheck, type SanitizerAccess, type SanitizerAllocation, type SanitizerReport } from './sanitizer.js'
export { decodeModule, decodeFunction, type DecodeOptions } from './decode.js'
export { OPCODES, OPCODE_RULES, isOpcode, type Opcode, type OpcodeRule } from './opcodes.js'
export {
  SPECIAL_REGISTERS, isSpecialRegister, operandRegisters, type SpecialRegister, type Immediate, type Operand as IrOperand, type Rounding, type IntRounding,
  type CmpOp, type BoolOp, type ProductPart, type AtomOp, type Reduction, type MemorySemantics, type Scope, type Flags, type Instruction,
  type IrRegister, type IrFunction, type IrModule,
} from './ir.js'
export { definedRegisters, usedRegisters } from './ir.js'
export { writesFirstOperand } from './opcodes.js'
export { buildCfg, cfgWithoutEdges, controlDependence, dominates, type Cfg, type BasicBlock, type Loop } from './cfg.js'
export { lowerIndirectBranches, relayoutFunction, structureFunction, type Structure, type StructureOptions, type StructNode, type StructRegion, type BranchTarget, type SequenceItem } from './structure.js'
export { collectiveOf, collectiveScope, waitOf, type Collective } from './collectives.js'
export { calleeOf, inlineCalls } from './inline.js'
export { isGridWorkspaceRegister, RESERVED_SMEM, reservedSmemRead, specialUse } from './special-use.js'
export { defaultPrint, formatPrintf, printfArgBytes, printfConversions, printfResult, PrintfOrder } from './printf.js'
export { assignRegisterClasses, type RegisterClass } from './analysis/register-classes.js'
export { analyzeLiveness, type Liveness } from './analysis/liveness.js'
export { analyzeUniformity, type Uniformity, type UniformityFacts } from './analysis/uniformity.js'
export { analyzeAffine, type AffineForm, type AffineFacts, type AffineOptions, type InvExpr, type ScalarExpr, type TripBound, type WrapCheck } from './analysis/affine.js'
export { analyzeBounds, PARAM_BOUND } from './analysis/bounds.js'
export { analyzeCasLoads } from './analysis/cas-loads.js'
export { analyzeContraction, type Contraction } from './analysis/contraction.js'
export { analyzeBarrierRegions, RETURN_EXIT, type BarrierRegion, type BarrierRegions } from './analysis/barrier-regions.js'
export { sourcePosition, formatSourcePosition, describeInstruction, type SourcePosition } from './source-location.js'
export { ptxText } from './image-text.js'
export { analyzeLockstep, warpTalkSites, type LockstepFacts, type LockstepPoint, type WarpTalkSite } from './analysis/lockstep.js'
export { stayEnds, SWAPPED_CMP, threadLoopTxRange, type TxRange, type TxEnd } from './analysis/tx-range.js'
export { planThreadLoops, type ThreadLoopPlan, type ThreadLoopSchedule, type ThreadLoopFacts, type ThreadLoop, type ScheduleItem, type Departure, type LoopLevel } from './analysis/thread-loops.js'
export {
  elemBytes, fragKind, laneAffine, matrixOperands, mmaForm, mmaFragment, mmaOperands, mmaSpec, perRegister, tcLayout, TC_TYPES, wmmaFragment, wmmaOperands,
  type ElemType, type FragmentLayout, type Matrix, type MmaSpec,
} from './tensor-core.js'
