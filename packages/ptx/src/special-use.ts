// What a function's special-register reads ask of its launch (the emulator and the WebGPU translator read it
// alike): the block's reserved shared memory (%reserved_smem_offset_*, cooperative groups' block_tile_memory
// scratch) and a cooperative launch's grid workspace (%envreg1/%envreg2: cg::this_grid().sync()).
import type { IrFunction } from './ir.js'

/** Bytes of reserved shared memory per block (cudaDevAttrReservedSharedMemoryPerBlock on sm_80 and later). */
export const RESERVED_SMEM = 1024

/** What a %reserved_smem_offset_* register reads: bytes past the start of the block's reserved region (its two
 *  numbered regions are its halves; cg::block_tile_memory uses %reserved_smem_offset_1, 288 bytes at most), or
 *  the region's size (_cap). Undefined for any other register. */
export function reservedSmemRead(name: string): { offset: number } | { size: number } | undefined {
  switch (name) {
    case '%reserved_smem_offset_begin': case '%reserved_smem_offset_0': return { offset: 0 }
    case '%reserved_smem_offset_1': return { offset: RESERVED_SMEM / 2 }
    case '%reserved_smem_offset_end': return { offset: RESERVED_SMEM }
    case '%reserved_smem_offset_cap': return { size: RESERVED_SMEM }
    default: return undefined
  }
}

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
