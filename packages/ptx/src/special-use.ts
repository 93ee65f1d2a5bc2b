// What a function's special-register reads ask of its launch (the emulator and the WebGPU translator read it
// alike): the block's reserved shared memory (%reserved_smem_offset_*, cooperative groups' block_tile_memory
// scratch) and a cooperative launch's grid workspace (%envreg1/%envreg2: cg::this_grid().sync()).
import type { IrFunction } from './ir.js'

/** True when a kernel reading `name` needs a cooperative launch (its grid workspace: cg::this_grid().sync()). */
export function isGridWorkspaceRegister(name: string): boolean {
  return name === '%envreg1' || name === '%envreg2'
}

/** The reserved shared memory and the first read of the grid workspace (its PTX line and text), if any. */
export function specialUse(f: IrFunction): { reservedSmem: boolean; gridSync?: { line: number; text: string } } {
  let reservedSmem = false
  let gridSync: { line: number; text: string } | undefined
  for (const ins of f.instructions) for (const o of ins.operands) {
    if (o.kind !== 'special') continue
    if (o.name.startsWith('%reserved_smem_offset')) reservedSmem = true
    if (isGridWorkspaceRegister(o.name)) gridSync ??= { line: ins.line, text: ins.text }
  }
  return gridSync ? { reservedSmem, gridSync } : { reservedSmem }
}
